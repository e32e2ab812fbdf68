"""Guess what an exact-logic table's efficiency column measures, so mixed-unit merges are flagged.

AMD's merge compares efficiencies with a bare ``>`` (spec §3): a GFlops table merged with a
percent-of-peak table makes Winner decisions that only reflect the units (corpus case e1). The
files do not say which unit they use except through the ``PerfMetric`` position (10), which
newer rocBLAS files set to ``DeviceEfficiency`` or ``CUEfficiency`` (percent of peak). The rules:

1. empty table (or only NaN) -> unknown; every value 0 -> none (hipBLASLt writes ``0.0``);
2. a maximum above :data:`PERCENT_CEILING` -> GFlops, whatever PerfMetric says (no percentage
   of peak gets there);
3. PerfMetric set -> percent;
4. otherwise the magnitude decides: at most :data:`PERCENT_CEILING` -> percent (probably).
"""

from __future__ import annotations

from collections.abc import Sequence

from tensilekit.merge.report import EfficiencyUnit, EfficiencyUnits, UnitGuess

PERCENT_CEILING = 150.0
"""Above this no efficiency can be a percentage of peak (measured values reach ~105%)."""

PERCENT_METRICS = frozenset({"DeviceEfficiency", "CUEfficiency"})


def guess_unit(efficiencies: Sequence[float | int], performance_metric: str | None) -> UnitGuess:
    """Guess the unit of one table's efficiency column."""
    # NaN (accepted in merges as AMD's tools accept it) measures nothing: not counted
    values = [value for value in efficiencies if isinstance(value, (int, float)) and value == value]
    if not values:
        return UnitGuess(unit=EfficiencyUnit.UNKNOWN, reason="empty table or every efficiency NaN")
    low, high = min(values), max(values)
    if all(value == 0 for value in values):
        return UnitGuess(unit=EfficiencyUnit.NONE, reason="every efficiency is 0", minimum=low, maximum=high)
    if high > PERCENT_CEILING:
        reason = f"maximum {high} > {PERCENT_CEILING:g}"
        if performance_metric in PERCENT_METRICS:
            reason += f" although PerfMetric is {performance_metric}"
        return UnitGuess(unit=EfficiencyUnit.GFLOPS, reason=reason, minimum=low, maximum=high)
    if performance_metric in PERCENT_METRICS:
        return UnitGuess(
            unit=EfficiencyUnit.PERCENT, reason=f"PerfMetric {performance_metric}", minimum=low, maximum=high
        )
    return UnitGuess(
        unit=EfficiencyUnit.PERCENT,
        reason=f"no PerfMetric; maximum {high} <= {PERCENT_CEILING:g}",
        minimum=low,
        maximum=high,
    )


def compare_units(original: UnitGuess, incremental: UnitGuess) -> EfficiencyUnits:
    """Both guesses, flagged ``mixed`` when one side is GFlops and the other percent."""
    measured = {EfficiencyUnit.PERCENT, EfficiencyUnit.GFLOPS}
    mixed = original.unit in measured and incremental.unit in measured and original.unit is not incremental.unit
    message = None
    if mixed:
        message = (
            f"mixed efficiency units: original looks like {original.unit.value} ({original.reason}), "
            f"incremental like {incremental.unit.value} ({incremental.reason}); efficiency comparisons "
            "(Winner policy) and the merged table mix both units"
        )
    return EfficiencyUnits(original=original, incremental=incremental, mixed=mixed, message=message)


__all__ = ["PERCENT_CEILING", "PERCENT_METRICS", "compare_units", "guess_unit"]

"""Run-level uplift statistics in GEKO's ``metrics.json`` layout (pure).

GEKO writes ``results/metrics.json`` after its analysis (geko/optim/_metrics.py ``summarize`` and
geko/optim/optim.py ``analyze``, rocm-libraries @9915500485e1 / @114ce39e711c); tensilekit writes the
same keys from the benchmark stage's reference-vs-tuned comparison, so GEKO users' scripts read it:

* ``config``: ``up_thr`` as GEKO's speed-up *ratio* (tensilekit's ``--up-thr`` + 1), ``error_thr``
  (tensilekit's ``--err-thr``: a multiple of the reference library's error, where GEKO's is an
  absolute error), ``verify`` (tensilekit always verifies).
* ``counts``: attempted (reference and tuned both timed), valid/invalid (error within
  ``--err-thr``), improved/regressed/neutral, kept, and GEKO's buckets -- cumulative
  ``ge_{p}_pct`` and disjoint ranges ``lt_1_pct``, ``1_to_3_pct`` … ``ge_100_pct`` (improvement
  breakpoints 1, 3, 5, 10, 25, 50, 100 %; regression 1, 3, 5, 10 % slower).
* ``uplift_all_attempted`` (valid rows) and ``uplift_kept``: mean, geomean, median, max (min, std),
  percentiles p25/p50/p75/p90/p99 of ``uplift_pct = (reference / tuned - 1) * 100``.
* ``diversity``: distinct winning kernels among the kept GEMMs, and how often the tuned kernel
  differs from the reference one.
* ``e2e``: workload-weighted effect of the kept GEMMs, each weighted by its measured share of
  the GEMM time (GEKO's ``% of total``): ``e2e_uplift_pct = sum(share * (1 - 1 / ratio))``,
  ``coverage_pct``, ``e2e_us_saved_per_iter`` (calls * saved us) and
  ``top10pct_contribution_share``.
* ``per_dtype_layout``: per ``<a_type>_<transA><transB>`` over the kept GEMMs.

Percentiles interpolate linearly between order statistics (numpy's default, which GEKO uses).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

IMPROVEMENT_BUCKETS_PCT = (1, 3, 5, 10, 25, 50, 100)
REGRESSION_BUCKETS_PCT = (1, 3, 5, 10)
PERCENTILES = (25, 50, 75, 90, 99)


@dataclasses.dataclass(frozen=True)
class MetricsRow:
    """One GEMM as the metrics see it."""

    a_type: str
    trans_a: str
    trans_b: str
    call_count: int
    reference_us: float | None
    tuned_us: float | None
    time_share: float | None = None
    """Measured share of the workload's GEMM time (0..1)."""
    valid: bool = True
    """The tuned kernel's error is within ``--err-thr`` (and it passed verification)."""
    kept: bool = False
    kernel_reference: str | None = None
    kernel_tuned: str | None = None

    @property
    def ratio(self) -> float | None:
        """Speed-up ``reference / tuned`` (None without both times)."""
        if not self.reference_us or not self.tuned_us:
            return None
        return self.reference_us / self.tuned_us


def percentiles(values: Sequence[float], points: Iterable[int] = PERCENTILES) -> dict[str, float | None]:
    """``{"p25": …}`` with linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    result: dict[str, float | None] = {}
    for point in points:
        if not ordered:
            result[f"p{point}"] = None
            continue
        position = point / 100 * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        result[f"p{point}"] = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
    return result


def geomean_uplift_pct(ratios: Iterable[float]) -> float | None:
    """The geometric mean of speed-up ratios as an uplift in percent (None without a ratio)."""
    usable = [ratio for ratio in ratios if math.isfinite(ratio) and ratio > 0]
    if not usable:
        return None
    return 100.0 * math.expm1(sum(math.log(ratio) for ratio in usable) / len(usable))


def improvement_ranges(uplifts_pct: Sequence[float]) -> dict[str, int]:
    """Disjoint counts of uplifts > 0: ``lt_1_pct``, ``1_to_3_pct`` … ``ge_100_pct``."""
    edges = IMPROVEMENT_BUCKETS_PCT
    counts = {f"lt_{edges[0]}_pct": sum(1 for value in uplifts_pct if 0 < value < edges[0])}
    for low, high in zip(edges, edges[1:], strict=False):
        counts[f"{low}_to_{high}_pct"] = sum(1 for value in uplifts_pct if low <= value < high)
    counts[f"ge_{edges[-1]}_pct"] = sum(1 for value in uplifts_pct if value >= edges[-1])
    return counts


def regression_ranges(uplifts_pct: Sequence[float]) -> dict[str, int]:
    """Disjoint counts of uplifts < 0 by how much slower: ``lt_1_pct`` … ``ge_10_pct``."""
    edges = REGRESSION_BUCKETS_PCT
    counts = {f"lt_{edges[0]}_pct": sum(1 for value in uplifts_pct if -edges[0] < value < 0)}
    for low, high in zip(edges, edges[1:], strict=False):
        counts[f"{low}_to_{high}_pct"] = sum(1 for value in uplifts_pct if -high < value <= -low)
    counts[f"ge_{edges[-1]}_pct"] = sum(1 for value in uplifts_pct if value <= -edges[-1])
    return counts


def _stats(ratios: Sequence[float], *, spread: bool) -> dict[str, float | None]:
    uplifts = [(ratio - 1.0) * 100.0 for ratio in ratios]
    if not uplifts:  # GEKO: the attempted set always has its keys (None), the kept set none
        names = ("mean", "geomean", "median", "max", "min", "std") if spread else ()
        return {**{f"{name}_uplift_pct": None for name in names}, **(percentiles([]) if spread else {})}
    stats: dict[str, float | None] = {
        "mean_uplift_pct": statistics.fmean(uplifts),
        "geomean_uplift_pct": geomean_uplift_pct(ratios),
        "median_uplift_pct": statistics.median(uplifts),
        "max_uplift_pct": max(uplifts),
    }
    if spread:
        stats["min_uplift_pct"] = min(uplifts)
        stats["std_uplift_pct"] = statistics.pstdev(uplifts)
    return {**stats, **percentiles(uplifts)}


def _e2e(kept: Sequence[MetricsRow]) -> dict[str, float]:
    weighted = [row for row in kept if row.time_share is not None and row.ratio is not None]
    if not weighted:
        return {}
    contributions = [100.0 * (row.time_share or 0.0) * (1.0 - 1.0 / (row.ratio or 1.0)) for row in weighted]
    e2e = {
        "e2e_uplift_pct": sum(contributions),
        "coverage_pct": 100.0 * sum(row.time_share or 0.0 for row in weighted),
        "e2e_us_saved_per_iter": sum(
            row.call_count * ((row.reference_us or 0.0) - (row.tuned_us or 0.0)) for row in weighted
        ),
    }
    ranked = sorted(contributions, reverse=True)
    if sum(ranked) > 0:
        top = max(1, math.ceil(0.10 * len(ranked)))
        e2e["top10pct_contribution_share"] = sum(ranked[:top]) / sum(ranked)
    return e2e


def summarize_metrics(
    rows: Sequence[MetricsRow], *, up_thr: float, err_thr: float, data: str | None = None
) -> dict[str, Any]:
    """GEKO's ``metrics.json`` dict for a run (see the module docstring); ``up_thr`` is tensilekit's
    uplift threshold (``--up-thr``), written as GEKO's ratio. ``data`` (``SIMULATED``/``measured``)
    is added as a top-level key when given."""
    attempted = [row for row in rows if row.ratio is not None]
    valid = [row for row in attempted if row.valid]
    ratios = [row.ratio for row in valid if row.ratio is not None and math.isfinite(row.ratio)]
    uplifts = [(ratio - 1.0) * 100.0 for ratio in ratios]
    kept = [row for row in attempted if row.kept]
    kept_ratios = [row.ratio for row in kept if row.ratio is not None and math.isfinite(row.ratio)]

    diversity: dict[str, float | int] = {}
    winners = {row.kernel_tuned for row in kept if row.kernel_tuned}
    if kept and winners:
        diversity["n_unique_winning_kernels"] = len(winners)
        diversity["unique_winners_per_gemm"] = len(winners) / len(kept)
    compared = [row for row in attempted if row.kernel_reference and row.kernel_tuned]
    if compared:
        changed = sum(1 for row in compared if row.kernel_reference != row.kernel_tuned)
        diversity["pct_kernel_changed_in_attempted"] = 100.0 * changed / len(compared)

    by_layout: dict[str, list[float]] = {}
    for row in kept:
        if row.ratio is not None:
            by_layout.setdefault(f"{row.a_type}_{row.trans_a}{row.trans_b}", []).append(row.ratio)
    per_dtype = {
        key: {
            "n": len(group),
            "geomean_uplift_pct": geomean_uplift_pct(group),
            "median_uplift_pct": statistics.median((ratio - 1.0) * 100.0 for ratio in group),
            "max_uplift_pct": (max(group) - 1.0) * 100.0,
        }
        for key, group in sorted(by_layout.items())
    }

    metrics: dict[str, Any] = {} if data is None else {"data": data}
    metrics.update(
        {
            "config": {"up_thr": 1.0 + up_thr, "error_thr": err_thr, "verify": True},
            "counts": {
                "n_attempted": len(attempted),
                "n_valid": len(valid),
                "n_invalid": len(attempted) - len(valid),
                "n_improved": sum(1 for ratio in ratios if ratio > 1.0),
                "n_regressed": sum(1 for ratio in ratios if ratio < 1.0),
                "n_neutral": sum(1 for ratio in ratios if ratio == 1.0),
                "n_kept": len(kept),
                "improved_cumulative": {
                    f"ge_{p}_pct": sum(1 for ratio in ratios if ratio >= 1.0 + p / 100.0)
                    for p in IMPROVEMENT_BUCKETS_PCT
                },
                "regressed_cumulative": {
                    f"ge_{p}_pct": sum(1 for ratio in ratios if ratio <= 1.0 - p / 100.0)
                    for p in REGRESSION_BUCKETS_PCT
                },
                "improved_in_ranges": improvement_ranges(uplifts),
                "regressed_in_ranges": regression_ranges(uplifts),
            },
            "uplift_all_attempted": _stats(ratios, spread=True),
            "uplift_kept": _stats(kept_ratios, spread=False),
            "diversity": diversity,
            "e2e": _e2e(kept),
            "per_dtype_layout": per_dtype,
        }
    )
    return metrics


__all__ = [
    "IMPROVEMENT_BUCKETS_PCT",
    "PERCENTILES",
    "REGRESSION_BUCKETS_PCT",
    "MetricsRow",
    "geomean_uplift_pct",
    "improvement_ranges",
    "percentiles",
    "regression_ranges",
    "summarize_metrics",
]

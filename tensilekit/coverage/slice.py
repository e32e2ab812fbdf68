"""Pick the slice of a coverage report one selection map can show: one problem type at one K.

A map (``plot coverage``) shows which kernel wins over M x N for one problem type, batch and K;
:func:`map_slice` picks the problem type (the heaviest the library serves, unless named), the K (the one carrying
most of that type's weight, unless given) and the M/N range that holds the type's GEMMs.
"""

from __future__ import annotations

import dataclasses

from tensilekit._arguments import require
from tensilekit.coverage.model import CoverageClass, CoverageReport, GemmCoverage
from tensilekit.errors import SelectionError
from tensilekit.selection.problem import GemmProblem, Hardware


@dataclasses.dataclass(frozen=True)
class MapSlice:
    """The GEMMs of one problem type, the problem the map selects for, and its M/N range."""

    gemm_type: str
    k: int
    problem: GemmProblem
    """A GEMM of the type with its K and batch (M and N are what the map varies)."""
    hardware: Hardware
    gemms: tuple[GemmCoverage, ...]
    """Every GEMM of the type (those at other K are drawn hollow)."""
    low: int
    high: int


def map_slice(report: CoverageReport, *, gemm_type: str | None = None, k: int | None = None) -> MapSlice:
    """The slice to draw: ``gemm_type`` (default: the heaviest the library has a kernel for) at ``k`` (default: its heaviest K).

    Raises:
        SelectionError: the report has no GEMM of that type (or none at all).
        TypeError: an argument of the wrong type.
    """
    require(report, CoverageReport, "report", "map_slice")
    require(gemm_type, str, "gemm_type", "map_slice", optional=True)
    require(k, int, "k", "map_slice", optional=True)
    weights: dict[str, float] = {}
    for item in report.gemms:
        weights[item.gemm.gemm_type] = weights.get(item.gemm.gemm_type, 0.0) + item.weight
    if not weights:
        raise SelectionError("the workload has no GEMM to draw")
    # the default is the heaviest type the library serves (a GEMM of it has a kernel): the heaviest
    # of all may be one it lacks, whose map is blank (issue 32 item 9)
    served = {item.gemm.gemm_type for item in report.gemms if item.coverage_class is not CoverageClass.NONE}
    candidates = [name for name in weights if name in served] or list(weights)
    chosen = gemm_type or max(candidates, key=lambda name: weights[name])
    members = [item for item in report.gemms if item.gemm.gemm_type == chosen]
    if not members:
        raise SelectionError(f"the workload has no {chosen} GEMM (it has {', '.join(sorted(weights))})")
    by_k: dict[int, float] = {}
    for item in members:
        by_k[item.gemm.problem.k] = by_k.get(item.gemm.problem.k, 0.0) + item.weight
    chosen_k = k if k is not None else max(by_k, key=lambda value: (by_k[value], -value))
    at_k = [item for item in members if item.gemm.problem.k == chosen_k] or members
    model = max(at_k, key=lambda item: item.weight)
    sizes = [size for item in members for size in (item.gemm.problem.m, item.gemm.problem.n)]
    low = max(1, min(sizes) // 2)
    high = max(low * 4, max(sizes) * 2)
    problem = model.gemm.problem.model_copy(update={"m": 1, "n": 1, "k": chosen_k})
    return MapSlice(chosen, chosen_k, problem, model.gemm.hardware, tuple(members), low, high)


__all__ = ["MapSlice", "map_slice"]

"""Tensile's analytic tile/CU granularity model (``ContractionSolution::projectedPerformance``).

Only ``GranularitySelection`` nodes use it: ``speedGFlops = ideal(K) · totalGranularity``, where
``ideal(K)`` is the solution's ``ideals`` entry with the nearest K and ``totalGranularity`` is the
product of the tile-0, tile-1, CU and wave granularities of ``computeGranularities``. No file in
the corpus carries such a node, so this follows the C++ source, not an oracle run.
"""

from __future__ import annotations

import math
from typing import Any

from tensilekit.selection.problem import ContractionProblem, Hardware


def _granularity(x: float) -> float:

    import numpy as np

    # computeGranularity(float x): x / ceil(x) in single precision
    value = np.float32(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(value / np.ceil(value))


def _mapping_value(mapping: Any, name: str, default: Any) -> Any:
    value = getattr(mapping, name, None) if mapping is not None else None
    if value is None and mapping is not None:
        value = (getattr(mapping, "model_extra", None) or {}).get(name)
    return default if value is None else value


def total_granularity(solution: Any, problem: ContractionProblem, hardware: Hardware) -> float:
    """``Granularities::totalGranularity`` of ``solution`` for ``problem``."""
    import numpy as np

    mapping = getattr(solution, "size_mapping", None)
    tile = _mapping_value(mapping, "macro_tile", [1, 1, 1])
    work_group = _mapping_value(mapping, "work_group", [1, 1, 1])
    gsu = float(_mapping_value(mapping, "global_split_u", 1))
    lsu = float(work_group[2]) if len(work_group) > 2 else 1.0
    pack_batch = int(_mapping_value(mapping, "packBatchDims", 0))
    batches = float(problem.batch) if pack_batch == 0 else 1.0
    cus = float(hardware.cu_count or 0)
    tiles0 = problem.m / float(tile[0])
    tiles1 = problem.n / float(tile[1])
    tile0 = _granularity(tiles0)
    tile1 = _granularity(tiles1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tiles_per_cu = float(np.float64(batches * math.ceil(tiles0) * math.ceil(tiles1)) / (cus / gsu / lsu))
    cu = _granularity(tiles_per_cu)
    threads = (
        math.floor(tiles_per_cu + 1.0) * work_group[0] * work_group[1] * (work_group[2] if len(work_group) > 2 else 1)
    )
    wave = min(1.0, float(threads) / hardware.wavefront / hardware.simd_per_cu)
    return tile0 * tile1 * cu * wave


def projected_performance(solution: Any, problem: ContractionProblem, hardware: Hardware) -> float:
    """``projectedPerformance(problem, hardware).speedGFlops``."""

    ideals = getattr(solution, "model_extra", None) or {}
    table = ideals.get("ideals") or {}
    closest_measure = 2**31 - 1
    closest_perf = 0.0
    for my_k in sorted(int(key) for key in table):
        measure = int(abs(my_k - float(problem.k)))  # assigned to int in C++: truncation
        if measure < closest_measure:
            closest_measure = measure
            closest_perf = float(table.get(my_k, table.get(str(my_k), 0.0)))
    return closest_perf * total_granularity(solution, problem, hardware)


__all__ = ["projected_performance", "total_granularity"]

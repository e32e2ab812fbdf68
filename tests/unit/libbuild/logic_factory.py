"""Small hand-written logic files in the real list/mapping layouts, for build tests."""

from __future__ import annotations

import copy
from typing import Any

NN_SGEMM_PROBLEM_TYPE: dict[str, Any] = {
    "OperationType": "GEMM",
    "DataType": 0,
    "DestDataType": 0,
    "ComputeDataType": 0,
    "HighPrecisionAccumulate": False,
    "UseBeta": True,
    "Batched": True,
    "StridedBatched": True,
    "TransposeA": False,
    "TransposeB": False,
    "ComplexConjugateA": False,
    "ComplexConjugateB": False,
    "IndexAssignmentsA": [0, 3, 2],
    "IndexAssignmentsB": [3, 1, 2],
    "IndicesBatch": [2],
    "IndicesFree": [0, 1],
    "IndicesSummation": [3],
    "NumIndicesC": 3,
    "TLUA": True,
    "TLUB": False,
    "TotalIndices": 4,
}


def solution(index: int, **overrides: Any) -> dict[str, Any]:
    sol: dict[str, Any] = {
        "SolutionIndex": index,
        "KernelLanguage": "Assembly",
        "MacroTile0": 64,
        "MacroTile1": 64,
        "DepthU": 16,
        "WorkGroup": [16, 16, 1],
        "ThreadTile": [4, 4],
        "GlobalReadVectorWidth": 4,
        "VectorWidth": 4,
        "AssertFree0ElementMultiple": 1,
        "AssertStrideAEqual": {0: 1},
        "AssertStrideBEqual": {0: 1},
        "AssertStrideCEqual": {0: 1},
        "AssertStrideDEqual": {0: 1},
        "ProblemType": copy.deepcopy(NN_SGEMM_PROBLEM_TYPE),
    }
    sol.update(overrides)
    if "ThreadTile" not in overrides:
        # keep the file self-consistent: Tensile derives MacroTile = WorkGroup x ThreadTile (VALU)
        sol["ThreadTile"] = [sol["MacroTile0"] // sol["WorkGroup"][0], sol["MacroTile1"] // sol["WorkGroup"][1]]
    return sol


def list_logic(
    solutions: list[dict[str, Any]],
    table: list[Any],
    *,
    arch: Any = "gfx90a",
    distance: str | None = None,
    perf_metric: str = "DeviceEfficiency",
    tail: list[Any] | None = None,
) -> list[Any]:
    data: list[Any] = [
        {"MinimumRequiredVersion": "4.33.0"},
        "aldebaran",
        arch,
        ["Device 0050"],
        copy.deepcopy(NN_SGEMM_PROBLEM_TYPE),
        solutions,
        [2, 3, 0, 1],
        table,
        None,
        None,
        perf_metric,
    ]
    if tail is not None:
        data += tail
    elif distance is not None:
        data += [None, distance]
    return data


def mapping_logic(solutions: list[dict[str, Any]], library_type: str, library: Any, **keys: Any) -> dict[str, Any]:
    """A mapping-form (rocBLAS DecisionTree style) logic file; ``keys`` adds further top-level keys."""
    return {
        "ArchitectureName": "gfx90a",
        "ProblemType": copy.deepcopy(solutions[0]["ProblemType"]),
        "Solutions": solutions,
        "LibraryType": library_type,
        "Library": library,
        **keys,
    }

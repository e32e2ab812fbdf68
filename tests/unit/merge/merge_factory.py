"""Small hand-built logic files for the merge, diff and prune unit tests (imported by them)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from tensilekit.io.logic_io import logic_from_data
from tensilekit.model.logic import LogicFile

PROBLEM_TYPE: dict[str, Any] = {
    "OperationType": "GEMM", "DataType": 0, "DestDataType": 0, "ComputeDataType": 0,
    "IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3,
    "UseBeta": True, "Batched": True, "TransposeA": False, "TransposeB": False,
    "HighPrecisionAccumulate": False,
}  # fmt: skip


def solution(mt0: int = 64, mt1: int = 64, **extra: Any) -> dict[str, Any]:
    """A Tensile-nameable solution dict; ``extra`` overrides or adds keys."""
    base: dict[str, Any] = {
        "ProblemType": copy.deepcopy(PROBLEM_TYPE),
        "KernelLanguage": "Assembly",
        "MacroTile0": mt0,
        "MacroTile1": mt1,
        "DepthU": 16,
        "WorkGroup": [16, 16, 1],
        "ThreadTile": [mt0 // 16, mt1 // 16],
        "GlobalSplitU": 1,
        "StaggerU": 32,
        "StaggerUStride": 256,
        "SolutionNameMin": f"Cijk_Ailk_Bljk_SB_MT{mt0}x{mt1}x16",
    }
    base.update(extra)
    return base


def logic_data(
    solutions: Sequence[dict[str, Any]],
    rows: Sequence[tuple[Sequence[int], int, float | int]],
    *,
    version: str = "4.33.0",
    architecture: Any = "gfx90a",
    performance_metric: str | None = None,
    tensilelite: bool = False,
    header: dict[str, Any] | None = None,
    index: bool = True,
) -> list[Any]:
    sols = [copy.deepcopy(s) for s in solutions]
    if index:
        for position, item in enumerate(sols):
            item.setdefault("SolutionIndex", position)
    data: list[Any] = [
        {"MinimumRequiredVersion": version},
        "aldebaran",
        architecture,
        ["Device 0050", "Device 0051"],
        copy.deepcopy(header if header is not None else PROBLEM_TYPE),
        sols,
        [2, 3, 0, 1],
        [[list(size), [position, eff]] for size, position, eff in rows],
        None,
    ]
    if tensilelite:
        data += [None, "DeviceEfficiency", "Equality"]
    elif performance_metric is not None:
        data += [None, performance_metric]
    return data


def make_logic(*args: Any, **kwargs: Any) -> LogicFile:
    """``logic_from_data(logic_data(...))``."""
    return logic_from_data(logic_data(*args, **kwargs))

"""The ``solutions[i]`` records of a master library, from a solution's kernel state.

Reproduces ``Tensile/Contractions.py`` ``Solution.FromOriginalState`` / ``state()`` for the Tensile
4.44 field set: ``name``, ``index``, ``libraryLogicIndex``, ``problemType`` (summary dict),
``hardwarePredicate`` (always TruePred), ``problemPredicate``, ``taskPredicate``, ``sizeMapping``,
``debugKernel``, ``ideals`` and ``linearModel``. tensilelite records are
:mod:`tensilekit.libbuild.tensilelite`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensilekit.errors import InvalidValue, Location
from tensilekit.libbuild.predicates import (
    TRUE,
    operation_identifier,
    solution_problem_predicate,
    solution_task_predicate,
    tensor_types,
)
from tensilekit.model.naming import KernelState, ProblemTypeState

#: ``SizeMapping.FromOriginalState``: a chain of ifs, so anything else (old files write ``False``)
#: is 0.
_GLOBAL_ACCUMULATION = {None: 0, False: 0, "SingleBuffer": 1, "MultipleBuffer": 2}


def problem_type_summary(pt: ProblemTypeState) -> dict[str, Any]:
    """``Contractions.ProblemType.state()``: the ``problemType`` field of a solution record."""
    a, b, c, d = tensor_types(pt)
    return {
        "aType": a,
        "bType": b,
        "cType": c,
        "dType": d,
        "f32XdlMathOp": pt["F32XdlMathOp"].enum,
        "highPrecisionAccumulate": bool(pt.get("HighPrecisionAccumulate")),
        "operationIdentifier": operation_identifier(pt),
        "stochasticRounding": bool(pt.get("StochasticRounding")),
        "stridedBatched": bool(pt.get("StridedBatched", True)),
        "useBeta": bool(pt.get("UseBeta", True)),
        "useInitialStridesAB": bool(pt.get("UseInitialStridesAB")),
        "useInitialStridesCD": bool(pt.get("UseInitialStridesCD")),
    }


def size_mapping(state: Mapping[str, Any], *, path: str = "") -> dict[str, Any]:
    """``Contractions.SizeMapping.FromOriginalState``."""
    accumulation = state.get("_GlobalAccumulation")
    if accumulation is not None and not isinstance(accumulation, (str, bool)):
        raise InvalidValue(
            f"_GlobalAccumulation must be a name, got {accumulation!r}", Location(path=f"{path}._GlobalAccumulation")
        )
    preload = state.get("PreloadKernelArguments", 0)
    return {
        "depthU": state["DepthU"],
        "globalAccumulation": _GLOBAL_ACCUMULATION.get(accumulation, 0),
        "globalSplitU": state["GlobalSplitU"],
        "macroTile": [state["MacroTile0"], state["MacroTile1"], 1],
        "magicDivAlg": state.get("MagicDivAlg", 1),
        "packBatchDims": state.get("PackBatchDims", 0),
        "packSummationDims": state.get("PackSummationDims", 0),
        "persistentKernel": state.get("PersistentKernel", 0),
        "persistentKernelAlongBatch": state.get("PersistentKernelAlongBatch", False),
        "preloadKernargs": 1 if preload == 1 or preload is True else 0,
        "sourceKernel": state["KernelLanguage"] == "Source",
        "staggerStrideShift": state.get("_staggerStrideShift", 0),
        "staggerU": state.get("StaggerU", 0),
        "streamK": state.get("StreamK", 0),
        "streamKAtomic": state.get("StreamKAtomic", 0),
        "threadTile": state["ThreadTile"],
        "workGroup": state["WorkGroup"],
        "workGroupMapping": state["WorkGroupMapping"],
        "workspaceSizePerElemC": state.get("_WorkspaceSizePerElemC", 0),
    }


def solution_record(
    state: KernelState,
    *,
    name: str,
    index: int,
    library_logic_index: int,
    raw: Mapping[str, Any],
    path: str = "",
) -> dict[str, Any]:
    """One ``solutions[i]`` entry of a master library (keys in Tensile's sorted output order)."""
    record: dict[str, Any] = {
        "debugKernel": bool(raw.get("DebugKernel", False)),
        "hardwarePredicate": TRUE.state(),
        "ideals": dict(raw.get("Ideals") or {}),
        "index": index,
    }
    record.update(
        {
            "libraryLogicIndex": library_logic_index,
            "linearModel": dict(raw.get("LinearModel") or {}),
            "name": name,
            "problemPredicate": solution_problem_predicate(state, path=path).state(),
            "problemType": problem_type_summary(state["ProblemType"]),
            "sizeMapping": size_mapping(state, path=path),
            "taskPredicate": solution_task_predicate(state).state(),
        }
    )
    return record


__all__ = ["problem_type_summary", "size_mapping", "solution_record"]

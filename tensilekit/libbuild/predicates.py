"""Predicates as TensileCreateLibrary writes them, and the order in which it sorts them.

Reproduces ``Tensile/Properties.py`` (``Predicate``, ``And``, ``__lt__``), ``Tensile/Hardware.py``
(``HardwarePredicate.FromHardware`` and its ``__lt__``) and ``Tensile/Contractions.py``
(``ProblemPredicate.FromOriginalKeyPair``, ``ProblemType.predicates``, ``CompoundPredicates``).

Ordering (used when ``PredicateLibrary.merge`` re-sorts rows): ``TruePred`` is last; otherwise rows
compare by ``(tag, index, value)`` the way Python compares tuples, recursing into nested
predicates; data types compare by their Tensile enum code. Hardware rows use their own order:
APU before XPU before generic, then higher CU count first, then processor name. The sort is
Python's stable sort driven only by ``<``, exactly as in Tensile.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensilekit.errors import InvalidValue, Location, MissingField
from tensilekit.model.naming import KernelState, ProblemTypeState
from tensilekit.model.tensile_parameters import DATA_TYPE_BY_NAME, DataTypeInfo


@dataclasses.dataclass(frozen=True, eq=True)
class Predicate:
    """One ``{type, index?, value?}`` node; ``value`` may hold nested predicates."""

    tag: str
    index: int | None = None
    value: Any = None

    def state(self) -> dict[str, Any]:
        """The master-library form (``Properties.Property.state``)."""
        out: dict[str, Any] = {"type": self.tag}
        if self.index is not None:
            out["index"] = self.index
        if self.value is not None:
            out["value"] = _value_state(self.value)
        return out


TRUE = Predicate("TruePred")


def _value_state(value: Any) -> Any:
    if isinstance(value, Predicate):
        return value.state()
    if isinstance(value, DataTypeInfo):
        return value.enum
    if isinstance(value, (tuple, list)):
        return [_value_state(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _value_state(v) for k, v in value.items()}
    return value


def and_(predicates: Iterable[Predicate]) -> Predicate:
    """``Predicate.And``: TruePred for none, the predicate itself for one, else ``And``."""
    preds = tuple(predicates)
    if not preds:
        return TRUE
    if len(preds) == 1:
        return preds[0]
    return Predicate("And", value=preds)


def predicate_from_state(data: Any, *, path: str = "") -> Predicate:
    """Read a predicate written as ``{type, index?, value?}`` (logic-file regions, master files)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        raise InvalidValue("a predicate must be a mapping with a string 'type'", Location(path=path or None))
    tag = data["type"]
    value = data.get("value")
    if tag in ("And", "Or") and isinstance(value, list):
        value = tuple(predicate_from_state(v, path=f"{path}.value[{i}]") for i, v in enumerate(value))
    elif tag == "Not" or (isinstance(value, Mapping) and isinstance(value.get("type"), str)):
        value = predicate_from_state(value, path=f"{path}.value")
    index = data.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise InvalidValue(f"predicate index must be an integer, got {index!r}", Location(path=f"{path}.index"))
    return Predicate(tag, index, value)


# ------------------------------------------------------------------------------------------
# ordering


def _value_lt(a: Any, b: Any) -> bool:
    if isinstance(a, Predicate) and isinstance(b, Predicate):
        return predicate_lt(a, b)
    if isinstance(a, DataTypeInfo) and isinstance(b, DataTypeInfo):
        return a.code < b.code
    if isinstance(a, tuple) and isinstance(b, tuple):
        for x, y in zip(a, b, strict=False):
            if x != y:
                return _value_lt(x, y)
        return len(a) < len(b)
    try:
        return bool(a < b)
    except TypeError as exc:  # Tensile would raise the same TypeError while sorting
        raise InvalidValue(f"cannot order predicate values {a!r} and {b!r}") from exc


def predicate_lt(a: Predicate, b: Predicate) -> bool:
    """``Properties.Predicate.__lt__``."""
    if b.tag == "TruePred":
        return a.tag != "TruePred"
    if a.tag == "TruePred":
        return False
    for x, y in ((a.tag, b.tag), (a.index, b.index), (a.value, b.value)):
        if x != y:
            return _value_lt(x, y)
    return False


def _hardware_parts(pred: Predicate) -> tuple[Predicate | None, int, int]:
    inner = pred.value
    if isinstance(inner, Predicate) and inner.tag == "And":
        parts = inner.value
        proc = next((p for p in parts if p.tag == "Processor"), None)
        cu = next((p.value for p in parts if p.tag == "CUCount"), 0)
        apu = next((p.value for p in parts if p.tag == "IsAPU"), -1)
        return proc, int(cu), int(apu)
    return (inner if isinstance(inner, Predicate) else None), 0, -1


def hardware_lt(a: Predicate, b: Predicate) -> bool:
    """``Hardware.HardwarePredicate.__lt__`` (Tensile flavour, with IsAPU)."""
    if a.tag == "TruePred" or b.tag == "TruePred":
        return predicate_lt(a, b)
    proc_a, cu_a, apu_a = _hardware_parts(a)
    proc_b, cu_b, apu_b = _hardware_parts(b)
    if apu_a == apu_b:
        if cu_a == cu_b == 0:
            if proc_a is None or proc_b is None:
                raise InvalidValue("hardware predicate without a Processor")
            return predicate_lt(proc_a, proc_b)
        return cu_a > cu_b
    return apu_a > apu_b


def sort_rows(rows: list[Any], *, hardware: bool) -> None:
    """Stable in-place sort of ``{predicate, library}`` rows, as ``PredicateLibrary.merge`` does."""
    lt = hardware_lt if hardware else predicate_lt

    def compare(x: Any, y: Any) -> int:
        # list.sort only ever asks "x < y?", so -1/1 reproduces Python's __lt__-driven sort.
        return -1 if lt(x.predicate, y.predicate) else 1

    rows.sort(key=functools.cmp_to_key(compare))


def hardware_predicate(architecture: str, cu_count: int | None = None, is_apu: int | None = None) -> Predicate:
    """``HardwarePredicate.FromHardware``; the pseudo-architecture ``fallback`` gives TruePred."""
    if architecture == "fallback":
        return TRUE
    processor = Predicate("Processor", value=architecture)
    extra = []
    if cu_count is not None:
        extra.append(Predicate("CUCount", value=cu_count))
    if is_apu is not None:
        extra.append(Predicate("IsAPU", value=is_apu))
    if not extra:
        return Predicate("AMDGPU", value=processor)
    return Predicate("AMDGPU", value=and_([processor, *extra]))


# ------------------------------------------------------------------------------------------
# problem type


def _index_names(pt: ProblemTypeState) -> tuple[str, str, str, str, str]:
    """``Contractions.ProblemType.indexNames``."""
    num_c = pt["NumIndicesC"]
    ia, ib = list(pt["IndexAssignmentsA"]), list(pt["IndexAssignmentsB"])
    summation = list(pt.get("IndicesSummation") or sorted(set(ia) & set(ib) - set(range(num_c))))
    letters = "ijklmnopqrstuvwxyz"
    d_names = letters[:num_c]
    sum_names = letters[num_c : num_c + len(summation)]
    mirror_a, mirror_b = pt.get("MirrorDimsA") or [], pt.get("MirrorDimsB") or []

    def names(assign: Sequence[int], mirror: Sequence[int]) -> str:
        out = []
        for i in assign:
            if i < num_c:
                out.append(d_names[i])
            else:
                name = sum_names[summation.index(i)]
                out.append(name.upper() if i in mirror else name)
        return "".join(out)

    return names(ia, mirror_a), names(ib, mirror_b), d_names, d_names, sum_names


def operation_identifier(pt: ProblemTypeState) -> str:
    """``Contractions.ProblemType.operationIdentifier``, e.g. ``Contraction_l_Alik_Bljk_Cijk_Dijk``."""
    a, b, c, d, s = _index_names(pt)
    a_op = "C" if pt.get("ComplexConjugateA") else ""
    b_op = "C" if pt.get("ComplexConjugateB") else ""
    return "_".join(["Contraction", s, f"A{a}{a_op}", f"B{b}{b_op}", f"C{c}", f"D{d}"])


def tensor_types(pt: ProblemTypeState) -> tuple[str, str, str, str]:
    """(a, b, c, d) type names. Mixed F8/B8 inputs are split into their A and B halves; tensilelite's
    ``DataTypeA``/``DataTypeB`` (mixed-input GEMMs), when present, name A and B directly."""
    src, dst = pt["DataType"], pt["DestDataType"]
    a = b = src.enum
    if src.char == "F8B8":
        a, b = "Float8", "BFloat8"
    elif src.char == "B8F8":
        a, b = "BFloat8", "Float8"
    if isinstance(pt.get("DataTypeA"), DataTypeInfo):
        a = pt["DataTypeA"].enum
    if isinstance(pt.get("DataTypeB"), DataTypeInfo):
        b = pt["DataTypeB"].enum
    return a, b, dst.enum, dst.enum


def problem_type_predicates(pt: ProblemTypeState, *, include_operation: bool, include_type: bool) -> list[Predicate]:
    """``ProblemType.predicates(includeBatch, includeOperation, includeType)``."""
    preds: list[Predicate] = []
    if include_operation:
        preds.append(Predicate("OperationIdentifierEqual", value=operation_identifier(pt)))
        if not pt.get("UseBeta", True):
            preds.append(Predicate("BetaZero"))
        preds.append(Predicate("StridedBatched", value=bool(pt.get("StridedBatched", True))))
    if include_type:
        # Tensile's values are DataType objects: rows holding them sort by enum code, not by name
        # (a Float type row before a Double one when PredicateLibrary.merge re-sorts).
        types = tuple(DATA_TYPE_BY_NAME.get(name.lower(), name) for name in tensor_types(pt))
        preds.append(Predicate("TypesEqual", value=types))
        preds.append(Predicate("HighPrecisionAccumulate", value=bool(pt.get("HighPrecisionAccumulate"))))
        preds.append(Predicate("F32XdlMathOp", value=pt["F32XdlMathOp"]))
        preds.append(Predicate("StochasticRounding", value=bool(pt.get("StochasticRounding"))))
    return preds


# ------------------------------------------------------------------------------------------
# solution predicates


def _dim_predicates(value: Any, tag: str, path: str) -> Predicate | None:
    if not isinstance(value, Mapping):
        raise InvalidValue(f"expected a mapping of position to value, got {value!r}", Location(path=path))
    preds = [Predicate(tag, index=int(pos), value=v) for pos, v in value.items() if v != -1]
    if not preds:
        return None
    return preds[0] if len(preds) == 1 else and_(preds)


_DIM_ASSERTS = {
    "AssertStrideAEqual": "StrideAEqual",
    "AssertStrideBEqual": "StrideBEqual",
    "AssertStrideCEqual": "StrideCEqual",
    "AssertStrideDEqual": "StrideDEqual",
    "AssertSizeEqual": "SizeEqual",
    "AssertSizeGreaterThan": "SizeGreaterThan",
    "AssertSizeLessThan": "SizeLessThan",
    "AssertSizeMultiple": "SizeMultiple",
}
_MULTIPLE_ASSERTS = {
    "AssertFree0ElementMultiple": ("Free0SizeMultiple", 0),
    "AssertFree1ElementMultiple": ("Free1SizeMultiple", 0),
    "AssertSummationElementMultiple": ("BoundSizeMultiple", -1),
}


def key_pair_predicate(key: str, value: Any, *, path: str = "") -> Predicate | None:
    """``ProblemPredicate.FromOriginalKeyPair`` for one solution-state entry."""
    where = f"{path}.{key}" if path else key
    if key in _DIM_ASSERTS:
        return _dim_predicates(value, _DIM_ASSERTS[key], where)
    if key in ("AssertAlphaValue", "AssertBetaValue"):
        return Predicate(key[6:], value=str(value)) if value is not False else None
    if key == "AssertCEqualsD":
        return Predicate("CEqualsD") if value else None
    if key == "AssertMinApproxSize":
        return None
    if key in ("AssertAIGreaterThanEqual", "AssertAILessThanEqual"):
        return Predicate(key[6:], value=value) if isinstance(value, (int, float)) and value > 0 else None
    if key in _MULTIPLE_ASSERTS:
        if value == 1:
            return None
        tag, index = _MULTIPLE_ASSERTS[key]
        return Predicate(tag, index=index, value=value)
    if key.startswith("Assert"):
        raise InvalidValue(f"unknown assertion key {key}", Location(path=where))
    if key in ("Fp16AltImpl", "Fp16AltImplRound"):
        return Predicate(key) if value else None
    return None


def _int(state: Mapping[str, Any], key: str, path: str) -> int:
    if key not in state:
        raise MissingField(f"solution has no {key}", Location(path=f"{path}.{key}"))
    value = state[key]
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, int):
        raise InvalidValue(f"{key} must be an integer, got {value!r}", Location(path=f"{path}.{key}"))
    return value


def _tlu(pt: ProblemTypeState, tensor: str) -> bool:
    key = f"TLU{tensor}"
    if key in pt:
        return bool(pt[key])
    assignments = pt[f"IndexAssignments{tensor}"]
    return bool(assignments) and assignments[0] < pt["NumIndicesC"]


def compound_predicates(state: KernelState, *, path: str = "") -> list[Predicate]:
    """``ProblemPredicate.CompoundPredicates`` (Tensile 4.44 set, see selection.md a.2); Tensile
    writes ``GlobalSplitUCheckMinK`` as the single bound ``MinKForGSU x GSU`` (tensilelite's
    ``[minK, GSU]`` form is built by ``libbuild.tensilelite``)."""
    pt: ProblemTypeState = state["ProblemType"]
    preds: list[Predicate] = []
    tlua, tlub = _tlu(pt, "A"), _tlu(pt, "B")
    glvwa, glvwb = _int(state, "GlobalLoadVectorWidthA", path), _int(state, "GlobalLoadVectorWidthB", path)
    if pt["DataType"].char != "4xi8":
        preds.append(Predicate("LeadingFree0SizesGreaterOrEqual", value=max(glvwa, 1) if tlua else 1))
        preds.append(Predicate("LeadingFree1SizesGreaterOrEqual", value=max(glvwb, 1) if tlub else 1))
    if len(state.get("PackedC0IndicesX") or [0]) > 1:
        preds.append(Predicate("CDStridesEqual"))
    if "KernelLanguage" in state:
        preds.append(Predicate("KernelLanguageCompatible", value=state["KernelLanguage"]))
    gsu = _int(state, "GlobalSplitU", path)
    accumulation = state.get("_GlobalAccumulation")
    stream_k = _int(state, "StreamK", path)
    if (gsu > 1 and accumulation != "MultipleBuffer") or (stream_k > 0 and state.get("StreamKAtomic")):
        preds.append(Predicate("DeterministicMode", value=False))
    if state.get("PersistentKernel"):
        preds.append(Predicate("PersistentKernelCheck"))
    mfma = bool(state.get("MatrixInstruction")) or state.get("EnableMatrixInstruction") is True
    preds.append(Predicate("ArithmeticUnitCompatible", value="MFMA" if mfma else "VALU"))
    mt0, mt1, depth_u = _int(state, "MacroTile0", path), _int(state, "MacroTile1", path), _int(state, "DepthU", path)
    if state.get("BufferLoad") is True or state.get("BufferLoad") == 1:
        may_shift_a = tlua and _int(state, "AssertFree0ElementMultiple", path) < glvwa
        may_shift_b = tlub and _int(state, "AssertFree1ElementMultiple", path) < glvwb
        preds.append(
            Predicate(
                "BufferLoadOffsetLimitCheck",
                value={
                    "DUorMT0": depth_u if tlua else mt0,
                    "DUorMT1": depth_u if tlub else mt1,
                    "ShiftPtrElemA": glvwa if may_shift_a else 0,
                    "ShiftPtrElemB": glvwb if may_shift_b else 0,
                },
            )
        )
    if state.get("BufferStore") is True or state.get("BufferStore") == 1:
        limit = mt1
        less_than = state.get("AssertSizeLessThan") or {}
        if isinstance(less_than, Mapping) and 1 in less_than:
            limit = min(mt1, int(less_than[1]) - 1)
        preds.append(Predicate("BufferStoreOffsetLimitCheck", value=limit))
    if accumulation is not None and not stream_k:
        min_k = state.get("MinKForGSU", 256)
        preds.append(Predicate("GlobalSplitUCheckMinK", value=int(min_k) * gsu))
    return preds


def solution_problem_predicate(state: KernelState, *, path: str = "") -> Predicate:
    """``ProblemPredicate.FromOriginalState``: key-pair, problem-type, then compound predicates."""
    preds = [p for key, value in state.items() if (p := key_pair_predicate(key, value, path=path)) is not None]
    preds += problem_type_predicates(state["ProblemType"], include_operation=True, include_type=True)
    preds += compound_predicates(state, path=path)
    return and_(preds)


def solution_task_predicate(state: Mapping[str, Any]) -> Predicate:
    """``WorkspaceCheck`` when the kernel needs a workspace, else TruePred."""
    workspace = state.get("_WorkspaceSizePerElemC") or 0
    return Predicate("WorkspaceCheck") if workspace > 0 else TRUE


__all__ = [
    "Predicate",
    "TRUE",
    "and_",
    "compound_predicates",
    "hardware_lt",
    "hardware_predicate",
    "key_pair_predicate",
    "operation_identifier",
    "predicate_from_state",
    "predicate_lt",
    "problem_type_predicates",
    "solution_problem_predicate",
    "solution_task_predicate",
    "sort_rows",
    "tensor_types",
]

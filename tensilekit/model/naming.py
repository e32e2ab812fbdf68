"""Tensile kernel naming: problem-type names, min-naming, full names, and the kernel state they read.

Reproduces ROCm/Tensile ``SolutionStructs.ProblemType.__str__``, ``Solution.getMinNaming``,
``Solution.getNameMin`` / ``getNameFull`` and ``Kernel/Name.paramValueAbbr`` on raw solution dicts
as found in logic files (list position 5). The tables come from
:mod:`tensilekit.model.tensile_parameters`.

Algorithm
---------
1. :func:`kernel_state` turns a raw solution dict into the state Tensile's ``Solution.__init__``
   would hold: every ``defaultSolution`` key (in that order, file value if present), ``ISA``, then the
   remaining file keys in file order, then a *subset* of ``assignDerivedParameters`` (listed below).
   A kernel (``Solution.getKernels``) additionally carries ``Kernel: True``.
2. :func:`min_naming` marks a parameter *required* when it is a valid parameter present in the first
   kernel and some kernel's value differs from the first one's (Python ``!=``, so ``0 == False``).
   ``ProblemType``, ``MacroTile0/1``, ``DepthU`` and ``LdcEqualsLdd`` are never required (they are
   always prepended); ``Kernel`` always is, hence the ``_K1`` in every name.
3. :func:`solution_name_min` writes ``<ProblemType>_MT<MT0>x<MT1>x<DU>_[MI<M>x<N>x<K>x<B>_]SN_`` (``SE_``
   when LdcEqualsLdd) followed by ``<abbr><value>`` for the required keys in sorted key order.

The state is re-derived as TensileCreateLibrary does (``LibraryIO`` clears
``AssignedDerivedParameters``): :mod:`tensilekit.model.derive` ports ``assignDerivedParameters``
for Tensile files; tensilelite files keep their stored values (see that module).

``getMinNaming`` never names ``MatrixInstruction`` (MI is prepended), ``Fp16AltImpl`` and
``Fp16AltImplRound`` (part of the problem-type name), ``CustomKernelName``, nor the prepended
fields, and it leaves custom kernels (a non-empty ``CustomKernelName``) out of the comparison.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from tensilekit.errors import InvalidValue, Location, MissingField
from tensilekit.model.derive import assign_derived_parameters
from tensilekit.model.tensile_parameters import (
    DATA_TYPE_BY_CODE,
    DATA_TYPE_BY_NAME,
    DEFAULT_PROBLEM_TYPE,
    DEFAULT_SOLUTION,
    HPA_TYPES,
    PARAMETER_NAME_ABBREVIATIONS,
    TENSILELITE_DATA_TYPE_BY_CODE,
    VALID_PARAMETER_SET,
    DataTypeInfo,
)

Isa = tuple[int, int, int]

_INDEX_CHARS: Final = "IJKLMNOPQRSTUVWXYZ"
#: Never part of a min-name although Tensile lists them as valid parameters (see module docstring).
_OMITTED_FROM_MIN_NAMING: Final = frozenset({"MatrixInstruction", "Fp16AltImpl", "Fp16AltImplRound"})
#: getMinNaming: "always prepended" parameters.
_PREPENDED: Final = ("ProblemType", "MacroTile0", "MacroTile1", "DepthU", "LdcEqualsLdd")


class KernelState(dict[str, Any]):
    """A solution state after default filling and re-derivation (see :func:`kernel_state`).

    A plain ``dict`` subclass so callers can read it like Tensile's ``Solution`` object; the
    ``ProblemType`` entry is a :class:`ProblemTypeState`.
    """


class ProblemTypeState(dict[str, Any]):
    """A ``ProblemType`` dict with defaults filled and data types resolved to :class:`DataTypeInfo`."""

    def __str__(self) -> str:
        return problem_type_name(self)


@dataclasses.dataclass(frozen=True)
class MinNaming:
    """Which parameters appear in the min-names of one build (``Solution.getMinNaming``)."""

    required: frozenset[str]

    def __contains__(self, key: object) -> bool:
        return key in self.required


# --------------------------------------------------------------------------------------------
# data types and problem types


def data_type(value: Any, *, path: str = "DataType", dialect: str = "tensile") -> DataTypeInfo:
    """Resolve a Tensile data type given as enum code (``4``), letter (``"h"``) or name.

    Enum codes from 9 on mean different types in rocBLAS (``tensile``) and hipBLASLt
    (``tensilelite``) logic files, so ``dialect`` picks the table.
    """
    if isinstance(value, DataTypeInfo):
        return value
    if isinstance(value, bool):
        raise InvalidValue(f"not a data type: {value!r}", Location(path=path))
    if isinstance(value, int):
        codes = TENSILELITE_DATA_TYPE_BY_CODE if dialect == "tensilelite" else DATA_TYPE_BY_CODE
        info = codes.get(value)
    elif isinstance(value, str):
        info = DATA_TYPE_BY_NAME.get(value.lower())
    else:
        info = None
    if info is None:
        raise InvalidValue(f"unknown {dialect} data type {value!r}", Location(path=path))
    return info


def problem_type_state(
    raw: Mapping[str, Any], *, path: str = "ProblemType", dialect: str = "tensile"
) -> ProblemTypeState:
    """Fill a logic-file ``ProblemType`` dict with Tensile's defaults and resolve its data types.

    ``dialect`` selects the data-type enum (see :func:`data_type`). tensilelite's ``DataTypeA`` /
    ``DataTypeB`` (mixed-input GEMMs such as F8 x H) are resolved too when present.
    """
    if not isinstance(raw, Mapping):
        raise InvalidValue("ProblemType must be a mapping", Location(path=path))
    state = ProblemTypeState(copy.deepcopy(dict(DEFAULT_PROBLEM_TYPE)))
    state.update(copy.deepcopy(dict(raw)))

    def resolve(key: str, default: DataTypeInfo) -> DataTypeInfo:
        value = raw.get(key)
        return default if value is None else data_type(value, path=f"{path}.{key}", dialect=dialect)

    src = data_type(state["DataType"], path=f"{path}.DataType", dialect=dialect)
    dst = resolve("DestDataType", src)
    compute = resolve("ComputeDataType", dst)
    if dialect == "tensile" and state.get("HighPrecisionAccumulate") and compute == src and src.char in ("H", "B"):
        # ProblemType.__init__: HHH+HPA / BBB+HPA is no type; Tensile computes in single (HHS_BH, BBS_BH)
        compute = DATA_TYPE_BY_CODE[0]
    state["DataType"], state["DestDataType"], state["ComputeDataType"] = src, dst, compute
    for key in ("DataTypeA", "DataTypeB"):
        if raw.get(key) is not None:
            state[key] = resolve(key, src)
    state["F32XdlMathOp"] = resolve("F32XdlMathOp", data_type(0))
    for key in ("IndexAssignmentsA", "IndexAssignmentsB", "NumIndicesC"):
        if key not in state:
            raise MissingField(f"ProblemType has no {key}", Location(path=f"{path}.{key}"))
    return state


def problem_type_name(problem_type: Mapping[str, Any]) -> str:
    """``ProblemType.__str__``: e.g. ``Cijk_Alik_Bjlk_HHS_BHRZ``, ``Cijk_Ailk_Bjlk_SB_MX``, ``…_B8B8S_BH_SR``.

    Tensile a164ed70 ``SolutionStructs.py:1116-1166``: ``RZ``/``R`` only with ``Fp16AltImpl``
    (``Fp16AltImplRound`` alone adds nothing); ``_M<x>`` for a non-single F32 xdl math op on single
    data after ``_GB``, then ``_SR``.
    """
    pt = problem_type if isinstance(problem_type, ProblemTypeState) else problem_type_state(problem_type)
    mirror_a, mirror_b = pt.get("MirrorDimsA") or [], pt.get("MirrorDimsB") or []
    name = "C" + "".join(_INDEX_CHARS[i].lower() for i in range(pt["NumIndicesC"]))
    name += "_A" + "".join(
        _INDEX_CHARS[i] if i in mirror_a else _INDEX_CHARS[i].lower() for i in pt["IndexAssignmentsA"]
    )
    if pt.get("ComplexConjugateA"):
        name += "C"
    name += "_B" + "".join(
        _INDEX_CHARS[i] if i in mirror_b else _INDEX_CHARS[i].lower() for i in pt["IndexAssignmentsB"]
    )
    if pt.get("ComplexConjugateB"):
        name += "C"
    src, dst, compute = pt["DataType"], pt["DestDataType"], pt["ComputeDataType"]
    name += "_" + src.char
    if (src.char, dst.char, compute.char) in HPA_TYPES:
        name += dst.char + compute.char + "_"
    if pt.get("UseBeta"):
        name += "B"
    if pt.get("HighPrecisionAccumulate") and not pt.get("SilentHighPrecisionAccumulate"):
        name += "H"
    if pt.get("Fp16AltImpl"):  # Fp16AltImplRound alone names nothing (a164ed70 SolutionStructs.py:1150)
        name += "RZ" if pt.get("Fp16AltImplRound") else "R"
    if pt.get("UseInitialStridesAB"):
        name += "I"
    if pt.get("UseInitialStridesCD"):
        name += "Ic"
    if not pt.get("StridedBatched", True):
        name += "_GB"
    xdl = pt["F32XdlMathOp"]
    if xdl.code != 0 and src.code == 0:  # after the flags: Cijk_Ailk_Bjlk_SB_MX
        name += "_M" + xdl.char
    if pt.get("StochasticRounding"):
        name += "_SR"
    return str(name)


# --------------------------------------------------------------------------------------------
# kernel state


def gfx_isa(architecture: str) -> Isa:
    """``Common.gfxArch``: ``"gfx90a"`` → ``(9, 0, 10)``; the last digit is hexadecimal."""
    digits = architecture.lower().removeprefix("gfx").split(":")[0]
    if len(digits) < 3 or not all(c in "0123456789abcdef" for c in digits):
        raise InvalidValue(f"not a gfx architecture name: {architecture!r}")
    return (int(digits[:-2]), int(digits[-2]), int(digits[-1], 16))


def _as_isa(value: Any, path: str) -> Isa:
    if (
        isinstance(value, (list, tuple))
        and len(value) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return (int(value[0]), int(value[1]), int(value[2]))
    raise InvalidValue(f"ISA must be three integers, got {value!r}", Location(path=path))


def _require_int(state: Mapping[str, Any], key: str, path: str) -> int:
    value = state.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(f"{key} must be an integer, got {value!r}", Location(path=f"{path}.{key}"))
    return value


def kernel_state(
    solution: Mapping[str, Any],
    *,
    isa: Isa | None = None,
    problem_type: Mapping[str, Any] | None = None,
    kernel: bool = True,
    force_isa: bool = False,
    strict: bool = True,
    dialect: str = "tensile",
    path: str = "",
) -> KernelState:
    """The Tensile kernel state of a raw logic-file solution (see the module docstring).

    Args:
        solution: one solution dict of a logic file; not modified.
        isa: ISA for assembly kernels that carry no ``ISA`` key (the logic file's architecture);
            ``None`` means ``(0, 0, 0)``, Tensile's value on a machine without a GPU.
        problem_type: used when the solution has no ``ProblemType`` of its own or says ``derive``.
        kernel: add ``Kernel: True`` (``Solution.getKernels``); False gives the solution state.
        force_isa: ignore the solution's own ``ISA``, as ``LibraryIO.parseLibraryLogicData`` does
            when TensileCreateLibrary reads a logic file: assembly kernels get ``isa``, source
            kernels ``(0, 0, 0)``. Logic files copied between architectures keep a stale ISA.
        strict: a stored ``MacroTile0/1`` that its ``WorkGroup``, ``ThreadTile`` and
            ``MatrixInstruction`` contradict raises :class:`InvalidValue` (the file does not
            describe the kernel a build would make). False overwrites it, as Tensile's
            ``Solution()`` does; TensileMergeLibrary's kernel identity compares such states.
        dialect: ``tensile``. A tensilelite solution is derived by its own fork's port
            (:func:`tensilekit.model.derive_tensilelite.solution_state`; a whole file:
            :func:`tensilekit.libbuild.kernel_states`): ``tensilelite`` raises :class:`InvalidValue`.
        path: location prefix for error messages, e.g. ``[5][12]``.
    """
    if dialect == "tensilelite":
        raise InvalidValue(
            "kernel_state derives Tensile solutions; derive a tensilelite one with "
            "tensilekit.model.derive_tensilelite.solution_state (tensilekit.libbuild.kernel_states for a file)",
            Location(path=path or None),
        )
    if not isinstance(solution, Mapping):
        raise InvalidValue("a solution must be a mapping", Location(path=path or None))
    raw_pt = solution.get("ProblemType", problem_type)
    if raw_pt == "derive":
        # Newer logic files write "derive": the file's ProblemType applies (parseLibraryLogicData).
        raw_pt = problem_type
    if raw_pt is None:
        raise MissingField("solution has no ProblemType", Location(path=f"{path}.ProblemType"))
    pt = problem_type_state(raw_pt, path=f"{path}.ProblemType", dialect=dialect)

    state = KernelState()
    state["ProblemType"] = pt
    for key, default in DEFAULT_SOLUTION.items():
        state[key] = copy.deepcopy(solution[key] if key in solution else default)
    if "ISA" in solution and not force_isa:
        state["ISA"] = _as_isa(solution["ISA"], f"{path}.ISA")
    elif state["KernelLanguage"] == "Assembly":
        state["ISA"] = isa if isa is not None else (0, 0, 0)
    else:
        state["ISA"] = (0, 0, 0)
    for key, value in solution.items():
        if key != "ProblemType" and key not in state:
            state[key] = copy.deepcopy(value)
    for key in ("MacroTile0", "MacroTile1", "DepthU"):
        _require_int(state, key, path)
    assign_derived_parameters(state, solution, path=path, strict=strict)
    if kernel:
        state["Kernel"] = True
    return state


# --------------------------------------------------------------------------------------------
# names


def parameter_name_abbreviation(key: str) -> str:
    """``parameterNameAbbreviations``: upper-case letters and digits (``1LDSBuffer`` → ``1LDSB``)."""
    known = PARAMETER_NAME_ABBREVIATIONS.get(key)
    if known is not None:
        return known
    return "".join(c for c in key if not c.islower())


def parameter_value_abbreviation(key: str, value: Any) -> str:
    """``Kernel/Name.paramValueAbbr``: the lossy value spelling used in kernel names."""
    if key == "ISA":
        return f"{value[0]}{value[1]}{value[2]:x}"
    if isinstance(value, DataTypeInfo):
        return value.char
    if isinstance(value, ProblemTypeState):
        return str(value)
    if isinstance(value, str):
        return "".join(c for c in value if c.isupper())
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return f"{value}" if value >= 0 else f"n{abs(value)}"
    if isinstance(value, tuple):
        return "".join(str(v) for v in value)
    if isinstance(value, list):
        return "_".join(parameter_value_abbreviation(key, v) for v in value)
    if isinstance(value, dict):
        return "_".join(f"{int(pos)}{int(v)}" for pos, v in value.items())
    if isinstance(value, float):
        if not math.isfinite(value):  # a damaged file: .inf / .nan where a number belongs
            raise InvalidValue(f"parameter {key} is {value}, not a finite number")
        whole = int(value)
        hundredths = int(round(value * 100)) - whole * 100
        return f"{whole}p{hundredths:02d}" if hundredths > 0 else f"{whole}"
    raise InvalidValue(f"parameter {key} has a value of unsupported type {type(value).__name__}")


def _as_kernel_states(solutions: Iterable[Mapping[str, Any]]) -> Iterator[KernelState]:
    for index, solution in enumerate(solutions):
        if isinstance(solution, KernelState):
            yield solution
        else:
            yield kernel_state(solution, path=f"[{index}]")


def min_naming(solutions: Sequence[Mapping[str, Any]]) -> MinNaming:
    """``Solution.getMinNaming`` over all kernels of one build.

    Elements may be :class:`KernelState` objects (from :func:`kernel_state`, with the logic file's
    ISA) or raw solution dicts, which are derived with ``isa=None``.
    """
    kernels = [k for k in _as_kernel_states(solutions) if not k.get("CustomKernelName")]
    if not kernels:
        return MinNaming(frozenset({"Kernel"}))
    first = kernels[0]
    required: set[str] = set()
    if len(kernels) > 1:
        for key in first:
            if key not in VALID_PARAMETER_SET or key in _OMITTED_FROM_MIN_NAMING:
                continue
            value = first[key]
            for other in kernels[1:]:
                if key not in other or other[key] != value:
                    required.add(key)
                    break
    required.difference_update(_PREPENDED)
    required.add("Kernel")
    return MinNaming(frozenset(required))


def _name_head(state: Mapping[str, Any]) -> str:
    parts = [str(state["ProblemType"])]
    parts.append(f"MT{state['MacroTile0']}x{state['MacroTile1']}x{state['DepthU']}")
    if "MatrixInstM" in state:
        parts.append(f"MI{state['MatrixInstM']}x{state['MatrixInstN']}x{state['MatrixInstK']}x{state['MatrixInstB']}")
    head = "_".join(parts) + "_"
    if "LdcEqualsLdd" in state:
        head += "SE_" if state["LdcEqualsLdd"] else "SN_"
    return head


def _name_tokens(state: Mapping[str, Any], keys: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(key, <abbr><value>)`` for the nameable ``keys`` of ``state``, in name (sorted key) order."""
    wanted = set(keys)
    for key in sorted(state):
        if key in wanted and not key.startswith("_") and key != "CustomKernelName":
            yield key, parameter_name_abbreviation(key) + parameter_value_abbreviation(key, state[key])


def _name(state: Mapping[str, Any], keys: Iterable[str]) -> str:
    if state.get("CustomKernelName"):
        return str(state["CustomKernelName"])
    return _name_head(state) + "_".join(token for _, token in _name_tokens(state, keys))


def solution_name_min(solution: Mapping[str, Any], naming: MinNaming) -> str:
    """``Solution.getNameMin(kernel, naming)``: the ``name`` field of a master-library solution."""
    state = solution if isinstance(solution, KernelState) else kernel_state(solution)
    return _name(state, naming.required)


def infer_min_naming(solution: Mapping[str, Any], name: str) -> MinNaming | None:
    """The :class:`MinNaming` under which ``solution`` gets the min-name ``name``, or None.

    A min-name depends on every kernel of the build that wrote it, so a name from another build
    can only be checked against a kernel state through the key set it was named with. That set
    is read off the name: after the head, the ``<abbr><value>`` tokens of the state's valid
    parameters in sorted key order, each matched greedily. None means no key set gives ``name``
    (a value or the head differs).
    """
    state = solution if isinstance(solution, KernelState) else kernel_state(solution)
    if state.get("CustomKernelName"):
        return MinNaming(frozenset({"Kernel"})) if name == state["CustomKernelName"] else None
    head = _name_head(state)
    if not name.startswith(head):
        return None
    tail, required = name[len(head) :], set()
    for key, token in _name_tokens(state, VALID_PARAMETER_SET | {"Kernel"}):
        if tail == token or tail.startswith(token + "_"):
            required.add(key)
            tail = tail[len(token) + 1 :]
    return MinNaming(frozenset(required)) if not tail else None


def solution_name_full(solution: Mapping[str, Any], *, isa: Isa | None = None) -> str:
    """``Solution.getNameFull``: every valid parameter of the default-filled, re-derived state.

    This is the kernel identity TensileMergeLibrary's ``solsEq`` compares (``str(Solution(d))``).
    Two dumps of one kernel with different key sets compare equal once defaults are filled. The
    result is only as faithful as the re-derivation described in the module docstring: parameters
    Tensile would re-derive from scratch (LDS sizing, ``-1`` auto values other than the listed
    ones) keep their logic-file values here.
    """
    if isinstance(solution, KernelState):
        state: Mapping[str, Any] = {k: v for k, v in solution.items() if k != "Kernel"}
    else:
        state = kernel_state(solution, isa=isa, kernel=False)
    keys = [key for key in state if key in VALID_PARAMETER_SET and key != "MatrixInstruction"]
    return _name(state, keys)


__all__ = [
    "KernelState",
    "MinNaming",
    "ProblemTypeState",
    "data_type",
    "gfx_isa",
    "infer_min_naming",
    "kernel_state",
    "min_naming",
    "parameter_name_abbreviation",
    "parameter_value_abbreviation",
    "problem_type_name",
    "problem_type_state",
    "solution_name_full",
    "solution_name_min",
]

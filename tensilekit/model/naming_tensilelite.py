"""tensilelite's (hipBLASLt 7d9fb683) kernel names: ``ProblemType.__str__``, min-naming and full names.

Ported from ``/work/shared/amd/tensilelite-7d9fb68/Tensile/SolutionStructs.py``: ``ProblemType.__str__``
(459-554), ``Solution.getMinNaming`` (4002-4056), ``getKeyNoInternalArgs`` (4060-4078),
``getNameFull`` (4081-4090), ``getNameMin`` (4095-4164) and the value abbreviations (4223-4273).
The Tensile names live in :mod:`tensilekit.model.naming`.

``getNameMin`` mutates the naming dict it is given: after a call, ``GlobalSplitU``,
``WorkGroupMapping(XCC(Group))``, ``StaggerU(Stride|Mapping)``, ``GlobalSplitUCoalesced`` and
``GlobalSplitUWorkGroupMappingRoundRobin`` are all marked required. ``applyNaming`` names every
solution with one shared dict, so only the first solution of a build can leave them out; AMD's
masters show exactly that. :class:`MinNaming` keeps that behaviour.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensilekit.errors import InvalidValue, Location
from tensilekit.model.derive_tensilelite import LiteProblemType, LiteState, bias_type_list_default
from tensilekit.model.tensile_parameters import DataTypeInfo
from tensilekit.model.tensilelite_parameters import HPA_TYPES, VALID_PARAMETERS

_INDEX_CHARS = "IJKLMNOPQRSTUVWXYZ"

#: getNameMin's internal-argument keys (4127-4134, restored at 4152-4160).
_INTERNAL_ARGS = (
    "WorkGroupMapping",
    "WorkGroupMappingXCC",
    "WorkGroupMappingXCCGroup",
    "StaggerU",
    "StaggerUStride",
    "StaggerUMapping",
    "GlobalSplitUCoalesced",
    "GlobalSplitUWorkGroupMappingRoundRobin",
)
_ALWAYS_PREPENDED = (
    "ProblemType", "MacroTile0", "MacroTile1", "DepthU", "MatrixInstruction", "MatrixInstM", "MatrixInstN",
    "MatrixInstK", "MatrixInstB", "MatrixInstBM", "MatrixInstBN", "CustomKernelName",
)  # fmt: skip


def problem_type_name(pt: LiteProblemType) -> str:
    """``ProblemType.__str__`` (SolutionStructs.py:459-554), e.g. ``Cijk_Ailk_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs``."""
    name = "C" + "".join(_INDEX_CHARS[i].lower() for i in range(pt["NumIndicesC"]))
    for tc in ("A", "B"):
        name += "_" + tc
        for i in pt["IndexAssignments" + tc]:
            name += _INDEX_CHARS[i] if i in pt["MirrorDims" + tc] else _INDEX_CHARS[i].lower()
        if pt["ComplexConjugate" + tc]:
            name += "C"
    data: DataTypeInfo = pt["DataType"]
    if data != pt["DataTypeA"] or data != pt["DataTypeB"]:
        name += "_" + pt["DataTypeA"].char + pt["DataTypeB"].char
    name += "_" + data.char
    if (data.char, pt["DestDataType"].char, pt["ComputeDataType"].char) in HPA_TYPES:
        name += pt["DestDataType"].char + pt["ComputeDataType"].char + "_"
    if pt["F32XdlMathOp"].enum != "Float" and data.enum == "Float":
        name += "_M" + pt["F32XdlMathOp"].char + "_"
    # hipBLASLt 0.12.1's problem types have these keys (SolutionStructs.py:500-504 @0.12.1); 7d9fb683's do not
    if pt.get("SwizzleTensorA"):
        name += "STA_"
    if pt.get("SwizzleTensorB"):
        name += "STB_"
    if pt["UseBeta"]:
        name += "B"
    if pt["HighPrecisionAccumulate"] and not pt["SilentHighPrecisionAccumulate"]:
        name += "H"
    if pt["UseInitialStridesAB"]:
        name += "I"
    if pt["UseInitialStridesCD"]:
        name += "Ic"
    if pt["UseBias"]:
        name += "_Bias"
        if pt["BiasDataTypeList"] != bias_type_list_default(pt):
            name += "".join(t.char for t in pt["BiasDataTypeList"])
        if pt["BiasSrc"] and pt["Gradient"]:
            name += "_BiasSrc" + str(pt["BiasSrc"])
    factor_dim = max(pt["UseScaleAlphaVec"], pt["UseBias"])
    if factor_dim > 1:
        name += "_FD" + ("N" if factor_dim == 2 else "MN")
    if pt["UseE"]:
        name += ("_Grad" if pt["Gradient"] else "_Aux") + pt["DataTypeE"].char
    if pt["OutputAmaxD"]:
        name += "_AmaxD"
    if pt["Sparse"]:
        name += "_SPB" if pt["Sparse"] == 2 else "_SPA"
    if pt["GroupedGemm"]:
        name += "_GG"
    else:
        name += "" if pt["StridedBatched"] else "_GB"
    act = pt["ActivationType"]
    if act != "none":
        name += "_A" if act == "all" else "_HA" if act == "hipblaslt_all" else "_" + act.capitalize().upper()
        name += pt["ActivationComputeDataType"].char
    if pt["ActivationNoGuard"]:
        name += "NG"
    if pt["UseScaleAB"] == "Scalar":
        name += "_SAB"
    elif pt["UseScaleAB"] == "Vector":
        name += "_SABV"
    if pt["UseScaleCD"]:
        name += "_SCD"
    if pt["UseScaleAlphaVec"]:
        name += "_SAV"
    if pt["SupportUserArgs"]:
        name += "_UserArgs"
    return name


def _name_abbreviation(name: str) -> str:
    return "".join(c for c in name if c.isupper())


def _value_abbreviation(key: str, value: Any) -> str:
    """``getParameterValueAbbreviation`` (4257-4273) and its primitive case (4233-4254)."""
    if key == "ISA":
        return f"{value[0]}{value[1]}{value[2]:x}"
    if isinstance(value, tuple):
        return "".join(str(v) for v in value)
    if isinstance(value, list):
        return "_".join(_value_abbreviation(key, v) for v in value)
    if isinstance(value, dict):
        return "_".join(f"{pos:d}{k:d}" for pos, k in value.items())
    if isinstance(value, str):
        return _name_abbreviation(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return f"{value}" if value >= 0 else f"n{abs(value)}"
    if isinstance(value, float):
        if not math.isfinite(value):  # Python's int() raises; no kernel parameter is infinite
            raise InvalidValue(f"parameter {key}={value!r} is not a finite number", Location(path=key))
        whole = int(value)
        frac = int(round(value * 100)) - whole * 100
        return f"{whole}p{str(frac).zfill(2)}" if frac > 0 else f"{whole}"
    raise InvalidValue(f"parameter {key}={value!r} cannot be abbreviated in a kernel name", Location(path=key))


class MinNaming:
    """``kernelMinNaming``: the ``requiredParameters`` dict ``getMinNaming`` returns, used statefully."""

    def __init__(self, required: dict[str, bool]) -> None:
        self.required = required

    @classmethod
    def of(cls, kernels: Sequence[LiteState], valid: frozenset[str] = VALID_PARAMETERS) -> MinNaming:
        """``Solution.getMinNaming(kernels)`` (4002-4056); no custom kernels reach here. ``valid``: the
        version's ``validParameters`` (``LiteDerivationRules.valid_parameters``)."""
        kernels = [k for k in kernels if not k.get("CustomKernelName")]
        if not kernels:
            return cls({})
        first = kernels[0]
        required: dict[str, bool] = {}
        for key in first:
            required[key] = key in valid and any(first[key] != k[key] for k in kernels[1:])
        required["GlobalSplitU"] = True
        required["WorkGroupMapping"] = True
        if "MatrixInstM" in first:
            required["MIWaveTile"] = True
            required["ThreadTile"] = False
        for key in _ALWAYS_PREPENDED:
            required[key] = False
        required["Kernel"] = True
        return cls(required)

    def name(self, state: LiteState, *, ignore_internal_args: bool = False) -> str:
        """``getNameMin(state, requiredParameters, ignoreInternalArgs)`` (4095-4164), mutations included."""
        return _name_min(state, self.required, ignore_internal_args)


def _name_min(state: Mapping[str, Any], required: dict[str, bool], ignore: bool) -> str:
    if state.get("CustomKernelName"):
        return str(state["CustomKernelName"])  # isCustomKernelConfig: the name as given, nothing mutated
    pt = dict(state["ProblemType"])
    if ignore:
        pt["GroupedGemm"] = False
    components = [problem_type_name(pt)]
    if "MacroTile0" in state and "MacroTile1" in state and "DepthU" in state:
        components.append(f"MT{state['MacroTile0']}x{state['MacroTile1']}x{state['DepthU']}")
    if "MatrixInstM" in state:
        components.append(f"MI{state['MatrixInstM']}x{state['MatrixInstN']}x{state['MatrixInstB']}")
    if ignore:
        # globalParameters["SplitGSU"] is False
        if state["GlobalSplitU"] > 0:
            required["GlobalSplitU"] = False
        for key in _INTERNAL_ARGS:
            required[key] = False
    use_wave_tile, use_thread_tile = required.get("MIWaveTile", False), required.get("ThreadTile", False)
    mfma = "MatrixInstM" in state
    required["MIWaveTile"] = mfma
    required["ThreadTile"] = not mfma
    components.append("SN")
    for key in sorted(state):
        if key in required and key[0] != "_" and required[key] and key != "CustomKernelName":
            components.append(_name_abbreviation(key) + _value_abbreviation(key, state[key]))
    required["GlobalSplitU"] = True
    for key in _INTERNAL_ARGS:
        required[key] = True
    required["MIWaveTile"] = use_wave_tile
    required["ThreadTile"] = use_thread_tile
    return "_".join(components)


def name_full(state: Mapping[str, Any], valid: frozenset[str] = VALID_PARAMETERS) -> str:
    """``Solution.getNameFull`` (4081-4090): every ``validParameters`` key (``valid``) of the state."""
    required = {key: True for key in state if key in valid}
    if "MatrixInstM" in state:
        required["MIWaveTile"] = True
        required["ThreadTile"] = False
    return _name_min(state, required, False)


def key_no_internal_args(state: Mapping[str, Any], valid: frozenset[str] = VALID_PARAMETERS) -> str:
    """The full name of ``getKeyNoInternalArgs(state)`` (4060-4078): the kernel de-duplication key."""
    other = copy.copy(dict(state))
    pt = dict(other["ProblemType"])
    pt["GroupedGemm"] = False
    other["ProblemType"] = pt
    if other["GlobalSplitU"] > 0:
        other["GlobalSplitU"] = "M"
    for key in _INTERNAL_ARGS:
        other[key] = "M"
    return name_full(other, valid)


def unique_kernels(solutions: Iterable[LiteState], valid: frozenset[str] = VALID_PARAMETERS) -> list[LiteState]:
    """``generateLogicDataAndSolutions``'s de-duplication, then ``generateKernelObjectsFromSolutions``'s.

    Solutions are equal when their full names (and lazy code-object files) are; kernels when the
    full names of their ``getKeyNoInternalArgs`` copies are.
    """
    seen_solutions: set[tuple[str, str]] = set()
    seen_kernels: set[tuple[str, str]] = set()
    kernels = []
    for state in solutions:
        code_object = str(state.get("codeObjectFile", ""))
        key = (name_full(state, valid), code_object)
        if key in seen_solutions:
            continue
        seen_solutions.add(key)
        kernel_key = (key_no_internal_args(state, valid), code_object)
        if kernel_key not in seen_kernels:
            seen_kernels.add(kernel_key)
            kernels.append(state)
    return kernels


__all__ = ["MinNaming", "key_no_internal_args", "name_full", "problem_type_name", "unique_kernels"]

"""tensilelite's kernel names: ``ProblemType.__str__``, min-naming and full names, per version.

Two versions, each rule named by its version: hipBLASLt 7d9fb683 (:func:`problem_type_name`,
:class:`MinNaming`) and tensilelite 5.x (:func:`problem_type_name_5x`, :func:`name_min_5x`), which
joins every part of the problem-type name with ``_`` (``_HA_S_`` where 7d9fb683 wrote ``_HAS_``) and
names a fixed parameter set (``getRequiredParametersMin``). A build names with 5.x's rules when its
logic is 5.x (:attr:`~tensilekit.selection.hipblaslt_versions.HipblasltVersion.names_min_5x`).

5.x's parameter set and internal arguments changed from commit to commit while files kept saying
``MinimumRequiredVersion: 5.0.0``: AMD's own gfx950 logic (rocm-libraries ``projects/hipblaslt/
library/src/amd_detail/rocblaslt/src/Tensile/Logic/asm_full/gfx950/Equality/
gfx950_Cijk_Alik_Bljk_S_B_Bias_HAS_SAV_UserArgs.yaml`` @21c3348ac4dd) has min-names with
``WGMXCC4`` and without ``BufferLoad``, where the newest sources name ``BL1`` and write ``WGMXCC``
only as 1 / n1. The problem-type part (``…_S_B_Bias_HA_S_SAV_UserArgs``) is the same in all of
them; the parameter part follows the newest sources cited below.

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


# ---------------------------------------------------------------------------------------------
# tensilelite 5.x (2026) names

_REAL_A = {"F8B8": "F8", "B8F8": "B8"}
_REAL_B = {"F8B8": "B8", "B8F8": "F8"}
_8BIT_FLOATS = frozenset({"F8", "B8", "F8B8", "B8F8"})


def _real_type(data: DataTypeInfo, table: Mapping[str, str]) -> DataTypeInfo:
    """``getRealDataTypeA/B`` (LibraryIO.py @09ee40199827): a mixed fp8 type's A (or B) half."""
    char = table.get(data.char)
    if char is None:
        return data
    from tensilekit.model.tensile_parameters import TENSILELITE_DATA_TYPES

    return next(info for info in TENSILELITE_DATA_TYPES if info.char == char)


def _bias_type_list_default_5x(pt: LiteProblemType) -> list[DataTypeInfo]:
    """5.x ``getBiasDataTypeListDefault`` (Problem.py @01c52f8e2e5d): DataType, compute and D types
    without int8 *and* the 8-bit floats (7d9fb683 drops only int8), sorted."""
    types = {
        pt[key]
        for key in ("DataType", "ComputeDataType", "DestDataType")
        if pt[key].enum != "Int8" and pt[key].char not in _8BIT_FLOATS
    }
    return sorted(types, key=lambda t: t.code)


def problem_type_name_5x(pt: LiteProblemType) -> str:
    """tensilelite 5.x ``ProblemType.__str__`` (rocm-libraries ``projects/hipblaslt/tensilelite/
    Tensile/SolutionStructs/Problem.py`` @01c52f8e2e5d): the parts joined by ``_``, so where
    7d9fb683 glued some together 5.x separates them, e.g. ``…_BBS_BH_Bias_HA_S_SAV_UserArgs``
    (7d9fb683: ``_HAS_``), ``Cijk_Ailk_Bljk_S_B`` (7d9fb683: ``_SB``), ``Bias_SH`` (``BiasSH``).

    MX block-scaled types (``MXBlockA/B``) are not modelled: their scale type letters are not.
    """
    if pt.get("MXBlockA") or pt.get("MXBlockB"):
        raise InvalidValue("MX block-scaled problem types (MXBlockA/B) cannot be named yet", Location(path="MXBlockA"))
    parts = ["C" + "".join(_INDEX_CHARS[i].lower() for i in range(pt["NumIndicesC"]))]
    for tc in ("A", "B"):
        parts.append(
            tc
            + "".join(
                _INDEX_CHARS[i] if i in pt["MirrorDims" + tc] else _INDEX_CHARS[i].lower()
                for i in pt["IndexAssignments" + tc]
            )
        )
        if pt["ComplexConjugate" + tc]:
            parts.append("C")
    data: DataTypeInfo = pt["DataType"]
    mac_a, mac_b = _real_type(data, _REAL_A), _real_type(data, _REAL_B)
    type_a, type_b = _real_type(pt["DataTypeA"], _REAL_A), _real_type(pt["DataTypeB"], _REAL_B)
    mac = mac_a.char if mac_a == mac_b else mac_a.char + mac_b.char
    if mac_a != type_a or mac_b != type_b:
        parts.append(type_a.char + type_b.char)
    parts.append(mac)
    if (data.char, pt["DestDataType"].char, pt["ComputeDataType"].char) in HPA_TYPES:
        parts[-1] += pt["DestDataType"].char + pt["ComputeDataType"].char
    if pt["F32XdlMathOp"].enum != "Float" and data.enum == "Float":
        parts.append("M" + pt["F32XdlMathOp"].char)
    if pt.get("SwizzleTensorA"):
        parts.append("STA")
    if pt.get("SwizzleTensorB"):
        parts.append("STB")
    other = ""
    if pt["UseBeta"]:
        other += "B"
    if pt["HighPrecisionAccumulate"] and not pt["SilentHighPrecisionAccumulate"]:
        other += "H"
    if pt["UseInitialStridesAB"]:
        other += "I"
    if pt["UseInitialStridesCD"]:
        other += "Ic"
    if other:
        parts.append(other)
    if pt["UseBias"]:
        parts.append("Bias")
        if pt["BiasDataTypeList"] != _bias_type_list_default_5x(pt):
            parts.append("".join(t.char for t in pt["BiasDataTypeList"]))
        if pt["BiasSrc"] and pt["Gradient"]:
            parts.append(str(pt["BiasSrc"]))
    factor_dim = max(pt["UseScaleAlphaVec"], pt["UseBias"])
    if factor_dim > 1:
        parts.append("FD" + ("N" if factor_dim == 2 else "MN"))
    if pt["UseE"]:
        parts.append(("Grad" if pt["Gradient"] else "Aux") + pt["DataTypeE"].char)
    if pt["OutputAmaxD"]:
        parts.append("AmaxD")
    if pt["Sparse"]:
        parts.append(("SPBML%d" if pt["Sparse"] == 2 else "SPAML%d") % int(pt.get("MetadataLayout") or 0))
    if pt["GroupedGemm"]:
        parts.append("GG")
    elif not pt["StridedBatched"]:
        parts.append("GB")
    act = pt["ActivationType"]
    if act != "none":
        parts.append("A" if act == "all" else "HA" if act == "hipblaslt_all" else str(act).upper())
        parts.append(pt["ActivationComputeDataType"].char)
    if pt["ActivationNoGuard"]:
        parts[-1] += "NG"
    if pt["UseScaleAB"] == "Scalar":
        parts.append("SAB")
    elif pt["UseScaleAB"] == "Vector":
        parts.append("SABV")
    if pt["UseScaleCD"]:
        parts.append("SCD")
    if pt["UseScaleAlphaVec"]:
        parts.append("SAV")
    if pt["SupportUserArgs"]:
        parts.append("UserArgs")
    return "_".join(parts)


#: ``getRequiredParametersMin`` (rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/Common/
#: RequiredParameters.py`` @0065fcbf4c08): the parameters every 5.x min-name spells, present or not
#: in one build's kernels (7d9fb683 names the parameters that differ between them, :class:`MinNaming`).
REQUIRED_PARAMETERS_MIN_5X: frozenset[str] = frozenset(
    """1LDSBuffer ActivationFuncCall AdaptiveGemm BufferLoad BufferStore AdaptiveGemmGSUA AdaptiveGemmNTAB
    AssertFree0ElementMultiple AssertFree1ElementMultiple AssertSummationElementMultiple ClusterLocalRead
    ConvertAfterDS CompactLoopStore DirectToVgprA DirectToVgprB DirectToVgprSparseMetadata DirectToLdsA
    DirectToLdsB DirectToLdsMetadata DirectToVgprMXSA DirectToVgprMXSB ExpandPointerSwap ExtraLatencyForLR
    ExtraMiLatencyLeft ForceDisableShadowInit GlobalReadPerMfma GlobalReadVectorWidthA GlobalReadVectorWidthB
    GlobalSplitUAlgorithm GroupLoadStore ISA InitCIterWmma InnerUnroll Kernel LdsBlockSizePerPadA
    LdsBlockSizePerPadB LdsBlockSizePerPadMetadata LdsBlockSizePerPadMXSA LdsBlockSizePerPadMXSB LdsPadA
    LdsPadB LdsPadMetadata LdsPadMXSA LdsPadMXSB LDSTrInst LocalReadVectorWidth LocalWritePerMfma MIArchVgpr
    MaxOccupancy NonTemporal NonTemporalA NonTemporalB NonTemporalC NonTemporalD NonTemporalE
    NonTemporalMetadata NonTemporalMXSA NonTemporalMXSB NonTemporalWS NonVolatile NonVolatileA NonVolatileB
    NonVolatileC NonVolatileD NonVolatileE NonVolatileMetadata NonVolatileMXSA NonVolatileMXSB NonVolatileWS
    NumElementsPerBatchStore NumLoadsCoalescedA NumLoadsCoalescedB OptNoLoadLoop PrefetchAcrossPersistent
    PrefetchGlobalRead PrefetchLocalRead PrefetchGL2 PreloadKernArgs ScheduleIterAlg ScheduleGROverBarrier
    SourceSwap UseDualFMAC SpaceFillingAlgo StorePriorityOpt StoreRemapVectorWidth StoreSyncOpt
    StoreVectorWidth StreamK StreamKForceDPOnly StreamKXCCMapping StreamKFixupTreeReduction SuppressNoLoadLoop
    SwapGlobalReadOrder TailloopInNll TransposeLDS TransposeLDSMetadata TDMInst TDMSplit TDMIterateMode
    MXScaleFormat MXLoadInst SwInstructionPrefetch HalfPLR TemporalHint TemporalHintA TemporalHintB
    TemporalHintC TemporalHintD TemporalHintE TemporalHintMetadata TemporalHintMXSA TemporalHintMXSB
    TemporalHintWS UnrollLoopSwapGlobalReadOrder Use64bShadowLimit Use64bShadowLimitMX UseInstOffsetForGRO
    UseSgprForGRO VectorStore VectorWidthA VectorWidthB WaveSeparateGlobalReadA WaveSeparateGlobalReadB
    WavefrontSize WorkGroup DtlPlusLdsBuf MinGRIncPerMfma UsePLRPack UseSubtileImpl ClusterDim""".split()
)

#: 5.x ``_getName``'s internal arguments, named unless ``ignoreInternalArgs`` (Naming.py @00cf9f2ac935;
#: ``WorkGroupMappingXCC`` left out there: it changes the code)
_INTERNAL_ARGS_5X = (
    "WorkGroupMapping",
    "WorkGroupMappingXCCGroup",
    "StaggerU",
    "StaggerUStride",
    "StaggerUMapping",
    "GlobalSplitUCoalesced",
    "GlobalSplitUWorkGroupMappingRoundRobin",
)


def name_min_5x(state: Mapping[str, Any], *, ignore_internal_args: bool = False) -> str:
    """tensilelite 5.x ``getSolutionNameMin`` / ``getKernelNameMin`` (``ignore_internal_args``),
    ``_getName`` in rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/SolutionStructs/Naming.py``
    @00cf9f2ac935, ``splitGSU`` False (TensileCreateLibrary's default). Unlike 7d9fb683's the name does
    not depend on the other kernels of the build. Nothing of ``state`` is changed."""
    custom = state.get("CustomKernel")
    if isinstance(custom, Mapping) and custom.get("name"):
        return str(custom["name"])
    if state.get("CustomKernelName"):
        return str(state["CustomKernelName"])
    work = dict(state)
    pt = dict(work["ProblemType"])
    if "WorkGroupMappingXCC" in work and work["WorkGroupMappingXCC"] != -1:
        work["WorkGroupMappingXCC"] = 1
    required = set(REQUIRED_PARAMETERS_MIN_5X) | {"GlobalSplitU"}
    if ignore_internal_args:
        if not pt.get("SupportUserArgs"):
            pt["GroupedGemm"] = False
        if work["GlobalSplitU"] > 0 or work["GlobalSplitU"] == -1:
            required.discard("GlobalSplitU")
    else:
        required |= set(_INTERNAL_ARGS_5X)
    components = [problem_type_name_5x(pt)]
    if "MacroTile0" in work and "MacroTile1" in work and "DepthU" in work:
        components.append(f"MT{work['MacroTile0']}x{work['MacroTile1']}x{work['DepthU']}")
    if "MatrixInstM" in work:
        block = work.get("MIBlock", [work["MatrixInstM"], work["MatrixInstN"]])
        components.append(f"MI{block[0]}x{block[1]}x{work['MatrixInstB']}")
        required.add("MIWaveTile")
    else:
        required.add("ThreadTile")
    if work.get("UseCustomMainLoopSchedule"):
        components.append("CMS")
    components.append("SN")
    if "SpaceFillingAlgo" in required and len(work.get("SpaceFillingAlgo") or ()) == 0:
        required.discard("SpaceFillingAlgo")
    if work.get("LDSSegmentInterleave") == 1:
        required.add("LDSSegmentInterleave")
    for key in sorted(required):
        if key not in work or key == "CustomKernel":
            continue
        components.append(_name_abbreviation(key) + _value_abbreviation(key, work[key]))
    return "_".join(components)


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


__all__ = [
    "REQUIRED_PARAMETERS_MIN_5X",
    "MinNaming",
    "key_no_internal_args",
    "name_full",
    "name_min_5x",
    "problem_type_name",
    "problem_type_name_5x",
    "unique_kernels",
]

"""tensilelite's (hipBLASLt 7d9fb683) ``ProblemType`` and ``Solution`` derivation, in its statement order.

``LibraryIO.parseLibraryLogicData`` (LibraryIO.py:277-306) forces every assembly kernel's ``ISA`` to
the file's architecture, sets ``CUCount`` and ``AssignedDerivedParameters = False`` and builds
``Solution(state)``, which re-derives the kernel. This module ports, from
``/work/shared/amd/tensilelite-7d9fb68/Tensile/SolutionStructs.py``:

* ``ProblemType.__init__``, ``initGEMM`` and ``ProblemType.assignDerivedParameters`` (99-455),
  whole;
* ``Solution.__init__`` (1051-1107): the state is built in tensilelite's key order (problem type,
  ``InternalSupportParams``, ``defaultSolution`` keys, ``ISA``, ``CodeObjectVersion``, the other
  stored keys, ``Valid`` …), because the master's ``problemPredicate`` list follows that order;
* ``assignProblemIndependentDerivedParameters`` and ``MatrixInstructionToMIParameters``
  (1297-1392, 1690-1765), whole;
* ``assignDerivedParameters`` (2079-3998): every statement that writes a key reaching the master
  (``sizeMapping``, ``problemPredicate``, ``internalArgsSupport``, and every ``validParameters``
  key, which decide the min-name), with the ``reject(...); return`` exits that stop the
  derivation before them. ``reject`` alone only clears ``Valid`` (tensilelite keeps going, and
  ``TensileCreateLibrary`` keeps the solution).

``calcLdsPad`` and ``calcLdsBlockSizePerPad`` are ported (``LdsPad*``/``LdsBlockSizePerPad*``,
automatic ``-1`` values included). Not ported (kept as the logic file stores them, which is what
tensilelite's own tuning wrote and what re-derivation reproduces for every corpus file):
``checkLdsBlockSizePerPad``'s address simulation, ``calcLdsNumBytes`` (``1LDSBuffer`` for ``-1``,
the LDS-overflow halving of an automatic ``LocalReadVectorWidth``), the ``DepthU`` search,
``setGlobalLoadTileDim*`` (``NumLoadsCoalesced*``: a logic file stores what tuning derived), DirectToLds
feasibility, and the ``StoreRemapVectorWidth``/``NumElementsPerBatchStore`` ``-1`` defaults.
DirectToVgpr feasibility (``isDirectToVgprDoable``) is ported, with its early return.

hipBLASLt 0.12.1 (``/work/shared/amd/tensilelite-0.12.1``) derives a few things differently
(DirectToVgpr, Stream-K, tensor swizzling): each difference is a :class:`LiteDerivationRules` field,
and the version's instance is named by it (:data:`LITE_DERIVATION_0_12_1`).

The capability values are those of ``../shared/amd/build-master`` (ROCm 6.4 cache; no GPU on the
build host, so ``CurrentISA`` is (0, 0, 0)), see :mod:`tensilekit.model.tensilelite_parameters`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from tensilekit.errors import InvalidValue, Location, MissingField, TensilekitError
from tensilekit.model.tensile_parameters import DataTypeInfo
from tensilekit.model.tensilelite_parameters import (
    DEFAULT_INTERNAL_SUPPORT_PARAMS,
    DEFAULT_PROBLEM_TYPE,
    DEFAULT_SOLUTION,
    VALID_GEMM_TYPES,
    VALID_PARAMETERS,
    arch_caps,
    asm_caps,
    lite_type,
)

#: tensilelite ``ProblemType``: its state dict, data types as :class:`DataTypeInfo`,
#: ``ActivationType`` as its lower-case name.
LiteProblemType = dict[str, Any]
#: tensilelite ``Solution._state``.
LiteState = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class LiteDerivationRules:
    """Where tensilelite's ``ProblemType``/``Solution`` derivation differs between hipBLASLt versions.

    One instance per version (:data:`LITE_DERIVATION_7D9FB683`, :data:`LITE_DERIVATION_0_12_1`);
    :class:`~tensilekit.selection.hipblaslt_versions.HipblasltVersion` names the one its
    TensileCreateLibrary derives with (``derivation``). Each field cites both sources.
    """

    name: str
    problem_type_defaults: tuple[tuple[str, Any], ...] = ()
    """``defaultProblemType`` keys a version adds after 7d9fb683's (0.12.1: ``SwizzleTensorA/B``,
    Common.py:1346-1348 @0.12.1), which ``ProblemType.__str__`` names ``STA_``/``STB_``
    (SolutionStructs.py:500-504 @0.12.1)."""
    dtv_single_wave_group: bool = True
    """``isDirectToVgprDoable`` needs ``MIWaveGroup[1]`` (A) / ``[0]`` (B) to be 1 (SolutionStructs.py:1881-1885
    @7d9fb683); 0.12.1 drops that (only ``MatrixInstBN``/``BM``, 1903-1908 @0.12.1) and spreads the
    loads over the wave groups instead (2988-3005 @0.12.1; the load layout is the file's, see the
    module docstring)."""
    dtv_unroll_major_per_tensor: bool = False
    """``DirectToVgpr`` and ``TLU == UnrollMajorLDS``: 7d9fb683 rejects it for B only, testing both
    tensors (SolutionStructs.py:1920-1922 @7d9fb683); 0.12.1 tests each tensor for itself (1943-1945 @0.12.1)."""
    dtv_rejects_pgr0_and_nn_tlds0: bool = False
    """0.12.1 rejects DirectToVgpr with ``PrefetchGlobalRead`` 0, and DirectToVgprA on NN with
    ``TransposeLDS`` 0 (SolutionStructs.py:1963-1970 @0.12.1)."""
    dtv_asem_depth_u: bool = False
    """0.12.1 raises ``AssertSummationElementMultiple`` to ``DepthU`` for DirectToVgprA on TT and
    DirectToVgprB on NN, whose tail loop fails (SolutionStructs.py:1972-1980 @0.12.1): the name gains
    ``ASEM…``, the solution a ``BoundSizeMultiple`` predicate."""
    dtv_with_dtl_single_wave_group: bool = False
    """0.12.1 rejects (and stops deriving) DirectToLds with DirectToVgprA across N wave groups or
    DirectToVgprB across M wave groups (SolutionStructs.py:3486-3493 @0.12.1)."""
    non_mi_grvw_one: bool = True
    """7d9fb683 sets ``GlobalReadVectorWidthA/B`` to 1 for a kernel without matrix instructions
    (SolutionStructs.py:2762-2763, 2782-2783 @7d9fb683); 0.12.1 keeps the stored width."""
    non_mi_plr_zero: bool = True
    """7d9fb683 sets ``PrefetchLocalRead`` to 0 for a kernel without matrix instructions
    (SolutionStructs.py:3755-3757 @7d9fb683); 0.12.1 only ``ClusterLocalRead`` (3888-3889 @0.12.1)."""
    valid_parameters: frozenset[str] = VALID_PARAMETERS
    """``validParameters``' keys, the ones a kernel name may show: 0.12.1 drops ``MinVgprNumber``,
    ``MaxVgprNumber`` and ``TotalVgprNumber`` (Common.py:1117-1122 @7d9fb683; 469-1131 @0.12.1 lacks
    them), so differing values no longer name a kernel ``MVN…``."""
    streamk_checks: bool = False
    """0.12.1 rejects Stream-K for data types other than S/H/B (each of ``DataType``, ``DataTypeA/B``,
    ``DestDataType``), for ``ScheduleGlobalRead`` != 1 and ``ScheduleIterAlg`` not 1 or 3, and fails
    with a ``NameError`` for ``ScheduleLocalWrite`` != 1 (``reject(statue, …)``) (SolutionStructs.py:
    2186-2211 @0.12.1). A rejection clears ``Valid``, and the derivation stops at the next
    ``if not state["Valid"]: return`` (2237-2239 @0.12.1)."""


LITE_DERIVATION_7D9FB683 = LiteDerivationRules("7d9fb683")
"""hipBLASLt 7d9fb683's ``Solution`` (``../shared/amd/tensilelite-7d9fb68``)."""

LITE_DERIVATION_0_12_1 = LiteDerivationRules(
    "0.12.1",
    problem_type_defaults=(("SwizzleTensorA", False), ("SwizzleTensorB", False)),
    dtv_single_wave_group=False,
    dtv_unroll_major_per_tensor=True,
    dtv_rejects_pgr0_and_nn_tlds0=True,
    dtv_asem_depth_u=True,
    dtv_with_dtl_single_wave_group=True,
    non_mi_grvw_one=False,
    non_mi_plr_zero=False,
    valid_parameters=VALID_PARAMETERS - {"MinVgprNumber", "MaxVgprNumber", "TotalVgprNumber"},
    streamk_checks=True,
)
"""hipBLASLt 0.12.1's ``Solution`` (``../shared/amd/tensilelite-0.12.1``)."""

LITE_DERIVATION_5X_PROVISIONAL = dataclasses.replace(
    LITE_DERIVATION_7D9FB683,
    name="5.x",
    problem_type_defaults=(("SwizzleTensorA", False), ("SwizzleTensorB", False)),
)
"""tensilelite 5.x's ``Solution``, so far as read: 7d9fb683's rules but for the ``SwizzleTensorA/B``
problem-type defaults (``defaultProblemType`` in ``Tensile/Common/GlobalParameters.py``; rocm-libraries
``projects/hipblaslt/tensilelite/Tensile/Contractions.py`` @72d2079f405e ``CompoundPredicates`` reads
``state["ProblemType"]["SwizzleTensorA"]`` unguarded), without which a swizzled 5.x file would be
built as unswizzled. Its DirectToVgpr / ASEM / Stream-K rules (``SolutionStructs``) are not read yet."""

#: ``isDirectToVgprSupportDataType`` (SolutionStructs.py:1800-1804 @7d9fb683, 1823-1827 @0.12.1).
_DTV_TYPES = frozenset(
    {"Float", "Double", "ComplexFloat", "ComplexDouble", "Half", "BFloat16", "Int8", "Float8", "BFloat8",
     "Float8BFloat8", "BFloat8Float8"}
)  # fmt: skip

#: The data types 0.12.1's Stream-K takes (``isSingle``/``isHalf``/``isBFloat16``, SolutionStructs.py:2186-2193).
_STREAMK_TYPES = frozenset({"Float", "Half", "BFloat16"})

_INDEX_CHARS = "IJKLMNOPQRSTUVWXYZ"  # globalParameters["IndexChars"]
_DEFAULT_BIAS_SOURCES = ("DataType", "ComputeDataType", "DestDataType")


def _dtype(value: Any, path: str) -> DataTypeInfo:
    try:
        return lite_type(value)
    except KeyError:
        raise InvalidValue(f"unknown tensilelite data type {value!r}", Location(path=path)) from None


def bias_type_list_default(pt: Mapping[str, Any]) -> list[DataTypeInfo]:
    """``getBiasDataTypeListDefault`` (SolutionStructs.py:959): A/B, compute and D types minus int8, sorted."""
    types = {pt[key] for key in _DEFAULT_BIAS_SOURCES if pt[key].enum != "Int8"}
    return sorted(types, key=lambda t: t.code)


def problem_type(
    config: Mapping[str, Any], *, path: str = "ProblemType", rules: LiteDerivationRules = LITE_DERIVATION_7D9FB683
) -> LiteProblemType:
    """``ProblemType(config)`` (SolutionStructs.py:99-289), with its derived index fields, as the
    hipBLASLt version of ``rules`` builds it (its ``defaultProblemType`` keys)."""
    if not isinstance(config, Mapping):
        raise InvalidValue("ProblemType must be a mapping", Location(path=path))
    st: LiteProblemType = {}
    for key, default in (*DEFAULT_PROBLEM_TYPE, *rules.problem_type_defaults):
        st[key] = copy.deepcopy(config[key] if key in config else default)
    if "DataType" not in config:
        raise MissingField("ProblemType has no DataType", Location(path=f"{path}.DataType"))

    def typ(key: str) -> DataTypeInfo:
        return _dtype(config[key], f"{path}.{key}")

    st["DataType"] = typ("DataType")
    st["DataTypeA"] = st["DataType"]
    st["DataTypeB"] = st["DataType"]
    if "DataTypeA" in config:
        st["DataTypeA"] = typ("DataTypeA")
    if "DataTypeB" in config:
        st["DataTypeB"] = typ("DataTypeB")
    st["DestDataType"] = typ("DestDataType") if "DestDataType" in config else typ("DataType")
    st["DataTypeE"] = st["DestDataType"]
    if "DataTypeE" in config:
        st["DataTypeE"] = typ("DataTypeE")
    if "ComputeDataType" in config:
        st["ComputeDataType"] = typ("ComputeDataType")
    elif "DestDataType" in config:
        st["ComputeDataType"] = typ("DestDataType")
    else:
        st["ComputeDataType"] = typ("DataType")
    st["DataTypeAmaxD"] = st["ComputeDataType"]
    if "DataTypeAmaxD" in config:
        st["DataTypeAmaxD"] = typ("DataTypeAmaxD")
    if st["Sparse"]:
        st["DataTypeMetadata"] = lite_type(8)
    st["F32XdlMathOp"] = typ("F32XdlMathOp") if "F32XdlMathOp" in config else lite_type(0)
    compute, data = st["ComputeDataType"], st["DataType"]
    if compute.enum == "Half" and data.enum == "Half" and st["HighPrecisionAccumulate"]:
        st["ComputeDataType"] = lite_type(0)
    if compute.enum == "BFloat16" and data.enum == "BFloat16" and st["HighPrecisionAccumulate"]:
        st["ComputeDataType"] = lite_type(0)
    if st["ComputeDataType"].enum == "Int8" and data.enum == "Int8" and st["HighPrecisionAccumulate"]:
        st["ComputeDataType"] = lite_type(6)
    if st["OperationType"] != "GEMM":
        raise InvalidValue(f"unsupported OperationType {st['OperationType']!r}", Location(path=f"{path}.OperationType"))
    gemm = (st["DataType"].char, st["DestDataType"].char, st["ComputeDataType"].char)
    if gemm not in VALID_GEMM_TYPES:
        raise InvalidValue(f"typed GEMM {gemm} is not supported by tensilelite", Location(path=path))
    _init_gemm(st)
    st["AssignedDerivedParameters"] = False
    _assign_problem_indices(st, path)

    if "UseBias" in config:
        if st["ComputeDataType"] != st["DestDataType"]:
            st["BetaOnlyUseBias"] = False
        else:
            st["BetaOnlyUseBias"] = bool(st["UseBias"] > 0)
        if "BiasDataTypeList" in config:
            raw = config["BiasDataTypeList"]
            if not isinstance(raw, list):
                raise InvalidValue("BiasDataTypeList must be a list", Location(path=f"{path}.BiasDataTypeList"))
            types = [_dtype(t, f"{path}.BiasDataTypeList") for t in raw]
            st["BiasDataTypeList"] = sorted(types, key=lambda t: t.code)
        else:
            st["BiasDataTypeList"] = bias_type_list_default(st)
    else:
        st["BetaOnlyUseBias"] = False
        st["BiasDataTypeList"] = []

    type_name = "none"
    if "Activation" in config:
        type_name = str(config.get("ActivationType", "none")).lower()
        if type_name not in ("all", "hipblaslt_all"):
            type_name = "none"
    st["ActivationType"] = type_name
    if "ActivationComputeDataType" in config:
        st["ActivationComputeDataType"] = typ("ActivationComputeDataType")
    else:
        st["ActivationComputeDataType"] = st["ComputeDataType"]
    if st["ActivationType"] != "none":
        if st["ActivationComputeDataType"] not in (st["ComputeDataType"], st["DestDataType"]):
            st["ActivationComputeDataType"] = st["ComputeDataType"]
        act, cmp_, dat, dst = (
            st["ActivationComputeDataType"],
            st["ComputeDataType"],
            st["DataType"],
            st["DestDataType"],
        )
        if act.num_bytes != cmp_.num_bytes and dat.num_bytes < dst.num_bytes:
            st["ActivationComputeDataType"] = st["ComputeDataType"]
    if "UseE" in config:
        st["UseE"] = False if config["UseE"] and st["ActivationType"] == "none" else config["UseE"]
    if "Gradient" in config:
        if config["Gradient"]:
            # SolutionStructs.py:229-238: the Gradient=False branch is overwritten two lines on
            if st["ActivationType"] != "none" and st["UseE"] is False:
                st["UseE"] = True
        st["Gradient"] = config["Gradient"]
    if "BiasSrc" in config:
        if not st["Gradient"] and config["BiasSrc"] != "D":
            st["BiasSrc"] = "D"
        elif st["Gradient"] and config["BiasSrc"] not in ("A", "B", "D"):
            raise InvalidValue("BiasSrc only supports A, B, D", Location(path=f"{path}.BiasSrc"))
    if "ActivationNoGuard" in config:
        st["ActivationNoGuard"] = config["ActivationNoGuard"]
        if st["ActivationNoGuard"] and (st["ActivationType"] == "none" or not st["Gradient"]):
            st["ActivationNoGuard"] = False
    return st


def _init_gemm(st: LiteProblemType) -> None:
    """``ProblemType.initGEMM`` (SolutionStructs.py:301-325)."""
    sum_idx = 3 if st["Batched"] else 2
    st["IndexAssignmentsA"] = [0, sum_idx]
    st["IndexAssignmentsB"] = [sum_idx, 1]
    st["IndexAssignmentsMetadata"] = [sum_idx, 1] if st["Sparse"] == 2 else [sum_idx, 0]
    if st["TransposeA"]:
        st["IndexAssignmentsA"] = [sum_idx, 0]
    if st["TransposeB"]:
        st["IndexAssignmentsB"] = [1, sum_idx]
    if st["Batched"]:
        st["IndexAssignmentsA"].append(2)
        st["IndexAssignmentsB"].append(2)
        st["IndexAssignmentsMetadata"].append(2)
        st["NumIndicesC"] = 3
    else:
        st["NumIndicesC"] = 2
    st["NumIndicesLD"] = 4
    st["IndexAssignmentsLD"][0] = st["NumIndicesC"] + 1
    for i in range(1, len(st["IndexAssignmentsLD"])):
        st["IndexAssignmentsLD"][i] = st["IndexAssignmentsLD"][i - 1] + 1


def _assign_problem_indices(st: LiteProblemType, path: str) -> None:
    """``ProblemType.assignDerivedParameters`` (SolutionStructs.py:333-455)."""
    ia, ib = st["IndexAssignmentsA"], st["IndexAssignmentsB"]
    st["TotalIndices"] = max(max(ia) + 1, max(ib) + 1)
    st["IndicesFree"], st["IndicesBatch"], st["IndicesSummation"] = [], [], []
    for i in range(st["NumIndicesC"]):
        if i in ia and i in ib:
            st["IndicesBatch"].append(i)
        elif i in ia or i in ib:
            st["IndicesFree"].append(i)
    for i in range(st["NumIndicesC"], st["TotalIndices"]):
        st["IndicesSummation"].append(i)
    st["NumIndicesFree"] = len(st["IndicesFree"])
    st["NumIndicesBatch"] = len(st["IndicesBatch"])
    st["NumIndicesSummation"] = len(st["IndicesSummation"])
    if not st["AllowNoFreeDims"] and st["NumIndicesFree"] < 2:
        raise InvalidValue("tensilelite requires >= 2 free indices", Location(path=path))
    st["IndexUnroll"] = st["IndicesSummation"][-1]
    st["IndexUnrollA"] = ia.index(st["IndexUnroll"])
    st["IndexUnrollB"] = ib.index(st["IndexUnroll"])
    st["IndexUnrollM"] = st["IndexAssignmentsMetadata"].index(st["IndexUnroll"])
    dims = st["IndicesFree"] + st["IndicesBatch"] if st["AllowNoFreeDims"] else st["IndicesFree"]
    st["Index01A"] = [i for i in ia if i in dims][0]
    st["Index01B"] = [i for i in ib if i in dims][0]
    if st["Index01A"] < st["Index01B"]:
        st.update(Index0=st["Index01A"], Index1=st["Index01B"], Tensor0=0, Tensor1=1, TileA=0, TileB=1)
    else:
        st.update(Index0=st["Index01B"], Index1=st["Index01A"], Tensor0=1, Tensor1=0, TileA=1, TileB=0)
    st["TLUA"] = ia.index(st["Index01A"]) < ia.index(st["IndexUnroll"])
    st["TLUB"] = ib.index(st["Index01B"]) < ib.index(st["IndexUnroll"])
    st["AssignedDerivedParameters"] = True
    if st["Sparse"]:
        im = st["IndexAssignmentsMetadata"]
        st["Index01Metadata"] = [i for i in im if i in dims][0]
        st["TLUMetadata"] = im.index(st["Index01Metadata"]) < im.index(st["IndexUnroll"])


def problem_types_differ(a: LiteProblemType, b: LiteProblemType) -> list[str]:
    """Keys where two problem types differ (``parseLibraryLogicData``'s consistency check)."""
    return [key for key in a if a.get(key) != b.get(key)]


# ------------------------------------------------------------------------------------------
# Solution


#: ``readCustomKernelConfig``: a custom kernel's ``custom.config`` mapping, by kernel name.
CustomKernelConfig = Callable[[str], Mapping[str, Any]]


def keep_stored_custom_kernels(name: str) -> Mapping[str, Any]:
    """A stand-in lookup for transient masters (lint, selection on logic files): a custom kernel
    keeps its stored ``InternalSupportParams`` instead of its ``custom.config``. Never for output
    that claims to be tensilelite's (``build-master`` asks for ``--custom-kernels``)."""
    raise AssertionError("keep_stored_custom_kernels is a marker, not called")


def _apply_custom_kernel(
    cfg: dict[str, Any], lookup: CustomKernelConfig | None, file_activation: str, path: str
) -> None:
    """``parseLibraryLogicData`` (LibraryIO.py:286-295) with ``getCustomKernelConfig`` (CustomKernels.py:63-80)."""
    name = cfg["CustomKernelName"]
    where = Location(path=f"{path}.CustomKernelName")
    if lookup is keep_stored_custom_kernels:
        stored = cfg.get("InternalSupportParams") or {}
        lookup = lambda _: {"InternalSupportParams": {"KernArgsVersion": 2, **stored}}  # noqa: E731
    if lookup is None:
        raise InvalidValue(
            f"custom kernel {name!r}: its configuration is in hipBLASLt's tensilelite/Tensile/CustomKernels/{name}.s; "
            "give that directory (--custom-kernels)",
            where,
        )
    config = dict(lookup(name))
    support = config.get("InternalSupportParams")
    if not isinstance(support, Mapping) or "KernArgsVersion" not in support:
        raise InvalidValue(f"custom kernel {name!r}: its config must have InternalSupportParams.KernArgsVersion", where)
    support = dict(support)
    for key, value in (cfg.get("InternalSupportParams") or {}).items():
        support.setdefault(key, value)
    config["InternalSupportParams"] = support
    for key, value in config.items():
        cfg[key] = value
    problem = dict(cfg["ProblemType"])
    problem["ActivationType"] = file_activation
    cfg["ProblemType"] = problem


def _reject(state: LiteState) -> None:
    """``reject`` (SolutionStructs.py:59-81): clears ``Valid`` unless ``NoReject``; never stops."""
    if state.get("NoReject"):
        return
    state["Valid"] = False


def solution_state(
    config: Mapping[str, Any],
    *,
    isa: tuple[int, int, int],
    cu_count: int | None,
    path: str = "",
    custom_kernel_config: CustomKernelConfig | None = None,
    file_activation: str = "none",
    rules: LiteDerivationRules = LITE_DERIVATION_7D9FB683,
) -> LiteState:
    """``Solution(config)`` after ``parseLibraryLogicData``'s overrides: the derived kernel state.

    ``isa`` is the file's architecture for assembly kernels ((0, 0, 0) for source kernels),
    ``cu_count`` the file's CUCount. A custom kernel (``CustomKernelName``) takes the keys of its
    ``custom.config`` (``custom_kernel_config(name)``, from hipBLASLt's ``CustomKernels/<name>.s``)
    and the file's activation type (``file_activation``). ``rules``: the hipBLASLt version whose
    ``Solution`` derives it. The input is not modified.
    """
    if not isinstance(config, Mapping):
        raise InvalidValue("a solution must be a mapping", Location(path=path))
    cfg = dict(config)
    cfg["ISA"] = isa if cfg.get("KernelLanguage", "Assembly") == "Assembly" else (0, 0, 0)
    cfg["CUCount"] = cu_count
    cfg["AssignedProblemIndependentDerivedParameters"] = False
    cfg["AssignedDerivedParameters"] = False
    if "ProblemType" not in cfg:
        raise MissingField("solution has no ProblemType", Location(path=f"{path}.ProblemType"))
    if cfg.get("CustomKernelName"):
        _apply_custom_kernel(cfg, custom_kernel_config, file_activation, path)

    state: LiteState = {}
    state["ProblemType"] = problem_type(cfg["ProblemType"], path=f"{path}.ProblemType", rules=rules)
    if "InternalSupportParams" in cfg:
        given = cfg["InternalSupportParams"]
        if not isinstance(given, Mapping):
            raise InvalidValue(
                "InternalSupportParams must be a mapping", Location(path=f"{path}.InternalSupportParams")
            )
        state["InternalSupportParams"] = {k: copy.deepcopy(given.get(k, d)) for k, d in DEFAULT_INTERNAL_SUPPORT_PARAMS}
    else:
        state["InternalSupportParams"] = dict(DEFAULT_INTERNAL_SUPPORT_PARAMS)
    for key, default in DEFAULT_SOLUTION:
        state[key] = copy.deepcopy(cfg[key] if key in cfg else default)
    if "ISA" not in state:
        # Solution.__init__ (1068-1073): an ISA the assembler does not support becomes [9, 0, 0]
        state["ISA"] = cfg["ISA"] if asm_caps(tuple(cfg["ISA"]))["SupportedISA"] else [9, 0, 0]
    if "CodeObjectVersion" not in state:
        state["CodeObjectVersion"] = cfg.get("CodeObjectVersion", "default")
    for key, value in cfg.items():
        if key not in state:
            state[key] = copy.deepcopy(value)
    state["Valid"] = True
    state.setdefault("AssignedProblemIndependentDerivedParameters", False)
    state.setdefault("AssignedDerivedParameters", False)
    try:
        _assign_derived(state, path, rules)
    except TensilekitError:
        raise
    except (KeyError, IndexError, TypeError, ZeroDivisionError) as exc:
        raise InvalidValue(f"solution cannot be derived: missing or bad value ({exc!r})", Location(path=path)) from exc
    return state


def _mi_output_info(state: LiteState, caps: Mapping[str, bool]) -> tuple[int, int]:
    """``getMIOutputInfo`` (SolutionStructs.py:1275-1292)."""
    if caps["HasMFMA"]:
        return (1, 2) if state["ProblemType"]["DataType"].enum in ("Double", "ComplexDouble") else (4, 1)
    if caps["HasWMMA_V1"]:
        return 1, 1
    if caps["HasWMMA_V2"]:
        return 8, 1
    return 4, 1  # "WARNING: unexpect code flow"


def _matrix_instruction_to_mi_parameters(state: LiteState, caps: Mapping[str, bool]) -> None:
    """``MatrixInstructionToMIParameters`` (SolutionStructs.py:1690-1765) for the 9-value form.

    The validity check against ``validMFMA``/``validWMMA`` only clears ``Valid`` and is not
    ported; hipBLASLt logic files store the 4-value form, for which this only sets the flag.
    """
    mi = state["MatrixInstruction"]
    if len(mi) == 9:
        state["MatrixInstruction"] = [mi[0], mi[1], mi[2], mi[3]]
        waves = mi[7] * mi[8]
        miwg0 = mi[4] * mi[0] * mi[7]
        state["WorkGroup"][0] = miwg0
        state["WorkGroup"][1] = waves * state["WavefrontSize"] // state["WorkGroup"][0]
        state["ThreadTile"][0] = 1
        state["ThreadTile"][1] = 1
        state["MFMA_BF16_1K"] = False
        state["EnableMatrixInstruction"] = True
        block_bm = min(miwg0 // mi[0], mi[3])
        state["MIBlock"] = [mi[0], mi[1], mi[2], mi[3], block_bm, mi[3] // block_bm]
        group0 = min((miwg0 // mi[0]) // block_bm, waves)
        state["MIWaveGroup"] = [group0, waves // group0]
        state["MIWaveTile"] = [mi[5], mi[6]]
        per_thread = mi[0] * mi[2] * mi[3] // state["WavefrontSize"]
        if not caps["HasMFMA"] and caps["HasWMMA"] and state["ISA"][0] in (10, 11):
            per_thread = mi[2]
        state["MIInputPerThread"] = per_thread
        sparse = state["ProblemType"]["Sparse"]
        state["MIInputPerThreadA"] = per_thread // 2 if sparse == 1 else per_thread
        state["MIInputPerThreadB"] = per_thread // 2 if sparse == 2 else per_thread
        state["MIInputPerThreadMetadata"] = per_thread // 8 if sparse else per_thread
    elif mi != [] and len(mi) == 4:
        state["EnableMatrixInstruction"] = True
    else:
        state["EnableMatrixInstruction"] = False


def _assign_problem_independent(state: LiteState, caps: Mapping[str, bool]) -> None:
    """``assignProblemIndependentDerivedParameters`` (SolutionStructs.py:1297-1392)."""
    if state.get("AssignedProblemIndependentDerivedParameters"):
        return
    state["AssignedProblemIndependentDerivedParameters"] = False
    pt = state["ProblemType"]
    if not pt["StridedBatched"] and not pt["Batched"]:
        _reject(state)
    _matrix_instruction_to_mi_parameters(state, caps)
    enable = state.get("EnableMatrixInstruction")
    if enable is None:
        if len(state.get("MIBlock") or ()) == 6 and len(state.get("MIWaveGroup") or ()) == 2:
            enable = len(state.get("MIWaveTile") or ()) == 2 or None
        if enable is None and len(state.get("WorkGroup") or ()) == 3 and len(state.get("ThreadTile") or ()) == 2:
            enable = False
        if enable is None:
            _reject(state)
    if enable is True:
        block = state["MIBlock"]
        state["MatrixInstM"], state["MatrixInstN"], state["MatrixInstK"] = block[0], block[1], block[2]
        state["MatrixInstB"], state["MatrixInstBM"], state["MatrixInstBN"] = block[3], block[4], block[5]
        state["LocalSplitU"] = 1
        state["MIOutputVectorWidth"], state["MIRegPerOut"] = _mi_output_info(state, caps)
        wave_tile, wave_group = state["MIWaveTile"], state["MIWaveGroup"]
        m, n = state["MatrixInstM"], state["MatrixInstN"]
        if m == 4:
            state["ThreadTile0"] = wave_tile[0] * state["MIOutputVectorWidth"]
            state["ThreadTile1"] = wave_tile[1]
            state["SubGroup0"] = wave_group[0] * m * state["MatrixInstBM"] // state["MIOutputVectorWidth"]
            state["SubGroup1"] = wave_group[1] * n * state["MatrixInstBN"]
        else:
            state["ThreadTile0"] = state["MatrixInstBM"] * wave_tile[0] * (m * n // state["WavefrontSize"])
            state["ThreadTile1"] = state["MatrixInstBN"] * wave_tile[1]
            state["SubGroup0"] = wave_group[0] * (state["WavefrontSize"] // n)
            state["SubGroup1"] = wave_group[1] * n
        if "MIInputPerThreadA" not in state:
            state["MIInputPerThreadA"] = state["MIInputPerThread"]
            state["MIInputPerThreadB"] = state["MIInputPerThread"]
    elif enable is False:
        state["ThreadTile0"], state["ThreadTile1"] = state["ThreadTile"][0], state["ThreadTile"][1]
        state["SubGroup0"], state["SubGroup1"] = state["WorkGroup"][0], state["WorkGroup"][1]
        state["LocalSplitU"] = state["WorkGroup"][2]
    state["LocalSplitU"] = state["WorkGroup"][2]
    if "SubGroup0" in state and "SubGroup1" in state and "LocalSplitU" in state:
        state["NumThreads"] = state["SubGroup0"] * state["SubGroup1"] * state["LocalSplitU"]
        if state["NumThreads"] % state["WavefrontSize"] != 0:
            _reject(state)
    if "SubGroup0" in state and "ThreadTile0" in state:
        state["MacroTile0"] = state["SubGroup0"] * state["ThreadTile0"]
    if "SubGroup1" in state and "ThreadTile1" in state:
        state["MacroTile1"] = state["SubGroup1"] * state["ThreadTile1"]
    if "MacroTile" in state and (
        state["MacroTile0"] != state["MacroTile"][0] or state["MacroTile1"] != state["MacroTile"][1]
    ):
        _reject(state)
    state["AssignedProblemIndependentDerivedParameters"] = True


def _round_up(value: float, multiple: int) -> int:
    """``roundUpToNearestMultiple`` (TensileInstructions/Utils.py:211)."""
    return int(math.ceil(value / multiple)) * multiple


def _lds_pad(state: LiteState, lrvw: int, caps: Mapping[str, bool]) -> tuple[int, int, int]:
    """``calcLdsPad`` (SolutionStructs.py:2526-2605)."""
    pt = state["ProblemType"]
    nbytes = pt["DataType"].num_bytes
    pad = {"A": state["LdsPadA"], "B": state["LdsPadB"]}
    opt = {"A": lrvw, "B": lrvw}
    regs = {"A": lrvw * nbytes // 4, "B": lrvw * nbytes // 4}
    if pt["Sparse"]:
        half = "B" if pt["Sparse"] == 2 else "A"
        opt[half] //= 2
        regs[half] //= 2
    if not caps["HasWMMA"] and (regs["A"] > 4 or regs["B"] > 4):
        _reject(state)
    mi16 = state["EnableMatrixInstruction"] and state["MatrixInstB"] == 1 and state["MatrixInstM"] == 16
    if mi16:
        for tc in ("A", "B"):
            if regs[tc] in (4, 1):
                opt[tc] *= 2
    for tc, tile in (("A", "MacroTile0"), ("B", "MacroTile1")):
        if pad[tc] != -1:
            continue
        if not state["UnrollMajorLDS" + tc]:
            if state["EnableMatrixInstruction"]:
                pad[tc] = 0
                if mi16:
                    width = (
                        16 * state["VectorWidth" + tc] * nbytes + state[tile] * nbytes * state["LocalReadVectorWidth"]
                    )
                    pad[tc] = (width % 128) // nbytes
                if state["GlobalReadVectorWidth" + tc] * nbytes == 32 and pad[tc] == 0:
                    pad[tc] = 16 // nbytes
            else:
                pad[tc] = 0
        else:
            pad[tc] = max(state["GlobalReadVectorWidth" + tc], opt[tc])
            if state.get("DirectToLds" + tc):
                pad[tc] = 0
    pad_m = state["LdsPadMetadata"]
    if pt["Sparse"] and not state["DirectToVgprSparseMetadata"] and pad_m == -1:
        src = "B" if pt["Sparse"] == 2 else "A"
        pad_m = 0
        if not pt["TLUMetadata"]:
            if state["EnableMatrixInstruction"] and state["TransposeLDSMetadata"]:
                pad_m = max(state["GlobalReadVectorWidth" + src] // 4, opt[src] // 4)
            else:
                pad_m = state["VectorWidth" + src] // 4
            if state["EnableMatrixInstruction"] and state["TransposeLDSMetadata"] and state.get("DirectToLdsMetadata"):
                pad_m = 0
    if state["DirectToLds"] or state["DirectToVgprA"]:
        pad["A"] = 0
    if state["DirectToLds"] or state["DirectToVgprB"]:
        pad["B"] = 0
    return pad["A"], pad["B"], pad_m


def _lds_block_size_per_pad(state: LiteState, lrvw: int) -> tuple[int, int]:
    """``calcLdsBlockSizePerPad`` (SolutionStructs.py:2607-2645)."""
    pt = state["ProblemType"]
    out = {}
    for tc, tile in (("A", "MacroTile0"), ("B", "MacroTile1")):
        block = state["LdsBlockSizePerPad" + tc]
        bpe = pt["DataType" + tc].num_bytes if state["ConvertAfterDS"] else pt["DataType"].num_bytes
        if block == -1:
            block = 0
            if state["EnableMatrixInstruction"]:
                depth = state["_DepthU" + tc]
                if state["UnrollMajorLDS" + tc]:
                    block = _round_up(depth * bpe, 128)
                    if depth * bpe * state["VectorWidth" + tc] > 128:
                        block = _round_up(depth * bpe * state["VectorWidth" + tc], 128)
                elif state["MatrixInstB"] == 1 and state["MatrixInstM"] == 16:
                    block = state[tile] * bpe * lrvw
        if state["DirectToLds"] or state["DirectToVgpr" + tc]:
            block = 0
        out[tc] = block
    return out["A"], out["B"]


def _streamk_checks(state: LiteState, path: str) -> None:
    """hipBLASLt 0.12.1's added Stream-K checks (SolutionStructs.py:2186-2211 @0.12.1), see
    :attr:`LiteDerivationRules.streamk_checks`."""
    pt = state["ProblemType"]
    if any(pt[key].enum not in _STREAMK_TYPES for key in ("DataType", "DataTypeA", "DataTypeB", "DestDataType")):
        _reject(state)
    if state["ScheduleGlobalRead"] != 1:
        _reject(state)
    if state["ScheduleLocalWrite"] != 1:
        # SolutionStructs.py:2208-2209 @0.12.1 calls reject(statue, ...): AMD's build stops with a NameError
        raise InvalidValue(
            f"a Stream-K kernel (StreamK {state['StreamK']}) with ScheduleLocalWrite {state['ScheduleLocalWrite']!r}: "
            "hipBLASLt 0.12.1's TensileCreateLibrary cannot build it (its check of ScheduleLocalWrite != 1 for "
            "Stream-K fails with NameError: name 'statue' is not defined, SolutionStructs.py:2209); use "
            "ScheduleLocalWrite 1 or build for hipBLASLt 7d9fb683",
            Location(path=f"{path}.ScheduleLocalWrite"),
        )
    if state["ScheduleIterAlg"] not in (1, 3):
        _reject(state)


def _direct_to_vgpr_doable(state: LiteState, tc: str, rules: LiteDerivationRules, archc: Mapping[str, bool]) -> bool:
    """``isDirectToVgprDoable(state, tc)`` (SolutionStructs.py:1808-1945 @7d9fb683, 1831-1985 @0.12.1):
    False (and ``Valid`` cleared) where tensilelite rejects DirectToVgpr for tensor ``tc``; the
    differences between versions are :class:`LiteDerivationRules` fields."""
    pt = state["ProblemType"]
    data = pt["DataType"]
    tlu = pt["TLU" + tc]

    def reject() -> bool:
        _reject(state)
        return False

    if not state["EnableMatrixInstruction"]:
        return reject()
    if state["LocalSplitU"] != 1 and not tlu:
        return reject()
    if state["DirectToVgprA"] and state["DirectToVgprB"]:
        state["PrefetchGlobalRead"] = 1
        state["ExpandPointerSwap"] = 0
        state["1LDSBuffer"] = 0
        state["PrefetchLocalRead"] = 0
        return reject()
    if pt["DataType" + tc] != data and not state["ConvertAfterDS"]:
        return reject()
    if data.enum not in _DTV_TYPES:  # isDirectToVgprSupportDataType
        return reject()
    if not tlu and state["PrefetchLocalRead"] == 0:
        return reject()
    if not tlu and data.enum in ("Double", "ComplexFloat", "ComplexDouble"):
        return reject()
    if pt["DataType" + tc].num_bytes * state["GlobalReadVectorWidth" + tc] < 4:
        return reject()
    if data.num_bytes < 4:
        if tlu:
            # isVgprForLocalReadPackingDoable (1780-1795 @7d9fb683): HasEccHalf of the kernel's ISA
            packing = (
                state["EnableMatrixInstruction"]
                and archc["HasEccHalf"]
                and (state["PrefetchLocalRead"] >= 1 or (state["DirectToVgprA"] and state["DirectToVgprB"]))
            )
            if not packing:
                return reject()
            state["ClusterLocalRead"] = 1
    elif tlu and state["MIInputPerThread"] > 1:
        return reject()
    wave_group = state["MIWaveGroup"][1 if tc == "A" else 0] if rules.dtv_single_wave_group else 1
    if wave_group != 1 or state["MatrixInstBN" if tc == "A" else "MatrixInstBM"] != 1:
        return reject()
    if state["WaveSeparateGlobalRead" + tc]:
        return reject()
    if tlu and state["VectorWidth" + tc] != state["GlobalReadVectorWidth" + tc]:
        return reject()
    grvw = state["GlobalReadVectorWidth" + tc]
    if not tlu:
        per_load = state["MatrixInstK"] * grvw * state["LocalSplitU"] // state["MIInputPerThread"]
        # NumLoadsCoalesced as the file stores it (setGlobalLoadTileDim is not ported, see module docstring)
        if state["NumLoadsCoalesced" + tc] != state["DepthU"] // per_load:
            return reject()
        if grvw != state["LocalReadVectorWidth"]:
            return reject()
    if state["ScheduleIterAlg"] < 3:
        return reject()
    if state["InnerUnroll"] > 1:
        return reject()
    if rules.dtv_unroll_major_per_tensor:
        if tlu == state["UnrollMajorLDS" + tc]:
            return reject()
    elif tc == "B" and (pt["TLUA"] == state["UnrollMajorLDSA"] or pt["TLUB"] == state["UnrollMajorLDSB"]):
        return reject()
    if state["UnrollLoopSwapGlobalReadOrder"]:
        return reject()
    if state["PrefetchGlobalRead"] == 2 and state["ExpandPointerSwap"]:
        state["ExpandPointerSwap"] = 0
    if pt["Sparse"]:
        return reject()
    if rules.dtv_rejects_pgr0_and_nn_tlds0:
        if state["PrefetchGlobalRead"] == 0:
            return reject()
        if tc == "A" and state["TransposeLDS"] == 0 and not pt["TransposeA"] and not pt["TransposeB"]:
            return reject()
    if rules.dtv_asem_depth_u:
        transposes = (bool(pt["TransposeA"]), bool(pt["TransposeB"]))
        if (tc == "A" and transposes == (True, True)) or (tc == "B" and transposes == (False, False)):
            state["AssertSummationElementMultiple"] = max(state["AssertSummationElementMultiple"], state["DepthU"])
    return True


def _assign_derived(state: LiteState, path: str, rules: LiteDerivationRules) -> None:  # noqa: C901 - one AMD function, kept in its order
    """``Solution.assignDerivedParameters`` (SolutionStructs.py:2079-3998), see the module docstring."""
    pt = state["ProblemType"]
    isa = tuple(state["ISA"])
    caps = asm_caps(isa)
    archc = arch_caps(isa)

    # 2084-2100 initial DepthU
    depth_u = state["DepthU"]
    depth_ua = depth_ub = depth_um = depth_u
    if pt["Sparse"]:
        if pt["Sparse"] == 2:
            depth_ub //= 2
            depth_um = depth_ub if state["DirectToVgprSparseMetadata"] else depth_ub // 4
        else:
            depth_ua //= 2
            depth_um = depth_ua if state["DirectToVgprSparseMetadata"] else depth_ua // 4
    state["_DepthU"] = state["DepthU"]
    state["_DepthUA"] = depth_ua
    state["_DepthUB"] = depth_ub
    state["_DepthUMetadata"] = depth_um
    state["EnableF32XdlMathOp"] = pt["F32XdlMathOp"].enum != "Float" and pt["DataType"].enum == "Float"

    _assign_problem_independent(state, caps)
    if state.get("AssignedDerivedParameters"):
        return
    state["AssignedDerivedParameters"] = False
    for key in ("UseSgprForGRO", "VectorStore"):  # Solution.InternalKeys
        state["_" + key] = state[key]

    # 2112-2135 _GlobalAccumulation (globalParameters["SplitGSU"] is False)
    compute = pt["ComputeDataType"]
    state["_GlobalAccumulation"] = None
    if state["StreamK"] > 0 and state["StreamKAtomic"] == 0:
        state["_GlobalAccumulation"] = "PartialsBuffer"
    elif state["GlobalSplitUAlgorithm"] == "SingleBuffer":
        if compute.code != pt["DestDataType"].code:
            state["_GlobalAccumulation"] = "SingleBuffer"
    elif state["GlobalSplitUAlgorithm"] == "MultipleBuffer":
        state["_GlobalAccumulation"] = "MultipleBuffer"
    elif state["GlobalSplitUAlgorithm"] == "MultipleBufferSingleKernel":
        state["_GlobalAccumulation"] = "MultipleBufferSingleKernel"
    if state["_GlobalAccumulation"] == "MultipleBufferSingleKernel":
        state["SynchronizerSizeCheck"] = 1

    # 2141-2167 Stream-K
    if state["StreamK"] != 0:
        state["GlobalSplitU"] = 0
        state["GlobalSplitUAlgorithm"] = "MultipleBuffer"
        if state["MIWaveGroup"][0] * state["MIWaveGroup"][1] != 4 or not state["EnableMatrixInstruction"]:
            _reject(state)
        if caps["HasWMMA"] or not pt["StridedBatched"] or pt["GroupedGemm"]:
            _reject(state)
        if state["StreamKAtomic"] == 1 and (
            pt["DataType"].enum != "Float" or not state["BufferStore"] or state["LocalSplitU"] > 1
        ):
            _reject(state)
        if rules.streamk_checks:
            _streamk_checks(state, path)
    else:
        state["StreamKAtomic"] = 0
        state["StreamKXCCMapping"] = 0
        state["DebugStreamK"] = 0

    # 2169-2176 workspace
    state["_WorkspaceSizePerElemC"] = compute.num_bytes
    state["_WorkspaceSizePerElemBias"] = 0
    if pt["UseBias"] and pt["Gradient"]:
        state["_WorkspaceSizePerElemBias"] = compute.num_bytes
    multiple = (
        state["GlobalSplitUAlgorithm"] == "MultipleBuffer"
        or state["_GlobalAccumulation"] == "MultipleBufferSingleKernel"
    )
    state["WorkspaceCheck"] = [
        state["_WorkspaceSizePerElemC"],
        state["_WorkspaceSizePerElemBias"],
        state["GlobalSplitU"] if multiple else 1,
    ]
    if state["VectorStore"] == -1:
        state["_VectorStore"] = 1
    if not state["Valid"]:
        return  # 2181-2183

    # 2185-2190 SIA 2
    if state["ScheduleIterAlg"] == 2:
        state["InnerUnroll"] = state["DepthU"] // state["MatrixInstK"]
        state["PrefetchLocalRead"] = 1
        state["ExpandPointerSwap"] = 1
        state["1LDSBuffer"] = 1
    # 2193-2197 no nt modifier
    if not caps["HasNTModifier"]:
        for ch in ("", "A", "B", "C", "D", "E", "WS", "Metadata"):
            if state["NonTemporal" + ch] >= 4:
                state["NonTemporal" + ch] -= 4
    if state["WavefrontSize"] == 32 and not archc["HasWave32"]:
        _reject(state)
    if state["WavefrontSize"] == 32 and state["KernelLanguage"] == "Source":
        _reject(state)

    # 2205-2256 matrix-instruction checks (the returns stop the derivation here)
    data = pt["DataType"]
    if state["EnableMatrixInstruction"]:
        if not (caps["HasMFMA"] or caps["HasWMMA"]):
            _reject(state)
            return
        if data.enum not in (
            "Float", "Double", "BFloat16", "Half", "ComplexFloat", "ComplexDouble",
            "Float8", "BFloat8", "Float8BFloat8", "BFloat8Float8", "Int8",
        ):  # fmt: skip
            _reject(state)
            return
        if not state["MIBlock"] or len(state["MIBlock"]) != 6:
            _reject(state)
            return
        if not state["MIWaveGroup"] or len(state["MIWaveGroup"]) != 2:
            _reject(state)
            return
        if not state["MIWaveTile"] or len(state["MIWaveTile"]) != 2:
            _reject(state)
            return
        if caps["HasMFMA"] and not pt["HighPrecisionAccumulate"] and data.num_bytes < 4:
            _reject(state)
            return
        if caps["HasWMMA"] and data.num_bytes >= 4:
            _reject(state)
            return
        if state["InterleaveAlpha"]:
            _reject(state)
            return
        if (
            data.enum == "Int8"
            and isa[:2] == (9, 4)
            and tuple(state["MatrixInstruction"])[:3] in ((32, 32, 8), (16, 16, 16))
        ):
            _reject(state)
            return
        if compute.enum == "Double" and state["MatrixInstruction"] == [4, 4, 4, 4]:
            if list(state["ISA"]) != [9, 0, 10] and state["ScheduleIterAlg"] == 3:
                _reject(state)
    else:
        if not pt["HighPrecisionAccumulate"] and compute.num_bytes > data.num_bytes:
            _reject(state)
        if pt["Sparse"] or state["ThreadTile0"] > 16 or state["ThreadTile1"] > 16:
            _reject(state)
        if state["ScheduleIterAlg"] in (2, 3):
            _reject(state)

    # 2258-2282 per-tensor tiles
    if pt["Tensor0"] == 0:
        pairs = (("A", "0"), ("B", "1"))
    else:
        pairs = (("B", "0"), ("A", "1"))
    for tc, idx in pairs:
        state["ThreadTile" + tc] = state["ThreadTile" + idx]
    for tc, idx in pairs:
        state["SubGroup" + tc] = state["SubGroup" + idx]
    for tc, idx in pairs:
        state["MacroTile" + tc] = state["MacroTile" + idx]
    if state["EnableMatrixInstruction"]:
        for tc, idx in pairs:
            state["MIWaveTile" + tc] = state["MIWaveTile"][int(idx)]
    # 2284-2285 checkAndAssignWaveSeparateGlobalRead only rejects
    waves = state["NumThreads"] // state["WavefrontSize"]
    for tc in ("A", "B"):
        if state["WaveSeparateGlobalRead" + tc]:
            if pt["TLU" + tc] and state["_DepthU" + tc] > 0 and state["_DepthU" + tc] % waves != 0:
                _reject(state)
            if not pt["TLU" + tc] and state["MacroTile" + tc] % waves != 0:
                _reject(state)

    # 2287-2325 sparse metadata
    if pt["Sparse"] == 2 and state["DirectToVgprSparseMetadata"]:
        _reject(state)
    if pt["Sparse"]:
        src = "B" if pt["Sparse"] == 2 else "A"
        if not state["DirectToVgprSparseMetadata"]:
            state["ThreadTileMetadata"] = state["ThreadTile" + src]
            state["SubGroupMetadata"] = state["SubGroup" + src]
            state["MacroTileMetadata"] = state["MacroTile" + src]
            state["WaveSeparateGlobalReadMetadata"] = state["WaveSeparateGlobalRead" + src]
            state["DirectToLdsMetadata"] = False
            state["LocalWriteUseSgprMetadat"] = False
            pt["MirrorDimsMetadata"] = pt["MirrorDims" + src]
            state["VectorWidthMetadata"] = state["VectorWidth" + src]
        if state["EnableMatrixInstruction"]:
            state["MIWaveTileMetadata"] = state["MIWaveTile" + src]
    else:
        state["DirectToVgprSparseMetadata"] = False
        state["MIWaveTileMetadata"] = 0

    # 2327-2340
    if state["NonTemporal"] != -1:
        for ch in ("A", "B", "C", "D", "Metadata"):
            state["NonTemporal" + ch] = state["NonTemporal"]
    state["DirectToLdsA"] = False
    state["DirectToLdsB"] = False
    state["LocalWriteUseSgprA"] = False
    state["LocalWriteUseSgprB"] = False
    state["WorkGroupMappingXCC"] = abs(state["WorkGroupMappingXCC"])

    # 2344-2388 free dimensions and packed indices
    for tc in ("A", "B"):
        if not [i for i in pt["IndexAssignments" + tc] if i in pt["IndicesFree"]]:
            _reject(state)
            return
    tc0, tc1 = ("A", "B") if pt["Index0"] in pt["IndexAssignmentsA"] else ("B", "A")
    for slot, tc in (("0", tc0), ("1", tc1)):
        state[f"PackedC{slot}IdxChars"] = []
        state[f"PackedC{slot}IndicesX"] = []
        for idx in pt["IndexAssignments" + tc]:
            if idx in pt["IndicesFree"]:
                state[f"PackedC{slot}IdxChars"].append(_INDEX_CHARS[idx])
                state[f"PackedC{slot}IndicesX"].append(idx)

    # 2393-2421 buffer loads, no-load loop, pointer swap
    buffer_load = state["BufferLoad"] and state["KernelLanguage"] == "Assembly"
    if not buffer_load:
        state["DirectToLds"] = False
        state["_UseSgprForGRO"] = False
        if state["PrefetchGlobalRead"] == 2 or pt["UseBias"]:
            _reject(state)
            return
    if state["SuppressNoLoadLoop"] == 1:
        if not (buffer_load and state["PrefetchGlobalRead"] == 1 and state["GlobalSplitU"] == 1):
            state["SuppressNoLoadLoop"] = 0
    if state["ExpandPointerSwap"] == 1:
        pgr = state["PrefetchGlobalRead"]
        if not (
            buffer_load
            and (pgr == 1 or (pgr > 1 and data.enum in ("Double", "ComplexDouble")) or (pt["Sparse"] and pgr > 0))
        ):
            state["ExpandPointerSwap"] = 0

    # 2426-2445 stagger
    bpe_ab = int(data.num_bytes)
    if state["StaggerU"] == 0:
        state["StaggerUMapping"] = 0
        state["StaggerUStride"] = 0
    if state["StaggerUStride"] == -1:
        state["StaggerUStride"] = state["DepthU"] * bpe_ab
    ratio = state["StaggerUStride"] / (state["DepthU"] * bpe_ab)
    shift = int(math.ceil(math.log(ratio, 2))) if ratio > 0 else 0
    if shift < 0:
        _reject(state)
        return
    state["_staggerStrideShift"] = shift

    # 2447-2463 TransposeLDS
    if state["EnableMatrixInstruction"]:
        if state["TransposeLDS"] == -1:
            state["TransposeLDS"] = 0 if pt["TLUA"] and pt["TLUB"] else 1
        if state["TransposeLDS"] == 0:
            state["UnrollMajorLDSA"] = 0
            state["UnrollMajorLDSB"] = 0
        elif state["TransposeLDS"] == 1:
            state["UnrollMajorLDSA"] = not pt["TLUA"]
            state["UnrollMajorLDSB"] = not pt["TLUB"]
        elif state["TransposeLDS"] == 2:
            state["UnrollMajorLDSA"] = 1
            state["UnrollMajorLDSB"] = 1
    else:
        state["TransposeLDS"] = 0
        state["UnrollMajorLDSA"] = False
        state["UnrollMajorLDSB"] = False

    # 2465-2496 VectorWidthA/B
    for tc, wave_tile_index in (("A", 0), ("B", 1)):
        if state["VectorWidth" + tc] == -1:
            if state["EnableMatrixInstruction"]:
                opt_vw = int(4 // (data.num_bytes / 4))
                while state["MIWaveTile"][wave_tile_index] % opt_vw != 0:
                    opt_vw //= 2
                state["VectorWidth" + tc] = 1 if pt["Sparse"] else opt_vw
            else:
                state["VectorWidth" + tc] = 1
    if pt["Sparse"] and not state["DirectToVgprSparseMetadata"]:
        state["VectorWidthMetadata"] = state["VectorWidthA"] if pt["Sparse"] == 1 else state["VectorWidthB"]
    if state["EnableMatrixInstruction"]:
        if state["MIWaveTile"][0] % state["VectorWidthA"] != 0 or state["MIWaveTile"][1] % state["VectorWidthB"] != 0:
            _reject(state)
            return
    if len(pt["IndicesSummation"]) > 1:
        state["StaggerU"] = 0
    if state["KernelLanguage"] == "Assembly" and data.enum == "Half":
        # ArchCaps[CurrentISA]["HasEccHalf"]: CurrentISA is (0, 0, 0) on the build host
        pass

    # 2700-2733 default LocalReadVectorWidth (only the -1 default; see module docstring)
    if state["EnableMatrixInstruction"]:
        if state["LocalReadVectorWidth"] == -1:
            if state["TransposeLDS"] and not state["DirectToLds"]:
                state["LocalReadVectorWidth"] = 16 // data.num_bytes
            else:
                state["LocalReadVectorWidth"] = state["MIInputPerThread"]
            if state["LocalReadVectorWidth"] // state["MIInputPerThread"] > 1:
                if (
                    state["DepthU"] // state["MatrixInstK"]
                    <= state["LocalReadVectorWidth"] // state["MIInputPerThread"]
                ):
                    state["LocalReadVectorWidth"] //= 2
    elif state["LocalReadVectorWidth"] == -1:
        state["LocalReadVectorWidth"] = 1

    # 2742-2789 default GlobalReadVectorWidthA/B
    generated = {"A": False, "B": False}
    for tc, tile, mi_b, group in (("A", "MacroTile0", "MatrixInstBM", 0), ("B", "MacroTile1", "MatrixInstBN", 1)):
        key = "GlobalReadVectorWidth" + tc
        if state["EnableMatrixInstruction"]:
            if state[key] < 0:
                generated[tc] = True
                if state[key] == -2:
                    skinny = state[mi_b] == 1 and state["MIWaveTile"][group] == 1 and state["MIWaveGroup"][group] == 1
                    if skinny and pt["TLU" + tc]:
                        state[key] = 1
                    else:
                        _reject(state)
                elif state[key] == -1:
                    dt = pt["DataType" + tc]
                    unroll_major = state["UnrollMajorLDS" + tc]
                    opt: float = state["LocalReadVectorWidth"] if unroll_major else 4 / (dt.num_bytes / 4)
                    if opt * dt.num_bytes > 16:
                        opt = 16 // dt.num_bytes
                    cur = 1
                    state[key] = cur
                    while cur <= opt:
                        if (state[tile] * state["_DepthU" + tc] // state["NumThreads"]) % cur == 0:
                            state[key] = cur
                        cur *= 2
        elif rules.non_mi_grvw_one:
            state[key] = 1
    if generated["A"] and state["UnrollLoopSwapGlobalReadOrder"] == 1:
        state["GlobalReadVectorWidthA"] = min(state["GlobalReadVectorWidthA"], state["GlobalReadVectorWidthB"])
    if generated["B"] and state["UnrollLoopSwapGlobalReadOrder"] == 1:
        state["GlobalReadVectorWidthB"] = min(state["GlobalReadVectorWidthA"], state["GlobalReadVectorWidthB"])

    # 2792-2804 default StoreVectorWidth
    if state["StoreVectorWidth"] == -1:
        if state["SourceSwap"]:
            state["StoreVectorWidth"] = state["VectorWidthA"]
        elif state["EnableMatrixInstruction"]:
            state["StoreVectorWidth"] = state["MIOutputVectorWidth"]
            if state["VectorWidthA"] * state["MIOutputVectorWidth"] <= 4 / (pt["DestDataType"].num_bytes / 4):
                state["StoreVectorWidth"] = state["VectorWidthA"] * state["MIOutputVectorWidth"]
            if state["LocalSplitU"] > 1:
                state["StoreVectorWidth"] = state["VectorWidthA"]
        else:
            state["StoreVectorWidth"] = state["VectorWidthA"]

    # 2806-2846 returns before the store sizes
    if state["EnableMatrixInstruction"]:
        if state["SourceSwap"]:
            if state["VectorWidthA"] % state["StoreVectorWidth"] != 0:
                _reject(state)
                return
        elif (state["VectorWidthA"] * state["MIOutputVectorWidth"]) % state["StoreVectorWidth"] != 0:
            _reject(state)
            return
    if state["VectorWidthA"] * data.num_bytes > 16 or state["VectorWidthB"] * data.num_bytes > 16:
        _reject(state)
        return
    if (
        state["GlobalReadVectorWidthA"] * pt["DataTypeA"].num_bytes > 16
        or state["GlobalReadVectorWidthB"] * pt["DataTypeB"].num_bytes > 16
    ):
        _reject(state)
        return
    elements = state["MacroTile0"] * state["MacroTile1"]
    if elements < state["NumThreads"]:
        _reject(state)
        return
    state["NumElementsPerThread"] = elements // state["NumThreads"]

    # 3162-3166 NoTailLoop
    state["NoTailLoop"] = state["AssertSummationElementMultiple"] % state["DepthU"] == 0 and state["StreamK"] == 0
    # 3168-3176 (3251-3258 @0.12.1): a DirectToVgpr kernel tensilelite cannot build stops here
    for tc in ("A", "B"):
        if state["DirectToVgpr" + tc] and not _direct_to_vgpr_doable(state, tc, rules, archc):
            return

    # 3178-3196 LDS: metadata layout, then LdsBlockSizePerPad (recomputed; explicit values kept)
    state["TransposeLDSMetadata"] = pt["Sparse"] != 2
    state["UnrollMajorLDSMetadata"] = pt["Sparse"] != 2
    if pt["Sparse"] and not state["DirectToVgprSparseMetadata"]:
        state["UnrollMajorLDSMetadata"] = state["TransposeLDSMetadata"] and not pt["TLUMetadata"]
    auto_block_a = state["LdsBlockSizePerPadA"] == -1
    auto_block_b = state["LdsBlockSizePerPadB"] == -1
    state["LdsBlockSizePerPadA"], state["LdsBlockSizePerPadB"] = _lds_block_size_per_pad(
        state, state["LocalReadVectorWidth"]
    )
    if state["LdsBlockSizePerPadMetadata"] == -1:
        state["LdsBlockSizePerPadMetadata"] = state["LdsBlockSizePerPadA"]
    # 3198-3383: validity checks and checkLdsBlockSizePerPad's address simulation (not ported;
    # it only zeroes an automatic block size whose padded addresses would be inconsistent)
    # 3385-3400: DirectToLds feasibility (not ported: the stored DirectToLds stands)
    if rules.dtv_with_dtl_single_wave_group and state["DirectToLds"]:  # 3486-3493 @0.12.1
        wave_group = state["MIWaveGroup"]
        if (state["DirectToVgprA"] and wave_group[1] > 1) or (state["DirectToVgprB"] and wave_group[0] > 1):
            _reject(state)
            return
    # 3408-3417 LdsPad (recomputed; explicit values kept), 128-byte blocks for 32-byte reads
    state["LdsPadA"], state["LdsPadB"], state["LdsPadMetadata"] = _lds_pad(state, state["LocalReadVectorWidth"], caps)
    for tc, auto in (("A", auto_block_a), ("B", auto_block_b)):
        grvw_bytes = state["GlobalReadVectorWidth" + tc] * data.num_bytes
        if grvw_bytes == 32 and state["LdsPad" + tc] == 16 // data.num_bytes and auto:
            state["LdsBlockSizePerPad" + tc] = 128

    # 3553-3562 sparse kernels assert a summation multiple of 8
    if pt["Sparse"]:
        if pt["Sparse"] == 1 and state["SourceSwap"]:
            _reject(state)
            return
        if pt["Sparse"] == 2 and not state["SourceSwap"]:
            _reject(state)
            return
        state["AssertSummationElementMultiple"] = 8
    # 3571-3573 WMMA forces MIArchVgpr
    if state["EnableMatrixInstruction"] and caps["HasWMMA"]:
        state["MIArchVgpr"] = True

    # 3719-3757 loop iterations, PrefetchLocalRead / ClusterLocalRead
    if "LocalSplitU" in state:
        state["LoopUnroll"] = state["DepthU"] // state["LocalSplitU"]
    if state["LoopUnroll"] * state["LocalSplitU"] != state["DepthU"]:
        state["Valid"] = False
    if state["KernelLanguage"] != "Assembly" and state["InnerUnroll"] != 1:
        _reject(state)
    state["LoopUnroll"] //= state["InnerUnroll"]
    state["LoopIters"] = state["LoopUnroll"]
    if state["EnableMatrixInstruction"]:
        state["LoopIters"] //= state["MatrixInstK"]
    if state["LoopIters"] < 1:
        _reject(state)
        return
    if (
        state["ClusterLocalRead"]
        and state["PrefetchLocalRead"] >= state["LoopIters"]
        and not state["ScheduleIterAlg"] == 2
    ):
        dtv = (pt["TLUA"] and state["DirectToVgprA"]) or (pt["TLUB"] and state["DirectToVgprB"])
        if data.num_bytes < 4 and dtv:
            _reject(state)
            return
        state["ClusterLocalRead"] = 0
        state["PrefetchLocalRead"] = 0
    if not state["EnableMatrixInstruction"]:
        state["ClusterLocalRead"] = 0
        if rules.non_mi_plr_zero:
            state["PrefetchLocalRead"] = 0
    if state["EnableMatrixInstruction"] and state["PrefetchLocalRead"] > 0:
        if state["LocalReadVectorWidth"] // state["MIInputPerThread"] == 0:
            _reject(state)
            return

    # 3803-3804
    if state["UseInstOffsetForGRO"] == -1:
        state["UseInstOffsetForGRO"] = 1 if state["DirectToLds"] else 0

    # 3935-3937 activation function call
    if state["ActivationFuncCall"] and not (
        state["ActivationFused"] and pt["ActivationType"] in ("all", "hipblaslt_all")
    ):
        state["ActivationFuncCall"] = False
    # 3966-3969 ScaleAB turns off OptNoLoadLoop
    if pt["UseScaleAB"] and state["OptNoLoadLoop"]:
        state["OptNoLoadLoop"] = 0
    # 3990-3997 PreloadKernArgs: the build host's hipcc version is unknown ("0.0.0"), so it is off
    if state["PreloadKernArgs"]:
        state["PreloadKernArgs"] = 0


__all__ = [
    "CustomKernelConfig",
    "LITE_DERIVATION_0_12_1",
    "LITE_DERIVATION_5X_PROVISIONAL",
    "LITE_DERIVATION_7D9FB683",
    "LiteDerivationRules",
    "LiteProblemType",
    "LiteState",
    "bias_type_list_default",
    "keep_stored_custom_kernels",
    "problem_type",
    "problem_types_differ",
    "solution_state",
]

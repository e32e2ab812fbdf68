"""Tensile's ``Solution.assignDerivedParameters``: the kernel state TensileCreateLibrary computes.

``LibraryIO`` sets ``AssignedDerivedParameters`` to False for every solution of a logic file, so
TensileCreateLibrary re-derives each one from the stored parameters: the stored derived values
(``VectorWidthB``, ``_staggerStrideShift``, ``ForceStoreSC1: Auto`` …) are *not* what ends up in
kernel names and master-library fields. This module ports the part of that derivation whose
results are visible in a master library: named parameters (min-names and full names), the
``sizeMapping`` fields and the inputs of the problem predicates. It follows the statement order
of ``SolutionStructs.Solution.parameterWrapper``, ``assignProblemIndependentDerivedParameters`` and
``assignDerivedParameters`` (ROCm/Tensile 4.44), because later steps read what earlier ones wrote
(e.g. the StoreRemapVectorWidth check reads ``-1`` as true before ``-1`` is resolved, and the
stagger shift is computed before StaggerU is cleared for multi-summation problems).

Where Tensile calls ``reject(state, …)`` and returns, the port stops at the same point, so a
kernel Tensile rejects keeps exactly what was derived before (merge identity compares such
states too); rejections Tensile does not return on do not change the state and are not modelled.
A value the port needs that is missing or of the wrong type raises
:class:`~tensilekit.errors.InvalidValue` naming the solution. Not ported: code-generation-only
values (register counts, LDS offsets beyond what selects ``1LDSBuffer``) and convolutions.
The capabilities are those of Tensile's ROCm 6.4 assembler-capability cache.

tensilelite (hipBLASLt) solutions are derived by their own fork's port,
:mod:`tensilekit.model.derive_tensilelite`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from tensilekit.errors import InvalidValue, Location
from tensilekit.model.tensile_parameters import HAS_GLC_MODIFIER

Isa = tuple[int, int, int]

#: ``globalParameters["MaxLDS"]``: LDS bytes a kernel may use (TensileCreateLibrary's default).
MAX_LDS_BYTES: Final = 65536

_MFMA_ISAS: Final = frozenset({(9, 0, 8), (9, 0, 10), (9, 4, 0), (9, 4, 1), (9, 4, 2), (9, 5, 0)})
_ECC_HALF_ISAS: Final = frozenset({(9, 0, 6), (9, 0, 8), (9, 0, 10), (9, 4, 0), (9, 4, 1), (9, 4, 2), (9, 5, 0)})
_FORCE_STORE_SC1_ISAS: Final = frozenset({(9, 4, 0), (9, 4, 1)})
#: gfx94x/gfx950: the ``nt`` buffer modifier and kernel-argument preloading (ROCm 6.4 assembler).
_GFX94_FAMILY: Final = frozenset({(9, 4, 0), (9, 4, 1), (9, 4, 2), (9, 5, 0)})


def has_mfma(isa: Isa) -> bool:
    """``AsmCaps[isa]["HasMFMA"]``."""
    return isa in _MFMA_ISAS


def has_wmma(isa: Isa) -> bool:
    """``AsmCaps[isa]["HasWMMA"]`` (RDNA3 and RDNA4)."""
    return isa[0] in (11, 12)


def _has_ecc_half(isa: Isa) -> bool:
    return isa in _ECC_HALF_ISAS


# --------------------------------------------------------------------------------------------
# problem type indices (ProblemType.assignDerivedParameters, GEMM/contraction part)


def problem_indices(pt: Mapping[str, Any], *, path: str = "ProblemType") -> dict[str, Any]:
    """Free, batch and summation indices, ``TLUA``/``TLUB`` and which tensor holds index 0."""
    try:
        ia, ib, num_c = list(pt["IndexAssignmentsA"]), list(pt["IndexAssignmentsB"]), int(pt["NumIndicesC"])
        total = max(max(ia) + 1, max(ib) + 1)
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidValue(f"ProblemType index assignments are not readable ({error})", Location(path=path)) from None
    free, batch, summation = [], [], []
    for i in range(num_c):
        if i in ia and i in ib:
            batch.append(i)
        elif i in ia or i in ib:
            free.append(i)
    summation = [i for i in range(num_c, total) if i in ia and i in ib]
    if not summation:
        raise InvalidValue("ProblemType has no summation index", Location(path=path))
    unroll = summation[-1]
    index01a = next((i for i in ia if i in free), -1)
    index01b = next((i for i in ib if i in free), -1)
    if index01a < 0 or index01b < 0:
        raise InvalidValue("ProblemType: A and B each need a free index", Location(path=path))
    return {
        "IndicesFree": free,
        "IndicesBatch": batch,
        "IndicesSummation": summation,
        "IndexUnroll": unroll,
        "Index01A": index01a,
        "Index01B": index01b,
        "Tensor0": 0 if index01a < index01b else 1,
        "TLUA": ia.index(index01a) < ia.index(unroll),
        "TLUB": ib.index(index01b) < ib.index(unroll),
    }


# --------------------------------------------------------------------------------------------
# helpers


def _roundup_ratio(dividend: float, divisor: float) -> int:
    return int(math.ceil(float(dividend) / float(divisor)))


def _round_up_multiple(value: int, multiple: int) -> int:
    return ((value + multiple - 1) // multiple) * multiple


class _State:
    """The solution state with typed reads that name the solution on a bad value."""

    def __init__(self, state: MutableMapping[str, Any], path: str) -> None:
        self.s = state
        self.path = path

    def integer(self, key: str) -> int:
        value = self.s.get(key)
        if isinstance(value, bool):
            return int(value)
        if not isinstance(value, int):
            raise InvalidValue(
                f"{key} must be an integer to derive the kernel, got {value!r}",
                Location(path=f"{self.path}.{key}" if self.path else key),
            )
        return value

    def pair(self, key: str) -> list[int]:
        value = self.s.get(key)
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, int) for v in value):
            raise InvalidValue(
                f"{key} must be a list of integers, got {value!r}",
                Location(path=f"{self.path}.{key}" if self.path else key),
            )
        return value

    def fail(self, message: str) -> InvalidValue:
        return InvalidValue(f"cannot derive the kernel: {message}", Location(path=self.path or None))


def _num_registers(data_type: Any) -> float:
    """``DataType.numRegisters()``: 32-bit registers per element (half 0.5, double 2)."""
    return float(data_type.num_bytes) / 4.0


# --------------------------------------------------------------------------------------------
# the derivation


def assign_derived_parameters(
    state: MutableMapping[str, Any],
    raw: Mapping[str, Any],
    *,
    path: str = "",
    strict: bool = True,
) -> None:
    """Derive ``state`` in place as ``Solution.assignDerivedParameters`` does (see module docstring).

    ``state`` holds the default-filled solution (``ProblemType`` resolved, ``ISA`` set); ``raw``
    is the logic-file dict it came from (for the legacy ``LdsBlockSizePerPad`` key). With
    ``strict``, a stored macro tile that the work group and thread tile contradict raises instead
    of being overwritten as Tensile does (see :func:`~tensilekit.model.naming.kernel_state`).
    """
    try:
        _derive_tensile(_State(state, path), raw, strict)
    except _Rejected:
        # Tensile's reject(); return: the kernel keeps what was derived up to that point
        pass


class _Rejected(Exception):
    """Where Tensile calls ``reject(state, …)`` and returns: derivation stops there."""


def _reject_if(condition: object) -> None:
    if condition:
        raise _Rejected


def _derive_tensile(st: _State, raw: Mapping[str, Any], strict: bool) -> None:
    state, path = st.s, st.path
    pt = state["ProblemType"]
    isa: Isa = tuple(state["ISA"])
    indices = problem_indices(pt, path=f"{path}.ProblemType" if path else "ProblemType")
    data_type = pt["DataType"]
    regs = _num_registers(data_type)
    bpe = data_type.num_bytes
    assembly = state["KernelLanguage"] == "Assembly"

    for tc in "AB":
        key = f"LdsBlockSizePerPad{tc}"
        if key not in raw and "LdsBlockSizePerPad" in raw:
            state[key] = raw["LdsBlockSizePerPad"]

    _parameter_wrapper(st, isa)
    _problem_independent(st, isa, data_type, strict, raw)

    for key in ("UseSgprForGRO", "VectorStore"):
        state["_" + key] = state[key]
    _global_accumulation(st, pt)

    if state["StreamK"] == 0:
        state["StreamKAtomic"] = 0
        state["StreamKXCCMapping"] = 0
        state["DebugStreamK"] = 0
    if assembly and not state["BufferLoad"]:
        state["StaggerU"] = 0  # StaggerU needs source kernels or BufferLoad
    _preload_kernel_arguments(st, isa, pt)
    state.setdefault("DelayRemainingArguments", False)
    if state["VectorStore"] == -1:
        state["_VectorStore"] = 1

    if state["ScheduleIterAlg"] == 2:
        state["InnerUnroll"] = st.integer("DepthU") // st.integer("MatrixInstK")
        state["PrefetchLocalRead"] = 1
        state["ExpandPointerSwap"] = 1
        state["1LDSBuffer"] = 1
    if state.get("MemoryModifierFormat") not in ("GLC", "SC0"):
        state["MemoryModifierFormat"] = "GLC" if HAS_GLC_MODIFIER.get(isa, True) else "SC0"
    if state.get("ForceStoreSC1", "Auto") == "Auto" or state["ForceStoreSC1"] not in (False, True):
        state["ForceStoreSC1"] = isa in _FORCE_STORE_SC1_ISAS
    if isa not in _GFX94_FAMILY:
        for ch in "ABCD":
            if st.integer(f"NonTemporal{ch}") >= 4:
                state[f"NonTemporal{ch}"] -= 4
    _matrix_instruction_support(st, isa, pt, regs)

    a_first = indices["Tensor0"] == 0
    tiles = (state["MacroTile0"], state["MacroTile1"])
    state["MacroTileA"], state["MacroTileB"] = tiles if a_first else tiles[::-1]
    if state["EnableMatrixInstruction"]:
        wave_tile = tuple(state["MIWaveTile"])
        state["MIWaveTileA"], state["MIWaveTileB"] = wave_tile if a_first else wave_tile[::-1]

    if not assembly or state["WorkGroupMappingType"] == "Z":
        state["WorkGroupMapping"] = abs(st.integer("WorkGroupMapping"))
    if state["WorkGroupMapping"] == -1:
        state["WorkGroupMapping"] = 1
    if state["PersistentKernel"] and assembly and (state["GlobalSplitU"] != 1 or state["WorkGroupMapping"] < 0):
        state["PersistentKernel"] = 0
    if state["PersistentKernelAlongBatch"] and (
        state["PersistentKernel"] == 0 or (not assembly and state["GlobalSplitU"] != 1)
    ):
        state["PersistentKernelAlongBatch"] = False
    if state["PrefetchAcrossPersistent"]:
        if (
            not assembly
            or state["PersistentKernel"] == 0
            or state["PrefetchGlobalRead"] == 0
            or state["SuppressNoLoadLoop"]
        ):
            state["PrefetchAcrossPersistent"] = False
            state["PrefetchAcrossPersistentMode"] = False
        _reject_if(state["PrefetchAcrossPersistentMode"] == 0 and state["PrefetchGlobalRead"] == 2)
    else:
        _reject_if(state["PrefetchAcrossPersistentMode"] != 0)

    _assert_strides(st, pt, indices)

    buffer_load = bool(state["BufferLoad"]) and assembly
    if not buffer_load:
        state["DirectToLdsA"] = False
        state["DirectToLdsB"] = False
        state["_UseSgprForGRO"] = False
        state["FractionalLoad"] = False
    if state["SuppressNoLoadLoop"] == 1 and not (
        buffer_load and state["PrefetchGlobalRead"] == 1 and state["GlobalSplitU"] == 1
    ):
        state["SuppressNoLoadLoop"] = 0
    if state["ExpandPointerSwap"] == 1:
        direct_to_vgpr = state["DirectToVgprA"] or state["DirectToVgprB"]
        pgr = state["PrefetchGlobalRead"]
        if not ((buffer_load or direct_to_vgpr) and (pgr == 1 or (pgr > 1 and _direct_to_vgpr_type(data_type)))):
            state["ExpandPointerSwap"] = 0
        if state["DepthULdsDivisor"] > 1:
            state["ExpandPointerSwap"] = 0
    state["OptPreLoopVmcnt"] = state["OptPreLoopVmcnt"] and state["PrefetchAcrossPersistent"]

    _stagger(st, bpe)
    _vector_widths(st, indices, regs)
    if len(indices["IndicesSummation"]) > 1:
        state["StaggerU"] = 0
    _default_global_load_widths(st, regs, assembly)
    if state["StoreVectorWidth"] == -1:
        if state["SourceSwap"]:
            state["StoreVectorWidth"] = state["VectorWidth"]
        elif regs <= 1:
            state["StoreVectorWidth"] = 4
        else:
            state["StoreVectorWidth"] = int(4 // regs)
    _check_store_widths(st, pt, regs)
    if state["GlobalSplitU"] == 1:
        state["MinKForGSU"] = 256
        state["GlobalSplitUAlgorithm"] = "SingleBuffer"
    _vector_atomic_width(st, pt)

    state["_DepthULds"] = st.integer("DepthU") // st.integer("DepthULdsDivisor")
    if state["LocalReadVectorWidth"] == -1:
        state["LocalReadVectorWidth"] = (
            state["MIInputPerThread"] if state["EnableMatrixInstruction"] else state["VectorWidth"]
        )
    loop_iters = (state["_DepthULds"] // state["LocalSplitU"]) // st.integer("InnerUnroll")
    if "MatrixInstK" in state:
        loop_iters //= state["MatrixInstK"]
    _reject_if(loop_iters < 1)  # the first check of the DepthU search
    _global_load_tiles(st, indices, isa, bpe)
    if (
        state["UnrollIncIsDepthU"]
        or state["PackSummationDims"] == 1
        or bool(pt.get("ZeroPadA"))
        or bool(pt.get("ZeroPadB"))
    ):
        if state["DepthU"] % st.integer("AssertSummationElementMultiple") == 0:
            state["AssertSummationElementMultiple"] = state["DepthU"]
        state["StaggerU"] = 0
    state["UnrollMajorLDSA"] = (state["TransposeLDS"] and not indices["TLUA"]) or state["UnrollMajorLDSA"]
    state["UnrollMajorLDSB"] = (state["TransposeLDS"] and not indices["TLUB"]) or state["UnrollMajorLDSB"]
    if not assembly:
        for tc in "AB":
            if state[f"LdsBlockSizePerPad{tc}"] == -1:
                state[f"LdsBlockSizePerPad{tc}"] = 0
            if state[f"LdsPad{tc}"] == -1:
                state[f"LdsPad{tc}"] = 0
        _reject_if(state["LdsPadA"] != state["LdsPadB"])
    for tc in "AB":
        if state[f"DirectToVgpr{tc}"]:
            _direct_to_vgpr(st, tc, indices, data_type)
            state[f"DirectToLds{tc}"] = False
    _lds_padding_auto(st, indices, bpe)
    if state["1LDSBuffer"] == -1 and (state["DirectToLdsA"] or state["DirectToLdsB"]):
        state["1LDSBuffer"] = 0
    for tc in "AB":
        if state[f"ThreadSeparateGlobalRead{tc}"] and state[f"DirectToVgpr{tc}"]:
            state[f"ThreadSeparateGlobalRead{tc}"] = 0
    if state["1LDSBuffer"] == -1:
        state["1LDSBuffer"] = 1 if _lds_elements_ab(st, regs) * bpe > MAX_LDS_BYTES else 0
    _store_remap_vector_width(st, pt)
    if not state["StoreCInUnroll"]:
        if state["StoreCInUnrollPostLoop"]:
            state["StoreCInUnrollPostLoop"] = False
        if state["StoreCInUnrollExact"]:
            state["StoreCInUnrollExact"] = False
    if state["LocalDotLayout"] > 1:
        state["DirectToLdsA"] = False
        state["DirectToLdsB"] = False
    if state["UseInstOffsetForGRO"] == -1:
        state["UseInstOffsetForGRO"] = 1 if (state["DirectToLdsA"] or state["DirectToLdsB"]) else 0

    amas = 0
    if assembly:
        if state["VectorWidth"] > 1:
            amas = 3  # VW>1 kernels require dims>1
    elif state["VectorWidth"] > 1:
        amas = 2
    state["AssertMinApproxSize"] = amas
    if state["ExtraLatencyForLR"] < 0 and not (state["DirectToVgprA"] or state["DirectToVgprB"]):
        state["ExtraLatencyForLR"] = 0


def _matrix_instruction(state: Mapping[str, Any], path: str) -> list[int]:
    """The stored ``MatrixInstruction`` (``[]`` for VALU kernels), checked to be integers."""
    stored = state.get("MatrixInstruction") or []
    if not isinstance(stored, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in stored):
        raise InvalidValue(
            f"MatrixInstruction must be a list of integers, got {stored!r}",
            Location(path=f"{path}.MatrixInstruction" if path else "MatrixInstruction"),
        )
    return list(stored)


def _check_store_widths(st: _State, pt: Mapping[str, Any], regs: float) -> None:
    """The early returns between the store width and the GlobalSplitU defaults."""
    state = st.s
    if state["EnableMatrixInstruction"]:
        store = state["StoreVectorWidth"]
        _reject_if(store <= 0)
        if state["SourceSwap"]:
            _reject_if(state["VectorWidthA"] % store != 0)
        else:
            _reject_if(state["MIOutputVectorWidth"] % store != 0)
    _reject_if(state["VectorWidthA"] * regs * 4 > 16 or state["VectorWidthB"] * regs * 4 > 16)
    elements = state["MacroTile0"] * state["MacroTile1"]
    _reject_if(elements < state["NumThreads"] or state["NumThreads"] <= 0)
    per_thread = elements // state["NumThreads"]
    write_width = min(state["VectorWidthA"], per_thread)
    _reject_if(write_width <= 0 or per_thread % write_width != 0)
    if state["LocalSplitU"] > 1:
        _reject_if(state["NumThreads"] % state["MacroTile0"] != 0 or elements % state["NumThreads"] != 0)
    if state["GlobalSplitU"] > 1:
        _reject_if(not state["GlobalSplitUSummationAssignmentRoundRobin"] and state["LoopTail"])
        dt, dest, compute = pt["DataType"].enum, pt["DestDataType"].enum, pt["ComputeDataType"].enum
        _reject_if(
            not (
                dt == "Float"
                or dt.startswith(("Float8", "BFloat8"))
                or (dt == "Double" and state["BufferStore"])
                or dest == "Int32"
                or (state["KernelLanguage"] == "Assembly" and compute == "Half")
                or state["_GlobalAccumulation"]
                or state["EnableMatrixInstruction"]
            )
        )


def _matrix_instruction_support(st: _State, isa: Isa, pt: Mapping[str, Any], regs: float) -> None:
    """The early returns of ``assignDerivedParameters`` for kernels the ISA or type cannot run."""
    state = st.s
    if state["EnableMatrixInstruction"]:
        _reject_if(not (has_mfma(isa) or has_wmma(isa)))
        _reject_if(
            pt["DataType"].enum not in ("Float", "Double", "BFloat16", "Half", "ComplexFloat", "ComplexDouble", "Int8")
            and not pt["DataType"].enum.startswith(("Float8", "BFloat8"))
        )
        _reject_if(not has_mfma(isa) and has_wmma(isa) and state["WavefrontSize"] == 64)
        _reject_if(has_mfma(isa) and not pt.get("HighPrecisionAccumulate") and regs < 1)
        _reject_if(has_wmma(isa) and regs >= 1)
        _reject_if(state["InterleaveAlpha"])


def _parameter_wrapper(st: _State, isa: Isa) -> None:
    """``parameterWrapper``: 9-tuple MatrixInstruction → ThreadTile/WorkGroup; the MI block shape."""
    state = st.s
    mi = _matrix_instruction(state, st.path)
    if len(mi) == 9:
        waves = mi[7] * mi[8]
        thread_tile, work_group = list(st.pair("ThreadTile")), list(st.pair("WorkGroup"))
        thread_tile[0] = mi[5]
        thread_tile[1] = mi[6] * mi[1]
        work_group[0] = mi[4] * mi[0] * mi[7]
        work_group[1] = waves * st.integer("WavefrontSize") // work_group[0]
        state["ThreadTile"], state["WorkGroup"] = thread_tile, work_group
    if mi:
        mi = mi[:4]
        state["MatrixInstruction"] = mi
    if len(mi) != 4:
        state["EnableMatrixInstruction"] = False
        return
    work_group, thread_tile = st.pair("WorkGroup"), st.pair("ThreadTile")
    wavefront = st.integer("WavefrontSize")
    state["EnableMatrixInstruction"] = True
    miwg0 = mi[0] if work_group[0] < mi[0] else work_group[0]
    block_m = min(miwg0 // mi[0], mi[3])
    block_n = mi[3] // block_m
    state["MIBlock"] = [mi[0], mi[1], mi[2], mi[3], block_m, block_n]
    waves = max((work_group[0] * work_group[1]) // wavefront, 1)
    group0 = min((miwg0 // mi[0]) // block_m, waves)
    state["MIWaveGroup"] = [group0, waves // group0]
    state["MIWaveTile"] = [thread_tile[0], thread_tile[1] // mi[1]]
    state["MIInputPerThread"] = mi[0] * mi[2] * mi[3] // wavefront
    if not has_mfma(isa) and has_wmma(isa):
        state["MIInputPerThread"] = mi[2]


def _problem_independent(st: _State, isa: Isa, data_type: Any, strict: bool, raw: Mapping[str, Any]) -> None:
    """``assignProblemIndependentDerivedParameters``: MI fields, thread/sub-group tiles, macro tile."""
    state = st.s
    wavefront = st.integer("WavefrontSize")
    if state["EnableMatrixInstruction"]:
        block = state["MIBlock"]
        for key, value in zip(("M", "N", "K", "B", "BM", "BN"), block, strict=True):
            state[f"MatrixInst{key}"] = value
        if has_mfma(isa):
            out_width = 1 if data_type.enum in ("Double", "ComplexDouble") else 4
        else:
            out_width = 1 if has_wmma(isa) else 4
        state["MIOutputVectorWidth"] = out_width
        wave_group, wave_tile = state["MIWaveGroup"], state["MIWaveTile"]
        if state["MatrixInstM"] == 4:
            tile0 = wave_tile[0] * out_width
            tile1 = wave_tile[1]
            group0 = wave_group[0] * state["MatrixInstM"] * state["MatrixInstBM"] // out_width
            group1 = wave_group[1] * state["MatrixInstN"] * state["MatrixInstBN"]
        else:
            tile0 = state["MatrixInstBM"] * wave_tile[0] * (state["MatrixInstM"] * state["MatrixInstN"] // wavefront)
            tile1 = state["MatrixInstBN"] * wave_tile[1]
            group0 = wave_group[0] * (wavefront // state["MatrixInstN"])
            group1 = wave_group[1] * state["MatrixInstN"]
    else:
        thread_tile, work_group = st.pair("ThreadTile"), st.pair("WorkGroup")
        tile0, tile1, group0, group1 = thread_tile[0], thread_tile[1], work_group[0], work_group[1]
    work_group = state["WorkGroup"]
    if not isinstance(work_group, list) or len(work_group) != 3:
        raise st.fail(f"WorkGroup must be three integers, got {work_group!r}")
    state["ThreadTile0"], state["ThreadTile1"] = tile0, tile1
    state["SubGroup0"], state["SubGroup1"] = group0, group1
    state["LocalSplitU"] = work_group[2]
    state["NumThreads"] = group0 * group1 * work_group[2]
    # Tensile overwrites the stored MacroTile0/1 (it rejects a mismatch only against a "MacroTile"
    # list); a build must not silently make another kernel than the file describes
    for axis, derived in (("0", group0 * tile0), ("1", group1 * tile1)):
        if strict and st.integer(f"MacroTile{axis}") != derived:
            raise st.fail(
                f"MacroTile{axis} is {state[f'MacroTile{axis}']} but WorkGroup, ThreadTile and "
                f"MatrixInstruction make {derived}" + _tensilelite_form_hint(raw)
            )
        state[f"MacroTile{axis}"] = derived


def _tensilelite_form_hint(raw: Mapping[str, Any]) -> str:
    """Why a hipBLASLt-written solution cannot be read as a Tensile (rocBLAS) one, in plain words.

    tensilelite (hipBLASLt) stores a 4-element ``MatrixInstruction`` solution with its ``MIBlock``,
    ``MIWaveGroup`` and ``MIWaveTile`` and a placeholder ``ThreadTile: [1, 1]``, and derives the macro
    tile from those (``Tensile/SolutionStructs.py:1316-1381`` @7d9fb683). Tensile derives the wave
    group and wave tile from ``WorkGroup`` and ``ThreadTile`` instead and rejects such a solution
    (``invalid ThreadTile1 1 for MatrixInstM 32``, ``SolutionStructs.py:2370`` @a164ed70; its build
    then fails). A file is read as tensilelite only when position 11 names its library type;
    tensilelite itself refuses a logic file without one (``LibraryIO.py:349`` @7d9fb683).
    """
    stored = [raw.get(key) for key in ("MIBlock", "MIWaveGroup", "MIWaveTile")]
    if not all(isinstance(value, list) for value in stored) or raw.get("ThreadTile") != [1, 1]:
        return ""
    return (
        " (the solution is written in hipBLASLt's form: MIBlock, MIWaveGroup and MIWaveTile stored, "
        "ThreadTile [1, 1] a placeholder; Tensile, which reads this file because it names no library type "
        "at position 11, rejects such a solution, and hipBLASLt's tensilelite refuses a logic file without "
        "a library type)"
    )


def _global_accumulation(st: _State, pt: Mapping[str, Any]) -> None:
    """``_GlobalAccumulation`` / ``_WorkspaceSizePerElemC``, only when the file lacks one of them."""
    state = st.s
    if "_GlobalAccumulation" in state and "_WorkspaceSizePerElemC" in state:
        return
    accumulation: str | None = None
    workspace = 0
    compute = pt["ComputeDataType"]
    if state["StreamK"] > 0 and state["StreamKAtomic"] == 0:
        accumulation, workspace = "PartialsBuffer", compute.num_bytes
    gsu = st.integer("GlobalSplitU")
    if gsu > 1:
        if state["GlobalSplitUAlgorithm"] == "SingleBuffer":
            if compute.enum != pt["DestDataType"].enum:
                accumulation, workspace = "SingleBuffer", compute.num_bytes
        elif state["GlobalSplitUAlgorithm"] == "MultipleBuffer":
            accumulation, workspace = "MultipleBuffer", compute.num_bytes * gsu
    state["_GlobalAccumulation"] = accumulation
    state["_WorkspaceSizePerElemC"] = workspace


def _preload_kernel_arguments(st: _State, isa: Isa, pt: Mapping[str, Any]) -> None:
    state = st.s
    if isa not in _GFX94_FAMILY:
        state["PreloadKernelArguments"] = 0  # the assembler cannot preload: forced off
        return
    if state["PreloadKernelArguments"] != -1:
        return
    dt = pt["DataType"].enum
    supported = (
        bool(pt.get("StridedBatched", True))
        and dt in ("Float", "Half", "BFloat16")
        and bool(pt.get("UseBeta", True))
        and not pt.get("UseInitialStridesAB")
        and abs(st.integer("WorkGroupMapping")) <= 1
        and bool(state["PrefetchGlobalRead"])
        and state["EdgeType"] != "ShiftPtr"
        and state["StaggerU"] == 0
    )
    state["PreloadKernelArguments"] = 1 if supported else 0


def _assert_strides(st: _State, pt: Mapping[str, Any], indices: Mapping[str, Any]) -> None:
    """Unit stride in dimension 0 unless initial strides are used; PackBatchDims zero strides."""
    state = st.s
    for tensors, initial in (("AB", pt.get("UseInitialStridesAB")), ("CD", pt.get("UseInitialStridesCD"))):
        if initial:
            continue
        for tc in tensors:
            key = f"AssertStride{tc}Equal"
            value = state.get(key)
            if not isinstance(value, Mapping):
                raise InvalidValue(
                    f"{key} must be a mapping, got {value!r}", Location(path=f"{st.path}.{key}" if st.path else key)
                )
            state[key] = {**value, 0: 1}
    pack = st.integer("PackBatchDims")
    for mask, tc in ((0x1, "B"), (0x2, "A")):
        if pack & mask:
            assignments = list(pt[f"IndexAssignments{tc}"])
            strides = dict(state[f"AssertStride{tc}Equal"])
            for batch_index in indices["IndicesBatch"]:
                strides[assignments.index(batch_index)] = 0
            state[f"AssertStride{tc}Equal"] = strides


def _direct_to_vgpr_type(data_type: Any) -> bool:
    """``isDirectToVgprSupportDataType``."""
    return data_type.enum in (
        "Float",
        "Double",
        "ComplexFloat",
        "ComplexDouble",
        "Half",
        "BFloat16",
        "Int8",
        "Float8",
        "BFloat8",
        "Float8BFloat8",
        "BFloat8Float8",
    )


def _stagger(st: _State, bpe: int) -> None:
    """StaggerU off → mapping and stride 0; ``_staggerStrideShift = ceil(log2(stride / (DU*bpe)))``."""
    state = st.s
    _reject_if(state["StaggerUStride"] == 0 and state["StaggerU"] != 0)
    if state["StaggerU"] == 0:
        state["StaggerUMapping"] = 0
        state["StaggerUStride"] = 0
    stride, depth = st.integer("StaggerUStride"), st.integer("DepthU")
    try:
        shift = int(math.ceil(math.log(stride / (depth * bpe), 2)))
    except (ValueError, ZeroDivisionError):  # StaggerUStride == 0
        shift = 0
    _reject_if(shift < 0)  # the stride is shorter than one DepthU step
    state["_staggerStrideShift"] = shift


def _vector_widths(st: _State, indices: Mapping[str, Any], regs: float) -> None:
    state = st.s
    if state["GlobalReadVectorWidth"] != -1:
        state["GlobalLoadVectorWidthA"] = state["GlobalReadVectorWidth"]
        state["GlobalLoadVectorWidthB"] = state["GlobalReadVectorWidth"]
    if state["EnableMatrixInstruction"]:
        default = int(1 // regs) if regs < 1 else 1  # half: 2, int8: 4
        if state["VectorWidth"] < 1:
            state["VectorWidth"] = default
        if state["VectorWidthB"] < 1:
            state["VectorWidthB"] = default
            if (
                indices["TLUB"]
                and not state["UnrollMajorLDSB"]
                and state["MIInputPerThread"] == 1
                and state["SourceSwap"]
            ):
                if state["DirectToVgprB"] and state["GlobalLoadVectorWidthB"] != -1:
                    state["VectorWidthB"] = state["GlobalLoadVectorWidthB"]
                elif state["DirectToVgprA"] and indices["TLUA"] and state["LocalReadVectorWidth"] != -1:
                    state["VectorWidthB"] = state["LocalReadVectorWidth"]
        wave_tile = state["MIWaveTile"]
        if wave_tile[0] % state["VectorWidth"] != 0:
            _reject_if(state["SourceSwap"])
            state["VectorWidth"] = 1  # backward compatibility (before SourceSwap + VectorWidth)
        if wave_tile[1] % state["VectorWidthB"] != 0:
            state["VectorWidthB"] = 1
        if state["StoreRemapVectorWidth"]:
            state["VectorWidth"] = 1
            state["VectorWidthB"] = 1
    else:
        if state["VectorWidth"] < 1:
            width = int(4 / regs)
            while width > 1 and (state["ThreadTile0"] % width != 0 or state["ThreadTile1"] % width != 0):
                width //= 2
            state["VectorWidth"] = max(width, 1)
        width = state["VectorWidth"]
        _reject_if(state["ThreadTile0"] % width != 0 or state["ThreadTile1"] % width != 0)
        state["VectorWidthB"] = state["VectorWidth"]
    state["VectorWidthA"] = state["VectorWidth"]


def _default_global_load_widths(st: _State, regs: float, assembly: bool) -> None:
    state = st.s
    for tc in "AB":
        if state[f"GlobalLoadVectorWidth{tc}"] == -1:
            width = state["VectorWidth"]
            if assembly:
                width = max(width, int(math.ceil(1 / regs)))
            state[f"GlobalLoadVectorWidth{tc}"] = width
        _reject_if(state[f"GlobalLoadVectorWidth{tc}"] * regs * 4 > 16)


def _vector_atomic_width(st: _State, pt: Mapping[str, Any]) -> None:
    state = st.s
    width = 2 if pt["ComputeDataType"].num_bytes == 2 else 1
    if state["VectorAtomicWidth"] == -1:
        state["VectorAtomicWidth"] = width


def _global_load_tiles(st: _State, indices: Mapping[str, Any], isa: Isa, bpe: int) -> None:
    """The DepthU step for a fixed DepthU: global load widths and the load tile shape per tensor."""
    state = st.s
    depth_u = st.integer("DepthU")
    if depth_u <= 0:
        raise st.fail(f"DepthU must be positive in a logic file, got {depth_u}")
    elements: dict[str, tuple[int, int]] = {}
    for tc in "AB":
        tile = state[f"MacroTile{tc}"]
        elements[tc] = (tile, depth_u) if indices[f"TLU{tc}"] else (depth_u, tile)
    original = {tc: state[f"GlobalLoadVectorWidth{tc}"] for tc in "AB"}
    if state["FractionalLoad"]:
        for tc in "AB":
            _global_load_tile_fractional(st, tc, indices, isa, depth_u, original[tc])
        return
    for tc in "AB":
        width = original[tc]
        direct_lds = state[f"DirectToLds{tc}"] and (tc == "A" or not state["DirectToVgprB"])
        if direct_lds and bpe * width > 4:
            width = 4 / bpe
            if width >= 1:
                width = int(width)
        coalesced, perpendicular = elements[tc]
        _set_global_load_vector_width(st, tc, coalesced * perpendicular, width)
    for tc in "AB":
        width = original[tc] if state[f"GlobalLoadVectorWidth{tc}"] == 0 else state[f"GlobalLoadVectorWidth{tc}"]
        coalesced, perpendicular = elements[tc]
        _global_load_tile_classic(st, tc, indices, int(coalesced / width), perpendicular)


def _set_global_load_vector_width(st: _State, tc: str, total_elements: int, width: Any) -> None:
    """``setGlobalLoadVectorWidth``: narrow the load so every thread has one (classic loads)."""
    state = st.s
    threads_width = int(state["NumThreads"] * width)
    if total_elements < threads_width:
        partial = threads_width // total_elements
        width = width // partial
        threads_width //= partial
    state[f"GlobalLoadVectorWidth{tc}"] = width
    state[f"NumLoads{tc}"] = total_elements // threads_width if threads_width else 0


def _global_load_tile_classic(
    st: _State, tc: str, indices: Mapping[str, Any], vectors_coalesced: int, elements_perpendicular: int
) -> None:
    """``setGlobalLoadTileDimClassic``: NumLoadsCoalesced/Perpendicular for -1 and 1."""
    state = st.s
    if state[f"WaveSeparateGlobalRead{tc}"]:
        elements_perpendicular = _roundup_ratio(elements_perpendicular, state["NumThreads"] // state["WavefrontSize"])
    num_loads = state[f"NumLoads{tc}"]
    requested = state[f"NumLoadsCoalesced{tc}"]

    def fits(nlc: int) -> bool:
        nlp = num_loads // nlc
        return num_loads % nlc == 0 and vectors_coalesced % nlc == 0 and nlp != 0 and elements_perpendicular % nlp == 0

    if requested in (1, -1):
        if requested == 1:
            start = 1
            if state[f"DirectToVgpr{tc}"]:
                if indices[f"TLU{tc}"]:
                    start = _roundup_ratio(state[f"MIWaveTile{tc}"], state[f"GlobalLoadVectorWidth{tc}"])
                else:
                    start = _roundup_ratio(
                        state["DepthU"],
                        state["MatrixInstK"]
                        * state[f"GlobalLoadVectorWidth{tc}"]
                        * state["LocalSplitU"]
                        // state["MIInputPerThread"],
                    )
            candidates = list(range(start, int(num_loads) + 1))
        else:
            candidates = list(range(int(num_loads), 0, -1))
        found = next((nlc for nlc in candidates if fits(nlc)), None)
        _reject_if(found is None)
        assert found is not None
        state[f"NumLoadsCoalesced{tc}"] = found
        state[f"NumLoadsPerpendicular{tc}"] = num_loads // found
    else:
        _reject_if(requested > num_loads or requested <= 0)
        state[f"NumLoadsPerpendicular{tc}"] = num_loads // requested


def _global_load_tile_fractional(
    st: _State, tc: str, indices: Mapping[str, Any], isa: Isa, depth_u: int, original_width: int
) -> None:
    """``setGlobalLoadTileDimFractional``: the widest load width that does not wrap a row."""
    state = st.s
    tile = state[f"MacroTile{tc}"]
    par, perp = (tile, depth_u) if indices[f"TLU{tc}"] else (depth_u, tile)
    width = original_width
    half_ecc = state["ProblemType"]["DataType"].enum == "Half" and _has_ecc_half(isa)
    min_width = 2 if half_ecc else 1
    best = -1
    threads = state["NumThreads"]
    lsc = lsp = 0
    while width >= min_width:
        per_inst = threads * width
        mik = 1
        if state[f"DirectToVgpr{tc}"] and indices[f"TLU{tc}"]:
            mik = state["MatrixInstK"] * state["LocalSplitU"] // state["MIInputPerThread"]
            per_inst //= mik
        if par >= per_inst:
            lsc, lsp = per_inst, mik
        else:
            lsc, lsp = par, min(perp, per_inst // par)
        if lsc % width == 0:
            best = width
            valid_per_inst = lsc * lsp
            width //= 2
            while width >= min_width:
                if threads * width // mik < valid_per_inst:
                    break
                if lsc % width == 0:
                    best = width
                width //= 2
            break
        width //= 2
    _reject_if(best == -1)  # "No valid DepthU found"
    state[f"GlobalLoadVectorWidth{tc}"] = best
    state[f"LSC{tc}"], state[f"LSP{tc}"] = lsc, lsp
    state[f"NumLoadsCoalesced{tc}"] = _roundup_ratio(par, lsc)
    state[f"NumLoadsPerpendicular{tc}"] = _roundup_ratio(perp, lsp)


def _direct_to_vgpr(st: _State, tc: str, indices: Mapping[str, Any], data_type: Any) -> None:
    """What ``isDirectToVgprDoable`` sets for an accepted DirectToVgpr kernel."""
    state = st.s
    if data_type.num_bytes < 4 and indices[f"TLU{tc}"]:
        state["VgprForLocalReadPacking"] = True
        state["ClusterLocalRead"] = True
    state[f"GlobalReadCoalesceGroup{tc}"] = indices[f"TLU{tc}"]


def _lds_elements(st: _State, tc: str, regs: float) -> int:
    """``getLdsNumElements``."""
    state = st.s
    bpe_ab = int(4 * regs)
    if state[f"LdsBlockSizePerPad{tc}"]:
        interval = state[f"LdsBlockSizePerPad{tc}"] // bpe_ab
    elif state[f"UnrollMajorLDS{tc}"]:
        interval = state["_DepthULds"]
    else:
        interval = state[f"MacroTile{tc}"]
    count = state[f"MacroTile{tc}"] * state["_DepthULds"]
    if interval <= 0:
        raise st.fail(f"LDS pad interval of tensor {tc} is {interval}")
    lds = count + (count // interval) * state[f"LdsPad{tc}"]
    return 0 if state[f"DirectToVgpr{tc}"] else int(lds)


def _lds_elements_aligned(st: _State, tc: str, regs: float) -> int:
    """``getLdsNumElementsAligned``."""
    return _round_up_multiple(_lds_elements(st, tc, regs), int(64 / regs))


def _lds_elements_ab(st: _State, regs: float) -> int:
    """LDS elements of both tensors as ``assignDerivedParameters`` sizes them for ``1LDSBuffer``."""
    state = st.s
    aligned_a = _lds_elements_aligned(st, "A", regs)
    aligned_b = _lds_elements_aligned(st, "B", regs)
    elements_b = _lds_elements(st, "B", regs)
    if state["PrefetchGlobalRead"]:
        offset_block = aligned_a + aligned_b
        if offset_block > 0:
            offset_block = int(2 ** math.ceil(math.log(offset_block, 2)))
        return offset_block + aligned_a + elements_b
    return aligned_a + elements_b


def _lds_padding_auto(st: _State, indices: Mapping[str, Any], bpe: int) -> None:
    """``ldsPaddingAuto``: resolve ``LdsPad``/``LdsBlockSizePerPad`` -1, drop padding that overflows."""
    state = st.s
    regs = bpe / 4.0
    opt_pad = state["LocalReadVectorWidth"]
    read_regs = state["LocalReadVectorWidth"] * bpe // 4
    auto: dict[str, bool] = {}
    num_bank = 32
    for tc in "AB":
        idx01 = 0 if tc == "A" else 1
        mn = "M" if tc == "A" else "N"
        vw = state[f"VectorWidth{tc}"]
        auto_block = state[f"LdsBlockSizePerPad{tc}"] == -1
        if auto_block:
            state[f"LdsBlockSizePerPad{tc}"] = 0
        auto[f"LdsBlockSizePerPad{tc}"] = auto_block
        auto_pad = state[f"LdsPad{tc}"] == -1
        if auto_pad:
            state[f"LdsPad{tc}"] = 0 if indices[f"TLU{tc}"] and not state[f"UnrollMajorLDS{tc}"] else vw
        auto[f"LdsPad{tc}"] = auto_pad
        if state["EnableMatrixInstruction"]:
            depth_u = state["_DepthULds"]
            stride = 0
            if state[f"UnrollMajorLDS{tc}"]:
                line = depth_u
                stride = line * vw
            else:
                line = state[f"MacroTile{idx01}"]
                if state["MIInputPerThread"] > 1:
                    stride = line * state["LocalReadVectorWidth"]
            if line <= 0 or (line & (line - 1)) != 0:
                stride = 0
                state[f"LdsBlockSizePerPad{tc}"] = 0
            if auto_block and stride > 0:
                state[f"LdsBlockSizePerPad{tc}"] = max(int(2 ** math.ceil(math.log(stride * bpe, 2))), 128)
            if auto_pad:
                mi_width = state[f"MatrixInst{mn}"] * state[f"MatrixInstB{mn}"]
                if tc == "B" and state["MatrixInstBM"] > 1:
                    mi_width = state["MatrixInstN"]
                if not state[f"UnrollMajorLDS{tc}"]:
                    extra = 0
                    if mi_width < num_bank and mi_width * vw < 128 // bpe:
                        extra = (mi_width * vw) % (128 // bpe)
                    if extra:
                        divisor = 128 // bpe
                        state[f"LdsPad{tc}"] = (divisor + extra - stride % divisor) % divisor
                else:
                    pad = opt_pad
                    if mi_width < num_bank and read_regs in (1, 4):
                        pad = opt_pad * (num_bank // mi_width)
                    pad = max(state[f"GlobalLoadVectorWidth{tc}"], pad)
                    if depth_u > 0 and (depth_u & (depth_u - 1)) != 0:
                        divisor = 128 // bpe
                        extra_du = (_roundup_ratio(divisor, depth_u) * depth_u) % divisor
                        pad = min((extra_du + pad) % divisor, (extra_du - pad) % divisor)
                    state[f"LdsPad{tc}"] = pad
            if state[f"DirectToLds{tc}"]:
                state[f"LdsPad{tc}"] = 0
        if state[f"DirectToVgpr{tc}"]:
            state[f"LdsPad{tc}"] = 0
        if state[f"LdsPad{tc}"] == 0:
            state[f"LdsBlockSizePerPad{tc}"] = 0
    for unroll_major in (False, True):
        for tc in "AB":
            elements = _lds_elements_aligned(st, "A", regs) + _lds_elements(st, "B", regs)
            if state["1LDSBuffer"] != 1:
                elements *= 2
            if auto[f"LdsPad{tc}"] and elements * bpe > MAX_LDS_BYTES and state[f"UnrollMajorLDS{tc}"] == unroll_major:
                state[f"LdsPad{tc}"] = 0
                state[f"LdsBlockSizePerPad{tc}"] = 0


def _store_remap_vector_width(st: _State, pt: Mapping[str, Any]) -> None:
    """``StoreRemapVectorWidth: -1``: ds_read_b64-sized remap unless the kernel cannot remap."""
    state = st.s
    if state["StoreRemapVectorWidth"] != -1:
        return
    if not state["EnableMatrixInstruction"]:
        raise st.fail("StoreRemapVectorWidth -1 (auto) needs a MatrixInstruction kernel")
    dest = pt["DestDataType"]
    remap = max(8 // dest.num_bytes, state["MacroTile0"] // state["WavefrontSize"])
    pad = max(remap, state["MIOutputVectorWidth"])
    elements: float = (state["MacroTile0"] + pad) * state["MatrixInstN"] * state["MIWaveGroup"][1]
    if state["_GlobalAccumulation"]:
        elements *= pt["ComputeDataType"].num_bytes / dest.num_bytes
    size = elements * dest.num_bytes
    if (
        not math.log(state["MacroTile0"], 2).is_integer()
        or size > MAX_LDS_BYTES
        or state["SourceSwap"]
        or (state["GlobalSplitU"] > 1 and state["_GlobalAccumulation"] != "MultipleBuffer")
        or (state["MatrixInstBN"] > 1 and state["MatrixInstN"] == 4)
    ):
        state["StoreRemapVectorWidth"] = 0
    else:
        state["StoreRemapVectorWidth"] = remap


__all__ = ["MAX_LDS_BYTES", "assign_derived_parameters", "has_mfma", "has_wmma", "problem_indices"]

"""The port of Tensile's ``assignDerivedParameters`` (tensilekit.model.derive), rule by rule.

Each test pins one derivation that decides a named parameter or a master-library field, with a
case where the rule changes the stored value and one where it leaves it alone. The corpus goldens
(tests/conformance/test_build_master.py) check the whole derivation against AMD's masters.
"""

from __future__ import annotations

from typing import Any

import pytest

from tensilekit.errors import InvalidValue
from tensilekit.model.derive import problem_indices
from tensilekit.model.naming import kernel_state

NN = {"IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3, "UseBeta": True}
TN = {"IndexAssignmentsA": [3, 0, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3, "UseBeta": True}
SINGLE = {**NN, "DataType": 0}
HALF_HPA = {**NN, "DataType": 4, "DestDataType": 4, "ComputeDataType": 0, "HighPrecisionAccumulate": True}
DOUBLE = {**NN, "DataType": 1}
GFX90A, GFX940, GFX942 = (9, 0, 10), (9, 4, 0), (9, 4, 2)

#: A 32x32x2 MFMA kernel, 256 threads as MIWaveGroup [2, 2], MacroTile 128x128 (MIWaveTile [2, 2]).
MFMA = {
    "KernelLanguage": "Assembly",
    "MatrixInstruction": [32, 32, 2, 1],
    "WorkGroup": [64, 4, 1],
    "ThreadTile": [2, 64],
    "MacroTile0": 128,
    "MacroTile1": 128,
    "DepthU": 16,
}
#: A VALU kernel: WorkGroup 16x16, ThreadTile 4x4, MacroTile 64x64.
VALU = {
    "KernelLanguage": "Assembly",
    "WorkGroup": [16, 16, 1],
    "ThreadTile": [4, 4],
    "MacroTile0": 64,
    "MacroTile1": 64,
    "DepthU": 16,
}


def derive(kernel: dict[str, Any], problem_type: dict[str, Any] = SINGLE, isa: Any = GFX90A, **overrides: Any) -> Any:
    return kernel_state({**kernel, "ProblemType": problem_type, **overrides}, isa=isa, force_isa=True)


def test_problem_indices_nn_and_tn() -> None:
    nn = problem_indices(NN)
    assert nn["IndicesFree"] == [0, 1] and nn["IndicesBatch"] == [2] and nn["IndicesSummation"] == [3]
    assert (nn["TLUA"], nn["TLUB"], nn["Tensor0"]) == (True, False, 0)
    tn = problem_indices(TN)
    assert (tn["TLUA"], tn["TLUB"]) == (False, False)
    with pytest.raises(InvalidValue, match="summation"):
        problem_indices({**NN, "IndexAssignmentsB": [1, 2]})


def test_mfma_vector_width_is_kept_when_it_divides_the_wave_tile() -> None:
    # MIWaveTile0 = ThreadTile0 = 2: VW 2 stays (and so AssertMinApproxSize is 3) ...
    kept = derive(MFMA, VectorWidth=2)
    assert kept["MIWaveTile"] == [2, 2] and kept["VectorWidth"] == 2 and kept["AssertMinApproxSize"] == 3
    # ... VW 4 does not divide it: the backward-compatible fallback to 1
    dropped = derive(MFMA, VectorWidth=4)
    assert dropped["VectorWidth"] == 1 and dropped["AssertMinApproxSize"] == 0
    # a store remap (any non-zero value, even the unresolved -1) forces both widths to 1
    remapped = derive(MFMA, VectorWidth=2, StoreRemapVectorWidth=-1)
    assert remapped["VectorWidth"] == 1 and remapped["VectorWidthB"] == 1


def test_mfma_vector_width_b_defaults_by_data_type_not_to_vector_width() -> None:
    assert derive(MFMA, VectorWidth=2)["VectorWidthB"] == 1  # single: one element per register
    assert derive(MFMA, HALF_HPA, VectorWidth=1)["VectorWidthB"] == 2  # half: two per register
    assert derive(MFMA, HALF_HPA, VectorWidthB=1)["VectorWidthB"] == 1  # a stored value is kept


def test_valu_vector_width_b_follows_vector_width() -> None:
    state = derive(VALU, VectorWidth=4, VectorWidthB=1)
    assert state["VectorWidthB"] == 4 and state["AssertMinApproxSize"] == 3


def test_force_store_sc1_auto_resolves_by_architecture() -> None:
    assert derive(MFMA, isa=GFX940)["ForceStoreSC1"] is True
    assert derive(MFMA, isa=GFX942)["ForceStoreSC1"] is False
    assert derive(MFMA, isa=GFX90A, ForceStoreSC1=True)["ForceStoreSC1"] is True


def test_stagger_u_is_cleared_without_buffer_load() -> None:
    cleared = derive(MFMA, BufferLoad=False, StaggerU=32, StaggerUStride=256, StaggerUMapping=1)
    assert (cleared["StaggerU"], cleared["StaggerUStride"], cleared["StaggerUMapping"]) == (0, 0, 0)
    assert cleared["_staggerStrideShift"] == 0
    kept = derive(MFMA, BufferLoad=True, StaggerU=32, StaggerUStride=256)
    assert kept["StaggerU"] == 32 and kept["StaggerUStride"] == 256


@pytest.mark.parametrize(
    ("depth_u", "problem_type", "shift"),
    [(16, SINGLE, 2), (32, HALF_HPA, 2), (48, HALF_HPA, 2), (16, DOUBLE, 1), (8, SINGLE, 3), (64, DOUBLE, None)],
)
def test_stagger_stride_shift_is_the_ceiling_of_log2(
    depth_u: int, problem_type: dict[str, Any], shift: int | None
) -> None:
    # 256 / (48 * 2) = 2.67: ceil(log2) = 2, where floor(log2(ceil(2.67))) would give 1
    kernel = {**MFMA, "DepthU": depth_u}
    state = derive(kernel, problem_type, StaggerU=32, StaggerUStride=256)
    # a stride shorter than one DepthU step (256 < 64 x 8 bytes) is a kernel Tensile rejects
    assert state.get("_staggerStrideShift") == shift


def test_min_k_for_gsu_is_reset_for_gsu_1() -> None:
    assert derive(MFMA, GlobalSplitU=1, MinKForGSU=16)["MinKForGSU"] == 256
    assert derive(MFMA, GlobalSplitU=2, MinKForGSU=16)["MinKForGSU"] == 16


def test_expand_pointer_swap_needs_a_supported_prefetch() -> None:
    assert derive(MFMA, PrefetchGlobalRead=1, ExpandPointerSwap=True)["ExpandPointerSwap"] is True
    assert derive(MFMA, PrefetchGlobalRead=2, ExpandPointerSwap=True)["ExpandPointerSwap"] is True  # single: DTV type
    no_buffer = derive(MFMA, BufferLoad=False, ExpandPointerSwap=True)
    assert no_buffer["ExpandPointerSwap"] == 0


def test_store_vector_width_default() -> None:
    assert derive(VALU, DOUBLE, VectorWidth=2)["StoreVectorWidth"] == 2  # 4 // two registers
    assert derive(VALU, SINGLE, VectorWidth=2)["StoreVectorWidth"] == 4
    assert derive(MFMA, VectorWidth=2, SourceSwap=True, StoreRemapVectorWidth=0)["StoreVectorWidth"] == 2


def test_lds_padding_auto() -> None:
    # NN: A is TLU, B is not; with no unroll-major LDS, A gets no pad and B pads by its width
    state = derive(MFMA, LdsPadA=-1, LdsPadB=-1, LdsBlockSizePerPadA=-1, LdsBlockSizePerPadB=-1)
    assert state["LdsPadA"] == 0 and state["LdsBlockSizePerPadA"] == 0
    # B: padded by VectorWidthB (1); MI32 spans all 32 banks, so no bank-conflict extra and,
    # with one input per thread, no block size
    assert state["LdsPadB"] == 1 and state["LdsBlockSizePerPadB"] == 0
    unroll_major = derive(
        MFMA, LdsPadB=-1, LdsBlockSizePerPadB=-1, UnrollMajorLDSB=True, TransposeLDS=1, LocalReadVectorWidth=2
    )
    assert unroll_major["LdsPadB"] > 0 and unroll_major["LdsBlockSizePerPadB"] >= 128
    # a stored block size without padding is dropped
    assert derive(MFMA, LdsPadB=0, LdsBlockSizePerPadB=128)["LdsBlockSizePerPadB"] == 0


def test_store_remap_auto_width() -> None:
    assert derive(MFMA, StoreRemapVectorWidth=-1)["StoreRemapVectorWidth"] == 2  # ds_read_b64 of floats
    assert derive(MFMA, StoreRemapVectorWidth=-1, SourceSwap=True)["StoreRemapVectorWidth"] == 0
    with pytest.raises(InvalidValue, match="StoreRemapVectorWidth"):
        derive(VALU, StoreRemapVectorWidth=-1)


def test_macro_tile_is_what_work_group_and_thread_tile_make() -> None:
    assert derive(VALU)["NumThreads"] == 256
    # a build refuses a file whose stored tile is not the kernel's ...
    with pytest.raises(InvalidValue, match="MacroTile0 is 999 but WorkGroup, ThreadTile and MatrixInstruction make 64"):
        kernel_state({**VALU, "ProblemType": SINGLE, "MacroTile0": 999}, isa=GFX90A, path="[5][0]")
    # ... merge identity overwrites it with SubGroup x ThreadTile, as Tensile's Solution() does
    lenient = kernel_state({**VALU, "ProblemType": SINGLE, "MacroTile0": 999}, isa=GFX90A, strict=False)
    assert lenient["MacroTile0"] == 64


def test_unroll_major_lds_follows_transpose_lds() -> None:
    assert derive(MFMA, problem_type={**TN, "DataType": 0}, TransposeLDS=1)["UnrollMajorLDSA"] is True
    assert derive(MFMA, TransposeLDS=1)["UnrollMajorLDSA"] is False  # A is TLU in NN


def test_a_kernel_tensile_rejects_keeps_what_was_derived_so_far() -> None:
    # MFMA on an ISA without matrix instructions: reject + return right after the NT flags, so the
    # GlobalSplitU-1 defaults later in the derivation never run
    rejected = derive(MFMA, isa=(9, 0, 6), GlobalSplitU=1, MinKForGSU=16)
    assert rejected["MinKForGSU"] == 16 and rejected["ForceStoreSC1"] is False
    assert derive(MFMA, isa=GFX90A, GlobalSplitU=1, MinKForGSU=16)["MinKForGSU"] == 256


def test_bad_values_name_the_solution() -> None:
    with pytest.raises(InvalidValue) as info:
        kernel_state({**VALU, "ProblemType": SINGLE, "WorkGroup": "16x16"}, path="[5][3]")
    assert "[5][3].WorkGroup" in str(info.value)
    with pytest.raises(InvalidValue) as info:
        kernel_state({**VALU, "ProblemType": SINGLE, "StaggerUStride": "x"}, path="[5][4]")
    assert "[5][4].StaggerUStride" in str(info.value)

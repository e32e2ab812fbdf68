"""Unit tests for tensilekit.model.naming (Tensile kernel naming on raw solution dicts)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tensilekit.errors import InvalidValue, MissingField
from tensilekit.model.naming import (
    MinNaming,
    gfx_isa,
    infer_min_naming,
    kernel_state,
    min_naming,
    parameter_name_abbreviation,
    parameter_value_abbreviation,
    problem_type_name,
    solution_name_full,
    solution_name_min,
)

NT = {"IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [1, 3, 2], "NumIndicesC": 3}
TT = {"IndexAssignmentsA": [3, 0, 2], "IndexAssignmentsB": [1, 3, 2], "NumIndicesC": 3}
NN = {"IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3}


@pytest.mark.parametrize(
    ("problem_type", "expected"),
    [
        ({**NN, "DataType": 0, "DestDataType": 0, "ComputeDataType": 0}, "Cijk_Ailk_Bljk_SB"),
        ({**NN, "DataType": 1, "StridedBatched": False}, "Cijk_Ailk_Bljk_DB_GB"),
        (
            {**TT, "DataType": 4, "DestDataType": 4, "ComputeDataType": 0, "HighPrecisionAccumulate": True},
            "Cijk_Alik_Bjlk_HHS_BH",
        ),
        (
            {
                **TT,
                "DataType": 4,
                "DestDataType": 4,
                "ComputeDataType": 0,
                "HighPrecisionAccumulate": True,
                "Fp16AltImpl": True,
                "Fp16AltImplRound": True,
            },
            "Cijk_Alik_Bjlk_HHS_BHRZ",
        ),
        (
            {
                **NT,
                "DataType": 11,
                "DestDataType": 11,
                "ComputeDataType": 0,
                "HighPrecisionAccumulate": True,
                "StochasticRounding": True,
            },
            "Cijk_Ailk_Bjlk_B8B8S_BH_SR",
        ),
        ({**NN, "DataType": 5, "DestDataType": 6, "HighPrecisionAccumulate": True}, "Cijk_Ailk_Bljk_4xi8II_BH"),
        ({**NN, "DataType": 4, "UseBeta": True}, "Cijk_Ailk_Bljk_HB"),
        # ProblemType.__init__: HHH+HPA and BBB+HPA compute in single (old files name no ComputeDataType)
        ({**NN, "DataType": 4, "HighPrecisionAccumulate": True}, "Cijk_Ailk_Bljk_HHS_BH"),
        ({**NN, "DataType": 7, "HighPrecisionAccumulate": True, "UseBeta": False}, "Cijk_Ailk_Bljk_BBS_H"),
        ({**NN, "DataType": 4, "DestDataType": 0, "HighPrecisionAccumulate": True}, "Cijk_Ailk_Bljk_HSS_BH"),
        # a164ed70 SolutionStructs.py:1116-1166: _M<x> after the flags and _GB, before _SR
        ({**NT, "DataType": 0, "F32XdlMathOp": 9}, "Cijk_Ailk_Bjlk_SB_MX"),
        ({**NT, "DataType": 0, "F32XdlMathOp": 9, "StridedBatched": False}, "Cijk_Ailk_Bjlk_SB_GB_MX"),
        ({**NT, "DataType": 4, "F32XdlMathOp": 9}, "Cijk_Ailk_Bjlk_HB"),
        # Fp16AltImplRound names nothing without Fp16AltImpl
        (
            {
                **TT,
                "DataType": 4,
                "DestDataType": 4,
                "ComputeDataType": 0,
                "HighPrecisionAccumulate": True,
                "Fp16AltImplRound": True,
            },
            "Cijk_Alik_Bjlk_HHS_BH",
        ),
        (
            {
                "IndexAssignmentsA": [3, 0, 2],
                "IndexAssignmentsB": [3, 1, 2],
                "NumIndicesC": 3,
                "DataType": 3,
                "ComplexConjugateA": True,
            },
            "Cijk_AlikC_Bljk_ZB",
        ),
    ],
)
def test_problem_type_name(problem_type: dict[str, Any], expected: str) -> None:
    assert problem_type_name(problem_type) == expected


def test_abbreviations() -> None:
    assert parameter_name_abbreviation("1LDSBuffer") == "1LDSB"
    assert parameter_name_abbreviation("AssertFree0ElementMultiple") == "AF0EM"
    assert parameter_name_abbreviation("MACInstruction") == ""
    assert parameter_name_abbreviation("Kernel") == "K"
    assert parameter_value_abbreviation("ISA", (9, 0, 10)) == "90a"
    assert parameter_value_abbreviation("UseSgprForGRO", -1) == "n1"
    assert parameter_value_abbreviation("BufferLoad", True) == "1"
    assert parameter_value_abbreviation("WorkGroup", [16, 4, 1]) == "16_4_1"
    assert parameter_value_abbreviation("MemoryModifierFormat", "SC0") == "SC"
    assert parameter_value_abbreviation("AssertSizeEqual", {1: 4, 3: 2}) == "14_32"
    assert parameter_value_abbreviation("GlobalReadPerMfma", 0.5) == "0p50"
    assert parameter_value_abbreviation("GlobalReadPerMfma", 2.0) == "2"


def test_gfx_isa() -> None:
    assert gfx_isa("gfx90a") == (9, 0, 10)
    assert gfx_isa("gfx1100") == (11, 0, 0)
    assert gfx_isa("gfx942:xnack-") == (9, 4, 2)
    with pytest.raises(InvalidValue):
        gfx_isa("vega20")


def _sol(**overrides: Any) -> dict[str, Any]:
    sol: dict[str, Any] = {
        "ProblemType": {**NN, "DataType": 0},
        "KernelLanguage": "Assembly",
        "MacroTile0": 64,
        "MacroTile1": 32,
        "DepthU": 16,
        "WorkGroup": [16, 8, 1],
        "ThreadTile": [4, 4],
        "GlobalReadVectorWidth": 4,
        "VectorWidth": 4,
    }
    sol.update(overrides)
    return sol


#: A 16x16x4 MFMA kernel with the same 64x32 macro tile as _sol(): 4 waves as MIWaveGroup [2, 2].
MFMA_16x16 = {"MatrixInstruction": [16, 16, 4, 1], "WorkGroup": [32, 8, 1], "ThreadTile": [2, 16]}


def test_single_kernel_name_has_only_the_prefix_and_k1() -> None:
    state = kernel_state(_sol(**MFMA_16x16), isa=(9, 0, 10))
    assert solution_name_min(state, min_naming([state])) == "Cijk_Ailk_Bljk_SB_MT64x32x16_MI16x16x4x1_SN_K1"


def test_min_naming_lists_only_varying_parameters() -> None:
    a = kernel_state(_sol(StaggerU=32), isa=(9, 0, 10))
    b = kernel_state(_sol(StaggerU=0, MacroTile0=128, ThreadTile=[8, 4]), isa=(9, 0, 10))
    naming = min_naming([a, b])
    # StaggerU 0 also zeroes StaggerUStride (assignDerivedParameters)
    assert naming == MinNaming(frozenset({"Kernel", "StaggerU", "StaggerUStride", "ThreadTile"}))
    assert solution_name_min(b, naming) == "Cijk_Ailk_Bljk_SB_MT128x32x16_SN_K1_SU0_SUS0_TT8_4"


def test_min_naming_uses_python_equality_and_skips_prepended_and_omitted() -> None:
    a = kernel_state(_sol(FractionalLoad=0, Fp16AltImpl=False, MatrixInstruction=[]), isa=(9, 0, 10))
    b = kernel_state(_sol(FractionalLoad=False, Fp16AltImpl=True, DepthU=32, **MFMA_16x16), isa=(9, 0, 10))
    names = min_naming([a, b]).required
    assert "FractionalLoad" not in names and "DepthU" not in names
    assert "Fp16AltImpl" not in names and "MatrixInstruction" not in names
    assert "VectorWidth" in names  # VW 4 does not divide MIWaveTile0 2: Tensile falls back to 1


def test_derivations() -> None:
    mfma = kernel_state(
        _sol(MatrixInstruction=[32, 32, 8, 1], WorkGroup=[64, 4, 1], ThreadTile=[1, 32], MacroTile1=64, VectorWidth=2),
        isa=(9, 4, 2),
    )
    assert mfma["VectorWidth"] == 1 and mfma["VectorWidthB"] == 1
    assert mfma["AssertMinApproxSize"] == 0
    assert mfma["MemoryModifierFormat"] == "SC0"
    assert mfma["MatrixInstM"] == 32 and mfma["LocalReadVectorWidth"] == 4
    valu = kernel_state(_sol(), isa=(9, 0, 10))
    assert valu["AssertMinApproxSize"] == 3 and valu["MemoryModifierFormat"] == "GLC"
    assert valu["GlobalLoadVectorWidthA"] == 4  # 64*16 elements >= 128 threads x GRVW 4
    assert valu["GlobalLoadVectorWidthB"] == 4  # 32*16 elements = 128 x 4
    assert valu["AssertStrideAEqual"] == {0: 1} and valu["StoreVectorWidth"] == 4
    source = kernel_state(_sol(KernelLanguage="Source", WorkGroupMapping=-4, VectorWidth=2), isa=(9, 0, 10))
    assert source["ISA"] == (0, 0, 0) and source["WorkGroupMapping"] == 4 and source["AssertMinApproxSize"] == 2
    gsu = kernel_state(_sol(GlobalSplitU=1, GlobalSplitUAlgorithm="MultipleBuffer"))
    assert gsu["GlobalSplitUAlgorithm"] == "SingleBuffer"


def test_force_isa_takes_the_architecture_over_the_solutions_own_isa() -> None:
    # tile-aware gfx942 logic files copy gfx908 kernels with ISA [9, 0, 8]
    stale = _sol(ISA=[9, 0, 8])
    assert kernel_state(stale, isa=(9, 4, 2))["ISA"] == (9, 0, 8)
    forced = kernel_state(stale, isa=(9, 4, 2), force_isa=True)
    assert forced["ISA"] == (9, 4, 2) and forced["MemoryModifierFormat"] == "SC0"
    source = kernel_state(_sol(ISA=[9, 0, 8], KernelLanguage="Source"), isa=(9, 4, 2), force_isa=True)
    assert source["ISA"] == (0, 0, 0)


def test_infer_min_naming_reads_the_key_set_off_a_name() -> None:
    a = kernel_state(_sol(StaggerU=32), isa=(9, 0, 10))
    b = kernel_state(_sol(StaggerU=0, MacroTile0=128, ThreadTile=[8, 4], WorkGroupMapping=1), isa=(9, 0, 10))
    naming = min_naming([a, b])
    assert infer_min_naming(b, solution_name_min(b, naming)) == naming
    wider = MinNaming(naming.required | {"ISA", "WorkGroup"})
    assert solution_name_min(b, wider) == "Cijk_Ailk_Bljk_SB_MT128x32x16_SN_ISA90a_K1_SU0_SUS0_TT8_4_WG16_8_1_WGM1"
    assert infer_min_naming(b, solution_name_min(b, wider)) == wider
    assert (
        infer_min_naming(b, "Cijk_Ailk_Bljk_SB_MT128x32x16_SN_ISA908_K1_SU0_SUS0_TT8_4_WGM1") is None
    )  # a value differs
    assert infer_min_naming(a, solution_name_min(b, naming)) is None  # the head differs


def test_kernel_state_does_not_modify_its_input() -> None:
    sol = _sol(AssertStrideAEqual={0: 1})
    before = copy.deepcopy(sol)
    state = kernel_state(sol)
    state["AssertStrideAEqual"][1] = 5
    assert sol == before


def test_full_name_fills_defaults() -> None:
    explicit = _sol(StaggerU=32, PrefetchGlobalRead=1, MagicDivAlg=2, SolutionIndex=7, SolutionNameMin="x")
    implicit = _sol(SolutionIndex=3)
    assert solution_name_full(explicit) == solution_name_full(implicit)
    assert solution_name_full(_sol(StaggerU=0)) != solution_name_full(implicit)
    full = solution_name_full(implicit)
    assert full.startswith("Cijk_Ailk_Bljk_SB_MT64x32x16_SN_1LDSB0_") and "_K1" not in full


def test_errors_carry_locations() -> None:
    with pytest.raises(MissingField) as info:
        kernel_state({"KernelLanguage": "Assembly"}, path="[5][2]")
    assert info.value.location is not None and info.value.location.path == "[5][2].ProblemType"
    with pytest.raises(InvalidValue) as info2:
        kernel_state(_sol(DepthU="16"), path="[5][0]")
    assert info2.value.location is not None and info2.value.location.path == "[5][0].DepthU"


def test_custom_kernels_do_not_enter_min_naming() -> None:
    plain = kernel_state(_sol(StaggerU=32), isa=(9, 0, 10))
    custom = kernel_state(_sol(StaggerU=0, CustomKernelName="my_kernel"), isa=(9, 0, 10))
    naming = min_naming([plain, custom])
    assert naming == MinNaming(frozenset({"Kernel"}))
    assert solution_name_min(custom, naming) == "my_kernel"
    assert "StaggerU" in min_naming([plain, kernel_state(_sol(StaggerU=0), isa=(9, 0, 10))])


def test_a_tensilelite_solution_is_sent_to_its_own_derivation() -> None:
    # tensilelite's Solution is another fork (model.derive_tensilelite); the Tensile port refuses it
    with pytest.raises(InvalidValue, match="derive_tensilelite.solution_state") as info:
        kernel_state(_sol(), dialect="tensilelite", path="[5][1]")
    assert info.value.location is not None and info.value.location.path == "[5][1]"

"""The kernel genome: derived values, Tensile spellings per dialect, readers, JSON."""

from __future__ import annotations

import pytest

from tensilekit.errors import InvalidKernel
from tensilekit.search.params import GENE_BLOCKS, GENES, KernelParams, ProblemShape, infer_wave_group
from tensilekit.search.profiles import profile_for

from .search_factory import BASE

DEFAULTS = profile_for("gfx942").default_genes("B")


def test_derived_values_follow_tensile() -> None:
    # (16x16 MFMA) x (4x4 wave tile) x (2x2 waves) = 128x128; WorkGroup [WaveM*MI_M, threads/that, 1]
    assert BASE.wave_tile == (4, 4)
    assert BASE.threads == 256 and BASE.work_group == (32, 8, 1)
    assert BASE.matrix_instruction9() == [16, 16, 16, 1, 1, 4, 4, 2, 2]
    assert BASE.replace(mt0=48).wave_tile == (0, 4)
    blocks = [name for block in GENE_BLOCKS for name in block]
    assert sorted(blocks) == sorted(GENES) and len(blocks) == len(set(blocks))


def test_fork_values_use_each_dialects_keys() -> None:
    lite = BASE.fork_values("tensilelite")
    assert lite["MatrixInstruction"] == [16, 16, 16, 1, 1, 4, 4, 2, 2]
    assert {"GlobalReadVectorWidthA", "GlobalReadVectorWidthB", "WorkGroupMappingXCC"} <= set(lite)
    tensile = BASE.fork_values("tensile")
    assert {"GlobalLoadVectorWidthA", "GlobalLoadVectorWidthB"} <= set(tensile)
    assert "WorkGroupMappingXCC" not in tensile and "GlobalReadVectorWidthA" not in tensile
    with pytest.raises(InvalidKernel, match="no WorkGroupMappingXCC"):
        BASE.replace(wgm_xcc=8).fork_values("tensile")


@pytest.mark.parametrize("dialect", ["tensilelite", "tensile"])
def test_fork_values_read_back(dialect: str) -> None:
    kernel = BASE.replace(gsu=4, stream_k=0, wgm=16, grvw_a=4, prefetch_global_read=1, lds_buffer=1, stagger_u=0)
    assert KernelParams.from_fork_values(kernel.fork_values(dialect), DEFAULTS) == kernel  # type: ignore[arg-type]


def test_from_fork_values_needs_the_nine_number_form() -> None:
    with pytest.raises(InvalidKernel, match="9-number form"):
        KernelParams.from_fork_values({"MatrixInstruction": [16, 16, 16, 1], "DepthU": 64})
    with pytest.raises(InvalidKernel, match="DepthU"):
        KernelParams.from_fork_values({"MatrixInstruction": BASE.matrix_instruction9()})


def test_from_solution_reads_records_with_and_without_wave_groups() -> None:
    record = {
        "MatrixInstruction": [16, 16, 16, 1], "MacroTile0": 16, "MacroTile1": 64, "DepthU": 32, "MIWaveGroup": [1, 4],
        "GlobalSplitU": 1, "GlobalReadVectorWidthA": 2, "GlobalReadVectorWidthB": 8, "1LDSBuffer": -1,
        "WorkGroupMapping": 8, "StreamK": 0, "PrefetchGlobalRead": 2, "StaggerU": 32, "SolutionNameMin": "x",
    }  # fmt: skip
    kernel = KernelParams.from_solution(record, DEFAULTS)
    assert kernel.wave_group == (1, 4) and kernel.grvw_a == 2 and kernel.lds_buffer == 0  # -1 = derive: default
    simulated = {"MatrixInstruction": [32, 32, 8, 1], "MacroTile0": 256, "MacroTile1": 256, "DepthU": 64,
                 "WorkGroup": [64, 4, 1], "GlobalSplitU": 1}  # fmt: skip
    assert KernelParams.from_solution(simulated, DEFAULTS).wave_group == (2, 2)
    with pytest.raises(InvalidKernel, match="solution y has no MatrixInstruction"):
        KernelParams.from_solution({"SolutionNameMin": "y", "MacroTile0": 16})


def test_from_master_solution_reads_size_mapping_and_name() -> None:
    mapping = {"macroTile": [128, 128, 1], "workGroup": [64, 4, 1], "depthU": 16, "globalSplitU": 1,
               "workGroupMapping": 8, "staggerU": 32, "streamK": 0}  # fmt: skip
    name = "Cijk_Ailk_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_GSU1_WG64_4_1"
    kernel = KernelParams.from_master_solution(name, mapping, profile_for("gfx942").default_genes("S"))
    assert (kernel.mi, kernel.mt0, kernel.depth_u, kernel.wave_group, kernel.grvw_a) == (
        (32, 32, 2, 1),
        128,
        16,
        (2, 2),
        4,
    )
    with pytest.raises(InvalidKernel, match="names no matrix instruction"):
        KernelParams.from_master_solution("Cijk_Ailk_Bljk_SB_MT64x64x8_SN", mapping)


def test_infer_wave_group_prefers_square_layouts_that_divide_the_tile() -> None:
    assert infer_wave_group(256, 256, (32, 32, 8, 1), 4) == (2, 2)
    assert infer_wave_group(64, 16, (16, 16, 16, 1), 4) == (4, 1)
    assert infer_wave_group(16, 64, (16, 16, 16, 1), 4) == (1, 4)
    assert infer_wave_group(16, 16, (16, 16, 16, 1), 1) == (1, 1)


def test_json_and_name() -> None:
    assert KernelParams.from_json(BASE.to_json()) == BASE
    assert BASE.name("Cijk_Alik_Bljk_BBS_BH") == (
        "Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB1_GRVWA8_GRVWB8_GSU1_MIWT4_4_PGR2_SK0_SU32_WG32_8_1"
        "_WGM8_WGMXCC1"
    )
    assert BASE < BASE.replace(mt0=256)  # ordered: the search's tie-break


def test_problem_shape() -> None:
    shape = ProblemShape(6144, 8, 2, 4096, "T", "N", 4096, 4096)
    assert shape.size == (6144, 8, 2, 4096) and shape.flops == 2 * 6144 * 8 * 4096 * 2
    assert (shape.contiguous_a, shape.contiguous_b) == (4096, 4096)
    assert (ProblemShape(64, 32, 1, 16).contiguous_a, ProblemShape(64, 32, 1, 16, "N", "T").contiguous_b) == (64, 32)

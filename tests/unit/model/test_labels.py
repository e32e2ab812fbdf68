"""model.labels: the one spelling of a size, a kernel name's short form, a master table's short
label and the settings two kernel names differ in (issue 32 items 5-7)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tensilekit.model.labels import (
    kernel_name_changes,
    matrix_instruction_in_name,
    problem_type_label,
    short_kernel_name,
    size_record_text,
    size_text,
    table_key_text,
)

# a hipBLASLt kernel of docs/remap.md's worked example (gfx942 Half NT), as the build names it
KERNEL = (
    "Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs_MT16x128x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_GRVWA2_GRVWB8_GSU1_"
    "GSUAMB_GSUC0_GSUWGMRR1_K1_LBSPPA128_LBSPPB1024_LPA16_LPB32_LPM0_LRVW4_MIWT1_2_NTA0_NTB0_NTC0_NTD0_NEPBS16_"
    "NLCA1_NLCB1_ONLL1_SS1_SU8_SUM0_SUS256_SPO0_SSO0_SVW1_TLDS0_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VWA1_VWB2_WSGRA0_"
    "WSGRB0_WG16_16_1_WGM8_WGMXCC1_WGMXCCGn1"
)


def test_one_size_spelling_and_its_table_key_order() -> None:
    assert size_text(24, 128, 699, 2048) == "24x128x699 batch 2048"
    assert size_text(24, 128, 699) == "24x128x699"  # batch 1 is not said
    assert size_record_text({"m": 24, "n": 128, "k": 699, "batch": 2048}) == "24x128x699 batch 2048"
    assert table_key_text([24, 128, 2048, 699]) == "24x128x699 batch 2048"  # [M, N, batch, K]
    assert table_key_text([24, 128, 1, 699, 24, 24, 24, 24]) == "[24, 128, 1, 699, 24, 24, 24, 24]"


def test_the_short_form_keeps_the_problem_type_and_the_distinctive_settings() -> None:
    short = short_kernel_name(KERNEL)
    assert short == "Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs_MT16x128x32_MI16x16x1_GSU1_WGM8_…"
    assert len(short) < len(KERNEL) // 3
    for other in ("Cijk_Ailk_Bljk_SB", "_ZN5aiter24bf16gemm_bf16_tn_32x64E", "Cijk_Ailk_Bljk_SB_MT64x64x16"):
        assert short_kernel_name(other) == other  # no setting to drop: whole


@given(st.lists(st.sampled_from(["MT64x64x16", "MI32x32x2x1", "SN", "GSU1", "GSUASB", "WGM8", "MIAV1", "K1"])))
def test_a_short_form_is_the_name_or_its_head_and_kept_settings_in_order(settings: list[str]) -> None:
    name = "_".join(["Cijk_Ailk_Bljk_SB", "MT128x64x16", *settings])
    short = short_kernel_name(name)
    if short == name:
        return
    kept = short.removesuffix("_…").split("_")
    tokens = name.split("_")
    assert kept[:4] == tokens[:4] and all(token in tokens for token in kept)
    assert [token for token in tokens if token in kept] == kept  # the name's order, nothing invented
    assert not any(token in ("SN", "GSUASB", "MIAV1", "K1") for token in kept)


def test_a_retune_names_the_setting_that_changed() -> None:
    retuned = KERNEL.replace("_WGM8_", "_WGM4_")
    assert kernel_name_changes(KERNEL, retuned) == ["WGM8 → WGM4"]
    assert kernel_name_changes(KERNEL, KERNEL) == []
    assert kernel_name_changes("A_MT64x64x8_GSU1", "A_MT64x64x8_GSU2_WGM4") == ["GSU1 → GSU2", "+WGM4"]
    assert kernel_name_changes(None, KERNEL) == []


def test_a_master_table_is_labelled_by_types_transposes_and_processor() -> None:
    path = ["AMDGPU(Processor(gfx942))", "Contraction_l_Ailk_Bjlk_Cijk_Dijk", "And(TypesEqual(Half,…))"]
    assert problem_type_label(path, [KERNEL]) == "HHS_BH_Bias_HAS_SAV_UserArgs NT gfx942"
    assert problem_type_label(["Contraction_l_Alik_Bljk_Cijk_Dijk"], ["Cijk_Alik_Bljk_HHS_BH_MT64x64x8"]) == "HHS_BH TN"
    assert problem_type_label(["library"], []) is None


def test_the_matrix_instruction_of_a_name() -> None:
    assert matrix_instruction_in_name("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN") == "32x32x8x1"
    assert matrix_instruction_in_name("Cijk_Alik_Bljk_SB_MT64x64x8_SN") is None
    assert matrix_instruction_in_name(None) is None

"""PyTorch TunableOp and AITER CSV workloads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tensilekit.errors import InputNotFound, ToolOutputError
from tensilekit.workload.aggregate import split_by_device
from tensilekit.workload.csv_workloads import (
    load_aiter_csv,
    load_tunableop_csv,
    parse_aiter_csv,
    parse_tunableop_csv,
    problem_from_tunableop,
    torch_type,
)

FixturePath = Callable[..., Path]


# --- TunableOp ----------------------------------------------------------------------------


def test_tunableop_untuned_file(fixture_path: FixturePath) -> None:
    untuned = load_tunableop_csv(fixture_path("logs", "tunableop_untuned_llama.csv"))
    assert len(untuned.entries) == 8 and not untuned.tuned and untuned.validators == {}
    qkv = untuned.entries[0].problem
    assert (qkv.trans_a, qkv.trans_b, qkv.m, qkv.n, qkv.k) == ("T", "N", 6144, 8, 4096)
    assert (qkv.lda, qkv.ldb, qkv.ldc) == (4096, 4096, 6144)
    assert qkv.gemm_type == "BBS_TN" and qkv.call_count == 1

    batched = untuned.entries[4].problem
    assert (batched.batch, batched.trans_a, batched.trans_b, batched.lda, batched.ldb) == (256, "N", "N", 128, 2056)

    with_bias = untuned.entries[5].problem
    assert with_bias.bias and with_bias.bias_type == "bf16_r"

    scaled = untuned.entries[6].problem
    assert (scaled.a_type, scaled.b_type, scaled.c_type) == ("f8_fnuz_r", "f8_fnuz_r", "bf16_r")
    assert (scaled.scale_a, scaled.scale_b, scaled.bias) == (2, 2, False)  # rw_1: row-wise (vector) scales

    tf32 = untuned.entries[7].problem
    assert (tf32.compute_type, tf32.gemm_type) == ("c_xf32_r", "XSS_NN")


def test_tunableop_results_file(fixture_path: FixturePath) -> None:
    results = load_tunableop_csv(fixture_path("logs", "tunableop_results_llama.csv"))
    assert results.tuned
    assert results.validators["PT_VERSION"] == "2.6.0"
    assert results.validators["GCN_ARCH_NAME"] == "gfx942:sramecc+:xnack-"
    hipblaslt, rocblas, default, no_time, batched, scaled, old = results.entries
    assert (hipblaslt.solution, hipblaslt.time_ms, hipblaslt.problem.solution_index) == (
        "Gemm_Hipblaslt_302671",
        0.0214,
        302671,
    )
    assert (rocblas.solution, rocblas.problem.solution_index) == ("Gemm_Rocblas_21544", None)
    assert default.solution == "Default" and default.problem.solution_index is None
    assert no_time.time_ms is None and no_time.problem.solution_index == 302540
    assert (batched.problem.batch, batched.problem.a_type) == (32, "f16_r")
    assert scaled.problem.bias and scaled.problem.bias_type == "bf16_r" and scaled.problem.scale_a == 1
    # Old files have no ld part: BLAS defaults apply.
    assert (old.problem.m, old.problem.n, old.problem.k, old.problem.lda, old.problem.ldb) == (
        16384,
        2048,
        96,
        16384,
        2048,
    )
    assert old.line == 12
    workload = results.to_workload()
    assert len(workload.problems) == 7 and workload.metadata["ROCM_VERSION"].startswith("6.3")


@pytest.mark.parametrize(
    ("op", "params", "message"),
    [
        ("GemmTunableOp_BFloat16_TN", "nt_1_2_3_ld_1_2_3", "does not match"),
        ("GemmTunableOp_BFloat16_TC", "tc_1_2_3", "layout"),
        ("GemvTunableOp_BFloat16_TN", "tn_1_2_3", "unknown TunableOp operator"),
        ("GemmTunableOp_BFloat16_TN", "tn_1_2_3_xx_4", "unrecognised part"),
        ("GemmTunableOp_BFloat16_TN", "tn_1_2", "not <layout>"),
        ("ScaledGemmTunableOp_Float8_e4m3fn_TN", "tn_1_2_3", "A, B and output"),
    ],
)
def test_bad_tunableop_pairs(op: str, params: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        problem_from_tunableop(op, params)


def test_tunableop_bad_lines_raise_or_are_skipped() -> None:
    text = "Validator,PT_VERSION,2.6.0\nGemmTunableOp_Half_NN,nn_8_8_8_ld_8_8_8\nnonsense\nGemmTunableOp_Half_NN\n"
    with pytest.raises(ToolOutputError) as caught:
        parse_tunableop_csv(text, file="t.csv")
    assert caught.value.location is not None and caught.value.location.line == 3
    parsed = parse_tunableop_csv(text, file="t.csv", skip_bad_lines=True)
    assert len(parsed.entries) == 1
    assert [(bad.location.line, bad.location.file) for bad in parsed.bad_lines] == [(3, "t.csv"), (4, "t.csv")]


@pytest.mark.parametrize(
    ("name", "hip"),
    [("torch.bfloat16", "bf16_r"), ("BFloat16", "bf16_r"), ("Half", "f16_r"), ("float", "f32_r"),
     ("Float8_e4m3fnuz", "f8_fnuz_r"), ("torch.float8_e4m3fn", "f8_r"), ("Float8_e5m2", "bf8_r"),
     ("c10::complex<float>", "f32_c"), ("torch.int8", "i8_r"), ("bf16_r", "bf16_r")],
)  # fmt: skip
def test_torch_type_names(name: str, hip: str) -> None:
    assert torch_type(name) == hip


# --- AITER --------------------------------------------------------------------------------


def test_aiter_untuned_with_extra_column(fixture_path: FixturePath) -> None:
    workload = load_aiter_csv(fixture_path("logs", "aiter_bf16_untuned_extra_cols.csv"))
    assert len(workload.problems) == 5
    assert workload.warnings == ("1 row(s) repeat an earlier GEMM and were dropped (first at line 7)",)
    decode = workload.problems[0]
    # AITER's M (tokens), N (out features) become hipBLASLt's n and m, weights first (T N).
    assert (decode.m, decode.n, decode.k, decode.trans_a, decode.trans_b) == (6144, 1, 4096, "T", "N")
    assert (decode.lda, decode.ldb, decode.ldc) == (4096, 4096, 6144)
    down = workload.problems[4]
    assert (down.c_type, down.bias, down.bias_type, down.gemm_type) == ("f32_r", True, "f32_r", "BSS_TN")


def test_aiter_with_only_m_n_k_uses_defaults(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "aiter_a8w8_untuned_min_cols.csv")
    workload = load_aiter_csv(path, default_dtype="i8_r")
    assert [(p.m, p.n, p.k) for p in workload.problems] == [
        (1536, 1, 7168),
        (1536, 16, 7168),
        (7168, 16, 2048),
        (7168, 512, 2048),
    ]
    first = workload.problems[0]
    assert (first.a_type, first.c_type, first.compute_type, first.gemm_type) == ("i8_r", "bf16_r", "c_i32_r", "I8BI_TN")
    fp16_out = load_aiter_csv(path, default_dtype="f8_r", default_out_dtype="f16_r").problems[0]
    assert (fp16_out.a_type, fp16_out.d_type) == ("f8_r", "f16_r")


def test_aiter_tuned_rows_name_hipblaslt_solutions(fixture_path: FixturePath) -> None:
    workload = load_aiter_csv(fixture_path("logs", "aiter_bf16_tuned.csv"))
    hipblaslt, asm, other_cus = workload.problems
    assert hipblaslt.solution_index == 302671 and hipblaslt.kernel_name is not None
    assert hipblaslt.kernel_name.endswith("GSU2_ISA942")
    assert asm.solution_index is None and asm.kernel_name is None
    # the cu_num=80 row of the same shape is another GEMM (AITER keys rows by gfx and cu_num)
    assert (hipblaslt.gfx, hipblaslt.cu_num, other_cus.gfx, other_cus.cu_num) == ("gfx942", 304, "gfx942", 80)
    assert (other_cus.m, other_cus.n, other_cus.k) == (hipblaslt.m, hipblaslt.n, hipblaslt.k)
    assert workload.warnings == ()


def test_aiter_rows_of_another_device_are_other_gemms(fixture_path: FixturePath) -> None:
    """ROCm/aiter's model tuned CSVs (``aiter/configs/model_configs/*_tuned_gemm.csv``, columns
    ``gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,…``
    @be9d1578251121ea17436427a7efada190c11d64) carry rows of one shape for several devices; AITER
    looks a row up by ``(gfx, cu_num, M, N, K, …)`` (``aiter/tuned_gemm.py``
    ``get_GEMM_A16W16_config_`` ``set_index`` @0584e04d7f12114adcddc7e14b9f40985f520388)."""
    workload = load_aiter_csv(fixture_path("logs", "aiter_bf16_tuned_two_devices.csv"))
    assert workload.warnings == () and workload.records_read == 6
    assert [(p.gfx, p.cu_num) for p in workload.problems] == [("gfx950", 256)] * 3 + [("gfx942", 80)] * 3
    mi300 = split_by_device(workload.problems, "gfx942", 80)
    assert [p.solution_index for p in mi300.served] == [None, 302671, None]
    assert mi300.others == {"gfx950 with 256 CUs": 3}
    assert mi300.note() == (
        "3 GEMM row(s) are tuned for another device (3 for gfx950 with 256 CUs), not gfx942 with 80 CUs: left out"
    )
    assert len(split_by_device(workload.problems, "gfx942").served) == 3  # CU count unknown: the gfx decides
    assert split_by_device(workload.problems, "gfx942", 304).others == {
        "gfx950 with 256 CUs": 3,
        "gfx942 with 80 CUs": 3,
    }
    assert split_by_device(workload.problems, "gfx90a").served == ()


def test_aiter_rows_that_differ_only_in_bpreshuffle_are_separate_gemms(fixture_path: FixturePath) -> None:
    """AITER keys tuned rows by ``bpreshuffle`` too (``aiter/tuned_gemm.py`` ``get_GEMM_A16W16_config_``
    ``set_index`` @0584e04d7f12114adcddc7e14b9f40985f520388) and hands a pre-shuffled weight to
    hipBLASLt as A in the swizzled order (``gradlib/csrc/hipbsolgemm.cu`` @7096945233e8: matA's
    ``HIPBLASLT_MATRIX_LAYOUT_ORDER`` COL16_4R8): each row is a GEMM of its own, ``swizzle_a``."""
    from tensilekit.selection.workload_problem import epilogue_fields

    workload = load_aiter_csv(fixture_path("logs", "aiter_bf16_tuned_bpreshuffle.csv"))
    assert workload.records_read == 4 and len(workload.problems) == 4
    assert [(p.n, p.swizzle_a, p.solution_index) for p in workload.problems] == [
        (32, False, 500213),
        (32, True, 500977),
        (128, True, None),  # asm: no hipBLASLt solution recorded
        (128, False, 500213),
    ]
    assert workload.problems[1].layout_note == " swizzleA" and workload.problems[0].layout_note == ""
    assert len(workload.warnings) == 1 and "2 GEMM(s) are for a pre-shuffled weight" in workload.warnings[0]
    assert epilogue_fields(workload.problems[1]).swizzle_tensor_a
    assert not epilogue_fields(workload.problems[0]).swizzle_tensor_a
    # before bpreshuffle was keyed, the file read as 2 GEMMs and 2 dropped repeats
    plain = parse_aiter_csv(
        fixture_path("logs", "aiter_bf16_tuned_bpreshuffle.csv")
        .read_text()
        .replace(",True,hipblaslt", ",False,hipblaslt")
    )
    assert len(plain.problems) == 3 and "1 row(s) repeat an earlier GEMM" in plain.warnings[0]


def test_aiter_header_must_name_m_n_k() -> None:
    with pytest.raises(ToolOutputError, match="lacks column") as caught:
        parse_aiter_csv("\n# comment\nM,K,dtype\n1,2,torch.bfloat16\n", file="a.csv")
    assert caught.value.location is not None and caught.value.location.line == 3
    with pytest.raises(ToolOutputError, match="no header"):
        parse_aiter_csv("\n\n", file="a.csv")


def test_aiter_bad_rows_raise_or_are_skipped() -> None:
    text = "M,N,K,dtype\n1,2,3,torch.bfloat16\n1,2\n4,five,6,torch.bfloat16\n7,8,9,\n"
    with pytest.raises(ToolOutputError) as caught:
        parse_aiter_csv(text, file="a.csv")
    assert caught.value.location is not None and caught.value.location.line == 3
    workload = parse_aiter_csv(text, file="a.csv", skip_bad_lines=True)
    assert [bad.location.line for bad in workload.bad_lines] == [3, 4]
    assert [(p.m, p.n, p.k) for p in workload.problems] == [(2, 1, 3), (8, 7, 9)]
    assert workload.problems[1].a_type == "bf16_r"  # empty dtype cell -> default


def test_missing_csv_files(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        load_tunableop_csv(tmp_path / "none.csv")
    with pytest.raises(InputNotFound):
        load_aiter_csv(tmp_path / "none.csv")


def test_aiter_rows_of_every_device_fold_into_one_gemm_per_shape_without_a_device(
    fixture_path: FixturePath,
) -> None:
    workload = load_aiter_csv(fixture_path("logs", "aiter_bf16_tuned_two_devices.csv"))
    folded = split_by_device(workload.problems, None)
    assert [(p.n, p.call_count, p.gfx, p.solution_index) for p in folded.served] == [
        (1, 2, None, None),
        (16, 2, None, None),  # two devices recorded different solutions: none is kept
        (64, 2, None, None),
    ]
    assert folded.note() == (
        "rows tuned for 2 devices (gfx950 with 256 CUs, gfx942 with 80 CUs) are folded into one GEMM per shape: "
        "name the device (its gfx and CU count) to keep only its rows"
    )
    assert split_by_device(workload.problems, "GFX942:xnack-", 80).others == {"gfx950 with 256 CUs": 3}


def test_tunableop_lines_of_one_gemm_fold_when_asked() -> None:
    text = (
        "Validator,PT_VERSION,2.5.0\n"
        "GemmTunableOp_BFloat16_TN,tn_4096_8_4096,Gemm_Hipblaslt_7,0.5\n"
        "GemmTunableOp_BFloat16_TN,tn_1024_8_4096,Default,0.25\n"
        "GemmTunableOp_BFloat16_TN,tn_4096_8_4096,Gemm_Hipblaslt_7,1.5\n"
    )
    lines = parse_tunableop_csv(text, file="r.csv")
    assert [(entry.line, entry.lines, entry.time_ms) for entry in lines.entries] == [
        (2, 1, 0.5),
        (3, 1, 0.25),
        (4, 1, 1.5),
    ]
    folded = parse_tunableop_csv(text, file="r.csv", fold=True)
    assert [(entry.line, entry.lines, entry.time_ms) for entry in folded.entries] == [(2, 2, 1.0), (3, 1, 0.25)]
    workload = folded.to_workload()
    assert [problem.call_count for problem in workload.problems] == [2, 1] and workload.records_read == 3

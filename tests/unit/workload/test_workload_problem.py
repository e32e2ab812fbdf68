"""GemmProblem: BLAS defaults, type-name normalisation, GEMM type names, identity."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tensilekit.workload.problem import (
    GemmProblem,
    compute_input_letters,
    compute_type_for_bench,
    compute_type_for_letters,
    input_type_letters,
    normalize_compute_type,
    tensile_type_letters,
)


@pytest.mark.parametrize(
    ("trans_a", "trans_b", "lda", "ldb"),
    [("N", "N", 64, 16), ("T", "N", 16, 16), ("N", "T", 64, 32), ("T", "T", 16, 32)],
)
def test_leading_dimensions_default_to_stored_rows(trans_a: str, trans_b: str, lda: int, ldb: int) -> None:
    problem = GemmProblem.model_validate(
        {"m": 64, "n": 32, "k": 16, "trans_a": trans_a, "trans_b": trans_b, "a_type": "f16_r"}
    )
    assert (problem.lda, problem.ldb, problem.ldc, problem.ldd) == (lda, ldb, 64, 64)


def test_strides_default_to_ld_times_columns() -> None:
    problem = GemmProblem(m=64, n=32, k=16, batch=4, trans_a="T", a_type="bf16_r")
    assert problem.lda == 16 and problem.stride_a == 16 * 64
    assert problem.ldb == 16 and problem.stride_b == 16 * 32
    assert problem.stride_c == problem.stride_d == 64 * 32


def test_explicit_layout_is_kept() -> None:
    problem = GemmProblem(m=8, n=8, k=8, a_type="f32_r", lda=100, stride_a=0, ldc=10)
    assert (problem.lda, problem.stride_a, problem.ldc, problem.ldd) == (100, 0, 10, 10)
    assert problem.stride_d == 80  # ldd follows ldc, stride follows ldd


def test_type_defaults_follow_a_type() -> None:
    problem = GemmProblem(m=1, n=1, k=1, a_type="BF16_R")
    assert (problem.a_type, problem.b_type, problem.c_type, problem.d_type) == ("bf16_r",) * 4
    assert problem.compute_type == "c_f32_r"
    assert problem.scale_type == "f32_r"
    assert GemmProblem(m=1, n=1, k=1, a_type="f64_r").compute_type == "c_f64_r"
    int8 = GemmProblem(m=1, n=1, k=1, a_type="i8_r", c_type="i32_r")
    assert (int8.compute_type, int8.scale_type, int8.d_type) == ("c_i32_r", "i32_r", "i32_r")


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [("f32_r", "c_f32_r"), ("s", "c_f32_r"), ("x", "c_xf32_r"), ("xf32_r", "c_xf32_r"),
     ("f32_bf16_r", "c_f32_fast_bf16_r"), ("c_f64_r", "c_f64_r"), ("C_F32_R", "c_f32_r")],
)  # fmt: skip
def test_compute_type_spellings_are_normalised(spelling: str, canonical: str) -> None:
    assert normalize_compute_type(spelling) == canonical
    assert GemmProblem(m=1, n=1, k=1, a_type="f16_r", compute_type=spelling).compute_type == canonical


def test_compute_type_for_bench_inverts_the_normalisation() -> None:
    for bench in ("f32_r", "xf32_r", "f64_r", "i32_r", "f32_bf16_r", "f32_f16_r"):
        assert compute_type_for_bench(normalize_compute_type(bench)) == bench


def test_transposes_accept_lower_case_and_booleans_but_not_conjugate() -> None:
    assert (
        GemmProblem.model_validate({"m": 1, "n": 1, "k": 1, "a_type": "f16_r", "trans_a": "t", "trans_b": True}).trans_b
        == "T"
    )
    with pytest.raises(ValidationError, match="trans_a"):
        GemmProblem.model_validate({"m": 1, "n": 1, "k": 1, "a_type": "f16_r", "trans_a": "C"})


def test_scale_modes_accept_bench_letters() -> None:
    problem = GemmProblem.model_validate({"m": 1, "n": 1, "k": 1, "a_type": "f8_r", "scale_a": "s", "scale_b": "v"})
    assert (problem.scale_a, problem.scale_b) == (1, 2)


def test_epilogue_types_are_dropped_when_the_epilogue_is_off() -> None:
    off = GemmProblem.model_validate(
        {
            "m": 1,
            "n": 1,
            "k": 1,
            "a_type": "f16_r",
            "bias_type": "non-supported type",
            "bias_source": "a",
            "aux_type": "f32_r",
        }
    )
    assert (off.bias_type, off.bias_source, off.aux_type) == (None, "d", None)
    on = GemmProblem(m=1, n=1, k=1, a_type="f16_r", bias=True, bias_type="bf16_r", bias_source="b")
    assert (on.bias_type, on.bias_source) == ("bf16_r", "b")


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"a_type": "f16_r", "trans_a": "T"}, "HHS_TN"),
        ({"a_type": "bf16_r"}, "BBS_NN"),
        ({"a_type": "bf16_r", "c_type": "f32_r", "trans_b": "T"}, "BSS_NT"),
        ({"a_type": "f32_r", "compute_type": "c_xf32_r"}, "XSS_NN"),
        ({"a_type": "f8_r", "b_type": "bf8_r", "c_type": "f32_r", "trans_a": "T"}, "F8B8SS_TN"),
        ({"a_type": "f8_fnuz_r", "c_type": "bf16_r", "trans_a": "T"}, "F8NBS_TN"),
        ({"a_type": "i8_r", "c_type": "i32_r", "trans_b": "T"}, "I8II_NT"),
        ({"a_type": "f64_r", "trans_a": "T", "trans_b": "T"}, "DDD_TT"),
        ({"a_type": "f32_c"}, "CCC_NN"),
        ({"a_type": "f4_r", "c_type": "bf16_r"}, "F4BS_NN"),
    ],
)
def test_gemm_type_names(fields: dict[str, str], name: str) -> None:
    assert GemmProblem.model_validate({"m": 16, "n": 16, "k": 16, **fields}).gemm_type == name


def test_unknown_data_types_are_kept_and_named_by_their_stem() -> None:
    assert tensile_type_letters("f6_r") == "F6"
    assert GemmProblem(m=1, n=1, k=1, a_type="f6_r", c_type="bf16_r").gemm_type == "F6BS_NN"
    with pytest.raises(ValidationError, match="not a hipBLASLt data type"):
        GemmProblem(m=1, n=1, k=1, a_type="bf 16")


def test_problem_is_frozen_and_closed() -> None:
    problem = GemmProblem(m=1, n=1, k=1, a_type="f16_r")
    with pytest.raises(ValidationError):
        problem.m = 2  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        GemmProblem.model_validate({"m": 1, "n": 1, "k": 1, "a_type": "f16_r", "iters": 10})
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        GemmProblem(m=0, n=1, k=1, a_type="f16_r")


def test_identity_ignores_call_count_and_solution_and_unbatched_strides() -> None:
    base = GemmProblem(m=64, n=8, k=32, trans_a="T", a_type="bf16_r")
    assert (
        base.identity()
        == base.model_copy(
            update={"call_count": 9, "solution_index": 3, "kernel_name": "k", "stride_a": 0, "stride_d": 0}
        ).identity()
    )
    assert base.identity() != base.model_copy(update={"beta": 1.0}).identity()
    batched = base.model_copy(update={"batch": 2})
    assert batched.identity() != batched.model_copy(update={"stride_a": 0}).identity()


def test_convenience_properties() -> None:
    problem = GemmProblem(m=4, n=3, k=2, batch=5, a_type="f16_r", call_count=7, solution_index=1)
    assert problem.size == (4, 3, 5, 2)
    assert problem.flops == 2 * 4 * 3 * 2 * 5
    assert problem.with_call_count(2).call_count == 2
    assert problem.without_solution().solution_index is None


def test_missing_size_is_the_only_error_reported() -> None:
    with pytest.raises(ValidationError) as caught:
        GemmProblem.model_validate({"n": 1, "k": 1, "a_type": "f16_r"})
    assert [error["loc"] for error in caught.value.errors()] == [("m",)]


@pytest.mark.parametrize(
    ("a_type", "b_type", "letters"),
    [("bf16_r", "bf16_r", "B"), ("f8_r", "bf8_r", "F8B8"), ("bf8_r", "f8_r", "B8F8"),
     ("f8_fnuz_r", "bf8_fnuz_r", "F8B8N"), ("f8_r", "f16_r", "F8H")],
)  # fmt: skip
def test_input_letters_name_both_inputs(a_type: str, b_type: str, letters: str) -> None:
    # Mixed fp8 is one tensilelite DataType (Common.py:450-464 validGEMMTypes @7d9fb68), never A's alone.
    assert input_type_letters(a_type, b_type) == letters


@pytest.mark.parametrize(
    ("a_type", "b_type", "compute_type", "letters"),
    [
        ("f8_r", "f16_r", "c_f32_fast_f16_r", "H"),  # AMD's ..._F8H_HHS_BH logic: DataType H, DataTypeA F8
        ("f16_r", "f8_r", "c_f32_fast_f16_r", "H"),
        ("f8_r", "f16_r", "c_f32_r", "F8"),  # roc2TensileComputeInputType: the smaller input
        ("f8_r", "bf16_r", "c_f32_fast_bf16_r", "B"),
        ("f8_r", "bf8_r", "c_f32_r", "F8B8"),
        ("f8_fnuz_r", "bf8_fnuz_r", "c_f32_r", "F8B8N"),
        ("f16_r", "f16_r", "c_f32_fast_f16_r", "H"),
        ("f16_r", "f16_r", "c_f32_r", "H"),
        ("f32_r", "f32_r", "c_xf32_r", "S"),  # xf32 is F32XdlMathOp, not the DataType
        ("i8_r", "i8_r", "c_i32_r", "I8"),
    ],
)
def test_compute_input_letters_are_hipblaslts_compute_input_type(
    a_type: str, b_type: str, compute_type: str, letters: str
) -> None:
    assert compute_input_letters(a_type, b_type, compute_type) == letters


def test_compute_type_for_letters_inverts_the_compute_input() -> None:
    assert compute_type_for_letters("f8_r", "f16_r", "c_f32_r", "H") == "c_f32_fast_f16_r"
    assert compute_type_for_letters("f8_r", "f16_r", "c_f32_r", "F8") == "c_f32_r"
    assert compute_type_for_letters("f16_r", "f16_r", "c_f32_fast_f16_r", "H") == "c_f32_r"  # no conversion
    assert compute_type_for_letters("f8_r", "f16_r", "c_f32_r", "B8") is None


def test_inline_mixed_fp8_is_the_fast_f16_gemm() -> None:
    from tensilekit.workload.geko_list import parse_inline_gemm

    mixed = parse_inline_gemm("4096 128 1 4096 F8H H S N N")
    assert (mixed.a_type, mixed.b_type, mixed.d_type, mixed.compute_type) == (
        "f8_r", "f16_r", "f16_r", "c_f32_fast_f16_r",
    )  # fmt: skip
    assert parse_inline_gemm("64 64 1 64 F8B8 H S T N").compute_type == "c_f32_r"
    assert parse_inline_gemm("64 64 1 64 B B S T N").compute_type == "c_f32_r"

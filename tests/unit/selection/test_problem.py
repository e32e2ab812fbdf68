"""The GEMM problem model: BLAS defaults, type specifications, and Tensile's view of the problem."""

from __future__ import annotations

import pytest

from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.selection import GemmProblem, Hardware, contraction_problem, parse_type_spec
from tensilekit.selection.problem import SIZE_MAX, hardware_from_query, operation_identifier, problem_from_query

H, S, B = DataType.HALF, DataType.FLOAT, DataType.BFLOAT16


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("S", (S, S, S, S, S)),
        ("Float", (S, S, S, S, S)),
        ("half", (H, H, H, H, H)),
        ("HHS", (H, H, H, H, S)),
        ("HSS", (H, H, S, S, S)),
        ("BS", (B, B, S, S, S)),
        ("I8II", (DataType.INT8, DataType.INT8, DataType.INT32, DataType.INT32, DataType.INT32)),
        ("4xi8II", (DataType.INT8X4, DataType.INT8X4, DataType.INT32, DataType.INT32, DataType.INT32)),
        ("B8B8S", (DataType.BFLOAT8, DataType.BFLOAT8, DataType.BFLOAT8, DataType.BFLOAT8, S)),
        ("Half,Half,Float", (H, H, H, H, S)),
        ("f16_r,f16_r,f32_r,f32_r,f32_r", (H, H, S, S, S)),
    ],
)
def test_type_specifications(text: str, expected: tuple[DataType, ...]) -> None:
    spec = parse_type_spec(text)
    assert (spec.a, spec.b, spec.c, spec.d, spec.compute) == expected


@pytest.mark.parametrize("text", ["", "Q", "HHSX,", "S,S,S,S,S,S"])
def test_bad_type_specifications(text: str) -> None:
    with pytest.raises(SelectionError):
        parse_type_spec(text)


def test_blas_defaults() -> None:
    problem = GemmProblem(m=100, n=30, k=50)
    p = contraction_problem(problem)
    assert (p.lda, p.ldb, p.ldc, p.ldd) == (100, 50, 100, 100)
    assert (p.stride_a, p.stride_b, p.stride_c, p.stride_d) == (5000, 1500, 3000, 3000)
    assert (p.alpha_restriction, p.beta_restriction) == ("One", "Any")  # alpha 1, beta 0
    assert p.workspace_size == SIZE_MAX
    assert (p.kernel_language, p.arithmetic_unit) == ("Any", "Any")
    assert p.op_id == "Contraction_l_Ailk_Bljk_Cijk_Dijk"
    transposed = contraction_problem(GemmProblem(m=100, n=30, k=50, trans_a="t", trans_b="T"))
    assert (transposed.lda, transposed.ldb, transposed.stride_a, transposed.stride_b) == (50, 30, 5000, 1500)
    assert transposed.op_id == "Contraction_l_Alik_Bjlk_Cijk_Dijk"


def test_hpa_follows_rocblas() -> None:
    assert GemmProblem.from_types(1, 1, 1, "HHS").hpa is True
    assert GemmProblem.from_types(1, 1, 1, "H").hpa is False
    assert GemmProblem.from_types(1, 1, 1, "I8II").hpa is True
    assert GemmProblem.from_types(1, 1, 1, "4xi8II").hpa is True  # rocBLAS counts int8x4 as int8
    assert GemmProblem.from_types(1, 1, 1, "HHS", hpa=False).hpa is False


def test_complex_conjugate_operation_identifier() -> None:
    assert operation_identifier("C", "N", True) == "Contraction_l_AlikC_Bljk_Cijk_Dijk"
    assert operation_identifier("C", "N", False) == "Contraction_l_Alik_Bljk_Cijk_Dijk"
    p = contraction_problem(GemmProblem(m=4, n=4, k=4, a_type="ComplexFloat", trans_b="C"))
    assert p.op_id == "Contraction_l_Ailk_BjlkC_Cijk_Dijk"


def test_flop_count_and_arithmetic_intensity() -> None:
    p = contraction_problem(GemmProblem(m=10, n=20, k=30, batch=2, beta=0.0))
    assert p.flop_count == 2 * 10 * 20 * 30 * 2
    # gflop / gbyte over A (10·30·2), B (30·20·2), C (10·20·2) of 4-byte floats
    assert p.arithmetic_intensity == pytest.approx((2 * 12000 * 1e-9) / ((600 + 1200 + 400) * 4 * 1e-9))
    with_beta = contraction_problem(GemmProblem(m=10, n=20, k=30, batch=2, beta=1.0))
    assert with_beta.arithmetic_intensity < p.arithmetic_intensity
    assert contraction_problem(GemmProblem(m=1, n=1, k=1, a_type="Int8x4", c_type="Int32")).flop_count == 8
    assert contraction_problem(GemmProblem(m=2**32, n=2**32, k=2)).flop_count == 0  # size_t wraps


def test_rocblas_k0() -> None:
    problem = GemmProblem(m=64, n=64, k=128, alpha=0.0)
    assert contraction_problem(problem).k == 128
    zeroed = contraction_problem(problem, rocblas_k0=True)
    assert zeroed.k == 0 and zeroed.lda == 64 and zeroed.stride_a == 64 * 128
    assert contraction_problem(GemmProblem(m=64, n=64, k=128, alpha=1.0), rocblas_k0=True).k == 128


def test_size_and_stride_accessors() -> None:
    p = contraction_problem(GemmProblem(m=1, n=2, k=4, batch=3, lda=7))
    assert [p.size(i) for i in range(4)] == [1, 2, 3, 4]
    assert p.stride("a", 0) == 1 and p.stride("a", 1) == 7
    with pytest.raises(SelectionError):
        p.size(4)


def test_queries_from_corpus_lines() -> None:
    line = {"id": "x/q1", "arch": "gfx90a", "cu_count": 104, "is_apu": 0, "m": 8, "n": 9, "k": 10, "batch": 1,
            "trans_a": "N", "trans_b": "T", "a_type": "Half", "b_type": "Half", "c_type": "Half", "d_type": "Half",
            "compute_type": "Float", "hpa": True, "workspace_size": None, "expected": {"index": 1}, "extra": 5}  # fmt: skip
    problem = problem_from_query(line)
    assert problem.hpa and problem.trans_b == "T" and problem.workspace_size is None
    device = hardware_from_query(line)
    assert device == Hardware(arch="gfx90a", cu_count=104, is_apu=False)
    default = Hardware(arch="gfx942", cu_count=304)
    assert hardware_from_query({"m": 1}, default) == default
    with pytest.raises(SelectionError):
        hardware_from_query({"m": 1})
    with pytest.raises(SelectionError):
        problem_from_query({"m": -1, "n": 1, "k": 1})


def test_hardware_normalises_the_processor_name() -> None:
    device = Hardware(arch="GFX90A:sramecc+:xnack-")
    assert device.arch == "gfx90a" and device.wavefront == 64
    assert Hardware(arch="gfx1100").wavefront == 32


def test_hardware_from_query_shares_one_device_per_distinct_device_fields() -> None:
    first = hardware_from_query({"arch": "gfx90a", "cu_count": 104, "m": 5})
    assert hardware_from_query({"arch": "gfx90a", "cu_count": 104, "m": 7}) is first  # frozen: shared
    assert hardware_from_query({"arch": "gfx90a", "cu_count": 110}).cu_count == 110
    assert hardware_from_query({"arch": "gfx90a", "cu_count": 104, "is_apu": True}).is_apu
    default = Hardware(arch="gfx942", cu_count=304)
    assert hardware_from_query({"cu_count": 104}, default) == Hardware(arch="gfx942", cu_count=104)
    assert hardware_from_query({"cu_count": 104}, Hardware(arch="gfx90a")).arch == "gfx90a"


@pytest.mark.parametrize(
    "record",
    [
        {"m": 64, "n": 32, "k": 16, "a_type": "Half", "compute_type": "Float", "alpha": 1, "beta": 0.5},
        {"m": 64, "n": 32, "k": 16, "batch": 3, "trans_b": "t", "lda": 64, "stride_a": 4096, "workspace_size": 0},
        {"m": 7, "n": 0, "k": 2**40, "alpha": -2.5, "beta": 0, "hpa": True, "a_type": "H"},
        {"m": 7, "n": 5, "k": 1, "alpha": True},  # a bool: validated in full
        {"m": 7.0, "n": 5, "k": 1},  # a float size: validated in full (64.0 is accepted as 64)
        {"m": "7", "n": 5, "k": 1},
        {"m": 2**53 + 1, "n": 1, "k": 1, "alpha": 2**60},
    ],
)
def test_problem_from_query_equals_a_full_validation(record: dict[str, object]) -> None:
    for _ in range(2):  # the second line of a kind is copied from the first one's template
        fast = problem_from_query(record)
        full = GemmProblem(**record)
        assert fast == full and fast.model_fields_set == full.model_fields_set
        assert type(fast.alpha) is float and type(fast.beta) is float


@pytest.mark.parametrize(
    "record",
    [{"m": -1, "n": 1, "k": 1}, {"m": 1, "n": 1, "k": 1, "a_type": "Quad"}, {"m": 1, "n": 1, "k": 1, "lda": -3}],
)
def test_problem_from_query_refuses_what_validation_refuses(record: dict[str, object]) -> None:
    for _ in range(2):
        with pytest.raises(SelectionError, match="invalid query|unknown data type"):
            problem_from_query(record)

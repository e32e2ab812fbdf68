"""Why no kernel: the device, problem type or transposes a library lacks (selection/unserved.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit.api import load_for_selection
from tensilekit.data import sample_library_path
from tensilekit.selection import GemmProblem, Hardware, select_solution
from tensilekit.selection.unserved import device_reason, no_kernel_reason, problem_type_reason

GFX90A = Hardware(arch="gfx90a")


@pytest.fixture(scope="module")
def sample() -> object:
    return load_for_selection(sample_library_path())[0]


def test_a_served_problem_has_no_reason(sample: object) -> None:
    problem = GemmProblem(m=1024, n=1024, k=1024)
    assert select_solution(sample, problem, GFX90A).index is not None  # type: ignore[arg-type]
    assert device_reason(sample, GFX90A) is None  # type: ignore[arg-type]
    assert problem_type_reason(sample, problem) is None  # type: ignore[arg-type]


def test_each_kind_of_missing_row_is_named(sample: object) -> None:
    def reason(problem: GemmProblem, hardware: Hardware = GFX90A) -> str:
        assert select_solution(sample, problem, hardware).index is None  # type: ignore[arg-type]
        return no_kernel_reason(sample, problem, hardware)  # type: ignore[arg-type]

    assert reason(GemmProblem(m=64, n=64, k=64), Hardware(arch="gfx942")) == (
        "the library serves gfx90a only; it has no row for gfx942"
    )
    assert reason(GemmProblem(m=64, n=64, k=64, a_type="Double")) == (
        "the library has no kernel for NN Double (these types); it has: NN Float; TN Half HPA"
    )
    assert reason(GemmProblem(m=64, n=64, k=64, trans_b="T")) == (
        "the library has no kernel for NT Float (these transposes); it has: NN Float; TN Half HPA"
    )
    half_no_hpa = GemmProblem.from_types(64, 64, 64, "HHS", trans_a="T", hpa=False)
    assert "(this HPA / batching / rounding variant)" in reason(half_no_hpa)
    assert reason(GemmProblem(m=1, n=2, k=3)).startswith("kernels for this device and problem type exist")


def test_cu_specific_rows_name_their_cu_counts(corpus: Path) -> None:
    library = load_for_selection(corpus / "masters" / "aldebaran_SB_NN_equality.dat")[0]
    assert device_reason(library, Hardware(arch="gfx90a", cu_count=110)) is None  # the generic gfx90a row serves it


def test_a_compute_input_type_no_kernel_takes_is_named(corpus: Path) -> None:
    # tensilelite's TypesEqual carries computeInputType 5th: a GEMM whose types match but whose
    # compute input does not has no kernel, and the reason says so (not "size or alignment")
    import json

    from tensilekit.selection.runtime import HIPBLASLT

    library = load_for_selection(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat")[0]
    record = json.loads((corpus / "select-hipblaslt" / "hipblaslt_gfx942_grid.jsonl").read_text().splitlines()[0])
    device = Hardware(arch="gfx942", cu_count=record["cu_count"])
    served = HIPBLASLT.problem_from_query(record)
    assert select_solution(library, served, device).index is not None
    assert problem_type_reason(library, served) is None
    unserved = HIPBLASLT.problem_from_query({**record, "compute_input_type": "BFloat8"})
    assert select_solution(library, unserved, device).index is None
    reason = no_kernel_reason(library, unserved, device)
    assert "(this compute input type)" in reason and "compute input BFloat8" in reason, reason


def test_a_real_conjugate_transpose_is_the_transpose(sample: object) -> None:
    # the runtime reads trans C of a real type as T (no C in the operation identifier): a reason
    # must not blame the transposes the walk accepts
    problem = GemmProblem(m=64, n=64, k=64, trans_a="C", a_type="Half", compute_type="Float")
    assert select_solution(sample, problem, GFX90A).index is not None  # type: ignore[arg-type]
    assert problem_type_reason(sample, problem) is None  # type: ignore[arg-type]

"""coverage.tune_next: the ranking as GEKO lists (what tune reads) and query lines (what select reads)."""

from __future__ import annotations

import json

import pytest

from tensilekit.api import load_for_selection
from tensilekit.coverage import CoverageGemm, coverage_of, geko_lists, query_lines, type_name
from tensilekit.coverage.tune_next import geko_triple
from tensilekit.data import sample_library_path
from tensilekit.selection import GemmProblem, Hardware, hardware_from_query, problem_from_query
from tensilekit.workload import parse_geko_list, parse_workload

GFX90A = Hardware(arch="gfx90a", cu_count=104)


def gemm(m: int, n: int, k: int, calls: int = 1, **fields: object) -> CoverageGemm:
    problem = GemmProblem(m=m, n=n, k=k, **fields)  # type: ignore[arg-type]
    return CoverageGemm(problem, GFX90A, type_name(problem), calls, None, "w:1")


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    library, loader = load_for_selection(sample_library_path())
    gemms = [
        gemm(4096, 4096, 4096),  # exact: not ranked
        gemm(4096, 8, 4096, calls=500),
        gemm(4000, 4096, 4096, calls=3),
        gemm(512, 8, 4096, calls=2, batch=4),
        gemm(128, 128, 128, a_type="Half", compute_type="Float", trans_a="T"),
        gemm(64, 64, 64, a_type="Int8x4", c_type="Int32", compute_type="Int32"),
    ]
    return coverage_of(library, gemms, loader=loader)


def test_one_geko_list_per_type_that_the_workload_reader_reads_back(report) -> None:  # type: ignore[no-untyped-def]
    lists, notes = geko_lists(report.tune_next)
    by_stem = {item.stem: item for item in lists}
    assert set(by_stem) == {"tune_next_SSS_NN", "tune_next_HHS_TN"}
    assert len(notes) == 1 and "4xi8" in notes[0]  # Int8x4 has no GEKO spelling; it stays in the query lines
    parsed = parse_geko_list(by_stem["tune_next_SSS_NN"].text, file="tune_next_SSS_NN.yaml")
    ranked_sizes = [
        (item.gemm.problem.m, item.gemm.problem.n, item.gemm.problem.batch, item.gemm.problem.k)
        for item in report.tune_next
        if item.gemm.gemm_type == "SSS_NN"
    ]
    assert [problem.size for problem in parsed.problems] == ranked_sizes
    assert {problem.gemm_type for problem in parsed.problems} == {"SSS_NN"}
    assert parsed.metadata == {"ARCH": "gfx90a"}
    half = parse_workload(by_stem["tune_next_HHS_TN"].text).problems[0]
    assert (half.gemm_type, half.m, half.a_type, half.compute_type) == ("HHS_TN", 128, "f16_r", "c_f32_r")


def test_query_lines_are_select_queries_of_the_same_gemms_in_rank_order(report) -> None:  # type: ignore[no-untyped-def]
    records = [json.loads(line) for line in query_lines(report.tune_next).splitlines()]
    assert [record["id"] for record in records] == [f"tune-next/{rank}" for rank in range(1, len(records) + 1)]
    for record, item in zip(records, report.tune_next, strict=True):
        assert problem_from_query(record) == item.gemm.problem
        assert hardware_from_query(record) == item.gemm.hardware
        assert record["calls"] == item.gemm.calls
        assert record["coverage_class"] == item.coverage_class.value
        assert record["current_index"] == item.index


@pytest.mark.parametrize(
    ("fields", "triple"),
    [
        ({"a_type": "BFloat16", "c_type": "BFloat16", "compute_type": "Float"}, ("B", "B", "S")),
        ({"a_type": "Float", "f32_xdl_math_op": "XFloat32"}, ("X", "S", "S")),
        ({"a_type": "Float8_fnuz", "c_type": "Half", "compute_type": "Float"}, ("F8N", "H", "S")),
        ({"a_type": "Int8", "c_type": "Int32", "compute_type": "Int32"}, ("I8", "I", "I")),
    ],
)
def test_geko_triples(fields: dict[str, object], triple: tuple[str, str, str]) -> None:
    assert geko_triple(GemmProblem(m=1, n=1, k=1, **fields)) == triple  # type: ignore[arg-type]

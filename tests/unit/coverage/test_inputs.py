"""coverage.inputs: query lines and workloads into distinct GEMMs, bad lines kept with their number."""

from __future__ import annotations

from typing import Any

import pytest

from tensilekit.coverage import gemms_from_queries, gemms_from_workload, is_served, merge_gemms, type_name
from tensilekit.model.common import DataType
from tensilekit.selection import GemmProblem, Hardware
from tensilekit.selection.served import served_problem_types
from tensilekit.workload import load_workloads

GFX942 = Hardware(arch="gfx942", cu_count=304)


def test_query_lines_merge_identical_gemms_and_keep_bad_lines_with_their_number() -> None:
    text = "\n".join(
        [
            '{"m": 64, "n": 64, "k": 64, "calls": 3, "time_us": 2.0}',
            "",
            "# a comment",
            '{"m": 64, "n": 64, "k": 64, "calls": 2, "time_us": 4.0}',
            "[1, 2, 3]",
            '{"m": -1, "n": 4, "k": 4}',
            '{"m": 8, "n": 8, "k": 8, "calls": 0}',
            "{broken",
            '{"m": 8, "n": 8, "k": 8, "arch": "gfx90a", "a_type": "Half", "trans_a": "T"}',
        ]
    )
    gemms, bad = gemms_from_queries(text, file="w.jsonl", hardware=GFX942)
    assert [line.location.line for line in bad] == [5, 6, 7, 8]
    assert all(line.location.file == "w.jsonl" for line in bad)
    assert "positive integer" in bad[2].message and "JSON" in bad[3].message
    first, second = gemms
    assert (first.calls, first.measured_us, first.origin) == (5, 14.0, "w.jsonl:1")
    assert first.hardware == GFX942 and first.gemm_type == "SSS_NN"
    assert second.hardware == Hardware(arch="gfx90a", cu_count=304) and second.gemm_type == "HHH_TN"


def test_a_time_is_known_after_merging_only_when_every_merged_gemm_had_one() -> None:
    gemms, _ = gemms_from_queries('{"m": 4, "n": 4, "k": 4, "time_us": 1.5}\n{"m": 4, "n": 4, "k": 4}', hardware=GFX942)
    assert len(gemms) == 1 and gemms[0].calls == 2 and gemms[0].measured_us is None
    again = merge_gemms(gemms + gemms)
    assert len(again) == 1 and again[0].calls == 4


def test_a_workload_log_becomes_the_gemms_select_from_log_asks_about(fixture_path: Any) -> None:
    workload, parsed = load_workloads([fixture_path("logs", "llama_mask64_bad_lines.log")], skip_bad_lines=True)
    gemms, skipped = gemms_from_workload(workload.problems, GFX942, origin="llama.log")
    assert skipped == []
    assert len(gemms) == len(workload.problems)
    assert sum(gemm.calls for gemm in gemms) == workload.call_count
    first = gemms[0]
    assert first.gemm_type == workload.problems[0].gemm_type == "BBS_TN"
    assert (first.problem.m, first.problem.a_type, first.problem.trans_a) == (6144, DataType.BFLOAT16, "T")
    assert first.workload == workload.problems[0] and first.measured_us is None
    assert parsed[0].bad_lines  # the readers' own bad lines are the caller's to report


def test_measured_times_are_looked_up_by_problem_identity(fixture_path: Any) -> None:
    workload, _ = load_workloads([fixture_path("logs", "tunableop_results_llama.csv")], skip_bad_lines=True)
    times = {workload.problems[0].identity(): 12.5}
    gemms, _ = gemms_from_workload(workload.problems, GFX942, time_us=times)
    expected = 12.5 * workload.problems[0].call_count
    assert gemms[0].measured_us == expected and all(gemm.measured_us is None for gemm in gemms[1:])


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"a_type": "BFloat16", "c_type": "BFloat16", "compute_type": "Float", "trans_a": "T"}, "BBS_TN"),
        ({"a_type": "Half", "c_type": "Half", "compute_type": "Float"}, "HHS_NN"),
        ({"a_type": "Float", "f32_xdl_math_op": "XFloat32", "trans_b": "T"}, "XSS_NT"),
        ({"a_type": "Float8", "b_type": "BFloat8", "c_type": "Float", "compute_type": "Float"}, "F8B8SS_NN"),
    ],
)
def test_type_names_spell_like_workload_gemm_types(fields: dict[str, Any], name: str) -> None:
    assert type_name(GemmProblem(m=1, n=1, k=1, **fields)) == name


def test_is_served_against_a_libraries_problem_types(fixture_path: Any) -> None:
    from tensilekit.api import load_for_selection

    library, _ = load_for_selection(fixture_path("masters", "coverage_equality_gfx90a.yaml"))
    served = served_problem_types(library)
    assert is_served(GemmProblem(m=8, n=8, k=8), served)
    assert is_served(GemmProblem(m=8, n=8, k=8, a_type="Half", compute_type="Float", trans_a="T"), served)
    assert not is_served(GemmProblem(m=8, n=8, k=8, a_type="Double"), served)
    assert not is_served(GemmProblem(m=8, n=8, k=8, trans_b="T"), served)
    assert is_served(GemmProblem(m=8, n=8, k=8, a_type="Double"), [{}])  # a kernel naming no type serves any


def test_aiter_tuned_files_carry_the_time_of_one_call(fixture_path: Any) -> None:
    from tensilekit.workload import aiter_times

    path = fixture_path("logs", "aiter_bf16_tuned.csv")
    workload, _ = load_workloads([path])
    times = aiter_times(path.read_text(), file=str(path))
    gemms, _ = gemms_from_workload(workload.problems, GFX942, time_us=times)
    assert [(gemm.problem.m, gemm.problem.n, gemm.measured_us) for gemm in gemms] == [
        (6144, 8, 21.4),  # AITER's M, N are hipBLASLt's N, M
        (4096, 8, 16.9),
    ]
    untuned = fixture_path("logs", "aiter_bf16_untuned_extra_cols.csv")
    assert aiter_times(untuned.read_text()) == {}


def test_a_distinct_gemm_costs_coverage_at_most_a_kilobyte(corpus: Any) -> None:
    # issue 25: coverage held ~5 KB per distinct GEMM (a pydantic problem and its hipBLASLt
    # fields each); a GEMM now keeps its sizes over one problem of its type, shared
    import gc
    import json
    import sys
    import tracemalloc

    from tensilekit.library import open_library

    library = open_library(corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat", cu_count=104)
    library.compiled  # noqa: B018 - the library's own memory is not the workload's
    kinds = [("T", "N", "Float"), ("N", "N", "Half"), ("T", "N", "Half")]
    count = 4000
    lines = [
        json.dumps({"m": 7 + i, "n": 3 * i + 1, "k": 64 + i % 97, "trans_a": kinds[i % 3][0], "trans_b": kinds[i % 3][1],
                    "a_type": kinds[i % 3][2], "c_type": kinds[i % 3][2], "compute_type": "Float", "calls": i % 9 + 1})
        for i in range(count)
    ]  # fmt: skip
    text = "\n".join(lines)
    library.coverage(library.coverage_gemms(text)[0][:10])  # first-use caches are not per GEMM
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        gemms, bad = library.coverage_gemms(text)
        report = library.coverage(gemms)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not bad and len(report.gemms) == count
    assert (held - base) / count <= 1024
    # from a log: the logged GEMMs (pydantic, ~3.7 KB each) are not kept alive by coverage
    from tensilekit.workload.problem import GemmProblem as WorkloadGemm

    logged = [
        WorkloadGemm(m=7 + i, n=3 * i + 1, k=64 + i % 97, trans_a="T", a_type="f32_r", compute_type="c_f32_r",
                     call_count=i % 9 + 1)
        for i in range(count)
    ]  # fmt: skip
    tracemalloc.start()
    try:
        from_log, _ = library.coverage_gemms(logged)
        logged_report = library.coverage(from_log)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(logged_report.gemms) == count and held / count <= 1024
    assert [gemm.workload for gemm in from_log[:20]] == logged[:20]
    references = sys.getrefcount(logged[-1])
    assert references == 2  # the list's and getrefcount's argument: coverage keeps none
    # the compact GEMM gives back the very problem it was built from
    again = [library.problem_from_query(json.loads(line)) for line in lines[:50]]
    assert [gemm.problem for gemm in gemms[:50]] == again
    assert merge_gemms(gemms[:50] + gemms[:50])[0].calls == 2 * gemms[0].calls

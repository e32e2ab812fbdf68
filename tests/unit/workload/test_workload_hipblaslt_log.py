"""hipBLASLt logs: bench lines (mask 32), profile (64) and extended profile (128)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tensilekit.errors import InputNotFound, ToolOutputError
from tensilekit.workload import aggregate_problems
from tensilekit.workload.hipblaslt_log import (
    LogLineKind,
    load_hipblaslt_log,
    parse_bench_line,
    parse_hipblaslt_log,
    parse_profile_line,
    read_flow_mapping,
)

FixturePath = Callable[..., Path]


# --- flow mappings ------------------------------------------------------------------------


def test_flow_mapping_accepts_printer_and_reemitted_spacing() -> None:
    assert read_flow_mapping("- { function: matmul, M: 16 }") == {"function": "matmul", "M": "16"}
    assert read_flow_mapping("-{function: matmul,M: 16}") == {"function": "matmul", "M": "16"}
    assert read_flow_mapping("{a: 'x, y', b: \"q\"}") == {"a": "x, y", "b": "q"}


def test_flow_mapping_keeps_empty_values() -> None:
    # Some hipBLASLt versions print "key: ," for empty values; strict YAML rejects the line.
    assert read_flow_mapping("- { a: , b: 2, , c: 3 }") == {"a": "", "b": "2", "c": "3"}


@pytest.mark.parametrize("line", ["- { function: matmul, M: 16", "M: 16", "- { a: (1, }", "- { just text }"])
def test_flow_mapping_rejects_broken_lines(line: str) -> None:
    with pytest.raises(ValueError):
        read_flow_mapping(line)


# --- single lines -------------------------------------------------------------------------


def test_profile_line_from_the_geko_readme(corpus: Path) -> None:
    line = (corpus / "samples/hipblaslt-newer-docs/geko_readme__profile_log_line_mask64.yaml").read_text()
    problem = parse_profile_line(line)
    assert (problem.m, problem.n, problem.k, problem.batch) == (16032, 109, 16384, 1)
    assert (problem.trans_a, problem.trans_b) == ("T", "N")
    assert (problem.lda, problem.ldb, problem.ldc, problem.ldd) == (16384, 16384, 16032, 16032)
    assert (problem.a_type, problem.d_type, problem.compute_type, problem.scale_type) == (
        "bf16_r", "bf16_r", "c_f32_r", "f32_r"
    )  # fmt: skip
    assert problem.bias is False and problem.bias_type is None  # bias_type printed, but no bias
    assert problem.call_count == 1
    assert problem.gemm_type == "BBS_TN"


def test_bench_line_from_the_offline_tuning_doc(corpus: Path) -> None:
    line = (corpus / "samples/hipblaslt-newer-docs/offline_tuning_doc__bench_log_line.txt").read_text()
    [problem] = parse_bench_line(line)
    assert (problem.m, problem.n, problem.k) == (1024, 512, 1024)
    assert (problem.alpha, problem.beta) == (1.0, 1.0)
    assert problem.compute_type == "c_f32_r"  # printed as the bench spelling f32_r
    assert problem.solution_index == 56073  # --algo_method index --solution_index 56073
    assert problem.gemm_type == "HHS_NN"


def test_bench_line_flag_without_value_and_negative_numbers() -> None:
    line = (
        "hipblaslt-bench --api_method c -m 32 -n 16 -k 8 --alpha -1.5 --beta 0 --transA T --transB N "
        "--batch_count 1 --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --bias_type --compute_type f32_r"
    )
    [problem] = parse_bench_line(line)
    assert problem.alpha == -1.5
    assert problem.bias_type is None
    assert (problem.lda, problem.ldb) == (8, 8)  # absent -> BLAS defaults


def test_bench_line_precision_scales_and_heuristic_solution_index() -> None:
    line = (
        "hipblaslt-bench -m 64 -n 64 -k 64 -r f8_r --c_type bf16_r --d_type bf16_r --scaleA s --scaleB v "
        "--compute_type f32_r --algo_method heuristic --solution_index 5"
    )
    [problem] = parse_bench_line(line)
    assert (problem.a_type, problem.b_type, problem.c_type) == ("f8_r", "f8_r", "bf16_r")
    assert (problem.scale_a, problem.scale_b) == (1, 2)
    assert problem.solution_index is None  # only kept with --algo_method index


def test_grouped_bench_line_gives_one_problem_per_group() -> None:
    line = (
        "hipblaslt-bench --api_method cpp --grouped_gemm -m 128 -n 64 -k 32 --lda 128 --ldb 32 --ldc 128 --ldd 128 "
        "--stride_a 4096 --stride_b 2048 --stride_c 8192 --stride_d 8192 -m 256 -n 64 -k 32 --lda 256 --ldb 32 "
        "--ldc 256 --ldd 256 --stride_a 8192 --stride_b 2048 --stride_c 16384 --stride_d 16384 --alpha 1.000000 "
        "--beta 0.000000 --transA N --transB N --batch_count 1 --a_type bf16_r --b_type bf16_r --c_type bf16_r "
        "--d_type bf16_r --scale_type f32_r --bias_type f32_r --compute_type f32_r"
    )
    first, second = parse_bench_line(line)
    assert (first.m, second.m) == (128, 256)
    assert first.grouped_gemm and second.grouped_gemm
    assert second.a_type == "bf16_r" and second.ldc == 256


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("hipblaslt-bench -n 1 -k 1 --a_type f16_r", "missing -m"),
        ("hipblaslt-bench -m 1 -n 1 -k 1", "missing --a_type"),
        ("hipblaslt-bench -m x -n 1 -k 1 --a_type f16_r", "not an integer"),
        ("hipblaslt-bench -m 1 stray -n 1", "unexpected token"),
        ("rocblas-bench -f gemm", "not a hipblaslt-bench"),
    ],
)
def test_bad_bench_lines(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_bench_line(line)


def test_profile_line_of_another_function_is_refused() -> None:
    with pytest.raises(ValueError, match="not a matmul"):
        parse_profile_line("- { function: gemm_ex, M: 1, N: 1, K: 1, a_type: f16_r }")


# --- whole logs ---------------------------------------------------------------------------


def test_llama_mask64_log(fixture_path: FixturePath) -> None:
    log = load_hipblaslt_log(fixture_path("logs", "llama3_8b_bf16_mask64.log"))
    assert log.kinds == {LogLineKind.PROFILE}
    # 15 lines; qkv's decode GEMM is logged by two processes (lines 1 and 14): folded into one record
    assert len(log.records) == 14 and log.lines_read == 15 and not log.bad_lines and log.ignored_lines == 0
    assert (log.records[0].line, log.records[0].lines) == (1, 2)
    scores = log.records[10].problem
    assert log.records[10].line == 11
    assert (scores.m, scores.n, scores.k, scores.batch) == (2048, 2048, 128, 32)
    assert (scores.stride_a, scores.stride_b, scores.stride_c) == (262144, 262144, 4194304)

    workload = log.to_workload()
    assert workload.warnings == () and workload.metadata == {"line_kind": "profile"}
    merged = aggregate_problems(workload.problems)
    assert len(merged.problems) == 14
    qkv_decode = merged.problems[0]
    assert (qkv_decode.m, qkv_decode.n, qkv_decode.k, qkv_decode.call_count) == (6144, 8, 4096, 2 * 32 * 127)
    groups = {group.name: group for group in merged.groups()}
    assert sorted(groups) == ["BBS_NN", "BBS_TN"]
    assert len(groups["BBS_TN"].problems) == 12 and len(groups["BBS_NN"].problems) == 2
    assert groups["BBS_NN"].call_count == 64
    # decode: 4 projections x 32 layers x 127 steps (qkv logged by two processes), lm_head per step;
    # prefill: 4 projections x 32 layers, lm_head once; attention: 2 batched GEMMs x 32 layers, twice.
    assert merged.call_count == workload.call_count == 32 * 127 * 5 + 127 + 32 * 4 + 1 + 32 * 4


def test_mask32_log_counts_one_call_per_line(fixture_path: FixturePath) -> None:
    log = load_hipblaslt_log(fixture_path("logs", "gpt_decode_f16_mask32.log"))
    assert log.kinds == {LogLineKind.BENCH} and log.lines_read == 18
    # folded while read: one record per GEMM, its first line and how many lines logged it
    assert [(record.line, record.lines) for record in log.records] == [(1, 4), (2, 4), (3, 4), (4, 4), (17, 2)]
    assert log.to_workload().records_read == 18
    merged = aggregate_problems(log.to_workload().problems)
    assert [problem.call_count for problem in merged.problems] == [4, 4, 4, 4, 2]
    qkv, _, fc1, _, tuned = merged.problems
    assert qkv.bias and qkv.bias_type == "f16_r" and qkv.bias_source == "d"
    assert fc1.activation == "gelu"
    assert tuned.solution_index == 73511 and tuned.beta == 1.0


def test_mask128_log_keeps_solutions(fixture_path: FixturePath) -> None:
    log = load_hipblaslt_log(fixture_path("logs", "deepseek_fp8_mask128.log"))
    assert log.kinds == {LogLineKind.EXTENDED}
    first = log.records[0].problem
    assert first.solution_index == 81212
    assert first.kernel_name is not None and first.kernel_name == first.solution_name
    assert first.kernel_name.startswith("Cijk_Alik_Bljk_F8BS_BH")
    assert (first.a_type, first.c_type, first.scale_a, first.scale_b) == ("f8_r", "bf16_r", 1, 1)
    assert log.records[2].problem.scale_a == 2
    assert {record.problem.gemm_type for record in log.records} == {"F8BS_TN", "BBS_TN"}


def test_mixed_masks_count_each_call_once(fixture_path: FixturePath) -> None:
    log = load_hipblaslt_log(fixture_path("logs", "qwen_bf16_mask224.log"))
    assert log.kinds == set(LogLineKind)
    assert log.ignored_lines == 2  # an Info line and a tuning-cache notice
    profile = log.to_workload()
    assert [problem.call_count for problem in profile.problems] == [2, 3, 1]
    assert "bench, extended" in profile.warnings[0]
    # The per-call bench lines, aggregated, agree with the profile dump's counts.
    bench = aggregate_problems(log.to_workload(prefer=[LogLineKind.BENCH]).problems)
    assert [(p.m, p.call_count) for p in bench.problems] == [(p.m, p.call_count) for p in profile.problems]
    extended = log.to_workload(prefer=[LogLineKind.EXTENDED])
    assert [p.solution_index for p in extended.problems] == [300104, 300233, 300012]


def test_bad_line_raises_with_file_and_line(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "llama_mask64_bad_lines.log")
    with pytest.raises(ToolOutputError) as caught:
        load_hipblaslt_log(path)
    error = caught.value
    assert error.location is not None
    assert (error.location.file, error.location.line) == (str(path), 3)
    assert str(error).startswith(f"{path}:3: bad profile line")


def test_bad_lines_are_reported_when_skipping(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "llama_mask64_bad_lines.log")
    log = load_hipblaslt_log(path, skip_bad_lines=True)
    assert [bad.location.line for bad in log.bad_lines] == [3, 4, 6]
    assert "not a hipBLASLt bench or profile line" in log.bad_lines[1].message
    assert "M: not an integer: 'four-thousand'" in log.bad_lines[2].message
    assert log.bad_lines[1].text.startswith("Loading safetensors")
    assert str(log.bad_lines[0]).startswith(f"{path}:3: ")
    assert [record.line for record in log.records] == [1, 2, 5, 7]
    assert log.records[2].problem.bias_type is None  # "bias_type: ," tolerated
    assert len(log.to_workload().bad_lines) == 3


def test_parse_streams_from_a_file_object(fixture_path: FixturePath) -> None:
    with fixture_path("logs", "llama3_8b_bf16_mask64.log").open() as stream:
        log = parse_hipblaslt_log(stream, file="llama.log")
    assert log.lines_read == 15 and len(log.records) == 14 and log.source == "llama.log"


def test_text_without_a_file_reports_input() -> None:
    with pytest.raises(ToolOutputError, match=r"^<input>:2: not a hipBLASLt"):
        parse_hipblaslt_log("\nsomething else\n")


def test_missing_log_file(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        load_hipblaslt_log(tmp_path / "absent.log")


def test_empty_log_is_an_empty_workload() -> None:
    log = parse_hipblaslt_log("# nothing logged\n\n")
    assert log.records == () and log.to_workload().problems == ()


def test_unreadable_lines_past_the_first_thousand_are_counted_in_one_entry() -> None:
    from tensilekit.workload.records import BAD_LINES_LISTED

    log = parse_hipblaslt_log("garbage\n" * (BAD_LINES_LISTED + 5), file="x.log", skip_bad_lines=True)
    assert len(log.bad_lines) == BAD_LINES_LISTED + 1
    summary = log.bad_lines[-1]
    assert summary.location.line == BAD_LINES_LISTED + 1
    assert summary.message.endswith(f"5 unreadable line(s) from here on, {BAD_LINES_LISTED} listed before")

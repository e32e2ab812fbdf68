"""Format detection and loading any workload through one call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tensilekit.errors import InputNotFound, UnsupportedFormat
from tensilekit.workload import WorkloadFormat, detect_workload_format, load_workload, load_workloads, parse_workload

FixturePath = Callable[..., Path]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("llama3_8b_bf16_mask64.log", WorkloadFormat.HIPBLASLT_LOG),
        ("gpt_decode_f16_mask32.log", WorkloadFormat.HIPBLASLT_LOG),
        ("deepseek_fp8_mask128.log", WorkloadFormat.HIPBLASLT_LOG),
        ("qwen_bf16_mask224.log", WorkloadFormat.HIPBLASLT_LOG),
        ("tunableop_untuned_llama.csv", WorkloadFormat.TUNABLEOP),
        ("tunableop_results_llama.csv", WorkloadFormat.TUNABLEOP),
        ("aiter_bf16_untuned_extra_cols.csv", WorkloadFormat.AITER),
        ("aiter_a8w8_untuned_min_cols.csv", WorkloadFormat.AITER),
        ("aiter_bf16_tuned.csv", WorkloadFormat.AITER),
        ("geko_list_bbs_nt.yaml", WorkloadFormat.GEKO_LIST),
    ],
)
def test_fixture_formats_are_detected(fixture_path: FixturePath, name: str, expected: WorkloadFormat) -> None:
    path = fixture_path("logs", name)
    assert detect_workload_format(path.read_text()) is expected
    workload = load_workload(path)
    assert workload.format is expected and workload.problems


def test_corpus_profile_line_is_a_log(corpus: Path) -> None:
    text = (corpus / "samples/hipblaslt-newer-docs/geko_readme__profile_log_line_mask64.yaml").read_text()
    assert detect_workload_format(text) is WorkloadFormat.HIPBLASLT_LOG


def test_unknown_content() -> None:
    assert detect_workload_format("") is None
    assert detect_workload_format("hello, world\n") is None
    with pytest.raises(UnsupportedFormat, match="cannot tell"):
        parse_workload("hello, world\n", file="x.txt")


def test_explicit_format_overrides_detection() -> None:
    workload = parse_workload("M,N,K\n8,16,32\n", format=WorkloadFormat.AITER)
    assert (workload.problems[0].m, workload.problems[0].n) == (16, 8)
    with pytest.raises(UnsupportedFormat, match="inline"):
        parse_workload("1 1 1 1 B B S N N", format=WorkloadFormat.INLINE)


def test_files_of_different_formats_merge(fixture_path: FixturePath) -> None:
    log = fixture_path("logs", "llama3_8b_bf16_mask64.log")
    untuned = fixture_path("logs", "tunableop_untuned_llama.csv")
    merged, parsed = load_workloads([log, untuned])
    assert [item.format for item in parsed] == [WorkloadFormat.HIPBLASLT_LOG, WorkloadFormat.TUNABLEOP]
    # TunableOp's four decode projections and its batched attention GEMM are GEMMs of the log:
    # they merge, adding one call each.
    assert len(merged.problems) == 14 + 8 - 5
    assert merged.problems[0].call_count == 2 * 32 * 127 + 1
    assert merged.call_count == parsed[0].call_count + parsed[1].call_count


def test_file_warnings_are_prefixed(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "qwen_bf16_mask224.log")
    merged, _ = load_workloads([path])
    assert merged.warnings[0].startswith(f"{path}: log has bench, extended lines")


def test_missing_workload_file(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        load_workload(tmp_path / "absent.log")

"""CLI: ``tensilekit select`` on hipBLASLt masters — runtime detection and override, the explained
GridBased walk, hipBLASLt compute types, ``--top`` listing, ``--from-log`` with an epilogue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli

pytestmark = pytest.mark.corpus

GRID_QUERY = [
    "1500", "128", "1536", "--batch", "4", "--type", "Half,Float8,Half,Half,Float", "--compute-type", "f32_fast_f16",
    "--cu-count", "304", "--workspace", "33554432",
]  # fmt: skip


def _select(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["select", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def _master(corpus: Path, name: str) -> str:
    return str(corpus / "masters-hipblaslt" / f"hipblaslt_{name}.dat")


def _json(output: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(output[output.index("{") :])
    return record


def test_grid_query_folds_batch_and_lists_find_top_solutions(corpus: Path) -> None:
    library = _master(corpus, "gfx942_grid")
    code, output = _select(*GRID_QUERY, "--library", library, "--explain", "--top", "4")
    assert code == 0, output
    assert "runtime\thipBLASLt 7d9fb683 (tensilelite heuristic: findTopSolutions(1))" in output  # piped: tab-separated
    assert "batch folded into the key: [1500, 128, 4, 1536] → [6000, 128, 1, 1536]" in output
    assert "selected\tindex 329" in output
    code, output = _select(*GRID_QUERY, "--library", library, "--top", "4", "--json")
    record = _json(output)
    assert (record["index"], record["top"], record["fallback"]) == (329, [329, 455, 501, 532], [])
    assert {c["source"] for c in record["alternatives"]} == {"findTopSolutions"}


def test_runtime_override_changes_the_answer(corpus: Path) -> None:
    library = _master(corpus, "gfx942_grid")
    lite = _json(_select(*GRID_QUERY, "--library", library, "--json", "--runtime", "hipblaslt")[1])
    assert lite["index"] == _json(_select(*GRID_QUERY, "--library", library, "--json")[1])["index"] == 329
    # Tensile's rules: no batch folding, and hipBLASLt's compute type no longer applies
    code, output = _select(*GRID_QUERY[:-4], "--library", library, "--json", "--runtime", "tensile")
    assert code == 0, output
    assert _json(output)["index"] != 329


def test_queries_report_a_bad_compute_type_on_its_line(corpus: Path, tmp_path: Path) -> None:
    good = {"id": "ok", "arch": "gfx942", "cu_count": 304, "m": 6144, "n": 128, "k": 1536, "a_type": "Half",
            "b_type": "Float8", "c_type": "Half", "d_type": "Half", "compute_type": "f32_fast_f16",
            "workspace_size": 33554432}  # fmt: skip
    bad = {**good, "id": "bad", "compute_type": "f33"}
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    code, output = _select("--library", _master(corpus, "gfx942_grid"), "--queries", str(queries), "--json")
    assert code == 3, output  # an errored line makes the exit code non-zero; the other lines are still answered
    first, second = (json.loads(line) for line in output.splitlines() if line.startswith("{"))
    assert first["index"] == 329
    assert second["index"] is None and "q.jsonl:2" in second["error"] and "f33" in second["error"]


def _log_line(bias: bool, bias_type: str) -> str:
    return (
        "- { function: matmul, M: 128, N: 2048, K: 708, lda: 708, ldb: 708, ldc: 128, ldd: 128, stride_a: 0, "
        "stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, "
        "scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, use_e: false, "
        f"bias_vector: {str(bias).lower()}, bias_source: d, a_type: f16_r, b_type: f16_r, c_type: f16_r, "
        f"d_type: f16_r, scale_type: f32_r, bias_type: {bias_type}, compute_type: c_f32_r, "
        "activation_type: gelu, flush: false, rotating: 0, cold_iters: 0, iters: 0, call_count: 3 }\n"
    )


def test_from_log_answers_a_bias_gemm_with_its_bias(corpus: Path, tmp_path: Path) -> None:
    log = tmp_path / "hipblaslt.log"
    log.write_text(_log_line(False, "f32_r") + _log_line(True, "bf16_r") + _log_line(True, "f16_r"))
    code, output = _select("--from-log", str(log), "--library", _master(corpus, "gfx942_equality"),
                           "--cu-count", "304", "--json")  # fmt: skip
    assert code == 0, output
    plain, bf16_bias, f16_bias = (json.loads(line) for line in output.splitlines() if line.startswith("{"))
    assert plain["index"] is not None and f16_bias["index"] is not None
    assert bf16_bias["index"] is None  # no kernel's BiasDataTypeWhiteList holds BFloat16


def test_diff_from_log_builds_each_gemm_as_the_librarys_runtime_does(corpus: Path, tmp_path: Path) -> None:
    """``diff --from-log`` answers a bias GEMM with its bias on a hipBLASLt master, as ``select --from-log`` does."""
    from pathlib import Path as _Path

    from tensilekit.api import load_for_selection
    from tensilekit.cli.commands.diff import _log_queries
    from tensilekit.merge.diff import runtime_selector

    log = tmp_path / "hipblaslt.log"
    log.write_text(_log_line(False, "f32_r") + _log_line(True, "bf16_r") + _log_line(True, "f16_r"))
    library, _ = load_for_selection(_Path(_master(corpus, "gfx942_equality")))
    select = runtime_selector({"arch": "gfx942", "cu_count": 304})
    answers = [select(library, record) for record in _log_queries(log, strict=True, arch="gfx942", cu_count=304)]
    code, output = _select("--from-log", str(log), "--library", _master(corpus, "gfx942_equality"),
                           "--cu-count", "304", "--json")  # fmt: skip
    expected = [json.loads(line)["index"] for line in output.splitlines() if line.startswith("{")]
    assert [answer.index for answer in answers] == expected
    assert answers[1].index is None and answers[0].index is not None  # no kernel takes a BFloat16 bias


def test_from_log_and_coverage_leave_out_aiter_rows_of_another_device(corpus: Path, tmp_path: Path) -> None:
    """An AITER tuned CSV with rows of one shape for gfx950/256 CUs and gfx942/80 CUs (the form of
    ROCm/aiter's ``aiter/configs/model_configs/*_tuned_gemm.csv``; AITER keys rows by ``gfx`` and
    ``cu_num``, ``aiter/tuned_gemm.py`` ``get_GEMM_A16W16_config_`` @0584e04d7f12114adcddc7e14b9f40985f520388):
    on a gfx942 library with 80 CUs every gfx942 row is answered, the gfx950 rows are named in one line."""
    aiter = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "aiter_bf16_tuned_two_devices.csv"
    library = _master(corpus, "gfx942_equality")
    result = CliRunner().invoke(cli, ["select", "--from-log", str(aiter), "--library", library, "--cu-count", "80",
                                      "--json"])  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    answers = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [(answer["m"], answer["n"]) for answer in answers] == [(1536, 1), (1536, 16), (7168, 64)]
    note = "3 GEMM row(s) are tuned for another device (3 for gfx950 with 256 CUs), not gfx942 with 80 CUs: left out"
    assert result.stderr.count(note) == 1 and "repeat an earlier GEMM" not in result.stderr
    covered = CliRunner().invoke(cli, ["coverage", str(aiter), "--library", library, "--cu-count", "80", "--json"])
    # this master serves no bf16 GEMM: coverage says so (exit 1), after the one line on the gfx950 rows
    assert covered.exit_code == 1 and "serves none of the workload's problem types (BBS_TN)" in covered.output
    assert covered.output.count(note) == 1 and "repeat an earlier GEMM" not in covered.output

"""The first hour of a real user (issue #16): each documented exit code on a real case, no silent
empty answers, one rule per input kind, type names, output for pipes, JSON errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli, hoist_debug
from tensilekit.data import sample_library_path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SAMPLE = str(sample_library_path())
BAD_LINES_LOG = str(FIXTURES / "logs" / "llama_mask64_bad_lines.log")
SGEMM_LOG = str(FIXTURES / "logs" / "coverage_sgemm_mask64.log")
MT128x64 = (
    "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_AF0EM4_AMAS0_ASEM4_GLVWA4_GLVWB4_GRVW4_GSU1_GSUASB_K1_"
    "LBSPPA0_LBSPPB0_LPA0_LPB1_LRVW1_TT2_64_VW1_VWB1_WG64_2_1"
)


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env={"TENSILEKIT_TERMINAL": "0", **(env or {})})


def json_lines(output: str) -> list[dict[str, Any]]:
    """Every JSON object on stdout (one per line, or one pretty-printed)."""
    decoder, objects, position = json.JSONDecoder(), [], 0
    while (start := output.find("{", position)) >= 0:
        value, position = decoder.raw_decode(output, start)
        objects.append(value)
    return objects


# --- exit codes, each on a real case (README table) -------------------------------------------


def test_exit_0_success() -> None:
    assert run("select", "1024", "1024", "1024", "--library", SAMPLE).exit_code == ExitCode.OK


def test_exit_1_no_kernel_is_the_whole_answer() -> None:
    result = run("select", "64", "64", "64", "--library", SAMPLE, "--arch", "gfx942")
    assert result.exit_code == ExitCode.DIFFERENCES
    assert "no kernel: the library serves gfx90a only; it has no row for gfx942" in result.stderr


def test_exit_2_bad_type_lists_the_accepted_names() -> None:
    result = run("select", "64", "64", "64", "--library", SAMPLE, "--type", "bfloat17")
    assert result.exit_code == ExitCode.USAGE
    assert "cannot read type specification 'bfloat17'" in result.stderr
    for name in ("bf16", "fp16", "fp8", "f32", "tf32", "xf32", "int8", "bf16_r", "BBS"):
        assert name in result.stderr


def test_exit_3_from_log_parse_error_with_strict() -> None:
    result = run("select", "--from-log", BAD_LINES_LOG, "--library", SAMPLE, "--strict")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"error: {BAD_LINES_LOG}:3: bad profile line" in result.stderr


def test_exit_4_missing_benchmark_tool(tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    result = run(
        "tune", SGEMM_LOG, "--arch", "gfx90a", "--workdir", str(tmp_path / "W"), "--library-logic", str(FIXTURES / "logic"),
        env={"PATH": str(empty_bin)},
    )  # fmt: skip
    assert result.exit_code == ExitCode.TOOL_FAILED
    assert "hipblaslt-bench 'hipblaslt-bench' was not found on PATH" in result.stderr


# --- never a silent wrong or empty answer -------------------------------------------------------


@pytest.mark.parametrize("arch", ["gfx9999", "mi300"])
def test_unknown_arch_is_a_usage_error_listing_known_ones(arch: str) -> None:
    for command in (["select", "64", "64", "64"], ["coverage", SGEMM_LOG]):
        result = run(*command, "--library", SAMPLE, "--arch", arch)
        assert result.exit_code == ExitCode.USAGE, command
        assert f"unknown processor '{arch}'" in result.stderr and "gfx90a, " in result.stderr
    assert "(mi300 is gfx942)" in run("select", "1", "1", "1", "--arch", "mi300").stderr


def test_default_problem_on_a_library_without_it_says_what_the_library_has() -> None:
    result = run("select", "1024", "1024", "1024", "--library", SAMPLE, "--type", "D", "--json")
    assert result.exit_code == ExitCode.DIFFERENCES
    (record,) = json_lines(result.stdout)
    assert record["index"] is None
    assert record["reason"] == "the library has no kernel for NN Double (these types); it has: NN Float; TN Half HPA"


def test_coverage_on_a_served_but_absent_arch_is_one_line_exit_1() -> None:
    result = run("coverage", SGEMM_LOG, "--library", SAMPLE, "--arch", "gfx942")
    assert result.exit_code == ExitCode.DIFFERENCES
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {SAMPLE}: the library serves gfx90a only; it has no row for gfx942"
    )


def test_plot_refuses_an_empty_map(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "map.png"
    result = run("plot", "selection", "--library", SAMPLE, "--type", "BBS", "-o", str(png))
    assert result.exit_code == ExitCode.DIFFERENCES
    assert "nothing to draw" in result.stderr and "it has: NN Float; TN Half HPA" in result.stderr
    assert not png.exists()


# plot progress on a terminal: tests/cli/test_plot_progress_cli.py


# --- one rule per input kind ---------------------------------------------------------------------


def test_bad_workload_lines_are_skipped_with_file_line_warnings_in_every_command(tmp_path: Path) -> None:
    select = run("select", "--from-log", BAD_LINES_LOG, "--library", SAMPLE, "--type", "S")
    diff = run("diff", SAMPLE, SAMPLE, "--from-log", BAD_LINES_LOG)
    coverage = run("coverage", BAD_LINES_LOG, "--library", SAMPLE)
    tune = ["tune", BAD_LINES_LOG, "--arch", "gfx942", "--simulate", "--only", "ingest"]
    tuned = run(*tune, "--workdir", str(tmp_path / "W"))
    assert tuned.exit_code == ExitCode.OK
    assert run(*tune, "--workdir", str(tmp_path / "W2"), "--strict").exit_code == ExitCode.BAD_INPUT
    for result in (select, diff, coverage, tuned):
        assert f"warning: {BAD_LINES_LOG}:3: bad profile line: not a single-line flow mapping" in result.stderr
        assert f"warning: {BAD_LINES_LOG}:6: bad profile line: M: not an integer" in result.stderr
    assert select.exit_code == diff.exit_code == ExitCode.OK


def test_queries_get_the_single_arch_default_and_an_errored_line_exits_non_zero(tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": 1, "m": 1024, "n": 1024, "k": 1024}\n')
    result = run("select", "--queries", str(queries), "--library", SAMPLE, "--json")
    assert result.exit_code == ExitCode.OK
    [answer] = json_lines(result.stdout)
    assert {k: answer[k] for k in ("id", "index", "name", "distance")} == {
        "id": 1, "index": 606601220, "name": MT128x64, "distance": 0.0
    }  # fmt: skip
    queries.write_text('{"id": 1, "m": 1024, "n": 1024, "k": 1024}\nnot json\n')
    result = run("select", "--queries", str(queries), "--library", SAMPLE, "--json")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert [record["id"] for record in json_lines(result.stdout)] == [1, None]
    assert f"warning: {queries}:2:1: not a JSON object" in result.stderr  # line and column


@pytest.mark.parametrize(
    "command",
    [["validate", "{d}"], ["lint", "{d}"], ["info", "{d}"], ["diff", "{d}", "{d}", "--exit-code"],
     ["merge", "{d}", "{d}", "{out}"], ["build-master", "{d}", "-o", "{out}.yaml"], ["select", "1", "1", "1", "-l", "{d}"],
     ["prune", "{d}", "--dry-run"], ["remap", "{d}", "--from", "{d}", "--to", "{d}"]],
)  # fmt: skip
def test_a_folder_with_nothing_readable_is_exit_3_for_every_command(command: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a library\n")
    args = [part.format(d=folder, out=tmp_path / "out") for part in command]
    result = run(*args)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert str(folder) in result.stderr


def test_wrong_kind_inputs_name_the_kind_found_and_expected(corpus: Path, tmp_path: Path) -> None:
    dat = corpus / "masters" / "aldebaran_SB_NN.dat"
    master_yaml = corpus / "masters" / "aldebaran_SB_NN.yaml"
    prune = run("prune", str(dat), "--dry-run")
    assert prune.exit_code == ExitCode.BAD_INPUT
    assert "this is a master solution library (msgpack); prune reads library-logic files" in prune.stderr
    merge = run("merge", str(master_yaml), str(master_yaml), str(tmp_path / "out.yaml"))
    assert merge.exit_code == ExitCode.BAD_INPUT
    assert "this is a master solution library; merge reads library-logic files" in merge.stderr
    logic = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"
    convert = run("convert", str(logic), str(tmp_path / "x.yaml"))
    assert convert.exit_code == ExitCode.BAD_INPUT
    assert "this is a library-logic file; convert reads master solution libraries" in convert.stderr


def test_output_format_follows_the_suffix_or_is_an_error(tmp_path: Path) -> None:
    result = run("convert", SAMPLE, str(tmp_path / "x.json"))
    assert result.exit_code == ExitCode.USAGE and "cannot tell the output format from '.json'" in result.stderr
    assert not (tmp_path / "x.json").exists()
    result = run("convert", SAMPLE, str(tmp_path / "x.dat"), "--format", "yaml")
    assert result.exit_code == ExitCode.USAGE and "contradicts" in result.stderr
    assert run("convert", SAMPLE, str(tmp_path / "x.dat")).exit_code == ExitCode.OK
    assert 0x80 <= (tmp_path / "x.dat").read_bytes()[0] <= 0x8F  # a msgpack map


def test_output_into_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    for command in (
        ["convert", SAMPLE, str(missing / "x.yaml")],
        ["build-master", str(FIXTURES / "logic"), "-o", str(missing / "x.yaml")],
        ["plot", "selection", "-o", str(missing / "map.png")],
        ["coverage", SGEMM_LOG, "--library", SAMPLE, "-o", str(missing / "coverage")],
    ):
        result = run(*command)
        assert result.exit_code == ExitCode.USAGE, command
        assert f"folder {missing} does not exist" in result.stderr
    assert not (tmp_path / "no").exists()


# --- type names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "index"), [("f32", 606601220), ("fp32", 606601220), ("f32_r", 606601220), ("S", 606601220),
                            ("Float", 606601220), ("HHS", None), ("fp16,fp16,fp16,fp16,f32", None)],
)  # fmt: skip
def test_type_names_people_use_are_accepted(spelling: str, index: int | None) -> None:
    result = run("select", "1024", "1024", "1024", "--library", SAMPLE, "--type", spelling, "--json")
    assert result.exit_code == (ExitCode.OK if index else ExitCode.DIFFERENCES)
    assert json_lines(result.stdout)[0]["index"] == index


def test_half_types_by_short_name_select_the_half_kernel() -> None:
    result = run(
        "select", "1024", "1024", "1024", "--library", SAMPLE, "--trans-a", "T", "--type", "fp16,fp16,f32", "--json"
    )
    assert result.exit_code == ExitCode.OK
    assert json_lines(result.stdout)[0]["index"] == 606601222


# --- output for pipes and JSON errors --------------------------------------------------------------


def test_piped_tables_are_tab_separated_and_never_cut() -> None:
    result = run("select", "1000", "1024", "1024", "--library", SAMPLE, "--top", "2", env={"COLUMNS": "40"})
    lines = result.stdout.splitlines()
    assert "selected\tindex 606601220" in lines
    assert f"kernel\t{MT128x64}" in lines
    assert "rank\tindex\tdistance\tkernel" in lines
    coverage = run("coverage", SGEMM_LOG, "--library", str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"),
                   "--cu-count", "104", env={"COLUMNS": "40"})  # fmt: skip
    lines = [line for line in coverage.stdout.splitlines() if not line.startswith("# ")]  # titles, notes
    assert lines[0] == "type\tM x N x K\tcalls\tshare\tclass\tkernel\tmatched\tratio\tnearest"  # every column
    assert lines[1].split("\t")[:6] == ["SSS_NN", "4096x4096x4096", "25", "63.5%", "exact", "606601216"]  # no markup
    info = run("info", str(FIXTURES / "logic"))
    assert info.stdout.splitlines()[0] == "file\tkind\tformat\tarch\ttype\tsolutions\tentries"
    assert all(line.count("\t") == 6 for line in info.stdout.splitlines())


def test_with_json_errors_are_json_on_stdout_too(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path), "--json")
    assert result.exit_code == ExitCode.BAD_INPUT
    (error,) = json_lines(result.stdout)
    assert error["location"] == str(tmp_path) and "no library file" in error["error"]
    assert error["exit_code"] == ExitCode.BAD_INPUT
    result = run("select", "1", "1", "1", "--type", "QQ", "--json")
    assert result.exit_code == ExitCode.USAGE
    (error,) = json_lines(result.stdout)
    assert "cannot read type specification 'QQ'" in error["error"] and error["exit_code"] == ExitCode.USAGE


def test_debug_is_accepted_anywhere_on_the_line() -> None:
    assert hoist_debug(["select", "1", "2", "3", "--debug"]) == ["--debug", "select", "1", "2", "3"]
    assert hoist_debug(["select", "--", "--debug"]) == ["select", "--", "--debug"]
    completed = subprocess.run(
        [sys.executable, "-m", "tensilekit", "select", "1024", "1024", "1024", "--json", "--debug"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["index"] == 606601220

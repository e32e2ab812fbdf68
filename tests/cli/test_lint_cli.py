"""CLI: lint — exit codes, exact lines, --error-on, --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = FIXTURES / "lint" / "lint_cases_gfx90a.yaml"
DEAD_ROW = FIXTURES / "lint" / "aldebaran_SB_dead_row.yaml"
SAMPLE_LOGIC = FIXTURES / "lint" / "aldebaran_SB_clean.yaml"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_findings_exit_zero_with_exact_lines(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", str(DEAD_ROW)])
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{DEAD_ROW} (logic): 1 dead-entry"
    row = DEAD_ROW.read_text().splitlines().index("- - - [1001, 1024, 1, 1024]") + 1
    assert lines[1].startswith(f"  warning {DEAD_ROW}:{row}:5: entry [1001, 1024, 1024] → index 606601220 (")
    assert lines[1].endswith(
        ": at the entry's key the kernel fails Free0SizeMultiple: not (M=1001 % ==0 4); the entry never "
        "answers its own size (it can still answer other sizes that are nearer to it than to any usable "
        "entry) (at [7][0]) [dead-entry]"
    )
    assert lines[-1] == "1 file(s): 1 dead-entry, 3 size"


def test_error_on_makes_a_code_fail(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["lint", str(DEAD_ROW), "--error-on", "dead-entry"]).exit_code == ExitCode.DIFFERENCES
    assert runner.invoke(cli, ["lint", str(DEAD_ROW), "--error-on", "no-fallback,grid-outlier"]).exit_code == 0
    assert runner.invoke(cli, ["lint", str(SAMPLE_LOGIC), "--error-on", "all"]).exit_code == ExitCode.DIFFERENCES
    clean = runner.invoke(cli, ["lint", str(SAMPLE_LOGIC), "--error-on", "dead-entry,shadowed-entry"])
    assert clean.exit_code == 0, clean.output


def test_unknown_code_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", str(CASES), "--error-on", "dead"])
    assert result.exit_code == ExitCode.USAGE
    assert "unknown code(s) dead" in result.output


def test_json_lists_every_finding(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", str(CASES), "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert report["kind"] == "master"
    counts: dict[str, int] = {}
    for finding in report["findings"]:
        counts[finding["code"]] = counts.get(finding["code"], 0) + 1
        assert set(finding) == {"severity", "code", "message", "path", "line", "col", "offset"}
    assert counts == {
        "dead-entry": 1,
        "shadowed-entry": 2,
        "unreachable-kernel": 2,
        "no-fallback": 1,
        "grid-outlier": 1,
        "size": 11,
    }
    dead = next(f for f in report["findings"] if f["code"] == "dead-entry")
    assert dead["line"] == 92 and dead["path"].endswith(".table[0]")


def test_size_lines_only_on_request(runner: CliRunner) -> None:
    plain = runner.invoke(cli, ["lint", str(SAMPLE_LOGIC)])
    assert plain.output.splitlines()[0] == f"{SAMPLE_LOGIC} (logic): no findings"
    assert "[size]" not in plain.output
    sized = runner.invoke(cli, ["lint", str(SAMPLE_LOGIC), "--size"])
    assert "  info " in sized.output and "Euclidean table: 12 entries, 5 kernels (at [7]) [size]" in sized.output


def test_unreadable_file_exits_bad_input(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("{not: [closed\n")
    result = runner.invoke(cli, ["lint", str(bad), str(SAMPLE_LOGIC)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{bad} (unreadable): 1 YamlSyntaxError" in result.output


def test_missing_path_exits_bad_input(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", "/no/such/file.yaml"])
    assert result.exit_code == ExitCode.BAD_INPUT

"""CLI: info / validate / convert / build-master — exit codes, exact lines, JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import ExitCode, cli
from tensilekit.data import sample_library_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SAMPLE_LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def terminal_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the tables a terminal shows (piped output is covered in test_output_cli)."""
    monkeypatch.setenv("TENSILEKIT_TERMINAL", "1")


def test_info_sample_json(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["info", "--sample", "--json"])
    assert result.exit_code == 0, result.output
    (info,) = json.loads(result.output)
    assert info["kind"] == "master"
    assert info["architectures"] == ["gfx90a"]
    assert info["solutions"] == 8
    assert info["problem_types"] == ["Contraction_l_Ailk_Bljk_Cijk_Dijk", "Contraction_l_Alik_Bljk_Cijk_Dijk"]


def test_info_logic_table(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["info", str(SAMPLE_LOGIC)])
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.output.splitlines()]
    assert "kind           logic" in lines
    assert "problem types  Cijk_Ailk_Bljk_SB" in lines
    assert any(line.startswith("size ranges    M 64..8192 N 64..8192 B 1..1 K 64..8192") for line in lines)


def test_info_without_paths_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["info"])
    assert result.exit_code == ExitCode.USAGE


def test_validate_ok_and_failing_files(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = SAMPLE_LOGIC.read_text().replace(
        "- - [64, 64, 1, 64]\n    - [2, 120.4]", "- - [64, 64, 1, 64]\n    - [9, 120.4]"
    )
    assert text != SAMPLE_LOGIC.read_text()
    bad.write_text(text)
    result = runner.invoke(cli, ["validate", str(SAMPLE_LOGIC), str(bad)])
    assert result.exit_code == ExitCode.DIFFERENCES
    assert f"ok {SAMPLE_LOGIC}" in result.output
    assert f"FAILED {bad} (1 error(s), 0 warning(s))" in result.output
    error_line = next(line for line in result.output.splitlines() if "missing-solution" in line)
    assert f"{bad}:" in error_line and "refers to solution 9" in error_line and "(at [7][" in error_line
    assert "1 of 2 file(s) valid" in result.output


def test_validate_json(runner: CliRunner, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {MinimumRequiredVersion: 4.33.0}\n- [unclosed\n")
    result = runner.invoke(cli, ["validate", "--json", str(broken)])
    assert result.exit_code == 1
    (report,) = json.loads(result.output)
    assert report["ok"] is False
    finding = report["findings"][0]
    assert finding["code"] == "YamlSyntaxError"
    assert finding["line"] == 3


def test_missing_file_is_bad_input_with_one_line(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["info", str(tmp_path / "nope.yaml")])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output.strip().splitlines()[-1] == f"error: {tmp_path / 'nope.yaml'}: no such file or directory"
    assert "Traceback" not in result.output


def test_convert_roundtrip(runner: CliRunner, tmp_path: Path) -> None:
    dat = tmp_path / "TensileLibrary.dat"
    back = tmp_path / "back.yaml"
    assert runner.invoke(cli, ["convert", str(sample_library_path()), str(dat)]).exit_code == 0
    assert dat.read_bytes()[:1] in (b"\x82", b"\x83")  # a msgpack map
    assert runner.invoke(cli, ["convert", str(dat), str(back)]).exit_code == 0
    original = tensilekit.load_master(sample_library_path())
    assert tensilekit.load_master(back).to_raw() == original.to_raw()
    assert back.read_text().startswith("---\n") and back.read_text().endswith("...\n")


def test_build_master_from_fixture_directory(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "TensileLibrary.yaml"
    result = runner.invoke(cli, ["build-master", str(FIXTURES / "logic"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote {out} (8 solutions)"
    built = tensilekit.load_master(out)
    shipped = tensilekit.load_master(sample_library_path())
    assert built.to_raw() == shipped.to_raw(), "the embedded sample is stale: run fixtures/logic/make_sample.py"


def test_unexpected_exception_is_reported_as_bug(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import tensilekit.inspect

    def explode(path: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tensilekit.inspect, "describe", explode)
    result = runner.invoke(cli, ["info", "--sample"])
    assert result.exit_code == ExitCode.BUG
    assert "internal error: RuntimeError: boom" in result.output
    assert "Traceback" not in result.output


def test_info_lists_the_data_types_a_master_serves(corpus: Path) -> None:
    """Issue 32 item 9: ``info`` named operations only; the types and flags are what a reader asks
    (the labels ``select``'s no-kernel reasons use, read off the rows)."""
    result = CliRunner().invoke(cli, ["info", str(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_equality.dat")])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("data types"))
    assert line.split(None, 2)[2].strip().split("; ") == ["TN Half HPA", "TN Float8→Half HPA", "NT Half HPA"]

"""`diff` and `lint` name each phase on stderr when it is a terminal (issue 25: on a big master
reading, comparing and locating findings each take seconds), and print nothing there otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli

MASTERS = Path(__file__).resolve().parents[2] / "fixtures" / "masters"
MASTER = MASTERS / "coverage_equality_gfx90a.yaml"


def run(args: list[str], monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> tuple[str, str]:
    monkeypatch.setattr("tensilekit.cli.output.stderr_is_terminal", lambda: terminal)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_diff_names_its_phases_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_bytes(MASTER.read_bytes())
    stdout, stderr = run(["diff", str(MASTER), str(other)], monkeypatch, terminal=True)
    assert "no differences" in stdout
    for stage in (f"reading {MASTER.name}", f"indexing {MASTER.name}", "reading other.yaml", "comparing"):
        assert stage in stderr, stderr


def test_lint_names_its_phases_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    _, stderr = run(["lint", str(MASTER)], monkeypatch, terminal=True)
    for stage in (f"reading {MASTER.name}", f"checking {MASTER.name}", f"locating findings in {MASTER.name}"):
        assert stage in stderr, stderr


def test_no_progress_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    _, stderr = run(["diff", str(MASTER), str(MASTER)], monkeypatch, terminal=False)
    assert stderr == ""
    _, stderr = run(["lint", str(MASTER)], monkeypatch, terminal=False)
    assert stderr == ""

"""`plot selection` / `plot coverage` show progress on stderr when it is a terminal (issue 25:
5-9 s with nothing shown), and nothing when it is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def plot(args: list[str], monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> tuple[str, str]:
    pytest.importorskip("matplotlib")
    monkeypatch.setattr("tensilekit.cli.output.stderr_is_terminal", lambda: terminal)
    result = CliRunner().invoke(cli, ["plot", *args])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_plot_selection_shows_its_stages_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "map.png"
    stdout, stderr = plot(["selection", "--k", "1024", "--points", "32", "-o", str(out)], monkeypatch, terminal=True)
    assert out.is_file() and stdout.startswith(f"wrote {out}")
    for stage in ("reading sample_library.yaml", "selecting over the grid", "drawing map.png"):
        assert stage in stderr, stderr


def test_plot_coverage_shows_its_stages_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "cover.png"
    args = ["coverage", str(FIXTURES / "logs" / "coverage_sgemm_mask64.log"),
            "--library", str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"),
            "--cu-count", "104", "--points", "24", "-o", str(out)]  # fmt: skip
    _, stderr = plot(args, monkeypatch, terminal=True)
    for stage in ("reading coverage_equality_gfx90a.yaml", "selecting over the grid", "drawing cover.png"):
        assert stage in stderr, stderr


def test_no_progress_off_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _, stderr = plot(["selection", "--points", "8", "-o", str(tmp_path / "m.png")], monkeypatch, terminal=False)
    assert "selecting over the grid" not in stderr

"""Piped output (issue 25): a table keeps its title, and every line that is not a table row —
titles, notes, summaries — is a `# ` comment line, so a TSV consumer can skip them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.data import sample_library_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(autouse=True)
def piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSILEKIT_TERMINAL", "0")


def rows_and_comments(text: str) -> tuple[list[str], list[str]]:
    lines = text.splitlines()
    return [line for line in lines if not line.startswith("# ")], [line[2:] for line in lines if line.startswith("# ")]


def test_coverage_keeps_titles_and_the_weight_basis_as_comments() -> None:
    result = CliRunner().invoke(
        cli,
        ["coverage", str(FIXTURES / "logs" / "coverage_sgemm_mask64.log"),
         "--library", str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"), "--cu-count", "104"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows, comments = rows_and_comments(result.stdout)
    assert comments[0].startswith("Coverage of 5 GEMM(s) by ")
    assert "Share of GEMM time (calls x flops) by class" in comments  # the weight basis
    assert any(comment.startswith("near: every size within a factor of") for comment in comments)
    assert any(comment.startswith("tune next (") for comment in comments)
    # what is left is two tables: each line has its table's number of columns
    assert {line.count("\t") for line in rows} == {8, 7}
    assert rows[0].startswith("type\t") and sum(line.startswith("problem type\t") for line in rows) == 1


def test_select_queries_summary_is_a_comment(tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "m": 1024, "n": 1024, "k": 1024}\n{"id": "b", "m": 64, "n": 64, "k": 64}\n')
    result = CliRunner().invoke(
        cli, ["select", "--queries", str(queries), "--library", str(sample_library_path()), "--arch", "gfx90a"]
    )
    assert result.exit_code == 0, result.output
    rows, comments = rows_and_comments(result.stdout)
    assert comments[0] == str(sample_library_path())  # the table's title
    assert comments[-1].startswith("2 queries, ")
    assert rows[0] == "id\tindex\tdistance\tkernel"
    assert all(line.count("\t") == 3 for line in rows)

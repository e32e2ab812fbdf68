"""lint's file edge: logic files are built like `select` builds them and findings point at the
logic file's own rows and lines; unreadable files become one error finding."""

from __future__ import annotations

from pathlib import Path

import pytest

import tensilekit
from tensilekit.io import yaml_codec
from tensilekit.lint import lint_file, lint_paths
from tensilekit.lint.files import LogicLocator
from tensilekit.model.library import MatchingNode

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
DEAD_ROW = FIXTURES / "lint" / "aldebaran_SB_dead_row.yaml"
SAMPLE_LOGIC = FIXTURES / "lint" / "aldebaran_SB_clean.yaml"
CASES = FIXTURES / "lint" / "lint_cases_gfx90a.yaml"


def test_logic_file_finding_points_at_its_row_and_line() -> None:
    result = lint_file(DEAD_ROW)
    assert result.kind == "logic"
    (dead,) = [f for f in result.findings if f.code == "dead-entry"]
    assert dead.path == "[7][0]"
    rows = DEAD_ROW.read_text().splitlines()
    assert (dead.line, dead.col) == (rows.index("- - - [1001, 1024, 1, 1024]") + 1, 5)
    assert "M=1001" in dead.message
    table = [f for f in result.findings if f.code == "size" and f.path == "[7]"]
    assert [f.message for f in table] == ["Euclidean table: 13 entries, 5 kernels"]


def test_master_findings_are_located_with_the_cut_made_while_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A YAML master is cut at its top-level lines once, as it is read, and its findings are
    located with that cut: at the nodes PyYAML composes (a stale or foreign cut would move them)."""
    master = tmp_path / "cases.yaml"  # the fixture without its anchors: a text cut by its lines
    master.write_bytes(tensilekit.dumps_master(tensilekit.load_master(CASES)))
    text = master.read_text()
    cut_lengths: list[int] = []
    top_level = yaml_codec._top_level

    def counted(text: str) -> yaml_codec._TopLevel | None:
        cut_lengths.append(len(text))
        return top_level(text)

    monkeypatch.setattr(yaml_codec, "_top_level", counted)
    located = [finding for finding in lint_file(master).findings if finding.path]
    assert cut_lengths == [len(text)]
    assert {finding.code for finding in located} >= {"dead-entry", "shadowed-entry"}
    paths = [yaml_codec.parse_path(finding.path) for finding in located]
    assert [(finding.line, finding.col) for finding in located] == yaml_codec._composed_positions(text, paths)


def test_clean_logic_file_has_only_size_findings() -> None:
    result = lint_file(SAMPLE_LOGIC)
    assert {f.code for f in result.findings} == {"size"}


def test_logic_locator_maps_every_entry_to_its_row() -> None:
    logic = tensilekit.load_logic(SAMPLE_LOGIC)
    master = tensilekit.build_master(SAMPLE_LOGIC)
    locator = LogicLocator(logic, master)
    positions = {solution.index: number for number, solution in enumerate(master.solutions)}
    ((path, node),) = [(p, n) for p, n in master.iter_nodes() if isinstance(n, MatchingNode)]
    assert locator.table(path) == "[7]"
    rows = set()
    for number, entry in enumerate(node.table):
        where = locator.entry(path, number)
        row = int(where.removeprefix("[7][").removesuffix("]"))
        rows.add(row)
        assert [logic.table[row].size[i] for i in (0, 1, 3)] == entry.key
        assert logic.table[row].solution == positions[entry.solution_index]
    assert rows == set(range(len(logic.table)))
    assert locator.solution(3) == "[5][3]"


def test_unreadable_file_is_one_error_finding(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("- [unclosed\n")
    (result,) = lint_paths([tmp_path])
    assert result.kind == "unreadable"
    (finding,) = result.findings
    assert finding.severity == "error" and finding.code == "YamlSyntaxError"


def test_missing_path_raises() -> None:
    with pytest.raises(tensilekit.TensilekitError):
        lint_paths(["/no/such/library.yaml"])

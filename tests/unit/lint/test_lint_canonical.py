"""``lint`` reads the canonical dict logic form that ``validate`` and ``build-master`` accept
(issue 23 item 14): named root keys, Solutions keyed by name, factored solutions, ``.yaml.zst``.

Before, every such file was "unreadable: a tensilelite logic file is a YAML list". Now it gets the
findings of the same logic written as a list, each pointing at the canonical file's own row or
keyed solution.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit.api import build_master_files
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.lint import lint_file
from tensilekit.model.logic import LogicFile

LOGIC = "hipblaslt/aldebaran/110CU/Equality/aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml"


def _variant(corpus: Path) -> tuple[LogicFile, int, int]:
    """The corpus file with one key listed twice (shadowed) and one solution no row uses."""
    logic = load_logic(corpus / "logic" / LOGIC)
    rows = list(logic.exact_logic or [])
    unused = rows[3].solution
    kept = [row for row in rows if row.solution != unused]
    first = kept[0]
    twin = first.model_copy(update={"solution": (first.solution + 1) % len(logic.solutions) or 1})
    assert twin.solution != unused
    return logic.model_copy(update={"exact_logic": [*kept, twin]}), unused, len(kept)


@pytest.mark.parametrize("suffix", [".yaml", ".yaml.zst"])
def test_canonical_logic_lints_like_its_list_form(suffix: str, corpus: Path, tmp_path: Path) -> None:
    logic, unused, twin_row = _variant(corpus)
    listed, canonical = tmp_path / "list.yaml", tmp_path / f"canonical{suffix}"
    dump_logic(logic, listed)
    dump_logic(logic, canonical, layout="canonical")
    build_master_files([canonical])  # what build-master accepts ...
    expected, got = lint_file(listed), lint_file(canonical)
    assert got.kind == "logic", got.findings  # ... lint reads too
    assert got.codes() == expected.codes()
    assert {"shadowed-entry", "unreachable-kernel"} <= set(got.codes())
    if suffix == ".yaml.zst":
        return  # compressed: the places are YAML paths only
    lines = canonical.read_text(encoding="utf-8").splitlines()
    shadowed = next(f for f in got.findings if f.code == "shadowed-entry")
    assert shadowed.path == f"ExactLogic[{twin_row}]"
    row = logic.exact_logic[twin_row] if logic.exact_logic else None
    assert row is not None and shadowed.line is not None
    assert lines[shadowed.line - 1].strip() == "- - " + str(row.size).replace("'", "")
    unreachable = next(f for f in got.findings if f.code == "unreachable-kernel")
    assert unreachable.path.startswith("Solutions.") and unreachable.line is not None
    name = unreachable.path.removeprefix("Solutions.")
    key_line = next(n for n, text in enumerate(lines, 1) if text.strip() in (f"? {name}", f"{name}:"))
    index_line = next(
        n for n, text in enumerate(lines, 1) if n > key_line and text.strip() == f"SolutionIndex: {unused}"
    )
    assert key_line <= unreachable.line < index_line  # inside that solution's own mapping

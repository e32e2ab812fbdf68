"""Duplicate keys in a ``Matching`` table (issue 23 item 1): which entry answers.

The runtime sorts each table with libstdc++'s unstable ``std::sort`` (key ascending, speed
descending; ``Serialization/MatchingLibrary.hpp`` of Tensile and tensilelite), so of two entries
with equal key and speed the one introsort leaves first is the one every search meets first —
not necessarily the one written first (``test_stdsort.py`` checks the order against g++ 12's).
``tests/property/test_select_duplicates_oracle.py`` compares the same rule with AMD's C++.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selection_factory import GFX90A, gemm, master, matching, solution

from tensilekit.inspect import validate_file
from tensilekit.io.master_io import dumps_master
from tensilekit.lint import lint_file
from tensilekit.model.library import MasterLibrary, MatchingNode
from tensilekit.selection import ContractionProblem, compile_library, select_batch, select_solution
from tensilekit.selection.runtime import HIPBLASLT, TENSILE

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "invalid"


def _table(distance: str) -> tuple[MasterLibrary, ContractionProblem, list[int]]:
    """20 keys (M = 64·i), the first written twice with equal speed: kernel 100, then kernel 200."""
    entries: list[tuple[list[int], int, float]] = [
        ([64, 64, 1, 64] if distance == "Equality" else [64, 64, 64], 100, 1.0)
    ]
    for i in range(1, 21):
        key = [64 * i, 64, 1, 64] if distance == "Equality" else [64 * i, 64, 64]
        entries.append((key, 200 if i == 1 else i, 1.0))
    solutions = [solution(100), solution(200), *[solution(i) for i in range(2, 21)]]
    library = master(solutions, matching(entries, distance))
    return library, gemm(64, 64, 64), [100, 200]


def _answers(library: MasterLibrary, problem: ContractionProblem, **kw: Any) -> set[int | None]:
    found = {select_solution(library, problem, GFX90A, **kw).index}
    for use_tree in (True, False):
        compiled = compile_library(library, use_tree=use_tree, **kw)
        found.add(select_solution(compiled, problem, GFX90A).index)
        found.add(select_batch(compiled, [problem] * 2, GFX90A)[1].index)
    return found


@pytest.mark.parametrize("distance", ["Euclidean", "Manhattan", "Ratio", "Equality", "GridBased"])
@pytest.mark.parametrize("runtime", [TENSILE, HIPBLASLT], ids=["tensile", "hipblaslt"])
def test_duplicate_size_rows_the_later_row_answers_where_std_sort_puts_it_first(distance: str, runtime: Any) -> None:
    # rows 0 and 1 share key [64, 64, (1,) 64] and speed: std::sort of these 21 entries swaps them
    library, problem, (written_first, written_later) = _table(distance)
    assert _answers(library, problem, runtime=runtime) == {written_later}


# ---------------------------------------------------------------- what validate says, checked by select


def _entry_kernels(library: MasterLibrary) -> list[int]:
    node = next(n for _, n in library.iter_nodes() if isinstance(n, MatchingNode))
    return [entry.solution_index for entry in node.table]


@pytest.mark.parametrize("distance", ["Euclidean", "Equality", "GridBased"])
def test_validate_names_the_entry_that_answers(distance: str, tmp_path: Path) -> None:
    library, problem, _ = _table(distance)
    path = tmp_path / "m.yaml"
    path.write_bytes(dumps_master(library, "yaml"))
    (finding,) = [f for f in validate_file(path).findings if f.code == "duplicate-key"]
    assert finding.severity == "warning" and finding.path.endswith(".table[1].key")
    kernels = _entry_kernels(library)
    # entries 0 and 1 share the key; std::sort puts entry 1 first
    assert kernels[1] in _answers(library, problem)
    if distance == "Equality":
        assert finding.message.endswith(
            "the runtime tries only entry 1 (first in the runtime's std::sort order); entry 0 never answers"
        )
    elif distance == "GridBased":
        assert (
            "the runtime uses entry 1 (first in the runtime's std::sort order), entry 0 only where" in finding.message
        )
    else:
        assert (
            "the runtime answers with entry 1 (first in the runtime's std::sort order) at this key and from below, "
            "and from above with entry 0" in finding.message
        )
        # from above in M only (between the key and the next one): the leftward scan meets entry 0 first
        assert _answers(library, gemm(64 + 20, 64, 64)) == {kernels[0]}
        assert _answers(library, gemm(64 - 20, 64, 64)) == {kernels[1]}


def test_validate_logic_rows_name_the_row_the_runtime_uses(tmp_path: Path) -> None:
    # tensilelite GridBased: rows 0 and 2 differ only in leading dimensions, which the key drops;
    # 21 rows so that std::sort swaps the two (the build writes them first and second)
    fixture = (FIXTURES / "duplicate_size.yaml").read_text(encoding="utf-8")
    head = fixture[: fixture.index("- - - [1024")]
    rows = [([64, 64, 1, 64, 64, 64, 64, 64], 0), ([128, 64, 1, 64, 128, 128, 128, 128], 1)]
    rows += [([64, 64, 1, 64, 100, 100, 100, 100], 1)]
    rows += [([64 * i, 64, 1, 64, 64 * i, 64 * i, 64 * i, 64 * i], 0) for i in range(3, 21)]
    table = "- " + "\n  ".join(f"- - {size}\n    - [{kernel}, 1.0]" for size, kernel in rows) + "\n"
    path = tmp_path / "grid.yaml"
    path.write_text(head + table + "- null\n- null\n- DeviceEfficiency\n- GridBased\n", encoding="utf-8")
    result = validate_file(path)
    # one verdict (issue 35 item 7): valid exactly when lint and build-master can read the file
    # (this hand-written one lacks ProblemType keys a build needs)
    assert result.ok is (lint_file(path).kind != "unreadable"), result.findings
    (finding,) = [f for f in result.findings if f.code == "duplicate-size"]
    assert (finding.severity, finding.path) == ("warning", "[7][2][0]")
    assert finding.message == (
        "rows 0 and 2 share [M, N, batch, K] = [64, 64, 1, 64]; the runtime uses row 2 (first in the runtime's "
        "std::sort order), row 0 only where its kernel cannot solve the problem"
    )


def test_granularity_selection_duplicate_exact_key_only_the_first_is_tried(tmp_path: Path) -> None:
    # exactMap.insert keeps the first entry of a key; kernel 3 cannot solve (M multiple of 128),
    # so the runtime goes on to the projected-performance pick, never to the second exact entry
    failing = solution(3, {"type": "Free0SizeMultiple", "index": 0, "value": 128})
    node = {
        "type": "GranularitySelection",
        "indices": [1],
        "exact": [{"key": [64, 64, 1, 64], "value": 3}, {"key": [64, 64, 1, 64], "value": 2}],
    }
    library = master([solution(1), solution(2), failing], node)
    assert select_solution(library, gemm(64, 64, 64), GFX90A).index == 1
    path = tmp_path / "g.yaml"
    path.write_bytes(dumps_master(library, "yaml"))
    (finding,) = [f for f in validate_file(path).findings if f.code == "duplicate-key"]
    assert finding.path.endswith(".exact[1].key")
    assert finding.message == (
        "exact entries 0 and 1 share key [64, 64, 1, 64]; the runtime keeps entry 0 (std::map insert keeps the "
        "first): entry 1 never answers"
    )


def test_lint_flags_the_gridbased_duplicate_that_can_never_win() -> None:
    from tensilekit.lint import LintCode, lint_library

    library, problem, (written_first, written_later) = _table("GridBased")
    shadowed = [f for f in lint_library(library) if f.code == LintCode.SHADOWED_ENTRY.value]
    assert [f.path.rsplit(".", 1)[-1] for f in shadowed] == ["table[0]"]  # the row written first
    assert f"index {written_later} comes first with the same predicates" in shadowed[0].message
    assert _answers(library, problem) == {written_later}

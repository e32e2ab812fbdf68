"""Duplicate keys in a ``Matching`` table (issue 23 item 1): which entry answers.

The runtime sorts each table with libstdc++'s unstable ``std::sort`` (key ascending, speed
descending; ``Serialization/MatchingLibrary.hpp`` of Tensile and tensilelite), so of two entries
with equal key and speed the one introsort leaves first is the one every search meets first —
not necessarily the one written first (``test_stdsort.py`` checks the order against g++ 12's).
``tests/property/test_select_duplicates_oracle.py`` compares the same rule with AMD's C++.
"""

from __future__ import annotations

from typing import Any

import pytest
from selection_factory import GFX90A, gemm, master, matching, solution

from tensilekit.model.library import MasterLibrary
from tensilekit.selection import ContractionProblem, compile_library, select_batch, select_solution
from tensilekit.selection.runtime import HIPBLASLT, TENSILE


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

"""Unit tests for tensilekit.merge.prune: unused kernels, duplicate folding, renumbering."""

from __future__ import annotations

import copy

import pytest
from merge_factory import logic_data, make_logic, solution

from tensilekit.errors import MergeError
from tensilekit.io.logic_io import logic_from_data, logic_to_data
from tensilekit.merge import Compat, diff_libraries, prune_logic

A, B, C = solution(64, 64), solution(128, 64), solution(128, 128)


def test_unused_dropped_duplicates_folded_renumbered() -> None:
    a_again = copy.deepcopy(A)
    a_again["LoopTail"] = True  # another dump of the same kernel: equal Tensile name
    logic = make_logic([C, A, B, a_again], [([1, 1, 1, 1], 3, 1.0), ([2, 2, 1, 2], 1, 2.0), ([3, 3, 1, 3], 2, 3.0)])
    before = logic_to_data(logic)
    pruned, report = prune_logic(logic)
    assert logic_to_data(logic) == before
    assert [(s.macro_tile0, s.macro_tile1, s.solution_index) for s in pruned.solutions] == [(64, 64, 0), (128, 64, 1)]
    assert [(e.size, e.solution) for e in pruned.table] == [([1, 1, 1, 1], 0), ([2, 2, 1, 2], 0), ([3, 3, 1, 3], 1)]
    assert [ref.index for ref in report.unused_removed] == [0]
    assert [(f.removed.index, f.kept.index) for f in report.duplicates_folded] == [(3, 1)]
    assert report.kernels_before == 4 and report.kernels_after == 2 and report.changed
    # selection cannot change: every size keeps a kernel of the same identity
    group = diff_libraries(logic, pruned).groups[0]
    assert not group.sizes_reassigned and not group.sizes_added and not group.sizes_removed


def test_tensilelite_identity_keeps_redumped_kernels_apart() -> None:
    a_again = copy.deepcopy(A)
    a_again["LoopTail"] = True
    logic = make_logic([A, a_again], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 1, 2.0)])
    pruned, report = prune_logic(logic, compat=Compat.TENSILELITE)
    assert len(pruned.solutions) == 2 and not report.duplicates_folded


def test_already_pruned_file_is_unchanged() -> None:
    logic = make_logic([A, B], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 1, 2.0)])
    pruned, report = prune_logic(logic)
    assert not report.changed and logic_to_data(pruned) == logic_to_data(logic)


def test_tile_selection_indices_keep_kernels_and_are_remapped() -> None:
    data = logic_data([C, A, B], [([1, 1, 1, 1], 1, 1.0)])
    data += [{"TileSelectionIndices": [2, 1]}]
    logic = logic_from_data(data)
    pruned, _ = prune_logic(logic)
    assert [s.macro_tile0 for s in pruned.solutions] == [64, 128]
    assert pruned.tile_selection == {"TileSelectionIndices": [1, 0]}


def test_no_table_keeps_every_kernel() -> None:
    data = logic_data([A, B, copy.deepcopy(A)], [])
    data[7] = None
    pruned, report = prune_logic(logic_from_data(data))
    assert len(pruned.solutions) == 2 and report.notes and len(report.duplicates_folded) == 1


def test_bad_index_is_an_error() -> None:
    with pytest.raises(MergeError):
        prune_logic(make_logic([A], [([1, 1, 1, 1], 4, 1.0)]))

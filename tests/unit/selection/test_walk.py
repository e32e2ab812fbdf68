"""The walk, node by node, on hand-made libraries: each C++ trap of spec/selection.md (e), on every path.

Every case is checked three ways: the reference walk (``select_solution`` on the model), the
compiled single-query path and the batch path, which must all agree.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from selection_factory import FLOAT4, GFX90A, NN, gemm, master, matching, solution, type_row

from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import (
    ContractionProblem,
    Hardware,
    compile_library,
    find_all_solutions,
    select_batch,
    select_solution,
)

DBL_MAX = sys.float_info.max


def answer(
    library: MasterLibrary, problem: ContractionProblem, hardware: Hardware = GFX90A, **kw: Any
) -> tuple[int | None, float | None]:
    """(index, distance) from all three paths, asserting they agree."""
    reference = select_solution(library, problem, hardware, **kw)
    for use_tree in (True, False):
        compiled = compile_library(library, use_tree=use_tree, **kw)
        fast = select_solution(compiled, problem, hardware)
        batch = select_batch(compiled, [problem] * 3, hardware)[1]
        assert (fast.index, fast.distance) == (reference.index, reference.distance)
        assert (batch.index, batch.distance) == (reference.index, reference.distance)
    return reference.index, reference.distance


def test_rightward_scan_stops_on_the_first_component() -> None:
    # spec (e) 1: (64,4288,128) is met first; (256,4096,128) has the same distance and is faster,
    # but (256-64)² is not below the best, so the scan stops before it.
    library = master(
        [solution(1), solution(2)],
        matching([([64, 4288, 128], 1, 15.8), ([256, 4096, 128], 2, 38.0)]),
    )
    assert answer(library, gemm(64, 4096, 128)) == (1, 36864.0)


def test_leftward_scan_meets_equal_keys_slowest_first() -> None:
    # spec (e) 1, arcturus: three entries at (1444,128,256), d=121; the leftward scan takes the
    # slowest and stops at the next because 11² is not below 121.
    library = master(
        [solution(1), solution(2), solution(3)],
        matching([([1444, 128, 256], 1, 26.6), ([1444, 128, 256], 2, 18.0), ([1444, 128, 256], 3, 17.0)]),
    )
    assert answer(library, gemm(1455, 128, 256)) == (3, 121.0)


def test_rightward_ties_prefer_the_faster_entry_met_first() -> None:
    library = master(
        [solution(1), solution(2), solution(3)],
        matching([([100, 10, 10], 1, 5.0), ([100, 10, 10], 2, 9.0), ([100, 10, 12], 3, 50.0)]),
    )
    # exact key: sorted by speed descending → kernel 2 first; kernel 3 (d=4) is worse
    assert answer(library, gemm(100, 10, 10)) == (2, 0.0)


def test_a_failing_nearest_entry_is_skipped() -> None:
    library = master(
        [solution(1, {"type": "Free0SizeMultiple", "index": 0, "value": 64}), solution(2)],
        matching([([100, 100, 100], 1, 10.0), ([120, 100, 100], 2, 1.0)]),
    )
    assert answer(library, gemm(100, 100, 100)) == (2, 400.0)
    assert answer(library, gemm(64, 100, 100)) == (1, 1296.0)  # 64 % 64 == 0: kernel 1 usable again


def test_speed_zero_never_wins_a_tie() -> None:
    library = master(
        [solution(1), solution(2)],
        matching([([10, 10, 10], 1, 0.0), ([10, 10, 10], 2, 0.0)]),
    )
    assert answer(library, gemm(10, 10, 10)) == (1, 0.0)  # first in (stable) order, never replaced


def test_no_usable_entry_is_null() -> None:
    library = master([solution(1, {"type": "FalsePred"})], matching([([1, 1, 1], 1, 1.0)]))
    assert answer(library, gemm(1, 1, 1)) == (None, None)


def _equality_then_euclidean(
    equality: list[Any], euclidean: list[Any], solutions: list[dict[str, Any]]
) -> MasterLibrary:
    rows = {
        "type": "Problem",
        "rows": [
            {"predicate": {"type": "EqualityMatching"}, "library": matching(equality, "Equality")},
            {"predicate": {"type": "TruePred"}, "library": matching(euclidean)},
        ],
    }
    return master(solutions, rows)


def test_equality_tries_only_the_fastest_entry_then_falls_through() -> None:
    library = _equality_then_euclidean(
        [([64, 64, 1, 64], 1, 9.0), ([64, 64, 1, 64], 2, 1.0)],
        [([60, 60, 60], 3, 1.0)],
        [solution(1, {"type": "BetaZero"}), solution(2), solution(3)],
    )
    # kernel 1 (fastest with the key) fails BetaZero; kernel 2 is never tried; the Euclidean row answers
    assert answer(library, gemm(64, 64, 64, beta=1.0)) == (3, 48.0)
    assert answer(library, gemm(64, 64, 64, beta=0.0)) == (1, 0.0)
    # a key beyond every entry (C++ undefined behaviour) is no match
    assert answer(library, gemm(999, 64, 64)) == (3, float((999 - 60) ** 2 + 16 + 16))


def test_hardware_rows_fall_through_to_the_generic_row() -> None:
    specific = {
        "type": "AMDGPU",
        "value": {
            "type": "And",
            "value": [{"type": "Processor", "value": "gfx90a"}, {"type": "CUCount", "value": 104}],
        },
    }
    library = MasterLibrary.model_validate(
        {
            "solutions": [solution(1, {"type": "SizeEqual", "index": 0, "value": 7}), solution(2)],
            "library": {
                "type": "Hardware",
                "rows": [
                    {"predicate": specific, "library": _problem_map(matching([([7, 7, 7], 1, 1.0)]))},
                    {"predicate": {"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx90a"}},
                     "library": _problem_map(matching([([8, 8, 8], 2, 1.0)]))},
                ],
            },
        }
    )  # fmt: skip
    assert answer(library, gemm(7, 7, 7)) == (1, 0.0)
    assert answer(library, gemm(9, 9, 9)) == (2, 3.0)  # CU row answers nothing: generic row
    assert answer(library, gemm(7, 7, 7), Hardware(arch="gfx90a", cu_count=110)) == (2, 3.0)
    assert answer(library, gemm(7, 7, 7), Hardware(arch="gfx942")) == (None, None)


def _problem_map(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "ProblemMap",
        "property": {"type": "OperationIdentifier"},
        "map": {NN: {"type": "Problem", "rows": [type_row(node)]}},
    }


def test_problem_map_miss_is_null() -> None:
    library = master([solution(1)], matching([([1, 1, 1], 1, 1.0)]))
    assert answer(library, gemm(1, 1, 1, trans_a="T")) == (None, None)
    assert answer(library, gemm(1, 1, 1, a_type="Half")) == (None, None)


def _forest(
    trees: list[tuple[list[dict[str, Any]], int]], null: int, features: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "type": "DecisionTree",
        "features": features or [{"type": "FreeSizeA", "index": 0}, {"type": "BoundSize", "index": 0}],
        "trees": [{"tree": tree, "value": {"type": "Single", "index": index}} for tree, index in trees],
        "nullValue": {"type": "Single", "index": null},
    }


def _node(feature: int, threshold: float, lte: int, gt: int) -> dict[str, Any]:
    return {"featureIdx": feature, "threshold": threshold, "nextIdxLTE": lte, "nextIdxGT": gt}


def test_decision_tree_features_are_float32() -> None:
    # (float)16777217 == 16777216.0 <= threshold: the LTE branch (true), unlike double arithmetic
    library = master([solution(1), solution(2)], _forest([([_node(0, 16777216.0, -2, -1)], 1)], null=2))
    assert answer(library, gemm(16777217, 1, 1)) == (1, None)
    assert answer(library, gemm(16777219, 1, 1)) == (2, None)


def test_decision_tree_skips_trees_whose_kernel_fails_and_uses_the_null_value() -> None:
    always_true = [_node(0, 1e30, -2, -2)]
    library = master(
        [solution(1, {"type": "BetaZero"}), solution(2), solution(3)],
        _forest([(always_true, 1), ([_node(1, 100.0, -2, -1)], 2)], null=3),
    )
    assert answer(library, gemm(5, 5, 50, beta=0.0)) == (1, None)
    assert answer(library, gemm(5, 5, 50, beta=1.0)) == (2, None)  # tree 0 not even evaluated
    assert answer(library, gemm(5, 5, 500, beta=1.0)) == (3, None)  # no tree: nullValue


def test_granularity_features() -> None:
    features = [{"type": "Tile0Granularity", "value": 1 / 128}, {"type": "CUGranularity", "value": {"mt0": 1 / 128, "mt1": 1 / 64, "cus": 1 / 104}},
                {"type": "WavesPerSIMD", "value": {"mt0": 1 / 128, "mt1": 1 / 64, "cus": 1 / 104, "ws": 0.5}}]  # fmt: skip
    # M=192: 1.5 tiles → granularity 0.75 > 0.7 → true
    library = master([solution(1), solution(2)], _forest([([_node(0, 0.7, -1, -2)], 1)], null=2, features=features))
    assert answer(library, gemm(192, 64, 64)) == (1, None)
    assert answer(library, gemm(256, 64, 64)) == (1, None)  # 2 tiles: granularity 1.0
    assert answer(library, gemm(160, 64, 64)) == (2, None)  # 1.25 tiles: 0.625


def test_distance_is_the_last_one_written() -> None:
    # a Matching row writes DBL_MAX and finds nothing; the DecisionTree row then answers and
    # writes no distance: the C++ fitness still holds DBL_MAX
    rows = {
        "type": "Problem",
        "rows": [
            {"predicate": {"type": "TruePred"}, "library": matching([([1, 1, 1], 1, 1.0)])},
            {"predicate": {"type": "TruePred"}, "library": _forest([([_node(0, 1e30, -2, -2)], 2)], null=-1)},
        ],
    }
    library = master([solution(1, {"type": "FalsePred"}), solution(2)], rows)
    assert answer(library, gemm(1, 1, 1)) == (2, DBL_MAX)


def test_free_size_never_answers() -> None:
    library = master([solution(1)], {"type": "FreeSize", "table": [{"index": 1}]})
    assert answer(library, gemm(1, 1, 1)) == (None, None)
    assert find_all_solutions(library, gemm(1, 1, 1), GFX90A) == []


def test_grid_based_walks_cells() -> None:
    table = matching([([128, 128, 64], 1, 0), ([128, 128, 256], 2, 0), ([256, 256, 64], 3, 0)], "GridBased")
    library = master([solution(1), solution(2, {"type": "BetaZero"}), solution(3)], table)
    index, distance = answer(library, gemm(100, 100, 200, beta=0.0))
    assert index == 2 and distance == pytest.approx(268 + 56 / (256 + 1600))
    assert answer(library, gemm(100, 100, 200, beta=1.0))[0] == 1  # kernel 2 fails: best of the cell
    # beyond every cell the forward search finds nothing and the backward scan takes the first usable
    only_first = master([solution(1), solution(2, {"type": "FalsePred"}), solution(3, {"type": "FalsePred"})], table)
    assert answer(only_first, gemm(300, 300, 64))[0] == 1


def test_granularity_selection_exact_hit() -> None:
    node = {"type": "GranularitySelection", "indices": [1, 2], "exact": [{"key": [64, 64, 1, 64], "value": 2}]}
    library = master([solution(1), solution(2)], node)
    assert answer(library, gemm(64, 64, 64))[0] == 2


def test_placeholder_needs_and_uses_the_loader() -> None:
    inner = MasterLibrary.model_validate({"solutions": [solution(5)], "library": matching([([8, 8, 8], 5, 1.0)])})
    library = master([], {"type": "Placeholder", "value": "TensileLibrary_Type_SS"})
    with pytest.raises(SelectionError, match="no loader"):
        select_solution(library, gemm(8, 8, 8), GFX90A)
    loads: list[str] = []

    def loader(prefix: str) -> MasterLibrary:
        loads.append(prefix)
        return inner

    assert answer(library, gemm(8, 8, 9), loader=loader) == (5, 1.0)
    compiled = compile_library(library, loader=loader)
    before = len(loads)
    for _ in range(3):
        assert select_solution(compiled, gemm(8, 8, 8), GFX90A).index == 5
    assert len(loads) == before + 1  # loaded once per compiled library


def test_unknown_distance_and_node_type_are_errors() -> None:
    library = master([solution(1)], matching([([1, 1, 1], 1, 1.0)]))
    node = library.library.rows[0].library.map[NN].rows[0].library
    object.__setattr__(node, "distance", "Telepathy")
    with pytest.raises(SelectionError, match="unknown matching distance"):
        select_solution(library, gemm(1, 1, 1), GFX90A)


def test_find_all_unions_rows_and_lists_every_usable_entry() -> None:
    library = _equality_then_euclidean(
        [([64, 64, 1, 64], 1, 9.0), ([64, 64, 1, 64], 2, 1.0)],
        [([60, 60, 60], 3, 1.0), ([70, 70, 70], 4, 1.0)],
        [solution(1, {"type": "BetaZero"}), solution(2), solution(3), solution(4, {"type": "FalsePred"})],
    )
    found = find_all_solutions(library, gemm(64, 64, 64, beta=1.0), GFX90A)
    assert [s.index for s in found] == [2, 3]


def test_explain_records_every_decision() -> None:
    library = master(
        [solution(1, {"type": "Free0SizeMultiple", "index": 0, "value": 64}), solution(2)],
        matching([([100, 100, 100], 1, 10.0), ([120, 100, 100], 2, 1.0)]),
    )
    selection = select_solution(library, gemm(100, 100, 100), GFX90A, explain=True)
    messages = [event.message for event in selection.trace]
    assert any("Processor: gfx90a == gfx90a" in m for m in messages)
    assert any("rejected: problem predicate: And[4] Free0SizeMultiple" in m for m in messages)
    assert selection.trace[-1].node == "result" and selection.trace[-1].passed


def test_top_ranks_the_next_kernels() -> None:
    library = master(
        [solution(1), solution(2), solution(3)],
        matching([([10, 10, 10], 1, 1.0), ([12, 10, 10], 2, 1.0), ([20, 10, 10], 3, 1.0)]),
    )
    selection = select_solution(library, gemm(10, 10, 10), GFX90A, top=5)
    assert selection.index == 1
    assert [(c.rank, c.index, c.distance) for c in selection.alternatives] == [(1, 2, 4.0), (2, 3, 100.0)]


def test_rocblas_k0_changes_the_key() -> None:
    library = master([solution(1), solution(2)], matching([([64, 64, 0], 1, 1.0), ([64, 64, 64], 2, 1.0)]))
    from tensilekit.selection import GemmProblem

    problem = GemmProblem(m=64, n=64, k=64, alpha=0.0, beta=1.0)
    assert select_solution(library, problem, GFX90A).index == 2
    assert select_solution(library, problem, GFX90A, rocblas_k0=True).index == 1
    assert FLOAT4 == ["Float"] * 4

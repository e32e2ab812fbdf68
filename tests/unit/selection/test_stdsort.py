"""libstdc++'s ``std::sort`` as the runtime sorts a ``Matching`` table (:mod:`tensilekit.selection.stdsort`).

Every expected permutation is what g++ 12's ``std::sort`` (the compiler of
``../shared/amd/select-oracle``) produced for the same input with the runtime's comparator
``key < || (key == && speed >)``.
"""

from __future__ import annotations

from tensilekit.selection.stdsort import matching_table_order, std_sort_order

# 40 entries, keys 0..9 and speeds 0.5/1.0 drawn at random.
_KEYS40 = [5, 2, 6, 0, 1, 8, 1, 5, 9, 0, 8, 3, 0, 1, 6, 6, 1, 3, 1, 8, 6, 0, 9, 1, 3, 9, 0, 9, 9, 6, 0, 3, 0, 8, 2, 4, 6, 2, 8, 1]  # fmt: skip
_SPEEDS40 = [1.0, 0.5, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0]  # fmt: skip
_GCC12_ORDER40 = [21, 12, 32, 9, 3, 26, 30, 39, 13, 23, 4, 6, 18, 16, 37, 34, 1, 11, 24, 31, 17, 35, 0, 7, 15, 36, 29, 14, 20, 2, 10, 38, 33, 5, 19, 27, 22, 28, 8, 25]  # fmt: skip

# 200 keys from a median-of-three killer (McIlroy's adversary run against this introsort, values
# halved so that they tie in pairs): the partitions degrade and a 172-entry range reaches the
# depth limit, so the heap sort orders it.
_KILLER_KEYS = [81, 0, 62, 1, 90, 2, 61, 3, 80, 4, 60, 5, 97, 6, 59, 7, 79, 8, 58, 9, 89, 10, 57, 11, 78, 12, 14, 13, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61, 60, 59, 58, 94, 77, 88, 76, 98, 75, 87, 74, 93, 73, 86, 72, 96, 71, 85, 70, 92, 69, 84, 68, 99, 67, 83, 66, 91, 65, 82, 64, 95, 63, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 57, 55, 56, 54, 55, 53, 54, 52, 53, 51, 52, 50, 51, 49, 50, 48, 49, 47, 48, 46, 47, 45, 46, 44, 45, 43, 44, 42, 43, 41, 42, 40, 41, 39, 40, 38, 39, 37, 38, 36, 37, 35, 36, 34, 35, 33, 34, 32, 33, 31, 32, 30, 31, 29, 30, 28, 29, 27, 28, 26, 27, 25, 26, 24, 25, 23, 24, 22, 23, 21, 22, 20, 21, 19, 20, 18, 19, 17, 18, 16, 17, 15, 16, 14, 15, 56]  # fmt: skip
_KILLER_GCC12_ORDER = [1, 100, 3, 101, 5, 102, 7, 103, 9, 104, 11, 105, 13, 106, 15, 107, 17, 108, 19, 109, 21, 110, 23, 111, 25, 112, 27, 113, 26, 197, 195, 198, 193, 196, 194, 191, 192, 189, 190, 187, 185, 188, 186, 183, 184, 181, 179, 182, 177, 180, 178, 175, 176, 173, 171, 174, 169, 172, 170, 167, 165, 168, 166, 163, 164, 161, 159, 162, 160, 157, 158, 155, 156, 153, 151, 154, 152, 149, 150, 147, 148, 145, 143, 146, 141, 144, 139, 142, 137, 140, 135, 138, 133, 136, 131, 134, 129, 132, 127, 130, 125, 128, 123, 126, 121, 124, 119, 122, 117, 120, 115, 118, 199, 116, 22, 114, 18, 69, 14, 68, 10, 67, 6, 66, 2, 65, 99, 64, 97, 63, 95, 62, 93, 61, 91, 60, 59, 89, 87, 58, 85, 57, 83, 56, 81, 55, 79, 54, 77, 53, 75, 52, 73, 51, 71, 50, 24, 49, 16, 48, 8, 47, 0, 46, 96, 45, 92, 44, 43, 88, 84, 42, 80, 41, 76, 40, 72, 39, 20, 38, 4, 37, 94, 36, 35, 86, 78, 34, 70, 33, 98, 32, 31, 82, 12, 30, 29, 74, 28, 90]  # fmt: skip


def test_random_table_with_ties() -> None:
    assert matching_table_order([(k,) for k in _KEYS40], _SPEEDS40) == _GCC12_ORDER40


def test_first_key_written_twice_in_21_entries_is_swapped() -> None:
    # introsort's median-of-three moves the middle entry to the front, then partitions
    keys = [(1,), (1,), *[(k,) for k in range(2, 21)]]
    assert matching_table_order(keys, [1.0] * 21)[:3] == [1, 0, 2]


def test_heap_sort_past_the_depth_limit() -> None:
    assert matching_table_order([(k,) for k in _KILLER_KEYS], [1.0] * len(_KILLER_KEYS)) == _KILLER_GCC12_ORDER


def test_without_ties_it_is_the_plain_sort_and_nan_runs_the_comparator() -> None:
    assert matching_table_order([(3,), (1,), (2,)], [1.0, 1.0, 1.0]) == [1, 2, 0]
    assert matching_table_order([(1, 2), (1, 2), (0, 9)], [1.0, 2.0, 0.0]) == [2, 1, 0]
    assert sorted(matching_table_order([(1,), (1,), (0,)], [float("nan"), 1.0, 2.0])) == [0, 1, 2]
    values = [(i * 7919) % 1000 for i in range(3000)]
    order = std_sort_order(len(values), lambda i, j: values[i] < values[j])
    assert [values[i] for i in order] == sorted(values)


def test_ranks_compared_inline_leave_the_comparators_order() -> None:
    """``ranks`` (the inline comparisons of a tied table) is the comparator ``ranks[i] < ranks[j]``
    step for step: the same permutation, ties and the heap sort past the depth limit included."""
    killer = [key // 2 for key in _KILLER_KEYS]
    tied = [(i * 7919) % 23 for i in range(500)]
    for ranks in (killer, tied, _KEYS40, [0] * 40, list(range(30, 0, -1))):

        def less(i: int, j: int, r: list[int] = ranks) -> bool:
            return r[i] < r[j]

        assert std_sort_order(len(ranks), less, ranks=ranks) == std_sort_order(len(ranks), less)

"""The order in which the C++ runtime holds a ``Matching`` table: libstdc++'s ``std::sort``.

Both runtimes sort each table when they load it, with the same comparator (Tensile
``Source/lib/include/Tensile/Serialization/MatchingLibrary.hpp`` ``MappingTraits<
DistanceMatchingTable>::mapping`` @ ROCm/Tensile 09ec347 and a164ed70; tensilelite's file of the
same name @ hipBLASLt 7d9fb683)::

    auto comp = [](Entry const& e1, Entry const& e2) {
        return e1.key < e2.key || (e1.key == e2.key && e1.speed > e2.speed);
    };
    std::sort(table.table.begin(), table.table.end(), comp);

``std::sort`` is not stable, so entries with equal key *and* equal speed (a logic file's duplicate
size rows; every duplicate of a ``GridBased`` table, whose entries carry no speed) end up in the
order libstdc++'s introsort leaves them in. That order is not "unspecified" in practice: it is a
function of the table as written, and every search (``lower_bound`` + scans, Equality's single
probe, the GridBased cell walk) takes equal entries in that order. :func:`std_sort_order` is that
introsort, step for step (``bits/stl_algo.h``/``stl_heap.h`` of GCC ≥ 4.9 through 14, unchanged
in that range: ``__introsort_loop`` with ``_S_threshold = 16`` and depth ``2·⌊log₂ n⌋``,
``__move_median_to_first(first, first+1, mid, last-1)``, ``__unguarded_partition``, heap sort
past the depth limit, then ``__final_insertion_sort``). ROCm builds hipBLASLt and rocBLAS with
amdclang++ against the system libstdc++, and the oracle (``../shared/amd/select-oracle``) with
g++ 12; ``tests/unit/selection/test_stdsort.py`` holds permutations g++ 12 produced.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

_THRESHOLD = 16  # libstdc++ _S_threshold


def std_sort_order(
    size: int, less: Callable[[int, int], bool], *, ranks: Sequence[int] | None = None
) -> list[int]:  # fmt: skip
    """The positions ``0..size-1`` in the order libstdc++'s ``std::sort(first, last, comp)``
    leaves them, where ``less(i, j)`` is ``comp(element i, element j)`` of the input order.
    ``ranks``: ``less(i, j)`` is ``ranks[i] < ranks[j]``, compared inline in the two innermost
    loops (partition and the final insertion sort: nearly every comparison of a big table)."""
    a = list(range(size))
    if size < 2:
        return a

    def linear_insert(last: int) -> None:  # __unguarded_linear_insert
        value = a[last]
        before = last - 1
        if ranks is not None:
            rank = ranks[value]
            while rank < ranks[a[before]]:
                a[last] = a[before]
                last = before
                before -= 1
            a[last] = value
            return
        while less(value, a[before]):
            a[last] = a[before]
            last = before
            before -= 1
        a[last] = value

    def insertion_sort(first: int, last: int) -> None:  # __insertion_sort
        for i in range(first + 1, last):
            if less(a[i], a[first]):
                value = a[i]
                a[first + 1 : i + 1] = a[first:i]
                a[first] = value
            else:
                linear_insert(i)

    def median_to_first(result: int, x: int, y: int, z: int) -> None:  # __move_median_to_first
        if less(a[x], a[y]):
            if less(a[y], a[z]):
                chosen = y
            elif less(a[x], a[z]):
                chosen = z
            else:
                chosen = x
        elif less(a[x], a[z]):
            chosen = x
        elif less(a[y], a[z]):
            chosen = z
        else:
            chosen = y
        a[result], a[chosen] = a[chosen], a[result]

    def partition(first: int, last: int, pivot: int) -> int:  # __unguarded_partition
        if ranks is not None:
            pivot_rank = ranks[a[pivot]]  # the pivot stays in place while partitioning
            while True:
                while ranks[a[first]] < pivot_rank:
                    first += 1
                last -= 1
                while pivot_rank < ranks[a[last]]:
                    last -= 1
                if not first < last:
                    return first
                a[first], a[last] = a[last], a[first]
                first += 1
        while True:
            while less(a[first], a[pivot]):
                first += 1
            last -= 1
            while less(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def adjust_heap(first: int, hole: int, length: int, value: int) -> None:  # __adjust_heap + __push_heap
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first: int, last: int) -> None:  # __partial_sort(first, last, last)
        length = last - first
        parent = (length - 2) // 2
        while True:  # __make_heap (length > 16 here)
            adjust_heap(first, parent, length, a[first + parent])
            if parent == 0:
                break
            parent -= 1
        while last - first > 1:  # __sort_heap / __pop_heap
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def introsort_loop(first: int, last: int, depth: int) -> None:
        while last - first > _THRESHOLD:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort_loop(cut, last, depth)
            last = cut

    introsort_loop(0, size, 2 * (size.bit_length() - 1))
    if size > _THRESHOLD:
        insertion_sort(0, _THRESHOLD)
        for i in range(_THRESHOLD, size):
            linear_insert(i)
    else:
        insertion_sort(0, size)
    return a


def matching_table_order(keys: Sequence[tuple[int, ...]], speeds: Sequence[float]) -> list[int]:
    """Positions of a ``Matching`` table's entries (as written) in the order the runtime's loader
    sorts them: key ascending, speed descending, equal (key, speed) entries as ``std::sort``
    leaves them. Without such ties the order is the plain sort's (and computed that way)."""
    size = len(keys)
    if any(math.isnan(speed) for speed in speeds):
        # NaN breaks the strict weak ordering; run the comparator itself, as the C++ does
        def less_raw(i: int, j: int) -> bool:
            return keys[i] < keys[j] or (keys[i] == keys[j] and speeds[i] > speeds[j])

        return std_sort_order(size, less_raw)
    plain = sorted(range(size), key=lambda i: (keys[i], -speeds[i]))
    rank = [0] * size
    tied = False
    for place in range(1, size):
        previous, current = plain[place - 1], plain[place]
        same = keys[previous] == keys[current] and speeds[previous] == speeds[current]
        tied = tied or same
        rank[current] = rank[previous] if same else rank[previous] + 1
    if not tied:
        return plain
    return std_sort_order(size, lambda i, j: rank[i] < rank[j], ranks=rank)


__all__ = ["matching_table_order", "std_sort_order"]

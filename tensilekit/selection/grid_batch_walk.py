"""hipBLASLt 0.12.1's ``GridBased`` walk: the batch is looked up before it is folded.

``findBestKeyMatch_GridBased`` of 0.12.1 (``PropertyMatching.hpp``, the ``HipblasltVersion``
rules ``grid_batch_first`` and ``grid_ties_to_later``) walks cells of equal (M, N, batch), not
(M, N): within the (M, N) cell it looks up the first batch at or above the query's (the cell's
largest if none). After the first cell, a query with batch > 1 has its batch folded into M (M > N)
or N and set to 1; if the entry found in that first cell has batch 1 (or none was found and the
table's first entry has batch 1), the walk restarts from the table's start with the folded key,
otherwise it goes on with it. Within a cell the *last* entry of least distance wins. The rest
(the triangular M/N group walk for ``count`` kernels, the backward scan when it comes up short)
is 7d9fb683's (:meth:`~tensilekit.selection.walk.ReferenceSelector._grid_walk`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import TypeVar

DBL_MAX = 1.7976931348623157e308

T = TypeVar("T")


def batch_first_grid_walk(
    keys: Sequence[tuple[int, ...]],
    key: tuple[int, ...],
    accept: Callable[[int], T | None],
    distance: Callable[[Sequence[int], Sequence[int]], float],
    count: int,
) -> list[tuple[T, float, int]]:
    """Up to ``count`` (accepted value, distance, position) of ``keys`` (sorted as the runtime
    sorts them) for the query ``key``; ``accept(position)`` is the runtime's ``transform`` (the
    kernel if its predicates hold, else None). Values are listed once each (by equality)."""
    n = len(keys)
    if n == 0:
        return []
    column_m = [k[0] for k in keys]
    column_n = [k[1] for k in keys]
    column_b = [k[2] if len(k) > 3 else 1 for k in keys]
    query = list(key)
    found: list[tuple[T, float, int]] = []
    base_n = 1
    while base_n * (base_n + 1) // 2 < count:
        base_n += 1
    step_n = 0
    m_upper = n_upper = b_lower = b_upper = 0
    batch_position = 0  # the C++ ``batch`` iterator: table.begin() until an entry is accepted
    first_find = True
    while b_upper != n and len(found) < count:
        if step_n == base_n and base_n != 1:
            step_n, base_n = 1, base_n - 1
            start = m_upper  # the next M group
        else:
            step_n += 1
            start = n_upper  # the next N cell
        if start == n:  # nothing left: every lower_bound gives end(), the cell is empty
            b_lower = b_upper = n_upper = m_upper = n
        else:
            m_lower = bisect.bisect_left(column_m, min(query[0], column_m[-1]), start, n)
            m_upper = bisect.bisect_left(column_m, min(column_m[m_lower] + 1, column_m[-1] + 1), m_lower, n)
            n_lower = bisect.bisect_left(column_n, min(query[1], column_n[m_upper - 1]), m_lower, m_upper)
            n_upper = bisect.bisect_left(
                column_n, min(column_n[n_lower] + 1, column_n[m_upper - 1] + 1), n_lower, m_upper
            )
            batch = query[2] if len(query) > 3 else 1
            b_lower = bisect.bisect_left(column_b, min(batch, column_b[n_upper - 1]), n_lower, n_upper)
            b_upper = bisect.bisect_left(
                column_b, min(column_b[b_lower] + 1, column_b[n_upper - 1] + 1), b_lower, n_upper
            )
        best: tuple[T, float, int] | None = None
        best_distance = DBL_MAX
        for position in range(b_lower, b_upper):
            d = distance(query, keys[position])
            if d <= best_distance:
                value = accept(position)
                if value is not None:
                    best, best_distance, batch_position = (value, d, position), d, position
        if first_find:
            first_find = False
            if len(query) > 3 and query[2] != 1:
                if query[0] > query[1]:
                    query[0] *= query[2]
                else:
                    query[1] *= query[2]
                query[2] = 1
                if column_b[batch_position] == 1:  # the batch is not in the grid: start again, folded
                    # baseN = stepN = 0 as the C++ resets them: from here on the walk steps from N
                    # cell to N cell (its triangle's "next M group" branch never comes again)
                    m_upper = n_upper = b_lower = b_upper = 0
                    base_n = step_n = 0
                    continue
        if best is not None and all(best[0] != listed[0] for listed in found):
            found.append(best)
    if len(found) < count:
        for position in range(b_lower - 1, -1, -1):
            value = accept(position)
            if value is None or any(value == listed[0] for listed in found):
                continue
            found.append((value, distance(query, keys[position]), position))
            if len(found) == count:
                break
    return found


__all__ = ["batch_first_grid_walk"]

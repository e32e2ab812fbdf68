"""Nearest-key search over the usable entries of a ``Matching`` table, one query or many at once.

Every function here computes exactly what ``DistanceMatchingTable::findBestKeyMatch_BinSearch``
returns when every entry it sees is usable (its solution passes ``canSolve``). The fast path
hands them the *usable sub-table* for the query's predicate signature, which gives the same
answer as the C++ scan over the full table: an unusable entry never becomes the best, and the
early-exit bound only grows along each scan direction (``g = (q0 - p0)²`` for Euclidean,
``|q0 - p0|`` for Manhattan), so an unusable entry that would stop the scan is followed by usable
ones that stop it as well.

:func:`scan_one` runs the C++ loop literally. The others use its closed form. With ``p`` the query
key, ``lb = lower_bound(p)`` and ``D`` the smallest distance over the (usable) table — the C++
always ends with ``D``, only the choice among ties is order dependent:

* if some entry at or right of ``lb`` has distance ``D``: the rightward scan takes the first of
  them, then replaces it by later ones of strictly higher speed that it still reaches (those with
  ``g < D``, or whose key equals ``p``); the leftward scan then replaces that winner by an entry
  with distance ``D`` and ``g < D`` only if it is strictly faster (first such in leftward order);
* otherwise the leftward scan meets the ties in descending position: the first is taken, later
  ones with ``g < D`` replace it when strictly faster.

So only the entries at distance ``D`` matter (:func:`resolve_ties`). :func:`nearest_one` finds them
for one query by scanning only the first-component band ``g <= D0`` around ``lb`` (``D0`` from the
neighbours of ``lb``); :func:`nearest_many` finds them for many queries with a k-d tree when SciPy
is installed and otherwise with the windowed closed form :func:`scan_many`.
"""

from __future__ import annotations

import array
import bisect
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

DBL_MAX = sys.float_info.max
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def scan_one(
    keys: Sequence[tuple[int, ...]],
    speeds: Sequence[float],
    key: tuple[int, ...],
    distance: Callable[[Sequence[int], Sequence[int]], float],
    bound: Callable[[Sequence[int], Sequence[int], float], bool],
) -> tuple[int, float]:
    """The C++ binary-search scan over entries that are all usable: (position or -1, distance)."""
    n = len(keys)
    if n == 0:
        return -1, DBL_MAX
    start = bisect.bisect_left(keys, key)
    best, best_distance, best_speed = -1, DBL_MAX, 0.0
    for position in range(start, n):
        entry = keys[position]
        if best >= 0 and not bound(key, entry, best_distance):
            break
        d = distance(key, entry)
        if d < best_distance or (d == best_distance and speeds[position] > best_speed):
            best, best_distance, best_speed = position, d, speeds[position]
    for position in range(start - 1, -1, -1):
        entry = keys[position]
        if best >= 0 and not bound(key, entry, best_distance):
            break
        d = distance(key, entry)
        if d < best_distance or (d == best_distance and speeds[position] > best_speed):
            best, best_distance, best_speed = position, d, speeds[position]
    return best, best_distance


def _terms(
    entries: npt.NDArray[np.int64], query: npt.NDArray[np.int64], squared: bool
) -> tuple[FloatArray, FloatArray]:
    diff = entries - query[:, None, :]
    if squared:
        as_float = diff.astype(np.float64)
        terms = as_float * as_float
    else:
        terms = np.abs(diff).astype(np.float64)
    total = terms[..., 0].copy()
    for component in range(1, terms.shape[-1]):
        total += terms[..., component]
    return total, terms[..., 0]


def scan_many(
    keys: npt.NDArray[np.int64],
    speeds: FloatArray,
    starts: IntArray,
    queries: npt.NDArray[np.int64],
    squared: bool,
    window: int = 16,
) -> tuple[IntArray, FloatArray]:
    """Vectorised :func:`scan_one` for ``queries`` (rows) with their ``lower_bound`` ``starts``.

    ``squared`` selects Euclidean (``g = d0²``) or Manhattan (``g = |d0|``). Returns the winning
    position per query (-1 if the table is empty) and its distance (``DBL_MAX`` if none).
    """
    count, size = len(queries), len(keys)
    positions = np.full(count, -1, dtype=np.int64)
    distances = np.full(count, DBL_MAX)
    if size == 0 or count == 0:
        return positions, distances
    pending = np.arange(count)
    width = max(1, window)
    while pending.size:
        width = min(width, size)
        done, pos, dist = _scan_window(keys, speeds, starts[pending], queries[pending], squared, width, size)
        positions[pending[done]] = pos[done]
        distances[pending[done]] = dist[done]
        pending = pending[~done]
        width *= 8
    return positions, distances


def _scan_window(
    keys: npt.NDArray[np.int64],
    speeds: FloatArray,
    starts: IntArray,
    queries: npt.NDArray[np.int64],
    squared: bool,
    width: int,
    size: int,
) -> tuple[npt.NDArray[np.bool_], IntArray, FloatArray]:
    steps = np.arange(width)
    inf = np.inf
    # rightward window
    right_pos = starts[:, None] + steps
    right_valid = right_pos < size
    right_clip = np.minimum(right_pos, size - 1)
    right_keys = keys[right_clip]
    d_right, g_right = _terms(right_keys, queries, squared)
    d_right[~right_valid] = inf
    equal_key = np.all(right_keys == queries[:, None, :], axis=-1) & right_valid
    has_right = starts < size
    first_right = np.argmin(d_right, axis=1)
    rows = np.arange(len(queries))
    best_right = d_right[rows, first_right]
    cand_right = (
        right_valid
        & (d_right == best_right[:, None])
        & ((steps == first_right[:, None]) | (g_right < best_right[:, None]) | equal_key)
    )
    speed_right = np.where(cand_right, speeds[right_clip], -inf)
    win_right = np.argmax(speed_right, axis=1)
    right_speed = speed_right[rows, win_right]
    right_full = starts + width >= size
    last_g = g_right[:, -1]
    done_right = right_full | (last_g > best_right) | ((last_g >= best_right) & ~equal_key[:, -1])
    # leftward window
    left_pos = starts[:, None] - 1 - steps
    left_valid = left_pos >= 0
    left_clip = np.maximum(left_pos, 0)
    d_left, g_left = _terms(keys[left_clip], queries, squared)
    d_left[~left_valid] = inf
    has_left = starts > 0
    first_left = np.argmin(d_left, axis=1)
    best_left = d_left[rows, first_left]
    cand_left = (
        left_valid & (d_left == best_left[:, None]) & ((steps == first_left[:, None]) | (g_left < best_left[:, None]))
    )
    win_left = np.argmax(np.where(cand_left, speeds[left_clip], -inf), axis=1)
    # a left entry at exactly the rightward distance replaces it only when strictly faster
    right_distance = np.where(has_right, best_right, inf)
    cand_tie = left_valid & (d_left == right_distance[:, None]) & (g_left < right_distance[:, None])
    speed_tie = np.where(cand_tie, speeds[left_clip], -inf)
    win_tie = np.argmax(speed_tie, axis=1)
    tie_speed = speed_tie[rows, win_tie]
    left_full = starts - width <= 0
    end_best = np.minimum(right_distance, best_left)
    done_left = left_full | (g_left[:, -1] >= end_best)
    # combine
    pos_right = starts + win_right
    pos_left_own = starts - 1 - win_left
    pos_tie = starts - 1 - win_tie
    use_left = has_left & (~has_right | (best_left < right_distance))
    use_tie = has_left & has_right & (best_left == right_distance) & (tie_speed > right_speed)
    position = np.where(has_right, pos_right, -1)
    distance = np.where(has_right, best_right, DBL_MAX)
    position = np.where(use_left, pos_left_own, position)
    distance = np.where(use_left, best_left, distance)
    position = np.where(use_tie, pos_tie, position)
    distance = np.where(use_tie, right_distance, distance)
    return done_right & done_left, position, distance


_EXACT_LIMIT = 1 << 24  # below this every key and query product stays exact in float64


def resolve_ties(
    ties: Sequence[int],
    start: int,
    distance: float,
    first: Sequence[int],
    keys: Sequence[tuple[int, ...]],
    speeds: Sequence[float],
    key: tuple[int, ...],
    squared: bool,
) -> int:
    """The C++ choice among the entries ``ties`` (ascending positions) at the minimum distance."""
    p0 = key[0]

    def reached(position: int) -> bool:
        g = float(first[position] - p0)
        return (g * g if squared else abs(g)) < distance

    right = [t for t in ties if t >= start]
    left = [t for t in reversed(ties) if t < start]
    if right:
        best = right[0]
        best_speed = speeds[best]
        for position in right[1:]:
            if speeds[position] > best_speed and (reached(position) or keys[position] == key):
                best, best_speed = position, speeds[position]
        for position in left:
            if speeds[position] > best_speed and reached(position):
                best, best_speed = position, speeds[position]
        return best
    best = left[0]
    best_speed = speeds[best]
    for position in left[1:]:
        if speeds[position] > best_speed and reached(position):
            best, best_speed = position, speeds[position]
    return best


def _exact_distance(entry: Sequence[int], key: Sequence[int], squared: bool) -> float:
    # C++ order: int64 difference, converted to double, squared (or abs), summed left to right
    total = 0.0
    for a, b in zip(entry, key, strict=True):
        d = float(a - b)
        total += d * d if squared else abs(d)
    return total


def _squared3(entry: Sequence[int], key: Sequence[int]) -> float:
    a = float(entry[0] - key[0])
    b = float(entry[1] - key[1])
    c = float(entry[2] - key[2])
    return a * a + b * b + c * c


class Band:
    """A sorted ``Matching`` table, prepared once for :func:`nearest_one` and :func:`nearest_many`."""

    def __init__(
        self, keys: npt.NDArray[np.int64], speeds: FloatArray, key_tuples: list[tuple[int, ...]] | None = None
    ) -> None:
        """``key_tuples``: the same keys as tuples, when the caller holds them already (shared, not built again)."""
        self.keys = keys
        self._key_tuples = key_tuples
        self.speeds = speeds
        self.size = len(keys)
        self.floats = keys.astype(np.float64)
        self.norms = np.einsum("ij,ij->i", self.floats, self.floats)
        self.exact = bool(self.size == 0 or np.abs(keys).max() < _EXACT_LIMIT)
        self._lists: tuple[list[tuple[int, ...]], list[int], list[float]] | None = None

    def lists(self) -> tuple[list[tuple[int, ...]], list[int], list[float]]:
        """(keys as tuples, first key component, speeds) as Python lists, built on first use."""
        if self._lists is None:
            keys = self._key_tuples if self._key_tuples is not None else [tuple(row) for row in self.keys.tolist()]
            self._lists = (keys, [key[0] for key in keys], self.speeds.tolist())
        return self._lists


class Usable:
    """The entries of a :class:`Band` whose solutions pass for one predicate signature."""

    def __init__(self, band: Band, mask: npt.NDArray[np.bool_]) -> None:
        self.band = band
        self.mask = mask
        self.positions = np.flatnonzero(mask)
        self.count = len(self.positions)
        self.before = np.concatenate(([0], np.cumsum(mask))).astype(np.int64)
        """``before[i]``: number of usable entries at positions ``< i`` (maps table → sub positions)."""
        self._positions: array.array[int] | None = None
        self._arrays: tuple[npt.NDArray[np.int64], FloatArray, FloatArray, FloatArray] | None = None
        self._tree: Any = None

    def position_ints(self) -> Sequence[int]:
        """The usable table positions as a sequence of Python ints (sliced and iterated by
        :func:`nearest_one`), built on first use: an ``array('q')``, 8 bytes a position, not a
        list of int objects (~40 bytes each: 22 MB on rocBLAS_Full's 100 000 queries; ``before``
        stays a numpy array, whose list per signature held ~100 MB)."""
        if self._positions is None:
            self._positions = array.array("q", self.positions.astype(np.int64, copy=False).tobytes())
        return self._positions

    def arrays(self) -> tuple[npt.NDArray[np.int64], FloatArray, FloatArray, FloatArray]:
        """(keys, speeds, float keys, squared norms) of the usable entries."""
        if self._arrays is None:
            band, where = self.band, self.positions
            self._arrays = (band.keys[where], band.speeds[where], band.floats[where], band.norms[where])
        return self._arrays

    @property
    def has_tree(self) -> bool:
        return self._tree is not None

    def tree(self) -> Any:
        if self._tree is None:
            from scipy.spatial import cKDTree  # type: ignore[import-untyped, import-not-found, unused-ignore]

            self._tree = cKDTree(self.arrays()[2], leafsize=64, balanced_tree=True)
        return self._tree


def nearest_one(band: Band, usable: Usable, key: tuple[int, ...], squared: bool) -> tuple[int, float]:
    """One query: (winning table position or -1, distance) exactly as the C++ scan would give."""
    if usable.count == 0:
        return -1, DBL_MAX
    keys, first, speeds = band.lists()
    positions, before = usable.position_ints(), usable.before
    start = bisect.bisect_left(keys, key)
    # an upper bound for the minimum: the usable entries next to lower_bound
    sub_start = int(before[start])
    three = squared and len(key) == 3
    bound = math.inf
    for position in positions[max(0, sub_start - 2) : sub_start + 2]:
        d = _squared3(keys[position], key) if three else _exact_distance(keys[position], key, squared)
        if d < bound:
            bound = d
    p0 = key[0]
    reach = math.isqrt(int(bound)) if squared else int(bound)
    sub_low = int(before[bisect.bisect_left(first, p0 - reach)])
    sub_high = int(before[bisect.bisect_right(first, p0 + reach)])
    if sub_high - sub_low <= 32:
        best = math.inf
        ties: list[int] = []
        for position in positions[sub_low:sub_high]:
            d = _squared3(keys[position], key) if three else _exact_distance(keys[position], key, squared)
            if d < best:
                best = d
                ties = [position]
            elif d == best:
                ties.append(position)
    else:
        _, _, floats, norms = usable.arrays()
        query = np.array(key, dtype=np.float64)
        if squared and band.exact and max(key) < _EXACT_LIMIT:
            # |q|² - 2 q·p is exact in float64 here and orders like the distance
            # 2 (p·q), not (2p)·q off a doubled copy: scaling by 2 is exact, so the same bits
            values = norms[sub_low:sub_high] - 2.0 * (floats[sub_low:sub_high] @ query)
            smallest = float(values.min())
            best = smallest + float(query @ query)
            hits = (values == smallest).nonzero()[0]
        else:
            diff = floats[sub_low:sub_high] - query
            values = _ordered_sum(diff * diff if squared else np.abs(diff))
            best = float(values.min())
            hits = (values == best).nonzero()[0]
        ties = usable.positions[hits + sub_low].tolist()
    if len(ties) == 1:
        return ties[0], best
    return resolve_ties(ties, start, best, first, keys, speeds, key, squared), best


def _ordered_sum(terms: FloatArray) -> FloatArray:
    total = terms[:, 0].copy()
    for column in range(1, terms.shape[1]):
        total += terms[:, column]
    return total


def have_kdtree() -> bool:
    """Whether SciPy is installed: its k-d tree speeds up :func:`nearest_many` (imported on first use)."""
    import importlib.util

    return importlib.util.find_spec("scipy") is not None


#: Neighbours asked of the k-d tree for a query whose two nearest entries tie, then, for the
#: queries whose neighbours all tie (a key repeated in many entries: lint's shadowing witnesses
#: sit one step from keys of up to dozens of entries), more of them before each such query is
#: scanned alone (rocBLAS_Full's witnesses: 16 300 of 54 300 tied queries crowded at 6, none at 48)
_NEIGHBOURS = (6, 48)
_PARALLEL_QUERIES = 20_000


def nearest_many(
    band: Band,
    usable: Usable,
    queries: npt.NDArray[np.int64],
    starts: Callable[[IntArray], IntArray],
    squared: bool,
    *,
    use_tree: bool | None = None,
) -> tuple[IntArray, FloatArray]:
    """Many queries (rows): table positions (-1 none) and distances, as :func:`nearest_one` gives.

    ``starts(rows)`` returns the table ``lower_bound`` of those query rows; it is only needed for
    queries whose minimum distance is tied.
    """
    count = len(queries)
    if usable.count == 0 or count == 0:
        return np.full(count, -1, dtype=np.int64), np.full(count, DBL_MAX)
    if use_tree is None:
        use_tree = have_kdtree()
    keys, speeds, floats, _ = usable.arrays()
    exact = band.exact and int(np.abs(queries).max()) < _EXACT_LIMIT
    if not use_tree or not exact:
        found, best = scan_many(keys, speeds, usable.before[starts(np.arange(count))], queries, squared)
        return np.where(found >= 0, usable.positions[np.maximum(found, 0)], -1), best
    tree = usable.tree()
    norm = 2 if squared else 1
    k = min(2, usable.count)
    # many queries are split over every core (answers do not depend on it); few are not worth the threads
    workers = -1 if count >= _PARALLEL_QUERIES else 1
    _, nearest = tree.query(queries.astype(np.float64), k=k, p=norm, workers=workers)
    nearest = np.asarray(nearest, dtype=np.int64).reshape(count, k)
    distance = _distances(keys[nearest], queries, squared)
    best = distance[:, 0].copy()
    chosen = nearest[:, 0].copy()
    if k > 1:
        tied = np.flatnonzero(distance[:, 1] == distance[:, 0])
        if tied.size:
            chosen[tied], best[tied] = _resolve_tied(band, usable, queries[tied], starts(tied), squared)
    return usable.positions[chosen], best


def _distances(entries: npt.NDArray[np.int64], queries: npt.NDArray[np.int64], squared: bool) -> FloatArray:
    diff = (entries - queries[:, None, :]).astype(np.float64)
    terms = diff * diff if squared else np.abs(diff)
    return _ordered_sum_3d(terms)


def _ordered_sum_3d(terms: FloatArray) -> FloatArray:
    total = terms[..., 0].copy()
    for column in range(1, terms.shape[-1]):
        total += terms[..., column]
    return total


def _resolve_tied(
    band: Band, usable: Usable, queries: npt.NDArray[np.int64], table_starts: IntArray, squared: bool
) -> tuple[IntArray, FloatArray]:
    """Sub-table positions of the C++ choice for queries whose two nearest entries tie."""
    chosen = np.empty(len(queries), dtype=np.int64)
    best = np.empty(len(queries), dtype=np.float64)
    rows = np.arange(len(queries))
    for neighbours in _NEIGHBOURS:
        if not rows.size:
            break
        chosen[rows], best[rows], crowded = _resolve_among(
            usable, queries[rows], table_starts[rows], squared, min(neighbours, usable.count)
        )
        rows = rows[crowded]
    for row in rows.tolist():  # more ties may lie beyond all the neighbours asked
        key = tuple(int(x) for x in queries[row])
        position, best[row] = nearest_one(band, usable, key, squared)
        chosen[row] = int(usable.before[position])
    return chosen, best


def _resolve_among(
    usable: Usable, queries: npt.NDArray[np.int64], table_starts: IntArray, squared: bool, k: int
) -> tuple[IntArray, FloatArray, npt.NDArray[np.bool_]]:
    """:func:`_resolve_tied` among each query's ``k`` nearest entries, and which queries are
    crowded: all ``k`` tie, and more may lie beyond them (their answers are to be found again)."""
    count = len(queries)
    keys, speeds, _, _ = usable.arrays()
    _, found = usable.tree().query(queries.astype(np.float64), k=k, p=2 if squared else 1)
    found = np.asarray(found, dtype=np.int64).reshape(count, k)
    entries = keys[found]  # (count, k, arity)
    diff = (entries - queries[:, None, :]).astype(np.float64)
    distance = _ordered_sum_3d(diff * diff if squared else np.abs(diff))
    best = distance.min(axis=1)
    tie = distance == best[:, None]
    # all k neighbours tied: more ties may lie beyond them; those queries take the one-by-one path
    crowded = tie.all(axis=1) & (k < usable.count)
    g = diff[..., 0] * diff[..., 0] if squared else np.abs(diff[..., 0])
    reached = g < best[:, None]
    equal_key = np.all(entries == queries[:, None, :], axis=-1)
    speed = speeds[found]
    sub_starts = usable.before[table_starts]
    right = tie & (found >= sub_starts[:, None])
    left = tie & ~right
    big = np.iinfo(np.int64).max
    first_right = np.where(right, found, big).min(axis=1)
    has_right = first_right != big
    cand_right = right & ((found == first_right[:, None]) | reached | equal_key)
    right_pos, right_speed = _first_fastest(found, speed, cand_right, ascending=True)
    tie_pos, tie_speed = _first_fastest(found, speed, left & reached, ascending=False)
    last_left = np.where(left, found, -1).max(axis=1)
    cand_left = left & ((found == last_left[:, None]) | reached)
    left_pos, _ = _first_fastest(found, speed, cand_left, ascending=False)
    chosen = np.where(has_right, np.where(tie_speed > right_speed, tie_pos, right_pos), left_pos)
    return chosen, best, crowded


def _first_fastest(
    positions: IntArray, speeds: FloatArray, mask: npt.NDArray[np.bool_], *, ascending: bool
) -> tuple[IntArray, FloatArray]:
    """Per row: among ``mask`` the highest speed, ties to the lowest (or highest) position."""
    masked = np.where(mask, speeds, -np.inf)
    fastest = masked.max(axis=1)
    at_fastest = mask & (masked == fastest[:, None])
    if ascending:
        chosen = np.where(at_fastest, positions, np.iinfo(np.int64).max).min(axis=1)
    else:
        chosen = np.where(at_fastest, positions, -1).max(axis=1)
    return chosen, fastest


__all__ = [
    "DBL_MAX",
    "Band",
    "Usable",
    "have_kdtree",
    "nearest_many",
    "nearest_one",
    "resolve_ties",
    "scan_many",
    "scan_one",
]

"""Distances between a query key and a table key, exactly as Tensile's ``Distance.hpp`` computes them.

Every distance is a function ``(p, q) -> float`` where ``p`` is the problem's key (``ProblemKey``,
e.g. ``[M, N, K]``) and ``q`` a table entry's key. Alongside each distance sits its
``improvementPossible(p, q, best)`` bound, which the binary-search scan of
``DistanceMatchingTable::findBestKeyMatch_BinSearch`` uses to stop early (see
:mod:`tensilekit.selection.walk`). The arithmetic follows the C++ operand by operand so results
are bit-identical, including the traps:

* ``Euclidean`` (``EuclideanDistance``) is the **squared** L2 distance, no square root: each
  difference is taken in int64, then squared and summed in double, left to right. Its bound is
  ``(p0 - q0)² < best or p == q``: only the first key component is consulted.
* ``Equality`` computes the same squared distance, but ``Matching`` tables with this distance use a
  special exact-key probe instead of a scan (the distance is reported as ``0.0`` on a hit).
* ``Manhattan`` (``ManhattanDistance``): sum of absolute int64 differences; bound ``|p0 - q0| < best``.
* ``Ratio`` (``RatioDistance``): ``1 + Σ |ln(p_i / q_i)|``; never stops early. Zero sizes give
  IEEE ``inf``/``nan`` as in C++, never a Python exception.
* ``JSD`` (``JSDivergence``): Jensen-Shannon divergence of the first three components, each key
  normalised to sum 1; the bound is the first component's share of the divergence.
* ``GridBased`` (``GridBasedDistance``): the rocBLAS grid heuristic over ``q = (M, N, K)``, with
  C ``round`` (half away from zero) and ``pow``; never stops early.
* ``Random`` (``RandomDistance``): ``double(rand())``. C's ``rand()`` is process-global state; this
  module keeps one glibc-compatible generator seeded with 1 (the C default), so a fresh process
  gives glibc's sequence. Results with ``Random`` tables are reproducible only in that sense.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Key = Sequence[int]
DistanceFunction = Callable[[Key, Key], float]
BoundFunction = Callable[[Key, Key, float], bool]

_INF = math.inf


def euclidean_distance(p: Key, q: Key) -> float:
    """Squared Euclidean distance (``EuclideanDistance::operator()``)."""
    distance = 0.0
    for a, b in zip(p, q, strict=True):
        d = float(a - b)
        distance += d * d
    return distance


def equality_distance(p: Key, q: Key) -> float:
    """``Equality::operator()``: the squared Euclidean distance (used only to order candidates)."""
    return euclidean_distance(p, q)


def manhattan_distance(p: Key, q: Key) -> float:
    """Sum of absolute differences (``ManhattanDistance``)."""
    distance = 0.0
    for a, b in zip(p, q, strict=True):
        distance += float(abs(a - b))
    return distance


def _divide(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(_INF, a) * math.copysign(1.0, b)
    return a / b


def _log(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0.0:
        return -_INF
    if math.isinf(x):
        return _INF
    return math.log(x)


def ratio_distance(p: Key, q: Key) -> float:
    """``1 + Σ |ln(p_i / q_i)|`` (``RatioDistance``)."""
    distance = 1.0
    for a, b in zip(p, q, strict=True):
        distance += abs(_log(_divide(float(a), float(b))))
    return distance


def _normalise3(key: Key) -> list[float]:
    total = 0.0
    for value in key[:3]:
        total += value
    return [_divide(float(value), total) for value in key[:3]]


def _kl_term(x: float, m: float) -> float:
    return x * _log(_divide(x, m))


def jsd_distance(p: Key, q: Key) -> float:
    """Jensen-Shannon divergence of the first three components (``JSDivergence``)."""
    norm_p, norm_q = _normalise3(p), _normalise3(q)
    m = [0.5 * (a + b) for a, b in zip(norm_p, norm_q, strict=True)]
    kl_p = 0.0
    kl_q = 0.0
    for i in range(3):
        kl_p += _kl_term(norm_p[i], m[i])
        kl_q += _kl_term(norm_q[i], m[i])
    return 0.5 * kl_p + 0.5 * kl_q


def _c_round(x: float) -> float:
    # std::round: half away from zero (Python's round() is half-to-even).
    if math.isnan(x) or math.isinf(x):
        return x
    magnitude = abs(x)
    floor = math.floor(magnitude)
    rounded = floor + 1.0 if magnitude - floor >= 0.5 else floor
    return math.copysign(rounded, x)


def grid_based_distance(p: Key, q: Key) -> float:
    """rocBLAS grid heuristic (``GridBasedDistance``): favour grid points covering the problem.

    K is the 4th key value when there is one (tensilelite's ``[M, N, batch, K]`` keys), else the
    3rd (Tensile's ``[M, N, K]``): ``Distance.hpp`` ``GridBasedDistance`` reads
    ``p.size() > 3 ? p[3] : p[2]`` for both keys. The K term is ``|tK - K| / (tK + 8 K)`` (Tensile,
    hipBLASLt 7d9fb683); :func:`grid_based_distance_absolute_k` is hipBLASLt 0.12.1's."""
    big_k = float(q[3] if len(q) > 3 else q[2])
    problem_k = p[3] if len(p) > 3 else p[2]
    denominator = big_k + problem_k * 8
    difference = abs(big_k - problem_k)
    return _grid_mn_distance(p, q) + (difference / denominator if denominator else _divide(difference, denominator))


def grid_based_distance_absolute_k(p: Key, q: Key) -> float:
    """hipBLASLt 0.12.1's ``GridBasedDistance``: the M/N term of :func:`grid_based_distance`
    plus ``|tK - K|`` (``HipblasltVersion.grid_k_ratio`` False). Within a grid cell (one M, N)
    only the K term differs, so the nearest K wins however far."""
    big_k = q[3] if len(q) > 3 else q[2]
    problem_k = p[3] if len(p) > 3 else p[2]
    return _grid_mn_distance(p, q) + float(abs(big_k - problem_k))


def _grid_mn_distance(p: Key, q: Key) -> float:
    """The M/N part of ``GridBasedDistance``: ``std::round`` of the coverage term."""
    # ``a / b if b else _divide(a, b)``: _divide's answer, without its call where b != 0 (NaN
    # included); this distance is computed once per usable entry of a cell on every warm query
    p0, p1 = p[0], p[1]
    big_m, big_n = float(q[0]), float(q[1])
    small_m, small_n = p0 <= 32768, p1 <= 32768
    step_m = math.ceil(float(p0) / big_m if big_m else _divide(float(p0), big_m)) if small_m else 1.0
    step_n = math.ceil(float(p1) / big_n if big_n else _divide(float(p1), big_n)) if small_n else 1.0
    if small_m and small_n:
        covered = step_m * big_m * step_n * big_n
        coverage = float(p0 * p1) / covered if covered else _divide(float(p0 * p1), covered)
        squared = math.pow(coverage, 2)
        unrounded = 100 * step_m * step_n / squared if squared else _divide(100 * step_m * step_n, squared)
    else:
        spread = math.pow(math.pow(p0 - q[0], 2) + math.pow(p1 - q[1], 2), 0.5)
        unrounded = 10000 * step_m * step_n * spread
    if 0.0 < unrounded < _INF:  # std::round of a finite positive value, inline
        floor = math.floor(unrounded)
        distance = floor + 1.0 if unrounded - floor >= 0.5 else float(floor)
    else:
        distance = _c_round(unrounded)
    return distance


@functools.cache
def _c_pow() -> Any:
    import numpy as np

    return np.frompyfunc(math.pow, 2, 1)  # C pow, element by element: x*x is not always pow(x, 2)


def _pow(x: npt.NDArray[np.float64], y: float) -> npt.NDArray[np.float64]:

    import numpy as np

    return np.asarray(_c_pow()(x, y), dtype=np.float64)


def grid_based_distances(p: npt.NDArray[np.int64], q: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """:func:`grid_based_distance` of row ``i`` of ``p`` (query keys) and of ``q`` (table keys),
    for many pairs at once, with the same double arithmetic (C ``pow``, ``std::round``)."""
    k_column = 3 if q.shape[1] > 3 else 2
    return grid_mn_distances(p, q) + grid_k_terms(p[:, k_column], q[:, k_column])


def grid_k_terms(problem_k: npt.NDArray[np.int64], big_k: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """The K term :func:`grid_based_distances` adds to :func:`grid_mn_distances` (pairwise)."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = big_k.astype(np.float64, copy=False)
        problem = problem_k.astype(np.float64)
        result: npt.NDArray[np.float64] = np.abs(big - problem) / (big + problem * 8)
    return result


def grid_mn_distances(p: npt.NDArray[np.int64], q: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The M/N term of :func:`grid_based_distances` (rounded): the same for every entry of a grid
    cell (one M and N), so a batch computes it once per query and cell."""

    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p0, p1 = p[:, 0].astype(np.float64), p[:, 1].astype(np.float64)
        big_m, big_n = q[:, 0].astype(np.float64), q[:, 1].astype(np.float64)
        small_m, small_n = p[:, 0] <= 32768, p[:, 1] <= 32768
        step_m = np.where(small_m, np.ceil(p0 / big_m), 1.0)
        step_n = np.where(small_n, np.ceil(p1 / big_n), 1.0)
        coverage = (p[:, 0] * p[:, 1]).astype(np.float64) / (step_m * big_m * step_n * big_n)
        inside = small_m & small_n
        # C pow(x, 2) and pow(x, 0.5) may differ from x*x and sqrt(x) in the last bit; that only
        # matters where std::round's argument sits at a half, so only there is pow called.
        near = 100 * step_m * step_n / (coverage * coverage)
        dm, dn = p0 - big_m, p1 - big_n
        far = 10000 * step_m * step_n * np.sqrt(dm * dm + dn * dn)
        unrounded = np.where(inside, near, far)
        fraction = unrounded - np.floor(unrounded)
        close = np.flatnonzero(np.abs(fraction - 0.5) <= np.abs(unrounded) * 1e-12 + 1e-300)
        if close.size:
            c, i = coverage[close], inside[close]
            exact_near = 100 * step_m[close] * step_n[close] / _pow(c, 2.0)
            spread = _pow(_pow(dm[close], 2.0) + _pow(dn[close], 2.0), 0.5)
            unrounded[close] = np.where(i, exact_near, 10000 * step_m[close] * step_n[close] * spread)
        return _c_round_many(unrounded)


def _c_round_many(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:

    import numpy as np

    magnitude = np.abs(x)
    floor = np.floor(magnitude)
    rounded = np.where(magnitude - floor >= 0.5, floor + 1.0, floor)
    return np.where(np.isfinite(x), np.copysign(rounded, x), x)


class GlibcRand:
    """glibc ``rand()`` (TYPE_3 additive feedback generator), for ``RandomDistance``."""

    def __init__(self, seed: int = 1) -> None:
        state = [0] * 344
        state[0] = seed or 1
        for i in range(1, 31):
            hi, lo = divmod(state[i - 1], 127773)
            word = 16807 * lo - 2836 * hi
            state[i] = word + 2147483647 if word < 0 else word
        for i in range(31, 34):
            state[i] = state[i - 31]
        for i in range(34, 344):
            state[i] = (state[i - 31] + state[i - 3]) & 0xFFFFFFFF
        self._ring = state[-34:]

    def __call__(self) -> int:
        value = (self._ring[-31] + self._ring[-3]) & 0xFFFFFFFF
        self._ring.append(value)
        del self._ring[0]
        return value >> 1


_RAND = GlibcRand(1)


def random_distance(p: Key, q: Key) -> float:
    """``double(rand())`` (``RandomDistance``); see the module docstring about its state."""
    return float(_RAND())


def euclidean_bound(p: Key, q: Key, best: float) -> bool:
    """``EuclideanDistance::improvementPossible`` on component 0."""
    d0 = float(p[0] - q[0])
    return d0 * d0 < best or tuple(p) == tuple(q)


def manhattan_bound(p: Key, q: Key, best: float) -> bool:
    """``ManhattanDistance::improvementPossible`` on component 0."""
    return float(abs(p[0] - q[0])) < best or tuple(p) == tuple(q)


def jsd_bound(p: Key, q: Key, best: float) -> bool:
    """``JSDivergence::improvementPossible``: component 0's share of the divergence."""
    norm_p, norm_q = _normalise3(p), _normalise3(q)
    m = 0.5 * (norm_p[0] + norm_q[0])
    d0 = 0.5 * _kl_term(norm_p[0], m) + 0.5 * _kl_term(norm_q[0], m)
    return d0 < best or tuple(p) == tuple(q)


def always_possible(p: Key, q: Key, best: float) -> bool:
    """``improvementPossible`` of distances that never stop early (Ratio, Random, GridBased)."""
    return True


@dataclasses.dataclass(frozen=True)
class Distance:
    """A named distance with its early-exit bound. ``bound_on_first`` marks bounds that look only
    at ``g(p0 - q0)`` for a ``g`` growing with ``|p0 - q0|`` (the fast path relies on that)."""

    name: str
    distance: DistanceFunction
    improvement_possible: BoundFunction
    bound_on_first: str | None = None


DISTANCES: dict[str, Distance] = {
    "Euclidean": Distance("Euclidean", euclidean_distance, euclidean_bound, "square"),
    "Equality": Distance("Equality", equality_distance, euclidean_bound, "square"),
    "Manhattan": Distance("Manhattan", manhattan_distance, manhattan_bound, "abs"),
    "Ratio": Distance("Ratio", ratio_distance, always_possible),
    "JSD": Distance("JSD", jsd_distance, jsd_bound),
    "Random": Distance("Random", random_distance, always_possible),
    "GridBased": Distance("GridBased", grid_based_distance, always_possible),
}
"""Distance name as written in ``Matching`` nodes → implementation (``Serialization/MatchingLibrary.hpp``)."""

__all__ = [
    "DISTANCES",
    "Distance",
    "DistanceFunction",
    "GlibcRand",
    "Key",
    "always_possible",
    "equality_distance",
    "euclidean_bound",
    "euclidean_distance",
    "grid_based_distance",
    "grid_based_distance_absolute_k",
    "grid_based_distances",
    "grid_k_terms",
    "grid_mn_distances",
    "jsd_bound",
    "jsd_distance",
    "manhattan_bound",
    "manhattan_distance",
    "random_distance",
    "ratio_distance",
]

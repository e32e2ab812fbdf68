"""Classify every GEMM of a workload by how the runtime reaches its kernel.

Each GEMM is selected by the compiled selector ``select`` uses (:class:`CompiledLibrary`, the
batch path of ``select --queries``; the answers the reference walk gives), with a
:class:`~tensilekit.selection.walk.Route` (:class:`~tensilekit.selection.fast.BatchRoute`) that records
which rows fell through and which node answered, at which sorted-table position. Nothing here
models selection a second time; the class follows from that route:

* ``none``: no kernel;
* ``fallback``: a row whose predicate held found nothing and a later row answered (the generic
  ``TruePred``/CU-less hardware row after a CU-specific one, the Euclidean table after an
  Equality miss, the metric-free row after an ``ExperimentalDTree`` region), or a decision
  forest answered with its ``nullValue``;
* ``exact``: the matched table entry has exactly the GEMM's key (an Equality hit always does),
  or a ``GranularitySelection`` exact hit;
* ``near``: the matched entry is within a factor ``1 + near`` of the GEMM in every size of the
  key (M, N, K and, for Equality tables, batch); a decision tree's prediction also counts as
  near (the forest was trained over the region that holds the GEMM);
* ``far``: otherwise, including a lone ``Single`` kernel serving every size.

Besides the matched entry, the entry of the same table nearest to the GEMM by the table's own
distance (predicates ignored, so it may be an entry whose kernel cannot run the GEMM: ``usable``
says) is reported with the GEMM's size over its size per dimension, so "matched
4096x4096x4096, you run 4096x8x4096" shows. For Euclidean tables the runtime's scan finds the
nearest usable entry, so the two differ when the nearest kernel is unusable, or between entries
at equal distance (the runtime prefers the faster; the nearest search takes any).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit._arguments import require, require_callable, require_items
from tensilekit.coverage.model import (
    SIZE_NAMES,
    CoverageClass,
    CoverageGemm,
    CoverageReport,
    EntryMatch,
    GemmCoverage,
    Skipped,
    TypeSummary,
    WeightBasis,
)
from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary, MatchingNode
from tensilekit.model.solution import MasterSolution
from tensilekit.selection.columns import ProblemColumns
from tensilekit.selection.distance import DISTANCES
from tensilekit.selection.fast import BatchRoute, CompiledLibrary, compile_library
from tensilekit.selection.problem import ContractionProblem, Hardware, contraction_problem
from tensilekit.selection.scan import have_kdtree
from tensilekit.selection.walk import Route, SortedTable, property_value

DEFAULT_NEAR = 0.10
DEFAULT_TUNE_NEXT = 50
_CHUNK = 4096
_NEAREST_CELLS = 1 << 20  # query x entry distances computed at once
_ATTRIBUTES = {"FreeSizeA": "m", "FreeSizeB": "n", "BatchSize": "batch", "BoundSize": "k"}


class _TableView:
    """A table as coverage reads it: sorted keys (numpy), the size columns, nearest-entry search."""

    def __init__(self, node: MatchingNode, table: SortedTable) -> None:
        self.node = node
        self.table = table
        self.keys = np.array(table.keys, dtype=np.float64).reshape(len(table.keys), len(node.properties))
        self.sizes = [
            (column, SIZE_NAMES[prop.type])
            for column, prop in enumerate(node.properties)
            if prop.type in SIZE_NAMES and (prop.index or 0) == 0
        ]
        names = ", ".join(SIZE_NAMES.get(prop.type, prop.type) for prop in node.properties)
        self.label = f"{node.distance} table, {len(table.keys)} entries, key [{names}]"
        attributes = [_ATTRIBUTES.get(prop.type) if (prop.index or 0) == 0 else None for prop in node.properties]
        names_of_key = [name for name in attributes if name]
        self._key_of: Callable[[ContractionProblem], Any] | None = None
        if len(names_of_key) == len(attributes):
            self._key_of = operator.attrgetter(*names_of_key)
        self._tree: Any = None

    def key(self, problem: ContractionProblem) -> tuple[int, ...]:
        """The GEMM's key in this table (``ProblemKey::keyForProblem``)."""
        if self._key_of is None:
            return tuple(property_value(prop, problem) for prop in self.node.properties)
        key = self._key_of(problem)
        return key if isinstance(key, tuple) else (key,)

    def nearest(self, key: tuple[int, ...]) -> int:
        """Sorted position of the entry nearest to ``key`` by the table's distance (-1: empty)."""
        return self.nearest_many([key])[0]

    def nearest_many(self, keys: Sequence[tuple[int, ...]]) -> list[int]:
        """:meth:`nearest` of many keys (vectorised for Euclidean, Equality and Manhattan tables).

        With SciPy a k-d tree answers (equal distances: whichever entry the tree returns);
        without it a brute-force search (equal distances: the first entry in sorted order).
        """
        if not len(self.keys):
            return [-1] * len(keys)
        if self.node.distance not in ("Euclidean", "Equality", "Manhattan"):
            return [self._nearest_scan(key) for key in keys]
        queries = np.array(keys, dtype=np.float64).reshape(len(keys), self.keys.shape[1])
        manhattan = self.node.distance == "Manhattan"
        if len(keys) * len(self.keys) > _NEAREST_CELLS and have_kdtree():
            if self._tree is None:
                from scipy.spatial import cKDTree  # type: ignore[import-untyped, import-not-found, unused-ignore]

                self._tree = cKDTree(self.keys, leafsize=32)
            _, found = self._tree.query(queries, k=1, p=1 if manhattan else 2)
            listed: list[int] = np.asarray(found, dtype=np.int64).tolist()
            return listed
        step = max(1, _NEAREST_CELLS // len(self.keys))
        positions: list[int] = []
        for start in range(0, len(queries), step):
            difference = queries[start : start + step, None, :] - self.keys[None, :, :]
            values: npt.NDArray[np.float64] = (
                np.abs(difference).sum(axis=2) if manhattan else (difference * difference).sum(axis=2)
            )
            positions += np.argmin(values, axis=1).tolist()
        return positions

    def _nearest_scan(self, key: tuple[int, ...]) -> int:
        distance = DISTANCES[self.node.distance].distance
        best, best_value = -1, float("inf")
        for position, entry in enumerate(self.table.keys):
            value = distance(key, entry)
            if value < best_value:
                best, best_value = position, value
        return best

    def entry(self, position: int, key: tuple[int, ...], usable: bool | None = None) -> EntryMatch:
        entry_key = self.table.keys[position]
        sizes = {name: entry_key[column] for column, name in self.sizes}
        ratios: dict[str, float | None] = {}
        for column, name in self.sizes:
            ratios[name] = key[column] / entry_key[column] if entry_key[column] else None
        return EntryMatch(
            position=position,
            key=tuple(entry_key),
            index=self.table.indices[position],
            speed=self.table.speeds[position],
            sizes=sizes,
            ratios=ratios,
            usable=usable,
        )

    def within(self, key: tuple[int, ...], position: int, near: float) -> bool:
        """Every size of the key within a factor ``1 + near`` of the entry's."""
        entry_key = self.table.keys[position]
        for column, _ in self.sizes:
            low, high = sorted((key[column], entry_key[column]))
            if low == high:
                continue
            if low <= 0 or high > low * (1.0 + near):
                return False
        return True


class Classifier:
    """Classifies GEMMs against one compiled library (caches each table's view between GEMMs)."""

    def __init__(self, library: MasterLibrary | CompiledLibrary, *, loader: Callable[[str], MasterLibrary] | None = None,
                 near: float = DEFAULT_NEAR, rocblas_k0: bool = False) -> None:  # fmt: skip
        if near < 0:
            raise SelectionError(f"--near must be at least 0, got {near}")
        self.compiled = library if isinstance(library, CompiledLibrary) else compile_library(library, loader=loader)
        self.near = near
        self.rocblas_k0 = rocblas_k0
        self._views: dict[int, _TableView] = {}

    def _view(self, node: MatchingNode) -> _TableView:
        view = self._views.get(id(node))
        if view is None or view.node is not node:
            view = _TableView(node, self.compiled.reference.sorted_table(node))
            self._views[id(node)] = view
        return view

    def classify(self, gemm: CoverageGemm, weight: float = 0.0, share: float = 0.0) -> GemmCoverage:
        """The kernel ``select`` gives ``gemm`` and how the runtime reached it.

        Raises:
            SelectionError: the GEMM cannot be evaluated against this library.
        """
        problem = contraction_problem(gemm.problem, rocblas_k0=self.rocblas_k0)
        route = Route()
        solution, fitness = self.compiled.find(problem, gemm.hardware, route)
        for attempt in self.compiled.runtime.attempts(problem)[1:]:  # hipBLASLt's XF32 -> Float retry
            if solution is not None:
                break
            route = Route()
            solution, fitness = self.compiled.find(attempt, gemm.hardware, route)
        return self._result(gemm, problem, solution, fitness, route, weight, share)

    def classify_all(
        self,
        gemms: Sequence[CoverageGemm],
        weights: Sequence[float],
        total: float,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[list[GemmCoverage], list[Skipped]]:
        """Classify many GEMMs through the batch path ``select --queries`` uses (same answers).

        A chunk the batch path cannot evaluate is redone GEMM by GEMM, so one GEMM the library
        cannot evaluate is skipped (and reported) without losing the others. ``progress(n)`` is
        called after each chunk with the GEMMs it classified (or skipped): the calls add up to
        ``len(gemms)``.
        """
        results: list[GemmCoverage] = []
        skipped: list[Skipped] = []
        for start in range(0, len(gemms), _CHUNK):
            chunk = range(start, min(start + _CHUNK, len(gemms)))
            try:
                problems = [contraction_problem(gemms[i].problem, rocblas_k0=self.rocblas_k0) for i in chunk]
                columns = ProblemColumns.from_problems(problems, [gemms[i].hardware for i in chunk])
                route = BatchRoute(len(chunk))
                sids, fits = self.compiled.find_batch(columns, route)
            except SelectionError:
                for i in chunk:
                    share = weights[i] / total if total > 0 else 0.0
                    try:
                        results.append(self.classify(gemms[i], weights[i], share))
                    except SelectionError as error:
                        skipped.append(_skipped(gemms[i], error))
                if progress is not None:
                    progress(len(chunk))
                continue
            routes = route.routes()
            closest = self._nearest(routes, problems, sids, columns)
            retry = set(np.flatnonzero((sids < 0) & self.compiled.runtime.retried(columns)).tolist())
            for offset, i in enumerate(chunk):
                if offset in retry:  # the runtime tries again (hipBLASLt's XF32 -> Float retry)
                    results.append(self.classify(gemms[i], weights[i], weights[i] / total if total > 0 else 0.0))
                    continue
                sid, fitness = int(sids[offset]), float(fits[offset])
                result = self._result(
                    gemms[i],
                    problems[offset],
                    self.compiled.solutions[sid] if sid >= 0 else None,
                    None if math.isnan(fitness) else fitness,
                    routes[offset],
                    weights[i],
                    weights[i] / total if total > 0 else 0.0,
                    *closest.get(offset, (None, None)),
                )
                results.append(result)
            if progress is not None:
                progress(len(chunk))
        return results, skipped

    def _nearest(
        self, routes: list[Route], problems: list[ContractionProblem], sids: Any, columns: ProblemColumns
    ) -> dict[int, tuple[int, bool]]:
        """The nearest entry of each answering table and whether its kernel can run the GEMM.

        One vectorised search per table; usability per nearest kernel over all its GEMMs at once
        (the compiled predicates ``select --queries`` evaluates).
        """
        asked: dict[int, tuple[_TableView, list[int], list[tuple[int, ...]]]] = {}
        for offset, route in enumerate(routes):
            if sids[offset] < 0 or not isinstance(route.leaf, MatchingNode) or route.position is None:
                continue
            view = self._view(route.leaf)
            key = view.key(problems[offset])
            if view.table.keys[route.position] == key:
                continue  # exact: the matched entry is the nearest
            _, offsets, keys = asked.setdefault(id(view), (view, [], []))
            offsets.append(offset)
            keys.append(key)
        closest: dict[int, tuple[int, bool]] = {}
        by_kernel: dict[int, list[int]] = {}
        for view, offsets, keys in asked.values():
            for offset, position in zip(offsets, view.nearest_many(keys), strict=True):
                if position == routes[offset].position:
                    closest[offset] = (position, True)
                    continue
                index = view.table.indices[position] if position >= 0 else -1
                closest[offset] = (position, False)
                if index >= 0:
                    by_kernel.setdefault(self.compiled.sid_of(index), []).append(offset)
        atoms: dict[int, Any] = {}
        for sid, offsets in by_kernel.items():
            # each atom once over the whole chunk, shared between the kernels
            passed = self.compiled.solution_pass(sid, columns, atoms, np.array(offsets, dtype=np.int64))
            for offset, usable in zip(offsets, passed.tolist(), strict=True):
                closest[offset] = (closest[offset][0], bool(usable))
        return closest

    def _result(
        self, gemm: CoverageGemm, problem: ContractionProblem, solution: MasterSolution | None,
        fitness: float | None, route: Route, weight: float, share: float, closest: int | None = None,
        usable: bool | None = None,
    ) -> GemmCoverage:  # fmt: skip
        table: str | None = None
        matched = nearest = None
        if solution is None:
            found = CoverageClass.NONE
        else:
            found = CoverageClass.FAR
            if isinstance(route.leaf, MatchingNode) and route.position is not None:
                view = self._view(route.leaf)
                table = view.label
                key = view.key(problem)
                matched = view.entry(route.position, key, usable=True)  # the runtime ran its kernel
                if closest is None:
                    closest = route.position if matched.key == key else view.nearest(key)
                if closest == route.position:
                    nearest = matched
                elif closest >= 0:
                    if usable is None:
                        usable = self._usable(view, closest, problem, gemm.hardware)
                    nearest = view.entry(closest, key, usable)
                if matched.key == key:
                    found = CoverageClass.EXACT
                elif view.within(key, route.position, self.near):
                    found = CoverageClass.NEAR
            elif route.via == "granularity-exact":
                found = CoverageClass.EXACT
            elif route.via == "tree":
                found = CoverageClass.NEAR
            if route.fell_through or route.via == "null-value":
                found = CoverageClass.FALLBACK
        return GemmCoverage(
            gemm=gemm,
            coverage_class=found,
            index=None if solution is None else solution.index,
            name=None if solution is None else solution.name,
            distance=fitness if solution is not None else None,
            via=route.via if solution is not None else None,
            fell_through=tuple(route.fell_through),
            table=table,
            matched=matched,
            nearest=nearest,
            weight=weight,
            share=share,
            score=share * found.factor,
        )

    def _usable(self, view: _TableView, position: int, problem: ContractionProblem, hardware: Hardware) -> bool:
        index = view.table.indices[position]
        return index >= 0 and self.compiled.can_solve(self.compiled.sid_of(index), problem, hardware)


def weigh(gemms: Sequence[CoverageGemm]) -> tuple[WeightBasis, list[float]]:
    """Each GEMM's weight: measured time when every GEMM has one, otherwise calls x flops.

    Raises TypeError unless ``gemms`` are CoverageGemms."""
    gemms = require_items(gemms, CoverageGemm, "gemms", "weigh")
    if gemms and all(gemm.measured_us is not None for gemm in gemms):
        return WeightBasis.MEASURED_TIME, [float(gemm.measured_us or 0.0) for gemm in gemms]
    return WeightBasis.CALLS_X_FLOPS, [float(gemm.calls * gemm.flops) for gemm in gemms]


def _check_arguments(
    library: object, gemms: object, loader: object, near: object, tune_next: object, skipped: object, progress: object
) -> None:
    """TypeError for arguments of :func:`coverage_of` of the wrong type, ValueError for a
    negative ``near``/``tune_next``."""
    require(library, (MasterLibrary, CompiledLibrary), "library", "coverage_of")
    for name, items, kind in (("gemms", gemms, CoverageGemm), ("skipped", skipped, Skipped)):
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"coverage_of(): {name} must be a sequence of {kind.__name__}, not {type(items).__name__}")
        for item in items:
            require(item, kind, f"each of {name}", "coverage_of")
    require_callable(loader, "loader", "coverage_of", optional=True)
    require_callable(progress, "progress", "coverage_of", optional=True)
    require(near, (int, float), "near", "coverage_of")
    require(tune_next, int, "tune_next", "coverage_of")
    assert isinstance(near, (int, float)) and isinstance(tune_next, int)
    if not near >= 0 or tune_next < 0:  # `not >=`: NaN too
        raise ValueError(f"coverage_of(): near and tune_next must be >= 0, not {near!r}, {tune_next!r}")


def coverage_of(
    library: MasterLibrary | CompiledLibrary,
    gemms: Sequence[CoverageGemm],
    *,
    loader: Callable[[str], MasterLibrary] | None = None,
    near: float = DEFAULT_NEAR,
    tune_next: int = DEFAULT_TUNE_NEXT,
    rocblas_k0: bool = False,
    skipped: Sequence[Skipped] = (),
    progress: Callable[[int], None] | None = None,
) -> CoverageReport:
    """Coverage of a workload: every GEMM classified, the summary, and the "tune next" ranking.

    Args:
        library: the master library (or one compiled with :func:`~tensilekit.selection.compile_library`).
        gemms: the distinct GEMMs (calls summed), e.g. from :func:`~tensilekit.coverage.gemms_from_workload`.
        near: the relative distance per dimension within which a matched entry counts as near.
        tune_next: how many GEMMs the ranking keeps at most (0: all that are not exact).
        skipped: lines or GEMMs the caller could not read, carried into the report.
        progress: called with the number of GEMMs classified so far in each step (the steps add
            up to ``len(gemms)``); a long workload over an installed library reads shards as it goes.

    A GEMM the library cannot evaluate (a predicate tensilekit does not model …) is listed in
    ``skipped`` rather than stopping the whole workload.
    """
    _check_arguments(library, gemms, loader, near, tune_next, skipped, progress)
    classifier = Classifier(library, loader=loader, near=near, rocblas_k0=rocblas_k0)
    basis, weights = weigh(gemms)
    total = sum(weights)
    results, unusable = classifier.classify_all(gemms, weights, total, progress)
    problems = [*skipped, *unusable]
    by_class: dict[CoverageClass, float] = dict.fromkeys(CoverageClass, 0.0)
    types: dict[str, list[GemmCoverage]] = {}
    for item in results:
        by_class[item.coverage_class] += item.share
        types.setdefault(item.gemm.gemm_type, []).append(item)
    by_type = []
    for name in sorted(types):
        members = types[name]
        shares = dict.fromkeys(CoverageClass, 0.0)
        for item in members:
            shares[item.coverage_class] += item.share
        by_type.append(TypeSummary(name, len(members), sum(item.share for item in members), shares))
    ranked = sorted(
        (item for item in results if item.coverage_class is not CoverageClass.EXACT),
        key=lambda item: (-item.score, -item.weight),
    )
    if tune_next > 0:
        ranked = ranked[:tune_next]
    return CoverageReport(
        gemms=tuple(results),
        basis=basis,
        near=near,
        by_class=by_class,
        by_type=tuple(by_type),
        tune_next=tuple(ranked),
        skipped=tuple(problems),
    )


def _skipped(gemm: CoverageGemm, error: SelectionError) -> Skipped:
    p = gemm.problem
    size = f"{p.m}x{p.n}x{p.k}" + (f" batch {p.batch}" if p.batch != 1 else "")
    # with the file and place when the error has them (a damaged shard: its file, byte and path)
    detail = str(error) if error.location is not None and error.location.file else error.message
    return Skipped(gemm.origin, f"{gemm.gemm_type} {size}: {detail}")


__all__ = ["DEFAULT_NEAR", "DEFAULT_TUNE_NEXT", "Classifier", "coverage_of", "weigh"]

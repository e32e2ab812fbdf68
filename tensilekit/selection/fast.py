"""The compiled selector: the reference walk, precompiled for fast single and bulk queries.

:func:`compile_library` turns a master library into a :class:`CompiledLibrary`:

* every solution's ``canSolve`` becomes a list of deduplicated atoms
  (:mod:`tensilekit.selection.kernels`);
* every tree node becomes a small object with ``find`` (one query, plain Python) and
  ``find_batch`` (many queries, numpy) that follow :mod:`tensilekit.selection.walk` step for step:
  row fall-through, ``ProblemMap`` lookup, ``Single`` leaves, decision forests, lazy placeholders;
* each ``Matching`` table is sorted once; per query the atoms its solutions use give a
  *signature*, and each signature maps (cached) to the sub-table of entries whose solutions pass.
  The C++ scan over that sub-table gives the C++ answer (:mod:`tensilekit.selection.scan` explains
  why), one query at a time or in closed form for a whole group of queries.

Node types and distances without a compiled form (``GranularitySelection``; ``GridBased``, ``JSD``
and ``Random`` tables) are answered by the reference walk, so the result is always the
reference's. The reported distance follows the C++ ``fitness`` pointer: the last value a
``Matching`` node wrote during the walk.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit._arguments import require, require_callable
from tensilekit.errors import SelectionError
from tensilekit.model.library import (
    AnyNode,
    DecisionTreeNode,
    FreeSizeNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    PlaceholderNode,
    ProblemMapNode,
    ProblemNode,
    SingleNode,
)
from tensilekit.model.solution import MasterSolution
from tensilekit.predicates.evaluate import has_chip_predicate
from tensilekit.selection.columns import ColumnsLike
from tensilekit.selection.distance import DISTANCES, grid_based_distances
from tensilekit.selection.features import feature_key
from tensilekit.selection.kernels import Atom, AtomTable, BoolArray, all_of, bitmask_of, compile_atom, conjuncts
from tensilekit.selection.problem import ContractionProblem, Hardware
from tensilekit.selection.runtime import Runtime, detect_runtime, runtime_named
from tensilekit.selection.scan import DBL_MAX, Band, Usable, have_kdtree, nearest_many, nearest_one, scan_one
from tensilekit.selection.walk import Loader, ReferenceSelector, Route, row_label

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Found = tuple[int, float | None]
"""(solution id or -1, last distance written in the subtree or None)."""
BatchFound = tuple[IntArray, FloatArray]
"""Per query: solution id or -1; last distance written (NaN = none)."""

_NAN = math.nan
_SUBTABLE_CACHE_LIMIT = 4096


def _vector_group(usable: Usable) -> int:
    """Smallest signature group worth the vectorised search: a k-d tree costs about as much to build
    as a hundred one-by-one searches of its size, and nothing once built."""
    return 2 if usable.has_tree else max(4, usable.count // 100)


class _Node:
    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        raise NotImplementedError

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        raise NotImplementedError


def _empty(count: int) -> BatchFound:
    return np.full(count, -1, dtype=np.int64), np.full(count, _NAN)


class BatchRoute:
    """The :class:`~tensilekit.selection.walk.Route` of every query of a batch, filled by ``find_batch``.

    ``ids`` are the batch positions of the queries a node is asked about (a node sees a subset
    of the batch); :meth:`narrow` gives the view for a subset, :meth:`route` one query's route.
    """

    def __init__(self, size: int) -> None:
        self.fell_through: list[list[str]] = [[] for _ in range(size)]
        self.leaf: list[AnyNode | None] = [None] * size
        self.via: list[str | None] = [None] * size
        self.position = np.full(size, -1, dtype=np.int64)
        self.ids = np.arange(size)

    def narrow(self, rows: IntArray) -> BatchRoute:
        """The same record seen through a subset ``rows`` of the current queries."""
        view = object.__new__(BatchRoute)
        view.fell_through, view.leaf, view.via, view.position = self.fell_through, self.leaf, self.via, self.position
        view.ids = self.ids[rows]
        return view

    def answered(self, rows: IntArray, leaf: AnyNode, via: str, positions: IntArray | None = None) -> None:
        """Queries ``rows`` (of the current ones) were answered by ``leaf``."""
        ids = self.ids[rows]
        for query in ids.tolist():
            self.leaf[query] = leaf
            self.via[query] = via
        if positions is not None:
            self.position[ids] = positions

    def fell(self, rows: IntArray, label: str) -> None:
        for query in self.ids[rows].tolist():
            self.fell_through[query].append(label)

    def merge(self, row: int, route: Route) -> None:
        """Copy one query's single-query route in (subtrees answered by the reference walk)."""
        query = int(self.ids[row])
        self.fell_through[query].extend(route.fell_through)
        if route.leaf is not None:
            self.leaf[query], self.via[query] = route.leaf, route.via
            self.position[query] = -1 if route.position is None else route.position

    def route(self, query: int) -> Route:
        """The route of batch position ``query``."""
        position = int(self.position[query])
        return Route(
            list(self.fell_through[query]), self.leaf[query], self.via[query], None if position < 0 else position
        )

    def routes(self) -> list[Route]:
        """Every query's route, in batch order."""
        return [
            Route(list(fell), leaf, via, None if position < 0 else position)
            for fell, leaf, via, position in zip(
                self.fell_through, self.leaf, self.via, self.position.tolist(), strict=True
            )
        ]


class _Rows(_Node):
    """``Hardware``/``Problem`` rows with fall-through."""

    def __init__(self, rows: list[tuple[Any, _Node]], labels: list[str] | None = None) -> None:
        self.rows = rows
        self.labels = labels or [f"row {number}" for number in range(len(rows))]

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        fitness: float | None = None
        last = len(self.rows) - 1
        for number, (atom, child) in enumerate(self.rows):
            if atom.constant is False or (atom.constant is None and not atom.scalar(p, h)):
                continue
            sid, written = child.find(lib, p, h, route)
            if written is not None:
                fitness = written
            if sid >= 0:
                return sid, fitness
            if route is not None and number < last:
                route.fell_through.append(self.labels[number])
        return -1, fitness

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        open_rows = np.arange(cols.size)
        last = len(self.rows) - 1
        for number, (atom, child) in enumerate(self.rows):
            if open_rows.size == 0:
                break
            if atom.constant is False:
                continue
            view = cols if open_rows.size == cols.size else cols.take(open_rows)
            mask = np.ones(open_rows.size, dtype=bool) if atom.constant else _vector_of(atom, view)
            hit = open_rows[mask]
            if hit.size == 0:
                continue
            sub_route = None if route is None else route.narrow(hit)
            sub_sids, sub_fits = child.find_batch(lib, cols.take(hit) if hit.size != cols.size else cols, sub_route)
            written = ~np.isnan(sub_fits)
            fits[hit[written]] = sub_fits[written]
            got = sub_sids >= 0
            sids[hit[got]] = sub_sids[got]
            if route is not None and number < last:
                route.fell(hit[~got], self.labels[number])
            keep = np.ones(open_rows.size, dtype=bool)
            keep[np.flatnonzero(mask)[got]] = False
            open_rows = open_rows[keep]
        return sids, fits


class _Map(_Node):
    """``ProblemMap`` on the operation identifier."""

    def __init__(
        self,
        children: dict[str, _Node],
        pending: Mapping[str, AnyNode] | None = None,
        compile_node: Callable[[AnyNode], _Node] | None = None,
    ) -> None:
        self.children = children
        # a map read partially (io.partial_msgpack): each operation compiled, and so decoded,
        # when a query first asks for it
        self._pending, self._compile_node = pending, compile_node

    def child(self, op_id: str) -> _Node | None:
        found = self.children.get(op_id)
        if found is None and self._pending is not None and op_id in self._pending:
            assert self._compile_node is not None
            found = self.children[op_id] = self._compile_node(self._pending[op_id])
        return found

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        child = self.child(p.op_id)
        return (-1, None) if child is None else child.find(lib, p, h, route)

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        op_ids = cols.op_id  # type: ignore[attr-defined]
        if cols.size and (op_ids == op_ids[0]).all():  # the usual batch: one operation
            child = self.child(str(op_ids[0]))
            return _empty(cols.size) if child is None else child.find_batch(lib, cols, route)
        names, inverse = np.unique(op_ids, return_inverse=True)  # type: ignore[attr-defined, call-overload, unused-ignore]
        for number, name in enumerate(names):
            child = self.child(str(name))
            if child is None:
                continue
            rows = np.flatnonzero(inverse == number)
            sub_route = None if route is None else route.narrow(rows)
            sub_sids, sub_fits = child.find_batch(lib, cols.take(rows) if rows.size != cols.size else cols, sub_route)
            sids[rows], fits[rows] = sub_sids, sub_fits
        return sids, fits


class _Single(_Node):
    def __init__(self, sid: int, node: SingleNode | None = None) -> None:
        self.sid = sid
        self.node = node

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        if self.sid < 0 or not lib.can_solve(self.sid, p, h):
            return -1, None
        if route is not None and self.node is not None:
            route.answered(self.node, "single")
        return self.sid, None

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        if self.sid >= 0:
            passed = lib.solution_pass(self.sid, cols, {})
            sids[passed] = self.sid
            if route is not None and self.node is not None:
                route.answered(np.flatnonzero(passed), self.node, "single")
        return sids, fits


class _Nothing(_Node):
    """``FreeSize``: never answers ``findBestSolution``."""

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        return -1, None

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        return _empty(cols.size)


class _Reference(_Node):
    """A subtree the compiler does not handle: answered by the reference walk."""

    def __init__(self, node: AnyNode) -> None:
        self.node = node

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        solution, fitness = lib.reference.find_node(self.node, p, h, route)
        return (-1, fitness) if solution is None else (lib.sid_of(solution.index), fitness)

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        for i in range(cols.size):
            single = None if route is None else Route()
            sid, fitness = self.find(lib, *cols.row(i), single)
            sids[i] = sid
            fits[i] = _NAN if fitness is None else fitness
            if route is not None and single is not None:
                route.merge(i, single)
        return sids, fits


class _Placeholder(_Node):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        return lib.placeholder(self.prefix).find(lib, p, h, route)

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        return lib.placeholder(self.prefix).find_batch(lib, cols, route)


class _Forest(_Node):
    """``DecisionTree``: float32 features, trees in order, each gated by its own solution."""

    def __init__(self, node: DecisionTreeNode, trees: list[tuple[list[Any], _Node]], null: _Node) -> None:
        self.node = node
        self.features = list(node.features)
        self.trees = [(_tree_arrays(tree), child) for tree, child in trees]
        self.null = null

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        key = feature_key(self.features, p.m, p.n, p.batch, p.k)
        for arrays, child in self.trees:
            sid, _ = child.find(lib, p, h)
            if sid >= 0 and _predict_one(arrays, key):
                if route is not None:
                    route.answered(self.node, "tree")
                return sid, None
        sid, _ = self.null.find(lib, p, h)
        if route is not None and sid >= 0:
            route.answered(self.node, "null-value")
        return sid, None

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        keys = feature_key(self.features, cols.m, cols.n, cols.batch, cols.k)  # type: ignore[attr-defined]
        open_rows = np.arange(cols.size)
        # trees whose value is one kernel (the generated form): its canSolve over all queries, once,
        # sharing atom results between the trees' kernels
        atoms: dict[int, BoolArray] = {}
        passes: dict[int, BoolArray] = {}
        for arrays, child in self.trees:
            if open_rows.size == 0:
                break
            if isinstance(child, _Single):
                if child.sid < 0:
                    continue
                if child.sid not in passes:
                    passes[child.sid] = lib.solution_pass(child.sid, cols, atoms)
                tree_sids = np.where(passes[child.sid][open_rows], child.sid, -1)
            else:
                view = cols if open_rows.size == cols.size else cols.take(open_rows)
                tree_sids, _ = child.find_batch(lib, view)
            usable = tree_sids >= 0
            if not usable.any():
                continue
            rows = np.flatnonzero(usable)
            answer = _predict_many(arrays, keys[open_rows[rows]])
            chosen = rows[answer]
            sids[open_rows[chosen]] = tree_sids[chosen]
            if route is not None:
                route.answered(open_rows[chosen], self.node, "tree")
            keep = np.ones(open_rows.size, dtype=bool)
            keep[chosen] = False
            open_rows = open_rows[keep]
        if open_rows.size:
            view = cols if open_rows.size == cols.size else cols.take(open_rows)
            null_sids, _ = self.null.find_batch(lib, view)
            sids[open_rows] = null_sids
            if route is not None:
                route.answered(open_rows[null_sids >= 0], self.node, "null-value")
        return sids, fits


def _tree_arrays(tree: list[Any]) -> tuple[IntArray, npt.NDArray[np.float32], IntArray, IntArray]:
    return (
        np.array([node.feature_index for node in tree], dtype=np.int64),
        np.array([node.threshold for node in tree], dtype=np.float64).astype(np.float32),
        np.array([node.next_index_lte for node in tree], dtype=np.int64),
        np.array([node.next_index_gt for node in tree], dtype=np.int64),
    )


def _predict_one(arrays: tuple[IntArray, Any, IntArray, IntArray], key: Any) -> bool:
    features, thresholds, lte, gt = arrays
    node, size = 0, len(features)
    while 0 <= node < size:
        node = int(lte[node] if key[features[node]] <= thresholds[node] else gt[node])
        if node == -1:
            return False
        if node == -2:
            return True
    raise SelectionError("decision tree walked out of bounds")


def _predict_many(arrays: tuple[IntArray, Any, IntArray, IntArray], keys: Any) -> BoolArray:
    features, thresholds, lte, gt = arrays
    count, size = len(keys), len(features)
    result = np.zeros(count, dtype=bool)
    nodes = np.zeros(count, dtype=np.int64)
    active = np.arange(count)
    while active.size:
        current = nodes[active]
        if ((current < 0) | (current >= size)).any():
            raise SelectionError("decision tree walked out of bounds")
        go_left = keys[active, features[current]] <= thresholds[current]
        following = np.where(go_left, lte[current], gt[current])
        result[active[following == -2]] = True
        finished = (following == -1) | (following == -2)
        nodes[active] = following
        active = active[~finished]
    return result


class _Table(_Node):
    """A ``Matching`` node: Euclidean/Manhattan/Ratio scans and Equality probes."""

    def __init__(self, lib: CompiledLibrary, node: MatchingNode) -> None:
        self.node = node
        self.distance = DISTANCES[node.distance]
        self.attrs = [_key_attribute(prop) for prop in node.properties]
        sorted_table = lib.reference.sorted_table(node)  # shared with the reference walk (and coverage)
        arity = len(node.properties)
        self.keys = np.array(sorted_table.keys, dtype=np.int64).reshape(len(sorted_table.keys), arity)
        self.speeds = np.array(sorted_table.speeds, dtype=np.float64)
        self.sids = np.array(
            [lib.sid_of(index) if index >= 0 else -1 for index in sorted_table.indices], dtype=np.int64
        )
        self.key_list = [tuple(row) for row in sorted_table.keys]
        unique_sids = sorted({int(s) for s in self.sids if s >= 0})
        atom_sets = [set(lib.solution_atoms[s]) for s in unique_sids]
        common = set.intersection(*atom_sets) if atom_sets else set()
        varying = sorted(set().union(*atom_sets) - common) if atom_sets else []
        self.common = [lib.atoms.atoms[a] for a in sorted(common) if lib.atoms.atoms[a].constant is not True]
        self.varying = [lib.atoms.atoms[a] for a in varying]
        self._common_ok = all_of(self.common, "common_ok")
        self._bits = bitmask_of(self.varying, "signature")
        position = {atom: number for number, atom in enumerate(varying)}
        need = np.zeros((len(unique_sids) + 1, len(varying)), dtype=bool)
        for row, sid in enumerate(unique_sids):
            for atom in lib.solution_atoms[sid]:
                if atom in position:
                    need[row, position[atom]] = True
        need[-1, :] = False
        self.need = need
        row_of = {sid: row for row, sid in enumerate(unique_sids)}
        self.entry_rows = np.array([row_of.get(int(s), -1) for s in self.sids], dtype=np.int64)
        self.never = self.sids < 0  # index -1 entries never answer
        self.codes, self.code_maps = _lexicographic_codes(self.keys)
        self.band = Band(self.keys, self.speeds)
        self.sid_list: list[int] = self.sids.tolist()
        self.subtables: dict[int, Usable] = {}
        self.metric = self.distance.bound_on_first  # "square" | "abs" | None

    # -- signatures

    def _usable(self, signature_bits: BoolArray) -> BoolArray:
        solution_ok: BoolArray = ~np.any(self.need & ~signature_bits, axis=1)
        solution_ok[-1] = False
        usable: BoolArray = solution_ok[self.entry_rows] & ~self.never
        return usable

    def _grouped(self, cols: ColumnsLike) -> tuple[IntArray, list[int], IntArray] | None:
        """The queries (rows of ``cols``) that pass the predicates every kernel of the table
        shares, grouped by which of the other predicates hold: the rows, each group's signature,
        each row's group. None when no query passes."""
        ok = np.ones(cols.size, dtype=bool)
        for atom in self.common:
            ok &= _vector_of(atom, cols)
        rows = np.flatnonzero(ok)
        if rows.size == 0:
            return None
        if not self.varying:
            return rows, [0], np.zeros(rows.size, dtype=np.int64)
        view = cols if rows.size == cols.size else cols.take(rows)
        groups, inverse = _unique_rows(np.stack([_vector_of(atom, view) for atom in self.varying], axis=1))
        return rows, groups, inverse

    def subtable(self, signature: int) -> Usable:
        sub = self.subtables.get(signature)
        if sub is None:
            bits = np.array([(signature >> i) & 1 for i in range(len(self.varying))], dtype=bool)
            sub = Usable(self.band, self._usable(bits))
            if len(self.subtables) >= _SUBTABLE_CACHE_LIMIT:
                self.subtables.clear()
            self.subtables[signature] = sub
        return sub

    def _signature(self, p: ContractionProblem, h: Hardware) -> int | None:
        if not self._common_ok(p, h):
            return None
        return self._bits(p, h)

    def key_of(self, p: ContractionProblem) -> tuple[int, ...]:
        return tuple(1 if attr is None else getattr(p, attr) for attr in self.attrs)

    # -- one query

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        key = self.key_of(p)
        if self.node.distance == "Equality":
            position, sid, distance = self._equality(lib, p, h, key)
        elif not self.key_list:
            return -1, DBL_MAX
        else:
            signature = self._signature(p, h)
            if signature is None:
                return -1, DBL_MAX
            sub = self.subtable(signature)
            if self.metric is not None:
                position, distance = nearest_one(self.band, sub, key, self.metric == "square")
            else:
                keys, speeds = sub.arrays()[:2]
                at, distance = scan_one(
                    [tuple(row) for row in keys.tolist()],
                    speeds.tolist(),
                    key,
                    self.distance.distance,
                    self.distance.improvement_possible,
                )
                position = -1 if at < 0 else int(sub.positions[at])
            sid = -1 if position < 0 else self.sid_list[position]
        if route is not None and sid >= 0:
            route.answered(self.node, "table", position)
        return sid, distance

    def _equality(
        self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, key: tuple[int, ...]
    ) -> tuple[int, int, float]:
        """(sorted position, solution id or -1, distance) of the one entry Equality tries."""
        position = bisect.bisect_left(self.key_list, key)
        if position >= len(self.key_list) or self.key_list[position] != key:
            return -1, -1, DBL_MAX
        sid = int(self.sids[position])
        if sid < 0 or not lib.can_solve(sid, p, h):
            return position, -1, 0.0
        return position, sid, 0.0

    # -- many queries

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        count = cols.size
        sids = np.full(count, -1, dtype=np.int64)
        fits = np.full(count, DBL_MAX)
        if count == 0:
            return sids, fits
        queries = np.stack([np.full(count, 1, np.int64) if a is None else getattr(cols, a) for a in self.attrs], axis=1)
        if self.node.distance == "Equality":
            return self._equality_batch(lib, cols, queries, route)
        if len(self.keys) == 0:
            return sids, fits
        grouped = self._grouped(cols)
        if grouped is None:
            return sids, fits
        rows, groups, inverse = grouped
        squared = self.metric == "square"
        vectorised = self.metric is not None and self.codes is not None
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(groups) + 1))
        for number, signature in enumerate(groups):
            members = rows[order[bounds[number] : bounds[number + 1]]]
            sub = self.subtable(signature)
            if vectorised and members.size >= _vector_group(sub):
                member_queries = queries[members]

                def starts(subset: IntArray, member_queries: IntArray = member_queries) -> IntArray:
                    assert self.codes is not None  # vectorised only with codes
                    codes = _query_codes(self.code_maps, member_queries[subset])
                    found: IntArray = np.searchsorted(self.codes, codes, side="left")
                    return found

                positions, distances = nearest_many(
                    self.band, sub, member_queries, starts, squared, use_tree=lib.use_tree
                )
                found = positions >= 0
                sids[members[found]] = self.sids[positions[found]]
                fits[members] = distances
                if route is not None:
                    route.answered(members[found], self.node, "table", positions[found])
            else:
                for member in members:
                    key = tuple(queries[member].tolist())
                    if self.metric is not None:
                        position, distance = nearest_one(self.band, sub, key, squared)
                    else:
                        keys, speeds = sub.arrays()[:2]
                        at, distance = scan_one(
                            [tuple(row) for row in keys.tolist()], speeds.tolist(), key,
                            self.distance.distance, self.distance.improvement_possible,
                        )  # fmt: skip
                        position = -1 if at < 0 else int(sub.positions[at])
                    sids[member] = -1 if position < 0 else self.sid_list[position]
                    fits[member] = distance
                    if route is not None and position >= 0 and sids[member] >= 0:
                        route.answered(np.array([member]), self.node, "table", np.array([position]))
        return sids, fits

    def _equality_batch(
        self, lib: CompiledLibrary, cols: ColumnsLike, queries: IntArray, route: BatchRoute | None = None
    ) -> BatchFound:
        count = cols.size
        sids = np.full(count, -1, dtype=np.int64)
        fits = np.full(count, DBL_MAX)
        if len(self.keys) == 0:
            return sids, fits
        if self.codes is not None:
            starts = np.searchsorted(self.codes, _query_codes(self.code_maps, queries), side="left")
            inside = starts < len(self.keys)
            clipped = np.minimum(starts, len(self.keys) - 1)
            hit = inside & np.all(self.keys[clipped] == queries, axis=1)
        else:
            clipped = np.array([bisect.bisect_left(self.key_list, tuple(int(x) for x in row)) for row in queries])
            inside = clipped < len(self.keys)
            clipped = np.minimum(clipped, len(self.keys) - 1)
            hit = inside & np.all(self.keys[clipped] == queries, axis=1)
        fits[hit] = 0.0
        candidate = np.where(hit, self.sids[clipped], -1)
        for sid in np.unique(candidate[candidate >= 0]):
            rows = np.flatnonzero(candidate == sid)
            passed = lib.solution_pass(int(sid), cols.take(rows), {})
            sids[rows[passed]] = sid
            if route is not None:
                route.answered(rows[passed], self.node, "table", clipped[rows[passed]])
        return sids, fits


class _GridTable(_Table):
    """A ``GridBased`` ``Matching`` node: the reference's top-1 cell walk over the sorted table,
    with ``canSolve`` read off the query's predicate signature (one query), and for many queries
    the first cell searched for all of them at once (the rare query whose first cell has no
    usable entry walks on alone)."""

    def __init__(self, lib: CompiledLibrary, node: MatchingNode) -> None:
        super().__init__(lib, node)
        self.grid_key = lib.runtime.grid_key
        self.grid_keys = lib.runtime.grid_keys
        self.column_m: list[int] = self.keys[:, 0].tolist() if len(self.keys) else []
        self.column_n: list[int] = self.keys[:, 1].tolist() if len(self.keys) else []
        self.masks: dict[int, list[bool]] = {}
        # (M, N) of each entry as one sortable code: cells are runs of equal codes
        self.cell_codes = (self.keys[:, 0] << 32) + self.keys[:, 1] if len(self.keys) else np.zeros(0, np.int64)

    def usable_list(self, signature: int) -> list[bool]:
        mask = self.masks.get(signature)
        if mask is None:
            mask = self.subtable(signature).mask.tolist()
            if len(self.masks) >= _SUBTABLE_CACHE_LIMIT:
                self.masks.clear()
            self.masks[signature] = mask
        return mask

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        if not self.key_list:
            return -1, DBL_MAX
        signature = self._signature(p, h)
        if signature is None:
            return -1, DBL_MAX
        position, distance = self.walk(self.grid_key(self.key_of(p)), self.usable_list(signature))
        if position < 0:
            return -1, DBL_MAX
        if route is not None:
            route.answered(self.node, "table", position)
        return self.sid_list[position], distance

    def walk(self, key: tuple[int, ...], usable: list[bool]) -> tuple[int, float]:
        """``findBestKeyMatch_GridBased(key, .., 1)`` as :meth:`ReferenceSelector._grid_walk`."""
        column_m, column_n, keys = self.column_m, self.column_n, self.key_list
        n = len(keys)
        distance = self.distance.distance
        n_lower = n_upper = 0
        while n_upper != n:
            start = n_upper
            m_lower = bisect.bisect_left(column_m, min(key[0], column_m[-1]), start, n)
            m_upper = bisect.bisect_left(column_m, min(column_m[m_lower] + 1, column_m[-1] + 1), m_lower, n)
            n_lower = bisect.bisect_left(column_n, min(key[1], column_n[m_upper - 1]), m_lower, m_upper)
            n_upper = bisect.bisect_left(
                column_n, min(column_n[n_lower] + 1, column_n[m_upper - 1] + 1), n_lower, m_upper
            )
            best, best_distance = -1, DBL_MAX
            for position in range(n_lower, n_upper):
                if usable[position]:
                    d = distance(key, keys[position])
                    if d < best_distance:
                        best, best_distance = position, d
            if best >= 0:
                return best, best_distance
        for position in range(n_lower - 1, -1, -1):
            if usable[position]:
                return position, distance(key, keys[position])
        return -1, DBL_MAX

    def _walk_many(self, keys: IntArray, usable: BoolArray, group: IntArray) -> tuple[IntArray, FloatArray, IntArray]:
        """:meth:`walk`'s forward part for many queries at once: (best position or -1, its
        distance, the last cell's lower bound). A sorted range's ``lower_bound`` from ``start``
        is the global one clamped to ``start``, so every step is a ``searchsorted``."""
        count, n = len(keys), len(self.keys)
        column_m, codes = self.keys[:, 0], self.cell_codes
        best = np.full(count, -1, dtype=np.int64)
        best_distance = np.full(count, DBL_MAX)
        n_lower = np.zeros(count, dtype=np.int64)
        start = np.zeros(count, dtype=np.int64)
        m_first = np.searchsorted(column_m, np.minimum(keys[:, 0], column_m[-1]), side="left")
        group_has_usable: BoolArray = np.asarray(usable.any(axis=1), dtype=bool)
        active = np.flatnonzero(group_has_usable[group])  # a group without usable entries finds nothing
        while active.size:
            m_lower = np.maximum(start[active], m_first[active])
            m_value = column_m[m_lower]
            m_upper = np.searchsorted(column_m, m_value, side="right")
            n_target = np.minimum(keys[active, 1], self.keys[m_upper - 1, 1])
            lower = np.maximum(m_lower, np.searchsorted(codes, (m_value << 32) + n_target, side="left"))
            upper = np.searchsorted(codes, codes[lower], side="right")
            n_lower[active] = lower
            for offset in range(int((upper - lower).max())):
                position = lower + offset
                clipped = np.minimum(position, n - 1)
                live = (position < upper) & usable[group[active], clipped]
                if not live.any():
                    continue
                where = np.flatnonzero(live)
                queries = active[where]
                d = grid_based_distances(keys[queries], self.keys[clipped[where]])
                better = d < best_distance[queries]
                best[queries[better]] = clipped[where[better]]
                best_distance[queries[better]] = d[better]
            start[active] = upper
            active = active[(best[active] < 0) & (upper != n)]
        return best, best_distance, n_lower

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        count = cols.size
        sids = np.full(count, -1, dtype=np.int64)
        fits = np.full(count, DBL_MAX)
        if count == 0 or len(self.keys) == 0:
            return sids, fits
        raw = np.stack([np.full(count, 1, np.int64) if a is None else getattr(cols, a) for a in self.attrs], axis=1)
        queries = self.grid_keys(raw)
        grouped = self._grouped(cols)
        if grouped is None:
            return sids, fits
        rows, groups, inverse = grouped
        masks = [self.subtable(signature).mask for signature in groups]
        usable = np.stack(masks) if masks else np.zeros((0, len(self.keys)), dtype=bool)
        member_keys = queries[rows]
        best, best_distance, n_lower = self._walk_many(member_keys, usable, inverse)
        # the walk ran off the table's end: the last usable entry before the last cell answers
        left = np.flatnonzero(best < 0)
        if left.size:
            positions = np.arange(len(self.keys))
            last_usable = np.maximum.accumulate(np.where(usable, positions, -1), axis=1)
            before = np.where(n_lower[left] > 0, last_usable[inverse[left], np.maximum(n_lower[left] - 1, 0)], -1)
            hit = before >= 0
            best[left[hit]] = before[hit]
            if hit.any():
                best_distance[left[hit]] = grid_based_distances(member_keys[left[hit]], self.keys[before[hit]])
        found = best >= 0
        sids[rows[found]] = self.sids[best[found]]
        fits[rows[found]] = best_distance[found]
        if route is not None and found.any():
            route.answered(rows[found], self.node, "table", best[found])
        return sids, fits


def _vector_of(atom: Atom, cols: ColumnsLike) -> BoolArray:
    """``atom.vector(cols)``, kept on ``cols`` for the batch: the tables under one row or
    operation see the same columns and share most predicates (rocBLAS_Full: 5 400 evaluations
    per 4 000 queries, 1 900 distinct). Callers only read the result."""
    cache: dict[Atom, BoolArray] = cols.__dict__.setdefault("_atom_vectors", {})
    vector = cache.get(atom)
    if vector is None:
        vector = atom.vector(cols)
        cache[atom] = vector
    return vector


def _unique_rows(bits: BoolArray) -> tuple[list[int], IntArray]:
    """Distinct rows of a boolean matrix as integers (bit i = column i) and each row's group."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    width = packed.shape[1]
    words = -(-width // 8)
    padded = np.zeros((len(packed), words * 8), dtype=np.uint8)
    padded[:, :width] = packed
    as_words = padded.view("<u8")
    if words == 1:
        values, inverse = np.unique(as_words[:, 0], return_inverse=True)
        return [int(v) for v in values.tolist()], inverse.reshape(-1)
    # over 64 atoms: sort the rows by their words (lexsort of integer columns; np.unique of
    # void rows sorted bytes and cost more than the rest of a hipBLASLt batch)
    order = np.lexsort(as_words.T[::-1])
    ordered = as_words[order]
    starts = np.ones(len(ordered), dtype=bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(len(ordered), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    signatures = [sum(int(word) << (64 * place) for place, word in enumerate(row)) for row in ordered[starts].tolist()]
    return signatures, inverse


def _key_attribute(prop: Any) -> str | None:
    kind, index = prop.type, prop.index if prop.index is not None else 0
    simple = {"FreeSizeA": "m", "FreeSizeB": "n", "BatchSize": "batch", "BoundSize": "k"}
    if kind in simple and index == 0:
        return simple[kind]
    if kind in ("AStride", "BStride", "CStride", "DStride") and index in (0, 1, 2):
        tensor = kind[0].lower()
        return None if index == 0 else (f"ld{tensor}" if index == 1 else f"stride_{tensor}")
    raise SelectionError(f"unsupported matching property {kind}({index})")


def _lexicographic_codes(keys: IntArray) -> tuple[IntArray | None, list[IntArray]]:
    """One int64 per key preserving lexicographic order, for ``searchsorted``; None if it does not fit."""
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64), [np.zeros(0, dtype=np.int64)] * keys.shape[1]
    uniques = [np.unique(keys[:, j]) for j in range(keys.shape[1])]
    widths = [int(2 * len(u) + 2).bit_length() for u in uniques]
    if sum(widths) > 62:
        return None, uniques
    codes = np.zeros(len(keys), dtype=np.int64)
    for j, unique in enumerate(uniques):
        rank = np.searchsorted(unique, keys[:, j])
        codes = (codes << widths[j]) | (2 * rank + 1)
    return codes, uniques


def _query_codes(uniques: list[IntArray], queries: IntArray) -> IntArray:
    widths = [int(2 * len(u) + 2).bit_length() for u in uniques]
    codes = np.zeros(len(queries), dtype=np.int64)
    for j, unique in enumerate(uniques):
        values = queries[:, j]
        rank = np.searchsorted(unique, values)
        exact = (rank < len(unique)) & (unique[np.minimum(rank, len(unique) - 1)] == values)
        code = np.where(exact, 2 * rank + 1, 2 * rank)
        codes = (codes << widths[j]) | code
    return codes


class CompiledLibrary:
    """A master library prepared for fast selection (one query or many).

    Build with :func:`compile_library`. Results equal :class:`~tensilekit.selection.walk.ReferenceSelector`'s;
    ``reference`` gives the traced walk for explanations.
    """

    def __init__(
        self,
        library: MasterLibrary,
        loader: Loader | None = None,
        *,
        use_tree: bool | None = None,
        runtime: Runtime | str | None = None,
    ) -> None:
        self.library = library
        self.use_tree = have_kdtree() if use_tree is None else use_tree
        self.runtime: Runtime = detect_runtime(library) if runtime is None else runtime_named(runtime)
        """The runtime whose rules the answers follow (detected from the master by default)."""
        self.reference = ReferenceSelector(library, loader, self.runtime)
        self.atoms = AtomTable()
        self.solutions: list[MasterSolution] = []
        self.solution_atoms: list[tuple[int, ...]] = []
        self._can_solve: dict[tuple[int, ...], Any] = {}  # by atoms: kernels of one signature share one
        self._sid: dict[int, int] = {}
        self._lazy_sources: list[Callable[[int], MasterSolution | None]] = []
        self._placeholders: dict[str, _Node] = {}
        for solution in library.solutions_by_index().values():  # the last of an index, as the loader
            self._register(solution)
        self.root = self._compile(library.library)

    # -- solutions

    def _register(self, solution: MasterSolution) -> int:
        existing = self._sid.get(solution.index)
        if existing is not None:
            return existing
        sid = len(self.solutions)
        atoms: list[int] = []
        for predicate in (solution.task_predicate, solution.problem_predicate, solution.hardware_predicate):
            for operand in conjuncts(predicate):
                atom_id = self.atoms.intern(operand, solution)
                if atom_id not in atoms:
                    atoms.append(atom_id)
        self.solutions.append(solution)
        self.solution_atoms.append(tuple(atoms))
        self._sid[solution.index] = sid
        return sid

    def sid_of(self, index: int) -> int:
        sid = self._sid.get(index)
        if sid is None:
            for source in self._lazy_sources:  # lazily read (indexed) shards decode on first use
                found = source(index)
                if found is not None:
                    return self._register(found)
            raise SelectionError(f"the library refers to solution index {index}, which it does not contain")
        return sid

    def can_solve(self, sid: int, p: ContractionProblem, h: Hardware) -> bool:
        """``canSolve`` of solution ``sid`` for one query (generated on first use)."""
        atoms = self.solution_atoms[sid]
        function = self._can_solve.get(atoms)
        if function is None:
            function = all_of([self.atoms.atoms[a] for a in atoms], "can_solve")
            self._can_solve[atoms] = function
        return bool(function(p, h))

    def solution_pass(self, sid: int, cols: ColumnsLike, cache: dict[int, BoolArray]) -> BoolArray:
        out = np.ones(cols.size, dtype=bool)
        for atom_id in self.solution_atoms[sid]:
            atom = self.atoms.atoms[atom_id]
            if atom.constant is True:
                continue
            if atom.constant is False:
                return np.zeros(cols.size, dtype=bool)
            vector = cache.get(atom_id)
            if vector is None:
                vector = atom.vector(cols)
                cache[atom_id] = vector
            out &= vector
        return out

    # -- compilation

    def _compile(self, node: AnyNode) -> _Node:
        if isinstance(node, (HardwareNode, ProblemNode)):
            if any(has_chip_predicate(row.predicate) for row in node.rows):
                return _Reference(node)  # PCI chip-ID rows: the reference walk keeps fallback rows
            rows = [(self._row_atom(row.predicate), self._compile(row.library)) for row in node.rows]
            if len(rows) == 1 and rows[0][0].constant is True:
                return rows[0][1]  # one always-true row: the node adds nothing to the walk
            labels = [row_label(node.type, number, row.predicate) for number, row in enumerate(node.rows)]
            return _Rows(rows, labels)
        if isinstance(node, ProblemMapNode):
            if node.property.type != "OperationIdentifier":
                return _Reference(node)
            if not isinstance(node.map, dict):  # read partially: compiled when reached
                return _Map({}, node.map, self._compile)
            return _Map({key: self._compile(child) for key, child in node.map.items()})
        if isinstance(node, SingleNode):
            return _Single(self.sid_of(node.index) if node.index >= 0 else -1, node)
        if isinstance(node, MatchingNode):
            if node.distance == "GridBased":
                return _LazyTable(node, grid=True)
            if node.distance not in ("Euclidean", "Manhattan", "Ratio", "Equality"):
                return _Reference(node)
            return _LazyTable(node)
        if isinstance(node, DecisionTreeNode):
            trees = [(list(entry.tree), self._compile(entry.value)) for entry in node.trees]
            return _Forest(node, trees, self._compile(node.null_value))
        if isinstance(node, FreeSizeNode):
            return _Nothing()
        if isinstance(node, PlaceholderNode):
            return _Placeholder(node.value)
        return _Reference(node)

    def _row_atom(self, predicate: Any) -> Any:
        return compile_atom(predicate)

    def placeholder(self, prefix: str) -> _Node:
        compiled = self._placeholders.get(prefix)
        if compiled is None:
            library = self.reference.load_placeholder(prefix)
            lazy = getattr(library, "_lazy_solution", None)
            if lazy is not None:
                self._lazy_sources.append(lazy)
            for solution in library.solutions_by_index().values():  # the shard's last of an index
                self._register(solution)
            compiled = self._compile(library.library)
            self._placeholders[prefix] = compiled
        return compiled

    # -- queries

    def find(
        self, p: ContractionProblem, h: Hardware, route: Route | None = None
    ) -> tuple[MasterSolution | None, float | None]:
        """One query: the chosen solution (or None) and the reported distance; a ``route`` passed
        in is filled with how the answer was reached (as the reference walk fills it)."""
        sid, fitness = self.root.find(self, p, h, route)
        if sid < 0:
            return None, None
        return self.solutions[sid], fitness

    def find_batch(self, cols: ColumnsLike, route: BatchRoute | None = None) -> tuple[IntArray, FloatArray]:
        """Many queries: solution ids (-1 none) into :attr:`solutions` and distances (NaN none);
        a ``route`` (``BatchRoute(cols.size)``) passed in is filled with each query's route."""
        sids, fits = self.root.find_batch(self, cols, route)
        fits = np.where(sids >= 0, fits, _NAN)
        return sids, fits


class _LazyTable(_Node):
    """Sorts and indexes a ``Matching`` table on first use (large libraries compile quickly)."""

    def __init__(self, node: MatchingNode, *, grid: bool = False) -> None:
        self.node = node
        self.grid = grid
        self.table: _Table | None = None

    def _get(self, lib: CompiledLibrary) -> _Table:
        if self.table is None:
            self.table = _GridTable(lib, self.node) if self.grid else _Table(lib, self.node)
        return self.table

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        return self._get(lib).find(lib, p, h, route)

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        return self._get(lib).find_batch(lib, cols, route)


def compile_library(
    library: MasterLibrary,
    *,
    loader: Loader | None = None,
    use_tree: bool | None = None,
    runtime: Runtime | str | None = None,
) -> CompiledLibrary:
    """Prepare ``library`` for fast selection.

    ``loader`` resolves lazy ``Placeholder`` leaves. ``use_tree`` chooses SciPy's k-d tree for bulk
    nearest-key search (default: when SciPy is installed); without it a windowed scan gives the
    same answers, more slowly on large tables. ``runtime`` (``"tensile"``/``"hipblaslt"``)
    overrides the runtime detected from the master. Raises TypeError for arguments of the wrong
    type, SelectionError for an unknown ``runtime``.
    """
    require(library, MasterLibrary, "library", "compile_library")
    require_callable(loader, "loader", "compile_library", optional=True)
    require(use_tree, bool, "use_tree", "compile_library", optional=True)
    require(runtime, (str, Runtime), "runtime", "compile_library", optional=True)
    return CompiledLibrary(library, loader, use_tree=use_tree, runtime=runtime)


__all__ = ["BatchRoute", "CompiledLibrary", "compile_library"]

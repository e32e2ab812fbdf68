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
import operator
import re
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
from tensilekit.model.predicates import StringPredicate
from tensilekit.model.solution import MasterSolution
from tensilekit.predicates.evaluate import MAX_GSU_WORKSPACE_SIZE, has_chip_predicate
from tensilekit.selection.columns import HARDWARE_COLUMNS, PROBLEM_TYPE_COLUMNS, ColumnsLike
from tensilekit.selection.distance import DISTANCES, grid_based_distances, grid_k_terms, grid_mn_distances
from tensilekit.selection.features import feature_key
from tensilekit.selection.grid_batch_walk import batch_first_grid_walk
from tensilekit.selection.kernels import (
    SOLUTION_DEPENDENT,
    Atom,
    AtomTable,
    BoolArray,
    all_of,
    canonical_key,
    compile_atom,
    conjuncts,
    guarded_bitmask_of,
)
from tensilekit.selection.problem import ContractionProblem, Hardware
from tensilekit.selection.runtime import Runtime, detect_runtime, resolve_runtime
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
_SIZE_MOD = 1 << 64
_NO_N = 1 << 63  # above every N: a key past a run's last N starts at its last cell


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
        # each row's scalar test (None: constant) and constant, made on the first query
        self._tests: list[tuple[Any, bool, _Node]] | None = None

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        fitness: float | None = None
        last = len(self.rows) - 1
        tests = self._tests
        if tests is None:
            tests = self._tests = [
                (None if atom.constant is not None else _row_test(atom), atom.constant is False, child)
                for atom, child in self.rows
            ]
        for number, (test, never, child) in enumerate(tests):
            if never or (test is not None and not test(p, h)):
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
            # every open query passed: the child sees the view the row was tested on (its columns
            # and atom results already read)
            child_cols = view if hit.size == open_rows.size else cols.take(hit)
            sub_sids, sub_fits = child.find_batch(lib, child_cols, sub_route)
            written = ~np.isnan(sub_fits)
            if written.all():  # the usual table: a distance for every query (no copies of them)
                fits[hit] = sub_fits
            else:
                fits[hit[written]] = sub_fits[written]
            got = sub_sids >= 0
            every = bool(got.all())
            if every:
                sids[hit] = sub_sids
            else:
                sids[hit[got]] = sub_sids[got]
            if route is not None and number < last:
                route.fell(hit[~got], self.labels[number])
            if every:
                open_rows = open_rows[~mask]
                continue
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
        compile_node: Callable[[str, AnyNode], _Node] | None = None,
    ) -> None:
        self.children = children
        # a map read partially (io.partial_msgpack): each operation compiled, and so decoded,
        # when a query first asks for it
        self._pending, self._compile_node = pending, compile_node

    def child(self, op_id: str) -> _Node | None:
        found = self.children.get(op_id)
        if found is None and self._pending is not None and op_id in self._pending:
            assert self._compile_node is not None
            found = self.children[op_id] = self._compile_node(op_id, self._pending[op_id])
        return found

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        child = self.children.get(p.op_id)
        if child is None:
            child = self.child(p.op_id)
        return (-1, None) if child is None else child.find(lib, p, h, route)

    def find_batch(self, lib: CompiledLibrary, cols: ColumnsLike, route: BatchRoute | None = None) -> BatchFound:
        sids, fits = _empty(cols.size)
        groups = _groups_by_operation(cols)
        if len(groups) == 1:  # the usual batch: one operation
            child = self.child(groups[0][0])
            return _empty(cols.size) if child is None else child.find_batch(lib, cols, route)
        for name, rows in groups:
            child = self.child(name)
            if child is None:
                continue
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


_Bits = Callable[[ContractionProblem, Hardware], "int | None"]


class _Table(_Node):
    """A ``Matching`` node: Euclidean/Manhattan/Ratio scans and Equality probes."""

    def __init__(self, lib: CompiledLibrary, node: MatchingNode, known: frozenset[str] = frozenset()) -> None:
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
        unique_sids: list[int] = np.unique(self.sids[self.sids >= 0]).tolist()  # sorted
        atom_sets = [set(lib.solution_atoms[s]) for s in unique_sids]
        common = set.intersection(*atom_sets) if atom_sets else set()
        varying = sorted(set().union(*atom_sets) - common) if atom_sets else []
        # the atoms every kernel needs, less those the rows above the table have tested already
        self.common = [
            lib.atoms.atoms[a]
            for a in sorted(common)
            if lib.atoms.atoms[a].constant is not True and lib.atoms.atoms[a].key not in known
        ]
        self.varying = [lib.atoms.atoms[a] for a in varying]
        # the varying workspace checks, grouped for the batch (see _workspace_ranks)
        workspace = [i for i, atom in enumerate(self.varying) if atom.workspace_elem is not None]
        self.workspace_elems: npt.NDArray[np.uint64] | None = None
        self.workspace_positions: list[int] = workspace
        self.workspace_ranks: list[int] = []
        self.other_positions = [i for i in range(len(self.varying)) if i not in set(workspace)]
        if len(workspace) >= 4:
            elems = sorted({int(self.varying[i].workspace_elem or 0) for i in workspace})
            self.workspace_elems = np.array(elems, dtype=np.uint64)
            self.workspace_ranks = [elems.index(int(self.varying[i].workspace_elem or 0)) for i in workspace]
        self.workspace_rank_array = np.array(self.workspace_ranks, dtype=np.int64)
        # the other `column >= value` checks of one column and guard, two or more: (column,
        # guard, their sorted values, their positions, the index of each one's value)
        by_column: dict[tuple[str, str], list[int]] = {}
        for i in self.other_positions:
            at_least = self.varying[i].at_least
            if at_least is not None:
                by_column.setdefault((at_least[0], at_least[2]), []).append(i)
        self.families: list[tuple[str, str, IntArray, list[int], IntArray]] = []
        for (column, guard), members in by_column.items():
            if len(members) >= 2:
                least = [self.varying[i].at_least[1] for i in members]  # type: ignore[index]
                values = sorted(set(least))
                index = np.array([values.index(value) for value in least], dtype=np.int64)
                self.families.append((column, guard, np.array(values, dtype=np.int64), members, index))
        # one query: the other atoms' bits from a generated function, the workspace checks' bits
        # from the rank (each rank's bits made once)
        # (generated on the first single query: a batch never calls them; see _signature_bits)
        self._bit_functions: tuple[_Bits, _Bits | None] | None = None
        if self.workspace_elems is not None:
            self._elem_list: list[int] = [int(e) for e in self.workspace_elems.tolist()]
            self._bits_by_rank = [
                sum(1 << place for place, r in zip(workspace, self.workspace_ranks, strict=True) if r < rank)
                for rank in range(len(self._elem_list) + 1)
            ]
        position = {atom: number for number, atom in enumerate(varying)}
        need = np.zeros((len(unique_sids) + 1, len(varying)), dtype=bool)
        for row, sid in enumerate(unique_sids):
            for atom in lib.solution_atoms[sid]:
                if atom in position:
                    need[row, position[atom]] = True
        need[-1, :] = False
        self.need = need
        # each entry's row of ``need`` (-1: index -1), looked up for the whole column at once
        row_of = np.full(len(lib.solutions) + 1, -1, dtype=np.int64)  # a sid -1 reads the last
        row_of[unique_sids] = np.arange(len(unique_sids), dtype=np.int64)
        self.entry_rows = row_of[self.sids]
        self.never = self.sids < 0  # index -1 entries never answer
        self.codes, self.code_maps = _lexicographic_codes(self.keys)
        self.band = Band(self.keys, self.speeds, self.key_list)  # its tuples shared, not built again
        self.sid_list: list[int] = self.sids.tolist()
        self.subtables: dict[int, Usable] = {}
        self._usable_by_mask: dict[bytes, Usable] = {}
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
        largest = cols.largest
        ok: BoolArray | None = None
        for atom in self.common:
            if not atom.holds_for_all(largest):  # a buffer offset check the batch's sizes all pass
                ok = _vector_of(atom, cols).copy() if ok is None else np.logical_and(ok, _vector_of(atom, cols), out=ok)
        rows = np.arange(cols.size) if ok is None else np.flatnonzero(ok)
        if rows.size == 0:
            return None
        if not self.varying:
            return rows, [0], np.zeros(rows.size, dtype=np.int64)
        view = cols if rows.size == cols.size else cols.take(rows)
        # atoms of one threshold family (the workspace checks: how many of the sorted needs fit;
        # `column >= value` checks: how many of the sorted values the column reaches) as one rank
        # per query, the other atoms as bits; each distinct (bits, ranks) spelled out once
        ranked: list[tuple[list[int], IntArray, IntArray]] = []  # (positions, index of each, ranks)
        ranks = self._workspace_ranks(view) if self.workspace_elems is not None else None
        if ranks is not None:
            ranked.append((self.workspace_positions, self.workspace_rank_array, ranks))
        positions = self.other_positions if ranks is not None else list(range(len(self.varying)))
        for column, guard, values, members, index in self.families:
            if guard and (getattr(view, guard) != 0).any():
                continue  # a query the family's guard does not admit: each member evaluated
            ranked.append((members, index, np.searchsorted(values, getattr(view, column), side="right")))
        if len(ranked) > (ranks is not None):
            in_family = {position for members, _, _ in ranked for position in members}
            positions = [position for position in positions if position not in in_family]
        # an atom that holds for all of these queries or for none splits none of them: the
        # grouping reads the others (a hipBLASLt batch: 23 of 79), its signatures all of them
        vectors: list[BoolArray | None] = [
            None if self.varying[i].holds_for_all(largest) else _vector_of(self.varying[i], view) for i in positions
        ]
        held = [True if vector is None else _held_by_all_or_none(vector) for vector in vectors]
        splitting = [
            vector for vector, constant in zip(vectors, held, strict=True) if constant is None and vector is not None
        ]
        bits = np.stack(splitting, axis=1) if splitting else None
        if not ranked:
            if bits is None:
                return rows, [self._signature_of(positions, held, None, [])], np.zeros(rows.size, dtype=np.int64)
            groups, inverse = _unique_rows(bits)
            column_of = [number for number, constant in enumerate(held) if constant is None]
            signatures = [self._signature_of(positions, held, group, column_of) for group in groups]
            return rows, signatures, inverse
        code = ranked[0][2]
        for _, index, family_ranks in ranked[1:]:  # mixed radix: each rank is 0 .. len(index)
            code = code * (int(index.max(initial=0)) + 2) + family_ranks
        representatives, inverse = _unique_words(_packed_words(bits, code))
        full = np.zeros((len(representatives), len(self.varying)), dtype=bool)
        for position, vector, constant in zip(positions, vectors, held, strict=True):
            full[:, position] = constant if constant is not None else vector[representatives]  # type: ignore[index]
        for members, index, family_ranks in ranked:
            full[:, members] = index[None, :] < family_ranks[representatives][:, None]
        packed = np.packbits(full, axis=1, bitorder="little")
        groups = [int.from_bytes(row.tobytes(), "little") for row in packed]
        return rows, groups, inverse

    @staticmethod
    def _signature_of(positions: Any, held: list[bool | None], group: int | None, column_of: list[int]) -> int:
        """The signature of a group of :func:`_unique_rows` (``group``: its splitting atoms' bits,
        column j of them the ``column_of[j]``-th of ``positions``), the held atoms' bits added."""
        signature = 0
        for position, constant in zip(positions, held, strict=True):
            if constant:
                signature |= 1 << position
        for column, number in enumerate(column_of):
            if group is not None and (group >> column) & 1:
                signature |= 1 << positions[number]
        return signature

    def _workspace_ranks(self, cols: ColumnsLike) -> IntArray | None:
        """Per query, how many of :attr:`workspace_elems` (sorted) its workspace checks pass: the
        check of ``elem`` holds iff ``m * n * batch * elem`` fits both limits, a prefix of the
        sorted needs. None where that does not hold exactly (a forced GSU, gradients, a product
        that could wrap around 2**64): then each check is evaluated."""
        assert self.workspace_elems is not None
        c: Any = cols
        if c.lite_gsu.size and ((c.lite_gsu > 0).any() or c.lite_use_gradient.any()):
            return None
        u64 = np.uint64
        if (c.m < 0).any() or (c.n < 0).any() or (c.batch < 0).any():
            return None
        product = c.m.astype(u64) * c.n.astype(u64) * c.batch.astype(u64)
        largest = int(c.m.max(initial=0)) * int(c.n.max(initial=0)) * int(c.batch.max(initial=0))
        if largest * int(self.workspace_elems[-1]) >= 1 << 64:
            return None
        limit = np.minimum(np.asarray(c.workspace_size, dtype=u64), u64(MAX_GSU_WORKSPACE_SIZE))
        most = np.where(product == 0, u64(np.iinfo(np.uint64).max), limit // np.maximum(product, u64(1)))
        ranks: IntArray = np.searchsorted(self.workspace_elems, most, side="right").astype(np.int64)
        return ranks

    def subtable(self, signature: int) -> Usable:
        sub = self.subtables.get(signature)
        if sub is None:
            bits = np.array([(signature >> i) & 1 for i in range(len(self.varying))], dtype=bool)
            mask = self._usable(bits)
            if len(self.subtables) >= _SUBTABLE_CACHE_LIMIT:
                self.subtables.clear()
                self._usable_by_mask.clear()
            # signatures that leave the same entries usable share one Usable, its arrays and tree
            # (rocBLAS_Full: half of them, two thirds of their memory)
            key = mask.tobytes()
            sub = self._usable_by_mask.get(key)
            if sub is None:
                sub = self._usable_by_mask[key] = Usable(self.band, mask)
            self.subtables[signature] = sub
        return sub

    def _signature_bits(self) -> tuple[_Bits, _Bits | None]:
        """The generated signature functions of one query: every varying atom's bit (None unless
        the common atoms hold), and with grouped workspace checks the other atoms' bits only."""
        other_bits = None
        if self.workspace_elems is not None:
            others = [self.varying[i] for i in self.other_positions]
            other_bits = guarded_bitmask_of(self.common, others, "signature", self.other_positions)
        self._bit_functions = (guarded_bitmask_of(self.common, self.varying, "signature"), other_bits)
        return self._bit_functions

    def _signature(self, p: ContractionProblem, h: Hardware) -> int | None:
        """None unless the query passes the atoms every kernel shares; else its signature."""
        guarded_bits, other_bits = self._bit_functions or self._signature_bits()
        if other_bits is None:
            return guarded_bits(p, h)
        lite = p.lite
        if lite.gsu > 0 or lite.use_gradient:  # the workspace checks' unusual case
            return guarded_bits(p, h)
        product = p.m * p.n * p.batch
        elems = self._elem_list
        if product < 0 or product * elems[-1] >= _SIZE_MOD:  # a need that could wrap around
            return guarded_bits(p, h)
        bits = other_bits(p, h)
        if bits is None:
            return None
        # the check of elem holds iff product * elem <= min(128 MiB, workspace): a prefix of elems
        limit = min(MAX_GSU_WORKSPACE_SIZE, p.workspace_size)
        if product == 0:
            rank = len(elems) if limit >= 0 else 0
        else:
            rank = bisect.bisect_right(elems, limit // product)
        return bits | self._bits_by_rank[rank]

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


def _last_usable_before(usable: BoolArray, last_start: int) -> IntArray:
    """Per group (a row of ``usable``): its last usable entry before ``last_start`` (the first
    entry of the last cell), which the reference's backward scan falls back to; -1 for none."""
    fallback = np.full(len(usable), -1, dtype=np.int64)
    if last_start > 0:
        before = usable[:, :last_start]
        found_before = before.any(axis=1)
        fallback[found_before] = last_start - 1 - np.argmax(before[found_before, ::-1], axis=1)
    return fallback


class _GridTable(_Table):
    """A ``GridBased`` ``Matching`` node: the reference's top-1 cell walk over the sorted table,
    with ``canSolve`` read off the query's predicate signature (one query), and for many queries
    the first cell searched for all of them at once (the rare query whose first cell has no
    usable entry walks on alone)."""

    def __init__(self, lib: CompiledLibrary, node: MatchingNode, known: frozenset[str] = frozenset()) -> None:
        super().__init__(lib, node, known)
        self.grid_key = lib.runtime.grid_key
        self.grid_keys = lib.runtime.grid_keys
        self.column_m: list[int] = self.keys[:, 0].tolist() if len(self.keys) else []
        self.column_n: list[int] = self.keys[:, 1].tolist() if len(self.keys) else []
        self.masks: dict[int, list[bool]] = {}
        # (M, N) of each entry as one sortable code: cells are runs of equal codes
        self.cell_codes = (self.keys[:, 0] << 32) + self.keys[:, 1] if len(self.keys) else np.zeros(0, np.int64)
        # the cells for the one-query walk: cell c holds positions cell_start[c] .. cell_start[c + 1];
        # run r (one M) holds cells run_cell[r] .. run_cell[r + 1], whose N are run_n[r]
        self.cell_start: list[int] = []
        self.run_m: list[int] = []
        self.run_cell: list[int] = []
        self.run_n: list[list[int]] = []
        previous: tuple[int, int] | None = None
        for position, (m, n) in enumerate(zip(self.column_m, self.column_n, strict=True)):
            if (m, n) == previous:
                continue
            if previous is None or m != previous[0]:
                self.run_m.append(m)
                self.run_cell.append(len(self.cell_start))
                self.run_n.append([])
            self.cell_start.append(position)
            self.run_n[-1].append(n)
            previous = (m, n)
        self.cell_start.append(len(self.key_list))
        self.run_cell.append(len(self.cell_start) - 1)
        self.walks: dict[int, tuple[list[bool], list[int], int]] = {}
        # the same as arrays for the batch; a cell's code (its run << 32) + N sorts like the cells
        self.cell_start_array = np.array(self.cell_start, dtype=np.int64)
        self.run_m_array = np.array(self.run_m, dtype=np.int64)
        self.run_cell_array = np.array(self.run_cell, dtype=np.int64)
        self.run_last_n_array = np.array([ns[-1] for ns in self.run_n], dtype=np.int64)
        self.cell_code_array = np.array(
            [(run << 32) + n for run, ns in enumerate(self.run_n) for n in ns], dtype=np.int64
        )
        self.key_getter = _key_getter(self.attrs)
        # each cell's run (and, past the last cell, the number of runs); each cell's M and N; each entry's K
        self.run_of_cell_array = np.repeat(
            np.arange(len(self.run_m) + 1), np.diff(self.run_cell + [len(self.cell_start)])
        )
        self.cell_mn_array = self.keys[self.cell_start_array[:-1], :2] if len(self.keys) else np.zeros((0, 2), np.int64)
        k_column = 3 if self.keys.shape[1] > 3 else 2
        self.k_array = self.keys[:, k_column].astype(np.float64) if len(self.keys) else np.zeros(0)
        # the batch's walk by lookup: a key's N falls in one of len(n_values) + 1 slots (the
        # distinct N of the table cut the line), and its slot fixes the cell each run's walk
        # starts at: start_cells[run, slot] (the run's first cell at or above N, its last if none)
        self.n_values = np.unique(self.keys[:, 1]) if len(self.keys) else np.zeros(0, np.int64)
        self.start_cells = np.array(
            [
                [first + min(bisect.bisect_left(ns, n), len(ns) - 1) for n in [*self.n_values.tolist(), _NO_N]]
                for first, ns in zip(self.run_cell, self.run_n, strict=False)
            ],
            dtype=np.int64,
        ).reshape(len(self.run_n), len(self.n_values) + 1)
        self.widest_cell = int(np.diff(self.cell_start_array).max(initial=0))
        # each cell's entries, padded with len(keys) (a column no group may use), and each
        # entry's K with one more for it
        offsets = self.cell_start_array[:-1, None] + np.arange(self.widest_cell)
        self.cell_entries = np.where(offsets < self.cell_start_array[1:, None], offsets, len(self.keys))
        self.k_padded = np.append(self.k_array, 1.0)
        self.walk_lookups: dict[int, tuple[IntArray, int]] = {}

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
        if lib.runtime.grid_batch_first:
            position, distance = self.batch_first_walk(lib, self.key_getter(p), self.usable_list(signature))
        else:
            position, distance = self.cell_walk(self.grid_key(self.key_getter(p)), self.walk_tables(signature))
        if position < 0:
            return -1, DBL_MAX
        if route is not None:
            route.answered(self.node, "table", position)
        return self.sid_list[position], distance

    def batch_first_walk(self, lib: CompiledLibrary, key: tuple[int, ...], usable: list[bool]) -> tuple[int, float]:
        """The runtime's batch-first walk (hipBLASLt 0.12.1, :mod:`~tensilekit.selection.grid_batch_walk`)
        over the usable entries: (best position or -1, its distance)."""
        found = batch_first_grid_walk(
            self.key_list, key, lambda position: position if usable[position] else None, lib.runtime.grid_distance, 1
        )
        return (found[0][2], found[0][1]) if found else (-1, DBL_MAX)

    def walk_tables(self, signature: int) -> tuple[list[bool], list[int], int]:
        """For the queries of ``signature``: each entry's usability, for each cell the first cell
        from it on with a usable entry (``len(cells)`` for none), and the last usable entry before
        the table's last cell (-1 for none)."""
        tables = self.walks.get(signature)
        if tables is None:
            usable = self.usable_list(signature)
            starts = self.cell_start
            cells = len(starts) - 1
            next_usable = [cells] * (cells + 1)
            for cell in range(cells - 1, -1, -1):
                has_usable = any(usable[starts[cell] : starts[cell + 1]])
                next_usable[cell] = cell if has_usable else next_usable[cell + 1]
            last_start = starts[cells - 1] if cells else 0
            fallback = next((p for p in range(last_start - 1, -1, -1) if usable[p]), -1)
            tables = (usable, next_usable, fallback)
            if len(self.walks) >= _SUBTABLE_CACHE_LIMIT:
                self.walks.clear()
            self.walks[signature] = tables
        return tables

    def cell_walk(self, key: tuple[int, ...], tables: tuple[list[bool], list[int], int]) -> tuple[int, float]:
        """:meth:`walk`, cell by cell: from the first run (M) at or above the key's M, each run is
        walked from its first cell at or above the key's N (its last cell if none) to its end,
        and the first cell with a usable entry at a finite distance answers; if none, the last
        usable entry before the table's last cell (what the reference's backward scan finds)."""
        usable, next_usable, fallback = tables
        if fallback < 0 and next_usable[0] == len(next_usable) - 1:
            return -1, DBL_MAX  # no usable entry at all
        run_m, run_cell, run_n, starts = self.run_m, self.run_cell, self.run_n, self.cell_start
        distance = self.distance.distance
        keys = self.key_list
        key_m, key_n = key[0], key[1]
        runs = len(run_m)
        run = bisect.bisect_left(run_m, key_m) if key_m <= run_m[-1] else runs - 1
        while run < runs:
            ns = run_n[run]
            first, end = run_cell[run], run_cell[run + 1]
            cell = first + (bisect.bisect_left(ns, key_n) if key_n <= ns[-1] else len(ns) - 1)
            cell = next_usable[cell]
            while cell < end:
                best, best_distance = -1, DBL_MAX
                for position in range(starts[cell], starts[cell + 1]):
                    if usable[position]:
                        d = distance(key, keys[position])
                        if d < best_distance:
                            best, best_distance = position, d
                if best >= 0:
                    return best, best_distance
                cell = next_usable[cell + 1]
            run += 1
        if fallback >= 0:
            return fallback, distance(key, keys[fallback])
        return -1, DBL_MAX

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

    def _walk_cells_many(
        self, keys: IntArray, usable: BoolArray, group: IntArray, lookup: tuple[IntArray, IntArray] | None = None
    ) -> tuple[IntArray, FloatArray]:
        """:meth:`cell_walk` for many queries at once: (best position or -1, its distance).

        The cell a query's walk first finds a usable entry in depends only on its group, its
        first run (M) and its N slot (see :attr:`start_cells`): :meth:`walk_lookup` of the
        groups' ``usable`` rows (given, or made here) gives every query its cell in one lookup,
        and each cell's entries (at most :attr:`widest_cell`) are compared side by side. A query
        whose cell has usable entries at no finite distance walks on (:meth:`_walk_cells_stepwise`)."""
        count, n = len(keys), len(self.keys)
        if count == 0 or n == 0 or not len(self.run_m):
            return self._walk_cells_stepwise(keys, usable, group)
        cells = len(self.cell_start) - 1
        first_cells, fallback = self.walk_lookup(usable) if lookup is None else lookup
        # each query's run (the first whose M is at or above its M; past the last, the lookup's
        # last row repeats the last run's) and N slot
        run = np.searchsorted(self.run_m_array, keys[:, 0], side="left")
        slot = np.searchsorted(self.n_values, keys[:, 1], side="left")
        cell = first_cells.reshape(-1)[np.ravel_multi_index((group, run, slot), first_cells.shape)]
        best = np.full(count, -1, dtype=np.int64)
        best_distance = np.full(count, DBL_MAX)
        found = np.flatnonzero(cell < cells)
        walked: IntArray | slice = slice(None) if len(found) == count else found  # all: no copies
        at = cell[walked]
        if at.size:
            query_keys, query_group = keys[walked], group[walked]
            # each cell's entries side by side, past its end a column no group may use
            entries = self.cell_entries[at]
            padded = np.zeros((len(usable), n + 1), dtype=bool)
            padded[:, :n] = usable
            live = padded.reshape(-1)[(query_group * (n + 1))[:, None] + entries]
            k_column = 3 if keys.shape[1] > 3 else 2
            mn = grid_mn_distances(query_keys, self.cell_mn_array[at])
            d = mn[:, None] + grid_k_terms(query_keys[:, k_column][:, None], self.k_padded[entries])
            # the scan keeps the first entry of least distance below DBL_MAX (NaN never wins)
            d = np.where(live & (d < DBL_MAX), d, np.inf)
            if d.shape[1] == 1:
                least, chosen = d[:, 0], entries[:, 0]
            else:
                choice = np.argmin(d, axis=1)[:, None]
                least = np.take_along_axis(d, choice, axis=1)[:, 0]
                chosen = np.take_along_axis(entries, choice, axis=1)[:, 0]
            resolved = least < DBL_MAX
            if resolved.all():
                best[walked], best_distance[walked] = chosen, least
            else:
                answered = np.arange(count)[walked]
                best[answered[resolved]] = chosen[resolved]
                best_distance[answered[resolved]] = least[resolved]
                on = answered[~resolved]  # rare: every usable entry of the cell at no finite distance
                best[on], best_distance[on] = self._walk_cells_stepwise(keys[on], usable, group[on])
        self._answer_by_fallback(best, best_distance, np.flatnonzero(cell >= cells), fallback, group, keys)
        return best, best_distance

    def _walk_lookups(self, signatures: list[int], usable: BoolArray) -> tuple[IntArray, IntArray] | None:
        """:meth:`walk_lookup` of the groups of ``signatures`` (their rows of ``usable``), each
        signature's made once (kept as :attr:`walk_lookups`) and those of the others together."""
        if not len(self.keys) or not len(self.run_m):
            return None
        known = self.walk_lookups
        missing = [number for number, signature in enumerate(signatures) if signature not in known]
        if missing:
            if len(known) + len(missing) > _SUBTABLE_CACHE_LIMIT:
                known.clear()
                missing = list(range(len(signatures)))
            first_cells, fallback = self.walk_lookup(usable[missing])
            for row, number in enumerate(missing):
                known[signatures[number]] = (first_cells[row], int(fallback[row]))
        rows = [known[signature] for signature in signatures]
        return np.stack([first for first, _ in rows]), np.array([last for _, last in rows], dtype=np.int64)

    def walk_lookup(self, usable: BoolArray) -> tuple[IntArray, IntArray]:
        """For groups of queries with the ``usable`` entries (a row each): (per group, run (one
        more: the last repeated) and N slot, the first cell from the slot's start cell on, in
        that run or the next ones, with a usable entry (cells for none); per group, the last
        usable entry before the table's last cell (the reference's backward scan), -1 for none)."""
        starts = self.cell_start_array
        cells, runs = len(starts) - 1, len(self.run_m)
        slots = self.start_cells.shape[1]
        has_usable = np.logical_or.reduceat(usable, starts[:-1], axis=1)
        first_from = np.where(has_usable, np.arange(cells), cells)
        next_usable = np.minimum.accumulate(first_from[:, ::-1], axis=1)[:, ::-1]
        # per group, run and slot: the usable cell the walk of that run finds from its start
        # cell, else (cells) that of the next run on
        in_run = np.concatenate([next_usable[:, self.start_cells], np.full((len(usable), 1, slots), cells)], axis=1)
        in_run[:, :runs][in_run[:, :runs] >= self.run_cell_array[1:, None]] = cells
        run_of = np.where(in_run < cells, np.arange(runs + 1)[:, None], runs)
        found_run = np.minimum.accumulate(run_of[:, ::-1], axis=1)[:, ::-1]
        first_cells = np.take_along_axis(in_run, found_run, axis=1)
        first_cells[:, runs] = first_cells[:, runs - 1]  # a key past the last run's M walks from it
        last_start = int(starts[cells - 1])
        fallback = _last_usable_before(usable, last_start)
        return first_cells, fallback

    def _walk_cells_stepwise(self, keys: IntArray, usable: BoolArray, group: IntArray) -> tuple[IntArray, FloatArray]:
        """:meth:`cell_walk` for many queries at once, a step at a time: each step moves every
        open query either to the first cell of its run with a usable entry, answered there, or
        to the next run; so a query takes at most one step per run."""
        count, n = len(keys), len(self.keys)
        best = np.full(count, -1, dtype=np.int64)
        best_distance = np.full(count, DBL_MAX)
        starts, run_cell, cell_codes = self.cell_start_array, self.run_cell_array, self.cell_code_array
        cells, runs = len(starts) - 1, len(self.run_m)
        # per group: the first cell from each cell on with a usable entry (cells: none), and the
        # last usable entry before the last cell (the reference's backward scan), -1 for none
        has_usable = np.logical_or.reduceat(usable, starts[:-1], axis=1)
        first_from = np.where(has_usable, np.arange(cells), cells)
        next_usable = np.full((len(usable), cells + 1), cells, dtype=np.int64)
        next_usable[:, :cells] = np.minimum.accumulate(first_from[:, ::-1], axis=1)[:, ::-1]
        last_start = int(starts[cells - 1])
        fallback = _last_usable_before(usable, last_start)
        key_m, key_n = keys[:, 0], keys[:, 1]
        run = np.searchsorted(self.run_m_array, np.minimum(key_m, self.run_m_array[-1]), side="left")
        cell_from = np.zeros(count, dtype=np.int64)
        group_has_usable: BoolArray = np.asarray(has_usable.any(axis=1), dtype=bool)
        active = np.flatnonzero(group_has_usable[group])  # a group without usable entries finds nothing

        def first_cell(queries: IntArray) -> IntArray:
            r = run[queries]
            target = (r << 32) + np.minimum(key_n[queries], self.run_last_n_array[r])
            found: IntArray = np.searchsorted(cell_codes, target, side="left")
            return found

        cell_from[active] = first_cell(active)
        k_column = 3 if keys.shape[1] > 3 else 2
        while active.size:
            cell_all = next_usable[group[active], cell_from[active]]
            inside = cell_all < run_cell[run[active] + 1]
            queries, cell = active[inside], cell_all[inside]
            lower, upper = starts[cell], starts[cell + 1]
            rows = group[queries]
            # the M/N term is the cell's (one M and N): once per query, then each entry's K term
            query_keys = keys[queries]
            mn = grid_mn_distances(query_keys, self.cell_mn_array[cell])
            query_k = query_keys[:, k_column]
            for offset in range(int((upper - lower).max(initial=0))):
                position = lower + offset
                clipped = np.minimum(position, n - 1)
                live = (position < upper) & usable[rows, clipped]
                if not live.any():
                    continue
                where = np.flatnonzero(live)
                chosen = queries[where]
                d = mn[where] + grid_k_terms(query_k[where], self.k_array[clipped[where]])
                better = d < best_distance[chosen]
                best[chosen[better]] = clipped[where[better]]
                best_distance[chosen[better]] = d[better]
            # a cell whose usable entries all lie at no finite distance: on to the next one
            unresolved = best[queries] < 0
            cell_from[queries[unresolved]] = cell[unresolved] + 1
            # the others go on in the run of the next usable cell (the runs between have none)
            moving = active[~inside]
            run[moving] = self.run_of_cell_array[cell_all[~inside]]
            moving = moving[run[moving] < runs]
            cell_from[moving] = first_cell(moving)
            active = np.concatenate([queries[unresolved], moving])
        self._answer_by_fallback(best, best_distance, np.flatnonzero(best < 0), fallback, group, keys)
        return best, best_distance

    def _answer_by_fallback(
        self,
        best: IntArray,
        best_distance: FloatArray,
        left: IntArray,
        fallback: IntArray,
        group: IntArray,
        keys: IntArray,
    ) -> None:
        """The queries ``left`` (no cell answered them) take their group's ``fallback`` entry (the
        reference's backward scan from the last cell), where it has one."""
        if left.size:
            before_position = fallback[group[left]]
            hit = before_position >= 0
            if hit.any():
                best[left[hit]] = before_position[hit]
                best_distance[left[hit]] = grid_based_distances(keys[left[hit]], self.keys[before_position[hit]])

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
        if lib.runtime.grid_batch_first:  # one query at a time (no vectorised batch-first walk)
            lists = [self.usable_list(signature) for signature in groups]
            walked = [
                self.batch_first_walk(lib, tuple(raw[row].tolist()), lists[inverse[i]]) for i, row in enumerate(rows)
            ]
            best = np.array([position for position, _ in walked], dtype=np.int64)
            best_distance = np.array([distance for _, distance in walked], dtype=np.float64)
        else:
            masks = [self.subtable(signature).mask for signature in groups]
            usable = np.stack(masks) if masks else np.zeros((0, len(self.keys)), dtype=bool)
            best, best_distance = self._walk_cells_many(
                queries if rows.size == count else queries[rows], usable, inverse, self._walk_lookups(groups, usable)
            )
        found = best >= 0
        if found.all() and rows.size == count:  # every query answered (no copies of them)
            sids, fits = self.sids[best], best_distance
        else:
            sids[rows[found]] = self.sids[best[found]]
            fits[rows[found]] = best_distance[found]
        if route is not None and found.any():
            route.answered(rows[found], self.node, "table", best[found])
        return sids, fits


def _groups_by_operation(cols: ColumnsLike) -> list[tuple[str, IntArray]]:
    """:func:`_groups_by_value` of the operation identifiers, by problem type where the columns
    know it (the operation is part of the type: a few integer comparisons, not string ones)."""
    types = cols.problem_types()
    if types is None:
        return _groups_by_value(cols.op_id)  # type: ignore[attr-defined]
    kinds, kind_of = types
    operations: dict[str, int] = {}
    number_of_kind = [operations.setdefault(name, len(operations)) for name in kinds.op_id.tolist()]  # type: ignore[attr-defined]
    if len(operations) == 1:
        return [(next(iter(operations)), np.arange(cols.size))]
    operation_of = np.array(number_of_kind, dtype=np.int64)[kind_of]  # (np.isin per operation: 5x slower)
    groups = [(name, np.flatnonzero(operation_of == number)) for name, number in operations.items()]
    return [(name, rows) for name, rows in groups if rows.size]  # a view may hold no query of a type


def _groups_by_value(values: npt.NDArray[Any]) -> list[tuple[str, IntArray]]:
    """(value, its positions) for each distinct value of a string column. A batch names a few
    operations: each is split off by one comparison over the rest (sorting the strings, as
    np.unique does, cost a tenth of a hipBLASLt batch); past a few dozen, np.unique after all."""
    groups: list[tuple[str, IntArray]] = []
    remaining = np.arange(len(values))
    while remaining.size and len(groups) < 32:
        name = str(values[remaining[0]])
        same = values[remaining] == name
        groups.append((name, remaining[same]))
        remaining = remaining[~same]
    if remaining.size:
        names, inverse = np.unique(values[remaining], return_inverse=True)
        inverse = inverse.reshape(-1)
        groups.extend((str(name), remaining[inverse == number]) for number, name in enumerate(names.tolist()))
    return groups


def _vector_of(atom: Atom, cols: ColumnsLike) -> BoolArray:
    """``atom.vector(cols)``, kept on ``cols`` for the batch: the tables under one row or
    operation see the same columns and share most predicates (rocBLAS_Full: 5 400 evaluations
    per 4 000 queries, 1 900 distinct). Callers only read the result."""
    cache: dict[Atom, BoolArray] = cols.__dict__.setdefault("_atom_vectors", {})
    vector = cache.get(atom)
    if vector is None:
        reads = _reads_per_type(atom)
        per_type = reads == _TYPE_ONLY_READS or (reads == _TYPE_AND_DEVICE_READS and cols.one_device())
        types = cols.problem_types() if per_type else None
        # a predicate of the problem type alone (data types, transposes, tensilelite flags), or of
        # it and the device where every query has one device: evaluated on one query of each
        # type (string columns compare slowly, 100 000 at a time)
        # (kept on the types' columns too: columns of one type view, such as lint's problems of
        # one table entry's templates, evaluate it once for all their batches)
        vector = atom.vector(cols) if types is None else _vector_of(atom, types[0])[types[1]]
        cache[atom] = vector
    return vector


_TYPE_ONLY_READS, _TYPE_AND_DEVICE_READS, _OTHER_READS = 1, 2, 0
_READS: dict[str, int] = {}
_FIELD_READ = re.compile(r"\b([ph])\.(\w+)")
_OWNER_NAME = re.compile(r"\b[ph]\b")
_DEVICE_COLUMNS = frozenset(name for name, _ in HARDWARE_COLUMNS)


def _reads_per_type(atom: Atom) -> int:
    """What the atom's vector expression reads, elementwise (no helper given the whole query):
    only :data:`PROBLEM_TYPE_COLUMNS` of ``p`` (:data:`_TYPE_ONLY_READS`), those and device
    columns of ``h`` (:data:`_TYPE_AND_DEVICE_READS`), or more (:data:`_OTHER_READS`)."""
    known = _READS.get(atom.vector_expr)
    if known is None:
        fields = _FIELD_READ.findall(atom.vector_expr)
        elementwise = (
            bool(fields)
            and _OWNER_NAME.search(_FIELD_READ.sub("", atom.vector_expr)) is None
            and not any(helper in atom.vector_expr for helper in atom.helpers)
        )
        type_fields = [owner == "p" and name in PROBLEM_TYPE_COLUMNS for owner, name in fields]
        device_fields = [owner == "h" and name in _DEVICE_COLUMNS for owner, name in fields]
        if not elementwise:
            known = _OTHER_READS
        elif all(type_fields):
            known = _TYPE_ONLY_READS
        elif all(t or d for t, d in zip(type_fields, device_fields, strict=True)):
            known = _TYPE_AND_DEVICE_READS
        else:
            known = _OTHER_READS
        _READS[atom.vector_expr] = known
    return known


def _unique_rows(bits: BoolArray) -> tuple[list[int], IntArray]:
    """Distinct rows of a boolean matrix as integers (bit i = column i) and each row's group."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    width = packed.shape[1]
    words = -(-width // 8)
    padded = np.zeros((len(packed), words * 8), dtype=np.uint8)
    padded[:, :width] = packed
    as_words = padded.view("<u8")
    if words == 1:
        if width <= 2:  # at most 16 atoms: counted, not sorted
            small = as_words[:, 0].astype(np.int64)
            present = np.flatnonzero(np.bincount(small, minlength=1))
            lookup = np.zeros(int(present[-1]) + 1 if present.size else 1, dtype=np.int64)
            lookup[present] = np.arange(len(present))
            return present.tolist(), lookup[small]
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


def _key_getter(attrs: list[str | None]) -> Callable[[Any], tuple[int, ...]]:
    """``key_of`` as one C-level call where it can be (every key component a problem field)."""
    if len(attrs) > 1 and all(attr is not None for attr in attrs):
        return operator.attrgetter(*attrs)  # type: ignore[arg-type]
    return lambda p: tuple(1 if attr is None else getattr(p, attr) for attr in attrs)


def _row_test(atom: Atom) -> Callable[[ContractionProblem, Hardware], bool]:
    """A row's scalar test as a generated function: each field it reads (``p.lite`` a dozen
    times in a tensilelite row) is read once."""
    if atom.scalar_expr.count("p.") < 4:
        return atom.scalar
    return all_of([atom], "row")


def _operation_key(op_id: str) -> frozenset[str]:
    """The key of the atom ``OperationIdentifierEqual(op_id)``: it holds under that entry of a map."""
    return frozenset({canonical_key(StringPredicate(type="OperationIdentifierEqual", value=op_id))})


def _conjunct_keys(predicate: Any) -> frozenset[str]:
    """Keys of the atoms a row predicate is the conjunction of (each holds where the row does)."""
    return frozenset(canonical_key(operand) for operand in conjuncts(predicate))


def _held_by_all_or_none(vector: BoolArray) -> bool | None:
    """True when every entry of ``vector`` holds, False when none does, else None."""
    if not vector.size:
        return True
    if vector[0]:
        return True if vector.all() else None
    return False if not vector.any() else None


def _packed_words(bits: BoolArray | None, ranks: IntArray) -> npt.NDArray[np.uint64]:
    """One row of 64-bit words per query: its bits packed, then its rank (in one word with them
    when both fit: one integer per query sorts faster than rows of them)."""
    width = 0 if bits is None else bits.shape[1]
    rank_bits = max(1, int(ranks.max(initial=0)).bit_length())
    if bits is not None and 0 < width <= 64 - rank_bits:
        packed = np.packbits(bits, axis=1, bitorder="little")
        padded = np.zeros((len(packed), 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        word: npt.NDArray[np.uint64] = padded.view("<u8")[:, 0] | (ranks.astype(np.uint64) << np.uint64(width))
        return word[:, None]
    columns = [ranks.astype(np.uint64)[:, None]]
    if bits is not None and bits.shape[1]:
        packed = np.packbits(bits, axis=1, bitorder="little")
        width = packed.shape[1]
        padded = np.zeros((len(packed), -(-width // 8) * 8), dtype=np.uint8)
        padded[:, :width] = packed
        columns.insert(0, padded.view("<u8").astype(np.uint64))
    return np.concatenate(columns, axis=1) if len(columns) > 1 else columns[0]


_COUNTED_WORDS = 1 << 16
"""Words below this are grouped by counting (np.bincount), larger ones by sorting."""


def _unique_words(words: npt.NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
    """The distinct rows of ``words``: a representative row of each, and each row's group."""
    if words.shape[1] == 1:
        if len(words) and int(words.max()) < _COUNTED_WORDS:  # counted, not sorted
            word = words[:, 0].astype(np.int64)
            present = np.flatnonzero(np.bincount(word))
            lookup = np.zeros(int(present[-1]) + 1, dtype=np.int64)
            lookup[present] = np.arange(len(present))
            inverse: IntArray = lookup[word]
            representatives = np.empty(len(present), dtype=np.int64)
            representatives[inverse] = np.arange(len(word))  # any row of a group represents it
            return representatives, inverse
        _, first, inverse = np.unique(words[:, 0], return_index=True, return_inverse=True)
        return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)
    order = np.lexsort(words.T[::-1])
    ordered = words[order]
    starts = np.ones(len(ordered), dtype=bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(len(ordered), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts].astype(np.int64), inverse


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
        self.runtime: Runtime = resolve_runtime(runtime, None, lambda: detect_runtime(library))
        """The runtime whose rules the answers follow (detected from the master by default)."""
        self.reference = ReferenceSelector(library, loader, self.runtime)
        self.atoms = AtomTable(self.runtime.predicate_rules)
        self.solutions: list[MasterSolution] = []
        self.solution_atoms: list[tuple[int, ...]] = []
        self._can_solve: dict[tuple[int, ...], Any] = {}  # by atoms: kernels of one signature share one
        self._sid: dict[int, int] = {}
        self._atoms_of: dict[int, tuple[Any, list[int]]] = {}  # see _predicate_atoms
        self._lazy_sources: list[Callable[[int], MasterSolution | None]] = []
        self._placeholders: dict[str, _Node] = {}
        self._index_table: IntArray | None = None
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
            for atom_id in self._predicate_atoms(predicate, solution):
                if atom_id not in atoms:
                    atoms.append(atom_id)
        self.solutions.append(solution)
        self.solution_atoms.append(tuple(atoms))
        self._sid[solution.index] = sid
        return sid

    def _predicate_atoms(self, predicate: Any, solution: MasterSolution) -> list[int]:
        """The atom of each conjunct of ``predicate``, once per predicate object when none of
        them reads the solution (a big master's kernels share their predicates: rocBLAS_Full
        64 000 of them, 3 800 objects)."""
        known = self._atoms_of.get(id(predicate))
        if known is not None and known[0] is predicate:
            return known[1]
        operands = conjuncts(predicate)
        found = [self.atoms.intern(operand, solution) for operand in operands]
        if all(operand.type not in SOLUTION_DEPENDENT for operand in operands):
            self._atoms_of[id(predicate)] = (predicate, found)  # (kept: its id stays its own)
        return found

    def index_table(self) -> IntArray:
        """The master index of each solution id, then -1 (so ``index_table()[sids]`` maps a batch's
        ids, -1 included); rebuilt only when solutions were added (lazily read shards)."""
        table = self._index_table
        if table is None or len(table) != len(self.solutions) + 1:
            table = np.array([s.index for s in self.solutions] + [-1], dtype=np.int64)
            table.flags.writeable = False
            self._index_table = table
        return table

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

    def solution_pass(
        self, sid: int, cols: ColumnsLike, cache: dict[int, BoolArray], rows: IntArray | None = None
    ) -> BoolArray:
        """``canSolve`` of solution ``sid`` for every query of ``cols`` (``rows``: for those
        queries only, in that order), each predicate evaluated over all of ``cols`` once and kept
        in ``cache`` (atom id -> its vector) for the other solutions asked of the same columns."""
        size = cols.size if rows is None else len(rows)
        out = np.ones(size, dtype=bool)
        for atom_id in self.solution_atoms[sid]:
            atom = self.atoms.atoms[atom_id]
            if atom.constant is True:
                continue
            if atom.constant is False:
                return np.zeros(size, dtype=bool)
            vector = cache.get(atom_id)
            if vector is None:
                vector = _vector_of(atom, cols)
                cache[atom_id] = vector
            out &= vector if rows is None else vector[rows]
        return out

    # -- compilation

    def _compile(self, node: AnyNode, known: frozenset[str] = frozenset()) -> _Node:
        """``node`` compiled; ``known``: keys of the atoms every query reaching it has passed (the
        conjuncts of the rows above), which its tables need not test again."""
        if isinstance(node, (HardwareNode, ProblemNode)):
            if any(has_chip_predicate(row.predicate) for row in node.rows):
                return _Reference(node)  # PCI chip-ID rows: the reference walk keeps fallback rows
            rows = [
                (self._row_atom(row.predicate), self._compile(row.library, known | _conjunct_keys(row.predicate)))
                for row in node.rows
            ]
            if len(rows) == 1 and rows[0][0].constant is True:
                return rows[0][1]  # one always-true row: the node adds nothing to the walk
            labels = [row_label(node.type, number, row.predicate) for number, row in enumerate(node.rows)]
            return _Rows(rows, labels)
        if isinstance(node, ProblemMapNode):
            if node.property.type != "OperationIdentifier":
                return _Reference(node)
            if not isinstance(node.map, dict):  # read partially: compiled when reached
                return _Map({}, node.map, lambda op_id, child: self._compile(child, known | _operation_key(op_id)))
            return _Map({key: self._compile(child, known | _operation_key(key)) for key, child in node.map.items()})
        if isinstance(node, SingleNode):
            return _Single(self.sid_of(node.index) if node.index >= 0 else -1, node)
        if isinstance(node, MatchingNode):
            if node.distance == "GridBased":
                return _LazyTable(node, known, grid=True)
            if node.distance not in ("Euclidean", "Manhattan", "Ratio", "Equality"):
                return _Reference(node)
            return _LazyTable(node, known)
        if isinstance(node, DecisionTreeNode):
            trees = [(list(entry.tree), self._compile(entry.value, known)) for entry in node.trees]
            return _Forest(node, trees, self._compile(node.null_value, known))
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

    def __init__(self, node: MatchingNode, known: frozenset[str] = frozenset(), *, grid: bool = False) -> None:
        self.node = node
        self.known = known
        self.grid = grid
        self.table: _Table | None = None

    def _get(self, lib: CompiledLibrary) -> _Table:
        if self.table is None:
            kind = _GridTable if self.grid else _Table
            self.table = kind(lib, self.node, self.known)
        return self.table

    def find(self, lib: CompiledLibrary, p: ContractionProblem, h: Hardware, route: Route | None = None) -> Found:
        table = self.table
        return (self._get(lib) if table is None else table).find(lib, p, h, route)

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

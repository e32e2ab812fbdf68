"""Walk a master library the way Tensile's C++ runtime does, and say why at every step.

This is the reference implementation of ``MasterSolutionLibrary::findBestSolution`` and
``findAllSolutions`` for GEMM problems (Tensile host library, ``spec/selection.md`` section b).
It favours clarity and a complete trace over speed; :mod:`tensilekit.selection.fast` is the
compiled equivalent for bulk queries and is tested against this module.

The algorithm, node by node (the C++ class reproduced in brackets):

* ``Hardware`` / ``Problem`` rows (``ExactLogicLibrary``): rows in file order; the first row whose
  predicate holds is searched, and **if its subtree answers nothing the next rows are tried**
  (fall-through). ``findAllSolutions`` unions every row whose predicate holds.
* ``ProblemMap`` (``ProblemMapLibrary``): exact lookup of the operation identifier; a miss is null.
* ``Single`` (``SingleSolutionLibrary``): the solution if ``canSolve`` (task ∧ problem ∧ hardware
  predicates) holds, else null; index -1 is null.
* ``Matching`` (``ProblemMatchingLibrary`` over ``DistanceMatchingTable``): the table is sorted by
  ``(key ascending, speed descending)`` with libstdc++'s unstable ``std::sort``
  (:meth:`~tensilekit.selection.runtime.Runtime.table_order`); the query key is built from
  ``properties``.

  - Default search (``findBestKeyMatch_BinSearch``): from ``lower_bound(key)`` scan rightwards,
    then from ``lower_bound - 1`` leftwards. An entry is considered when its distance is smaller
    than the best so far, or equal with a strictly higher speed (``bestSpeed`` starts at 0.0); it
    becomes the best only if its solution passes ``canSolve`` (a failing nearest entry is skipped
    and the scan goes on). Once a best exists, each direction stops at the first entry for which
    the distance's ``improvementPossible`` bound fails — for Euclidean that is
    ``(p0 - q0)² >= best`` on the first key component only. Ties are therefore decided by scan
    order, not globally, and the leftward scan meets equal keys slowest first.
  - ``Equality``: only the first entry (highest speed) with exactly the query key is tried; a miss
    or a failing solution is null (the parent row then falls through). Distance 0.0 on a key hit.
  - ``GridBased``: the M/N cell walk of ``findBestKeyMatch_GridBased`` with a last-resort
    backwards scan; K is the key's 4th value when it has one (tensilelite's ``[M, N, batch, K]``)
    and the runtime may adjust the key first (hipBLASLt folds batch into M or N,
    :meth:`~tensilekit.selection.runtime.Runtime.grid_key`).

  The node writes the distance it found (``DBL_MAX`` when nothing) into the caller's fitness;
  the last value written is the one reported, as with the C++ ``double* fitness``.
* ``DecisionTree`` (``DecisionTreeLibrary`` / ``BasicForest``): float32 feature key; trees in order;
  a tree is evaluated only when its own solution passes ``canSolve``; the first tree predicting
  true answers, else ``nullValue``. Writes no distance.
* ``FreeSize`` (tensilelite ``ProblemFreeSizeLibrary``): never answers ``findBestSolution``.

tensilelite's ``findTopSolutions`` (:meth:`ReferenceSelector.find_top`) and ``findAllSolutions``
with GEMM_TYPE_ONLY (:meth:`ReferenceSelector.find_all_gemm_type`) are walked here too; which
runtime uses them, and how, is :mod:`tensilekit.selection.runtime`'s business.
* ``GranularitySelection``: exact ``[M, N, batch, K]`` hit first, else the best projected
  performance (strictly greater wins, in index order) among solutions passing ``canSolve``.
* ``Placeholder`` (``PlaceholderLibrary``): loads ``<prefix>`` through the injected loader on first
  use, merges its solutions into the master's and delegates to its ``library``.

Not modelled: the ``CachingLibrary`` (its key ignores alpha/beta restrictions, beta and
``cEqualsD``, so a cached answer can differ from the uncached one this module computes — the
golden corpus answers are uncached), user overrides, and the environment variables
``TENSILE_SOLUTION_INDEX``, ``TENSILE_METRIC``, ``TENSILE_NAIVE_SEARCH`` and
``TENSILE_EXPERIMENTAL_SELECTION``. Entries with identical key and speed (duplicate size rows)
are ordered as libstdc++'s ``std::sort`` leaves them (:mod:`tensilekit.selection.stdsort`), which is
what decides which of them answers.
"""

from __future__ import annotations

import bisect
import dataclasses
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from tensilekit.errors import SelectionError, UnmodelledSelection, child_path
from tensilekit.model.library import (
    AnyNode,
    DecisionTreeNode,
    FreeSizeNode,
    GranularitySelectionNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    PlaceholderNode,
    PredictionNode,
    ProblemMapNode,
    ProblemNode,
    Row,
    SingleNode,
)
from tensilekit.model.solution import MasterSolution
from tensilekit.predicates.evaluate import Verdict, chip_fallback_match, evaluate
from tensilekit.selection.answer import Candidate, Selection, TraceEvent
from tensilekit.selection.distance import DISTANCES, Distance
from tensilekit.selection.grid_batch_walk import batch_first_grid_walk
from tensilekit.selection.problem import ContractionProblem, GemmProblem, Hardware, contraction_problem

if TYPE_CHECKING:
    from tensilekit.selection.runtime import Runtime

DBL_MAX = sys.float_info.max
Loader = Callable[[str], MasterLibrary]
"""Loads the library a ``Placeholder`` names (its ``value``, the file prefix)."""

_TRACE_ENTRY_LIMIT = 12


def _show(value: float) -> str:
    """A distance for people: exact integers stay exact (they are squared sizes), others ``%g``."""
    if value == DBL_MAX:
        return "DBL_MAX"
    return f"{value:.0f}" if value.is_integer() and abs(value) < 1e16 else f"{value:g}"


def property_value(prop: Any, problem: ContractionProblem) -> int:
    """A ``Matching`` key component (``ContractionProblemProperties.hpp``) for a GEMM."""
    kind = prop.type
    index = prop.index if prop.index is not None else 0
    if kind in ("FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize"):
        if index != 0:
            raise SelectionError(f"property {kind}({index}): a GEMM has one index of each kind")
        return {"FreeSizeA": problem.m, "FreeSizeB": problem.n, "BatchSize": problem.batch, "BoundSize": problem.k}[
            kind
        ]
    if kind in ("AStride", "BStride", "CStride", "DStride"):
        return problem.stride(kind[0].lower(), index)
    raise SelectionError(f"unknown matching property {kind!r}")


@dataclasses.dataclass
class SortedTable:
    """A ``Matching`` table as the C++ holds it after loading: sorted by key, then speed descending."""

    keys: list[tuple[int, ...]]
    speeds: list[float]
    indices: list[int]
    order: list[int]
    """Position of each sorted entry in the node's ``table`` (file order)."""

    @classmethod
    def of(cls, node: MatchingNode, runtime: Runtime | None = None) -> SortedTable:
        """The table in the order ``runtime``'s loader sorts it (:meth:`Runtime.table_order`;
        both runtimes sort alike, so the default is that order); a missing speed is 0.0."""
        from tensilekit.selection.stdsort import matching_table_order

        arity = len(node.properties)
        keys: list[tuple[int, ...]] = []
        speeds: list[float] = []
        for position, entry in enumerate(node.table):
            if len(entry.key) != arity:
                raise SelectionError(f"table entry {position} has {len(entry.key)} key values, properties need {arity}")
            keys.append(tuple(entry.key))
            speeds.append(0.0 if entry.speed is None else float(entry.speed))
        order = runtime.table_order(keys, speeds) if runtime is not None else matching_table_order(keys, speeds)
        table = node.table
        return cls(
            [keys[i] for i in order], [speeds[i] for i in order], [table[i].solution_index for i in order], order
        )


@dataclasses.dataclass(slots=True)
class Route:
    """How a walk reached its answer, recorded in place for a caller that passes one (``coverage``).

    ``fell_through`` names the rows (``"<node> row <n> (<predicate type>)"``) whose predicate held
    but whose subtree answered nothing while a later row of the same node remained to try: the
    runtime's fall-through to a later, more generic row. ``leaf`` is the node that produced the
    answer (a ``Matching`` table, a ``DecisionTree``, a ``Single`` or ``GranularitySelection``
    node); ``via`` says how: ``table``, ``tree`` (a tree of the forest predicted true),
    ``null-value`` (the forest's fallback), ``single``, ``granularity-exact`` or ``granularity``.
    ``position`` is the matched entry's position in the table sorted as the runtime sorts it
    (:class:`SortedTable`). Both the reference walk and the compiled selector fill it the same way.
    """

    fell_through: list[str] = dataclasses.field(default_factory=list)
    leaf: AnyNode | None = None
    via: str | None = None
    position: int | None = None

    def answered(self, leaf: AnyNode, via: str, position: int | None = None) -> None:
        self.leaf, self.via, self.position = leaf, via, position


def row_label(node_type: str, number: int, predicate: Any) -> str:
    """How :class:`Route` names a row: ``Hardware row 0 (AMDGPU)``."""
    return f"{node_type} row {number} ({getattr(predicate, 'type', predicate)})"


@dataclasses.dataclass
class _Query:
    problem: ContractionProblem
    hardware: Hardware
    trace: list[TraceEvent] | None
    exclude: frozenset[int]
    verdicts: dict[int, Verdict] = dataclasses.field(default_factory=dict)
    fitness: float | None = None
    transforms: int = 0
    matched_key: tuple[int, ...] | None = None  # table key of the current best entry
    route: Route | None = None
    matched_position: int | None = None  # sorted-table position of the current best entry

    def note(self, depth: int, node: str, path: str, passed: bool | None, message: str) -> None:
        if self.trace is not None:
            self.trace.append(TraceEvent(depth=depth, node=node, path=path, passed=passed, message=message))


class ReferenceSelector:
    """Reference ``findBestSolution`` / ``findAllSolutions`` over one master library.

    Holds per-library caches (sorted tables, the solution map, loaded placeholders) so repeated
    queries stay cheap; it never mutates the library.
    """

    def __init__(self, library: MasterLibrary, loader: Loader | None = None, runtime: Runtime | None = None) -> None:
        from tensilekit.selection.runtime import detect_runtime

        self.library = library
        self.runtime: Runtime = runtime if runtime is not None else detect_runtime(library)
        """The runtime whose rules (GridBased key, top N, all solutions) the walk follows."""
        self._loader = loader
        # lazily read shards (an indexed file): index -> solution decoded when first needed
        self._lazy_sources: list[Callable[[int], MasterSolution | None]] = []
        find = getattr(library.solutions, "find", None)  # a master read partially (io.partial_msgpack)
        if find is not None:
            self._solutions: dict[int, MasterSolution] = {}
            self._lazy_sources.append(find)
        else:
            self._solutions = {s.index: s for s in library.solutions}
        self._tables: dict[int, tuple[MatchingNode, SortedTable]] = {}
        self._placeholders: dict[str, MasterLibrary] = {}

    # ------------------------------------------------------------------ public

    def select(
        self,
        problem: ContractionProblem,
        hardware: Hardware,
        *,
        explain: bool = False,
        exclude: Iterable[int] = (),
        route: Route | None = None,
    ) -> Selection:
        """``findBestSolution``; with ``explain`` the trace records every decision, and a ``route``
        passed in is filled with how the answer was reached."""
        query = _Query(problem, hardware, [] if explain else None, frozenset(exclude), route=route)
        solution = self._find(self.library.library, "library", 0, query)
        if solution is None:
            query.note(0, "result", "", False, "no solution: the runtime would return nullptr")
            return Selection(index=None, name=None, distance=None, trace=tuple(query.trace or ()))
        query.note(0, "result", "", True, f"selected index {solution.index} {solution.name}")
        return Selection(
            index=solution.index,
            name=solution.name,
            distance=query.fitness,
            solution=solution,
            trace=tuple(query.trace or ()),
            matched_key=query.matched_key,
        )

    def find_all(self, problem: ContractionProblem, hardware: Hardware) -> list[MasterSolution]:
        """``findAllSolutions``: every reachable solution passing ``canSolve``, sorted by index."""
        query = _Query(problem, hardware, None, frozenset())
        found: dict[int, MasterSolution] = {}
        self._find_all(self.library.library, query, found)
        return [found[index] for index in sorted(found)]

    def find_top(
        self, problem: ContractionProblem, hardware: Hardware, count: int, *, explain: bool = False
    ) -> list[MasterSolution]:
        """tensilelite's ``findTopSolutions(problem, hardware, count)``: rows concatenated without
        de-duplication (``ExactLogicLibrary.hpp``), the ``GridBased`` M/N group walk
        (``PropertyMatching.hpp``), one kernel from any other table or leaf, none from ``FreeSize``."""
        query = _Query(problem, hardware, [] if explain else None, frozenset())
        return self._top(self.library.library, "library", 0, query, count)

    def find_top_traced(
        self, problem: ContractionProblem, hardware: Hardware, count: int
    ) -> tuple[list[MasterSolution], tuple[TraceEvent, ...]]:
        """:meth:`find_top` with its walk recorded."""
        query = _Query(problem, hardware, [], frozenset())
        found = self._top(self.library.library, "library", 0, query, count)
        return found, tuple(query.trace or ())

    def find_all_gemm_type(self, problem: ContractionProblem, hardware: Hardware) -> list[MasterSolution]:
        """tensilelite's ``findAllSolutions(.., GEMM_TYPE_ONLY)``: every kernel of the tree whose
        hardware predicate holds and whose problem type is the query's (transposes and types),
        with no other predicate checked; sorted by index (hipBLASLt's ``std::set`` order is
        unspecified)."""
        query = _Query(problem, hardware, None, frozenset())
        found: dict[int, MasterSolution] = {}
        self._all_gemm_type(self.library.library, query, found)
        return [found[index] for index in sorted(found)]

    def supports(self, solution: MasterSolution, problem: ContractionProblem, hardware: Hardware) -> bool:
        """``canSolve`` of one solution (what hipBLASLt's ``isSolutionSupported`` checks)."""
        return self.verdict(solution.index, problem, hardware).passed

    def verdict(self, index: int, problem: ContractionProblem, hardware: Hardware) -> Verdict:
        """``canSolve`` of solution ``index``, with the deciding predicate when it fails."""
        return self.can_solve(index, _Query(problem, hardware, None, frozenset()))

    def index_verdict(self, index: int, problem: ContractionProblem, hardware: Hardware) -> Verdict:
        """hipBLASLt's check of a solution named by its index (a tuning file's, TunableOp's,
        AITER's): ``getSolutionsFromIndex`` must hand it out
        (:meth:`Runtime.hides_by_index <tensilekit.selection.runtime.Runtime.hides_by_index>`),
        then ``isSolutionSupported``: :meth:`verdict`."""
        if self.runtime.hides_by_index(self.solution(index)):
            return Verdict(
                False,
                f"{self.runtime.label} hands out no Stream-K solution by index (getSolutionsFromIndex) unless "
                "TENSILE_SOLUTION_SELECTION_METHOD=2",
                "StreamK",
            )
        return self.verdict(index, problem, hardware)

    def find_node(
        self, node: AnyNode, problem: ContractionProblem, hardware: Hardware, route: Route | None = None
    ) -> tuple[MasterSolution | None, float | None]:
        """``findBestSolution`` of one subtree: (solution or None, last distance written or None)."""
        query = _Query(problem, hardware, None, frozenset(), route=route)
        solution = self._find(node, "", 0, query)
        return solution, query.fitness

    def load_placeholder(self, prefix: str) -> MasterLibrary:
        """The library a ``Placeholder`` names, loaded once; its solutions join the master's."""
        return self._placeholder(prefix)

    def solution(self, index: int) -> MasterSolution:
        if index not in self._solutions:
            for source in self._lazy_sources:
                found = source(index)
                if found is not None:
                    self._solutions[index] = found
                    return found
            raise SelectionError(f"the library refers to solution index {index}, which it does not contain")
        return self._solutions[index]

    def can_solve(self, index: int, query: _Query) -> Verdict:
        """``ContractionSolution::canSolve`` (task ∧ problem ∧ hardware), memoised per query."""
        cached = query.verdicts.get(index)
        if cached is not None:
            return cached
        solution = self.solution(index)
        if index in query.exclude:
            verdict = Verdict(False, "excluded (ranked higher by --top)", "excluded")
        else:
            verdict = Verdict(True, "canSolve", "And")
            for kind, predicate in (
                ("task", solution.task_predicate),
                ("problem", solution.problem_predicate),
                ("hardware", solution.hardware_predicate),
            ):
                outcome = evaluate(
                    predicate, query.problem, query.hardware, solution=solution, rules=self.runtime.predicate_rules
                )
                if not outcome.passed:
                    verdict = Verdict(False, f"{kind} predicate: {outcome.reason}", outcome.type)
                    break
        query.verdicts[index] = verdict
        return verdict

    # ------------------------------------------------------------------ best solution

    def _find(self, node: AnyNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        if isinstance(node, (HardwareNode, ProblemNode)):
            return self._rows(node, path, depth, q)
        if isinstance(node, ProblemMapNode):
            return self._problem_map(node, path, depth, q)
        if isinstance(node, SingleNode):
            return self._single(node.index, path, depth, q, node)
        if isinstance(node, MatchingNode):
            return self._matching(node, path, depth, q)
        if isinstance(node, DecisionTreeNode):
            return self._decision_tree(node, path, depth, q)
        if isinstance(node, FreeSizeNode):
            q.note(depth, "FreeSize", path, False, "FreeSize pools never answer findBestSolution")
            return None
        if isinstance(node, GranularitySelectionNode):
            return self._granularity(node, path, depth, q)
        if isinstance(node, PlaceholderNode):
            library = self._placeholder(node.value)
            q.note(depth, "Placeholder", path, None, f"loaded {node.value} ({len(library.solutions)} solutions)")
            return self._find(library.library, f"{node.value}:library", depth + 1, q)
        if isinstance(node, PredictionNode):
            raise self._prediction(node, path)
        raise SelectionError(f"cannot select through node type {getattr(node, 'type', node)!r}")

    def _prediction(self, node: PredictionNode, path: str) -> UnmodelledSelection:
        """hipBLASLt ranks a Prediction pool with Origami's analytical model (PredictionLibrary.hpp
        findTopSolutions → origami::rank_configs); tensilekit says so and names the candidates."""
        names = []
        for index in node.table:
            try:  # decoded on demand when the master is read partially or lazily
                name = self.solution(index).name
            except SelectionError:
                name = "?"
            names.append(f"{index} {name}")
        shown = "; ".join(names[:8]) + (f"; … {len(names) - 8} more" if len(names) > 8 else "")
        return UnmodelledSelection(
            f"the problem reaches a Prediction pool ({path}): hipBLASLt ranks its {len(names)} candidates with "
            f"Origami's analytical performance model, which tensilekit does not reproduce; candidates: {shown}"
        )

    def _holding_rows(
        self, node: HardwareNode | ProblemNode, path: str, depth: int, q: _Query
    ) -> Iterator[tuple[int, Row, str]]:
        """The rows of ``node`` whose predicate holds, in order, each noted as it is evaluated
        (lazily: a caller that stops early evaluates no further row)."""
        for number, row in enumerate(node.rows):
            row_path = f"{path}.rows[{number}]"
            verdict = evaluate(row.predicate, q.problem, q.hardware)
            q.note(depth, node.type, row_path, verdict.passed, f"row {number}: {verdict.reason}")
            if verdict.passed:
                yield number, row, row_path

    def _rows(self, node: HardwareNode | ProblemNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        fallback: MasterSolution | None = None
        for number, row, row_path in self._holding_rows(node, path, depth, q):
            solution = self._find(row.library, f"{row_path}.library", depth + 1, q)
            if solution is not None and chip_fallback_match(row.predicate, q.hardware):
                # ExactLogicLibrary::findBestSolution (tensilelite): a row reached through the PCI
                # chip-ID fallback is kept while later rows are tried for the device's own ID
                q.note(depth, node.type, row_path, None, f"row {number} matched through a chip-ID fallback")
                fallback = fallback or solution
                continue
            if solution is not None:
                return solution
            if number + 1 < len(node.rows):
                q.note(depth, node.type, row_path, False, f"row {number} found nothing; trying the next row")
                if q.route is not None:
                    q.route.fell_through.append(row_label(node.type, number, row.predicate))
        return fallback

    def _problem_map(self, node: ProblemMapNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        if node.property.type != "OperationIdentifier":
            raise SelectionError(f"ProblemMap on property {node.property.type!r} is not supported")
        child = node.map.get(q.problem.op_id)
        if child is None:
            q.note(depth, "ProblemMap", path, False, f"no entry for {q.problem.op_id} (have {', '.join(node.map)})")
            return None
        q.note(depth, "ProblemMap", path, True, f"operation {q.problem.op_id}")
        return self._find(child, child_path(f"{path}.map", q.problem.op_id), depth + 1, q)

    def _single(
        self, index: int, path: str, depth: int, q: _Query, node: SingleNode | None = None
    ) -> MasterSolution | None:
        if index < 0:
            q.note(depth, "Single", path, False, "null solution (index -1)")
            return None
        verdict = self.can_solve(index, q)
        q.note(depth, "Single", path, verdict.passed, f"index {index}: {verdict.reason}")
        if not verdict.passed:
            return None
        if q.route is not None and node is not None:
            q.route.answered(node, "single")
        return self.solution(index)

    def _transform(self, index: int, q: _Query) -> MasterSolution | None:
        q.transforms += 1
        return self.solution(index) if self.can_solve(index, q).passed else None

    def sorted_table(self, node: MatchingNode) -> SortedTable:
        cached = self._tables.get(id(node))
        if cached is None or cached[0] is not node:
            cached = (node, SortedTable.of(node, self.runtime))
            self._tables[id(node)] = cached
        return cached[1]

    def _matching(self, node: MatchingNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        distance = DISTANCES.get(node.distance)
        if distance is None:
            raise SelectionError(f"unknown matching distance {node.distance!r}")
        table = self.sorted_table(node)
        key = tuple(property_value(prop, q.problem) for prop in node.properties)
        names = ",".join(p.type for p in node.properties)
        q.note(
            depth,
            "Matching",
            path,
            None,
            f"{node.distance} table, {len(table.keys)} entries, key [{names}]={list(key)}",
        )
        if node.distance == "Equality":
            solution, fitness = self._equality(table, key, path, depth, q)
        elif node.distance == "GridBased":
            solution, fitness = self._grid_based(table, key, distance, path, depth, q)
        else:
            solution, fitness = self._bin_search(table, key, distance, path, depth, q)
        q.fitness = fitness
        if solution is None:
            q.note(depth, "Matching", path, False, "no usable entry")
        else:
            if q.route is not None:
                q.route.answered(node, "table", q.matched_position)
            q.note(depth, "Matching", path, True, f"best index {solution.index}, distance {_show(fitness)}")
        return solution

    def _entry_note(self, q: _Query, depth: int, path: str, count: int, message: str, passed: bool | None) -> None:
        if count < _TRACE_ENTRY_LIMIT:
            q.note(depth + 1, "entry", path, passed, message)
        elif count == _TRACE_ENTRY_LIMIT:
            q.note(depth + 1, "entry", path, None, "… further entries not shown")

    def _bin_search(
        self, table: SortedTable, key: tuple[int, ...], dist: Distance, path: str, depth: int, q: _Query
    ) -> tuple[MasterSolution | None, float]:
        keys, speeds = table.keys, table.speeds
        if not keys:
            return None, DBL_MAX
        start = bisect.bisect_left(keys, key)
        q.note(depth + 1, "scan", path, None, f"lower_bound at sorted entry {start} of {len(keys)}")
        best: MasterSolution | None = None
        best_distance, best_speed = DBL_MAX, 0.0
        shown = 0
        for direction, positions in (("rightward", range(start, len(keys))), ("leftward", range(start - 1, -1, -1))):
            for position in positions:
                entry_key = keys[position]
                if best is not None and not dist.improvement_possible(key, entry_key, best_distance):
                    q.note(
                        depth + 1,
                        "scan",
                        path,
                        None,
                        f"{direction} scan stops at {list(entry_key)}: no improvement possible",
                    )
                    break
                d = dist.distance(key, entry_key)
                if d < best_distance or (d == best_distance and speeds[position] > best_speed):
                    index = table.indices[position]
                    solution = self._transform(index, q)
                    if solution is not None:
                        best, best_distance, best_speed = solution, d, speeds[position]
                        q.matched_key = tuple(entry_key)
                        q.matched_position = position
                        message = f"{list(entry_key)} d={_show(d)} speed={speeds[position]:g} → index {index}: new best"
                    else:
                        message = f"{list(entry_key)} d={_show(d)} → index {index} rejected: {self.can_solve(index, q).reason}"
                    self._entry_note(q, depth, path, shown, message, solution is not None)
                    shown += 1
        return best, best_distance

    def _equality(
        self, table: SortedTable, key: tuple[int, ...], path: str, depth: int, q: _Query
    ) -> tuple[MasterSolution | None, float]:
        keys = table.keys
        position = bisect.bisect_left(keys, key)
        if position >= len(keys) or keys[position] != key:
            q.note(depth + 1, "entry", path, False, f"no entry with key {list(key)}")
            return None, DBL_MAX
        index = table.indices[position]
        solution = self._transform(index, q)
        if solution is not None:
            q.matched_key = tuple(key)
            q.matched_position = position
        reason = "accepted" if solution is not None else f"rejected: {self.can_solve(index, q).reason}"
        q.note(
            depth + 1,
            "entry",
            path,
            solution is not None,
            f"exact key hit, index {index} {reason} (only this entry is tried)",
        )
        return solution, 0.0

    def _grid_based(
        self, table: SortedTable, key: tuple[int, ...], dist: Distance, path: str, depth: int, q: _Query
    ) -> tuple[MasterSolution | None, float]:
        found = self._grid_walk(table, key, dist, path, depth, q, 1)
        if not found:
            return None, DBL_MAX
        solution, distance, position = found[0]
        q.matched_key = tuple(table.keys[position])
        q.matched_position = position
        return solution, distance

    def _grid_walk(
        self, table: SortedTable, key: tuple[int, ...], dist: Distance, path: str, depth: int, q: _Query, count: int
    ) -> list[tuple[MasterSolution, float, int]]:
        """``findBestKeyMatch_GridBased(key, transform, count)`` (``PropertyMatching.hpp``).

        Cells are (M, N) groups of the sorted table. The walk starts at the first cell with
        M >= min(query M, largest M) and N >= min(query N, largest N in that M group); it moves to
        the next N cell ``baseN`` times (``baseN`` = smallest i with i(i+1)/2 >= count), then to the
        next M group with one step fewer: a triangle of cells. Each cell gives its first passing
        entry of least distance; a kernel already listed is not listed again. If the walk runs out
        short, entries before the last cell are tried backwards, every passing new kernel listed.
        """
        keys = table.keys
        n = len(keys)
        if n == 0:
            return []
        if self.runtime.grid_batch_first:
            q.note(depth + 1, "scan", path, None, f"batch looked up first ({self.runtime}): key {list(key)}")
            batch_first = batch_first_grid_walk(
                keys,
                key,
                lambda position: self._transform(table.indices[position], q),
                self.runtime.grid_distance,
                count,
            )
            for kernel, d, position in batch_first:
                q.note(depth + 1, "scan", path, True, f"{list(keys[position])} d={_show(d)} → index {kernel.index}")
            return batch_first
        walked = self.runtime.grid_key(key)
        if walked != key:
            q.note(depth + 1, "scan", path, None, f"batch folded into the key: {list(key)} → {list(walked)}")
        key = walked
        column_m = [k[0] for k in keys]
        column_n = [k[1] for k in keys]
        found: list[tuple[MasterSolution, float, int]] = []
        listed: set[int] = set()
        base_n = 1
        while base_n * (base_n + 1) // 2 < count:
            base_n += 1
        step_n = 0
        m_upper = n_lower = n_upper = 0
        while n_upper != n and len(found) < count:
            if step_n == base_n and base_n != 1:
                step_n = 1
                base_n -= 1
                start = m_upper  # the next M group
                if start == n:
                    # No further M group: every C++ lower_bound then returns end() (it reads one key
                    # past the end on the way, harmlessly), the cell is empty and the walk ends with
                    # N lower = end, so a backward scan starts from the last entry.
                    q.note(depth + 1, "scan", path, None, "no further M group")
                    n_lower = n_upper = n
                    break
            else:
                step_n += 1
                start = n_upper  # the next N cell
            m_lower = bisect.bisect_left(column_m, min(key[0], column_m[-1]), start, n)
            m_upper = bisect.bisect_left(column_m, min(column_m[m_lower] + 1, column_m[-1] + 1), m_lower, n)
            n_lower = bisect.bisect_left(column_n, min(key[1], column_n[m_upper - 1]), m_lower, m_upper)
            n_upper = bisect.bisect_left(
                column_n, min(column_n[n_lower] + 1, column_n[m_upper - 1] + 1), n_lower, m_upper
            )
            best: tuple[MasterSolution, float, int] | None = None
            best_distance = DBL_MAX
            for position in range(n_lower, n_upper):
                d = dist.distance(key, keys[position])
                if d < best_distance:
                    solution = self._transform(table.indices[position], q)
                    if solution is not None:
                        best, best_distance = (solution, d, position), d
            cell = f"grid cell M={column_m[n_lower]} N={column_n[n_lower]} ({n_upper - n_lower} entries)"
            if best is None:
                q.note(depth + 1, "scan", path, False, f"{cell}: no passing entry")
            elif best[0].index in listed:
                q.note(depth + 1, "scan", path, None, f"{cell}: best index {best[0].index} already listed")
            else:
                listed.add(best[0].index)
                found.append(best)
                shown = f"{list(keys[best[2]])} d={_show(best[1])}"
                q.note(depth + 1, "scan", path, True, f"{cell}: best {shown} → index {best[0].index}")
        if len(found) < count:
            q.note(depth + 1, "scan", path, None, "forward grid walk came up short; scanning backwards")
            for position in range(n_lower - 1, -1, -1):
                solution = self._transform(table.indices[position], q)
                if solution is None or solution.index in listed:
                    continue
                d = dist.distance(key, keys[position])
                listed.add(solution.index)
                found.append((solution, d, position))
                q.note(depth + 1, "entry", path, True, f"{list(keys[position])} → index {solution.index}")
                if len(found) == count:
                    break
        return found

    def _decision_tree(self, node: DecisionTreeNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        p = q.problem
        from tensilekit.selection.features import feature_key, predict  # numpy: only decision trees need it

        key = feature_key(list(node.features), p.m, p.n, p.batch, p.k)
        q.note(
            depth, "DecisionTree", path, None, f"{len(node.trees)} trees, float32 features {[float(x) for x in key]}"
        )
        route, q.route = q.route, None  # the trees' values are transforms, not the answer's route
        try:
            for number, entry in enumerate(node.trees):
                tree_path = f"{path}.trees[{number}]"
                saved = q.fitness
                solution = self._find(entry.value, f"{tree_path}.value", depth + 1, q)
                q.fitness = saved  # a transform does not write the caller's fitness
                if solution is None:
                    continue
                if predict(entry.tree, key):
                    q.note(
                        depth, "DecisionTree", tree_path, True, f"tree {number} predicts true → index {solution.index}"
                    )
                    if route is not None:
                        route.answered(node, "tree")
                    return solution
                q.note(depth, "DecisionTree", tree_path, False, f"tree {number} predicts false")
            q.note(depth, "DecisionTree", path, None, "no tree answered; using nullValue")
            saved = q.fitness
            solution = self._find(node.null_value, f"{path}.nullValue", depth + 1, q)
            q.fitness = saved
            if route is not None and solution is not None:
                route.answered(node, "null-value")
            return solution
        finally:
            q.route = route

    def _granularity(self, node: GranularitySelectionNode, path: str, depth: int, q: _Query) -> MasterSolution | None:
        key = list(q.problem.key_sizes)
        # exactMap is a std::map filled with insert(), which keeps the FIRST entry of a key
        # (Serialization/GranularitySelectionLibrary.hpp mapping, Tensile and tensilelite): a later
        # duplicate is never tried, even when the first one's kernel cannot solve the problem.
        hit = next((entry for entry in node.exact if list(entry.key) == key), None)
        if hit is not None:
            solution = self._transform(hit.value, q)
            if solution is not None:
                q.note(depth, "GranularitySelection", path, True, f"exact key hit → index {hit.value}")
                if q.route is not None:
                    q.route.answered(node, "granularity-exact")
                return solution
        from tensilekit.selection.granularity import projected_performance  # numpy: granularity rows only

        best: MasterSolution | None = None
        best_performance = 0.0
        for index in sorted(node.indices):
            solution = self._transform(index, q)
            if solution is None:
                continue
            performance = projected_performance(solution, q.problem, q.hardware)
            if best is None or performance > best_performance:
                best, best_performance = solution, performance
        q.note(
            depth, "GranularitySelection", path, best is not None, f"best projected performance {best_performance:g}"
        )
        if q.route is not None and best is not None:
            q.route.answered(node, "granularity")
        return best

    def _placeholder(self, prefix: str) -> MasterLibrary:
        library = self._placeholders.get(prefix)
        if library is None:
            if self._loader is None:
                raise SelectionError(f"the library is lazy (Placeholder {prefix!r}) but no loader was given")
            library = self._loader(prefix)
            self._placeholders[prefix] = library
            lazy = getattr(library, "_lazy_solution", None)
            if lazy is not None:
                self._lazy_sources.append(lazy)
            # the shard's own map keeps its last solution of an index; PlaceholderLibrary.hpp then
            # merges it with masterSolutions->insert, which keeps what is already there
            for solution in library.solutions_by_index().values():
                self._solutions.setdefault(solution.index, solution)
        return library

    # ------------------------------------------------------------------ top solutions (tensilelite)

    def _top(self, node: AnyNode, path: str, depth: int, q: _Query, count: int) -> list[MasterSolution]:
        if isinstance(node, (HardwareNode, ProblemNode)):
            found: list[MasterSolution] = []
            for _, row, row_path in self._holding_rows(node, path, depth, q):
                # ExactLogicLibrary::findTopSolutions: ask each row for what is still missing and
                # append it as it comes (a kernel two rows list appears twice).
                found.extend(self._top(row.library, f"{row_path}.library", depth + 1, q, count - len(found)))
                if len(found) == count:
                    break
            return found
        if isinstance(node, ProblemMapNode):
            if node.property.type != "OperationIdentifier":
                raise SelectionError(f"ProblemMap on property {node.property.type!r} is not supported")
            child = node.map.get(q.problem.op_id)
            if child is None:
                q.note(depth, "ProblemMap", path, False, f"no entry for {q.problem.op_id}")
                return []
            q.note(depth, "ProblemMap", path, True, f"operation {q.problem.op_id}")
            return self._top(child, child_path(f"{path}.map", q.problem.op_id), depth + 1, q, count)
        if isinstance(node, MatchingNode) and node.distance == "GridBased":
            table = self.sorted_table(node)
            key = tuple(property_value(prop, q.problem) for prop in node.properties)
            q.note(
                depth,
                "Matching",
                path,
                None,
                f"GridBased table, {len(table.keys)} entries, key {list(key)}, top {count}",
            )
            return [entry[0] for entry in self._grid_walk(table, key, DISTANCES["GridBased"], path, depth, q, count)]
        if isinstance(node, FreeSizeNode):
            q.note(depth, "FreeSize", path, False, "FreeSize pools list nothing in findTopSolutions")
            return []
        if isinstance(node, PredictionNode):
            raise self._prediction(node, path)
        if isinstance(node, PlaceholderNode):
            library = self._placeholder(node.value)
            return self._top(library.library, f"{node.value}:library", depth + 1, q, count)
        # Single leaves, Equality/Euclidean tables (findTopKeyMatch = the best match) and the rest:
        # at most the one kernel findBestSolution finds.
        solution = self._find(node, path, depth, q)
        return [] if solution is None else [solution]

    def _all_gemm_type(self, node: AnyNode, q: _Query, found: dict[int, MasterSolution]) -> None:
        if isinstance(node, HardwareNode):
            for row in node.rows:
                if evaluate(row.predicate, q.problem, q.hardware).passed:
                    self._all_gemm_type(row.library, q, found)
        elif isinstance(node, ProblemNode):
            # GEMM_TYPE_ONLY does not ask problem rows (their TypesEqual, F32XdlMathOp …): every
            # row is listed and the leaves check the gemm type (seen with the hipBLASLt oracle).
            for row in node.rows:
                if self.runtime.lists_row_of_gemm_type(row.predicate, q.problem, q.hardware):
                    self._all_gemm_type(row.library, q, found)
        elif isinstance(node, ProblemMapNode):
            child = node.map.get(q.problem.op_id)
            if child is not None:
                self._all_gemm_type(child, q, found)
        elif isinstance(node, SingleNode):
            self._gemm_type_leaf(node.index, q, found)
        elif isinstance(node, MatchingNode):
            for entry in node.table:
                self._gemm_type_leaf(entry.solution_index, q, found)
        elif isinstance(node, FreeSizeNode):
            for pooled in node.table:
                self._gemm_type_leaf(pooled.index, q, found)
        elif isinstance(node, PredictionNode):
            for index in node.table:
                self._gemm_type_leaf(index, q, found)
        elif isinstance(node, PlaceholderNode):
            self._all_gemm_type(self._placeholder(node.value).library, q, found)
        elif isinstance(node, DecisionTreeNode):
            for tree in node.trees:
                self._all_gemm_type(tree.value, q, found)
            self._all_gemm_type(node.null_value, q, found)
        elif isinstance(node, GranularitySelectionNode):
            for index in node.indices:
                self._gemm_type_leaf(index, q, found)
        else:
            raise SelectionError(f"cannot list solutions of node type {getattr(node, 'type', node)!r}")

    def _gemm_type_leaf(self, index: int, q: _Query, found: dict[int, MasterSolution]) -> None:
        # SingleSolutionLibrary::findAllSolutions(GEMM_TYPE_ONLY): hardware predicate and gemm type.
        if index < 0 or index in found:
            return
        solution = self.solution(index)
        if same_gemm_type(solution, q.problem) and evaluate(solution.hardware_predicate, q.problem, q.hardware).passed:
            found[index] = solution

    # ------------------------------------------------------------------ all solutions

    def _find_all(self, node: AnyNode, q: _Query, found: dict[int, MasterSolution]) -> None:
        if isinstance(node, (HardwareNode, ProblemNode)):
            for row in node.rows:
                if evaluate(row.predicate, q.problem, q.hardware).passed:
                    self._find_all(row.library, q, found)
        elif isinstance(node, ProblemMapNode):
            child = node.map.get(q.problem.op_id)
            if child is not None:
                self._find_all(child, q, found)
        elif isinstance(node, SingleNode):
            if node.index >= 0 and self.can_solve(node.index, q).passed:
                found[node.index] = self.solution(node.index)
        elif isinstance(node, MatchingNode):
            for entry in node.table:
                index = entry.solution_index
                if index >= 0 and self.can_solve(index, q).passed:
                    found[index] = self.solution(index)
        elif isinstance(node, DecisionTreeNode):
            # matchesInOrder: transform(value) of every tree; null results are skipped, nullValue is not part
            for tree in node.trees:
                saved = q.fitness
                solution = self._find(tree.value, "", 0, q)
                q.fitness = saved
                if solution is not None:
                    found[solution.index] = solution
        elif isinstance(node, GranularitySelectionNode):
            for index in node.indices:
                found[index] = self.solution(index)
        elif isinstance(node, PlaceholderNode):
            self._find_all(self._placeholder(node.value).library, q, found)
        elif isinstance(node, FreeSizeNode):
            return  # only non-default search types list the pool
        elif isinstance(node, PredictionNode):
            for index in node.table:  # every candidate the pool could rank first
                if self.can_solve(index, q).passed:
                    found[index] = self.solution(index)
        else:
            raise SelectionError(f"cannot list solutions of node type {getattr(node, 'type', node)!r}")


_GEMM_TYPE_FIELDS = (
    ("aType", "a_type"), ("bType", "b_type"), ("cType", "c_type"), ("dType", "d_type"),
    ("computeInputType", "compute_input_type"), ("computeType", "compute_type"),
)  # fmt: skip


def same_gemm_type(solution: MasterSolution, problem: ContractionProblem) -> bool:
    """tensilelite's ``isGemmTypeSame``: the solution's problem type has the query's transposes
    (its operation) and types."""
    problem_type = solution.problem_type or {}
    if problem_type.get("operationIdentifier") != problem.op_id:
        return False
    for field, attribute in _GEMM_TYPE_FIELDS:
        if field in problem_type and problem_type[field] != getattr(problem, attribute).value:
            return False
    return True


def as_contraction(problem: GemmProblem | ContractionProblem, *, rocblas_k0: bool = False) -> ContractionProblem:
    """Accept either problem form; ``rocblas_k0`` applies only to a :class:`GemmProblem`."""
    if isinstance(problem, ContractionProblem):
        return problem
    return contraction_problem(problem, rocblas_k0=rocblas_k0)


__all__ = [
    "DBL_MAX",
    "Candidate",
    "Loader",
    "ReferenceSelector",
    "Route",
    "Selection",
    "SortedTable",
    "TraceEvent",
    "as_contraction",
    "property_value",
    "row_label",
    "same_gemm_type",
]

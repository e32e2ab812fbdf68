"""The lint rules over one master library: each decided by the runtime's own selection code.

* ``dead-entry`` — the entry's kernel fails ``canSolve`` (task ∧ problem ∧ hardware predicates,
  compiled as ``select`` runs them) for every problem the entry's key stands for
  (:func:`tensilekit.lint.tables.entry_problems`), on a predicate the key decides. The runtime
  never answers the entry's own size with it. In an Equality table that is the entry's only use;
  a nearest-key table can still hand it sizes nearer to it than to any usable entry, where the
  kernel may pass (AMD's runtime does: rocBLAS_Full's GSU=3 entries at K=63 answer K=2493), so
  such entries still count as references for ``unreachable-kernel``.
* ``shadowed-entry`` — an entry that can never be the answer. In an ``Equality`` table every entry
  after the first of its key (the runtime tries only the fastest). In other tables an entry whose
  key and predicates equal those of a faster entry: the rightward scan always meets the faster one
  first and a tie needs a strictly higher speed. The one way such an entry still wins is the
  leftward scan stopping on it (``spec/selection.md`` (e) 1), for queries above it in the first
  key component only; those witness queries are walked with
  :class:`~tensilekit.selection.walk.ReferenceSelector` and an entry that wins one is not flagged.
  In a ``GridBased`` table (no speeds) a later entry of a key whose predicates equal an earlier
  one's: the cell scan keeps the first that can solve.
  Entries of equal speed and different kernels are left alone: the first in the runtime's
  ``std::sort`` order (:mod:`tensilekit.selection.stdsort`) answers the key and queries from below,
  the last queries from above (``validate``'s ``duplicate-key`` says which is which).
* ``unreachable-kernel`` — a kernel referenced by no live table entry, tree, ``Single``,
  ``FreeSize`` or ``GranularitySelection`` node: shadowed entries and dead entries of Equality
  tables are not live; entries of tables lint cannot model are.
* ``no-fallback`` — for a device and problem type, every leaf the runtime can reach (rows whose
  predicate holds, evaluated as the walk does, all of them as ``findAllSolutions`` unions them) is
  an ``Equality`` table: any size not listed finds no kernel.
* ``grid-outlier`` — a ``GridBased`` cell whose kernel's macro-tile area differs by more than a
  factor from that of each of its (at least two) grid neighbours at the same batch and K. The grid
  walk rounds M and N up, so the cell owns everything from the previous grid line to its own.
* ``size`` — solutions (and bytes, when a measure is given) per library and problem type; entries
  and kernels per table.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from tensilekit._arguments import require, require_callable
from tensilekit.errors import SelectionError, child_path
from tensilekit.lint.tables import (
    ProblemBase,
    ProblemBases,
    TableContext,
    conjuncts,
    entry_columns,
    entry_problems,
    key_fields,
    key_sizes,
    problem_base,
    problems_per_key,
    table_contexts,
    template_columns,
)
from tensilekit.model.checks import Finding, Severity, unmodelled_message, unmodelled_predicates
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
    SingleNode,
)
from tensilekit.model.solution import PREDICATE_FIELDS, MasterSolution, dump_sharing_predicates
from tensilekit.predicates.evaluate import Verdict, evaluate, evaluate_all
from tensilekit.selection.columns import ProblemColumns
from tensilekit.selection.fast import compile_library
from tensilekit.selection.problem import ContractionProblem, Hardware
from tensilekit.selection.served import solution_problem_fields
from tensilekit.selection.walk import Loader, SortedTable


class LintCode(str, enum.Enum):
    """The stable finding codes of ``tensilekit lint``, each with its severity."""

    DEAD_ENTRY = "dead-entry"
    UNREACHABLE_KERNEL = "unreachable-kernel"
    SHADOWED_ENTRY = "shadowed-entry"
    NO_FALLBACK = "no-fallback"
    GRID_OUTLIER = "grid-outlier"
    UNMODELLED_PREDICATE = "unmodelled-predicate"
    MSGPACK_BOOL_SCALE_AB = "msgpack-bool-scale-ab"
    SIZE = "size"

    @property
    def severity(self) -> Severity:
        return "info" if self is LintCode.SIZE else "warning"


@dataclasses.dataclass(frozen=True)
class LintOptions:
    """Settings of the rules.

    Attributes:
        grid_factor: ``grid-outlier`` flags a cell whose macro-tile area differs from every
            neighbour's by more than this factor.
        witness_span: how far above a duplicate entry's first key component the leftward-scan
            witnesses of ``shadowed-entry`` go.
        size: emit the ``size`` information findings.
    """

    grid_factor: float = 4.0
    witness_span: int = 64
    size: bool = True


class Locator(Protocol):
    """Where a finding about a table, an entry or a kernel points in the linted file."""

    def table(self, table_path: str) -> str: ...

    def entry(self, table_path: str, number: int) -> str: ...

    def solution(self, position: int) -> str: ...

    def solutions(self) -> str: ...


class MasterLocator:
    """Paths inside the master library itself."""

    def table(self, table_path: str) -> str:
        return table_path

    def entry(self, table_path: str, number: int) -> str:
        return f"{table_path}.table[{number}]"

    def solution(self, position: int) -> str:
        return f"solutions[{position}]"

    def solutions(self) -> str:
        return "solutions"


Measure = Callable[[Any], int]
"""Serialised size in bytes of a raw (plain dict/list) object, e.g. its msgpack length."""


def _finding(code: LintCode, message: str, path: str) -> Finding:
    return Finding(severity=code.severity, code=code.value, message=message, path=path)


def _predicates(solution: MasterSolution) -> tuple[Any, ...]:
    """The predicates ``canSolve`` evaluates, in its order: task, problem, hardware."""
    return (solution.task_predicate, solution.problem_predicate, solution.hardware_predicate)


def can_solve(solution: MasterSolution, problem: ContractionProblem, hardware: Hardware) -> Verdict:
    """``ContractionSolution::canSolve`` with the reference evaluator (it words the reason)."""
    return evaluate_all(_predicates(solution), problem, hardware, solution=solution)


@dataclasses.dataclass(frozen=True)
class EntryVerdict:
    """Whether a kernel can serve an entry's key: ``alive`` None when it cannot be decided."""

    alive: bool | None
    reason: str
    problem: ContractionProblem | None = None


_ALIVE = EntryVerdict(True, "canSolve holds")
"""What a table keeps of every entry whose kernel can solve one of its problems."""

#: Predicates decided by what a table entry fixes (its key and the table's problem type). A
#: kernel is dead at an entry only when one of these fails for every problem the entry stands
#: for; failing only on others (alpha/beta, strides, workspace, CU count, run-time flags) leaves
#: the entry undecided, never dead.
KEY_DECIDED = frozenset(
    {
        "FalsePred",
        "Free0SizeMultiple",
        "Free1SizeMultiple",
        "BatchSizeMultiple",
        "BatchSizeEqual",
        "BoundSizeMultiple",
        "SizeEqual",
        "SizeGreaterThan",
        "SizeLessThan",
        "SizeMultiple",
        "SizeInRange",
        "ProblemSizeEqual",
        "MaxProblemSizeGreaterThan",
        "LeadingFree0SizesGreaterOrEqual",
        "LeadingFree1SizesGreaterOrEqual",
        "GlobalSplitUCheckMinK",
        "OperationIdentifierEqual",
        "TypesEqual",
        "HighPrecisionAccumulate",
        "StridedBatched",
        "StochasticRounding",
        "F32XdlMathOp",
    }
)


def _failure(solution: MasterSolution, problems: list[ContractionProblem], hardware: Hardware) -> EntryVerdict:
    """Why a kernel that fails every one of ``problems`` does: dead, or undecided (see KEY_DECIDED)."""
    for part in _predicates(solution):
        for operand in conjuncts(part):
            if operand.type not in KEY_DECIDED:
                continue
            # an operand that holds for one problem cannot make the entry dead: the others are not asked
            first = evaluate(operand, problems[0], hardware, solution=solution)
            if first or any(evaluate(operand, problem, hardware, solution=solution) for problem in problems[1:]):
                continue
            return EntryVerdict(False, first.reason)
    reason = can_solve(solution, problems[0], hardware).reason
    return EntryVerdict(None, f"fails only on predicates the key leaves open ({reason})")


@dataclasses.dataclass
class _Table:
    context: TableContext
    sorted: SortedTable | None
    verdicts: dict[int, EntryVerdict]  # by position in node.table
    shadowed: dict[int, str]  # position in node.table -> why it can never win


_PROBLEM_FIELDS = tuple(field.name for field in dataclasses.fields(ContractionProblem))
# every field of a problem as one tuple, at C speed (a generator over the ~40 fields cost ~0.4 s of
# rocBLAS_Full's 62 000 shadowing witnesses)
_problem_values = operator.attrgetter(*_PROBLEM_FIELDS)
# problems a bulk pass puts in columns at once: a pass spreads type columns over its problems and
# keeps each predicate's answers, and what it frees stays in the process's heap (rocBLAS_Full's
# biggest tables in one pass each: lint's peak 815 -> 1 000 MB; 16 384 a pass: +20 MB, 4 096: +9
# MB, at the same speed)
_ROWS_PER_PASS = 4096
_PROBLEMS_KEPT = 20_000  # entries' problem lists memoized at once: repeats come within a table
# canSolve of a kernel signature (its atoms) asked this often is the compiled library's generated
# function; before, its atoms' own scalar functions in turn. A generated function costs ~0.4 ms
# to compile: rocBLAS_Full's 3 300 signatures took 1.5 s, and three in four are asked fewer than
# 32 times (those 15 000 questions cost ~0.1 s atom by atom)
_GENERATED_FROM = 32


class _MadeOnce:
    """The items of an iterator, made on first demand and replayed to every later reader (an
    error it raised is raised again at the same place)."""

    __slots__ = ("made", "source", "error")

    def __init__(self, source: Iterator[ContractionProblem]) -> None:
        self.made: list[ContractionProblem] = []
        self.source: Iterator[ContractionProblem] | None = source
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[ContractionProblem]:
        position = 0
        while True:
            if position < len(self.made):
                yield self.made[position]
                position += 1
                continue
            if self.source is None:
                if self.error is not None:
                    raise self.error
                return
            try:
                problem = next(self.source)
            except StopIteration:
                self.source = None
                continue
            except Exception as error:
                self.source, self.error = None, error
                raise
            self.made.append(problem)


_UNKNOWN: Any = object()


@dataclasses.dataclass(frozen=True)
class _Duplicate:
    """An entry with an earlier, faster entry of the same key and predicates: shadowed unless one
    of its leftward-scan witnesses picks its kernel (see :meth:`Linter._win_leftward`)."""

    table: _Table
    position: int  # in the sorted table
    solution: MasterSolution
    faster: int  # the sorted-table position of the earlier entry

    def message(self) -> str:
        """The finding, if no witness picks the kernel (worded only then: most are picked)."""
        ordered = self.table.sorted
        assert ordered is not None
        key, speed, faster = ordered.keys[self.position], ordered.speeds[self.position], self.faster
        return (
            f"entry {list(key)} → {_kernel(self.solution)} (speed {speed:g}) can never win: index "
            f"{ordered.indices[faster]} has the same key and predicates and a higher speed ({ordered.speeds[faster]:g})"
        )

    def witnesses(self, low: int, high: int) -> Iterator[tuple[int, ...]]:
        """The keys ``low`` to ``high`` steps above the entry's in its first component."""
        assert self.table.sorted is not None
        key = tuple(self.table.sorted.keys[self.position])
        return ((key[0] + step, *key[1:]) for step in range(low, high + 1))


def _kernel(solution: MasterSolution) -> str:
    """``index 606601229 (Cijk_Ailk_Bljk_SB_MT64x16x32_MI16x16x4x1_GSU1_WGM2_…)``: names are long,
    shortened as every command shortens them (:func:`tensilekit.model.labels.short_kernel_name`)."""
    from tensilekit.model.labels import short_kernel_name

    short = short_kernel_name(solution.name or "")
    return f"index {solution.index} ({short})" if short else f"index {solution.index}"


class Linter:
    """Runs the rules over one library; holds per-library caches only."""

    def __init__(
        self,
        library: MasterLibrary,
        *,
        options: LintOptions | None = None,
        locator: Locator | None = None,
        loader: Loader | None = None,
    ) -> None:
        self.library = library
        self.options = options or LintOptions()
        self.locator: Locator = locator or MasterLocator()
        self.loader = loader
        self.solutions = library.solutions_by_index()
        self.compiled = compile_library(library, loader=loader)
        self._problem_bases = ProblemBases()
        self._bases: dict[tuple[str, int], ProblemBase | SelectionError] = {}
        self._shared_bases: dict[tuple[str, int], ProblemBase | SelectionError] = {}
        self._chosen: dict[Hashable, tuple[bool, int | None]] = {}
        self._key_fields: dict[int, tuple[str, ...] | SelectionError] = {}
        self._problems: dict[tuple[int, tuple[int, ...]], _MadeOnce] = {}
        self._asked: dict[tuple[int, ...], int] = {}  # canSolve questions per signature so far
        self._key_decided_atoms: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._signature_of: dict[tuple[int, ...], int] = {}
        self._signatures: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._scalars: dict[tuple[int, ...], list[Callable[[ContractionProblem, Hardware], Any]] | None] = {}
        self._template_columns: dict[tuple[int, Hardware], tuple[Any, ProblemColumns]] = {}
        self.tables = [self._table(context) for context in table_contexts(library)]
        found = [(table, list(self._shadowed(table))) for table in self.tables]
        duplicates = [outcome for _, outcomes in found for _, outcome in outcomes if isinstance(outcome, _Duplicate)]
        winning = iter(self._win_leftward(duplicates))
        for table, outcomes in found:
            for number, outcome in outcomes:
                if isinstance(outcome, str):
                    table.shadowed[number] = outcome
                elif not next(winning):
                    table.shadowed[number] = outcome.message()

    def forget(self) -> None:
        """Drop the memos and the tracebacks of the errors they keep. Each kept error is raised
        again where it is asked for, and its traceback holds the frames it last passed, whose
        locals hold the error and this linter: cycles through the whole library that only the
        cyclic GC frees (rocBLAS_Full: 1.3 M objects walked in a 0.8-1.5 s collection right after
        lint). Without them the library dies by refcount when its caller lets go of it."""
        memos: list[dict[Any, Any]] = [self._bases, self._shared_bases, self._key_fields, self._problems]
        for memo in memos:
            for value in memo.values():
                error = value.error if isinstance(value, _MadeOnce) else value
                if isinstance(error, BaseException):
                    error.__traceback__ = None
            memo.clear()
        self._problem_bases = ProblemBases()
        self._chosen.clear()
        self._asked.clear()
        self._scalars.clear()
        self._template_columns.clear()
        self._key_decided_atoms.clear()
        self._signature_of.clear()
        self._signatures = np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------------ entries

    def _base(self, context: TableContext, solution: MasterSolution) -> ProblemBase:
        memo_key = (context.path, solution.index)
        base = self._bases.get(memo_key)
        if base is None:
            # a base depends on the table and the kernel's problem predicate only, one interned
            # (shared) model for the thousands of kernels of a big master that spell it alike;
            # the library holds every predicate while it is linted, so ids are not reused
            shared_key = (context.path, id(solution.problem_predicate))
            base = self._shared_bases.get(shared_key)
            if base is None:
                try:
                    base = self._problem_bases.of(context, solution)
                except SelectionError as error:
                    base = error
                self._shared_bases[shared_key] = base
            self._bases[memo_key] = base
        if isinstance(base, SelectionError):
            raise base
        return base

    def _entry_problems(
        self, base: ProblemBase, node: MatchingNode, key: Sequence[int], fields: tuple[str, ...]
    ) -> Iterator[ContractionProblem]:
        """:func:`entry_problems` of ``key`` in ``node`` (``fields``: its :func:`key_fields`), each
        problem built once: the kernels of a table share bases (one per problem predicate), and
        duplicate keys and shadowing witnesses ask again for the same. A base belongs to one table
        (its key fields), so the key itself names the sizes."""
        memo_key = (id(base), tuple(key))  # bases live in _shared_bases: ids not reused
        problems = self._problems.get(memo_key)
        if problems is None:
            sizes = key_sizes(node, key, fields)
            if len(self._problems) >= _PROBLEMS_KEPT:
                self._problems.clear()
            problems = self._problems[memo_key] = _MadeOnce(entry_problems(base, sizes))
        return iter(problems)

    def decide(
        self, context: TableContext, solution: MasterSolution, key: Sequence[int], *, remember: bool = True
    ) -> EntryVerdict:
        """Does ``solution`` pass ``canSolve`` for some problem the table key ``key`` stands for?

        The compiled ``canSolve`` of :func:`~tensilekit.selection.compile_library` (what ``select``
        runs) decides; the reference evaluator words the reason of a failure. ``remember``: keep
        the key's problems for later askers (the shadowing witnesses ask again and again for the
        same); the table pass asks for most keys once, where keeping them cost more than it saved
        (rocBLAS_Full: ~0.35 s).
        """
        try:
            base = self._base(context, solution)
            fields = self._fields_of(context.node)
            if isinstance(fields, SelectionError):
                key_sizes(context.node, key)  # its length error first, as when it reads the fields
                raise fields
            if len(key) != len(fields):
                key_sizes(context.node, key, fields)  # raises the length error
            sid = self.compiled.sid_of(solution.index)
            problems = []
            source = (
                self._entry_problems(base, context.node, key, fields)
                if remember
                else entry_problems(base, key_sizes(context.node, key, fields))
            )
            for problem in source:
                if self._can_solve(sid, problem, context.hardware):
                    return EntryVerdict(True, "canSolve holds", problem)
                problems.append(problem)
            return _failure(solution, problems, context.hardware)
        except SelectionError as error:
            return EntryVerdict(None, str(error))

    def _fields_of(self, node: MatchingNode) -> tuple[str, ...] | SelectionError:
        """:func:`key_fields` of ``node``, or the error it raises."""
        fields = self._key_fields.get(id(node))
        if fields is None:
            try:
                fields = key_fields(node)
            except SelectionError as error:
                fields = error
            self._key_fields[id(node)] = fields  # the library holds its nodes: ids stay
        return fields

    def _first_passes(
        self,
        context: TableContext,
        base: ProblemBase,
        fields: tuple[str, ...],
        keys: list[Any],
        sids: list[int],
        *,
        dead: bool = False,
    ) -> tuple[ProblemColumns, npt.NDArray[np.int64]] | None:
        """The :func:`entry_columns` of ``keys`` and, for each key (with kernel ``sids[i]``), the
        position among its :func:`entry_problems` of the first that kernel's compiled ``canSolve``
        passes (-1: none; with ``dead``, -2 where :meth:`decide` finds the kernel dead: one of
        the predicates of :data:`KEY_DECIDED` fails for every problem of the key). One array pass
        per predicate over every problem of the keys, not a problem and a ``canSolve`` per key;
        None when the keys cannot be put in columns or a vector predicate fails (ask
        :meth:`decide`, which answers alike, key by key)."""
        hardware = context.hardware
        memo_key = (id(base.templates), hardware)
        known = self._template_columns.get(memo_key)
        if known is None or known[0] is not base.templates:
            known = (base.templates, template_columns(base, hardware))
            self._template_columns[memo_key] = known
        columns = entry_columns(base, fields, keys, known[1], hardware)
        if columns is None:
            return None
        per_key = problems_per_key(base, fields)
        passed = np.zeros(columns.size, dtype=bool)
        # the keys of kernels with one signature (the same compiled canSolve) asked together
        sid_array = np.array(sids, dtype=np.int64)
        signatures = self._signature_numbers()[sid_array]
        order = np.argsort(signatures, kind="stable")
        by_signature = np.split(order, np.flatnonzero(np.diff(signatures[order])) + 1)
        vectors: dict[int, npt.NDArray[np.bool_]] = {}
        offsets = np.arange(per_key, dtype=np.int64)
        try:
            with np.errstate(all="ignore"):  # size_t arithmetic wraps in the vector forms, as in select_batch
                failing = np.zeros(len(keys), dtype=bool)  # a KEY_DECIDED predicate fails all of a key's problems
                for positions in by_signature:
                    sid = sids[positions[0]]
                    rows = (positions[:, None] * per_key + offsets).reshape(-1)
                    passed[rows] = self.compiled.solution_pass(sid, columns, vectors, rows)
                    for atom_id in self._key_decided(sid) if dead else ():
                        vector = vectors.get(atom_id)
                        if vector is None:  # constant: never asked of the columns
                            failing[positions] |= self.compiled.atoms.atoms[atom_id].constant is False
                        else:
                            failing[positions] |= ~vector[rows].reshape(len(positions), per_key).any(axis=1)
        except (SelectionError, ArithmeticError, ValueError, TypeError):
            return None
        grid = passed.reshape(len(keys), per_key)
        first: npt.NDArray[np.int64] = np.where(grid.any(axis=1), grid.argmax(axis=1), np.where(failing, -2, -1))
        return columns, first

    def _signature_numbers(self) -> npt.NDArray[np.int64]:
        """A number per solution id of the compiled library, one per signature (its atoms: the
        same compiled ``canSolve``); extended as the library registers solutions (lazy shards)."""
        numbers = self._signatures
        solution_atoms = self.compiled.solution_atoms
        if len(numbers) != len(solution_atoms):
            known = self._signature_of
            listed = [known.setdefault(atoms, len(known)) for atoms in solution_atoms]
            numbers = self._signatures = np.array(listed, dtype=np.int64)
        return numbers

    def _key_decided(self, sid: int) -> tuple[int, ...]:
        """The atoms of solution ``sid``'s ``canSolve`` whose predicate is of :data:`KEY_DECIDED`
        (the same for every solution of its signature: an atom is one predicate)."""
        atoms = self.compiled.solution_atoms[sid]
        known = self._key_decided_atoms.get(atoms)
        if known is None:
            solution = self.compiled.solutions[sid]
            intern = self.compiled.atoms.intern  # the atom each operand was compiled to
            known = tuple(
                dict.fromkeys(
                    intern(operand, solution)
                    for part in _predicates(solution)
                    for operand in conjuncts(part)
                    if operand.type in KEY_DECIDED
                )
            )
            self._key_decided_atoms[atoms] = known
        return known

    def _alive_in_bulk(
        self, context: TableContext, members: list[tuple[int, tuple[int, ...]]]
    ) -> set[tuple[int, tuple[int, ...]]]:
        """The (kernel index, key) of ``members`` whose kernel passes ``canSolve`` for a problem
        of the key (:meth:`decide` says ``alive``); the others (dead, undecided, or not put in
        columns) are for :meth:`decide`."""
        alive: set[tuple[int, tuple[int, ...]]] = set()
        for part, _, first, _ in self._passes_in_bulk(context, members):
            alive.update(memo_key for memo_key, at in zip(part, first.tolist(), strict=True) if at >= 0)
        return alive

    def _passes_in_bulk(
        self, context: TableContext, members: list[tuple[int, tuple[int, ...]]], *, dead: bool = False
    ) -> Iterator[tuple[list[tuple[int, tuple[int, ...]]], ProblemColumns, npt.NDArray[np.int64], int]]:
        """:meth:`_first_passes` (and its ``dead``) of the (kernel index, key) ``members``, a
        kernel base at a time, at most :data:`_ROWS_PER_PASS` problems a pass: (the members of a
        pass, their problems as columns, the first problem each kernel passes, problems per key).
        Members that cannot be put in columns (no base, a key of the wrong length, a size too
        large) are left out."""
        fields = self._fields_of(context.node)
        if isinstance(fields, SelectionError):
            return
        # keys whose bases share templates and batches share their problems: one pass for them
        groups: dict[tuple[int, tuple[int, ...]], tuple[ProblemBase, list[tuple[int, tuple[int, ...]]], list[int]]] = {}
        places: dict[int, Any] = {}  # kernel index -> (its group, its id), None when it has no base
        for memo_key in members:
            if len(memo_key[1]) != len(fields):
                continue
            place = places.get(memo_key[0], _UNKNOWN)
            if place is _UNKNOWN:
                try:
                    base = self._base(context, self.solutions[memo_key[0]])
                    sid = self.compiled.sid_of(memo_key[0])
                except SelectionError:
                    place = None
                else:
                    place = (groups.setdefault((id(base.templates), base.batches), (base, [], [])), sid)
                places[memo_key[0]] = place
            if place is not None:
                place[0][1].append(memo_key)
                place[0][2].append(place[1])
        for base, memo_keys, sids in groups.values():
            per_key = problems_per_key(base, fields)
            chunk = max(1, _ROWS_PER_PASS // per_key)
            for start in range(0, len(memo_keys), chunk):
                part = memo_keys[start : start + chunk]
                keys = [key for _, key in part]
                found = self._first_passes(context, base, fields, keys, sids[start : start + chunk], dead=dead)
                if found is not None:
                    yield part, found[0], found[1], per_key

    def _can_solve(self, sid: int, problem: ContractionProblem, hardware: Hardware) -> bool:
        """The compiled library's ``canSolve`` of solution ``sid``: its generated function once the
        signature is asked :data:`_GENERATED_FROM` times, else the same atoms' scalar functions in
        the same order, stopping at the first that fails (the generated function's own steps)."""
        atoms = self.compiled.solution_atoms[sid]
        asked = self._asked.get(atoms, 0)
        if asked >= _GENERATED_FROM:
            return self.compiled.can_solve(sid, problem, hardware)
        self._asked[atoms] = asked + 1
        if atoms not in self._scalars:
            live = [atom for atom in (self.compiled.atoms.atoms[a] for a in atoms) if atom.constant is not True]
            never = any(atom.constant is False for atom in live)
            self._scalars[atoms] = None if never else [atom.scalar for atom in live]
        scalars = self._scalars[atoms]
        if scalars is None:
            return False
        for scalar in scalars:
            if not scalar(problem, hardware):
                return False
        return True

    # ------------------------------------------------------------------ per table

    def _table(self, context: TableContext) -> _Table:
        try:
            # the compiled library's sort of the table (both runtimes sort alike), which its own
            # queries (the shadowing witnesses) then reuse instead of sorting the table again
            ordered: SortedTable | None = self.compiled.reference.sorted_table(context.node)
        except SelectionError:
            ordered = None  # key lengths disagree with the properties: validate reports it
        verdicts: dict[int, EntryVerdict] = {}
        memo: dict[tuple[int, tuple[int, ...]], EntryVerdict] = {}
        if ordered is not None:
            solutions = self.solutions
            # each entry's (kernel index, key): its verdict's memo key (None: a missing kernel,
            # validate's finding)
            entry_keys = [(entry.solution_index, tuple(entry.key)) for entry in context.node.table]
            members = list(dict.fromkeys(memo_key for memo_key in entry_keys if memo_key[0] in solutions))
            for memo_key in self._alive_in_bulk(context, members):
                memo[memo_key] = _ALIVE
            for number, memo_key in enumerate(entry_keys):
                verdict = memo.get(memo_key)
                if verdict is None:
                    solution = solutions.get(memo_key[0])
                    if solution is None:
                        continue
                    verdict = self.decide(context, solution, memo_key[1], remember=False)
                    # kept for the whole lint: without its problem (rocBLAS_Full: 200 000 of them)
                    verdict = memo[memo_key] = _ALIVE if verdict.alive else verdict
                verdicts[number] = verdict
        return _Table(context, ordered, verdicts, {})

    def dead_entries(self) -> Iterator[Finding]:
        """``dead-entry`` findings, table by table in file order."""
        for table in self.tables:
            node = table.context.node
            for number, verdict in sorted(table.verdicts.items()):
                if verdict.alive is False:
                    entry = node.table[number]
                    solution = self.solutions[entry.solution_index]
                    if node.distance == "Equality":
                        effect = "the entry is never used (an Equality table answers only its exact key)"
                    else:
                        effect = (
                            "the entry never answers its own size (it can still answer other sizes that are "
                            "nearer to it than to any usable entry)"
                        )
                    yield _finding(
                        LintCode.DEAD_ENTRY,
                        f"entry {list(entry.key)} → {_kernel(solution)}: at the entry's key the kernel fails "
                        f"{verdict.reason}; {effect}",
                        self.locator.entry(table.context.path, number),
                    )

    def shadowed_entries(self) -> Iterator[Finding]:
        """``shadowed-entry`` findings, table by table in sorted-table order."""
        for table in self.tables:
            for number, message in table.shadowed.items():
                yield _finding(LintCode.SHADOWED_ENTRY, message, self.locator.entry(table.context.path, number))

    def _shadowed(self, table: _Table) -> Iterator[tuple[int, str | _Duplicate]]:
        """(position in the table, why) of every entry that can never win, or the duplicate that
        cannot win unless a witness of :meth:`_win_leftward` picks its kernel."""
        ordered = table.sorted
        if ordered is None:
            return
        node = table.context.node
        equality = node.distance == "Equality"
        start = 0
        while start < len(ordered.keys):
            end = start
            while end < len(ordered.keys) and ordered.keys[end] == ordered.keys[start]:
                end += 1
            group = list(range(start, end))
            start = end
            if len(group) < 2:
                continue
            for later_rank, position in enumerate(group[1:], start=1):
                message = self._shadowing(table, group[:later_rank], position, equality)
                if message is not None:
                    yield ordered.order[position], message

    def _shadowing(self, table: _Table, earlier: list[int], position: int, equality: bool) -> str | _Duplicate | None:
        ordered = table.sorted
        assert ordered is not None
        key, speed, index = ordered.keys[position], ordered.speeds[position], ordered.indices[position]
        solution = self.solutions.get(index)
        if solution is None:
            return None
        first = earlier[0]
        if equality:
            tie = " (equal speed: first in the runtime's std::sort order)" if ordered.speeds[first] == speed else ""
            return (
                f"entry {list(key)} → {_kernel(solution)} (speed {speed:g}) is never tried: an Equality table "
                f"tries only the first entry of a key, index {ordered.indices[first]} (speed "
                f"{ordered.speeds[first]:g}){tie}"
            )
        for other in earlier:
            other_index = ordered.indices[other]
            other_solution = self.solutions.get(other_index)
            if other_solution is None:
                continue
            if other_index == index:
                return (
                    f"entry {list(key)} → {_kernel(solution)} repeats an earlier entry of the same key and kernel "
                    f"(speed {ordered.speeds[other]:g}); it changes no answer"
                )
            if table.context.node.distance == "GridBased" and _predicates(other_solution) == _predicates(solution):
                # findBestKeyMatch_GridBased scans a cell's entries in sorted order keeping the best by
                # strict <: of one key the first whose kernel can solve answers, and this one can
                # solve only where the earlier one can
                return (
                    f"entry {list(key)} → {_kernel(solution)} can never win: a GridBased cell answers with the "
                    f"first entry of a key (the runtime's std::sort order) whose kernel can solve the problem, and "
                    f"index {other_index} comes first with the same predicates"
                )
            if ordered.speeds[other] > speed and _predicates(other_solution) == _predicates(solution):
                return _Duplicate(table, position, solution, other)
        return None

    def _win_leftward(self, duplicates: list[_Duplicate]) -> list[bool]:
        """Whether a query above each duplicate entry in the first key component only (its
        witnesses, 1 to ``witness_span`` steps up, nearest first) selects its kernel.

        A witness is the first problem of its key the kernel passes (:meth:`decide`); it decides
        when the kernel cannot be modelled there (the entry may win), or passes and the selection
        refuses the witness or picks the kernel. The witnesses of every duplicate are asked a
        round of steps at a time (1, 2-8, 9-64, ...: most duplicates are decided by their first),
        each round's canSolve in the table pass's array passes (a dead witness found there too)
        and its selections in one batch of the compiled library per pass, not a decide and a
        selection per witness (rocBLAS_Full: 3 469 duplicates; 78 000 witnesses, 16 000 of them
        dead, 43 000 selections; 2.9 -> 1.2 s CPU, 0.3 s of it SciPy's import for the k-d tree).
        """
        answers: list[bool | None] = [None] * len(duplicates)
        low = 1
        while low <= self.options.witness_span:
            high = min(self.options.witness_span, max(1, 8 * (low - 1)))
            asked = [number for number, answer in enumerate(answers) if answer is None]
            if not asked:
                break
            witnesses: dict[int, tuple[TableContext, list[tuple[int, tuple[int, ...]]]]] = {}
            for number in asked:
                duplicate = duplicates[number]
                members = witnesses.setdefault(id(duplicate.table), (duplicate.table.context, []))[1]
                members += ((duplicate.solution.index, key) for key in duplicate.witnesses(low, high))
            chosen: dict[tuple[int, int, tuple[int, ...]], tuple[bool, int | None] | None] = {}
            for table_id, (context, members) in witnesses.items():
                for memo_key, found_answer in self._chosen_in_bulk(context, list(dict.fromkeys(members))).items():
                    chosen[(table_id, *memo_key)] = found_answer
            for number in asked:
                duplicate = duplicates[number]
                context, index = duplicate.table.context, duplicate.solution.index
                for key in duplicate.witnesses(low, high):
                    answer = chosen.get((id(duplicate.table), index, key), _UNKNOWN)
                    if answer is None:
                        continue  # the kernel is dead at the witness
                    if answer is _UNKNOWN:  # not decided in bulk: alone
                        verdict = self.decide(context, duplicate.solution, key)
                        if verdict.alive is None:
                            answers[number] = True  # cannot model the witness: do not claim it never wins
                            break
                        if not verdict.alive or verdict.problem is None:
                            continue
                        answer = self._chosen_index(verdict.problem, context.hardware)
                    refused, picked = answer
                    if refused or picked == index:
                        answers[number] = True
                        break
            low = high + 1
        return [answer is True for answer in answers]

    def _chosen_in_bulk(
        self, context: TableContext, members: list[tuple[int, tuple[int, ...]]]
    ) -> dict[tuple[int, tuple[int, ...]], tuple[bool, int | None] | None]:
        """For the (kernel index, key) ``members`` (by :meth:`_passes_in_bulk`): the
        :meth:`_chosen_index` of the first problem of the key the kernel passes, or None where
        :meth:`decide` finds it dead there; the others (undecided, or not put in columns) are left
        out, for :meth:`decide`."""
        chosen: dict[tuple[int, tuple[int, ...]], tuple[bool, int | None] | None] = {}
        for part, columns, first, per_key in self._passes_in_bulk(context, members, dead=True):
            chosen.update((part[at], None) for at in np.flatnonzero(first == -2).tolist())
            passing = np.flatnonzero(first >= 0).tolist()
            if not passing:
                continue
            firsts = first.tolist()
            # the kernels of one key that pass its same problem (a pass's kernels share their
            # problems) ask one selection (rocBLAS_Full: 58 500 witnesses, 43 000 problems)
            asked = np.array([(*part[at][1], firsts[at]) for at in passing], dtype=np.int64)
            _, once, again = np.unique(asked, axis=0, return_index=True, return_inverse=True)
            witnesses = columns.take(np.array(passing, dtype=np.int64)[once] * per_key + asked[once, -1])
            try:
                sids, _ = self.compiled.find_batch(witnesses)
            except SelectionError:  # one witness cannot be evaluated: each as the selection answers it
                answers = [self._chosen_index(witnesses.row(row)[0], context.hardware) for row in range(len(once))]
            else:
                answers = [
                    (False, None if index < 0 else index) for index in self.compiled.index_table()[sids].tolist()
                ]
            chosen.update(
                zip((part[at] for at in passing), map(answers.__getitem__, again.reshape(-1).tolist()), strict=True)
            )
        return chosen

    def _chosen_index(self, problem: ContractionProblem, hardware: Hardware) -> tuple[bool, int | None]:
        """(selection refuses ``problem``, index of the kernel it picks or None). Memoized: the
        entries of one key share their witnesses, so the same problems come back once per entry."""
        try:
            memo_key: Hashable = (id(hardware), _problem_values(problem))
            hash(memo_key)
        except TypeError:
            memo_key = None
        if memo_key is not None and memo_key in self._chosen:
            return self._chosen[memo_key]
        try:
            found, _ = self.compiled.find(problem, hardware)
            chosen = (False, None if found is None else found.index)
        except SelectionError:
            chosen = (True, None)
        if memo_key is not None:
            self._chosen[memo_key] = chosen
        return chosen

    # ------------------------------------------------------------------ kernels

    def unreachable_kernels(self) -> Iterator[Finding]:
        """``unreachable-kernel`` findings."""
        live: set[int] = set()
        dead_refs: defaultdict[int, int] = defaultdict(int)
        for table in self.tables:
            # a dead entry of a nearest-key table still answers the sizes nearer to it than to any
            # usable entry (where its kernel may pass): only an Equality table's dead entry is inert
            exact = table.context.node.distance == "Equality"
            for number, entry in enumerate(table.context.node.table):
                verdict = table.verdicts.get(number)
                usable = verdict is None or verdict.alive is not False or not exact
                if usable and number not in table.shadowed:
                    live.add(entry.solution_index)
                else:
                    dead_refs[entry.solution_index] += 1
        for _, node in self.library.iter_nodes():
            live.update(_other_references(node))
        for number, solution in enumerate(self.library.solutions):
            if solution.index in live:
                continue
            refs = dead_refs.get(solution.index, 0)
            why = (
                f"referenced only by {refs} dead or shadowed entr{'y' if refs == 1 else 'ies'}"
                if refs
                else "referenced by no table entry or tree"
            )
            yield _finding(
                LintCode.UNREACHABLE_KERNEL,
                f"kernel {_kernel(solution)} can never be selected: {why}",
                self.locator.solution(number),
            )

    # ------------------------------------------------------------------ fallback

    def no_fallback(self) -> Iterator[Finding]:
        """``no-fallback`` findings, one per device and set of reachable Equality tables."""
        if not isinstance(self.library.library, HardwareNode):
            return  # a lazy placeholder file: its siblings (other CU rows) are not visible here
        reported: set[tuple[Hardware, frozenset[str]]] = set()
        for table in self.tables:
            context = table.context
            if context.node.distance != "Equality":
                continue
            probe = self._probe(table)
            if probe is None:
                continue
            try:
                leaves = list(self._leaves(self.library.library, "library", probe, context.hardware))
            except SelectionError:
                continue
            if not leaves or not all(_is_equality(node) for _, node in leaves):
                continue
            signature = (context.hardware, frozenset(path for path, _ in leaves))
            if signature in reported:
                continue
            reported.add(signature)
            keys = sum(len(node.table) for _, node in leaves if isinstance(node, MatchingNode))
            yield _finding(
                LintCode.NO_FALLBACK,
                f"{_problem_label(probe)} on {_device_label(context.hardware)} is served only by Equality "
                f"tables ({len(leaves)} table(s), {keys} keys): any size not listed finds no kernel",
                self.locator.table(context.path),
            )

    def _probe(self, table: _Table) -> ContractionProblem | None:
        node = table.context.node
        for entry in node.table:
            solution = self.solutions.get(entry.solution_index)
            if solution is None:
                continue
            try:
                base = problem_base(table.context, solution)
                return next(entry_problems(base, key_sizes(node, entry.key)))
            except SelectionError:
                return None
        return None

    def _leaves(
        self, node: AnyNode, path: str, problem: ContractionProblem, hardware: Hardware
    ) -> Iterator[tuple[str, AnyNode]]:
        """Every leaf the runtime may search for ``problem``: all rows whose predicate holds."""
        if isinstance(node, (HardwareNode, ProblemNode)):
            for number, row in enumerate(node.rows):
                if evaluate(row.predicate, problem, hardware).passed:
                    yield from self._leaves(row.library, f"{path}.rows[{number}].library", problem, hardware)
        elif isinstance(node, ProblemMapNode):
            child = node.map.get(problem.op_id)
            if child is not None:
                yield from self._leaves(child, child_path(f"{path}.map", problem.op_id), problem, hardware)
        elif isinstance(node, PlaceholderNode) and self.loader is not None:
            loaded = self.compiled.reference.load_placeholder(node.value)
            yield from self._leaves(loaded.library, f"{node.value}:library", problem, hardware)
        else:
            yield path, node

    # ------------------------------------------------------------------ grids

    def grid_outliers(self) -> Iterator[Finding]:
        """``grid-outlier`` findings of every GridBased table."""
        for table in self.tables:
            if table.context.node.distance == "GridBased" and table.sorted is not None:
                yield from self._grid(table)

    def _grid(self, table: _Table) -> Iterator[Finding]:
        ordered = table.sorted
        assert ordered is not None
        node = table.context.node
        names = [prop.type for prop in node.properties]
        if "FreeSizeA" not in names or "FreeSizeB" not in names:
            return
        m_at, n_at = names.index("FreeSizeA"), names.index("FreeSizeB")
        # the first entry of each key is the one the grid walk meets first (strict < keeps it)
        cells: dict[tuple[int, ...], dict[tuple[int, int], int]] = defaultdict(dict)
        for position, key in enumerate(ordered.keys):
            rest = tuple(value for axis, value in enumerate(key) if axis not in (m_at, n_at))
            cells[rest].setdefault((key[m_at], key[n_at]), position)
        factor = self.options.grid_factor
        rest_names = [_AXIS_LABELS.get(name, name) for axis, name in enumerate(names) if axis not in (m_at, n_at)]
        for rest, grid in cells.items():
            ms = sorted({m for m, _ in grid})
            ns = sorted({n for _, n in grid})
            for (m, n), position in grid.items():
                area = self._area(ordered.indices[position])
                if area is None:
                    continue
                i, j = ms.index(m), ns.index(n)
                around = [
                    grid.get(cell)
                    for cell in (
                        (ms[i - 1], n) if i > 0 else None,
                        (ms[i + 1], n) if i + 1 < len(ms) else None,
                        (m, ns[j - 1]) if j > 0 else None,
                        (m, ns[j + 1]) if j + 1 < len(ns) else None,
                    )
                    if cell is not None
                ]
                areas = [self._area(ordered.indices[p]) for p in around if p is not None]
                known = [a for a in areas if a]
                if len(known) < 2 or not all(max(area, a) > factor * min(area, a) for a in known):
                    continue
                solution = self.solutions[ordered.indices[position]]
                low_m = ms[i - 1] if i > 0 else 0
                low_n = ns[j - 1] if j > 0 else 0
                yield _finding(
                    LintCode.GRID_OUTLIER,
                    f"grid cell M={m} N={n}{_rest_label(rest_names, rest)} → {_kernel(solution)} has macro tile "
                    f"{_tile(solution)} (area {area}), more than {factor:g}x off each of its {len(known)} "
                    f"neighbours (areas {sorted(known)}); it owns M in ({low_m}, {m}], N in ({low_n}, {n}]",
                    self.locator.entry(table.context.path, ordered.order[position]),
                )

    def _area(self, index: int) -> int | None:
        solution = self.solutions.get(index)
        tile = solution.size_mapping.macro_tile if solution and solution.size_mapping else None
        if not tile or len(tile) < 2:
            return None
        return int(tile[0]) * int(tile[1])

    # ------------------------------------------------------------------ size

    def sizes(self, measure: Measure | None, file_bytes: int | None) -> Iterator[Finding]:
        """``size`` findings: the library, each problem type, each table."""
        entries = sum(len(table.context.node.table) for table in self.tables)
        text = f"{len(self.library.solutions)} solutions, {len(self.tables)} tables, {entries} table entries"
        if file_bytes is not None:
            text += f", {file_bytes} bytes"
        yield _finding(LintCode.SIZE, text, "")
        by_type: dict[str, list[MasterSolution]] = defaultdict(list)
        # a label per problem predicate: kernels share them (rocBLAS_Full: 21 288 kernels, 3 300
        # predicates), each kept beside its label so that its id stays its own
        labels: dict[int, tuple[Any, str]] = {}
        predicates: dict[tuple[str, int], tuple[Any, Any]] = {}
        for solution in self.library.solutions:
            known = labels.get(id(solution.problem_predicate))
            if known is None or known[0] is not solution.problem_predicate:
                known = (solution.problem_predicate, _type_label(solution_problem_fields(solution)))
                labels[id(solution.problem_predicate)] = known
            by_type[known[1]].append(solution)
        for label, members in by_type.items():
            text = f"problem type {label}: {len(members)} solutions"
            if measure is not None:
                raw = [_solution_record(solution, predicates) for solution in members]
                text += f", {measure(raw)} bytes of solution records"
            yield _finding(LintCode.SIZE, text, self.locator.solutions())
        for table in self.tables:
            node = table.context.node
            kernels = len({entry.solution_index for entry in node.table})
            text = f"{node.distance} table: {len(node.table)} entries, {kernels} kernels"
            undecided = sum(verdict.alive is None for verdict in table.verdicts.values())
            if undecided or table.sorted is None:
                # entries lint could not judge (outside the GEMM model, or failing only on open predicates)
                text += f", {undecided if table.sorted is not None else len(node.table)} entries not judged"
            yield _finding(LintCode.SIZE, text, self.locator.table(table.context.path))


_FIELD_KEYS = [field.alias or name for name, field in MasterSolution.model_fields.items()]
# the keys a dump writes before the predicates, and the predicates' (pydantic dumps fields in
# their order, extras last)
_FIELDS_BEFORE_PREDICATES = tuple(_FIELD_KEYS[: list(MasterSolution.model_fields).index(PREDICATE_FIELDS[0])])
_PREDICATE_KEYS = tuple(MasterSolution.model_fields[name].alias or name for name in PREDICATE_FIELDS)


def _solution_record(solution: MasterSolution, predicates: dict[tuple[str, int], tuple[Any, Any]]) -> dict[str, Any]:
    """``solution.model_dump(by_alias=True, exclude_unset=True)``, keys in its order, each
    predicate serialised once per predicate object (:func:`dump_sharing_predicates`; the records
    are dumped only to be measured, so sharing the predicates' plain values between them is safe)."""
    rest = dump_sharing_predicates(solution, predicates)
    record = {key: rest.pop(key) for key in _FIELDS_BEFORE_PREDICATES if key in rest}
    record.update((key, rest.pop(key)) for key in _PREDICATE_KEYS if key in rest)
    record.update(rest)
    return record


def _other_references(node: AnyNode) -> Iterator[int]:
    """Kernels a node other than a ``Matching`` table can return (counted as reachable)."""
    if isinstance(node, SingleNode) and node.index >= 0:
        yield node.index
    elif isinstance(node, FreeSizeNode):
        yield from (entry.index for entry in node.table)
    elif isinstance(node, PredictionNode):
        yield from node.table
    elif isinstance(node, GranularitySelectionNode):
        yield from node.indices
        yield from (entry.value for entry in node.exact)
    elif isinstance(node, DecisionTreeNode):
        return  # its Single values are visited as nodes of their own


def _is_equality(node: AnyNode) -> bool:
    return isinstance(node, MatchingNode) and node.distance == "Equality"


def _device_label(hardware: Hardware) -> str:
    text = hardware.arch
    if hardware.cu_count is not None:
        text += f" ({hardware.cu_count} CUs)"
    return text


def _problem_label(problem: ContractionProblem) -> str:
    types = "/".join(t.value for t in (problem.a_type, problem.b_type, problem.c_type, problem.d_type))
    return f"{problem.op_id} {types}" + (" HPA" if problem.hpa else "")


def _type_label(fields: dict[str, Any]) -> str:
    if not fields:
        return "(any)"
    transposes = f"{fields.get('trans_a', '?')}{fields.get('trans_b', '?')}"
    types = "/".join(
        str(getattr(fields.get(name), "value", fields.get(name))) for name in ("a_type", "b_type", "c_type", "d_type")
    )
    label = f"{transposes} {types}"
    if fields.get("hpa"):
        label += " HPA"
    if fields.get("strided_batched") is False:
        label += " GB"
    return label


_AXIS_LABELS = {"BatchSize": "batch", "BoundSize": "K"}


def _rest_label(names: list[str], rest: tuple[int, ...]) -> str:
    return "".join(f" {name}={value}" for name, value in zip(names, rest, strict=True))


def _tile(solution: MasterSolution) -> str:
    tile = solution.size_mapping.macro_tile if solution.size_mapping else None
    return "x".join(str(v) for v in (tile or [])[:2])


def lint_library(
    library: MasterLibrary,
    *,
    options: LintOptions | None = None,
    locator: Locator | None = None,
    loader: Loader | None = None,
    measure: Measure | None = None,
    file_bytes: int | None = None,
) -> list[Finding]:
    """Semantic findings for one master library, rule by rule (see the module docstring).

    Args:
        options: rule settings (grid-outlier factor, …).
        locator: how findings name tables, entries and kernels (default: paths in the master).
        loader: resolves ``Placeholder`` leaves of a lazy library (used by ``no-fallback``).
        measure: serialised size of raw objects, for the ``size`` findings' byte counts.
        file_bytes: the library file's size, for the ``size`` summary.

    Raises:
        TypeError: an argument of the wrong type.
    """
    require(library, MasterLibrary, "library", "lint_library")
    require(options, LintOptions, "options", "lint_library", optional=True)
    if locator is not None and not all(
        callable(getattr(locator, method, None)) for method in ("table", "entry", "solution", "solutions")
    ):
        raise TypeError(f"lint_library(): locator must be a Locator, not {type(locator).__name__}")
    require_callable(loader, "loader", "lint_library", optional=True)
    require_callable(measure, "measure", "lint_library", optional=True)
    require(file_bytes, int, "file_bytes", "lint_library", optional=True)
    linter = Linter(library, options=options, locator=locator, loader=loader)
    try:
        return _findings(linter, library, measure, file_bytes)
    finally:
        linter.forget()


def _findings(linter: Linter, library: MasterLibrary, measure: Measure | None, file_bytes: int | None) -> list[Finding]:
    """Every rule's findings (:func:`lint_library`)."""
    findings = list(linter.dead_entries())
    findings += linter.shadowed_entries()
    findings += linter.unreachable_kernels()
    findings += linter.no_fallback()
    findings += linter.grid_outliers()
    findings += [
        _finding(LintCode.UNMODELLED_PREDICATE, unmodelled_message(name), path)
        for path, name in unmodelled_predicates(library)
    ]
    if linter.options.size:
        findings += linter.sizes(measure, file_bytes)
    return findings


__all__ = [
    "EntryVerdict",
    "LintCode",
    "LintOptions",
    "Linter",
    "Locator",
    "MasterLocator",
    "Measure",
    "can_solve",
    "lint_library",
]

"""Public selection API: which kernel will the runtime pick for this GEMM on this device?

* :func:`select_solution` — one query; a :class:`~tensilekit.selection.walk.Selection` with the
  kernel (or none), the reported distance and, on request, the walk and next-best kernels.
* :func:`find_all_solutions` — every kernel the runtime would list for the query.
* :func:`select_batch` — many queries at once through the compiled, vectorised path.
* :func:`compile_library` — prepare a library once for fast repeated or bulk queries.

Each answers as the library's runtime does (:mod:`tensilekit.selection.runtime`, detected from
the master, or given as ``runtime``): Tensile's ``findBestSolution`` (uncached), or hipBLASLt's
heuristic ``findTopSolutions(problem, hw, 1)`` with its XF32 → Float retry. With
``rocblas_k0=True`` the problem is first adjusted the way rocBLAS calls Tensile (K = 0 when
alpha == 0).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TypeAlias

from tensilekit._arguments import require, require_callable
from tensilekit._lazy import lazy_exports
from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary
from tensilekit.model.solution import MasterSolution
from tensilekit.selection.answer import Selection, TraceEvent, found_selection
from tensilekit.selection.problem import ContractionProblem, GemmProblem, Hardware, contraction_problem
from tensilekit.selection.runtime import Runtime, TopSolutions, detect_runtime, resolve_runtime
from tensilekit.selection.walk import Loader, ReferenceSelector, as_contraction

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from tensilekit.selection.columns import ColumnsLike
    from tensilekit.selection.fast import CompiledLibrary, compile_library

# The compiled path (numpy, the kernels and scans) is imported when first used: one query on a
# master walks the reference selector and never needs it (`select M N K` start-up, issue 16).
Library: TypeAlias = "MasterLibrary | CompiledLibrary | ReferenceSelector"


__getattr__ = lazy_exports(
    __name__,
    {"CompiledLibrary": "tensilekit.selection.fast", "compile_library": "tensilekit.selection.fast"},
    globals(),
)


def _compiled(library: object) -> CompiledLibrary | None:
    """``library`` if it is a :class:`CompiledLibrary` (none exists before the compiled path is imported)."""
    fast = sys.modules.get("tensilekit.selection.fast")
    return library if fast is not None and isinstance(library, fast.CompiledLibrary) else None


def _check_query(
    function: str, library: object, problem: object, hardware: object, loader: object, runtime: object
) -> None:
    """TypeError for arguments of the wrong type (before they fail deep inside the walk)."""
    if _compiled(library) is None:
        require(library, (MasterLibrary, ReferenceSelector), "library", function)
    require(problem, (GemmProblem, ContractionProblem), "problem", function)
    require(hardware, Hardware, "hardware", function)
    require_callable(loader, "loader", function, optional=True)
    require(runtime, (str, Runtime), "runtime", function, optional=True)


def _reference(library: Library, loader: Loader | None, runtime: Runtime | str | None) -> ReferenceSelector:
    compiled = _compiled(library)
    master = compiled.library if compiled is not None else library
    if isinstance(master, ReferenceSelector):
        loader, master = master._loader, master.library
    assert isinstance(master, MasterLibrary)
    chosen = None if runtime is None else resolve_runtime(runtime, None, lambda: detect_runtime(master))
    if isinstance(library, ReferenceSelector) and (chosen is None or chosen is library.runtime):
        return library
    if compiled is not None and (chosen is None or chosen is compiled.runtime):
        return compiled.reference
    return ReferenceSelector(master, loader, chosen if chosen is not None else detect_runtime(master))


_NOT_FOUND = Selection(None, None, None)


_compiled_type: type | None = None


def _compiled_class() -> type | None:
    """:class:`CompiledLibrary`, or None while the compiled path is not imported (then no library is one)."""
    global _compiled_type
    if _compiled_type is None:
        fast = sys.modules.get("tensilekit.selection.fast")
        _compiled_type = None if fast is None else fast.CompiledLibrary
    return _compiled_type


def select_compiled(compiled: CompiledLibrary, contraction: ContractionProblem, hardware: Hardware) -> Selection:
    """One query through the compiled walk, with the runtime's further attempts (no trace, no top):
    :func:`select_solution`'s answer for a compiled library, without its argument checks (the
    caller's types are exact)."""
    sid, fitness = compiled.root.find(compiled, contraction, hardware, None)
    if sid >= 0:
        solution = compiled.solutions[sid]
        return found_selection(solution.index, solution.name, fitness, solution)
    find = compiled.find
    for attempt in compiled.runtime.attempts(contraction)[1:]:
        retried, retried_fitness = find(attempt, hardware)
        if retried is not None:
            return found_selection(retried.index, retried.name, retried_fitness, retried, True)
    return _NOT_FOUND


def select_solution(
    library: Library,
    problem: GemmProblem | ContractionProblem,
    hardware: Hardware,
    *,
    loader: Loader | None = None,
    explain: bool = False,
    top: int = 0,
    rocblas_k0: bool = False,
    runtime: Runtime | str | None = None,
) -> Selection:
    """The kernel the runtime selects for ``problem`` on ``hardware``.

    Args:
        library: a master library, or a :class:`CompiledLibrary` (much faster for repeated
            queries; build it once with :func:`compile_library`), or a ``ReferenceSelector``
            (``compiled.reference``: the walk alone, which decodes only the solutions it
            reaches in a lazily read library — what a handful of queries wants).
        loader: resolves ``Placeholder`` leaves of a lazy library (ignored for a compiled one,
            which has its own).
        explain: record the walk (every row, predicate and table entry considered) in ``trace``.
        top: also rank ``top`` kernels as the runtime would list them. Tensile: the next ``top``
            kernels, each what would be selected if every kernel ranked before it did not exist.
            hipBLASLt: ``findTopSolutions(.., top)`` in its order (rank 1 first; it can differ
            from the top-1 answer), then the ``getAllSolutions`` fallback when that is short.
        rocblas_k0: model rocBLAS, which passes K = 0 to Tensile when alpha == 0.
        runtime: ``"tensile"`` or ``"hipblaslt"`` (default: detected from the library).

    Returns:
        A :class:`Selection`; ``index``/``name`` are None when the runtime finds no kernel (that
        is a result, not an error).

    Raises:
        SelectionError: the query cannot be evaluated (unknown predicate or node type, a lazy
            library without loader, …), or ``runtime`` names no runtime.
        TypeError: an argument of the wrong type.
    """
    if (
        type(library) is (_compiled_type or _compiled_class())
        and not explain
        and type(top) is int
        and top == 0
        and runtime is None
        and type(hardware) is Hardware
        and (loader is None or callable(loader))
    ):
        # the warm query on a compiled library: the checks below, cut to what this case needs
        # (each costs about as much as a twentieth of the compiled walk)
        kind = type(problem)
        if kind is GemmProblem:
            contraction = contraction_problem(problem, rocblas_k0=rocblas_k0)  # type: ignore[arg-type]
        elif kind is ContractionProblem:
            contraction = problem  # type: ignore[assignment]
        else:
            contraction = None
        if contraction is not None:
            return select_compiled(library, contraction, hardware)  # type: ignore[arg-type]
    _check_query("select_solution", library, problem, hardware, loader, runtime)
    require(top, int, "top", "select_solution")
    contraction = as_contraction(problem, rocblas_k0=rocblas_k0)
    selector = _reference(library, loader, runtime)
    rules = selector.runtime
    compiled = _compiled(library)
    fast = compiled is not None and selector is compiled.reference and not explain
    selection = _NOT_FOUND
    tried = rules.attempts(contraction)
    if fast:
        assert compiled is not None
        # one Selection built per query, not replaced (a frozen dataclass's replace costs
        # about as much as the compiled walk of a warm query)
        for number, attempt in enumerate(tried):
            solution, fitness = compiled.find(attempt, hardware)
            if solution is not None:
                selection = Selection(solution.index, solution.name, fitness, solution, retried=number > 0)
                break
        tried = []  # answered
    for number, attempt in enumerate(tried):
        previous = selection.trace
        if previous:
            retry = f"nothing found; {rules.name} retries with F32XdlMathOp={attempt.f32_xdl_math_op.value}"
            previous += (TraceEvent(depth=0, node="retry", path="", passed=None, message=retry),)
        selection = selector.select(attempt, hardware, explain=explain)
        if previous:
            selection = dataclasses.replace(selection, trace=previous + selection.trace)
        if selection.found:
            selection = dataclasses.replace(selection, retried=number > 0)
            break
    if top <= 0:
        return selection
    return dataclasses.replace(
        selection, alternatives=rules.alternatives(selector, contraction, hardware, top, selection)
    )


def top_solutions(
    library: Library,
    problem: GemmProblem | ContractionProblem,
    hardware: Hardware,
    count: int,
    *,
    loader: Loader | None = None,
    rocblas_k0: bool = False,
    runtime: Runtime | str | None = None,
) -> TopSolutions:
    """The runtime's ``count`` best kernels (hipBLASLt: ``findTopSolutions`` with its XF32 retry,
    plus the ``getAllSolutions`` fallback when short; Tensile: repeated selection).

    Raises TypeError for an argument of the wrong type, SelectionError as :func:`select_solution`."""
    _check_query("top_solutions", library, problem, hardware, loader, runtime)
    require(count, int, "count", "top_solutions")
    contraction = as_contraction(problem, rocblas_k0=rocblas_k0)
    selector = _reference(library, loader, runtime)
    return selector.runtime.top(selector, contraction, hardware, count)


def find_all_solutions(
    library: Library,
    problem: GemmProblem | ContractionProblem,
    hardware: Hardware,
    *,
    loader: Loader | None = None,
    rocblas_k0: bool = False,
    runtime: Runtime | str | None = None,
) -> list[MasterSolution]:
    """Every kernel the runtime would list for the query, sorted by index.

    Tensile (``findAllSolutions``): rows of ``Hardware``/``Problem`` nodes are unioned (every row
    whose predicate holds), tables contribute every usable entry, decision forests their trees'
    kernels; ``FreeSize`` pools list nothing (the default search type). hipBLASLt
    (``getAllSolutions``, GEMM_TYPE_ONLY): every kernel of the query's gemm type on this device
    that ``isSolutionSupported`` accepts — how FreeSize libraries answer at all.

    Raises TypeError for an argument of the wrong type, SelectionError as :func:`select_solution`.
    """
    _check_query("find_all_solutions", library, problem, hardware, loader, runtime)
    contraction = as_contraction(problem, rocblas_k0=rocblas_k0)
    selector = _reference(library, loader, runtime)
    return selector.runtime.all_solutions(selector, contraction, hardware)


@dataclasses.dataclass(frozen=True)
class BatchSelection:
    """Answers for many queries, in query order.

    ``indices`` holds the master ``index`` of each chosen kernel (-1: none) and ``distances`` the
    reported distance (NaN: none or not a distance-based answer). ``errors`` maps query positions
    that could not be answered to the reason; their index is -1.
    """

    library: CompiledLibrary
    solution_ids: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    distances: npt.NDArray[np.float64]
    errors: dict[int, str] = dataclasses.field(default_factory=dict)
    retried: frozenset[int] = frozenset()
    """Query positions a further attempt of the runtime answered (hipBLASLt's XF32 → Float retry)."""

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def names(self) -> list[str | None]:
        solutions = self.library.solutions
        return [solutions[sid].name if sid >= 0 else None for sid in self.solution_ids.tolist()]

    def __getitem__(self, position: int) -> Selection:
        sid = int(self.solution_ids[position])
        if sid < 0:
            return Selection(None, None, None)
        solution = self.library.solutions[sid]
        distance = float(self.distances[position])
        return found_selection(
            solution.index,
            solution.name,
            None if math.isnan(distance) else distance,
            solution,
            position in self.retried,
        )

    def __iter__(self) -> Iterator[Selection]:
        for position in range(len(self)):
            yield self[position]


def select_batch(
    library: Library,
    problems: Sequence[GemmProblem | ContractionProblem] | ColumnsLike,
    hardware: Hardware | Sequence[Hardware] | None = None,
    *,
    loader: Loader | None = None,
    rocblas_k0: bool = False,
    runtime: Runtime | str | None = None,
) -> BatchSelection:
    """Select for many queries at once (compiled, vectorised; same answers as :func:`select_solution`).

    Args:
        library: a master library (compiled on the fly) or a :class:`CompiledLibrary`.
        problems: the queries, or ready :class:`~tensilekit.selection.columns.ProblemColumns`.
        hardware: one device for all queries, or one per query (not used with columns).

    Raises:
        TypeError: an argument of the wrong type (a problem that is not a GemmProblem or
            ContractionProblem, a device that is not a Hardware).
        SelectionError: no hardware for problems given as a sequence; ``runtime`` names no runtime.
    """
    import numpy as np

    from tensilekit.selection.columns import ColumnsLike, ProblemColumns
    from tensilekit.selection.fast import compile_library

    compiled = _compiled(library)
    if compiled is None:
        require(library, MasterLibrary, "library", "select_batch")
        require_callable(loader, "loader", "select_batch", optional=True)
    require(runtime, (str, Runtime), "runtime", "select_batch", optional=True)
    kinds: set[type] = set()
    if not isinstance(problems, ColumnsLike):
        kinds = _check_problems(problems, hardware)
    if compiled is None:
        assert isinstance(library, MasterLibrary)  # checked above
        compiled = compile_library(library, loader=loader)
    master = compiled.library
    if runtime is not None and resolve_runtime(runtime, None, lambda: detect_runtime(master)) is not compiled.runtime:
        compiled = compile_library(master, loader=loader, runtime=runtime)
    if isinstance(problems, ColumnsLike):
        columns = problems
    else:
        if hardware is None:
            raise SelectionError("select_batch needs the hardware of the queries")
        columns = ProblemColumns.of_problems(problems, hardware, rocblas_k0=rocblas_k0, kinds=kinds)
    errors: dict[int, str] = {}
    try:
        sids, fits = compiled.find_batch(columns)
    except SelectionError:
        # one query cannot be evaluated: answer the others one by one and report it
        sids = np.full(columns.size, -1, dtype=np.int64)
        fits = np.full(columns.size, math.nan)
        for position in range(columns.size):
            problem, device = columns.row(position)
            try:
                solution, fitness = compiled.find(problem, device)
            except SelectionError as error:
                errors[position] = str(error)
                continue
            if solution is not None:
                sids[position] = compiled.sid_of(solution.index)
                fits[position] = math.nan if fitness is None else fitness
    retried = _retry_unanswered(compiled, columns, sids, fits, errors)
    return BatchSelection(compiled, sids, compiled.index_table()[sids], fits, errors, frozenset(retried))


def _check_problems(problems: object, hardware: object) -> set[type]:
    """TypeError unless ``problems`` is a sequence of problems and ``hardware`` a device, one per
    problem, or None (refused later with the reason); the set of the problems' types."""
    require(problems, Sequence, "problems", "select_batch")
    assert isinstance(problems, Sequence)
    if isinstance(problems, (str, bytes)):
        raise TypeError("select_batch(): problems must be a sequence of GemmProblem or ContractionProblem, not str")
    kinds = (GemmProblem, ContractionProblem)
    # the fast test (the exact types, C-level); then which one
    found = set(map(type, problems))
    if not found <= set(kinds) and not all(isinstance(problem, kinds) for problem in problems):
        for problem in problems:
            require(problem, kinds, "each of problems", "select_batch")
    if isinstance(hardware, Sequence) and not isinstance(hardware, (str, bytes)):
        if len(hardware) != len(problems):
            raise ValueError(f"select_batch(): {len(hardware)} devices for {len(problems)} problems")
        for device in hardware:
            require(device, Hardware, "each of hardware", "select_batch")
    else:
        require(hardware, Hardware, "hardware", "select_batch", optional=True)
    return found


def _retry_unanswered(
    compiled: CompiledLibrary,
    columns: ColumnsLike,
    sids: npt.NDArray[np.int64],
    fits: npt.NDArray[np.float64],
    errors: dict[int, str],
) -> list[int]:
    """The runtime's further attempts (hipBLASLt's XF32 → Float retry) for unanswered queries;
    returns the positions they answered."""
    import numpy as np

    answered: list[int] = []
    for position in np.flatnonzero((sids < 0) & compiled.runtime.retried(columns)).tolist():
        if position in errors:
            continue
        problem, device = columns.row(position)
        for attempt in compiled.runtime.attempts(problem)[1:]:
            solution, fitness = compiled.find(attempt, device)
            if solution is not None:
                sids[position] = compiled.sid_of(solution.index)
                fits[position] = math.nan if fitness is None else fitness
                answered.append(position)
                break
    return answered


__all__ = [
    "BatchSelection",
    "CompiledLibrary",
    "Library",
    "compile_library",
    "find_all_solutions",
    "select_batch",
    "select_solution",
    "top_solutions",
]

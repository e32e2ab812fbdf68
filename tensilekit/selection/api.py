"""Public selection API: which kernel will the runtime pick for this GEMM on this device?

* :func:`select_solution` — one query; a :class:`~tensilekit.selection.walk.Selection` with the
  kernel (or none), the reported distance and, on request, the walk and next-best kernels.
* :func:`find_all_solutions` — every kernel the runtime would list for the query.
* :func:`select_batch` — many queries at once through the compiled, vectorised path.
* :func:`compile_library` — prepare a library once for fast repeated or bulk queries.

All of them model Tensile's ``MasterSolutionLibrary::findBestSolution`` (uncached). With
``rocblas_k0=True`` the problem is first adjusted the way rocBLAS calls Tensile (K = 0 when
alpha == 0).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary
from tensilekit.model.solution import MasterSolution
from tensilekit.selection.columns import ColumnsLike, ProblemColumns
from tensilekit.selection.fast import CompiledLibrary, compile_library
from tensilekit.selection.problem import ContractionProblem, GemmProblem, Hardware
from tensilekit.selection.walk import Candidate, Loader, ReferenceSelector, Selection, as_contraction

Library = MasterLibrary | CompiledLibrary


def _reference(library: Library, loader: Loader | None) -> ReferenceSelector:
    if isinstance(library, CompiledLibrary):
        return library.reference
    return ReferenceSelector(library, loader)


def select_solution(
    library: Library,
    problem: GemmProblem | ContractionProblem,
    hardware: Hardware,
    *,
    loader: Loader | None = None,
    explain: bool = False,
    top: int = 0,
    rocblas_k0: bool = False,
) -> Selection:
    """The kernel Tensile's runtime selects for ``problem`` on ``hardware``.

    Args:
        library: a master library, or a :class:`CompiledLibrary` (much faster for repeated
            queries; build it once with :func:`compile_library`).
        loader: resolves ``Placeholder`` leaves of a lazy library (ignored for a compiled one,
            which has its own).
        explain: record the walk (every row, predicate and table entry considered) in ``trace``.
        top: also rank the next ``top`` kernels: each is what would be selected if every kernel
            ranked before it did not exist.
        rocblas_k0: model rocBLAS, which passes K = 0 to Tensile when alpha == 0.

    Returns:
        A :class:`Selection`; ``index``/``name`` are None when the runtime finds no kernel (that
        is a result, not an error).

    Raises:
        SelectionError: the query cannot be evaluated (unknown predicate or node type, a lazy
            library without loader, …).
    """
    contraction = as_contraction(problem, rocblas_k0=rocblas_k0)
    if isinstance(library, CompiledLibrary) and not explain and top <= 0:
        solution, fitness = library.find(contraction, hardware)
        if solution is None:
            return Selection(None, None, None)
        return Selection(solution.index, solution.name, fitness, solution)
    selector = _reference(library, loader)
    selection = selector.select(contraction, hardware, explain=explain)
    if top <= 0 or selection.index is None:
        return selection
    excluded = [selection.index]
    alternatives: list[Candidate] = []
    for rank in range(1, top + 1):
        following = selector.select(contraction, hardware, exclude=excluded)
        if following.index is None:
            break
        alternatives.append(
            Candidate(rank=rank, index=following.index, name=following.name, distance=following.distance)
        )
        excluded.append(following.index)
    return dataclasses.replace(selection, alternatives=tuple(alternatives))


def find_all_solutions(
    library: Library,
    problem: GemmProblem | ContractionProblem,
    hardware: Hardware,
    *,
    loader: Loader | None = None,
    rocblas_k0: bool = False,
) -> list[MasterSolution]:
    """``findAllSolutions``: every reachable kernel passing its predicates, sorted by index.

    Rows of ``Hardware``/``Problem`` nodes are unioned (every row whose predicate holds), tables
    contribute every usable entry, decision forests their trees' kernels; ``FreeSize`` pools list
    nothing (the default search type).
    """
    contraction = as_contraction(problem, rocblas_k0=rocblas_k0)
    return _reference(library, loader).find_all(contraction, hardware)


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
        return Selection(solution.index, solution.name, None if math.isnan(distance) else distance, solution)

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
) -> BatchSelection:
    """Select for many queries at once (compiled, vectorised; same answers as :func:`select_solution`).

    Args:
        library: a master library (compiled on the fly) or a :class:`CompiledLibrary`.
        problems: the queries, or ready :class:`~tensilekit.selection.columns.ProblemColumns`.
        hardware: one device for all queries, or one per query (not used with columns).
    """
    compiled = library if isinstance(library, CompiledLibrary) else compile_library(library, loader=loader)
    if isinstance(problems, ColumnsLike):
        columns = problems
    else:
        if hardware is None:
            raise SelectionError("select_batch needs the hardware of the queries")
        columns = ProblemColumns.from_problems(problems, hardware, rocblas_k0=rocblas_k0)
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
    table = np.array([s.index for s in compiled.solutions] + [-1], dtype=np.int64)
    return BatchSelection(compiled, sids, table[sids], fits, errors)


__all__ = [
    "BatchSelection",
    "CompiledLibrary",
    "Library",
    "compile_library",
    "find_all_solutions",
    "select_batch",
    "select_solution",
]

"""Which kernel wins where: selection over an M x N grid at one K (the data behind ``plot selection``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary, MatchingNode
from tensilekit.selection.api import select_batch
from tensilekit.selection.fast import CompiledLibrary, compile_library
from tensilekit.selection.problem import GemmProblem, Hardware
from tensilekit.selection.served import solution_problem_fields


@dataclasses.dataclass(frozen=True)
class TableEntry:
    """One exact entry of a ``Matching`` table that serves the mapped problem type."""

    m: int
    n: int
    batch: int
    k: int
    index: int


@dataclasses.dataclass(frozen=True)
class SelectionMap:
    """The kernel selected at every (M, N) of a grid for one K (and the rest of ``problem``)."""

    problem: GemmProblem
    hardware: Hardware
    m_values: npt.NDArray[np.int64]
    n_values: npt.NDArray[np.int64]
    winners: npt.NDArray[np.int64]
    """``winners[j, i]``: master index selected for ``(m_values[i], n_values[j])``; -1 for none."""
    names: dict[int, str]
    entries: tuple[TableEntry, ...]

    def kernels_by_area(self) -> list[int]:
        """The winning kernels, the one covering most grid points first (ties: lower index)."""
        values, counts = np.unique(self.winners[self.winners >= 0], return_counts=True)
        order = sorted(zip(values.tolist(), counts.tolist(), strict=True), key=lambda item: (-item[1], item[0]))
        return [index for index, _ in order]


def log_grid(low: int, high: int, points: int) -> npt.NDArray[np.int64]:
    """``points`` integer sizes spread evenly on a log scale from ``low`` to ``high`` (distinct)."""
    if not 1 <= low <= high:
        raise SelectionError(f"grid range must satisfy 1 <= low <= high, got {low}..{high}")
    if points < 2:
        raise SelectionError("a grid needs at least 2 points per axis")
    values = np.unique(np.round(np.geomspace(low, high, points)).astype(np.int64))
    return values


def _key_position(node: MatchingNode, kind: str) -> int | None:
    for position, prop in enumerate(node.properties):
        if prop.type == kind and getattr(prop, "index", 0) in (0, None):
            return position
    return None


def table_entries(library: MasterLibrary, problem: GemmProblem) -> tuple[TableEntry, ...]:
    """Entries of every Matching table whose kernel serves ``problem``'s type (transposes, types, HPA)."""
    wanted = {
        "trans_a": problem.trans_a, "trans_b": problem.trans_b, "a_type": problem.a_type.value,
        "b_type": problem.b_type.value if problem.b_type else None,
        "c_type": problem.c_type.value if problem.c_type else None,
        "d_type": problem.d_type.value if problem.d_type else None, "hpa": problem.hpa,
        "strided_batched": problem.strided_batched,
    }  # fmt: skip
    serving: dict[int, bool] = {}
    for solution in library.solutions:
        fields = solution_problem_fields(solution)
        serving[solution.index] = all(
            fields.get(key, value) == value for key, value in wanted.items() if value is not None
        )
    found: list[TableEntry] = []
    for _, node in library.iter_nodes():
        if not isinstance(node, MatchingNode):
            continue
        positions = [_key_position(node, kind) for kind in ("FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize")]
        m_at, n_at, batch_at, k_at = positions
        if m_at is None or n_at is None or k_at is None:
            continue
        for entry in node.table:
            index = entry.solution_index
            if not serving.get(index, False):
                continue
            key = entry.key
            batch = key[batch_at] if batch_at is not None else 1
            found.append(TableEntry(key[m_at], key[n_at], batch, key[k_at], index))
    return tuple(found)


def selection_map(
    library: MasterLibrary | CompiledLibrary,
    problem: GemmProblem,
    hardware: Hardware,
    m_values: Sequence[int] | npt.NDArray[np.int64],
    n_values: Sequence[int] | npt.NDArray[np.int64],
    *,
    loader: Callable[[str], MasterLibrary] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SelectionMap:
    """Select at every ``(m, n)`` of the grid; ``problem`` supplies K and every other field.

    ``progress(points)`` is called as grid points are answered (a few rows at a time), for a
    progress bar; without it the grid is answered in one batch."""
    compiled = library if isinstance(library, CompiledLibrary) else compile_library(library, loader=loader)
    ms = np.asarray(m_values, dtype=np.int64)
    ns = np.asarray(n_values, dtype=np.int64)
    rows_per_batch = len(ns) if progress is None else max(1, len(ns) // 16)
    indices: list[npt.NDArray[np.int64]] = []
    for start in range(0, len(ns), rows_per_batch):
        rows = ns[start : start + rows_per_batch]
        queries = [problem.model_copy(update={"m": int(m), "n": int(n)}) for n in rows for m in ms]
        indices.append(np.asarray(select_batch(compiled, queries, hardware).indices, dtype=np.int64))
        if progress is not None:
            progress(len(queries))
    winners = (np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)).reshape(len(ns), len(ms))
    master = compiled.library
    by_index = {solution.index: solution.name for solution in master.solutions}
    names: dict[int, str] = {int(i): by_index.get(int(i)) or str(int(i)) for i in np.unique(winners) if i >= 0}
    return SelectionMap(problem, hardware, ms, ns, winners, names, table_entries(master, problem))


__all__ = ["SelectionMap", "TableEntry", "log_grid", "selection_map", "table_entries"]

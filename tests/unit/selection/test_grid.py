"""selection.grid and selection.served: the data behind ``plot selection`` and grid diffs."""

from __future__ import annotations

import numpy as np
import pytest
from selection_factory import master, matching, problem_predicate, solution

from tensilekit.errors import SelectionError
from tensilekit.selection import GemmProblem, Hardware, select_solution
from tensilekit.selection.grid import log_grid, selection_map, table_entries
from tensilekit.selection.served import library_devices, served_problem_types

GFX90A = Hardware(arch="gfx90a")


def _library() -> object:
    half = solution(2, problemPredicate=problem_predicate(types=["Half", "Half", "Half", "Half"]))
    sols = [solution(0), solution(1), half]
    table = matching([([64, 64, 256], 0, 1.0), ([4096, 4096, 4096], 1, 2.0), ([512, 512, 512], 2, 3.0)])
    return master(sols, table)


def test_log_grid_is_increasing_distinct_and_checked() -> None:
    grid = log_grid(1, 1000, 50)
    assert grid[0] == 1 and grid[-1] == 1000 and (np.diff(grid) > 0).all()
    with pytest.raises(SelectionError):
        log_grid(10, 5, 4)
    with pytest.raises(SelectionError):
        log_grid(1, 10, 1)


def test_map_agrees_with_single_selection_and_marks_served_entries() -> None:
    library = _library()
    problem = GemmProblem(m=1, n=1, k=1024, beta=1.0)
    grid = log_grid(16, 16384, 24)
    smap = selection_map(library, problem, GFX90A, grid, grid)  # type: ignore[arg-type]
    assert smap.winners.shape == (len(grid), len(grid))
    for j in range(0, len(grid), 5):
        for i in range(0, len(grid), 5):
            single = select_solution(library, problem.model_copy(update={"m": int(grid[i]), "n": int(grid[j])}), GFX90A)  # type: ignore[arg-type]
            assert smap.winners[j, i] == (single.index if single.index is not None else -1)
    assert set(smap.kernels_by_area()) <= {0, 1}  # kernel 2 serves Half only
    assert [(e.m, e.n, e.k, e.index) for e in smap.entries] == [(64, 64, 256, 0), (4096, 4096, 4096, 1)]
    assert [(e.m, e.index) for e in table_entries(library, GemmProblem(m=1, n=1, k=1, a_type="Half"))] == [(512, 2)]  # type: ignore[arg-type]


def test_served_types_and_devices() -> None:
    library = _library()
    types = served_problem_types(library)  # type: ignore[arg-type]
    assert [t["a_type"] for t in types] == ["Float", "Half"]
    assert all(t["trans_a"] == "N" and t["trans_b"] == "N" for t in types)
    assert library_devices(library) == [Hardware(arch="gfx90a")]  # type: ignore[arg-type]

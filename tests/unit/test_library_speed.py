"""``Library`` answers at the compiled engine's speed (issue 33), with the walk's answers.

The speed tests guard ratios measured in one process with generous slack, never a wall-clock
time; bench/library_api.py measures the figures themselves (about 1x and 1x; the walk ~20x and
the per-query batch ~40x before).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tensilekit.library as library_module
from tensilekit.library import WALK_AT_MOST, Library, library_of, open_library
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import (
    GemmProblem,
    Hardware,
    ProblemColumns,
    contraction_problem,
    select_batch,
    select_solution,
)

GRID = "hipblaslt_gfx942_grid"


@pytest.fixture(scope="module")
def grid_path(corpus: Path) -> Path:
    return corpus / "masters-hipblaslt" / f"{GRID}.dat"


def _problems(library: Library, count: int) -> list[GemmProblem]:
    """``count`` problems of types the grid serves (F8 in, BF16 out: NN and TT; one in five of a type
    it does not serve), sizes spread over 1..~70 000 (deterministic)."""
    sizes = [(1 + (i * 7919) % 70000, 1 + (i * 104729) % 9000, 1 + (i * 1299709) % 30000) for i in range(count)]
    problems = []
    for i, (m, n, k) in enumerate(sizes):
        trans = "T" if i % 2 else "N"
        served = i % 5 != 4
        kind = "Float8,BFloat16,Float" if served else "HHS"
        problems.append(library.problem(m, n, k, type=kind, trans_a=trans, trans_b=trans))
    return problems


def _answer(selection: Any) -> tuple[Any, ...]:
    return selection.index, selection.name, selection.distance, selection.retried


def test_select_walks_a_handful_of_questions_then_answers_compiled(
    grid_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(library_module, "COMPILE_SECONDS_PER_KERNEL", 0.0)  # compiling is free: at once
    library = open_library(grid_path)
    problems = _problems(library, 3 * WALK_AT_MOST)
    walked = [_answer(library.reference.select(contraction_problem(p), library.require_device())) for p in problems]
    answers = []
    for number, problem in enumerate(problems, start=1):
        answers.append(_answer(library.select(problem)))
        assert library.is_compiled == (number > WALK_AT_MOST), number
    assert answers == walked
    assert any(answer[0] is not None for answer in answers)
    # explain keeps the walk: its trace, with the same answer
    explained = library.explain(problems[1])
    assert explained.trace and _answer(explained) == walked[1]


def test_select_walks_on_while_compiling_would_cost_more(grid_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ski-rental rule: a library whose compile would cost more than the walking so far is
    walked on (rocBLAS_Full.dat.gz: 11 s to compile, ~8 ms a walk), whatever the count."""
    monkeypatch.setattr(library_module, "COMPILE_SECONDS_PER_KERNEL", 1e6)
    library = open_library(grid_path)
    for problem in _problems(library, 3 * WALK_AT_MOST):
        library.select(problem)
    assert not library.is_compiled
    # a lazy master compiles nothing up front (its shards compile when reached): the count decides
    lazy = library_of(MasterLibrary(solutions=[], library=library.master.library), runtime=library.runtime)
    assert lazy.reads_shards and lazy._compiling_pays() is False
    lazy._cache["walked"] = WALK_AT_MOST
    assert lazy._compiling_pays()


def _cpu_seconds(ask: Callable[[GemmProblem], Any], problems: list[GemmProblem]) -> float:
    """CPU seconds of this process asking every problem once (a shared machine's other load is left out)."""
    start = time.process_time()
    for problem in problems:
        ask(problem)
    return time.process_time() - start


def test_warm_select_costs_about_the_compiled_engine(grid_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 row 1: Library.select is ~1x select_solution on the compiled library (the walk ~20x)."""
    monkeypatch.setattr(library_module, "COMPILE_SECONDS_PER_KERNEL", 0.0)  # warm: compiled soon
    library = open_library(grid_path)
    problems = _problems(library, 400)
    device = library.require_device()
    for problem in problems:  # warm: compiled after WALK_AT_MOST, caches built
        library.select(problem)
    compiled = library.compiled
    ratios = []
    for _ in range(3):  # the best of three: the machine may be shared
        figure = _cpu_seconds(library.select, problems)
        anchor = _cpu_seconds(lambda problem: select_solution(compiled, problem, device), problems)
        ratios.append(figure / max(anchor, 1e-6))
    assert min(ratios) <= 3.0, ratios


def test_batch_of_gemm_problems_costs_about_the_engine_on_columns(grid_path: Path) -> None:
    """Issue 33 row 2: select_batch of GemmProblems is ~1x the engine on ready columns (~2.5x when
    each field of each problem was read, ~40x before issue 33): each problem's validation packed
    its numbers and problem-type number into one row the batch reads; predicates of the problem
    type alone are evaluated once per type."""
    library = open_library(grid_path)
    problems = _problems(library, 5000)
    device = library.require_device()
    columns = ProblemColumns.from_problems([contraction_problem(p) for p in problems], device)
    compiled = library.compiled
    expected = select_batch(compiled, columns)  # cold: tables built
    assert (library.select_batch(problems).indices == expected.indices).all()
    assert (library.select_batch(columns).indices == expected.indices).all()  # ready columns too
    ratios = []
    for _ in range(3):
        start = time.process_time()
        select_batch(compiled, columns)
        anchor = time.process_time() - start
        start = time.process_time()
        library.select_batch(problems, device)
        ratios.append((time.process_time() - start) / max(anchor, 1e-6))
    assert min(ratios) <= 2.0, ratios


def test_select_takes_its_fast_path_only_for_exact_types(grid_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A subclass of GemmProblem or Hardware still gets select_solution's checks and its answer."""
    monkeypatch.setattr(library_module, "COMPILE_SECONDS_PER_KERNEL", 0.0)

    class Device(Hardware):
        pass

    library = open_library(grid_path)
    problems = _problems(library, WALK_AT_MOST + 2)
    for problem in problems:
        library.select(problem)
    device = library.require_device()
    odd = Device(**device.model_dump())
    assert _answer(library.select(problems[-1], odd)) == _answer(library.select(problems[-1], device))

"""The public API at the engine's speed (issue 33): each figure beside its anchor, from one run.

    python bench/library_api.py [--corpus PATH] [--single N] [--batch N] [--seed S]

On the largest hipBLASLt master (``hipblaslt_gfx942_grid``, opened with ``open_library`` as a user
opens it; random heuristic queries as ``bench/select.py`` draws them):

* ``Library.select(problem)``, warm: the median over ``--single`` questions, each asked before
  (walked until walking has cost what compiling would, then ``Library`` compiles itself). Anchor: the
  internal ``select_solution`` on the compiled library, the same questions. Goal <= 10 us.
  The reference walk (what ``Library.select`` answered before issue 33 unless something else had
  compiled the library) is printed beside it: the slow path a script no longer gets.
* ``Library.select_batch`` of ``--batch`` ``GemmProblem``\\ s (best of 3, warm). Anchor: the same
  compiled engine on problem columns (``ProblemColumns.from_arrays`` of the same queries).
  Goal >= 2 M queries/s. Then a first ask of problems just built (nothing of an earlier ask to
  reuse: no answer or row is kept per object), and what building one costs, of which its batch row.

Where the batch time goes (CPU ms per 100 000, the best of repeated runs, 2 cores under a load of ~6-8, Dec.
2026): figure ~44-47 (2.1-2.3 M q/s; ~65-70 before the pass below, 0.39 M q/s before issue 33),
anchor ~55 (~67-73 before); a first ask of problems just built ~50 (2.0 M q/s CPU): the same work,
but the batch's large buffers then fault in from fresh memory, ~1-2 us a page (``ru_minflt``).

* The read, ~14 (~200 before issue 33): each GemmProblem's validation packs its numbers and a
  number for its problem type (``selection.problem.batch_row``: 17 int64/double, ~1.8 us of a
  ~20-28 us construction), so the batch reads one attribute per problem: ``b"".join`` of the rows
  and rows to columns ~9, 4 096 problems at a time (the slice's rows still in the cache; the
  whole batch at once ~13), the exact-type check ~2, default leading dimensions, strides and
  scalar spellings ~3; the type, tensilelite and device columns come from one
  ``contraction_problem`` per type, spread when read.
* The engine, ~29 (~48 before this pass, ~75 before issue 33): the three grid tables' signatures
  ~7 (the buffer offset checks a batch's column bounds already pass are not evaluated:
  ``Atom.offsets``, 54 of the big table's 79 atoms; the workspace checks, the GSU ``k >= v``
  checks and the ``m >= v`` checks each one rank per query, not a bit per check); the cell walks
  ~12 (each signature's first usable cell per run and N slot looked up once and kept,
  ``_GridTable.walk_lookups``; then each query's cell in one lookup and the cell's entries side
  by side: the M/N distance term once per query ~1.3 per table is most of what is left); the
  rows, map and views ~8, answers passed up without copies where every query was answered.

The floor: reading a field of 100 000 objects costs ~3-4 ms (the batch reads one), so the read
stays >= ~8 ms; the engine's numpy passes over 33 000 queries per table (~0.03-0.1 ms each, a
hundred or so of them now) are the rest.
``ProblemColumns.from_arrays`` (numpy arrays, no object per query) skips the read.

Ratio = the figure's time per query / the anchor's. The machine may be shared: both are measured
in this process, alternately, and the CPU time of the batch is printed too. Answers are checked
equal to the anchor's. Tests: tests/unit/test_library_speed.py (the ratios, with generous slack).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _corpus import corpus_path
from _selection import architecture, hipblaslt_problem_of, hipblaslt_queries

from tensilekit.library import open_library
from tensilekit.selection import GemmProblem, Hardware, ProblemColumns, select_batch, select_solution
from tensilekit.selection.problem import batch_row

MASTER = "hipblaslt_gfx942_grid"
GOAL_SINGLE_US = 10.0
GOAL_BATCH_QPS = 2e6


def median_us(ask: Callable[[Any], Any], problems: list[Any]) -> float:
    """Median microseconds of ``ask(problem)`` over ``problems``."""
    clock = time.perf_counter
    latencies = []
    for problem in problems:
        start = clock()
        ask(problem)
        latencies.append(clock() - start)
    return statistics.median(latencies) * 1e6


def best_of(run: Callable[[], Any], times: int = 3) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process) of ``times`` runs."""
    walls, cpus = [], []
    for _ in range(times):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return min(walls), min(cpus)


def row(label: str, figure: str, anchor: str, ratio: float, goal: str, met: bool | None) -> str:
    verdict = "" if met is None else ("ok" if met else "MISS")
    return f"{label:44s} {figure:>14s} {anchor:>14s} {ratio:7.2f}x {goal:>12s} {verdict:>4s}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--single", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    corpus = corpus_path(args.corpus, "masters-hipblaslt")
    library = open_library(corpus / "masters-hipblaslt" / f"{MASTER}.dat")
    columns = hipblaslt_queries(library.master, max(args.single, args.batch), np.random.default_rng(args.seed))
    arch = architecture(library.master)[0]
    hardware = Hardware(arch=arch, cu_count=304 if arch == "gfx942" else 104)
    problems = [hipblaslt_problem_of(columns, i) for i in range(max(args.single, args.batch))]
    asked = problems[: args.single]

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"{'figure':44s} {'figure':>14s} {'anchor':>14s} {'ratio':>8s} {'goal':>12s}")

    walked = [library.select(problem, hardware) for problem in asked]  # cold: walks, then compiles
    while not library.is_compiled:  # a longer script: asked again until compiling pays
        walked = [library.select(problem, hardware) for problem in asked]
    compiled = library.compiled
    anchor = [select_solution(compiled, problem, hardware) for problem in asked]
    assert [(s.index, s.distance) for s in walked] == [(s.index, s.distance) for s in anchor]
    figure_us = median_us(lambda problem: library.select(problem, hardware), asked)
    anchor_us = median_us(lambda problem: select_solution(compiled, problem, hardware), asked)
    walk = library.reference
    walk_us = median_us(lambda problem: select_solution(walk, problem, hardware), asked[:500])
    print(row(f"Library.select, warm, {MASTER}", f"{figure_us:.1f} us", f"{anchor_us:.1f} us", figure_us / anchor_us,
              f"<= {GOAL_SINGLE_US:.0f} us", figure_us <= GOAL_SINGLE_US))  # fmt: skip
    print(row("  the reference walk (before: the default)", f"{walk_us:.1f} us", f"{anchor_us:.1f} us",
              walk_us / anchor_us, "", None))  # fmt: skip

    batch = problems[: args.batch]
    cut = {key: (value[: args.batch] if isinstance(value, np.ndarray) else value) for key, value in columns.items()}
    prepared = ProblemColumns.from_arrays(**cut, arch=arch, cu_count=hardware.cu_count)
    expected = select_batch(compiled, prepared)  # cold: tables and trees built
    answered = library.select_batch(batch, hardware)
    assert (answered.indices == expected.indices).all()
    anchor_s, anchor_cpu = best_of(lambda: select_batch(compiled, prepared))
    figure_s, figure_cpu = best_of(lambda: library.select_batch(batch, hardware))
    rate, anchor_rate = len(batch) / figure_s, len(batch) / anchor_s
    print(row(f"Library.select_batch of {len(batch):,} GemmProblems", f"{rate / 1e6:.2f} M q/s",
              f"{anchor_rate / 1e6:.2f} M q/s", figure_s / anchor_s, f">= {GOAL_BATCH_QPS / 1e6:.0f} M q/s",
              rate >= GOAL_BATCH_QPS))  # fmt: skip
    print(row("  CPU time of this process", f"{len(batch) / figure_cpu / 1e6:.2f} M q/s",
              f"{len(batch) / anchor_cpu / 1e6:.2f} M q/s", figure_cpu / anchor_cpu, "", None))  # fmt: skip

    # a first ask of objects just built (nothing of an earlier ask to reuse), the best of two builds
    firsts, built, rows = [], [], []
    for _ in range(2):
        start_cpu = time.process_time()
        fresh = fresh_problems(cut, args.batch)
        built.append((time.process_time() - start_cpu) / len(fresh))
        start_cpu = time.process_time()
        for problem in fresh:
            batch_row(problem)  # what each problem's validation adds for the batch
        rows.append((time.process_time() - start_cpu) / len(fresh))
        start, start_cpu = time.perf_counter(), time.process_time()
        answered = library.select_batch(fresh, hardware)
        firsts.append((time.perf_counter() - start, time.process_time() - start_cpu))
        assert (answered.indices == expected.indices).all()
        del fresh
    first_s, first_cpu = min(wall for wall, _ in firsts), min(cpu for _, cpu in firsts)
    print(row("  first ask of GemmProblems just built", f"{len(batch) / first_s / 1e6:.2f} M q/s",
              f"{anchor_rate / 1e6:.2f} M q/s", first_s / anchor_s, f">= {GOAL_BATCH_QPS / 1e6:.0f} M q/s",
              len(batch) / first_s >= GOAL_BATCH_QPS))  # fmt: skip
    print(row("  its CPU time", f"{len(batch) / first_cpu / 1e6:.2f} M q/s",
              f"{len(batch) / anchor_cpu / 1e6:.2f} M q/s", first_cpu / anchor_cpu, "", None))  # fmt: skip
    print(f"building a GemmProblem (hipblaslt_problem): {min(built) * 1e6:.1f} us CPU, of which its batch row "
          f"(selection.problem.batch_row, made by the validation) {min(rows) * 1e6:.1f} us")  # fmt: skip


def fresh_problems(columns: dict[str, Any], count: int) -> list[GemmProblem]:
    """``hipblaslt_problem_of(columns, i)`` for each i, as a script builds them (plain values)."""
    plain = {key: (value.tolist() if isinstance(value, np.ndarray) else value) for key, value in columns.items()}
    return [hipblaslt_problem_of(plain, i) for i in range(count)]


if __name__ == "__main__":
    main()

"""GA overhead benchmark: the search's own time per generation, without the benchmark itself.

    python bench/ga.py [--population 64] [--generations 20] [--seed 0]

For each architecture profile and a decode-like and a prefill-like group of bf16 sizes, runs the
GA with an instant evaluator (an analytic stand-in, timed separately and excluded) and measures
per generation:

* **propose**: selection, crossover and mutation with the pruning rules (the GA proper);
* **advance**: archive update, ranking, stop conditions;
* **checkpoint**: the state as JSON (what the pipeline writes atomically every generation);
* **config**: the generation's tuning config as YAML text (what the driver is given).

Target: the total per generation of 64 individuals stays below 1 s (a benchmark run of 64
kernels takes minutes on a GPU, so the GA must not be the bottleneck).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence

from tensilekit.search.configs import dumps_config, problem_type_config, tuning_config
from tensilekit.search.ga import GAConfig, GAState, Measurement, SearchProblem, advance, propose, state_to_json
from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import PROFILES, gene_space
from tensilekit.search.pruning import make_context

TARGET_S = 1.0
GROUPS = {
    "decode": (ProblemShape(6144, 8, 1, 4096, "T", "N", 4096, 4096), ProblemShape(4096, 8, 1, 14336, "T", "N", 14336, 14336)),
    "prefill": (ProblemShape(6144, 2048, 1, 4096, "T", "N", 4096, 4096), ProblemShape(4096, 2048, 1, 14336, "T", "N", 14336, 14336)),
}  # fmt: skip


def instant(kernels: Sequence[KernelParams], sizes: int) -> list[Measurement]:
    """An analytic stand-in for the benchmark: larger tiles and deeper unrolls are faster."""
    return [
        Measurement(k, tuple(1e4 / (k.mt0 * k.mt1) ** 0.5 + 64.0 / k.depth_u + k.gsu + i for i in range(sizes)))
        for k in kernels
    ]


def measure(arch: str, group: str, population: int, generations: int, seed: int) -> dict[str, float]:
    profile = PROFILES[arch]
    shapes = GROUPS[group]
    problem = SearchProblem(gene_space(profile, "B"), make_context(profile, "B", shapes), (1.0,) * len(shapes), group)
    config = GAConfig(population=population, generations=generations, stagnation=0, seed=seed)
    problem_type = problem_type_config("B", "B", "S", "T", "N")
    timings: dict[str, list[float]] = {"propose": [], "advance": [], "checkpoint": [], "config": [], "evaluate": []}
    state = GAState()
    while not state.finished:
        started = time.perf_counter()
        population_now = propose(state, problem, config)
        timings["propose"].append(time.perf_counter() - started)
        fresh = [kernel for kernel in population_now if kernel not in state.archive]
        started = time.perf_counter()
        dumps_config(tuning_config(problem_type, shapes, fresh, profile))
        timings["config"].append(time.perf_counter() - started)
        started = time.perf_counter()
        measurements = instant(fresh, len(shapes))
        timings["evaluate"].append(time.perf_counter() - started)
        started = time.perf_counter()
        state = advance(state, population_now, measurements, problem, config, 0.0)
        timings["advance"].append(time.perf_counter() - started)
        started = time.perf_counter()
        json.dumps(state_to_json(state))
        timings["checkpoint"].append(time.perf_counter() - started)
    result = {name: statistics.mean(values) for name, values in timings.items()}
    result["total"] = sum(value for name, value in result.items() if name != "evaluate")
    result["worst"] = max(
        sum(timings[name][index] for name in ("propose", "advance", "checkpoint", "config"))
        for index in range(len(timings["propose"]))
    )
    result["evaluated"] = float(len(state.archive))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=64)
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"GA overhead per generation, population {args.population}, {args.generations} generations "
          "(milliseconds; the benchmark itself excluded)")  # fmt: skip
    header = f"{'arch':8} {'group':8} {'propose':>8} {'advance':>8} {'ckpt':>8} {'config':>8} {'total':>8} {'worst':>8} {'kernels':>8}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for arch in PROFILES:
        for group in GROUPS:
            r = measure(arch, group, args.population, args.generations, args.seed)
            worst = max(worst, r["worst"])
            print(f"{arch:8} {group:8} {r['propose'] * 1e3:8.1f} {r['advance'] * 1e3:8.1f} {r['checkpoint'] * 1e3:8.1f} "
                  f"{r['config'] * 1e3:8.1f} {r['total'] * 1e3:8.1f} {r['worst'] * 1e3:8.1f} {int(r['evaluated']):8d}")  # fmt: skip
    verdict = "PASS" if worst < TARGET_S else "FAIL"
    print(f"\nslowest generation: {worst * 1e3:.1f} ms (target < {TARGET_S * 1e3:.0f} ms): {verdict}")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

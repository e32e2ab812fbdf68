"""Selection benchmark: how fast tensilekit predicts the kernel Tensile's runtime picks.

    python bench/select.py [--corpus PATH] [--master NAME ...] [--single N] [--batch N] [--seed S]

For each master of ``corpus/masters`` (default: the largest generated master by file size, plus
the largest-table ones) and of ``corpus/masters-hipblaslt`` (default: the largest, ``gfx942_grid``,
answered as hipBLASLt's heuristic: GridBased walk, tensilelite predicates, 32 MiB workspace) it
prints one table row:
  * load + index: ``load_master`` of the ``.dat`` and ``compile_library``;
  * single query: median latency of ``select_solution(compiled, problem, hardware)`` over N random
    queries (default 10 000), warm (the same queries ran once before; caches built);
  * batch: queries per second of ``select_batch`` over N random queries (default 100 000),
    cold (first call: tables sorted, signature sub-tables and k-d trees built) and warm, by the
    wall clock and per CPU second of this process (the machine may be shared).
Targets (selection issue): single <= 30 us median, batch >= 500 000 queries/s.

Random queries mirror the corpus's ``random`` category: M, N, K log-uniform in 1..70000, mostly
batch 1, each query using one of the problem types the library serves, on its architecture.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from _corpus import corpus_path

import tensilekit
from tensilekit.selection import (
    GemmProblem,
    Hardware,
    ProblemColumns,
    compile_library,
    select_batch,
    select_solution,
)
from tensilekit.selection.scan import have_kdtree
from tensilekit.selection.served import nested_predicates, served_problem_types

TARGET_SINGLE_US = 30.0
TARGET_BATCH_QPS = 500_000.0
DEFAULT_MASTERS = (
    "aldebaran_DB_TN_dtree",
    "aldebaran_SB_NN",
    "aldebaran_NN_mixed",
    "aldebaran_DB_GB_NN",
    "hipblaslt_gfx942_grid",
    "hipblaslt_aldebaran_all",
)
HIPBLASLT_WORKSPACE = 32 * 2**20
_HIPBLASLT_COMPUTE = {"Double": "f64", "Int32": "i32", "Half": "f16"}


def hipblaslt_types(library: Any) -> list[dict[str, Any]]:
    """The gemm types a tensilelite master serves (problem types of its solutions)."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for solution in library.solutions:
        pt = solution.problem_type or {}
        fields = {
            "trans_a": "T" if pt.get("transA") else "N", "trans_b": "T" if pt.get("transB") else "N",
            "a_type": pt["aType"], "b_type": pt["bType"], "c_type": pt["cType"], "d_type": pt["dType"],
            "compute_type": pt.get("computeType", "Float"), "compute_input_type": pt.get("computeInputType"),
        }  # fmt: skip
        seen.setdefault(tuple(fields.values()), fields)
    return list(seen.values())


def hipblaslt_queries(library: Any, count: int, rng: np.random.Generator) -> dict[str, Any]:
    """Columns of random hipBLASLt heuristic queries (alpha = beta = 1, C == D, 32 MiB workspace)."""
    types = hipblaslt_types(library)
    choice = rng.integers(0, len(types), size=count)
    sizes = np.exp(rng.uniform(0.0, np.log(70000.0), size=(count, 3))).astype(np.int64).clip(1, 70000)
    columns: dict[str, Any] = {
        "m": sizes[:, 0], "n": sizes[:, 1], "k": sizes[:, 2],
        "batch": np.where(rng.random(count) < 0.9, 1, rng.choice([2, 4, 8, 16, 64], size=count)),
        "alpha": 1.0, "beta": 1.0, "workspace_size": HIPBLASLT_WORKSPACE,
    }  # fmt: skip
    for name in ("trans_a", "trans_b", "a_type", "b_type", "c_type", "d_type", "compute_type", "compute_input_type"):
        columns[name] = np.array([types[c][name] for c in choice])
    return columns


def hipblaslt_problem_of(columns: dict[str, Any], i: int) -> GemmProblem:
    from tensilekit.selection.hipblaslt import hipblaslt_problem

    pick = {
        key: (value[i].item() if isinstance(value, np.ndarray) else value[i] if isinstance(value, list) else value)
        for key, value in columns.items()
    }
    compute = _HIPBLASLT_COMPUTE.get(pick["compute_type"], "f32")
    return hipblaslt_problem(
        pick["m"], pick["n"], pick["k"], batch=pick["batch"], trans_a=pick["trans_a"], trans_b=pick["trans_b"],
        a_type=pick["a_type"], b_type=pick["b_type"], c_type=pick["c_type"], d_type=pick["d_type"],
        compute_type=compute, compute_input=pick["compute_input_type"], workspace_size=HIPBLASLT_WORKSPACE,
    )  # fmt: skip


def architecture(library: Any) -> tuple[str, list[str]]:
    processors: list[str] = []
    metrics: list[str] = []
    for _, node in library.iter_nodes():
        for row in getattr(node, "rows", []) or []:
            for predicate in nested_predicates(row.predicate):
                if predicate.type == "Processor":
                    processors.append(predicate.value)
                if predicate.type in ("CUEfficiency", "ExperimentalDTree", "ExperimentalGrid"):
                    metrics.append(predicate.type)
    return (processors[0] if processors else "gfx90a"), sorted(set(metrics))


def random_queries(library: Any, count: int, rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    types = served_problem_types(library)
    arch, metrics = architecture(library)
    choice = rng.integers(0, len(types), size=count)
    sizes = np.exp(rng.uniform(0.0, np.log(70000.0), size=(count, 3))).astype(np.int64).clip(1, 70000)
    batch = np.where(rng.random(count) < 0.9, 1, rng.choice([2, 4, 8, 16, 64], size=count))
    metric = np.array(["DeviceEfficiency"] * count, dtype=object)
    if metrics:
        special = rng.random(count) < 0.2
        metric[special] = rng.choice(metrics, size=int(special.sum()))
    columns: dict[str, Any] = {
        "m": sizes[:, 0],
        "n": sizes[:, 1],
        "k": sizes[:, 2],
        "batch": batch,
        "performance_metric": metric.astype(str),
    }
    for name in ("trans_a", "trans_b", "a_type", "b_type", "c_type", "d_type"):
        columns[name] = np.array([types[c].get(name, "N" if name.startswith("trans") else "Float") for c in choice])
    for name, default in (("hpa", False), ("strided_batched", True), ("stochastic_rounding", False)):
        columns[name] = np.array([bool(types[c].get(name, default)) for c in choice])
    columns["beta"] = 1.0
    return columns, arch


def timed(function: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def timed_cpu(function: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result): on a shared machine the two differ."""
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def bench_master(corpus: Path, name: str, single: int, batch: int, seed: int) -> str:
    lite = name.startswith("hipblaslt_")
    path = corpus / ("masters-hipblaslt" if lite else "masters") / f"{name}.dat"
    load_s, library = timed(lambda: tensilekit.load_master(path))
    index_s, compiled = timed(lambda: compile_library(library))
    rng = np.random.default_rng(seed)
    if lite:
        columns = hipblaslt_queries(library, max(single, batch), rng)
        arch, cu_count = architecture(library)[0], 304 if architecture(library)[0] == "gfx942" else 104
        problems = [hipblaslt_problem_of(columns, i) for i in range(single)]
    else:
        columns, arch = random_queries(library, max(single, batch), rng)
        cu_count = 104
        problems = []
        for i in range(single):
            fields = {k: (v[i].item() if isinstance(v, np.ndarray) else v) for k, v in columns.items()}
            problems.append(GemmProblem(**fields))
    hardware = Hardware(arch=arch, cu_count=cu_count)
    for problem in problems:  # warm: build the caches these queries need
        select_solution(compiled, problem, hardware)
    latencies = []
    clock = time.perf_counter
    for problem in problems:
        start = clock()
        select_solution(compiled, problem, hardware)
        latencies.append(clock() - start)
    median_us = statistics.median(latencies) * 1e6
    batch_columns = {key: (value[:batch] if isinstance(value, np.ndarray) else value) for key, value in columns.items()}
    cols = ProblemColumns.from_arrays(**batch_columns, arch=arch, cu_count=cu_count)
    fresh = compile_library(library)
    cold_s, _ = timed(lambda: select_batch(fresh, cols))
    warm_s, warm_cpu_s, result = timed_cpu(lambda: select_batch(fresh, cols))
    found = int((result.indices >= 0).sum())
    verdict_single = "ok" if median_us <= TARGET_SINGLE_US else "MISS"
    warm_qps = batch / warm_s
    verdict_batch = "ok" if warm_qps >= TARGET_BATCH_QPS else "MISS"
    size_mib = path.with_suffix(".yaml").stat().st_size / 2**20
    name = f"{name} ({compiled.runtime.name})"
    return (
        f"{name:32s} {size_mib:6.2f} {len(library.solutions):5d} {load_s * 1e3:8.1f} {index_s * 1e3:8.1f} "
        f"{median_us:8.1f} {verdict_single:>5s} {batch / cold_s:11.0f} {warm_qps:11.0f} {verdict_batch:>5s} "
        f"{batch / warm_cpu_s:11.0f} {found / batch:6.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--master", action="append", help="master name (repeatable); default: a representative set")
    parser.add_argument("--single", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    corpus = corpus_path(args.corpus, "masters")
    masters = args.master or list(DEFAULT_MASTERS)
    print(f"k-d tree (SciPy) for bulk search: {'yes' if have_kdtree() else 'no (windowed scan)'}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"targets: single <= {TARGET_SINGLE_US:.0f} us median warm; batch >= {TARGET_BATCH_QPS:,.0f} queries/s")
    print(
        f"{'master':32s} {'YAML MiB':>6s} {'sols':>5s} {'load ms':>8s} {'index ms':>8s} "
        f"{'single us':>8s} {'':>5s} {'cold q/s':>11s} {'warm q/s':>11s} {'':>5s} {'warm CPU':>11s} {'found':>6s}"
    )
    for name in masters:
        print(bench_master(corpus, name, args.single, args.batch, args.seed), flush=True)


if __name__ == "__main__":
    main()

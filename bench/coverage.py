"""Coverage benchmark: ``tensilekit coverage`` on a 10,000-GEMM workload against ``select --queries``.

    python bench/coverage.py [--corpus PATH] [--master NAME] [--gemms N] [--repeat R] [--seed S]
    python bench/coverage.py --memory [--gemms N]

The workload is N random distinct GEMMs (default 10 000) in the spirit of the corpus's ``random``
queries (M, N, K log-uniform in 1..70000, the problem types the library serves, a fifth with the
library's special performance metric), each with a call count, written as query JSON lines.
The library is the largest master of ``corpus/masters`` by file size (``--master`` picks another).

Both commands run in this process through click's test runner on the same file, with ``--json``
(the machine-readable output of each), alternating R times (default 5); the table gives the
best wall time and CPU time of each and their ratio (target: coverage <= 1.5x select --queries).
Peak memory is the tracemalloc peak of one more run of each (Python allocations, numpy included).

``--memory``: bytes per distinct GEMM that coverage holds (issue 25: target <= 1 KB). A workload
of N distinct GEMMs (default 50 000; the problem types a hipBLASLt master serves, M, N, K
log-uniform) is read from query JSON lines and classified through ``open_library``'s
``coverage_gemms`` and ``coverage``, the library opened and compiled beforehand; tracemalloc
counts what is still allocated when the report is made (the GEMMs and their report), and the
peak on the way, each divided by N.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
from _corpus import corpus_path
from _selection import random_queries
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli

TARGET_RATIO = 1.5
TARGET_BYTES_PER_GEMM = 1024
MEMORY_MASTER = "masters-hipblaslt/hipblaslt_aldebaran_all.dat"
# problem types hipblaslt_aldebaran_all serves: (trans A, trans B, A/B type, C/D type)
MEMORY_TYPES = (("T", "N", "Float", "Float"), ("T", "T", "Float", "Float"), ("N", "N", "Half", "Half"),
                ("T", "N", "Half", "Half"))  # fmt: skip


def largest_master(corpus: Path) -> str:
    masters = sorted((corpus / "masters").glob("*.dat"), key=lambda path: path.stat().st_size)
    return masters[-1].stem


def write_workload(library: Any, count: int, seed: int, path: Path) -> str:
    rng = np.random.default_rng(seed)
    columns, arch = random_queries(library, count, rng)
    calls = rng.integers(1, 2000, size=count)
    with path.open("w") as stream:
        for i in range(count):
            record = {
                key: (value[i].item() if isinstance(value, np.ndarray) else value) for key, value in columns.items()
            }
            record["calls"] = int(calls[i])
            stream.write(json.dumps(record, separators=(",", ":")) + "\n")
    return arch


def run(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process, output bytes) of one in-process command."""
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = CliRunner().invoke(cli, args)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    if result.exit_code != 0:
        sys.exit(f"{args[0]} failed ({result.exit_code}): {result.output[-2000:]}")
    return wall, cpu, len(result.stdout)


def peak_mib(args: list[str]) -> float:
    gc.collect()
    tracemalloc.start()
    CliRunner().invoke(cli, args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def write_distinct_workload(count: int, seed: int, path: Path) -> int:
    """``count`` query lines of distinct GEMMs of :data:`MEMORY_TYPES`; returns how many are distinct."""
    rng = np.random.default_rng(seed)
    seen: set[tuple[int, ...]] = set()
    with path.open("w") as stream:
        while len(seen) < count:
            m, n, k = (int(v) for v in np.exp(rng.uniform(0.0, np.log(70000.0), size=3)).astype(np.int64).clip(1))
            kind = int(rng.integers(0, len(MEMORY_TYPES)))
            if (m, n, k, kind) in seen:
                continue
            seen.add((m, n, k, kind))
            trans_a, trans_b, ab, cd = MEMORY_TYPES[kind]
            record = {"m": m, "n": n, "k": k, "trans_a": trans_a, "trans_b": trans_b, "a_type": ab, "b_type": ab,
                      "c_type": cd, "d_type": cd, "compute_type": "Float", "calls": int(rng.integers(1, 2000))}  # fmt: skip
            stream.write(json.dumps(record, separators=(",", ":")) + "\n")
    return len(seen)


def memory_per_gemm(corpus: Path, count: int, seed: int) -> None:
    """Print the bytes coverage holds per distinct GEMM (retained and peak) against the target."""
    library = tensilekit.open_library(corpus / MEMORY_MASTER, cu_count=104)
    library.compiled  # noqa: B018 - the library's own memory is not the workload's
    with tempfile.TemporaryDirectory() as scratch:
        workload = Path(scratch) / "workload.jsonl"
        distinct = write_distinct_workload(count, seed, workload)
        gc.collect()
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        start = time.perf_counter()
        gemms, _ = library.coverage_gemms(workload)
        report = library.coverage(gemms)
        wall = time.perf_counter() - start
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    held, top = (current - base) / distinct, (peak - base) / distinct
    print(f"library {MEMORY_MASTER}, {distinct} distinct GEMMs ({len(report.gemms)} classified) in {wall:.1f} s")
    print(f"coverage memory: {held:.0f} bytes per distinct GEMM held, {top:.0f} at the peak")
    verdict = "ok" if held <= TARGET_BYTES_PER_GEMM else "MISS"
    print(f"target: <= {TARGET_BYTES_PER_GEMM} bytes per distinct GEMM held: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--master", help="master name in corpus/masters (default: the largest by file size)")
    parser.add_argument("--gemms", type=int, default=None, help="default 10 000 (--memory: 50 000)")
    parser.add_argument("--memory", action="store_true", help="bytes per distinct GEMM coverage holds")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.memory:
        memory_per_gemm(corpus_path(args.corpus, "masters-hipblaslt"), args.gemms or 50_000, args.seed)
        return
    args.gemms = args.gemms or 10_000
    corpus = corpus_path(args.corpus, "masters")
    name = args.master or largest_master(corpus)
    library_path = corpus / "masters" / f"{name}.dat"
    library = tensilekit.load_master(library_path)
    with tempfile.TemporaryDirectory() as scratch:
        workload = Path(scratch) / "workload.jsonl"
        arch = write_workload(library, args.gemms, args.seed, workload)
        common = ["--library", str(library_path), "--arch", arch, "--cu-count", "104", "--json"]
        commands = {
            "select --queries": ["select", "--queries", str(workload), *common],
            "coverage": ["coverage", str(workload), *common],
        }
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        print(f"library {name} ({len(library.solutions)} kernels), {args.gemms} GEMMs, best of {args.repeat}")
        timings: dict[str, list[tuple[float, float, int]]] = {label: [] for label in commands}
        for command in commands.values():
            run(command)  # warm: imports, first-use caches
        for _ in range(args.repeat):
            for label, command in commands.items():
                timings[label].append(run(command))
        peaks = {label: peak_mib(command) for label, command in commands.items()}
    best = {label: (min(t[0] for t in runs), min(t[1] for t in runs), runs[0][2]) for label, runs in timings.items()}
    base_wall, base_cpu, _ = best["select --queries"]
    print(
        f"{'command':18s} {'wall s':>8s} {'CPU s':>8s} {'wall x':>7s} {'CPU x':>7s} {'peak MiB':>9s} {'output MB':>10s}"
    )
    for label, (wall, cpu, size) in best.items():
        print(
            f"{label:18s} {wall:8.3f} {cpu:8.3f} {wall / base_wall:7.2f} {cpu / base_cpu:7.2f} "
            f"{peaks[label]:9.1f} {size / 1e6:10.1f}"
        )
    ratio = best["coverage"][1] / base_cpu
    print(f"target: coverage <= {TARGET_RATIO}x select --queries (CPU): {'ok' if ratio <= TARGET_RATIO else 'MISS'}")


if __name__ == "__main__":
    main()

"""No-kernel answers: why a GEMM has no kernel, per answer, before and after ``Library.why_not``.

    python bench/no_kernel.py [--corpus PATH] [--master NAME ...] [--gemms N] [--full] [--cli N]

Before issue 25 every command recomputed the reason of each unserved GEMM from the whole library
(``selection.unserved.no_kernel_reason``: the devices of every row, the problem types of every
kernel) — 10-80 ms per answer on big masters, minutes for a workload of unserved GEMMs.
``Library.why_not`` computes the device and problem-type verdict once per (device, problem type)
and caches it. For each master, N unserved GEMMs (default 2 000; random sizes of a problem type
the library lacks, NT Double, and a device it lacks) are answered both ways in this process; the
table gives the time per answer and the ratio (target: <= 0.5 ms per answer, >= 100x).

``--full`` adds ``rocBLAS_Full`` (21 288 kernels, ~7 s to load). ``--cli N`` also times
``select --queries`` and ``select --from-log`` end to end on N unserved GEMMs (in-process), and with
``--before-tree DIR`` (``git archive 4dc7316 | tar -x -C DIR``: tensilekit before issue 25) the
same command of that checkout, for the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _corpus import corpus_path

from tensilekit.library import open_library
from tensilekit.selection.unserved import no_kernel_reason

TARGET_MS = 0.5
DEFAULT_MASTERS = (
    "masters/aldebaran_NN_mixed.dat",
    "masters/aldebaran_DB_TN_dtree.dat",
    "masters-hipblaslt/hipblaslt_gfx942_grid.dat",
    "masters-hipblaslt/hipblaslt_aldebaran_all.dat",
)
FULL = "masterlib/tensile/SolutionLibraries/rocBLAS_Full.dat.gz"


def unserved_type(library: Any) -> tuple[str, str, str]:
    """A problem type (``--type``, transposes) the library has no kernel for."""
    from tensilekit.errors import SelectionError
    from tensilekit.selection.unserved import problem_type_reason

    for kind, trans_a, trans_b in (
        ("Z", "N", "T"),
        ("D", "N", "T"),
        ("X", "N", "N"),
        ("F8", "N", "N"),
        ("B8", "T", "T"),
    ):
        try:
            problem = library.problem(64, 64, 64, type=kind, trans_a=trans_a, trans_b=trans_b)
        except SelectionError:
            continue
        if problem_type_reason(library.served(), problem) is not None:
            return kind, trans_a, trans_b
    raise SystemExit("no unserved problem type found for this library")


def unserved_gemms(library: Any, count: int, rng: np.random.Generator) -> list[tuple[Any, Any]]:
    """``count`` (problem, device) pairs the library has no kernel for: a type it lacks (or
    NT Double), and a tenth on a processor it does not serve."""
    sizes = np.exp(rng.uniform(0, np.log(70000), size=(count, 3))).astype(int) + 1
    wrong_arch = library.hardware("gfx1201")
    if library.device_reason(wrong_arch) is None:  # a generic row serves every device
        wrong_arch = None
    device = library.device or library.hardware(library.processors[0])
    pairs = []
    kind, trans_a, trans_b = unserved_type(library)
    for number, (m, n, k) in enumerate(sizes.tolist()):
        problem = library.problem(m, n, k, type=kind, trans_a=trans_a, trans_b=trans_b)
        pairs.append((problem, wrong_arch if wrong_arch is not None and number % 10 == 0 else device))
    return pairs


def per_answer(function: Any, pairs: list[tuple[Any, Any]], limit_s: float = 20.0) -> tuple[float, int]:
    """Median seconds per answer of ``function(problem, device)`` (stops after ``limit_s``)."""
    times = []
    started = time.perf_counter()
    for problem, device in pairs:
        begin = time.perf_counter()
        function(problem, device)
        times.append(time.perf_counter() - begin)
        if time.perf_counter() - started > limit_s:
            break
    return statistics.median(times), len(times)


def bench_master(corpus: Path, name: str, gemms: int, seed: int) -> str:
    begin = time.perf_counter()
    library = open_library(corpus / name)
    loaded = time.perf_counter() - begin
    if library.device is None:
        library = library.with_device(library.processors[0])
    pairs = unserved_gemms(library, gemms, np.random.default_rng(seed))
    assert all(library.select(p, d).index is None for p, d in pairs[:20]), "the GEMMs must be unserved"
    before, asked_before = per_answer(lambda p, d: no_kernel_reason(library.master, p, d), pairs)
    after, asked_after = per_answer(library.why_not, pairs)
    ratio = before / after if after else float("inf")
    verdict = "ok" if after * 1000 <= TARGET_MS else "MISSED"
    kernels = len(library.master.solutions)
    return (
        f"{Path(name).name:<34} {kernels:>7} {loaded:>7.2f} {before * 1000:>10.3f} ({asked_before:>5}) "
        f"{after * 1000:>9.4f} ({asked_after:>5}) {ratio:>9.0f}x  {verdict}"
    )


def _log_line(m: int, n: int, k: int) -> str:
    """A hipBLASLt log line (mask 64) of a double-precision NT GEMM."""
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {m}, ldb: {n}, ldc: {m}, ldd: {m}, stride_a: 0, "
        "stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: N, transB: T, batch_count: 1, "
        "scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, "
        "bias_source: d, a_type: f64_r, b_type: f64_r, c_type: f64_r, d_type: f64_r, scale_type: f64_r, "
        "bias_type: f64_r, compute_type: c_f64_r, activation_type: none, flush: false, rotating: 0, "
        "cold_iters: 0, iters: 0, call_count: 1 }\n"
    )


def bench_cli(corpus: Path, name: str, lines: int, seed: int, before_tree: str | None) -> list[str]:
    """``select --queries`` and ``select --from-log`` on ``lines`` unserved GEMMs (double NT), end
    to end: this checkout in-process, and with ``before_tree`` (a checkout of tensilekit before
    issue 25) in a subprocess."""
    import os
    import subprocess

    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    rng = np.random.default_rng(seed)
    sizes = (np.exp(rng.uniform(0, np.log(70000), size=(lines, 3))).astype(int) + 1).tolist()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        queries = Path(folder) / "unserved.jsonl"
        queries.write_text(
            "".join(
                json.dumps(
                    {"id": i, "m": m, "n": n, "k": k, "a_type": "Double", "compute_type": "Double", "trans_b": "T"}
                )
                + "\n"
                for i, (m, n, k) in enumerate(sizes)
            )
        )
        log = Path(folder) / "unserved.log"
        log.write_text("".join(_log_line(m, n, k) for m, n, k in sizes))
        for option, path in (("--queries", queries), ("--from-log", log)):
            command = ["select", option, str(path), "-l", str(corpus / name), "--json"]
            begin = time.perf_counter()
            result = CliRunner().invoke(cli, command)
            elapsed = time.perf_counter() - begin
            answers = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
            with_reason = sum(1 for answer in answers if answer.get("reason"))
            row = (
                f"select {option}, {lines} unserved GEMMs on {Path(name).name}: {elapsed:.2f} s "
                f"({elapsed / lines * 1000:.3f} ms each, {with_reason} with a reason)"
            )
            if before_tree:
                env = {**os.environ, "PYTHONPATH": before_tree}
                begin = time.perf_counter()
                subprocess.run([sys.executable, "-m", "tensilekit", *command], env=env, capture_output=True)
                before = time.perf_counter() - begin
                row += f"; before (a subprocess of {before_tree}): {before:.2f} s, ratio {before / elapsed:.0f}x"
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--master", action="append", help="path under the corpus (repeatable)")
    parser.add_argument("--gemms", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--full", action="store_true", help="also rocBLAS_Full (slow to load)")
    parser.add_argument("--cli", type=int, default=0, metavar="N", help="also time select --queries on N lines")
    parser.add_argument(
        "--cli-master", default="masters/aldebaran_NN_mixed.dat", help="--cli's library (it must lack double NT)"
    )
    parser.add_argument(
        "--before-tree", help="a checkout of tensilekit before issue 25 (git archive 4dc7316): --cli runs it too"
    )
    args = parser.parse_args()
    corpus = corpus_path(args.corpus, required="masters")
    masters = list(args.master or DEFAULT_MASTERS) + ([FULL] if args.full else [])
    print(f"no-kernel answers: before = no_kernel_reason per GEMM, after = Library.why_not (cached); "
          f"target <= {TARGET_MS} ms per answer and >= 100x")  # fmt: skip
    print(f"{'master':<34} {'kernels':>7} {'load s':>7} {'before ms':>10} {'(n)':>7} {'after ms':>9} {'(n)':>7} "
          f"{'ratio':>10}")  # fmt: skip
    for name in masters:
        print(bench_master(corpus, name, args.gemms, args.seed), flush=True)
    if args.cli:
        for row in bench_cli(corpus, args.cli_master, args.cli, args.seed, args.before_tree):
            print(row, flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Log-size benchmark: peak memory of ``coverage`` and ``select --from-log`` on a long hipBLASLt log.

    python bench/log_memory.py [--corpus PATH] [--lines N] [--base-lines B]

A ``HIPBLASLT_LOG_MASK=32`` log writes one ``hipblaslt-bench …`` line per call, so a real run logs
millions of lines of a few distinct GEMMs (issue 31 item 9: 1 M lines of 6 GEMMs took 1.7 GB).
Two such logs are written into a temporary folder: B lines (default 100 000) and N lines
(default 1 000 000), both repeating the same 6 GEMMs (~600 bytes a line). Each command runs on
each log in a fresh process (``python -m tensilekit``); the table gives its peak resident memory
(``ru_maxrss``) and wall time. The ratio of the peaks (N lines over B lines) is what is measured:
readers fold repeated lines as they read, so memory grows with the distinct GEMMs, not the lines
(target: ratio <= 1.5; it was ~7.3 for coverage and ~8.2 for select before, 1.87 GB at 1 M lines).
The library is ``masters-hipblaslt/hipblaslt_aldebaran_all.dat`` of the corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _corpus import corpus_path

TARGET_RATIO = 1.5
MASTER = "masters-hipblaslt/hipblaslt_aldebaran_all.dat"
# (m, n, k, transA, transB, type): types and transposes hipblaslt_aldebaran_all serves
GEMMS = (
    (1024, 4, 4096, "T", "N", "f32_r"),
    (4096, 16, 1024, "T", "N", "f32_r"),
    (512, 512, 512, "T", "T", "f32_r"),
    (3072, 8, 1024, "N", "N", "f16_r"),
    (1024, 128, 1024, "T", "N", "f16_r"),
    (8192, 1, 8192, "T", "N", "f32_r"),
)
# runs one command in this fresh process and reports its peak RSS (kB on Linux) on the last line
RUNNER = """
import resource, sys
from tensilekit.cli.main import cli
try:
    cli.main(sys.argv[1:], prog_name="tensilekit", standalone_mode=False)
finally:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def bench_line(m: int, n: int, k: int, trans_a: str, trans_b: str, data: str) -> str:
    """One mask-32 line as hipBLASLt writes it (``logBenchFromTensileDataGemm``)."""
    lda = k if trans_a == "T" else m
    ldb = n if trans_b == "T" else k
    return (
        f"hipblaslt-bench --api_method c -m {m} -n {n} -k {k} --lda {lda} --ldb {ldb} --ldc {m} --ldd {m}  "
        f"--stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 "
        f"--transA {trans_a} --transB {trans_b} --batch_count 1  --a_type {data} --b_type {data} --c_type {data} "
        f"--d_type {data} --scale_type f32_r --bias_type f32_r   --compute_type f32_r --algo_method heuristic "
        "--solution_index -1 --rotating 0 --cold_iters 0 --iters 0 --flush 0 --print_kernel_info 0 "
        "--use_gpu_timer 0 --splitk 0 --wgm 0 --activation_type none --initialization rand_int "
        "--workspace 134217728 --verify 0 --skip_slow_solution_ratio 0\n"
    )


def write_log(path: Path, lines: int) -> None:
    """``lines`` lines repeating the 6 GEMMs in turn."""
    texts = [bench_line(*gemm) for gemm in GEMMS]
    with path.open("w") as stream:
        for start in range(0, lines, 6000):  # 6000 lines a write
            stream.write("".join(texts[number % len(texts)] for number in range(start, min(start + 6000, lines))))


def run(args: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in bytes) of one command in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if not last.isdigit():
        sys.exit(f"{args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, int(last) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--base-lines", type=int, default=100_000)
    args = parser.parse_args()
    library = corpus_path(args.corpus, "masters-hipblaslt") / MASTER
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    results: dict[str, dict[int, tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        logs = {count: Path(folder) / f"log_{count}.log" for count in (args.base_lines, args.lines)}
        for count, path in logs.items():
            write_log(path, count)
        for name in ("coverage", "select"):
            for count, path in logs.items():
                if name == "coverage":
                    command = ["coverage", "-l", str(library), str(path), "-o", str(Path(folder) / f"out_{count}")]
                else:
                    command = ["select", "-l", str(library), "--from-log", str(path), "--json"]
                results.setdefault(name, {})[count] = run(command)
    print(f"{'command':<10} {'lines':>10} {'peak RSS':>10} {'wall':>8}")
    ratios = {}
    for name, by_count in results.items():
        for count, (wall, rss) in by_count.items():
            print(f"{name:<10} {count:>10} {rss / 2**20:>8.0f} MB {wall:>6.1f} s")
        ratios[name] = by_count[args.lines][1] / by_count[args.base_lines][1]
    for name, ratio in ratios.items():
        verdict = "ok" if ratio <= TARGET_RATIO else "MISS"
        print(f"{name}: peak at {args.lines} lines / peak at {args.base_lines} lines = {ratio:.2f} "
              f"(target <= {TARGET_RATIO}): {verdict}")  # fmt: skip
    print(json.dumps({"ratios": ratios}))


if __name__ == "__main__":
    main()

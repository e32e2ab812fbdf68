"""Merge benchmark: every corpus merge case, plus a synthetic large case; prints one table.

    python bench/merge.py [--corpus PATH] [--repeat N]

Per corpus case: wall time of the whole directory merge (load both sides, merge, dump, atomic
write), best of ``--repeat`` runs; target <= 0.5 s for the small cases (inputs under 2 MB). k1's
inputs are two 4 MB files, the size of the synthetic large case, so it gets the large target
(<= 3 s; AMD's tool takes 18 s on it). The ``vs PyYAML`` column is the ratio to a baseline
measured in the same run: PyYAML's C loader reading both inputs and its C dumper writing the
original back, the least any PyYAML-based merge tool does. The synthetic case is the ~4 MB k1 original
plus an incremental file with a 767-entry table built from k1's incremental kernels (every
original size re-tuned, plus the new ones); target <= 3 s. Peak memory is measured in a fresh
subprocess as the growth of the resident set (VmHWM) over the interpreter after a small warm-up
merge (so lazily imported modules are not counted); target <= 10x the input size.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _corpus import corpus_path

from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml, parse_yaml
from tensilekit.merge import Compat, MergePolicy, merge_directories

LARGE_CASE = "k1_large_original_sizes_only"
WARM_UP_CASE = "i2_hip_file_alone_default_policy"

_MEMORY_CHILD = """
import json, sys, resource
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
from tensilekit.merge import Compat, MergePolicy, merge_directories
original, incremental, output, compat, warm_original, warm_incremental = sys.argv[1:7]
# a small merge first, so lazily imported modules and caches are not counted as the merge's
merge_directories(warm_original, warm_incremental, output, MergePolicy(compat=Compat(compat)))
baseline = status("VmRSS:")
merge_directories(original, incremental, output, MergePolicy(compat=Compat(compat)))
print(json.dumps({"baseline": baseline, "peak": status("VmHWM:")}))
"""


def policy_for(case: Path) -> MergePolicy:
    """The policy a case asks for: its COMMAND when present, else what its name describes."""
    command = case / "COMMAND"
    name = case.name
    options: dict[str, Any] = {}
    if command.exists():
        text = command.read_text()
        tool, _, rest = text.partition("(")
        flags = shlex.split(rest.partition(")")[2])[3:]
        if "tensilelite" in tool:
            options["compat"] = Compat.TENSILELITE
        for position, flag in enumerate(flags):
            if flag == "--force_merge":
                options["force_merge"] = flags[position + 1].lower() in ("true", "1")
            elif flag == "--notrim":
                options["trim"] = False
            elif flag == "--no_eff":
                options["no_eff"] = True
            elif flag == "--add_solution_tags":
                options["add_solution_tags"] = True
        return MergePolicy(**options)
    if "tensilelite" in name:
        options["compat"] = Compat.TENSILELITE
    if "no_eff" in name:
        options["no_eff"] = True
    if "notrim" in name:
        options["trim"] = False
    if "add_solution_tags" in name:
        options["add_solution_tags"] = True
    if "winner" in name and "by_filename" not in name:
        options["force_merge"] = False
    if "force_true" in name:
        options["force_merge"] = True
    return MergePolicy(**options)


def input_bytes(case: Path) -> int:
    return sum(path.stat().st_size for side in ("original", "incremental") for path in (case / side).glob("*.yaml"))


SMALL_CASE_LIMIT = 2_000_000  # bytes of input


def pyyaml_baseline(original: Path, incremental: Path) -> float:
    """Seconds for PyYAML (C) to load every input file and dump the originals back."""
    started = time.perf_counter()
    for side in (original, incremental):
        for path in sorted(side.glob("*.yaml")):
            data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
            if side == original:
                yaml.dump(data, Dumper=yaml.CSafeDumper, default_flow_style=None)
    return time.perf_counter() - started


def time_merge(original: Path, incremental: Path, policy: MergePolicy, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as output:
            started = time.perf_counter()
            merge_directories(original, incremental, output, policy)
            best = min(best, time.perf_counter() - started)
    return best


def build_large_case(corpus: Path, folder: Path) -> tuple[Path, Path]:
    """k1's original, and an incremental whose table has 767 entries over k1's incremental kernels."""
    case = corpus / "merge" / LARGE_CASE
    (name,) = [path.name for path in (case / "original").glob("*.yaml")]
    original_text = (case / "original" / name).read_text()
    incremental = parse_yaml((case / "incremental" / name).read_text())
    original = parse_yaml(original_text)
    rng = random.Random(767)
    keys = [row[0] for row in original[7]] + [row[0] for row in incremental[7]]
    count = len(incremental[5])
    incremental[7] = [[list(key), [rng.randrange(count), round(rng.uniform(20.0, 95.0), 3)]] for key in keys[:767]]
    (folder / "original").mkdir()
    (folder / "incremental").mkdir()
    (folder / "original" / name).write_text(original_text)
    (folder / "incremental" / name).write_text(dump_yaml(incremental, AMD_LOGIC_STYLE))
    return folder / "original", folder / "incremental"


def peak_memory(original: Path, incremental: Path, compat: Compat, warm_up: Path) -> int:
    with tempfile.TemporaryDirectory() as output:
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                _MEMORY_CHILD,
                str(original),
                str(incremental),
                output,
                compat.value,
                str(warm_up / "original"),
                str(warm_up / "incremental"),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    numbers = json.loads(result.stdout.strip().splitlines()[-1])
    return int(numbers["peak"] - numbers["baseline"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = corpus_path(args.corpus, "merge")

    rows: list[tuple[str, str, str, str, str, str, str]] = []
    worst = 0.0
    for case in sorted(path for path in (corpus / "merge").iterdir() if path.is_dir()):
        policy = policy_for(case)
        seconds = time_merge(case / "original", case / "incremental", policy, args.repeat)
        baseline = pyyaml_baseline(case / "original", case / "incremental")
        small = input_bytes(case) < SMALL_CASE_LIMIT
        target = 0.5 if small else 3.0
        if small:
            worst = max(worst, seconds)
        compat = (policy.compat or Compat.TENSILE).value
        rows.append(
            (
                case.name,
                compat,
                f"{input_bytes(case) / 1e6:.2f} MB",
                f"{seconds:.3f} s",
                f"{seconds / baseline:.2f}x",
                f"<= {target:g} s",
                "ok" if seconds <= target else "SLOW",
            )
        )

    with tempfile.TemporaryDirectory() as folder:
        original, incremental = build_large_case(corpus, Path(folder))
        size = sum(path.stat().st_size for side in (original, incremental) for path in side.glob("*.yaml"))
        baseline = pyyaml_baseline(original, incremental)
        for compat in Compat:
            seconds = time_merge(original, incremental, MergePolicy(compat=compat), args.repeat)
            rows.append(
                (
                    "synthetic 4 MB + 767 entries",
                    compat.value,
                    f"{size / 1e6:.2f} MB",
                    f"{seconds:.3f} s",
                    f"{seconds / baseline:.2f}x",
                    "<= 3 s",
                    "ok" if seconds <= 3 else "SLOW",
                )
            )
            peak = peak_memory(original, incremental, compat, corpus / "merge" / WARM_UP_CASE)
            rows.append(
                (
                    "  peak memory (RSS growth)",
                    compat.value,
                    f"{size / 1e6:.2f} MB",
                    f"{peak / 1e6:.1f} MB",
                    f"{peak / size:.1f}x input",
                    f"<= {10 * size / 1e6:.0f} MB",
                    "ok" if peak <= 10 * size else "HIGH",
                )
            )

    headers = ("case", "compat", "input", "measured", "vs PyYAML", "target", "")
    widths = [max(len(str(row[column])) for row in [headers, *rows]) for column in range(len(headers))]
    for row in [headers, tuple("-" * width for width in widths), *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(f"\nslowest small corpus case: {worst:.3f} s (best of {args.repeat}); Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()

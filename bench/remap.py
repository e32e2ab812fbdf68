"""Remap benchmark (issue 24): 100 000 recorded tuning rows between two installed-size libraries.

    python bench/remap.py [--corpus PATH] [--shards N] [--big-solutions N] [--rows N] [--quick] [--profile]

OLD is ``bench/scale.py``'s synthetic installed hipBLASLt library (a lazy ``TensileLibrary_lazy_gfx942``,
the corpus shards, ``--shards`` synthetic ones and one big shard); every solution gets a
``SolutionUID`` of its own, as newer tensilelite writes, since scale.py's copies are otherwise equal
records. NEW is the same build renumbered (shards in reverse order, so nearly every index moves) with
one solution in 50 replaced by another kernel (a new UID: ``missing``). The artefact is a headerless
hipBLASLt tuning file (gfx942, 304 CUs, so NEW's predicates are checked) of ``--rows`` rows over a
pool of GEMMs, each recorded with OLD's heuristic pick, as offline tuning would have stored it.

Measured, each in a fresh process (best of ``--repeat``, wall and CPU seconds): loading both libraries
whole (every shard opened, every solution decoded, as ``tensilekit.remapping.library_records`` does) and
``tensilekit remap ARTEFACT --from OLD --to NEW -o OUT --json`` (target <= 10 s wall at the default
size); the ratio of the two is printed. The remap decodes only the recorded solutions of OLD, so it
can take less than the loading it is compared with plus its own work. ``--profile`` prints the
remap's cProfile top functions.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _corpus import corpus_path
from scale import ARCH, build_masters, renumber_tree

from tensilekit.io.master_io import dump_master_set
from tensilekit.model.library import MasterLibrary

LAZY = f"TensileLibrary_lazy_{ARCH}"


def two_builds(masters: dict[str, MasterLibrary]) -> tuple[dict[str, MasterLibrary], dict[str, MasterLibrary]]:
    """OLD (every solution with a UID) and NEW (renumbered in reverse shard order, 1 in 50 replaced)."""
    shards = [name for name in masters if name != LAZY]
    old_raw: dict[str, dict[str, Any]] = {}
    for name in shards:
        raw = masters[name].to_raw()
        raw["solutions"] = [{**s, "SolutionUID": f"uid-{s['index']}"} for s in raw["solutions"]]
        old_raw[name] = raw
    mapping: dict[int, int] = {}
    for name in reversed(shards):
        for solution in old_raw[name]["solutions"]:
            mapping[solution["index"]] = len(mapping)
    new_raw: dict[str, dict[str, Any]] = {}
    for name in shards:
        raw = old_raw[name]
        solutions = []
        for solution in raw["solutions"]:
            index = mapping[solution["index"]]
            uid = solution["SolutionUID"] if index % 50 else f"retuned-{index}"
            solutions.append({**solution, "index": index, "SolutionUID": uid})
        new_raw[name] = {**raw, "solutions": solutions, "library": renumber_tree(raw["library"], mapping.__getitem__)}
    old = {name: MasterLibrary.model_validate(raw) for name, raw in old_raw.items()}
    new = {name: MasterLibrary.model_validate(raw) for name, raw in new_raw.items()}
    old[LAZY] = new[LAZY] = masters[LAZY]
    return old, new


def _headerless_row(m: int, n: int, k: int, index: int) -> str:
    """One line as hipblaslt-bench appends it to HIPBLASLT_TUNING_FILE (argument_model.hpp@159c1980)."""
    values = [
        "N", "N", "0", "1", m, n, k, "1", m, m * k, "0", k, k * n, m, m * n, m, m * n,
        "f16_r", "f8_r", "f16_r", "f16_r", "f32_f16_r", "0", "0", "0", "0", "0", "none", "0", "f16_r", "512",
        "100.0", "10.0", "12.5", index, "gfx942:sramecc+:xnack-", "304",
    ]  # fmt: skip
    return "    " + ",".join(map(str, values)) + "\n"


def artefact(old_folder: Path, path: Path, rows: int, pool: int) -> int:
    """The tuning file: ``rows`` rows over ``pool`` GEMMs, each with OLD's pick; returns the GEMMs kept."""
    from tensilekit.api import load_for_selection
    from tensilekit.remapping import _judges
    from tensilekit.workload.problem import GemmProblem

    library, loader = load_for_selection(old_folder)
    pick: Callable[..., tuple[int | None, str]] = _judges(library, loader, ARCH, 304)[0]
    rng = random.Random(24)
    sizes = [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    picked: list[tuple[int, int, int, int]] = []
    seen: set[tuple[int, int, int]] = set()
    while len(seen) < pool:
        m, n, k = rng.choice(sizes) + rng.randrange(0, 64), rng.choice(sizes), rng.choice(sizes)
        if (m, n, k) in seen:
            continue
        seen.add((m, n, k))
        # the GridBased HF8 shard's type (corpus select-hipblaslt/hipblaslt_gfx942_grid.jsonl queries)
        problem = GemmProblem(m=m, n=n, k=k, a_type="f16_r", b_type="f8_r", c_type="f16_r", compute_type="f32_f16_r")
        index, _ = pick(problem, ARCH, 304)
        if index is not None:
            picked.append((m, n, k, index))
    with path.open("w") as out:
        out.write("Git Version: 7d9fb683\n")
        for _ in range(rows):
            out.write(_headerless_row(*rng.choice(picked)))
    return len(picked)


_LOAD_BOTH = r"""
import sys, time
start = time.perf_counter()
from tensilekit.api import load_for_selection
from tensilekit.remapping import library_records
for folder in sys.argv[1:]:
    library, loader = load_for_selection(folder)
    library_records(library, loader)
print(time.perf_counter() - start)
"""


def fresh(*arguments: str) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh Python process (interpreter start and imports included);
    CPU time says what the machine's other load does not (the wall time is what the target is)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *arguments], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(arguments)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--shards", type=int, default=220)
    parser.add_argument("--big-solutions", type=int, default=16000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--pool", type=int, default=2000, help="distinct GEMMs the rows are drawn from")
    parser.add_argument("--quick", action="store_true", help="40 shards, 2 000-solution big shard, 10 000 rows")
    parser.add_argument("--profile", action="store_true", help="print the remap's cProfile top functions")
    parser.add_argument("--keep", help="build in this folder and keep it")
    args = parser.parse_args()
    if args.quick:
        args.shards, args.big_solutions, args.rows, args.pool = 40, 2000, 10_000, 500
    corpus = corpus_path(args.corpus, "masters-hipblaslt")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tensilekit-remap-"))
    try:
        start = time.perf_counter()
        old, new = two_builds(build_masters(corpus, args.shards, args.big_solutions)[0])
        dump_master_set(old, folder / "old", "msgpack", mapping=True)
        dump_master_set(new, folder / "new", "msgpack", mapping=True)
        tuning = folder / "tuning.txt"
        kept = artefact(folder / "old", tuning, args.rows, args.pool)
        solutions = sum(len(master.solutions) for master in old.values())
        print(
            f"two builds of {len(old) - 1} shards, {solutions} solutions each; artefact {args.rows} rows over "
            f"{kept} GEMMs (set up in {time.perf_counter() - start:.0f} s)"
        )
        load = min(fresh("-c", _LOAD_BOTH, str(folder / "old"), str(folder / "new")) for _ in range(args.repeat))
        command = ["-m", "tensilekit", "remap", str(tuning), "--from", str(folder / "old"), "--to", str(folder / "new")]
        command += ["-o", str(folder / "out.txt"), "--json"]
        if args.profile:
            command = ["-m", "cProfile", "-o", str(folder / "remap.prof"), *command]
        remap = min(fresh(*command) for _ in range(1 if args.profile else args.repeat))
        if args.profile:
            import pstats

            pstats.Stats(str(folder / "remap.prof")).sort_stats("tottime").print_stats(25)
        print(f"(fresh processes, best of {args.repeat})       wall s    CPU s")
        print(f"load both libraries whole           {load[0]:8.2f} {load[1]:8.2f}")
        print(f"remap {args.rows:>7} rows, -o and --json  {remap[0]:8.2f} {remap[1]:8.2f}")
        print(f"ratio remap / load                  {remap[0] / load[0]:8.2f} {remap[1] / load[1]:8.2f}")
        if args.rows >= 100_000 and args.shards >= 220:
            print(f"target <= 10 s wall: {'met' if remap[0] <= 10 else 'MISSED'}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

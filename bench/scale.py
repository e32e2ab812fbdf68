"""Scale benchmark (issue 18): a production-size installed hipBLASLt library, in three forms.

    python bench/scale.py [--corpus PATH] [--shards N] [--big-solutions N] [--gemms N] [--quick]

Builds, from an AMD-written hipBLASLt master (corpus/masters-hipblaslt/hipblaslt_gfx942_grid.dat),
a lazy library laid out as TensileCreateLibrary installs it: ``TensileLibrary_lazy_gfx942`` +
the per-arch mapping + one shard per placeholder — the corpus shards, ``--shards`` synthetic ones
(copies of a corpus shard under their own operation, with their own solution indices) and one big
shard of ``--big-solutions`` solutions (the GridBased HH shard's solutions replicated, its table
spread over the copies). Written as ``.dat``, ``.dat.zlib`` and indexed ``.dat.zlib``.

Measured in the same run, each in a fresh process (wall time and peak RSS):
  * load of the big shard: bare ``msgpack.unpackb`` (baseline) vs tensilekit ``open_master``
    with one solution decoded — the tree validated, the solutions located (a plain ``.dat`` by one
    header scan, target <= 1.0x; the indexed form by its table, target <= 0.3x) — and, for the
    record, the whole validated model (``load_master``, every solution decoded and checked);
    indexed peak RSS vs the ``.dat`` cases (target <= 0.6x);
  * first ``tensilekit select M N K --library DIR`` answer from a cold process (target <= 1 s),
    and how many shards it read;
  * ``tensilekit coverage`` of ``--gemms`` GEMMs over the whole folder (target <= 30 s).
``--quick`` makes a small library (40 shards, 2 000-solution big shard, 1 000 GEMMs) to show
how the figures grow.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _corpus import corpus_path

from tensilekit.io.installed_library import split_lazy
from tensilekit.io.master_io import dump_master_set, load_master
from tensilekit.model.library import MasterLibrary

ARCH = "gfx942"
FORMS = {"dat": "msgpack", "zlib": "zlib", "indexed": "msgpack-indexed"}


def renumber_tree(node: Any, renumber: Callable[[int], int]) -> Any:
    """A library subtree with every solution reference renumbered (not property or predicate
    ``index`` fields, which name tensor dimensions)."""
    if isinstance(node, list):
        return [renumber_tree(item, renumber) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    out = {key: renumber_tree(value, renumber) for key, value in node.items() if key != "properties"}
    if "properties" in node:
        out["properties"] = node["properties"]
    if kind == "Single" and node["index"] >= 0:
        out["index"] = renumber(node["index"])
    elif kind in ("Matching", "FreeSize"):
        out["table"] = [{**entry, "index": renumber(entry["index"])} for entry in node["table"]]
    return out


def _shifted(raw: dict[str, Any], shift: int) -> dict[str, Any]:
    solutions = [{**solution, "index": solution["index"] + shift} for solution in raw["solutions"]]
    return {**raw, "solutions": solutions, "library": renumber_tree(raw["library"], lambda index: index + shift)}


def build_masters(corpus: Path, shards: int, big: int) -> tuple[dict[str, MasterLibrary], str]:
    """The synthetic installed library's masters (name -> library) and the big shard's name."""
    source = load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat")
    files = split_lazy(source, ARCH)
    lazy_name = f"TensileLibrary_lazy_{ARCH}"
    lazy = files.pop(lazy_name).to_raw()
    raws = {name: lib.to_raw() for name, lib in files.items()}
    big_name = max(raws, key=lambda name: len(raws[name]["solutions"]))
    donor = min(raws, key=lambda name: len(raws[name]["solutions"]))
    next_index = 1 + max(s["index"] for raw in raws.values() for s in raw["solutions"])

    # the big shard: its solutions replicated (new index, unique name), its table spread over them
    base = raws[big_name]
    originals = base["solutions"]
    solutions = list(originals)
    copies: dict[int, list[int]] = {s["index"]: [s["index"]] for s in originals}
    while len(solutions) < big:
        for solution in originals:
            if len(solutions) >= big:
                break
            clone = copy.deepcopy(solution)
            clone["index"] = next_index
            clone["name"] = f"{solution['name']}_copy{next_index}"
            copies[solution["index"]].append(next_index)
            solutions.append(clone)
            next_index += 1
    counter = {"n": 0}

    def spread(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("type") == "Matching":
                table = []
                for entry in node["table"]:
                    options = copies.get(entry["index"], [entry["index"]])
                    counter["n"] += 1
                    table.append({**entry, "index": options[counter["n"] % len(options)]})
                return {**node, "table": table}
            return {key: spread(value) for key, value in node.items()}
        if isinstance(node, list):
            return [spread(item) for item in node]
        return node

    raws[big_name] = {**base, "solutions": solutions, "library": spread(base["library"])}

    # synthetic shards: copies of the smallest shard, each under an operation of its own
    hardware_row = lazy["library"]["rows"][0]["library"]
    template_op, template = next(iter(hardware_row["map"].items()))
    donor_raw = raws[donor]
    for number in range(shards):
        name = f"TensileLibrary_Type_S{number:04d}_Contraction_l_Synthetic_{ARCH}"
        shift = next_index - min(s["index"] for s in donor_raw["solutions"])
        raws[name] = _shifted(copy.deepcopy(donor_raw), shift)
        for solution in raws[name]["solutions"]:
            solution["name"] = f"{solution['name']}_s{number}"
        next_index += len(donor_raw["solutions"]) + 1
        op = f"{template_op}_synthetic{number:04d}"
        row = copy.deepcopy(template)
        # every Placeholder of the copied operation points at this shard
        text = json.dumps(row)
        for placeholder in {n for n in raws if n in text}:
            text = text.replace(f'"{placeholder}"', f'"{name}"')
        hardware_row["map"][op] = json.loads(text)
    masters = {name: MasterLibrary.model_validate(raw) for name, raw in raws.items()}
    masters[lazy_name] = MasterLibrary.model_validate(lazy)
    return masters, big_name


def build_library(corpus: Path, shards: int, big: int, folder: Path) -> dict[str, float]:
    """The synthetic installed library in ``folder/<form>``; returns facts about it."""
    masters, big_name = build_masters(corpus, shards, big)
    solutions = masters[big_name].solutions
    for form, fmt in FORMS.items():
        dump_master_set(masters, folder / form, fmt, mapping=True)  # an installed 2026 library in each form
    big_path = folder / "dat" / f"{big_name}.dat"
    return {
        "shards": len(masters) - 1,
        "big_shard": big_name,
        "big_solutions": len(solutions),
        "big_mb": big_path.stat().st_size / 2**20,
        "total_solutions": sum(len(master.solutions) for master in masters.values()),
    }


_CHILD = r"""
import json, sys, time, zlib
import msgpack
mode, path = sys.argv[1], sys.argv[2]
if mode in ("load", "open"):
    from tensilekit.io.master_io import load_master, open_master
start = time.perf_counter()
if mode == "unpackb":
    msgpack.unpackb(open(path, "rb").read(), raw=False, strict_map_key=False)
elif mode == "unpackb-zlib":
    msgpack.unpackb(zlib.decompress(open(path, "rb").read()), raw=False, strict_map_key=False)
elif mode == "load":
    load_master(path)
elif mode == "open":
    lazy = open_master(path)
    lazy.solution(lazy.indices[len(lazy) // 2])
seconds = time.perf_counter() - start
# VmHWM: this process's own peak (ru_maxrss would include the parent's at fork time)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "rss_mib": peak / 1024}))
"""

# a tensilekit command run in-process so its own peak memory can be read at the end
_CLI = r"""
import runpy, sys
sys.argv = ["tensilekit", *sys.argv[1:]]
try:
    runpy.run_module("tensilekit", run_name="__main__")
except SystemExit as done:
    code = done.code
else:
    code = 0
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
sys.stderr.write(f"\nVmHWM {peak}\n")
sys.exit(code if isinstance(code, int) else 1)
"""


def child(mode: str, path: Path) -> dict[str, float]:
    """Run one load in a fresh interpreter (imports excluded from the time)."""
    out = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path)], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def best_of(mode: str, path: Path, repeat: int) -> dict[str, float]:
    runs = [child(mode, path) for _ in range(repeat)]
    return min(runs, key=lambda run: run["seconds"])


def cli(*arguments: str) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MiB, VmHWM of that process) of one ``tensilekit`` command."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CLI, *arguments], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode not in (0, 1):
        sys.exit(f"tensilekit {' '.join(arguments)} failed ({out.returncode}): {out.stderr[-1500:]}")
    peak = int(out.stderr.rsplit("VmHWM", 1)[1].split()[0])
    return seconds, peak / 1024, out.stdout


def workload(path: Path, gemms: int) -> None:
    rng = random.Random(18)
    sizes = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    with path.open("w") as out:
        for _ in range(gemms):
            record = {
                "m": rng.choice(sizes) + rng.randrange(0, 64), "n": rng.choice(sizes), "k": rng.choice(sizes),
                "trans_a": "N", "trans_b": "N", "a_type": "Half", "b_type": "Half", "c_type": "Half",
                "d_type": "Half", "compute_type": "Float",
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--shards", type=int, default=220)
    parser.add_argument("--big-solutions", type=int, default=16000)
    parser.add_argument("--gemms", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="40 shards, 2 000-solution big shard, 1 000 GEMMs")
    parser.add_argument("--keep", help="build the library in this folder and keep it")
    args = parser.parse_args()
    if args.quick:
        args.shards, args.big_solutions, args.gemms = 40, 2000, 1000
    corpus = corpus_path(args.corpus, "masters-hipblaslt")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tensilekit-scale-"))
    try:
        start = time.perf_counter()
        facts = build_library(corpus, args.shards, args.big_solutions, folder)
        print(
            f"library: {facts['shards']} shards, {facts['total_solutions']} solutions; big shard "
            f"{facts['big_solutions']} solutions, {facts['big_mb']:.1f} MB as .dat (built in "
            f"{time.perf_counter() - start:.0f} s)"
        )
        big = str(facts["big_shard"])
        dat = folder / "dat" / f"{big}.dat"
        zl = folder / "zlib" / f"{big}.dat.zlib"
        idx = folder / "indexed" / f"{big}.dat.zlib"
        base = best_of("unpackb", dat, args.repeat)
        base_z = best_of("unpackb-zlib", zl, args.repeat)
        rows = [
            ("msgpack.unpackb (.dat)", base, base, None),
            ("open_master .dat + 1 solution", best_of("open", dat, args.repeat), base, 1.0),
            ("unpackb(zlib.decompress) .dat.zlib", base_z, base, None),
            ("open_master .dat.zlib + 1 solution", best_of("open", zl, args.repeat), base_z, 1.0),
            ("open_master indexed + 1 solution", best_of("open", idx, args.repeat), base, 0.3),
            ("load_master .dat (whole model)", best_of("load", dat, args.repeat), base, None),
        ]
        print(f"\nbig shard load (fresh process, imports excluded, best of {args.repeat})")
        print(f"  {'':38} {'seconds':>8} {'ratio':>6} {'target':>7} {'peak MiB':>9}")
        for label, run, baseline, target in rows:
            ratio = run["seconds"] / baseline["seconds"]
            goal = f"<={target}" if target else ""
            print(f"  {label:38} {run['seconds']:8.3f} {ratio:6.2f} {goal:>7} {run['rss_mib']:9.0f}")
        idx_rss = rows[4][1]["rss_mib"]
        print(
            f"  peak memory indexed / .dat: {idx_rss / rows[1][1]['rss_mib']:.2f} opened, "
            f"{idx_rss / rows[5][1]['rss_mib']:.2f} against the whole model (target <= 0.6)"
        )

        print("\nfirst select on the whole folder (cold process: interpreter, imports, master, shards)")
        # the big shard's problem type, as hipBLASLt's heuristic builds the problem (select-hipblaslt lines)
        record = {
            "id": "q", "arch": ARCH, "trans_a": "N", "trans_b": "N", "a_type": "Half", "b_type": "Float8",
            "c_type": "Half", "d_type": "Half", "compute_type": "f32", "compute_input_type": "Half",
            "workspace_size": 128 << 20, "m": 4096, "n": 4096, "k": 1024, "batch": 1, "alpha": 1.0, "beta": 1.0,
            "c_equals_d": True, "strided_batched": True,
        }  # fmt: skip
        query = folder / "query.jsonl"
        query.write_text(json.dumps(record) + "\n")
        for form in FORMS:
            seconds, rss, out = cli("select", "--library", str(folder / form), "--queries", str(query), "--json")
            answer = json.loads(out.splitlines()[0])
            print(f"  {form:8} {seconds:6.2f} s  peak {rss:5.0f} MiB  index {answer['index']}")
        from tensilekit.io.installed_library import InstalledLibrary
        from tensilekit.selection import compile_library, contraction_problem, hardware_from_query

        library = InstalledLibrary(folder / "zlib")
        tree, loader = library.for_selection()
        compiled = compile_library(tree, loader=loader, runtime="hipblaslt")
        problem = contraction_problem(compiled.runtime.problem_from_query(record))
        compiled.find(problem, hardware_from_query(record, None))
        print(f"  shards read by that query: {len(library.shards_read)} of {facts['shards']}")

        gemms = folder / "gemms.jsonl"
        workload(gemms, args.gemms)
        print(f"\ncoverage of {args.gemms} GEMMs over the whole folder (target <= 30 s)")
        for form in FORMS:
            seconds, rss, _ = cli("coverage", "-l", str(folder / form), "--arch", ARCH, str(gemms), "--json")
            print(f"  {form:8} {seconds:6.2f} s  peak {rss:5.0f} MiB")
        print(f"\nfolder: {folder} ({sum(f.stat().st_size for f in folder.rglob('*') if f.is_file()) / 2**20:.0f} MB)")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

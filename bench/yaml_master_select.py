"""``select M N K`` on the YAML form of the largest master (issue 33): figure beside its anchor.

    python bench/yaml_master_select.py [--corpus PATH] [--runs N]

Figure: ``tensilekit select`` (a whole process, as a user runs it) on ``rocBLAS_Full.yaml.gz``, which
the partial YAML reader (``tensilekit/io/partial_yaml.py``) cuts by indentation and decodes only as
far as the query reaches. Anchor: the same query on ``rocBLAS_Full.dat.gz`` (the lazy msgpack
reader), the same run, alternately. Goal: <= 5 s; the ratio figure/anchor is printed beside it.
Before the partial reader the YAML form took ~9.5 s (the whole 78 MB decoded).
Test: tests/conformance/test_select_corpus.py (the partial read answers as the whole load, and the
largest master is read partially).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from _corpus import corpus_path

QUERY = ["--arch", "gfx803", "--cu-count", "64", "--trans-b", "t", "7680", "5481", "2560", "--json"]
GOAL_S = 5.0


def _run(library: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tensilekit", "select", "--library", library, *QUERY],
                   check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = corpus_path(args.corpus) / "masterlib" / "tensile" / "SolutionLibraries"
    yaml_times, dat_times = [], []
    for _ in range(args.runs):
        yaml_times.append(_run(str(folder / "rocBLAS_Full.yaml.gz")))
        dat_times.append(_run(str(folder / "rocBLAS_Full.dat.gz")))
    figure, anchor = statistics.median(yaml_times), statistics.median(dat_times)
    verdict = "ok" if figure <= GOAL_S else "MISSED"
    print(f"select on rocBLAS_Full.yaml.gz  {figure:6.2f} s   (goal <= {GOAL_S:.0f} s: {verdict})")
    print(f"anchor: same query on .dat.gz   {anchor:6.2f} s")
    print(f"ratio                           {figure / anchor:6.2f}x")


if __name__ == "__main__":
    main()

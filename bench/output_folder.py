"""Output into a crowded folder (issue 31 item 2): ``coverage -o`` and ``build-master --lazy -o``
into an empty folder and into one holding ``--files`` unrelated files (default 30 000).

    python bench/output_folder.py [--files N] [--repeat N]

Each command runs as ``python -m tensilekit`` in a fresh process (best of ``--repeat``, wall
seconds); the ratio crowded/empty is printed per command. Before issue 31 every folder writer
staged the whole folder aside and swapped it in (hard-linking every file it did not write): 11-35 s
against 0.8-2.8 s for ``coverage -o``. Now only the files written are renamed in; what remains
in proportion to the folder is one ``scandir`` of names (killed writers' staging folders).
Test: tests/unit/io/test_output_folders.py (a generous ratio, not a timing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
COMMANDS = {
    "coverage -o": [
        "coverage",
        str(FIXTURES / "logs" / "coverage_sgemm_mask64.log"),
        "--library",
        str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"),
        "-o",
    ],
    "build-master --lazy -o": [
        "build-master",
        "--lazy",
        str(sorted((FIXTURES / "logic").glob("sample_*.yaml"))[0]),
        "-o",
    ],
}


def _run(arguments: list[str], folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tensilekit", *arguments, str(folder)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        crowded = root / "crowded"
        crowded.mkdir()
        for number in range(options.files):
            (crowded / f"unrelated-{number:05d}.bin").write_bytes(b"x")
        print(f"{'command':<24} {'empty s':>8} {'crowded s':>10} {'ratio':>6}")
        for name, arguments in COMMANDS.items():
            empty_times, crowded_times = [], []
            for attempt in range(options.repeat):
                empty = root / f"empty-{attempt}"
                empty_times.append(_run(arguments, empty))
                shutil.rmtree(empty)
                crowded_times.append(_run(arguments, crowded))
            best_empty, best_crowded = min(empty_times), min(crowded_times)
            print(f"{name:<24} {best_empty:>8.2f} {best_crowded:>10.2f} {best_crowded / best_empty:>6.2f}")
        assert len(os.listdir(crowded)) > options.files  # the unrelated files all stayed


if __name__ == "__main__":
    main()

"""build-master benchmark: rebuild each of AMD's 11 generated masters from its logic files.

    python bench/build.py [--corpus PATH] [--repeat N]

Per master (``masters/SOURCES.md``, sources in ``masters-sources/``): the wall time of what
``tensilekit build-master <sources> -o X.yaml`` does (read and parse the logic files, derive every
kernel, build and name the library, write the YAML), median of ``--repeat`` runs, next to a
baseline measured in the same run: PyYAML's C loader (CSafeLoader) reading the same logic files,
the least any Python build of them does. The output is checked byte for byte against AMD's master
on every run. AMD's own Python took 0.7-6.1 s per master on this kind of machine
(spec/selection.md), shown for reference.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml
from _corpus import corpus_path, master_sources
from load import timed

from tensilekit.api import build_master_files
from tensilekit.io.master_io import dump_master


def build_to(paths: list[Path], out: Path) -> None:
    """The ``build-master -o out`` job."""
    (master,) = build_master_files(paths).values()
    dump_master(master, out)


def load_baseline(paths: list[Path]) -> None:
    for path in paths:
        with path.open() as fh:
            yaml.load(fh, Loader=yaml.CSafeLoader)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = corpus_path(args.corpus, "masters-sources")

    header = (
        f"{'master':34s} {'files':>5s} {'MiB':>6s} {'CSafeLoader s':>13s} {'build s':>8s} {'ratio':>6s} {'bytes':>9s}"
    )
    print(header)
    print("-" * len(header))
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for master, paths in master_sources(corpus).items():
            out = Path(tmp) / f"{master}.yaml"
            size = sum(p.stat().st_size for p in paths)
            baseline, _ = timed(lambda paths=paths: load_baseline(paths), args.repeat)
            ours, _ = timed(lambda paths=paths, out=out: build_to(paths, out), args.repeat)
            same = out.read_bytes() == (corpus / "masters" / f"{master}.yaml").read_bytes()
            ratios.append(ours / baseline)
            print(
                f"{master:34s} {len(paths):5d} {size / 2**20:6.2f} {baseline:13.3f} {ours:8.3f} "
                f"{ours / baseline:6.2f} {'identical' if same else 'DIFFERENT':>9s}"
            )
    print(f"\nratio to CSafeLoader: {min(ratios):.2f}-{max(ratios):.2f}x; AMD's Python: 0.7-6.1 s per master")


if __name__ == "__main__":
    main()

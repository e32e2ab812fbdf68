"""Where the benchmarks find AMD's corpus: --corpus, $TENSILEKIT_CORPUS, or ../shared/corpus."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def corpus_path(explicit: str | None, required: str = "logic") -> Path:
    """The corpus folder (it must contain ``required``); exits with a message when absent."""
    candidates = [
        explicit,
        os.environ.get("TENSILEKIT_CORPUS"),
        str(Path(__file__).resolve().parents[2] / "shared" / "corpus"),
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / required).is_dir():
            return Path(candidate)
    sys.exit("corpus not found: pass --corpus or set TENSILEKIT_CORPUS")


def master_sources(corpus: Path) -> dict[str, list[Path]]:
    """Each generated master of ``masters/`` and its source logic files, in merge order.

    ``masters/SOURCES.md`` lists every file of a master with the first 8 hex digits of its blob
    sha, in merge order; ``masters-sources/MANIFEST.csv`` maps each path to its full sha.
    """
    import csv
    import re

    with (corpus / "masters-sources" / "MANIFEST.csv").open() as fh:
        by_sha = {row["git_blob_sha"]: row["path"] for row in csv.DictReader(fh)}
    out: dict[str, list[Path]] = {}
    for line in (corpus / "masters" / "SOURCES.md").read_text().splitlines():
        if not line.startswith("| `"):
            continue
        master = line.split("`")[1]
        files = []
        for prefix in re.findall(r"\(([0-9a-f]{8})…\)", line):
            (path,) = [p for sha, p in by_sha.items() if sha.startswith(prefix)]
            files.append(corpus / "masters-sources" / path)
        out[master] = files
    return out


def byte_code_as_installed() -> None:
    """Let the commands this benchmark starts use compiled byte code, as an installed tensilekit
    does (pip compiles it at install; an editable checkout writes it on first import).

    A machine with ``PYTHONDONTWRITEBYTECODE`` set (this development sandbox) would otherwise
    compile ~40 modules from source in every process, ~80 ms of a 0.2 s ``select``. The byte
    code goes to a temporary ``PYTHONPYCACHEPREFIX`` folder, removed at exit, not into the tree;
    each benchmark's warm-up run writes it."""
    import atexit
    import shutil
    import tempfile

    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is None:
        return  # byte code is written as usual
    folder = tempfile.mkdtemp(prefix="tensilekit-bench-pycache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    print(f"byte code: compiled once into {folder} (PYTHONDONTWRITEBYTECODE was set)", file=sys.stderr)

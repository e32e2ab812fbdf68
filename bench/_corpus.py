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

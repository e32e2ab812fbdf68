"""Package data: the small sample master library ``tensilekit select`` uses by default.

It is tensilekit's own, not a copy of any AMD library: the gfx90a master of the example files
(:mod:`tensilekit.data.examples`, what ``tensilekit examples DIR`` writes), built from
hand-designed logic by tensilekit's build-master and kept here by ``fixtures/logic/make_sample.py``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SAMPLE_LIBRARY = "sample_library.yaml"


def sample_library_path() -> Path:
    """Filesystem path of the embedded sample master library (gfx90a, SGEMM NN + HGEMM-HPA TN)."""
    return Path(str(resources.files(__package__).joinpath(SAMPLE_LIBRARY)))


__all__ = ["SAMPLE_LIBRARY", "sample_library_path"]

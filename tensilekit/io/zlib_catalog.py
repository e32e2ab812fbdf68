"""``.dat.zlib`` catalogs: msgpack compressed with zlib at level 9, and the runtime's probe order.

Followed from ROCm/rocm-libraries (hipBLASLt, rocm-libraries#8294):

* writer: ``projects/hipblaslt/tensilelite/Tensile/LibraryIO.py`` @ 4cbb0598f7c8
  ``writeMsgPack``: ``zlib.compress(msgpack.packb(data), 9)`` written to ``<name>.dat.zlib``
  (the master, every lazy shard and the lazy mapping alike);
* reader: ``projects/hipblaslt/tensilelite/src/msgpack/MessagePack.cpp`` @ 7467240364d9
  ``fileToMsgObject``: callers pass the logical ``<name>.dat``; ``<name>.dat.zlib`` is tried
  first, and only when it is absent *or fails to inflate* is the bare ``<name>.dat`` read. A name
  that already ends in ``.zlib`` is read as given, falling back to the name without it.
  ``readCompressedMsgObject`` accepts one zlib stream and nothing after it.

tensilekit detects the wrapper from the content (``io.detect``), so a compressed catalog reads
the same under any name; this module adds the runtime's name resolution.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from pathlib import Path

from tensilekit.errors import TensilekitError

ZLIB_SUFFIX = ".zlib"
# zlib.compress(raw, 9) as LibraryIO.writeMsgPack calls it
ZLIB_LEVEL = 9


def compress_catalog(payload: bytes) -> bytes:
    """The bytes of ``<name>.dat.zlib`` for a msgpack ``payload``, exactly as AMD's writer makes them."""
    return zlib.compress(payload, ZLIB_LEVEL)


def logical_name(path: str | Path) -> Path:
    """The name the runtime is given for a catalog: ``X.dat`` for ``X.dat.zlib``, else ``path``."""
    path = Path(path)
    return path.with_name(path.name[: -len(ZLIB_SUFFIX)]) if path.name.endswith(ZLIB_SUFFIX) else path


def probe_order(path: str | Path) -> tuple[Path, Path]:
    """The two files ``fileToMsgObject`` tries for ``path``, in order: ``<logical>.zlib``, ``<logical>``."""
    logical = logical_name(path)
    return logical.with_name(logical.name + ZLIB_SUFFIX), logical


def resolve_catalog(path: str | Path) -> Path:
    """The file the runtime opens for ``path`` (``.zlib`` first); ``path`` itself when neither exists."""
    for candidate in probe_order(path):
        if candidate.is_file():
            return candidate
    return Path(path)


def read_catalog_bytes(path: str | Path) -> tuple[bytes, Path]:
    """The decoded-wrapper bytes of the catalog the runtime reads for ``path``, and that file.

    A ``.zlib`` that cannot be inflated falls back to the bare file when there is one (the
    runtime's rule); without one, the error names the ``.zlib`` file.
    """
    from tensilekit.io.files import read_bytes

    compressed, bare = probe_order(path)
    if compressed.is_file():
        try:
            return read_bytes(compressed), compressed
        except TensilekitError:
            if not bare.is_file():
                raise
    target = bare if bare.is_file() else Path(path)
    return read_bytes(target), target


def runtime_view(files: Iterable[Path]) -> list[Path]:
    """``files`` without each bare ``X`` that has an ``X.zlib`` beside it: the files the runtime reads."""
    chosen = list(files)
    present = {str(path) for path in chosen}
    return [path for path in chosen if str(path) + ZLIB_SUFFIX not in present]


__all__ = [
    "ZLIB_LEVEL",
    "ZLIB_SUFFIX",
    "compress_catalog",
    "logical_name",
    "probe_order",
    "read_catalog_bytes",
    "resolve_catalog",
    "runtime_view",
]

"""Reading input files: existence checks, transparent gzip, clear errors."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tensilekit.errors import DecodeError, InputNotFound, Location, UnsupportedFormat
from tensilekit.io.detect import decompress
from tensilekit.io.limits import check_file_size


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes with any gzip/zlib wrapper removed."""
    file = Path(path)
    if not file.exists():
        raise InputNotFound("no such file", Location(file=str(path)))
    if file.is_dir():
        raise UnsupportedFormat("is a directory, expected a file", Location(file=str(path)))
    try:
        check_file_size(file.stat().st_size, str(path))
        data = file.read_bytes()
    except OSError as error:
        raise InputNotFound(f"cannot read: {error.strerror}", Location(file=str(path))) from None
    return decompress(data, str(path))[0]


def decode_text(data: bytes, source: str | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        where = Location(file=source, line=data.count(b"\n", 0, error.start) + 1, col=error.start - line_start + 1)
        raise DecodeError(f"not UTF-8 text (byte {error.start})", where) from None


def read_text(path: str | Path) -> str:
    """The file as text (UTF-8, newlines untouched), gzip read transparently."""
    return decode_text(read_bytes(path), str(path))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic trees (it would rescan them many times)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


__all__ = ["decode_text", "gc_paused", "read_bytes", "read_text"]

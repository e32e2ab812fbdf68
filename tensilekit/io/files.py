"""Reading input files: existence checks, regular files only, transparent gzip, clear errors."""

from __future__ import annotations

import errno
import gc
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tensilekit.errors import DecodeError, InputNotFound, Location, UnsupportedFormat
from tensilekit.io.detect import decompress
from tensilekit.io.limits import check_file_size, current_limits

_NON_REGULAR = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int, where: Location) -> UnsupportedFormat | None:
    """The error for a file that is not a regular file (None for a regular one)."""
    if stat.S_ISDIR(mode):
        return UnsupportedFormat("is a directory, expected a file", where)
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _NON_REGULAR if test(mode)), "not a regular file")
    # a FIFO can block forever and /dev/zero never ends: refused before a byte is read
    return UnsupportedFormat(f"is {kind}, not a regular file; refused unread", where)


def symlink_loop(path: str | Path) -> UnsupportedFormat:
    """The error for ``path`` when it is (or passes through) a symlink loop."""
    return UnsupportedFormat("is a symlink loop, not a file", Location(file=str(path)))


def resolve_path(path: str | Path) -> Path:
    """``Path(path).resolve()``, with a symlink loop an input error instead of a RuntimeError."""
    try:
        return Path(path).resolve()
    except RuntimeError:  # Python < 3.13 spells ELOOP this way
        raise symlink_loop(path) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise symlink_loop(path) from None
        raise InputNotFound(f"cannot resolve: {error.strerror}", Location(file=str(path))) from None


def check_regular_file(path: str | Path, *, missing: str = "no such file") -> os.stat_result:
    """The status of ``path`` when it is a regular file (symlinks followed); ``missing`` is the
    message when it does not exist.

    Raises:
        InputNotFound: no such file (exit 3).
        UnsupportedFormat: a directory, FIFO, device, socket or symlink loop (exit 3).
    """
    where = Location(file=str(path))
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise InputNotFound(missing, where) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise symlink_loop(path) from None
        raise InputNotFound(f"cannot read: {error.strerror}", where) from None
    problem = _not_regular(status.st_mode, where)
    if problem is not None:
        raise problem
    return status


def read_raw_bytes(path: str | Path) -> bytes:
    """The file's bytes as stored (no wrapper removed), refused unread unless it is a regular file
    within the input size limit."""
    check_regular_file(path)
    where = Location(file=str(path))
    try:
        # O_NONBLOCK: a path swapped for a FIFO after the check above must not block the open
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise symlink_loop(path) from None
        raise InputNotFound(f"cannot read: {error.strerror}", where) from None
    with os.fdopen(descriptor, "rb") as stream:
        try:
            status = os.fstat(descriptor)
            problem = _not_regular(status.st_mode, where)
            if problem is not None:
                raise problem
            check_file_size(status.st_size, str(path))
            limit = current_limits().max_input_size
            data = stream.read(status.st_size + 1)
            if len(data) > status.st_size:  # it grew while read: on to one byte past the limit
                more = bytearray(data)
                while len(more) <= limit and (piece := stream.read(1 << 20)):
                    more += piece
                data = bytes(more)
        except OSError as error:
            raise InputNotFound(f"cannot read: {error.strerror}", where) from None
    check_file_size(len(data), str(path))
    return data


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes with any gzip/zlib/zstd wrapper removed (see :func:`read_raw_bytes`)."""
    return decompress(read_raw_bytes(path), str(path))[0]


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
def gc_paused(*, promote: bool = False) -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic trees (it would rescan them many times).

    ``promote`` (a whole file read, not a piece decoded on demand): on the way out, what the
    block allocated is moved to the oldest generation unscanned (a freeze and unfreeze: two list
    splices). Re-enabled as it was, the collector would first scan every object the block left
    alive, ~40 ms for a 4 MB logic file's model. Cyclic garbage made in the block waits for the
    next full collection instead. Not done while someone else has frozen objects (unfreezing
    would undo that too; counting them walks them, hence not on every small decode)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if promote and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


__all__ = [
    "check_regular_file",
    "decode_text",
    "gc_paused",
    "read_bytes",
    "read_raw_bytes",
    "read_text",
    "resolve_path",
    "symlink_loop",
]

"""Where a truncated or damaged msgpack document stops: a structural scan that names the path.

``msgpack.unpackb`` says only "incomplete input"; for a damaged shard of an installed library the
user needs the place (``solutions[812].sizeMapping.depthU``, byte 2 101 127 of 4 202 254). The
scan reads type bytes and lengths only (values are skipped, map keys that are strings are read
to name the path), so it costs a fraction of a decode.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any


class _Stop(Exception):
    def __init__(self, offset: int, path: str, reason: str) -> None:
        super().__init__(reason)
        self.offset, self.path, self.reason = offset, path, reason


_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
          0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}  # fmt: skip
_SIZED = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}  # bin / str: length bytes
_EXT = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_FORMAT = {1: ">B", 2: ">H", 4: ">I"}


class _Scanner:
    def __init__(self, data: bytes) -> None:
        from tensilekit.io.limits import current_limits

        self.data = data
        self.pos = 0
        self.depth = 0
        self.max_depth = current_limits().max_depth

    def need(self, count: int, path: str) -> None:
        if self.pos + count > len(self.data):
            raise _Stop(self.pos, path, "the data ends inside this value (truncated)")

    def number(self, width: int, path: str) -> int:
        self.need(width, path)
        value: int = struct.unpack_from(_FORMAT[width], self.data, self.pos)[0]
        self.pos += width
        return value

    def value(self, path: str) -> Any:
        """Skip one value; returns a short string key when the value is a string (for paths)."""
        self.need(1, path)
        first = self.data[self.pos]
        self.pos += 1
        if first <= 0x7F or first >= 0xE0:
            return None
        if 0x80 <= first <= 0x8F:
            return self.map(first & 0x0F, path)
        if 0x90 <= first <= 0x9F:
            return self.array(first & 0x0F, path)
        if 0xA0 <= first <= 0xBF:
            return self.text(first & 0x1F, path)
        if first in _FIXED:
            self.need(_FIXED[first], path)
            self.pos += _FIXED[first]
            return None
        if first in _SIZED:
            length = self.number(_SIZED[first], path)
            return self.text(length, path) if first >= 0xD9 else self.skip(length, path)
        if first in _EXT:
            length = self.number(_EXT[first], path)
            return self.skip(length + 1, path)
        if first in (0xDC, 0xDD):
            return self.array(self.number(2 if first == 0xDC else 4, path), path)
        if first in (0xDE, 0xDF):
            return self.map(self.number(2 if first == 0xDE else 4, path), path)
        raise _Stop(self.pos - 1, path, f"byte 0x{first:02x} starts no msgpack value (damaged)")

    def skip(self, count: int, path: str) -> None:
        self.need(count, path)
        self.pos += count

    def text(self, length: int, path: str) -> str | None:
        self.need(length, path)
        raw = self.data[self.pos : self.pos + length]
        self.pos += length
        return raw.decode("utf-8", "replace") if length <= 64 else None

    def enter(self, path: str) -> None:
        """One container deeper; the scan recurses, so it stops at the readers' nesting limit."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise _Stop(self.pos - 1, path, f"nested more than {self.max_depth} levels deep (limit: nesting depth)")

    def array(self, count: int, path: str) -> None:
        self.enter(path)
        for number in range(count):
            self.value(f"{path}[{number}]")
        self.depth -= 1

    def map(self, count: int, path: str) -> None:
        self.enter(path)
        for number in range(count):
            key = self.value(f"{path}.<key {number}>")
            name = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key if key is not None else number}]"
            self.value(name.lstrip("."))
        self.depth -= 1


def damage_place(data: bytes) -> str | None:
    """Where msgpack ``data`` (or the zlib stream holding it) stops being readable, as
    ``"<path> at byte N of M: reason"``; None when the whole document scans cleanly."""
    prefix = ""
    if len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0:
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(data)
        except zlib.error as error:
            return f"the zlib stream is damaged ({error})"
        if not inflater.eof:
            prefix = f"the zlib stream ends early (after {len(raw)} inflated bytes); "
        data = raw
    scanner = _Scanner(data)
    try:
        scanner.value("")
    except _Stop as stop:
        return f"{prefix}{stop.path or '<root>'} at byte {stop.offset} of {len(data)}: {stop.reason}"
    if scanner.pos != len(data):
        return f"{prefix}{len(data) - scanner.pos} bytes after the document (damaged)"
    return prefix.rstrip("; ") or None


__all__ = ["damage_place"]

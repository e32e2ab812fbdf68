"""MessagePack decoding and encoding of master libraries, with explicit options.

msgpack 1.0 changed defaults; these are spelled out: strings are UTF-8 (``raw=False``), map keys
may be integers (Tensile's C++ reader accepts positive integer keys, ``strict_map_key=False``),
and binary is written with ``use_bin_type=True`` as Tensile's Python writer does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgpack

from tensilekit.errors import InputTooLarge, InvalidValue, Location, MsgpackDecodeError, format_path
from tensilekit.io.limits import check_depth, current_limits


def parse_msgpack(data: bytes, source: str | None = None) -> Any:
    """Decode one msgpack object; raise :class:`MsgpackDecodeError` on malformed input."""
    longest = current_limits().max_container_length
    try:
        decoded = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=False,
            use_list=True,
            max_array_len=longest,
            max_map_len=longest,
        )
    except (ValueError, msgpack.UnpackException, TypeError, UnicodeDecodeError, RecursionError) as error:
        if isinstance(error, (RecursionError, msgpack.StackError)):  # msgpack's own stack: 1024 levels
            depth = current_limits().max_depth
            offset, parts = locate_failure(data, longest, max_depth=depth)
            where = Location(file=source, path=format_path(parts) if parts else None, offset=offset)
            raise InputTooLarge(f"nested more than {depth} levels deep (limit: nesting depth)", where) from None
        detail = str(error) or type(error).__name__  # msgpack's FormatError has no message
        offset, parts = locate_failure(data, longest)
        where = Location(file=source, path=format_path(parts) if parts else None, offset=offset)
        if "exceeds max_" in detail:  # "1000 exceeds max_array_len(10)"
            raise InputTooLarge(
                f"a msgpack array or map longer than {longest} elements (limit: container length)", where
            ) from None
        if detail == "FormatError":
            detail = "an invalid type byte"
        raise MsgpackDecodeError(f"malformed msgpack: {detail}", where) from None
    # before anything recurses into it; a short object (a solution, ~2 KB) with few bytes that
    # could open a container cannot nest past the limit: not walked
    if (
        type(data) is not bytes
        or len(data) > _BOUNDED_LENGTH
        or len(data.translate(None, _NOT_CONTAINER_HEADERS)) > current_limits().max_depth
    ):
        check_depth(decoded, source)
    return decoded


# Every map or array starts with a header byte of 0x80-0x9F (fixmap, fixarray) or 0xDC-0xDF
# (array16/32, map16/32), so an object nests at most as deep as it has bytes of those values
# (strings and numbers may hold some too: an upper bound). Counted on objects up to
# _BOUNDED_LENGTH bytes (one ``bytes.translate``); longer ones are walked.
_NOT_CONTAINER_HEADERS = bytes(byte for byte in range(256) if not (0x80 <= byte <= 0x9F or 0xDC <= byte <= 0xDF))
_BOUNDED_LENGTH = 1 << 16


# Header byte -> (kind, bytes of the length / value that follow). Kinds: "fixed" (a value of that
# size), "str"/"bin"/"ext" (a length, then that many bytes; ext one more), "array", "map".
_HEADERS: dict[int, tuple[str, int]] = {
    0xC0: ("fixed", 0), 0xC2: ("fixed", 0), 0xC3: ("fixed", 0),
    0xC4: ("bin", 1), 0xC5: ("bin", 2), 0xC6: ("bin", 4),
    0xC7: ("ext", 1), 0xC8: ("ext", 2), 0xC9: ("ext", 4),
    0xCA: ("fixed", 4), 0xCB: ("fixed", 8),
    0xCC: ("fixed", 1), 0xCD: ("fixed", 2), 0xCE: ("fixed", 4), 0xCF: ("fixed", 8),
    0xD0: ("fixed", 1), 0xD1: ("fixed", 2), 0xD2: ("fixed", 4), 0xD3: ("fixed", 8),
    0xD4: ("fixed", 2), 0xD5: ("fixed", 3), 0xD6: ("fixed", 5), 0xD7: ("fixed", 9), 0xD8: ("fixed", 17),
    0xD9: ("str", 1), 0xDA: ("str", 2), 0xDB: ("str", 4),
    0xDC: ("array", 2), 0xDD: ("array", 4), 0xDE: ("map", 2), 0xDF: ("map", 4),
}  # fmt: skip
_SIZED_INTS = frozenset((0xCC, 0xCD, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3))
_SCAN_LIMIT = 5_000_000  # objects; past this the error is reported without an offset


def _header(data: bytes, position: int) -> tuple[str, int, object, int] | None:
    """The msgpack header at ``position``: its kind (as in ``_HEADERS``), the length it announces
    (items of an array or map, bytes of a str/bin/ext payload), a fixint's value, and where the
    header ends (an ext's type byte included). None for 0xC1, which is never used."""
    byte = data[position]
    position += 1
    if byte <= 0x7F or byte >= 0xE0:
        return "fixed", 0, byte if byte <= 0x7F else byte - 256, position
    if byte <= 0x8F:
        return "map", byte & 0x0F, None, position
    if byte <= 0x9F:
        return "array", byte & 0x0F, None, position
    if byte <= 0xBF:
        return "str", byte & 0x1F, None, position
    if byte not in _HEADERS:
        return None
    kind, width = _HEADERS[byte]
    size = 0
    if kind != "fixed":
        size = int.from_bytes(data[position : position + width], "big")
        width += 1 if kind == "ext" else 0
    return kind, size, None, position + width


def locate_failure(data: bytes, longest: int, max_depth: int | None = None) -> tuple[int | None, list[object]]:
    """Byte offset and msgpack path (keys / indices) of the first object that cannot be decoded:
    truncated, an unused header byte, invalid UTF-8, a container over ``longest``, data after
    the end, or (given ``max_depth``) a container nested deeper. Walks the headers only; run on
    the error path."""
    frames: list[_Frame] = []
    position = 0
    for _ in range(_SCAN_LIMIT):
        if position >= len(data):
            return (position, _path(frames)) if frames or position == 0 else (None, [])
        start = position
        header = _header(data, position)
        if header is None:
            return start, _path(frames)
        kind, size, value, position = header
        if kind in ("str", "bin", "ext"):
            if kind == "str" and position + size <= len(data):
                try:
                    value = data[position : position + size].decode("utf-8")
                except UnicodeDecodeError:
                    return start, _path(frames)
            position += size
        if position > len(data) or (kind in ("array", "map") and size > longest):
            return start, _path(frames)
        if kind in ("array", "map") and max_depth is not None and len(frames) >= max_depth:
            return start, _path(frames)
        if kind in ("array", "map") and size:
            frames.append(_Frame(size * 2 if kind == "map" else size, kind == "map"))
            continue
        _advance(frames, value)
        if not frames:
            return (position, []) if position < len(data) else (None, [])
    return None, _path(frames)


def offsets_of(data: bytes, paths: list[list[object]]) -> dict[tuple[object, ...], int]:
    """Byte offsets of the objects at ``paths`` (keys / indices) in msgpack ``data``: where a
    model error points in a binary file. One header walk; run on the error path."""
    wanted = {tuple(path) for path in paths}
    found: dict[tuple[object, ...], int] = {}
    frames: list[_Frame] = []
    position = 0
    for _ in range(_SCAN_LIMIT):
        if position >= len(data) or not wanted - found.keys():
            break
        here = tuple(_path(frames))
        if here in wanted and here not in found and not (frames and frames[-1].at_key):
            found[here] = position
        start = position
        header = _header(data, position)
        if header is None:
            break
        kind, size, value, position = header
        if data[start] in _SIZED_INTS:  # a map key the paths may name
            value = int.from_bytes(data[start + 1 : position], "big", signed=data[start] >= 0xD0)
        if kind == "str":
            value = data[position : position + size].decode("utf-8", errors="replace")
        if kind in ("str", "bin", "ext"):
            position += size
        if position > len(data) or start == position:
            break
        if kind in ("array", "map") and size:
            frames.append(_Frame(size * 2 if kind == "map" else size, kind == "map"))
            continue
        _advance(frames, value)
        if not frames:
            break
    return found


class _Frame:
    """An open container while walking: items left, and which item comes next."""

    __slots__ = ("left", "is_map", "index", "key", "at_key")

    def __init__(self, items: int, is_map: bool) -> None:
        self.left, self.is_map, self.index, self.at_key = items, is_map, 0, is_map
        self.key: object = None

    def part(self) -> object:
        if not self.is_map:
            return self.index
        return None if self.at_key else self.key  # None: at a key, the path ends at the map


def _path(frames: list[_Frame]) -> list[object]:
    parts: list[object] = []
    for frame in frames:
        part = frame.part()
        if part is None:
            break
        parts.append(part)
    return parts


def _advance(frames: list[_Frame], value: object) -> None:
    """An item of the innermost container is complete: step on, closing containers that end."""
    while frames:
        frame = frames[-1]
        if frame.is_map:
            if frame.at_key:
                frame.key = value if isinstance(value, (str, int)) else "?"
            frame.at_key = not frame.at_key
        else:
            frame.index += 1
        frame.left -= 1
        if frame.left > 0:
            return
        frames.pop()
        value = None


def dump_msgpack(data: Any) -> bytes:
    """Encode plain data as Tensile's ``LibraryIO.writeMsgPack`` does."""
    try:
        packed: bytes = msgpack.packb(data, use_bin_type=True)
    except OverflowError as error:  # YAML holds integers msgpack cannot (beyond 64 bits)
        raise InvalidValue(f"cannot be written as msgpack: {error}") from None
    return packed


def solution_spans(unpacker: msgpack.Unpacker) -> Iterator[tuple[Any, int, int]]:
    """Each solution of the msgpack array at ``unpacker``'s position, skipped undecoded but for
    its first ``index`` value: ``(index, start offset, byte length)`` (the index as written, for
    the caller to check)."""
    for _ in range(unpacker.read_array_header()):
        start = unpacker.tell()
        index: Any = None
        for _ in range(unpacker.read_map_header()):
            if unpacker.unpack() == "index" and index is None:
                index = unpacker.unpack()
            else:
                unpacker.skip()
        yield index, start, unpacker.tell() - start


__all__ = ["dump_msgpack", "locate_failure", "offsets_of", "parse_msgpack", "solution_spans"]

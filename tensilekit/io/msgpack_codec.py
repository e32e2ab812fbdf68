"""MessagePack decoding and encoding of master libraries, with explicit options.

msgpack 1.0 changed defaults; these are spelled out: strings are UTF-8 (``raw=False``), map keys
may be integers (Tensile's C++ reader accepts positive integer keys, ``strict_map_key=False``),
and binary is written with ``use_bin_type=True`` as Tensile's Python writer does.
"""

from __future__ import annotations

from typing import Any

import msgpack

from tensilekit.errors import InputTooLarge, InvalidValue, Location, MsgpackDecodeError
from tensilekit.io.limits import current_limits


def parse_msgpack(data: bytes, source: str | None = None) -> Any:
    """Decode one msgpack object; raise :class:`MsgpackDecodeError` on malformed input."""
    longest = current_limits().max_container_length
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=False,
            use_list=True,
            max_array_len=longest,
            max_map_len=longest,
        )
    except (ValueError, msgpack.UnpackException, TypeError, UnicodeDecodeError) as error:
        detail = str(error) or type(error).__name__  # msgpack's FormatError has no message
        if "exceeds max_" in detail:  # "1000 exceeds max_array_len(10)"
            raise InputTooLarge(
                f"a msgpack array or map longer than {longest} elements (limit: container length)",
                Location(file=source),
            ) from None
        raise MsgpackDecodeError(f"malformed msgpack: {detail}", Location(file=source)) from None
    except RecursionError:
        raise MsgpackDecodeError("msgpack nesting too deep", Location(file=source)) from None


def dump_msgpack(data: Any) -> bytes:
    """Encode plain data as Tensile's ``LibraryIO.writeMsgPack`` does."""
    try:
        packed: bytes = msgpack.packb(data, use_bin_type=True)
    except OverflowError as error:  # YAML holds integers msgpack cannot (beyond 64 bits)
        raise InvalidValue(f"cannot be written as msgpack: {error}") from None
    return packed


__all__ = ["dump_msgpack", "parse_msgpack"]

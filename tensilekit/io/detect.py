"""Format and kind detection: YAML vs msgpack, gzip/zlib wrappers, logic file vs master library."""

from __future__ import annotations

import enum
import zlib
from typing import Any

from tensilekit.errors import MsgpackDecodeError, TensilekitError, UnsupportedFormat
from tensilekit.io.limits import inflate


class Format(str, enum.Enum):
    YAML = "yaml"
    MSGPACK = "msgpack"


class Compression(str, enum.Enum):
    NONE = "none"
    GZIP = "gzip"
    ZLIB = "zlib"
    ZSTD = "zstd"  # .yaml.zst logic (io.logic_canonical)


class Kind(str, enum.Enum):
    LOGIC = "logic"
    MASTER = "master"


_ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\xda")


def detect_compression(data: bytes) -> Compression:
    if data[:2] == b"\x1f\x8b":
        return Compression.GZIP
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return Compression.ZSTD
    if len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0:
        return Compression.ZLIB
    return Compression.NONE


def decompress(data: bytes, source: str | None = None) -> tuple[bytes, Compression]:
    """Strip a gzip or zlib wrapper (a ``.dat.zlib`` is its own, detected format)."""
    compression = detect_compression(data)
    try:
        # streamed, stopping at the input size limit: a gzip bomb never materialises
        if compression is Compression.GZIP:
            return inflate(data, 16 + zlib.MAX_WBITS, source), compression
        if compression is Compression.ZLIB:
            return inflate(data, zlib.MAX_WBITS, source), compression
        if compression is Compression.ZSTD:
            from tensilekit.io.logic_canonical import decompress_zstd

            return decompress_zstd(data, source), compression
    except (OSError, zlib.error, EOFError) as error:
        from tensilekit.errors import Location

        raise MsgpackDecodeError(f"damaged {compression.value} data: {error}", Location(file=source)) from None
    return data, compression


def detect_format(data: bytes) -> Format:
    """msgpack masters start with a map header; YAML is text."""
    if not data:
        raise UnsupportedFormat("empty input")
    first = data[0]
    if 0x80 <= first <= 0x8F or first in (0xDE, 0xDF) or 0x90 <= first <= 0x9F or first in (0xDC, 0xDD):
        return Format.MSGPACK
    return Format.YAML


def detect_kind(data: Any, text: str | None = None) -> Kind:
    """A master has ``solutions`` and ``library``; a logic file is a list or a dict with ``Solutions``.

    ``text``: the YAML ``data`` was parsed from. A mapping with only some of a master's keys is a
    master cut short (a truncated file still parses: YAML has no closing bracket at the top), and
    the error says so with the line and column where the text ends.
    """
    if isinstance(data, dict) and "library" in data and ("solutions" in data or "format_version" in data):
        return Kind.MASTER  # format_version: an indexed master (io.indexed_msgpack)
    other = other_kind(data)
    if other is not None:
        raise UnsupportedFormat(f"{other}, not a library: expected a master solution library or a library-logic file")
    if isinstance(data, list) or (isinstance(data, dict) and "Solutions" in data):
        return Kind.LOGIC
    if isinstance(data, dict) and text is not None and _MASTER_KEYS & data.keys():
        raise _cut_short(data, text)
    raise UnsupportedFormat("neither a library-logic file nor a master solution library")


def other_kind(data: Any) -> str | None:
    """What a parsed YAML document that is no library is, in words, when it is a file users mix
    up with one; None otherwise.

    A hipBLASLt profile log (``HIPBLASLT_LOG_MASK=64``: one ``- { function: matmul, … }`` record a
    line) is a valid YAML list, so without this check it reads as a logic file with a list of
    validation errors; the reader must hear what the file is.
    """
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data[:8]):
        first = data[0]
        if "function" in first or {"M", "N", "K"} <= first.keys() or {"m", "n", "k"} <= first.keys():
            return "a hipBLASLt log (HIPBLASLT_LOG_MASK records such as '- { function: matmul, M: …}')"
    if isinstance(data, dict) and "Sizes" in data and ("TRANSA" in data or "TRANSB" in data):
        return "a GEKO size list (TRANSA/TRANSB/Sizes)"
    return None


# TensileCreateLibrary's master keys (a master's YAML is written with sorted keys: library first)
_MASTER_KEYS = frozenset({"library", "solutions", "minimumRequiredVersion"})


def _cut_short(data: dict[Any, Any], text: str) -> TensilekitError:
    """The error for a YAML master that lacks ``library`` or ``solutions``, located at the end of
    the text: truncated when the document-end marker (``...``, which AMD's writer puts last) is
    missing, otherwise damaged."""
    from tensilekit.errors import Location, YamlSyntaxError

    body = text.rstrip()
    lines = body.split("\n")
    where = Location(line=len(lines), col=len(lines[-1]) + 1)
    missing = " and ".join(f"'{key}'" for key in ("library", "solutions") if key not in data)
    if body.endswith("\n...") or body == "...":
        return YamlSyntaxError(f"damaged YAML master library: no {missing}", where)
    return YamlSyntaxError(
        f"truncated or damaged YAML: the master library ends here without {missing} (and without the closing '...')",
        where,
    )


__all__ = [
    "Compression", "Format", "Kind", "decompress", "detect_compression", "detect_format", "detect_kind", "other_kind",
]  # fmt: skip

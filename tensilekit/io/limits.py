"""Bounds on what a reader accepts, so hostile input is an error instead of a crash, hang or bomb.

Checked before the expensive step each protects: the file size before reading, the decompressed
size while inflating (streamed, so a gzip, zlib or zstd bomb never materialises), YAML nesting
depth and integer length before parsing (``yaml_rs`` overflows its stack on ~100 000 nested
brackets and parses a long integer in quadratic time), alias expansion after parsing (the models
would validate every shared copy), msgpack container lengths while unpacking, and nesting of the
decoded tree (YAML, msgpack) and of JSON query lines before anything recurses into it
(:data:`MAX_NESTING_DEPTH`, one limit for every reader).

The defaults accept a 2 GB real library: the largest corpus file decompresses at 28:1, a real
master nests ~30 levels, and no real integer has more than 20 digits. Decompression is bounded by
``max_input_size`` and, unless the user raised that explicitly, by a ratio that only bombs reach.
``tensilekit --max-input-size`` (or :func:`limits`) raises the size limit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import zlib
from collections.abc import Iterator
from typing import Any

from tensilekit.errors import DecodeError, InputTooLarge, Location, MsgpackDecodeError

GIB = 1 << 30

MAX_NESTING_DEPTH = 200
"""Nesting levels every reader accepts (YAML, msgpack, JSON query lines), checked before the
data reaches code that recurses: pydantic, the models, diff and the YAML writer reach Python's
recursion limit from about 495 levels. Real masters nest ~30 levels, their YAML indents 34
columns at most."""


@dataclasses.dataclass(frozen=True)
class InputLimits:
    """Every reader limit in one value (see the module docstring for why each exists)."""

    max_input_size: int = 4 * GIB  # bytes of one decoded input (after decompression)
    explicit_size: bool = False  # the user set max_input_size: no ratio guard below it
    max_compression_ratio: int = 200  # real libraries: <= 28:1; a gzip of zeros: ~1000:1
    ratio_floor: int = 32 << 20  # below this many decompressed bytes the ratio is not checked
    max_depth: int = MAX_NESTING_DEPTH  # YAML / msgpack / JSON nesting levels (real masters: ~30)
    max_integer_digits: int = 1000  # digits in one integer (int64 has 19)
    max_alias_expansion: int = 10  # expanded YAML nodes per distinct node (old files: < 2)
    max_container_length: int = 1 << 25  # elements of one msgpack array or map


_current = InputLimits()


def current_limits() -> InputLimits:
    return _current


def set_max_input_size(size: int | None) -> None:
    """Raise (or lower) the decoded-size limit for this process, which disables the ratio guard;
    ``None`` restores the default limit and the guard."""
    global _current
    if size is None:
        default = InputLimits()
        _current = dataclasses.replace(_current, max_input_size=default.max_input_size, explicit_size=False)
    else:
        _current = dataclasses.replace(_current, max_input_size=size, explicit_size=True)


@contextlib.contextmanager
def limits(**changes: Any) -> Iterator[InputLimits]:
    """Use other limits inside the block (``with limits(max_depth=50): ...``)."""
    global _current
    saved = _current
    _current = dataclasses.replace(saved, **changes)
    try:
        yield _current
    finally:
        _current = saved


def parse_size(text: str) -> int:
    """``"512M"``, ``"3G"``, ``"1500000"`` -> bytes."""
    spelled = text.strip().upper().removesuffix("B").removesuffix("I")
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(spelled[-1:], 1)
    number = spelled[:-1] if factor != 1 else spelled
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (e.g. 3G, 512M, 1000000)") from None
    if not value > 0:
        raise ValueError(f"a size must be positive: {text!r}")
    return int(value * factor)


def _size(count: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= factor:
            return f"{count / factor:.1f} {unit}"
    return f"{count} bytes"


def check_file_size(size: int, source: str | None) -> None:
    limit = _current.max_input_size
    if size > limit:
        raise InputTooLarge(
            f"file is {_size(size)}, over the input size limit of {_size(limit)} (raise it with --max-input-size)",
            Location(file=source),
        )


def inflate(data: bytes, wbits: int, source: str | None) -> bytes:
    """Decompress gzip (``wbits`` 16+15, every member) or zlib data, stopping at the size limit."""
    out = bytearray()
    rest = data
    chunk = 1 << 20
    while rest:
        inflater = zlib.decompressobj(wbits)
        pending = rest
        while True:
            piece = inflater.decompress(pending, chunk)
            pending = inflater.unconsumed_tail
            out += piece
            check_inflated(len(out), len(data) - len(inflater.unused_data) - len(pending), source)
            if inflater.eof or (not pending and not piece):
                break
        if not inflater.eof:
            raise EOFError("compressed data ended before the end-of-stream marker")
        if wbits <= 15 and inflater.unused_data:
            # one zlib stream per file: the runtime refuses trailing bytes (MessagePack.cpp
            # readCompressedMsgObject, ROCm/rocm-libraries@7467240364d9), so they are never ignored
            end = len(data) - len(inflater.unused_data)
            raise MsgpackDecodeError(
                f"the zlib stream ends here, {len(inflater.unused_data)} bytes before the end of the file; "
                "the runtime refuses trailing data",
                Location(file=source, offset=end),
            )
        rest = inflater.unused_data.lstrip(b"\x00") if wbits > 15 else b""  # further gzip members
    return bytes(out)


def check_inflated(produced: int, consumed: int, source: str | None) -> None:
    """Refuse an inflation that has produced ``produced`` bytes from ``consumed`` compressed ones:
    over the size limit, or (unless the user set the size) over the ratio only bombs reach. The
    ratio is checked as output grows, not at the end: a bomb stops after its first ratio_floor
    bytes."""
    current = _current
    if produced > current.max_input_size:
        _too_big(produced, current.max_input_size, None, source)
    ratio = None if current.explicit_size else current.max_compression_ratio
    if ratio is not None and produced > current.ratio_floor and produced > ratio * consumed:
        _too_big(produced, current.max_input_size, ratio, source)


_ZSTD_STEP = 1 << 10
"""Compressed bytes fed to zstd at once: a block inflates at most ~32 768:1 (an RLE block), so
one step makes at most 32 MiB before the guard looks again (zstd's API cannot cap the output)."""


def inflate_zstd(data: bytes, source: str | None) -> bytes:
    """Decompress one zstd frame (a ``.yaml.zst``) under :func:`inflate`'s size and ratio guard.

    Raises:
        InputTooLarge: over the size limit, or a ratio only a bomb reaches (stopped early).
        DecodeError: damaged or truncated data, or bytes after the frame (with their offset: a
            ``.yaml.zst`` is one frame, and a second would silently be left unread or appended).
    """
    import zstandard

    out = bytearray()
    fed = 0
    try:
        inflater = zstandard.ZstdDecompressor().decompressobj(read_across_frames=False)
        while fed < len(data) and not inflater.eof:
            piece = data[fed : fed + _ZSTD_STEP]
            fed += len(piece)
            out += inflater.decompress(piece)
            check_inflated(len(out), fed, source)
    except zstandard.ZstdError as error:
        raise DecodeError(f"damaged zstd data: {error}", Location(file=source)) from None
    if not inflater.eof:
        raise DecodeError("damaged zstd data: the frame ends early", Location(file=source))
    end = fed - len(inflater.unused_data)
    if end < len(data):
        raise DecodeError(
            f"the zstd frame ends here, {len(data) - end} bytes before the end of the file (another frame?); "
            "a .yaml.zst holds one frame",
            Location(file=source, offset=end),
        )
    return bytes(out)


def _too_big(produced: int, limit: int, ratio: int | None, source: str | None) -> None:
    if ratio is not None:
        reason = (
            f"decompresses at more than {ratio}:1 (stopped at {_size(produced)}): a compression bomb? "
            "(pass --max-input-size to accept it)"
        )
    else:
        reason = f"decompresses to more than the input size limit of {_size(limit)} (raise it with --max-input-size)"
    raise InputTooLarge(reason, Location(file=source))


# -- YAML text ---------------------------------------------------------------------------------

# One pass classifies every byte: digits -> "0", brackets -> "[" / "]", "-" and "?" (block
# sequence / complex key marks) -> "-", anything else -> "x"; blanks are dropped, so a compact
# "- - - x" becomes a run of "-". Runs and bracket levels are then found with C-speed scans.
_CLASSES = bytes.maketrans(
    bytes(range(256)),
    bytes(
        ord("0") if 0x30 <= b <= 0x39 else ord("[") if b in b"[{" else ord("]") if b in b"]}" else
        ord("-") if b in b"-?" else ord("x")
        for b in range(256)
    ),
)  # fmt: skip
_ALL_BUT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Blanks, dashes and question marks (a line's indentation and compact "- " / "? ") -> "-", line
# ends kept, anything else -> "x" (see _nesting_bound).
_LINE_PREFIX = bytes.maketrans(
    bytes(range(256)), bytes(ord("-") if b in b" -?" else b if b == 0x0A else ord("x") for b in range(256))
)
_BRACKET_CHUNK = 4096


def _line_of(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def check_yaml_text(text: str, source: str | None, lines: str | None = None) -> int | None:
    """Nesting depth and integer length of YAML ``text``, checked in linear time before parsing
    (a few milliseconds for a 4 MB logic file). ``lines``: the text's distinct lines
    (:func:`~tensilekit.io.yaml_codec.distinct_lines`), when the caller has them: the checks
    that look within a line (digits, indentation, compact dashes) then read a tenth of the text;
    where they find something, it is found again in ``text`` (its place, and the confirmation).

    Returns a bound on how deep the decoded document nests, when the text proves one within
    ``max_depth`` (:func:`_nesting_bound`: the tree need not be walked to check it), else None."""
    current = _current
    data = text.encode("utf-8", errors="replace")
    unique = data if lines is None else lines.encode("utf-8", errors="replace")
    classes = unique.translate(_CLASSES, b" \t")  # "\n" is kept: no run crosses a line end
    if classes.find(b"0" * (current.max_integer_digits + 1)) >= 0:
        # exact place, in the text as written (blanks were dropped above)
        digits = re.search(rb"(?<![0-9])[0-9]{%d}" % (current.max_integer_digits + 1), data)
        if digits is not None:
            line, col = _line_of(data, digits.start())
            raise InputTooLarge(
                f"a number with more than {current.max_integer_digits} digits (limit: integer digits)",
                Location(file=source, line=line, col=col),
            )
    depth = current.max_depth
    # Flow collections: the running count of open brackets (quoted brackets make it an upper
    # bound), over the whole text (their order counts). Chunk by chunk: only a chunk that could
    # reach the limit is stepped through.
    brackets = data.translate(_CLASSES, _ALL_BUT_BRACKETS)
    level = 0
    for start in range(0, len(brackets), _BRACKET_CHUNK):
        chunk = brackets[start : start + _BRACKET_CHUNK]
        opens = chunk.count(b"[")
        if level + opens > depth:
            for byte in chunk:
                level += 1 if byte == 0x5B else -1
                if level > depth:
                    _too_deep(data, _deepest_bracket(data, depth), source)
        else:
            level += 2 * opens - len(chunk)
    # Block collections: each level indents by at least one column, or is one more "- " / "? "
    # of a compact nested sequence on the same line.
    if unique.find(b"\n" + b" " * depth) >= 0:
        _too_deep(data, data.find(b"\n" + b" " * depth) + 1, source)
    if classes.find(b"-" * depth) >= 0:
        # blanks were dropped: confirm "- - - ..." entries, not a comment or scalar of dashes
        compact = re.search(rb"^[ \t]*(?:[-?](?:[ \t]+|$)){%d}" % depth, data, re.M)
        if compact is not None:
            _too_deep(data, compact.start(), source)
    return _nesting_bound(text, unique, brackets, depth)


def _nesting_bound(text: str, unique: bytes, brackets: bytes, depth: int) -> int | None:
    """A bound on how deep ``text``'s document nests, when the text proves one within ``depth``.

    Block collections: along any path each starts right of its parent's column, except a
    sequence under a mapping key (it may start at the key's column), so at most two share a
    column; a collection starts at a line's first character or after a compact ``- `` / ``? ``,
    within the line's run of blanks, dashes and question marks. Flow collections add at most
    :func:`_flow_bound` of the text's brackets. A text with quotes or comments (inside which a
    bracket counts for nothing), tabs, or line breaks other than ``\\n`` gets no bound (its tree
    is walked, as before). ``unique``: the text's lines (each at least once, after a line end
    but for the first line); ``brackets``: its brackets alone, openers as ``[``, closers ``]``."""
    if not text.isascii() or any(character in text for character in "'\"#\t\r"):
        return None
    flow = _flow_bound(brackets, depth)
    if flow is None:
        return None
    reach = (depth - 2 - flow) // 2  # the deepest column a block collection may start at
    if reach < 0 or (b"\n" + unique).translate(_LINE_PREFIX).find(b"\n" + b"-" * (reach + 1)) >= 0:
        return None
    return 2 * reach + 2 + flow


def _flow_bound(brackets: bytes, depth: int) -> int | None:
    """A bound on how deep flow collections nest, from the text's brackets in order (``[`` opens,
    ``]`` closes); None past ``depth``. A bracket in a plain scalar is one outside every flow
    collection (inside one it would be an indicator): the running count, held at 0 where a stray
    closing bracket would take it below, is at least the flow level everywhere. Each pass that
    drops the adjacent pairs (leaf collections: ``[512, 16, 512]``) lowers its peak by one at most."""
    passes = 0
    while b"[]" in brackets and passes < 4:
        brackets = brackets.replace(b"[]", b"")
        passes += 1
    if len(brackets) > 1 << 16:
        return None  # not worth stepping through here: the tree is walked
    level = peak = 0
    for byte in brackets:
        level = level + 1 if byte == 0x5B else max(level - 1, 0)
        peak = max(peak, level)
    bound = peak + passes
    return bound if bound <= depth else None


def _deepest_bracket(data: bytes, depth: int) -> int:
    """Offset of the first bracket that opens level ``depth + 1`` (only run on the error path)."""
    level = 0
    for offset, byte in enumerate(data):
        if byte in b"[{":
            level += 1
            if level > depth:
                return offset
        elif byte in b"]}":
            level -= 1
    return 0


def _too_deep(data: bytes, offset: int, source: str | None) -> None:
    line, col = _line_of(data, max(offset, 0))
    raise InputTooLarge(
        f"nested more than {_current.max_depth} levels deep (limit: nesting depth)",
        Location(file=source, line=line, col=col),
    )


def check_depth(data: Any, source: str | None, *, shared: bool = False, deepest: int | None = None) -> None:
    """Decoded ``data`` nests at most ``max_depth`` containers deep (iteratively: no recursion).

    The text checks bound each way of nesting on its own (brackets, indentation); this bounds
    them mixed, and msgpack, whose bytes have no cheap bound (~5 % of a YAML parse, ~50 % of a
    msgpack unpack, a small part of building the model). ``shared``: containers may be
    shared (YAML aliases), each then counts at its deepest use, and a cycle is too deep.

    ``deepest``: the nesting depth already measured (by a walk the decoder made anyway), so a
    tree within the limit is not walked again.

    Raises:
        InputTooLarge: at the path of the first container past the limit.
    """
    depth = _current.max_depth
    if deepest is not None and deepest <= depth:
        return
    if not shared and _tree_within(data, depth):
        return  # else walked again below, to name the path of the first container past the limit
    stack: list[tuple[Any, int]] = [(data, 1)]
    deepest_use: dict[int, int] = {}
    while stack:
        node, level = stack.pop()
        if level > depth:
            raise InputTooLarge(
                f"nested more than {depth} levels deep (limit: nesting depth)",
                Location(file=source, path=_path_to(data, node, depth)),
            )
        if shared:
            if deepest_use.get(id(node), 0) >= level:
                continue  # its subtree was checked from as deep already
            deepest_use[id(node)] = level
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, level + 1))


def _tree_within(data: Any, depth: int) -> bool:
    """A tree (no shared containers) nests at most ``depth`` containers deep, checked one level at
    a time: a level's containers are gathered by a comprehension, not pushed and popped one by
    one (a partially read master's solutions are checked as each is decoded)."""
    level: list[Any] = [data] if type(data) is dict or type(data) is list else []
    for _ in range(depth):
        if not level:
            return True
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) is dict or type(child) is list
        ]
    return not level


def _path_to(root: Any, target: Any, depth: int) -> str:
    """The path of ``target`` inside ``root`` (only run on the error path; bounded by ``depth``)."""
    from tensilekit.errors import child_path

    stack: list[tuple[Any, str, int]] = [(root, "", 0)]
    while stack:
        node, path, level = stack.pop()
        if node is target:
            return path
        if level > depth:
            continue
        items = node.items() if type(node) is dict else enumerate(node)
        stack.extend((child, child_path(path, key), level + 1) for key, child in items if type(child) in (dict, list))
    return ""


def check_alias_expansion(data: Any, source: str | None) -> None:
    """YAML aliases share containers; the models would copy every use. Bound the expanded size
    (nodes counted with every alias expanded) by a multiple of the size as written."""
    expanded_size: dict[int, int] = {}
    written = 0
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, children_done = stack.pop()
        children = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            if id(node) in expanded_size:
                continue
            written += 1 + len(children)
            expanded_size[id(node)] = 0  # in progress: a cycle back to it counts once
            stack.append((node, True))
            stack.extend((child, False) for child in children if isinstance(child, (dict, list)))
            continue
        expanded_size[id(node)] = 1 + sum(
            expanded_size.get(id(child), 0) if isinstance(child, (dict, list)) else 1 for child in children
        )
    expanded = expanded_size.get(id(data), 0)
    limit = _current.max_alias_expansion * written + 100_000
    if expanded > limit:
        raise InputTooLarge(
            f"YAML aliases expand {written} written nodes to {expanded} (limit: alias expansion, "
            f"{_current.max_alias_expansion}x)",
            Location(file=source),
        )


# -- one JSON line (select --queries, coverage query lines) ---------------------------------------

_LONG_DIGITS: dict[int, re.Pattern[str]] = {}


def load_json_line(text: str) -> Any:
    """``json.loads`` of one line, within the reader limits.

    Raises :class:`~tensilekit.errors.WorkloadLineError` for a line that is not JSON, and
    :class:`~tensilekit.errors.InputTooLarge` for one with a number longer than the
    integer-digits limit (Python refuses to convert over 4 300 digits, and would spend quadratic
    time below that) or nested deeper than the depth limit (the decoder recurses: 100 000
    brackets overflow it); both are :class:`~tensilekit.errors.DecodeError` and their location
    holds the column.
    """
    current = _current
    digits = current.max_integer_digits
    pattern = _LONG_DIGITS.get(digits)
    if pattern is None:
        pattern = _LONG_DIGITS[digits] = re.compile(f"[0-9]{{{digits + 1}}}")
    long_number = pattern.search(text)
    if long_number is not None:
        raise InputTooLarge(
            f"a number with more than {digits} digits (limit: integer digits)",
            Location(col=long_number.start() + 1),
        )
    if text.count("[") + text.count("{") > current.max_depth:
        level = 0
        for offset, char in enumerate(text):
            if char in "[{":
                level += 1
                if level > current.max_depth:
                    raise InputTooLarge(
                        f"nested more than {current.max_depth} levels deep (limit: nesting depth)",
                        Location(col=offset + 1),
                    )
            elif char in "]}":
                level -= 1
    if type(text) is str:
        # json.loads without its checks around the decoder (~1 us a line): a line it decodes
        # whole is what json.loads gives; any other is left to json.loads, for its error
        try:
            value, end = _JSON_DECODER.raw_decode(text)
        except (ValueError, RecursionError):
            pass
        else:
            if end == len(text):
                return value
    from tensilekit.errors import WorkloadLineError

    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise WorkloadLineError(f"not a JSON object: {error.msg}", Location(col=error.colno)) from None
    except (ValueError, RecursionError) as error:  # limits the scans above cannot see (quoted text)
        raise WorkloadLineError(f"not a JSON object: {error}") from None


_JSON_DECODER = json.JSONDecoder()  # json.loads's own (its default decoder)


__all__ = [
    "InputLimits",
    "MAX_NESTING_DEPTH",
    "check_alias_expansion",
    "check_depth",
    "check_file_size",
    "check_inflated",
    "check_yaml_text",
    "current_limits",
    "inflate",
    "inflate_zstd",
    "limits",
    "load_json_line",
    "parse_size",
    "set_max_input_size",
]

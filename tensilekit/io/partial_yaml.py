"""Partial reading of YAML masters (``.yaml``, ``.yaml.gz``) for selection: the YAML form of
:mod:`tensilekit.io.partial_msgpack`.

rocBLAS_Full.yaml (78 MB, 21 288 solutions) decodes in ~5 s; a query reaches one architecture's
row, one operation of its ``ProblemMap`` and a few solutions. :func:`open_partial_yaml` cuts the
text by indentation (``yaml_codec._top_level``/``_cut``, the cut ``lint`` and the sliced load
trust) instead of parsing it:

* each item of ``solutions`` is kept as a text range with its ``index`` (read off its
  ``index:`` line), decoded and validated when first asked for (``LazySolutions``);
* the tree is decoded down to each ``ProblemMap``, whose children are kept as text ranges and
  decoded when first looked up (``LazyNodeMap``).

Each part is decoded by :func:`~tensilekit.io.yaml_codec.parse_yaml` on its own, so it gets
every check a whole load makes (the YAML 1.1 exactness check, the input limits, the model);
a syntax or model error names the file and the line in the whole text. The whole text gets the
linear text checks (``check_yaml_text``) at open.

Anything the cut does not trust (quotes, comments, anchors, tags, a layout that is not AMD's
block style, a solution whose ``index`` is not one plain integer line, a shell that does not
validate) makes :func:`open_partial_yaml` return None: the caller decodes the file whole, which
names the problem and where. Whole-file commands (validate, lint, convert, diff) never come here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pydantic import ValidationError

from tensilekit.errors import InputTooLarge, LibraryFormatError, Location, TensilekitError, format_path
from tensilekit.io.limits import check_depth, check_yaml_text
from tensilekit.io.partial_msgpack import LazyNodeMap, LazySolutions, _Shared, node_at
from tensilekit.io.yaml_codec import _top_level, _TopLevel, _value_region, parse_path, parse_yaml
from tensilekit.model.library import MasterLibrary, ProblemMapNode

# A solution's own ``index`` key: its item's first line (``- index: 5``) or a line of the item's
# mapping (two columns in, as the items of the indentless root ``solutions`` list are written).
# Only a plain decimal spelling: anything else (``0o7``, ``+5``, ``1_0``) is left to a whole load.
_FIRST_INDEX, _INDEX_KEY = "- index: ", "\n  index: "
_PLAIN_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


class _Unsupported(Exception):
    """The text is not one the partial reader trusts: decode it whole instead."""


class YamlText(_Shared):
    """The text of a YAML master, whose ranges are decoded on their own when asked for."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def decode_slice(self, start: int, length: int, prefix: list[object], validate: Any) -> Any:
        """Decode the range (one ``- item`` or one ``key: value``) and validate its value; errors
        located at ``prefix`` and on their line of the whole text."""
        from tensilekit.io.files import gc_paused
        from tensilekit.io.locations import to_format_error

        part = self.text[start : start + length]
        with gc_paused():
            try:
                decoded = parse_yaml(part, self.name)
                value = _one_value(decoded)
            except TensilekitError as error:  # syntax, limits: the path below the range's wrapping
                raise _shifted(error, prefix, self.text.count("\n", 0, start)) from None
            _check_depth_below(value, prefix, self.name)
            try:
                return validate(value)
            except ValidationError as error:
                problem = to_format_error(error, decoded, source=self.name, text=part)
                raise _shifted(problem, prefix, self.text.count("\n", 0, start)) from None


def _one_value(decoded: Any) -> Any:
    """The one item (``- item``) or the one value (``key: value``) a range decodes to."""
    if isinstance(decoded, list) and len(decoded) == 1:
        return decoded[0]
    if isinstance(decoded, dict) and len(decoded) == 1:
        return next(iter(decoded.values()))
    raise LibraryFormatError("a part of the file that is not one item or one key", Location())


def _check_depth_below(value: Any, prefix: list[object], source: str) -> None:
    """The input depth limit counted from the document's root: ``value`` sits below
    ``len(prefix)`` containers (the whole text's nesting is bounded at open, ``check_yaml_text``)."""
    wrapped = value
    for _ in prefix:
        wrapped = [wrapped]
    try:
        check_depth(wrapped, source)
    except InputTooLarge as error:
        inner = parse_path(error.location.path) if error.location is not None and error.location.path else []
        error.location = Location(file=source, path=format_path(prefix + inner[len(prefix) :]))
        raise


def _shifted(error: TensilekitError, prefix: list[object], line0: int) -> TensilekitError:
    """``error`` (and its related ones), found in a range decoded on its own, located in the
    whole text: its path after ``prefix`` (the range's own wrapping, ``[0]`` or its key, dropped),
    its line moved down by ``line0``."""
    for problem in (error, *getattr(error, "related", ())):
        location = problem.location or Location()
        inner = parse_path(location.path)[1:] if location.path else []
        problem.location = dataclasses.replace(
            location,
            file=location.file or None,
            path=format_path(prefix + inner),
            line=None if location.line is None else location.line + line0,
        )
    return error


@dataclasses.dataclass
class _Deferred:
    ranges: dict[str, tuple[int, int]]


class _Reader:
    def __init__(self, text: str, source: YamlText) -> None:
        self.text, self.source = text, source
        self.deferred: list[tuple[list[object], _Deferred]] = []

    def piece(self, region: _TopLevel, number: int, indent: int, path: list[object]) -> Any:
        """The value of one ``key: value`` piece, decoded (with every check) on its own: from its
        line's start (columns as in the file), or from the key when it shares an item's ``- ``."""
        _, start, end = region.pieces[number]
        if not self.text[start - indent : start].strip(" ") and start >= indent:
            start -= indent
        return self.source.decode_slice(start, end - start, path, lambda value: value)

    def node(self, region: _TopLevel, indent: int, path: list[object]) -> dict[str, Any]:
        """A tree node, its ``rows``' libraries read the same way, a ``map``'s children deferred."""
        node: dict[str, Any] = {}
        for key, (number, below) in _plain_keys(region).items():
            _, start, end = region.pieces[number]
            if key == "rows" and below:
                node[key] = [self.row(region, item, indent, [*path, key, at]) for at, item in enumerate(below)]
            elif below:
                raise _Unsupported("an indentless list the reader does not defer")
            elif key == "map":
                children, child_indent = _value_region(self.text, key, start, end, indent, region.lines[number])
                if children is None or children.items:
                    raise _Unsupported("a map that is not a block mapping")
                ranges = {}
                for child, (child_number, child_below) in _plain_keys(children).items():
                    if child_below:
                        raise _Unsupported("a map child that is an indentless list")
                    _, child_start, child_end = children.pieces[child_number]
                    ranges[child] = (child_start - child_indent, child_end - (child_start - child_indent))
                node[key] = _Deferred(ranges)
            else:
                node[key] = self.piece(region, number, indent, [*path, key])
        if isinstance(node.get("map"), _Deferred):
            if node.get("type") != "ProblemMap":
                raise _Unsupported("a 'map' outside a ProblemMap")
            self.deferred.append((path, node["map"]))
            node["map"] = {}
        return node

    def row(self, region: _TopLevel, number: int, indent: int, path: list[object]) -> dict[str, Any]:
        _, start, end = region.pieces[number]
        row_region, row_indent = _value_region(self.text, None, start, end, indent, region.lines[number])
        if row_region is None or row_region.items:
            raise _Unsupported("a row that is not a block mapping")
        row: dict[str, Any] = {}
        for key, (key_number, below) in _plain_keys(row_region).items():
            if below:
                raise _Unsupported("an indentless list in a row")
            library = None
            if key == "library":
                _, key_start, key_end = row_region.pieces[key_number]
                line = row_region.lines[key_number]
                library, library_indent = _value_region(self.text, key, key_start, key_end, row_indent, line)
            if library is not None and not library.items:
                row[key] = self.node(library, library_indent, [*path, key])
            else:
                row[key] = self.piece(row_region, key_number, row_indent, [*path, key])
        return row

    def solutions(self, top: _TopLevel, items: list[int]) -> list[tuple[int, int, int]]:
        """(index, start, length) of each item of ``solutions``, its ``index`` read off its line:
        ``- index: N`` or ``  index: N`` (the item's keys are two columns in), once, outside any
        flow collection of the item (a flow may run over lines less indented than its key)."""
        text = self.text
        entries = []
        for number in items:
            _, start, end = top.pieces[number]
            if text.startswith(_FIRST_INDEX, start):
                at, value_start = start, start + len(_FIRST_INDEX)
            else:
                at = text.find(_INDEX_KEY, start, end)
                value_start = at + len(_INDEX_KEY)
                if at < 0 or text.count("[", start, at) != text.count("]", start, at):
                    raise _Unsupported("a solution whose index the cut does not find")
                if text.count("{", start, at) != text.count("}", start, at):
                    raise _Unsupported("a solution whose index the cut does not find")
            if text.find(_INDEX_KEY, at + 1, end) >= 0:
                raise _Unsupported("a solution with two index lines")
            value_end = text.find("\n", value_start, end)
            spelled = text[value_start : end if value_end < 0 else value_end]
            if _PLAIN_INTEGER.fullmatch(spelled) is None:
                raise _Unsupported("a solution index that is not a plain decimal integer")
            entries.append((int(spelled), start, end - start))
        return entries


# Keys the cut may name as they are spelled: what YAML reads as that very string (no number,
# boolean or null of YAML 1.1 or 1.2); any other key is left to a whole load.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESOLVED_WORDS = frozenset("y n yes no on off true false null".split())


def _plain_keys(region: _TopLevel) -> dict[str, tuple[int, list[int]]]:
    """``region.keys``, when each is a plain string key."""
    for key in region.keys:
        if _PLAIN_KEY.fullmatch(key) is None or key.lower() in _RESOLVED_WORDS:
            raise _Unsupported(f"a key the cut cannot type: {key!r}")
    return region.keys


def open_partial_yaml(name: str, text: str) -> MasterLibrary | None:
    """The YAML master ``text`` (from file ``name``) read partially (see the module docstring), or
    None when the text is not one this reader trusts; the caller then decodes it whole."""
    from tensilekit.io.master_io import master_from_data

    top = _top_level(text)
    if top is None or top.items or "library" not in top.keys or "solutions" not in top.keys:
        return None
    check_yaml_text(text, name)  # the linear limits of the whole text, as a whole load checks them
    source = YamlText(name, text)
    reader = _Reader(text, source)
    try:
        root: dict[str, Any] = {}
        entries: list[tuple[int, int, int]] = []
        for key, (number, below) in _plain_keys(top).items():
            _, start, end = top.pieces[number]
            if key == "solutions":
                if not below:
                    return None
                entries = reader.solutions(top, below)
                root[key] = []
            elif key == "library" and not below:
                region, indent = _value_region(text, key, start, end, 0, top.lines[number])
                if region is None or region.items:
                    return None
                root[key] = reader.node(region, indent, [key])
            elif below:
                return None
            else:
                root[key] = reader.piece(top, number, 0, [key])
    except (_Unsupported, TensilekitError):
        return None  # the whole-file reader reports it, located
    try:
        library = master_from_data(root, source=name)
    except TensilekitError:
        return None
    for where, maps in reader.deferred:
        node = node_at(library, where)
        if not isinstance(node, ProblemMapNode):
            return None
        object.__setattr__(node, "map", LazyNodeMap(source, maps.ranges, where))
    object.__setattr__(library, "solutions", LazySolutions(source, entries))
    return library


PARTIAL_AT_LEAST = 8 * 1024 * 1024
"""Bytes of YAML below which a master is decoded whole: well under a second, and a whole load
checks every part (``select`` refuses a master ``validate`` rejects, issue 32), where a partial
one checks only what a query reaches (as the lazy ``.dat`` reader does)."""


def opens_partial_yaml(data: bytes, name: str) -> MasterLibrary | None:
    """:func:`open_partial_yaml` of a file's bytes (gzip/zlib allowed), or None when they are not
    YAML, smaller than :data:`PARTIAL_AT_LEAST`, or not a text the partial reader trusts."""
    from tensilekit.io.detect import Format, decompress, detect_format
    from tensilekit.io.files import decode_text

    raw, _ = decompress(data, name)
    if len(raw) < PARTIAL_AT_LEAST or detect_format(raw) is not Format.YAML:
        return None
    return open_partial_yaml(name, decode_text(raw, name))


__all__ = ["PARTIAL_AT_LEAST", "YamlText", "open_partial_yaml", "opens_partial_yaml"]

"""YAML decoding (fast, with exact error locations) and encoding in AMD's emitter styles.

Decoding uses ``yaml_rs`` (a Rust YAML parser; on every corpus file it yields data equal to
PyYAML's ``CSafeLoader``, ~30x faster) and falls back to PyYAML's C or pure loader. Locations
for errors are computed only when an error occurs, by composing the text with PyYAML, which
keeps marks (:func:`locate`).

Encoding reproduces what AMD's Python wrote: PyYAML's emitter with ``default_flow_style=None``
(leaf collections in flow style), 2-space indent, width 80, optional ``---``/``...`` markers.
All settings live in one :class:`YamlStyle`; :func:`detect_style` reads them off a file.
Mapping keys are written in the order the data holds them (files loaded by tensilekit keep
their order, new data is sorted by the writer when ``sort_keys`` is set).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import yaml

from tensilekit.errors import Location, YamlSyntaxError, format_path
from tensilekit.io import yaml_emitter
from tensilekit.io.limits import check_alias_expansion, check_depth, check_yaml_text
from tensilekit.io.logic_lines import decode_items

_fast_yaml: Any
try:  # pragma: no cover - exercised implicitly
    import yaml_rs as _fast_yaml
except ImportError:  # pragma: no cover - fallback when the wheel is unavailable
    _fast_yaml = None

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclasses.dataclass(frozen=True)
class YamlStyle:
    """Every emitter setting in one value.

    ``flow_leaves``: collections holding only scalars are written in flow style (PyYAML's
    ``default_flow_style=None``); otherwise everything is block style.
    ``empty_string``: how an empty string is quoted (PyYAML writes ``''``; some hipBLASLt
    tooling writes ``""``).
    """

    explicit_start: bool = False
    explicit_end: bool = False
    sort_keys: bool = True
    flow_leaves: bool = True
    width: int = 80
    indent: int = 2
    empty_string: str = "''"
    bool_spelling: tuple[str, str] = ("true", "false")
    legacy_flow_indent: bool = False
    # (mapping key or "-" for root items, value type name, value) -> spelling as in the source.
    scalar_spellings: Mapping[tuple[Any, str, Any], str] | None = dataclasses.field(
        default=None, compare=False, hash=False, repr=False
    )
    # (anchor path, alias path) pairs: containers the source shared through YAML aliases.
    alias_paths: tuple[tuple[tuple[object, ...], tuple[object, ...]], ...] = ()
    # Full-line comments, each block with the text of the line that followed it in the source.
    comment_blocks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def shares_containers(self) -> bool:
        return bool(self.alias_paths)


AMD_LOGIC_STYLE = YamlStyle()
"""How TensileMergeLibrary, Utilities/merge.py and LibraryIO write logic files."""

AMD_MASTER_STYLE = YamlStyle(explicit_start=True, explicit_end=True)
"""How TensileCreateLibrary writes ``TensileLibrary*.yaml``."""


# Plain scalars that YAML 1.2 (yaml_rs) and PyYAML's YAML 1.1 resolver read differently:
# yes/no/on/off, octal and leading-zero numbers, exponents without a dot or sign, sexagesimal
# numbers, timestamps, underscores, tags, merge keys. AMD's tools read with PyYAML, so a text
# with any of these is decoded by PyYAML (:func:`_fast_parse_is_exact` decides).
_YAML11_STARTS = r"(?:[:?-][ \t]|[\[,{]|\n)[ \t]*"
_YAML11_AMBIGUOUS = re.compile(
    _YAML11_STARTS + r"""(?:"""
    r"""[-+]\.[0-9_]|[-+]?(?:[_.]*_[_.]*[0-9]|0[0-9oO_]|0[bBX]|0x[0-9a-fA-F]*_|[0-9][0-9_]*[eE]|[0-9_]*\.[0-9_]*[eE](?:[0-9_]|[-+][0-9]*_)"""
    r"""|[0-9][0-9_]*:[0-5]?[0-9])"""
    r"""|[0-9]{4}-[0-9]"""
    r"""|(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF|<<|=)(?=[ \t]*(?:$|[,\]}#]|:(?:[ \t]|$)))"""
    r"""|!)""",
    re.M,
)


# _YAML11_AMBIGUOUS's two kinds of start on their own: after a line end (a pattern that begins with
# a literal character is searched for at C speed, and every value starts a line of the joined
# values) and inside a value (after ": ", "- ", "? ", "[" or "{", rare in values).
_YAML11_SPELLING = _YAML11_AMBIGUOUS.pattern[len(_YAML11_STARTS) :]
_YAML11_AT_LINE = re.compile(r"\n[ \t]*" + _YAML11_SPELLING, re.M)
# (one character class first, the kind of start checked behind it: the regex engine then skips
# to those characters at C speed, about twice as fast as trying the alternatives at every place)
_YAML11_INSIDE = re.compile(r"[:?\-\[,{](?:(?<=[:?-])[ \t]|(?<=[\[,{]))[ \t]*" + _YAML11_SPELLING, re.M)

# The text after each place _YAML11_AMBIGUOUS can start, up to a delimiter that is itself such a
# place (or ends a scalar). Logic files repeat a few thousand distinct values, so checking each
# distinct value once is about four times faster than searching the whole text.
_PLAIN_VALUE = re.compile(r"(?:[:?-][ \t]|[\[,{]|\n)[ \t]*([^\n,\]}#]*)")


def distinct_lines(text: str, split: list[str] | None = None) -> str:
    """The lines of ``text``, each once, in the order each first appears after the first line
    (which comes first, with no line end before it, as in ``text``), joined by line ends.

    A 4 MB logic file's ~160 000 lines hold 3 000-13 000 distinct ones (solutions repeat their
    parameters): what holds of every line (a YAML 1.1 spelling, a quoted value, an anchor)
    is found in this text at a tenth of the cost, and a line's first occurrence keeps its
    place. Splitting and hashing run at C speed; computed once per file and shared by the
    YAML 1.1 check (:func:`parse_yaml`) and :func:`detect_style` (``lines=``). ``split``:
    ``text.split("\\n")``, when the caller has it."""
    lines = text.split("\n") if split is None else split
    if len(lines) == 1:
        return text
    rest = dict.fromkeys(lines[1:])  # a first line that recurs is in here too, after a line end
    return lines[0] + "\n" + "\n".join(rest)


def _fast_parse_is_exact(text: str, lines: str | None = None) -> bool:
    """True when no plain scalar of ``text`` reads differently under YAML 1.1 and 1.2.

    Equivalent to ``_YAML11_AMBIGUOUS.search(text) is None`` (a property test holds it to that).
    Neither a value nor the place it starts crosses a line end, so each distinct line is read
    once (``lines``: :func:`distinct_lines` of ``text``, computed here when not given).
    """
    if _YAML11_AMBIGUOUS.search("\n" + text[:256]) is not None:
        return False
    if lines is None:
        lines = distinct_lines(text)
    # each distinct value on a line of its own: a match cannot cross a line end (a lookahead's "$"
    # sees the line end as it saw the end of the value alone), so one search of the joined values
    # decides as one search of each value did, without a Python call per value
    values = "\n" + "\n".join(set(_PLAIN_VALUE.findall(lines)))
    return _YAML11_AT_LINE.search(values) is None and _YAML11_INSIDE.search(values) is None


def share_key_strings(data: Any, *, shared: bool = True) -> Any:
    """Make every equal mapping key one (interned) string object, in place; returns ``data``.

    Both parsers create a new string per key occurrence: a 4 MB logic file has ~160 000 keys but
    ~300 distinct ones, and the copies cost ~10 MB. Dicts are refilled rather than rebuilt so that
    containers YAML aliases share stay shared, and their key order is kept. Containers may be
    ``shared`` (each is refilled once); a tree that has none (no YAML anchor in its text) is walked
    a level at a time, each key sequence interned once (a logic file's 35 000 decision-tree nodes
    share a few).
    """
    _intern_keys(data, shared=shared)
    return data


def _intern_keys(data: Any, *, shared: bool) -> int:
    """:func:`share_key_strings`; returns how deep containers nest (1: ``data`` alone), as
    :func:`~tensilekit.io.limits.check_depth` counts it when nothing is ``shared`` (no aliases).

    ``shared`` (YAML aliases): each container is visited once (its depth is then not the
    deepest use: :func:`~tensilekit.io.limits.check_depth` walks again)."""
    if not shared:
        return _intern_tree_keys(data)
    interned: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 1)]
    deepest = 0
    while stack:
        node, level = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if level > deepest:
            deepest = level
        if type(node) is dict:
            values = list(node.values())
            keys = interned_keys(tuple(node), interned)
            node.clear()
            node.update(zip(keys, values, strict=True))
        elif type(node) is list:
            values = node
        else:
            continue
        below = level + 1
        stack.extend([(value, below) for value in values if type(value) is dict or type(value) is list])
    return deepest


def _intern_tree_keys(data: Any) -> int:
    """:func:`_intern_keys` of a tree (no shared containers), one level at a time: a level's
    containers are gathered by a comprehension, not pushed and popped one by one, and its depth
    is what :func:`~tensilekit.io.limits.check_depth` would walk again to measure (a 4 MB logic
    file: ~35 ms, where a msgpack round trip of each mapping and that walk took ~55 ms)."""
    level = [data] if type(data) is dict or type(data) is list else []
    depth = 0
    # a master's 425 000 table rows and 21 000 solutions repeat a few key sequences
    interned: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    while level:
        depth += 1
        below: list[Any] = []
        for node in level:
            values: Any
            if type(node) is dict:
                values = list(node.values())
                keys = interned_keys(tuple(node), interned)
                node.clear()
                node.update(zip(keys, values, strict=True))
            else:
                values = node
            below += [value for value in values if type(value) is dict or type(value) is list]
        level = below
    return max(depth, 1)


def interned_keys(spelled: tuple[Any, ...], interned: dict[tuple[Any, ...], tuple[Any, ...]]) -> tuple[Any, ...]:
    """``spelled`` (a mapping's keys, in order) with each str key one interned string. A sequence
    of str keys is interned once and kept in ``interned`` (the sequences met so far); one holding
    a key of another type is never kept, as it could equal one spelled apart: (1,) == (True,)."""
    keys = interned.get(spelled)
    if keys is None:
        try:
            keys = interned[spelled] = tuple(map(sys.intern, spelled))
        except TypeError:  # a key that is not exactly str (an int, a bool, None …)
            keys = tuple([sys.intern(key) if type(key) is str else key for key in spelled])
    return keys


SLICED_LOAD_FROM = 1 << 20
"""Texts at least this long are decoded piece by piece where they can be (:func:`_sliced_parts`)."""


PartBuilders = Mapping[str, Callable[[Any], Any]]
"""Top-level key -> what each of its parts becomes as soon as it is decoded (:func:`parse_yaml`).
A builder may have ``of_interned``: the same, for a part whose mapping keys are all interned strings
already (items decoded per entry: :func:`~tensilekit.io.logic_lines.decode_items`)."""

Decode = Callable[[str, Callable[[str], Any]], tuple[Any, int] | None]
"""A caller's decoder of one text, given the parser: what the parser gives for the whole text and
how deep it nests (at most), or None to leave the text to the parser."""


def parse_yaml(
    text: str,
    source: str | None = None,
    *,
    share_keys: bool = True,
    lines: str | None = None,
    parts: PartBuilders | None = None,
    decode: Decode | None = None,
    cut: TextCut | None = None,
) -> Any:
    """Decode one YAML document exactly as PyYAML's ``CSafeLoader`` (AMD's reader) would.

    ``share_keys``: equal mapping keys become one string (:func:`share_key_strings`); a caller
    that builds models sharing them itself passes False (logic files: the open models' key orders).
    ``lines``: :func:`distinct_lines` of ``text``, when the caller has it (else made if needed).
    ``parts``: when the document is a block mapping holding every key of ``parts``, cut into its
    top-level parts (:func:`_top_level`), and its text bounds its nesting within the limit,
    ``parts[key]`` is given each item of that key's indentless sequence (else its whole value) as
    it is decoded, and its result takes the item's place: a builder that makes a model of each
    keeps one part's plain tree alive at a time (a master's solutions). Its keys are then not
    shared (the builders keep what they need). Otherwise the document is decoded as without.
    ``decode``: tried first where the fast parser would read the text (a logic file's solutions,
    :func:`~tensilekit.io.logic_lines.decode_solutions`); every check is made as for the parser's.
    ``cut``: given the text's top-level cut when the document is decoded by its parts, for
    :func:`locate_many` in the same text later (:class:`TextCut`).

    Raises :class:`YamlSyntaxError` with line and column, :class:`InputTooLarge` over a limit
    (:mod:`tensilekit.io.limits`: nesting depth, integer digits, alias expansion).
    """
    if lines is None and _fast_yaml is not None and "&" not in text:
        lines = distinct_lines(text)  # read by the text checks and the YAML 1.1 check alike
    bound = check_yaml_text(text, source, lines)
    anchors = "&" in text  # aliases may share containers, and nest a tree deeper than its text
    # "&": an anchor hides the scalar after it from the YAML 1.1 scan (``&x 010`` is 8 to PyYAML,
    # 10 to yaml_rs); the few files with anchors are decoded by PyYAML
    fast = _fast_yaml is not None and not anchors and _fast_parse_is_exact(text, lines)
    del lines  # (16 MB for rocBLAS_Full: not kept beside the decoded tree)
    data, deepest = _parse_checked(
        text, source, share_keys, fast, None if anchors or bound is None else parts, decode, cut
    )
    if anchors and isinstance(data, (dict, list)):
        check_alias_expansion(data, source)
    if isinstance(data, (dict, list)):  # brackets and indentation mixed (the text check bounds each)
        check_depth(data, source, shared=anchors, deepest=deepest if anchors or bound is None else bound)
    return data


def _parse_checked(
    text: str,
    source: str | None,
    share_keys: bool,
    fast: bool,
    parts: PartBuilders | None = None,
    decode: Decode | None = None,
    cut: TextCut | None = None,
) -> tuple[Any, int | None]:
    """The decoded document and, when no container can be shared and the keys were shared, how
    deep it nests (measured by the key walk; else None: :func:`check_depth` walks). ``fast``:
    yaml_rs reads the text as PyYAML does (no anchor, no YAML 1.1 spelling)."""
    if fast:

        def load(part: str) -> Any:
            return _fast_yaml.loads(
                part, parse_datetime=False, duplicate_key_policy=_fast_yaml.DuplicateKeyPolicy.LastWins
            )

        try:
            decoded = decode(text, load) if decode is not None else None
            if decoded is not None:
                data, deepest = decoded
                return data, _intern_tree_keys(data) if share_keys else deepest
            sliced = (
                _sliced_parts(text, load, parts, cut) if parts is not None or len(text) >= SLICED_LOAD_FROM else None
            )
            data, built = sliced if sliced is not None else (load(text), False)
        except Exception:  # noqa: BLE001 - yaml_rs raises its own types; PyYAML decides below
            pass
        else:  # no anchors: no container is shared, so the key walk measures the depth too
            return data, _intern_tree_keys(data) if share_keys and not built else None
    try:
        data = yaml.load(text, Loader=_SafeLoader)
        return share_key_strings(data) if share_keys else data, None
    except yaml.MarkedYAMLError as error:
        problem = error.problem or error.context or "malformed YAML"
        mark = error.problem_mark or error.context_mark
        if error.context_mark is not None and "end of stream" in problem:
            # An unclosed quote or bracket is only noticed at the end of the file: point at its start.
            mark = error.context_mark
            problem = f"{problem} {error.context}" if error.context else problem
        location = Location(
            file=source,
            line=None if mark is None else mark.line + 1,
            col=None if mark is None else mark.column + 1,
        )
        raise YamlSyntaxError(f"YAML syntax error: {problem}", location) from None
    except yaml.reader.ReaderError as error:  # a control character: the reader knows where
        line_start = text.rfind("\n", 0, error.position) + 1
        where = Location(file=source, line=text.count("\n", 0, error.position) + 1, col=error.position - line_start + 1)
        raise YamlSyntaxError(f"YAML error: {error.reason} (character {error.character!r})", where) from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(f"YAML error: {error}", Location(file=source)) from None
    except RecursionError:
        raise YamlSyntaxError("YAML nesting too deep", Location(file=source)) from None
    except (ValueError, OverflowError) as error:  # a scalar PyYAML resolves but cannot build: 0b_, 2001-13-45
        raise YamlSyntaxError(
            f"YAML error: a scalar that cannot be read as its type ({error})", Location(file=source)
        ) from None


def locate(text: str, path: Sequence[object], source: str | None = None) -> Location:
    """Line and column of the node at ``path`` (keys / indices), as far as the path resolves."""
    location = Location(file=source, path=format_path(path) if path else None)
    (found,) = node_positions(text, [path])
    if found is None:
        return location
    return dataclasses.replace(location, line=found[0], col=found[1])


_PATH_TOKEN = re.compile(r"\[(-?\d+)\]|\[(['\"])(.*?)\2\]|\.?([^.\[\]]+)")


def parse_path(path: str) -> list[object]:
    """``[5][3].MacroTile0`` -> ``[5, 3, "MacroTile0"]`` (inverse of ``errors.format_path``)."""
    parts: list[object] = []
    for match in _PATH_TOKEN.finditer(path):
        number, _, quoted, name = match.groups()
        if number is not None:
            parts.append(int(number))
        elif quoted is not None:
            parts.append(quoted)
        elif name:
            parts.append(name)
    return parts


def locate_many(text: str, paths: Sequence[str], *, cut: TextCut | None = None) -> list[tuple[int, int] | None]:
    """(line, col) of each YAML-path string, reading the document once (``cut``: as for
    :func:`node_positions`)."""
    return node_positions(text, [parse_path(path) for path in paths], cut=cut)


def node_positions(
    text: str, paths: Sequence[Sequence[object]], *, cut: TextCut | None = None
) -> list[tuple[int, int] | None]:
    """(line, col) of the node at each path (keys / indices), or of its deepest ancestor the
    document has; None for every path when the text is not one YAML document. ``cut``: the
    text's top-level cut as decoding it made it (:class:`TextCut`), not made again.

    Walks libyaml's event stream (an eighth of the time of composing the node graph, which
    matters for `lint` on 4 MB logic files) and stops once every path is found; a document
    with aliases is composed instead (an alias's children are reached through its anchor)."""
    wanted = [tuple(str(part) for part in path) for path in paths]
    found = _sliced_positions(text, wanted, cut)
    if found is None:
        prefixes = {path[:depth] for path in wanted for depth in range(len(path) + 1)}
        try:
            found = _walk_events(text, prefixes, set(wanted))
        except yaml.YAMLError:
            return [None] * len(paths)
    if found is None:
        return _composed_positions(text, paths)
    located: list[tuple[int, int] | None] = []
    for path in wanted:
        depth = len(path)
        while depth and path[:depth] not in found:
            depth -= 1
        located.append(found.get(path[:depth]))
    return located


# Characters that make a line's structure depend on more than its indentation: quotes (a quoted
# scalar may run over lines at any indentation), comments, anchors, aliases, tags, block scalars,
# directives, complex keys, tabs, carriage returns and a byte order mark.
# (looked for one at a time: ``in`` scans for one character at memchr speed, a 78 MB master 17
# times in 0.06 s, where one regex of the class took 0.24 s)
_NOT_SLICEABLE = "'\"#&*!|>%@`?\t\r\ufeff"
_TOP_LINE = re.compile(r"^\S", re.M)
_TOP_KEY = re.compile(r"([^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^\n]*?\S)??) *:(?:[ \n]|\Z)")
_TOP_ITEM = re.compile(r"-(?: |$)")
_TOP_BARE_KEY = re.compile(r"[^\n]*?: *")
_TOP_LINE_INDENTED = re.compile(r"^ *(?=\S)", re.M)
_ALL_BUT_BRACKETS_AND_LINES = bytes(b for b in range(256) if b not in b"[]{}\n")


@dataclasses.dataclass(frozen=True)
class _TopLevel:
    """A block document cut at its top-level lines (column 1): each piece is a top-level key with
    its value, or one item of the root sequence or of a key's indentless sequence."""

    pieces: list[tuple[str | None, int, int]]
    """(key, or None for an item; start; end) of each piece, in document order."""
    lines: list[int]
    """The 0-based line each piece starts on."""
    keys: dict[str, tuple[int, list[int]]]
    """Root mapping: each key's piece and its items' pieces (empty unless its value is them)."""
    items: list[int]
    """Root sequence: the pieces of its items."""


def _top_level(text: str) -> _TopLevel | None:
    """``text`` cut at its top-level lines, when nothing can carry a node over a line at column 1
    (no quotes, comments, anchors, tags, block scalars, tabs; flow brackets balanced between
    top-level lines) and those lines are keys (none repeated) and ``- `` items; else None."""
    if any(character in text for character in _NOT_SLICEABLE):
        return None
    first = _TOP_LINE.search(text)
    if first is None:
        return None
    start = first.start()
    if text.startswith("---"):
        if not (text.startswith("---\n") or text == "---"):
            return None
        first = _TOP_LINE.search(text, 4)
        if first is None:
            return None
        start = first.start()
    end_of_document = len(text)
    last = text.rfind("\n...", start - 1)
    if text.startswith("...", start):
        return None
    if last >= 0 and text[last + 1 :].rstrip("\n") == "...":  # the end marker AMD's writer puts last
        end_of_document = last + 1
    return _cut(text, start, end_of_document, 0, text.count("\n", 0, start))


class TextCut:
    """The top-level cut of one YAML text (:func:`_top_level`, or that it has none), kept by
    whoever decodes the text (:func:`parse_yaml`'s ``cut``) for locating paths in the same text
    later (:func:`locate_many`'s): ``lint`` then does not cut rocBLAS_Full's 78 MB twice (0.25 s).
    Small (the pieces' bounds, ~3 MB for 21 000 solutions), where keeping the text is not."""

    def __init__(self) -> None:
        self._kept: tuple[_TopLevel | None, int, int] | None = None  # (the cut, its text's length and hash)

    def keep(self, text: str, top: _TopLevel | None) -> None:
        self._kept = (top, len(text), hash(text))

    def of(self, text: str) -> tuple[_TopLevel | None] | None:
        """(the cut,) when one was kept of ``text`` (the same length and hash: 78 MB hash in
        0.02 s), else None (then ``text`` is cut again)."""
        if self._kept is None:
            return None
        top, length, spelled = self._kept
        return (top,) if len(text) == length and hash(text) == spelled else None


_LINES_AT: dict[int, re.Pattern[str]] = {}

_LINE_START = re.compile(r"\n( *)")
_INDEXED_FROM = 1 << 20  # a top-level piece at least this long is indexed when cut below (locating)


class _LineIndex:
    """The lines of ``text[begin:stop)`` (``begin`` a line start, on 0-based line ``line0``), for
    cutting regions inside it again and again (:func:`_cut`) without reading their text: each
    line's start, the content starts of its non-blank lines by indentation, and the lines whose
    brackets do not balance (flow collections over several lines), with their running sums.
    One pass over the span (rocBLAS_Full's library, 28 MB: ~0.2 s), where cutting each level's
    regions read them again (~1.4 s to locate lint's findings)."""

    def __init__(self, text: str, begin: int, stop: int, line0: int) -> None:
        self.line0 = line0
        self.stop = stop
        self.ends_open = stop == len(text) and not text.endswith("\n")  # a last line without "\n"
        starts: list[int] = []
        by_indent: dict[int, list[int]] = {}
        for match in _LINE_START.finditer(text, begin, stop):
            content = match.end()
            starts.append(match.start() + 1)
            if content < stop and not text[content].isspace():  # as "(?=\S)" in _cut's pattern
                by_indent.setdefault(content - match.start() - 1, []).append(content)
        self.starts = starts
        self.by_indent = by_indent
        # brackets and line ends alone; pairs on one line dropped until none is left
        kept = text[begin:stop].encode("utf-8", errors="replace").translate(None, _ALL_BUT_BRACKETS_AND_LINES)
        while True:
            fewer = kept.replace(b"[]", b"").replace(b"{}", b"")
            if len(fewer) == len(kept):
                break
            kept = fewer
        self.odd_lines: list[int] = [0]  # lines (relative to line0) whose brackets do not balance
        self.squares: list[int] = [0]  # running sums of "[" minus "]" before each of them
        self.curlies: list[int] = [0]
        line = 0
        previous = 0
        for odd in re.finditer(rb"[^\n]+", kept):
            line += kept.count(b"\n", previous, odd.start())
            previous = odd.start()
            spelled = odd.group()
            square = spelled.count(b"[") - spelled.count(b"]")
            curly = spelled.count(b"{") - spelled.count(b"}")
            if square or curly:
                self.odd_lines.append(line + 1)  # the sums hold from the line after it on
                self.squares.append(self.squares[-1] + square)
                self.curlies.append(self.curlies[-1] + curly)

    def line_of(self, offset: int) -> int:
        """The line (relative to ``line0``) holding ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def cut_points(self, start: int, end: int, indent: int, line0: int) -> tuple[list[int], list[int]]:
        """:func:`_cut`'s piece starts (and ``end``) and the 0-based line of each piece."""
        contents = self.by_indent.get(indent, [])
        # a line "\n" + ``indent`` blanks whose line end lies at or after ``start``, content before ``end``
        inside = contents[bisect.bisect_left(contents, start + indent + 1) : bisect.bisect_left(contents, end)]
        lines = [line0] + [self.line0 + self.line_of(content) for content in inside]
        return [start, *inside, end], lines

    def balanced(self, starts: list[int], lines: list[int]) -> bool:
        """Whether each piece's brackets balance (as counting them in its text would tell): a
        piece holds whole lines but for its first line's indentation (or ``- ``) and its last
        line's indentation before the next piece."""
        end = starts[-1]
        last = self.line_of(end) + (1 if self.ends_open and end == self.stop else 0)
        bounds = [line - self.line0 for line in lines] + [last]
        sums = [bisect.bisect_right(self.odd_lines, line) - 1 for line in bounds]
        squares, curlies = self.squares, self.curlies
        return all(
            squares[before] == squares[after] and curlies[before] == curlies[after]
            for before, after in zip(sums, sums[1:], strict=False)
        )


def _cut(text: str, start: int, end: int, indent: int, line0: int, index: _LineIndex | None = None) -> _TopLevel | None:
    """The block collection in ``text[start:end]`` cut at its lines of ``indent`` columns;
    ``start`` is its first node's first character (after an item's ``- ``, for an item's
    mapping), on line ``line0`` (0-based). ``index``: the lines of a span of ``text`` holding the
    region (:class:`_LineIndex`), read instead of the region's text."""
    # Lines of the region less indented than ``indent`` can only continue a flow collection (a
    # plain scalar continues deeper than its block): they stay in the piece where it opened.
    if index is not None:
        starts, lines = index.cut_points(start, end, indent, line0)
        if not index.balanced(starts, lines):
            return None
    else:
        at = _LINES_AT.get(indent)
        if at is None:  # a newline first: the regex engine then skips to newlines at C speed
            at = _LINES_AT[indent] = re.compile(f"\n {{{indent}}}(?=\\S)")
        starts = [start] + [match.end() for match in at.finditer(text, start, end)]
        starts.append(end)
        lines = []
        line = line0
        previous = start
        for piece_start, piece_end in zip(starts, starts[1:], strict=False):
            line += text.count("\n", previous, piece_start)
            previous = piece_start
            lines.append(line)
            if text.count("[", piece_start, piece_end) != text.count("]", piece_start, piece_end):
                return None
            if text.count("{", piece_start, piece_end) != text.count("}", piece_start, piece_end):
                return None
    pieces: list[tuple[str | None, int, int]] = []
    for piece_start, piece_end in zip(starts, starts[1:], strict=False):
        if _TOP_ITEM.match(text, piece_start) is not None:
            pieces.append((None, piece_start, piece_end))
            continue
        spelled = _TOP_KEY.match(text, piece_start)
        if spelled is None:
            return None
        pieces.append((spelled.group(1), piece_start, piece_end))
    root_is_list = pieces[0][0] is None
    keys: dict[str, tuple[int, list[int]]] = {}
    items: list[int] = []
    last_key: str | None = None
    for number, (key, _, _) in enumerate(pieces):
        if root_is_list:
            if key is not None:
                return None  # a key after root items: not one block sequence
            items.append(number)
        elif key is not None:
            if key in keys:
                return None  # a repeated key (the walk takes the first one, a load the last)
            keys[key] = (number, [])
            last_key = key
        else:
            assert last_key is not None  # the root is a mapping: a key came first
            below = keys[last_key][1]
            if not below:  # the key's line must be the bare key, its value the items alone
                key_start, key_end = pieces[keys[last_key][0]][1:]
                line_end = text.find("\n", key_start, key_end)
                if line_end < 0 or _TOP_BARE_KEY.fullmatch(text, key_start, line_end) is None:
                    return None
                if text[line_end:key_end].strip():
                    return None
            below.append(number)
    return _TopLevel(pieces, lines, keys, items)


def _sliced_parts(
    text: str, load: Any, parts: PartBuilders | None = None, cut: TextCut | None = None
) -> tuple[Any, bool] | None:
    """``load(text)`` (one document) piece by piece of :func:`_top_level`, so that the parser
    holds one piece at a time (rocBLAS_Full.yaml with yaml_rs: 810 MB -> 525 MB peak), a key's
    items once per distinct entry where they are block mappings
    (:func:`~tensilekit.io.logic_lines.decode_items`: a master's 21 288 solutions), and
    whether ``parts`` built its pieces (:func:`parse_yaml`: when the document is a mapping holding
    each of its keys); None when the document is not cut so or a piece does not read as one key
    or one item. ``cut`` is given the cut (:class:`TextCut`)."""
    top = _top_level(text)
    if cut is not None:
        cut.keep(text, top)
    if top is None:
        return None
    builders = parts if parts is not None and parts.keys() <= top.keys.keys() else None

    def item(piece: int) -> Any:
        _, start, end = top.pieces[piece]
        value = load(text[start:end])
        if type(value) is not list or len(value) != 1:
            raise ValueError("not one item")
        return value[0]

    try:
        if top.items:
            return [item(piece) for piece in top.items], False
        data: dict[Any, Any] = {}
        for piece, below in top.keys.values():
            key_spelled, start, end = top.pieces[piece]
            one = load(text[start:end])  # the key as the parser types it, and its value
            if type(one) is not dict or len(one) != 1:
                return None
            ((key, value),) = one.items()
            build = None if builders is None or key_spelled is None else builders.get(key_spelled)
            if below:
                if value is not None:
                    return None
                first, last = top.pieces[below[0]][1], top.pieces[below[-1]][2]
                last -= text.endswith("\n", first, last)
                # each distinct entry of the items decoded once (a master's solutions), else each item
                value = decode_items(
                    text, load, _unchanged if build is None else getattr(build, "of_interned", build), first, last
                )
                if value is None:
                    value = [item(number) for number in below] if build is None else [build(item(n)) for n in below]
            elif build is not None:
                value = build(value)
            if key in data:
                return None  # two spellings of one key
            data[key] = value
        return data, builders is not None
    except Exception:  # noqa: BLE001 - the parser's own error types: the whole document decides
        return None


def _unchanged(value: Any) -> Any:
    return value


_WALKED_WHOLE_BELOW = 8192  # pieces shorter than this are walked, not cut further


def _sliced_positions(
    text: str, wanted: Sequence[tuple[str, ...]], cut: TextCut | None = None
) -> dict[tuple[str, ...], tuple[int, int]] | None:
    """:func:`_walk_events`'s positions, read off the lines of a block document cut by
    indentation (:func:`_top_level`, then each wanted key's or item's block value by
    :func:`_cut`, down to pieces under 8 KB, which are walked on their own slice of ``text``).
    None when the document cannot be cut so. rocBLAS_Full's ~2 700 findings sit in a few of its
    21 288 solutions and tables; libyaml's 7.3 M events of the whole cost ~6 s. ``cut``: the
    top-level cut decoding made of ``text`` (:class:`TextCut`), when it fits."""
    kept = cut.of(text) if cut is not None else None
    top = _top_level(text) if kept is None else kept[0]
    if top is None:
        return None
    found: dict[tuple[str, ...], tuple[int, int]] = {(): (top.lines[0] + 1, 1)}
    targets = {path for path in wanted if path}
    return found if _positions_in(text, top, 0, (), targets, found) else None


def _positions_in(
    text: str,
    region: _TopLevel,
    indent: int,
    root: tuple[str, ...],
    targets: set[tuple[str, ...]],
    found: dict[tuple[str, ...], tuple[int, int]],
    index: _LineIndex | None = None,
) -> bool:
    """Fill ``found`` for ``targets`` (paths below ``root``, the node ``region`` is); False
    when a walked piece holds an alias or is no YAML (then the whole document is walked).
    ``index``: the lines of the top-level piece ``region`` lies in, when it is indexed (a big
    top-level piece is, once something below its own level is wanted)."""
    depth = len(root)
    jobs: dict[int, tuple[tuple[str, ...], set[tuple[str, ...]]]] = {}  # piece -> (its path, targets)
    for path in targets:
        part = path[depth]
        if region.items:
            if not _is_index(part, len(region.items)):
                continue  # the deepest node the document has is the region's own
            jobs.setdefault(region.items[int(part)], (path[: depth + 1], set()))[1].add(path)
            continue
        entry = region.keys.get(part)
        if entry is None:
            continue
        piece, below = entry
        if not below:
            jobs.setdefault(piece, (path[: depth + 1], set()))[1].add(path)
            continue
        # an indentless sequence: the key's node starts at its first item
        found[path[: depth + 1]] = (region.lines[below[0]] + 1, indent + 1)
        if len(path) > depth + 1 and _is_index(path[depth + 1], len(below)):
            jobs.setdefault(below[int(path[depth + 1])], (path[: depth + 2], set()))[1].add(path)
    for piece, (node, wanted) in jobs.items():
        key, start, end = region.pieces[piece]
        line = region.lines[piece]
        below_region = None
        piece_lines = index
        if end - start >= _WALKED_WHOLE_BELOW and any(len(path) > len(node) for path in wanted):
            if piece_lines is None and indent == 0 and end - start >= _INDEXED_FROM:  # a top-level piece
                piece_lines = _LineIndex(text, start, end, line)
            below_region, below_indent = _value_region(text, key, start, end, indent, line, piece_lines)
        if below_region is not None:
            found[node] = (below_region.lines[0] + 1, below_indent + 1)
            deeper = {path for path in wanted if len(path) > len(node)}
            if not _positions_in(text, below_region, below_indent, node, deeper, found, piece_lines):
                return False
            continue
        # walked on its own slice, from its line's start: columns stay, lines shift
        line_start = start - indent
        if key is None:
            stand_in: tuple[str, ...] = ("0",)
        elif text[line_start:start].strip():
            stand_in = ("0", key)  # the first key of an item's mapping: "- key: ..."
        else:
            stand_in = (key,)
        local = {stand_in + path[len(node) :] for path in wanted}
        prefixes = {path[:size] for path in local for size in range(len(path) + 1)}
        try:
            positions = _walk_events(text[line_start:end], prefixes, local)
        except yaml.YAMLError:
            return False
        if positions is None:
            return False
        for path, (at_line, column) in positions.items():
            if len(path) >= len(stand_in):
                found[node + path[len(stand_in) :]] = (at_line + line, column)
    return True


def _value_region(
    text: str, key: str | None, start: int, end: int, indent: int, line: int, index: _LineIndex | None = None
) -> tuple[_TopLevel | None, int]:
    """The block collection a piece's node is, cut (:func:`_cut`), and its indentation: an item's
    mapping (``- key: …``, its keys at ``indent + 2``), or a bare key's value on the lines below
    it; (None, 0) for anything else (a scalar, a flow collection, a compact nested sequence)."""
    if key is None:
        if _TOP_KEY.match(text, start + 2) is None:
            return None, 0
        return _cut(text, start + 2, end, indent + 2, line, index), indent + 2
    line_end = text.find("\n", start, end)
    if line_end < 0 or _TOP_BARE_KEY.fullmatch(text, start, line_end) is None:
        return None, 0
    first = _TOP_LINE_INDENTED.search(text, line_end + 1, end)
    if first is None:
        return None, 0
    child_indent = first.end() - first.start()
    if child_indent <= indent:
        return None, 0
    skipped = text.count("\n", line_end, first.start())
    return _cut(text, first.end(), end, child_indent, line + skipped, index), child_indent


def _is_index(part: str, length: int) -> bool:
    """Whether ``part`` spells an index below ``length`` as a walk's path does (``str(i)``)."""
    return part.isascii() and part.isdigit() and str(int(part)) == part and int(part) < length


def _walk_events(
    text: str, prefixes: set[tuple[str, ...]], targets: set[tuple[str, ...]]
) -> dict[tuple[str, ...], tuple[int, int]] | None:
    """Positions of the nodes at ``prefixes`` (parts as strings); None when an alias is met."""
    found: dict[tuple[str, ...], tuple[int, int]] = {}
    # one frame per open container: [is_mapping, path, next item index | awaiting-key flag, key]
    stack: list[list[Any]] = []
    documents = 0
    scalar, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    starts = (mapping_start, sequence_start)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    alias = yaml.AliasEvent
    events: Iterator[Any] = iter(yaml.parse(text, Loader=_SafeLoader))
    for event in events:
        kind = type(event)
        if kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise yaml.YAMLError("more than one document")  # as yaml.compose refuses it
            continue
        if kind in ends:
            stack.pop()
            continue
        if kind is not scalar and kind not in starts:
            if kind is alias:
                return None
            continue  # stream and document boundaries
        path: tuple[str, ...] | None
        if stack and stack[-1][0] and stack[-1][2]:  # a mapping key: remember it, no node of its own
            frame = stack[-1]
            frame[2], frame[3] = False, str(event.value) if kind is scalar else None
            if kind is not scalar and not _skip_container(events):
                return None  # a complex key (nothing wanted in it) held an alias
            continue
        if not stack:
            path = ()
        else:
            frame = stack[-1]
            parent = frame[1]
            if frame[0]:
                path = None if parent is None or frame[3] is None else (*parent, frame[3])
                frame[2] = True
            else:
                path = None if parent is None else (*parent, str(frame[2]))
                frame[2] += 1
        if path is not None and (path not in prefixes or path in found):
            path = None  # nothing wanted here or below (or a repeated key: the first one counts)
        if path is not None:
            mark = event.start_mark
            if mark is not None:
                found[path] = (mark.line + 1, mark.column + 1)
                if targets.issubset(found.keys()):
                    return found
        if kind is scalar:
            continue
        if path is None:  # nothing wanted anywhere below: count brackets to its end, at C speed
            if not _skip_container(events):
                return None
        elif kind is mapping_start:
            stack.append([True, path, True, None])
        else:
            stack.append([False, path, 0, None])
    return found


def _skip_container(events: Iterator[Any]) -> bool:
    """Consume the events of a container whose start was just read, through its end; False when
    an alias is among them (the caller then composes the document instead)."""
    depth = 1
    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    alias = yaml.AliasEvent
    for event in events:
        kind = type(event)
        if kind in opening:
            depth += 1
        elif kind in closing:
            depth -= 1
            if not depth:
                return True
        elif kind is alias:
            return False
    return True


def _composed_positions(text: str, paths: Sequence[Sequence[object]]) -> list[tuple[int, int] | None]:
    try:
        root = yaml.compose(text, Loader=_SafeLoader)
    except yaml.YAMLError:
        return [None] * len(paths)
    located: list[tuple[int, int] | None] = []
    for path in paths:
        node = root
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        located.append(None if node is None else (node.start_mark.line + 1, node.start_mark.column + 1))
    return located


def _child(node: Any, part: object) -> Any:
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == str(part):
                return value
    return None


_EMPTY_DOUBLE = re.compile(r'(?m)(?::|^\s*-) ""$')
_BLOCK_LIST_FORM = re.compile(r"\A(?:---\s*\n)?- (?:- |MinimumRequiredVersion:)")
# A block-mapping value spelled in a way PyYAML would not write it (found from the ": " on).
_ODD_VALUE = re.compile(
    r""": ('[^'\n]*(?:''[^'\n]*)*'|"[^"\\\n]*"|True|False|TRUE|FALSE|Yes|No|On|Off|"""
    r"""yes|no|on|off|Null|NULL|~) *$""",
    re.M,
)
_BLOCK_KEY = re.compile(r" *(?:- )*([A-Za-z_][\w.]*)$")
_ROOT_TRAILING_BLANK = re.compile(r"^- ([^\s\[{'\"&*!|>%@`#][^\n]*?\S)( +)$", re.M)
_UNLIMITED_WIDTH = 1 << 30
_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.M)


def _lines_inside_quoted_scalars(text: str) -> set[int]:
    """0-based numbers of continuation lines of multi-line quoted scalars (not comments)."""
    inside: set[int] = set()
    try:
        for token in yaml.scan(text, Loader=_SafeLoader):
            if isinstance(token, yaml.ScalarToken) and not token.plain:
                inside.update(range(token.start_mark.line + 1, token.end_mark.line + 1))
    except yaml.YAMLError:
        pass
    return inside


def _writes_empty_double_quoted(text: str) -> bool:
    """Whether the file spells an empty string ``""``. The regex alone would also match text
    inside a quoted scalar (``'x: ""`` wrapped across lines), so the first hit is confirmed on
    the scanner's tokens (they come early in files that have them)."""
    if not _EMPTY_DOUBLE.search(text):
        return False
    try:
        return any(
            isinstance(token, yaml.ScalarToken) and token.style == '"' and not token.value
            for token in yaml.scan(text, Loader=_SafeLoader)
        )
    except yaml.YAMLError:
        return True


def _comment_blocks(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Full-line comments grouped by the line they precede (PyYAML drops comments; we re-insert)."""
    blocks: list[tuple[str, tuple[str, ...]]] = []
    pending: list[str] = []
    not_comments = _lines_inside_quoted_scalars(text)
    for number, line in enumerate(text.split("\n")):
        if line.lstrip().startswith("#") and number not in not_comments:
            pending.append(line)
        elif pending:
            blocks.append((line, tuple(pending)))
            pending = []
    if pending:
        blocks.append(("", tuple(pending)))
    return tuple(blocks)


def _insert_comments(text: str, blocks: Sequence[tuple[str, tuple[str, ...]]]) -> str:
    lines = text.split("\n")
    out: list[str] = []
    position = 0
    for anchor, comments in blocks:
        found = None
        for index in range(position, len(lines)):
            if lines[index] == anchor:
                found = index
                break
        if found is None:
            continue  # the line a comment annotated is gone: drop the comment
        out.extend(lines[position:found])
        out.extend(comments)
        position = found
    out.extend(lines[position:])
    return "\n".join(out)


_ANCHOR = re.compile(r"[&*]id\d{3}\b")


def _scalar_spellings(text: str, lines: str | None = None) -> dict[tuple[Any, str, Any], str]:
    """Scalars whose spelling PyYAML would not reproduce (quotes, capitals, trailing blanks).

    ``lines``: :func:`distinct_lines` of ``text``; both patterns match within a line, and a
    line's first occurrence keeps its order, so the first spelling of each value is the same."""
    spellings: dict[tuple[Any, str, Any], str] = {}
    read: dict[str, Any] = {}  # a logic file repeats a few odd spellings hundreds of times
    unique = text if lines is None else lines
    for match in _ODD_VALUE.finditer(unique):
        line_start = unique.rfind("\n", 0, match.start()) + 1
        key_match = _BLOCK_KEY.fullmatch(unique, line_start, match.start())
        if key_match is None:
            continue  # inside a flow collection or a complex key: not a block-mapping value
        raw = match.group(1)
        if raw not in read:
            read[raw] = yaml.load(raw, Loader=_SafeLoader)
        value = read[raw]
        spelled = unique[match.start(1) : match.end()]
        spellings.setdefault((key_match.group(1), type(value).__name__, value), spelled)
    if (" \n" in unique or unique.endswith(" ")) and " \n" in text:  # a line of ``text`` ends in a blank
        for match in _ROOT_TRAILING_BLANK.finditer(unique):
            value = yaml.load(match.group(1), Loader=_SafeLoader)
            if not isinstance(value, (dict, list)):
                spellings.setdefault(("-", type(value).__name__, value), match.group(1) + match.group(2))
    return spellings


_ANCHOR_OR_ALIAS = re.compile(r"(?:^|(?<=[ \[{,]))([&*])(id\d+)\b")
_BLOCK_KEY_AT_START = re.compile(r"([^\s'\"\[\]{},:#&*!|>%@`-][^:\n]*?|-[^\s:][^:\n]*?):(?: |$)")
AliasPairs = tuple[tuple[tuple[object, ...], tuple[object, ...]], ...]


def _scan_alias_paths(text: str) -> AliasPairs | None:
    """(anchor path, alias path) pairs read off PyYAML's block layout line by line (anchors sit
    on a key's or a sequence item's line); None when the layout is not one this reader follows
    (the caller then composes the document, which is exact but several times slower)."""
    stack: list[list[Any]] = []  # [kind, column, path, current index or key]
    anchors: dict[str, tuple[object, ...]] = {}
    pairs: list[tuple[tuple[object, ...], tuple[object, ...]]] = []
    state: list[Any] = [0, ""]  # open flow brackets, open quote character

    def carry(fragment: str) -> None:
        if not state[1] and "'" not in fragment and '"' not in fragment:
            state[0] += fragment.count("[") + fragment.count("{") - fragment.count("]") - fragment.count("}")
            return
        for char in fragment:
            if state[1]:
                if char == state[1]:
                    state[1] = ""
            elif char in "'\"":
                state[1] = char
            elif char in "[{":
                state[0] += 1
            elif char in "]}":
                state[0] -= 1

    def child_path(top: list[Any] | None) -> tuple[object, ...]:
        return () if top is None else top[2] + (top[3],)

    for line in text.split("\n"):
        if state[0] or state[1]:  # continuation of a flow collection or quoted scalar
            if _ANCHOR_OR_ALIAS.search(line):
                return None
            carry(line)
            continue
        if not line.strip() or line.startswith(("---", "...")):
            continue
        column = len(line) - len(line.lstrip(" "))
        rest = line[column:]
        while True:
            while stack and stack[-1][1] > column:
                stack.pop()
            if not (rest.startswith("- ") or rest == "-"):
                break
            top = stack[-1] if stack else None
            if top is not None and top[1] == column and top[0] == "seq":
                top[3] += 1
            elif top is not None and top[1] == column and top[0] == "map":
                stack.append(["seq", column, child_path(top), 0])  # indentless sequence under a key
            elif top is None or top[1] < column:
                stack.append(["seq", column, child_path(top), 0])
            else:
                return None
            rest, column = rest[2:], column + 2
        top = stack[-1] if stack else None
        key_match = None if rest[:1] in ("[", "{", "'", '"', "&", "*") else _BLOCK_KEY_AT_START.match(rest)
        if key_match is not None:
            raw_key = key_match.group(1)
            key: object = int(raw_key) if raw_key.isdigit() else raw_key
            if top is not None and top[0] == "map" and top[1] == column:
                top[3] = key
            elif top is not None and top[1] >= column:
                return None
            else:
                stack.append(["map", column, child_path(top), key])
            path = stack[-1][2] + (key,)
            value_text = rest[key_match.end() :]
        elif top is not None and top[0] == "seq":
            path, value_text = top[2] + (top[3],), rest
        else:
            return None
        if "&" not in value_text and "*" not in value_text:
            carry(value_text)
            continue
        marker = _ANCHOR_OR_ALIAS.match(value_text.lstrip())
        if marker is not None:
            kind, name = marker.groups()
            if kind == "&":
                anchors[name] = path
            elif name in anchors:
                pairs.append((anchors[name], path))
            else:
                return None
        elif _ANCHOR_OR_ALIAS.search(value_text):
            return None
        carry(value_text)
    return tuple(pairs)


def _alias_paths(text: str) -> AliasPairs:
    """(anchor path, alias path) pairs of a document that uses YAML aliases (rare, old files)."""
    scanned = _scan_alias_paths(text)
    if scanned is not None:
        return scanned
    try:
        root = yaml.compose(text, Loader=_SafeLoader)
    except yaml.YAMLError:
        return ()
    first_seen: dict[int, tuple[object, ...]] = {}
    pairs: list[tuple[tuple[object, ...], tuple[object, ...]]] = []

    def walk(node: Any, path: tuple[object, ...]) -> None:
        if isinstance(node, yaml.ScalarNode):
            return
        if id(node) in first_seen:
            pairs.append((first_seen[id(node)], path))
            return
        first_seen[id(node)] = path
        if isinstance(node, yaml.SequenceNode):
            for number, child in enumerate(node.value):
                walk(child, path + (number,))
        elif isinstance(node, yaml.MappingNode):
            for key, child in node.value:
                walk(child, path + (key.value,))

    walk(root, ())
    return tuple(pairs)


def detect_style(text: str, data: Any = None, *, lines: str | None = None) -> YamlStyle:
    """Read the emitter settings (and per-scalar quirks) off a file AMD's tools wrote.

    With the decoded ``data`` of a list-form file, the layout choices (flow leaves or all
    block, modern or legacy flow-continuation indent) are confirmed by emitting the first four
    items with each candidate and comparing them with the text. ``lines``: :func:`distinct_lines`
    of ``text``, when the caller has it (the searches within a line then read a tenth of it).
    """
    unique = text if lines is None else lines
    head = text[:4096]
    base = YamlStyle(
        explicit_start=text.startswith("---"),
        explicit_end=text.endswith("\n...\n") or text.endswith("\n..."),
        sort_keys=False,  # loaded data keeps the file's own key order
        flow_leaves=not (_BLOCK_LIST_FORM.match(head) or ("[" not in text and "{" not in text)),
        empty_string='""' if ': ""' in unique and ': ""\n' in text and _writes_empty_double_quoted(text) else "''",
    )
    if isinstance(data, list) and len(data) >= 4:
        candidates = [base] + [
            dataclasses.replace(base, flow_leaves=flow, legacy_flow_indent=legacy)
            for flow, legacy in ((True, False), (False, False), (True, True))
            if (flow, legacy) != (base.flow_leaves, base.legacy_flow_indent)
        ]
        candidates += [dataclasses.replace(c, width=_UNLIMITED_WIDTH) for c in candidates]
        for candidate in candidates:
            header = yaml_emitter.emit(list(data[:4]), dataclasses.replace(candidate, explicit_end=False))
            if text.startswith(header):
                base = candidate
                break
    spellings = _scalar_spellings(text, lines)
    aliases = _alias_paths(text) if "&id" in unique and _ANCHOR.search(text) else ()
    comments = _comment_blocks(text) if "#" in text and _COMMENT_LINE.search(text) else ()
    if spellings or aliases or comments:
        base = dataclasses.replace(
            base, scalar_spellings=spellings or None, alias_paths=aliases, comment_blocks=comments
        )
    return base


def dump_yaml(data: Any, style: YamlStyle = AMD_LOGIC_STYLE) -> str:
    """Encode ``data`` exactly as PyYAML would with ``style``'s settings (fast path in Python)."""
    if style.sort_keys:
        data = _sorted_keys(data)
    if style.alias_paths:
        _share_containers(data, style.alias_paths)
    text = yaml_emitter.emit(data, style)
    if style.comment_blocks:
        text = _insert_comments(text, style.comment_blocks)
    return text


def _share_containers(data: Any, pairs: Sequence[tuple[tuple[object, ...], tuple[object, ...]]]) -> None:
    """Re-create the sharing YAML aliases expressed, where the values are still equal."""
    for anchor_path, alias_path in pairs:
        anchor = _at(data, anchor_path)
        if not alias_path or anchor is _MISSING:
            continue
        parent = _at(data, alias_path[:-1])
        last = alias_path[-1]
        try:
            if parent is not _MISSING and parent[last] == anchor:
                parent[last] = anchor
        except (KeyError, IndexError, TypeError):
            continue


_MISSING = object()


def _at(data: Any, path: Sequence[object]) -> Any:
    node = data
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:  # mixed key types (msgpack allows integer keys): unsorted, as PyYAML does
            keys = list(value)
        return {key: _sorted_keys(value[key]) for key in keys}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


__all__ = [
    "AMD_LOGIC_STYLE",
    "AMD_MASTER_STYLE",
    "TextCut",
    "YamlStyle",
    "detect_style",
    "distinct_lines",
    "dump_yaml",
    "locate",
    "locate_many",
    "node_positions",
    "parse_path",
    "parse_yaml",
    "share_key_strings",
]

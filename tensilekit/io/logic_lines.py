"""Decode a logic file's solutions once per distinct line, not once per line.

The solutions of a 4 MB logic file are ~150 000 lines: ~600 block mappings of ~250 ``Key: value``
lines each, but only 3 000-13 000 distinct lines (the solutions repeat their parameters). The
parser spends ~85 ms on them; here each distinct line is decoded once (one parse of the distinct
lines, each an item of its own) and every solution is assembled from its lines' decoded pairs.

The result is what the parser gives for the whole text, or None (the caller then parses the
whole text, and any error is the parser's own). It holds because everything is checked:

* each line of the solutions is a whole ``key: value`` (the distinct lines, one item each, parse
  to exactly as many one-key mappings: a quote or bracket that a line leaves open would swallow
  the next items), starting with a plain key character, at the column of its mapping; a deeper
  line only follows a line ending in ``key:`` (its value is then the deeper lines' mapping, which
  is checked the same way), so no value continues on another line, but for a flow value the
  writer wrapped at its line width: its lines are joined and parsed as one item, each
  continuation as far below its key as in the text (so where quoted brackets mislead the join,
  the parse still reads those lines as the text does, or refuses them);
* no line holds a character another YAML reads as a line break (``\\r``, U+0085, U+2028,
  U+2029) or a byte-order mark; no mapping repeats a key; the text has no anchor (the caller's
  fast path) and no document marker after its first line;
* the text before and after the solutions is parsed as it is, on its own, and must be a sequence
  (list form) or a mapping with string keys (dict form), as the whole text would be.

A value that is a container is copied for each line that holds it (no two solutions share a
list), every key is one interned string, and how deep the result nests is measured as it is
built (the nesting-depth check then does not walk the tree again).
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
from collections.abc import Callable
from typing import Any

_KEY_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_IN_A_LINE = ("\r", "\x85", "\u2028", "\u2029", "\ufeff")
_ITEM = -1  # the column code of a solution's first line ("- key: value")
_SCALARS = (str, int, float, bool, type(None), bytes)

# (a line end first, not "(?:\A|\n)": the regex engine then skips to line ends at C speed, ~30x faster)
_LIST_FORM_START = re.compile(r"\n- - (?=[A-Za-z0-9_][^\n:]*:(?: |\n))")  # root item 5: "- - key: value"
_DICT_FORM_START = re.compile(r"\nSolutions:\n(?=- [A-Za-z0-9_])")
_COLUMN_ZERO = re.compile(r"\n[^ \n]")  # a line at column 0: the list form's solutions end there
_COLUMN_ZERO_NOT_ITEM = re.compile(r"\n(?!- )[^ \n]")  # the dict form's solutions end there

Load = Callable[[str], Any]
_COPY = operator.methodcaller("copy")  # a list's or a mapping's


class _Refused(Exception):
    """The text is not of the shape decoded here: the caller parses it whole."""


def decode_solutions(text: str, text_lines: list[str], load: Load) -> tuple[Any, int] | None:
    """What ``load(text)`` gives, and how deep it nests (containers, the root is 1), for a logic
    file whose solutions are block mappings of one-line values; None for any other text.

    ``text_lines``: ``text.split("\\n")``, emptied here (the lines outside the solutions are freed
    before the solutions are built). ``load``: the parser, as the caller calls it."""
    try:
        if "&" in text:
            return None  # anchors: the caller's fast path has none, and aliases would be shared here
        return _decode(text, text_lines, load)
    except _Refused:
        return None
    except Exception:  # noqa: BLE001 - the parser's own error types: the whole text decides
        return None
    finally:
        text_lines.clear()


def _decode(text: str, text_lines: list[str], load: Load) -> tuple[Any, int] | None:
    start = _LIST_FORM_START.search("\n" + text)  # (a first line is found too: offsets are one on)
    list_form = start is not None
    if start is None:
        start = _DICT_FORM_START.search("\n" + text)
        if start is None:
            return None
    begin = start.end() - 1 - (4 if list_form else 0)  # the first solution's line
    end_match = (_COLUMN_ZERO if list_form else _COLUMN_ZERO_NOT_ITEM).search(text, begin)
    end = len(text) if end_match is None else end_match.start() + 1
    before, after = text[:begin], text[end:]
    # the next line starts the root's next item (list form) or key (dict form), whatever the lines
    # before it hold: an empty line, a comment or a deeper line is left to the parser
    if after and not (after.startswith("- ") if list_form else after[0] in _KEY_START):
        return None
    for part in (before, after):
        if "\n---" in part or "\n..." in part or part.startswith("..."):
            return None  # another document, or the end of this one: left to the parser
    first_line = text.count("\n", 0, begin)
    region = text_lines[first_line : first_line + text.count("\n", begin, end) + (end == len(text))]
    text_lines.clear()  # before the solutions are built
    if region and region[-1] == "" and end == len(text):
        region.pop()  # the text's last line end
    if not region:
        return None
    if list_form:  # "- - key: value": the root item, then the first solution's "- "
        region[0] = "  " + region[0][2:]
    solutions, depth = _solutions(region, item_column=2 if list_form else 0, load=load)

    head = load(before) if before.strip() else None
    tail = load(after) if after.strip() else None
    if list_form:
        if head is None and before.strip() or tail is None and after.strip():
            return None
        head = [] if head is None else head
        tail = [] if tail is None else tail
        if type(head) is not list or type(tail) is not list:
            return None
        data: Any = [*head, solutions, *tail]
        others = head + tail
    else:
        if type(head) is not dict or head.get("Solutions", 0) is not None or list(head)[-1] != "Solutions":
            return None
        tail = {} if tail is None and not after.strip() else tail
        if type(tail) is not dict or any(type(key) is not str for key in (*head, *tail)):
            return None
        head["Solutions"] = solutions
        others = [value for key, value in head.items() if key != "Solutions"] + list(tail.values())
        head.update(tail)
        data = head
    return data, max(depth, 1 + _depth(others))


def _solutions(region: list[str], *, item_column: int, load: Load) -> tuple[list[dict[Any, Any]], int]:
    """The solutions (block mappings, each item's first line ``- key: value`` at ``item_column``)
    of ``region``'s lines, and how deep they nest from the root (root 1, the list 2)."""
    map_column = item_column + 2
    try:
        distinct, contents, columns_of, decoded = _decode_lines(region, item_column, load)
    except Exception:  # noqa: BLE001 - a line left a quote or bracket open: a wrapped flow value?
        region = _join_wrapped(region, item_column)
        distinct, contents, columns_of, decoded = _decode_lines(region, item_column, load)
    pairs: dict[str, tuple[Any, Any]] = {}
    fresh: dict[str, tuple[Any, Callable[[Any], Any], Any]] = {}  # lines whose value is a container
    openers: set[str] = set()
    value_depth = 0
    intern = sys.intern
    for line, content, one in zip(distinct, contents, decoded, strict=True):
        if type(one) is not dict or len(one) != 1:
            raise _Refused
        ((key, value),) = one.items()
        if type(key) is str:
            key = intern(key)
        pairs[line] = (key, value)
        if type(value) is list or type(value) is dict:
            depth = _depth([value])
            value_depth = max(value_depth, depth)
            fresh[line] = (key, _fresh if depth > 1 else _COPY, value)
        elif value is None:
            if content.endswith(":"):
                openers.add(line)
        elif type(value) not in _SCALARS:
            raise _Refused  # a set, a date, …: left to the parser
    columns = list(map(columns_of.__getitem__, region))
    if columns[0] != _ITEM:
        raise _Refused
    builder = _Builder(region, columns, pairs, fresh, openers, sorted(set(columns_of.values()) - {_ITEM}))
    solutions = []
    start, count = 0, len(region)
    while start < count:
        try:
            stop = columns.index(_ITEM, start + 1)
        except ValueError:
            stop = count
        solutions.append(builder.mapping(start, stop, map_column, 1))
        start = stop
    return solutions, 2 + builder.levels + value_depth


def _decode_lines(
    region: list[str], item_column: int, load: Load
) -> tuple[list[str], list[str], dict[str, int], list[Any]]:
    """The distinct lines of ``region``, their contents (a continuation line, joined to its line,
    indented for the parse as at its place), their columns and the parse of their contents."""
    map_column = item_column + 2
    distinct = list(dict.fromkeys(region))
    columns_of: dict[str, int] = {}
    contents: list[str] = []
    for line in distinct:
        content = line.lstrip(" ")
        indent = len(line) - len(content)
        if indent == item_column and content.startswith("- "):
            content = content[2:]
            columns_of[line] = _ITEM
            key_column = map_column
        elif indent >= map_column:
            columns_of[line] = key_column = indent
        else:
            raise _Refused
        if not content or content[0] not in _KEY_START:
            raise _Refused
        if "\n" in content:  # the key, in the parse, is at column 2 ("- key: ..."): as deep below it
            first, *rest = content.split("\n")
            if any(len(part) - len(part.lstrip(" ")) <= key_column for part in rest):
                raise _Refused  # not deeper than the key: not a continuation of its value
            content = "\n".join([first] + [part[key_column - 2 :] for part in rest])
        contents.append(content)
    joined = "- " + "\n- ".join(contents)
    if any(character in joined for character in _NOT_IN_A_LINE):
        raise _Refused
    decoded = load(joined)
    if type(decoded) is not list or len(decoded) != len(contents):
        raise _Refused  # a line left a quote or bracket open
    return distinct, contents, columns_of, decoded


def _join_wrapped(region: list[str], item_column: int) -> list[str]:
    """``region`` with each flow value the writer wrapped (a line that opens more brackets than it
    closes, and the lines after it until they close) as one element; the parse of the joined lines
    decides whether it was one value (quoted brackets only make a join that the parse refuses)."""
    balance: dict[str, int] = {}
    for line in dict.fromkeys(region):
        if "[" in line or "{" in line or "]" in line or "}" in line:
            balance[line] = line.count("[") + line.count("{") - line.count("]") - line.count("}")
    opening = {line for line, level in balance.items() if level > 0}
    if not opening:
        raise _Refused
    joined: list[str] = []
    done = 0
    for position in itertools.compress(itertools.count(), map(opening.__contains__, region)):
        if position < done:
            continue  # a continuation that opens a bracket again
        level, end = balance[region[position]], position + 1
        while level > 0 and end < len(region):
            level += balance.get(region[end], 0)
            end += 1
        if level:
            raise _Refused
        joined += region[done:position]
        joined.append("\n".join(region[position:end]))
        done = end
    return joined + region[done:]


class _Builder:
    """Assembles block mappings from the decoded pairs of their lines."""

    def __init__(
        self,
        lines: list[str],
        columns: list[int],
        pairs: dict[str, tuple[Any, Any]],
        fresh: dict[str, tuple[Any, Callable[[Any], Any], Any]],
        openers: set[str],
        deeper: list[int],
    ) -> None:
        self.lines, self.columns, self.pairs, self.fresh, self.openers = lines, columns, pairs, fresh, openers
        self.deeper = deeper
        self.levels = 0

    def mapping(self, start: int, stop: int, column: int, level: int) -> dict[Any, Any]:
        """The mapping of lines ``start`` to ``stop`` (excluded), its keys at ``column``; the first
        line is its first key (``- key: value`` or the first line below ``key:``)."""
        lines, columns, pairs, fresh = self.lines, self.columns, self.pairs, self.fresh
        if stop - start > 1 and min(columns[start + 1 : stop]) < column:
            raise _Refused  # a line between this mapping's column and its parent's
        self.levels = max(self.levels, level)
        result: dict[Any, Any] = {}
        at, keys = start, 0
        while True:
            below = self._first_deeper(column, at + 1, stop)
            segment = lines[at:below]
            result.update(map(pairs.__getitem__, segment))
            keys += below - at
            for line in filter(fresh.__contains__, segment):  # a new container for each use
                key, copy, value = fresh[line]
                result[key] = copy(value)
            if below == stop:
                break
            opener = lines[below - 1]
            if opener not in self.openers:
                raise _Refused  # a deeper line after a value: it continues that value
            try:
                at = columns.index(column, below, stop)
            except ValueError:
                at = stop
            result[pairs[opener][0]] = self.mapping(below, at, columns[below], level + 1)
            if at == stop:
                break
        if len(result) != keys:
            raise _Refused  # a repeated key
        return result

    def _first_deeper(self, column: int, start: int, stop: int) -> int:
        """The first line from ``start`` deeper than ``column`` (``stop`` when none is)."""
        columns = self.columns
        first = stop
        for deeper in self.deeper:
            if deeper > column:
                try:
                    first = columns.index(deeper, start, first)
                except ValueError:
                    pass
        return first


def _fresh(value: Any) -> Any:
    """A copy of a decoded list or mapping, its containers new (scalars are immutable)."""
    if type(value) is list:
        return [_fresh(item) if type(item) is list or type(item) is dict else item for item in value]
    return {key: _fresh(item) if type(item) is list or type(item) is dict else item for key, item in value.items()}


def _depth(values: list[Any]) -> int:
    """How deep the containers among ``values`` nest (0: none is a container), a level at a time."""
    level = [value for value in values if type(value) is list or type(value) is dict]
    depth = 0
    while level:
        depth += 1
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) is list or type(child) is dict
        ]
    return depth


__all__ = ["decode_solutions"]

"""Decode the solutions of a logic file or a YAML master once per distinct entry, not once each.

A solution is a block mapping; its entries (a key's line with the deeper lines below it: a
nested block, a flow value the writer wrapped at its line width) repeat across solutions. The
solutions of a 4 MB logic file are ~150 000 lines but 3 000-13 000 distinct entries (~85 ms for
the parser); rocBLAS_Full's master holds 21 288 solutions in 1.1 M lines, 234 000 entries of
which 51 000 are distinct (each ``problemPredicate`` block is one). Here each distinct entry is
decoded once (one parse of the distinct entries, each an item of its own) and every solution is
assembled from its entries' decoded pairs.

The result is what the parser gives for the solutions' text, or None (the caller then parses
it, and any error is the parser's own). It holds because each entry is parsed where the text has
it, and everything else is checked:

* the solutions are cut before each line at most as deep as their keys: such a line must be an
  item's ``- key`` (a solution's first line) or a ``key`` at the keys' column, starting with a
  plain key character; every deeper line stays with the entry above it. Each entry is parsed as
  the only key of an item's block mapping, its lines as far below that key as in the text, so it
  is read as in its solution (a block mapping's key and its value do not depend on the keys
  beside it); the distinct entries, one item each, must parse to exactly as many one-key
  mappings (a quote or bracket left open would swallow the next items; no entry holds another
  item, as no line of one is at column 0);
* no entry holds a character another YAML reads as a line break (``\\r``, U+0085, U+2028,
  U+2029) or a byte-order mark; no solution repeats a key; the text has no anchor (the caller's
  fast path) and, for a logic file, no document marker after its first line;
* a logic file's text before and after the solutions is parsed as it is, on its own, and must be
  a sequence (list form) or a mapping with string keys (dict form), as the whole text would be.

A value that is a container is copied for each entry that holds it (no two solutions share a
list), with every key one interned string, and how deep the result nests is known from the
values (the nesting-depth check then does not walk the tree again).
"""

from __future__ import annotations

import itertools
import marshal
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

_KEY_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_IN_A_LINE = ("\r", "\x85", "\u2028", "\u2029", "\ufeff")
_SCALARS = (str, int, float, bool, type(None), bytes)

# (a line end first, not "(?:\A|\n)": the regex engine then skips to line ends at C speed, ~30x faster)
_LIST_FORM_START = re.compile(r"\n- - (?=[A-Za-z0-9_][^\n:]*:(?: |\n))")  # root item 5: "- - key: value"
_DICT_FORM_START = re.compile(r"\nSolutions:\n(?=- [A-Za-z0-9_])")
_COLUMN_ZERO = re.compile(r"\n[^ \n]")  # a line at column 0: the list form's solutions end there
_COLUMN_ZERO_NOT_ITEM = re.compile(r"\n(?!- )[^ \n]")  # the dict form's solutions end there
_ENTRY_CUTS: dict[int, re.Pattern[str]] = {}  # keys' column -> a line end before a key or a shallower line

Load = Callable[[str], Any]
Copy = Callable[[Any], Any]


class _Refused(Exception):
    """The text is not of the shape decoded here: the caller parses it whole."""


def decode_solutions(text: str, load: Load) -> tuple[Any, int] | None:
    """What ``load(text)`` gives, and how deep it nests (containers, the root is 1), for a logic
    file whose solutions are block mappings of one-line values; None for any other text.
    ``load``: the parser, as the caller calls it."""
    try:
        if "&" in text:
            return None  # anchors: the caller's fast path has none, and aliases would be shared here
        return _decode(text, load)
    except _Refused:
        return None
    except Exception:  # noqa: BLE001 - the parser's own error types: the whole text decides
        return None


def decode_items(
    text: str, load: Load, build: Callable[[Any], Any], start: int = 0, end: int | None = None
) -> list[Any] | None:
    """``[build(item) for item in load(text[start:end])]`` for a block sequence of block mappings
    at column 0 (a YAML master's ``solutions:``, whose text has no anchor, tag or quote: the
    caller's cut) ending before its last line end; None when it is not of the shape checked here
    (the caller then parses each item). ``build`` is given each item as it is assembled."""
    try:
        return list(map(build, _Solutions(text, 0, load, start, len(text) if end is None else end)))
    except _Refused:
        return None
    except Exception:  # noqa: BLE001 - the parser's own error types: the caller's parse decides
        return None


def _decode(text: str, load: Load) -> tuple[Any, int] | None:
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
    # "- - key: value": the root item, then the first solution's "- "
    solutions_text = ("  " + text[begin + 2 : end]) if list_form else text[begin:end]
    if solutions_text.endswith("\n"):
        solutions_text = solutions_text[:-1]  # the line end before the next root item or key
    if not solutions_text.strip():
        return None
    decoded = _Solutions(solutions_text, 2 if list_form else 0, load, 0, len(solutions_text))
    solutions = list(decoded)
    depth = 3 + decoded.value_depth  # root 1, the list 2, a solution 3

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


_PIECE = 1 << 20  # the solutions' text is cut into entries this much at a time (then freed but the distinct)


class _Solutions:
    """The solutions of ``text[start:end]`` (block mappings, each item's first line ``- key`` at
    ``item_column``, their keys two columns deeper), assembled one at a time as iterated. Only the
    distinct entries are kept (13 MB of rocBLAS_Full's 50 MB), each entry an index into them."""

    def __init__(self, text: str, item_column: int, load: Load, start: int, end: int) -> None:
        key_column = item_column + 2
        cut = _ENTRY_CUTS.get(key_column)
        if cut is None:  # a line end first: the regex engine skips to line ends at C speed
            # (a "- " at the keys' column is an item of the key above: its value's indentless sequence)
            cut = _ENTRY_CUTS[key_column] = re.compile(
                f"\\n(?= {{0,{key_column - 1}}}[^ ]| {{{key_column}}}(?!- )[^ ])"
            )
        item_start, key_start = " " * item_column + "- ", " " * key_column
        numbers: dict[str, int] = {}  # each distinct entry, numbered as first met
        entries: list[int] = []
        while start < end:  # a piece ends before a solution's "- " (where an entry ends anyway)
            stop = text.find("\n" + item_start, min(start + _PIECE, end), end)
            stop = end if stop < 0 else stop
            entries += [numbers.setdefault(entry, len(numbers)) for entry in cut.split(text[start:stop])]
            start = stop + 1
        distinct = list(numbers)
        del numbers
        items: set[int] = set()
        contents: list[str] = []
        for number, entry in enumerate(distinct):
            if entry.startswith(item_start):
                items.add(number)
            elif not entry.startswith(key_start):
                raise _Refused  # a line between the items' column and their keys'
            if entry[key_column : key_column + 1] not in _KEY_START:
                raise _Refused  # (a deeper line is in the entry: at the keys' column, a key starts)
            content = entry[key_column:]
            if item_column and "\n" in content:  # the key, in the parse, is at column 2: as deep below it
                first, *rest = content.split("\n")
                content = "\n".join([first, *(line[item_column:] for line in rest)])
            contents.append(content)
        del distinct
        count = len(contents)
        joined = "- " + "\n- ".join(contents)
        del contents
        if any(character in joined for character in _NOT_IN_A_LINE):
            raise _Refused
        decoded = load(joined)
        del joined
        if type(decoded) is not list or len(decoded) != count:
            raise _Refused  # an entry left a quote or bracket open
        pairs: list[tuple[Any, Any]] = []
        fresh: dict[int, tuple[Any, Copy, Any]] = {}  # entries whose value is a container
        value_depth = 0
        for number, one in enumerate(decoded):
            if type(one) is not dict or len(one) != 1:
                raise _Refused
            ((key, value),) = one.items()
            if type(key) is str:
                key = sys.intern(key)
            if type(value) is list or type(value) is dict:
                copy, source, depth = _copy(value)
                value_depth = max(value_depth, depth)
                fresh[number] = (key, copy, source)
                value = None  # (its place in the key order: the copy is put there; a marshalled tree is freed)
            elif type(value) not in _SCALARS:
                raise _Refused  # a set, a date, …: left to the parser
            pairs.append((key, value))
        del decoded  # (before the solutions are built: their memory is not held in between)
        starts = list(itertools.compress(itertools.count(), map(items.__contains__, entries)))
        if not starts or starts[0] != 0:
            raise _Refused
        starts.append(len(entries))
        self.entries, self.starts, self.pairs, self.fresh = entries, starts, pairs, fresh
        self.value_depth = value_depth

    def __iter__(self) -> Iterator[dict[Any, Any]]:
        entries, pairs, fresh = self.entries, self.pairs, self.fresh
        for begin, end in itertools.pairwise(self.starts):
            solution_entries = entries[begin:end]
            solution = dict(map(pairs.__getitem__, solution_entries))
            if len(solution) != end - begin:
                raise _Refused  # a repeated key
            for entry in filter(fresh.__contains__, solution_entries):  # a new container for each use
                key, copy, source = fresh[entry]
                solution[key] = copy(source)
            yield solution


_PLAIN = frozenset({*_SCALARS, list, dict})


def _copy(value: Any) -> tuple[Copy, Any, int]:
    """How to make a new ``value`` (a list or mapping, its str keys interned here, in place) with
    every container in it new: a function and what it is given; and how deep ``value`` nests. A
    flat one is copied (its scalars shared); a deeper one is loaded from its ``marshal`` bytes (C
    speed, ~3 us for a problemPredicate where a walk in Python takes ~6; exact for plain data:
    types, key order, interned keys; its own strings, as the parser gives each item). Refused: a
    value holding anything but containers and scalars (a set, a date …: left to the parser)."""
    intern = sys.intern
    level = [value]
    depth = 0
    while level:
        depth += 1
        for node in level:
            if type(node) is dict and node:
                spelled = list(node.items())
                node.clear()
                node.update([(intern(key) if type(key) is str else key, item) for key, item in spelled])
        children = [child for node in level for child in (node.values() if type(node) is dict else node)]
        if not set(map(type, children)) <= _PLAIN:
            raise _Refused
        level = [child for child in children if type(child) is list or type(child) is dict]
    if depth == 1:
        return (dict.copy if type(value) is dict else list.copy), value, 1
    if depth == 2 and type(value) is dict:  # (a sizeMapping: its lists copied, ~1 us where marshal takes ~3)
        return _copy_two_levels, (value, [key for key, item in value.items() if type(item) in _CONTAINERS]), 2
    return marshal.loads, marshal.dumps(value, 4), depth


_CONTAINERS = (list, dict)


def _copy_two_levels(source: tuple[dict[Any, Any], list[Any]]) -> dict[Any, Any]:
    """A copy of a mapping whose containers (at ``keys``) hold scalars only, those copied too."""
    value, keys = source
    new = value.copy()
    for key in keys:
        new[key] = new[key].copy()
    return new


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


__all__ = ["decode_items", "decode_solutions"]

"""The solutions decoders (io.logic_lines: a logic file's, a YAML master's) give what the parser gives
for the whole text, or nothing: on a small logic file in either layout, with lines mixed in that YAML reads across a
line or differently in context (open quotes and brackets, flow values wrapped over lines, block scalars,
comments, blank lines, tabs, carriage returns, deeper or shallower lines, repeated keys, document
markers, tags, aliases, complex keys), its answer is None or equal to the parser's (types, key
order), no container is shared, and the depth it reports is at least the tree's; and so on a
master's solutions, with nested blocks, block sequences and flow items."""

from __future__ import annotations

import sys
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.io.limits import _tree_within  # noqa: E402
from tensilekit.io.logic_lines import decode_items, decode_solutions  # noqa: E402

yaml_rs = pytest.importorskip("yaml_rs")


def _load(text: str) -> Any:  # as io.yaml_codec calls the fast parser
    return yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)


_VALUES = ["1", "0.5", "true", "false", "null", "~", "''", "abc", "[1, 2, 3]", "{0: 1}", "{}", "[]", "[[1, 2], [3]]"]
_VALUES += ["{a: [1, {b: 2}]}", "'x: y'", '"q"', "Device 7380, x", "1e3", "-0.0", ".inf", "0x1F", "a # note"]

_ODD_LINES = [
    "{i}Quote: 'open",
    '{i}Quote2: "open',
    "{i}Wrapped: {{a: 1,",
    "{i}  b: 2}}",
    "{i}Wrapped2: [1, 2,",
    "{i}  3]",
    "{i}Wrapped3: {{a: 1, b: [x,\n{i}    y], c: 2,\n{i}  d: 3}}",
    "{i}Wrapped4: [Device 0050, Device\n{i}    7400, Device 740c]",
    "{i}Wrapped5: [1,\n{i}2]",
    "{i}Wrapped6: {{a: '[',\n{i}  b: 1}}",
    "{i}Wrapped7: [a[,\n{i}  b]",
    "{i}Plain: a\n{i}  b",
    "{i}Block: |",
    "{i}  text",
    "{i}# a comment",
    "",
    "{i} Shallow: 1",
    "{i}  Deeper: 1",
    "{i}Nested:",
    "{i}  Inner: 1",
    "{i}  Inner2: [1]",
    "{i}    Innermost: x",
    "{i}Null: null",
    "{i}Tilde: ~",
    "{i}Tab:\t1",
    "{i}Cr: 1\r",
    "{i}Dup: 1",
    "{i}Dup: 2",
    "{i}Set: !!set {{a, b}}",
    "{i}Str: !!str 1",
    "{i}Alias: *a",
    "{i}? complex",
    "{i}: value",
    "{i}-1: x",
    "{i}1: int key",
    "{i}true: bool key",
    "{i}Line\u2028Sep: 1",
    "{i}Nel\x85: 1",
    "---",
    "...",
    "- [9, 9]",
    "- - X: 1",
    "  - Y: 2",
    "- Z: 3",
    "Key: top",
    "Solutions:",
]


@st.composite
def logic_texts(draw: st.DrawFn) -> str:
    dict_form = draw(st.booleans())
    keys = ["Alpha", "Beta", "MacroTile0", "WorkGroup", "_Private", "1LDSBuffer", "ProblemType"]
    solutions = []
    for _ in range(draw(st.integers(1, 4))):
        lines = []
        for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=5, unique=True)):
            if key == "ProblemType" and draw(st.booleans()):
                lines.append(f"{key}:")
                lines += [f"  {sub}: {draw(st.sampled_from(_VALUES))}" for sub in ("DataType", "Batched")]
            else:
                lines.append(f"{key}: {draw(st.sampled_from(_VALUES))}")
        solutions.append(lines)
    if dict_form:
        body = ["ArchitectureName: gfx90a", "Solutions:"]
        body += [("- " if n == 0 else "  ") + line for lines in solutions for n, line in enumerate(lines)]
        body += ["ScheduleName: aldebaran"]
        indent = "  "
    else:
        body = ["- {MinimumRequiredVersion: 4.2.0}", "- arcturus"]
        for number, lines in enumerate(solutions):
            first = "- - " if number == 0 else "  - "
            body += [(first if n == 0 else "    ") + line for n, line in enumerate(lines)]
        body += ["- [2, 3, 0, 1]", "- - - [1, 2, 1, 3]", "    - [0, 1.5]"]
        indent = "    "
    for _ in range(draw(st.integers(0, 3))):
        odd = draw(st.sampled_from(_ODD_LINES)).format(i=indent)
        body.insert(draw(st.integers(0, len(body))), odd)
    return "\n".join(body) + draw(st.sampled_from(["\n", "", "\n...\n", "\n\n"]))


def _unchanged(item: Any) -> Any:
    return item


def _keys_interned(data: Any) -> bool:
    """Every str key of ``data``'s mappings is the interned string (a master's part builders then
    need not intern them: ``of_interned``)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(type(key) is str and sys.intern(key) is not key for key in node):
                return False
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
    return True


def _shares_a_container(data: Any) -> bool:
    seen: set[int] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) in (list, dict):
            if id(node) in seen:
                return True
            seen.add(id(node))
            stack.extend(node.values() if type(node) is dict else node)
    return False


def _parsed_beside(decoded: Any, text: str) -> tuple[bool, Any]:
    """(whether to compare, the parser's reading of ``text``): the decoder must refuse (None)
    what the parser refuses, and may refuse anything else (then nothing is compared)."""
    try:
        whole = _load(text)
    except Exception:  # noqa: BLE001 - the parser's own error types
        assert decoded is None, text
        return False, None
    return decoded is not None, whole


@given(logic_texts())
def test_solutions_decoder_is_the_parser_or_nothing(text: str) -> None:
    decoded = decode_solutions(text, _load)
    compare, whole = _parsed_beside(decoded, text)
    if not compare:
        return
    data, depth = decoded
    assert repr(data) == repr(whole), text  # repr: key order and types (1 / True / 1.0) count
    assert not _shares_a_container(data), text
    assert _tree_within(data, depth), text


def test_solutions_decoder_takes_plain_logic_files() -> None:
    """The shapes AMD's writers give are decoded here (not left to the parser): both layouts, and a
    flow value the writer wrapped at its line width."""
    listed = "- {MinimumRequiredVersion: 4.2.0}\n- - A: 1\n    P:\n      T: [1]\n    B: x\n  - A: 2\n- [0]\n"
    keyed = "IndexOrder: [0]\nSolutions:\n- A: 1\n  B: {c: 2}\n- A: 2\nZ: 3\n"
    wrapped = listed.replace("    B: x\n", "    B: {c: 1, d: [x,\n        y], e: 2,\n      f: 3}\n")  # width 80
    assert wrapped != listed
    for text in (listed, keyed, wrapped):
        decoded = decode_solutions(text, _load)
        assert decoded is not None, text
        assert repr(decoded[0]) == repr(_load(text))


# A YAML master's solutions (io.yaml_codec hands their text to decode_items): entries with nested
# block mappings and sequences, flow values wrapped below their key, and lines YAML reads across
# entries or not at all.
_MASTER_ENTRIES = [
    "debugKernel: false",
    "hardwarePredicate: {type: TruePred}",
    "ideals: {}",
    "index: 7",
    "name: Cijk_Ailk_MT32x32x16",
    "problemPredicate:\n  type: And\n  value:\n  - {index: 0, type: StrideAEqual, value: 1}\n"
    "  - type: TypesEqual\n    value: [Float, Float]\n  - type: Check\n    value: {A: 16, B: 2}",
    "problemPredicate:\n  type: And\n  value:\n  - {type: Free0SizeMultiple, value: 8}",
    "problemType: {aType: Float, bType: Half,\n  stridedBatched: true, useBeta: true}",
    "problemType: {aType: Float, bType: [Half,\n    Float], c: 1}",
    "sizeMapping:\n  depthU: 16\n  macroTile: [32, 32, 1]\n  nested:\n    deeper: [1, [2]]",
    "sizeMapping:\n    depthU: 8\n    workGroup: [8, 8, 1]",
    "linearModel: {}",
    "empty:",
    "values:\n- 1\n- [2, 3]\n- {a: 4}\n- b: 5\n  c: [6]",
]

_ODD_MASTER_LINES = [
    "  'index': 3",
    '  "name": x',
    "  # a comment",
    "",
    "  index: 9",  # a repeated key where it follows an index
    " shallow: 1",
    "   deeper: 1",
    "- {index: 1, name: flow}",
    "- [1, 2]",
    "- plain",
    "-",
    "  wrapped: [1,",
    "  2]",
    "  tab:\t1",
    "  cr: 1\r",
    "  block: |",
    "    text",
    "  set: !!set {a, b}",
    "  ? complex",
    "  : value",
    "  -1: x",
    "  1: int key",
    "  true: bool key",
    "  sep\u2028: 1",
    "...",
    "---",
    "  quote: 'open",
    "  dup: 1\n  dup: 2",
]


_ONE_OF_EACH = [_MASTER_ENTRIES[number] for number in (1, 2, 4, 5, 8, 9, 11, 12, 13)]  # no key twice


@st.composite
def master_solutions_texts(draw: st.DrawFn) -> str:
    body: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        entries = draw(st.lists(st.sampled_from(_MASTER_ENTRIES), min_size=1, max_size=6, unique=True))
        solution = "\n".join(entries).replace("\n", "\n  ")  # keys at column 2
        body += ("- " + solution).split("\n")
    for _ in range(draw(st.integers(0, 3))):
        body.insert(draw(st.integers(0, len(body))), draw(st.sampled_from(_ODD_MASTER_LINES)))
    return "\n".join(body)


@given(master_solutions_texts())
def test_master_solutions_decoder_is_the_parser_or_nothing(text: str) -> None:
    decoded = decode_items(text, _load, _unchanged)
    compare, whole = _parsed_beside(decoded, text)
    if not compare:
        return
    assert repr(decoded) == repr(whole), text  # key order and types (1 / True / 1.0) count
    assert not _shares_a_container(decoded), text
    assert _keys_interned(decoded), text


def test_master_solutions_decoder_takes_what_amds_writer_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested blocks, block sequences at their key's column, wrapped flow values and flow items
    are decoded here, each solution given to the builder as it is assembled; the text cut into
    entries a piece at a time gives the same (pieces end before a solution)."""
    text = "\n".join(
        "- index: " + str(number) + "\n  " + "\n  ".join(entry.replace("\n", "\n  ") for entry in _ONE_OF_EACH)
        for number in range(3)
    )
    built: list[Any] = []
    decoded = decode_items(text, _load, lambda item: built.append(item) or len(built))
    assert decoded == [1, 2, 3]
    assert repr(built) == repr(_load(text))
    assert not _shares_a_container(built)
    assert _keys_interned(built)
    assert built[0]["problemPredicate"] == built[1]["problemPredicate"]
    import tensilekit.io.logic_lines as logic_lines

    monkeypatch.setattr(logic_lines, "_PIECE", 10)  # a piece ends at each solution
    assert repr(decode_items("\n" + text + "\n", _load, _unchanged, 1, len(text) + 1)) == repr(built)

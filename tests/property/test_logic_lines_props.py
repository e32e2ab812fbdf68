"""The logic-file solutions decoder (io.logic_lines) gives what the parser gives for the whole text,
or nothing: on a small logic file in either layout, with lines mixed in that YAML reads across a
line or differently in context (open quotes and brackets, flow values wrapped over lines, block scalars,
comments, blank lines, tabs, carriage returns, deeper or shallower lines, repeated keys, document
markers, tags, aliases, complex keys), its answer is None or equal to the parser's (types, key
order), no container is shared, and the depth it reports is at least the tree's."""

from __future__ import annotations

from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.io.limits import _tree_within  # noqa: E402
from tensilekit.io.logic_lines import decode_solutions  # noqa: E402

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


@given(logic_texts())
def test_solutions_decoder_is_the_parser_or_nothing(text: str) -> None:
    decoded = decode_solutions(text, text.split("\n"), _load)
    try:
        whole = _load(text)
    except Exception:  # noqa: BLE001 - the parser's own error types
        assert decoded is None, text
        return
    if decoded is None:
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
        decoded = decode_solutions(text, text.split("\n"), _load)
        assert decoded is not None, text
        assert repr(decoded[0]) == repr(_load(text))

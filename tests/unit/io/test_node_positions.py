"""Error and finding locations come from libyaml's event stream (``node_positions``); the rule is
that of composing the node graph and walking it (``_composed_positions``): the node at each path,
or its deepest ancestor, and nothing for a text that is not one YAML document."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tensilekit.io import yaml_codec
from tensilekit.io.yaml_codec import _composed_positions, _sliced_positions, node_positions

_keys = st.one_of(st.sampled_from(["a", "b", "MacroTile0", "3", "x y"]), st.integers(0, 4))
_documents = st.recursive(
    st.one_of(st.integers(-5, 5), st.text("ab: -", max_size=4), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25,
)


def _paths_into(data: Any, rng: random.Random, count: int) -> list[list[object]]:
    paths = []
    for _ in range(count):
        node, path = data, []
        while isinstance(node, (list, dict)) and node and rng.random() < 0.8:
            if isinstance(node, list):
                position = rng.randrange(len(node))
                path.append(position)
                node = node[position]
            else:
                key = rng.choice(list(node))
                path.append(key)
                node = node[key]
        if rng.random() < 0.25:
            path.append(rng.choice(["missing", 7]))
        paths.append(path)
    return paths


@given(
    _documents,
    st.sampled_from([None, False, True]),
    st.integers(0, 2**16),
    st.sampled_from([0, 8192]),
    st.sampled_from([0, yaml_codec._INDEXED_FROM]),
)
@settings(max_examples=300, deadline=None)
def test_event_walk_agrees_with_the_composed_graph(
    data: Any, flow: bool | None, seed: int, cut_below: int, indexed_from: int
) -> None:
    """``cut_below`` 0: every wanted piece is cut by indentation as far as it goes;
    ``indexed_from`` 0: each top-level piece is cut by its line index (:class:`_LineIndex`)."""
    text = yaml.safe_dump(data, default_flow_style=flow)
    saved = yaml_codec._WALKED_WHOLE_BELOW, yaml_codec._INDEXED_FROM
    yaml_codec._WALKED_WHOLE_BELOW, yaml_codec._INDEXED_FROM = cut_below, indexed_from
    try:
        paths = _paths_into(data, random.Random(seed), 8) + [[]]
        assert node_positions(text, paths) == _composed_positions(text, paths)
    finally:
        yaml_codec._WALKED_WHOLE_BELOW, yaml_codec._INDEXED_FROM = saved


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",  # an alias: its children are reached through the anchor
        "a: 1\na: {b: 2}\n",  # a repeated key: the first one counts
        "? [1, 2]\n: v\nk: {m: 1}\n",  # a complex key
        "- 1\n---\n- 2\n",  # two documents: no position at all
        "a: [1, 2\n",  # not YAML
    ],
)
def test_awkward_documents_agree(text: str) -> None:
    paths: list[list[object]] = [["a"], ["a", "b"], ["c", "b"], ["k", "m"], [0], [1], []]
    assert node_positions(text, paths) == _composed_positions(text, paths)


def test_corpus_logic_files_agree(corpus: Path) -> None:
    rng = random.Random(18)
    files = sorted((corpus / "logic").rglob("*.yaml"))
    for path in rng.sample(files, 12):
        text = path.read_text()
        data = yaml.load(text, Loader=yaml.CSafeLoader)
        wanted = _paths_into(data, rng, 40)
        assert node_positions(text, wanted) == _composed_positions(text, wanted), path


@pytest.mark.parametrize(
    "text",
    [
        "a: [1,\n2]\nb: {c: 1}\n",  # a flow sequence carried to column 1
        "a: {x: 1,\nb: 2}\nb: [3]\n",  # a flow mapping whose continuation looks like a key
        "k:\n- 1\n- {a: 2}\nz: 3\n",  # an indentless sequence at the top
        "k: 1\n- 2\n",  # an item after a key with a value: not YAML
        "---\n- a: 1\n  b: [2]\n- c\n...\n",  # markers around a block sequence
        "- 1\n...\n- 2\n",  # an end marker in the middle
        "a: 1\na: 2\n",  # a repeated top-level key: the first counts
        "k:\n\n- 1\n",  # a blank line between a key and its items
        "a: 'x\nb: 1'\nc: 2\n",  # a quoted scalar over lines
        "a:b: 1\nc : [x]\n",  # keys with a colon inside and a space before the colon
        "a:\n  x: [1,\n  2]\n  b: {c: 1,\n    d: [2,\n  3]}\nk:\n- a: [1, [2,\n  3]]\n  b: 1\n",  # flows over cut lines
        "k:\n- a: 1\n  b: {c: [1, 2], d: 3}\n- a: {x: 1,\n    y: 2}\n  b: [[1], [2]]",  # no line end at the end
    ],
)
@pytest.mark.parametrize("cut_below", [0, 8192])
@pytest.mark.parametrize("indexed_from", [0, yaml_codec._INDEXED_FROM])
def test_top_level_slices_agree(text: str, cut_below: int, indexed_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Top-level keys and items are walked on slices of their own (rocBLAS_Full: 6.6 s -> 3 s);
    whatever a line at column 1 might be, the positions are the whole walk's, the regions below
    cut by reading their text or their top-level piece's line index alike."""
    monkeypatch.setattr(yaml_codec, "_WALKED_WHOLE_BELOW", cut_below)
    monkeypatch.setattr(yaml_codec, "_INDEXED_FROM", indexed_from)
    paths: list[list[object]] = [["a"], ["b"], ["c"], ["k"], ["k", 0], ["k", 1], ["k", 1, "a"], [0], [1, "b"], []]
    paths += [["a:b"], ["z"], [0, "b", 0], ["a", "x"], ["a", "b", "c"], ["k", 1, "a", 0]]
    paths += [["a", "b", "d"], ["k", 0, "b", "c"], ["k", 1, "b", 1], ["k", 0, "a", 1, 0]]
    try:
        expected = _composed_positions(text, paths)
    except yaml.YAMLError:
        return
    assert node_positions(text, paths) == expected


@pytest.mark.parametrize("cut_below", [0, 8192])
@pytest.mark.parametrize("indexed_from", [0, yaml_codec._INDEXED_FROM])
def test_a_block_master_is_walked_in_slices(
    corpus: Path, cut_below: int, indexed_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An AMD-written master takes the sliced path (else lint's locating walks every event)."""
    monkeypatch.setattr(yaml_codec, "_WALKED_WHOLE_BELOW", cut_below)
    monkeypatch.setattr(yaml_codec, "_INDEXED_FROM", indexed_from)
    text = (corpus / "masters" / "aldebaran_SB_NN.yaml").read_text()
    data = yaml.load(text, Loader=yaml.CSafeLoader)
    wanted = _paths_into(data, random.Random(5), 60) + [["solutions", len(data["solutions"]) - 1]]
    assert _sliced_positions(text, [tuple(str(part) for part in path) for path in wanted]) is not None
    assert node_positions(text, wanted) == _composed_positions(text, wanted)


def test_a_cut_is_used_for_its_own_text_only() -> None:
    """A cut kept as a text was decoded (``parse_yaml(cut=...)``) locates in that text as a fresh
    cut would; another text of the same length (its keys swapped) is cut again."""
    text = "a:\n  x: [1, 2]\n  y: 3\nb:\n- 1\n- {c: 4}\n"
    swapped = "b:\n- 1\n- {c: 4}\na:\n  x: [1, 2]\n  y: 3\n"
    cut = yaml_codec.TextCut()
    same = {"a": lambda value: value, "b": lambda value: value}
    assert yaml_codec.parse_yaml(text, parts=same, cut=cut) == yaml.safe_load(text)
    assert cut.of(text) is not None and cut.of(swapped) is None
    paths: list[list[object]] = [["a", "y"], ["b", 1, "c"], ["b"], ["a", "x", 1]]
    assert node_positions(text, paths, cut=cut) == _composed_positions(text, paths)
    assert node_positions(swapped, paths, cut=cut) == _composed_positions(swapped, paths)

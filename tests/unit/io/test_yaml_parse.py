"""parse_yaml: what it returns besides PyYAML's values (shared key strings, kept aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from tensilekit.io.yaml_codec import _sliced_parts, parse_yaml

ALIASED = """\
- &id001 {MacroTile0: 64, DepthU: 16}
- *id001
- {MacroTile0: 128, DepthU: 32}
"""


@pytest.mark.parametrize(("text", "pyyaml"), [(ALIASED, False), (ALIASED + "- yes\n", True)])
def test_equal_keys_are_one_string_and_aliases_stay_shared(text: str, pyyaml: bool) -> None:
    data = parse_yaml(text)
    first, alias, other = data[:3]
    assert first == alias
    if pyyaml:  # PyYAML shares aliased containers (yaml_rs copies them); refilling keeps that
        assert first is alias
    assert list(first) == ["MacroTile0", "DepthU"]  # key order kept
    for a, b in zip(first, other, strict=True):
        assert a is b
    assert other == {"MacroTile0": 128, "DepthU": 32}


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    from tensilekit.errors import YamlSyntaxError

    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml('- a\n- "unterminated\n- b\n- c\n', "f.yaml")
    assert (info.value.location.line, info.value.location.col) == (2, 3)
    assert "quoted scalar" in str(info.value)


_scalars = st.one_of(st.integers(-5, 300), st.text("ab: -[]{},01.", max_size=5), st.booleans(), st.none())
_documents = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(["a", "b", "1", "x y"]), st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=30,
)


def _load(text: str) -> Any:
    return yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)


@given(_documents, st.sampled_from([None, False, True]), st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_document_read_piece_by_piece_is_the_document(data: Any, flow: bool | None, markers: bool) -> None:
    """Big masters are decoded one top-level key or item at a time (the parser's peak memory);
    what that reads equals PyYAML's reading of the whole text."""
    text = yaml.safe_dump(data, default_flow_style=flow, explicit_start=markers, explicit_end=markers)
    sliced = _sliced_parts(text, _load)
    if sliced is not None:
        assert sliced[0] == yaml.load(text, Loader=yaml.CSafeLoader)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb:\n- 1\n- [2,\n  3]\n1: {x: 1}\n",
        "1: a\n01: b\n",  # two spellings of one key: the whole document decides
        "a:\n- 1\nb: 2\n...\n",
        "- a\n- b: [1, 2]\n  c: 3\n",
        "a: [1,\n2]\n",  # a flow sequence carried to column 1: not cut
    ],
)
def test_awkward_documents_read_piece_by_piece(text: str) -> None:
    sliced = _sliced_parts(text, _load)
    if sliced is not None:
        assert sliced[0] == yaml.load(text, Loader=yaml.CSafeLoader)


def test_a_master_is_read_piece_by_piece(corpus: Path) -> None:
    text = (corpus / "masters" / "aldebaran_NN_mixed.yaml").read_text()
    sliced = _sliced_parts(text, _load)
    assert sliced is not None
    assert sliced[0] == yaml.load(text, Loader=yaml.CSafeLoader)

"""parse_yaml: what it returns besides PyYAML's values (shared key strings, kept aliases)."""

from __future__ import annotations

import pytest

from tensilekit.io.yaml_codec import parse_yaml

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

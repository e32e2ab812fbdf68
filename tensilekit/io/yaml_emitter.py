"""A fast YAML emitter that writes the same bytes as PyYAML's emitter for plain data.

PyYAML spends most of its dump time building node graphs and events in Python; this module goes
from data straight to text while keeping the emitter's exact layout state (indent stack, column,
``whitespace``/``indention`` flags), so flow collections wrap at the same columns and scalars get
the same quoting (PyYAML's own ``analyze_scalar`` and resolver decide, cached per string).
Anything outside the subset it reproduces (double-quoted or multi-line strings, keys that are
not simple, non-plain types) makes it fall back to PyYAML for the whole document.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import yaml
import yaml.emitter
import yaml.resolver

if TYPE_CHECKING:
    from tensilekit.io.yaml_codec import YamlStyle

_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()
_ANALYZER = yaml.emitter.Emitter(io.StringIO())
_BREAKS = "\n\x85\u2028\u2029"

# string -> (plain in block context, plain in flow context, single-quote allowed, is a simple key)
_STRING_STYLE_CACHE: dict[str, tuple[bool, bool, bool, bool]] = {}


class _Unsupported(Exception):
    """The data needs an emitter feature this fast path does not reproduce."""


def _string_style(text: str) -> tuple[bool, bool, bool, bool]:
    cached = _STRING_STYLE_CACHE.get(text)
    if cached is not None:
        return cached
    analysis = _ANALYZER.analyze_scalar(text)
    implicit = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG  # type: ignore[no-untyped-call]
    simple_ok = not (analysis.empty or analysis.multiline) and len(text) < 128
    result = (
        implicit and analysis.allow_block_plain,
        implicit and analysis.allow_flow_plain,
        analysis.allow_single_quoted and not analysis.multiline,
        simple_ok,
    )
    if len(_STRING_STYLE_CACHE) < 200_000:
        _STRING_STYLE_CACHE[text] = result
    return result


def _float_text(value: float) -> str:
    # PyYAML SafeRepresenter.represent_float
    if value != value:
        return ".nan"
    if value == float("inf"):
        return ".inf"
    if value == -float("inf"):
        return "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


class _Emitter:
    """Mirror of ``yaml.emitter.Emitter`` state for block/flow collections of plain scalars."""

    def __init__(self, style: YamlStyle) -> None:
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.indent: int | None = None
        self.indents: list[int | None] = []
        self.flow_level = 0
        self.best_width = style.width if style.width > style.indent * 2 else 80
        self.best_indent = style.indent if 1 < style.indent < 10 else 2
        self.flow_leaves = style.flow_leaves
        self.double_quote_empty = style.empty_string == '""'
        self.true_text, self.false_text = style.bool_spelling
        self.legacy_flow_indent = style.legacy_flow_indent

    # -- low-level writers (same rules as PyYAML) ------------------------------------------------
    def write_indicator(
        self, indicator: str, need_whitespace: bool, whitespace: bool = False, indention: bool = False
    ) -> None:
        data = indicator if (self.whitespace or not need_whitespace) else " " + indicator
        self.whitespace = whitespace
        self.indention = self.indention and indention
        self.column += len(data)
        self.out.append(data)

    def write_indent(self) -> None:
        indent = self.indent or 0
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.whitespace = True
            self.indention = True
            self.column = 0
            self.out.append("\n")
        if self.column < indent:
            self.whitespace = True
            self.out.append(" " * (indent - self.column))
            self.column = indent

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        self.indents.append(self.indent)
        if self.indent is None:
            self.indent = self.best_indent if flow else 0
        elif not indentless:
            self.indent += self.best_indent

    def write_plain(self, text: str, split: bool) -> None:
        if not text:
            return
        if not self.whitespace:
            self.column += 1
            self.out.append(" ")
        self.whitespace = False
        self.indention = False
        if " " not in text or not split:
            self.column += len(text)
            self.out.append(text)
            return
        # Split at single spaces once past the width, as PyYAML does for plain scalars.
        words = text.split(" ")
        for number, word in enumerate(words):
            if number:
                if word and words[number - 1] and self.column > self.best_width:
                    self.write_indent()
                    self.whitespace = False
                    self.indention = False
                else:
                    self.column += 1
                    self.out.append(" ")
            if word:
                self.column += len(word)
                self.out.append(word)

    def write_single_quoted(self, text: str, split: bool) -> None:
        self.write_indicator("'", True)
        spaces = False
        start = end = 0
        length = len(text)
        while end <= length:
            ch = text[end] if end < length else None
            if spaces:
                if ch is None or ch != " ":
                    if start + 1 == end and self.column > self.best_width and split and start != 0 and end != length:
                        self.write_indent()
                    else:
                        data = text[start:end]
                        self.column += len(data)
                        self.out.append(data)
                    start = end
            elif ch is None or ch == " " or ch == "'":
                if start < end:
                    data = text[start:end]
                    self.column += len(data)
                    self.out.append(data)
                    start = end
            if ch == "'":
                self.column += 2
                self.out.append("''")
                start = end + 1
            if ch is not None:
                spaces = ch == " "
            end += 1
        self.write_indicator("'", False)

    def _flow_break(self) -> None:
        if not (self.legacy_flow_indent and self.flow_level == 1 and not self.indents[-1]):
            self.write_indent()
            return
        # Older emitters continued top-level flow collections (items of the root sequence)
        # at the items' scalar indent; nested ones were unaffected.
        saved = self.indent
        self.indent = (saved or 0) + self.best_indent
        self.write_indent()
        self.indent = saved

    def write_raw(self, text: str) -> None:
        """A scalar spelled exactly as the source file had it (quotes, capitals, trailing blanks)."""
        if not self.whitespace:
            self.column += 1
            self.out.append(" ")
        self.whitespace = False
        self.indention = False
        self.column += len(text)
        self.out.append(text)

    # -- nodes ------------------------------------------------------------------------------------
    def scalar(self, value: Any, simple_key: bool) -> None:
        saved = self.indent
        self.indents.append(saved)
        self.indent = self.best_indent if saved is None else saved + self.best_indent
        if value is None:
            self.write_plain("null", not simple_key)
        elif value is True:
            self.write_plain(self.true_text, not simple_key)
        elif value is False:
            self.write_plain(self.false_text, not simple_key)
        elif type(value) is int:
            self.write_plain(str(value), not simple_key)
        elif type(value) is float:
            self.write_plain(_float_text(value), not simple_key)
        elif type(value) is str:
            self._string(value, simple_key)
        else:
            raise _Unsupported(type(value).__name__)
        self.indent = self.indents.pop()

    def _string(self, text: str, simple_key: bool) -> None:
        if not text:
            if simple_key:
                raise _Unsupported("empty key")
            if self.double_quote_empty:
                self.write_indicator('"', True)
                self.write_indicator('"', False)
            else:
                self.write_indicator("'", True)
                self.write_indicator("'", False)
            return
        block_plain, flow_plain, single_ok, simple_ok = _string_style(text)
        if simple_key and not simple_ok:
            raise _Unsupported("complex key")
        if flow_plain if self.flow_level else block_plain:
            self.write_plain(text, not simple_key)
        elif single_ok:
            self.write_single_quoted(text, not simple_key)
        else:
            raise _Unsupported("double-quoted string")

    def _is_flow(self, items: Any) -> bool:
        if self.flow_level or not items:
            return True
        if not self.flow_leaves:
            return False
        for item in items:
            if isinstance(item, (dict, list, tuple)):
                return False
            if self.double_quote_empty and item == "" and type(item) is str:
                return False  # a styled scalar makes PyYAML choose block style
        return True

    def node(self, value: Any, mapping: bool = False, simple_key: bool = False) -> None:
        if isinstance(value, dict):
            if self._is_flow(value.values()):
                self.flow_mapping(value)
            else:
                self.block_mapping(value)
        elif isinstance(value, (list, tuple)):
            if self._is_flow(value):
                self.flow_sequence(value)
            else:
                self.block_sequence(value, mapping)
        else:
            self.scalar(value, simple_key)

    def _key(self, key: Any) -> None:
        if isinstance(key, (dict, list, tuple)):
            raise _Unsupported("collection key")
        self.scalar(key, True)

    def block_mapping(self, mapping: dict[Any, Any]) -> None:
        self.increase_indent(flow=False)
        for key, value in mapping.items():
            self.write_indent()
            self._key(key)
            self.write_indicator(":", False)
            self.node(value, mapping=True)
        self.indent = self.indents.pop()

    def block_sequence(self, sequence: Any, mapping_context: bool) -> None:
        self.increase_indent(flow=False, indentless=mapping_context and not self.indention)
        for item in sequence:
            self.write_indent()
            self.write_indicator("-", True, indention=True)
            self.node(item)
        self.indent = self.indents.pop()

    def flow_sequence(self, sequence: Any) -> None:
        self.write_indicator("[", True, whitespace=True)
        self.flow_level += 1
        self.increase_indent(flow=True)
        first = True
        for item in sequence:
            if not first:
                self.write_indicator(",", False)
            first = False
            if self.column > self.best_width:
                self._flow_break()
            self.node(item)
        self.indent = self.indents.pop()
        self.flow_level -= 1
        self.write_indicator("]", False)

    def flow_mapping(self, mapping: dict[Any, Any]) -> None:
        self.write_indicator("{", True, whitespace=True)
        self.flow_level += 1
        self.increase_indent(flow=True)
        first = True
        for key, value in mapping.items():
            if not first:
                self.write_indicator(",", False)
            first = False
            if self.column > self.best_width:
                self._flow_break()
            self._key(key)
            self.write_indicator(":", False)
            self.node(value, mapping=True)
        self.indent = self.indents.pop()
        self.flow_level -= 1
        self.write_indicator("}", False)


class _TriviaEmitter(_Emitter):
    """Emitter that also reproduces per-scalar spellings and anchors/aliases of a source file."""

    def __init__(self, style: YamlStyle, anchors: dict[int, str]) -> None:
        super().__init__(style)
        self.spellings = style.scalar_spellings or {}
        self.anchors = anchors
        self.emitted: set[int] = set()
        self.root_sequence = True

    def node(self, value: Any, mapping: bool = False, simple_key: bool = False) -> None:
        anchor = self.anchors.get(id(value)) if isinstance(value, (dict, list)) else None
        if anchor is not None:
            if id(value) in self.emitted:
                self.write_indicator("*" + anchor, True)
                return
            self.emitted.add(id(value))
            self.write_indicator("&" + anchor, True)
        super().node(value, mapping, simple_key)

    def block_mapping(self, mapping: dict[Any, Any]) -> None:
        self.root_sequence = False
        self.increase_indent(flow=False)
        for key, value in mapping.items():
            self.write_indent()
            self._key(key)
            self.write_indicator(":", False)
            spelled = None
            if not isinstance(value, (dict, list)):
                spelled = self.spellings.get((key, type(value).__name__, value))
            if spelled is not None:
                self.write_raw(spelled)
            else:
                self.node(value, mapping=True)
        self.indent = self.indents.pop()

    def block_sequence(self, sequence: Any, mapping_context: bool) -> None:
        if not self.root_sequence:
            super().block_sequence(sequence, mapping_context)
            return
        self.root_sequence = False
        self.increase_indent(flow=False, indentless=mapping_context and not self.indention)
        for item in sequence:
            self.write_indent()
            self.write_indicator("-", True, indention=True)
            spelled = None
            if not isinstance(item, (dict, list)):
                spelled = self.spellings.get(("-", type(item).__name__, item))
            if spelled is not None:
                self.write_raw(spelled)
            else:
                self.node(item)
        self.indent = self.indents.pop()


def _shared_containers(data: Any) -> dict[int, str]:
    """Anchor names for containers reachable twice, numbered as PyYAML's serializer does."""
    seen: set[int] = set()
    anchors: dict[int, str] = {}

    def visit(value: Any) -> None:
        if not isinstance(value, (dict, list)):
            return
        key = id(value)
        if key in seen:
            if key not in anchors:
                anchors[key] = f"id{len(anchors) + 1:03d}"
            return
        seen.add(key)
        for child in value.values() if isinstance(value, dict) else value:
            visit(child)

    visit(data)
    return anchors


def emit(data: Any, style: YamlStyle) -> str:
    """``data`` as YAML text, byte-identical to PyYAML with the same settings and ``sort_keys=False``."""
    if not isinstance(data, (dict, list, tuple)):
        return _pyyaml_emit(data, style)
    emitter: _Emitter
    if style.scalar_spellings or style.shares_containers:
        emitter = _TriviaEmitter(style, _shared_containers(data) if style.shares_containers else {})
    else:
        emitter = _Emitter(style)
    try:
        if style.explicit_start:
            emitter.write_indicator("---", True)
        emitter.node(data)
        emitter.indent = None
        emitter.write_indent()
        if style.explicit_end:
            emitter.write_indicator("...", True)
            emitter.write_indent()
    except _Unsupported:
        return _pyyaml_emit(data, style)
    return "".join(emitter.out)


class _StyleDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """PyYAML dumper used when the fast path cannot reproduce the data."""


def _represent_str_double_empty(dumper: Any, value: str) -> Any:
    if value == "":
        return dumper.represent_scalar(_STR_TAG, value, style='"')
    return dumper.represent_str(value)


class _DoubleEmptyDumper(_StyleDumper):
    pass


_DoubleEmptyDumper.add_representer(str, _represent_str_double_empty)
_StyleDumper.add_representer(tuple, yaml.SafeDumper.represent_list)
_DoubleEmptyDumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def _pyyaml_emit(data: Any, style: YamlStyle) -> str:
    dumper = _DoubleEmptyDumper if style.empty_string == '""' else _StyleDumper
    text: str = yaml.dump(
        data,
        Dumper=dumper,
        default_flow_style=None if style.flow_leaves else False,
        sort_keys=False,
        width=style.width,
        indent=style.indent,
        explicit_start=style.explicit_start,
        explicit_end=style.explicit_end,
        allow_unicode=False,
    )
    return text


__all__ = ["emit"]

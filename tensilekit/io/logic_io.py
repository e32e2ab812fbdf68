"""Read and write library-logic files: raw YAML data <-> :class:`LogicFile`, style preserved.

Reading detects the layout (list / dict), the dialect (Tensile puts the distance at position
12; tensilelite a library type at 11) and the emitter style; writing rebuilds the list (or
dict) position by position from :data:`LIST_LAYOUTS` and emits it in the file's own style, so
``dump_logic(load_logic(f))`` reproduces ``f`` byte for byte for files AMD's tools wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tensilekit._arguments import require, require_output_path, require_path
from tensilekit.errors import InvalidValue, LibraryFormatError, Location, MissingField, error_context
from tensilekit.io.files import gc_paused
from tensilekit.io.locations import add_line, raw_path, to_format_error
from tensilekit.io.logic_lines import decode_solutions
from tensilekit.io.yaml_codec import (
    AMD_LOGIC_STYLE,
    YamlStyle,
    detect_style,
    distinct_lines,
    dump_yaml,
    parse_yaml,
    share_key_strings,
)
from tensilekit.model.common import parsed_tree_owned, to_raw
from tensilekit.model.logic import (
    DICT_KEYS,
    LIST_LAYOUTS,
    TENSILELITE_LIBRARY_TYPES,
    Dialect,
    Layout,
    LogicFile,
)

_FIELD_TO_DICT_KEY = {field: key for key, field in DICT_KEYS.items()}
_MIN_LIST_LENGTH = 8  # up to the exact-logic table (position 7)


def detect_dialect(data: Any) -> Dialect:
    """tensilelite files carry a library type at position 11; Tensile files do not."""
    # isinstance(str) first: a damaged file may hold an unhashable list or mapping there.
    if isinstance(data, list) and len(data) > 11 and isinstance(data[11], str):
        if data[11] in TENSILELITE_LIBRARY_TYPES:
            return Dialect.TENSILELITE
    if isinstance(data, dict) and isinstance(data.get("LibraryType"), str):
        if data["LibraryType"] in TENSILELITE_LIBRARY_TYPES - {"DecisionTree"}:
            return Dialect.TENSILELITE
    return Dialect.TENSILE


def _fields_from_list(data: list[Any], dialect: Dialect) -> dict[str, Any]:
    if len(data) < _MIN_LIST_LENGTH:
        raise MissingField(
            f"a list-form logic file needs at least {_MIN_LIST_LENGTH} positions, this one has {len(data)}",
            Location(path=f"[{len(data)}]"),
        )
    layout = LIST_LAYOUTS[dialect]
    fields: dict[str, Any] = dict(zip(layout, data, strict=False))
    fields.update(
        dialect=dialect,
        layout=Layout.LIST,
        list_length=len(data),
        extra_items=list(data[len(layout) :]),
    )
    if not isinstance(fields.get("version_header"), dict):
        raise InvalidValue("position 0 must be {MinimumRequiredVersion: x.y.z}", Location(path="[0]"))
    return fields


def _fields_from_dict(data: dict[str, Any], dialect: Dialect) -> dict[str, Any]:
    fields: dict[str, Any] = {"dialect": dialect, "layout": Layout.DICT, "dict_key_order": list(data)}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        name = DICT_KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            extra[str(key)] = value
        else:
            fields[name] = value
    fields["extra_keys"] = extra
    return fields


# ExactLogicEntry field -> its position inside a ``[[sizes...], [solution, efficiency]]`` row.
_ROW_POSITIONS: dict[str, tuple[int, ...]] = {"size": (0,), "solution": (1, 0), "efficiency": (1, 1)}


def _row_loc(head: int | str, rest: Sequence[int | str]) -> Sequence[int | str]:
    """Map ``exact_logic, row, <field>, ...`` pydantic locs onto the row's list positions."""
    if head == "exact_logic" and len(rest) >= 2 and isinstance(rest[1], str) and rest[1] in _ROW_POSITIONS:
        return (rest[0], *_ROW_POSITIONS[rest[1]], *rest[2:])
    return rest


def _list_path(dialect: Dialect) -> Any:
    layout = LIST_LAYOUTS[dialect]

    def path_for(loc: Sequence[int | str], raw: list[Any]) -> list[object]:
        if not loc:
            return []
        head, rest = loc[0], _row_loc(loc[0], loc[1:])
        if isinstance(head, str) and head in layout:
            position = layout.index(head)
            return [position] + raw_path(raw[position] if position < len(raw) else None, rest)
        if head == "extra_items" and rest and isinstance(rest[0], int):
            return [len(layout) + rest[0]] + raw_path(raw[len(layout) + rest[0]], rest[1:])
        return [head]

    return path_for


def logic_from_data(
    data: Any, *, dialect: Dialect | str | None = None, source: str | None = None, text: str | None = None
) -> LogicFile:
    """Build a :class:`LogicFile` from decoded YAML data (list or dict form)."""
    chosen = Dialect(dialect) if dialect is not None else detect_dialect(data)
    solution_keys: list[str] | None = None
    with error_context(source or "<input>"):
        try:
            if isinstance(data, dict) and isinstance(data.get("Solutions"), dict):
                # canonical dict logic: Solutions keyed by name (io.logic_canonical)
                from tensilekit.io.logic_canonical import keyed_solutions

                pairs = keyed_solutions(data, source)
                # keys by SolutionIndex, then the file's own key order (restored on write)
                solution_keys = [key for key, _ in pairs] + [str(key) for key in data["Solutions"]]
                data = {**data, "Solutions": [solution for _, solution in pairs]}
            if isinstance(data, list):
                fields = _fields_from_list(data, chosen)
            elif isinstance(data, dict):
                fields = _fields_from_dict(data, chosen)
            else:
                raise LibraryFormatError(
                    f"a logic file is a YAML list or mapping, not {type(data).__name__}", Location(path="")
                )
        except LibraryFormatError as error:
            add_line(error, text)
            raise
        try:
            with gc_paused():
                logic = LogicFile.model_validate(fields)
            logic._solution_keys = solution_keys
            return logic
        except ValidationError as error:
            if isinstance(data, list):
                list_path = _list_path(chosen)
                raise to_format_error(
                    error, data, source=source, text=text, path_for=lambda loc: list_path(loc, data)
                ) from None

            def dict_path(loc: Sequence[int | str]) -> list[object]:
                if loc and isinstance(loc[0], str) and loc[0] in _FIELD_TO_DICT_KEY:
                    key = _FIELD_TO_DICT_KEY[loc[0]]
                    return [key] + raw_path(data.get(key), _row_loc(loc[0], loc[1:]))
                return raw_path(data, loc)

            raise to_format_error(error, data, source=source, text=text, path_for=dict_path) from None


def logic_to_data(logic: LogicFile) -> Any:
    """The plain list (or dict) that represents ``logic`` in a file."""
    if logic.layout is Layout.DICT:
        return _logic_to_dict(logic)
    layout = LIST_LAYOUTS[logic.dialect]
    length = logic.list_length if logic.list_length is not None else _default_length(logic)
    items: list[Any] = []
    for position in range(min(length, len(layout))):
        items.append(_field_value(logic, layout[position]))
    items.extend(to_raw(item) for item in logic.extra_items)
    return items


def _default_length(logic: LogicFile) -> int:
    layout = LIST_LAYOUTS[logic.dialect]
    length = 12 if logic.dialect is Dialect.TENSILELITE else 11
    for position in range(len(layout) - 1, length - 1, -1):
        if getattr(logic, layout[position]) is not None:
            return position + 1
    return length


def _field_value(logic: LogicFile, name: str) -> Any:
    value = getattr(logic, name)
    if name == "exact_logic":
        return None if value is None else [entry.to_row() for entry in value]
    if name == "version_header" and value is None and logic.minimum_required_version is not None:
        return {"MinimumRequiredVersion": logic.minimum_required_version}
    return to_raw(value)


def _logic_to_dict(logic: LogicFile) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, key in _FIELD_TO_DICT_KEY.items():
        if field in logic.model_fields_set:
            values[key] = _field_value(logic, field)
    values.update((key, to_raw(value)) for key, value in logic.extra_keys.items())
    keys = logic._solution_keys
    if keys is not None and isinstance(values.get("Solutions"), list):
        from tensilekit.io.logic_canonical import canonical_data

        solutions = values["Solutions"]
        by_index, file_order = keys[: len(keys) // 2], keys[len(keys) // 2 :]
        if len(by_index) == len(solutions):
            keyed = dict(zip(by_index, solutions, strict=True))
            values["Solutions"] = {key: keyed[key] for key in file_order}
        else:  # solutions were added or removed: key them afresh
            values["Solutions"] = canonical_data({"Solutions": solutions}, keyed=True)["Solutions"]
    order = logic.dict_key_order or sorted(values)
    ordered = {key: values[key] for key in order if key in values}
    ordered.update((key, value) for key, value in values.items() if key not in ordered)
    return ordered


# The parts of a logic file the models read mapping by mapping (solutions keep their keys through
# the open models' shared key orders; a table row has no keys): the rest is kept as parsed.
_MODELLED_POSITIONS = frozenset(LIST_LAYOUTS[Dialect.TENSILE].index(name) for name in ("solutions", "exact_logic"))
_MODELLED_KEYS = frozenset({"Solutions", "ExactLogic"})


def share_kept_keys(data: Any, *, shared: bool = True) -> Any:
    """``data`` with equal mapping keys made one string where the model keeps mappings as parsed
    (a decision tree, the header, extra items), in place; the solutions' keys are left to the
    models (:class:`~tensilekit.model.common.OrderedOpenModel`), which share them by key order
    at a third of the cost of walking them here, and the table has none. ``shared``: containers may
    be shared (YAML aliases; see :func:`~tensilekit.io.yaml_codec.share_key_strings`)."""
    if isinstance(data, list):
        kept = [item for position, item in enumerate(data) if position not in _MODELLED_POSITIONS]
    elif isinstance(data, dict):
        kept = [value for key, value in data.items() if key not in _MODELLED_KEYS]
    else:
        return data
    share_key_strings(kept, shared=shared)
    return data


def loads_logic(text: str, *, dialect: Dialect | str | None = None, source: str | None = None) -> LogicFile:
    """Parse logic-file YAML text; the detected emitter style is kept for :func:`dumps_logic`.

    Raises TypeError when ``text`` is not a str; a LibraryFormatError/DecodeError for bad text."""
    require(text, str, "text", "loads_logic")
    require(dialect, (str, Dialect), "dialect", "loads_logic", optional=True)
    require(source, str, "source", "loads_logic", optional=True)
    with gc_paused(promote=True):  # one pause over the tree and the model built from it
        lines = distinct_lines(text)  # read by the YAML 1.1 check and the style's searches
        # the solutions decoded once per distinct entry (the parser reads the rest)
        data = parse_yaml(text, source, share_keys=False, lines=lines, decode=decode_solutions)
        data = share_kept_keys(data, shared="&" in text)
        with parsed_tree_owned():  # nobody else holds the parsed tree: its keys may be shared in place
            logic = logic_from_data(data, dialect=dialect, source=source, text=text)
        logic._source_style = detect_style(text, data, lines=lines)
        del data  # freed before the pause ends
        logic._source_text = text
    return logic


def load_logic(path: str | Path, *, dialect: Dialect | str | None = None) -> LogicFile:
    """Read a logic file (``.yaml``, optionally ``.gz``).

    Raises TypeError when ``path`` is not a str or os.PathLike, ValueError when it is empty."""
    path = require_path(path, "path", "load_logic")
    from tensilekit.io.files import read_text

    text = read_text(path)
    return loads_logic(text, dialect=dialect, source=str(path))


def dumps_logic(logic: LogicFile, style: YamlStyle | None = None, *, layout: str | None = None) -> str:
    """Logic-file YAML text, in ``style`` or (by default) the style the file was read with.

    ``layout="canonical"`` writes the canonical dict form TensileCreateLibrary's tuning flow
    writes now (named root keys, Solutions keyed by name, factored; io.logic_canonical).
    Raises TypeError for arguments of the wrong type, ValueError for an unknown ``layout``.
    """
    require(logic, LogicFile, "logic", "dumps_logic")
    require(style, YamlStyle, "style", "dumps_logic", optional=True)
    require(layout, str, "layout", "dumps_logic", optional=True)
    if layout == "canonical":
        return _dumps_canonical(logic, style)
    if layout not in (None, "file"):
        raise ValueError(f"unknown logic layout {layout!r} (file or canonical)")
    chosen = style or logic._source_style or AMD_LOGIC_STYLE
    with gc_paused():
        data = logic_to_data(logic)
        text = dump_yaml(data, chosen)
        source = logic._source_text if style is None else None
        if source is not None and text != source and _same_data(parse_yaml(source), data):
            # unchanged, but laid out by hand (a flow mapping wrapped early, `[0,  0.0]`):
            # the file's own text is the byte-identical round trip
            return source
        return text


def _same_data(a: Any, b: Any) -> bool:
    """Equal YAML data, mapping key order included (it decides the written text); NaN equals NaN."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same_data(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_data, a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and bool(a == b)


def _dumps_canonical(logic: LogicFile, style: YamlStyle | None) -> str:
    from tensilekit.io.logic_canonical import canonical_data

    named: dict[str, Any] = {}
    for field, key in _FIELD_TO_DICT_KEY.items():
        if field in logic.model_fields_set:
            named[key] = _field_value(logic, field)
    architecture = named.get("ArchitectureName")
    if isinstance(architecture, dict):  # list position 2: {Architecture, CUCount, IsAPU}
        named["ArchitectureName"] = architecture.get("Architecture")
        named.setdefault("CUCount", architecture.get("CUCount"))
        if "IsAPU" in architecture:
            named.setdefault("IsAPU", architecture["IsAPU"])
    named.update((key, to_raw(value)) for key, value in logic.extra_keys.items())
    with gc_paused():
        return dump_yaml(canonical_data(named), style or AMD_LOGIC_STYLE)


def dump_logic(
    logic: LogicFile, path: str | Path | None = None, style: YamlStyle | None = None, *, layout: str | None = None
) -> str:
    """Write ``logic`` atomically to ``path`` (if given); returns the text. ``layout``: None (the
    file's own) or ``"canonical"``; a path ending in ``.zst`` is zstd-compressed.

    Raises InputNotFound when the folder of ``path`` does not exist (it is not created, as the
    CLI refuses it too), UnsupportedFormat when ``path`` is a folder, TypeError/ValueError for
    arguments of the wrong type."""
    if path is not None:
        path = require_output_path(path, "path", "dump_logic")
    text = dumps_logic(logic, style, layout=layout)
    if path is not None:
        from tensilekit.io.atomic import write_bytes_atomic, write_text_atomic

        if str(path).endswith(".zst"):
            from tensilekit.io.logic_canonical import compress_zstd

            write_bytes_atomic(path, compress_zstd(text))
        else:
            write_text_atomic(path, text)
    return text


__all__ = [
    "detect_dialect",
    "dump_logic",
    "dumps_logic",
    "gc_paused",
    "load_logic",
    "loads_logic",
    "logic_from_data",
    "logic_to_data",
]

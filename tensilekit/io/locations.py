"""Turn pydantic validation errors into tensilekit errors with a file location.

pydantic reports ``loc`` tuples over model fields (plus union tags); this walks the raw decoded
data along the same tuple to recover the path inside the document, then (for YAML) asks
:func:`yaml_codec.locate` for the line and column. Computed only when an error happens.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from tensilekit.errors import (
    InvalidValue,
    LibraryFormatError,
    Location,
    MissingField,
    UnknownNodeType,
    format_path,
)
from tensilekit.io.yaml_codec import locate, locate_many, parse_path


def raw_path(raw: Any, loc: Sequence[int | str], aliases: Callable[[str], str] | None = None) -> list[object]:
    """The keys/indices into ``raw`` that ``loc`` denotes (union tags and field names resolved)."""
    path: list[object] = []
    node = raw
    for number, part in enumerate(loc):
        last = number == len(loc) - 1
        if isinstance(node, list) and isinstance(part, int):
            path.append(part)
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(node, dict):
            key: object = part
            if key not in node and isinstance(part, str) and aliases is not None:
                key = aliases(part)
            if key in node:
                path.append(key)
                node = node[key]
            elif isinstance(part, str) and part.isdigit() and int(part) in node:
                path.append(int(part))
                node = node[int(part)]
            elif last:
                path.append(part)  # a missing key: name it
                node = None
            # otherwise ``part`` is a union tag or validator marker, not a key: skip it
        elif node is None:
            break
    return path


# The custom error type of the library-node discriminator (``model.library.LibraryNode``).
_UNKNOWN_NODE_TYPE = "unknown_node_type"


def _message(error: Any) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "missing required field"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        context = error.get("ctx") or {}
        tag = context.get("tag")
        return f"unknown type {tag!r}" if tag else "missing or unknown 'type'"
    if kind == _UNKNOWN_NODE_TYPE:
        value = error.get("input")
        if not isinstance(value, dict):
            return "a library node must be a mapping with a 'type'"
        tag = value.get("type")
        return f"unknown library node type {tag!r}" if tag is not None else "library node without a 'type'"
    message = str(error.get("msg", "invalid value"))
    return message.removeprefix("Value error, ")


def _field_loc(error: Any) -> tuple[int | str, ...]:
    """The error's ``loc``, extended by the key a model-level check named (``ctx["field"]``)."""
    loc = tuple(error.get("loc", ()))
    context = error.get("ctx") or {}
    field, at = context.get("field"), context.get("at")
    if isinstance(field, str):
        loc += (field,)
    if isinstance(at, list):
        loc += tuple(at)
    return loc


def to_format_error(
    error: ValidationError,
    raw: Any,
    *,
    source: str | None = None,
    text: str | None = None,
    prefix: Sequence[object] = (),
    path_for: Callable[[Sequence[int | str]], list[object]] | None = None,
) -> LibraryFormatError:
    """The first problem of ``error`` as a :class:`LibraryFormatError` with file, path, line, col.

    Every other problem (one per place in the document, up to :data:`MAX_REPORTED`) is in the
    returned error's ``related`` list, located the same way, so ``validate`` can report them all.
    """
    details = error.errors(include_url=False)
    by_path: dict[str, tuple[list[object], Any]] = {}
    for detail in details:
        loc = _field_loc(detail)
        path = list(prefix) + (path_for(loc) if path_for is not None else raw_path(raw, loc))
        # A value that fits no member of a union fails once per member (``ProblemType | str``):
        # report the place once, with the first member's (the model's) problem.
        spelled = format_path(path)
        if detail.get("type") != "missing" and not prefix and path and not _names_key(raw, path):
            spelled = format_path(path[:-1])
        if any(known == spelled or known.startswith((spelled + ".", spelled + "[")) for known in by_path):
            continue
        by_path[spelled] = (path, detail)
        if len(by_path) >= MAX_REPORTED:
            break
    (first_path, first), *others = by_path.values()
    location = locate(text, first_path, source) if text is not None else _plain_location(first_path, source)
    result = _format_error(first, location)
    if others:
        result.message += f" [and {len(others)} more problem(s)]"
        result.args = (result.message,)
        places: list[tuple[int, int] | None] = (
            locate_many(text, [format_path(path) for path, _ in others]) if text is not None else [None] * len(others)
        )
        for (path, detail), place in zip(others, places, strict=True):
            other = _plain_location(path, source)
            if place is not None:
                other = dataclasses.replace(other, line=place[0], col=place[1])
            result.related.append(_format_error(detail, other))
    return result


def _names_key(raw: Any, path: Sequence[object]) -> bool:
    """Whether ``path`` leads to an existing key or index of ``raw`` (else it ends in a union tag)."""
    node = raw
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    return True


MAX_REPORTED = 200
"""Problems reported per file (one per place in the document)."""


def _plain_location(path: list[object], source: str | None) -> Location:
    return Location(file=source, path=format_path(path) if path else None)


def _format_error(detail: Any, location: Location) -> LibraryFormatError:
    kind = detail.get("type", "")
    message = _message(detail)
    value = detail.get("input")
    if kind not in ("missing", "extra_forbidden") and not isinstance(value, (dict, list)):
        message += f" (got {value!r:.60})"
    cls: type[LibraryFormatError]
    if kind == "missing":
        cls = MissingField
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        cls = UnknownNodeType
    elif kind == _UNKNOWN_NODE_TYPE and isinstance(value, dict):
        cls = UnknownNodeType
    else:
        cls = InvalidValue
    return cls(message, location)


def add_line(error: LibraryFormatError, text: str | None) -> LibraryFormatError:
    """Fill in line and column of an error raised with a YAML path only (checks made before
    validation); the path resolves as far as the document goes. Returns ``error``."""
    location = error.location
    if text is None or location is None or location.line is not None or location.path is None:
        return error
    found = locate(text, parse_path(location.path))
    error.location = dataclasses.replace(location, line=found.line, col=found.col)
    return error


__all__ = ["add_line", "raw_path", "to_format_error"]

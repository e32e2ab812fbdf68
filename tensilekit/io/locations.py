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
from tensilekit.io.yaml_codec import locate, parse_path


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
    return str(error.get("msg", "invalid value"))


def to_format_error(
    error: ValidationError,
    raw: Any,
    *,
    source: str | None = None,
    text: str | None = None,
    prefix: Sequence[object] = (),
    path_for: Callable[[Sequence[int | str]], list[object]] | None = None,
) -> LibraryFormatError:
    """The first problem of ``error`` as a :class:`LibraryFormatError` with file, path, line, col."""
    details = error.errors(include_url=False)
    first = details[0]
    loc = tuple(first.get("loc", ()))
    path = list(prefix) + (path_for(loc) if path_for is not None else raw_path(raw, loc))
    if text is not None:
        location = locate(text, path, source)
    else:
        location = Location(file=source, path=format_path(path) if path else None)
    kind = first.get("type", "")
    message = _message(first)
    value = first.get("input")
    if kind not in ("missing", "extra_forbidden") and not isinstance(value, (dict, list)):
        message += f" (got {value!r:.60})"
    if len(details) > 1:
        message += f" [and {len(details) - 1} more problem(s)]"
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

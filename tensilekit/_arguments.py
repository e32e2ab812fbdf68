"""Argument checks for the public Python API.

A public function called with an argument of the wrong type raises :class:`TypeError` naming the
function, the argument and what it takes; a value of the right type but unusable (an empty path)
raises :class:`ValueError`. Without these checks a wrong type surfaced deep inside as an
``AttributeError`` or a bare ``AssertionError`` (issue 23 item 15). The checks are ``isinstance``
tests only, cheap enough for the per-query selection entry points.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensilekit.errors import PathTooLong

# Linux limits (limits.h): a longer name cannot exist or be created.
_NAME_MAX = 255
_PATH_MAX = 4096


def _names(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(kind.__name__ for kind in kinds)


def require(value: Any, expected: type | tuple[type, ...], name: str, function: str, *, optional: bool = False) -> None:
    """Raise TypeError unless ``value`` is an instance of ``expected`` (or None when ``optional``).

    ``bool`` is refused where ``int`` is expected (``True`` is no count)."""
    if value is None and optional:
        return
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in kinds and int in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if not ok:
        wanted = _names(expected) + (" or None" if optional else "")
        raise TypeError(f"{function}(): {name} must be {wanted}, not {type(value).__name__}")


def expand_home(text: str) -> str:
    """``text`` with a leading ``~`` or ``~user`` expanded as a shell would. Also where the shell
    leaves it (bash expands no ``~`` after ``=``: ``--output=~/x``), so tensilekit never makes a
    folder literally named ``~``. The one rule for every path the CLI or the API takes."""
    return os.path.expanduser(text) if text.startswith("~") else text


def check_path_length(text: str) -> None:
    """Raise :class:`~tensilekit.errors.PathTooLong` naming ``text`` when the system cannot hold
    it (a name over NAME_MAX or a path over PATH_MAX bytes), before any call answers ENAMETOOLONG."""
    encoded = os.fsencode(text)
    if len(encoded) >= _PATH_MAX or any(len(part) > _NAME_MAX for part in encoded.split(b"/")):
        raise path_too_long(text)


def path_too_long(text: str) -> PathTooLong:
    """The :class:`~tensilekit.errors.PathTooLong` naming ``text`` (its first 200 characters)."""
    from tensilekit.errors import Location, PathTooLong  # noqa: F811 - the runtime import

    return PathTooLong(
        f"file name too long (the system allows {_NAME_MAX} bytes a name, {_PATH_MAX - 1} a path)",
        Location(file=text[:200] + ("…" if len(text) > 200 else "")),
    )


def require_path(value: Any, name: str, function: str) -> Path:
    """``value`` as a Path: it must be a ``str`` or ``os.PathLike`` naming something (not "");
    a leading ``~`` is expanded (:func:`expand_home`)."""
    if not isinstance(value, (str, os.PathLike)):
        wanted = "str or os.PathLike"
        raise TypeError(f"{function}(): {name} must be a path ({wanted}), not {type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{function}(): {name} must be a str path, not {type(text).__name__}")
    if not text or "\0" in text:
        raise ValueError(f"{function}(): {name} must name a file, not {text!r:.80}")
    text = expand_home(text)
    check_path_length(text)  # else ENAMETOOLONG from whichever call looks first (an OSError)
    return Path(text)


def require_paths(value: Any, name: str, function: str) -> list[Path]:
    """``value`` (an iterable of paths, not a single string) as a list of Paths."""
    if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, Iterable):
        raise TypeError(f"{function}(): {name} must be an iterable of paths, not {type(value).__name__}")
    paths: list[Path] = []
    for item in value:
        paths.append(require_path(item, f"each of {name}", function))
    return paths


def require_callable(value: Any, name: str, function: str, *, optional: bool = False) -> None:
    """Raise TypeError unless ``value`` is callable (or None when ``optional``)."""
    if value is None and optional:
        return
    if not callable(value):
        raise TypeError(f"{function}(): {name} must be callable, not {type(value).__name__}")


def require_output_path(value: Any, name: str, function: str) -> Path:
    """``value`` as the path of a file to write: its folder must exist (an API writer refuses a
    missing folder as the CLI does, rather than creating it) and it must not be a folder."""
    from tensilekit.errors import InputNotFound, Location, UnsupportedFormat

    path = require_path(value, name, function)
    parent = path.parent
    if not parent.is_dir():
        raise InputNotFound(f"folder {parent} does not exist", Location(file=str(path)))
    if path.is_dir():
        raise UnsupportedFormat("is a folder; this output is a file", Location(file=str(path)))
    return path


def require_items(value: Any, expected: type | tuple[type, ...], name: str, function: str) -> list[Any]:
    """``value`` (an iterable of ``expected``, not a str or mapping) as a list."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise TypeError(f"{function}(): {name} must be an iterable of {_names(expected)}, not {type(value).__name__}")
    items = list(value)
    for item in items:
        require(item, expected, f"each of {name}", function)
    return items


def require_lines(value: Any, name: str, function: str) -> Iterable[str]:
    """``value`` (a whole text, or an iterable of lines such as a file object) as its lines; an
    item that is no ``str`` raises TypeError when it is reached (a stream is not read ahead)."""
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, (bytes, bytearray, dict)) or not isinstance(value, Iterable):
        raise TypeError(f"{function}(): {name} must be a str or an iterable of str, not {type(value).__name__}")
    return _checked_lines(value, name, function)


def _checked_lines(lines: Iterable[Any], name: str, function: str) -> Iterable[str]:
    for line in lines:
        if not isinstance(line, str):
            raise TypeError(f"{function}(): each of {name} must be str, not {type(line).__name__}")
        yield line


__all__ = [
    "check_path_length",
    "expand_home",
    "path_too_long",
    "require",
    "require_callable",
    "require_items",
    "require_lines",
    "require_output_path",
    "require_path",
    "require_paths",
]

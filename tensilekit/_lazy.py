"""Names a package exports but imports on first use (``tensilekit``, ``model``, ``pipeline``,
``selection``): start-up stays small, ``from package import Name`` still works (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` for ``package``: ``exports`` maps a public name to the module
    that defines it; the value is imported when first asked for and kept in ``namespace`` (the
    package's ``globals()``), so later lookups do not come back here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


__all__ = ["lazy_exports"]

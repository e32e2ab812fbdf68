"""hipBLASLt custom-kernel configurations: the ``custom.config`` block of ``CustomKernels/<name>.s``.

tensilelite's ``CustomKernels.getCustomKernelConfigAndAssembly``/``readCustomKernelConfig``
(``/work/shared/amd/tensilelite-7d9fb68/Tensile/CustomKernels.py:38-61``): the lines between ``---``
and ``...`` of the assembly file are YAML, and its ``custom.config`` mapping is the config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tensilekit.errors import InputNotFound, InvalidValue, Location


def custom_kernel_reader(directory: str | Path) -> Callable[[str], Mapping[str, Any]]:
    """A lookup ``name -> custom.config`` reading ``<directory>/<name>.s`` (cached per name)."""
    root = Path(directory)
    cache: dict[str, Mapping[str, Any]] = {}

    def read(name: str) -> Mapping[str, Any]:
        if name not in cache:
            cache[name] = read_custom_kernel_config(root / f"{name}.s")
        return cache[name]

    return read


def read_custom_kernel_config(path: str | Path) -> Mapping[str, Any]:
    """The ``custom.config`` mapping of one custom-kernel assembly file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        raise InputNotFound("custom kernel not found", Location(file=str(path))) from None
    lines, inside = [], False
    for line in text.splitlines():
        if line == "---":
            inside = True
        elif line == "...":
            inside = False
        elif inside:
            lines.append(line)
    try:
        data = yaml.safe_load("\n".join(lines)) if lines else None
    except yaml.YAMLError as exc:
        raise InvalidValue(f"custom kernel configuration is not YAML: {exc}", Location(file=str(path))) from None
    config = data.get("custom.config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        raise InvalidValue("custom kernel has no custom.config mapping", Location(file=str(path)))
    return config


__all__ = ["custom_kernel_reader", "read_custom_kernel_config"]

"""hipBLASLt custom-kernel configurations: the ``custom.config`` block of ``CustomKernels/<name>.s``.

Two versions of tensilelite's ``Tensile/CustomKernels.py`` are modelled; each rule says which:

* **7d9fb68** — hipBLASLt 7d9fb683 (tensilelite 4.33.0, ``../shared/amd/tensilelite-7d9fb68``), the
  version tensilekit builds masters as.
* **0132ec7** — newer tensilelite in ROCm/rocm-libraries
  (``projects/hipblaslt/tensilelite/Tensile/CustomKernels.py@0132ec78f837188d7ee2cea0e047b8c35ff76a7c``),
  whose ``.s`` files (e.g. ``Custom_Cijk_Ailk_Bljk_BBS_..._gfx950.s``) carry a full
  ``.amdgpu_metadata`` YAML document and spell types as letters (``DataType: b``).

Rules:

1. The config is the YAML between a line ``---`` and a line ``...``, its ``custom.config`` mapping
   (``getCustomKernelConfigAndAssembly``/``readCustomKernelConfig``; the same in both). The newer
   files put the whole ``amdhsa.kernels`` metadata in that document too: only ``custom.config``
   is read here.
2. Where the file is: ``<directory>/<name>.s`` (7d9fb68), else the first ``<name>.s`` anywhere under
   the directory (0132ec7's ``getCustomKernelFilepath`` walks sub-folders). The newer rule accepts
   every layout the older one does, so it is the one followed.
3. Data types may be written as text in any spelling ``DataType(str)`` accepts (``b``, ``bf16``,
   ``BFloat16``; 7d9fb68's ``DataType.py:264-270,419-432``, unchanged in 0132ec7): the config's
   ``ProblemType`` is handed to ``Solution`` as written (``k != "ProblemType"`` is skipped by
   ``checkParametersAreValid`` in both), and the build reads it with
   :func:`~tensilekit.model.tensilelite_parameters.lite_type`. Nothing here converts types.
4. ``InternalSupportParams.KernArgsVersion`` is required (both; checked where the config is used,
   ``model.derive_tensilelite``). 0132ec7's generated ``CustomKernel`` argument table (from the
   metadata) is not modelled: tensilekit builds the library, not the kernel's launch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tensilekit.errors import InputNotFound, InvalidValue, Location


def custom_kernel_reader(directory: str | Path) -> Callable[[str], Mapping[str, Any]]:
    """A lookup ``name -> custom.config`` reading ``<name>.s`` in ``directory`` (cached per name)."""
    root = Path(directory)
    cache: dict[str, Mapping[str, Any]] = {}

    def read(name: str) -> Mapping[str, Any]:
        if name not in cache:
            cache[name] = read_custom_kernel_config(custom_kernel_path(root, name))
        return cache[name]

    return read


def custom_kernel_path(directory: str | Path, name: str) -> Path:
    """Where kernel ``name`` is: ``<directory>/<name>.s`` (7d9fb68), else the first ``<name>.s``
    under ``directory`` in walk order (0132ec7 ``getCustomKernelFilepath``); the flat path when
    there is none (reading it then says it is missing)."""
    root = Path(directory)
    flat = root / f"{name}.s"
    if flat.is_file():
        return flat
    for folder, _, files in os.walk(root):
        if f"{name}.s" in files:
            return Path(folder) / f"{name}.s"
    return flat


def read_custom_kernel_config(path: str | Path) -> Mapping[str, Any]:
    """The ``custom.config`` mapping of one custom-kernel assembly file (rule 1 of the module)."""
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


__all__ = ["custom_kernel_path", "custom_kernel_reader", "read_custom_kernel_config"]

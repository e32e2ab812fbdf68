"""``tensilekit lint``: the semantic checks of a library (``validate`` is the structural one).

:func:`lint_library` runs the rules of :mod:`tensilekit.lint.rules` over one master library (pure:
models in, :class:`~tensilekit.model.checks.Finding` list out); :func:`lint_paths` is the file
edge (:mod:`tensilekit.lint.files`): it reads master libraries and logic files (building a logic
file's master as ``select`` does), points findings at the file's own YAML path and line, and adds
file sizes.
"""

from __future__ import annotations

from tensilekit.lint.files import FileLint, lint_file, lint_paths
from tensilekit.lint.rules import LintCode, LintOptions, Locator, MasterLocator, Measure, lint_library

__all__ = [
    "FileLint",
    "LintCode",
    "LintOptions",
    "Locator",
    "MasterLocator",
    "Measure",
    "lint_file",
    "lint_library",
    "lint_paths",
]

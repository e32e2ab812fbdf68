"""``tensilekit lint``: the semantic checks of a library (``validate`` is the structural one).

:func:`lint_library` runs the rules of :mod:`tensilekit.lint.rules` over one master library (pure:
models in, :class:`~tensilekit.model.checks.Finding` list out); :func:`lint_paths` is the file
edge: it reads master libraries and logic files (building a logic file's master as ``select``
does), points findings at the file's own YAML path and line, and adds file sizes.
"""

from __future__ import annotations

from tensilekit.lint.files import FileLint, lint_file, lint_paths
from tensilekit.lint.rules import LintCode, LintOptions, Locator, MasterLocator, Measure, lint_rules
from tensilekit.model.checks import Finding
from tensilekit.model.library import MasterLibrary
from tensilekit.selection.walk import Loader


def lint_library(
    library: MasterLibrary,
    *,
    options: LintOptions | None = None,
    locator: Locator | None = None,
    loader: Loader | None = None,
    measure: Measure | None = None,
    file_bytes: int | None = None,
) -> list[Finding]:
    """Semantic findings for one master library, rule by rule.

    Args:
        options: rule settings (grid-outlier factor, …).
        locator: how findings name tables, entries and kernels (default: paths in the master).
        loader: resolves ``Placeholder`` leaves of a lazy library (used by ``no-fallback``).
        measure: serialised size of raw objects, for the ``size`` findings' byte counts.
        file_bytes: the library file's size, for the ``size`` summary.
    """
    return lint_rules(library, options=options, locator=locator, loader=loader, measure=measure, file_bytes=file_bytes)


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

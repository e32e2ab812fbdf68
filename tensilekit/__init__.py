"""tensilekit: typed, fast, scriptable tooling for AMD Tensile and hipBLASLt GEMM libraries.

The public API: load and write logic files and master libraries, build master libraries,
predict kernel selection, merge and diff libraries, drive tuning. Names are imported lazily
(on first use), so ``import tensilekit`` and the CLI start quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensilekit._lazy import lazy_exports
from tensilekit._version import __version__
from tensilekit.errors import Location, TensilekitError

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from tensilekit.api import build_master, build_master_files, load, loads
    from tensilekit.coverage import CoverageReport, coverage_of
    from tensilekit.io.logic_io import dump_logic, dumps_logic, load_logic, loads_logic
    from tensilekit.io.master_io import dump_master, dumps_master, load_master, loads_master, open_master
    from tensilekit.io.yaml_codec import YamlStyle
    from tensilekit.library import Library, open_library
    from tensilekit.lint import lint_library, lint_paths
    from tensilekit.merge import (
        LibraryDiff,
        MergePolicy,
        MergeReport,
        diff_libraries,
        merge_directories,
        merge_logic,
        merge_paths,
        prune_logic,
    )
    from tensilekit.model.library import MasterLibrary
    from tensilekit.model.logic import Dialect, LogicFile
    from tensilekit.pipeline import TuneConfig, TuneReport, run_tuning
    from tensilekit.remapping import RemapReport, remap, write_remapped
    from tensilekit.selection import GemmProblem, Hardware, Selection, find_all_solutions, select_batch, select_solution

# public name -> module that defines it
_EXPORTS = {
    "build_master": "tensilekit.api",
    "build_master_files": "tensilekit.api",
    "load": "tensilekit.api",
    "loads": "tensilekit.api",
    "CoverageReport": "tensilekit.coverage",
    "coverage_of": "tensilekit.coverage",
    "dump_logic": "tensilekit.io.logic_io",
    "dumps_logic": "tensilekit.io.logic_io",
    "load_logic": "tensilekit.io.logic_io",
    "loads_logic": "tensilekit.io.logic_io",
    "dump_master": "tensilekit.io.master_io",
    "dumps_master": "tensilekit.io.master_io",
    "load_master": "tensilekit.io.master_io",
    "loads_master": "tensilekit.io.master_io",
    "open_master": "tensilekit.io.master_io",
    "YamlStyle": "tensilekit.io.yaml_codec",
    "Library": "tensilekit.library",
    "open_library": "tensilekit.library",
    "lint_library": "tensilekit.lint",
    "lint_paths": "tensilekit.lint",
    "MasterLibrary": "tensilekit.model.library",
    "Dialect": "tensilekit.model.logic",
    "LogicFile": "tensilekit.model.logic",
    "LibraryDiff": "tensilekit.merge",
    "MergePolicy": "tensilekit.merge",
    "MergeReport": "tensilekit.merge",
    "diff_libraries": "tensilekit.merge",
    "merge_directories": "tensilekit.merge",
    "merge_logic": "tensilekit.merge",
    "merge_paths": "tensilekit.merge",
    "prune_logic": "tensilekit.merge",
    "GemmProblem": "tensilekit.selection",
    "Hardware": "tensilekit.selection",
    "Selection": "tensilekit.selection",
    "find_all_solutions": "tensilekit.selection",
    "select_batch": "tensilekit.selection",
    "select_solution": "tensilekit.selection",
    "TuneConfig": "tensilekit.pipeline",
    "TuneReport": "tensilekit.pipeline",
    "run_tuning": "tensilekit.pipeline",
    "RemapReport": "tensilekit.remapping",
    "remap": "tensilekit.remapping",
    "write_remapped": "tensilekit.remapping",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "CoverageReport",
    "Dialect",
    "GemmProblem",
    "Hardware",
    "Library",
    "LibraryDiff",
    "Location",
    "LogicFile",
    "MasterLibrary",
    "MergePolicy",
    "MergeReport",
    "RemapReport",
    "Selection",
    "TensilekitError",
    "TuneConfig",
    "TuneReport",
    "YamlStyle",
    "__version__",
    "build_master",
    "build_master_files",
    "coverage_of",
    "diff_libraries",
    "dump_logic",
    "dump_master",
    "dumps_logic",
    "dumps_master",
    "find_all_solutions",
    "lint_library",
    "lint_paths",
    "load",
    "load_logic",
    "load_master",
    "loads",
    "loads_logic",
    "loads_master",
    "open_library",
    "open_master",
    "merge_directories",
    "merge_logic",
    "merge_paths",
    "prune_logic",
    "remap",
    "run_tuning",
    "select_batch",
    "select_solution",
    "write_remapped",
]

"""Merge, diff and prune library-logic files (AMD TensileMergeLibrary / merge.py semantics).

The pure core is :mod:`~tensilekit.merge.merge`, :mod:`~tensilekit.merge.diff` and
:mod:`~tensilekit.merge.prune`; :mod:`~tensilekit.merge.files` is the filesystem edge
(directory pairing, atomic writes).
"""

from tensilekit.merge.diff import (
    LibraryDiff,
    diff_libraries,
    exact_match_selector,
    grid_queries,
    runtime_selector,
    selection_changes,
)
from tensilekit.merge.files import load_queries, merge_directories, merge_files, merge_paths, prune_paths
from tensilekit.merge.identity import Compat
from tensilekit.merge.merge import MergePolicy, merge_logic
from tensilekit.merge.prune import PruneReport, prune_logic
from tensilekit.merge.report import FileMergeReport, MergeReport

__all__ = [
    "Compat",
    "FileMergeReport",
    "LibraryDiff",
    "MergePolicy",
    "MergeReport",
    "PruneReport",
    "diff_libraries",
    "grid_queries",
    "exact_match_selector",
    "load_queries",
    "merge_directories",
    "merge_files",
    "merge_logic",
    "merge_paths",
    "prune_logic",
    "prune_paths",
    "runtime_selector",
    "selection_changes",
]

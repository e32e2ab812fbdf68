"""Pydantic models of Tensile logic files, master libraries, predicates and solutions (no I/O).

Names are imported on first use: selection on a master needs the library models, not the logic
file ones (``model.logic`` costs ~25 ms of a ~0.4 s `select`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensilekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from tensilekit.model.library import (
        DecisionTreeNode,
        FreeSizeNode,
        GranularitySelectionNode,
        HardwareNode,
        LibraryNode,
        MasterLibrary,
        MatchingEntry,
        MatchingNode,
        PlaceholderNode,
        PredictionNode,
        ProblemMapNode,
        ProblemNode,
        Row,
        SingleNode,
    )
    from tensilekit.model.logic import Dialect, ExactLogicEntry, Layout, LogicFile, LogicSolution, ProblemType
    from tensilekit.model.predicates import Predicate
    from tensilekit.model.solution import MasterSolution, SizeMapping

_EXPORTS = {
    "DecisionTreeNode": "tensilekit.model.library",
    "Dialect": "tensilekit.model.logic",
    "ExactLogicEntry": "tensilekit.model.logic",
    "FreeSizeNode": "tensilekit.model.library",
    "GranularitySelectionNode": "tensilekit.model.library",
    "HardwareNode": "tensilekit.model.library",
    "Layout": "tensilekit.model.logic",
    "LibraryNode": "tensilekit.model.library",
    "LogicFile": "tensilekit.model.logic",
    "LogicSolution": "tensilekit.model.logic",
    "MasterLibrary": "tensilekit.model.library",
    "MasterSolution": "tensilekit.model.solution",
    "MatchingEntry": "tensilekit.model.library",
    "MatchingNode": "tensilekit.model.library",
    "PlaceholderNode": "tensilekit.model.library",
    "Predicate": "tensilekit.model.predicates",
    "PredictionNode": "tensilekit.model.library",
    "ProblemMapNode": "tensilekit.model.library",
    "ProblemNode": "tensilekit.model.library",
    "ProblemType": "tensilekit.model.logic",
    "Row": "tensilekit.model.library",
    "SingleNode": "tensilekit.model.library",
    "SizeMapping": "tensilekit.model.solution",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "DecisionTreeNode",
    "Dialect",
    "ExactLogicEntry",
    "FreeSizeNode",
    "GranularitySelectionNode",
    "HardwareNode",
    "Layout",
    "LibraryNode",
    "LogicFile",
    "LogicSolution",
    "MasterLibrary",
    "MasterSolution",
    "MatchingEntry",
    "MatchingNode",
    "PlaceholderNode",
    "PredictionNode",
    "Predicate",
    "ProblemMapNode",
    "ProblemNode",
    "ProblemType",
    "Row",
    "SingleNode",
    "SizeMapping",
]

"""Pydantic models of Tensile logic files, master libraries, predicates and solutions (no I/O)."""

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

"""Evaluate Tensile predicates (problem, hardware, task) against a query."""

from tensilekit.predicates.evaluate import Verdict, evaluate, evaluate_all

__all__ = ["Verdict", "evaluate", "evaluate_all"]

"""Predict which kernel the Tensile / tensilelite runtime selects (``findBestSolution``).

The problem model (:mod:`.problem`), the distances (:mod:`.distance`), the reference walk with its
trace (:mod:`.walk`) and the compiled fast path (:mod:`.fast`, :mod:`.kernels`, :mod:`.scan`,
:mod:`.columns`) behind the public functions of :mod:`.api`.
"""

from tensilekit.selection.api import (
    BatchSelection,
    CompiledLibrary,
    compile_library,
    find_all_solutions,
    select_batch,
    select_solution,
)
from tensilekit.selection.columns import ProblemColumns
from tensilekit.selection.problem import (
    ContractionProblem,
    GemmProblem,
    Hardware,
    HipblasltFields,
    PerformanceMetric,
    contraction_problem,
    hardware_from_query,
    parse_type_spec,
    problem_from_query,
)
from tensilekit.selection.walk import Candidate, Selection, TraceEvent
from tensilekit.selection.workload import WorkloadSelection, problem_from_workload, select_workload

__all__ = [
    "BatchSelection",
    "Candidate",
    "CompiledLibrary",
    "ContractionProblem",
    "GemmProblem",
    "Hardware",
    "HipblasltFields",
    "PerformanceMetric",
    "ProblemColumns",
    "Selection",
    "TraceEvent",
    "WorkloadSelection",
    "compile_library",
    "contraction_problem",
    "find_all_solutions",
    "hardware_from_query",
    "parse_type_spec",
    "problem_from_query",
    "problem_from_workload",
    "select_batch",
    "select_solution",
    "select_workload",
]

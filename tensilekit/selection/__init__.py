"""Predict which kernel the Tensile / tensilelite runtime selects (``findBestSolution``).

The problem model (:mod:`.problem`), the distances (:mod:`.distance`), the reference walk with its
trace (:mod:`.walk`) and the compiled fast path (:mod:`.fast`, :mod:`.kernels`, :mod:`.scan`,
:mod:`.columns`) behind the public functions of :mod:`.api`. What differs between rocBLAS's Tensile
and hipBLASLt's tensilelite runtime lives in :mod:`.runtime` (hipBLASLt's problem construction in
:mod:`.hipblaslt`).
"""

from typing import TYPE_CHECKING

from tensilekit._lazy import lazy_exports
from tensilekit.selection.answer import Candidate, Selection, TraceEvent
from tensilekit.selection.api import (
    BatchSelection,
    find_all_solutions,
    select_batch,
    select_solution,
    top_solutions,
)
from tensilekit.selection.hipblaslt import hipblaslt_problem, problem_from_hipblaslt_query
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
from tensilekit.selection.runtime import Runtime, TopSolutions, detect_runtime, runtime_named

if TYPE_CHECKING:
    from tensilekit.selection.columns import ProblemColumns
    from tensilekit.selection.fast import CompiledLibrary, compile_library
    from tensilekit.selection.workload import WorkloadSelection, problem_from_workload, select_workload

# Imported when first used: the workload bridge pulls in every workload parser (~40-100 ms), the
# compiled path numpy and its kernels (~70 ms); `select M N K` on a master needs neither.
_LAZY = {
    "WorkloadSelection": "tensilekit.selection.workload",
    "problem_from_workload": "tensilekit.selection.workload",
    "select_workload": "tensilekit.selection.workload",
    "CompiledLibrary": "tensilekit.selection.fast",
    "compile_library": "tensilekit.selection.fast",
    "ProblemColumns": "tensilekit.selection.columns",
}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


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
    "Runtime",
    "Selection",
    "TopSolutions",
    "TraceEvent",
    "WorkloadSelection",
    "compile_library",
    "contraction_problem",
    "detect_runtime",
    "find_all_solutions",
    "hardware_from_query",
    "hipblaslt_problem",
    "parse_type_spec",
    "problem_from_hipblaslt_query",
    "problem_from_query",
    "problem_from_workload",
    "runtime_named",
    "select_batch",
    "select_solution",
    "select_workload",
    "top_solutions",
]

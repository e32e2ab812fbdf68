"""Is my workload tuned? Which kernel each GEMM of a workload hits, how the runtime reached it,
and which GEMMs to tune next (``tensilekit coverage``).

:mod:`.classify` decides each GEMM's class from the route the runtime-exact selector records,
:mod:`.inputs` turns workloads into distinct GEMMs, :mod:`.tune_next` writes the ranking in the
forms ``tune`` and ``select --queries`` read. Pure: no file is read or written here.
"""

from tensilekit.coverage.classify import DEFAULT_NEAR, DEFAULT_TUNE_NEXT, Classifier, coverage_of, weigh
from tensilekit.coverage.inputs import (
    gemms_from_queries,
    gemms_from_workload,
    is_served,
    merge_gemms,
    type_letters,
    type_name,
)
from tensilekit.coverage.model import (
    CoverageClass,
    CoverageGemm,
    CoverageReport,
    EntryMatch,
    GemmCoverage,
    Skipped,
    TypeSummary,
    WeightBasis,
)
from tensilekit.coverage.slice import MapSlice, map_slice
from tensilekit.coverage.tune_next import GekoList, geko_lists, query_lines, query_record

__all__ = [
    "DEFAULT_NEAR",
    "DEFAULT_TUNE_NEXT",
    "Classifier",
    "CoverageClass",
    "CoverageGemm",
    "CoverageReport",
    "EntryMatch",
    "GekoList",
    "GemmCoverage",
    "MapSlice",
    "Skipped",
    "TypeSummary",
    "WeightBasis",
    "coverage_of",
    "gemms_from_queries",
    "gemms_from_workload",
    "geko_lists",
    "is_served",
    "map_slice",
    "merge_gemms",
    "query_lines",
    "query_record",
    "type_letters",
    "type_name",
    "weigh",
]

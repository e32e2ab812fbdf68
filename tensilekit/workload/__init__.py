"""Workloads: the GEMMs an application runs, read from hipBLASLt logs, GEKO lists and CSVs.

Parsers stream their input and return :class:`ParsedWorkload` (problems in order of first record,
repeated records folded as read, so memory grows with distinct GEMMs, not lines; bad lines; warnings);
:func:`aggregate_problems` merges identical problems and sums call counts;
:func:`group_by_gemm_type` splits them into GEMM types such as ``BBS_TN``.
"""

from tensilekit.workload.aggregate import (
    DeviceSplit,
    GemmGroup,
    Workload,
    aggregate_problems,
    deduplicate_problems,
    group_by_gemm_type,
    split_by_device,
)
from tensilekit.workload.csv_workloads import (
    TunableOpEntry,
    TunableOpFile,
    aiter_times,
    load_aiter_csv,
    load_tunableop_csv,
    parse_aiter_csv,
    parse_tunableop_csv,
    problem_from_tunableop,
)
from tensilekit.workload.detect import detect_workload_format, load_workload, load_workloads, parse_workload
from tensilekit.workload.geko_list import load_geko_list, parse_geko_list, parse_inline_gemm, types_from_tensile
from tensilekit.workload.hipblaslt_log import (
    HipblasltLog,
    LogLineKind,
    LogRecord,
    load_hipblaslt_log,
    parse_bench_line,
    parse_hipblaslt_log,
    parse_profile_line,
)
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import BadLine, ParsedWorkload, WorkloadFormat

__all__ = [
    "BadLine",
    "DeviceSplit",
    "GemmGroup",
    "GemmProblem",
    "HipblasltLog",
    "LogLineKind",
    "LogRecord",
    "ParsedWorkload",
    "TunableOpEntry",
    "TunableOpFile",
    "Workload",
    "WorkloadFormat",
    "aggregate_problems",
    "aiter_times",
    "deduplicate_problems",
    "detect_workload_format",
    "group_by_gemm_type",
    "load_aiter_csv",
    "load_geko_list",
    "load_hipblaslt_log",
    "load_tunableop_csv",
    "load_workload",
    "load_workloads",
    "parse_aiter_csv",
    "parse_bench_line",
    "parse_geko_list",
    "parse_hipblaslt_log",
    "parse_inline_gemm",
    "parse_profile_line",
    "parse_tunableop_csv",
    "parse_workload",
    "problem_from_tunableop",
    "split_by_device",
    "types_from_tensile",
]

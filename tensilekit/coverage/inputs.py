"""Turn workloads into the distinct GEMMs coverage asks about (pure: text and parsed workloads in).

Two sources: the workload formats :mod:`tensilekit.workload` reads (hipBLASLt logs, TunableOp and
AITER CSVs, GEKO lists), converted with ``select --from-log``'s
:func:`~tensilekit.selection.problem_from_workload`; and query JSON lines (``select --queries``
records, optionally with ``calls`` and ``time_us`` per call), read with
:func:`~tensilekit.selection.problem_from_query`. Identical GEMMs are merged with their calls and
measured times summed; a line that cannot be read is skipped and reported with its line number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from tensilekit._arguments import require, require_items, require_lines
from tensilekit.coverage.model import CoverageGemm, Skipped
from tensilekit.errors import SelectionError, TensilekitError
from tensilekit.io.limits import load_json_line
from tensilekit.model.common import DataType
from tensilekit.selection.problem import (
    GemmProblem,
    Hardware,
    hardware_from_query,
    problem_from_query,
    type_code,
)
from tensilekit.selection.runtime import Runtime
from tensilekit.selection.workload import problem_from_workload
from tensilekit.workload.aggregate import split_by_device
from tensilekit.workload.problem import GemmProblem as WorkloadGemm
from tensilekit.workload.records import BadLine, BadLineSink


@runtime_checkable
class ProblemBuilder(Protocol):
    """What builds a GEMM's problem as a library's runtime does (:class:`tensilekit.library.Library`
    is one): named by its methods, so coverage need not import the library module, which imports it."""

    def problem_from_query(self, record: Mapping[str, Any]) -> GemmProblem: ...

    def problem_from_workload(self, gemm: WorkloadGemm) -> GemmProblem: ...


def type_letters(problem: GemmProblem) -> tuple[str, str, str]:
    """Tensile's data, destination and compute letters of a problem (``("B", "B", "S")``).

    Data names both input types when they differ (``F8B8``); TF32 (f32 data, XFloat32 math) is
    ``X``, as in GEKO's GEMM types. Raises TypeError when ``problem`` is no GemmProblem.
    """
    require(problem, GemmProblem, "problem", "type_letters")
    a, b = type_code(problem.a_type), type_code(problem.b_type or problem.a_type)
    data = a if a == b else a + b
    if problem.f32_xdl_math_op is DataType.XFLOAT32 and problem.a_type is DataType.FLOAT:
        data = "X"
    return data, type_code(problem.d_type or problem.a_type), type_code(problem.compute_type or problem.a_type)


def type_name(problem: GemmProblem) -> str:
    """The GEMM type name of a selection problem (``BBS_TN``), spelled as
    :attr:`tensilekit.workload.GemmProblem.gemm_type` spells it. Raises TypeError when
    ``problem`` is no GemmProblem."""
    require(problem, GemmProblem, "problem", "type_name")
    data, dest, compute = type_letters(problem)
    return f"{data}{dest}{compute}_{problem.trans_a}{problem.trans_b}"


def gemms_from_workload(
    problems: Iterable[WorkloadGemm],
    hardware: Hardware,
    *,
    time_us: Mapping[tuple[Any, ...], float] | None = None,
    origin: str | None = None,
    runtime: Runtime | None = None,
    library: ProblemBuilder | None = None,
) -> tuple[list[CoverageGemm], list[Skipped]]:
    """One :class:`CoverageGemm` per workload GEMM (already de-duplicated by ``load_workloads``).

    ``time_us`` maps a GEMM's :meth:`~tensilekit.workload.GemmProblem.identity` to the measured
    time of one call (TunableOp results and AITER tuned files carry one); the GEMM's measured
    time is that times its calls. GEMMs selection cannot represent are skipped, and so are rows
    tuned for another device (:func:`~tensilekit.workload.split_by_device`), in one line. With
    ``library`` each problem is built as :meth:`tensilekit.library.Library.problem_from_workload`
    does (its runtime and workspace), else as ``runtime`` builds it.
    Raises TypeError for arguments of the wrong type.
    """
    require(hardware, Hardware, "hardware", "gemms_from_workload")
    require(runtime, Runtime, "runtime", "gemms_from_workload", optional=True)
    require(library, ProblemBuilder, "library", "gemms_from_workload", optional=True)
    gemms: list[CoverageGemm] = []
    skipped: list[Skipped] = []
    split = split_by_device(problems, hardware.arch, hardware.cu_count)  # AITER rows of another device
    note = split.note()
    if note is not None:
        skipped.append(Skipped(origin, note))
    for gemm in split.served:
        try:
            problem = library.problem_from_workload(gemm) if library else problem_from_workload(gemm, runtime)
        except SelectionError as error:
            skipped.append(Skipped(origin, f"{gemm.gemm_type} {gemm.m}x{gemm.n}x{gemm.k}: {error.message}"))
            continue
        per_call = None if time_us is None else time_us.get(gemm.identity())
        measured = None if per_call is None else per_call * gemm.call_count
        gemms.append(CoverageGemm(problem, hardware, gemm.gemm_type, gemm.call_count, measured, origin, workload=gemm))
    return gemms, skipped


_DEVICE_FIELDS = ("arch", "cu_count", "is_apu")


def _one_line(message: str) -> str:
    """A validation message on one line (pydantic spreads one error over several, with a URL)."""
    lines = [line.strip() for line in message.splitlines() if not line.strip().startswith("For further information")]
    return " ".join(line for line in lines if line)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SelectionError(f"{name} must be a positive integer, got {value!r}")
    return value


def _time(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SelectionError(f"time_us must be a non-negative number, got {value!r}")
    return float(value)


def gemms_from_queries(
    text: str | Iterable[str],
    *,
    file: str | None = None,
    hardware: Hardware | None = None,
    runtime: Runtime | None = None,
    library: ProblemBuilder | None = None,
) -> tuple[list[CoverageGemm], list[BadLine]]:
    """The GEMMs of a query JSON-lines text or its lines (a stream is read once, line by line).

    A record may add ``calls`` (or ``call_count``) and ``time_us``, the measured time of one
    call. Identical GEMMs are merged as they are read (:func:`merge_gemms`; memory grows with the
    distinct GEMMs, not the lines), each keeping its first ``file:line``. Lines that are not a
    usable query are skipped and returned as :class:`BadLine`\\ s.
    Raises TypeError for arguments of the wrong type.
    """
    lines = require_lines(text, "text", "gemms_from_queries")
    require(file, str, "file", "gemms_from_queries", optional=True)
    require(hardware, Hardware, "hardware", "gemms_from_queries", optional=True)
    require(runtime, Runtime, "runtime", "gemms_from_queries", optional=True)
    require(library, ProblemBuilder, "library", "gemms_from_queries", optional=True)
    sink = BadLineSink(file, skip=True)
    merged: dict[tuple[Any, ...], CoverageGemm] = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            record = load_json_line(stripped)
            if not isinstance(record, dict):
                raise SelectionError("each line must hold one JSON object")
            if library is not None:
                problem = library.problem_from_query(record)
            else:
                problem = problem_from_query(record) if runtime is None else runtime.problem_from_query(record)
            if hardware is not None and all(record.get(name) is None for name in _DEVICE_FIELDS):
                device = hardware  # the default device: no need to build it again
            else:
                device = hardware_from_query(record, hardware)
            calls = _positive_int(record.get("calls", record.get("call_count", 1)), "calls")
            per_call = _time(record.get("time_us"))
        except TensilekitError as error:
            sink.report(number, _one_line(error.message), line)
            continue
        measured = None if per_call is None else per_call * calls
        origin = f"{file or '<input>'}:{number}"
        _merge_into(merged, CoverageGemm(problem, device, type_name(problem), calls, measured, origin))
    return list(merged.values()), list(sink.bad_lines)


def _merge_into(merged: dict[tuple[Any, ...], CoverageGemm], gemm: CoverageGemm) -> None:
    """Fold ``gemm`` into the GEMM of the same (problem, device) in ``merged``, or add it."""
    key = gemm.key
    known = merged.get(key)
    if known is None:
        merged[key] = gemm
        return
    total = None if known.measured_us is None or gemm.measured_us is None else known.measured_us + gemm.measured_us
    merged[key] = known.replace(calls=known.calls + gemm.calls, measured_us=total)


def merge_gemms(gemms: Iterable[CoverageGemm]) -> list[CoverageGemm]:
    """One GEMM per distinct (problem, device), calls and measured times summed, first origin kept.

    A merged time is known only when every merged GEMM had one. Raises TypeError unless
    ``gemms`` are CoverageGemms.
    """
    gemms = require_items(gemms, CoverageGemm, "gemms", "merge_gemms")
    merged: dict[tuple[Any, ...], CoverageGemm] = {}
    for gemm in gemms:
        _merge_into(merged, gemm)
    return list(merged.values())


def _field(value: Any) -> Any:
    return value.value if isinstance(value, DataType) else value


def problem_fields(problem: GemmProblem) -> dict[str, Any]:
    """The problem-type fields :func:`~tensilekit.selection.served.served_problem_types` lists."""
    return {
        "trans_a": problem.trans_a,
        "trans_b": problem.trans_b,
        "a_type": _field(problem.a_type),
        "b_type": _field(problem.b_type),
        "c_type": _field(problem.c_type),
        "d_type": _field(problem.d_type),
        "hpa": problem.hpa,
        "strided_batched": problem.strided_batched,
        "stochastic_rounding": problem.stochastic_rounding,
    }


def is_served(problem: GemmProblem, served: Sequence[Mapping[str, Any]]) -> bool:
    """Whether one of the ``served`` problem types (``served_problem_types``) covers ``problem``.

    Raises TypeError for arguments of the wrong type."""
    require(problem, GemmProblem, "problem", "is_served")
    served = require_items(served, Mapping, "served", "is_served")
    fields = problem_fields(problem)
    return any(all(fields.get(key) == _field(value) for key, value in kind.items()) for kind in served)


__all__ = [
    "ProblemBuilder",
    "gemms_from_queries",
    "gemms_from_workload",
    "is_served",
    "merge_gemms",
    "problem_fields",
    "type_letters",
    "type_name",
]

"""What the tuning stages share: the benchmark job, the workload file, labels and tables."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tensilekit.errors import StageFailed, TensilekitError
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.jobs import Job, JobContext, JobKind, make_job
from tensilekit.pipeline.stage import BaseStage, StageContext, hash_path
from tensilekit.tools.create_library import (
    CreateLibraryConfig,
    CreateLibraryFlavor,
    master_library_dir,
    run_create_library,
)
from tensilekit.tools.hipblaslt_bench import AlgoMethod, BenchOptions, BenchResult, InvalidMeasurement, run_bench
from tensilekit.tools.profiles import tool_profile
from tensilekit.tools.runner import CommandRunner, SubprocessRunner
from tensilekit.tools.toolset import SimulatorConfig, toolset_for
from tensilekit.workload.problem import GemmProblem

WORKLOAD_FILE = "workload.json"

# Stage names, in pipeline order (the folder numbers follow from the graph).
INGEST = "ingest"
LIBRARY = "library"
BASELINE = "baseline"
SEARCH = "search"
BUILD = "build"
BENCHMARK = "benchmark"
POSTPROCESS = "postprocess"
FINAL = "final"
MERGE = "merge"
REPORT = "report"


class TuneStage(BaseStage):
    """A stage of the tuning pipeline (config is a :class:`TuneConfig`)."""

    def bench_tools(self, config: TuneConfig) -> list[str]:
        """The tool whose version matters to benchmarking stages."""
        return config.toolset().versioned_tools([config.bench_executable])


class GemmEntry(BaseModel):
    """A GEMM of the workload with its stable id (``g0001`` …, input order)."""

    model_config = ConfigDict(frozen=True)

    id: str
    problem: GemmProblem

    @property
    def label(self) -> str:
        return problem_label(self.problem)


def problem_label(problem: GemmProblem) -> str:
    """``BBS_TN 4096x8x1x4096`` (type, then M x N x batch x K)."""
    return f"{problem.gemm_type} {problem.m}x{problem.n}x{problem.batch}x{problem.k}"


def problem_columns(problem: GemmProblem) -> list[Any]:
    """The problem columns every per-GEMM CSV starts with (after id and data label)."""
    return [
        problem.gemm_type, problem.m, problem.n, problem.batch, problem.k, problem.trans_a, problem.trans_b,
        problem.a_type, problem.b_type, problem.c_type, problem.d_type, problem.compute_type,
    ]  # fmt: skip


PROBLEM_HEADER = [
    "gemm_type", "M", "N", "batch", "K", "transA", "transB", "a_type", "b_type", "c_type", "d_type", "compute_type",
]  # fmt: skip


def read_json(path: Path) -> Any:
    """Read a JSON file an upstream stage wrote; a missing or broken file is a :class:`StageFailed`."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise StageFailed(f"cannot read {path}: {error}") from None


def load_gemms(context: StageContext) -> list[GemmEntry]:
    """The workload written by the ingest stage."""
    data = read_json(context.upstream_path(INGEST, WORKLOAD_FILE))
    return [GemmEntry.model_validate(item) for item in data["gemms"]]


# --------------------------------------------------------------------------------------------
# The benchmark job


class BenchJobSpec(BaseModel):
    """Payload of :func:`bench_job`: one hipblaslt-bench run of one problem."""

    model_config = ConfigDict(frozen=True)

    problem: GemmProblem
    options: BenchOptions
    library_dir: str | None = None
    library_hash: str | None = None
    """Content hash of ``library_dir``: a rebuilt library invalidates cached results."""
    executable: str = "hipblaslt-bench"
    simulator: SimulatorConfig | None = None
    tool_profile: str | None = None
    """The hipBLASLt release whose command line the job speaks (:mod:`tensilekit.tools.profiles`)."""


def runner_for(spec: BenchJobSpec, context: JobContext | None = None) -> CommandRunner:
    """What runs the spec's bench: the run's tools (:func:`~tensilekit.tools.toolset.toolset_for`);
    real processes are killed when their output stops moving for the context's ``stall_timeout``."""
    return toolset_for(spec.simulator).bench_runner(context.stall_timeout if context is not None else None)


def compact_result(result: BenchResult) -> dict[str, Any]:
    """The fields of a bench result the stages use (JSON-able, cached per job)."""
    return {
        "solution_index": result.solution_index,
        "solution_name": result.solution_name or result.kernel_name,
        "kernel_name": result.kernel_name,
        "us": result.us,
        "gflops": result.gflops,
        "norm_error": result.number("norm_error"),
        "verify_failed": result.verification_failed,
    }


def invalid_row(result: BenchResult, reason: str) -> dict[str, Any]:
    """A row that is not a measurement, as a screen records it (JSON-able)."""
    return {
        "solution_index": result.solution_index,
        "solution_name": result.solution_name or result.kernel_name,
        "kernel_name": result.kernel_name,
        "reason": reason,
    }


def bench_job(context: JobContext, spec: BenchJobSpec) -> dict[str, Any]:
    """Run hipblaslt-bench (or the simulator) for one problem, pinned by ``context.env``.

    Raises whatever :func:`~tensilekit.tools.hipblaslt_bench.run_bench` raises (non-zero exit,
    timeout, stall, unparsable output). A row that is not a measurement (NaN, infinite, zero or
    negative time; a row cut short) is the problem of the solution that printed it:

    * in a screen (``--algo_method all``, hundreds of solutions in one run) the valid rows are
      kept in ``results`` and the bad ones listed in ``invalid`` with their reason; only when no
      row is valid does the job fail;
    * in a run of one solution (``index``, ``heuristic``) the job fails with
      :class:`~tensilekit.tools.hipblaslt_bench.InvalidMeasurement` (retried per ``--retries``,
      then reported), so it never becomes a result.

    A kernel that failed ``--verify`` (``failed`` tolerances) is a result: ``verify_failed``.
    """
    screen = spec.options.algo_method is AlgoMethod.ALL
    output = run_bench(
        runner_for(spec, context),
        spec.problem,
        spec.options,
        executable=spec.executable,
        library_dir=spec.library_dir,
        env=context.env,
        timeout=context.timeout,
        profile=tool_profile(spec.tool_profile) if spec.tool_profile else None,
        lenient=screen,
    )
    results: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    for result in output.results:
        problem = result.measurement_error()
        if problem is None:
            results.append(compact_result(result))
            continue
        solution = result.solution_name or result.kernel_name or result.solution_index
        if not screen:
            raise InvalidMeasurement(f"hipblaslt-bench reported {problem} for solution {solution}: a measurement error")
        invalid.append(invalid_row(result, problem))
    winner = output.winner
    if winner is not None and winner.measurement_error() is not None:
        if not screen:
            raise InvalidMeasurement(f"hipblaslt-bench reported {winner.measurement_error()} for its winner")
        winner = None
    if screen and not results:
        reasons = "; ".join(f"solution {row['solution_index']}: {row['reason']}" for row in invalid[:3])
        raise InvalidMeasurement(f"hipblaslt-bench printed no valid row ({len(invalid)} invalid: {reasons})")
    value: dict[str, Any] = {
        "results": results,
        "winner": compact_result(winner) if winner is not None else None,
    }
    if screen:
        value["invalid"] = invalid
    return value


class BenchPairSpec(BaseModel):
    """Payload of :func:`bench_pair_job`: one GEMM's reference and tuned library runs."""

    model_config = ConfigDict(frozen=True)

    reference: BenchJobSpec
    tuned: BenchJobSpec


def bench_pair_job(context: JobContext, spec: BenchPairSpec) -> dict[str, Any]:
    """The reference run, then the tuned run, back to back on the job's GPU.

    One job, so the two times compared are always taken together on one device: cached as a
    pair, retried as a pair, and both re-timed when either spec changes (a rebuilt tuned
    library). Returns ``{"reference": <bench_job value>, "tuned": <bench_job value>}``; a failure
    of either run fails the job, its message naming the side.
    """
    values: dict[str, Any] = {}
    for side, item in (("reference", spec.reference), ("tuned", spec.tuned)):
        try:
            values[side] = bench_job(context, item)
        except TensilekitError as error:
            error.message = f"{side} library run: {error.message}"
            raise
    return values


def bench_spec(
    config: TuneConfig,
    problem: GemmProblem,
    options: BenchOptions,
    library_dir: str | None = None,
    library_hash: str | None = None,
) -> BenchJobSpec:
    """A job spec for ``problem`` with the run's executable or simulator; ``library_dir`` None
    runs the library hipBLASLt finds itself (reference runs pass
    :func:`~tensilekit.pipeline.stages.library.reference_library_dir`)."""
    return BenchJobSpec(
        problem=problem.without_solution().with_call_count(1),
        options=options,
        library_dir=library_dir,
        library_hash=library_hash,
        executable=config.bench_executable,
        simulator=config.simulator(),
        tool_profile=config.hipblaslt_profile().name,
    )


def bench_job_for(job_id: str, spec: BenchJobSpec, cost: float, device_group: str | None = None) -> Job:
    return make_job(job_id, bench_job, spec, kind=JobKind.GPU, cost=cost, device_group=device_group)


# --------------------------------------------------------------------------------------------
# The TensileCreateLibrary job

TCL_DIR = "tcl"


class CreateLibraryJobSpec(BaseModel):
    """Payload of :func:`create_library_job`; ``logic_hash`` ties a cached result to the inputs."""

    model_config = ConfigDict(frozen=True)

    config: CreateLibraryConfig
    executable: str
    logic_hash: str


def create_library_job(context: JobContext, spec: CreateLibraryJobSpec) -> dict[str, Any]:
    """Run TensileCreateLibrary into a clean output directory; returns what it wrote."""
    shutil.rmtree(spec.config.output_dir, ignore_errors=True)
    result = run_create_library(SubprocessRunner(), spec.config, executable=spec.executable, timeout=context.timeout)
    return {
        "master_libraries": [str(path) for path in result.master_libraries],
        "code_objects": len(result.code_objects),
        "logic_files": len(result.log.logic_files),
    }


def create_library(context: StageContext, config: TuneConfig, logic_dir: Path) -> Path:
    """Build ``logic_dir`` with the run's TensileCreateLibrary into the stage's ``tcl/`` (a CPU job,
    retried like any other) and return the folder that holds the master library.

    Raises:
        StageFailed: every attempt failed, or no master library was written.
    """
    output = context.own_dir(context.path(TCL_DIR))  # the job empties it: it must be ours
    # The release's command line: hipBLASLt 7d9fb68 needs --merge-files --separate-architectures
    # for --lazy-library-loading (TensileCreateLibrary.py:1393-1394); rocm-libraries loads lazily
    # by default and has none of those flags.
    flavor = CreateLibraryFlavor(config.hipblaslt_profile().create_library_flavor)
    options: dict[str, Any] = (
        {"merge_files": True, "separate_architectures": True, "lazy_library_loading": True}
        if flavor is CreateLibraryFlavor.HIPBLASLT_2024 else {}
    )  # fmt: skip
    spec = CreateLibraryJobSpec(
        config=CreateLibraryConfig(
            logic_dir=logic_dir, output_dir=output, architecture=config.arch, library_format="msgpack",
            flavor=flavor, **options,
        ),
        executable=config.create_library_executable,
        logic_hash=hash_path(logic_dir),
    )  # fmt: skip
    job = make_job("create-library", create_library_job, spec, kind=JobKind.CPU, cost=60.0)
    (outcome,) = context.run_jobs([job], phase="create-library", subjects={job.id: str(logic_dir)})
    if not outcome.ok:
        raise StageFailed(f"TensileCreateLibrary failed after {outcome.attempts} attempt(s): {outcome.error}")
    # hipBLASLt reads HIPBLASLT_TENSILE_LIBPATH as is (tensile_host.cpp:1260-1440 @7d9fb68): the
    # benchmark must point at the master's own folder, library/<arch>/ for rocm-libraries' tool.
    library = master_library_dir(output, config.arch)
    if library is None:
        raise StageFailed(f"TensileCreateLibrary wrote no master library for {config.arch} under {output}")
    return library


def accurate_options(config: TuneConfig, **changes: Any) -> BenchOptions:
    """Options of an accurate, verified run with the fixed ``accurate_iters`` (the baseline, whose
    time sizes the later runs: :func:`timed_options`)."""
    values: dict[str, Any] = {
        "verify": True,
        "iters": config.accurate_iters,
        "cold_iters": config.accurate_cold_iters,
        "rotating": config.rotating_mb or None,
        "flush": config.flush,
        "print_kernel_info": True,
    }
    values.update(changes)
    return BenchOptions(**values)


def duration_iterations(duration_s: float, latency_us: float | None) -> int | None:
    """Iterations that make one phase last ``duration_s`` at ``latency_us`` per call (GEKO
    ``bench.log.update``: ``ceil(duration * 1e6 / latency)``); None when either is unknown."""
    if duration_s <= 0 or latency_us is None or not math.isfinite(latency_us) or latency_us <= 0:
        return None
    return max(math.ceil(duration_s * 1e6 / latency_us), 1)


def timed_options(config: TuneConfig, latency_us: float | None, **changes: Any) -> BenchOptions:
    """Options of a verified run compared with another one (a GEMM's reference and candidates,
    reference and tuned library): cold and timed phases each ``bench_duration`` long at the
    GEMM's baseline time, else ``accurate_iters``."""
    iterations = duration_iterations(config.bench_duration, latency_us)
    if iterations is not None:
        changes = {"iters": iterations, "cold_iters": iterations, **changes}
    return accurate_options(config, **changes)


def screen_options(config: TuneConfig) -> BenchOptions:
    """Options of a screen (``--algo_method all``): few iterations, but the accurate runs' rotating
    buffer and ``--flush``, so the screen ranks kernels cache-cold, as the runs that decide time
    them -- a kernel that is only fast with warm caches does not push the one best cold out of
    the ``top_k`` that are re-timed."""
    return BenchOptions(
        algo_method=AlgoMethod.ALL,
        iters=config.screen_iters,
        cold_iters=config.screen_cold_iters,
        rotating=config.rotating_mb or None,
        flush=config.flush,
        print_kernel_info=True,
    )


def error_gate_failure(error: float | None, reference: float | None, limit: float) -> str | None:
    """Why ``error`` fails the gate ``error / reference <= limit``, naming both errors (both may well
    be within hipblaslt-bench's ``--verify`` tolerance: the gate is relative); None when it passes
    or either error is unknown (pure)."""
    ratio = error_ratio(error, reference)
    if ratio is None or ratio <= limit:
        return None
    return f"error ratio {ratio:.3g} > {limit:g} (norm_error {error:.3g} vs the reference's {reference:.3g})"


def measurement_settings(config: TuneConfig) -> dict[str, Any]:
    """How verified runs are measured, as the report records it."""
    cold = (f"rotating buffer {config.rotating_mb} MB" if config.rotating_mb else "no rotating buffer") + (
        ", --flush" if config.flush else ", no --flush"
    )
    return {
        "screen": (
            f"every solution the library offers (--algo_method all), {config.screen_iters} timed and "
            f"{config.screen_cold_iters} cold iteration(s), {cold} -- measured as the accurate runs are; "
            f"the {config.top_k} fastest identified solutions are re-timed accurately"
        ),
        "same_device": (
            "a GEMM's reference and candidates on one GPU in one session; its reference and tuned runs one job: "
            "one GPU, back to back, cached and re-timed as a pair"
        ),
        "iterations": (
            f"cold and timed phases of {config.bench_duration:g} s each at the GEMM's baseline time"
            if config.bench_duration > 0
            else f"{config.accurate_iters} timed, {config.accurate_cold_iters} cold"
        ),
        "baseline_iterations": {"iters": config.accurate_iters, "cold_iters": config.accurate_cold_iters},
        "rotating_mb": config.rotating_mb,
        "flush": config.flush,
        "keep_threshold": config.up_thr,
        "error_threshold": config.err_thr,
    }


def error_ratio(error: float | None, reference: float | None) -> float | None:
    """``error / reference`` with a floor so exact results compare as equal (None if unknown)."""
    if error is None or reference is None:
        return None
    floor = 1e-30
    return (error + floor) / (reference + floor)


def share_table(values: Mapping[str, float]) -> dict[str, float]:
    """Each value's fraction of the total (0 when the total is 0)."""
    total = sum(values.values())
    return {key: (value / total if total > 0 else 0.0) for key, value in values.items()}


def keep_by_share(shares: Mapping[str, float], threshold: float, order: Sequence[str]) -> list[str]:
    """The ids that make up ``threshold`` of the total share, largest first (ties: ``order``).

    Always keeps at least one id when any exist; ``threshold`` 1.0 keeps all.
    """
    position = {key: index for index, key in enumerate(order)}
    ranked = sorted(shares, key=lambda key: (-shares[key], position.get(key, len(position))))
    kept: list[str] = []
    total = 0.0
    for key in ranked:
        if kept and total >= threshold - 1e-12:
            break
        kept.append(key)
        total += shares[key]
    return sorted(kept, key=lambda key: position.get(key, len(position)))


__all__ = [
    "BASELINE",
    "BENCHMARK",
    "BUILD",
    "FINAL",
    "INGEST",
    "LIBRARY",
    "MERGE",
    "POSTPROCESS",
    "PROBLEM_HEADER",
    "REPORT",
    "SEARCH",
    "WORKLOAD_FILE",
    "BenchJobSpec",
    "BenchPairSpec",
    "CreateLibraryJobSpec",
    "TCL_DIR",
    "GemmEntry",
    "TuneStage",
    "accurate_options",
    "duration_iterations",
    "error_gate_failure",
    "measurement_settings",
    "timed_options",
    "bench_job",
    "bench_job_for",
    "bench_pair_job",
    "bench_spec",
    "create_library",
    "create_library_job",
    "compact_result",
    "error_ratio",
    "invalid_row",
    "keep_by_share",
    "load_gemms",
    "problem_columns",
    "problem_label",
    "read_json",
    "runner_for",
    "screen_options",
    "share_table",
]

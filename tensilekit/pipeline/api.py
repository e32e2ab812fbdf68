"""The tuning pipeline's public entry point: :func:`run_tuning`."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from tensilekit._arguments import require, require_callable
from tensilekit._version import __version__
from tensilekit.errors import PipelineError
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.engine import PipelineRun, ToolVersion, executable_version, run_pipeline
from tensilekit.pipeline.executors import Executor
from tensilekit.pipeline.executors.local import LocalExecutor
from tensilekit.pipeline.preflight import preflight
from tensilekit.pipeline.progress import LabelledReporter, LogFileReporter, NullReporter, Reporter, TeeReporter
from tensilekit.pipeline.report import TuneReport
from tensilekit.pipeline.stages import ROCBLAS_STOPS_AT_CONFIGS, STAGE_NAMES, tune_stages
from tensilekit.pipeline.state import RunDirectory
from tensilekit.tools.runner import CommandRunner

LOG_NAME = "tune.log"


def _absolute(config: TuneConfig) -> TuneConfig:
    # Jobs may run in other working directories (Ray workers), so every path becomes absolute.
    def resolve(path: Path | None) -> Path | None:
        return None if path is None else path.expanduser().resolve()

    return config.model_copy(
        update={
            "workdir": resolve(config.workdir),
            "logs": tuple(path.expanduser().resolve() for path in config.logs),
            "merge_into": resolve(config.merge_into),
            "library_logic": resolve(config.library_logic),
            "reference_library": resolve(config.reference_library),
            "custom_kernels": resolve(config.custom_kernels),
        }
    )


def default_executor(config: TuneConfig) -> LocalExecutor:
    """The local device-pinned pool described by ``config`` (devices, slots, retries, timeouts)."""
    return LocalExecutor(
        config.devices,
        slots_per_device=config.slots_per_device,
        cpu_slots=config.cpu_slots,
        retries=config.retries,
        timeout=config.timeout,
        stall_timeout=config.stall_timeout,
    )


def _check(config: TuneConfig) -> None:
    for name in [*config.only, *([config.from_stage] if config.from_stage else [])]:
        if name not in STAGE_NAMES:
            raise PipelineError(f"no stage named {name!r} (stages: {', '.join(STAGE_NAMES)})")
    if config.from_stage and config.only:
        raise PipelineError("--from-stage and --only cannot be combined")
    ran = {stage.name for stage in tune_stages(config.mode, config.search_dialect)}
    for name in [*config.only, *([config.from_stage] if config.from_stage else [])]:
        if name not in ran:
            raise PipelineError(f"stage {name!r} does not run: {ROCBLAS_STOPS_AT_CONFIGS}")
    for path in config.logs:
        if not path.is_file():
            raise PipelineError(f"no such log file: {path}")
    if config.merge_into is not None and not config.merge_into.is_dir():
        raise PipelineError(f"--merge-into {config.merge_into} is not a directory")
    if not config.simulate and config.library_logic is None:
        raise PipelineError(
            "a real (not --simulate) run needs --library-logic DIR: the logic files the installed hipBLASLt "
            "was built from, so that winning solutions can be written into the tuned library"
        )


def _require_methods(value: object, name: str, methods: tuple[str, ...]) -> None:
    """TypeError unless ``value`` is None or has the protocol's methods."""
    if value is not None and not all(callable(getattr(value, method, None)) for method in methods):
        raise TypeError(f"run_tuning(): {name} lacks {', '.join(methods)}; got {type(value).__name__}")


def run_tuning(
    config: TuneConfig,
    executor: Executor | None = None,
    *,
    reporter: Reporter | None = None,
    tool_version: ToolVersion = executable_version,
    preflight_runner: CommandRunner | None = None,
) -> TuneReport:
    """Run (or resume) the tuning pipeline described by ``config`` and return its report.

    Args:
        config: the run; its ``workdir`` holds every stage's outputs and completion markers.
        executor: where jobs run; default a :class:`LocalExecutor` on ``config.devices``.
            An executor passed in is not closed.
        reporter: receives progress (the CLI's rich display); a plain log is always appended
            to ``<workdir>/tune.log``.
        tool_version: resolves a tool name to a version string for fingerprints.
        preflight_runner: runs ``hipblaslt-bench --version`` at preflight (tests pass a fake).

    Before any work, :func:`~tensilekit.pipeline.preflight.preflight` checks the tools, the
    ``--library-logic`` folder and the architecture, and decides the tool profile.

    Raises:
        PipelineError: bad options, a cycle, a stale work directory under ``no_rerun``, a
            stage that could not produce its outputs (:class:`~tensilekit.errors.StageFailed`),
            or ``abort_after`` jobs failing in a row (:class:`~tensilekit.errors.PipelineAborted`,
            exit 4; rerunning resumes).
        ToolError: preflight found a missing or unrunnable tool, or an architecture the tools
            do not know (exit 4); InputNotFound: an unreadable ``--library-logic`` (exit 3).
        ToolError, LibraryFormatError…: input that cannot be read at all.
        TypeError: an argument of the wrong type.
    """
    require(config, TuneConfig, "config", "run_tuning")
    require(executor, Executor, "executor", "run_tuning", optional=True)
    _require_methods(reporter, "reporter", ("stage_started", "stage_finished", "job_event", "message"))
    require_callable(tool_version, "tool_version", "run_tuning")
    _require_methods(preflight_runner, "preflight_runner", ("run",))
    config = _absolute(config)
    _check(config)
    config, preflight_messages = preflight(config, preflight_runner)
    run_dir = RunDirectory(config.workdir)
    own_executor = executor is None
    chosen = executor or default_executor(config)
    try:
        with run_dir.lock():
            log = LogFileReporter(config.workdir / LOG_NAME)
            combined: Reporter = TeeReporter(reporter or NullReporter(), log)
            if config.simulate:
                combined = LabelledReporter(combined, f"[{config.data_label}]")  # the tools' label
            try:
                combined.message(f"tensilekit {__version__} tune in {config.workdir} on {chosen.describe()}")
                for message in preflight_messages:
                    combined.message(message)
                run_dir.write_run_info(
                    {"tensilekit": __version__, "executor": chosen.describe(), "config": config.model_dump(mode="json")}
                )
                pipeline = run_pipeline(
                    tune_stages(config.mode, config.search_dialect), config, run_dir, executor=chosen, reporter=combined, from_stage=config.from_stage,
                    only=config.only, no_rerun=config.no_rerun, tool_version=tool_version, simulated=config.simulate,
                    retire_after=config.retire_after, abort_after=config.abort_after,
                )  # fmt: skip
            finally:
                log.close()
    finally:
        if own_executor:
            chosen.close()
    return load_report(config, pipeline)


def load_report(config: TuneConfig, pipeline: PipelineRun | None = None) -> TuneReport:
    """The report in ``config.workdir`` (an empty one when the report stage has not run)."""
    require(config, TuneConfig, "config", "load_report")
    require(pipeline, PipelineRun, "pipeline", "load_report", optional=True)
    path = Path(config.workdir) / "report.json"
    try:
        report = TuneReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        note = ROCBLAS_STOPS_AT_CONFIGS if config.search_dialect == "tensile" else "the report stage has not run"
        report = TuneReport(data=config.data_label, arch=config.arch, gemms=(), notes=(note,))
    if pipeline is not None:
        report = report.model_copy(update={"runs": pipeline.stages})
    return report


__all__ = ["LOG_NAME", "default_executor", "load_report", "run_tuning"]

"""Run a stage graph in a run directory: resume, skip, rerun, and record completion.

State machine (``run_pipeline``), for each stage in :func:`~tensilekit.pipeline.graph.execution_order`:

1. **Select.** With ``only`` the stages not named are ``not selected``: they are not run, and
   a selected stage whose upstream has no valid marker fails with :class:`StageFailed`.
   ``from_stage`` forces that stage and everything downstream of it.
2. **Fingerprint.** Input hashes are the upstream stages' recorded output hashes (so a rerun
   that reproduces identical outputs does not invalidate what follows) plus the hashes of the
   stage's external files; tool versions come from the injected ``tool_version`` resolver.
3. **Decide** with :func:`~tensilekit.pipeline.state.decide`: ``up-to-date`` is skipped;
   ``stale``/``damaged`` raise :class:`StaleRunDirectory` under ``no_rerun``; everything else runs
   (``retry``: a stage that completed with failed jobs runs again, its successes from the cache).
4. **Run.** The old marker is removed first, the stage runs with a :class:`StageContext`,
   its declared outputs are checked, ``failures.json`` is written, and only then the new marker
   (atomically). A crash or SIGKILL at any point leaves either no marker (the stage reruns,
   reusing its cached jobs) or a complete one. So does an abort
   (:class:`~tensilekit.errors.PipelineAborted`, ``abort_after`` failed jobs in a row; see
   :mod:`~tensilekit.pipeline.resilience`, which also explains ``retire_after``).

Stages run one at a time in the calling thread; the parallelism is inside a stage, in the
executor. (Generations from :func:`~tensilekit.pipeline.graph.topological_generations` could
run concurrently, but every stage here is either cheap or already fills the devices.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tensilekit._arguments import require, require_items
from tensilekit.errors import StageFailed, StaleRunDirectory
from tensilekit.pipeline.executors import Executor
from tensilekit.pipeline.graph import build_graph, downstream_of, execution_order, upstream_of
from tensilekit.pipeline.progress import NullReporter, Reporter
from tensilekit.pipeline.resilience import FailureBreaker
from tensilekit.pipeline.stage import (
    FingerprintInputs,
    JobFailure,
    Stage,
    StageContext,
    hash_path,
    relative_to_root,
)
from tensilekit.pipeline.state import RunDirectory, StageMarker, StageStatus, decide, explain_staleness

FAILURES_NAME = "failures.json"
ToolVersion = Callable[[str], str]


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def executable_version(name: str) -> str:
    """A tool's identity: the sha256 of the executable found on ``PATH`` (no process started).

    Running a tool just to ask its version costs seconds for hipblaslt-bench; the binary's hash
    changes whenever the installation does, which is what a fingerprint needs. Names starting
    with ``builtin:`` (the simulator) are their own version.
    """
    if name.startswith("builtin:"):
        return name
    found = shutil.which(name)
    if found is None:
        return "not found"
    stat = Path(found).stat()
    return f"sha256:{_file_digest(found, stat.st_mtime_ns, stat.st_size)}"


@dataclasses.dataclass(frozen=True)
class StageRun:
    """What happened to one stage in a run."""

    name: str
    number: int
    status: StageStatus
    reason: str
    marker: StageMarker | None

    @property
    def ran(self) -> bool:
        return self.status.runs


@dataclasses.dataclass(frozen=True)
class PipelineRun:
    """The stages of a run, in execution order."""

    stages: tuple[StageRun, ...]

    def stage(self, name: str) -> StageRun:
        for run in self.stages:
            if run.name == name:
                return run
        raise KeyError(name)

    @property
    def ran(self) -> list[str]:
        return [run.name for run in self.stages if run.ran]

    @property
    def skipped(self) -> list[str]:
        return [run.name for run in self.stages if not run.ran]


def stage_numbers(stages: Sequence[Stage]) -> dict[str, int]:
    """Stage name -> folder number (1-based position in execution order)."""
    graph = build_graph(stages)
    return {name: position for position, name in enumerate(execution_order(graph), start=1)}


def run_pipeline(
    stages: Sequence[Stage],
    config: Any,
    run_dir: RunDirectory,
    *,
    executor: Executor,
    reporter: Reporter | None = None,
    from_stage: str | None = None,
    only: Sequence[str] = (),
    no_rerun: bool = False,
    tool_version: ToolVersion = executable_version,
    simulated: bool = False,
    clock: Callable[[], float] = time.monotonic,
    retire_after: int = 0,
    abort_after: int = 0,
) -> PipelineRun:
    """Run ``stages`` in ``run_dir``, skipping what is up to date; see the module docstring.

    ``retire_after`` failed attempts (over all runs) retire a job; ``abort_after`` jobs failing
    one after the other stop the run (0: never; :mod:`~tensilekit.pipeline.resilience`).

    Raises:
        DependencyCycle: the stages' inputs form a cycle.
        StaleRunDirectory: ``no_rerun`` and a completed stage no longer matches.
        StageFailed: a stage could not produce its outputs, or ``only`` lacks an upstream.
        PipelineAborted: ``abort_after`` consecutive jobs failed.
        TypeError: an argument of the wrong type (stages without a ``name``, a run directory or
            executor of another kind).
    """
    stages = require_items(stages, Stage, "stages", "run_pipeline")
    require(run_dir, RunDirectory, "run_dir", "run_pipeline")
    if not callable(getattr(executor, "run", None)):
        raise TypeError(f"run_pipeline(): executor must be an Executor, not {type(executor).__name__}")
    report = reporter or NullReporter()
    breaker = FailureBreaker(abort_after)
    graph = build_graph(stages)
    order = execution_order(graph)
    numbers = {name: position for position, name in enumerate(order, start=1)}
    forced = downstream_of(graph, [from_stage]) if from_stage else set()
    selected = set(order)
    if only:
        downstream_of(graph, only)  # validates the names
        selected = set(only)
        forced |= selected
    markers: dict[str, StageMarker | None] = {}
    runs: list[StageRun] = []
    tool_cache: dict[str, str] = {}

    def version_of(tool: str) -> str:
        if tool not in tool_cache:
            tool_cache[tool] = tool_version(tool)
        return tool_cache[tool]

    for name in order:
        stage: Stage = graph.nodes[name]["stage"]
        number = numbers[name]
        if name not in selected:
            marker = run_dir.read_marker(number, name)
            markers[name] = marker
            runs.append(StageRun(name, number, StageStatus.NOT_SELECTED, "not selected by --only", marker))
            report.stage_skipped(number, name, "not selected by --only")
            continue
        input_hashes: dict[str, str] = {}
        upstream_dirs: dict[str, Path] = {}
        for upstream in upstream_of(graph, name):
            upstream_marker = markers.get(upstream)
            if upstream_marker is None:
                raise StageFailed(
                    f"stage {number:02d}_{name} needs stage {numbers[upstream]:02d}_{upstream}, which has not "
                    "completed in this work directory; run without --only first"
                )
            upstream_dirs[upstream] = run_dir.stage_dir(numbers[upstream], upstream)
            for output, digest in upstream_marker.outputs.items():
                input_hashes[f"{upstream}:{output}"] = digest
        for position, external in enumerate(stage.input_files(config)):
            input_hashes[f"input[{position}]"] = hash_path(external)
        tools = {tool: version_of(tool) for tool in stage.tools(config)}
        fingerprint = stage.fingerprint(config, FingerprintInputs(input_hashes, tools))
        marker = run_dir.read_marker(number, name)
        current: dict[str, str] = {}
        if marker is not None and marker.fingerprint == fingerprint and name not in forced:
            current = run_dir.current_hashes(marker.outputs)
        status, reason = decide(marker, fingerprint, current, forced=name in forced)
        if status is StageStatus.UP_TO_DATE:
            markers[name] = marker
            runs.append(StageRun(name, number, status, reason, marker))
            report.stage_skipped(number, name, reason)
            continue
        if no_rerun and status in (StageStatus.STALE, StageStatus.DAMAGED):
            assert marker is not None
            detail = reason
            if status is StageStatus.STALE:
                detail = explain_staleness(marker, stage.config_slice(config), input_hashes, tools)
            raise StaleRunDirectory(
                f"stage {number:02d}_{name} in {run_dir.root} is {status.value} ({detail}); "
                "rerun without --no-rerun to redo it, or use another --workdir"
            )
        if status is StageStatus.STALE:
            assert marker is not None
            # said, never silent: the earlier run's results (a GA search's hours included) are
            # replaced, and what changed is named (issue 32 item 9)
            detail = explain_staleness(marker, stage.config_slice(config), input_hashes, tools)
            reason = (
                f"{detail}; replaces the results of its earlier run in {run_dir.stage_dir(number, name)} "
                "(another --workdir keeps them)"
            )
        marker = _run_stage(
            stage, number, config, run_dir, executor, report, upstream_dirs, fingerprint,
            input_hashes, tools, status, reason, simulated, clock, retire_after, breaker,
        )  # fmt: skip
        markers[name] = marker
        runs.append(StageRun(name, number, status, reason, marker))
    return PipelineRun(tuple(runs))


def _write_failures(context: StageContext, path: Path) -> list[JobFailure]:
    """``failures.json``: the stage's failed jobs, sorted; returns them."""
    failures = sorted(context.failures, key=lambda failure: (failure.phase, failure.job_id))
    context.write_json(path, [failure.model_dump(mode="json") for failure in failures])
    return failures


def _run_stage(
    stage: Stage,
    number: int,
    config: Any,
    run_dir: RunDirectory,
    executor: Executor,
    report: Reporter,
    upstream_dirs: dict[str, Path],
    fingerprint: str,
    input_hashes: dict[str, str],
    tools: dict[str, str],
    status: StageStatus,
    reason: str,
    simulated: bool,
    clock: Callable[[], float],
    retire_after: int = 0,
    breaker: FailureBreaker | None = None,
) -> StageMarker:
    name = stage.name
    directory = run_dir.stage_dir(number, name)
    run_dir.remove_marker(number, name)
    directory.mkdir(parents=True, exist_ok=True)
    context = StageContext(
        name=name, number=number, directory=directory, run_root=run_dir.root, config=config,
        executor=executor, reporter=report, upstream=upstream_dirs, fresh=status is StageStatus.FORCED,
        retire_after=retire_after, breaker=breaker,
    )  # fmt: skip
    report.stage_started(number, name, f"{status.value}: {reason}")
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    started = clock()
    try:
        result = stage.run(context)
    except Exception as error:
        # Whatever stopped the stage, the jobs that failed before it are on disk, and a message
        # that points to failures.json says where.
        failures_path = directory / FAILURES_NAME
        with contextlib.suppress(OSError):  # a full disk refuses this too: the stage's own error is the news
            _write_failures(context, failures_path)
        if isinstance(error, StageFailed) and FAILURES_NAME in error.message and str(failures_path) not in str(error):
            raise StageFailed(error.message.replace(FAILURES_NAME, str(failures_path)), error.location) from error
        raise
    for relative in stage.outputs:
        path = directory / relative
        if not path.exists():
            raise StageFailed(f"stage {number:02d}_{name} did not write its output {relative}")
        context.record(path)
    failures = _write_failures(context, directory / FAILURES_NAME)
    outputs = {relative_to_root(path, run_dir.root): hash_path(path) for path in context.written}
    marker = StageMarker(
        stage=name, number=number, version=stage.version, fingerprint=fingerprint,
        config_slice=stage.config_slice(config), inputs=input_hashes, tools=tools, outputs=outputs,
        started_at=started_at, duration_s=round(clock() - started, 3), jobs_total=context.jobs_total,
        jobs_cached=context.jobs_cached, jobs_failed=len(failures), failures=tuple(failures),
        summary=result.summary, simulated=simulated,
    )  # fmt: skip
    run_dir.write_marker(marker)
    summary = result.summary
    if failures:
        retired = sum(1 for failure in failures if failure.retired)
        summary += f" ({len(failures)} job(s) failed" + (f", {retired} retired)" if retired else ")")
    report.stage_finished(number, name, summary)
    for note in result.notes:
        report.message(f"{name}: {note}")
    return marker


__all__ = ["FAILURES_NAME", "PipelineRun", "StageRun", "executable_version", "run_pipeline", "stage_numbers"]

"""Stages: what one pipeline step declares (inputs, outputs, fingerprint) and the context it runs in.

A stage is skipped on resume only when its fingerprint matches its completion marker. The
fingerprint (:func:`compute_fingerprint`, triton's ``check_disk_cache`` key applied per stage)
is sha256 over the stage name and version, the slice of the configuration the stage reads, the
hashes of its input files (external files and the upstream stages' outputs) and the versions of
the tools it drives. Anything not in the fingerprint (devices, executor, retries) must not
change a stage's outputs.

:class:`StageContext` is the stage's only door to the world: files go through its writers (so
they are atomic and recorded as outputs), jobs through :meth:`StageContext.run_jobs` (executor,
job cache, progress events).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from tensilekit.errors import StageFailed
from tensilekit.io.atomic import write_bytes_atomic, write_text_atomic
from tensilekit.pipeline.executors import Executor
from tensilekit.pipeline.jobs import Job, JobEvent, JobFinished, JobOutcome
from tensilekit.pipeline.progress import Reporter
from tensilekit.pipeline.resilience import (
    RETIRED,
    FailureBreaker,
    FailureRecord,
    is_retired,
    read_failure_record,
    write_failure_record,
)

_CHUNK = 1 << 20


def hash_bytes(data: bytes) -> str:
    """sha256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def hash_file(path: str | Path) -> str:
    """sha256 hex digest of a file's contents."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hash_path(path: str | Path) -> str:
    """A file's hash, or for a directory the hash over its files' relative names and hashes.

    Hidden entries (``.done.json``, temp files) are ignored. A missing path hashes as
    ``"missing"`` so that creating it later changes the fingerprint.
    """
    root = Path(path)
    if root.is_file():
        return hash_file(root)
    if not root.is_dir():
        return "missing"
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        relative = file.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not file.is_file():
            continue
        digest.update(relative.as_posix().encode())
        digest.update(b"\0")
        digest.update(hash_file(file).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON, the form every hash in the pipeline is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def compute_fingerprint(
    name: str,
    version: str,
    config_slice: Mapping[str, Any],
    input_hashes: Mapping[str, str],
    tool_versions: Mapping[str, str],
) -> str:
    """sha256 over name, version, config slice, input hashes and tool versions (pure)."""
    payload = {
        "stage": name,
        "version": version,
        "config": dict(config_slice),
        "inputs": dict(input_hashes),
        "tools": dict(tool_versions),
    }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class FingerprintInputs:
    """What the engine resolved for a fingerprint: input hashes and tool versions."""

    input_hashes: Mapping[str, str]
    tool_versions: Mapping[str, str]


class JobFailure(BaseModel):
    """A job that failed for good; failures are results and end up in the report."""

    model_config = ConfigDict(frozen=True)

    stage: str
    phase: str
    job_id: str
    subject: str = ""
    """What the job was about, e.g. ``BBS_TN 4096x8x1x4096 solution 1003``."""
    attempts: int
    error_type: str | None = None
    error: str | None = None
    timed_out: bool = False
    retired: bool = False
    """The job has failed ``--retire-after`` attempts over all runs and is not started again
    (:mod:`tensilekit.pipeline.resilience`); a stage whose failures are all retired is complete."""


class StageResult(BaseModel):
    """What a stage reports when it finishes."""

    model_config = ConfigDict(frozen=True)

    summary: str = ""
    notes: tuple[str, ...] = ()


@runtime_checkable
class Stage(Protocol):
    """One pipeline step.

    ``inputs`` names upstream stages; ``outputs`` names files or folders the stage must leave
    in its own directory (checked after :meth:`run`). Extra files written through the context
    (top-level summaries) are recorded as outputs too.
    """

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str:
        """Bumped when the stage's code changes what it writes (invalidates old markers)."""
        ...

    @property
    def inputs(self) -> tuple[str, ...]: ...

    @property
    def outputs(self) -> tuple[str, ...]: ...

    def config_slice(self, config: Any) -> dict[str, Any]:
        """The configuration values that can change this stage's outputs (JSON-able)."""
        ...

    def input_files(self, config: Any) -> list[Path]:
        """External files or folders the stage reads (hashed into the fingerprint)."""
        ...

    def tools(self, config: Any) -> list[str]:
        """Programs whose version matters (``hipblaslt-bench``; ``simulator`` when simulated)."""
        ...

    def fingerprint(self, config: Any, inputs: FingerprintInputs) -> str:
        """sha256 of name, version, config slice, input hashes and tool versions."""
        ...

    def run(self, context: StageContext) -> StageResult:
        """Produce the outputs; raise :class:`~tensilekit.errors.StageFailed` if impossible."""
        ...


class BaseStage:
    """Defaults for :class:`Stage`: no external inputs, no tools, the standard fingerprint."""

    name: str = ""
    version: str = "1"
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def config_slice(self, config: Any) -> dict[str, Any]:
        return {}

    def input_files(self, config: Any) -> list[Path]:
        return []

    def tools(self, config: Any) -> list[str]:
        return []

    def fingerprint(self, config: Any, inputs: FingerprintInputs) -> str:
        return compute_fingerprint(
            self.name, self.version, self.config_slice(config), inputs.input_hashes, inputs.tool_versions
        )

    def run(self, context: StageContext) -> StageResult:
        raise NotImplementedError


def _write_cache_entry(path: Path, text: str) -> None:
    """Write a job-cache file by temp file and rename, *without* fsync.

    Cache entries are written on the scheduler's thread for every finished job; an fsync each
    (milliseconds) would delay the dispatch of the next job. Rename keeps them whole against a
    killed process; after a power loss a lost or empty entry only means that job runs again
    (unreadable entries are ignored). Stage outputs and markers still go through
    :mod:`tensilekit.io.atomic` with fsync.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:  # a full disk: no half-written temporary is left in the run directory
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def finite_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON ``null``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(item) for item in value]
    return value


def contained_dir(root: Path, path: Path) -> Path:
    """Create ``path`` under ``root`` and return it; :class:`StageFailed` when it (or a folder on
    the way) is a symlink or its real path is not inside ``root`` (see :meth:`StageContext.own_dir`)."""
    root_real = Path(root).resolve()
    target = Path(path) if Path(path).is_absolute() else Path(root) / path
    try:
        relative = target.relative_to(root)
    except ValueError:
        raise StageFailed(f"refusing to write {target}: it is outside the work directory {root}") from None
    current = Path(root)
    for part in relative.parts:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.resolve().is_relative_to(root_real)):
            raise StageFailed(
                f"refusing to write into {current}: it is a link to {current.resolve()}, outside the work directory "
                f"{root}; tensilekit writes and deletes only inside it (remove the link)"
            )
    target.mkdir(parents=True, exist_ok=True)
    return target


def _safe_name(job_id: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in job_id)


class StageContext:
    """Everything a running stage may use; records the files it writes and the jobs that failed.

    ``fresh`` (the stage was forced with ``--from-stage``/``--only``) makes :meth:`run_jobs`
    ignore cached job results and failure counts; otherwise a job whose cache file holds the
    same key is not run again, which is what lets a killed search resume where it stopped. Only
    successes are cached: a failed job runs again when the stage does, until it is retired
    after ``retire_after`` failed attempts; ``breaker`` counts consecutive failures over the
    run (:mod:`tensilekit.pipeline.resilience`).
    """

    def __init__(
        self,
        *,
        name: str,
        number: int,
        directory: Path,
        run_root: Path,
        config: Any,
        executor: Executor,
        reporter: Reporter,
        upstream: Mapping[str, Path],
        fresh: bool = False,
        retire_after: int = 0,
        breaker: FailureBreaker | None = None,
    ) -> None:
        self.name = name
        self.number = number
        self.directory = directory
        self.run_root = run_root
        self.config = config
        self.executor = executor
        self.reporter = reporter
        self.upstream = dict(upstream)
        self.fresh = fresh
        self.retire_after = retire_after
        self.breaker = breaker or FailureBreaker()
        self.written: list[Path] = []
        self.failures: list[JobFailure] = []
        self.jobs_total = 0
        self.jobs_cached = 0

    # ---------------------------------------------------------------------------- files

    def path(self, relative: str | Path) -> Path:
        """A path inside the stage's directory."""
        return self.directory / relative

    def own_dir(self, path: Path) -> Path:
        """``path`` (a folder under the work directory) created and checked to be really inside it.

        The pipeline writes and deletes only inside its work directory: a folder that is a
        symlink, or whose real path leads elsewhere (``W/merged -> ~/hipBLASLt/Logic``), is refused
        with :class:`~tensilekit.errors.StageFailed` before anything in it is touched.
        """
        return contained_dir(self.run_root, path)

    def upstream_path(self, stage: str, relative: str | Path) -> Path:
        """A path inside an upstream stage's directory."""
        return self.upstream[stage] / relative

    def record(self, path: Path) -> Path:
        """Mark a file (or folder) written by other means as an output."""
        if path not in self.written:
            self.written.append(path)
        return path

    def write_text(self, path: Path, text: str) -> Path:
        """Write a text file atomically and record it."""
        write_text_atomic(path, text)
        return self.record(path)

    def write_bytes(self, path: Path, data: bytes) -> Path:
        write_bytes_atomic(path, data)
        return self.record(path)

    def write_json(self, path: Path, value: Any) -> Path:
        """Write indented, sorted-key JSON atomically (deterministic bytes).

        Always valid JSON: a NaN or infinite number (an uplift over a zero time) is written as
        ``null``, never as the ``NaN``/``Infinity`` tokens no JSON reader accepts.
        """
        text = json.dumps(finite_json(value), indent=1, sort_keys=True, default=str, allow_nan=False)
        return self.write_text(path, text + "\n")

    def write_csv(self, path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
        """Write a CSV atomically (``\\n`` line ends, values via :func:`format_cell`)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([format_cell(value) for value in row])
        return self.write_text(path, buffer.getvalue())

    def log(self, text: str) -> None:
        self.reporter.message(f"{self.name}: {text}")

    # ---------------------------------------------------------------------------- jobs

    def _cache_file(self, job: Job) -> Path:
        return self.directory / "jobs" / f"{_safe_name(job.id)}.json"

    def _cached(self, job: Job) -> JobOutcome | None:
        if self.fresh or not job.key:
            return None
        file = self._cache_file(job)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != job.key or "value" not in data:
            return None
        return JobOutcome(
            job_id=job.id, ok=True, value=data["value"], attempts=int(data.get("attempts", 1)),
            device=data.get("device"), node=data.get("node"), cached=True,
        )  # fmt: skip

    def _failure_file(self, job: Job) -> Path:
        return self.directory / "jobs" / f"{_safe_name(job.id)}.failed.json"

    def _failure_record(self, job: Job) -> FailureRecord | None:
        if self.fresh or not job.key:
            return None
        return read_failure_record(self._failure_file(job), job.key)

    def _store(self, job: Job, outcome: JobOutcome, earlier: FailureRecord | None) -> FailureRecord | None:
        """Cache a success (dropping its failure record) or count a failure's attempts."""
        if not job.key:
            return None
        if not outcome.ok:
            record = FailureRecord(
                key=job.key, failures=(earlier.failures if earlier else 0) + outcome.attempts,
                error_type=outcome.error_type, error=outcome.error,
            )  # fmt: skip
            write_failure_record(self._failure_file(job), record)
            return record
        entry = {
            "key": job.key, "job": job.id, "value": outcome.value, "attempts": outcome.attempts,
            "device": outcome.device, "node": outcome.node,
        }  # fmt: skip
        _write_cache_entry(self._cache_file(job), json.dumps(entry, sort_keys=True, default=str))
        if earlier is not None or self.fresh:  # fresh: a record from before may exist, unread
            self._failure_file(job).unlink(missing_ok=True)
        return None

    def run_jobs(
        self, jobs: Sequence[Job], *, phase: str, subjects: Mapping[str, str] | None = None
    ) -> list[JobOutcome]:
        """Run ``jobs`` on the executor (cached results first); outcomes parallel to ``jobs``.

        Jobs of one ``device_group`` reuse their cached results only all together: when one of
        them must run, the whole group runs again (on one GPU, in this session). Each successful
        outcome is written to the job cache as soon as it arrives. Failures are
        recorded in :attr:`failures` (with ``subjects[job.id]`` as the subject) and returned,
        never raised. A retired job is not run: its outcome is a failure of type ``Retired``.

        Raises:
            PipelineAborted: the run's ``breaker`` counted too many failures in a row (jobs
                already running finish first and their results are cached).
        """
        subjects = subjects or {}
        by_id = {job.id: job for job in jobs}
        results: dict[str, JobOutcome] = {}
        records: dict[str, FailureRecord | None] = {}
        todo: list[Job] = []
        for job in jobs:
            cached = self._cached(job)
            if cached is not None:
                results[job.id] = cached
                continue
            record = records[job.id] = self._failure_record(job)
            if is_retired(record, self.retire_after):
                assert record is not None
                results[job.id] = JobOutcome(
                    job_id=job.id, ok=False, attempts=0, error_type=RETIRED,
                    error=f"not run: retired after {record.failures} failed attempt(s) in earlier runs "
                    f"(last: {record.error_type}: {record.error})",
                )  # fmt: skip
            else:
                todo.append(job)
        # Measurements of one device group are compared with each other: taken in one session on
        # one GPU or not at all. A group with a job to run runs again whole, its cached results
        # (perhaps from another GPU, before an interruption) are not mixed with new ones.
        rerun_groups = {job.device_group for job in todo if job.device_group is not None}
        if rerun_groups:
            for job in jobs:
                outcome = results.get(job.id)
                if job.device_group in rerun_groups and outcome is not None and outcome.cached:
                    del results[job.id]
            todo = [job for job in jobs if job.id not in results]
        retired_now = {job_id for job_id, outcome in results.items() if outcome.error_type == RETIRED}
        if retired_now:
            self.log(f"{phase}: {len(retired_now)} retired job(s) not run (--retire-after {self.retire_after})")
        cached_count = len(jobs) - len(todo) - len(retired_now)
        self.jobs_total += len(jobs)
        self.jobs_cached += cached_count
        self.reporter.jobs_queued(self.name, phase, todo, cached_count, self.executor.devices)

        def on_event(event: JobEvent) -> None:
            if isinstance(event, JobFinished):
                outcome = event.outcome
                job = by_id[outcome.job_id]
                record = self._store(job, outcome, records.get(job.id))
                if is_retired(record, self.retire_after):
                    retired_now.add(job.id)
            self.reporter.job_event(self.name, event)
            if isinstance(event, JobFinished):
                if event.outcome.ok:
                    self.breaker.success()
                else:
                    self.breaker.failure(self.name, event.outcome, subjects.get(event.outcome.job_id, ""))

        if todo:
            for outcome in self.executor.run(todo, on_event):
                results[outcome.job_id] = outcome
        for job in jobs:
            outcome = results[job.id]
            if not outcome.ok:
                self.failures.append(
                    JobFailure(
                        stage=self.name,
                        phase=phase,
                        job_id=job.id,
                        subject=subjects.get(job.id, ""),
                        attempts=outcome.attempts,
                        error_type=outcome.error_type,
                        error=outcome.error,
                        timed_out=outcome.timed_out,
                        retired=job.id in retired_now,
                    )  # fmt: skip
                )
        return [results[job.id] for job in jobs]


def format_cell(value: Any) -> str:
    """CSV text for a value: floats with 6 significant digits, None as empty, bools as 0/1."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if value != value:  # NaN
            return "nan"
        return format(value, ".6g")
    return str(value)


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (marker keys)."""
    return Path(os.path.relpath(path, root)).as_posix()


__all__ = [
    "BaseStage",
    "FingerprintInputs",
    "JobFailure",
    "Stage",
    "StageContext",
    "StageResult",
    "canonical_json",
    "compute_fingerprint",
    "format_cell",
    "hash_bytes",
    "hash_file",
    "hash_path",
    "relative_to_root",
]

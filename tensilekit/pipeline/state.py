"""The run directory: numbered stage folders, completion markers, and the resume decision.

Layout::

    <workdir>/
      .lock                      held (flock) while a run is active
      run.json                   the last run's configuration (informational)
      01_ingest/ .done.json …    one folder per stage, numbered in execution order
      02_library/ …

A stage's ``.done.json`` (:class:`StageMarker`) is written atomically *after* its outputs. It
holds the stage's fingerprint, the hash of every output, timings, job counts and the jobs that
failed. Resume decision (:func:`decide`, pure):

=================  ==========================================================================
status             when
=================  ==========================================================================
``new``            no marker (never ran, or killed before finishing)
``up-to-date``     marker fingerprint matches and every output still has its recorded hash
``stale``          the fingerprint differs (configuration, inputs or tool versions changed)
``damaged``        fingerprint matches but an output is missing or was modified
``retry``          up to date, but jobs failed that are not retired: the stage runs again,
                   its successful jobs come from the job cache and only the failed ones run
``forced``         ``--from-stage`` / ``--only`` asked for a rerun
=================  ==========================================================================

Only ``up-to-date`` stages are skipped. With ``--no-rerun`` a ``stale`` or ``damaged`` stage
raises :class:`~tensilekit.errors.StaleRunDirectory` instead of being redone (protecting hours of
GPU time from a mistyped option); ``new`` and ``retry`` stages still run (they redo nothing that
succeeded).
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tensilekit.errors import PipelineError
from tensilekit.io.atomic import write_text_atomic
from tensilekit.pipeline.stage import JobFailure, hash_path

MARKER_NAME = ".done.json"
LOCK_NAME = ".lock"
MARKER_FORMAT = 1


class StageStatus(str, enum.Enum):
    """Why a stage runs or is skipped."""

    NEW = "new"
    UP_TO_DATE = "up-to-date"
    STALE = "stale"
    DAMAGED = "damaged"
    RETRY = "retry"
    FORCED = "forced"
    NOT_SELECTED = "not selected"

    @property
    def runs(self) -> bool:
        """Whether a stage with this status is executed."""
        return self in (StageStatus.NEW, StageStatus.STALE, StageStatus.DAMAGED, StageStatus.RETRY, StageStatus.FORCED)


class StageMarker(BaseModel):
    """The completion marker ``NN_stage/.done.json``."""

    model_config = ConfigDict(frozen=True)

    format: int = MARKER_FORMAT
    stage: str
    number: int
    version: str
    fingerprint: str
    config_slice: dict[str, Any] = {}
    inputs: dict[str, str] = {}
    tools: dict[str, str] = {}
    outputs: dict[str, str]
    """Output path relative to the run directory -> sha256 (files) or tree hash (folders)."""
    started_at: str = ""
    duration_s: float = 0.0
    jobs_total: int = 0
    jobs_cached: int = 0
    jobs_failed: int = 0
    failures: tuple[JobFailure, ...] = ()
    summary: str = ""
    simulated: bool = False


def decide(
    marker: StageMarker | None, fingerprint: str, current_outputs: Mapping[str, str], *, forced: bool = False
) -> tuple[StageStatus, str]:
    """The resume decision for one stage and a human-readable reason (pure).

    ``current_outputs`` maps each of the marker's outputs to its hash now (``"missing"`` when
    gone); see the module docstring for the table.
    """
    if forced:
        return StageStatus.FORCED, "rerun requested"
    if marker is None:
        return StageStatus.NEW, "not run yet"
    if marker.fingerprint != fingerprint:
        return StageStatus.STALE, "configuration, inputs or tools changed since it ran"
    for path, recorded in sorted(marker.outputs.items()):
        now = current_outputs.get(path, "missing")
        if now == "missing":
            return StageStatus.DAMAGED, f"output {path} is missing"
        if now != recorded:
            return StageStatus.DAMAGED, f"output {path} was modified"
    retry = [failure for failure in marker.failures if not failure.retired]
    if retry:
        return StageStatus.RETRY, f"{len(retry)} failed job(s) to retry"
    return StageStatus.UP_TO_DATE, "up to date"


def explain_staleness(
    marker: StageMarker, config_slice: Mapping[str, Any], inputs: Mapping[str, str], tools: Mapping[str, str]
) -> str:
    """Name what changed between a marker and the current fingerprint inputs (for errors)."""
    changes: list[str] = []
    for key in sorted(set(marker.config_slice) | set(config_slice)):
        if marker.config_slice.get(key) != config_slice.get(key):
            changes.append(f"option {key}: {marker.config_slice.get(key)!r} -> {config_slice.get(key)!r}")
    for key in sorted(set(marker.inputs) | set(inputs)):
        if marker.inputs.get(key) != inputs.get(key):
            changes.append(f"input {key} changed")
    for key in sorted(set(marker.tools) | set(tools)):
        if marker.tools.get(key) != tools.get(key):
            changes.append(f"tool {key} changed")
    return "; ".join(changes) or "stage version changed"


class RunDirectory:
    """A work directory of numbered stage folders with their completion markers."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def stage_dir(self, number: int, name: str) -> Path:
        return self.root / f"{number:02d}_{name}"

    def marker_path(self, number: int, name: str) -> Path:
        return self.stage_dir(number, name) / MARKER_NAME

    def read_marker(self, number: int, name: str) -> StageMarker | None:
        """The stage's marker, or None when absent or unreadable (then the stage reruns)."""
        path = self.marker_path(number, name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            marker = StageMarker.model_validate(data)
        except (OSError, ValueError, ValidationError):
            return None
        if marker.stage != name or marker.format != MARKER_FORMAT:
            return None
        return marker

    def write_marker(self, marker: StageMarker) -> Path:
        """Write the marker atomically (call only after every output is in place)."""
        path = self.marker_path(marker.number, marker.stage)
        write_text_atomic(path, json.dumps(marker.model_dump(mode="json"), indent=1, sort_keys=True) + "\n")
        return path

    def remove_marker(self, number: int, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.marker_path(number, name).unlink()

    def current_hashes(self, outputs: Mapping[str, str]) -> dict[str, str]:
        """The hash of each listed output as it is on disk now."""
        return {path: hash_path(self.root / path) for path in outputs}

    def write_run_info(self, info: Mapping[str, Any]) -> None:
        write_text_atomic(self.root / "run.json", json.dumps(dict(info), indent=1, sort_keys=True, default=str) + "\n")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold an exclusive lock on the run directory for the duration of a run.

        ``flock`` is released by the kernel when the process dies, even by SIGKILL, so a killed
        run never leaves a stale lock behind.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PipelineError(f"another tensilekit run is using {self.root}") from None
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode())
            yield
        finally:
            os.close(descriptor)


__all__ = ["MARKER_NAME", "RunDirectory", "StageMarker", "StageStatus", "decide", "explain_staleness"]

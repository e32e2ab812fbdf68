"""Progress reporting: the interface the pipeline talks to instead of printing.

Library code never prints; it calls a :class:`Reporter`. The CLI injects a rich display
(:mod:`tensilekit.cli.tune_progress`), tests inject :class:`RecordingReporter`, and every run
also appends plain lines to ``<workdir>/tune.log`` through :class:`LogFileReporter`.
Reporters are called from the pipeline's thread only.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Protocol

from tensilekit.pipeline.jobs import Job, JobEvent, JobFinished, JobRetrying, JobStarted


class Reporter(Protocol):
    """Receives what the pipeline is doing."""

    def stage_started(self, number: int, name: str, reason: str) -> None: ...

    def stage_skipped(self, number: int, name: str, reason: str) -> None: ...

    def stage_finished(self, number: int, name: str, summary: str) -> None: ...

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        """A batch of jobs goes to the executor (``cached`` more were taken from the job cache)."""
        ...

    def job_event(self, stage: str, event: JobEvent) -> None: ...

    def message(self, text: str) -> None: ...


class NullReporter:
    """Ignores everything."""

    def stage_started(self, number: int, name: str, reason: str) -> None:
        return None

    def stage_skipped(self, number: int, name: str, reason: str) -> None:
        return None

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        return None

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        return None

    def job_event(self, stage: str, event: JobEvent) -> None:
        return None

    def message(self, text: str) -> None:
        return None


def describe_event(stage: str, event: JobEvent) -> str | None:
    """One log line for a job event (None for events not worth a line)."""
    if isinstance(event, JobStarted):
        return None
    if isinstance(event, JobRetrying):
        return f"{stage}: job {event.job_id} attempt {event.attempt} failed on device {event.device}, retrying: {event.error}"
    outcome = event.outcome
    if outcome.ok:
        return None
    return f"{stage}: job {outcome.job_id} FAILED after {outcome.attempts} attempt(s): {outcome.error_type}: {outcome.error}"


class RecordingReporter:
    """Keeps every call as a line of text (tests, ``--json`` style consumers)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.events: list[tuple[str, JobEvent]] = []

    def stage_started(self, number: int, name: str, reason: str) -> None:
        self.lines.append(f"stage {number:02d}_{name} started ({reason})")

    def stage_skipped(self, number: int, name: str, reason: str) -> None:
        self.lines.append(f"stage {number:02d}_{name} skipped ({reason})")

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        self.lines.append(f"stage {number:02d}_{name} finished: {summary}")

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        self.lines.append(f"{stage}/{phase}: {len(jobs)} job(s) queued, {cached} cached")

    def job_event(self, stage: str, event: JobEvent) -> None:
        self.events.append((stage, event))
        line = describe_event(stage, event)
        if line is not None:
            self.lines.append(line)

    def message(self, text: str) -> None:
        self.lines.append(text)


class LogFileReporter:
    """Appends timestamped lines to a log file (``<workdir>/tune.log``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._stream: IO[str] | None = self.path.open("a", encoding="utf-8")

    def _write(self, text: str) -> None:
        if self._stream is None:
            return
        stamp = datetime.datetime.now().isoformat(timespec="seconds")
        self._stream.write(f"{stamp} {text}\n")
        self._stream.flush()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def stage_started(self, number: int, name: str, reason: str) -> None:
        self._write(f"stage {number:02d}_{name} started ({reason})")

    def stage_skipped(self, number: int, name: str, reason: str) -> None:
        self._write(f"stage {number:02d}_{name} skipped ({reason})")

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        self._write(f"stage {number:02d}_{name} finished: {summary}")

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        self._write(f"{stage}/{phase}: {len(jobs)} job(s) queued on devices {','.join(devices)}, {cached} from cache")

    def job_event(self, stage: str, event: JobEvent) -> None:
        line = describe_event(stage, event)
        if line is None and isinstance(event, JobFinished):
            outcome = event.outcome
            line = f"{stage}: job {outcome.job_id} done on device {outcome.device} in {outcome.duration:.3f}s"
        if line is not None:
            self._write(line)

    def message(self, text: str) -> None:
        self._write(text)


class TeeReporter:
    """Forwards every call to several reporters."""

    def __init__(self, *reporters: Reporter) -> None:
        self.reporters = reporters

    def stage_started(self, number: int, name: str, reason: str) -> None:
        for reporter in self.reporters:
            reporter.stage_started(number, name, reason)

    def stage_skipped(self, number: int, name: str, reason: str) -> None:
        for reporter in self.reporters:
            reporter.stage_skipped(number, name, reason)

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        for reporter in self.reporters:
            reporter.stage_finished(number, name, summary)

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        for reporter in self.reporters:
            reporter.jobs_queued(stage, phase, jobs, cached, devices)

    def job_event(self, stage: str, event: JobEvent) -> None:
        for reporter in self.reporters:
            reporter.job_event(stage, event)

    def message(self, text: str) -> None:
        for reporter in self.reporters:
            reporter.message(text)


class LabelledReporter(TeeReporter):
    """Adds a label (``[SIMULATED]``) to every message, stage summary and batch of jobs."""

    def __init__(self, inner: Reporter, label: str) -> None:
        super().__init__(inner)
        self.label = label

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        super().stage_finished(number, name, f"{self.label} {summary}")

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        super().jobs_queued(stage, f"{phase} {self.label}", jobs, cached, devices)

    def message(self, text: str) -> None:
        super().message(f"{self.label} {text}")


__all__ = [
    "LabelledReporter",
    "LogFileReporter",
    "NullReporter",
    "RecordingReporter",
    "Reporter",
    "TeeReporter",
    "describe_event",
]

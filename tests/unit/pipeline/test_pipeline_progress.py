"""Progress: reporters and the CLI's rich display in non-terminal mode."""

from __future__ import annotations

import io

from rich.console import Console

from tensilekit.cli.tune_progress import TuneProgress, format_eta
from tensilekit.pipeline.jobs import JobFinished, JobKind, JobOutcome, JobRetrying, JobStarted, make_job
from tensilekit.pipeline.progress import LabelledReporter, RecordingReporter, TeeReporter


def noop(context: object, payload: int) -> int:
    return payload


def test_labelled_reporter_marks_messages_and_summaries() -> None:
    inner = RecordingReporter()
    reporter = LabelledReporter(inner, "[SIMULATED]")
    reporter.message("hello")
    reporter.stage_finished(3, "baseline", "14 timed")
    reporter.stage_started(4, "search", "new")
    reporter.jobs_queued("search", "screen", [], 0, ("0",))
    assert inner.lines == [
        "[SIMULATED] hello",
        "stage 03_baseline finished: [SIMULATED] 14 timed",
        "stage 04_search started (new)",
        "search/screen [SIMULATED]: 0 job(s) queued, 0 cached",
    ]


def test_tee_reporter_forwards() -> None:
    first, second = RecordingReporter(), RecordingReporter()
    TeeReporter(first, second).stage_skipped(1, "ingest", "up to date")
    assert first.lines == second.lines == ["stage 01_ingest skipped (up to date)"]


def test_format_eta() -> None:
    assert (format_eta(None), format_eta(65.4), format_eta(3725)) == ("--:--", "01:05", "1:02:05")


def test_tune_progress_prints_one_line_per_batch_off_terminal() -> None:
    stream = io.StringIO()
    ticks = iter(float(value) for value in range(100))
    progress = TuneProgress(Console(file=stream, width=200, force_terminal=False), clock=lambda: next(ticks))
    jobs = [make_job(f"j{i}", noop, i, cost=1.0) for i in range(3)]
    progress.stage_started(4, "search", "new: not run yet")
    progress.jobs_queued("search", "screen", jobs, 2, ("0", "1"))
    progress.job_event("search", JobStarted("j0", 1, 0, JobKind.GPU))
    progress.job_event("search", JobFinished(JobOutcome("j0", True, device=0), JobKind.GPU))
    assert progress.eta() is not None
    progress.job_event("search", JobRetrying("j1", 1, 1, "status 3"))
    progress.job_event(
        "search",
        JobFinished(
            JobOutcome("j1", False, attempts=2, error_type="ToolFailed", error="status 3", device=1), JobKind.GPU
        ),
    )
    progress.job_event("search", JobFinished(JobOutcome("j2", True, device=1), JobKind.GPU))
    progress.stage_finished(4, "search", "done")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "04_search running (new: not run yet)"
    assert lines[1] == "  search/screen: 3 job(s) on device(s) 0,1, 2 from the job cache"
    assert lines[2] == "  retrying j1 (attempt 1 failed: status 3)"
    assert lines[3] == "  FAILED j1 after 2 attempt(s): ToolFailed: status 3"
    assert lines[4].startswith("  search/screen: 2/3 done, 1 failed, 1 retried in ") and lines[4].endswith(
        "(per device 0:1 1:2)"
    )
    assert lines[5] == "04_search done: done"

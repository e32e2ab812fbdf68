"""Long-run resilience: retiring jobs that keep failing, and stopping a run whose node is broken.

Two rules, both GEKO's (``geko/optim/utils.py`` ``.failcount`` retirement and the runner's
``abort_after_consecutive_failures``, ROCm/rocm-libraries ``projects/hipblaslt/utilities/geko``),
applied per *job* of the job engine rather than per tuning config:

* **Retirement** (``retire_after`` R). Every failed attempt of a job is counted in its stage's
  job folder, ``jobs/<job>.failed.json`` (:class:`FailureRecord`), so the count survives reruns,
  reboots and ``kill -9``. A job -- a GEMM's screen or baseline, one candidate's accurate run --
  whose attempts have failed R times in all is *retired*: it is reported (``failures.json``,
  ``report.md``, with ``retired``) and not started again. A GEMM whose screen is retired gets no
  candidates, so nothing further runs for it; a retired candidate costs only that candidate.
  A success deletes the record; ``--from-stage``/``--only`` (fresh runs) start counting anew,
  which is also how to un-retire.
* **Abort** (``abort_after`` K). :class:`FailureBreaker` counts jobs that failed for good
  one after the other, over every stage of the run; a job that succeeds resets it. At K the run
  stops with :class:`~tensilekit.errors.PipelineAborted` (exit 4): so many failures in a row
  mean a broken device, driver or tool, and going on would burn the remaining GEMMs. Jobs
  already running are allowed to finish (their results are kept) and no stage is marked
  complete, so rerunning the same command resumes.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from tensilekit.errors import PipelineAborted
from tensilekit.pipeline.jobs import JobOutcome

RETIRED = "Retired"
"""``error_type`` of the outcome of a job that was not started because it is retired."""


class FailureRecord(BaseModel):
    """``jobs/<job>.failed.json``: how often a job's attempts have failed, over all runs."""

    key: str
    """The job's content key: a changed payload is another job and starts from zero."""
    failures: int
    error_type: str | None = None
    error: str | None = None


def read_failure_record(path: Path, key: str) -> FailureRecord | None:
    """The record at ``path`` if it belongs to the job with ``key`` (unreadable: None)."""
    try:
        record = FailureRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None
    return record if record.key == key else None


def write_failure_record(path: Path, record: FailureRecord) -> None:
    """Write by temp file and rename (no fsync: a lost count only means one more attempt)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(record.model_dump(mode="json"), sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:  # a full disk: no half-written temporary is left in the run directory
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def is_retired(record: FailureRecord | None, retire_after: int) -> bool:
    """Whether a job with ``record`` is retired under ``retire_after`` (0: never)."""
    return retire_after > 0 and record is not None and record.failures >= retire_after


class FailureBreaker:
    """Counts consecutive failed jobs over a whole run; raises :class:`PipelineAborted` at the limit.

    ``abort_after`` 0 never aborts.
    """

    def __init__(self, abort_after: int = 0) -> None:
        if abort_after < 0:
            raise ValueError("abort_after must be >= 0")
        self.abort_after = abort_after
        self.consecutive = 0

    def success(self) -> None:
        self.consecutive = 0

    def failure(self, stage: str, outcome: JobOutcome, subject: str = "") -> None:
        """Count a job that failed for good; raise when it is the ``abort_after``-th in a row."""
        self.consecutive += 1
        if self.abort_after and self.consecutive >= self.abort_after:
            about = f" ({subject})" if subject else ""
            raise PipelineAborted(
                f"stopped after {self.consecutive} consecutive failed jobs, the last {stage}/{outcome.job_id}{about}: "
                f"{outcome.error_type}: {(outcome.error or '').strip()[:1500]}. So many failures in a row mean a broken "
                "GPU, driver or tool, not bad kernels: fix the cause and rerun the same command -- finished work is "
                "kept and the failed jobs are retried (--abort-after 0 never stops)"
            )


__all__ = [
    "RETIRED",
    "FailureBreaker",
    "FailureRecord",
    "is_retired",
    "read_failure_record",
    "write_failure_record",
]

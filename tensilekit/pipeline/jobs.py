"""Jobs: the unit of work a stage hands to an executor, and the outcome that comes back.

A :class:`Job` is a module-level function plus a picklable payload (so the Ray executor can ship
it to another node). The executor calls ``fn(JobContext, payload)`` once per attempt; a raised
exception is a failed *attempt*, never a crash of the pipeline. :func:`run_attempt` is the one
place that turns a call into an :class:`Attempt` (value or error, timings), shared by every
executor so that failures are recorded identically everywhere.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from tensilekit.errors import ToolFailed, ToolNotFound

EnvOverrides = Mapping[str, "str | None"]


class JobKind(str, enum.Enum):
    """What a job needs: one device slot (benchmarks) or one CPU slot (compiles, builds)."""

    GPU = "gpu"
    CPU = "cpu"


JobFunction = Callable[["JobContext", Any], Any]


@dataclasses.dataclass(frozen=True)
class Job:
    """One unit of work.

    Attributes:
        id: unique within a stage, filesystem-safe (it names the job's cache file).
        fn: a module-level function ``fn(context, payload) -> JSON-able value``.
        payload: the function's input; picklable, ideally a frozen pydantic model.
        kind: GPU jobs run pinned to one device slot, CPU jobs on a CPU slot.
        cost: estimated run time in seconds; executors start the longest jobs first and the
            progress display derives its ETA from it. Only relative values matter.
        key: content hash of ``fn`` and ``payload`` (:func:`job_key`); a cached result is
            reused only when the key matches.
        device_group: GPU jobs of one group run on one device (the first one's), retries
            included: measurements compared with each other (a GEMM's reference and its
            candidates) must not differ by which GPU took them. None: any device.
    """

    id: str
    fn: JobFunction
    payload: Any
    kind: JobKind = JobKind.GPU
    cost: float = 1.0
    key: str = ""
    device_group: str | None = None


def device_env(device: int | None) -> dict[str, str | None]:
    """Environment that pins a child process to one GPU.

    ``ROCR_VISIBLE_DEVICES`` selects the physical device at the ROCr level; HIP then numbers
    the visible devices from 0, so ``HIP_VISIBLE_DEVICES`` must be ``0``, not the physical
    index: setting both to the same index ``d > 0`` masks every device away.
    ``CUDA_VISIBLE_DEVICES`` is removed because HIP honours it too.
    """
    if device is None:
        return {}
    return {"ROCR_VISIBLE_DEVICES": str(device), "HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": None}


@dataclasses.dataclass(frozen=True)
class JobContext:
    """What one attempt of a job knows about where and how it runs."""

    job_id: str
    attempt: int
    """1 for the first attempt."""
    device: int | None = None
    """The pinned device (GPU jobs); None for CPU jobs."""
    timeout: float | None = None
    """Seconds the job's tool may run; the job passes it to its :class:`CommandRunner`."""
    env: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    """Environment overrides for child processes (device pinning)."""
    node: str | None = None
    """Host that ran the attempt (Ray); None for the local machine."""
    stall_timeout: float | None = None
    """Seconds the job's tool may go without output before it is killed as stalled."""


@dataclasses.dataclass(frozen=True)
class Attempt:
    """The result of one call of a job's function."""

    ok: bool
    value: Any = None
    error_type: str | None = None
    error: str | None = None
    retryable: bool = True
    timed_out: bool = False
    returncode: int | None = None
    stderr_tail: str | None = None
    started: float = 0.0
    finished: float = 0.0
    device: int | None = None
    node: str | None = None

    @property
    def duration(self) -> float:
        return self.finished - self.started


@dataclasses.dataclass(frozen=True)
class JobOutcome:
    """The final result of a job after all its attempts: a value, or the last error."""

    job_id: str
    ok: bool
    value: Any = None
    attempts: int = 1
    error_type: str | None = None
    error: str | None = None
    timed_out: bool = False
    device: int | None = None
    node: str | None = None
    started: float = 0.0
    finished: float = 0.0
    cached: bool = False
    """True when the value came from the stage's job cache instead of a run."""

    @property
    def duration(self) -> float:
        return self.finished - self.started

    @classmethod
    def from_attempt(cls, job_id: str, attempt: Attempt, attempts: int) -> JobOutcome:
        return cls(
            job_id=job_id,
            ok=attempt.ok,
            value=attempt.value,
            attempts=attempts,
            error_type=attempt.error_type,
            error=attempt.error,
            timed_out=attempt.timed_out,
            device=attempt.device,
            node=attempt.node,
            started=attempt.started,
            finished=attempt.finished,
        )


_ERROR_TEXT_LIMIT = 2000


def run_attempt(job: Job, context: JobContext, clock: Callable[[], float] = time.monotonic) -> Attempt:
    """Call ``job.fn(context, job.payload)`` and capture its value or its error.

    Any :class:`Exception` becomes a failed attempt (per-candidate failures are results).
    :class:`~tensilekit.errors.ToolNotFound` is marked not retryable: a missing program stays
    missing. ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """
    started = clock()
    try:
        value = job.fn(context, job.payload)
    except Exception as error:  # noqa: BLE001 - every failure of a job is recorded, not raised
        finished = clock()
        message = str(error) or type(error).__name__
        return Attempt(
            ok=False,
            error_type=type(error).__name__,
            error=message[:_ERROR_TEXT_LIMIT],
            retryable=not isinstance(error, ToolNotFound),
            timed_out=bool(isinstance(error, ToolFailed) and error.timed_out),
            returncode=error.returncode if isinstance(error, ToolFailed) else None,
            stderr_tail=(error.stderr_tail[-_ERROR_TEXT_LIMIT:] if isinstance(error, ToolFailed) else None),
            started=started,
            finished=finished,
            device=context.device,
            node=context.node,
        )
    return Attempt(ok=True, value=value, started=started, finished=clock(), device=context.device, node=context.node)


def _canonical(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _canonical(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def job_key(fn: JobFunction, payload: Any) -> str:
    """sha256 over the function's qualified name and the payload's canonical JSON."""
    digest = hashlib.sha256()
    digest.update(f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}".encode())
    digest.update(b"\0")
    digest.update(json.dumps(_canonical(payload), sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def make_job(
    job_id: str,
    fn: JobFunction,
    payload: Any,
    *,
    kind: JobKind = JobKind.GPU,
    cost: float = 1.0,
    device_group: str | None = None,
) -> Job:
    """A :class:`Job` with its cache key filled in."""
    return Job(
        id=job_id, fn=fn, payload=payload, kind=kind, cost=cost, key=job_key(fn, payload), device_group=device_group
    )


# --------------------------------------------------------------------------------------------
# Events (executor -> stage -> reporter)


@dataclasses.dataclass(frozen=True)
class JobStarted:
    """An attempt was handed to a slot."""

    job_id: str
    attempt: int
    device: int | None
    kind: JobKind
    node: str | None = None


@dataclasses.dataclass(frozen=True)
class JobRetrying:
    """An attempt failed and the job goes back to the queue."""

    job_id: str
    attempt: int
    device: int | None
    error: str


@dataclasses.dataclass(frozen=True)
class JobFinished:
    """A job is done for good (success, or failure after its last attempt)."""

    outcome: JobOutcome
    kind: JobKind


JobEvent = JobStarted | JobRetrying | JobFinished
EventCallback = Callable[[JobEvent], None]


__all__ = [
    "Attempt",
    "EventCallback",
    "Job",
    "JobContext",
    "JobEvent",
    "JobFinished",
    "JobFunction",
    "JobKind",
    "JobOutcome",
    "JobRetrying",
    "JobStarted",
    "device_env",
    "job_key",
    "make_job",
    "run_attempt",
]

"""The one scheduling loop every pool executor runs (local threads and Ray actors alike).

Policy: jobs are queued longest first (``cost``, then input order), per kind. A GPU job goes to
the idle slot whose device runs the fewest jobs (then: was given the fewest so far, then slot
order); a retry avoids the device its last attempt failed on when another is free. Jobs of one
``device_group`` all run on the device the group's first job got (a job waits for it rather than
run elsewhere; jobs behind it in the queue go on meanwhile). CPU jobs run
up to ``cpu_slots`` at a time. A failed attempt is retried while attempts remain
(:func:`should_retry`). Events are emitted only after the free slots are busy again, so their
cost (job-cache writes, displays) never delays the next job. A slot whose worker died leaves the
pool; when no slot is left for the waiting GPU jobs the run fails. When ``emit`` raises
:class:`~tensilekit.errors.PipelineAborted` (too many failures in a row), nothing more is
started or retried, the attempts in flight are drained (their events still emitted, so their
results are cached) and the abort is raised. Events of a batch with a failed job are emitted
before the next dispatch, so that no job starts after the one that trips the abort.

A :class:`Backend` supplies only *how* an attempt starts on a slot and how finished attempts
come back; *which* job runs where and when is decided here, once.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tensilekit.errors import PipelineAborted, PipelineError
from tensilekit.pipeline.jobs import (
    Attempt,
    Job,
    JobEvent,
    JobFinished,
    JobKind,
    JobOutcome,
    JobRetrying,
    JobStarted,
)


def should_retry(attempt: Attempt, number: int, retries: int) -> bool:
    """Whether attempt ``number`` (1-based) of a job is followed by another one."""
    return not attempt.ok and attempt.retryable and number <= retries


@dataclasses.dataclass(eq=False)
class Slot:
    """One place a GPU job can run: a device (``label`` groups the slots of one device), the
    node it is on, and the backend's handle (a Ray actor; None for local threads)."""

    label: str
    device: int | None
    node: str | None = None
    handle: Any = None


@dataclasses.dataclass(frozen=True)
class Finished:
    """An attempt that came back: its job, attempt number, slot (None for CPU jobs), result,
    and whether the slot's worker is still alive."""

    job: Job
    number: int
    slot: Slot | None
    attempt: Attempt
    alive: bool = True


class Backend(Protocol):
    """How attempts run: start one on a slot (None: a CPU job), wait for at least one to finish."""

    def start(self, job: Job, number: int, slot: Slot | None) -> None: ...

    def wait(self) -> list[Finished]: ...


def run_schedule(
    jobs: Sequence[Job],
    slots: Sequence[Slot],
    backend: Backend,
    *,
    cpu_slots: int,
    retries: int,
    emit: Callable[[JobEvent], None],
    on_dead: Callable[[Slot], None] | None = None,
) -> list[JobOutcome]:
    """Run ``jobs`` to completion on ``slots`` through ``backend``; outcomes in input order."""
    order = {job.id: position for position, job in enumerate(jobs)}

    def longest_first(kind: JobKind) -> collections.deque[tuple[Job, int]]:
        chosen = sorted((job for job in jobs if job.kind is kind), key=lambda job: (-job.cost, order[job.id]))
        return collections.deque((job, 1) for job in chosen)

    ready = {JobKind.GPU: longest_first(JobKind.GPU), JobKind.CPU: longest_first(JobKind.CPU)}
    pool = list(slots)
    idle = list(slots)
    running_on: collections.Counter[str] = collections.Counter()
    dispatched_to: collections.Counter[str] = collections.Counter()
    last_label: dict[str, str] = {}
    cpu_running = 0
    in_flight = 0
    outcomes: dict[str, JobOutcome] = {}
    events: list[JobEvent] = []
    aborted: PipelineAborted | None = None

    def flush() -> None:
        nonlocal aborted
        for event in events:
            try:
                emit(event)
            except PipelineAborted as error:
                aborted = aborted or error
        events.clear()

    group_label: dict[str, str] = {}

    def pick(job: Job) -> Slot | None:
        if not idle:
            return None
        bound = group_label.get(job.device_group) if job.device_group is not None else None
        if bound is not None and any(slot.label == bound for slot in pool):
            matching = [slot for slot in idle if slot.label == bound]
            return matching[0] if matching else None
        candidates = idle
        avoid = last_label.get(job.id)
        if avoid is not None and any(slot.label != avoid for slot in idle):
            candidates = [slot for slot in idle if slot.label != avoid]
        return min(candidates, key=lambda slot: (running_on[slot.label], dispatched_to[slot.label], pool.index(slot)))

    def finish(done: Finished) -> None:
        nonlocal in_flight, cpu_running
        in_flight -= 1
        job, number, slot, attempt = done.job, done.number, done.slot, done.attempt
        if slot is not None:
            running_on[slot.label] -= 1
            last_label[job.id] = slot.label
            if done.alive:
                idle.append(slot)
            else:
                pool.remove(slot)
                if on_dead is not None:
                    on_dead(slot)
        else:
            cpu_running -= 1
        if aborted is None and should_retry(attempt, number, retries):
            events.append(JobRetrying(job.id, number, attempt.device, attempt.error or ""))
            ready[job.kind].appendleft((job, number + 1))
            return
        outcome = JobOutcome.from_attempt(job.id, attempt, number)
        outcomes[job.id] = outcome
        events.append(JobFinished(outcome, job.kind))

    while ((ready[JobKind.GPU] or ready[JobKind.CPU]) and aborted is None) or in_flight:
        waiting: list[tuple[Job, int]] = []  # jobs whose group's device is busy: they keep their place
        while ready[JobKind.GPU] and idle and aborted is None:
            job, number = ready[JobKind.GPU].popleft()
            slot = pick(job)
            if slot is None:
                waiting.append((job, number))
                continue
            if job.device_group is not None:
                group_label.setdefault(job.device_group, slot.label)
            idle.remove(slot)
            running_on[slot.label] += 1
            dispatched_to[slot.label] += 1
            in_flight += 1
            backend.start(job, number, slot)
            events.append(JobStarted(job.id, number, slot.device, job.kind, slot.node))
        ready[JobKind.GPU].extendleft(reversed(waiting))
        while ready[JobKind.CPU] and cpu_running < cpu_slots and aborted is None:
            job, number = ready[JobKind.CPU].popleft()
            cpu_running += 1
            in_flight += 1
            backend.start(job, number, None)
            events.append(JobStarted(job.id, number, None, job.kind))
        flush()
        if not in_flight:
            if ready[JobKind.GPU] and not pool and aborted is None:
                raise PipelineError("no device is left to run the remaining jobs (every worker died)")
            continue
        for done in backend.wait():
            finish(done)
        if any(isinstance(event, JobFinished) and not event.outcome.ok for event in events):
            flush()  # a failure may trip the abort: decide before anything else starts
    flush()
    if aborted is not None:
        raise aborted
    return [outcomes[job.id] for job in jobs]


__all__ = ["Backend", "Finished", "Slot", "run_schedule", "should_retry"]

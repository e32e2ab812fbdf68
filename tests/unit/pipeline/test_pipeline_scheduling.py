"""The shared scheduling loop (local threads and Ray actors run the same one)."""

from __future__ import annotations

import pytest

from tensilekit.errors import PipelineError
from tensilekit.pipeline.executors.scheduling import Finished, Slot, run_schedule
from tensilekit.pipeline.jobs import Attempt, Job, JobEvent, JobKind, JobStarted, make_job


def _noop(context: object, payload: int) -> int:
    return payload


class ScriptedBackend:
    """Attempts finish in start order; the slots named in ``dies`` lose their worker on first use."""

    def __init__(self, dies: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.dies = set(dies)
        self.started: list[tuple[str, int, str | None]] = []
        self.pending: list[Finished] = []

    def start(self, job: Job, number: int, slot: Slot | None) -> None:
        label = slot.label if slot is not None else None
        self.started.append((job.id, number, label))
        dead = slot is not None and slot.label in self.dies
        if dead:
            self.dies.discard(label)  # type: ignore[arg-type]
        attempt = Attempt(ok=not dead, value=None if dead else job.payload, error="worker died" if dead else None,
                          error_type="RayActorError" if dead else None, started=0.0, finished=0.0,
                          device=slot.device if slot else None)  # fmt: skip
        self.pending.append(Finished(job, number, slot, attempt, alive=not dead))

    def wait(self) -> list[Finished]:
        done, self.pending = self.pending[:1], self.pending[1:]
        return done


def jobs(count: int) -> list[Job]:
    return [make_job(f"j{i}", _noop, i, kind=JobKind.GPU, cost=float(count - i)) for i in range(count)]


def test_longest_first_spread_and_a_dead_worker_leaves_the_pool() -> None:
    slots = [Slot("0", 0), Slot("1", 1)]
    backend = ScriptedBackend(dies={"0"})
    dropped: list[str] = []
    events: list[JobEvent] = []
    outcomes = run_schedule(jobs(4), slots, backend, cpu_slots=1, retries=1, emit=events.append,
                            on_dead=lambda slot: dropped.append(slot.label))  # fmt: skip
    assert [outcome.ok for outcome in outcomes] == [True] * 4
    assert dropped == ["0"]
    assert backend.started[0] == ("j0", 1, "0") and ("j0", 2, "1") in backend.started  # retried elsewhere
    assert {label for _, _, label in backend.started[1:]} == {"1"}
    assert sum(isinstance(event, JobStarted) for event in events) == 5


def test_no_device_left_is_an_error() -> None:
    with pytest.raises(PipelineError, match="no device is left"):
        run_schedule(jobs(2), [Slot("0", 0)], ScriptedBackend(dies={"0"}), cpu_slots=1, retries=3,
                     emit=lambda event: None)  # fmt: skip


class FailingFirstBackend(ScriptedBackend):
    """Every job's first attempt fails (retryable); attempts finish in start order."""

    def start(self, job: Job, number: int, slot: Slot | None) -> None:
        label = slot.label if slot is not None else None
        self.started.append((job.id, number, label))
        attempt = Attempt(ok=number > 1, value=job.payload if number > 1 else None,
                          error=None if number > 1 else "flaky", error_type=None if number > 1 else "ToolFailed",
                          started=0.0, finished=0.0, device=slot.device if slot else None)  # fmt: skip
        self.pending.append(Finished(job, number, slot, attempt))


def test_jobs_of_one_device_group_share_a_device_retries_included() -> None:
    """A GEMM's reference and candidates are timed on one GPU: the group follows its first job's
    device, also when a retry would otherwise avoid it; ungrouped jobs still spread."""
    grouped = [
        make_job(f"{group}-{i}", _noop, i, kind=JobKind.GPU, cost=1.0, device_group=group)
        for i in range(4) for group in ("g1", "g2", "g3")
    ]  # fmt: skip
    free = [make_job(f"free-{i}", _noop, i, kind=JobKind.GPU, cost=0.5) for i in range(6)]
    slots = [Slot(str(device), device) for device in range(4)]
    backend = FailingFirstBackend()
    outcomes = run_schedule([*grouped, *free], slots, backend, cpu_slots=1, retries=1, emit=lambda event: None)
    assert all(outcome.ok for outcome in outcomes)
    for group in ("g1", "g2", "g3"):
        labels = {label for job_id, _, label in backend.started if job_id.startswith(f"{group}-")}
        assert len(labels) == 1, (group, labels)
    free_labels = {label for job_id, _, label in backend.started if job_id.startswith("free-")}
    assert len(free_labels) > 1

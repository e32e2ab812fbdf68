"""The serial reference and the device-pinned local pool: order, retries, pinning, concurrency."""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import pytest

from tensilekit.errors import ToolNotFound
from tensilekit.pipeline.executors.local import LocalExecutor, SerialExecutor, should_retry
from tensilekit.pipeline.jobs import (
    Attempt,
    Job,
    JobContext,
    JobEvent,
    JobFinished,
    JobKind,
    JobRetrying,
    JobStarted,
    make_job,
)


def square(context: JobContext, payload: int) -> int:
    return payload * payload


class Flaky:
    """Fails the first ``failures`` attempts of each job, then succeeds."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()

    def __call__(self, context: JobContext, payload: int) -> int:
        with self.lock:
            self.calls[context.job_id] += 1
        if context.attempt <= self.failures:
            raise RuntimeError(f"attempt {context.attempt} broke")
        return payload


class Recorder:
    """Sleeps, and records per device how many jobs ran at the same time and the env it got."""

    def __init__(self, seconds: float = 0.03, barrier: threading.Barrier | None = None) -> None:
        self.seconds = seconds
        self.barrier = barrier  # instead of sleeping: wait until this many jobs run at once
        self.lock = threading.Lock()
        self.running: collections.Counter[int | None] = collections.Counter()
        self.peak: collections.Counter[int | None] = collections.Counter()
        self.envs: dict[str, dict[str, Any]] = {}
        self.threads: set[str] = set()

    def __call__(self, context: JobContext, payload: int) -> int:
        with self.lock:
            self.running[context.device] += 1
            self.peak[context.device] = max(self.peak[context.device], self.running[context.device])
            self.envs[context.job_id] = dict(context.env)
        if self.barrier is not None:
            self.barrier.wait(timeout=60)
        else:
            time.sleep(self.seconds)
        with self.lock:
            self.running[context.device] -= 1
        return payload


def jobs_of(fn: Any, count: int, kind: JobKind = JobKind.GPU, costs: list[float] | None = None) -> list[Job]:
    return [make_job(f"j{i:02d}", fn, i, kind=kind, cost=(costs[i] if costs else 1.0)) for i in range(count)]


@pytest.mark.parametrize(
    "executor", [SerialExecutor(), LocalExecutor((0, 1, 2), slots_per_device=2)], ids=["serial", "local"]
)
def test_outcomes_come_back_in_input_order(executor: Any) -> None:
    outcomes = executor.run(jobs_of(square, 12))
    assert [outcome.job_id for outcome in outcomes] == [f"j{i:02d}" for i in range(12)]
    assert [outcome.value for outcome in outcomes] == [i * i for i in range(12)]
    assert all(outcome.ok and outcome.attempts == 1 for outcome in outcomes)


@pytest.mark.parametrize(
    "make", [lambda: SerialExecutor(retries=2), lambda: LocalExecutor((0, 1), retries=2)], ids=["serial", "local"]
)
def test_failed_attempts_are_retried_then_succeed(make: Any) -> None:
    flaky = Flaky(failures=2)
    events: list[JobEvent] = []
    outcomes = make().run(jobs_of(flaky, 4), events.append)
    assert all(outcome.ok and outcome.attempts == 3 for outcome in outcomes)
    assert set(flaky.calls.values()) == {3}
    assert sum(isinstance(event, JobRetrying) for event in events) == 8
    assert sum(isinstance(event, JobFinished) for event in events) == 4


@pytest.mark.parametrize(
    "make", [lambda: SerialExecutor(retries=1), lambda: LocalExecutor((0, 1), retries=1)], ids=["serial", "local"]
)
def test_a_job_that_keeps_failing_is_a_failed_outcome(make: Any) -> None:
    outcomes = make().run(jobs_of(Flaky(failures=5), 3) + [make_job("ok", square, 3)])
    assert [outcome.ok for outcome in outcomes] == [False, False, False, True]
    failed = outcomes[0]
    assert failed.attempts == 2 and failed.error_type == "RuntimeError" and failed.error == "attempt 2 broke"


def missing(context: JobContext, payload: int) -> int:
    raise ToolNotFound("no TensileCreateLibrary")


def test_missing_tools_are_not_retried() -> None:
    (outcome,) = LocalExecutor(retries=3).run([make_job("x", missing, 0, kind=JobKind.CPU)])
    assert not outcome.ok and outcome.attempts == 1 and outcome.error_type == "ToolNotFound"


def test_jobs_spread_over_every_device_and_are_pinned() -> None:
    # each job waits until four run at once: with one slot per device that is one per device, in
    # waves, so the spread does not depend on how fast threads are scheduled on a loaded machine
    recorder = Recorder(barrier=threading.Barrier(4))
    outcomes = LocalExecutor((0, 1, 2, 3)).run(jobs_of(recorder, 16))
    per_device = collections.Counter(outcome.device for outcome in outcomes)
    assert per_device == {0: 4, 1: 4, 2: 4, 3: 4}
    for outcome in outcomes:
        env = recorder.envs[outcome.job_id]
        assert env["ROCR_VISIBLE_DEVICES"] == str(outcome.device) and env["HIP_VISIBLE_DEVICES"] == "0"


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_slots_per_device_bound_the_concurrency_on_each_device(slots: int) -> None:
    recorder = Recorder(seconds=0.04)
    LocalExecutor((0, 1), slots_per_device=slots).run(jobs_of(recorder, 4 * slots))
    assert recorder.peak[0] == slots and recorder.peak[1] == slots


def test_cpu_jobs_run_unpinned_on_their_own_slots() -> None:
    recorder = Recorder(seconds=0.02)
    outcomes = LocalExecutor((0,), cpu_slots=2).run(jobs_of(recorder, 4, kind=JobKind.CPU))
    assert all(outcome.device is None for outcome in outcomes)
    assert recorder.peak[None] == 2 and all(env == {} for env in recorder.envs.values())


def test_longest_jobs_start_first() -> None:
    events: list[JobEvent] = []
    costs = [1.0, 5.0, 3.0, 5.0, 2.0]
    LocalExecutor((0,)).run(jobs_of(square, 5, costs=costs), events.append)
    started = [event.job_id for event in events if isinstance(event, JobStarted)]
    assert started == ["j01", "j03", "j02", "j04", "j00"]


def test_serial_executor_keeps_input_order() -> None:
    events: list[JobEvent] = []
    SerialExecutor(device=5).run(jobs_of(square, 3, costs=[1.0, 9.0, 4.0]), events.append)
    started = [(event.job_id, event.device) for event in events if isinstance(event, JobStarted)]
    assert started == [("j00", 5), ("j01", 5), ("j02", 5)]


def test_events_are_emitted_from_the_calling_thread() -> None:
    threads: set[str] = set()
    LocalExecutor((0, 1), slots_per_device=2).run(
        jobs_of(Recorder(0.005), 8), lambda event: threads.add(threading.current_thread().name)
    )
    assert threads == {threading.current_thread().name}


class FailOnDevice:
    def __init__(self, device: int) -> None:
        self.device = device

    def __call__(self, context: JobContext, payload: int) -> int:
        if context.device == self.device:
            raise RuntimeError("bad GPU")
        return payload


def test_a_retry_moves_to_another_free_device() -> None:
    (outcome,) = LocalExecutor((0, 1), retries=1).run(jobs_of(FailOnDevice(0), 1))
    assert outcome.ok and outcome.attempts == 2 and outcome.device == 1


def test_the_pool_is_faster_than_serial() -> None:
    recorder = Recorder(seconds=0.05)
    started = time.monotonic()
    LocalExecutor((0, 1, 2, 3)).run(jobs_of(recorder, 8))
    assert time.monotonic() - started < 0.3  # 8 x 50 ms on 4 devices: two rounds


def test_options_are_checked() -> None:
    with pytest.raises(ValueError):
        LocalExecutor(())
    with pytest.raises(ValueError):
        LocalExecutor((0, 0))
    with pytest.raises(ValueError):
        LocalExecutor((0,), slots_per_device=0)
    with pytest.raises(ValueError):
        SerialExecutor(retries=-1)
    with pytest.raises(ValueError):
        LocalExecutor((0,)).run([make_job("a", square, 1), make_job("a", square, 2)])
    assert (
        LocalExecutor((0, 1), slots_per_device=2).describe()
        == "local: GPUs 0,1, 2 jobs at a time each; 1 job at a time on the CPU"
    )
    # one device is never read as "0 devices" (issue 32 item 9: "devices 0 x 1 slot(s)")
    assert LocalExecutor((0,)).describe().startswith("local: GPU 0, 1 job at a time;")


def test_should_retry() -> None:
    failed = Attempt(ok=False, error="x")
    assert should_retry(failed, 1, 1) and not should_retry(failed, 2, 1)
    assert not should_retry(Attempt(ok=True), 1, 3)
    assert not should_retry(Attempt(ok=False, retryable=False), 1, 3)

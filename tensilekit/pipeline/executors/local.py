"""Local executors: the serial reference and a device-pinned pool for one machine.

Scheduler (:func:`~tensilekit.pipeline.executors.scheduling.run_schedule`, shared with the Ray
executor), in the manner of dask's local scheduler
------------------------------------------------------------------------------------------
State, all owned by the calling thread:

* two ready queues, GPU jobs and CPU jobs, each sorted **longest first** (by ``Job.cost``,
  then input order, so the order is deterministic). Long jobs go first so the run does not end
  with one long job on one device while the others idle;
* per device: jobs running now and jobs dispatched so far; a CPU-slot counter;
* a completion queue that worker threads put ``(job, attempt number, Attempt)`` on.

Loop: fill every free slot from the ready queues, then block on the completion queue. A GPU
job goes to the device with the fewest running jobs (ties: fewest dispatched so far, then the
lower index), which spreads jobs over all devices; ``slots_per_device`` jobs may share one
device (small GEMMs do not fill a GPU). A retried job avoids the device it just failed on when
another one is free. A failed attempt is retried while it is retryable and attempts remain
(``retries`` extra attempts); the last failure becomes a failed :class:`JobOutcome` -- a
result, not an exception. Events are emitted from the loop, never from workers.

Workers are daemon threads, one per running attempt. Jobs spend their time in a child process
(the AMD tools) or asleep (the simulator), so threads suffice and avoid pickling; daemon threads
let Ctrl-C end the run at once. Timeouts are enforced by the job's
:class:`~tensilekit.tools.runner.CommandRunner`, which kills the tool's process group; the
executor passes ``timeout`` on in the :class:`JobContext`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence

from tensilekit.pipeline.executors import check_unique_ids
from tensilekit.pipeline.executors.scheduling import Finished, Slot, run_schedule, should_retry
from tensilekit.pipeline.jobs import (
    EventCallback,
    Job,
    JobContext,
    JobFinished,
    JobKind,
    JobOutcome,
    JobRetrying,
    JobStarted,
    device_env,
    run_attempt,
)


def _check_policy(retries: int, timeout: float | None, stall_timeout: float | None = None) -> None:
    if retries < 0:
        raise ValueError("retries must be >= 0")
    if timeout is not None and timeout <= 0:
        raise ValueError("timeout must be > 0 seconds")
    if stall_timeout is not None and stall_timeout <= 0:
        raise ValueError("stall_timeout must be > 0 seconds (None: never)")


class SerialExecutor:
    """Run jobs one after another in the calling thread, in input order (the reference).

    GPU jobs are pinned to ``device``; CPU jobs are not pinned. Retries and timeouts follow
    the same rules as :class:`LocalExecutor`.
    """

    def __init__(
        self,
        device: int = 0,
        *,
        retries: int = 1,
        timeout: float | None = None,
        stall_timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_policy(retries, timeout, stall_timeout)
        self.device = device
        self.retries = retries
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self._clock = clock

    @property
    def devices(self) -> tuple[str, ...]:
        return (str(self.device),)

    def describe(self) -> str:
        return f"serial: device {self.device}"

    def close(self) -> None:
        return None

    def run(self, jobs: Sequence[Job], on_event: EventCallback | None = None) -> list[JobOutcome]:
        """Run each job to its final outcome before starting the next."""
        check_unique_ids(jobs)
        emit = on_event or (lambda event: None)
        outcomes: list[JobOutcome] = []
        for job in jobs:
            device = self.device if job.kind is JobKind.GPU else None
            number = 1
            while True:
                emit(JobStarted(job.id, number, device, job.kind))
                context = JobContext(
                    job.id, number, device, self.timeout, device_env(device), stall_timeout=self.stall_timeout
                )
                attempt = run_attempt(job, context, self._clock)
                if not should_retry(attempt, number, self.retries):
                    break
                emit(JobRetrying(job.id, number, device, attempt.error or ""))
                number += 1
            outcome = JobOutcome.from_attempt(job.id, attempt, number)
            emit(JobFinished(outcome, job.kind))
            outcomes.append(outcome)
        return outcomes


class LocalExecutor:
    """A device-pinned pool on this machine; see the module docstring for the scheduler.

    Args:
        devices: GPU indices to use (``--devices 0,1,2,3``).
        slots_per_device: jobs that may run on one device at the same time.
        cpu_slots: CPU jobs (library builds) that may run at the same time.
        retries: extra attempts for a failed job.
        timeout: seconds each attempt's tool may run (enforced by the job's runner).
        stall_timeout: seconds each attempt's tool may go without output (the job's runner
            kills it as stalled); None never.
    """

    def __init__(
        self,
        devices: Sequence[int] = (0,),
        *,
        slots_per_device: int = 1,
        cpu_slots: int = 1,
        retries: int = 1,
        timeout: float | None = None,
        stall_timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not devices:
            raise ValueError("at least one device is needed")
        if len(set(devices)) != len(devices) or any(device < 0 for device in devices):
            raise ValueError(f"devices must be distinct non-negative indices, got {list(devices)}")
        if slots_per_device < 1 or cpu_slots < 1:
            raise ValueError("slots_per_device and cpu_slots must be >= 1")
        _check_policy(retries, timeout, stall_timeout)
        self.device_ids = tuple(devices)
        self.slots_per_device = slots_per_device
        self.cpu_slots = cpu_slots
        self.retries = retries
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self._clock = clock

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(str(device) for device in self.device_ids)

    def describe(self) -> str:
        # "GPU 0, 1 job at a time", never "devices 0 x 1 slot(s)" (read as zero devices: issue 32 item 9)
        listed = ",".join(str(device) for device in self.device_ids)
        gpus = f"GPU {listed}" if len(self.device_ids) == 1 else f"GPUs {listed}"
        each = "" if len(self.device_ids) == 1 else " each"
        return (
            f"local: {gpus}, {_jobs(self.slots_per_device)} at a time{each}; "
            f"{_jobs(self.cpu_slots)} at a time on the CPU"
        )

    def close(self) -> None:
        return None

    def run(self, jobs: Sequence[Job], on_event: EventCallback | None = None) -> list[JobOutcome]:
        """Run ``jobs`` on the pool; outcomes come back in input order (:func:`run_schedule`)."""
        check_unique_ids(jobs)
        slots = [Slot(str(device), device) for device in self.device_ids for _ in range(self.slots_per_device)]
        return run_schedule(
            jobs, slots, _ThreadBackend(self.timeout, self._clock, self.stall_timeout), cpu_slots=self.cpu_slots, retries=self.retries,
            emit=on_event or (lambda event: None),
        )  # fmt: skip


class _ThreadBackend:
    """Each attempt in its own thread, pinned by its context's environment; results via a queue."""

    def __init__(self, timeout: float | None, clock: Callable[[], float], stall_timeout: float | None = None) -> None:
        self.timeout = timeout
        self.clock = clock
        self.stall_timeout = stall_timeout
        self.done: queue.SimpleQueue[Finished] = queue.SimpleQueue()

    def start(self, job: Job, number: int, slot: Slot | None) -> None:
        device = slot.device if slot is not None else None
        context = JobContext(job.id, number, device, self.timeout, device_env(device), stall_timeout=self.stall_timeout)

        def work() -> None:
            self.done.put(Finished(job, number, slot, run_attempt(job, context, self.clock)))

        threading.Thread(target=work, name=f"tensilekit-job-{job.id}", daemon=True).start()

    def wait(self) -> list[Finished]:
        finished = [self.done.get()]
        while True:
            try:
                finished.append(self.done.get_nowait())
            except queue.Empty:
                return finished


def _jobs(count: int) -> str:
    return f"{count} job" if count == 1 else f"{count} jobs"


__all__ = ["LocalExecutor", "SerialExecutor", "should_retry"]

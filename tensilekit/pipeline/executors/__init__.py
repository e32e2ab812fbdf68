"""Executors run a stage's jobs: serially, on a local device-pinned pool, or on a Ray cluster.

Every executor implements :class:`Executor` and returns one :class:`~tensilekit.pipeline.jobs.JobOutcome`
per job, in the order the jobs were given, whatever order they ran in. Because a job's value
depends only on its payload, all executors produce identical results; the serial executor is the
reference and the debugging mode (dask's ``get_sync``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from tensilekit.pipeline.jobs import EventCallback, Job, JobOutcome


@runtime_checkable
class Executor(Protocol):
    """Runs jobs to completion (retries and timeouts included) and reports events."""

    def run(self, jobs: Sequence[Job], on_event: EventCallback | None = None) -> list[JobOutcome]:
        """Run every job; the result list is parallel to ``jobs``.

        ``on_event`` is called from the calling thread only (never from a worker), so it may
        write files and update displays without locking.
        """
        ...

    def describe(self) -> str:
        """One line for logs and reports, e.g. ``local: devices 0,1,2,3 x 2 slots``."""
        ...

    @property
    def devices(self) -> tuple[str, ...]:
        """Labels of the device slots' devices, for progress displays (``0``, ``node1:3``)."""
        ...

    def close(self) -> None:
        """Release workers (Ray actors); the executor may not be used afterwards."""
        ...


def check_unique_ids(jobs: Sequence[Job]) -> None:
    """Raise ``ValueError`` when two jobs share an id (their outcomes could not be told apart)."""
    seen: set[str] = set()
    for job in jobs:
        if job.id in seen:
            raise ValueError(f"duplicate job id {job.id!r}")
        seen.add(job.id)


__all__ = ["Executor", "check_unique_ids"]

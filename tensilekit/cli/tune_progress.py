"""The rich progress display of ``tensilekit tune`` (stderr): stages, jobs per device, ETA.

On a terminal a live panel shows, for the running batch of jobs, each device's running / done /
failed counts and an ETA from the jobs' estimated costs. Elsewhere (CI logs, pipes, tests) it
prints one line per stage and one per finished batch, which keeps logs short and stable.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from tensilekit.pipeline.jobs import Job, JobEvent, JobFinished, JobKind, JobRetrying, JobStarted


def _device_label(device: int | None, node: str | None, kind: JobKind) -> str:
    if kind is JobKind.CPU or device is None:
        return "cpu"
    return f"{node}:{device}" if node else str(device)


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = max(0, int(seconds + 0.5))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class TuneProgress:
    """A :class:`~tensilekit.pipeline.progress.Reporter` drawing on a rich console."""

    def __init__(self, console: Console, *, clock: Callable[[], float] = time.monotonic, refresh: float = 0.2) -> None:
        self.console = console
        self.clock = clock
        self.refresh = refresh
        self.live: Live | None = None
        self._batch = ""
        self._devices: list[str] = []
        self._costs: dict[str, float] = {}
        self._total = 0
        self._cost_total = 0.0
        self._cost_done = 0.0
        self._started = 0.0
        self._last_draw = 0.0
        self._running: Counter[str] = Counter()
        self._done: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._retries = 0

    # ---------------------------------------------------------------- reporter interface

    def stage_started(self, number: int, name: str, reason: str) -> None:
        self.console.print(f"[bold]{number:02d}_{name}[/bold] running ({reason})")

    def stage_skipped(self, number: int, name: str, reason: str) -> None:
        self.console.print(f"[dim]{number:02d}_{name} skipped ({reason})[/dim]")

    def stage_finished(self, number: int, name: str, summary: str) -> None:
        self._stop()
        self.console.print(Text(f"{number:02d}_{name} done: {summary}", style="green"))

    def jobs_queued(self, stage: str, phase: str, jobs: Sequence[Job], cached: int, devices: Sequence[str]) -> None:
        self._stop()
        self._batch = f"{stage}/{phase}"
        self._devices = list(devices)
        self._costs = {job.id: job.cost for job in jobs}
        self._total = len(jobs)
        self._cost_total = sum(self._costs.values())
        self._cost_done = 0.0
        self._started = self.clock()
        self._running.clear()
        self._done.clear()
        self._failed.clear()
        self._retries = 0
        note = f", {cached} from the job cache" if cached else ""
        self.console.print(f"  {self._batch}: {len(jobs)} job(s) on device(s) {','.join(self._devices)}{note}")
        if jobs and self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, transient=True, auto_refresh=False)
            self.live.start()

    def job_event(self, stage: str, event: JobEvent) -> None:
        if isinstance(event, JobStarted):
            self._running[_device_label(event.device, event.node, event.kind)] += 1
        elif isinstance(event, JobRetrying):
            self._retries += 1
            self._running[_device_label(event.device, None, JobKind.GPU)] -= 1
            self.console.print(
                Text(f"  retrying {event.job_id} (attempt {event.attempt} failed: {event.error[:160]})", style="yellow")
            )
        elif isinstance(event, JobFinished):
            outcome = event.outcome
            label = _device_label(outcome.device, outcome.node, event.kind)
            self._running[label] -= 1
            (self._done if outcome.ok else self._failed)[label] += 1
            self._cost_done += self._costs.get(outcome.job_id, 0.0)
            if not outcome.ok:
                self.console.print(
                    Text(
                        f"  FAILED {outcome.job_id} after {outcome.attempts} attempt(s): {outcome.error_type}: {(outcome.error or '')[:200]}",
                        style="red",
                    )
                )
            finished = sum(self._done.values()) + sum(self._failed.values())
            if finished == self._total:
                self._finish_batch()
        self._draw()

    def message(self, text: str) -> None:
        self.console.print(Text(text, style="cyan"))

    # ---------------------------------------------------------------- drawing

    def eta(self) -> float | None:
        """Seconds left, from the cost done so far and the time it took."""
        elapsed = self.clock() - self._started
        if self._cost_done <= 0 or elapsed <= 0:
            return None
        return elapsed * (self._cost_total - self._cost_done) / self._cost_done

    def _render(self) -> Table:
        table = Table(
            title=f"{self._batch}  ETA {format_eta(self.eta())}", title_justify="left", box=None, pad_edge=False
        )
        table.add_column("device")
        table.add_column("running", justify="right")
        table.add_column("done", justify="right")
        table.add_column("failed", justify="right")
        labels = list(self._devices) + sorted(
            set(self._running) | set(self._done) | set(self._failed) - set(self._devices)
        )
        for label in dict.fromkeys(labels):
            table.add_row(label, str(max(0, self._running[label])), str(self._done[label]), str(self._failed[label]))
        table.add_row("all", str(max(0, sum(self._running.values()))), f"{sum(self._done.values())}/{self._total}",
                      str(sum(self._failed.values())))  # fmt: skip
        return table

    def _draw(self) -> None:
        if self.live is None:
            return
        now = self.clock()
        if now - self._last_draw >= self.refresh:
            self._last_draw = now
            self.live.update(Group(self._render()), refresh=True)

    def _finish_batch(self) -> None:
        self._stop()
        per_device = " ".join(
            f"{label}:{self._done[label] + self._failed[label]}"
            for label in sorted(set(self._done) | set(self._failed))
        )
        elapsed = self.clock() - self._started
        self.console.print(
            f"  {self._batch}: {sum(self._done.values())}/{self._total} done, {sum(self._failed.values())} failed, "
            f"{self._retries} retried in {elapsed:.1f}s (per device {per_device})"
        )

    def _stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


__all__ = ["TuneProgress", "format_eta"]

"""Progress of a command's phases on stderr: one line naming the phase now running.

A command whose phases each take seconds (reading a 90 MB master, checking it, locating its
findings) shows one transient progress line on a terminal whose label follows the work, so a
long phase is never shown under the name of the one before it. Off a terminal (pipes, CI logs,
tests) a phase running past two seconds says so in one line (:class:`tensilekit.cli.output.SlowPhaseNote`),
a quick one prints nothing: the command's output is the same either way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tensilekit.cli import output

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, Task, TaskID
    from rich.table import Table

LAID_OUT_AT_LEAST = 1000
"""Rows from which a table drawn on a terminal shows progress while rich lays it out (8 000 rows: ~9 s)."""


@dataclass
class Phases:
    """The phase line of a running command: :meth:`stage` names a phase, :meth:`advance` counts it."""

    _bar: Progress | None = None
    _task: TaskID | None = None
    _note: output.SlowPhaseNote | None = None

    def stage(self, label: str) -> None:
        """Name the phase now running (the count and the elapsed time go on)."""
        if self._note is not None:
            self._note.stage(label)
        if self._bar is None or self._task is None:
            return
        self._bar.update(self._task, description=label)
        self._bar.refresh()  # drawn now: a quick phase is still named before the next replaces it

    def advance(self, step: int = 1) -> None:
        """``step`` more steps of the running phase done."""
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, step)


@contextlib.contextmanager
def phases(first: str, total: int | None = None) -> Iterator[Phases]:
    """A phase line on stderr while the block runs, first naming ``first`` (on a terminal only).

    Like :func:`tensilekit.cli.output.progress_bar`, and never nested in one: rich draws one live
    display at a time, so a library opened with its own ``reading`` bar is opened before.
    """
    if not output.stderr_is_terminal():  # looked up on the module: tests force a terminal there
        with output.slow_phase_note(first) as note:
            yield Phases(_note=note)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class CountColumn(MofNCompleteColumn):
        """``done/total`` of a counted phase; nothing for an indeterminate one."""

        def render(self, task: Task) -> Text:
            return super().render(task) if task.total is not None else Text("")

    columns = (TextColumn("{task.description}", markup=False), BarColumn(), CountColumn(), TimeElapsedColumn())
    with Progress(
        *columns,
        console=Console(stderr=True, force_terminal=True),  # stderr is a terminal: checked above
        transient=True,
        redirect_stdout=sys.stdout.isatty(),  # results printed meanwhile: above the line on a terminal
        redirect_stderr=True,
    ) as bar:
        task = bar.add_task(first, total=total)
        bar.refresh()
        yield Phases(_bar=bar, _task=task)


def print_table_shown(console: Console, table: Table) -> None:
    """:func:`tensilekit.cli.output.print_table`, naming the layout on stderr while rich lays out a
    big table for a terminal (all rows are measured before the first is drawn: seconds of silence).

    The table is rendered into a buffer under the progress line and written once the line is gone,
    so the two never interleave. In a pipe (tab-separated rows, written as they come) nothing changes.
    """
    if table.row_count < LAID_OUT_AT_LEAST or not output.stdout_is_terminal() or not output.stderr_is_terminal():
        output.print_table(console, table)
        return
    with phases(f"laying out {table.row_count} rows"), console.capture() as captured:
        output.print_table(console, table)
    console.file.write(captured.get())
    console.file.flush()


__all__ = ["LAID_OUT_AT_LEAST", "Phases", "phases", "print_table_shown"]

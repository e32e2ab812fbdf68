"""Output shared by every command: rich tables on a terminal, tab-separated lines in a pipe, progress.

When stdout is not a terminal (a pipe, a file, ``grep``/``awk``), a table is printed as plain
tab-separated lines — a header line, then one line per row — never wrapped or cut, so a kernel
name or a GEMM size stays whole. Everything else a command prints there — a table's title and
caption, notes between tables (:func:`print_note`) — is a ``# `` comment line, so a TSV consumer
skips every line that is not a row (``grep -v '^#'``) and a person still sees what a table is. ``TENSILEKIT_TERMINAL=1`` forces the terminal rendering of tables (the
docs harness uses it to check the tables the guides show), ``TENSILEKIT_TERMINAL=0`` the plain one.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def stdout_is_terminal() -> bool:
    forced = os.environ.get("TENSILEKIT_TERMINAL")
    if forced in ("0", "1"):
        return forced == "1"
    return sys.stdout.isatty()


def stderr_is_terminal() -> bool:
    """Progress bars only on a real terminal (``TENSILEKIT_TERMINAL`` is about tables)."""
    return sys.stderr.isatty()


def stdout_console() -> Console:
    """The console commands print to: no highlighting, long lines never folded."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, force_terminal=None)


# what rich's markup rendering changes in a string: tags ("["), emoji codes (":"), and the control
# codes its Text strips (BEL, BS, VT, FF, CR: rich.control.STRIP_CONTROL_CODES)
_RENDERED_DIFFERENTLY = re.compile("[\\[:\x07\x08\x0b\x0c\r]")


def _plain(cell: Any) -> str:
    if isinstance(cell, str):  # a str cell is rich markup, as the terminal table reads it
        if _RENDERED_DIFFERENTLY.search(cell) is None:  # rich would give it back as is (100 000 rows: ~1 s)
            return cell.replace("\t", " ").replace("\n", " ")
        from rich.markup import render

        cell = render(cell)
    text = getattr(cell, "plain", None)
    return str(text if text is not None else cell).replace("\t", " ").replace("\n", " ")


def table_lines(table: Table) -> list[str]:
    """A rich table as tab-separated lines: the header (when the table shows one), then each row."""
    columns = table.columns
    lines = []
    if table.show_header:
        lines.append(plain_row(column.header for column in columns))
    for row in range(table.row_count):
        lines.append(plain_row(column._cells[row] for column in columns))
    return lines


def plain_row(cells: Iterable[Any]) -> str:
    """One table row (rich markup strings or renderables) as the tab-separated line a pipe gets."""
    return "\t".join(_plain(cell) for cell in cells)


def comment_lines(text: Any) -> list[str]:
    """``text`` (rich markup, or a renderable with ``plain``) as ``# `` comment lines."""
    if isinstance(text, str):
        from rich.markup import render

        text = render(text)
    plain = str(getattr(text, "plain", text))
    return ["# " + line.replace("\t", " ") for line in plain.splitlines() or [""]]


def print_table(console: Console, table: Table) -> None:
    """``table`` drawn by rich on a terminal; tab-separated lines otherwise, its title and caption
    as ``# `` comment lines (see the module docstring)."""
    if stdout_is_terminal():
        console.print(table)
        return
    lines = comment_lines(table.title) if table.title else []
    lines += table_lines(table)
    lines += comment_lines(table.caption) if table.caption else []
    for line in lines:
        console.file.write(line + "\n")


def print_note(console: Console, text: Any = "", *, markup: bool = True, style: str | None = None) -> None:
    """Free text printed beside tables (rich markup, plain with ``markup=False``, or a rich
    ``Text``): as is on a terminal, ``# `` comment lines otherwise."""
    if stdout_is_terminal():
        console.print(text, markup=markup, style=style)
        return
    if isinstance(text, str) and not markup:
        from rich.markup import escape

        text = escape(text)
    for line in comment_lines(text):
        console.file.write(line + "\n")


FULL_NAMES = "tensilekit.full_names"
"""The click context's ``meta`` key set by ``--full-names`` (:func:`tensilekit.cli.options.full_names_option`)."""


def shown_kernel_name(name: str | None) -> str:
    """A kernel name as a command shows it: on a terminal its short form
    (:func:`tensilekit.model.labels.short_kernel_name`: a 300-character name wraps over 7 table
    lines), whole with ``--full-names``; in a pipe always whole (a pipe is never cut)."""
    if not name:
        return "-"
    if not stdout_is_terminal():
        return name
    import click

    from tensilekit.model.labels import kernel_name

    context = click.get_current_context(silent=True)
    return kernel_name(name, full=bool(context is not None and context.meta.get(FULL_NAMES)))


_KERNEL_IN_TEXT = re.compile(r"\bCijk_\S*[^\s).,;:]")


def shown_kernel_names_in(text: str) -> str:
    """``text`` (a reason, a walk line) with each kernel name in it as :func:`shown_kernel_name` shows it."""
    if not stdout_is_terminal():
        return text
    return _KERNEL_IN_TEXT.sub(lambda found: shown_kernel_name(found.group()), text)


def print_line(console: Console, text: str, *, context: str | None = None, style: str | None = None) -> None:
    """A line of a command's findings (plain text, no markup). Unlike :func:`print_note` it is
    data, never a ``# `` comment that ``grep -v '^#'`` drops: on a terminal as is (under its
    heading); in a pipe ``context<TAB>text`` (the text unindented), so that a grep for one finding
    keeps what it belongs to."""
    if stdout_is_terminal():
        console.print(text, markup=False, style=style)
        return
    plain = text.strip().replace("\t", " ")
    console.file.write((f"{context}\t{plain}" if context else plain) + "\n")


def emit_rows(headers: list[str] | None, rows: list[list[Any]], console: Console | None = None) -> None:
    """Rows as a rich table on a terminal, as tab-separated lines otherwise."""
    from rich.table import Table

    out = console or stdout_console()
    table = Table(show_header=headers is not None, pad_edge=False)
    for header in headers or [""] * (len(rows[0]) if rows else 0):
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*[str(cell) for cell in row])
    print_table(out, table)


SLOW_PHASE_SECONDS = 2.0
"""A phase still running after this long says, once, what it is doing when stderr is no terminal."""


class SlowPhaseNote:
    """Off a terminal, one ``tensilekit: <phase> …`` line on stderr for a phase that runs past
    :data:`SLOW_PHASE_SECONDS`: a piped or logged run is never silent for long (as pip and cargo
    name what they are doing), and a quick phase prints nothing, so short runs stay clean.

    :meth:`stage` names the next phase (its own clock, its own one line); :meth:`close` ends it.
    """

    def __init__(self, label: str) -> None:
        self._timer: threading.Timer | None = None
        self.stage(label)

    def stage(self, label: str) -> None:
        self.close()
        self._timer = threading.Timer(SLOW_PHASE_SECONDS, _say_slow_phase, (label,))
        self._timer.daemon = True  # never keeps a finished command alive
        self._timer.start()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _say_slow_phase(label: str) -> None:
    try:
        sys.stderr.write(f"tensilekit: {label} …\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed (a pipe whose reader left): the note is not owed
        pass


@contextlib.contextmanager
def slow_phase_note(label: str) -> Iterator[SlowPhaseNote]:
    """A :class:`SlowPhaseNote` for the block (see there)."""
    note = SlowPhaseNote(label)
    try:
        yield note
    finally:
        note.close()


@contextlib.contextmanager
def progress_bar(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr while the block runs (on a terminal only); yields ``advance(n)``.

    ``total=None`` shows an indeterminate bar. Off a terminal (CI logs, pipes) a phase that runs
    past :data:`SLOW_PHASE_SECONDS` says so once (:class:`SlowPhaseNote`).
    """
    if not stderr_is_terminal():
        with slow_phase_note(label):
            yield lambda step: None
        return
    if total == 0:
        yield lambda step: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counted = (MofNCompleteColumn(),) if total is not None else ()  # an indeterminate bar has no count
    columns = (TextColumn(label), BarColumn(), *counted, TimeElapsedColumn())
    # results printed meanwhile: above the bar on a terminal, straight into a pipe otherwise
    same_screen = sys.stdout.isatty()
    with Progress(
        *columns,
        console=Console(stderr=True, force_terminal=True),  # stderr is a terminal: checked above
        transient=True,
        redirect_stdout=same_screen,
        redirect_stderr=True,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda step: bar.advance(task, step)


__all__ = [
    "FULL_NAMES",
    "SLOW_PHASE_SECONDS",
    "SlowPhaseNote",
    "comment_lines",
    "emit_rows",
    "print_line",
    "print_note",
    "plain_row",
    "print_table",
    "progress_bar",
    "shown_kernel_name",
    "shown_kernel_names_in",
    "slow_phase_note",
    "stderr_is_terminal",
    "stdout_console",
    "stdout_is_terminal",
    "table_lines",
]

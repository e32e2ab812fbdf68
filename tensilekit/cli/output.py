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
import sys
from collections.abc import Callable, Iterator
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


def _plain(cell: Any) -> str:
    if isinstance(cell, str):  # a str cell is rich markup, as the terminal table reads it
        from rich.markup import render

        cell = render(cell)
    text = getattr(cell, "plain", None)
    return str(text if text is not None else cell).replace("\t", " ").replace("\n", " ")


def table_lines(table: Table) -> list[str]:
    """A rich table as tab-separated lines: the header (when the table shows one), then each row."""
    columns = table.columns
    lines = []
    if table.show_header:
        lines.append("\t".join(_plain(column.header) for column in columns))
    for row in range(table.row_count):
        lines.append("\t".join(_plain(column._cells[row]) for column in columns))
    return lines


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


@contextlib.contextmanager
def progress_bar(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr while the block runs (on a terminal only); yields ``advance(n)``.

    ``total=None`` shows an indeterminate bar. Off a terminal (CI logs, pipes) nothing is drawn.
    """
    if not stderr_is_terminal() or total == 0:
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
    "comment_lines",
    "emit_rows",
    "print_note",
    "print_table",
    "progress_bar",
    "stderr_is_terminal",
    "stdout_console",
    "stdout_is_terminal",
    "table_lines",
]

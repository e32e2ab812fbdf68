"""One rule for workload files in every command: bad lines are skipped with a ``file:line`` warning.

``--strict`` stops at the first bad line instead (exit 3); a workload with no readable GEMM at all
is exit 3 too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tensilekit.cli.output import progress_bar
from tensilekit.errors import Location, ToolOutputError, WorkloadLineError
from tensilekit.io.files import check_regular_file

if TYPE_CHECKING:
    from tensilekit.workload import ParsedWorkload, Workload


def warn_skipped(location: object, message: str) -> None:
    click.echo(f"warning: {location}: {message} (line skipped)", err=True)


def workload_names(paths: Sequence[Path]) -> str:
    """The workload files in a progress label: the name of one, the count of several."""
    return paths[0].name if len(paths) == 1 else f"{len(paths)} workload files"


def read_workloads(paths: Sequence[Path], *, strict: bool = False) -> tuple[Workload, list[ParsedWorkload]]:
    """The merged workload of ``paths``; each skipped line said on stderr.

    Raises:
        WorkloadLineError: with ``strict``, the first bad line; and when no GEMM could be read.
    """
    from tensilekit.workload import load_workloads

    for path in paths:  # a FIFO or device is refused unread: it could block or never end
        check_regular_file(path, missing="no such workload file")
    try:
        with progress_bar(f"reading {workload_names(paths)}", None):  # 100 000 log lines: seconds
            workload, parsed = load_workloads(paths, skip_bad_lines=not strict)
    except ToolOutputError as error:  # the parsers' own error, raised for a bad line when not skipping
        raise WorkloadLineError(error.message, error.location) from None
    for source in parsed:
        for bad in source.bad_lines:
            warn_skipped(bad.location, bad.message)
        for warning in source.warnings:
            click.echo(f"warning: {source.source}: {warning}", err=True)
    if not workload.problems:
        raise WorkloadLineError(
            "no GEMM could be read from the workload", Location(file=", ".join(str(path) for path in paths))
        )
    return workload, parsed


STRICT_HELP = "Stop at the first workload line that cannot be read (exit 3) instead of skipping it with a warning."

__all__ = ["STRICT_HELP", "read_workloads", "warn_skipped", "workload_names"]

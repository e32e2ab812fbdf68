"""Tell workload formats apart by content and load any of them through one call."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from pathlib import Path

from tensilekit._arguments import require, require_path, require_paths
from tensilekit.errors import Location, ToolOutputError, UnsupportedFormat
from tensilekit.io.files import check_regular_file
from tensilekit.workload.aggregate import Workload, aggregate_problems
from tensilekit.workload.csv_workloads import parse_aiter_csv, parse_tunableop_csv
from tensilekit.workload.geko_list import parse_geko_list
from tensilekit.workload.hipblaslt_log import parse_hipblaslt_log
from tensilekit.workload.records import ParsedWorkload, WorkloadFormat, text_lines
from tensilekit.workload.tuning_file import looks_like_tuning_file, parse_tuning_file

_SNIFF_LINES = 50


def detect_workload_format(text: str) -> WorkloadFormat | None:
    """Guess the format from the first meaningful lines; None when nothing matches.

    hipBLASLt logs start lines with ``hipblaslt-bench`` or ``- {``; TunableOp files with
    ``Validator,`` or ``…TunableOp_``; hipBLASLt tuning files with ``Git Version:``, a header
    naming ``transA`` and ``solution_index``, or 37-field bench value lines; AITER files with a header naming ``M``, ``N`` and ``K``;
    a GEKO list is a YAML mapping with ``TRANSA`` and ``Sizes`` keys.
    """
    require(text, str, "text", "detect_workload_format")
    lines = [line.strip() for line in text.splitlines()[: _SNIFF_LINES * 4] if line.strip()]
    lines = [line for line in lines if not line.startswith("#")][:_SNIFF_LINES]
    if not lines:
        return None
    for line in lines:
        first = line.split(None, 1)[0]
        if first == "hipblaslt-bench" or first.endswith("/hipblaslt-bench") or line.startswith(("- {", "-{")):
            return WorkloadFormat.HIPBLASLT_LOG
    if looks_like_tuning_file(lines):
        return WorkloadFormat.HIPBLASLT_TUNING
    head = lines[0]
    if (
        head.startswith("Validator,")
        or head.split(",", 1)[0].endswith("TunableOp_")
        or "TunableOp_" in head.split(",", 1)[0]
    ):
        return WorkloadFormat.TUNABLEOP
    columns = {cell.strip() for cell in head.split(",")}
    if {"M", "N", "K"} <= columns:
        return WorkloadFormat.AITER
    keys = {line.split(":", 1)[0].strip() for line in lines if ":" in line and not line.startswith((" ", "-"))}
    if {"TRANSA", "Sizes"} <= keys or {"TRANSB", "Sizes"} <= keys:
        return WorkloadFormat.GEKO_LIST
    return None


def detect_file_format(path: str | Path, *, encoding: str = "utf-8-sig") -> WorkloadFormat | None:
    """:func:`detect_workload_format` of a file's first lines, the rest left unread (a log of a
    million lines is not read to tell what it is)."""
    file = Path(require_path(path, "path", "detect_file_format"))
    check_regular_file(file, missing=f"no such workload file: {file}")  # a FIFO or device: refused unread
    with file.open(encoding=encoding, errors="surrogateescape", newline="") as stream:
        head = list(itertools.islice(text_lines(stream), _SNIFF_LINES * 4))
    return detect_workload_format("\n".join(head))


def parse_workload(
    text: str, *, format: WorkloadFormat | None = None, file: str | None = None, skip_bad_lines: bool = False
) -> ParsedWorkload:
    """Parse workload text of a given (or detected) format into its problems, in order of first record."""
    require(text, str, "text", "parse_workload")
    require(format, WorkloadFormat, "format", "parse_workload", optional=True)
    require(file, str, "file", "parse_workload", optional=True)
    return _parse_lines(text.splitlines(), lambda: text, format, file, skip_bad_lines)


def _parse_lines(
    lines: Iterable[str],
    whole: Callable[[], str],
    format: WorkloadFormat | None,
    file: str | None,
    skip_bad_lines: bool,
) -> ParsedWorkload:
    """Parse the lines of a workload (a list, or a stream read once): the format is told from the
    first lines, and logs and CSVs are read on line by line, never held whole. YAML GEKO lists and
    tuning files are parsed from the ``whole`` text (small files, one line per distinct GEMM)."""
    stream = iter(lines)
    head = list(itertools.islice(stream, _SNIFF_LINES * 4))
    chosen = format or detect_workload_format("\n".join(head))
    if chosen is None:
        raise UnsupportedFormat(
            "cannot tell the workload format (hipBLASLt log, GEKO list, TunableOp or AITER CSV)",
            Location(file=file),
        )
    rest = itertools.chain(head, stream)
    if chosen is WorkloadFormat.HIPBLASLT_LOG:
        return parse_hipblaslt_log(rest, file=file, skip_bad_lines=skip_bad_lines).to_workload()
    if chosen is WorkloadFormat.TUNABLEOP:
        return parse_tunableop_csv(rest, file=file, skip_bad_lines=skip_bad_lines, fold=True).to_workload()
    if chosen is WorkloadFormat.AITER:
        return parse_aiter_csv(rest, file=file, skip_bad_lines=skip_bad_lines)
    if chosen is WorkloadFormat.GEKO_LIST:
        return parse_geko_list(whole(), file=file)
    if chosen is WorkloadFormat.HIPBLASLT_TUNING:
        parsed = parse_tuning_file(whole(), file=file)
        if parsed.bad_lines and not skip_bad_lines:
            first = parsed.bad_lines[0]
            raise ToolOutputError(f"{first.message}: {first.text.strip()[:200]!r}", first.location)
        return parsed.to_workload(file)
    raise UnsupportedFormat(f"{chosen.value} workloads are not read from files", Location(file=file))


def load_workload(
    path: str | Path, *, format: WorkloadFormat | None = None, skip_bad_lines: bool = False
) -> ParsedWorkload:
    """Read one workload file of any supported format (detected from its content by default).

    Logs and CSVs are streamed: memory grows with the distinct GEMMs, not with the lines."""
    path = require_path(path, "path", "load_workload")
    file = Path(path)
    check_regular_file(file, missing=f"no such workload file: {file}")  # a FIFO or device: refused unread
    with file.open(encoding="utf-8-sig", errors="replace") as stream:
        return _parse_lines(
            text_lines(stream),
            lambda: file.read_text(encoding="utf-8-sig", errors="replace"),
            format,
            str(file),
            skip_bad_lines,
        )


def load_workloads(
    paths: Iterable[str | Path], *, format: WorkloadFormat | None = None, skip_bad_lines: bool = False
) -> tuple[Workload, list[ParsedWorkload]]:
    """Read several workload files and merge them into one de-duplicated workload.

    Returns the merged :class:`Workload` (its warnings include every file's warnings, prefixed
    with the file) and the per-file results, whose ``bad_lines`` say what was skipped.
    """
    files = require_paths(paths, "paths", "load_workloads")
    parsed = [load_workload(path, format=format, skip_bad_lines=skip_bad_lines) for path in files]
    merged = aggregate_problems(problem for item in parsed for problem in item.problems)
    file_warnings = tuple(f"{item.source}: {warning}" for item in parsed for warning in item.warnings)
    # readers fold repeated lines while reading: count the records they read, not what they kept
    records = sum(len(item.problems) if item.records_read is None else item.records_read for item in parsed)
    return merged.model_copy(update={"warnings": file_warnings + merged.warnings, "records_in": records}), parsed


__all__ = ["detect_file_format", "detect_workload_format", "load_workload", "load_workloads", "parse_workload"]

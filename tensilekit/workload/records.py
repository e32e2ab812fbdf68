"""What a workload parser returns: the problems, the lines it could not use, and why.

Every parser follows one policy: a line it cannot turn into a problem raises
:class:`~tensilekit.errors.ToolOutputError` naming ``file:line``, unless the caller passed
``skip_bad_lines=True``; then the line is recorded as a :class:`BadLine` and parsing goes on.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict

from tensilekit.errors import Location, ToolOutputError
from tensilekit.workload.problem import GemmProblem


class WorkloadFormat(str, enum.Enum):
    """The workload sources tensilekit reads."""

    HIPBLASLT_LOG = "hipblaslt-log"
    """``HIPBLASLT_LOG_MASK`` 32 (bench lines), 64 (profile) or 128 (extended profile) output."""
    GEKO_LIST = "geko-list"
    """GEKO generator YAML: ``TRANSA``, ``TRANSB``, ``DataType`` …, ``Sizes: [[M, N, B, K], …]``."""
    INLINE = "inline"
    """One GEMM on a command line, GEKO ``--inline M N batch K DT DDT CDT tA tB`` order."""
    TUNABLEOP = "tunableop"
    """PyTorch TunableOp ``tunableop_untuned*.csv`` / ``tunableop_results*.csv``."""
    AITER = "aiter"
    """AITER ``*_untuned_gemm.csv`` / ``*_tuned_gemm.csv`` (header ``M,N,K,…``)."""
    HIPBLASLT_TUNING = "hipblaslt-tuning"
    """hipBLASLt ``HIPBLASLT_TUNING_FILE`` / ``HIPBLASLT_TUNING_OVERRIDE_FILE`` (both layouts)."""


class BadLine(BaseModel):
    """An input line that could not be turned into a problem, kept when skipping was asked for."""

    model_config = ConfigDict(frozen=True)

    location: Location
    message: str
    text: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class ParsedWorkload(BaseModel):
    """The problems read from one source, in order of first record. Logs and CSVs fold repeated
    records of one GEMM as they are read (``records_read`` counts what was read); merging across
    sources and formats is :func:`~tensilekit.workload.aggregate_problems`'s."""

    model_config = ConfigDict(frozen=True)

    format: WorkloadFormat
    source: str | None = None
    problems: tuple[GemmProblem, ...] = ()
    bad_lines: tuple[BadLine, ...] = ()
    warnings: tuple[str, ...] = ()
    metadata: dict[str, str] = {}
    """Format-specific facts worth keeping, e.g. TunableOp ``Validator`` lines, GEKO ``ARCH``."""
    records_read: int | None = None
    """GEMM records (lines) read when readers folded repeated ones into one problem while reading
    (their calls summed); None: one record per problem."""

    @property
    def call_count(self) -> int:
        """Total calls over all problems."""
        return sum(problem.call_count for problem in self.problems)


BAD_LINES_LISTED = 1000
"""Unreadable lines a reader lists one by one; the rest are counted in one more entry, so a file of
a million unreadable lines costs a thousand entries, not a million."""


class BadLineSink:
    """Raise on a bad line, or record it when ``skip`` is set (one policy for every parser)."""

    def __init__(self, file: str | None, skip: bool) -> None:
        self.file = file
        self.skip = skip
        self._listed: list[BadLine] = []
        self._more = 0
        self._first_more: BadLine | None = None

    @property
    def bad_lines(self) -> list[BadLine]:
        """The bad lines, the first :data:`BAD_LINES_LISTED` one by one, the rest in one entry
        at the first of them that counts them."""
        if self._first_more is None:
            return list(self._listed)
        first = self._first_more
        summary = BadLine(
            location=first.location,
            message=f"{first.message}; {self._more} unreadable line(s) from here on, {BAD_LINES_LISTED} listed before",
            text=first.text,
        )
        return [*self._listed, summary]

    def location(self, line: int | None) -> Location:
        return Location(file=self.file, line=line)

    def report(self, line: int | None, message: str, text: str) -> None:
        """Record a bad line, or raise :class:`ToolOutputError` when not skipping."""
        location = self.location(line)
        if not self.skip:
            raise ToolOutputError(f"{message}: {text.strip()[:200]!r}", location)
        if len(self._listed) < BAD_LINES_LISTED:
            self._listed.append(BadLine(location=location, message=message, text=text.rstrip("\n")))
            return
        self._more += 1
        if self._first_more is None:
            self._first_more = BadLine(location=location, message=message, text=text.rstrip("\n")[:200])


def text_lines(stream: Iterable[str]) -> Iterator[str]:
    """The lines of a text stream, numbered as ``str.splitlines`` numbers the whole text.

    A file object splits only at ``\\n`` (and ``\\r``); ``splitlines`` also splits at form feeds,
    ``\\x1c`` … and ``\\u2028``. Readers stream files one line at a time (memory bounded by what they
    keep, not by the file) and must report the same ``file:line`` as when given the whole text.
    """
    for raw in stream:
        yield from raw.splitlines()


__all__ = ["BAD_LINES_LISTED", "BadLine", "BadLineSink", "ParsedWorkload", "WorkloadFormat", "text_lines"]

"""The one exception hierarchy of tensilekit, and where an input error happened.

Every error tensilekit raises derives from :class:`TensilekitError`. Errors about input carry a
:class:`Location` and print compiler-style (``file:line:col: message``) so editors can jump to it::

    TensilekitError
    ├── LibraryFormatError (ValueError)      a file decodes but does not fit the model
    │   ├── UnknownNodeType                  library node / predicate "type" tensilekit does not know
    │   ├── MissingField                     a required key or list position is absent
    │   ├── InvalidValue                     a value has the wrong type or is out of range
    │   └── VersionMismatch                  an unsupported format version
    ├── DecodeError (ValueError)             bytes that cannot be decoded at all
    │   ├── YamlSyntaxError
    │   ├── MsgpackDecodeError
    │   ├── WorkloadLineError                a workload file line that cannot be read (--strict)
    │   └── InputTooLarge                    over a size, depth, digits or alias limit
    ├── InputNotFound (FileNotFoundError)    a path that does not exist
    ├── MissingDependency (ImportError)      an optional extra is not installed (says which)
    ├── UnsupportedFormat (ValueError)       a file whose kind or format cannot be detected
    ├── ValidationFailed                     semantic checks found problems (carries the findings)
    ├── SelectionError (ValueError)          a query that cannot be answered (e.g. unparsable problem)
    │   └── NoKernel                         no kernel is the whole answer (no row for the device / type)
    ├── MergeError (ValueError)              incompatible problem types, conflicting indices
    ├── SearchError (ValueError)             the kernel search cannot run as asked
    │   ├── InvalidKernel                    a kernel description that cannot be read or is pruned
    │   └── SearchSpaceTooLarge              --mode grid over more kernels than --grid-limit
    ├── OutputNotWritable                    disk full, read-only or no permission (exit 4; the path said)
    ├── ToolError                            driving AMD's executables
    │   ├── ToolNotFound (FileNotFoundError)
    │   ├── ToolFailed                       non-zero exit or timeout: argv, return code, stderr tail
    │   └── ToolOutputError (ValueError)     output that cannot be parsed (file and line)
    └── PipelineError
        ├── PipelineAborted                  too many consecutive job failures (exit 4, resumable)
        ├── StageFailed
        ├── DependencyCycle
        └── StaleRunDirectory

Pure code raises without knowing the file; :func:`error_context` adds it at the boundary.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


@dataclasses.dataclass(frozen=True)
class Location:
    """Where in an input something is: file, YAML path inside the document, line and column.

    ``line`` and ``col`` are 1-based. ``path`` is a YAML-path string such as
    ``[5][3].MacroTile0`` or ``library.rows[0].library.map.Contraction_l_Alik_Bljk_Cijk_Dijk`` (keys
    that are not identifiers in brackets: ``map['a b']``). Binary input (msgpack) has no lines:
    ``offset`` is the 0-based byte offset in the decoded (decompressed) data instead.
    """

    file: str | None = None
    path: str | None = None
    line: int | None = None
    col: int | None = None
    offset: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        text = ":".join(parts)
        if self.line is None and self.offset is not None:
            text += f": byte {self.offset}"
        if self.path:
            text += f": at {self.path}"
        return text

    def with_file(self, file: str | None) -> Location:
        return dataclasses.replace(self, file=file)


def child_path(path: str, part: object) -> str:
    """``path`` extended by one key or index, spelled as :func:`format_path` spells it."""
    if isinstance(part, int):
        return f"{path}[{part}]"
    if isinstance(part, str) and part.isidentifier():
        return f"{path}.{part}" if path else part
    return f"{path}[{str(part)!r}]"


def format_path(parts: Sequence[object]) -> str:
    """Render a sequence of keys/indices as a YAML-path string (``[5][0].MacroTile0``)."""
    path = ""
    for part in parts:
        path = child_path(path, part)
    return path


class TensilekitError(Exception):
    """Root of every error tensilekit raises."""

    exit_code = 3

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        loc = self.location
        head = loc.file or "<input>"
        if loc.line is not None:
            head += f":{loc.line}"
            if loc.col is not None:
                head += f":{loc.col}"
        elif loc.offset is not None:
            head += f": byte {loc.offset}"
        text = f"{head}: {self.message}"
        if loc.path:
            text += f" (at {loc.path})"
        return text

    def with_file(self, file: str | Path) -> TensilekitError:
        """Attach a file name unless the error already names one; returns self."""
        loc = self.location or Location()
        if loc.file is None:
            self.location = loc.with_file(str(file))
        return self

    def to_dict(self) -> dict[str, Any]:
        loc = self.location or Location()
        return {
            "error": type(self).__name__,
            "message": self.message,
            "file": loc.file,
            "path": loc.path,
            "line": loc.line,
            "col": loc.col,
            "offset": loc.offset,
        }


class LibraryFormatError(TensilekitError, ValueError):
    """A file decodes but does not fit the logic-file or master-library model.

    ``related`` holds the file's other problems (each with its own location), so a report can
    list them all; the error itself is the first.
    """

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message, location)
        self.related: list[LibraryFormatError] = []


class UnknownNodeType(LibraryFormatError):
    """A library node or predicate ``type`` that tensilekit does not know."""


class MissingField(LibraryFormatError):
    """A required key or list position is absent."""


class InvalidValue(LibraryFormatError):
    """A value has the wrong type or is out of range."""


class VersionMismatch(LibraryFormatError):
    """An unsupported format version."""


class DecodeError(TensilekitError, ValueError):
    """Bytes that cannot be decoded at all."""


class YamlSyntaxError(DecodeError):
    """Malformed YAML."""


class MsgpackDecodeError(DecodeError):
    """Malformed MessagePack (or a damaged zlib/gzip wrapper around it)."""


class WorkloadLineError(DecodeError):
    """A line of a workload file (hipBLASLt log, TunableOp / AITER CSV, query lines) that cannot be read."""


class InputTooLarge(DecodeError):
    """Input over a reader limit (size, decompression ratio, nesting, integer digits, aliases);
    the message names the limit (``tensilekit --max-input-size`` raises the size limit)."""


class InputNotFound(TensilekitError, FileNotFoundError):
    """A path that does not exist."""


class PathTooLong(TensilekitError, ValueError):
    """A path the system cannot hold: a name longer than NAME_MAX or a path longer than PATH_MAX
    bytes (ENAMETOOLONG), named in the message."""


class LibraryChanged(TensilekitError):
    """A library folder was rewritten (swapped for a new build) while it was being read: what was
    read so far mixes two generations, so it is dropped. Reading again sees one of them; the
    commands that select retry a few times before they report this (exit 3)."""


def install_extra_hint(extra: str) -> str:
    """How to install one of tensilekit's optional extras (``plot``, ``ray``): the one wording every
    message uses. tensilekit is not on PyPI, so ``pip install tensilekit[ray]`` fails; the extras
    install from the checkout's root, as the README installs tensilekit itself."""
    return f'pip install -e ".[{extra}]" in the tensilekit checkout (it is not on PyPI)'


class MissingDependency(TensilekitError, ImportError):
    """An optional extra is not installed; the message says how to install it
    (:func:`install_extra_hint`)."""

    exit_code = 2

    @classmethod
    def for_extra(cls, needed: str, extra: str) -> MissingDependency:
        """``needed`` (``the Ray executor needs Ray``) and how to install the ``extra`` that brings it."""
        return cls(f"{needed}: install the {extra!r} extra: {install_extra_hint(extra)}")


class UnsupportedFormat(TensilekitError, ValueError):
    """A file whose kind (logic / master) or format (YAML / msgpack) cannot be detected."""


class ValidationFailed(TensilekitError):
    """Semantic validation found problems; ``findings`` lists them."""

    exit_code = 1

    def __init__(self, message: str, findings: Sequence[Any] = (), location: Location | None = None):
        super().__init__(message, location)
        self.findings = list(findings)


class SelectionError(TensilekitError, ValueError):
    """A selection query that cannot be answered (bad problem description, bad library)."""


class NoKernel(SelectionError):
    """The runtime finds no kernel and that is the whole answer (the message says why); exit 1."""

    exit_code = 1


class UnmodelledSelection(SelectionError):
    """The runtime answers this query with a model tensilekit does not reproduce (Origami's
    analytical ranking of a ``Prediction`` pool); the message names the candidates."""

    exit_code = 1


class MergeError(TensilekitError, ValueError):
    """Two logic files that cannot be merged (different problem types, broken indices)."""


class SearchError(TensilekitError, ValueError):
    """The kernel search cannot run as asked (bad search options, unusable kernels, no space)."""


class InvalidKernel(SearchError):
    """A kernel description that cannot be read, or a kernel the pruning rules reject where a
    valid one is required."""


class SearchSpaceTooLarge(SearchError):
    """An exhaustive (grid) search over more kernels than the configured limit."""


class OutputNotWritable(TensilekitError):
    """An output cannot be written: the disk is full (``ENOSPC``, a quota), the file system is
    read-only (``EROFS``) or permission is denied (``EACCES``). The location names the path;
    nothing was half-written (writes are all-or-nothing) and no temporary file is left. Exit 4:
    the system failed, not the input."""

    exit_code = 4

    def __init__(self, message: str, location: Location | None = None, errno: int | None = None) -> None:
        super().__init__(message, location)
        self.errno = errno


class ToolError(TensilekitError):
    """Failure while driving one of AMD's executables."""

    exit_code = 4


class ToolNotFound(ToolError, FileNotFoundError):
    """The executable is not on PATH or at the configured location."""


TOOL_LAST_LINES = 4
"""How many of a failed tool's last output lines its :class:`ToolFailed` repeats in its text."""
_TOOL_LINE_CHARS = 300


def last_lines(text: str, count: int = TOOL_LAST_LINES) -> tuple[str, ...]:
    """The last ``count`` non-blank lines of ``text``, stripped, each cut to 300 characters (pure)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return tuple(
        line if len(line) <= _TOOL_LINE_CHARS else line[: _TOOL_LINE_CHARS - 1] + "…" for line in lines[-count:]
    )


class ToolFailed(ToolError):
    """A tool exited non-zero or timed out.

    Its text is the message followed by the tool's own last lines (``error: NO solution found!
    at …testing_matmul.hpp:2455``, a Python exception, a GPU fault), so every place that records
    a failure -- ``failures.json``, the job records, the report, the command line -- keeps what the
    tool said, for every tool alike; ``message`` is the message alone.
    """

    def __init__(
        self,
        message: str,
        argv: Sequence[str] = (),
        returncode: int | None = None,
        stderr_tail: str = "",
        timed_out: bool = False,
        stalled: bool = False,
    ) -> None:
        super().__init__(message)
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out
        self.stalled = stalled
        """The tool's output stopped moving for the stall limit (``timed_out`` is set too)."""
        self.last_lines = last_lines(stderr_tail)
        """The tool's last non-blank output lines (stderr, or stdout when stderr is empty)."""

    def __str__(self) -> str:
        text = super().__str__()
        if not self.last_lines:
            return text
        return f"{text}; its last output: " + " | ".join(self.last_lines)


class ToolOutputError(ToolError, ValueError):
    """A tool's output cannot be parsed."""


class PipelineError(TensilekitError):
    """Failure of the tuning pipeline as a whole."""


class PipelineAborted(PipelineError):
    """The run stopped itself: too many jobs failed in a row (a broken node or tool); resumable."""

    exit_code = 4


class StageFailed(PipelineError):
    """A stage could not produce its outputs."""


class DependencyCycle(PipelineError):
    """Stage dependencies form a cycle."""


class StaleRunDirectory(PipelineError):
    """A run directory's completion markers do not match the current configuration."""


@contextlib.contextmanager
def error_context(file: str | Path) -> Iterator[None]:
    """Add ``file`` to any :class:`TensilekitError` raised inside the block."""
    try:
        yield
    except TensilekitError as error:
        error.with_file(file)
        raise


def one_line_reason(error: Exception) -> str:
    """A model validation error as one line (``m: 9223372036854775808 is out of ...; lda: ...``),
    for warnings and located errors; other exceptions as ``str(error)``."""
    items = getattr(error, "errors", None)
    if not callable(items):
        return str(error)
    try:
        parts = [
            f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" if item.get("loc") else str(item["msg"])
            for item in items()
        ]
    except (TypeError, KeyError):
        return str(error)
    return "; ".join(parts) or str(error)


__all__ = [
    "install_extra_hint",
    "DecodeError",
    "DependencyCycle",
    "InputNotFound",
    "InputTooLarge",
    "InvalidKernel",
    "InvalidValue",
    "LibraryChanged",
    "PathTooLong",
    "LibraryFormatError",
    "Location",
    "MergeError",
    "MissingDependency",
    "MissingField",
    "MsgpackDecodeError",
    "NoKernel",
    "OutputNotWritable",
    "PipelineAborted",
    "PipelineError",
    "SearchError",
    "SearchSpaceTooLarge",
    "SelectionError",
    "StageFailed",
    "StaleRunDirectory",
    "TOOL_LAST_LINES",
    "TensilekitError",
    "ToolError",
    "ToolFailed",
    "ToolNotFound",
    "ToolOutputError",
    "UnknownNodeType",
    "UnmodelledSelection",
    "UnsupportedFormat",
    "ValidationFailed",
    "VersionMismatch",
    "WorkloadLineError",
    "YamlSyntaxError",
    "error_context",
    "format_path",
    "last_lines",
    "one_line_reason",
]

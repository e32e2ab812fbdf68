"""hipBLASLt's own tuning/override files (``HIPBLASLT_TUNING_FILE`` / ``HIPBLASLT_TUNING_OVERRIDE_FILE``).

hipBLASLt records an offline-tuned GEMM as a problem key and a *solution index of one build*. Two
layouts exist; both may open with a ``Git Version: <stamp>`` line, which hipBLASLt skips:

* **headerless** (``hipblaslt-bench`` with ``HIPBLASLT_TUNING_FILE`` set, hipBLASLt
  ``clients/include/argument_model.hpp@159c1980`` ``log_args``): one line per tuned GEMM, the bench
  value line (4-space indent, then ``transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,
  stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,a_type,b_type,c_type,d_type,compute_type,
  scaleA,scaleB,scaleC,scaleD,amaxD,activation_type,bias_vector,bias_type,rotating_buffer,
  hipblaslt-Gflops,hipblaslt-GB/s,us``) followed by ``,solution_index,gcnArchName,CUs``: 37 fields.
  The override reader (``UserDrivenTuningParser.cpp@00ed225c`` ``problemFromEntries``) takes only
  lines of exactly 37 fields: batch ``[3]``, m/n/k ``[4..6]``, types ``[17..21]``, index ``[34]``.
* **header/value** (rocm-libraries ``TuningCacheStore.cpp@1d38aaf4`` ``formatTuningRow`` /
  ``loadTuningRows``; also the bench ``Winner:`` block of the offline-tuning doc): each entry is a
  header line naming its columns (it holds ``transA`` and ``solution_index``) and the value line
  right under it; cells pair by column name, so columns may come in any order. Newer rows carry
  ``kernel_name``/``solution_name`` (checked at replay), ``gcnArchName``, ``CUs`` and ``us``.

This module only reads (pure: text in, rows out); :mod:`tensilekit.remapping` rewrites the index cells.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable

from pydantic import ValidationError

from tensilekit.errors import Location
from tensilekit.workload.hipblaslt_log import problem_from_fields
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import BadLine, ParsedWorkload, WorkloadFormat

#: Columns of a headerless line (argument_model.hpp@159c1980; indices as UserDrivenTuningParser@00ed225c reads).
HEADERLESS_COLUMNS: tuple[str, ...] = (
    "transA", "transB", "grouped_gemm", "batch_count", "m", "n", "k", "alpha", "lda", "stride_a", "beta",
    "ldb", "stride_b", "ldc", "stride_c", "ldd", "stride_d", "a_type", "b_type", "c_type", "d_type",
    "compute_type", "scaleA", "scaleB", "scaleC", "scaleD", "amaxD", "activation_type", "bias_vector",
    "bias_type", "rotating_buffer", "hipblaslt-Gflops", "hipblaslt-GB/s", "us", "solution_index",
    "gcnArchName", "CUs",
)  # fmt: skip

GIT_VERSION = "Git Version"

# Cells that describe the problem in both layouts (the header/value layout's epilogue/bias_type are
# enum numbers, not the bench spellings the problem model reads, so they stay out).
_PROBLEM_CELLS = frozenset(
    {
        "transA", "transB", "batch_count", "m", "n", "k", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b",
        "stride_c", "stride_d", "a_type", "b_type", "c_type", "d_type", "compute_type", "scaleA", "scaleB",
        "scaleC", "scaleD", "bias_vector", "gradient", "swizzle_a", "swizzle_b", "batch_mode", "grouped_gemm",
    }
)  # fmt: skip
_BENCH_ONLY_CELLS = frozenset({"activation_type", "bias_type"})


class TuningLayout(str, enum.Enum):
    """The two layouts of a hipBLASLt tuning file (see the module docstring)."""

    HEADERLESS = "headerless"
    KEYED = "header/value"


@dataclasses.dataclass(frozen=True, slots=True)
class TuningRow:
    """One tuned GEMM of a tuning file."""

    line: int
    """The line holding the values (1-based)."""
    header_line: int | None
    """The header line of a header/value entry (the line above ``line``); None when headerless."""
    layout: TuningLayout
    problem: GemmProblem
    """The GEMM, without the recorded solution (rows of one GEMM share one object)."""
    solution_index: int
    cells: tuple[str, ...]
    """The value line's cells as written (spaces kept)."""
    columns: tuple[str, ...]
    """The column name of each cell."""
    arch: str | None = None
    cu_count: int | None = None
    us: float | None = None

    def cell(self, name: str) -> str | None:
        """The stripped cell of column ``name``, or None when the row has no such column."""
        if name not in self.columns:
            return None
        return self.cells[self.columns.index(name)].strip()

    @property
    def kernel_name(self) -> str | None:
        return self.cell("kernel_name") or None

    @property
    def solution_name(self) -> str | None:
        return self.cell("solution_name") or None


@dataclasses.dataclass(frozen=True)
class TuningFile:
    """A parsed tuning file: its rows, the lines it could not read and its ``Git Version`` stamp."""

    rows: tuple[TuningRow, ...]
    bad_lines: tuple[BadLine, ...]
    git_version: str | None = None

    def to_workload(self, file: str | None = None) -> ParsedWorkload:
        """The tuned GEMMs as a workload (each with its recorded ``solution_index``)."""
        return ParsedWorkload(
            format=WorkloadFormat.HIPBLASLT_TUNING,
            source=file,
            problems=tuple(
                row.problem.model_copy(update={"solution_index": row.solution_index, "kernel_name": row.kernel_name})
                for row in self.rows
            ),
            bad_lines=self.bad_lines,
            metadata={"git_version": self.git_version} if self.git_version else {},
        )


def _is_header(cells: list[str]) -> bool:
    names = {cell.strip() for cell in cells}
    if cells and ":" in cells[0]:  # the bench prints "[0]:transA" on its header line
        names.add(cells[0].split(":", 1)[1].strip())
    return "transA" in names and "solution_index" in names


def _header_names(cells: list[str]) -> tuple[str, ...]:
    names = [cell.strip() for cell in cells]
    if names and names[0].startswith("[") and "]:" in names[0]:
        names[0] = names[0].split("]:", 1)[1]
    return tuple(names)


@dataclasses.dataclass(frozen=True)
class _Columns:
    """Where a layout's cells are, worked out once per header (rows are read by position)."""

    names: tuple[str, ...]
    problem: tuple[tuple[str, int], ...]
    problem_cells: Callable[[list[str]], tuple[str, ...]]
    """The problem's cells of a row, as a tuple (``operator.itemgetter``: rows are many)."""
    index: int | None
    arch: int | None
    cus: int | None
    us: int | None

    @classmethod
    def of(cls, names: tuple[str, ...], layout: TuningLayout) -> _Columns:
        wanted = _PROBLEM_CELLS | (_BENCH_ONLY_CELLS if layout is TuningLayout.HEADERLESS else frozenset())
        first = {name: position for position, name in reversed(list(enumerate(names)))}
        renamed = {"m": "M", "n": "N", "k": "K"}
        problem = tuple((renamed.get(name, name), position) for name, position in first.items() if name in wanted)
        ordered = tuple(sorted(problem, key=lambda item: item[1]))
        positions = [position for _, position in ordered]
        getter = operator.itemgetter(*positions)
        cells: Callable[[list[str]], tuple[str, ...]] = (
            getter if len(positions) > 1 else lambda row: tuple(row[p] for p in positions)
        )
        return cls(
            names,
            ordered,
            cells,
            first.get("solution_index"),
            first.get("gcnArchName"),
            first.get("CUs"),
            first.get("us"),
        )


ProblemCache = dict[tuple[str, ...], "GemmProblem | str"]
"""Problem cells -> the problem they make (or why they make none): a file repeats its GEMMs."""


def _problem(columns: _Columns, cells: list[str], cache: ProblemCache) -> GemmProblem:
    """The problem of a row's problem cells, built once per distinct cells."""
    key = columns.problem_cells(cells)
    known = cache.get(key)
    if known is None:
        fields = {name: cell.strip() for (name, _), cell in zip(columns.problem, key, strict=True)}
        try:
            known = problem_from_fields(fields)
        except (ValueError, ValidationError) as error:
            known = f"not a GEMM: {str(error).splitlines()[0]}"
        cache[key] = known
    if isinstance(known, str):
        raise ValueError(known)
    return known


def _cell(cells: list[str], position: int | None) -> str:
    return cells[position].strip() if position is not None else ""


def _row(
    number: int,
    header_line: int | None,
    layout: TuningLayout,
    columns: _Columns,
    cells: list[str],
    cache: ProblemCache,
) -> TuningRow:
    """One row from its columns and cells; raises ``ValueError`` naming what is wrong."""
    raw_index = _cell(cells, columns.index)
    if not raw_index.isdigit():
        raise ValueError(f"solution_index {raw_index!r} is not a solution index")
    problem = _problem(columns, cells, cache)
    cus = _cell(cells, columns.cus)
    us = _cell(cells, columns.us)
    try:
        time = float(us) if us else None
    except ValueError:
        time = None
    return TuningRow(
        line=number,
        header_line=header_line,
        layout=layout,
        problem=problem,
        solution_index=int(raw_index),
        cells=tuple(cells),
        columns=columns.names,
        arch=_cell(cells, columns.arch) or None,
        cu_count=int(cus) if cus.isdigit() else None,
        us=time,
    )


def _bad(file: str | None, line: int, message: str, text: str) -> BadLine:
    return BadLine(location=Location(file=file, line=line), message=message, text=text)


def parse_tuning_file(text: str, *, file: str | None = None) -> TuningFile:
    """Read a hipBLASLt tuning/override file of either layout; unreadable entries become bad lines.

    Lines hipBLASLt itself ignores (blank ones, ones without a comma, the ``Git Version`` line)
    are skipped silently; an entry hipBLASLt would drop (wrong field count, no valid index, not a
    GEMM) is reported, since a silently vanished tuning result is what this file exists to prevent.
    """
    lines = text.splitlines()
    rows: list[TuningRow] = []
    bad: list[BadLine] = []
    cache: ProblemCache = {}
    headerless = _Columns.of(HEADERLESS_COLUMNS, TuningLayout.HEADERLESS)
    keyed: dict[tuple[str, ...], _Columns] = {}
    stamp: str | None = None
    number = 0
    while number < len(lines):
        raw = lines[number]
        number += 1
        body = raw.strip()
        if not body:
            continue
        if GIT_VERSION in body:
            if stamp is None:
                stamp = body.split(":", 1)[1].strip() if ":" in body else ""
            continue
        if "," not in body:
            continue  # hipBLASLt skips it too ("Winner:", notes)
        cells = raw.split(",")
        if "solution_index" in raw and _is_header(cells):  # the substring test spares value lines the split
            header_number = number
            columns = _header_names(cells)
            following = lines[number] if number < len(lines) else None
            if following is None or "solution_index" in following and _is_header(following.split(",")):
                bad.append(_bad(file, header_number, "a header line with no value line under it", raw))
                continue
            value_raw = lines[number]
            number += 1
            values = value_raw.split(",")
            if len(values) != len(columns):
                message = (
                    f"expected {len(columns)} values as in the header on line {header_number}, found {len(values)}"
                )
                bad.append(_bad(file, number, message, value_raw))
                continue
            try:
                layout = keyed.get(columns) or keyed.setdefault(columns, _Columns.of(columns, TuningLayout.KEYED))
                rows.append(_row(number, header_number, TuningLayout.KEYED, layout, values, cache))
            except ValueError as error:
                bad.append(_bad(file, number, str(error), value_raw))
            continue
        if len(cells) != len(HEADERLESS_COLUMNS):
            message = f"expected {len(HEADERLESS_COLUMNS)} fields (headerless tuning line), found {len(cells)}"
            bad.append(_bad(file, number, message, raw))
            continue
        try:
            rows.append(_row(number, None, TuningLayout.HEADERLESS, headerless, cells, cache))
        except ValueError as error:
            bad.append(_bad(file, number, str(error), raw))
    return TuningFile(tuple(rows), tuple(bad), stamp)


def looks_like_tuning_file(lines: list[str]) -> bool:
    """True when the first meaningful lines (stripped) are a tuning file's."""
    for line in lines:
        if line.startswith(GIT_VERSION + ":"):
            return True
        cells = line.split(",")
        if _is_header(cells) or len(cells) == len(HEADERLESS_COLUMNS) and cells[0].strip() in ("N", "T", "C"):
            return True
    return False


def replaced_cells(row: TuningRow, changes: dict[str, str]) -> str:
    """The value line of ``row`` with the named cells replaced, each keeping its spaces."""
    cells = list(row.cells)
    for name, value in changes.items():
        position = row.columns.index(name)
        old = cells[position]
        stripped = old.strip()
        lead = old[: len(old) - len(old.lstrip())]
        trail = old[len(old.rstrip()) :] if stripped else ""
        cells[position] = f"{lead}{value}{trail}"
    return ",".join(cells)


__all__ = [
    "GIT_VERSION",
    "HEADERLESS_COLUMNS",
    "TuningFile",
    "TuningLayout",
    "TuningRow",
    "looks_like_tuning_file",
    "parse_tuning_file",
    "replaced_cells",
]

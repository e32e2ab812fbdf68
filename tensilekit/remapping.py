"""Carry recorded tuning results (solution indices of one build) to another build of the library.

PyTorch TunableOp results files (``Gemm_Hipblaslt_<index>``), AITER tuned CSVs
(``libtype=hipblaslt`` rows: ``solidx``, ``kernelName``) and hipBLASLt's own tuning/override files
(``solution_index``; :mod:`tensilekit.workload.tuning_file`) name a hipBLASLt solution by its index in
the build they were tuned with. Every rebuild renumbers. For each recorded row this module finds
the OLD build's record of that index and the NEW build's solutions with the same identity
(:mod:`tensilekit.model.identity`: equal records apart from what a build renumbers or renames):

* ``same`` -- NEW's solution at the recorded index is that solution;
* ``moved`` -- exactly one NEW solution is, under another index (given);
* ``ambiguous`` -- several NEW solutions are, none at the recorded index (listed; none picked);
* ``missing`` -- none is; NEW's heuristic pick for the row's problem is given, labelled as such;
* ``rejected`` -- a same/moved solution that NEW's predicates refuse for the row's problem on the
  row's device (``canSolve``: hardware, problem and task predicates; the deciding one is named).
  Checked only when the device is known in full (architecture and CU count), since a CU-count
  predicate cannot hold for an unknown count; NEW's heuristic pick is given as for ``missing``.

The artefact for NEW keeps every byte of the input except the rewritten fields of moved rows and
the dropped rows (missing, rejected and ambiguous ones; with ``fill_heuristic`` missing and rejected
rows get NEW's pick instead), so remapping a file from a library to itself gives the input back
byte for byte. Rows tensilekit cannot read are
reported with ``file:line`` and passed through unchanged (``strict`` raises at the first).
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import functools
import io
import os
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensilekit.errors import (
    InputNotFound,
    Location,
    SelectionError,
    TensilekitError,
    UnsupportedFormat,
    WorkloadLineError,
)
from tensilekit.io.msgpack_codec import parse_msgpack
from tensilekit.model.common import to_raw
from tensilekit.model.identity import IdentityTable
from tensilekit.model.library import MasterLibrary, PlaceholderNode
from tensilekit.workload.csv_workloads import parse_tunableop_csv, problem_from_aiter_row
from tensilekit.workload.detect import detect_file_format, detect_workload_format
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import BadLine, WorkloadFormat
from tensilekit.workload.tuning_file import TuningLayout, TuningRow, parse_tuning_file, replaced_cells

if TYPE_CHECKING:
    from tensilekit.selection.runtime import Runtime


class RemapStatus(str, enum.Enum):
    """What a recorded solution index is in the NEW build."""

    SAME = "same"
    MOVED = "moved"
    MISSING = "missing"
    AMBIGUOUS = "ambiguous"
    REJECTED = "rejected"

    @property
    def carried(self) -> bool:
        """True when the row keeps its tuned solution in NEW."""
        return self in (RemapStatus.SAME, RemapStatus.MOVED)


@dataclasses.dataclass(frozen=True)
class RemapRow:
    """One recorded row of an artefact and what its solution is in NEW."""

    file: str
    line: int
    status: RemapStatus
    old_index: int
    new_index: int | None
    kernel: str | None
    """NEW's kernel name when carried, else OLD's (the kernel that was recorded)."""
    reason: str | None = None
    candidates: tuple[int, ...] = ()
    """NEW's indices sharing the identity (``ambiguous``)."""
    heuristic_index: int | None = None
    """NEW's heuristic pick for the row's problem (``missing``), when it has one."""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "status": self.status.value,
            "old_index": self.old_index,
            "new_index": self.new_index,
            "kernel": self.kernel,
            "reason": self.reason,
        }


@dataclasses.dataclass(frozen=True)
class RemappedArtefact:
    """One artefact: its rows, its unreadable lines and its text for the NEW build."""

    source: str
    format: WorkloadFormat
    text: str
    rows: tuple[RemapRow, ...]
    bad_lines: tuple[BadLine, ...]
    validators_kept: tuple[str, ...] = ()
    """TunableOp ``Validator`` names left as they were (tensilekit cannot know NEW's values offline)."""


@dataclasses.dataclass(frozen=True)
class RemapReport:
    """Every artefact of one ``remap`` call."""

    artefacts: tuple[RemappedArtefact, ...]

    @property
    def rows(self) -> list[RemapRow]:
        return [row for artefact in self.artefacts for row in artefact.rows]

    @property
    def complete(self) -> bool:
        """True when every recorded row is ``same`` or ``moved`` and every line could be read."""
        return all(row.status.carried for row in self.rows) and not any(a.bad_lines for a in self.artefacts)


Picker = Callable[[GemmProblem, str | None, int | None], tuple[int | None, str]]
"""(problem, arch, CU count) -> NEW's heuristic pick and a label for it."""

Checker = Callable[[int, GemmProblem, str | None, int | None], str | None]
"""(NEW index, problem, arch, CU count) -> why NEW refuses that solution for the problem, or None."""


@dataclasses.dataclass(frozen=True)
class BuildSolutions:
    """The solutions of one build, by index and by identity."""

    table: IdentityTable

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]] | Mapping[int, Mapping[str, Any]]) -> BuildSolutions:
        """From a list of records or a mapping ``index -> record`` (:class:`LibraryRecords`)."""
        return cls(IdentityTable(records))

    def kernel(self, index: int) -> str | None:
        record = self.table.records.get(index)
        if record is None:
            return None
        name = record.get("kernelName") or record.get("name")
        return str(name) if name is not None else None


class LibraryRecords(Mapping[int, dict[str, Any]]):
    """Every solution record of a library by index, each decoded when first asked for.

    A lazy library's shards are opened once each (their index tables read, no solution decoded);
    an installed folder's shards are read lazily (``IndexedMaster.lazy_master``), and their
    records are taken as the file holds them, each checked to be the solution its index names --
    what ``to_raw`` of the decoded model gives (strict models coerce nothing) at a fraction of
    the cost. A remap decodes all of NEW (to index it by identity) but of OLD only the recorded
    indices.
    """

    def __init__(self, library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None) -> None:
        self._decoders: dict[int, Callable[[], dict[str, Any]]] = {}
        self._decoded: dict[int, dict[str, Any]] = {}
        self._shards: dict[int, str] = {}
        self._tables: list[tuple[Any, tuple[int, ...]]] = []  # lazily read shards: (table, indices)
        for solution in library.solutions:
            self._decoders[solution.index] = functools.partial(to_raw, solution)
        if loader is None:
            return
        seen: set[str] = set()
        for _, node in library.iter_nodes():
            if isinstance(node, PlaceholderNode) and node.value not in seen:
                seen.add(node.value)
                self._add_shard(loader(node.value), node.value)

    def shard_of(self, index: int) -> str | None:
        """The placeholder (shard file prefix) holding solution ``index``; None for the master's own."""
        return self._shards.get(index)

    def _add_shard(self, shard: MasterLibrary, prefix: str) -> None:
        lazy_indices = getattr(shard, "_lazy_indices", None)
        if lazy_indices is None:
            for solution in shard.solutions:
                self._decoders[solution.index] = functools.partial(to_raw, solution)
                self._shards[solution.index] = prefix
            return
        find = shard._lazy_solution  # type: ignore[attr-defined]
        table = getattr(find, "__self__", None)
        raw_solution = getattr(table, "raw_solution", None)
        if raw_solution is not None:
            self._tables.append((table, tuple(lazy_indices)))
        for index in lazy_indices:
            self._shards[index] = prefix
            if raw_solution is not None:
                self._decoders[index] = functools.partial(raw_solution, index)
            else:
                self._decoders[index] = functools.partial(_decoded_record, find, index)

    def decode_all(self) -> None:
        """Decode every record, a plain ``.dat`` shard in one msgpack call (about twice as fast as
        solution by solution, which the same checks then serve for what this leaves undecoded)."""
        for table, indices in self._tables:
            positions, blob = getattr(table, "_positions", None), getattr(table, "blob", None)
            if positions is None or blob is None or all(index in self._decoded for index in indices):
                continue  # an indexed shard: its slices are the cheapest way in
            try:
                data = parse_msgpack(blob, getattr(table, "source", None))
            except TensilekitError:
                continue  # decoded one by one below, which locates the damage
            solutions = data.get("solutions") if isinstance(data, dict) else None
            if not isinstance(solutions, list):
                continue
            for index in indices:
                position = positions.get(index)
                raw = solutions[position] if position is not None and position < len(solutions) else None
                if isinstance(raw, dict) and raw.get("index") == index:
                    self._decoded.setdefault(index, raw)

    def items(self) -> ItemsView[int, dict[str, Any]]:
        self.decode_all()
        return super().items()

    def __getitem__(self, index: int) -> dict[str, Any]:
        found = self._decoded.get(index)
        if found is None:
            found = self._decoded[index] = self._decoders[index]()
        return found

    def __contains__(self, index: object) -> bool:
        return index in self._decoders

    def __iter__(self) -> Iterator[int]:
        return iter(self._decoders)

    def __len__(self) -> int:
        return len(self._decoders)


def _decoded_record(find: Callable[[int], Any], index: int) -> dict[str, Any]:
    raw: dict[str, Any] = to_raw(find(index))
    return raw


def library_records(library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None) -> list[dict[str, Any]]:
    """Every solution record of a library, a lazy one's shards included (each shard read once)."""
    return list(LibraryRecords(library, loader).values())


def classify(file: str, line: int, old_index: int, old: BuildSolutions, new: BuildSolutions) -> RemapRow | None:
    """The status of one recorded index; None when OLD has no such solution (a bad row)."""
    record = old.table.records.get(old_index)
    if record is None:
        return None
    matches = new.table.matches(record, old.table.identity(old_index))
    if old_index in matches:
        return RemapRow(file, line, RemapStatus.SAME, old_index, old_index, new.kernel(old_index))
    if len(matches) == 1:
        return RemapRow(file, line, RemapStatus.MOVED, old_index, matches[0], new.kernel(matches[0]))
    if matches:
        listed = ", ".join(map(str, matches))
        reason = f"NEW has {len(matches)} solutions equal to OLD's {old_index}: {listed}; none chosen"
        return RemapRow(
            file, line, RemapStatus.AMBIGUOUS, old_index, None, old.kernel(old_index), reason, tuple(matches)
        )
    return RemapRow(file, line, RemapStatus.MISSING, old_index, None, old.kernel(old_index), "NEW has no such solution")


class _RowJudge:
    """Classify and judge recorded rows, each distinct (index, problem, device) once.

    Artefacts repeat their GEMMs (TunableOp files per rank, AITER rows per ``cu_num``, tuning files
    appended by many runs); the status of a row depends only on its index, its problem and its
    device, so the answer is kept and later rows get a copy with their own file and line.
    """

    def __init__(self, old: BuildSolutions, new: BuildSolutions, picker: Picker | None, checker: Checker | None):
        self.old, self.new, self.picker, self.checker = old, new, picker, checker
        self._seen: dict[tuple[int, object, str | None, int | None], RemapRow | None] = {}

    def __call__(
        self,
        file: str,
        line: int,
        old_index: int,
        problem: GemmProblem,
        arch: str | None,
        cus: int | None,
        problem_key: object = None,
    ) -> RemapRow | None:
        """The row's status; ``problem_key`` stands for ``problem`` in the memo when the caller
        has a cheaper one (a tuning file's rows share one object per distinct GEMM)."""
        key = (old_index, problem if problem_key is None else problem_key, arch, cus)
        if key in self._seen:
            known = self._seen[key]
            return None if known is None else _located(known, file, line)
        row = classify(file, line, old_index, self.old, self.new)
        if row is not None:
            row = _judged(row, problem, arch, cus, self.picker, self.checker)
        self._seen[key] = row
        return row


def _located(row: RemapRow, file: str, line: int) -> RemapRow:
    """A copy of ``row`` for another file and line (``dataclasses.replace`` without its checks:
    a remap makes one per recorded row)."""
    copied = object.__new__(RemapRow)
    copied.__dict__.update(row.__dict__, file=file, line=line)
    return copied


def _judged(
    row: RemapRow,
    problem: GemmProblem,
    arch: str | None,
    cus: int | None,
    picker: Picker | None,
    checker: Checker | None,
) -> RemapRow:
    """The row after NEW's predicates (``rejected``) and NEW's heuristic (for rows not carried)."""
    if row.status.carried and checker is not None and row.new_index is not None:
        refused = checker(row.new_index, problem, arch, cus)
        if refused is not None:
            row = dataclasses.replace(
                row, status=RemapStatus.REJECTED, reason=f"NEW refuses {row.new_index}: {refused}"
            )
    if row.status in (RemapStatus.MISSING, RemapStatus.REJECTED) and picker is not None:
        row = _with_pick(row, picker(problem, arch, cus))
    return row


def _with_pick(row: RemapRow, pick: tuple[int | None, str] | None) -> RemapRow:
    if pick is None:
        return row
    index, label = pick
    return dataclasses.replace(row, reason=f"{row.reason}; {label}", heuristic_index=index)


# --------------------------------------------------------------------------------------------
# TunableOp results files

_TUNABLEOP_PREFIX = "Gemm_Hipblaslt_"


def _line_ending(line: str) -> str:
    stripped = line.rstrip("\r\n")
    return line[len(stripped) :]


def _arch_of(value: str | None) -> str | None:
    return value.split(":", 1)[0].strip() if value else None


def remap_tunableop(
    text: str,
    file: str,
    old: BuildSolutions,
    new: BuildSolutions,
    *,
    picker: Picker | None = None,
    checker: Checker | None = None,
    fill_heuristic: bool = False,
    strict: bool = False,
    validators: Mapping[str, str] | None = None,
) -> RemappedArtefact:
    """Remap a TunableOp results file (``torch.cuda.tunable``'s ``tunableop_results*.csv``)."""
    lines = text.splitlines(keepends=True)
    parsed = parse_tunableop_csv(text, file=file, skip_bad_lines=True)
    bad = list(parsed.bad_lines)
    arch = _arch_of(parsed.validators.get("GCN_ARCH_NAME"))
    out = list(lines)
    rows: list[RemapRow] = []
    judge = _RowJudge(old, new, picker, checker)
    for entry in parsed.entries:
        if entry.solution is None or not entry.solution.startswith(_TUNABLEOP_PREFIX):
            continue
        raw = lines[entry.line - 1]
        old_index = entry.problem.solution_index
        if old_index is None:
            bad.append(_bad(file, entry.line, f"solution {entry.solution!r} is not Gemm_Hipblaslt_<index>", raw))
            continue
        row = judge(file, entry.line, old_index, entry.problem.without_solution(), arch, None)
        if row is None:
            bad.append(_bad(file, entry.line, f"OLD has no solution {old_index}", raw))
            continue
        rows.append(row)
        target = row.new_index if row.status.carried else row.heuristic_index if fill_heuristic else None
        if target is None:
            out[entry.line - 1] = ""
        elif target != old_index:
            fields = raw.rstrip("\r\n").split(",")
            fields[2] = fields[2].replace(f"{_TUNABLEOP_PREFIX}{old_index}", f"{_TUNABLEOP_PREFIX}{target}")
            out[entry.line - 1] = ",".join(fields) + _line_ending(raw)
    bad.sort(key=lambda item: item.location.line or 0)  # the reader's and ours, in file order
    if strict and bad:
        raise WorkloadLineError(bad[0].message, bad[0].location)
    kept: list[str] = []
    wanted = dict(validators or {})
    for number, raw in enumerate(lines):
        fields = raw.rstrip("\r\n").split(",")
        if fields[0].strip() == "Validator" and len(fields) >= 3:
            name = fields[1].strip()
            if name in wanted:
                out[number] = f"{fields[0]},{fields[1]},{wanted.pop(name)}{_line_ending(raw)}"
            else:
                kept.append(name)
    if wanted:
        raise UnsupportedFormat(f"no Validator line named {', '.join(sorted(wanted))}", Location(file=file))
    return RemappedArtefact(file, WorkloadFormat.TUNABLEOP, "".join(out), tuple(rows), tuple(bad), tuple(kept))


def _bad(file: str, line: int, message: str, raw: str) -> BadLine:
    return BadLine(location=Location(file=file, line=line), message=message, text=raw.rstrip("\r\n"))


# --------------------------------------------------------------------------------------------
# AITER tuned CSVs


def _csv_line(cells: Sequence[str], ending: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=ending or "\n").writerow(cells)
    text = buffer.getvalue()
    return text if ending else text.rstrip("\n")


def _renamed(recorded: str, old_record: Mapping[str, Any], new: BuildSolutions, target: int) -> str:
    """The kernel-name cell for NEW: NEW's spelling of the same field (``kernelName`` or ``name``)
    when the recorded one is OLD's, else the recorded text (tensilekit cannot tell its spelling)."""
    new_record = new.table.records.get(target, {})
    for field in ("kernelName", "name"):
        if old_record.get(field) == recorded and new_record.get(field):
            return str(new_record[field])
    return recorded


def remap_aiter(
    text: str,
    file: str,
    old: BuildSolutions,
    new: BuildSolutions,
    *,
    picker: Picker | None = None,
    checker: Checker | None = None,
    fill_heuristic: bool = False,
    strict: bool = False,
) -> RemappedArtefact:
    """Remap an AITER tuned CSV (``aiter/configs/*_tuned_gemm.csv``): ``libtype=hipblaslt`` rows.

    ``solidx`` and ``kernelName`` are rewritten for NEW; rows of other ``libtype`` pass through.
    """
    lines = text.splitlines(keepends=True)
    out = list(lines)
    header: list[str] | None = None
    rows: list[RemapRow] = []
    bad: list[BadLine] = []
    judge = _RowJudge(old, new, picker, checker)
    for number, raw in enumerate(lines, start=1):
        body = raw.rstrip("\r\n")
        if not body.strip() or body.lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in next(csv.reader([body], skipinitialspace=True))]
        if header is None:
            header = cells
            if "solidx" not in header or "libtype" not in header:
                raise UnsupportedFormat(
                    "not a tuned AITER CSV: the header has no libtype/solidx column", Location(file=file, line=number)
                )
            continue
        if len(cells) != len(header):
            bad.append(_bad(file, number, f"expected {len(header)} columns as in the header, found {len(cells)}", raw))
            continue
        row_cells = dict(zip(header, cells, strict=True))
        if row_cells["libtype"].lower() != "hipblaslt":
            continue
        try:
            old_index = int(row_cells["solidx"])
            problem = problem_from_aiter_row(row_cells)
        except ValueError as error:
            bad.append(_bad(file, number, f"bad AITER row: {error}", raw))
            continue
        cu = row_cells.get("cu_num", "")
        row = judge(
            file, number, old_index, problem.without_solution(), row_cells.get("gfx") or None,
            int(cu) if cu.isdigit() else None,
        )  # fmt: skip
        if row is None:
            bad.append(_bad(file, number, f"OLD has no solution {old_index}", raw))
            continue
        rows.append(row)
        target = row.new_index if row.status.carried else row.heuristic_index if fill_heuristic else None
        if target is None:
            out[number - 1] = ""
            continue
        if target == old_index:  # same: the row stays byte for byte (its name column included)
            continue
        changed = dict(row_cells, solidx=str(target))
        if "kernelName" in changed:
            changed["kernelName"] = _renamed(changed["kernelName"], old.table.records[old_index], new, target)
        if changed != row_cells:
            raw_cells = next(csv.reader([body]))
            for position, name in enumerate(header):
                if changed[name] != row_cells[name]:
                    raw_cells[position] = changed[name]
            out[number - 1] = _csv_line(raw_cells, _line_ending(raw))
    if strict and bad:
        raise WorkloadLineError(bad[0].message, bad[0].location)
    return RemappedArtefact(file, WorkloadFormat.AITER, "".join(out), tuple(rows), tuple(bad))


# --------------------------------------------------------------------------------------------
# hipBLASLt tuning/override files


def _new_name(row: TuningRow, column: str, new: BuildSolutions, target: int, field: str) -> dict[str, str]:
    """The name cell for NEW when the row records one (hipBLASLt checks it at replay)."""
    if not row.cell(column):
        return {}
    value = new.table.records.get(target, {}).get(field)
    return {column: str(value)} if value else {}


def remap_tuning_file(
    text: str,
    file: str,
    old: BuildSolutions,
    new: BuildSolutions,
    *,
    picker: Picker | None = None,
    checker: Checker | None = None,
    fill_heuristic: bool = False,
    strict: bool = False,
) -> RemappedArtefact:
    """Remap a hipBLASLt tuning/override file (:mod:`tensilekit.workload.tuning_file`, both layouts).

    Moved rows get NEW's index in ``solution_index`` and, where the row records them, NEW's
    ``kernel_name``/``solution_name``; a dropped header/value entry loses both its lines.
    """
    lines = text.splitlines(keepends=True)
    parsed = parse_tuning_file(text, file=file)
    bad = list(parsed.bad_lines)
    out = list(lines)
    rows: list[RemapRow] = []
    judge = _RowJudge(old, new, picker, checker)
    rewritten_lines: dict[tuple[str, tuple[str, ...], int], str] = {}
    for entry in parsed.rows:
        raw = lines[entry.line - 1]
        # rows of one GEMM share one problem object, alive while ``parsed`` is: its id is its key
        row = judge(
            file,
            entry.line,
            entry.solution_index,
            entry.problem,
            _arch_of(entry.arch),
            entry.cu_count,
            id(entry.problem),
        )
        if row is None:
            bad.append(_bad(file, entry.line, f"OLD has no solution {entry.solution_index}", raw))
            continue
        target = row.new_index if row.status.carried else row.heuristic_index if fill_heuristic else None
        if target == 0 and entry.layout is TuningLayout.HEADERLESS:
            # UserDrivenTuningParser.cpp@00ed225c keeps a headerless row only when its index is > 0
            note = "index 0: hipBLASLt's headerless override reader (00ed225c) skips it"
            row = _located(row, file, entry.line)
            object.__setattr__(row, "reason", f"{row.reason}; {note}" if row.reason else note)
        rows.append(row)
        if target is None:
            out[entry.line - 1] = ""
            if entry.header_line is not None:
                out[entry.header_line - 1] = ""
            continue
        if target == entry.solution_index:
            continue
        key = (raw, entry.columns, target)  # appended files repeat their lines: rewrite each once
        rewritten = rewritten_lines.get(key)
        if rewritten is None:
            changes = {"solution_index": str(target)}
            changes |= _new_name(entry, "kernel_name", new, target, "kernelName")
            changes |= _new_name(entry, "solution_name", new, target, "name")
            rewritten = rewritten_lines[key] = replaced_cells(entry, changes) + _line_ending(raw)
        out[entry.line - 1] = rewritten
    bad.sort(key=lambda item: item.location.line or 0)
    if strict and bad:
        raise WorkloadLineError(bad[0].message, bad[0].location)
    return RemappedArtefact(file, WorkloadFormat.HIPBLASLT_TUNING, "".join(out), tuple(rows), tuple(bad))


# --------------------------------------------------------------------------------------------
# The API


def read_artefact(path: str | Path) -> str:
    """An artefact's text; undecodable bytes survive the round trip (surrogate escapes)."""
    file = Path(path)
    if not file.is_file():
        raise InputNotFound("no such artefact file", Location(file=str(file)))
    return file.read_bytes().decode("utf-8", errors="surrogateescape")


def remap_text(
    text: str,
    file: str,
    old: BuildSolutions,
    new: BuildSolutions,
    *,
    picker: Picker | None = None,
    checker: Checker | None = None,
    fill_heuristic: bool = False,
    strict: bool = False,
    validators: Mapping[str, str] | None = None,
) -> RemappedArtefact:
    """Remap one artefact's text, its format detected (TunableOp results, AITER tuned CSV or
    hipBLASLt tuning/override file)."""
    chosen = detect_workload_format(text)
    if chosen is WorkloadFormat.TUNABLEOP:
        return remap_tunableop(
            text,
            file,
            old,
            new,
            picker=picker,
            checker=checker,
            fill_heuristic=fill_heuristic,
            strict=strict,
            validators=validators,
        )
    if chosen is WorkloadFormat.HIPBLASLT_TUNING:
        if validators:
            raise UnsupportedFormat("--validator applies to TunableOp files only", Location(file=file))
        return remap_tuning_file(
            text, file, old, new, picker=picker, checker=checker, fill_heuristic=fill_heuristic, strict=strict
        )
    if chosen is WorkloadFormat.AITER:
        if validators:
            raise UnsupportedFormat("--validator applies to TunableOp files only", Location(file=file))
        return remap_aiter(
            text, file, old, new, picker=picker, checker=checker, fill_heuristic=fill_heuristic, strict=strict
        )
    raise UnsupportedFormat(
        "not a TunableOp results file, an AITER tuned CSV or a hipBLASLt tuning file", Location(file=file, line=1)
    )


RUNTIME_WORKSPACE: Any = object()
"""``workspace_size`` left to the library's runtime: what :func:`tensilekit.open_library` allows
by default (hipBLASLt 128 MiB, Tensile unlimited), so remap, ``diff --from-log``, ``select``
and ``coverage`` judge a recorded kernel by one rule."""


def _judges(
    library: MasterLibrary,
    loader: Callable[[str], MasterLibrary] | None,
    arch: str | None,
    cu_count: int | None,
    *,
    unknown_cus_decide: bool = False,
    workspace_size: Any = RUNTIME_WORKSPACE,
    hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
    runtime: Runtime | None = None,
) -> tuple[Picker, Checker]:
    """NEW's heuristic pick and NEW's ``canSolve`` for a row, on the row's device (else ``arch``/
    ``cu_count``, else the library's only architecture). ``canSolve`` is not asked (None) when the
    CU count is unknown, unless ``unknown_cus_decide`` (judge as ``select`` does on that device);
    the recorded index is looked up as hipBLASLt's ``isSolutionSupported`` looks it up
    (:meth:`~tensilekit.selection.walk.ReferenceSelector.index_verdict`).
    ``workspace_size``: the workspace the call may use (bytes, None: unlimited; by default the
    runtime's, :data:`RUNTIME_WORKSPACE`: a log does not say). The runtime that judges: ``runtime``,
    else :func:`tensilekit.api.answering_runtime` of ``hipblaslt_version`` and
    ``solution_selection_method`` (None: the library's version, the environment's method)."""
    from tensilekit.api import answering_runtime, library_processors
    from tensilekit.selection import select_solution
    from tensilekit.selection.problem import Hardware
    from tensilekit.selection.walk import ReferenceSelector, as_contraction

    if runtime is None:
        runtime = answering_runtime(
            library, loader, hipblaslt_version=hipblaslt_version, solution_selection_method=solution_selection_method
        )
    if workspace_size is RUNTIME_WORKSPACE:
        workspace_size = runtime.default_workspace_size
    selector = ReferenceSelector(library, loader, runtime)
    processors = library_processors(library)
    shards_joined: list[bool] = []

    def device(row_arch: str | None, row_cus: int | None) -> Hardware | None:
        chosen = row_arch or arch or (processors[0] if len(processors) == 1 else None)
        if chosen is None:
            return None
        return Hardware(arch=chosen, cu_count=row_cus if row_cus is not None else cu_count)

    def pick(problem: GemmProblem, row_arch: str | None, row_cus: int | None) -> tuple[int | None, str]:
        hardware = device(row_arch, row_cus)
        if hardware is None:
            return None, "NEW's heuristic pick unknown (the library serves several architectures; give --arch)"
        try:
            chosen = select_solution(selector, runtime.problem_from_workload(problem, workspace_size), hardware)
        except SelectionError as error:
            return None, f"NEW's heuristic cannot answer: {error.message}"
        if chosen.index is None:
            return None, "NEW's heuristic finds no kernel"
        return chosen.index, f"NEW's heuristic picks {chosen.index} ({chosen.name})"

    def check(index: int, problem: GemmProblem, row_arch: str | None, row_cus: int | None) -> str | None:
        hardware = device(row_arch, row_cus)
        if hardware is None or (hardware.cu_count is None and not unknown_cus_decide):
            return None  # a CU-count predicate cannot hold for an unknown count: not checked
        if not shards_joined:  # canSolve of any index: every shard's solutions joined, once
            for _, node in library.iter_nodes():
                if isinstance(node, PlaceholderNode):
                    selector.load_placeholder(node.value)
            shards_joined.append(True)
        try:
            contraction = as_contraction(runtime.problem_from_workload(problem, workspace_size))
            verdicts = [selector.index_verdict(index, attempt, hardware) for attempt in runtime.attempts(contraction)]
        except SelectionError:
            return None  # a predicate tensilekit cannot evaluate: not a refusal
        if any(verdict.passed for verdict in verdicts):
            return None
        return f"{verdicts[0].type or 'predicate'} fails ({verdicts[0].reason})"

    return pick, check


def remap(
    artefacts: Sequence[str | Path],
    old: str | Path,
    new: str | Path,
    *,
    fill_heuristic: bool = False,
    strict: bool = False,
    validators: Mapping[str, str] | None = None,
    arch: str | None = None,
    cu_count: int | None = None,
    stage: Callable[[str], None] | None = None,
    workspace_size: Any = RUNTIME_WORKSPACE,
    hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> RemapReport:
    """Remap tuning artefacts recorded against library ``old`` to library ``new``.

    ``old``/``new`` are any library form :func:`tensilekit.api.load_for_selection` reads.
    ``arch``/``cu_count`` describe the device for NEW's heuristic pick and predicates when a row
    does not say (``rejected`` is decided only when the CU count is known). ``workspace_size``:
    the workspace NEW's calls may use (bytes, None unlimited; by default NEW's runtime's, as
    ``select`` and ``coverage`` allow: hipBLASLt 128 MiB, Tensile unlimited). ``hipblaslt_version``:
    NEW's hipBLASLt runtime, ``"7d9fb683"`` or ``"0.12.1"`` (None: the one NEW shows);
    ``solution_selection_method``: its ``TENSILE_SOLUTION_SELECTION_METHOD`` (None: the
    environment's, :func:`tensilekit.api.solution_selection_method_of`).
    Nothing is written; each :class:`RemappedArtefact` carries its text for NEW.
    ``stage`` is told each phase as it starts (``reading OLD``, ``remapping X``), for a progress display.
    Raises TypeError/ValueError for arguments of the wrong type.
    """
    from tensilekit._arguments import require, require_callable, require_path
    from tensilekit.api import load_for_selection

    if isinstance(artefacts, (str, bytes, os.PathLike)) or not isinstance(artefacts, Sequence):
        raise TypeError(f"remap(): artefacts must be a sequence of paths, not {type(artefacts).__name__}")
    artefacts = [require_path(artefact, "each of artefacts", "remap") for artefact in artefacts]
    old = require_path(old, "old", "remap")
    new = require_path(new, "new", "remap")
    require(arch, str, "arch", "remap", optional=True)
    require(cu_count, int, "cu_count", "remap", optional=True)
    require(validators, Mapping, "validators", "remap", optional=True)
    require_callable(stage, "stage", "remap", optional=True)
    if workspace_size is not RUNTIME_WORKSPACE:
        require(workspace_size, int, "workspace_size", "remap", optional=True)
    require(hipblaslt_version, str, "hipblaslt_version", "remap", optional=True)
    require(solution_selection_method, int, "solution_selection_method", "remap", optional=True)

    tell = stage or (lambda label: None)
    tell(f"reading {Path(old).name}")
    old_library, old_loader = load_for_selection(old)
    tell(f"reading {Path(new).name}")
    new_library, new_loader = load_for_selection(new)
    if new_loader is not None:  # NEW's shards are read for its records and for its predicates: once
        new_loader = functools.cache(new_loader)
    tell("indexing the solutions of both libraries")
    old_solutions = BuildSolutions.from_records(LibraryRecords(old_library, old_loader))
    new_solutions = BuildSolutions.from_records(LibraryRecords(new_library, new_loader))
    picker, checker = _judges(
        new_library, new_loader, arch, cu_count, workspace_size=workspace_size, hipblaslt_version=hipblaslt_version,
        solution_selection_method=solution_selection_method,
    )  # fmt: skip
    texts = [(str(path), read_artefact(path)) for path in artefacts]
    tunableop = {file for file, text in texts if detect_workload_format(text) is WorkloadFormat.TUNABLEOP}
    if validators and not tunableop:
        raise UnsupportedFormat("--validator applies to TunableOp files only", Location(file=texts[0][0]))
    remapped: list[RemappedArtefact] = []
    for file, text in texts:
        tell(f"remapping {Path(file).name}")
        remapped.append(
            remap_text(
                text,
                file,
                old_solutions,
                new_solutions,
                picker=picker,
                checker=checker,
                fill_heuristic=fill_heuristic,
                strict=strict,
                validators=validators if file in tunableop else None,  # the other files have no Validator lines
            )
        )
    return RemapReport(tuple(remapped))


RECORDING_FORMATS = frozenset({WorkloadFormat.TUNABLEOP, WorkloadFormat.AITER, WorkloadFormat.HIPBLASLT_TUNING})
"""Workload formats that record solution indices (what remap carries and ``diff --from-log`` gates on)."""


def records_solutions(path: str | Path) -> bool:
    """True when ``path`` is a tuning artefact remap reads (TunableOp results, AITER tuned CSV,
    hipBLASLt tuning file), so an upgrade can lose what it recorded."""
    if not Path(path).is_file():
        raise InputNotFound("no such artefact file", Location(file=str(path)))
    return detect_file_format(path, encoding="utf-8") in RECORDING_FORMATS  # its first lines, as read_artefact decodes


def lost_results(report: RemapReport) -> list[RemapRow]:
    """The recorded rows an upgrade would lose: rejected, missing or ambiguous in NEW."""
    return [row for row in report.rows if not row.status.carried]


def write_remapped(report: RemapReport, out: str | Path) -> list[Path]:
    """Write the artefacts for NEW: one artefact to the file ``out``, several (or one, when ``out``
    is an existing folder) into the folder ``out`` under their own names, all at once; never over
    an input.

    Raises InputNotFound when the folder ``out`` would go in does not exist (it is not created, as
    the CLI refuses it too), TypeError/ValueError for arguments of the wrong type."""
    from tensilekit._arguments import require, require_path
    from tensilekit.io.atomic import file_set, write_bytes_atomic

    require(report, RemapReport, "report", "write_remapped")
    target = require_path(out, "out", "write_remapped")
    if not target.parent.is_dir():
        raise InputNotFound(f"folder {target.parent} does not exist", Location(file=str(target)))
    sources = {Path(artefact.source).resolve() for artefact in report.artefacts}
    if len(report.artefacts) == 1 and not target.is_dir():  # an existing folder (or a link to one): into it
        if target.resolve() in sources:
            raise UnsupportedFormat("remap never rewrites its input in place; give another -o", Location(file=str(out)))
        write_bytes_atomic(target, report.artefacts[0].text.encode("utf-8", errors="surrogateescape"))
        return [target]
    names = [Path(artefact.source).name for artefact in report.artefacts]
    if len(set(names)) != len(names):
        raise UnsupportedFormat(
            "several artefacts share a file name; remap them one at a time", Location(file=str(out))
        )
    if any((target / name).resolve() in sources for name in names):
        raise UnsupportedFormat("remap never rewrites its input in place; give another -o", Location(file=str(out)))
    with file_set(target) as staged:
        for name, artefact in zip(names, report.artefacts, strict=True):
            (staged / name).write_bytes(artefact.text.encode("utf-8", errors="surrogateescape"))
    return [target / name for name in names]


__all__ = [
    "BuildSolutions",
    "LibraryRecords",
    "RemapReport",
    "RemapRow",
    "RemapStatus",
    "RemappedArtefact",
    "RECORDING_FORMATS",
    "RUNTIME_WORKSPACE",
    "classify",
    "library_records",
    "lost_results",
    "read_artefact",
    "remap",
    "remap_aiter",
    "remap_text",
    "remap_tunableop",
    "remap_tuning_file",
    "records_solutions",
    "write_remapped",
]

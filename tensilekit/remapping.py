"""Carry recorded tuning results (solution indices of one build) to another build of the library.

PyTorch TunableOp results files (``Gemm_Hipblaslt_<index>``) and AITER tuned CSVs
(``libtype=hipblaslt`` rows: ``solidx``, ``kernelName``) name a hipBLASLt solution by its index in
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
import io
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import InputNotFound, Location, SelectionError, UnsupportedFormat, WorkloadLineError
from tensilekit.model.common import to_raw
from tensilekit.model.identity import IdentityTable
from tensilekit.model.library import MasterLibrary, PlaceholderNode
from tensilekit.workload.csv_workloads import parse_tunableop_csv, problem_from_aiter_row
from tensilekit.workload.detect import detect_workload_format
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import BadLine, WorkloadFormat


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
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> BuildSolutions:
        return cls(IdentityTable(records))

    def kernel(self, index: int) -> str | None:
        record = self.table.records.get(index)
        if record is None:
            return None
        name = record.get("kernelName") or record.get("name")
        return str(name) if name is not None else None


def library_records(library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None) -> list[dict[str, Any]]:
    """Every solution record of a library, a lazy one's shards included (each shard read once)."""
    records: list[dict[str, Any]] = [to_raw(solution) for solution in library.solutions]
    if loader is None:
        return records
    seen: set[str] = set()
    for _, node in library.iter_nodes():
        if isinstance(node, PlaceholderNode) and node.value not in seen:
            seen.add(node.value)
            records += [to_raw(solution) for solution in loader(node.value).solutions]
    return records


def classify(file: str, line: int, old_index: int, old: BuildSolutions, new: BuildSolutions) -> RemapRow | None:
    """The status of one recorded index; None when OLD has no such solution (a bad row)."""
    record = old.table.records.get(old_index)
    if record is None:
        return None
    matches = new.table.matches(record)
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
    for entry in parsed.entries:
        if entry.solution is None or not entry.solution.startswith(_TUNABLEOP_PREFIX):
            continue
        raw = lines[entry.line - 1]
        old_index = entry.problem.solution_index
        if old_index is None:
            bad.append(_bad(file, entry.line, f"solution {entry.solution!r} is not Gemm_Hipblaslt_<index>", raw))
            continue
        row = classify(file, entry.line, old_index, old, new)
        if row is None:
            bad.append(_bad(file, entry.line, f"OLD has no solution {old_index}", raw))
            continue
        row = _judged(row, entry.problem, arch, None, picker, checker)
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
        row = classify(file, number, old_index, old, new)
        if row is None:
            bad.append(_bad(file, number, f"OLD has no solution {old_index}", raw))
            continue
        cu = row_cells.get("cu_num", "")
        row = _judged(row, problem, row_cells.get("gfx") or None, int(cu) if cu.isdigit() else None, picker, checker)
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
    """Remap one artefact's text, its format detected (TunableOp results or AITER tuned CSV)."""
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
    if chosen is WorkloadFormat.AITER:
        if validators:
            raise UnsupportedFormat("--validator applies to TunableOp files only", Location(file=file))
        return remap_aiter(
            text, file, old, new, picker=picker, checker=checker, fill_heuristic=fill_heuristic, strict=strict
        )
    raise UnsupportedFormat("not a TunableOp results file or an AITER tuned CSV", Location(file=file, line=1))


def _judges(
    library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None, arch: str | None, cu_count: int | None
) -> tuple[Picker, Checker]:
    """NEW's heuristic pick and NEW's ``canSolve`` for a row, on the row's device (else ``arch``/
    ``cu_count``, else the library's only architecture)."""
    from tensilekit.api import library_processors, library_runtime
    from tensilekit.selection import select_solution
    from tensilekit.selection.problem import Hardware
    from tensilekit.selection.walk import ReferenceSelector, as_contraction

    runtime = library_runtime(library, loader)
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
            chosen = select_solution(selector, runtime.problem_from_workload(problem), hardware)
        except SelectionError as error:
            return None, f"NEW's heuristic cannot answer: {error.message}"
        if chosen.index is None:
            return None, "NEW's heuristic finds no kernel"
        return chosen.index, f"NEW's heuristic picks {chosen.index} ({chosen.name})"

    def check(index: int, problem: GemmProblem, row_arch: str | None, row_cus: int | None) -> str | None:
        hardware = device(row_arch, row_cus)
        if hardware is None or hardware.cu_count is None:
            return None  # a CU-count predicate cannot hold for an unknown count: not checked
        if not shards_joined:  # canSolve of any index: every shard's solutions joined, once
            for _, node in library.iter_nodes():
                if isinstance(node, PlaceholderNode):
                    selector.load_placeholder(node.value)
            shards_joined.append(True)
        try:
            contraction = as_contraction(runtime.problem_from_workload(problem))
            verdicts = [selector.verdict(index, attempt, hardware) for attempt in runtime.attempts(contraction)]
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
) -> RemapReport:
    """Remap tuning artefacts recorded against library ``old`` to library ``new``.

    ``old``/``new`` are any library form :func:`tensilekit.api.load_for_selection` reads.
    ``arch``/``cu_count`` describe the device for NEW's heuristic pick and predicates when a row
    does not say (``rejected`` is decided only when the CU count is known).
    Nothing is written; each :class:`RemappedArtefact` carries its text for NEW.
    Raises TypeError/ValueError for arguments of the wrong type.
    """
    from tensilekit._arguments import require, require_path
    from tensilekit.api import load_for_selection

    if isinstance(artefacts, (str, bytes, os.PathLike)) or not isinstance(artefacts, Sequence):
        raise TypeError(f"remap(): artefacts must be a sequence of paths, not {type(artefacts).__name__}")
    for artefact in artefacts:
        require_path(artefact, "each of artefacts", "remap")
    require_path(old, "old", "remap")
    require_path(new, "new", "remap")
    require(arch, str, "arch", "remap", optional=True)
    require(cu_count, int, "cu_count", "remap", optional=True)
    if validators is not None and not isinstance(validators, Mapping):
        raise TypeError(f"remap(): validators must be a mapping, not {type(validators).__name__}")

    old_library, old_loader = load_for_selection(old)
    new_library, new_loader = load_for_selection(new)
    old_solutions = BuildSolutions.from_records(library_records(old_library, old_loader))
    new_solutions = BuildSolutions.from_records(library_records(new_library, new_loader))
    picker, checker = _judges(new_library, new_loader, arch, cu_count)
    remapped = tuple(
        remap_text(
            read_artefact(path),
            str(path),
            old_solutions,
            new_solutions,
            picker=picker,
            checker=checker,
            fill_heuristic=fill_heuristic,
            strict=strict,
            validators=validators,
        )
        for path in artefacts
    )
    return RemapReport(remapped)


def write_remapped(report: RemapReport, out: str | Path) -> list[Path]:
    """Write the artefacts for NEW: one artefact to the file ``out``, several into the folder
    ``out`` (same base names), all at once; never over an input.

    Raises InputNotFound when the folder ``out`` would go in does not exist (it is not created, as
    the CLI refuses it too), TypeError/ValueError for arguments of the wrong type."""
    from tensilekit._arguments import require, require_path
    from tensilekit.io.atomic import staged_directory, write_bytes_atomic

    require(report, RemapReport, "report", "write_remapped")
    target = require_path(out, "out", "write_remapped")
    if not target.expanduser().parent.is_dir():
        raise InputNotFound(f"folder {target.expanduser().parent} does not exist", Location(file=str(target)))
    sources = {Path(artefact.source).resolve() for artefact in report.artefacts}
    if len(report.artefacts) == 1:
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
    with staged_directory(target) as staged:
        for name, artefact in zip(names, report.artefacts, strict=True):
            (staged / name).write_bytes(artefact.text.encode("utf-8", errors="surrogateescape"))
    return [target / name for name in names]


__all__ = [
    "BuildSolutions",
    "RemapReport",
    "RemapRow",
    "RemapStatus",
    "RemappedArtefact",
    "classify",
    "library_records",
    "read_artefact",
    "remap",
    "remap_aiter",
    "remap_text",
    "remap_tunableop",
    "write_remapped",
]

"""Rendering for ``tensilekit select``: a summary and the explained walk for people, JSON for scripts."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensilekit.cli.output import (
    comment_lines,
    plain_row,
    print_note,
    print_table,
    shown_kernel_name,
    shown_kernel_names_in,
    stdout_is_terminal,
    table_lines,
)
from tensilekit.cli.phases import print_table_shown
from tensilekit.model.labels import matrix_instruction_in_name, size_text
from tensilekit.selection import BatchSelection, ContractionProblem, GemmProblem, Hardware, Selection

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from tensilekit.selection import WorkloadSelection

# rich (~50 ms to import) is loaded only where a terminal shows its tables


def _number(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def selection_record(
    selection: Selection, query_id: Any, *, explain: bool = False, listing: bool = False
) -> dict[str, Any]:
    """The JSON object for one answer: id, index, name, distance (+ trace, alternatives).

    ``listing`` (hipBLASLt ``--top``) always writes ``top`` (findTopSolutions, in order) and
    ``fallback`` (getAllSolutions appended when short), empty lists included."""
    record: dict[str, Any] = {
        "id": query_id,
        "index": selection.index,
        "name": selection.name,
        "distance": _number(selection.distance),
    }
    if selection.retried:
        record["retried"] = True  # hipBLASLt's XF32 -> Float retry answered
    if selection.alternatives:
        record["alternatives"] = [candidate.model_dump(mode="json") for candidate in selection.alternatives]
        if any(
            c.source != "reselect" for c in selection.alternatives
        ):  # hipBLASLt: its own ranking, then the unordered fallback
            listing = True
    if listing:
        record["top"] = [c.index for c in selection.alternatives if c.source == "findTopSolutions"]
        record["fallback"] = [c.index for c in selection.alternatives if c.source == "getAllSolutions"]
    if explain:
        record["trace"] = [event.model_dump(mode="json") for event in selection.trace]
    return record


def selection_extras(selection: Selection, *, explain: bool = False, listing: bool = False) -> dict[str, Any]:
    """What an answer adds to its JSON (``Library.answer_record``) beyond the kernel: the ranked
    ``alternatives`` (and hipBLASLt's ``top``/``fallback`` listing) and, with ``explain``, the ``trace``."""
    record = selection_record(selection, None, explain=explain, listing=listing)
    return {key: record[key] for key in ("alternatives", "top", "fallback", "trace") if key in record}


def batch_record(answers: BatchSelection, position: int, query_id: Any) -> dict[str, Any]:
    """The JSON object for answer ``position`` of a batch."""
    index = int(answers.indices[position])
    if index < 0:
        return {"id": query_id, "index": None, "name": None, "distance": None}
    solution = answers.library.solutions[int(answers.solution_ids[position])]
    record = {
        "id": query_id,
        "index": index,
        "name": solution.name,
        "distance": _number(float(answers.distances[position])),
    }
    if position in answers.retried:
        record["retried"] = True  # hipBLASLt's XF32 -> Float retry answered
    return record


@contextlib.contextmanager
def progress(total: int) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr for long batches (only on a terminal; ``total=0`` disables)."""
    import sys

    if total <= 0 or not sys.stderr.isatty():
        yield lambda step: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if total <= 0 or not console.is_terminal:
        yield lambda step: None
        return
    columns = (TextColumn("selecting"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("select", total=total)
        yield lambda step: bar.advance(task, step)


def _problem_line(problem: GemmProblem, contraction: ContractionProblem) -> str:
    types = (
        f"{problem.a_type.value}/{problem.b_type.value if problem.b_type else '-'} → "
        f"{problem.d_type.value if problem.d_type else '-'}"
    )
    compute = problem.compute_type.value if problem.compute_type else "-"
    flags = []
    if contraction.hpa:
        flags.append("HPA")
    if not problem.strided_batched:
        flags.append("pointer-array batched")
    if contraction.k != problem.k:
        flags.append(f"K passed as {contraction.k} (rocBLAS, alpha=0)")
    suffix = f" [{', '.join(flags)}]" if flags else ""
    return (
        f"{size_text(problem.m, problem.n, problem.k, problem.batch)} {problem.trans_a}{problem.trans_b} "
        f"{types} compute {compute} alpha={problem.alpha:g} beta={problem.beta:g} "
        f"metric {problem.performance_metric.value}{suffix}"
    )


def kernel_parameters(selection: Selection) -> list[tuple[str, str]]:
    """Macro tile, depthU, GSU and matrix instruction of the chosen kernel, where known."""
    rows: list[tuple[str, str]] = []
    mapping = selection.solution.size_mapping if selection.solution is not None else None
    if mapping is not None:
        if mapping.macro_tile:
            rows.append(("macro tile", "x".join(str(v) for v in mapping.macro_tile[:2])))
        if mapping.depth_u is not None:
            rows.append(("depthU", str(mapping.depth_u)))
        if mapping.global_split_u is not None:
            rows.append(("GSU", str(mapping.global_split_u)))
    instruction = mapping.matrix_instruction if mapping is not None else None
    if instruction:
        rows.append(("MI", "x".join(str(v) for v in instruction)))
    elif (in_name := matrix_instruction_in_name(selection.name)) is not None:
        rows.append(("MI", in_name))
    return rows


def render_selection(
    selection: Selection,
    problem: GemmProblem,
    hardware: Hardware,
    library: Path,
    contraction: ContractionProblem,
    console: Console | None = None,
    runtime: str = "tensile",
    runtime_label: str | None = None,
) -> None:
    """Summary of one answer; with a trace, the walk first; with alternatives, their ranking.
    ``runtime_label`` names the runtime with its version (``hipBLASLt 0.12.1``)."""
    hipblaslt = runtime == "hipblaslt"
    if console is None and not stdout_is_terminal():
        _print_selection_plain(selection, problem, hardware, library, contraction, hipblaslt, runtime_label)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = console or Console(highlight=False, soft_wrap=True)
    summary = Table(show_header=False, box=None, pad_edge=False)
    summary.add_column(style="bold", no_wrap=True, min_width=11)
    summary.add_column(overflow="fold")
    summary.add_row("library", str(library))
    summary.add_row("device", _device(hardware))
    summary.add_row("runtime", _runtime_line(hipblaslt, runtime_label))
    summary.add_row("problem", _problem_line(problem, contraction))
    if hipblaslt:
        summary.add_row("tensilelite", _tensilelite_line(problem, contraction))
    summary.add_row("operation", contraction.op_id)
    if selection.trace:
        print_table(out, summary)
        print_note(out)
        print_note(out, Text("walk", style="bold"))
        for event in selection.trace:
            print_note(out, _trace_line(event))
        print_note(out)
        summary = Table(show_header=False, box=None, pad_edge=False)
        summary.add_column(style="bold", no_wrap=True, min_width=11)
        summary.add_column(overflow="fold")
    if selection.index is None:
        call = "findTopSolutions returns nothing" if hipblaslt else "findBestSolution returns null"
        summary.add_row("selected", Text(f"none — the runtime finds no kernel ({call})", style="red"))
    else:
        retried = " (after hipBLASLt's XF32 → Float retry)" if selection.retried else ""
        summary.add_row("selected", Text(f"index {selection.index}{retried}", style="green"))
        summary.add_row("kernel", shown_kernel_name(selection.name))
        for label, value in kernel_parameters(selection):
            summary.add_row(label, value)
        if selection.matched_key is not None:
            summary.add_row("table entry", str(list(selection.matched_key)))
        summary.add_row("distance", "-" if selection.distance is None else f"{selection.distance:g}")
    print_table(out, summary)
    if selection.alternatives:
        title = (
            "findTopSolutions order (rows concatenated), then getAllSolutions fallback (unordered in hipBLASLt)"
            if hipblaslt
            else "next best (each as if the ones above did not exist)"
        )
        table = Table(title=title, title_justify="left")
        table.add_column("rank", justify="right")
        table.add_column("index", justify="right")
        table.add_column("source" if hipblaslt else "distance", justify="right")
        table.add_column("kernel", overflow="fold")
        for candidate in selection.alternatives:
            distance = "-" if candidate.distance is None else f"{candidate.distance:g}"
            third = candidate.source if hipblaslt else distance
            table.add_row(str(candidate.rank), str(candidate.index), third, shown_kernel_name(candidate.name))
        print_table(out, table)


def _device(hardware: Hardware) -> str:
    return (
        hardware.arch
        + (f", {hardware.cu_count} CUs" if hardware.cu_count else "")
        + (", APU" if hardware.is_apu else "")
    )


def _runtime_line(hipblaslt: bool, label: str | None = None) -> str:
    if hipblaslt:
        return f"{label or 'hipBLASLt'} (tensilelite heuristic: findTopSolutions(1))"
    return "rocBLAS Tensile (findBestSolution)"


def _tensilelite_line(problem: GemmProblem, contraction: ContractionProblem) -> str:
    workspace = "unlimited" if problem.workspace_size is None else f"{problem.workspace_size} bytes"
    return (
        f"computeInputType {contraction.compute_input_type.value}, F32XdlMathOp "
        f"{contraction.f32_xdl_math_op.value}, workspace {workspace}"
    )


def _print_selection_plain(
    selection: Selection,
    problem: GemmProblem,
    hardware: Hardware,
    library: Path,
    contraction: ContractionProblem,
    hipblaslt: bool = False,
    runtime_label: str | None = None,
) -> None:
    """``render_selection`` for a pipe: ``key<TAB>value`` lines, the walk as plain lines."""
    import sys

    lines = [
        f"library\t{library}",
        f"device\t{_device(hardware)}",
        f"runtime\t{_runtime_line(hipblaslt, runtime_label)}",
        f"problem\t{_problem_line(problem, contraction)}",
    ]
    if hipblaslt:
        lines.append(f"tensilelite\t{_tensilelite_line(problem, contraction)}")
    lines.append(f"operation\t{contraction.op_id}")
    if selection.trace:
        lines += ["walk", *(_trace_text(event) for event in selection.trace)]
    if selection.index is None:
        call = "findTopSolutions returns nothing" if hipblaslt else "findBestSolution returns null"
        lines.append(f"selected\tnone — the runtime finds no kernel ({call})")
    else:
        retried = " (after hipBLASLt's XF32 → Float retry)" if selection.retried else ""
        lines += [f"selected\tindex {selection.index}{retried}", f"kernel\t{selection.name or '-'}"]
        lines += [f"{label}\t{value}" for label, value in kernel_parameters(selection)]
        if selection.matched_key is not None:
            lines.append(f"table entry\t{list(selection.matched_key)}")
        lines.append(f"distance\t{'-' if selection.distance is None else f'{selection.distance:g}'}")
    if selection.alternatives:
        lines.append(f"rank\tindex\t{'source' if hipblaslt else 'distance'}\tkernel")
        for candidate in selection.alternatives:
            distance = "-" if candidate.distance is None else f"{candidate.distance:g}"
            third = candidate.source if hipblaslt else distance
            lines.append(f"{candidate.rank}\t{candidate.index}\t{third}\t{candidate.name or '-'}")
    sys.stdout.write("".join(line + "\n" for line in lines))


_MARKS = {True: ("✓ ", "green"), False: ("✗ ", "red"), None: ("· ", "dim")}


def _trace_text(event: Any) -> str:
    mark: str = _MARKS[event.passed][0]
    indent: int = event.depth + 1
    return "  " * indent + mark + f"{event.node} {event.message}"


def _trace_line(event: Any) -> Text:
    from rich.text import Text

    mark = _MARKS[event.passed]
    line = Text("  " * (event.depth + 1))
    line.append(mark[0], style=mark[1])
    line.append(f"{event.node} ", style="bold")
    line.append(shown_kernel_names_in(event.message))
    return line


class BatchTable:
    """``select --queries``'s table of many answers (id, index, distance, kernel), then a count of
    those without one. On a terminal rich draws it once every row is in (it measures all rows
    first); in a pipe each row is a tab-separated line handed to ``write`` as it comes (title and
    header first), so 100 000 answers are never held at once (~80 MB). ``write`` may hold the lines
    back (``--strict``), and the summary is printed to ``console`` by :meth:`finish`."""

    def __init__(self, library: Path, write: Callable[[str], None], console: Console | None = None) -> None:
        from rich.console import Console
        from rich.table import Table

        self._out = console or Console(highlight=False, soft_wrap=True)
        self._table = Table(title=f"{library}", title_justify="left")
        self._table.add_column("id", overflow="fold")
        self._table.add_column("index", justify="right")
        self._table.add_column("distance", justify="right")
        self._table.add_column("kernel", overflow="fold")
        self._streamed = not stdout_is_terminal()
        self._write = write
        self.count = self.none = self.errors = 0
        if self._streamed:  # as print_table writes an empty table: title comment, header
            self._write("\n".join(comment_lines(self._table.title) + table_lines(self._table)))

    def add(self, record: dict[str, Any]) -> None:
        """One answer's row (``select --queries`` records: id, index, name, distance, error)."""
        from rich.text import Text

        self.count += 1
        cells: tuple[Any, ...]
        if record.get("error"):
            self.errors += 1
            cells = (str(record.get("id")), "-", "-", Text(record["error"], style="red"))
        elif record["index"] is None:
            self.none += 1
            cells = (str(record.get("id")), "-", "-", Text("no kernel", style="dim"))
        else:
            distance = "-" if record["distance"] is None else f"{record['distance']:g}"
            cells = (str(record.get("id")), str(record["index"]), distance, shown_kernel_name(record["name"]))
        if self._streamed:
            self._write(plain_row(cells))
        else:
            self._table.add_row(*cells)

    def finish(self) -> None:
        """The table (on a terminal) and the count of answers without a kernel."""
        if not self._streamed:
            print_table_shown(self._out, self._table)
        summary = f"{self.count} queries, {self.count - self.none - self.errors} with a kernel, {self.none} without"
        print_note(self._out, summary + (f", {self.errors} not answerable" if self.errors else ""))


def workload_record(answer: WorkloadSelection) -> dict[str, Any]:
    """One ``--from-log`` answer as JSON: the GEMM, its call count and the kernel it hits."""
    gemm = answer.gemm
    record: dict[str, Any] = {
        "m": gemm.m, "n": gemm.n, "k": gemm.k, "batch": gemm.batch, "trans_a": gemm.trans_a,
        "trans_b": gemm.trans_b, "a_type": gemm.a_type, "b_type": gemm.b_type, "c_type": gemm.c_type,
        "d_type": gemm.d_type, "compute_type": gemm.compute_type, "calls": gemm.call_count,
    }  # fmt: skip
    if answer.selection is None:
        record.update(index=None, name=None, distance=None, error=answer.error)
    else:
        record.update(selection_record(answer.selection, None))
        record.pop("id", None)
    return record


def render_workload(
    answers: list[WorkloadSelection],
    library: Path,
    console: Console | None = None,
    reasons: dict[int, str] | None = None,
) -> None:
    """Every distinct GEMM of a workload with its calls and kernel (or why none), then calls per kernel."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = console or Console(highlight=False, soft_wrap=True)
    table = Table(title=f"{library}", title_justify="left")
    for column, justify in (("GEMM", "left"), ("calls", "right"), ("index", "right"), ("kernel", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    per_kernel: dict[str, int] = {}
    missing = 0
    for position, answer in enumerate(answers):
        gemm = answer.gemm
        shape = f"{size_text(gemm.m, gemm.n, gemm.k, gemm.batch)} {gemm.gemm_type}{gemm.layout_note}"
        selection = answer.selection
        if selection is None or selection.index is None:
            missing += gemm.call_count
            reason = answer.error or "no kernel" + (f": {reasons[position]}" if reasons and position in reasons else "")
            table.add_row(shape, str(gemm.call_count), "-", Text(reason, style="red" if answer.error else "dim"))
            continue
        name = selection.name or str(selection.index)
        per_kernel[name] = per_kernel.get(name, 0) + gemm.call_count
        table.add_row(shape, str(gemm.call_count), str(selection.index), shown_kernel_name(name))
    print_table_shown(out, table)
    calls = sum(answer.call_count for answer in answers)
    print_note(
        out, f"{len(answers)} distinct GEMMs, {calls} calls; {calls - missing} calls hit a kernel, {missing} do not"
    )
    if per_kernel:
        ranking = Table(title="calls per kernel", title_justify="left")
        ranking.add_column("calls", justify="right")
        ranking.add_column("share", justify="right")
        ranking.add_column("kernel", overflow="fold")
        for name, count in sorted(per_kernel.items(), key=lambda item: (-item[1], item[0])):
            ranking.add_row(str(count), f"{count / calls:.1%}", shown_kernel_name(name))
        print_table_shown(out, ranking)


__all__ = [
    "BatchTable",
    "batch_record",
    "progress",
    "render_selection",
    "render_workload",
    "selection_record",
    "workload_record",
]

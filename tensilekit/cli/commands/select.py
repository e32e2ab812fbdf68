"""``tensilekit select``: which kernel will the runtime pick for this GEMM (or for every query of a file)?"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from tensilekit.cli.inputs import open_for_device
from tensilekit.cli.options import (
    TYPE_HELP,
    UserPath,
    full_names_option,
    hipblaslt_version_option,
    solution_selection_method_option,
    subtree_options,
    type_spec_callback,
    workspace_option,
)
from tensilekit.cli.output import progress_bar
from tensilekit.cli.workloads import STRICT_HELP
from tensilekit.errors import (
    InputNotFound,
    LibraryChanged,
    Location,
    NoKernel,
    SelectionError,
    WorkloadLineError,
)

if TYPE_CHECKING:
    from tensilekit.library import Library

# selection.runtime.RUNTIME_NAMES, spelled out so that `select --help` needs no import of the selection core
RUNTIME_NAMES = ("tensile", "hipblaslt")

# library.WALK_AT_MOST (queries walked one by one), spelled out: `select --help` imports no selection core
_WALK_AT_MOST = 16

# PerformanceMetric's values, spelled out so that `select --help` needs no import of the selection core
METRICS = ["Auto", "DeviceEfficiency", "CUEfficiency", "ExperimentalDTree", "ExperimentalGrid",
           "ExperimentalStreamK", "ExperimentalMLP"]  # fmt: skip
"""The ``--metric`` choices (select and plot)."""


class _Transpose(click.Choice):  # type: ignore[type-arg]
    """Transposes as BLAS spells them, in any case; help and errors show BLAS's own letters
    (a case-insensitive ``click.Choice`` prints them lower-cased)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(value.upper() if isinstance(value, str) else value, param, ctx)


TRANSPOSE = _Transpose(["N", "T", "C"])


@click.command("select")
@click.argument("m", type=click.IntRange(min=0), required=False)
@click.argument("n", type=click.IntRange(min=0), required=False)
@click.argument("k", type=click.IntRange(min=0), required=False)
@click.option(
    "--library",
    "-l",
    "library_path",
    default=None,
    # readable=False: click's stat-then-access check races a rebuild swapping the folder (exit 2
    # for a file that was there); reading reports an unreadable file itself (exit 3, located)
    type=UserPath(path_type=Path, readable=False),
    help="Master library (YAML/msgpack, .gz), a logic file, a directory of logic files, or an installed "
    "library folder (default: the small gfx90a sample library shipped with tensilekit).",
)
@subtree_options
@click.option("--arch", help="Device processor, e.g. gfx90a (default for --queries lines without one).")
@click.option("--cu-count", type=click.IntRange(min=1), help="Device compute units (CU-specific library rows).")
@click.option("--is-apu", is_flag=True, help="The device is an APU.")
@click.option(
    "--pci-chip-id",
    type=lambda text: int(str(text), 0),
    default=None,
    metavar="ID",
    help="Device PCI ID, e.g. 0x75a3 (hipBLASLt's per-silicon PciChipId rows, with their fallbacks).",
)
@click.option("--batch", "-b", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--trans-a", type=TRANSPOSE, default="N", show_default=True)
@click.option("--trans-b", type=TRANSPOSE, default="N", show_default=True)
@click.option("--type", "type_spec", default="S", show_default=True, callback=type_spec_callback, help=TYPE_HELP)
@click.option(
    "--hpa/--no-hpa", default=None, help="High-precision accumulate (default: compute type wider than input)."
)
@click.option("--alpha", type=float, default=1.0, show_default=True)
@click.option("--beta", type=float, default=0.0, show_default=True)
@click.option(
    "--metric",
    type=click.Choice(METRICS),
    default="DeviceEfficiency",
    show_default=True,
    help="Performance metric of the problem (selects CUEfficiency / experimental rows).",
)
@click.option(
    "--rocblas-k0",
    is_flag=True,
    help="Model rocBLAS: K is passed as 0 when alpha == 0 (default models Tensile, K as given).",
)
@click.option(
    "--queries",
    type=UserPath(path_type=Path, allow_dash=True),
    help="JSON-lines file of queries (corpus/select format); '-' reads stdin.",
)
@click.option(
    "--from-log",
    "from_log",
    type=UserPath(path_type=Path),
    help="A hipBLASLt log (HIPBLASLT_LOG_MASK 32/64/128) or other workload file: every distinct GEMM "
    "with its call count and the kernel it would hit.",
)
@click.option(
    "--runtime",
    "runtime_name",
    type=click.Choice(RUNTIME_NAMES, case_sensitive=False),
    default=None,
    help="Answer as rocBLAS's Tensile or hipBLASLt's tensilelite does (default: detected from the library).",
)
@click.option(
    "--compute-type",
    "compute_name",
    default=None,
    help="hipBLASLt compute type (f32, f32_fast_f16, f32_fast_bf16, f32_fast_xf32, f64, i32 …; hipBLASLt runtime).",
)
@hipblaslt_version_option
@solution_selection_method_option
@workspace_option("the caller")
@click.option("--explain", is_flag=True, help="Show the walk: every level, predicate and table entry considered.")
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=0,
    help="Also rank N kernels (Tensile: the next N; hipBLASLt: findTopSolutions(N), then its getAllSolutions fallback).",
)
@click.option("--json", "as_json", is_flag=True, help="JSON output (one object per query line with --queries).")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@full_names_option
def select_command(
    m: int | None, n: int | None, k: int | None, library_path: Path | None, arch: str | None, cu_count: int | None,
    is_apu: bool, pci_chip_id: int | None, batch: int, trans_a: str, trans_b: str, type_spec: str,
    hpa: bool | None, alpha: float, beta: float, metric: str, rocblas_k0: bool, queries: Path | None,
    from_log: Path | None, runtime_name: str | None, compute_name: str | None, workspace_size: int | None,
    explain: bool, top: int, as_json: bool, strict: bool, subtree: str | None, asic_revision: int | None,
    hipblaslt_version: str | None, solution_selection_method: int | None,
) -> None:  # fmt: skip
    """Predict the kernel the runtime selects for an M×N×K GEMM: rocBLAS's Tensile
    (findBestSolution) or hipBLASLt's heuristic (findTopSolutions(.., 1)), detected from the library.

    Give M N K with options, --queries FILE for many queries (fields as in corpus/select or
    corpus/select-hipblaslt; a line's arch/cu_count/is_apu override --arch/--cu-count/--is-apu),
    or --from-log LOG for every GEMM a hipBLASLt log recorded.
    """
    held_stdin: list[str] = []  # stdin read whole when a read may be done again (_query_stream)
    for attempt in range(1, _READ_ATTEMPTS + 1):
        try:
            _select(
                m, n, k, library_path, arch, cu_count, is_apu, pci_chip_id, batch, trans_a, trans_b, type_spec, hpa,
                alpha, beta, metric, rocblas_k0, queries, from_log, runtime_name, compute_name, workspace_size,
                explain, top, as_json, strict, subtree, asic_revision, held_stdin, hipblaslt_version,
                solution_selection_method,
            )  # fmt: skip
            return
        except LibraryChanged:
            # the library folder was swapped for a new build mid-read: nothing was printed (answers
            # are rendered after every shard is read); read it again, through one generation
            if attempt == _READ_ATTEMPTS:
                raise
            click.echo("note: the library was rebuilt while it was read; reading it again", err=True)
            time.sleep(0.01 * attempt)  # let a rebuild in progress finish its swap


#: How often ``select`` reads a library again that a concurrent rebuild swapped mid-read.
_READ_ATTEMPTS = 5


def _select(
    m: int | None, n: int | None, k: int | None, library_path: Path | None, arch: str | None, cu_count: int | None,
    is_apu: bool, pci_chip_id: int | None, batch: int, trans_a: str, trans_b: str, type_spec: str,
    hpa: bool | None, alpha: float, beta: float, metric: str, rocblas_k0: bool, queries: Path | None,
    from_log: Path | None, runtime_name: str | None, compute_name: str | None, workspace_size: int | None,
    explain: bool, top: int, as_json: bool, strict: bool, subtree: str | None, asic_revision: int | None,
    held_stdin: list[str], hipblaslt_version: str | None = None, solution_selection_method: int | None = None,
) -> None:  # fmt: skip
    from tensilekit.cli.render_select import progress, render_selection, selection_extras
    from tensilekit.selection import contraction_problem

    sources = sum(1 for given in (m is not None, queries is not None, from_log is not None) if given)
    if sources != 1 or (m is not None and (n is None or k is None)):
        raise click.UsageError("give one of: M N K, --queries FILE, --from-log LOG")
    library = open_for_device(
        library_path, arch=arch, cu_count=cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id,
        runtime_name=runtime_name, workspace_size=workspace_size, subtree=subtree, asic_revision=asic_revision,
        required_for=None if queries is not None else " for a single query", hipblaslt_version=hipblaslt_version,
        solution_selection_method=solution_selection_method,
    )  # fmt: skip
    shown_path = library.path or Path("-")
    if from_log is not None:
        _answer_workload(library, from_log, rocblas_k0, as_json, shown_path, strict)
        return
    if queries is None:
        assert m is not None and n is not None and k is not None
        problem = library.problem(
            m, n, k, type=type_spec, batch=batch, trans_a=trans_a, trans_b=trans_b, hpa=hpa, alpha=alpha,
            beta=beta, metric=metric, compute_type=compute_name,
        )  # fmt: skip
        device = library.require_device()
        selection = library.select(problem, device, explain=explain, top=top, rocblas_k0=rocblas_k0)
        reason = None if selection.index is not None else library.why_not(problem, device, rocblas_k0=rocblas_k0)
        if as_json:
            record = library.answer_record(selection, problem, device, reason=reason)
            record.update(selection_extras(selection, explain=explain))
            click.echo(json.dumps(record, indent=2))
        else:
            contraction = contraction_problem(problem, rocblas_k0=rocblas_k0)
            render_selection(
                selection, problem, device, shown_path, contraction,
                runtime=library.runtime.name, runtime_label=library.runtime.label,
            )  # fmt: skip
        if reason is not None:
            click.echo(f"no kernel: {reason}", err=True)
            raise SystemExit(NoKernel.exit_code)
        return
    name = "<stdin>" if str(queries) == "-" else str(queries)
    if name != "<stdin>" and not queries.exists():
        raise InputNotFound("no such file", Location(file=name))
    if name != "<stdin>":
        from tensilekit.io.files import check_regular_file

        check_regular_file(queries)  # a FIFO or device is refused unread: it could block or never end
    opened, lines = _query_stream(queries, name, library, held_stdin)
    # streamed: each chunk of answers is written before the next lines are read. Held back on disk
    # (printed at the end, or not at all) when --strict may still refuse a later line, or when the
    # library reads shards a rebuild may swap mid-read (the read is then done again, from the start)
    held_back = strict or library.reads_shards
    from tensilekit.io.files import gc_paused

    # the cyclic GC off while answering: each collection would walk the growing library (its
    # decoded tables and solutions) again, ~0.3 s of 9 s on 100 000 queries on rocBLAS_Full, and
    # answers leave no cycles (the peak memory is the same without it): all dies by refcount.
    # Promoted on the way out: re-enabled as it was, the collector's first (full) collection
    # walked everything the answers had made alive once more (0.4 s), just before the exit
    with opened as stream, _answer_sink(held_back, as_json, shown_path) as sink, gc_paused(promote=True):
        answers = library.answer_queries(
            stream, name=name, rocblas_k0=rocblas_k0, explain=explain, top=top, strict=strict,
            indexing=lambda: progress_bar("indexing the library", None),
        )  # fmt: skip
        with progress(lines if lines >= _PROGRESS_THRESHOLD else 0) as advance:
            for answer in answers:
                if answer.unreadable:
                    click.echo(f"warning: {answer.error} (line skipped)", err=True)
                record = answer.record
                if answer.selection is not None and (explain or top):
                    listing = bool(top) and library.runtime.name == "hipblaslt"
                    record.update(selection_extras(answer.selection, explain=explain, listing=listing))
                sink.add(record)
                if sink.count % 1024 == 0:
                    advance(1024)
        sink.finish()
    if sink.errors:
        click.echo(f"error: {sink.errors} of {sink.count} query line(s) could not be answered", err=True)
        raise SystemExit(3)


_PROGRESS_THRESHOLD = 20_000


class _AnswerSink:
    """Where ``select --queries`` puts its answers, as they come: JSON lines, or the table's rows
    (:class:`~tensilekit.cli.render_select.BatchTable`: tab-separated lines in a pipe), to stdout in
    blocks, or into a temporary file printed at the end (``spool``: held back)."""

    def __init__(self, as_json: bool, spool: TextIO | None, shown_path: Path) -> None:
        from tensilekit.cli.render_select import BatchTable

        self.as_json, self.spool = as_json, spool
        self.count = self.errors = 0
        self._block: list[str] = []
        self._table = None if as_json else BatchTable(shown_path, self._add_line)

    def add(self, record: dict[str, Any]) -> None:
        self.count += 1
        self.errors += bool(record.get("error"))
        if self._table is not None:
            self._table.add(record)
        else:
            self._add_line(_COMPACT_JSON.encode(record))

    def _add_line(self, line: str) -> None:
        self._block.append(line)
        if len(self._block) >= _BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._block:
            text = "\n".join(self._block)
            self._block = []
            if self.spool is not None:
                self.spool.write(text + "\n")
            else:
                click.echo(text)

    def finish(self) -> None:
        """Write what is left (all of it when held back), then the table's summary."""
        self._flush()
        if self.spool is not None:
            self.spool.seek(0)
            spool = self.spool
            for block in iter(lambda: spool.read(1 << 20), ""):
                click.echo(block, nl=False)
        if self._table is not None:
            self._table.finish()


_BLOCK = 512  # lines written to stdout at a time
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))  # one encoder for every answer line


@contextlib.contextmanager
def _answer_sink(held_back: bool, as_json: bool, shown_path: Path) -> Iterator[_AnswerSink]:
    if not held_back:
        yield _AnswerSink(as_json, None, shown_path)
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        yield _AnswerSink(as_json, spool, shown_path)


def _checked_lines(path: Path, name: str) -> int:
    """The number of lines of a query file, read once as bytes first: a file that is not UTF-8 is
    refused before any answer is written (answers are streamed)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    lines = 0
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as error:  # gzip or binary data given as queries
                raise SelectionError(f"not UTF-8 text ({error.reason})", Location(file=name)) from None
            lines += block.count(b"\n")
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as error:
            raise SelectionError(f"not UTF-8 text ({error.reason})", Location(file=name)) from None
    return lines + 1


def _query_stream(
    queries: Path, name: str, library: Library, held_stdin: list[str]
) -> tuple[contextlib.AbstractContextManager[TextIO], int]:
    """The query lines to read and how many there are (0: not known). stdin is streamed, unless
    the library reads shards a rebuild may swap mid-read: a read across a rebuild is done again
    with the same queries, so stdin is then read whole, once, and kept in ``held_stdin``."""
    if name != "<stdin>":
        lines = _checked_lines(queries, name)
        return queries.open(encoding="utf-8"), lines
    if not library.reads_shards and not held_stdin:
        return contextlib.nullcontext(sys.stdin), 0
    if not held_stdin:
        held_stdin.append(sys.stdin.read())
    return io.StringIO(held_stdin[0]), held_stdin[0].count("\n") + 1


def _answer_workload(
    library: Library, path: Path, rocblas_k0: bool, as_json: bool, shown_path: Path, strict: bool
) -> None:
    from tensilekit.cli.render_select import render_workload
    from tensilekit.cli.workloads import read_workloads
    from tensilekit.recorded import recorded_lines
    from tensilekit.remapping import RECORDING_FORMATS
    from tensilekit.workload import split_by_device

    workload, parsed = read_workloads([path], strict=strict)
    device = library.require_device()
    split = split_by_device(workload.problems, device.arch, device.cu_count)  # AITER rows of another device
    note = split.note()
    if note is not None:
        click.echo(f"warning: {path}: {note}", err=True)
    if not split.served:
        raise WorkloadLineError(f"no GEMM of the workload is for {split.device}", Location(file=str(path)))
    problems = split.served
    answers = library.select_workload(problems, device, rocblas_k0=rocblas_k0)
    reasons: dict[int, str] = {}
    for position, answer in enumerate(answers):  # why each GEMM without a kernel has none
        if (
            answer.error is None
            and answer.problem is not None
            and (answer.selection is None or answer.selection.index is None)
        ):
            reasons[position] = library.why_not(answer.problem, device, rocblas_k0=rocblas_k0)
    recorded = None  # a tuning artefact (TunableOp, AITER, tuning file): what it recorded, judged here
    if any(item.format in RECORDING_FORMATS for item in parsed):
        recorded = library.recorded(problems, device)
    if as_json:
        for position, answer in enumerate(answers):
            record = library.answer_record(
                answer.selection, answer.problem, device, calls=answer.call_count, reason=reasons.get(position)
            )
            if answer.error is not None:
                record.update(_workload_fields(answer.gemm), error=answer.error)
            if recorded is not None:
                found = recorded[position]
                record["recorded"] = found.to_json() if found is not None else None
            click.echo(json.dumps(record, separators=(",", ":")))
    else:
        render_workload(answers, shown_path, reasons=reasons)
        if recorded is not None:
            click.echo(recorded_lines(problems, recorded))


def _workload_fields(gemm: Any) -> dict[str, Any]:
    """A GEMM selection could not be asked about, as the log spelled it."""
    return {
        "m": gemm.m, "n": gemm.n, "k": gemm.k, "batch": gemm.batch, "trans_a": gemm.trans_a,
        "trans_b": gemm.trans_b, "a_type": gemm.a_type, "b_type": gemm.b_type, "c_type": gemm.c_type,
        "d_type": gemm.d_type, "compute_type": gemm.compute_type,
    }  # fmt: skip


__all__ = ["select_command"]

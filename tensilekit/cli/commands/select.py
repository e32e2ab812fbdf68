"""``tensilekit select``: which kernel will the runtime pick for this GEMM (or for every query of a file)?"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from tensilekit.cli.inputs import open_for_device
from tensilekit.cli.options import TYPE_HELP, subtree_options, type_spec_callback
from tensilekit.cli.output import progress_bar
from tensilekit.cli.workloads import STRICT_HELP
from tensilekit.errors import (
    DecodeError,
    InputNotFound,
    LibraryChanged,
    Location,
    NoKernel,
    SelectionError,
    TensilekitError,
)
from tensilekit.io.limits import load_json_line

if TYPE_CHECKING:
    from tensilekit.library import Library
    from tensilekit.selection import GemmProblem, Hardware

# selection.runtime.RUNTIME_NAMES, spelled out so that `select --help` needs no import of the selection core
RUNTIME_NAMES = ("tensile", "hipblaslt")

# PerformanceMetric's values, spelled out so that `select --help` needs no import of the selection core
METRICS = ["Auto", "DeviceEfficiency", "CUEfficiency", "ExperimentalDTree", "ExperimentalGrid",
           "ExperimentalStreamK", "ExperimentalMLP"]  # fmt: skip
"""The ``--metric`` choices (select and plot)."""
_CHUNK = 4096
_PROGRESS_THRESHOLD = 20_000
# Up to this many queries are walked one by one: compiling a table decodes every solution in it,
# which a lazily read shard (indexed or .dat) would otherwise do for a single answer.
_WALK_AT_MOST = 16


def _read_queries(
    source: TextIO, name: str, *, strict: bool
) -> tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]]]:
    """The query records of a JSON-lines stream, and an error record per unreadable line.

    Raises:
        SelectionError: with ``strict``, at the first unreadable line.
    """
    records: list[tuple[int, dict[str, Any]]] = []
    unreadable: list[dict[str, Any]] = []
    lines = enumerate(source, start=1)
    number = 0
    while True:
        try:
            number, line = next(lines)
        except StopIteration:
            break
        except UnicodeDecodeError as error:  # gzip or binary data given as queries
            raise SelectionError(f"not UTF-8 text ({error.reason})", Location(file=name)) from None
        text = line.strip()
        if not text:
            continue
        column = None
        try:
            record = load_json_line(text)
            problem = None if isinstance(record, dict) else "each line must hold one JSON object"
        except DecodeError as error:  # not JSON, or over a reader limit (digits, nesting)
            record, problem, column = None, error.message, error.location.col if error.location else None
        if problem is None:
            records.append((number, record))
            continue
        location = Location(file=name, line=number, col=column)
        if strict:
            raise SelectionError(problem, location)
        click.echo(f"warning: {location}: {problem} (line skipped)", err=True)
        unreadable.append({**_error_record({}, f"{location}: {problem}"), "_line": number})
    return records, unreadable


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
    type=click.Path(path_type=Path, readable=False),
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
@click.option("--trans-a", type=click.Choice(["N", "T", "C"], case_sensitive=False), default="N", show_default=True)
@click.option("--trans-b", type=click.Choice(["N", "T", "C"], case_sensitive=False), default="N", show_default=True)
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
    type=click.Path(path_type=Path, allow_dash=True),
    help="JSON-lines file of queries (corpus/select format); '-' reads stdin.",
)
@click.option(
    "--from-log",
    "from_log",
    type=click.Path(path_type=Path),
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
@click.option(
    "--workspace",
    "workspace_size",
    type=click.IntRange(min=0),
    default=None,
    help="Workspace bytes the caller allows (default: hipBLASLt 128 MiB, hipblaslt-bench's max_workspace_size; Tensile unlimited).",
)
@click.option("--explain", is_flag=True, help="Show the walk: every level, predicate and table entry considered.")
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=0,
    help="Also rank N kernels (Tensile: the next N; hipBLASLt: findTopSolutions(N), then its getAllSolutions fallback).",
)
@click.option("--json", "as_json", is_flag=True, help="JSON output (one object per query line with --queries).")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
def select_command(
    m: int | None, n: int | None, k: int | None, library_path: Path | None, arch: str | None, cu_count: int | None,
    is_apu: bool, pci_chip_id: int | None, batch: int, trans_a: str, trans_b: str, type_spec: str,
    hpa: bool | None, alpha: float, beta: float, metric: str, rocblas_k0: bool, queries: Path | None,
    from_log: Path | None, runtime_name: str | None, compute_name: str | None, workspace_size: int | None,
    explain: bool, top: int, as_json: bool, strict: bool, subtree: str | None, asic_revision: int | None,
) -> None:  # fmt: skip
    """Predict the kernel the runtime selects for an M×N×K GEMM: rocBLAS's Tensile
    (findBestSolution) or hipBLASLt's heuristic (findTopSolutions(.., 1)), detected from the library.

    Give M N K with options, --queries FILE for many queries (fields as in corpus/select or
    corpus/select-hipblaslt; a line's arch/cu_count/is_apu override --arch/--cu-count/--is-apu),
    or --from-log LOG for every GEMM a hipBLASLt log recorded.
    """
    # stdin is read once: a read across a rebuild of the library is done again with the same queries
    stdin_text = sys.stdin.read() if queries is not None and str(queries) == "-" else None
    for attempt in range(1, _READ_ATTEMPTS + 1):
        try:
            _select(
                m, n, k, library_path, arch, cu_count, is_apu, pci_chip_id, batch, trans_a, trans_b, type_spec, hpa,
                alpha, beta, metric, rocblas_k0, queries, from_log, runtime_name, compute_name, workspace_size,
                explain, top, as_json, strict, subtree, asic_revision, stdin_text,
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
    stdin_text: str | None,
) -> None:  # fmt: skip
    from tensilekit.cli.render_select import render_batch, render_selection, selection_extras
    from tensilekit.selection import contraction_problem

    sources = sum(1 for given in (m is not None, queries is not None, from_log is not None) if given)
    if sources != 1 or (m is not None and (n is None or k is None)):
        raise click.UsageError("give one of: M N K, --queries FILE, --from-log LOG")
    library = open_for_device(
        library_path, arch=arch, cu_count=cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id,
        runtime_name=runtime_name, workspace_size=workspace_size, subtree=subtree, asic_revision=asic_revision,
        required_for=None if queries is not None else " for a single query",
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
        reason = None if selection.index is not None else library.why_not(problem, device)
        if as_json:
            record = library.answer_record(selection, problem, device, reason=reason)
            record.update(selection_extras(selection, explain=explain))
            click.echo(json.dumps(record, indent=2))
        else:
            contraction = contraction_problem(problem, rocblas_k0=rocblas_k0)
            render_selection(selection, problem, device, shown_path, contraction, runtime=library.runtime.name)
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
    stream = io.StringIO(stdin_text or "") if name == "<stdin>" else queries.open(encoding="utf-8")
    try:
        records, unreadable = _read_queries(stream, name, strict=strict)
    finally:
        stream.close()
    if len(records) > _WALK_AT_MOST or top:
        with progress_bar("indexing the library", None):
            library.compiled  # noqa: B018 - compiled once, before the progress of the answers
    results = _answer(library, records, rocblas_k0, explain, top, name, strict=strict, as_json=as_json)
    results = sorted(unreadable + results, key=lambda record: int(record.pop("_line")))
    if as_json:
        for record in results:
            click.echo(record.get("_json") or json.dumps(record, separators=(",", ":")))
    else:
        render_batch(results, shown_path)
    errored = sum(1 for record in results if record.get("error"))
    if errored:
        click.echo(f"error: {errored} of {len(results)} query line(s) could not be answered", err=True)
        raise SystemExit(3)


def _answer_workload(
    library: Library, path: Path, rocblas_k0: bool, as_json: bool, shown_path: Path, strict: bool
) -> None:
    from tensilekit.cli.render_select import render_workload
    from tensilekit.cli.workloads import read_workloads
    from tensilekit.recorded import recorded_lines
    from tensilekit.remapping import RECORDING_FORMATS

    workload, parsed = read_workloads([path], strict=strict)
    device = library.require_device()
    answers = library.select_workload(workload.problems, device, rocblas_k0=rocblas_k0)
    reasons: dict[int, str] = {}
    for position, answer in enumerate(answers):  # why each GEMM without a kernel has none
        if (
            answer.error is None
            and answer.problem is not None
            and (answer.selection is None or answer.selection.index is None)
        ):
            reasons[position] = library.why_not(answer.problem, device)
    recorded = None  # a tuning artefact (TunableOp, AITER, tuning file): what it recorded, judged here
    if any(item.format in RECORDING_FORMATS for item in parsed):
        recorded = library.recorded(workload.problems, device)
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
            click.echo(recorded_lines(workload.problems, recorded))


def _workload_fields(gemm: Any) -> dict[str, Any]:
    """A GEMM selection could not be asked about, as the log spelled it."""
    return {
        "m": gemm.m, "n": gemm.n, "k": gemm.k, "batch": gemm.batch, "trans_a": gemm.trans_a,
        "trans_b": gemm.trans_b, "a_type": gemm.a_type, "b_type": gemm.b_type, "c_type": gemm.c_type,
        "d_type": gemm.d_type, "compute_type": gemm.compute_type,
    }  # fmt: skip


def _answer(
    library: Library, records: list[tuple[int, dict[str, Any]]], rocblas_k0: bool, explain: bool, top: int,
    name: str, *, strict: bool = False, as_json: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """One answer per query record, in order, each with its line (``_line``): the answer's JSON
    shape (``Library.answer_record``), its ``reason`` when there is no kernel. With ``as_json``
    each answer is kept as its JSON text (``_json``) beside the fields the summary counts: a
    100 000-line batch then holds strings, not nested objects, until it is printed."""
    from tensilekit.cli.render_select import progress, selection_extras
    from tensilekit.selection import ProblemColumns, contraction_problem, select_batch

    results: list[dict[str, Any] | None] = [None] * len(records)
    parsed: list[tuple[int, GemmProblem, Hardware]] = []
    for position, (number, record) in enumerate(records):
        try:
            parsed.append((position, library.problem_from_query(record), library.device_of(record)))
        except TensilekitError as error:
            if strict:
                raise error.with_file(name) if error.location is None else error from None
            results[position] = _error_record(record, f"{name}:{number}: {error}")

    def answered(position: int, problem: GemmProblem, device: Hardware, selection: Any) -> dict[str, Any]:
        record = records[position][1]
        calls = record.get("calls")
        reason = None if selection.index is not None else library.why_not(problem, device)
        return library.answer_record(
            selection, problem, device, query_id=record.get("id"), calls=calls if isinstance(calls, int) else None,
            reason=reason,
        )  # fmt: skip

    def kept(result: dict[str, Any]) -> dict[str, Any]:
        if not as_json:
            return result
        return {"error": result.get("error"), "_json": json.dumps(result, separators=(",", ":"))}

    walk = not library.is_compiled
    with progress(len(parsed) if len(parsed) >= _PROGRESS_THRESHOLD else 0) as advance:
        if explain or top or walk:
            for position, problem, device in parsed:
                number, record = records[position]
                try:
                    selection = library.select(problem, device, explain=explain, top=top, rocblas_k0=rocblas_k0)
                    result = answered(position, problem, device, selection)
                    result.update(
                        selection_extras(
                            selection, explain=explain, listing=bool(top) and library.runtime.name == "hipblaslt"
                        )
                    )
                    results[position] = kept(result)
                except LibraryChanged:
                    raise  # the whole read is dropped and done again, not this query's error
                except TensilekitError as error:
                    results[position] = _error_record(record, f"{name}:{number}: {error}")
                advance(1)
        else:
            for start in range(0, len(parsed), _CHUNK):
                chunk = parsed[start : start + _CHUNK]
                columns = ProblemColumns.from_problems(
                    [contraction_problem(p, rocblas_k0=rocblas_k0) for _, p, _ in chunk], [h for _, _, h in chunk]
                )
                answers = select_batch(library.compiled, columns)
                for offset, (position, problem, device) in enumerate(chunk):
                    number, record = records[position]
                    if offset in answers.errors:
                        results[position] = _error_record(record, f"{name}:{number}: {answers.errors[offset]}")
                    else:
                        results[position] = kept(answered(position, problem, device, answers[offset]))
                advance(len(chunk))
    return [
        {**result, "_line": number} for (number, _), result in zip(records, results, strict=True) if result is not None
    ]


def _error_record(record: dict[str, Any], message: str) -> dict[str, Any]:
    return {"id": record.get("id"), "index": None, "name": None, "distance": None, "error": message}


__all__ = ["select_command"]

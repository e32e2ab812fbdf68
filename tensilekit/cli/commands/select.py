"""``tensilekit select``: which kernel will the runtime pick for this GEMM (or for every query of a file)?"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from tensilekit.cli.options import TYPE_HELP, check_arch, subtree_options, type_spec_callback
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
    one_line_reason,
)
from tensilekit.io.limits import load_json_line

if TYPE_CHECKING:
    from tensilekit.selection import GemmProblem, Hardware
    from tensilekit.selection.runtime import Runtime

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


def _queries_arch(library: Any, arch: str | None) -> str | None:
    from tensilekit.api import library_processors

    processors = library_processors(library)
    if arch is not None:
        return check_arch(arch, processors) or arch
    return processors[0] if len(processors) == 1 else None


def _no_kernel_reason(library: Any, problem: GemmProblem, hardware: Hardware) -> str:
    from tensilekit.selection.unserved import no_kernel_reason

    return no_kernel_reason(library, problem, hardware)


def _add_no_kernel_reasons(
    library: Any, results: list[dict[str, Any]], default_hw: Hardware | None, runtime: Runtime
) -> None:
    """A ``reason`` on each answer without a kernel (computed once per device and problem type)."""
    from tensilekit.selection import hardware_from_query

    cache: dict[str, str] = {}
    for result in results:
        query = result.pop("_query", None)
        if query is None or result.get("error") or result.get("index") is not None:
            continue
        problem = runtime.problem_from_query(query)
        device = hardware_from_query(query, default_hw)
        key = repr((device, problem.model_copy(update={"m": 0, "n": 0, "k": 0, "batch": 0})))
        if key not in cache:
            cache[key] = _no_kernel_reason(library, problem, device)
        result["reason"] = cache[key]


def problem_from_options(
    m: int, n: int, k: int, batch: int, trans_a: str, trans_b: str, type_spec: str, hpa: bool | None,
    alpha: float, beta: float, metric: str,
) -> GemmProblem:  # fmt: skip
    """The problem the shared command-line options describe (select, plot)."""
    from tensilekit.selection import GemmProblem, PerformanceMetric, parse_type_spec

    spec = parse_type_spec(type_spec)
    try:
        return GemmProblem(
            m=m, n=n, k=k, batch=batch, trans_a=trans_a.upper(), trans_b=trans_b.upper(),
            a_type=spec.a, b_type=spec.b, c_type=spec.c, d_type=spec.d, compute_type=spec.compute, hpa=hpa,
            alpha=alpha, beta=beta, performance_metric=PerformanceMetric(metric),
        )  # fmt: skip
    except ValueError as error:
        raise SelectionError(f"invalid problem: {one_line_reason(error)}") from None


_HIPBLASLT_COMPUTE = {"Float": "f32", "Double": "f64", "Int32": "i32", "Half": "f16", "XFloat32": "f32_fast_xf32"}


def hipblaslt_problem_from_options(
    m: int, n: int, k: int, batch: int, trans_a: str, trans_b: str, type_spec: str, alpha: float, beta: float,
    compute_name: str | None = None,
) -> GemmProblem:  # fmt: skip
    """The problem hipBLASLt's heuristic builds for the shared command-line options
    (``compute_name``, a hipBLASLt compute type, overrides the compute type of ``type_spec``)."""
    from tensilekit.selection import parse_type_spec
    from tensilekit.selection.hipblaslt import hipblaslt_problem

    spec = parse_type_spec(type_spec)
    compute = compute_name or _HIPBLASLT_COMPUTE.get(spec.compute.value)
    if compute is None:
        raise SelectionError(f"hipBLASLt has no compute type for {spec.compute.value}")
    return hipblaslt_problem(
        m, n, k, batch=batch, trans_a=trans_a.upper(), trans_b=trans_b.upper(), a_type=spec.a, b_type=spec.b,
        c_type=spec.c, d_type=spec.d, compute_type=compute, alpha=alpha, beta=beta,
    )  # fmt: skip


def library_arch(library: Any, arch: str | None, *, required_for: str = "", note: bool = True) -> str:
    """``--arch`` as given, else the library's only architecture (said on stderr when ``note``).

    Raises:
        click.UsageError: no ``--arch`` and the library serves several architectures.
    """
    from tensilekit.api import library_processors

    processors = library_processors(library)
    if arch is not None:
        return check_arch(arch, processors) or arch
    if len(processors) != 1:
        raise click.UsageError(
            f"--arch is required{required_for} (the library serves {', '.join(processors) or 'no named processor'})"
        )
    if note:
        click.echo(f"note: no --arch given; using the library's only architecture, {processors[0]}", err=True)
    return processors[0]


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
    help="Workspace bytes the caller allows (hipBLASLt default: 0, no preference set; Tensile: unlimited).",
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
    from tensilekit.api import library_runtime, load_for_selection
    from tensilekit.cli.render_select import render_batch, render_selection, selection_record
    from tensilekit.data import sample_library_path
    from tensilekit.selection import Hardware, contraction_problem, select_solution
    from tensilekit.selection.runtime import runtime_named

    sources = sum(1 for given in (m is not None, queries is not None, from_log is not None) if given)
    if sources != 1 or (m is not None and (n is None or k is None)):
        raise click.UsageError("give one of: M N K, --queries FILE, --from-log LOG")
    if library_path is None:
        library_path = sample_library_path()
        click.echo(f"note: no --library given; using tensilekit's sample library ({library_path.name})", err=True)
    with progress_bar(f"reading {library_path.name}", None):
        library, loader = load_for_selection(library_path, subtree=subtree, asic_revision=asic_revision)
    runtime = runtime_named(runtime_name) if runtime_name else library_runtime(library, loader)
    if queries is None:  # a single query or a log: one device
        arch = library_arch(library, arch, required_for=" for a single query")
    else:  # the same default as M N K when the library serves one processor; lines may name their own
        arch = _queries_arch(library, arch)
    default_hw = Hardware(arch=arch, cu_count=cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id) if arch else None
    if from_log is not None:
        assert default_hw is not None
        _answer_workload(
            library, loader, from_log, default_hw, rocblas_k0, as_json, library_path, runtime, workspace_size, strict
        )
        return
    if queries is None:
        assert default_hw is not None
        assert m is not None and n is not None and k is not None
        if runtime.name == "hipblaslt":
            # the heuristic path sets alpha = beta = 1 (assignAlphaBeta1), whatever the call will use
            problem = hipblaslt_problem_from_options(
                m, n, k, batch, trans_a, trans_b, type_spec, 1.0, 1.0, compute_name
            )  # fmt: skip
            problem = problem.model_copy(update={"workspace_size": workspace_size or 0})
        else:
            problem = problem_from_options(m, n, k, batch, trans_a, trans_b, type_spec, hpa, alpha, beta, metric)
            if workspace_size is not None:
                problem = problem.model_copy(update={"workspace_size": workspace_size})
        selection = select_solution(
            library, problem, default_hw, loader=loader, explain=explain, top=top, rocblas_k0=rocblas_k0,
            runtime=runtime,
        )  # fmt: skip
        reason = None if selection.index is not None else _no_kernel_reason(library, problem, default_hw)
        if as_json:
            record = selection_record(selection, None, explain=explain)
            if reason is not None:
                record["reason"] = reason
            click.echo(json.dumps(record, indent=2))
        else:
            contraction = contraction_problem(problem, rocblas_k0=rocblas_k0)
            render_selection(selection, problem, default_hw, library_path, contraction, runtime=runtime.name)
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
    if len(records) <= _WALK_AT_MOST and not top:
        from tensilekit.selection.walk import ReferenceSelector

        engine: Any = ReferenceSelector(library, loader, runtime)
    else:
        with progress_bar("indexing the library", None):
            from tensilekit.selection import compile_library

            engine = compile_library(library, loader=loader, runtime=runtime)
    results = _answer(engine, records, default_hw, rocblas_k0, explain, top, name, strict=strict)
    results = sorted(unreadable + results, key=lambda record: int(record.pop("_line")))
    _add_no_kernel_reasons(library, results, default_hw, runtime)
    if as_json:
        for record in results:
            click.echo(json.dumps(record, separators=(",", ":")))
    else:
        render_batch(results, library_path)
    errored = sum(1 for record in results if record.get("error"))
    if errored:
        click.echo(f"error: {errored} of {len(results)} query line(s) could not be answered", err=True)
        raise SystemExit(3)


def _answer_workload(
    library: Any, loader: Any, path: Path, hardware: Hardware, rocblas_k0: bool, as_json: bool, library_path: Path,
    runtime: Runtime, workspace_size: int | None, strict: bool,
) -> None:  # fmt: skip
    from tensilekit.cli.render_select import render_workload, workload_record
    from tensilekit.cli.workloads import read_workloads
    from tensilekit.recorded import recorded_lines, recorded_solutions
    from tensilekit.remapping import RECORDING_FORMATS
    from tensilekit.selection import compile_library, select_workload

    workload, parsed = read_workloads([path], strict=strict)
    answers = select_workload(
        compile_library(library, loader=loader, runtime=runtime), workload.problems, hardware, rocblas_k0=rocblas_k0,
        workspace_size=workspace_size,
    )  # fmt: skip
    reasons: dict[int, str] = {}
    for position, answer in enumerate(answers):  # why each GEMM without a kernel has none
        if (
            answer.error is None
            and answer.problem is not None
            and (answer.selection is None or answer.selection.index is None)
        ):
            reasons[position] = _no_kernel_reason(library, answer.problem, hardware)
    recorded = None  # a tuning artefact (TunableOp, AITER, tuning file): what it recorded, judged here
    if any(item.format in RECORDING_FORMATS for item in parsed):
        recorded = recorded_solutions(library, loader, workload.problems, hardware, workspace_size)
    if as_json:
        for position, answer in enumerate(answers):
            record = workload_record(answer)
            if position in reasons:
                record["reason"] = reasons[position]
            if recorded is not None:
                found = recorded[position]
                record["recorded"] = found.to_json() if found is not None else None
            click.echo(json.dumps(record, separators=(",", ":")))
    else:
        render_workload(answers, library_path, reasons=reasons)
        if recorded is not None:
            click.echo(recorded_lines(workload.problems, recorded))


def _answer(
    compiled: Any, records: list[tuple[int, dict[str, Any]]], default_hw: Hardware | None, rocblas_k0: bool,
    explain: bool, top: int, name: str, *, strict: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """One answer per query record, in order, each with its line (``_line``) and query (``_query``).

    ``compiled``: a CompiledLibrary, or for a few queries a ReferenceSelector (walked one by one)."""
    from tensilekit.cli.render_select import batch_record, progress, selection_record
    from tensilekit.selection import (
        ProblemColumns,
        contraction_problem,
        hardware_from_query,
        select_batch,
        select_solution,
    )
    from tensilekit.selection.walk import ReferenceSelector

    results: list[dict[str, Any] | None] = [None] * len(records)
    parsed: list[tuple[int, Any, Hardware]] = []
    for position, (number, record) in enumerate(records):
        try:
            problem = compiled.runtime.problem_from_query(record)
            device = hardware_from_query(record, default_hw)
            parsed.append((position, contraction_problem(problem, rocblas_k0=rocblas_k0), device))
        except TensilekitError as error:
            if strict:
                raise error.with_file(name) if error.location is None else error from None
            results[position] = _error_record(record, f"{name}:{number}: {error}")
    walk = isinstance(compiled, ReferenceSelector)
    with progress(len(parsed) if len(parsed) >= _PROGRESS_THRESHOLD else 0) as advance:
        if explain or top or walk:
            for position, problem, device in parsed:
                number, record = records[position]
                try:
                    selection = select_solution(compiled, problem, device, explain=explain, top=top)
                    listing = bool(top) and compiled.runtime.name == "hipblaslt"
                    results[position] = selection_record(selection, record.get("id"), explain=explain, listing=listing)
                except LibraryChanged:
                    raise  # the whole read is dropped and done again, not this query's error
                except TensilekitError as error:
                    results[position] = _error_record(record, f"{name}:{number}: {error}")
                advance(1)
        else:
            for start in range(0, len(parsed), _CHUNK):
                chunk = parsed[start : start + _CHUNK]
                columns = ProblemColumns.from_problems([p for _, p, _ in chunk], [h for _, _, h in chunk])
                answers = select_batch(compiled, columns)
                for offset, (position, _, _) in enumerate(chunk):
                    number, record = records[position]
                    if offset in answers.errors:
                        results[position] = _error_record(record, f"{name}:{number}: {answers.errors[offset]}")
                    else:
                        results[position] = batch_record(answers, offset, record.get("id"))
                advance(len(chunk))
    answered = []
    for (number, record), result in zip(records, results, strict=True):
        if result is not None:
            answered.append({**result, "_line": number, "_query": record})
    return answered


def _error_record(record: dict[str, Any], message: str) -> dict[str, Any]:
    return {"id": record.get("id"), "index": None, "name": None, "distance": None, "error": message}


__all__ = ["hipblaslt_problem_from_options", "library_arch", "problem_from_options", "select_command"]

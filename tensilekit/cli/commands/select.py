"""``tensilekit select``: which kernel will the runtime pick for this GEMM (or for every query of a file)?"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import click

from tensilekit.api import library_processors, load_for_selection
from tensilekit.data import sample_library_path
from tensilekit.errors import InputNotFound, Location, SelectionError, TensilekitError
from tensilekit.selection import (
    GemmProblem,
    Hardware,
    PerformanceMetric,
    ProblemColumns,
    compile_library,
    contraction_problem,
    hardware_from_query,
    parse_type_spec,
    problem_from_query,
    select_batch,
    select_solution,
)

METRICS = [metric.value for metric in PerformanceMetric]
"""The ``--metric`` choices (select and plot)."""
_CHUNK = 4096
_PROGRESS_THRESHOLD = 20_000


def _read_queries(source: TextIO, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = enumerate(source, start=1)
    number = 0
    while True:
        try:
            number, line = next(lines)
        except StopIteration:
            return
        except UnicodeDecodeError as error:  # gzip or binary data given as queries
            raise SelectionError(f"not UTF-8 text ({error.reason})", Location(file=name)) from None
        text = line.strip()
        if not text:
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise SelectionError(
                f"not a JSON object: {error.msg}", Location(file=name, line=number, col=error.colno)
            ) from None
        if not isinstance(record, dict):
            raise SelectionError("each line must hold one JSON object", Location(file=name, line=number))
        yield number, record


def problem_from_options(
    m: int, n: int, k: int, batch: int, trans_a: str, trans_b: str, type_spec: str, hpa: bool | None,
    alpha: float, beta: float, metric: str,
) -> GemmProblem:  # fmt: skip
    """The problem the shared command-line options describe (select, plot)."""
    spec = parse_type_spec(type_spec)
    try:
        return GemmProblem(
            m=m, n=n, k=k, batch=batch, trans_a=trans_a.upper(), trans_b=trans_b.upper(),
            a_type=spec.a, b_type=spec.b, c_type=spec.c, d_type=spec.d, compute_type=spec.compute, hpa=hpa,
            alpha=alpha, beta=beta, performance_metric=PerformanceMetric(metric),
        )  # fmt: skip
    except ValueError as error:
        raise SelectionError(f"invalid problem: {error}") from None


def library_arch(library: Any, arch: str | None, *, required_for: str = "", note: bool = True) -> str:
    """``--arch`` as given, else the library's only architecture (said on stderr when ``note``).

    Raises:
        click.UsageError: no ``--arch`` and the library serves several architectures.
    """
    if arch is not None:
        return arch
    processors = library_processors(library)
    if len(processors) != 1:
        raise click.UsageError(f"--arch is required{required_for} (the library serves several architectures)")
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
    type=click.Path(path_type=Path),
    help="Master library (YAML/msgpack, .gz), a logic file, or a directory of logic files "
    "(default: the small gfx90a sample library shipped with tensilekit).",
)
@click.option("--arch", help="Device processor, e.g. gfx90a (default for --queries lines without one).")
@click.option("--cu-count", type=click.IntRange(min=1), help="Device compute units (CU-specific library rows).")
@click.option("--is-apu", is_flag=True, help="The device is an APU.")
@click.option("--batch", "-b", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--trans-a", type=click.Choice(["N", "T", "C"], case_sensitive=False), default="N", show_default=True)
@click.option("--trans-b", type=click.Choice(["N", "T", "C"], case_sensitive=False), default="N", show_default=True)
@click.option(
    "--type",
    "type_spec",
    default="S",
    show_default=True,
    help="Types: a Tensile name (Half), a code string (S, D, H, B, HHS, HSS, I8II, 4xi8II, B8B8S), "
    "or a comma list a,b,c,d,compute.",
)
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
@click.option("--explain", is_flag=True, help="Show the walk: every level, predicate and table entry considered.")
@click.option("--top", type=click.IntRange(min=0), default=0, help="Also rank the next N kernels.")
@click.option("--json", "as_json", is_flag=True, help="JSON output (one object per query line with --queries).")
def select_command(
    m: int | None, n: int | None, k: int | None, library_path: Path | None, arch: str | None, cu_count: int | None,
    is_apu: bool, batch: int, trans_a: str, trans_b: str, type_spec: str, hpa: bool | None, alpha: float,
    beta: float, metric: str, rocblas_k0: bool, queries: Path | None, from_log: Path | None, explain: bool, top: int,
    as_json: bool,
) -> None:  # fmt: skip
    """Predict the kernel Tensile's runtime (findBestSolution) selects for an M×N×K GEMM.

    Give M N K with options, --queries FILE for many queries (fields as in corpus/select;
    a line's arch/cu_count/is_apu override --arch/--cu-count/--is-apu), or --from-log LOG for
    every GEMM a hipBLASLt log recorded.
    """
    from tensilekit.cli.render_select import render_batch, render_selection, selection_record

    sources = sum(1 for given in (m is not None, queries is not None, from_log is not None) if given)
    if sources != 1 or (m is not None and (n is None or k is None)):
        raise click.UsageError("give one of: M N K, --queries FILE, --from-log LOG")
    if library_path is None:
        library_path = sample_library_path()
        click.echo(f"note: no --library given; using tensilekit's sample library ({library_path.name})", err=True)
    library, loader = load_for_selection(library_path)
    if queries is None:  # a single query or a log: one device
        arch = library_arch(library, arch, required_for=" for a single query")
    default_hw = Hardware(arch=arch, cu_count=cu_count, is_apu=is_apu) if arch else None
    if from_log is not None:
        assert default_hw is not None
        _answer_workload(library, loader, from_log, default_hw, rocblas_k0, as_json, library_path)
        return
    if queries is None:
        assert default_hw is not None
        assert m is not None and n is not None and k is not None
        problem = problem_from_options(m, n, k, batch, trans_a, trans_b, type_spec, hpa, alpha, beta, metric)
        selection = select_solution(
            library, problem, default_hw, loader=loader, explain=explain, top=top, rocblas_k0=rocblas_k0
        )
        if as_json:
            click.echo(json.dumps(selection_record(selection, None, explain=explain), indent=2))
        else:
            render_selection(
                selection, problem, default_hw, library_path, contraction_problem(problem, rocblas_k0=rocblas_k0)
            )
        return
    name = "<stdin>" if str(queries) == "-" else str(queries)
    if name != "<stdin>" and not queries.exists():
        raise InputNotFound("no such file", Location(file=name))
    stream = sys.stdin if name == "<stdin>" else queries.open(encoding="utf-8")
    try:
        records = list(_read_queries(stream, name))
    finally:
        if stream is not sys.stdin:
            stream.close()
    compiled = compile_library(library, loader=loader)
    results = _answer(compiled, records, default_hw, rocblas_k0, explain, top, name)
    if as_json:
        for record in results:
            click.echo(json.dumps(record, separators=(",", ":")))
    else:
        render_batch(results, library_path)


def _answer_workload(
    library: Any, loader: Any, path: Path, hardware: Hardware, rocblas_k0: bool, as_json: bool, library_path: Path
) -> None:
    from tensilekit.cli.render_select import render_workload, workload_record
    from tensilekit.selection import select_workload
    from tensilekit.workload import load_workloads

    workload, parsed = load_workloads([path])
    for source in parsed:
        for warning in source.warnings:
            click.echo(f"warning: {source.source}: {warning}", err=True)
    answers = select_workload(
        compile_library(library, loader=loader), workload.problems, hardware, rocblas_k0=rocblas_k0
    )
    if as_json:
        for answer in answers:
            click.echo(json.dumps(workload_record(answer), separators=(",", ":")))
    else:
        render_workload(answers, library_path)


def _answer(
    compiled: Any, records: list[tuple[int, dict[str, Any]]], default_hw: Hardware | None, rocblas_k0: bool,
    explain: bool, top: int, name: str,
) -> list[dict[str, Any]]:  # fmt: skip
    from tensilekit.cli.render_select import batch_record, progress, selection_record

    results: list[dict[str, Any] | None] = [None] * len(records)
    parsed: list[tuple[int, Any, Hardware]] = []
    for position, (number, record) in enumerate(records):
        try:
            problem = problem_from_query(record)
            device = hardware_from_query(record, default_hw)
            parsed.append((position, contraction_problem(problem, rocblas_k0=rocblas_k0), device))
        except TensilekitError as error:
            results[position] = _error_record(record, f"{name}:{number}: {error}")
    with progress(len(parsed) if len(parsed) >= _PROGRESS_THRESHOLD else 0) as advance:
        if explain or top:
            for position, problem, device in parsed:
                number, record = records[position]
                try:
                    selection = select_solution(compiled, problem, device, explain=explain, top=top)
                    results[position] = selection_record(selection, record.get("id"), explain=explain)
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
    return [record for record in results if record is not None]


def _error_record(record: dict[str, Any], message: str) -> dict[str, Any]:
    return {"id": record.get("id"), "index": None, "name": None, "distance": None, "error": message}


__all__ = ["library_arch", "problem_from_options", "select_command"]

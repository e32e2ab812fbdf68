"""``tensilekit coverage``: is my workload tuned? Each GEMM's kernel, how it was reached, what to tune next."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from tensilekit.cli.inputs import open_for_device
from tensilekit.cli.options import (
    UserPath,
    check_output_path,
    hipblaslt_version_option,
    solution_selection_method_option,
    subtree_options,
    workspace_option,
)
from tensilekit.cli.output import progress_bar
from tensilekit.cli.workloads import STRICT_HELP, workload_names
from tensilekit.coverage import (
    DEFAULT_NEAR,
    DEFAULT_TUNE_NEXT,
    CoverageGemm,
    CoverageReport,
    Skipped,
    geko_lists,
    gemms_from_queries,
    gemms_from_workload,
    merge_gemms,
    query_lines,
)
from tensilekit.errors import Location, NoKernel, ToolOutputError, WorkloadLineError
from tensilekit.io.atomic import file_set
from tensilekit.io.files import check_regular_file
from tensilekit.selection import Hardware
from tensilekit.selection.runtime import Runtime
from tensilekit.workload import ParsedWorkload, WorkloadFormat, aiter_times, load_tunableop_csv, load_workloads
from tensilekit.workload.records import text_lines

if TYPE_CHECKING:
    from tensilekit.library import Library
    from tensilekit.recorded import RecordedWorkload

_PROGRESS_AT_LEAST = 1000  # GEMMs; fewer are classified before a bar would be seen


def _is_query_lines(path: Path) -> bool:
    with path.open(encoding="utf-8", errors="replace") as stream:
        for line in stream:
            text = line.strip()
            if text and not text.startswith("#"):
                return text.startswith("{")
    return False


def _time_us(parsed: Sequence[ParsedWorkload]) -> dict[tuple[Any, ...], float] | None:
    """Measured time of one call per GEMM identity, from TunableOp results (mean of a GEMM's lines)
    and AITER tuned files (``us``); None when no file carries times."""
    totals: dict[tuple[Any, ...], tuple[float, int]] = {}
    for item in parsed:
        if item.source is None:
            continue
        if item.format is WorkloadFormat.TUNABLEOP:
            for entry in load_tunableop_csv(item.source, skip_bad_lines=True, fold=True).entries:
                if entry.time_ms is not None:
                    identity = entry.problem.identity()
                    total, lines = totals.get(identity, (0.0, 0))
                    totals[identity] = (total + entry.time_ms * 1000.0 * entry.lines, lines + entry.lines)
        elif item.format is WorkloadFormat.AITER:
            with Path(item.source).open(encoding="utf-8-sig", errors="replace") as stream:
                for identity, value in aiter_times(text_lines(stream), file=item.source).items():
                    totals.setdefault(identity, (value, 1))
    return {identity: total / lines for identity, (total, lines) in totals.items()} or None


def read_gemms(
    paths: Sequence[Path], hardware: Hardware, runtime: Runtime | None = None, *, strict: bool = False,
    library: Library | None = None,
) -> tuple[list[CoverageGemm], list[Skipped]]:  # fmt: skip
    """The distinct GEMMs of every workload file (problems as ``library`` — else ``runtime`` —
    builds them), and the lines or GEMMs that were skipped (``strict``: the first bad line is an error)."""
    for path in paths:  # a FIFO or device is refused unread: it could block or never end
        check_regular_file(path, missing="no such workload file")
    gemms: list[CoverageGemm] = []
    skipped: list[Skipped] = []
    workload_paths = []
    for path in paths:
        if _is_query_lines(path):
            with path.open(encoding="utf-8", errors="replace") as stream:  # streamed: folded as read
                found, bad = gemms_from_queries(
                    text_lines(stream), file=str(path), hardware=hardware, runtime=runtime, library=library
                )
            if bad and strict:
                raise WorkloadLineError(bad[0].message, bad[0].location)
            gemms += found
            skipped += [Skipped(str(line.location), line.message) for line in bad]
        else:
            workload_paths.append(path)
    if workload_paths:
        try:
            workload, parsed = load_workloads(workload_paths, skip_bad_lines=not strict)
        except ToolOutputError as error:  # --strict: the first bad line
            raise WorkloadLineError(error.message, error.location) from None
        for source in parsed:
            skipped += [Skipped(str(line.location), line.message) for line in source.bad_lines]
        for warning in workload.warnings:
            click.echo(f"warning: {warning}", err=True)
        found, unusable = gemms_from_workload(
            workload.problems,
            hardware,
            time_us=_time_us(parsed),
            origin=str(workload_paths[0]) if len(workload_paths) == 1 else None,
            runtime=runtime,
            library=library,
        )
        gemms += found
        skipped += unusable
    sources = len(paths) - len(workload_paths) + (1 if workload_paths else 0)
    return (merge_gemms(gemms) if sources > 1 else gemms), skipped  # each source is merged already


def _write_outputs(report: CoverageReport, record: dict[str, Any], directory: Path, markdown: str) -> list[Path]:
    """The report's files, written into ``directory`` as one set (io.atomic.file_set): each file
    old or new, never torn; GEKO lists an earlier coverage run wrote there that this one does not
    write again are removed; no other file of the folder is touched."""
    lists, notes = geko_lists(report.tune_next)
    texts = {
        "coverage.json": json.dumps(record, indent=1) + "\n",
        "coverage.md": markdown,
        "tune_next.jsonl": query_lines(report.tune_next),
        **{f"{item.stem}.yaml": item.text for item in lists},
    }
    with file_set(directory, owner=lambda name: "coverage") as staged:
        for name, text in texts.items():
            (staged / name).write_text(text, encoding="utf-8", newline="")
    for note in notes:
        click.echo(f"note: not in a GEKO list (kept in tune_next.jsonl): {note}", err=True)
    return [directory / name for name in texts]


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """Keep the cyclic garbage collector off every object alive now (the library, the workload).

    Coverage allocates a few objects per GEMM; each full collection would otherwise walk the
    whole library model again. Frozen objects are still freed by reference counting, and
    everything is unfrozen on the way out.
    """
    if gc.get_freeze_count():  # someone else froze objects: unfreezing would undo that too
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def coverage_report(
    ctx: click.Context, workloads: Sequence[Path], library_path: Path, arch: str | None, cu_count: int | None,
    *, near: float = DEFAULT_NEAR, tune_next: int = DEFAULT_TUNE_NEXT, strict: bool = False,
    subtree: str | None = None, asic_revision: int | None = None, show_progress: bool = True,
    workspace_size: int | None = None, hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> tuple[CoverageReport, Library, int]:  # fmt: skip
    """Load the library and the workloads and classify (coverage and plot coverage); returns the
    report, the library it was made with and how many GEMMs could not be evaluated.

    Skipped lines go to stderr, and so does each GEMM the library could not evaluate (a damaged
    shard it reaches: the shard and the decoder's message); a library serving none of the
    workload's problem types is reported in one line and the command exits 1. A long workload
    shows a progress bar on stderr while it is classified (``show_progress``; on a terminal only).
    ``workspace_size``: the bytes the calls may use (None: the runtime's default, as ``select``).
    """
    library = open_for_device(
        library_path, arch=arch, cu_count=cu_count, subtree=subtree, asic_revision=asic_revision,
        workspace_size=workspace_size, hipblaslt_version=hipblaslt_version,
        solution_selection_method=solution_selection_method,
    )  # fmt: skip
    device = library.require_device()
    unserved_device = library.device_reason(device)
    if unserved_device is not None:  # every GEMM would be "none": that is the whole answer
        raise NoKernel(unserved_device, Location(file=str(library_path)))
    with _frozen(), progress_bar(f"reading {workload_names(workloads)}", None if show_progress else 0):
        gemms, skipped = read_gemms(workloads, device, library.runtime, strict=strict, library=library)
    for item in skipped:
        click.echo(f"warning: {item} (skipped)", err=True)
    if not gemms:
        raise WorkloadLineError(
            "no GEMM could be read from the workload", Location(file=", ".join(str(path) for path in workloads))
        )
    if not library.serves_any(gemm.problem for gemm in gemms):
        types = sorted({gemm.gemm_type for gemm in gemms})
        raise NoKernel(
            f"serves none of the workload's problem types ({', '.join(types)}); it has: {library.served_label()}",
            Location(file=str(library_path)),
        )
    bar_total = len(gemms) if show_progress and len(gemms) >= _PROGRESS_AT_LEAST else 0
    with _frozen(), progress_bar("classifying", bar_total) as advance:
        report = library.coverage(gemms, near=near, tune_next=tune_next, skipped=skipped, progress=advance)
    unevaluated = report.skipped[len(skipped) :]  # coverage_of appends what it could not evaluate
    for item in unevaluated:
        click.echo(f"warning: {item} (not evaluated)", err=True)
    return report, library, len(unevaluated)


@click.command("coverage")
@click.argument("workloads", nargs=-1, required=True, type=UserPath(path_type=Path))
@click.option(
    "--library",
    "-l",
    "library_path",
    required=True,
    type=UserPath(path_type=Path),
    help="Master library (YAML/msgpack, .gz), a logic file, a directory of logic files, or an installed "
    "library folder.",
)
@subtree_options
@click.option("--arch", help="Device processor, e.g. gfx942 (default: the library's only architecture).")
@click.option("--cu-count", type=click.IntRange(min=1), help="Device compute units (CU-specific library rows).")
@workspace_option("the calls")
@hipblaslt_version_option
@solution_selection_method_option
@click.option(
    "--near",
    type=click.FloatRange(min=0),
    default=DEFAULT_NEAR,
    show_default=True,
    help="A matched entry within this relative distance of the GEMM in every dimension is 'near'.",
)
@click.option(
    "--tune-next",
    "tune_next",
    type=click.IntRange(min=0),
    default=DEFAULT_TUNE_NEXT,
    show_default=True,
    help="GEMMs in the 'tune next' list at most (0: every GEMM that is not exact).",
)
@click.option("--json", "as_json", is_flag=True, help="Every field of every GEMM, the summary and tune next as JSON.")
@click.option("--markdown", is_flag=True, help="The report as Markdown.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option(
    "--output",
    "-o",
    "output_dir",
    type=UserPath(file_okay=False, path_type=Path),
    help="Write coverage.json, coverage.md, tune_next.jsonl (select --queries) and tune_next_<TYPE>.yaml "
    "(GEKO lists for tensilekit tune) here.",
)
@click.pass_context
def coverage_command(
    ctx: click.Context, workloads: tuple[Path, ...], library_path: Path, arch: str | None, cu_count: int | None,
    near: float, tune_next: int, as_json: bool, markdown: bool, strict: bool, output_dir: Path | None,
    subtree: str | None, asic_revision: int | None, workspace_size: int | None, hipblaslt_version: str | None,
    solution_selection_method: int | None,
) -> None:  # fmt: skip
    """Which kernel each GEMM of a workload hits, how the runtime reached it, and what to tune next.

    WORKLOAD files: hipBLASLt logs (HIPBLASLT_LOG_MASK 32/64/128), TunableOp or AITER CSVs, GEKO
    lists, or query JSON lines (as select --queries reads; 'calls' and 'time_us' optional).
    Classes: exact, near, far, fallback (a later, generic row served it), none (no kernel).
    """
    if as_json and markdown:
        raise click.UsageError("give at most one of --json and --markdown")
    if output_dir is not None:
        check_output_path(output_dir, option="-o")
    report, library, unevaluated = coverage_report(
        ctx, workloads, library_path, arch, cu_count, near=near, tune_next=tune_next, strict=strict,
        subtree=subtree, asic_revision=asic_revision, show_progress=not as_json, workspace_size=workspace_size,
        hipblaslt_version=hipblaslt_version, solution_selection_method=solution_selection_method,
    )  # fmt: skip
    recorded = _recorded(workloads, library)
    with _frozen():  # the report lives until the end
        _print_and_write(report, library_path, as_json, markdown, output_dir, recorded)
    if unevaluated:  # the report is printed, but it is not the whole workload's
        click.echo(f"error: {unevaluated} GEMM(s) of the workload could not be evaluated (warnings above)", err=True)
        raise SystemExit(3)


def _recorded(workloads: Sequence[Path], library: Library) -> RecordedWorkload | None:
    """The solutions tuning artefacts among the workloads recorded, judged on the library (issue 24)."""
    from tensilekit.remapping import records_solutions

    # only tuning artefacts record solutions: a plain log is not read (or the library loaded) again
    artefacts = [path for path in workloads if not _is_query_lines(path) and records_solutions(path)]
    if not artefacts:
        return None
    return library.recorded_workload(artefacts, library.require_device())


def _print_and_write(
    report: CoverageReport, library_path: Path, as_json: bool, markdown: bool, output_dir: Path | None,
    recorded: RecordedWorkload | None = None,
) -> None:  # fmt: skip
    from tensilekit.cli.render_coverage import coverage_markdown, render_report

    document = coverage_markdown(report, str(library_path)) if markdown or output_dir is not None else ""
    record = report.to_dict() if as_json or output_dir is not None else {}
    if recorded is not None and record:
        record["recorded"] = recorded.to_json()
    if as_json:
        click.echo(json.dumps(record, separators=(",", ":")))
    elif markdown:
        click.echo(document, nl=False)
    else:
        render_report(report, str(library_path), Console(highlight=False, soft_wrap=True))
        if recorded is not None:
            click.echo(recorded.lines())
    if output_dir is not None:
        for path in _write_outputs(report, record, output_dir, document):
            click.echo(f"wrote {path}", err=True)


__all__ = ["coverage_command", "coverage_report", "read_gemms"]

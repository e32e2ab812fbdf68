"""``tensilekit diff``: structural (and optionally selection) diff of two libraries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from tensilekit.cli.inputs import require_readable_folder
from tensilekit.cli.options import (
    UserPath,
    check_arch,
    full_names_option,
    hipblaslt_version_option,
    solution_selection_method_option,
    subtree_options,
)
from tensilekit.cli.output import progress_bar
from tensilekit.cli.phases import phases
from tensilekit.cli.workloads import STRICT_HELP
from tensilekit.merge import Compat, diff_libraries
from tensilekit.merge.diff import LibraryDiff
from tensilekit.merge.files import load_library_input, load_queries


def _log_queries(path: Path, strict: bool, arch: str | None, cu_count: int | None) -> list[dict[str, Any]]:
    """One query record per distinct GEMM of a hipBLASLt log (or other workload file); AITER rows
    tuned for another device than ``--arch``/``--cu-count`` left out (all devices' rows, one per
    shape, without ``--arch``), said in one line."""
    from tensilekit.cli.workloads import read_workloads
    from tensilekit.merge.diff import workload_queries
    from tensilekit.workload import split_by_device

    workload, _ = read_workloads([path], strict=strict)
    split = split_by_device(workload.problems, check_arch(arch) if arch else None, cu_count)
    note = split.note()
    if note is not None:
        click.echo(f"warning: {path}: {note}", err=True)
    return workload_queries(split.served)


@click.command("diff")
@click.argument("a", type=UserPath(path_type=Path))
@click.argument("b", type=UserPath(path_type=Path))
@click.option(
    "--queries",
    "queries_path",
    type=UserPath(path_type=Path),
    help="Queries to select in both libraries: one 'M N B K' per line, a YAML/JSON list, or corpus/select JSON lines.",
)
@click.option(
    "--from-log",
    "log_path",
    type=UserPath(path_type=Path),
    help="Select every distinct GEMM of a hipBLASLt log (HIPBLASLT_LOG_MASK 32/64/128) or tuning artefact in "
    "both libraries; for a tuning artefact (TunableOp, AITER, hipBLASLt tuning file) also list the recorded "
    "results B loses, and --exit-code exits 1 only when it loses one.",
)
@click.option(
    "--grid",
    is_flag=True,
    help="Select a default grid (M, N in 64..16384 by powers of two, K in 256/1024/4096) of every "
    "problem type A serves.",
)
@click.option(
    "--selector",
    type=click.Choice(["runtime", "exact"]),
    default="runtime",
    show_default=True,
    help="runtime: Tensile's findBestSolution (logic files are built into masters); exact: the "
    "logic table's entry for exactly that size.",
)
@click.option("--arch", help="Device for queries that name none (default: the library's own architecture).")
@click.option("--cu-count", type=click.IntRange(min=1), help="CU count of that device.")
@click.option(
    "--compat",
    type=click.Choice([mode.value for mode in Compat]),
    default=None,
    help="Kernel identity for logic files (default: by the dialect of A).",
)
@click.option(
    "--format", "output_format", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--exit-code",
    is_flag=True,
    help="Exit 1 when there are differences (with --from-log TUNING-ARTEFACT: when a recorded result is lost).",
)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@full_names_option
@subtree_options
@hipblaslt_version_option
@solution_selection_method_option
@click.pass_context
def diff_command(
    ctx: click.Context, a: Path, b: Path, queries_path: Path | None, log_path: Path | None, grid: bool,
    selector: str, arch: str | None, cu_count: int | None, compat: str | None, output_format: str, as_json: bool,
    exit_code: bool, strict: bool, subtree: str | None, asic_revision: int | None, hipblaslt_version: str | None,
    solution_selection_method: int | None,
) -> None:  # fmt: skip
    """Compare two logic files, two directories of logic files, or two master libraries.

    With --queries, --from-log or --grid the diff also lists the GEMMs whose selected kernel
    differs between A and B.
    """
    from tensilekit.merge.diff import exact_match_selector, grid_queries, runtime_selector

    if sum((queries_path is not None, log_path is not None, grid)) > 1:
        raise click.UsageError("give at most one of --queries, --from-log, --grid")
    for path in (a, b):
        require_readable_folder(path)
    if subtree is not None or asic_revision is not None:
        from tensilekit.io.installed_library import UnknownSubtree, is_installed_library

        if not any(is_installed_library(path) for path in (a, b)):
            raise UnknownSubtree.not_installed(a)
    if queries_path is None and log_path is None and not grid and subtree is None and asic_revision is None:
        # a structural diff only: diff_libraries reads A, keeps its tables and drops it before reading B
        with phases(f"reading {a.name}") as shown:
            chosen_compat = Compat(compat) if compat else None
            diff = diff_libraries(a, b, compat=chosen_compat, labels=(str(a), str(b)), stage=shown.stage)
        _render(diff, None, output_format, as_json)
        if exit_code and not diff.is_empty:
            ctx.exit(1)
        return
    with progress_bar("reading", None):
        left = load_library_input(a, subtree=subtree, asic_revision=asic_revision)
        right = load_library_input(b, subtree=subtree, asic_revision=asic_revision)
    queries: list[Any] | None = None
    if queries_path is not None:
        queries = list(load_queries(queries_path))
    elif log_path is not None:
        queries = list(_log_queries(log_path, strict, arch, cu_count))
    elif grid:
        queries = list(grid_queries(left))
    chosen = None
    if queries is not None:
        device = {"arch": check_arch(arch) if arch else None, "cu_count": cu_count}
        chosen = (
            exact_match_selector
            if selector == "exact"
            else runtime_selector(device, hipblaslt_version, solution_selection_method)
        )
    with progress_bar("comparing", None):
        diff = diff_libraries(
            left, right, queries, selector=chosen, compat=Compat(compat) if compat else None, labels=(str(a), str(b))
        )
    # a tuning artefact (TunableOp, AITER, hipBLASLt tuning file): which recorded results B loses
    gate = _tuning_gate(log_path, a, b, arch, cu_count) if log_path is not None else None
    _render(diff, gate, output_format, as_json)
    if exit_code and (gate[1]["lost"] if gate is not None else not diff.is_empty):
        ctx.exit(1)


def _render(diff: LibraryDiff, gate: tuple[str, dict[str, Any]] | None, output_format: str, as_json: bool) -> None:
    """Print the diff (and the recorded results B loses, if any) in the chosen format."""
    from tensilekit.cli.render_merge import diff_markdown, render_diff, to_json

    if as_json or output_format == "json":
        text = to_json(diff)
        if gate is not None:
            text = json.dumps({**json.loads(text), "recorded": gate[1]})
        click.echo(text)
    elif output_format == "markdown":
        click.echo(diff_markdown(diff) + ("\n\n" + gate[0] if gate is not None else ""))
    else:
        render_diff(diff, Console(highlight=False, soft_wrap=True))
        if gate is not None:
            click.echo(gate[0])


def _tuning_gate(
    log_path: Path, a: Path, b: Path, arch: str | None, cu_count: int | None
) -> tuple[str, dict[str, Any]] | None:
    """The recorded tuning results of ``log_path`` that B would lose (text, JSON); None when it
    records none. With --exit-code, this decides the exit status: two builds always differ."""
    from tensilekit.remapping import lost_results, records_solutions, remap

    if not records_solutions(log_path):
        return None
    report = remap([log_path], a, b, arch=arch, cu_count=cu_count)
    lost = lost_results(report)
    for artefact in report.artefacts:
        for bad in artefact.bad_lines:
            click.echo(f"warning: {bad} (not judged)", err=True)
    lines = [f"recorded tuning results: {len(report.rows)}, {len(lost)} would be lost in B"]
    lines += [f"  {row.file}:{row.line}: {row.status.value} {row.old_index} ({row.reason})" for row in lost]
    return "\n".join(lines), {"rows": len(report.rows), "lost": [row.to_json() for row in lost]}


__all__ = ["diff_command"]

"""``tensilekit plot selection`` / ``plot coverage``: which kernel the runtime picks over an M x N grid
(a PNG map), optionally with a workload's GEMMs drawn on it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tensilekit.cli.commands.select import METRICS, TRANSPOSE
from tensilekit.cli.inputs import open_for_device
from tensilekit.cli.options import (
    TYPE_HELP,
    UserPath,
    check_output_path,
    hipblaslt_version_option,
    solution_selection_method_option,
    type_spec_callback,
)
from tensilekit.cli.output import progress_bar
from tensilekit.errors import Location, NoKernel, install_extra_hint


@click.group("plot", help=f"Charts (they need the plot extra: {install_extra_hint('plot')}).")
def plot_group() -> None:
    """The chart commands."""


@plot_group.command("selection")
@click.option(
    "--library",
    "-l",
    "library_path",
    type=UserPath(path_type=Path),
    help="Master library, logic file or directory (default: tensilekit's sample library).",
)
@click.option("--arch", help="Device processor (default: the library's only architecture).")
@click.option("--cu-count", type=click.IntRange(min=1), help="Device compute units.")
@click.option("--k", "k", type=click.IntRange(min=1), default=4096, show_default=True, help="K of every GEMM.")
@click.option("--batch", "-b", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--trans-a", type=TRANSPOSE, default="N", show_default=True)
@click.option("--trans-b", type=TRANSPOSE, default="N", show_default=True)
@click.option("--type", "type_spec", default="S", show_default=True, callback=type_spec_callback, help=TYPE_HELP)
@click.option("--hpa/--no-hpa", default=None, help="High-precision accumulate (default: compute wider than input).")
@click.option("--metric", type=click.Choice(METRICS), default="DeviceEfficiency", show_default=True)
@click.option("--min", "low", type=click.IntRange(min=1), default=16, show_default=True, help="Smallest M and N.")
@click.option("--max", "high", type=click.IntRange(min=1), default=16384, show_default=True, help="Largest M and N.")
@click.option(
    "--points", type=click.IntRange(min=2, max=1024), default=128, show_default=True, help="Grid points per axis."
)
@click.option("--title", help="Chart title (default: the problem and device).")
@click.option("--output", "-o", type=UserPath(path_type=Path), required=True, help="PNG file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print what was drawn as JSON.")
@hipblaslt_version_option
@solution_selection_method_option
def plot_selection_command(
    library_path: Path | None, arch: str | None, cu_count: int | None, k: int, batch: int, trans_a: str,
    trans_b: str, type_spec: str, hpa: bool | None, metric: str, low: int, high: int, points: int,
    title: str | None, output: Path, as_json: bool, hipblaslt_version: str | None,
    solution_selection_method: int | None,
) -> None:  # fmt: skip
    """Draw which kernel the runtime selects over an M x N grid (log axes) at one K.

    One colour per kernel; the library's table entries for this problem type are marked
    (filled at this K, hollow at other K).
    """
    from tensilekit.plot import plot_selection_map
    from tensilekit.selection.grid import log_grid, selection_map

    check_output_path(output, suffixes={".png": "PNG"})
    library = open_for_device(  # shows "reading …"
        library_path, arch=arch, cu_count=cu_count, note=False, hipblaslt_version=hipblaslt_version,
        solution_selection_method=solution_selection_method,
    )  # fmt: skip
    problem = library.problem(
        1, 1, k, type=type_spec, batch=batch, trans_a=trans_a, trans_b=trans_b, hpa=hpa, alpha=1.0, beta=0.0,
        metric=metric,
    )  # fmt: skip
    hardware = library.require_device()
    grid = log_grid(low, high, points)
    with progress_bar("selecting over the grid", len(grid) ** 2) as advance:
        smap = selection_map(library.compiled, problem, hardware, grid, grid, progress=advance)
    covered = int((smap.winners >= 0).sum())
    if covered == 0:  # an empty map is a wrong answer, not a chart
        reason = library.why_not(problem.model_copy(update={"m": low, "n": low}), hardware)
        raise NoKernel(
            f"nothing to draw, no grid point has a kernel: {reason}", Location(file=str(library_path or "-"))
        )
    with progress_bar(f"drawing {output.name}", None):
        plot_selection_map(smap, output, title=title)
    kernels = len(smap.kernels_by_area())
    if as_json:
        click.echo(json.dumps({"output": str(output), "kernels": kernels, "grid_points": int(smap.winners.size),
                               "with_kernel": covered, "table_entries": len(smap.entries)}))  # fmt: skip
        return
    click.echo(
        f"wrote {output}: {kernels} kernels over {smap.winners.size} grid points "
        f"({covered} with a kernel), {len(smap.entries)} table entries marked"
    )


@plot_group.command("coverage")
@click.argument("workloads", nargs=-1, required=True, type=UserPath(path_type=Path))
@click.option(
    "--library", "-l", "library_path", required=True, type=UserPath(path_type=Path),
    help="Master library, logic file or directory.",
)  # fmt: skip
@click.option("--arch", help="Device processor (default: the library's only architecture).")
@click.option("--cu-count", type=click.IntRange(min=1), help="Device compute units.")
@click.option("--near", type=click.FloatRange(min=0), default=0.10, show_default=True, help="As for coverage.")
@click.option(
    "--type", "gemm_type", help="Problem type to draw, e.g. BBS_TN (default: the heaviest the library serves)."
)
@click.option("--k", "k", type=click.IntRange(min=1), help="K of the map (default: the type's heaviest K).")
@click.option(
    "--points", type=click.IntRange(min=2, max=1024), default=128, show_default=True, help="Grid points per axis."
)
@click.option("--title", help="Chart title.")
@click.option("--output", "-o", type=UserPath(path_type=Path), required=True, help="PNG file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print what was drawn as JSON.")
@hipblaslt_version_option
@solution_selection_method_option
@click.pass_context
def plot_coverage_command(
    ctx: click.Context, workloads: tuple[Path, ...], library_path: Path, arch: str | None, cu_count: int | None,
    near: float, gemm_type: str | None, k: int | None, points: int, title: str | None, output: Path, as_json: bool,
    hipblaslt_version: str | None, solution_selection_method: int | None,
) -> None:  # fmt: skip
    """Draw the selection map of one problem type with the workload's GEMMs on it.

    GEMMs are coloured by coverage class (exact, near, far, fallback, none) and sized by their
    share of the workload; filled at the map's K, hollow at other K.
    """
    from tensilekit.cli.commands.coverage import coverage_report
    from tensilekit.coverage import map_slice
    from tensilekit.plot import plot_coverage_map
    from tensilekit.selection.grid import log_grid, selection_map

    check_output_path(output, suffixes={".png": "PNG"})
    report, library, _ = coverage_report(
        ctx,
        workloads,
        library_path,
        arch,
        cu_count,
        near=near,
        hipblaslt_version=hipblaslt_version,
        solution_selection_method=solution_selection_method,
    )
    cut = map_slice(report, gemm_type=gemm_type, k=k)
    grid = log_grid(cut.low, cut.high, points)
    with progress_bar("selecting over the grid", len(grid) ** 2) as advance:
        smap = selection_map(library.compiled, cut.problem, cut.hardware, grid, grid, progress=advance)
    if int((smap.winners >= 0).sum()) == 0:  # only a --type the library lacks: its GEMMs on a blank map, said why
        reason = library.why_not(cut.problem.model_copy(update={"m": cut.low, "n": cut.low}), cut.hardware)
        click.echo(f"note: the library has no kernel for {cut.gemm_type} at K={cut.k} ({reason}); "
                   "the map shows its GEMMs only", err=True)  # fmt: skip
    with progress_bar(f"drawing {output.name}", None):
        plot_coverage_map(smap, cut, output, title=title)
    at_k = sum(1 for item in cut.gemms if item.gemm.problem.k == cut.k)
    if as_json:
        click.echo(json.dumps({"output": str(output), "gemm_type": cut.gemm_type, "k": cut.k,
                               "gemms": len(cut.gemms), "gemms_at_k": at_k}))  # fmt: skip
        return
    click.echo(
        f"wrote {output}: {len(cut.gemms)} {cut.gemm_type} GEMM(s) on the kernel map at K={cut.k} "
        f"({sum(1 for item in cut.gemms if item.gemm.problem.k == cut.k)} at that K)"
    )


__all__ = ["plot_group"]

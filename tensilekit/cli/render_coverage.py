"""Rendering for ``tensilekit coverage``: a rich table and summary for people, Markdown for reports."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tensilekit.cli.output import print_note, print_table, stdout_is_terminal
from tensilekit.coverage import CoverageClass, CoverageReport, EntryMatch, GemmCoverage
from tensilekit.model.labels import SIZE_HEADER, size_text

_STYLES = {
    CoverageClass.EXACT: "green",
    CoverageClass.NEAR: "cyan",
    CoverageClass.FAR: "yellow",
    CoverageClass.FALLBACK: "magenta",
    CoverageClass.NONE: "red",
}


def gemm_size(item: GemmCoverage) -> str:
    p = item.gemm.problem
    return size_text(p.m, p.n, p.k, p.batch)


def entry_text(entry: EntryMatch | None) -> str:
    if entry is None:
        return "-"
    if all(name in entry.sizes for name in ("M", "N", "K")):
        sizes = entry.sizes
        return size_text(sizes["M"], sizes["N"], sizes["K"], sizes.get("batch", 1))
    return str(list(entry.key))


def ratio_text(entry: EntryMatch | None) -> str:
    if entry is None:
        return "-"
    parts = []
    for name, ratio in entry.ratios.items():
        if ratio is not None and ratio != 1.0:
            parts.append(f"{name} {ratio:.3g}")
    return ", ".join(parts) or "="


def _share(value: float) -> str:
    return f"{value:.1%}"


TUNE_NEXT_SHOWN = 10
"""GEMMs of the tune-next list a terminal shows."""


def render_report(report: CoverageReport, library: str, console: Console, *, rows: int = 30) -> None:
    """The GEMM table (heaviest first, ``rows`` of them), the class and type summary, tune next."""
    table = Table(title=f"Coverage of {len(report.gemms)} GEMM(s) by {library}", title_justify="left")
    piped = not stdout_is_terminal()  # a pipe gets every column and every GEMM
    wide = piped or console.width >= 120  # narrower terminals lose the calls, kernel and nearest-entry columns
    rows = len(report.gemms) if piped else rows
    columns = ["type", SIZE_HEADER, "calls", "share", "class", "kernel", "matched", "ratio", "nearest"]
    if not wide:
        columns = [column for column in columns if column not in ("calls", "kernel", "nearest")]
    for column in columns:
        table.add_column(column, justify="right" if column in ("calls", "share") else "left", no_wrap=column != "ratio")
    heaviest = sorted(report.gemms, key=lambda item: -item.weight)
    for item in heaviest[:rows]:
        style = _STYLES[item.coverage_class]
        cells = [item.gemm.gemm_type, gemm_size(item)]
        if wide:
            cells.append(str(item.gemm.calls))
        cells += [_share(item.share), f"[{style}]{item.coverage_class.value}[/{style}]"]
        if wide:
            cells.append("-" if item.index is None else str(item.index))
        cells += [entry_text(item.matched), ratio_text(item.matched)]
        if wide:
            same = item.nearest is None or (item.matched is not None and item.nearest.position == item.matched.position)
            nearest = "" if same else entry_text(item.nearest)
            if item.nearest is not None and item.nearest.usable is False:
                nearest += " (kernel can't run it)"
            cells.append(nearest)
        table.add_row(*cells)
    print_table(console, table)
    if len(heaviest) > rows:
        print_note(console, f"… {len(heaviest) - rows} lighter GEMM(s) not shown (--json lists every GEMM)")
    summary = Table(title=f"Share of GEMM time ({report.basis.value}) by class", title_justify="left")
    summary.add_column("problem type")
    summary.add_column("GEMMs", justify="right")
    summary.add_column("share", justify="right")
    for member in CoverageClass:
        summary.add_column(member.value, justify="right", style=_STYLES[member])
    for kind in report.by_type:
        summary.add_row(
            kind.gemm_type, str(kind.gemms), _share(kind.share), *(_share(kind.by_class[m]) for m in CoverageClass)
        )
    summary.add_row(
        "all", str(len(report.gemms)), _share(sum(report.by_class.values())),
        *(_share(report.by_class[m]) for m in CoverageClass), style="bold",
    )  # fmt: skip
    print_table(console, summary)
    print_note(console, f"near: every size within a factor of {1 + report.near:g} of the matched entry")
    if report.tune_next:
        # a terminal lists the first TUNE_NEXT_SHOWN and says so (never "(15)" over 10 lines); a pipe all
        shown = report.tune_next if piped else report.tune_next[:TUNE_NEXT_SHOWN]
        more = len(report.tune_next) - len(shown)
        first = f", the first {len(shown)} shown" if more else ""
        print_note(console, f"tune next ({len(report.tune_next)} GEMM(s){first}, share x class factor):")
        for rank, item in enumerate(shown, 1):
            print_note(
                console,
                f"  {rank:3d}. {item.gemm.gemm_type} {gemm_size(item)}  {_share(item.share)}  "
                f"{item.coverage_class.value}  score {item.score:.3g}",
            )
        if more:
            print_note(console, f"  … {more} more: piped, --json or --format markdown list them all")
    else:
        print_note(console, "tune next: nothing, every GEMM has an exactly tuned entry")


def coverage_markdown(report: CoverageReport, library: str) -> str:
    """The report as Markdown: summary by class and type, tune next, then every GEMM."""
    lines = [f"# Coverage of {len(report.gemms)} GEMM(s) by {library}", ""]
    lines.append(f"Weights: {report.basis.value}. Near: within a factor of {1 + report.near:g} per dimension.")
    lines += ["", "| problem type | GEMMs | share | " + " | ".join(m.value for m in CoverageClass) + " |"]
    lines.append("| --- | ---: | ---: |" + " ---: |" * len(CoverageClass))
    for kind in report.by_type:
        cells = " | ".join(_share(kind.by_class[m]) for m in CoverageClass)
        lines.append(f"| {kind.gemm_type} | {kind.gemms} | {_share(kind.share)} | {cells} |")
    cells = " | ".join(_share(report.by_class[m]) for m in CoverageClass)
    lines.append(f"| **all** | {len(report.gemms)} | {_share(sum(report.by_class.values()))} | {cells} |")
    lines += ["", "## Tune next", ""]
    if report.tune_next:
        lines += [
            "| rank | type | " + SIZE_HEADER + " | share | class | score |",
            "| ---: | --- | --- | ---: | --- | ---: |",
        ]
        for rank, item in enumerate(report.tune_next, 1):
            lines.append(
                f"| {rank} | {item.gemm.gemm_type} | {gemm_size(item)} | {_share(item.share)} | "
                f"{item.coverage_class.value} | {item.score:.3g} |"
            )
    else:
        lines.append("Nothing: every GEMM has an exactly tuned entry.")
    lines += [
        "",
        "## GEMMs",
        "",
        "| type | " + SIZE_HEADER + " | calls | share | class | kernel | matched | ratio | nearest |",
    ]
    lines.append("| --- | --- | ---: | ---: | --- | --- | --- | --- | --- |")
    for item in sorted(report.gemms, key=lambda item: -item.weight):
        lines.append(
            f"| {item.gemm.gemm_type} | {gemm_size(item)} | {item.gemm.calls} | {_share(item.share)} | "
            f"{item.coverage_class.value} | {item.index if item.index is not None else '-'} | "
            f"{entry_text(item.matched)} | {ratio_text(item.matched)} | {entry_text(item.nearest)} |"
        )
    if report.skipped:
        lines += ["", "## Skipped", ""] + [f"- {item}" for item in report.skipped]
    return "\n".join(lines) + "\n"


__all__ = ["coverage_markdown", "entry_text", "gemm_size", "ratio_text", "render_report"]

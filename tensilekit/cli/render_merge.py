"""Rendering of merge reports, library diffs and prune reports: rich tables, Markdown, JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from tensilekit.cli.output import print_line, print_note, print_table, shown_kernel_name
from tensilekit.merge.diff import DiffKernel, GroupDiff, LibraryDiff
from tensilekit.merge.prune import PruneReport
from tensilekit.merge.report import FileMergeReport, KernelRef, MergeReport
from tensilekit.model.labels import matching_key_text, size_record_text, table_key_text


def to_json(value: Any) -> str:
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return json.dumps([item.model_dump(mode="json") for item in value], indent=2)
    return json.dumps(value.model_dump(mode="json"), indent=2)


def _key(key: Sequence[Any] | dict[str, Any]) -> str:
    """A size as every command spells it (:mod:`tensilekit.model.labels`)."""
    if isinstance(key, dict):  # a query record: its size and whatever else identifies it
        label = key.get("id")
        return size_record_text(key) + (f" ({label})" if label else "")
    return table_key_text(key)


def _kernel(ref: KernelRef | DiffKernel | None) -> str:
    if ref is None:
        return "-"
    text = f"#{ref.index}" if ref.index is not None else "#?"
    side = getattr(ref, "side", None)
    if side in ("original", "incremental"):
        text = f"{side[:4]}{text}"
    return text


# ---------------------------------------------------------------------------------------------
# merge


def _file_row(report: FileMergeReport) -> list[str]:
    policy = report.policy
    changed = sum(1 for entry in report.sizes_replaced if entry.changed)
    return [
        report.name,
        f"{policy.merge_mode}/{policy.compat.value}",
        f"{len(report.sizes_replaced)}/{changed}",
        str(len(report.sizes_kept)),
        str(len(report.sizes_added)),
        f"+{len(report.kernels_added)} -{len(report.kernels_removed)}",
        f"{report.output_sizes}/{report.output_kernels}",
        str(len(report.warnings)),
    ]


def merge_summary_lines(file_report: FileMergeReport) -> list[str]:
    """The plain-text block for one file (also what the CLI tests assert on)."""
    policy = file_report.policy
    changed = sum(1 for entry in file_report.sizes_replaced if entry.changed)
    written = "written" if file_report.written else "not written"
    lines = [
        f"{file_report.name}: {policy.merge_mode} ({policy.force_merge_reason}), compat {policy.compat.value}"
        + (
            f" (merge.py {policy.tensilelite_merge}: {policy.tensilelite_merge_reason})"
            if policy.tensilelite_merge
            else ""
        ),
        f"  sizes: {len(file_report.sizes_replaced)} replaced ({changed} changed), {len(file_report.sizes_kept)} kept, "
        f"{len(file_report.sizes_added)} added"
        + (f", {len(file_report.sizes_rejected)} rejected" if file_report.sizes_rejected else "")
        + f" -> {file_report.output_sizes} sizes",
        f"  kernels: +{len(file_report.kernels_added)} -{len(file_report.kernels_removed)} "
        f"-> {file_report.output_kernels} kernels",
        f"  output: {file_report.output_path or '-'} ({written})",
    ]
    lines += [f"  warning: {warning}" for warning in file_report.warnings]
    return lines


def render_merge_report(report: MergeReport, console: Console) -> None:
    if report.dry_run:
        console.print("dry run: nothing written", style="bold")
    for file_report in report.files:
        for number, line in enumerate(merge_summary_lines(file_report)):
            style = "yellow" if line.startswith("  warning:") else ("bold" if number == 0 else None)
            console.print(line, style=style, markup=False)
    if report.unpaired_incremental and not report.copied_new:
        console.print("not merged (no original): " + ", ".join(report.unpaired_incremental), markup=False)
    if report.copied_new:
        console.print("copied through (--add-new): " + ", ".join(report.copied_new), markup=False)
    if report.unpaired_original:
        console.print("originals without an incremental: " + ", ".join(report.unpaired_original), markup=False)
    for note in report.notes:
        console.print(f"note: {note}", style="dim", markup=False)
    if not report.files:
        console.print("no file pairs to merge", style="yellow")


def merge_report_markdown(report: MergeReport) -> str:
    lines = ["# Merge report", ""]
    if report.dry_run:
        lines += ["_Dry run: nothing was written._", ""]
    lines += [
        "| file | policy | replaced/changed | kept | added | kernels | sizes/kernels out | warnings |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(_file_row(file_report)) + " |" for file_report in report.files]
    lines.append("")
    for file_report in report.files:
        policy = file_report.policy
        lines += [f"## {file_report.name}", ""]
        lines.append(
            f"- policy: **{policy.merge_mode}** ({policy.force_merge_reason}); compat `{policy.compat.value}` "
            f"({policy.compat_reason})"
            + (
                f"; merge.py `{policy.tensilelite_merge}` ({policy.tensilelite_merge_reason})"
                if policy.tensilelite_merge
                else ""
            )
            + f"; trim {policy.trim}; no_eff {policy.no_eff}; "
            f"solution tags {policy.add_solution_tags}"
        )
        if file_report.original_path:
            lines.append(f"- original `{file_report.original_path}`, incremental `{file_report.incremental_path}`")
        if file_report.output_path:
            lines.append(f"- output `{file_report.output_path}`" + ("" if file_report.written else " (not written)"))
        stats = file_report.amd_statistics
        lines.append(
            f"- AMD's summary line: {stats.sizes_added} size(s) and {stats.kernels_added} kernel(s) added, "
            f"{stats.kernels_removed} kernel(s) removed"
        )
        units = file_report.efficiency
        lines.append(
            f"- efficiency units: original {units.original.unit.value} ({units.original.reason}), "
            f"incremental {units.incremental.unit.value} ({units.incremental.reason})"
        )
        for warning in file_report.warnings:
            lines.append(f"- **warning:** {warning}")
        lines.append("")
        if file_report.sizes_replaced:
            lines += ["| size | reason | kernel | efficiency |", "|---|---|---|---|"]
            for entry in file_report.sizes_replaced:
                lines.append(
                    f"| {_key(entry.key)} | {entry.reason} | {_kernel(entry.old_kernel)} → "
                    f"{_kernel(entry.new_kernel)} | {entry.old_efficiency} → {entry.written_efficiency} |"
                )
            lines.append("")
        if file_report.sizes_added:
            lines += ["| added size | kernel | efficiency |", "|---|---|---|"]
            for added in file_report.sizes_added:
                lines.append(f"| {_key(added.key)} | {_kernel(added.kernel)} | {added.efficiency} |")
            lines.append("")
        if file_report.sizes_kept:
            lines += ["| kept size | original | incremental |", "|---|---|---|"]
            for kept in file_report.sizes_kept:
                lines.append(
                    f"| {_key(kept.key)} | {kept.original_efficiency} | {kept.incremental_efficiency}"
                    + (" (tie)" if kept.tie else "")
                    + " |"
                )
            lines.append("")
    for title, names in (
        ("Not merged (no original)", report.unpaired_incremental if not report.copied_new else []),
        ("Copied through", report.copied_new),
        ("Originals without incremental", report.unpaired_original),
    ):
        if names:
            lines += [f"## {title}", ""] + [f"- `{name}`" for name in names] + [""]
    if report.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in report.notes] + [""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# diff


def _group_title(group: GroupDiff) -> str:
    """A master table by its short label (its ~400-character predicate path is in --json's
    ``name``); a logic file by its file name."""
    return group.label or group.name


def _group_counts(group: GroupDiff) -> list[str]:
    return [
        _group_title(group),
        f"+{len(group.kernels_added)} -{len(group.kernels_removed)} ~{len(group.kernels_changed)}",
        f"+{len(group.sizes_added)} -{len(group.sizes_removed)}",
        str(len(group.sizes_reassigned)),
        str(len(group.efficiency_changes)),
        str(len(group.header_changes)),
    ]


def render_diff(diff: LibraryDiff, console: Console) -> None:
    print_note(console, f"diff {diff.a} → {diff.b} ({diff.kind}, kernel identity: {diff.identity})", markup=False)
    if diff.is_empty:
        print_note(
            console,
            f"no differences ({diff.groups_compared} compared"
            + (f", {diff.queries} queries" if diff.queries else "")
            + ")",
        )
        return
    for name in diff.files_removed:
        print_line(console, f"- {diff.table_labels.get(name, name)}", style="red")
    for name in diff.files_added:
        print_line(console, f"+ {diff.table_labels.get(name, name)}", style="green")
    if diff.groups:
        table = Table(title_justify="left")
        for header in ("problem type", "kernels", "sizes", "reassigned", "efficiency", "header"):
            table.add_column(header)
        for group in diff.groups:
            table.add_row(*_group_counts(group))
        print_table(console, table)
        # the findings are the diff's data: plain lines in a pipe too (never `# ` notes that
        # `grep -v '^#'` drops); each names its group, so a grep for one finding keeps its context
        for group in diff.groups:
            title, *findings = _group_lines(group, shown=shown_kernel_name)
            print_note(console, title, markup=False)
            for line in findings:
                print_line(console, line, context=_group_title(group))
    if diff.queries:
        print_note(
            console, f"selection ({diff.selector}): {len(diff.selection)} of {diff.queries} queries select differently"
        )
        for change in diff.selection:
            where = f"{change.group}: " if change.group else ""
            print_line(console, f"  {where}{_key(change.query)}: {_kernel(change.a)} → {_kernel(change.b)}")
    for note in diff.notes:
        print_note(console, f"note: {note}", style="dim", markup=False)


def _whole(name: str | None) -> str:
    return name or ""


def _group_lines(group: GroupDiff, limit: int = 20, shown: Callable[[str | None], str] = _whole) -> list[str]:
    """The findings of one group; ``shown`` spells a kernel name (short on a terminal)."""

    def _size(key: Sequence[Any]) -> str:
        return matching_key_text(key, group.key_names)

    lines = [_group_title(group) + (f" ({group.problem_type})" if group.problem_type and not group.label else "")]
    for header in group.header_changes:
        lines.append(f"  header {header.field}: {header.a!r} → {header.b!r}")
    for kernel in group.kernels_removed[:limit]:
        lines.append(f"  - kernel {_kernel(kernel)} {shown(kernel.name) if kernel.name else ''}".rstrip())
    for kernel in group.kernels_added[:limit]:
        lines.append(f"  + kernel {_kernel(kernel)} {shown(kernel.name) if kernel.name else ''}".rstrip())
    for kernel_change in group.kernels_changed[:limit]:
        lines.append(
            f"  ~ kernel {_kernel(kernel_change.a)} → {_kernel(kernel_change.b)}: {', '.join(kernel_change.keys)}"
        )
    for size in group.sizes_removed[:limit]:
        lines.append(f"  - size {_size(size.key)} ({_kernel(size.kernel)}, {size.efficiency})")
    for size in group.sizes_added[:limit]:
        lines.append(f"  + size {_size(size.key)} ({_kernel(size.kernel)}, {size.efficiency})")
    for moved in group.sizes_reassigned[:limit]:
        changed = f"{', '.join(moved.changes)}; " if moved.changes else ""
        lines.append(
            f"  ~ size {_size(moved.key)}: {_kernel(moved.a)} → {_kernel(moved.b)} "
            f"({changed}efficiency {moved.a_efficiency} → {moved.b_efficiency})"
        )
    for efficiency in group.efficiency_changes[:limit]:
        lines.append(f"  ~ efficiency {_size(efficiency.key)}: {efficiency.a} → {efficiency.b}")
    hidden = sum(
        max(0, len(items) - limit)
        for items in (
            group.kernels_removed,
            group.kernels_added,
            group.kernels_changed,
            group.sizes_removed,
            group.sizes_added,
            group.sizes_reassigned,
            group.efficiency_changes,
        )
    )
    if hidden:
        lines.append(f"  … {hidden} more (use --format json or markdown for everything)")
    return lines


def diff_markdown(diff: LibraryDiff) -> str:
    lines = [
        f"# Diff `{diff.a}` → `{diff.b}`",
        "",
        f"Kind: {diff.kind}; kernel identity: {diff.identity}; {diff.groups_compared} compared.",
        "",
    ]
    if diff.is_empty:
        lines += ["No differences.", ""]
        return "\n".join(lines)
    if diff.files_removed or diff.files_added:
        lines += ["## Files", ""] + [f"- removed `{name}`" for name in diff.files_removed]
        lines += [f"- added `{name}`" for name in diff.files_added] + [""]
    if diff.groups:
        lines += [
            "| problem type | kernels +/-/~ | sizes +/- | reassigned | efficiency | header |",
            "|---|---|---|---:|---:|---:|",
        ]
        lines += ["| " + " | ".join(_group_counts(group)) + " |" for group in diff.groups]
        lines.append("")
        for group in diff.groups:
            body = _group_lines(group, limit=10**9)
            lines += [f"## {body[0]}", ""] + [f"- {line.strip()}" for line in body[1:]] + [""]
    if diff.queries:
        lines += [
            f"## Selection ({diff.selector})",
            "",
            f"{len(diff.selection)} of {diff.queries} queries select differently.",
            "",
        ]
        for change in diff.selection:
            where = f"{change.group}: " if change.group else ""
            lines.append(f"- {where}{_key(change.query)}: {_kernel(change.a)} → {_kernel(change.b)}")
        lines.append("")
    if diff.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in diff.notes] + [""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# prune


def render_prune(reports: Sequence[PruneReport], console: Console, *, dry_run: bool) -> None:
    table = Table(title="prune" + (" (dry run: nothing written)" if dry_run else ""), title_justify="left")
    for header in ("file", "kernels", "unused", "duplicates", "rows remapped", "written"):
        table.add_column(header)
    for report in reports:
        table.add_row(
            report.name or "-",
            f"{report.kernels_before} → {report.kernels_after}",
            str(len(report.unused_removed)),
            str(len(report.duplicates_folded)),
            str(report.rows_remapped),
            report.output_path if report.written else "no",
        )
    print_table(console, table)
    for report in reports:
        for folded in report.duplicates_folded:
            print_note(
                console, f"{report.name}: kernel #{folded.removed.index} folded into #{folded.kept.index}", markup=False
            )
        for note in report.notes:
            print_note(console, f"note: {report.name}: {note}", style="dim", markup=False)


__all__ = [
    "diff_markdown",
    "merge_report_markdown",
    "merge_summary_lines",
    "render_diff",
    "render_merge_report",
    "render_prune",
    "to_json",
]

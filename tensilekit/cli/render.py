"""Rendering shared by commands: rich tables for people, JSON for scripts."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from tensilekit.cli.output import print_table
from tensilekit.inspect import FileInfo, FileValidation


def print_json(data: Any) -> None:
    """JSON on stdout (models via ``model_dump(mode="json")``)."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [item.model_dump(mode="json") if isinstance(item, BaseModel) else item for item in data]
    print(json.dumps(data, indent=2, sort_keys=False))


def _ranges(info: FileInfo) -> str:
    return " ".join(f"{name} {low}..{high}" for name, (low, high) in info.size_ranges.items())


def render_info(infos: list[FileInfo], console: Console) -> None:
    if len(infos) == 1:
        info = infos[0]
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        rows = [
            ("file", info.path),
            ("kind", info.kind),
            ("format", info.format),
            ("dialect", info.dialect or "-"),
            ("architecture", ", ".join(info.architectures) or "-"),
            (
                "CU count",
                ", ".join(map(str, info.cu_counts)) or (str(info.cu_count) if info.cu_count is not None else "-"),
            ),
            ("problem types", ", ".join(info.problem_types) or "-"),
            *([("data types", "; ".join(info.data_types))] if info.data_types else []),
            ("library type", info.library_type or "-"),
            ("solutions", str(info.solutions)),
            ("table entries", str(info.table_entries)),
            ("size ranges", _ranges(info) or "-"),
            ("version", info.version or "-"),
            *([("taken for", info.runtime)] if info.runtime else []),
        ]
        if info.node_counts:
            rows.append(("nodes", ", ".join(f"{k} {v}" for k, v in info.node_counts.items())))
        for key, value in rows:
            table.add_row(key, value)
        print_table(console, table)
        return
    table = Table(title=f"{len(infos)} files")
    for column in INFO_COLUMNS:
        table.add_column(column, overflow="fold")
    for info in infos:
        table.add_row(*info_row(info))
    print_table(console, table)


def render_validation_file(result: FileValidation, console: Console) -> None:
    """One file's verdict and findings (printed as soon as the file is checked)."""
    errors = [f for f in result.findings if f.severity == "error"]
    warnings = [f for f in result.findings if f.severity == "warning"]
    status = "[green]ok[/green]" if result.ok else "[red]FAILED[/red]"
    summary = f"{status} {result.path}"
    if errors or warnings:
        summary += f" ({len(errors)} error(s), {len(warnings)} warning(s))"
    console.print(summary)
    for finding in result.findings:
        where = result.path
        if finding.line is not None:
            where += f":{finding.line}"
            if finding.col is not None:
                where += f":{finding.col}"
        elif finding.offset is not None:
            where += f": byte {finding.offset}"
        color = "red" if finding.severity == "error" else "yellow"
        console.print(
            f"  [{color}]{finding.severity}[/{color}] {where}: {finding.message}"
            + (f" (at {finding.path})" if finding.path else "")
            + f" \\[{finding.code}]"
        )


def render_validation_total(results: list[FileValidation], console: Console) -> None:
    failed = sum(1 for result in results if not result.ok)
    console.print(f"{len(results) - failed} of {len(results)} file(s) valid")


def info_row(info: FileInfo) -> list[str]:
    return [
        info.path,
        info.kind,
        info.format,
        ",".join(info.architectures),
        info.library_type or ",".join(info.problem_types[:2]),
        str(info.solutions),
        str(info.table_entries),
    ]


INFO_COLUMNS = ["file", "kind", "format", "arch", "type", "solutions", "entries"]

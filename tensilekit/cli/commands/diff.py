"""``tensilekit diff``: structural (and optionally selection) diff of two libraries."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from tensilekit.merge import Compat, diff_libraries
from tensilekit.merge.files import load_queries


@click.command("diff")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option(
    "--queries",
    "queries_path",
    type=click.Path(path_type=Path),
    help="Sizes to select in both libraries (one 'M N B K' per line, or a YAML/JSON list).",
)
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
@click.option("--exit-code", is_flag=True, help="Exit 1 when there are differences.")
@click.pass_context
def diff_command(
    ctx: click.Context,
    a: Path,
    b: Path,
    queries_path: Path | None,
    compat: str | None,
    output_format: str,
    as_json: bool,
    exit_code: bool,
) -> None:
    """Compare two logic files, two directories of logic files, or two master libraries."""
    from tensilekit.cli.render_merge import diff_markdown, render_diff, to_json

    queries = load_queries(queries_path) if queries_path is not None else None
    diff = diff_libraries(a, b, queries, compat=Compat(compat) if compat else None)
    if as_json or output_format == "json":
        click.echo(to_json(diff))
    elif output_format == "markdown":
        click.echo(diff_markdown(diff))
    else:
        render_diff(diff, Console(highlight=False, soft_wrap=True))
    if exit_code and not diff.is_empty:
        ctx.exit(1)


__all__ = ["diff_command"]

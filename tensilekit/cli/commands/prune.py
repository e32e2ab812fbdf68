"""``tensilekit prune``: drop unused kernels, fold duplicate kernels, renumber."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from tensilekit.cli.inputs import LOGIC, require_kind, require_readable_folder
from tensilekit.cli.options import UserPath, check_output_path
from tensilekit.cli.output import progress_bar
from tensilekit.merge import Compat
from tensilekit.merge.files import prune_paths


@click.command("prune")
@click.argument("inputs", nargs=-1, required=True, type=UserPath(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=UserPath(path_type=Path),
    help="Write here (a file, or a directory for several inputs); default: rewrite the inputs in place.",
)
@click.option(
    "--compat",
    type=click.Choice([mode.value for mode in Compat]),
    default=None,
    help="Kernel identity used to find duplicates (default: by dialect).",
)
@click.option("--dry-run", is_flag=True, help="Report, write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
def prune_command(
    inputs: tuple[Path, ...], output: Path | None, compat: str | None, dry_run: bool, as_json: bool
) -> None:
    """Prune logic files (or every *.yaml in directories) IN..."""
    from tensilekit.cli.render_merge import render_prune, to_json

    for path in inputs:
        require_readable_folder(path, suffixes=(".yaml", ".yml"))
    require_kind(inputs, LOGIC, "prune")
    if output is not None and not dry_run:
        check_output_path(output)
    named = inputs[0].name if len(inputs) == 1 else f"{len(inputs)} inputs"
    with progress_bar(f"pruning {named}", None):
        reports = prune_paths(list(inputs), output, compat=Compat(compat) if compat else None, dry_run=dry_run)
    if as_json:
        click.echo(to_json(reports))
    else:
        render_prune(reports, Console(highlight=False, soft_wrap=True), dry_run=dry_run)


__all__ = ["prune_command"]

"""``tensilekit merge``: AMD's TensileMergeLibrary / merge.py over files or directories."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from tensilekit.cli.inputs import LOGIC, require_kind, require_readable_folder
from tensilekit.cli.options import UserPath, check_output_path
from tensilekit.cli.output import progress_bar
from tensilekit.io.atomic import write_text_atomic
from tensilekit.merge import Compat, MergePolicy, merge_paths
from tensilekit.merge.merge import validate_policy_value

_FORCE_VALUES = ["true", "false", "1", "0", "none"]


@click.command("merge")
@click.argument("original", type=UserPath(path_type=Path))
@click.argument("incremental", type=UserPath(path_type=Path))
@click.argument("output", type=UserPath(path_type=Path))
@click.option(
    "--force-merge",
    "--force_merge",
    "force_merge",
    type=click.Choice(_FORCE_VALUES, case_sensitive=False),
    default="none",
    show_default=True,
    help="true: Forced (always take the incremental entry); false: Winner (only if faster); "
    "none: AMD's default (Winner iff 'arcturus' is in the incremental path).",
)
@click.option(
    "--no-eff", "--no_eff", "no_eff", is_flag=True, help="Write efficiency 0.0 for merged entries (tensilelite)."
)
@click.option("--notrim", is_flag=True, help="Keep 8-element size keys (AMD trims them to [M, N, B, K]).")
@click.option(
    "--add-solution-tags",
    "--add_solution_tags",
    "add_solution_tags",
    is_flag=True,
    help="Tag size keys with the solution kind (AMD --add_solution_tags).",
)
@click.option(
    "--compat",
    type=click.Choice([mode.value for mode in Compat]),
    default=None,
    help="Kernel identity: tensile (TensileMergeLibrary) or tensilelite (merge.py); default by dialect.",
)
@click.option(
    "--tensilelite-merge",
    type=click.Choice(["7d9fb683", "5.x"]),
    default=None,
    help="Which tensilelite merge.py to reproduce (compat tensilelite); default 5.x for 5.x files, else 7d9fb683.",
)
@click.option(
    "--add-new/--no-add-new",
    default=None,
    help="Copy incremental files that have no original to OUTPUT (default: as the merge script does; "
    "only tensilelite 5.x's copies them).",
)
@click.option("--no-latch", is_flag=True, help="Decide the default policy per file (AMD: the first file decides).")
@click.option("--dry-run", is_flag=True, help="Merge and report, write nothing.")
@click.option(
    "--report",
    "report_path",
    type=UserPath(path_type=Path),
    help="Also write the report: *.json (machine-readable) or *.md (Markdown).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of tables.")
def merge_command(
    original: Path,
    incremental: Path,
    output: Path,
    force_merge: str,
    no_eff: bool,
    notrim: bool,
    add_solution_tags: bool,
    compat: str | None,
    tensilelite_merge: str | None,
    add_new: bool | None,
    no_latch: bool,
    dry_run: bool,
    report_path: Path | None,
    as_json: bool,
) -> None:
    """Merge INCREMENTAL logic into ORIGINAL, writing OUTPUT (files, or directories paired by name)."""
    from tensilekit.cli.render_merge import merge_report_markdown, render_merge_report, to_json

    if report_path is not None and report_path.suffix.lower() not in (".json", ".md"):
        raise click.BadParameter("the report file must end in .json or .md", param_hint="--report")
    for path in (original, incremental):
        require_readable_folder(path, suffixes=(".yaml", ".yml"))
    require_kind([original, incremental], LOGIC, "merge")
    if not dry_run:
        check_output_path(output, option="OUTPUT")
    if report_path is not None:
        check_output_path(report_path, option="--report")
    policy = MergePolicy(
        force_merge=validate_policy_value(force_merge),
        trim=not notrim,
        no_eff=no_eff,
        add_solution_tags=add_solution_tags,
        compat=Compat(compat) if compat else None,
        add_new=add_new,
        latch_default=not no_latch,
        tensilelite_merge=tensilelite_merge,
    )
    with progress_bar(f"merging {incremental.name} into {original.name}", None):
        report = merge_paths(original, incremental, output, policy, dry_run=dry_run)
    if report_path is not None:
        text = to_json(report) if report_path.suffix.lower() == ".json" else merge_report_markdown(report)
        write_text_atomic(report_path, text + ("" if text.endswith("\n") else "\n"))
    if as_json:
        click.echo(to_json(report))
    else:
        render_merge_report(report, Console(highlight=False, soft_wrap=True))


__all__ = ["merge_command"]

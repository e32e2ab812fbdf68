"""``tensilekit remap``: carry TunableOp / AITER / hipBLASLt tuning results from one library build to another."""

from __future__ import annotations

from pathlib import Path

import click

from tensilekit.cli.main import ExitCode
from tensilekit.cli.options import (
    UserPath,
    check_output_path,
    full_names_option,
    hipblaslt_version_option,
    solution_selection_method_option,
    workspace_option,
)
from tensilekit.cli.output import shown_kernel_name, shown_kernel_names_in
from tensilekit.cli.phases import phases


def _validators(values: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, equals, setting = value.partition("=")
        if not equals or not name.strip():
            raise click.BadParameter(f"{value!r} is not NAME=VALUE", param_hint="--validator")
        pairs[name.strip()] = setting
    return pairs


@click.command("remap")
@click.argument("artefacts", nargs=-1, required=True, type=UserPath(path_type=Path))
@click.option(
    "--from", "old", required=True, type=UserPath(path_type=Path), help="The library the files were tuned with."
)
@click.option("--to", "new", required=True, type=UserPath(path_type=Path), help="The library to carry them to.")
@click.option(
    "-o",
    "--output",
    type=UserPath(path_type=Path),
    help="Write the files for NEW here (a file; a folder for several artefacts). Never in place.",
)
@click.option(
    "--fill",
    type=click.Choice(["drop", "heuristic"]),
    default="drop",
    show_default=True,
    help="Rows whose solution NEW lacks or refuses: dropped, or given NEW's heuristic pick.",
)
@click.option("--validator", "validators", multiple=True, metavar="NAME=VALUE", help="Set a TunableOp Validator in -o.")
@click.option("--arch", default=None, help="Device for NEW's heuristic pick when a row does not name one.")
@click.option(
    "--cu-count",
    type=int,
    default=None,
    help="CU count of the device when a row does not say (needed to decide rejected).",
)
@workspace_option("NEW's calls")
@hipblaslt_version_option
@solution_selection_method_option
@click.option("--strict", is_flag=True, help="Stop at the first unreadable row (exit 3).")
@click.option("--json", "as_json", is_flag=True, help="A JSON array: one object per recorded row.")
@full_names_option
def remap_command(
    artefacts: tuple[Path, ...],
    old: Path,
    new: Path,
    output: Path | None,
    fill: str,
    validators: tuple[str, ...],
    arch: str | None,
    cu_count: int | None,
    workspace_size: int | None,
    hipblaslt_version: str | None,
    solution_selection_method: int | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Say what each recorded solution of ARTEFACT... (TunableOp results, AITER tuned CSVs,
    hipBLASLt tuning/override files) is in NEW.

    Status per row: same, moved (new index), missing (NEW's heuristic pick given), ambiguous,
    rejected (NEW's predicates refuse it on the device; needs the CU count: --cu-count or the row's).
    Exit 0 when every row is same or moved, 1 otherwise, 3 on bad input.
    """
    from tensilekit.remapping import RUNTIME_WORKSPACE, remap, write_remapped

    if output is not None:
        check_output_path(output)
    with phases("reading") as shown:
        report = remap(
            list(artefacts),
            old,
            new,
            fill_heuristic=fill == "heuristic",
            strict=strict,
            validators=_validators(validators),
            arch=arch,
            cu_count=cu_count,
            stage=shown.stage,
            workspace_size=RUNTIME_WORKSPACE if workspace_size is None else workspace_size,
            hipblaslt_version=hipblaslt_version,
            solution_selection_method=solution_selection_method,
        )
    for artefact in report.artefacts:
        for bad in artefact.bad_lines:
            click.echo(f"warning: {bad} (passed through unchanged)", err=True)
    if output is not None:
        written = write_remapped(report, output)
        kept = sorted({name for artefact in report.artefacts for name in artefact.validators_kept})
        if kept:
            click.echo(f"note: Validator line(s) left as they were: {', '.join(kept)} (set with --validator)", err=True)
        click.echo(f"wrote {', '.join(map(str, written))}", err=True)
    if as_json:  # one JSON array, as info, lint and validate write theirs (README, Scripting)
        from tensilekit.cli.render import print_json

        print_json([row.to_json() for row in report.rows])
    else:
        printed: list[str] = []  # one write: a 100 000-row artefact prints as many lines
        for row in report.rows:
            where = f"{row.file}:{row.line}"
            if row.status.carried:
                kernel = shown_kernel_name(row.kernel)
                printed.append(f"{where}: {row.status.value} {row.old_index} -> {row.new_index} {kernel}")
            else:
                printed.append(
                    f"{where}: {row.status.value} {row.old_index} ({shown_kernel_names_in(row.reason or '')})"
                )
        if printed:
            click.echo("\n".join(printed))
    if not report.complete:
        raise click.exceptions.Exit(ExitCode.DIFFERENCES)


__all__ = ["remap_command"]

"""``build-master``: logic files -> master library (the library half of TensileCreateLibrary)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tensilekit.cli.inputs import LOGIC, require_kind, require_readable_folder
from tensilekit.cli.options import check_output_path
from tensilekit.cli.output import progress_bar

_OUTPUT_SUFFIXES = {".yaml": "YAML", ".yml": "YAML", ".dat": "msgpack", ".msgpack": "msgpack"}


@click.command("build-master")
@click.argument("logic", nargs=-1, required=True, type=click.Path())
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(),
    help="TensileLibrary.yaml or .dat; with several architectures or --lazy, a directory.",
)
@click.option("--lazy", is_flag=True, help="Lazy loading: TensileLibrary_lazy_<arch> plus one file per placeholder.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["yaml", "msgpack"]),
    default=None,
    help="Output format (default: from the output suffix; msgpack for directories).",
)
@click.option(
    "--dialect",
    type=click.Choice(["tensile", "tensilelite"]),
    default=None,
    help="Logic dialect: tensile (rocBLAS) or tensilelite (hipBLASLt); default: detected from the files.",
)
@click.option(
    "--custom-kernels",
    type=click.Path(file_okay=False),
    default=None,
    help="hipBLASLt's tensilelite/Tensile/CustomKernels directory (logic files with custom kernels need it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the files written as JSON.")
def build_master_command(
    logic: tuple[str, ...], output: str, lazy: bool, fmt: str | None, dialect: str | None, custom_kernels: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Build the master solution library of LOGIC files or directories (no kernels, no ROCm)."""
    from tensilekit.api import build_master_files
    from tensilekit.io.master_io import dump_master, format_for_path

    target = Path(output)
    check_output_path(target)
    for path in logic:
        require_readable_folder(path, suffixes=(".yaml", ".yml"))
    require_kind(logic, LOGIC, "build-master")
    with progress_bar("building", None):
        files = build_master_files(logic, lazy=lazy, dialect=dialect, custom_kernels=custom_kernels)
    written: list[tuple[Path, int]] = []
    if len(files) == 1 and not lazy and not target.is_dir():
        if fmt is None:  # the format follows the suffix, or is an error
            check_output_path(target, suffixes=_OUTPUT_SUFFIXES)
        master = next(iter(files.values()))
        dump_master(master, target, fmt)
        written.append((target, len(master.solutions)))
    else:
        chosen = fmt or ("yaml" if format_for_path(target).value == "yaml" and target.suffix else "msgpack")
        suffix = ".yaml" if chosen == "yaml" else ".dat"
        directory = target if not target.suffix else target.parent
        for name, master in files.items():
            dump_master(master, directory / f"{name}{suffix}", chosen)
            written.append((directory / f"{name}{suffix}", len(master.solutions)))
    for written_path, solutions in written:
        if as_json:
            click.echo(json.dumps({"output": str(written_path), "solutions": solutions}))
        else:
            click.echo(f"wrote {written_path} ({solutions} solutions)")

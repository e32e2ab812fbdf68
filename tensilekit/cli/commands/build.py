"""``build-master``: logic files -> master library (the library half of TensileCreateLibrary)."""

from __future__ import annotations

from pathlib import Path

import click

from tensilekit.api import build_master_files
from tensilekit.io.master_io import dump_master, format_for_path


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
def build_master_command(
    logic: tuple[str, ...], output: str, lazy: bool, fmt: str | None, dialect: str | None, custom_kernels: str | None
) -> None:
    """Build the master solution library of LOGIC files or directories (no kernels, no ROCm)."""
    files = build_master_files(logic, lazy=lazy, dialect=dialect, custom_kernels=custom_kernels)
    target = Path(output)
    if len(files) == 1 and not lazy and not target.is_dir():
        master = next(iter(files.values()))
        dump_master(master, target, fmt)
        click.echo(f"wrote {target} ({len(master.solutions)} solutions)")
        return
    chosen = fmt or ("yaml" if format_for_path(target).value == "yaml" and target.suffix else "msgpack")
    suffix = ".yaml" if chosen == "yaml" else ".dat"
    directory = target if not target.suffix else target.parent
    for name, master in files.items():
        dump_master(master, directory / f"{name}{suffix}", chosen)
        click.echo(f"wrote {directory / (name + suffix)} ({len(master.solutions)} solutions)")

"""``build-master``: logic files -> master library (the library half of TensileCreateLibrary)."""

from __future__ import annotations

from pathlib import Path

import click

from tensilekit.api import build_master_files
from tensilekit.io.master_io import WRITE_FORMATS, dump_master, dump_master_set, format_for_path, set_suffix


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
    type=click.Choice(list(WRITE_FORMATS)),
    default=None,
    help="Output format (default: from the output suffix; msgpack for directories); zlib and msgpack-indexed "
    "write .dat.zlib files as hipBLASLt's TensileCreateLibrary does.",
)
def build_master_command(logic: tuple[str, ...], output: str, lazy: bool, fmt: str | None) -> None:
    """Build the master solution library of LOGIC files or directories (no kernels, no ROCm)."""
    files = build_master_files(logic, lazy=lazy)
    target = Path(output)
    if len(files) == 1 and not lazy and not target.is_dir():
        master = next(iter(files.values()))
        if fmt == "zlib" and not target.name.endswith(".zlib"):
            target = target.with_name(target.name + ".zlib")
        dump_master(master, target, fmt)
        click.echo(f"wrote {target} ({len(master.solutions)} solutions)")
        return
    chosen = fmt or ("yaml" if format_for_path(target).value == "yaml" and target.suffix else "msgpack")
    suffix = set_suffix(chosen)
    directory = target if not target.suffix else target.parent
    # one set, swapped in at once: a lazy master never appears without its placeholder files
    for path in dump_master_set(files, directory, chosen):
        written = files.get(path.name.removesuffix(suffix))
        click.echo(f"wrote {path}" + (f" ({len(written.solutions)} solutions)" if written is not None else ""))

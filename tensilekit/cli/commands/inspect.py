"""``info``, ``validate`` and ``convert``: thin commands over tensilekit.inspect and the io API."""

from __future__ import annotations

from pathlib import Path

import click

from tensilekit.cli.render import print_json, render_info, render_validation, stdout_console
from tensilekit.data import sample_library_path
from tensilekit.inspect import describe_paths, validate_paths
from tensilekit.io.master_io import WRITE_FORMATS, dump_master, load_master


@click.command("info")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--sample", is_flag=True, help="Describe the sample master library shipped with tensilekit.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def info_command(paths: tuple[str, ...], sample: bool, as_json: bool) -> None:
    """Summarise logic files and master libraries (a directory file by file)."""
    if sample:
        paths = paths + (str(sample_library_path()),)
    if not paths:
        raise click.UsageError("give PATH... or --sample")
    infos = describe_paths(paths)
    if as_json:
        print_json(infos)
    else:
        render_info(infos, stdout_console())


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def validate_command(ctx: click.Context, paths: tuple[str, ...], as_json: bool) -> None:
    """Schema and semantic checks; exits 1 when any file has an error."""
    results = validate_paths(paths)
    if as_json:
        print_json(results)
    else:
        render_validation(results, stdout_console())
    if not all(result.ok for result in results):
        ctx.exit(1)


@click.command("convert")
@click.argument("source", type=click.Path())
@click.argument("target", type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(WRITE_FORMATS)),
    default=None,
    help="Output format (default: from TARGET's suffix: .dat = msgpack, .dat.zlib = zlib-compressed msgpack); "
    "msgpack-indexed = format_version 2 (zlib-compressed when TARGET ends in .zlib).",
)
def convert_command(source: str, target: str, fmt: str | None) -> None:
    """Convert a master library between YAML, msgpack, .dat.zlib and indexed msgpack (written atomically)."""
    master = load_master(source)
    dump_master(master, Path(target), fmt)
    click.echo(f"wrote {target} ({len(master.solutions)} solutions)")

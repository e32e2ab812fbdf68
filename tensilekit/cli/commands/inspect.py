"""``info``, ``validate`` and ``convert``: thin commands over tensilekit.inspect and the io API.

Folders are read file by file: each file's result is printed as soon as it is read (on a
terminal a progress bar runs on stderr meanwhile; ``info`` draws its table at the end there).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from tensilekit.cli.inputs import MASTER, library_files, require_kind
from tensilekit.cli.options import UserPath, check_output_path, subtree_options
from tensilekit.cli.output import stdout_console, stdout_is_terminal
from tensilekit.cli.phases import phases

_MASTER_SUFFIXES = {
    ".yaml": "YAML", ".yml": "YAML", ".dat": "msgpack", ".msgpack": "msgpack", ".zlib": "zlib msgpack (.dat.zlib)",
    ".yaml.gz": "gzip YAML", ".yml.gz": "gzip YAML", ".dat.gz": "gzip msgpack",
}  # fmt: skip
# the write formats (tensilekit.io.master_io.WRITE_FORMATS), spelled out so `--help` imports no reader
_WRITE_FORMATS = ("yaml", "msgpack", "zlib", "msgpack-indexed")


@click.command("info")
@click.argument("paths", nargs=-1, type=UserPath())
@click.option("--sample", is_flag=True, help="Describe the sample master library shipped with tensilekit.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--solution",
    "solution",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Name solution N of the library PATH (kernel, macro tile, MI, problem type, where the tree selects it).",
)
@subtree_options
def info_command(
    paths: tuple[str, ...],
    sample: bool,
    as_json: bool,
    solution: int | None,
    subtree: str | None,
    asic_revision: int | None,
) -> None:
    """Summarise logic files and master libraries (a directory file by file)."""
    from tensilekit.cli.render import INFO_COLUMNS, info_row, print_json, render_info
    from tensilekit.data import sample_library_path
    from tensilekit.inspect import describe

    if sample:
        paths = paths + (str(sample_library_path()),)
    if not paths:
        raise click.UsageError("give PATH... or --sample")
    if solution is not None:
        _describe_solution(paths, solution, as_json)
        return
    files = library_files(paths, subtree=subtree, asic_revision=asic_revision)
    stream_rows = len(files) > 1 and not as_json and not stdout_is_terminal()
    if stream_rows:
        click.echo("\t".join(INFO_COLUMNS))
    infos = []
    with phases("reading", len(files) if len(files) > 1 else None) as shown:
        for number, path in enumerate(files, 1):
            shown.stage(f"{_place(number, len(files))}reading {Path(path).name}")
            info = describe(path)
            infos.append(info)
            for warning in info.warnings:  # a table row would hide it in a many-file listing
                click.echo(f"warning: {path}: {warning}", err=True)
            if stream_rows:  # a pipe gets each file's row as soon as it is read
                click.echo("\t".join(info_row(info)))
            shown.advance(1)
    if as_json:
        print_json(infos)
    elif not stream_rows:
        render_info(infos, stdout_console())


def _describe_solution(paths: tuple[str, ...], index: int, as_json: bool) -> None:
    from tensilekit.model.labels import matrix_instruction_in_name
    from tensilekit.recorded import describe_solution

    if len(paths) != 1:
        raise click.UsageError("--solution N names a solution of one library: give one PATH")
    with phases(f"reading {Path(paths[0]).name}"):  # a 90 MB master: seconds
        found = describe_solution(paths[0], index)
    if as_json:
        click.echo(json.dumps(found.to_json()))
        return
    # MT0xMT1 and depth U, as the kernel name's MT128x64x128 and select's rows read (the master's
    # macroTile is [MT0, MT1, 1]: its 1 beside a name's x128 read as a contradiction)
    tile = "x".join(map(str, found.macro_tile[:2])) if found.macro_tile else "?"
    if found.depth_u is not None:
        tile += f", depth U {found.depth_u}"
    instruction = "x".join(map(str, found.matrix_instruction)) if found.matrix_instruction else None
    instruction = instruction or matrix_instruction_in_name(found.name or found.kernel) or "-"
    lines = [
        f"solution {found.index}",
        f"  kernel:       {found.kernel or '?'}",
        f"  name:         {found.name or '?'}",
        f"  macro tile:   {tile}",
        f"  MI:           {instruction}",
        f"  problem type: {found.problem_type}",
        f"  file:         {found.file or 'the master itself'}",
        *(f"  selected at:  {place}" for place in found.places[:10]),
    ]
    if len(found.places) > 10:
        lines.append(f"  ... and {len(found.places) - 10} more places")
    if not found.places:
        lines.append("  selected at:  nowhere (no tree node refers to it)")
    click.echo("\n".join(lines))


def _place(number: int, total: int) -> str:
    """A phase label's prefix saying which file of several it is about (``3/12 ``)."""
    return f"{number}/{total} " if total > 1 else ""


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=UserPath())
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@subtree_options
@click.pass_context
def validate_command(
    ctx: click.Context, paths: tuple[str, ...], as_json: bool, subtree: str | None, asic_revision: int | None
) -> None:
    """Schema and semantic checks; exits 1 when any file has an error."""
    from tensilekit.cli.render import print_json, render_validation_file, render_validation_total
    from tensilekit.inspect import validate_file

    files = library_files(paths, subtree=subtree, asic_revision=asic_revision)
    console = stdout_console()
    results = []
    with phases("validating", len(files) if len(files) > 1 else None) as shown:
        for number, path in enumerate(files, 1):
            place = _place(number, len(files))

            def stage(label: str, place: str = place) -> None:
                shown.stage(place + label)

            result = validate_file(path, stage=stage)
            results.append(result)
            if not as_json:
                render_validation_file(result, console)
            shown.advance(1)
    if as_json:
        print_json(results)
    else:
        render_validation_total(results, console)
    if not all(result.ok for result in results):
        ctx.exit(1)


@click.command("convert")
@click.argument("source", type=UserPath())
@click.argument("target", type=UserPath())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_WRITE_FORMATS),
    default=None,
    help="Output format (default: from TARGET's suffix: .yaml/.yml YAML, .dat/.msgpack msgpack, .dat.zlib "
    "zlib-compressed msgpack, +.gz); msgpack-indexed = format_version 2 (zlib-compressed when TARGET ends in .zlib).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def convert_command(source: str, target: str, fmt: str | None, as_json: bool) -> None:
    """Convert a master library between YAML, msgpack, .dat.zlib and indexed msgpack (written atomically)."""
    from tensilekit.errors import error_context
    from tensilekit.io.master_io import dump_master, format_for_path, load_master

    target_path = Path(target)
    check_output_path(target_path, suffixes=_MASTER_SUFFIXES, option="TARGET")
    by_suffix = "zlib" if target_path.suffix.lower() == ".zlib" else format_for_path(target_path).value
    # msgpack-indexed and zlib are msgpack on disk (.dat or .dat.zlib); only YAML vs msgpack can contradict
    binary = {"msgpack", "zlib", "msgpack-indexed"}
    if fmt is not None and fmt != by_suffix and not (fmt in binary and by_suffix in binary):
        raise click.BadParameter(
            f"--format {fmt} contradicts the suffix of {target} ({by_suffix})", param_hint="--format"
        )
    require_kind([source], MASTER, "convert")
    with phases(f"reading {Path(source).name}") as shown:
        master = load_master(source)
        shown.stage(f"writing {target_path.name}")
        with error_context(source):  # a solution the target format cannot hold is located in SOURCE
            dump_master(master, target_path, fmt)
    written_format = fmt or by_suffix
    if as_json:
        click.echo(json.dumps({"output": target, "format": written_format, "solutions": len(master.solutions)}))
    else:
        click.echo(f"wrote {target} ({len(master.solutions)} solutions)")

"""``build-master``: logic files -> master library (the library half of TensileCreateLibrary)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tensilekit.cli.inputs import LOGIC, require_kind, require_readable_folder
from tensilekit.cli.options import UserPath, check_output_path, hipblaslt_version_choice
from tensilekit.cli.phases import phases

if TYPE_CHECKING:
    from tensilekit.model.library import MasterLibrary

# the write formats (tensilekit.io.master_io.WRITE_FORMATS), spelled out so `--help` imports no reader
_WRITE_FORMATS = ("yaml", "msgpack", "zlib", "msgpack-indexed")
_OUTPUT_SUFFIXES = {".yaml": "YAML", ".yml": "YAML", ".dat": "msgpack", ".msgpack": "msgpack", ".zlib": "zlib"}


@click.command("build-master")
@click.argument("logic", nargs=-1, required=True, type=UserPath())
@click.option(
    "-o",
    "--output",
    required=True,
    type=UserPath(),
    help="TensileLibrary.yaml or .dat; with several architectures or --lazy, a directory.",
)
@click.option("--lazy", is_flag=True, help="Lazy loading: TensileLibrary_lazy_<arch> plus one file per placeholder.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_WRITE_FORMATS),
    default=None,
    help="Output format (default: from the output suffix; msgpack for directories); zlib and msgpack-indexed "
    "write .dat.zlib files as hipBLASLt's TensileCreateLibrary does.",
)
@click.option(
    "--dialect",
    type=click.Choice(["tensile", "tensilelite"]),
    default=None,
    help="Logic dialect: tensile (rocBLAS) or tensilelite (hipBLASLt); default: detected from the files.",
)
@click.option(
    "--custom-kernels",
    type=UserPath(file_okay=False),
    default=None,
    help="hipBLASLt's tensilelite/Tensile/CustomKernels directory (logic files with custom kernels need it).",
)
@hipblaslt_version_choice(
    "tensilelite: build as this hipBLASLt's TensileCreateLibrary (default: 5.x when a file says "
    "MinimumRequiredVersion 5 or later, else 0.12.1 when the files' problem types name its fields such as "
    "SwizzleTensorA, else 7d9fb683)."
)
@click.option(
    "--experimental",
    is_flag=True,
    help="tensilelite, hipBLASLt 0.12.1 and 5.x: also read logic files in folders named 'experimental', as "
    "TensileCreateLibrary --experimental does (without it they are left out; 7d9fb683 reads them all).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the files written as JSON.")
def build_master_command(
    logic: tuple[str, ...], output: str, lazy: bool, fmt: str | None, dialect: str | None, custom_kernels: str | None,
    hipblaslt_version: str | None, experimental: bool, as_json: bool,
) -> None:  # fmt: skip
    """Build the master solution library of LOGIC files or directories (no kernels, no ROCm)."""
    from tensilekit.api import build_master_files
    from tensilekit.model.library import PredictionNode

    target = Path(output)
    check_output_path(target)
    for path in logic:
        require_readable_folder(path, suffixes=(".yaml", ".yml", ".yaml.zst"))
    require_kind(logic, LOGIC, "build-master")
    left_out: list[str] = []
    with phases("reading the logic files") as shown:
        files = build_master_files(
            logic, lazy=lazy, dialect=dialect, custom_kernels=custom_kernels, stage=shown.stage,
            hipblaslt_version=hipblaslt_version, experimental=experimental, left_out=left_out,
        )  # fmt: skip
        shown.stage(f"writing {target.name}")
        written, removed = _write(files, target, fmt, lazy)
    if any(isinstance(node, PredictionNode) for library in files.values() for _, node in library.iter_nodes()):
        # the records are hipBLASLt 7d9fb683's; the 2026 runtime that ranks Prediction pools also
        # reads sizeMapping fields (CUOccupancy, …) they lack (docs/io.md)
        click.echo(
            "note: this master holds a Prediction pool; its solution records are hipBLASLt 7d9fb683's, which the "
            "2026 runtime that ranks such pools will not load (missing sizeMapping fields such as CUOccupancy): "
            "use it with tensilekit's select, info, lint and diff",
            err=True,
        )
    _warn_unloadable_msgpack(written, fmt)
    if left_out:
        click.echo(
            f"note: left out {len(left_out)} logic file(s) in folders named 'experimental' ({left_out[0]}"
            + (", …" if len(left_out) > 1 else "")
            + "): hipBLASLt 0.12.1's TensileCreateLibrary reads them only with --experimental",
            err=True,
        )
    for stale in removed:
        click.echo(f"removed stale {stale} (not part of this build)", err=True)
    for written_path, solutions, _ in written:
        if as_json:
            click.echo(json.dumps({"output": str(written_path), "solutions": solutions}))
        else:
            click.echo(f"wrote {written_path}" + (f" ({solutions} solutions)" if solutions is not None else ""))


def _warn_unloadable_msgpack(written: list[tuple[Path, int | None, MasterLibrary | None]], fmt: str | None) -> None:
    """Say which msgpack files just written the hipBLASLt runtimes cannot load (AMD's build writes
    the same bytes: the rule is :func:`tensilekit.model.checks.msgpack_load_findings`)."""
    from tensilekit.io.detect import Format
    from tensilekit.io.master_io import format_for_path
    from tensilekit.model.checks import msgpack_load_findings

    for path, _, master in written:
        as_msgpack = fmt in ("msgpack", "zlib", "msgpack-indexed") or (
            fmt is None and format_for_path(path) is Format.MSGPACK
        )
        if master is not None and as_msgpack:
            for finding in msgpack_load_findings(master):
                click.echo(f"warning: {path}: {finding.message}", err=True)


def _write(
    files: dict[str, MasterLibrary], target: Path, fmt: str | None, lazy: bool
) -> tuple[list[tuple[Path, int | None, MasterLibrary | None]], list[Path]]:
    """Write the built masters (one file, or one set swapped in at once); returns the files
    written with their solution counts and masters, and the previous build's files removed."""
    from tensilekit.io.master_io import catalog_siblings, dump_master, dump_master_set, format_for_path, set_suffix

    written: list[tuple[Path, int | None, MasterLibrary | None]] = []
    removed: list[Path] = []  # the previous build's library files this one does not write again
    if len(files) == 1 and not lazy and not target.is_dir():
        if fmt is None:  # the format follows the suffix, or is an error
            check_output_path(target, suffixes=_OUTPUT_SUFFIXES)
        master = next(iter(files.values()))
        if fmt == "zlib" and not target.name.endswith(".zlib"):
            target = target.with_name(target.name + ".zlib")
        dump_master(master, target, fmt)
        written.append((target, len(master.solutions), master))
        # X.dat and X.dat.zlib are one catalog to the runtime (.zlib probed first): the other
        # spelling is the previous build's, removed after the new file is in place
        for sibling in catalog_siblings(target):
            sibling.unlink(missing_ok=True)
            removed.append(sibling)
    else:
        chosen = fmt or ("yaml" if format_for_path(target).value == "yaml" and target.suffix else "msgpack")
        suffix = set_suffix(chosen)
        directory = target if not target.suffix else target.parent
        _refuse_shadowing_subtrees(directory, files)
        # one set, swapped in at once: a lazy master never appears without its placeholder files
        for set_file in dump_master_set(files, directory, chosen, removed=removed):
            master_written = files.get(set_file.name.removesuffix(suffix))
            written.append(
                (set_file, len(master_written.solutions) if master_written is not None else None, master_written)
            )
    return written, removed


def _refuse_shadowing_subtrees(directory: Path, files: Mapping[str, object]) -> None:
    """A per-architecture subtree (``gfx942/``) holding a master for an architecture this build
    writes flat would be loaded by the runtime instead of the new masters (installed_library
    ``revisioned_arch_name``): the build owns the folder's library files, but does not remove a
    whole tree another layout wrote; it refuses and lists them (exit 3)."""
    from tensilekit.errors import Location, TensilekitError
    from tensilekit.io.installed_library import find_masters, master_arch

    if not directory.is_dir():
        return
    built = {arch for arch in (master_arch(name) for name in files) if arch is not None}
    shadowing = sorted({str(m.path) for m in find_masters(directory) if m.label != "." and m.arch in built})
    if shadowing:
        raise TensilekitError(
            "per-architecture subtrees hold masters the runtime would load instead of this build's: "
            + ", ".join(shadowing)
            + "; remove them or build into the subtree (-o DIR/<arch>)",
            Location(file=str(directory)),
        )

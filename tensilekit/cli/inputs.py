"""One rule per input kind for every command: folders with nothing readable, wrong-kind files,
and the library a selection command opens on its device (:func:`open_for_device`).

* A folder (or list of paths) with no library file tensilekit can read is exit 3 for every
  command, with what the folder does hold.
* A file of the wrong kind names the kind found and the kind the command expects
  (``prune`` on a master ``.dat``, ``merge`` on a master, ``convert`` on a logic file).
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tensilekit.errors import InputNotFound, Location, UnsupportedFormat

if TYPE_CHECKING:
    from tensilekit.library import Library

LIBRARY_SUFFIXES = (".yaml", ".yml", ".dat", ".yaml.gz", ".yml.gz", ".dat.gz", ".dat.zlib", ".yaml.zst")
"""What ``validate``/``info``/``lint`` read inside folders (tensilekit.inspect's list)."""

_SNIFF_BYTES = 1 << 16
_MASTER_KEY = re.compile(rb"^(library|solutions):", re.MULTILINE)
_LOGIC_START = re.compile(rb"^(- |-\n|Solutions:|MinimumRequiredVersion:)", re.MULTILINE)

MASTER = "a master solution library"
LOGIC = "a library-logic file"


def library_files(
    paths: Iterable[str | Path],
    *,
    suffixes: tuple[str, ...] = LIBRARY_SUFFIXES,
    subtree: str | None = None,
    asic_revision: int | None = None,
) -> list[Path]:
    """Files named directly and library files inside folders (recursive, sorted). With
    ``subtree``/``asic_revision`` an installed library folder gives only the files of the trees
    they choose (``InstalledLibrary.folders``), as the runtime reads them.

    Raises:
        InputNotFound: a path does not exist, or nothing readable was found (exit 3), saying what
            the folders hold instead.
        UnknownSubtree: see ``InstalledLibrary.choose`` (exit 2).
    """
    found: list[Path] = []
    others = 0
    given = [Path(raw) for raw in paths]
    if (subtree is not None or asic_revision is not None) and not any(path.is_dir() for path in given):
        from tensilekit.io.installed_library import UnknownSubtree

        raise UnknownSubtree.not_installed(", ".join(map(str, given)))
    for path in given:
        if path.is_dir():
            for child in _folder_files(path, subtree, asic_revision):
                if child.is_file():
                    if child.name.lower().endswith(suffixes):
                        found.append(child)
                    else:
                        others += 1
        elif path.exists() or path.is_symlink():  # a symlink loop: the reader says so
            found.append(path)
        else:
            raise InputNotFound("no such file or directory", Location(file=str(path)))
    if not found:
        held = f"{others} other file(s)" if others else "nothing"
        raise InputNotFound(
            f"no library file ({', '.join(suffixes)}) here; the folder holds {held}",
            Location(file=", ".join(str(path) for path in given)),
        )
    return found


def _folder_files(folder: Path, subtree: str | None, asic_revision: int | None) -> list[Path]:
    if subtree is None and asic_revision is None:
        return sorted(folder.rglob("*"))
    from tensilekit.io.installed_library import InstalledLibrary, UnknownSubtree, is_installed_library

    if not is_installed_library(folder):
        raise UnknownSubtree.not_installed(folder)
    chosen = InstalledLibrary(folder).folders(subtree, asic_revision=asic_revision)
    return sorted(child for tree in chosen for child in tree.iterdir())


def sniff_kind(path: Path) -> str | None:
    """``MASTER`` or ``LOGIC`` from the first bytes of a file (None when it cannot tell)."""
    with path.open("rb") as stream:
        head = stream.read(_SNIFF_BYTES)
    if head[:2] == b"\x1f\x8b":
        try:
            head = gzip.GzipFile(fileobj=__import__("io").BytesIO(head)).read(_SNIFF_BYTES)
        except (OSError, EOFError, zlib.error):  # damaged gzip: the reader says where
            return None
    if not head:
        return None
    first = head[0]
    if (
        0x80 <= first <= 0x8F
        or first in (0xDE, 0xDF)
        or (len(head) > 1 and first == 0x78 and head[1] in (0x01, 0x5E, 0x9C, 0xDA))
    ):
        return MASTER  # msgpack map (or zlib-wrapped msgpack): only masters are written as msgpack
    if _MASTER_KEY.search(head):
        return MASTER
    if _LOGIC_START.search(head):
        return LOGIC
    return None


def _format_label(path: Path, kind: str) -> str:
    if kind == MASTER and not path.name.lower().endswith((".yaml", ".yml", ".yaml.gz", ".yml.gz")):
        return f"{kind} (msgpack)"
    return kind


def require_kind(paths: Iterable[str | Path], expected: str, command: str) -> None:
    """Each file among ``paths`` (folders are left to the command) is of the ``expected`` kind.

    Raises:
        UnsupportedFormat: a file of the other kind (exit 3), naming both kinds.
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            continue
        found = sniff_kind(path)
        if found is not None and found != expected:
            reads = "library-logic files (.yaml)" if expected == LOGIC else "master solution libraries"
            raise UnsupportedFormat(
                f"this is {_format_label(path, found)}; {command} reads {reads}", Location(file=str(path))
            )


def require_readable_folder(path: str | Path, *, suffixes: tuple[str, ...] = LIBRARY_SUFFIXES) -> None:
    """A folder argument holds at least one library file (files pass through).

    Raises:
        InputNotFound: as :func:`library_files`.
    """
    if Path(path).is_dir():
        library_files([path], suffixes=suffixes)


def open_for_device(
    library_path: Path | None, *, arch: str | None, cu_count: int | None = None, is_apu: bool = False,
    pci_chip_id: int | None = None, runtime_name: str | None = None, workspace_size: int | None = None,
    subtree: str | None = None, asic_revision: int | None = None, required_for: str | None = "",
    note: bool = True, hipblaslt_version: str | None = None, solution_selection_method: int | None = None,
) -> Library:  # fmt: skip
    """Open the library of ``--library`` (the sample when None, said on stderr) on the device the
    options name: ``--arch`` checked against the library's processors, else the library's only one
    (said on stderr when ``note``). ``required_for`` None: a device may be left out (query lines
    name their own).

    Raises:
        click.UsageError: no ``--arch`` and the library serves several processors (exit 2).
    """
    import click

    from tensilekit.cli.options import check_arch
    from tensilekit.cli.output import progress_bar
    from tensilekit.data import sample_library_path
    from tensilekit.library import DEFAULT, ArchRequired, open_library

    if library_path is None:
        library_path = sample_library_path()
        click.echo(f"note: no --library given; using tensilekit's sample library ({library_path.name})", err=True)
    with progress_bar(f"reading {library_path.name}", None):
        library = open_library(
            library_path, runtime=runtime_name, workspace_size=DEFAULT if workspace_size is None else workspace_size,
            subtree=subtree, asic_revision=asic_revision, hipblaslt_version=hipblaslt_version,
            solution_selection_method=solution_selection_method,
        )  # fmt: skip
    checked = check_arch(arch, library.processors) if arch is not None else None
    try:
        library = library.with_device(
            checked, cu_count, is_apu=is_apu or None, pci_chip_id=pci_chip_id, required_for=required_for
        )
    except ArchRequired as error:
        raise click.UsageError(error.message) from None
    if library.arch_defaulted and note and required_for is not None and library.device is not None:
        click.echo(f"note: no --arch given; using the library's only architecture, {library.device.arch}", err=True)
    return library


__all__ = [
    "LIBRARY_SUFFIXES",
    "LOGIC",
    "MASTER",
    "library_files",
    "open_for_device",
    "require_kind",
    "require_readable_folder",
    "sniff_kind",
]

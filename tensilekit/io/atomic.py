"""All-or-nothing writes: one file (temp file + rename) or a set of files (staged folder + swap).

A reader, or a crash even by SIGKILL, sees the old output or the complete new one, never a
half-written file nor (for a set, such as a merge into a folder or a lazy master with its
placeholder files) a mix of old and new files; this also makes ``OUTPUT == INPUT`` safe.

* Temp files and staged folders are siblings of the target named ``.<name>.<pid>.<random>.tmp``:
  hidden, ``.tmp``, so no output glob (``*.yaml``, ``*.dat``) ever matches them. One left behind
  by a killed process is removed by the next write there (only when its process is gone).
* New files get the mode the umask gives (``open(..., 0o666)``: the process umask is never
  changed, other threads may be creating files); a replaced file keeps its mode.
* A symlinked output is written through: the file it points to is replaced, the link stays.
* A folder is swapped in with one ``renameat2(RENAME_EXCHANGE)`` (Linux); where that is missing
  the old folder is renamed aside first (a kill between the two renames leaves the old set aside,
  restored by the next write).

A write the system refuses (disk full, quota, read-only file system, permission denied) raises
:class:`~tensilekit.errors.OutputNotWritable` naming the output path, after the temporary is
removed: the old output (if any) is untouched and nothing of ours is left behind.

``TENSILEKIT_KILL_AT=<point>[#n]`` makes the process SIGKILL itself at the n-th passage of an
injection point (tests only: deterministic kill tests, ``tests/unit/io/test_atomic_writes.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import re
import secrets
import shutil
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensilekit.errors import OutputNotWritable

_KILL_AT = os.environ.get("TENSILEKIT_KILL_AT")
_passages: dict[str, int] = {}


def checkpoint(point: str) -> None:
    """An injection point for kill tests; does nothing unless ``TENSILEKIT_KILL_AT`` names it."""
    if _KILL_AT is None:
        return
    label, _, nth = _KILL_AT.partition("#")
    if label != point:
        return
    _passages[point] = _passages.get(point, 0) + 1
    if _passages[point] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


# -- a refused write ----------------------------------------------------------------------------

# errno values that mean "this output cannot be written here", whatever tensilekit does
OUTPUT_ERRNOS = frozenset(
    code
    for code in (
        errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, getattr(errno, "EDQUOT", None),
    )
    if code is not None
)  # fmt: skip


def _about(error: OSError, target: Path) -> bool:
    """Whether ``error`` concerns the output at ``target``: no file named (a write or fsync on
    the open temporary), or a path in its folder (our temporary, staged files) or above it (a
    folder created on the way) — not an input read inside the ``with`` block."""
    if error.filename is None:
        return True
    named = os.path.abspath(os.fsdecode(error.filename))
    folder = os.path.abspath(target.parent)
    return named == folder or named.startswith(folder + os.sep) or folder.startswith(named.rstrip(os.sep) + os.sep)


def output_not_writable(error: OSError, path: str | os.PathLike[str]) -> OutputNotWritable:
    """The :class:`~tensilekit.errors.OutputNotWritable` for a refused write of ``path``."""
    from tensilekit.errors import Location, OutputNotWritable  # noqa: F811 - the runtime import

    reason = os.strerror(error.errno) if error.errno is not None else str(error)
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1), errno.EFBIG):
        advice = "free some space or write elsewhere"
    elif error.errno == errno.EROFS:
        advice = "write elsewhere"
    else:
        advice = "check the folder's permissions or write elsewhere"
    return OutputNotWritable(
        f"cannot write the output: {reason.lower()}; nothing was written and an existing file is unchanged ({advice})",
        Location(file=os.fspath(path)),
        errno=error.errno,
    )


@contextlib.contextmanager
def output_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn a refused write of ``path`` (:data:`OUTPUT_ERRNOS`) into
    :class:`~tensilekit.errors.OutputNotWritable`; other errors pass unchanged."""
    try:
        yield
    except OSError as error:
        if error.errno in OUTPUT_ERRNOS and _about(error, Path(os.path.abspath(path))):
            raise output_not_writable(error, path) from error
        raise


# -- names of our temporaries ---------------------------------------------------------------------


def _temp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


_OURS = re.compile(r"\..+\.(\d+)\.[0-9a-f]{8}(?:\.old)?\.tmp")


def _owner_is_gone(name: str) -> bool:
    match = _OURS.fullmatch(name)
    if match is None:
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # alive (someone else's), or no such pid at all on this system
    return False


# folder -> its mtime after this process last scanned or wrote there: a folder nobody else has
# touched since is not scanned again (many writes into one big folder stay linear).
_quiet_since: dict[str, int] = {}


def _folder_mtime(folder: Path) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def remove_leftovers(target: str | os.PathLike[str]) -> list[str]:
    """Remove the temp files and staged folders killed writers left in ``target``'s folder;
    returns their names. Only ours (the naming above) and only when their process is gone."""
    folder = Path(target).parent
    removed: list[str] = []
    mtime = _folder_mtime(folder)
    if mtime is None or _quiet_since.get(str(folder)) == mtime:
        return removed
    try:
        entries = [entry for entry in os.scandir(folder) if entry.name.endswith(".tmp") and entry.name[:1] == "."]
    except OSError:
        return removed
    for entry in entries:
        if not _owner_is_gone(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(entry.name)
    _quiet_since[str(folder)] = _folder_mtime(folder) or 0
    return removed


def _still_quiet(folder: Path, before: int | None) -> None:
    """After our own write: the folder stays 'quiet' if nobody else changed it in between."""
    if before is not None and _quiet_since.get(str(folder)) == before:
        _quiet_since[str(folder)] = _folder_mtime(folder) or 0


def _through_symlink(path: Path) -> Path:
    """The file a symlinked output points to (written through, the link kept); else ``path``."""
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


# -- one file ------------------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; rename over ``path`` on success.

    Raises :class:`~tensilekit.errors.OutputNotWritable` when the system refuses the write."""
    target = _through_symlink(Path(path))
    with output_errors(path):
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target)
        quiet = _quiet_since.get(str(target.parent))
        temp_name = _temp_name(target)
        # O_EXCL with mode 0o666: the kernel applies the umask, nothing here reads or changes it
        descriptor = os.open(temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            checkpoint("temp-created")
            text_mode = "b" not in mode
            with os.fdopen(
                descriptor, mode, encoding="utf-8" if text_mode else None, newline="" if text_mode else None
            ) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            checkpoint("temp-written")
            with contextlib.suppress(OSError):
                os.chmod(temp_name, stat.S_IMODE(target.stat().st_mode))  # a replaced file keeps its mode
            os.replace(temp_name, target)
            _still_quiet(target.parent, quiet)
            checkpoint("renamed")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, newlines untouched) to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


# -- a set of files ------------------------------------------------------------------------------


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2``); False where the system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def _fsync_tree(folder: Path) -> None:
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                descriptor = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, destination, follow_symlinks=False)


def _carry_over(old: Path, staged: Path, owns: Callable[[str], bool] | None = None) -> None:
    """Every entry of the old folder the writer did not replace, hard-linked (or copied) in,
    except those ``owns`` claims: the writer's own kind of file it did not write again is stale."""
    for entry in os.scandir(old):
        if _OURS.fullmatch(entry.name):
            continue  # another writer's temporary: not part of the set
        if owns is not None and owns(entry.name) and not entry.is_dir(follow_symlinks=False):
            continue  # a file of the set's kind that this write did not produce: stale, it goes
        destination = staged / entry.name
        if destination.exists() or destination.is_symlink():
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), destination)
        elif entry.is_dir():
            shutil.copytree(entry.path, destination, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(entry.path, str(destination))


def _restore_set_aside(target: Path) -> None:
    # the fallback swap was killed between its two renames: put the old folder back
    if target.exists() or target.is_symlink():
        return
    prefix = f".{target.name}."
    for entry in os.scandir(target.parent):
        if entry.name.startswith(prefix) and entry.name.endswith(".old.tmp") and _owner_is_gone(entry.name):
            os.rename(entry.path, target)
            return


@contextlib.contextmanager
def staged_directory(path: str | os.PathLike[str], *, owns: Callable[[str], bool] | None = None) -> Iterator[Path]:
    """Write a set of files into a staging folder, then swap it in for ``path`` all at once.

    Yields the staging folder; write the new files there with plain writes (in the order a
    reader should see them appear, for systems without the atomic swap). On success, entries
    of the existing folder that were not written are carried over (hard links), except the
    files ``owns(name)`` claims (the writer owns every file of its kind in the folder: one it did
    not write again is stale and goes with the swap); everything is fsynced and the staging
    folder replaces ``path``. On an exception nothing changes (a write the system refuses is
    :class:`~tensilekit.errors.OutputNotWritable`, the staging folder removed).
    """
    target = _through_symlink(Path(path))
    if target.exists() and not target.is_dir():
        from tensilekit.errors import Location, UnsupportedFormat

        raise UnsupportedFormat("is a file; this output is a folder of files", Location(file=str(path)))
    with output_errors(path):
        target.parent.mkdir(parents=True, exist_ok=True)
        _restore_set_aside(target)
        remove_leftovers(target)
        staged = _temp_name(target)
        os.mkdir(staged, 0o777)  # the umask applies
        try:
            checkpoint("stage-created")
            yield staged
            if target.is_dir():
                _carry_over(target, staged, owns)
                with contextlib.suppress(OSError):
                    os.chmod(staged, stat.S_IMODE(target.stat().st_mode))
            _fsync_tree(staged)
            checkpoint("stage-written")
            if not target.exists():
                os.rename(staged, target)
            elif _exchange(staged, target):
                checkpoint("swapped")
                shutil.rmtree(staged, ignore_errors=True)  # now the old folder
            else:
                aside = staged.with_name(staged.name.removesuffix(".tmp") + ".old.tmp")
                os.rename(target, aside)
                checkpoint("set-aside")
                os.rename(staged, target)
                shutil.rmtree(aside, ignore_errors=True)
            checkpoint("replaced")
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise


# -- reading a set through one generation -----------------------------------------------------


class FolderGeneration:
    """The generation of one or more folders a reader reads a set of files from.

    A writer replaces a folder's set only by swapping in a new folder (:func:`staged_directory`):
    the path then names a new directory, and the old one is renamed away and removed, never put
    back. Holding the old directory open keeps its inode alive (its number cannot be reused), so
    "the path still names the directory held open" after a read proves every open since the pin
    resolved in that one directory: no mix of old and new files. :meth:`check` raises
    :class:`~tensilekit.errors.LibraryChanged` otherwise; read the set again.
    """

    def __init__(self, folders: Iterator[Path] | list[Path] | tuple[Path, ...]) -> None:
        self._pinned: list[tuple[Path, int]] = []
        for folder in dict.fromkeys(Path(os.path.abspath(f)) for f in folders):
            with contextlib.suppress(OSError):
                self._pinned.append((folder, os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))))

    def changed(self) -> Path | None:
        """The first pinned folder whose path no longer names the directory held open, else None."""
        for folder, descriptor in self._pinned:
            held = os.fstat(descriptor)
            try:
                now = os.stat(folder)
            except OSError:
                return folder  # between the two renames of the fallback swap, or removed
            if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                return folder
        return None

    def check(self) -> None:
        """Raise :class:`~tensilekit.errors.LibraryChanged` when a pinned folder was swapped."""
        folder = self.changed()
        if folder is not None:
            from tensilekit.errors import LibraryChanged, Location

            raise LibraryChanged(
                "the library folder was rewritten (a new build swapped in) while it was read; what was read "
                "mixes two builds and is dropped: read it again",
                Location(file=str(folder)),
            )

    def close(self) -> None:
        for _, descriptor in self._pinned:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self._pinned = []

    def __del__(self) -> None:
        self.close()


__all__ = [
    "OUTPUT_ERRNOS",
    "FolderGeneration",
    "atomic_open",
    "checkpoint",
    "output_errors",
    "output_not_writable",
    "remove_leftovers",
    "staged_directory",
    "write_bytes_atomic",
    "write_text_atomic",
]

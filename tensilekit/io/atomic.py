"""Writes that never tear a file nor touch one the writer does not own: one file (temp file +
rename) or a set of files written into a folder (:func:`file_set`: each renamed in, the file a
reader opens first last; see its docstring for what a reader sees and which stale files go).

A reader, or a crash even by SIGKILL, sees each file old or new, never half written; this also
makes ``OUTPUT == INPUT`` safe.

* Temp files are siblings of the target named ``.<name>.<pid>.<random>.tmp``, a set's staging
  folder ``.tensilekit-set.<pid>.<random>.tmp`` inside the output folder: hidden, ``.tmp``, so no
  output glob (``*.yaml``, ``*.dat``) ever matches them. One left behind by a killed process is
  removed by the next write there (only when its process is gone).
* New files get the mode the umask gives (``open(..., 0o666)``: the process umask is never
  changed, other threads may be creating files); a replaced file keeps its mode.
* A symlinked output is written through: the file it points to is replaced, the link stays; a
  folder output is the folder its path names (``.``, ``..``, ``a/../a``, a link to a folder).

A write the system refuses (disk full, quota, read-only file system, permission denied) raises
:class:`~tensilekit.errors.OutputNotWritable` naming the output path, after the temporary is
removed: the old output (if any) is untouched and nothing of ours is left behind.

``TENSILEKIT_KILL_AT=<point>[#n]`` makes the process SIGKILL itself at the n-th passage of an
injection point (tests only: deterministic kill tests, ``tests/unit/io/test_atomic_writes.py``).
"""

from __future__ import annotations

import contextlib
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


def _process_is_gone(pid: int) -> bool:
    """Whether process ``pid`` no longer runs (this one never is)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False  # alive (someone else's), or no such pid at all on this system
    return False


def _owner_is_gone(name: str) -> bool:
    match = _OURS.fullmatch(name)
    return match is not None and _process_is_gone(int(match.group(1)))


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

# The folder's record of what tensilekit wrote there: ``{"owners": {key: [names]}, "writing": …}``.
# ``owners``: for each owner key (a command and what it writes, e.g. ``build-master gfx942``), the
# files its last run wrote: the only files a later run of that key may remove as stale.
# ``writing``: set while a set is renamed into place (the writer's pid, staging folder, names in
# order, stale names): a reader that sees it knows the set may be mixed, and whoever finds it left
# by a killed writer completes the renames (:func:`recover`).
MANIFEST = ".tensilekit-outputs.json"


_MANIFEST_LIMIT = 1 << 22  # bytes; ours lists a few hundred names, a bigger one is not ours


def _plain_name(name: object) -> bool:
    """A file name in the folder itself (a manifest never makes us touch a path outside it)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _names(value: object) -> list[str] | None:
    if not isinstance(value, list) or not all(_plain_name(name) for name in value):
        return None
    return list(value)


def _read_manifest(folder: Path) -> dict[str, Any]:
    """The folder's manifest; what is damaged or names anything outside the folder is dropped
    (an empty record: nothing is then removed as stale, nothing completed)."""
    import json

    empty: dict[str, Any] = {"owners": {}, "writing": None}
    try:
        with open(folder / MANIFEST, "rb") as handle:
            text = handle.read(_MANIFEST_LIMIT + 1)
        data = json.loads(text) if len(text) <= _MANIFEST_LIMIT else None
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict) or not isinstance(data.get("owners"), dict):
        return empty
    owners = {key: names for key, names in data["owners"].items() if isinstance(key, str) and _names(names)}
    writing = data.get("writing")
    if isinstance(writing, dict):
        parts = [_names(writing.get(field)) for field in ("names", "stale")]
        recorded = writing.get("owners")
        well_formed = (
            isinstance(writing.get("pid"), int)
            and _plain_name(writing.get("stage"))
            and _OURS.fullmatch(writing["stage"]) is not None
            and all(part is not None for part in parts)
            and isinstance(recorded, dict)
            and all(isinstance(key, str) and _names(names) is not None for key, names in recorded.items())
        )
        if not well_formed:
            writing = None
    else:
        writing = None
    return {"owners": owners, "writing": writing}


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    import json

    write_text_atomic(folder / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Serialise the commits of tensilekit writers into ``folder`` (``flock`` on the folder
    itself, so nothing is created for it): each reads and rewrites the manifest in turn."""
    import fcntl

    descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _commit(folder: Path, manifest: dict[str, Any]) -> None:
    """Rename the staged files of ``manifest["writing"]`` into ``folder`` in its order (a file
    already moved is skipped: a commit is completed as often as it is interrupted), remove the
    stale files it names, then record the new owners and clear ``writing``."""
    writing = manifest["writing"]
    staged = folder / writing["stage"]
    for name in writing["names"]:
        with contextlib.suppress(FileNotFoundError):  # moved by an earlier, interrupted commit
            os.replace(staged / name, folder / name)
        checkpoint("set-renamed")
    for name in writing["stale"]:
        stale = folder / name
        if stale.is_file() and not stale.is_symlink():
            stale.unlink(missing_ok=True)
    _fsync_folder(folder)
    written = set(writing["names"])
    for key, names in list(manifest["owners"].items()):  # a file written now is no longer another's
        kept = [name for name in names if name not in written]
        if kept:
            manifest["owners"][key] = kept
        else:
            del manifest["owners"][key]
    manifest["owners"].update(writing["owners"])
    manifest["writing"] = None
    if manifest["owners"]:
        _write_manifest(folder, manifest)
    else:  # nothing to remember (a merge, a remap): no file of ours stays in the folder
        (folder / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(staged, ignore_errors=True)


def _writer_is_gone(writing: dict[str, Any]) -> bool:
    """Whether the process that began this commit no longer runs."""
    return _process_is_gone(writing["pid"])


def recover(folder: str | os.PathLike[str]) -> bool:
    """Complete a commit a killed writer left in ``folder`` (the renames of its set, then its
    stale files); True when one was completed. Every writer into the folder calls it first, and
    every tensilekit reader of a set there (:class:`FolderGeneration`)."""
    target = Path(folder)
    writing = _read_manifest(target)["writing"] if (target / MANIFEST).is_file() else None
    if not isinstance(writing, dict) or not _writer_is_gone(writing):
        return False
    with _folder_lock(target):
        manifest = _read_manifest(target)  # again, under the lock: another may have completed it
        if not isinstance(manifest["writing"], dict) or not _writer_is_gone(manifest["writing"]):
            return False
        _commit(target, manifest)
    return True


def _owner_keys(names: list[str], owner: Callable[[str], str]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for name in names:
        keys.setdefault(owner(name), []).append(name)
    return keys


@contextlib.contextmanager
def file_set(
    path: str | os.PathLike[str],
    *,
    owner: Callable[[str], str] | None = None,
    last: Callable[[str], bool] = lambda name: False,
    shadowed: Callable[[str], list[str]] = lambda name: [],
    removed: list[Path] | None = None,
) -> Iterator[Path]:
    """Write a set of files into the folder ``path``, replacing only those files, each atomically.

    Yields a staging folder (hidden, inside ``path``): write the new files there with plain
    writes. On success every staged file is fsynced, then renamed over its name in ``path`` —
    those ``last(name)`` claims (the file a reader opens first, e.g. a lazy master, which names
    the others) after all the others. Then the files the previous run of the same owner wrote
    (``owner(name)``: a key such as ``coverage`` or ``build-master gfx942``, recorded in the
    folder's :data:`MANIFEST`; None: nothing is recorded, nothing removed as stale)
    and this run does not write again are removed, with the names
    ``shadowed(name)`` gives (``X.dat.zlib`` beside a written ``X.dat``: the runtime reads it
    first); they are appended to ``removed`` when given. No other file of the folder is read,
    moved or removed: another process's files, and
    another owner's (another architecture's library), stay. Cost: the files written, not the
    folder's size.

    What a reader sees: each file old or new, never torn; a reader that opens the ``last`` file
    after the commit sees only the new set; a tensilekit reader (:class:`FolderGeneration`) that
    read across a commit is told so (the manifest is replaced at its start and end) and reads
    again. A kill during the renames leaves a mixed set until the next tensilekit writer or reader
    of the folder completes it (:func:`recover`); a kill before them leaves the old set. On an
    exception nothing changes (a write the system refuses is
    :class:`~tensilekit.errors.OutputNotWritable`, the staging folder removed).
    """
    target = Path(os.path.realpath(path))  # "." and "..", "a/../a", a link to a folder: the folder
    if target.exists() and not target.is_dir():
        from tensilekit.errors import Location, UnsupportedFormat

        raise UnsupportedFormat("is a file; this output is a folder of files", Location(file=str(path)))
    with output_errors(path):
        target.mkdir(parents=True, exist_ok=True)
        recover(target)
        remove_leftovers(target / MANIFEST)  # staging folders of killed writers
        staged = _temp_name(target / "tensilekit-set")
        os.mkdir(staged, 0o700)
        try:
            checkpoint("stage-created")
            yield staged
            names = sorted(entry.name for entry in os.scandir(staged) if entry.is_file(follow_symlinks=False))
            names.sort(key=last)  # stable: the files read first go last
            _fsync_tree(staged)
            checkpoint("stage-written")
            with _folder_lock(target):
                manifest = _read_manifest(target)
                keys = _owner_keys(names, owner) if owner is not None else {}
                written = set(names)
                stale = sorted(
                    {
                        *(name for key in keys for name in manifest["owners"].get(key, []) if name not in written),
                        *(other for name in names for other in shadowed(name) if other not in written),
                    }
                )
                manifest["writing"] = {
                    "pid": os.getpid(),
                    "stage": staged.name,
                    "names": names,
                    "stale": stale,
                    "owners": keys,
                }
                _write_manifest(target, manifest)
                checkpoint("set-committing")
                _commit(target, manifest)
            if removed is not None:
                removed.extend(target / name for name in stale)
            checkpoint("replaced")
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise


def _fsync_tree(folder: Path) -> None:
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                descriptor = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)


# -- reading a set through one generation -----------------------------------------------------


class FolderGeneration:
    """The generation of one or more folders a reader reads a set of files from.

    A writer replaces files of a folder's set one by one (:func:`file_set`), announcing the
    commit by replacing the folder's :data:`MANIFEST` at its start (``writing`` set) and again at
    its end. Pinning the manifest's inode (held open, so it cannot be reused) and the folder's
    tells whether a read spans a commit: :meth:`check` raises
    :class:`~tensilekit.errors.LibraryChanged` when the manifest or the folder was replaced
    since the pin, or a commit was under way at the pin; read the set again. (A folder swapped
    for another, as tensilekit before 0.x did and a user's ``mv`` does, is told the same way.)
    """

    def __init__(self, folders: Iterator[Path] | list[Path] | tuple[Path, ...]) -> None:
        self._pinned: list[tuple[Path, int, int | None, bool]] = []
        for folder in dict.fromkeys(Path(os.path.abspath(f)) for f in folders):
            with contextlib.suppress(OSError):
                descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
                with contextlib.suppress(OSError):
                    recover(folder)  # a commit a killed writer left half done: completed first
                manifest, busy = self._open_manifest(folder)
                self._pinned.append((folder, descriptor, manifest, busy))

    @staticmethod
    def _open_manifest(folder: Path) -> tuple[int | None, bool]:
        try:
            descriptor = os.open(folder / MANIFEST, os.O_RDONLY)
        except OSError:
            return None, False
        import json

        try:
            with os.fdopen(os.dup(descriptor), encoding="utf-8") as handle:
                writing = json.load(handle).get("writing")
        except (OSError, ValueError, AttributeError):
            writing = None
        return descriptor, writing is not None

    def changed(self) -> Path | None:
        """The first pinned folder replaced, or whose set was (or was being) rewritten since the pin."""
        for folder, descriptor, manifest, busy in self._pinned:
            held = os.fstat(descriptor)
            try:
                now = os.stat(folder)
            except OSError:
                return folder  # removed or renamed away
            if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino) or busy:
                return folder
            try:
                current: tuple[int, int] | None = _identity(os.stat(folder / MANIFEST))
            except OSError:
                current = None
            if current != (None if manifest is None else _identity(os.fstat(manifest))):
                return folder
        return None

    def check(self) -> None:
        """Raise :class:`~tensilekit.errors.LibraryChanged` when a pinned folder's set was rewritten."""
        folder = self.changed()
        if folder is not None:
            from tensilekit.errors import LibraryChanged, Location

            raise LibraryChanged(
                "the library folder was rewritten (a new build written in) while it was read; what was read "
                "may mix two builds and is dropped: read it again",
                Location(file=str(folder)),
            )

    def close(self) -> None:
        for _, descriptor, manifest, _ in self._pinned:
            for held in (descriptor, manifest):
                if held is not None:
                    with contextlib.suppress(OSError):
                        os.close(held)
        self._pinned = []

    def __del__(self) -> None:
        self.close()


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


__all__ = [
    "OUTPUT_ERRNOS",
    "MANIFEST",
    "FolderGeneration",
    "atomic_open",
    "checkpoint",
    "output_errors",
    "output_not_writable",
    "file_set",
    "recover",
    "remove_leftovers",
    "write_bytes_atomic",
    "write_text_atomic",
]

"""The filesystem edge of merge, diff and prune: pairing files, loading, atomic writing.

This is the only module of :mod:`tensilekit.merge` that touches files (through
:mod:`tensilekit.io`); :mod:`~tensilekit.merge.merge`, :mod:`~tensilekit.merge.diff` and
:mod:`~tensilekit.merge.prune` stay pure.

Directory merges follow AMD's ``avoidRegressions`` (T:372-408): files are paired by basename,
non-recursively, keeping names whose extension is ``.yaml`` in any case; an incremental file
without an original is dropped (unless ``add_new``, or, by default, when tensilelite 5.x's merge.py
merges it: :func:`copies_unpaired`), an original without an incremental is not
copied. One deliberate deviation: incremental files are processed in **sorted** name order, not
``os.listdir`` order, so the latched default policy (the first file decides, T:384) is
deterministic. A directory merge is staged and its files renamed into OUTPUT at the end (``io.atomic.file_set``),
so OUTPUT may be the ORIGINAL directory, a failed merge leaves OUTPUT as it was, and no file is
ever half written; other files in OUTPUT are never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit._arguments import require, require_path
from tensilekit.errors import (
    InputNotFound,
    InputTooLarge,
    InvalidValue,
    Location,
    MergeError,
    TensilekitError,
    UnsupportedFormat,
    WorkloadLineError,
    error_context,
)
from tensilekit.io.atomic import file_set, write_bytes_atomic, write_text_atomic
from tensilekit.io.files import read_text
from tensilekit.io.limits import load_json_line
from tensilekit.io.logic_io import dumps_logic, load_logic
from tensilekit.io.yaml_codec import parse_yaml
from tensilekit.merge.identity import Compat
from tensilekit.merge.merge import MergePolicy, merge_resolved, resolve_force_merge
from tensilekit.merge.merge_versions import merge_script_for
from tensilekit.merge.prune import PruneReport, prune_logic
from tensilekit.merge.report import FileMergeReport, MergeReport
from tensilekit.model.library import MasterLibrary
from tensilekit.model.logic import MAX_SIZE, LogicFile

LOGIC_SUFFIX = ".yaml"


def list_logic_files(directory: str | os.PathLike[str]) -> list[str]:
    """Names of the logic files directly in ``directory`` (``*.yaml``, any case), sorted."""
    folder = Path(directory)
    if not folder.exists():
        raise InputNotFound("no such directory", Location(file=str(directory)))
    if not folder.is_dir():
        raise UnsupportedFormat("expected a directory", Location(file=str(directory)))
    return sorted(
        entry.name
        for entry in os.scandir(folder)
        if os.path.splitext(entry.name)[1].lower() == LOGIC_SUFFIX and entry.is_file()
    )


def merge_directories(
    original_dir: str | os.PathLike[str],
    incremental_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    policy: MergePolicy | None = None,
    *,
    dry_run: bool = False,
) -> MergeReport:
    """Merge every incremental logic file into the original of the same name; write to ``output_dir``.

    ``output_dir`` may equal ``original_dir`` (each original is read before its output replaces
    it). With ``dry_run`` nothing is written. Returns the report of the whole run.

    Raises InputNotFound for a missing input folder or a missing parent folder of ``output_dir``
    (not created, as the CLI refuses it too); TypeError/ValueError for arguments of the wrong type.
    """
    original_dir, incremental_dir, output_dir = _check_paths(
        "merge_directories", original_dir, incremental_dir, output_dir, policy, dry_run=dry_run
    )
    chosen = policy or MergePolicy()
    original_names = list_logic_files(original_dir)
    incremental_names = list_logic_files(incremental_dir)
    originals = set(original_names)
    incrementals = set(incremental_names)
    paired = [name for name in incremental_names if name in originals]
    report = MergeReport(
        policy=chosen.model_dump(mode="json"),
        unpaired_incremental=[name for name in incremental_names if name not in originals],
        unpaired_original=[name for name in original_names if name not in incrementals],
        output=str(output_dir),
        dry_run=dry_run,
    )
    report.notes.append(
        "incremental files are processed in sorted name order (AMD: os.listdir order, filesystem-dependent)"
    )
    # Every output is staged and renamed into OUTPUT at the end (io.atomic.file_set): a failed
    # merge leaves OUTPUT as it was; only the files merged are replaced, nothing else is touched.
    with contextlib.ExitStack() as stack:
        staging = None if dry_run else stack.enter_context(file_set(output_dir))
        _merge_pairs(report, chosen, paired, original_dir, incremental_dir, output_dir, staging)
        for name in report.unpaired_incremental:
            source = Path(incremental_dir) / name
            if copies_unpaired(chosen, source):
                if staging is not None and not _same_file(source, Path(output_dir) / name):
                    write_bytes_atomic(staging / name, source.read_bytes())
                report.copied_new.append(name)
    return _finish_report(report, chosen, original_dir, output_dir)


def copies_unpaired(policy: MergePolicy, incremental: Path) -> bool:
    """Whether an incremental file without an original is copied to the output: ``add_new`` if
    set, else what the merge script would do (only tensilelite 5.x's merge.py copies; the script
    is the one the file's own version selects, :func:`~tensilekit.merge.merge_versions.merge_script_for`)."""
    if policy.add_new is not None:
        return policy.add_new
    if policy.compat is Compat.TENSILE:
        return False
    try:
        logic = load_logic(incremental)
    except TensilekitError:
        return False  # not a logic file tensilekit reads: not copied (the notes count it as dropped)
    if policy.compat is None and Compat.for_dialect(logic.dialect) is not Compat.TENSILELITE:
        return False
    script, _ = merge_script_for(policy.tensilelite_merge, logic.version, None)
    return script.copies_unpaired_incremental


def _merge_pairs(
    report: MergeReport,
    chosen: MergePolicy,
    paired: list[str],
    original_dir: str | os.PathLike[str],
    incremental_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    staging: Path | None,
) -> None:
    latched: tuple[bool, str] | None = None
    for name in paired:
        # The path as the user typed it, as AMD's os.path.join(startDir, filename) builds it.
        incremental_path = os.path.join(os.fspath(incremental_dir), name)
        original_path = os.path.join(os.fspath(original_dir), name)
        force, reason = resolve_force_merge(chosen, incremental_path, latched)
        if chosen.force_merge is None and latched is None and chosen.latch_default:
            latched = (force, name)
        output_path = os.path.join(os.fspath(output_dir), name)
        write_path = None if staging is None else str(staging / name)
        file_report = _merge_one(
            chosen, force, reason, name, original_path, incremental_path, output_path, write_path is None, write_path
        )
        report.files.append(file_report)
    if latched is not None and len(paired) > 1:
        report.notes.append(
            f"default policy latched from {latched[1]} ({'Forced' if latched[0] else 'Winner'}) for every file; "
            "pass force_merge or latch_default=False to decide per file"
        )


def _finish_report(
    report: MergeReport,
    chosen: MergePolicy,
    original_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
) -> MergeReport:
    """The notes about files that were not merged."""
    dropped = [name for name in report.unpaired_incremental if name not in report.copied_new]
    if dropped:
        report.notes.append(
            f"{len(dropped)} incremental file(s) without an original were not merged "
            "(AMD's TensileMergeLibrary and tensilelite 7d9fb683's merge.py drop them silently; add_new copies "
            "them through)"
        )
    if report.copied_new and chosen.add_new is None:
        report.notes.append(
            f"{len(report.copied_new)} incremental file(s) without an original were copied to the output, "
            "as tensilelite 5.x's merge.py does (add_new=False drops them)"
        )
    if report.unpaired_original and Path(output_dir).resolve() != Path(original_dir).resolve():
        report.notes.append(
            f"{len(report.unpaired_original)} original file(s) without an incremental are not in the output "
            "(AMD does not copy them)"
        )
    return report


def _merge_one(
    policy: MergePolicy,
    force: bool,
    reason: str,
    name: str,
    original_path: str,
    incremental_path: str,
    output_path: str,
    dry_run: bool,
    write_path: str | None = None,
) -> FileMergeReport:
    """Load, merge, write one pair (to ``write_path``, default ``output_path``); the inputs are
    released before the output text is built, which keeps the peak memory of large merges near
    two loaded files."""
    from tensilekit.model.common import nan_efficiencies_accepted

    # AMD's merge tools read NaN efficiencies and write .nan: so does this merge, with a warning
    with nan_efficiencies_accepted() as nans:
        original = load_logic(original_path)
        counts = {original_path: len(nans)}
        incremental = load_logic(incremental_path)
        counts[incremental_path] = len(nans) - counts[original_path]
        with error_context(original_path):
            merged, file_report = merge_resolved(
                original,
                incremental,
                policy,
                force_merge=force,
                force_reason=reason,
                name=name,
                original_path=original_path,
                incremental_path=incremental_path,
            )
    del original, incremental
    for path, count in counts.items():
        if count:
            file_report.warnings.append(
                f"{path}: {count} efficiencies are NaN; merged as AMD's merge tools do (TensileMergeLibrary, "
                "tensilelite merge.py): a NaN compares as neither better nor worse, so without --force-merge "
                "it never replaces nor is replaced, and the output keeps it as .nan"
            )
    file_report.output_path = output_path
    if not dry_run:
        text = dumps_logic(merged)
        del merged
        write_text_atomic(write_path or output_path, text)
        file_report.written = True
    return file_report


def _same_file(source: Path, target: Path) -> bool:
    try:
        return target.exists() and os.path.samefile(source, target)
    except OSError:
        return False


def _check_paths(
    function: str, original: object, incremental: object, output: object, policy: object, *, dry_run: bool
) -> tuple[Path, Path, Path]:
    """The three paths (``~`` expanded); TypeError/ValueError for arguments of the wrong type;
    InputNotFound for an output whose folder does not exist (an API writer refuses it as the CLI
    does, rather than creating it)."""
    paths = (
        require_path(original, "original", function),
        require_path(incremental, "incremental", function),
        require_path(output, "output", function),
    )
    require(policy, MergePolicy, "policy", function, optional=True)
    if not dry_run and not paths[2].parent.is_dir():
        raise InputNotFound(f"folder {paths[2].parent} does not exist", Location(file=str(paths[2])))
    return paths


def merge_files(
    original_path: str | os.PathLike[str],
    incremental_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    policy: MergePolicy | None = None,
    *,
    dry_run: bool = False,
) -> MergeReport:
    """Merge one pair of files; ``output_path`` may be a file or an existing directory.

    Raises InputNotFound for a missing parent folder of ``output_path`` (not created, as the CLI
    refuses it too); TypeError/ValueError for arguments of the wrong type."""
    original_path, incremental_path, output_path = _check_paths(
        "merge_files", original_path, incremental_path, output_path, policy, dry_run=dry_run
    )
    chosen = policy or MergePolicy()
    target = Path(output_path)
    if target.is_dir():
        target = target / Path(original_path).name
    force, reason = resolve_force_merge(chosen, os.fspath(incremental_path))
    file_report = _merge_one(
        chosen,
        force,
        reason,
        Path(original_path).name,
        os.fspath(original_path),
        os.fspath(incremental_path),
        str(target),
        dry_run,
    )
    return MergeReport(policy=chosen.model_dump(mode="json"), files=[file_report], output=str(target), dry_run=dry_run)


def merge_paths(
    original: str | os.PathLike[str],
    incremental: str | os.PathLike[str],
    output: str | os.PathLike[str],
    policy: MergePolicy | None = None,
    *,
    dry_run: bool = False,
) -> MergeReport:
    """``tensilekit merge``: two directories (:func:`merge_directories`) or two files (:func:`merge_files`).

    Raises InputNotFound for a missing input or output folder, MergeError for a file and a folder,
    TypeError/ValueError for arguments of the wrong type."""
    original, incremental, output = _check_paths("merge_paths", original, incremental, output, policy, dry_run=dry_run)
    for path in (original, incremental):
        if not Path(path).exists():
            raise InputNotFound("no such file or directory", Location(file=os.fspath(path)))
    original_is_dir, incremental_is_dir = Path(original).is_dir(), Path(incremental).is_dir()
    if original_is_dir and incremental_is_dir:
        return merge_directories(original, incremental, output, policy, dry_run=dry_run)
    if not original_is_dir and not incremental_is_dir:
        return merge_files(original, incremental, output, policy, dry_run=dry_run)
    raise MergeError("ORIGINAL and INCREMENTAL must both be files or both be directories")


# ---------------------------------------------------------------------------------------------
# loading for diff, pruning files

_SIZE_SEPARATORS = re.compile(r"[\s,x×]+")


def _query_from(value: Any, where: Location) -> list[int] | dict[str, Any]:
    if isinstance(value, Mapping):
        record = {str(key): item for key, item in value.items()}
        for upper in ("M", "N", "K"):  # tolerate capitalised size fields
            if upper in record and upper.lower() not in record:
                record[upper.lower()] = record.pop(upper)
        for name in ("m", "n", "k"):
            item = record.get(name)
            if not isinstance(item, int) or isinstance(item, bool):
                raise InvalidValue(f"a query record needs an integer {name!r}", where)
        return record
    if isinstance(value, str):
        value = [part for part in _SIZE_SEPARATORS.split(value.strip()) if part]
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidValue("a query is a size [M, N, B, K, ...] or a record {m, n, k, ...}", where)
    try:
        size = [int(item) for item in value]
    except (TypeError, ValueError, OverflowError):
        raise InvalidValue(f"query sizes must be integers, got {value!r}", where) from None
    if len(size) < 4 or any(not 0 <= number <= MAX_SIZE for number in size):
        raise InvalidValue(f"a query size is [M, N, B, K, ...] with numbers 0..2^40, got {value!r:.80}", where)
    return size


def parse_queries(text: str, source: str | None = None) -> list[list[int] | dict[str, Any]]:
    """Queries for a selection diff, in any of these forms:

    * JSON lines, one query record per line (the ``corpus/select`` format: ``m``, ``n``, ``k``,
      ``batch``, types, transposes, ``arch`` …), which master-library selection needs;
    * YAML/JSON: a list of sizes or records, or ``{queries: [...]}``;
    * one size per line: ``M N B K`` / ``M,N,B,K`` / ``MxNxBxK`` (``#`` starts a comment).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(line.lstrip().startswith("{") for line in lines):
        records = []
        for number, line in enumerate(lines):
            try:
                records.append(load_json_line(line))
            except InputTooLarge as error:  # a 5 000-digit number, 100 000 brackets: said where
                column = error.location.col if error.location else None
                raise InputTooLarge(error.message, Location(file=source, line=number + 1, col=column)) from None
            except WorkloadLineError:
                records = []  # not JSON lines after all: the forms below
                break
        if records:
            return [
                _query_from(record, Location(file=source, line=number + 1)) for number, record in enumerate(records)
            ]
    data: Any = None
    try:
        data = parse_yaml(text, source)
    except TensilekitError:
        data = None
    if isinstance(data, Mapping) and "queries" in data:
        data = data["queries"]
    if isinstance(data, list) and data and all(isinstance(item, int) for item in data):
        return [_query_from(data, Location(file=source))]
    if isinstance(data, list):
        return [_query_from(item, Location(file=source, path=f"[{number}]")) for number, item in enumerate(data)]
    queries: list[list[int] | dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip().strip("[]()")
        if content:
            queries.append(_query_from(content, Location(file=source, line=number)))
    return queries


def load_queries(path: str | os.PathLike[str]) -> list[list[int] | dict[str, Any]]:
    """:func:`parse_queries` on a file. Raises TypeError/ValueError for a ``path`` that is no path."""
    path = require_path(path, "path", "load_queries")
    return parse_queries(read_text(os.fspath(path)), os.fspath(path))


def load_library_input(
    path: Path, *, subtree: str | None = None, asic_revision: int | None = None
) -> LogicFile | MasterLibrary | dict[str, LogicFile]:
    """A logic file, a master library (YAML or msgpack), a directory of logic files, or an
    installed library folder (every shard read: a structural diff compares all of them; the
    trees ``subtree``/``asic_revision`` choose, as ``InstalledLibrary.choose``).

    A lazy master file comes with its shards inlined (every Placeholder replaced by the tree of
    the file it names, the shard's solutions added): its content is its shards, so two lazy
    masters whose shards differ differ, and a lazy master equals its non-lazy build."""
    from tensilekit.io.installed_library import InstalledLibrary, inline_placeholders, is_installed_library

    if path.is_dir() and is_installed_library(path):
        return InstalledLibrary(path).materialize_all(label=subtree, asic_revision=asic_revision)
    if path.is_dir():
        return {name: load_logic(path / name) for name in list_logic_files(path)}
    from tensilekit.api import load
    from tensilekit.io.atomic import FolderGeneration
    from tensilekit.io.zlib_catalog import resolve_catalog

    generation = FolderGeneration([path.parent])  # the master and its shards: one generation
    library = load(path)
    if isinstance(library, MasterLibrary):
        library, _ = inline_placeholders(
            library, path if path.exists() else resolve_catalog(path), check=generation.check
        )
    return library


def prune_paths(
    paths: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str] | None = None,
    *,
    compat: Compat | None = None,
    dry_run: bool = False,
) -> list[PruneReport]:
    """Prune logic files (directories: every ``*.yaml`` in them) in place or into ``output``.

    Output keeps each file's own YAML style (key order, flow style), so the only textual changes
    are the removed kernels and renumbered indices. Raises InputNotFound for a missing input or a
    missing parent folder of ``output`` (not created), TypeError/ValueError for wrong argument types.
    """
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Sequence):
        raise TypeError(f"prune_paths(): paths must be a sequence of paths, not {type(paths).__name__}")
    paths = [require_path(path, "each of paths", "prune_paths") for path in paths]
    if output is not None:
        output = require_path(output, "output", "prune_paths")
        if not dry_run and not output.parent.is_dir():
            raise InputNotFound(f"folder {output.parent} does not exist", Location(file=str(output)))
    require(compat, Compat, "compat", "prune_paths", optional=True)
    files: list[tuple[Path, Path]] = []
    folders: set[Path] = set()  # outputs of a directory input: written as one set
    for path in map(Path, paths):
        if path.is_dir():
            destination = Path(output) if output is not None else path
            files.extend((path / name, destination / name) for name in list_logic_files(path))
            folders.add(destination)
        else:
            if not path.exists():
                raise InputNotFound("no such file", Location(file=str(path)))
            destination = Path(output) if output is not None else path
            if output is not None and (destination.is_dir() or len(paths) > 1):
                destination = destination / path.name
            files.append((path, destination))
    reports = []
    with contextlib.ExitStack() as stack:
        # a pruned directory is staged and its files renamed in at the end (io.atomic.file_set)
        staging = {} if dry_run else {folder: stack.enter_context(file_set(folder)) for folder in folders}
        for source, destination in files:
            logic = load_logic(source)
            with error_context(source):
                pruned, report = prune_logic(logic, compat=compat, name=source.name)
            report.path, report.output_path = str(source), str(destination)
            if not dry_run and (destination != source or report.changed):
                staged = staging.get(destination.parent)
                write_text_atomic(destination if staged is None else staged / destination.name, dumps_logic(pruned))
                report.written = True
            reports.append(report)
    return reports


__all__ = [
    "list_logic_files",
    "load_library_input",
    "load_queries",
    "merge_directories",
    "merge_files",
    "merge_paths",
    "parse_queries",
    "prune_paths",
]

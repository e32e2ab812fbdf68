"""The file edge of ``lint``: read libraries, build logic files, and point findings at lines.

A master library (YAML, msgpack ``.dat``, gzip) is linted as it is; a lazy master's placeholders
are loaded from beside it. A logic file (either dialect and layout) is built into its master the
way ``select`` builds one (:func:`tensilekit.libbuild.build_master_libraries`, one file on its own),
and findings are mapped back to the logic file's own positions: a kernel to its place in the
solutions list, a table entry to its row of the exact-logic table. A directory is linted file by
file, like ``validate``. A file that cannot be read or built becomes one error finding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tensilekit._arguments import require, require_callable, require_path, require_paths
from tensilekit.errors import LibraryChanged, TensilekitError, child_path, error_context
from tensilekit.inspect import add_finding_lines, finding_from_error, iter_library_files
from tensilekit.io.detect import Format, Kind, detect_kind
from tensilekit.io.files import gc_paused, read_bytes
from tensilekit.io.logic_io import logic_from_data
from tensilekit.io.master_io import decode, load_placeholder, master_from_data
from tensilekit.io.msgpack_codec import dump_msgpack
from tensilekit.io.yaml_codec import TextCut
from tensilekit.libbuild import build_logic_master
from tensilekit.lint.rules import LintOptions, Locator, lint_library
from tensilekit.lint.tables import KEY_FIELDS
from tensilekit.model.checks import Finding, logic_field_path, msgpack_load_findings
from tensilekit.model.library import MasterLibrary, MatchingNode
from tensilekit.model.logic import LogicFile
from tensilekit.selection.walk import Loader

if TYPE_CHECKING:
    from tensilekit.io.atomic import FolderGeneration

#: Logic ``indexOrder`` code -> the key property it becomes (``MatchingLibrary.FromOriginalState``).
_INDEX_CODES = {2: "FreeSizeA", 3: "FreeSizeB", 1: "BoundSize", 0: "BatchSize"}

#: Path prefix of findings that could not be mapped into a logic file (they name the built master).
BUILT_PREFIX = "built master: "


class FileLint(BaseModel):
    """The findings for one file (``kind``: ``master``, ``logic`` or ``unreadable``)."""

    path: str
    kind: str
    findings: list[Finding] = []

    def codes(self) -> dict[str, int]:
        """How many findings of each code."""
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.code] = counts.get(finding.code, 0) + 1
        return counts


class LogicLocator:
    """Findings on a master built from one logic file, pointed at the logic file's positions."""

    def __init__(self, logic: LogicFile, master: MasterLibrary) -> None:
        self._logic = logic
        self._master = master
        self._solutions_at = logic_field_path(logic, "solutions")
        self._table_at = logic_field_path(logic, "exact_logic")
        self._same_solutions = len(master.solutions) == len(logic.solutions)
        self._rows: dict[str, list[int] | None] = {}

    def table(self, table_path: str) -> str:
        return self._table_at if self._rows_of(table_path) is not None else BUILT_PREFIX + table_path

    def entry(self, table_path: str, number: int) -> str:
        rows = self._rows_of(table_path)
        if rows is None:
            return f"{BUILT_PREFIX}{table_path}.table[{number}]"
        return f"{self._table_at}[{rows[number]}]"

    def solution(self, position: int) -> str:
        keys = self._logic._solution_keys  # canonical dict logic: Solutions keyed by name
        if self._same_solutions and keys is not None and position < len(self._logic.solutions):
            return child_path(self._solutions_at, keys[position])
        if self._same_solutions:
            return f"{self._solutions_at}[{position}]"
        return f"{BUILT_PREFIX}solutions[{position}]"

    def solutions(self) -> str:
        return self._solutions_at

    def _rows_of(self, table_path: str) -> list[int] | None:
        if table_path not in self._rows:
            node = dict(self._master.iter_nodes()).get(table_path)
            self._rows[table_path] = self._row_order(node) if isinstance(node, MatchingNode) else None
        return self._rows[table_path]

    def _row_order(self, node: MatchingNode) -> list[int] | None:
        """Logic row of each table entry: the build sorts rows stably by their key (verified)."""
        logic = self._logic
        if not self._same_solutions or logic.index_order is None or len(node.table) != len(logic.table):
            return None
        properties = {prop.type for prop in node.properties if prop.type in KEY_FIELDS}
        columns = [pos for pos, code in enumerate(logic.index_order) if _INDEX_CODES.get(code) in properties]

        def key(row: int) -> list[int]:
            size = logic.table[row].size
            return [size[column] for column in columns if column < len(size)]

        order = sorted(range(len(logic.table)), key=key)
        positions = {solution.index: number for number, solution in enumerate(self._master.solutions)}
        for entry, row in zip(node.table, order, strict=True):
            if entry.key != key(row) or positions.get(entry.solution_index) != logic.table[row].solution:
                return None
        return order


def _measure(raw: Any) -> int:
    return len(dump_msgpack(raw))


def _generation_loader(load: Loader, generation: FolderGeneration) -> Loader:
    """``load`` checked against ``generation`` after each shard (and before its error counts)."""

    def load_shard(prefix: str) -> MasterLibrary:
        try:
            shard = load(prefix)
        except TensilekitError:
            generation.check()
            raise
        generation.check()
        return shard

    return load_shard


@gc_paused()  # the cyclic GC would rescan the library's model (millions of objects) again and again
def lint_file(
    path: str | Path, options: LintOptions | None = None, *, stage: Callable[[str], None] | None = None
) -> FileLint:
    """Lint one master library or logic file (see the module docstring).

    ``stage(text)`` is told each phase as it starts (``reading X``, ``checking X``, ``locating
    findings in X``), for a progress display: a big master takes tens of seconds.
    Raises TypeError/ValueError for a ``path`` that is no path or ``options`` of the wrong type."""
    path = require_path(path, "path", "lint_file")
    require_callable(stage, "stage", "lint_file", optional=True)
    report = stage or (lambda text: None)
    name = Path(path).name
    from tensilekit.lint.rules import LintOptions

    require(options, LintOptions, "options", "lint_file", optional=True)
    source = str(path)
    from tensilekit.io.installed_library import check_mapping, is_mapping_name

    if is_mapping_name(path):  # a lazy mapping (index -> shard): its shards must be present
        try:
            check_mapping(path)
        except TensilekitError as error:
            return FileLint(path=source, kind="mapping", findings=[finding_from_error(error, path)])
        return FileLint(path=source, kind="mapping", findings=[])
    from tensilekit.io.atomic import FolderGeneration

    # a master and its shards are one set: linted through one generation of their folder
    generation = FolderGeneration([Path(path).parent])
    try:
        report(f"reading {name}")
        data = read_bytes(path)
        cut = TextCut()  # the text's top-level cut, made once for reading and locating alike
        with error_context(source):
            decoded, form, text = decode(data, source, models=True, cut=cut)
            kind = detect_kind(decoded, text)
            library: MasterLibrary
            locator: Locator | None = None
            loader: Loader | None = None
            if kind is Kind.MASTER:
                library = master_from_data(decoded, source=source, text=text)
                loader = _generation_loader(functools.partial(load_placeholder, Path(path)), generation)
            else:
                logic = logic_from_data(decoded, source=source, text=text)
                library = build_logic_master(logic, source)
                locator = LogicLocator(logic, library)
            # the decoded tree (most of a big YAML master's memory) is not needed past the model
            del decoded, text
            report(f"checking {name}")
            findings = lint_library(
                library,
                options=options,
                locator=locator,
                loader=loader,
                measure=_measure,
                file_bytes=len(data),
            )
            if kind is Kind.MASTER and form is Format.MSGPACK:  # what the runtimes cannot load as msgpack
                findings += msgpack_load_findings(library)
    except LibraryChanged:
        raise
    except TensilekitError as error:
        generation.check()  # not the file's fault: the folder was rebuilt while it was read
        return FileLint(path=source, kind="unreadable", findings=[finding_from_error(error, path)])
    # the findings are made: the model need not stay beside the text decoded again to locate them
    del library, locator, loader
    report(f"locating findings in {name}")
    wanted = [finding for finding in findings if not finding.path.startswith(BUILT_PREFIX)]
    add_finding_lines(data, wanted, cut=cut)
    return FileLint(path=source, kind="master" if kind is Kind.MASTER else "logic", findings=findings)


def lint_paths(paths: Iterable[str | Path], options: LintOptions | None = None) -> list[FileLint]:
    """Lint files and directories (a directory file by file, as ``validate`` does).

    Raises:
        InputNotFound: a path does not exist.
        TypeError, ValueError: ``paths`` is not an iterable of paths, ``options`` not LintOptions.
    """
    paths = require_paths(paths, "paths", "lint_paths")
    from tensilekit.lint.rules import LintOptions

    require(options, LintOptions, "options", "lint_paths", optional=True)
    return [lint_file(path, options) for path in iter_library_files(paths)]


__all__ = ["BUILT_PREFIX", "FileLint", "LogicLocator", "lint_file", "lint_paths"]

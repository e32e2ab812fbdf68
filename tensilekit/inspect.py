"""Summaries (``info``) and validation (``validate``) of library files and directories.

Both read files (this is an edge module) and return models the CLI renders as tables or JSON.
A directory is handled file by file (``*.yaml``, ``*.yml``, ``*.dat`` and their ``.gz``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tensilekit.api import loads
from tensilekit.errors import InputNotFound, Location, TensilekitError, error_context
from tensilekit.io.detect import Format, decompress, detect_format
from tensilekit.io.files import read_bytes, read_raw_bytes
from tensilekit.model.checks import Finding, check_logic, check_master, has_errors, msgpack_load_findings
from tensilekit.model.library import (
    DecisionTreeNode,
    FreeSizeNode,
    GranularitySelectionNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    PlaceholderNode,
    PredictionNode,
    ProblemMapNode,
)
from tensilekit.model.logic import LogicFile
from tensilekit.selection.hipblaslt_versions import version_of_logic_file
from tensilekit.selection.runtime import detect_runtime, hipblaslt_runtime
from tensilekit.selection.served import served_row_types
from tensilekit.selection.unserved import problem_type_label

if TYPE_CHECKING:
    from tensilekit.io.yaml_codec import TextCut

LIBRARY_SUFFIXES = (".yaml", ".yml", ".dat", ".yaml.gz", ".yml.gz", ".dat.gz", ".dat.zlib", ".yaml.zst")


class FileInfo(BaseModel):
    """What ``tensilekit info`` says about one file."""

    path: str
    kind: str
    format: str
    dialect: str | None = None
    architectures: list[str] = []
    cu_count: int | None = None
    """The one CU count the file is for (a logic file's; a master's when its rows name exactly one)."""
    cu_counts: list[int] = []
    """Every CU count the file's ``CUCount`` predicates (or a logic file's architecture) name."""
    problem_types: list[str] = []
    data_types: list[str] = []
    """The types, transposes and flags served (``TN Half HPA``), as ``select``'s no-kernel reasons
    name them; a master's read off its rows (rows name types, transposes and some flags)."""
    library_type: str | None = None
    solutions: int = 0
    table_entries: int = 0
    size_ranges: dict[str, list[int]] = {}
    node_counts: dict[str, int] = {}
    version: str | None = None
    runtime: str | None = None
    """The runtime a master is taken for, with its version (``hipBLASLt 0.12.1``, ``Tensile
    (rocBLAS)``: :func:`~tensilekit.selection.runtime.detect_runtime`), or a tensilelite logic file is
    built for; None for other files."""
    warnings: list[str] = []
    """What a runtime cannot load in this file as it is (``validate`` and ``lint`` say where)."""


class FileValidation(BaseModel):
    path: str
    ok: bool
    findings: list[Finding] = []


def iter_library_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files named directly, and library files inside directories (recursively, sorted)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            from tensilekit.io.zlib_catalog import runtime_view

            # X.dat beside X.dat.zlib is not read by the runtime (the .zlib is probed first)
            children = sorted(path.rglob("*"))
            yield from runtime_view(c for c in children if c.is_file() and c.name.lower().endswith(LIBRARY_SUFFIXES))
        elif path.exists() or path.is_symlink():  # a symlink loop: the reader says so
            yield path
        else:
            raise InputNotFound("no such file or directory", Location(file=str(path)))


def _detected_format(data: bytes) -> str:
    raw, compression = decompress(data)
    fmt = detect_format(raw)
    return fmt.value if compression.value == "none" else f"{fmt.value}+{compression.value}"


def _problem_type_name(logic: LogicFile) -> str:
    """Tensile's own problem-type name (``Cijk_Alik_Bljk_HHS_BH``), or a summary if underivable."""
    raw = logic.problem_type.raw()
    try:
        from tensilekit.model.naming import problem_type_name

        return problem_type_name(raw)
    except (KeyError, TypeError, ValueError, IndexError, TensilekitError):
        transposes = ("T" if raw.get("TransposeA") else "N") + ("T" if raw.get("TransposeB") else "N")
        return f"{transposes} DataType={raw.get('DataType')}"


def describe_logic(logic: LogicFile, path: str, fmt: str) -> FileInfo:
    ranges: dict[str, list[int]] = {}
    if logic.table:
        for axis, name in enumerate(("M", "N", "B", "K")):
            values = [entry.size[axis] for entry in logic.table if len(entry.size) > axis]
            if values:
                ranges[name] = [min(values), max(values)]
    return FileInfo(
        path=path,
        kind="logic",
        format=fmt,
        dialect=logic.dialect.value,
        architectures=[logic.architecture_name] if logic.architecture_name else [],
        cu_count=logic.architecture_cu_count,
        cu_counts=[logic.architecture_cu_count] if logic.architecture_cu_count is not None else [],
        problem_types=[_problem_type_name(logic)],
        library_type=logic.matching_distance,
        solutions=len(logic.solutions),
        table_entries=len(logic.table),
        size_ranges=ranges,
        version=logic.version,
        runtime=_logic_runtime(logic),
    )


def _logic_runtime(logic: LogicFile) -> str | None:
    """The hipBLASLt version ``build-master`` builds a tensilelite file as; None for a Tensile file."""
    if logic.dialect.value != "tensilelite":
        return None
    return hipblaslt_runtime(version_of_logic_file(logic.version, logic.problem_type.raw())).label


def describe_master(master: MasterLibrary, path: str, fmt: str) -> FileInfo:
    counts: dict[str, int] = {}
    architectures: list[str] = []
    cu_counts: set[int] = set()
    operations: set[str] = set()
    entries = 0
    ranges: dict[str, list[int]] = {}
    for _, node in master.iter_nodes():
        counts[node.type] = counts.get(node.type, 0) + 1
        if isinstance(node, HardwareNode):
            for row in node.rows:
                predicate = row.predicate.model_dump()
                architectures.extend(_processors(predicate))
                cu_counts.update(_cu_counts(predicate))
        elif isinstance(node, ProblemMapNode):
            operations.update(node.map)
        elif isinstance(node, MatchingNode):
            entries += len(node.table)
            names = [prop.type for prop in node.properties]
            for axis, name in enumerate(names):
                values = [entry.key[axis] for entry in node.table if len(entry.key) > axis]
                if values:
                    low, high = ranges.get(name, [min(values), max(values)])
                    ranges[name] = [min(low, *values), max(high, *values)]
        elif isinstance(node, (FreeSizeNode, PredictionNode)):
            entries += len(node.table)
        elif isinstance(node, DecisionTreeNode):
            entries += len(node.trees)
    _ = PlaceholderNode
    for solution in master.solutions:  # hipBLASLt solutions carry their own hardware predicate
        hardware = getattr(solution, "hardware_predicate", None)
        if hardware is not None:
            cu_counts.update(_cu_counts(hardware.model_dump() if isinstance(hardware, BaseModel) else hardware))
    return FileInfo(
        path=path,
        kind="master",
        format=fmt,
        architectures=sorted(set(architectures)),
        cu_count=next(iter(cu_counts)) if len(cu_counts) == 1 else None,
        cu_counts=sorted(cu_counts),
        problem_types=sorted(operations),
        data_types=_served_labels(served_row_types(master)),
        solutions=len(master.solutions),
        table_entries=entries,
        size_ranges=ranges,
        node_counts=dict(sorted(counts.items())),
        version=master.version,
        runtime=detect_runtime(master).label,
        warnings=[finding.message for finding in msgpack_load_findings(master)] if fmt.startswith("msgpack") else [],
    )


def _served_labels(served: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(problem_type_label(fields) for fields in served if fields))


def _processors(predicate: Any) -> list[str]:
    found: list[str] = []
    if isinstance(predicate, dict):
        if predicate.get("type") == "Processor":
            found.append(str(predicate.get("value")))
        elif predicate.get("type") == "TruePred":
            found.append("*")
        value = predicate.get("value")
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, dict) and child.get("type") != "TruePred":
                found.extend(_processors(child))
    return found


def _cu_counts(predicate: Any) -> list[int]:
    """The values of every ``CUCount`` predicate inside a hardware predicate."""
    found: list[int] = []
    if isinstance(predicate, dict):
        value = predicate.get("value")
        if predicate.get("type") == "CUCount":
            if isinstance(value, int) and not isinstance(value, bool):
                found.append(value)
            return found
        for child in value if isinstance(value, list) else [value]:
            found.extend(_cu_counts(child))
    return found


def describe(path: str | Path) -> FileInfo:
    """Summary of one logic file, master library or lazy mapping."""
    from tensilekit.io.installed_library import is_mapping_name

    if is_mapping_name(path):
        from tensilekit.io.installed_library import read_mapping

        mapping = read_mapping(path)
        return FileInfo(path=str(path), kind="mapping", format=_detected_format(read_raw_bytes(path)),
                        table_entries=len(mapping))  # fmt: skip
    with error_context(path):  # e.g. "empty input" names the file
        data = read_bytes(path)
        fmt = _detected_format(read_raw_bytes(path))
        model = loads(data, str(path))
    if isinstance(model, MasterLibrary):
        return describe_master(model, str(path), fmt)
    return describe_logic(model, str(path), fmt)


def finding_from_error(error: TensilekitError, path: str | Path) -> Finding:
    """An input error (a file that cannot be read or modelled) as an error finding, code = its class."""
    location = error.location or Location(file=str(path))
    return Finding(
        severity="error",
        code=type(error).__name__,
        message=error.message,
        path=location.path or "",
        line=location.line,
        col=location.col,
        offset=location.offset,
    )


def _no_stage(label: str) -> None:
    """The ``stage`` of a caller that shows no progress."""


def validate_file(path: str | Path, *, stage: Callable[[str], None] | None = None) -> FileValidation:
    """Schema and semantic checks of one file; decoding/schema errors become findings.

    ``stage`` is told each phase as it starts (``reading X``, ``checking X``, ``building X``,
    ``locating findings in X``): a 90 MB master takes seconds in each, and the CLI names them on a
    terminal. A logic file is also built as ``build-master`` and ``lint`` build it
    (:func:`tensilekit.libbuild.build_logic_master`): a file they cannot read is not valid.
    """
    name = Path(path).name
    tell = stage or _no_stage
    from tensilekit.io.atomic import FolderGeneration
    from tensilekit.io.installed_library import check_mapping, is_mapping_name

    # a master and the shards it names are one set: checked in one generation of their folder
    generation = FolderGeneration([Path(path).parent])
    try:
        if is_mapping_name(path):  # a lazy mapping: index -> shard, every shard present
            check_mapping(path)
            return FileValidation(path=str(path), ok=True)
        tell(f"reading {name}")
        data = read_bytes(path)
        model = loads(data, str(path))
    except TensilekitError as error:
        generation.check()  # not the file's fault: the folder was rebuilt while it was read
        related = getattr(error, "related", [])
        findings = [finding_from_error(problem, path) for problem in [error, *related]]
        if related:  # every problem is listed: drop the first one's "[and N more problem(s)]"
            findings[0].message = findings[0].message.rsplit(" [and ", 1)[0]
        return FileValidation(path=str(path), ok=False, findings=findings)
    tell(f"checking {name}")
    findings = check_master(model) if isinstance(model, MasterLibrary) else check_logic(model)
    if isinstance(model, LogicFile) and not has_errors(findings):
        # one verdict per file: what build-master and lint cannot read is not valid either
        from tensilekit.libbuild import build_logic_master

        tell(f"building {name}")
        try:
            build_logic_master(model, str(path))
        except TensilekitError as error:
            findings.append(finding_from_error(error, path))
    findings.extend(duplicate_key_findings(model))
    if isinstance(model, MasterLibrary):
        from tensilekit.io.master_io import placeholder_problems, shadowed_catalogs

        findings.extend(
            Finding(severity="error", code="placeholder", message=message, path=where)
            for where, message in placeholder_problems(model, path)
        )
        findings.extend(
            Finding(severity="warning", code="shadowed-catalog", message=message, path=where)
            for where, message in shadowed_catalogs(model, path)
        )
        if any(isinstance(node, PlaceholderNode) for _, node in model.iter_nodes()):
            generation.check()  # the placeholder files were looked up in the master's own build
        findings.extend(_indexed_root_findings(data, len(model.solutions)))
        unloadable = msgpack_load_findings(model)  # pure and cheap: the bytes are looked at only when it finds any
        if unloadable and detect_format(decompress(data)[0]) is Format.MSGPACK:
            findings.extend(unloadable)
    if any(finding.path for finding in findings[:200]):  # add_finding_lines composes the YAML text
        tell(f"locating findings in {name}")
    add_finding_lines(data, findings, limit=200)
    return FileValidation(path=str(path), ok=not has_errors(findings), findings=findings)


def duplicate_key_findings(model: MasterLibrary | LogicFile) -> list[Finding]:
    """A warning per key written more than once in a table (a logic file's size rows, a master's
    ``Matching`` entries), naming the row or entry the runtime answers with and when
    (:func:`tensilekit.selection.duplicates.describe_duplicate`). Points at the key's second row
    or entry in file order."""
    from tensilekit.model.checks import logic_field_path
    from tensilekit.selection.duplicates import describe_duplicate, duplicate_keys, logic_table

    findings: list[Finding] = []
    if isinstance(model, LogicFile):
        table = logic_table(model)
        if table is None:
            return []
        distance, names, keys, speeds, rows = table
        table_at = logic_field_path(model, "exact_logic")
        for duplicate in duplicate_keys(keys, speeds, rows):
            second = sorted(duplicate.entries)[1]
            findings.append(
                Finding(
                    severity="warning",
                    code="duplicate-size",
                    message=describe_duplicate(duplicate, distance, "row", key_names=f"{names} ="),
                    path=f"{table_at}[{second}][0]",
                )
            )
        return findings
    for path, node in model.iter_nodes():
        if isinstance(node, GranularitySelectionNode):
            findings.extend(_granularity_duplicates(path, node))
        if not isinstance(node, MatchingNode) or any(len(e.key) != len(node.properties) for e in node.table):
            continue
        keys = [tuple(entry.key) for entry in node.table]
        speeds = [0.0 if entry.speed is None else float(entry.speed) for entry in node.table]
        for duplicate in duplicate_keys(keys, speeds):
            second = sorted(duplicate.entries)[1]
            findings.append(
                Finding(
                    severity="warning",
                    code="duplicate-key",
                    message=describe_duplicate(duplicate, node.distance, "entry"),
                    path=f"{path}.table[{second}].key",
                )
            )
    return findings


def _granularity_duplicates(path: str, node: GranularitySelectionNode) -> list[Finding]:
    """A ``GranularitySelection`` exact key written twice: ``exactMap.insert`` keeps the first
    (Serialization/GranularitySelectionLibrary.hpp, Tensile and tensilelite)."""
    seen: dict[tuple[int, ...], list[int]] = {}
    for number, entry in enumerate(node.exact):
        seen.setdefault(tuple(entry.key), []).append(number)
    findings = []
    for key, numbers in seen.items():
        if len(numbers) > 1:
            later = " and ".join(f"entry {n}" for n in numbers[1:])
            findings.append(
                Finding(
                    severity="warning",
                    code="duplicate-key",
                    message=f"exact entries {' and '.join(str(n) for n in numbers)} share key {list(key)}; the "
                    f"runtime keeps entry {numbers[0]} (std::map insert keeps the first): {later} never answer"
                    f"{'s' if len(numbers) == 2 else ''}",
                    path=f"{path}.exact[{numbers[1]}].key",
                )
            )
    return findings


def _indexed_root_findings(data: bytes, solutions: int) -> list[Finding]:
    """An indexed root (``format_version: 2``) that also carries a plain ``solutions`` list: the
    runtime (and tensilekit) take the solutions from the blob and ignore the list (issue 23 item 6)."""
    from tensilekit.io.indexed_msgpack import plain_solutions_beside_blob

    raw = decompress(data)[0]
    if detect_format(raw) is not Format.MSGPACK:
        return []
    listed = plain_solutions_beside_blob(raw)
    if listed is None:
        return []
    held = "a 'solutions' value that is not a list" if listed < 0 else f"a plain 'solutions' list of {listed}"
    return [
        Finding(
            severity="warning",
            code="indexed-solutions-list",
            message=f"an indexed library (format_version 2) also carries {held}; the runtime reads its "
            f"{solutions} solution(s) from solutions_index/solutions_blob and ignores the list, and so does tensilekit",
            path="solutions",
        )
    ]


def add_finding_lines(
    data: bytes, findings: list[Finding], *, limit: int | None = None, cut: TextCut | None = None
) -> None:
    """Fill in line/column of findings whose YAML path is in ``data`` (a YAML file; one compose of
    the text, only when there is something to say). ``limit`` bounds how many are located.
    ``cut``: the top-level cut decoding ``data`` made (``decode(data, cut=...)``), not made again."""
    from tensilekit.io.yaml_codec import locate_many

    wanted = [finding for finding in findings[:limit] if finding.path]
    if not wanted:
        return
    raw = decompress(data)[0]
    if detect_format(raw) is not Format.YAML:
        return
    text = raw.decode("utf-8", errors="replace")
    del raw  # a big master's bytes need not stay beside its text while the events are walked
    located = locate_many(text, [finding.path for finding in wanted], cut=cut)
    for finding, position in zip(wanted, located, strict=True):
        if position is not None:
            finding.line, finding.col = position


def validate_paths(paths: Iterable[str | Path]) -> list[FileValidation]:
    """Validate files and directories (file by file)."""
    return [validate_file(path) for path in iter_library_files(paths)]


def describe_paths(paths: Iterable[str | Path]) -> list[FileInfo]:
    return [describe(path) for path in iter_library_files(paths)]


__all__ = [
    "FileInfo",
    "FileValidation",
    "add_finding_lines",
    "describe",
    "duplicate_key_findings",
    "describe_paths",
    "finding_from_error",
    "iter_library_files",
    "validate_file",
    "validate_paths",
]

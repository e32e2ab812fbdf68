"""Which logic-file solution a hipblaslt-bench solution is: identity by index, as AMD's tools do it.

hipblaslt-bench reports a solution by its *index in the library it loaded* and by that library's
``name`` / ``kernelName``. Neither is in the logic files: TensileCreateLibrary numbers the
solutions in the order it reads the files (``glob`` order, and with ``--jobs`` > 1 completion
order) and names them over the whole build (``getMinNaming`` + ``applyNaming``,
TensileCreateLibrary.py:793,1499 @7d9fb68), so a logic file's ``SolutionNameMin`` never appears.
AMD's answer is the index: TensileCreateLibrary writes ``MatchTable.yaml`` (master index ->
``[logic file, position in it]``, TensileCreateLibrary.py:1123-1150 @7d9fb68), which GEKO reads.

tensilekit builds the same masters itself (byte for byte), so it knows, for ``--library-logic``:

* every built solution's record, ``name``, ``kernelName`` and match-table entry
  (:func:`index_logic`);
* and, reading the library hipblaslt-bench actually loads (:func:`index_installed`), which of
  those records each *installed* index is: records are compared without the fields a build
  renumbers or renames (:mod:`tensilekit.model.identity`: ``index``, ``name``, ``kernelName``,
  ``libraryLogicIndex``), so a library built in another file order or from a larger set still
  maps exactly.

:func:`catalog_of` combines both into the ``catalog.json`` the tuning stages read and
:func:`resolve` answers "which ``(logic file, position)`` is index K named N" -- by the installed
index when the installed library was read, else by the name the build gives (unique names only),
never by a name tensilekit assumes a tool prints.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensilekit.errors import TensilekitError
from tensilekit.model.identity import RENUMBERED_FIELDS, solution_identity
from tensilekit.tools.problem_types import logic_type_key

if TYPE_CHECKING:
    from tensilekit.model.derive_tensilelite import CustomKernelConfig


@dataclasses.dataclass(frozen=True)
class BuiltSolution:
    """One solution of tensilekit's build of ``--library-logic``."""

    index: int
    name: str
    kernel_name: str
    source: str
    position: int
    type_key: tuple[str, ...] | None
    identity: str


@dataclasses.dataclass
class LogicIndex:
    """Every solution of the build of a logic folder, plus the files that could not be built."""

    solutions: list[BuiltSolution]
    skipped: list[str]


def index_logic(
    inputs: Sequence[tuple[str, Any]],
    arch: str,
    type_key_of: Callable[[Mapping[str, Any]], tuple[str, ...] | None],
    *,
    custom_kernel_config: Any = None,
) -> LogicIndex:
    """Build ``inputs`` (``(path, list-form tensilelite logic)``) as TensileCreateLibrary does for
    ``arch`` (lazy, separate architectures) and list every solution with its match-table entry.

    Files of other architectures are left out, as ``--architecture`` leaves them out. A file the
    build refuses (a custom kernel without its config, a malformed file) is left out and listed in
    ``skipped`` with the reason; the others are built together, so their names are the ones a
    build of the same set gives.
    """
    from tensilekit.libbuild.tensilelite import build_tensilelite_libraries

    def architecture(data: Any) -> Any:
        if not isinstance(data, list) or len(data) < 6:
            return None
        value = data[2]
        return value.get("Architecture") if isinstance(value, Mapping) else value

    kept = [(path, data) for path, data in inputs if architecture(data) in (arch, "fallback")]
    skipped = [f"{path}: not a {arch} logic file" for path, data in inputs if architecture(data) is None]
    refused: list[tuple[str, TensilekitError]] = []
    table: dict[int, tuple[str, int]] = {}
    trees = build_tensilelite_libraries(
        kept, lazy=True, custom_kernel_config=custom_kernel_config, match_table=table, refused=refused
    ) if kept else {}  # fmt: skip
    skipped += [f"{path}: {error.message}" for path, error in refused]
    types = {path: type_key_of(data[4]) if isinstance(data[4], Mapping) else None for path, data in kept}
    solutions = [
        BuiltSolution(
            index=record["index"],
            name=record["name"],
            kernel_name=record["kernelName"],
            source=table[record["index"]][0],
            position=table[record["index"]][1],
            type_key=types.get(table[record["index"]][0]),
            identity=solution_identity(record),
        )
        for tree in trees.values()
        for record in tree.get("solutions", [])
    ]
    return LogicIndex(sorted(solutions, key=lambda item: item.index), skipped)


def index_build(
    records: Iterable[Mapping[str, Any]],
    match_table: Mapping[int, tuple[str, int]],
    types: Mapping[str, tuple[str, ...] | None],
) -> LogicIndex:
    """The solutions of a library TensileCreateLibrary built, each where its ``MatchTable.yaml``
    (``match_table``: index -> ``(logic file, position)``) puts it; ``types`` gives each logic
    file's problem-type key. A solution the table does not map is listed in ``skipped``."""
    solutions: list[BuiltSolution] = []
    unmapped: list[int] = []
    for record in records:
        index = int(record["index"])
        entry = match_table.get(index)
        if entry is None:
            unmapped.append(index)
            continue
        solutions.append(
            BuiltSolution(
                index=index, name=str(record.get("name", "")), kernel_name=str(record.get("kernelName", "")),
                source=entry[0], position=entry[1], type_key=types.get(entry[0]), identity=solution_identity(record),
            )
        )  # fmt: skip
    skipped = [f"solutions {unmapped[:10]} of the build are not in its MatchTable.yaml"] if unmapped else []
    return LogicIndex(sorted(solutions, key=lambda item: item.index), skipped)


def index_installed(records: Iterable[Mapping[str, Any]]) -> dict[int, tuple[str, str]]:
    """Installed master solution records -> ``{index: (name, identity)}``."""
    return {int(record["index"]): (str(record.get("name", "")), solution_identity(record)) for record in records}


def _type_text(key: tuple[str, ...] | None) -> str:
    return ",".join(key) if key is not None else "?"


def catalog_of(
    built: LogicIndex,
    sources: list[str],
    installed: Mapping[int, tuple[str, str]] | None,
    types: Collection[tuple[str, ...]] | None = None,
    *,
    built_is_reference: bool = False,
) -> dict[str, Any]:
    """The catalog the tuning stages read (``catalog.json`` of stage ``library``), JSON-able.

    ``sources`` lists every logic file (a catalog location is ``[source number, position]``).
    Keys: ``solutions`` (type -> built name -> location; names that several different records
    share are in ``ambiguous`` instead), ``indices`` (type -> index -> ``[source, position,
    name]``: the installed library's indices when it was read, else the build's own), and
    ``identity`` (how indices were obtained, and what did not match). ``types`` limits
    ``solutions`` and ``indices`` to those problem types (the identity counts cover every solution).
    ``built_is_reference``: ``built`` is the very library every reference run loads
    (:func:`index_build`), so its own indices are the bench's.
    """
    number = {source: position for position, source in enumerate(sources)}
    wanted = {_type_text(key) for key in types} if types is not None else None
    by_name: dict[str, dict[str, list[BuiltSolution]]] = defaultdict(lambda: defaultdict(list))
    by_identity: dict[str, list[BuiltSolution]] = defaultdict(list)
    for solution in built.solutions:
        by_name[_type_text(solution.type_key)][solution.name].append(solution)
        by_identity[solution.identity].append(solution)

    def location(solution: BuiltSolution) -> list[int]:
        return [number[solution.source], solution.position]

    solutions: dict[str, dict[str, list[int]]] = {}
    ambiguous: dict[str, dict[str, list[list[int]]]] = {}
    for type_text, names in by_name.items():
        if wanted is not None and type_text not in wanted:
            continue
        for name, members in names.items():
            if len({member.identity for member in members}) == 1:
                solutions.setdefault(type_text, {})[name] = location(members[0])
            else:
                ambiguous.setdefault(type_text, {})[name] = [location(member) for member in members]

    indices: dict[str, dict[str, list[Any]]] = {}
    unmatched: list[int] = []
    other_types: dict[str, list[int]] = defaultdict(list)
    if installed is None:
        for solution in built.solutions:
            if wanted is not None and _type_text(solution.type_key) not in wanted:
                continue
            indices.setdefault(_type_text(solution.type_key), {})[str(solution.index)] = [
                *location(solution), solution.name,
            ]  # fmt: skip
        origin = (
            "the MatchTable.yaml TensileCreateLibrary wrote with the reference library (identity by construction)"
            if built_is_reference
            else "the build of --library-logic (the installed library was not read)"
        )
    else:
        for index, (name, identity) in sorted(installed.items()):
            matches = by_identity.get(identity)
            if not matches:
                unmatched.append(index)
                continue
            if wanted is not None and _type_text(matches[0].type_key) not in wanted:
                other_types[_type_text(matches[0].type_key)].append(index)
                continue
            indices.setdefault(_type_text(matches[0].type_key), {})[str(index)] = [*location(matches[0]), name]
        origin = (
            "the reference library's indices, each solution record matched to tensilekit's build of --library-logic"
        )
    counted = None if installed is None else len(installed)
    return {
        "solutions": solutions,
        "ambiguous": ambiguous,
        "indices": indices,
        "identity": {
            "indices_from": origin,
            "installed_read": installed is not None or built_is_reference,
            "installed_solutions": len(built.solutions) if built_is_reference else counted,
            "installed_not_in_logic": len(unmatched),
            "installed_not_in_logic_sample": unmatched[:10],
            # installed solutions that are in --library-logic under a problem type the workload
            # does not have, as index runs [first, last]: a bench printing one for a workload GEMM
            # means tensilekit's type key and hipBLASLt's type match disagree (see resolve)
            "installed_of_other_types": {key: _runs(values) for key, values in sorted(other_types.items())},
        },
    }


def _runs(values: Sequence[int]) -> list[list[int]]:
    """Sorted integers as ``[first, last]`` runs of consecutive values."""
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return runs


def _other_type(identity: Mapping[str, Any], index: int) -> str | None:
    for type_text, runs in (identity.get("installed_of_other_types") or {}).items():
        if any(first <= index <= last for first, last in runs):
            return str(type_text)
    return None


@dataclasses.dataclass(frozen=True)
class Resolution:
    """Where a benchmarked solution comes from, or why that is not known."""

    location: list[int] | None
    reason: str | None = None


def resolve(catalog: Mapping[str, Any], type_text: str, name: str | None, index: int | None) -> Resolution:
    """The ``[source, position]`` of the solution hipblaslt-bench printed as ``index`` / ``name``.

    With the installed library read, the index decides and the printed name must be the one that
    library gives it (else the bench loaded another library). Without it, a name of the build
    decides when it is unambiguous; the build's own index breaks a tie between same-named
    solutions. Simulated catalogs (names only) resolve by name.
    """
    identity = catalog.get("identity") or {}
    indices = catalog.get("indices", {}).get(type_text, {})
    if identity.get("installed_read") and index is not None:
        entry = indices.get(str(index))
        if entry is None:
            other = _other_type(identity, index)
            if other is not None:  # the library is fine: tensilekit keyed the GEMM or the logic file wrongly
                return Resolution(
                    None,
                    f"solution {index} is in --library-logic, in a logic file whose problem type tensilekit keys "
                    f"{'as none it can tune' if other == '?' else other}, not {type_text}: tensilekit's type "
                    "mapping disagrees with hipBLASLt's (a tensilekit bug, not the installation)",
                )
            return Resolution(None, f"solution {index} of the reference library is not in --library-logic")
        if name is not None and entry[2] != name:
            return Resolution(
                None,
                f"hipblaslt-bench printed {name} for solution {index}, the library read gives it {entry[2]}: "
                "it loaded another library",
            )
        return Resolution([entry[0], entry[1]])
    if name is None:
        return Resolution(None, "hipblaslt-bench printed no solution name")
    found = catalog.get("solutions", {}).get(type_text, {}).get(name)
    if found is not None:
        return Resolution(list(found))
    same_name = catalog.get("ambiguous", {}).get(type_text, {}).get(name)
    if same_name:
        entry = indices.get(str(index)) if index is not None else None
        if entry is not None and entry[2] == name and [entry[0], entry[1]] in same_name:
            return Resolution([entry[0], entry[1]])
        return Resolution(None, f"{len(same_name)} different solutions of --library-logic are named {name}")
    return Resolution(None, "not in the library built from --library-logic")


def index_logic_folder(
    root: Path, arch: str, custom_kernels: CustomKernelConfig | None
) -> tuple[LogicIndex, dict[str, Any]]:
    """Every ``arch`` logic file under ``root`` built as TensileCreateLibrary builds them
    (:func:`~tensilekit.tools.library_index.index_logic`; files it cannot build are in
    ``skipped`` with the reason), and the parsed files by path. ``custom_kernels`` looks up the
    ``custom.config`` of a custom kernel a file names (None: such files are skipped)."""
    from tensilekit.api import logic_inputs  # the front door's reader of logic files and folders

    inputs: list[tuple[str, Any]] = []
    skipped: list[str] = []
    for path in sorted(root.rglob("*.yaml")):
        if not _may_serve(path, arch):
            continue
        try:
            found, dialect = logic_inputs([path])
        except TensilekitError as error:
            skipped.append(f"{path}: {error}")
            continue
        if dialect == "tensilelite":
            inputs.extend(found)
        else:
            skipped.append(f"{path}: a Tensile (rocBLAS) logic file; hipblaslt-bench runs tensilelite libraries")
    built = index_logic(inputs, arch, logic_type_key, custom_kernel_config=custom_kernels)
    return LogicIndex(built.solutions, [*skipped, *built.skipped]), dict(inputs)


def _may_serve(path: Path, arch: str) -> bool:
    """Whether a logic file may be for ``arch`` (cheap: its header names it; the build decides)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(4096)
    except OSError:
        return True  # the build reports it
    return arch.encode() in head or b"fallback" in head


__all__ = [
    "RENUMBERED_FIELDS",
    "BuiltSolution",
    "LogicIndex",
    "Resolution",
    "catalog_of",
    "index_build",
    "index_installed",
    "index_logic",
    "index_logic_folder",
    "resolve",
]

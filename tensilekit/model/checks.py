"""Semantic checks on loaded models (what ``tensilekit validate`` reports beyond the schema).

Pure functions over models, returning :class:`Finding` lists. Errors are things AMD's tools
reject or silently mishandle (a table row naming a missing solution, a solution whose problem
type disagrees with the file's); warnings are legal but suspicious (duplicate size keys); ``info``
findings (``tensilekit lint``'s sizes) only inform.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel

from tensilekit.model.library import (
    DecisionTreeNode,
    FreeSizeNode,
    GranularitySelectionNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    PredictionNode,
    ProblemNode,
    SingleNode,
)
from tensilekit.model.logic import (
    LIST_LAYOUTS,
    TENSILELITE_LIBRARY_TYPES,
    Dialect,
    Layout,
    LogicFile,
    ProblemType,
)
from tensilekit.model.predicates import bool_scale_ab, unmodelled_types

Severity = Literal["error", "warning", "info"]


class Finding(BaseModel):
    """One problem found by a check: severity, a stable code, message and YAML path."""

    severity: Severity
    code: str
    message: str
    path: str = ""
    line: int | None = None
    col: int | None = None
    offset: int | None = None
    """Byte offset in a binary (msgpack) file, where there are no lines."""


def _error(code: str, message: str, path: str = "") -> Finding:
    return Finding(severity="error", code=code, message=message, path=path)


def _warning(code: str, message: str, path: str = "") -> Finding:
    return Finding(severity="warning", code=code, message=message, path=path)


def logic_field_path(logic: LogicFile, field: str) -> str:
    """Where a :class:`LogicFile` field sits in the file: list position (``[5]``) or dict key."""
    if logic.layout is Layout.DICT:
        from tensilekit.model.logic import DICT_KEYS

        for key, name in DICT_KEYS.items():
            if name == field:
                return key
        return field
    return f"[{LIST_LAYOUTS[logic.dialect].index(field)}]"


def check_logic(logic: LogicFile) -> list[Finding]:
    """Consistency checks for a logic file."""
    findings: list[Finding] = []
    solutions_at = logic_field_path(logic, "solutions")
    table_at = logic_field_path(logic, "exact_logic")
    count = len(logic.solutions)

    for row_number, entry in enumerate(logic.table):
        if not 0 <= entry.solution < count:
            findings.append(
                _error(
                    code="missing-solution",
                    message=f"table row refers to solution {entry.solution}, but the file has {count} solutions",
                    path=f"{table_at}[{row_number}][1][0]",
                )
            )
        if isinstance(entry.efficiency, float) and math.isnan(entry.efficiency):
            findings.append(
                _warning(code="nan-efficiency", message="efficiency is NaN", path=f"{table_at}[{row_number}][1][1]")
            )

    # duplicate size rows (a warning naming the row the runtime uses) need the runtime's table order:
    # tensilekit.inspect.validate_file adds them (selection.duplicates)

    if logic.index_order is not None:
        width = len(logic.index_order)
        for row_number, entry in enumerate(logic.table):
            if len(entry.size) not in (width, width + 4):
                findings.append(
                    _error(
                        code="key-length",
                        message=f"size key has {len(entry.size)} numbers; index order {logic.index_order} "
                        f"expects {width} (or {width + 4} with leading dimensions)",
                        path=f"{table_at}[{row_number}][0]",
                    )
                )
                break
        if sorted(logic.index_order) != list(range(width)):
            findings.append(
                _error(
                    code="index-order",
                    message=f"index order {logic.index_order} is not a permutation of 0..{width - 1}",
                    path=logic_field_path(logic, "index_order"),
                )
            )

    header = logic.problem_type.raw()
    for number, solution in enumerate(logic.solutions):
        if not isinstance(solution.problem_type, ProblemType):
            continue  # absent, or "derive" (DecisionTree files)
        own = solution.problem_type.raw()
        differing = sorted(key for key in header.keys() & own.keys() if header[key] != own[key])
        if differing:
            findings.append(
                _error(
                    code="problem-type-mismatch",
                    message=f"solution's ProblemType disagrees with the file's on {', '.join(differing[:5])}",
                    path=f"{solutions_at}[{number}].ProblemType.{differing[0]}",
                )
            )

    indices = Counter(s.solution_index for s in logic.solutions if s.solution_index is not None)
    repeated = sorted(index for index, seen in indices.items() if seen > 1)
    if repeated:
        findings.append(
            _warning(
                code="duplicate-solution-index",
                message=f"SolutionIndex values repeat ({repeated[:5]}); tools re-number by position",
                path=solutions_at,
            )
        )

    if logic.dialect is Dialect.TENSILELITE and logic.layout is Layout.LIST:
        if logic.library_type not in TENSILELITE_LIBRARY_TYPES:
            findings.append(
                _error(
                    code="library-type",
                    message=f"unknown tensilelite library type {logic.library_type!r}",
                    path=logic_field_path(logic, "library_type"),
                )
            )
    if logic.layout is Layout.LIST and logic.exact_logic is None and logic.matching_distance != "FreeSize":
        findings.append(_error(code="missing-table", message="no exact-logic table", path=table_at))
    return findings


def check_master(master: MasterLibrary) -> list[Finding]:
    """Consistency checks for a master library: errors for what the runtime cannot use (a table
    naming a solution the file lacks, a key of the wrong length …), warnings for what it loads but
    answers surprisingly (several solutions with one index: it keeps the last)."""
    findings: list[Finding] = []
    positions: dict[int, list[int]] = {}
    for position, solution in enumerate(master.solutions):
        positions.setdefault(solution.index, []).append(position)
    known = set(positions)
    for repeated, places in positions.items():
        if len(places) > 1:
            # Serialization/SolutionLibrary.hpp MappingTraits<MasterSolutionLibrary>::mapping
            # (Tensile 09ec347/a164ed70, hipBLASLt 7d9fb683): lib.solutions[s->index] = s, in list order
            kept = places[-1]
            dropped = ", ".join(f"solutions[{place}]" for place in places[:-1])
            findings.append(
                _warning(
                    code="duplicate-index",
                    message=f"{' and '.join(f'solutions[{place}]' for place in places)} share index {repeated}; "
                    f"the runtime keeps the last, solutions[{kept}] ({master.solutions[kept].name}), and never "
                    f"uses {dropped}",
                    path=f"solutions[{places[0]}].index",
                )
            )
    for path, node in master.iter_nodes():
        if isinstance(node, MatchingNode):
            width = len(node.properties)
            for number, entry in enumerate(node.table):
                index = entry.index if entry.index is not None else (entry.value.index if entry.value else None)
                if index is None:
                    findings.append(
                        _error(
                            code="missing-index",
                            message="table entry names no solution",
                            path=f"{path}.table[{number}]",
                        )
                    )
                elif index not in known:
                    findings.append(
                        _error(
                            code="missing-solution",
                            message=f"table entry refers to solution index {index}, which is not in 'solutions'",
                            path=f"{path}.table[{number}].index",
                        )
                    )
                if len(entry.key) != width:
                    findings.append(
                        _error(
                            code="key-length",
                            message=f"key has {len(entry.key)} numbers but the table has {width} properties",
                            path=f"{path}.table[{number}].key",
                        )
                    )
                if isinstance(entry.speed, float) and math.isinf(entry.speed):
                    findings.append(
                        _warning(
                            code="infinite-speed",
                            message="speed is infinite: Tensile's C++ YAML loader rejects '.inf' (msgpack is fine)",
                            path=f"{path}.table[{number}].speed",
                        )
                    )
        elif isinstance(node, SingleNode):
            if node.index != -1 and node.index not in known:
                findings.append(
                    _error(
                        code="missing-solution",
                        message=f"refers to solution index {node.index}, which is not in 'solutions'",
                        path=f"{path}.index",
                    )
                )
        elif isinstance(node, FreeSizeNode):
            for number, free in enumerate(node.table):
                if free.index not in known:
                    findings.append(
                        _error(
                            code="missing-solution",
                            message=f"refers to solution index {free.index}, which is not in 'solutions'",
                            path=f"{path}.table[{number}].index",
                        )
                    )
        elif isinstance(node, GranularitySelectionNode):
            for index in node.indices:
                if index not in known:
                    findings.append(
                        _error(
                            code="missing-solution", message=f"refers to solution index {index}", path=f"{path}.indices"
                        )
                    )
        elif isinstance(node, PredictionNode):
            for number, index in enumerate(node.table):
                if index not in known:
                    findings.append(
                        _error(
                            code="missing-solution",
                            message=f"refers to solution index {index}, which is not in 'solutions'",
                            path=f"{path}.table[{number}]",
                        )
                    )
        elif isinstance(node, DecisionTreeNode):
            for number, tree in enumerate(node.trees):
                size = len(tree.tree)
                for node_number, tree_node in enumerate(tree.tree):
                    bad = [n for n in (tree_node.next_index_lte, tree_node.next_index_gt) if not (-2 <= n < size)]
                    if bad or not 0 <= tree_node.feature_index < len(node.features):
                        findings.append(
                            _error(
                                code="tree-index",
                                message="decision-tree node points outside its tree or feature list",
                                path=f"{path}.trees[{number}].tree[{node_number}]",
                            )
                        )
                        break
    findings += _unmodelled_findings(master)
    return findings


def _predicates(master: MasterLibrary) -> Iterator[tuple[str, Any]]:
    """``(path, predicate)`` of every predicate ``master`` carries: solutions' predicates, then rows'."""
    for position, solution in enumerate(master.solutions):
        for key, predicate in (
            ("hardwarePredicate", solution.hardware_predicate),
            ("problemPredicate", solution.problem_predicate),
            ("taskPredicate", solution.task_predicate),
        ):
            yield f"solutions[{position}].{key}", predicate
    for path, node in master.iter_nodes():
        if isinstance(node, (HardwareNode, ProblemNode)):
            for number, row in enumerate(node.rows):
                yield f"{path}.rows[{number}].predicate", row.predicate


def unmodelled_predicates(master: MasterLibrary) -> list[tuple[str, str]]:
    """``(path, type)`` of every predicate ``master`` carries whose type tensilekit does not model
    (:class:`~tensilekit.model.predicates.UnmodelledPredicate`): solutions' predicates, then rows'.
    Each predicate object is searched once: a big master's solutions share a few thousand
    (rocBLAS_Full: 64 000 predicates, 3 800 objects: 0.17 -> 0.09 s)."""
    found: list[tuple[str, str]] = []
    searched: dict[int, tuple[Any, list[str]]] = {}  # id -> (the predicate, kept: its id stays its), its types
    for path, predicate in _predicates(master):
        known = searched.get(id(predicate))
        if known is None or known[0] is not predicate:
            known = searched[id(predicate)] = (predicate, unmodelled_types(predicate))
        found.extend((path, name) for name in known[1])
    return found


BOOL_SCALE_AB_IN_MSGPACK = (
    "UseScaleAB predicate with a boolean value (the pre-2025 logic form 'UseScaleAB: false') in a msgpack "
    "master: hipBLASLt 7d9fb683's and 0.12.1's runtimes cannot load this file (they read the value as a "
    "string, and msgpack refuses a boolean: 'msgpack type_error std::bad_cast'), though they load the same "
    "library as YAML; rebuild from logic whose problem types (the file's and its solutions') say "
    "'UseScaleAB: \"\"', or ship the YAML master"
)
"""Measured: ``select-oracle`` (the 7d9fb683 and 0.12.1 C++) loads ``build-master``'s YAML master of
``fixtures/older_forms/hipblaslt`` and aborts on its ``.dat``. Why: ``UseScaleABCheck`` keeps
``std::string value`` (tensilelite ``ContractionProblemPredicates.hpp``; the problem's
``setUseScaleAB(std::string)``, which ``oracle-tensilelite/oracle_hipblaslt.cpp`` calls with ``""``)
and msgpack-cxx's ``object::as<std::string>()`` throws ``type_error`` on a boolean, while LLVM YAML
reads ``false`` as the text ``"false"``. TensileCreateLibrary writes the logic file's bool as it is
(``Contractions.py:230`` @7d9fb683), so AMD's own build writes such a ``.dat``."""


def msgpack_load_findings(master: MasterLibrary) -> list[Finding]:
    """Warnings for ``master`` held as msgpack (``.dat``, ``.dat.zlib``): what the runtimes cannot load
    in that form although they load it as YAML. The caller knows the form; this only reads the model."""
    places = [path for path, predicate in _predicates(master) if bool_scale_ab(predicate)]
    if not places:
        return []
    more = f" ({len(places)} predicates, the first here)" if len(places) > 1 else ""
    return [_warning(code="msgpack-bool-scale-ab", message=BOOL_SCALE_AB_IN_MSGPACK + more, path=places[0])]


def unmodelled_message(name: str) -> str:
    """The finding ``validate`` and ``lint`` report for a predicate type tensilekit does not model."""
    return (
        f"predicate type {name!r} is not modelled: tensilekit passes over what carries it (a runtime "
        "that does not know the type refuses the whole library: 'Unknown subclass type')"
    )


def _unmodelled_findings(master: MasterLibrary) -> list[Finding]:
    return [
        _warning(code="unmodelled-predicate", message=unmodelled_message(name), path=path)
        for path, name in unmodelled_predicates(master)
    ]


def has_errors(findings: list[Finding]) -> bool:
    return any(finding.severity == "error" for finding in findings)


__all__ = [
    "BOOL_SCALE_AB_IN_MSGPACK",
    "Finding",
    "Severity",
    "check_logic",
    "check_master",
    "has_errors",
    "logic_field_path",
    "msgpack_load_findings",
    "unmodelled_message",
    "unmodelled_predicates",
]

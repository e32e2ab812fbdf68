"""Logic files → master solution library ("build-master"), as TensileCreateLibrary writes it.

Reproduces, for the Tensile 4.44 Python that built ``shared/corpus/masters``:

* ``LibraryIO.parseLibraryLogicData``: each logic file is read once, by the one logic reader
  (:func:`tensilekit.io.logic_io.logic_from_data` → :class:`~tensilekit.model.logic.LogicFile`);
  this module only applies Tensile's defaults (Euclidean distance, ``DeviceEfficiency``, no
  CUCount/IsAPU, Fp16 flags off) and forces every assembly kernel's ``ISA`` to the file's
  architecture (source kernels get ``(0, 0, 0)``), as ``parseLibraryLogicData`` does.
* ``SolutionLibrary.MasterSolutionLibrary.FromOriginalState``: per logic file, the tree is built
  bottom-up from ``libraryOrder``: selection (``Matching`` behind an ``EqualityMatching``/``TruePred``
  Problem row, or one Problem row per DecisionTree region) → [``Placeholder`` when lazy] → Problem
  row of the type predicates → ``Fp16AltImplRound`` row → ``Fp16AltImpl`` row → performance-metric
  row → ``ProblemMap`` on the operation identifier → ``Hardware`` row. The tensilelite dialect drops
  the two Fp16 levels and the IsAPU flag and adds ``FreeSize`` (behind ``FreeSizeMatching``).
* ``FixSolutionIndices`` (missing/duplicate ``SolutionIndex`` values are renumbered upwards from
  the maximum), and table rows refer to solutions by *list position*.
* ``TensileCreateLibrary.makeMasterLibraries``: files are merged in the given order; with separate
  architectures the first file of an architecture is renumbered from
  ``ArchitectureIndexMap(gfx) = int(hex digits, 16) << 18`` and later files continue consecutively
  (``MasterSolutionLibrary.merge``); without, the first file keeps its own indices.
* The merge rules of ``PredicateLibrary`` (equal predicates merge, others append, then the rows are
  re-sorted, see :mod:`tensilekit.libbuild.predicates`), ``ProblemMapLibrary`` (union),
  ``MatchingLibrary`` (tables concatenated and stably re-sorted by key) and
  ``DecisionTreeLibrary`` (merging is an error).
* ``writeMasterFile`` → ``applyNaming``: every solution is named with the min-naming of all kernels
  of the build (:func:`tensilekit.model.naming.min_naming`).

The result is the raw object tree (plain dicts/lists) that ``LibraryIO.write`` serialises. Inputs
are not modified. Errors in the input raise :class:`~tensilekit.errors.LibraryFormatError`
subclasses whose location names the file and the position inside it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from tensilekit._arguments import require
from tensilekit.errors import InvalidValue, LibraryFormatError, Location, MergeError, MissingField, error_context
from tensilekit.io.logic_io import logic_from_data, logic_to_data
from tensilekit.libbuild.entries import solution_record
from tensilekit.libbuild.predicates import (
    TRUE,
    Predicate,
    and_,
    hardware_predicate,
    operation_identifier,
    predicate_from_state,
    problem_type_predicates,
    sort_rows,
    tensor_types,
)
from tensilekit.libbuild.tensilelite import build_tensilelite_libraries, solution_states
from tensilekit.model.derive_tensilelite import CustomKernelConfig, LiteState
from tensilekit.model.logic import DICT_KEYS, LIST_LAYOUTS, ArchitectureSpec, Dialect, Layout, LogicFile
from tensilekit.model.naming import (
    KernelState,
    ProblemTypeState,
    gfx_isa,
    kernel_state,
    min_naming,
    problem_type_state,
    solution_name_min,
)
from tensilekit.model.tensile_parameters import DATA_TYPE_BY_NAME
from tensilekit.model.tensilelite_parameters import TENSILELITE_VERSION

if TYPE_CHECKING:
    from tensilekit.model.library import MasterLibrary

#: ``(source name, logic file)``: parsed YAML (list or mapping form) or a :class:`LogicFile`.
LogicInput = tuple[str, Any]

#: The ``ArchitectureIndexMap`` shift: each architecture owns a block of 2**18 indices.
ARCH_INDEX_SHIFT = 18


# ------------------------------------------------------------------------------------------
# internal library objects (mutable while building; never exposed)


@dataclasses.dataclass(eq=False)
class _Solution:
    state: KernelState
    index: int
    body: dict[str, Any]  # the solution record without its final name and index

    def record(self, name: str) -> dict[str, Any]:
        out = dict(self.body)
        out["index"] = self.index
        out["name"] = name
        if "kernelName" in out:
            out["kernelName"] = name
        return out


@dataclasses.dataclass(eq=False)
class _Row:
    predicate: Predicate
    library: _Node


@dataclasses.dataclass(eq=False)
class _PredicateLib:
    tag: str  # "Hardware" or "Problem"
    rows: list[_Row]

    def merge(self, other: _Node) -> None:
        if not isinstance(other, _PredicateLib) or other.tag != self.tag:
            raise MergeError(f"cannot merge a {_tag(other)} node into a {self.tag} node")
        for row in other.rows:
            mine = next((r for r in self.rows if r.predicate == row.predicate), None)
            if mine is not None:
                mine.library.merge(row.library)
            else:
                self.rows.append(row)
        sort_rows(self.rows, hardware=self.tag == "Hardware")

    def state(self) -> dict[str, Any]:
        return {
            "rows": [{"library": r.library.state(), "predicate": r.predicate.state()} for r in self.rows],
            "type": self.tag,
        }


@dataclasses.dataclass(eq=False)
class _ProblemMapLib:
    mapping: dict[str, _Node]

    def merge(self, other: _Node) -> None:
        if not isinstance(other, _ProblemMapLib):
            raise MergeError(f"cannot merge a {_tag(other)} node into a ProblemMap node")
        for key, value in other.mapping.items():
            if key in self.mapping:
                self.mapping[key].merge(value)
            else:
                self.mapping[key] = value

    def state(self) -> dict[str, Any]:
        return {
            "map": {k: v.state() for k, v in self.mapping.items()},
            "property": {"type": "OperationIdentifier"},
            "type": "ProblemMap",
        }


@dataclasses.dataclass(eq=False)
class _Entry:
    key: list[int]
    solution: _Solution
    speed: Any  # None for GridBased tables


@dataclasses.dataclass(eq=False)
class _MatchingLib:
    properties: list[dict[str, Any]]
    table: list[_Entry]
    distance: str
    plain_index: bool  # tensilelite writes plain integer indices (Tensile too, since "Index")

    def merge(self, other: _Node) -> None:
        if not (
            isinstance(other, _MatchingLib) and other.properties == self.properties and other.distance == self.distance
        ):
            raise MergeError("cannot merge matching tables with different properties or distance")
        self.table += other.table
        self.table.sort(key=lambda e: e.key)

    def state(self) -> dict[str, Any]:
        table = []
        for e in self.table:
            entry: dict[str, Any] = {"index": e.solution.index, "key": list(e.key)}
            if e.speed is not None:
                entry["speed"] = e.speed
            table.append(entry)
        return {"distance": self.distance, "properties": self.properties, "table": table, "type": "Matching"}


@dataclasses.dataclass(eq=False)
class _DecisionTreeLib:
    features: Any
    trees: list[tuple[Any, _Solution]]
    null: _Solution | None

    def merge(self, other: _Node) -> None:
        raise MergeError("DecisionTreeLibrary does not support merging; each library row needs a unique predicate")

    def state(self) -> dict[str, Any]:
        return {
            "features": self.features,
            "nullValue": _single(self.null),
            "trees": [{"tree": tree, "value": _single(sol)} for tree, sol in self.trees],
            "type": "DecisionTree",
        }


@dataclasses.dataclass(eq=False)
class _FreeSizeLib:
    solutions: list[_Solution]

    def merge(self, other: _Node) -> None:
        if not isinstance(other, _FreeSizeLib):
            raise MergeError(f"cannot merge a {_tag(other)} node into a FreeSize node")
        self.solutions += other.solutions

    def state(self) -> dict[str, Any]:
        return {"table": [{"index": s.index} for s in self.solutions], "type": "FreeSize"}


@dataclasses.dataclass(eq=False)
class _PlaceholderLib:
    name: str

    def merge(self, other: _Node) -> None:
        return None  # PlaceholderLibrary.merge: the referenced files are merged separately

    def state(self) -> dict[str, Any]:
        return {"type": "Placeholder", "value": self.name}


_Node = Union[_PredicateLib, _ProblemMapLib, _MatchingLib, _DecisionTreeLib, _FreeSizeLib, _PlaceholderLib]


def _tag(node: _Node) -> str:
    return type(node).__name__.strip("_").removesuffix("Lib")


def _single(solution: _Solution | None) -> dict[str, Any]:
    return {"index": solution.index if solution is not None else -1, "type": "Single"}


@dataclasses.dataclass(eq=False)
class _Master:
    solutions: list[_Solution]
    library: _Node
    lazy: dict[str, _Master]

    def all_solutions(self) -> Iterator[_Solution]:
        yield from self.solutions
        for lib in self.lazy.values():
            yield from lib.all_solutions()

    def renumber_from(self, start: int) -> None:
        """``remapSolutionIndicesStartingFrom``: lazy libraries first, then own solutions."""
        for lib in self.lazy.values():
            _renumber(lib.solutions, start)
        _renumber(self.solutions, start)

    def merge(self, other: _Master, start: int = 0) -> int:
        """``MasterSolutionLibrary.merge``; returns the next unused index."""
        cur = max(start, max((s.index for s in self.solutions), default=-1) + 1)
        if self.lazy:
            cur = max(cur, max(max((s.index for s in lib.solutions), default=-1) for lib in self.lazy.values()) + 1)
        for name, lib in other.lazy.items():
            if name in self.lazy:
                cur = self.lazy[name].merge(lib, cur)
            else:
                cur = _renumber(lib.solutions, cur)
                self.lazy[name] = lib
        cur = _renumber(other.solutions, cur)
        self.solutions += other.solutions
        self.library.merge(other.library)
        return cur


def _renumber(solutions: list[_Solution], start: int) -> int:
    for s in solutions:
        s.index = start
        start += 1
    return start


# ------------------------------------------------------------------------------------------
# one logic file → one master library


_INDEX_PROPERTIES = {2: ("FreeSizeA", 0), 3: ("FreeSizeB", 0), 1: ("BoundSize", 0)}
_FIELD_KEYS = {field: key for key, field in DICT_KEYS.items()}


def _where(logic: LogicFile, field: str) -> str:
    """The location of a :class:`LogicFile` field: list position (``[5]``) or key (``Solutions``)."""
    if logic.layout is Layout.DICT:
        return _FIELD_KEYS[field]
    return f"[{LIST_LAYOUTS[logic.dialect].index(field)}]"


@dataclasses.dataclass(frozen=True)
class _Hardware:
    """``parseLibraryLogicData``'s architecture fields (missing CUCount/IsAPU are None)."""

    architecture: str
    cu_count: int | None
    is_apu: int | bool | None


def _hardware(logic: LogicFile) -> _Hardware:
    architecture = logic.architecture_name
    if architecture is None:
        raise MissingField("logic file names no architecture", Location(path=_where(logic, "architecture")))
    spec = logic.architecture if isinstance(logic.architecture, ArchitectureSpec) else None
    cu_count = logic.cu_count if logic.cu_count is not None else spec.cu_count if spec else None
    is_apu = logic.is_apu if logic.is_apu is not None else spec.is_apu if spec else None
    return _Hardware(architecture, cu_count, is_apu)


def _flag(logic: LogicFile, value: Any, name: str) -> bool:
    """Fp16AltImpl(Round): a marker string at its list position, a boolean under its dict key."""
    return value == name if logic.layout is Layout.LIST else bool(value)


def _selection_kind(logic: LogicFile) -> str:
    """``Matching`` distance name or ``DecisionTree`` (Tensile's ``parseLibraryLogicData``;
    tensilelite files are built by :mod:`tensilekit.libbuild.tensilelite`)."""
    if logic.layout is Layout.DICT:
        if logic.library_type is None:
            raise MissingField("logic file has no LibraryType", Location(path="LibraryType"))
        if logic.library_type != "DecisionTree":
            raise InvalidValue(
                f"unsupported LibraryType {logic.library_type!r} in a mapping-form logic file",
                Location(path="LibraryType"),
            )
        return "DecisionTree"
    return logic.distance or "Euclidean"


def _matching(logic: LogicFile, solutions: list[_Solution], distance: str) -> _MatchingLib:
    index_order, table = logic.index_order, logic.exact_logic
    if index_order is None:
        raise InvalidValue("index order must be a list of integers", Location(path=_where(logic, "index_order")))
    where = _where(logic, "exact_logic")
    if table is None:
        raise InvalidValue("exact logic must be a list", Location(path=where))
    props = dict(_INDEX_PROPERTIES)
    if distance == "Equality":
        props[0] = ("BatchSize", 0)
    properties = [{"index": props[i][1], "type": props[i][0]} for i in index_order if i in props]
    key_order = [pos for pos, code in enumerate(index_order) if code in props]
    width = max(index_order, default=-1) + 1
    entries = []
    for row_no, row in enumerate(table):
        if len(row.size) < width:
            raise InvalidValue(
                "size key must be a list of integers covering the index order", Location(path=f"{where}[{row_no}][0]")
            )
        if not 0 <= row.solution < len(solutions):
            raise InvalidValue(
                f"table row refers to solution {row.solution}, but the file has {len(solutions)}",
                Location(path=f"{where}[{row_no}][1][0]"),
            )
        speed = None if distance == "GridBased" else row.efficiency
        entries.append(_Entry([row.size[i] for i in key_order], solutions[row.solution], speed))
    entries.sort(key=lambda e: e.key)
    return _MatchingLib(properties, entries, distance, plain_index=True)


def _decision_trees(logic: LogicFile, solutions: list[_Solution]) -> _PredicateLib:
    library_path = _where(logic, "decision_library")
    if logic.decision_library is None:
        raise MissingField("logic file has no Library", Location(path=library_path))

    def solution_at(position: Any, path: str) -> _Solution:
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(solutions):
            raise InvalidValue(f"no solution at position {position!r}", Location(path=path))
        return solutions[position]

    rows = []
    for i, forest in enumerate(logic.decision_library):
        where = f"{library_path}[{i}]"
        if not isinstance(forest, Mapping):
            raise InvalidValue("a DecisionTree entry must be a mapping", Location(path=where))
        for key in ("features", "trees", "region"):
            if key not in forest:
                raise MissingField(f"DecisionTree entry has no {key}", Location(path=f"{where}.{key}"))
        region = forest["region"]
        if not isinstance(region, list):
            raise InvalidValue("region must be a list of predicates", Location(path=f"{where}.region"))
        preds = [predicate_from_state(p, path=f"{where}.region[{j}]") for j, p in enumerate(region)]
        predicate = preds[0] if len(preds) == 1 else Predicate("And", value=tuple(preds))
        trees = []
        for j, tree in enumerate(forest["trees"]):
            if not isinstance(tree, Mapping) or "tree" not in tree or "solution" not in tree:
                raise InvalidValue("a tree needs 'tree' and 'solution'", Location(path=f"{where}.trees[{j}]"))
            trees.append((tree["tree"], solution_at(tree["solution"], f"{where}.trees[{j}].solution")))
        null = solution_at(forest["fallback"], f"{where}.fallback") if "fallback" in forest else None
        rows.append(_Row(predicate, _DecisionTreeLib(forest["features"], trees, null)))
    return _PredicateLib("Problem", rows)


def _selection(logic: LogicFile, solutions: list[_Solution]) -> _Node:
    kind = _selection_kind(logic)
    if kind == "DecisionTree":
        return _decision_trees(logic, solutions)
    if kind == "FreeSize":  # a Tensile file whose distance field says FreeSize
        return _PredicateLib("Problem", [_Row(Predicate("FreeSizeMatching"), _FreeSizeLib(list(solutions)))])
    matching = _matching(logic, solutions, kind)
    predicate = Predicate("EqualityMatching") if matching.distance == "Equality" else TRUE
    return _PredicateLib("Problem", [_Row(predicate, matching)])


def placeholder_type_string(pt: ProblemTypeState) -> str:
    """``ProblemType.placeholderStr(includeBatch=True, includeType=True)``, e.g. ``_Type_HH_HPA``.

    Tensile a164ed70 ``Contractions.py:249-261``: the A and C type characters (``aType``: ``B8``
    for ``B8F8`` data) and ``_HPA``, nothing else. F32 xdl math and stochastic rounding are left
    out, so a stochastic-rounding type and its plain twin (or an XF32 type and its plain twin) name
    the same placeholder file, and ``MasterSolutionLibrary.merge`` puts both into that one file.
    """
    a_type = tensor_types(pt)[0]  # a mixed F8B8 / B8F8 type names its A half (aType)
    name = "_Type_" + DATA_TYPE_BY_NAME[a_type.lower()].char + pt["DestDataType"].char
    if pt.get("HighPrecisionAccumulate"):
        name += "_HPA"
    return str(name)


def _fix_indices(raw_indices: list[int | None]) -> list[int]:
    """``MasterSolutionLibrary.FixSolutionIndices``."""
    highest = max((i for i in raw_indices if i is not None), default=-1)
    seen: set[int] = set()
    fixed = []
    for index in raw_indices:
        if index is None or index in seen:
            highest += 1
            fixed.append(highest)
        else:
            seen.add(index)
            fixed.append(index)
    return fixed


def _isa_for(architecture: str) -> tuple[int, int, int] | None:
    return None if architecture == "fallback" else gfx_isa(architecture)


def _derived(logic: LogicFile) -> list[tuple[KernelState, dict[str, Any]]]:
    """``(kernel state, raw solution)`` per solution; the ISA comes from the file's architecture."""
    solutions_path = _where(logic, "solutions")
    isa = _isa_for(_hardware(logic).architecture)
    problem_type = logic.problem_type.raw()
    out = []
    for i, solution in enumerate(logic.solutions):
        raw = solution.raw()
        state = kernel_state(
            raw,
            isa=isa,
            problem_type=problem_type,
            force_isa=True,
            path=f"{solutions_path}[{i}]",
        )
        out.append((state, raw))
    return out


def kernel_states(
    logic: LogicFile, *, custom_kernel_config: CustomKernelConfig | None = None
) -> list[KernelState] | list[LiteState]:
    """Each solution's kernel state as TensileCreateLibrary derives it (``Solution(state)``).

    Unlike :func:`~tensilekit.model.naming.kernel_state` on its own, every assembly kernel's ISA is
    the file's architecture, whatever ``ISA`` the solution carries (``parseLibraryLogicData``).
    A tensilelite file's states are the ones its build uses
    (:func:`tensilekit.libbuild.tensilelite.solution_states`: tensilelite's own ``Solution`` fork,
    its keys, ``ProblemType`` a plain dict); its custom kernels need ``custom_kernel_config``.
    Raises TypeError when ``logic`` is not a LogicFile.
    """
    require(logic, LogicFile, "logic", "kernel_states")
    if logic.dialect is Dialect.TENSILELITE:
        return solution_states(logic_to_data(logic), custom_kernel_config)
    return [state for state, _ in _derived(logic)]


def _solutions(logic: LogicFile) -> list[_Solution]:
    solutions_path = _where(logic, "solutions")
    raw_indices = [solution.solution_index for solution in logic.solutions]
    solutions = []
    for i, ((state, raw), index, raw_index) in enumerate(
        zip(_derived(logic), _fix_indices(raw_indices), raw_indices, strict=True)
    ):
        # Built eagerly so that bad values are reported while the file is known.
        body = solution_record(
            state,
            name="",
            index=index,
            raw=raw,
            path=f"{solutions_path}[{i}]",
            library_logic_index=raw_index if raw_index is not None else -1,
        )
        solutions.append(_Solution(state, index, body))
    return solutions


# Tensile's library step reads these from the file's ProblemType as written, without defaults
# (``Contractions.ProblemType.FromOriginalState``, Contractions.py:64-117 @a164ed70, the same at
# 09ec347): a file lacking one stops AMD's build (measured with a164ed70's TensileCreateLibrary
# library code, tests/tensile_build_driver.py: KeyError for each; DataType: "exit -1"), so tensilekit
# refuses it too rather than build what AMD never would.
_TENSILE_STORED_PROBLEM_TYPE_KEYS = (
    "DataType", "NumIndicesC", "IndexAssignmentsA", "IndexAssignmentsB", "TotalIndices", "IndicesFree",
    "IndicesBatch", "IndicesSummation", "ComplexConjugateA", "ComplexConjugateB",
)  # fmt: skip


def _require_stored_problem_type_keys(logic: LogicFile) -> None:
    raw = logic.problem_type.raw()
    missing = [key for key in _TENSILE_STORED_PROBLEM_TYPE_KEYS if key not in raw]
    if not missing:
        return
    where = _where(logic, "problem_type")
    hint = ""
    try:  # what to write: the values Tensile's ProblemType derives from the index assignments
        ia, ib, num_c = list(raw["IndexAssignmentsA"]), list(raw["IndexAssignmentsB"]), int(raw["NumIndicesC"])
        total = max([*ia, *ib, num_c - 1]) + 1
        derived: dict[str, Any] = {
            "TotalIndices": total,
            "IndicesFree": [i for i in range(num_c) if (i in ia) != (i in ib)],
            "IndicesBatch": [i for i in range(num_c) if i in ia and i in ib],
            "IndicesSummation": [i for i in range(num_c, total) if i in ia and i in ib],
            "ComplexConjugateA": False,
            "ComplexConjugateB": False,
        }
        known = [f"{key}: {derived[key]}".replace("False", "false") for key in missing if key in derived]
        hint = f" (for this problem type: {', '.join(known)})" if known else ""
    except (KeyError, TypeError, ValueError):
        pass
    raise MissingField(
        f"ProblemType has no {', '.join(missing)}: Tensile's TensileCreateLibrary reads "
        f"{'it' if len(missing) == 1 else 'them'} from the file as written and stops without "
        f"{'it' if len(missing) == 1 else 'them'}{'' if missing[0] == 'DataType' else f' (KeyError {missing[0]!r})'}"
        ", and AMD's own logic files carry "
        f"{'it' if len(missing) == 1 else 'them'}: add {'it' if len(missing) == 1 else 'them'} to the file's "
        f"ProblemType{hint}",
        Location(path=f"{where}.{missing[0]}"),
    )


def _from_logic(logic: LogicFile, hardware: _Hardware, *, lazy: bool) -> _Master:
    _require_stored_problem_type_keys(logic)
    pt = problem_type_state(logic.problem_type.raw(), path=_where(logic, "problem_type"))
    solutions = _solutions(logic)

    library: _Node = _selection(logic, solutions)
    placeholder: _PlaceholderLib | None = None
    lazy_master: _Master | None = None
    if lazy:
        lazy_master = _Master(solutions, library, {})
        placeholder = _PlaceholderLib("")
        library = placeholder
    name = "TensileLibrary"

    type_preds = problem_type_predicates(pt, include_operation=False, include_type=True)
    library = _PredicateLib("Problem", [_Row(and_(type_preds), library)])
    name += placeholder_type_string(pt)
    fp16_round = _flag(logic, logic.fp16_alt_impl_round, "Fp16AltImplRound")
    library = _PredicateLib("Problem", [_Row(Predicate("Fp16AltImplRound") if fp16_round else TRUE, library)])
    if fp16_round:
        name += "_Fp16AltRnz"
    fp16 = _flag(logic, logic.fp16_alt_impl, "Fp16AltImpl")
    library = _PredicateLib("Problem", [_Row(Predicate("Fp16AltImpl") if fp16 else TRUE, library)])
    if fp16:
        name += "_Fp16Alt"
    perf_metric = logic.performance_metric or "DeviceEfficiency"
    metric = Predicate(perf_metric) if perf_metric != "DeviceEfficiency" else TRUE
    library = _PredicateLib("Problem", [_Row(metric, library)])
    if metric.tag != "TruePred":
        name += "_" + metric.tag
    op_id = operation_identifier(pt)
    library = _ProblemMapLib({op_id: library})
    name += "_" + op_id
    hw = hardware_predicate(hardware.architecture, hardware.cu_count, hardware.is_apu)
    library = _PredicateLib("Hardware", [_Row(hw, library)])
    if hardware.cu_count:
        name += f"_CU{hardware.cu_count}"
    if hardware.is_apu is not None:
        name += "_APU" if hardware.is_apu == 1 else "_XPU"
    name += "_" + hardware.architecture

    if lazy_master is not None and placeholder is not None:
        placeholder.name = name
        return _Master([], library, {name: lazy_master})
    return _Master(solutions, library, {})


# ------------------------------------------------------------------------------------------
# public API


def architecture_index(architecture: str) -> int:
    """``MasterSolutionLibrary.ArchitectureIndexMap``: first solution index of an architecture."""
    if architecture == "fallback":
        return 0
    match = re.match(r"gfx([0-9a-f]+)", architecture)
    if match is None:
        raise InvalidValue(f"cannot map architecture {architecture!r} to a solution index")
    return int(match.group(1), 16) << ARCH_INDEX_SHIFT


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    """TensileCreateLibrary settings that change the master library."""

    dialect: Dialect = Dialect.TENSILE
    separate_architectures: bool = True
    lazy: bool = False
    version: str | None = "4.44.0"
    hipblaslt_version: str | None = None
    """tensilelite: whose TensileCreateLibrary (``"7d9fb683"``, ``"0.12.1"``; None: as the files show)."""

    @classmethod
    def of(
        cls, dialect: Dialect | str, separate_architectures: bool, lazy: bool, version: str | None,
        hipblaslt_version: str | None = None,
    ) -> BuildOptions:  # fmt: skip
        """Options from the public keyword arguments; an unknown dialect is an :class:`InvalidValue`."""
        try:
            chosen = Dialect(dialect)
        except ValueError:
            raise InvalidValue(f"unknown logic dialect {dialect!r} (tensile or tensilelite)") from None
        if version == DEFAULT_VERSION:
            version = _DIALECT_VERSIONS[chosen]
        if hipblaslt_version is not None and chosen is not Dialect.TENSILELITE:
            raise InvalidValue(
                f"a hipBLASLt version ({hipblaslt_version}) applies to tensilelite logic, not {chosen.value}"
            )
        return cls(chosen, separate_architectures, lazy, version, hipblaslt_version)


def _logic_file(source: str, data: Any, dialect: Dialect) -> LogicFile:
    """``data`` as a :class:`LogicFile`: parsed YAML goes through the one logic reader."""
    if isinstance(data, LogicFile):
        if data.dialect is not dialect:
            raise InvalidValue(
                f"a {data.dialect.value} logic file cannot join a {dialect.value} build", Location(file=source)
            )
        return data
    return logic_from_data(data, dialect=dialect, source=source)


def _merge_all(logic_files: Sequence[LogicInput], options: BuildOptions) -> dict[str, _Master]:
    logics = [(source, _logic_file(source, data, options.dialect)) for source, data in logic_files]
    masters: dict[str, _Master] = {}
    next_index: dict[str, int] = {}
    for source, logic in logics:
        with error_context(source):
            hardware = _hardware(logic)
            try:
                new = _from_logic(logic, hardware, lazy=options.lazy)
            except (KeyError, IndexError, TypeError, AttributeError) as exc:
                raise LibraryFormatError(
                    f"malformed logic file: {exc!r}", Location(path=_where(logic, "solutions"))
                ) from exc
            key = hardware.architecture if options.separate_architectures else "full"
            if key in masters:
                next_index[key] = masters[key].merge(new, next_index[key])
            elif options.separate_architectures:
                start = architecture_index(hardware.architecture)
                new.renumber_from(start)
                masters[key] = new
                next_index[key] = start
            else:
                masters[key] = new
                next_index[key] = 0
    return masters


def _tree(master: _Master, names: Mapping[int, str], version: str | None) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "library": master.library.state(),
        "solutions": [s.record(names[id(s)]) for s in master.solutions],
    }
    if version is not None:
        tree["version"] = version
    return tree


#: What ``version`` means by default: the TensileCreateLibrary version of each dialect's build.
DEFAULT_VERSION = "default"
_DIALECT_VERSIONS = {Dialect.TENSILE: "4.44.0", Dialect.TENSILELITE: TENSILELITE_VERSION}


def _build_tensilelite(
    logic_files: Sequence[LogicInput], options: BuildOptions, custom_kernel_config: CustomKernelConfig | None
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The dialect seam: tensilelite files go through their own port (:mod:`tensilekit.libbuild.tensilelite`)."""
    if not options.separate_architectures:
        raise InvalidValue("tensilelite masters are built per architecture (hipBLASLt's build separates them)")
    inputs = []
    for source, data in logic_files:
        if isinstance(data, LogicFile):
            if data.dialect is not Dialect.TENSILELITE:
                raise InvalidValue(
                    f"a {data.dialect.value} logic file cannot join a tensilelite build", Location(file=source)
                )
            data = logic_to_data(data)
        if isinstance(data, dict):  # the canonical dict form (lint, the API): the build reads lists
            from tensilekit.io.logic_canonical import tensilelite_build_form

            data = tensilelite_build_form(data, source)
        inputs.append((source, data))
    files = build_tensilelite_libraries(
        inputs, lazy=options.lazy, version=options.version, custom_kernel_config=custom_kernel_config,
        hipblaslt_version=options.hipblaslt_version,
    )  # fmt: skip
    prefix = "TensileLibrary_lazy_" if options.lazy else "TensileLibrary_"
    return [name for name in files if name.startswith(prefix)], files


def _build(
    logic_files: Sequence[LogicInput], options: BuildOptions, custom_kernel_config: CustomKernelConfig | None = None
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    if options.dialect is Dialect.TENSILELITE:
        return _build_tensilelite(logic_files, options, custom_kernel_config)
    masters = _merge_all(logic_files, options)
    all_solutions = [s for m in masters.values() for s in m.all_solutions()]
    naming = min_naming([s.state for s in all_solutions])
    names = {id(s): solution_name_min(s.state, naming) for s in all_solutions}
    tops: list[str] = []
    out: dict[str, dict[str, Any]] = {}
    for arch, master in masters.items():
        prefix = "TensileLibrary_lazy" if options.lazy else "TensileLibrary"
        base = prefix if arch == "full" else f"{prefix}_{arch}"
        tops.append(base)
        out[base] = _tree(master, names, options.version)
        for name, lib in master.lazy.items():
            # writeMasterFile sets the version on the master only, not on its placeholder files
            out[name] = _tree(lib, names, None)
    return tops, out


def build_logic_master(logic: LogicFile, source: str) -> MasterLibrary:
    """The master one logic file builds to, as ``lint`` checks it and ``validate`` requires it.

    One read for every command: a logic file TensileCreateLibrary cannot build (a kernel it cannot
    derive, a solution whose ProblemType differs from the file's …) is refused with the same error
    by ``build-master``, ``lint`` and ``validate``. hipBLASLt custom kernels keep their stored
    ``InternalSupportParams`` (:func:`~tensilekit.model.derive_tensilelite.keep_stored_custom_kernels`):
    the tables and predicates are checked, not the kernels' arguments.
    """
    from tensilekit.io.master_io import master_from_data
    from tensilekit.model.derive_tensilelite import keep_stored_custom_kernels

    trees = build_master_libraries(
        [(source, logic)], dialect=logic.dialect.value, custom_kernel_config=keep_stored_custom_kernels
    )
    name, tree = next(iter(trees.items()))
    return master_from_data(tree, source=name)


def build_master_libraries(
    logic_files: Sequence[LogicInput],
    *,
    dialect: Dialect | str = "tensile",
    separate_architectures: bool = True,
    lazy: bool = False,
    version: str | None = DEFAULT_VERSION,
    custom_kernel_config: CustomKernelConfig | None = None,
    hipblaslt_version: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Build every master-library file TensileCreateLibrary would write, keyed by file base name.

    Keys are ``TensileLibrary_<arch>`` (separate architectures), ``TensileLibrary`` (one library),
    or with ``lazy`` ``TensileLibrary_lazy_<arch>`` plus one entry per placeholder
    (``TensileLibrary_Type_HH_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a`` …). Placeholder files
    carry their own ``solutions`` and start at the selection level; the lazy master's
    ``solutions`` is empty. Naming covers all kernels of the build.

    Args:
        logic_files: ``(source name, logic file)`` pairs, in merge order. A logic file is parsed
            YAML data (read with :func:`~tensilekit.io.logic_io.logic_from_data`) or an already
            loaded :class:`~tensilekit.model.logic.LogicFile` of the same dialect. The source
            name is only used in error locations.
        dialect: ``tensile`` (rocBLAS, Tensile 4.44) or ``tensilelite`` (hipBLASLt 7d9fb683: built
            by :func:`tensilekit.libbuild.tensilelite.build_tensilelite_libraries`, indices from the
            first file's ``SolutionIndex``, no arch offset).
        version: the ``version`` field; by default the dialect's (4.44.0 / 4.33.0), ``None`` omits it.
        custom_kernel_config: tensilelite only: ``name -> custom.config`` of hipBLASLt custom kernels.
        hipblaslt_version: tensilelite only: build as ``"7d9fb683"``'s, ``"0.12.1"``'s or ``"5.x"``'s
            TensileCreateLibrary (None: 0.12.1 when a file's problem type names its fields, else
            7d9fb683; :mod:`tensilekit.selection.hipblaslt_versions`).
    """
    options = BuildOptions.of(dialect, separate_architectures, lazy, version, hipblaslt_version)
    return _build(logic_files, options, custom_kernel_config)[1]


def build_master_tree(
    logic_files: Sequence[LogicInput],
    *,
    dialect: Dialect | str = "tensile",
    separate_architectures: bool = True,
    lazy: bool = False,
    version: str | None = DEFAULT_VERSION,
    custom_kernel_config: CustomKernelConfig | None = None,
) -> dict[str, Any]:
    """Build the master library of logic files for one architecture (or one combined library).

    Returns the raw tree ``{"library": …, "solutions": […], "version": …}`` exactly as AMD's
    TensileCreateLibrary would serialise it. With ``lazy`` this is the ``TensileLibrary_lazy_<arch>``
    tree; use :func:`build_master_libraries` to get the placeholder files too.

    Raises:
        LibraryFormatError: a logic file does not fit (location names file and position).
        MergeError: logic files that cannot be merged (e.g. two DecisionTree files on one row),
            or, with separate architectures, files for more than one architecture.
    """
    if not logic_files:
        raise InvalidValue("no logic files given")
    tops, files = _build(
        logic_files, BuildOptions.of(dialect, separate_architectures, lazy, version), custom_kernel_config
    )
    if len(tops) != 1:
        raise MergeError(f"logic files span several architectures ({', '.join(tops)}); use build_master_libraries")
    return files[tops[0]]


__all__ = [
    "ARCH_INDEX_SHIFT",
    "BuildOptions",
    "DEFAULT_VERSION",
    "LogicInput",
    "architecture_index",
    "build_master_libraries",
    "build_master_tree",
    "kernel_states",
    "placeholder_type_string",
]

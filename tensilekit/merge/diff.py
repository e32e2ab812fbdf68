"""Structural diff of two libraries (logic files, directories of them, or master libraries).

Kernels are matched by *kernel identity*, never by index, so renumbering (which every merge
does) is not a difference. For logic files the identity is the merge tools' rule for the
dialect (:mod:`tensilekit.merge.identity`: Tensile full name, or tensilelite raw dict); for
master libraries it is the solution record without ``index``, ``name``, ``kernelName`` and
``libraryLogicIndex`` (those depend on the build, not on the kernel).

Per problem type (a logic file, or a master ``Matching`` leaf labelled by the predicates on its
path) the diff lists kernels added / removed / changed (same identity, other keys differ), size
keys added / removed / reassigned (other kernel identity) and efficiency deltas. Duplicate keys
are compared occurrence by occurrence, in table order.

:func:`selection_changes` answers "which queries select a different kernel" through a
*selector* callable, so it works with any selection engine. Defaults: for master libraries
:func:`master_selector`, an adapter over ``tensilekit.selection.select_solution`` (queries are
``corpus/select``-style records); for logic files :func:`exact_match_selector` (exact table
lookup, what Equality libraries do; queries are sizes or records).
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

import msgpack
from pydantic import BaseModel, ConfigDict, Field

from tensilekit._arguments import require, require_callable, require_path
from tensilekit.errors import LibraryFormatError, SelectionError, UnsupportedFormat
from tensilekit.merge.identity import Compat, dict_identity, freeze, identity_function
from tensilekit.model.common import OpenModel, to_raw
from tensilekit.model.labels import kernel_name_changes, problem_type_label
from tensilekit.model.library import (
    AnyNode,
    FreeSizeNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    ProblemMapNode,
    ProblemNode,
    SingleNode,
)
from tensilekit.model.logic import LogicFile, LogicSolution
from tensilekit.model.naming import problem_type_name
from tensilekit.model.solution import MasterSolution, dump_sharing_predicates

Library = Union[LogicFile, MasterLibrary, Mapping[str, LogicFile]]
LibraryInput = Union[Library, str, "os.PathLike[str]"]
Query = Union[Sequence[int], Mapping[str, Any]]
"""A size key ``[M, N, B, K, …]`` or a full query record (``corpus/select`` JSON-lines fields)."""
Selector = Callable[[Any, Query], Any]
"""``selector(library, query) -> solution | Selection | None`` (a selection engine adapter)."""

Number = float | int
SizeKey = list[int | float]


class _DiffModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DiffKernel(_DiffModel):
    """A kernel of one side: its position (logic) or ``index`` (master), and its name if known."""

    index: int | None
    name: str | None = None


class KernelChange(_DiffModel):
    """Same kernel identity on both sides, but the records differ in ``keys``."""

    a: DiffKernel
    b: DiffKernel
    keys: list[str]


class DiffSize(_DiffModel):
    key: SizeKey
    kernel: DiffKernel
    efficiency: Number | None = None


class SizeReassigned(_DiffModel):
    """A size mapped to a different kernel (by identity) in ``b``."""

    key: SizeKey
    a: DiffKernel
    b: DiffKernel
    a_efficiency: Number | None = None
    b_efficiency: Number | None = None
    changes: list[str] = Field(
        default_factory=list,
        description="the settings the two kernels' names differ in (``WGM8 → WGM4``): what a retune changed",
    )


class EfficiencyChange(_DiffModel):
    """Same size, same kernel, different efficiency."""

    key: SizeKey
    kernel: DiffKernel
    a: Number | None
    b: Number | None
    delta: float | None


class HeaderChange(_DiffModel):
    field: str
    a: Any = None
    b: Any = None


class GroupDiff(_DiffModel):
    """Differences within one problem type (a logic file, or one master table)."""

    name: str
    problem_type: str | None = None
    label: str | None = Field(
        default=None, description="a master table's short label (``HHS_BH TN gfx942``); None for a logic file"
    )
    key_names: list[str] | None = Field(
        default=None,
        description="a master table's key properties (FreeSizeA, FreeSizeB, BoundSize …); None for a logic "
        "file, whose keys are [M, N, batch, K]",
    )
    header_changes: list[HeaderChange] = Field(default_factory=list)
    kernels_added: list[DiffKernel] = Field(default_factory=list)
    kernels_removed: list[DiffKernel] = Field(default_factory=list)
    kernels_changed: list[KernelChange] = Field(default_factory=list)
    sizes_added: list[DiffSize] = Field(default_factory=list)
    sizes_removed: list[DiffSize] = Field(default_factory=list)
    sizes_reassigned: list[SizeReassigned] = Field(default_factory=list)
    efficiency_changes: list[EfficiencyChange] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (
            self.header_changes
            or self.kernels_added
            or self.kernels_removed
            or self.kernels_changed
            or self.sizes_added
            or self.sizes_removed
            or self.sizes_reassigned
            or self.efficiency_changes
        )

    @property
    def changed_keys(self) -> list[SizeKey]:
        """Every size whose table entry differs (added, removed, reassigned, efficiency)."""
        keys: list[SizeKey] = []
        seen: set[Hashable] = set()
        for entries in (self.sizes_added, self.sizes_removed, self.sizes_reassigned, self.efficiency_changes):
            for entry in entries:
                marker = freeze(entry.key)
                if marker not in seen:
                    seen.add(marker)
                    keys.append(entry.key)
        return keys


class SelectionChange(_DiffModel):
    """A query for which ``a`` and ``b`` select different kernels."""

    query: list[int] | dict[str, Any]
    group: str | None = None
    a: DiffKernel | None
    b: DiffKernel | None


class LibraryDiff(_DiffModel):
    """The result of :func:`diff_libraries`."""

    a: str
    b: str
    kind: Literal["logic", "directory", "master"]
    identity: str
    files_added: list[str] = Field(default_factory=list)
    files_removed: list[str] = Field(default_factory=list)
    table_labels: dict[str, str] = Field(
        default_factory=dict,
        description="masters: the short label (``HHS_BH TN gfx942``) of each table in files_added/files_removed",
    )
    groups_compared: int = 0
    groups: list[GroupDiff] = Field(default_factory=list, description="only groups with differences")
    queries: int = 0
    selection: list[SelectionChange] = Field(default_factory=list)
    selector: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.files_added or self.files_removed or self.groups or self.selection)

    def group(self, name: str) -> GroupDiff | None:
        return next((group for group in self.groups if group.name == name), None)


# ---------------------------------------------------------------------------------------------
# a common shape for both sides of a comparison


class _Kernel:
    """A kernel of one side: its identity (or the :class:`_Shape` that gives it when asked), its
    reference for the report and, for logic files, its record (for ``kernels_changed``)."""

    __slots__ = ("_identity", "ref", "record", "shape")

    def __init__(
        self, identity: Hashable, ref: DiffKernel, record: Mapping[str, Any], shape: _Shape | None = None
    ) -> None:
        self._identity, self.ref, self.record, self.shape = identity, ref, record, shape

    @property
    def identity(self) -> Hashable:
        return self._identity if self.shape is None else self.shape.identity()


def _same_kernel(a: _Kernel, b: _Kernel) -> bool:
    """Whether two kernels have one identity: one shape means equal records, so the identity
    (the full rule) is computed only for kernels of different shapes."""
    return (a.shape is not None and a.shape is b.shape) or a.identity == b.identity


class _Table:
    """One problem type of one side: kernels (by position/index) and table rows."""

    def __init__(self, name: str, problem_type: str | None) -> None:
        self.name = name
        self.problem_type = problem_type
        self.label: str | None = None
        self.key_names: list[str] | None = None
        self.kernels: dict[int, _Kernel] = {}
        self._rows: list[tuple[Any, int, Number | None]] = []
        self._packed: bytes | None = None
        self.header: dict[str, Any] = {}

    @property
    def rows(self) -> list[tuple[Any, int, Number | None]]:
        """(key, solution position or index, efficiency) of each row, in table order."""
        if self._packed is None:
            return self._rows
        return [(tuple(key), index, speed) for key, index, speed in msgpack.unpackb(self._packed)]

    def pack_rows(self, rows: list[tuple[Any, int, Number | None]]) -> None:
        """Keep ``rows`` (keys of ints, efficiencies of numbers) packed: a master side is kept while
        the other is read, and rocBLAS_Full's 425 000 rows as tuples of Python numbers were ~120 MB
        of diff's peak, packed ~9 MB; read back, they are equal, their types alike."""
        try:
            self._packed, self._rows = msgpack.packb(rows), []
        except (TypeError, ValueError, OverflowError):  # nothing a master's model holds: kept as they are
            self._packed, self._rows = None, [(tuple(key), index, speed) for key, index, speed in rows]

    def same_rows(self, other: _Table) -> bool:
        """Whether the rows are alike: the same keys, positions and efficiencies, in one order."""
        if self._packed is not None and other._packed is not None:
            return self._packed == other._packed  # equal bytes: equal rows, their types alike
        return self.rows == other.rows


_LOGIC_IGNORED_KEYS = frozenset({"SolutionIndex"})
_MASTER_IGNORED_KEYS = frozenset({"index", "name", "kernelName", "libraryLogicIndex"})
_LOGIC_HEADER_EXCLUDED = frozenset({"solutions", "exact_logic", "dialect", "layout", "list_length", "dict_key_order"})


def _logic_identity(logic: LogicFile, compat: Compat) -> Callable[[Mapping[str, Any]], Hashable]:
    identity = identity_function(compat, logic.problem_type.raw())
    if compat is Compat.TENSILELITE:
        return identity

    def by_name(solution: Mapping[str, Any]) -> Hashable:
        try:
            return identity(solution)
        except LibraryFormatError:
            return ("__dict__", dict_identity(solution))

    return by_name


def _logic_table(logic: LogicFile, name: str, compat: Compat) -> _Table:
    try:
        type_name: str | None = problem_type_name(logic.problem_type.raw())
    except (LibraryFormatError, KeyError, TypeError, IndexError):
        type_name = None
    table = _Table(name, type_name)
    identity = _logic_identity(logic, compat)
    for position, solution in enumerate(logic.solutions):
        record = solution.raw()
        table.kernels[position] = _Kernel(
            identity(record), DiffKernel(index=position, name=solution.solution_name_min), record
        )
    for entry in logic.table:
        table.rows.append((tuple(entry.size), entry.solution, entry.efficiency))
    for field in type(logic).model_fields:
        if field not in _LOGIC_HEADER_EXCLUDED:
            table.header[field] = to_raw(getattr(logic, field))
    return table


def _compact(value: Any) -> str:
    return json.dumps(to_raw(value), sort_keys=True, separators=(",", ":"), default=str)


def _predicate_raw(predicate: Any) -> Any:
    if isinstance(predicate, BaseModel):
        return predicate.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return predicate


def predicate_text(value: Any) -> str:
    """Compact spelling of a predicate: ``AMDGPU(Processor(gfx90a))``, ``And(TypesEqual(Half,…),…)``."""
    if isinstance(value, Mapping) and "type" in value:
        inner = value.get("value")
        if inner is None:
            return str(value["type"])
        return f"{value['type']}({predicate_text(inner)})"
    if isinstance(value, list):
        return ",".join(predicate_text(item) for item in value)
    if isinstance(value, Mapping):
        return _compact(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _master_leaves(node: AnyNode, label: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], AnyNode]]:
    if isinstance(node, (HardwareNode, ProblemNode)):
        for row in node.rows:
            text = predicate_text(_predicate_raw(row.predicate))
            yield from _master_leaves(row.library, label + ((text,) if text != "TruePred" else ()))
    elif isinstance(node, ProblemMapNode):
        for key, child in node.map.items():
            yield from _master_leaves(child, label + (str(key),))
    else:
        yield label, node


_JSON_KEY = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
# true, false and numbers with a fraction or an exponent: what _number_value may respell (an
# integer stays as it is, so it is not matched: most of a record's numbers are integers)
_NUMBER_SPELLING = re.compile(r"\btrue\b|\bfalse\b|-?\d+(?:\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)")


# what in a text _NUMBER_SPELLING could respell once true and false are digits: an integral
# number with a fraction (``2.0``, ``1.00`` in a string) or any exponent. Each is searched for
# alone, at C speed; the full pattern, tried at every position of a ~1.8 kB record, took 2.5 s
# of rocBLAS_Full's 21 288 records and changed none of them
_INTEGRAL_FRACTION = re.compile(r"\.0+(?![0-9])")
_EXPONENT = re.compile(r"[0-9][eE][-+]?[0-9]")


def _spelled_by_value(text: str) -> str:
    """``text`` with true and false as 1 and 0 and each number spelled by value: equal for two
    records ``==`` to each other (their strings are equal, so replacing inside them too keeps
    that). Replacing true and false everywhere first leaves _NUMBER_SPELLING nothing to do unless
    a fraction or an exponent could change; then it runs as before."""
    text = text.replace("true", "1").replace("false", "0")
    if _INTEGRAL_FRACTION.search(text) is None and _EXPONENT.search(text) is None:
        return text
    return _NUMBER_SPELLING.sub(_number_value, text)


def _number_value(match: re.Match[str]) -> str:
    token = match.group()
    if token == "true":
        return "1"
    if token == "false":
        return "0"
    if "." in token or "e" in token or "E" in token:
        number = float(token)
        if number.is_integer():
            return str(int(number))
    return token


class _Identities:
    """Kernel identities as small ints, equal exactly when :func:`freeze` of the records is equal
    (Python ``==``: ``1 == 1.0 == True``), at a fraction of freeze's cost.

    A record is keyed by its sorted JSON text when that text reads back as a record ``==`` to it
    (only str keys, no NaN, lists, JSON types): equal texts then mean equal records. Records that
    are ``==`` but spelled differently (``1`` and ``1.0``) meet in a bucket of the text with numbers
    spelled by value, where freeze decides. After any other record (a tuple, a NaN, an int key)
    every identity is freeze's own, as before."""

    def __init__(self) -> None:
        self._by_text: dict[str, int] = {}
        self._by_value: dict[str, list[tuple[str, Hashable, int]]] = {}  # numbers spelled by value
        self._by_freeze: dict[Hashable, int] | None = None  # once a record has no faithful text
        self._count = 0
        self._shapes: dict[bytes, _Shape] = {}

    def _new(self) -> int:
        self._count += 1
        return self._count - 1

    def _frozen(self, record: Mapping[str, Any]) -> int:
        if self._by_freeze is None:  # every class so far, keyed by freeze from now on
            self._by_freeze = {freeze(json.loads(text)): number for text, number in self._by_text.items()}
        frozen = freeze(record)
        found = self._by_freeze.get(frozen)
        if found is None:
            found = self._by_freeze[frozen] = self._new()
        return found

    def of(self, record: Mapping[str, Any]) -> int:
        """The identity of ``record`` (the ignored keys already dropped)."""
        if self._by_freeze is not None:
            return self._frozen(record)
        try:
            text = _JSON_KEY(record)
            exact = json.loads(text) == record
        except (TypeError, ValueError):
            exact = False
        if not exact:
            return self._frozen(record)
        found = self._by_text.get(text)
        if found is not None:
            return found
        by_value = _spelled_by_value(text)
        bucket = self._by_value.get(by_value)
        if bucket is None:  # the usual case: a new kernel, nothing to freeze
            found = self._new()
            self._by_value[by_value] = [(text, None, found)]
        else:
            frozen = freeze(record)
            for position, (other_text, other_frozen, number) in enumerate(bucket):
                if other_frozen is None:  # frozen only now that a second text shares the bucket
                    other_frozen = freeze(json.loads(other_text))
                    bucket[position] = (other_text, other_frozen, number)
                if other_frozen == frozen:
                    found = number
                    break
            else:
                found = self._new()
                bucket.append((text, frozen, found))
        self._by_text[text] = found
        return found

    def shape_of(self, record: Mapping[str, Any]) -> _Shape | None:
        """The one :class:`_Shape` of every record serialised as ``record`` is (kernel identities
        then computed from it only when asked), or None when the serialisation would not give
        ``record`` back as it is: a type msgpack does not keep exactly (a tuple, a subclass, an
        integer over 64 bits), or a float that is not finite (a NaN is unequal to itself)."""
        try:
            packed = msgpack.packb(record, strict_types=True)
        except (TypeError, ValueError, OverflowError):
            return None
        if _NOT_FINITE.search(packed) is not None:  # or bytes spelled as one: the full rule then
            return None
        shape = self._shapes.get(packed)
        if shape is None:
            shape = self._shapes[packed] = _Shape(packed, self)
        return shape


# msgpack with strict_types: a tuple, a subclass of a built-in type (bool aside, which it packs as
# itself), an integer over 64 bits raise; so what packs unpacks ``==`` to the record, its types
# alike, but for a NaN, which _NOT_FINITE catches (with infinities and, at worst, bytes inside
# a string or an integer that spell the same: those records take the full rule, as before)
_NOT_FINITE = re.compile(rb"\xcb[\x7f\xff][\xf0-\xff]")


class _Shape:
    """A master record's exact serialisation (:meth:`_Identities.shape_of`), shared by every
    record serialised alike: two kernels of one shape have equal records, so they are paired
    without their identity; the identity (:meth:`_Identities.of`, the full rule) is computed,
    from the record read back, only where kernels of different shapes are compared."""

    __slots__ = ("_identities", "_number", "packed")

    def __init__(self, packed: bytes, identities: _Identities) -> None:
        self.packed, self._identities, self._number = packed, identities, -1

    def record(self) -> Any:
        """The record read back (``==`` to each record of this shape, its types alike)."""
        return msgpack.unpackb(self.packed, strict_map_key=False)

    def identity(self) -> int:
        if self._number < 0:
            self._number = self._identities.of(self.record())
        return self._number


def _solution_record(solution: MasterSolution, predicates: dict[tuple[str, int], tuple[Any, Any]]) -> dict[str, Any]:
    """``solution.model_dump(by_alias=True, exclude_unset=True)`` without _MASTER_IGNORED_KEYS
    (``raw()``'s content, its key order aside, which identities ignore), each predicate's
    serialisation taken once per predicate object: a master's solutions share a few thousand
    interned predicates, whose serialising was two thirds of the dump (rocBLAS_Full: 0.6 s a side;
    :func:`~tensilekit.model.solution.dump_sharing_predicates`)."""
    record = dump_sharing_predicates(solution, predicates)
    for key in _MASTER_IGNORED_KEYS:
        record.pop(key, None)
    return record


def _master_tables(
    master: MasterLibrary,
    notes: list[str],
    interned: _Identities | None = None,
    partner: dict[str, _Table] | None = None,
) -> dict[str, _Table]:
    """The tables of a master. ``interned`` (shared by both sides of a diff) gives each distinct
    record one :class:`_Shape` and each distinct kernel identity a small int, so a side keeps
    neither its records nor a frozen copy of them. ``partner``: the other side's tables, whose
    kernel of the same index, its record ``==`` to this one (read back from its shape: the two
    writers order keys apart, msgpack as built, YAML sorted), lends this one its shape."""
    others = {index: kernel for table in (partner or {}).values() for index, kernel in table.kernels.items()}
    by_index = master.solutions_by_index()
    interned = _Identities() if interned is None else interned
    kernels: dict[int, _Kernel] = {}  # solution index -> its kernel: each record serialised once
    predicates: dict[tuple[str, int], tuple[Any, Any]] = {}
    tables: dict[str, _Table] = {}
    for label, leaf in _master_leaves(master.library, ()):
        name = " / ".join(label) or "library"
        if name in tables:
            name = f"{name} #{len(tables)}"
        table = _Table(name, next((part for part in label if part.startswith("Contraction")), None))
        references: list[tuple[Any, int, Number | None]] = []
        if isinstance(leaf, MatchingNode):
            references = [
                (entry.key, entry.solution_index if entry.index is None else entry.index, entry.speed)
                for entry in leaf.table
            ]
            if all(prop.index == 0 for prop in leaf.properties):
                table.key_names = [prop.type for prop in leaf.properties]
        elif isinstance(leaf, FreeSizeNode):
            references = [((), entry.index, None) for entry in leaf.table]
        elif isinstance(leaf, SingleNode):
            references = [((), leaf.index, None)]
        else:
            notes.append(f"{leaf.type} leaf at {name!r} not compared entry by entry")
        table.pack_rows(references)
        table_kernels = table.kernels
        for index in dict.fromkeys([row[1] for row in references]):  # each index once, in table order
            kernel = kernels.get(index)
            if kernel is None:
                solution = by_index.get(index)
                if solution is None:
                    continue
                record = _solution_record(solution, predicates)
                other = others.get(index)
                if other is not None and other.shape is not None and other.shape.record() == record:
                    shape: _Shape | None = other.shape
                else:
                    shape = interned.shape_of(record)
                # no record kept: the identity is the whole record but for _MASTER_IGNORED_KEYS, so two
                # kernels of equal identity never differ in a compared key (kernels_changed stays empty)
                ref = DiffKernel(index=index, name=solution.name)
                kernel = kernels[index] = _Kernel(None if shape else interned.of(record), ref, {}, shape)
            table_kernels[index] = kernel
        first = next(iter(table_kernels.values()), None)
        table.label = problem_type_label(label, [] if first is None else [first.ref.name])
        tables[name] = table
    return tables


# ---------------------------------------------------------------------------------------------
# comparing two tables


def _differing_keys(a: Mapping[str, Any], b: Mapping[str, Any], ignored: frozenset[str]) -> list[str]:
    keys = (set(a) | set(b)) - ignored
    # ``==`` first (C speed); freeze only to settle what ``==`` calls different (a list and a tuple)
    return sorted(
        key for key in keys if key not in a or key not in b or (a[key] != b[key] and freeze(a[key]) != freeze(b[key]))
    )


def _kernel_of(table: _Table, index: int) -> _Kernel:
    kernel = table.kernels.get(index)
    if kernel is None:  # a dangling table index: its own identity, so it never matches
        return _Kernel(("__missing__", table.name, index), DiffKernel(index=index, name=None), {})
    return kernel


def _number(value: Any) -> Number | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_CHANGES_SHOWN = 5


def _kernel_changes(a: _Kernel, b: _Kernel, ignored: frozenset[str]) -> list[str]:
    """What tells two kernels apart, for a person: the settings their names differ in (``WGM8 →
    WGM4``), else (names alike or absent: a logic file's unnamed solutions) the parameters their
    records differ in (``WorkGroupMapping 8 → 4``), the first few."""
    by_name = kernel_name_changes(a.ref.name, b.ref.name)
    if by_name or not a.record or not b.record:
        return by_name
    keys = _differing_keys(a.record, b.record, ignored)
    shown = [f"{key} {a.record.get(key, '-')} → {b.record.get(key, '-')}" for key in keys[:_CHANGES_SHOWN]]
    return shown + ([f"… {len(keys) - _CHANGES_SHOWN} more"] if len(keys) > _CHANGES_SHOWN else [])


def _same_shapes(a: _Table, b: _Table) -> bool:
    """Whether each kernel of ``a`` has one of ``b``'s shapes and each of ``b`` one of ``a``'s (no
    record kept, as of masters): then every identity of either side is one of the other's, and no
    kernel is added, removed or changed, without an identity computed."""
    shapes_a = {kernel.shape for kernel in a.kernels.values()}
    if None in shapes_a or any(kernel.record for kernel in a.kernels.values()):
        return False
    shapes_b = {kernel.shape for kernel in b.kernels.values()}
    return shapes_a == shapes_b and not any(kernel.record for kernel in b.kernels.values())


def _same_kernels_by_index(a: _Table, b: _Table) -> bool:
    """Whether both tables hold the same indices, each index's kernels of one shape (no record
    kept, as of masters): then no kernel is added, removed or changed, and a row's kernels are the
    same kernel wherever the rows name the same index."""
    if a.kernels.keys() != b.kernels.keys():
        return False
    others = b.kernels
    for index, kernel in a.kernels.items():
        other = others[index]
        if kernel.shape is None or kernel.shape is not other.shape or kernel.record or other.record:
            return False
    return True


def _compare_tables(a: _Table, b: _Table, ignored: frozenset[str]) -> GroupDiff:
    group = GroupDiff(
        name=a.name,
        problem_type=a.problem_type or b.problem_type,
        label=a.label or b.label,
        key_names=a.key_names or b.key_names,
    )
    for field in sorted(set(a.header) | set(b.header)):
        if freeze(a.header.get(field)) != freeze(b.header.get(field)):
            group.header_changes.append(HeaderChange(field=field, a=a.header.get(field), b=b.header.get(field)))
    if a.same_rows(b) and _same_kernels_by_index(a, b):
        return group  # the rows alike (keys, indices, efficiencies) and each index's kernel of one shape

    if not _same_shapes(a, b):
        first_a: dict[Hashable, _Kernel] = {}
        for kernel in a.kernels.values():
            first_a.setdefault(kernel.identity, kernel)
        first_b: dict[Hashable, _Kernel] = {}
        for kernel in b.kernels.values():
            first_b.setdefault(kernel.identity, kernel)
        group.kernels_removed = [kernel.ref for key, kernel in first_a.items() if key not in first_b]
        group.kernels_added = [kernel.ref for key, kernel in first_b.items() if key not in first_a]
        for key, kernel in first_a.items():
            other = first_b.get(key)
            if other is not None:
                differing = _differing_keys(kernel.record, other.record, ignored)
                if differing:
                    group.kernels_changed.append(KernelChange(a=kernel.ref, b=other.ref, keys=differing))

    rows_a: dict[tuple[Any, ...], list[tuple[int, Any]]] = {}
    for key, index, eff in a.rows:
        rows_a.setdefault(key, []).append((index, eff))
    rows_b: dict[tuple[Any, ...], list[tuple[int, Any]]] = {}
    for key, index, eff in b.rows:
        rows_b.setdefault(key, []).append((index, eff))
    for key, entries in rows_a.items():
        others = rows_b.get(key, [])
        for number, (index, eff) in enumerate(entries):
            kernel_a = _kernel_of(a, index)
            if number >= len(others):
                group.sizes_removed.append(DiffSize(key=list(key), kernel=kernel_a.ref, efficiency=_number(eff)))
                continue
            other_index, other_eff = others[number]
            kernel_b = _kernel_of(b, other_index)
            if not _same_kernel(kernel_a, kernel_b):
                group.sizes_reassigned.append(
                    SizeReassigned(
                        key=list(key),
                        a=kernel_a.ref,
                        b=kernel_b.ref,
                        a_efficiency=_number(eff),
                        b_efficiency=_number(other_eff),
                        changes=_kernel_changes(kernel_a, kernel_b, ignored),
                    )
                )
            elif eff != other_eff:
                left, right = _number(eff), _number(other_eff)
                delta = None if left is None or right is None else float(right - left)
                group.efficiency_changes.append(
                    EfficiencyChange(key=list(key), kernel=kernel_b.ref, a=left, b=right, delta=delta)
                )
    for key, others in rows_b.items():
        already = len(rows_a.get(key, []))
        for index, eff in others[already:]:
            group.sizes_added.append(DiffSize(key=list(key), kernel=_kernel_of(b, index).ref, efficiency=_number(eff)))
    return group


# ---------------------------------------------------------------------------------------------
# public API


def _label(value: Any, default: str) -> str:
    return str(value) if isinstance(value, (str, os.PathLike)) else default


def _short(value: Any) -> str:
    return Path(value).name if isinstance(value, (str, os.PathLike)) else "the library"


def _load_if_path(value: LibraryInput) -> Library:
    if isinstance(value, (str, os.PathLike)):
        from tensilekit.merge.files import load_library_input  # the filesystem edge, loaded on demand

        return load_library_input(require_path(value, "a/b", "diff_libraries"))
    return value


def _kind(value: Library) -> Literal["logic", "directory", "master"]:
    if isinstance(value, LogicFile):
        return "logic"
    if isinstance(value, MasterLibrary):
        return "master"
    if isinstance(value, Mapping):
        return "directory"
    raise UnsupportedFormat(f"cannot diff a {type(value).__name__}")


def diff_libraries(
    a: LibraryInput,
    b: LibraryInput,
    queries: Iterable[Query] | None = None,
    *,
    selector: Selector | None = None,
    compat: Compat | None = None,
    labels: tuple[str, str] | None = None,
    stage: Callable[[str], None] | None = None,
) -> LibraryDiff:
    """Compare two libraries: logic files, directories (``{name: LogicFile}`` or a path), or masters.

    Args:
        queries: size keys ``[M, N, B, K, …]``; with them, the result lists the queries whose
            selected kernel differs (see :func:`selection_changes`).
        selector: the selection function for ``queries`` (default: see the module docstring).
        compat: kernel identity for logic files; default by the ``a`` file's dialect.
        labels: names for the two sides in the result (default: the paths, or ``a``/``b``).
        stage: told each phase as it starts (``reading X``, ``comparing``), for a progress display.

    Raises:
        UnsupportedFormat: the two sides are of different kinds (e.g. logic file vs master).
        TypeError: ``selector``, ``compat`` or ``labels`` of the wrong type.
    """
    require_callable(selector, "selector", "diff_libraries", optional=True)
    require(compat, Compat, "compat", "diff_libraries", optional=True)
    require_callable(stage, "stage", "diff_libraries", optional=True)
    report = stage or (lambda text: None)
    if labels is not None and not (
        isinstance(labels, tuple) and len(labels) == 2 and all(isinstance(label, str) for label in labels)
    ):
        raise TypeError(f"diff_libraries(): labels must be a tuple of two str, not {labels!r:.60}")
    # the cyclic GC would rescan both masters' models (millions of acyclic objects) again and
    # again while tables are built from them: ~3 s of rocBLAS_Full's 17 s
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _diff_libraries(a, b, queries, selector, compat, labels, report)
    finally:
        if enabled:
            gc.enable()


def _diff_libraries(
    a: LibraryInput,
    b: LibraryInput,
    queries: Iterable[Query] | None,
    selector: Selector | None,
    compat: Compat | None,
    labels: tuple[str, str] | None,
    report: Callable[[str], None],
) -> LibraryDiff:
    """:func:`diff_libraries` once its arguments are checked."""
    notes: list[str] = []
    interned = _Identities()
    report(f"reading {_short(a)}")
    loaded = _load_if_path(a)
    kind_a = _kind(loaded)
    left: Library | None = loaded
    del loaded
    tables_a: dict[str, _Table] | None = None
    if isinstance(left, MasterLibrary) and left is not a and queries is None:
        # a master read here and asked no queries: its tables are all the diff needs, so it is
        # dropped before B is read (one master in memory at a time, not two)
        report(f"indexing {_short(a)}")
        tables_a, left = _master_tables(left, notes, interned), None
    report(f"reading {_short(b)}")
    right = _load_if_path(b)
    kind_b = _kind(right)
    if kind_a != kind_b:
        raise UnsupportedFormat(f"cannot diff a {kind_a} against a {kind_b}")
    names = labels or (_label(a, "a"), _label(b, "b"))
    report("comparing")
    result_groups: list[GroupDiff] = []
    files_added: list[str] = []
    files_removed: list[str] = []
    table_labels: dict[str, str] = {}
    compared = 0
    identity_name = "master record"
    if isinstance(left, LogicFile) and isinstance(right, LogicFile):
        chosen = compat or Compat.for_dialect(left.dialect)
        identity_name = chosen.value
        label = Path(names[0]).name if isinstance(a, (str, os.PathLike)) else "logic"
        group = _compare_tables(
            _logic_table(left, label, chosen), _logic_table(right, label, chosen), _LOGIC_IGNORED_KEYS
        )
        compared = 1
        result_groups = [] if group.is_empty else [group]
    elif kind_a == "master" and isinstance(right, MasterLibrary):
        if tables_a is None:
            assert isinstance(left, MasterLibrary)
            tables_a = _master_tables(left, notes, interned)
        report(f"indexing {_short(b)}")
        tables_b = _master_tables(right, notes, interned, tables_a)
        report("comparing")
        for name in tables_a:
            if name in tables_b:
                compared += 1
                group = _compare_tables(tables_a[name], tables_b[name], _MASTER_IGNORED_KEYS)
                if not group.is_empty:
                    result_groups.append(group)
        files_removed = [name for name in tables_a if name not in tables_b]
        files_added = [name for name in tables_b if name not in tables_a]
        table_labels = {
            name: short
            for tables, listed in ((tables_a, files_removed), (tables_b, files_added))
            for name in listed
            if (short := tables[name].label) is not None
        }
        if files_added or files_removed:
            notes.append(
                "for master libraries, files added/removed list whole tables "
                "(by short label; --json has their predicate paths)"
            )
    else:
        assert isinstance(left, Mapping) and isinstance(right, Mapping)
        files_removed = sorted(name for name in left if name not in right)
        files_added = sorted(name for name in right if name not in left)
        identities = set()
        for name in sorted(name for name in left if name in right):
            logic_a, logic_b = left[name], right[name]
            chosen = compat or Compat.for_dialect(logic_a.dialect)
            identities.add(chosen.value)
            compared += 1
            group = _compare_tables(
                _logic_table(logic_a, name, chosen), _logic_table(logic_b, name, chosen), _LOGIC_IGNORED_KEYS
            )
            if not group.is_empty:
                result_groups.append(group)
        identity_name = "/".join(sorted(identities)) or (compat.value if compat else "by dialect")
    diff = LibraryDiff(
        a=names[0],
        b=names[1],
        kind=kind_a,
        identity=identity_name,
        files_added=files_added,
        files_removed=files_removed,
        table_labels=table_labels,
        groups_compared=compared,
        groups=result_groups,
        notes=notes,
    )
    if queries is not None:
        assert left is not None  # kept for the queries
        report("selecting the queries in both")
        query_list = list(queries)
        chosen_selector, selector_name = (
            (selector, getattr(selector, "__name__", "custom")) if selector else default_selector(left)
        )
        diff.queries = len(query_list)
        diff.selector = selector_name
        diff.selection, unanswered = _compare_selections(left, right, query_list, chosen_selector, compat)
        if query_list and unanswered == len(query_list):
            # "0 of N select differently" would read as "the builds agree" when neither selects anything
            diff.notes.append(
                f"none of the {len(query_list)} queries selects a kernel in either library, so the selection "
                "diff compares nothing: check the device the queries run on (arch, CU count) and their types"
            )
    return diff


# ---------------------------------------------------------------------------------------------
# selection diff


def query_size(query: Query) -> tuple[int, ...]:
    """The size key of a query: itself, or ``[m, n, batch, k]`` of a query record."""
    if isinstance(query, Mapping):
        try:
            return (int(query["m"]), int(query["n"]), int(query.get("batch", 1) or 1), int(query["k"]))
        except (KeyError, TypeError, ValueError):
            raise SelectionError(f"a query record needs integer m, n and k: {dict(query)!r}") from None
    return tuple(int(value) for value in query)


def exact_match_selector(library: Any, query: Query) -> LogicSolution | None:
    """Exact table lookup in a logic file: the first row whose key equals the query's size.

    A 4-element size also matches longer keys on ``[M, N, B, K]``. This is what an ``Equality``
    library does; distance-based libraries would pick a nearest neighbour instead.
    """
    if not isinstance(library, LogicFile):
        raise UnsupportedFormat("exact_match_selector works on logic files only")
    wanted = query_size(query)
    fallback: int | None = None
    for entry in library.table:
        size = tuple(entry.size)
        if size == wanted:
            return _solution_at(library, entry.solution)
        if fallback is None and len(wanted) == 4 and size[:4] == wanted:
            fallback = entry.solution
    return None if fallback is None else _solution_at(library, fallback)


def _solution_at(library: LogicFile, position: int) -> LogicSolution | None:
    return library.solutions[position] if 0 <= position < len(library.solutions) else None


def _selection_library(
    master: MasterLibrary, hardware: Mapping[str, Any] | None, hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> Any:  # fmt: skip
    """``master`` as a :class:`tensilekit.library.Library` on the device ``hardware`` names (else
    the library's only processor), its compiled engine built: every runtime rule (device and
    workspace defaults, hipBLASLt's alpha = beta = 1, problem construction) is the Library's.
    ``hipblaslt_version``, ``solution_selection_method``: the hipBLASLt runtime to answer as
    (:func:`tensilekit.api.answering_runtime`: None, what the master shows and the environment's
    ``TENSILE_SOLUTION_SELECTION_METHOD``)."""
    from tensilekit.api import answering_runtime
    from tensilekit.library import library_of
    from tensilekit.selection import hardware_from_query

    runtime = answering_runtime(
        master, hipblaslt_version=hipblaslt_version, solution_selection_method=solution_selection_method
    )
    library = library_of(master, runtime=runtime)
    given = {name: value for name, value in (hardware or {}).items() if value is not None}
    if given:
        # a CU count (APU flag, chip ID) without an arch is for the library's default processor,
        # as `select --cu-count` takes it; dropping it left CU-gated kernels unselectable
        if "arch" not in given:
            given["arch"] = library.require_device(" with a CU count, APU flag or chip ID").arch
        device = hardware_from_query(given)
        library = library.with_device(
            device.arch, device.cu_count, is_apu=device.is_apu, pci_chip_id=device.pci_chip_id
        )
    library.compiled  # noqa: B018 - many queries: the compiled engine answers them
    return library


def _select_record(library: Any, record: dict[str, Any]) -> Any:
    """What ``library`` (a :class:`tensilekit.library.Library`) selects for a query record: the
    problem its runtime builds (from the logged GEMM under ``workload``, epilogue and all, when
    ``diff --from-log`` made the record) on the record's device over the library's default."""
    if record.get("arch") is None:
        library.require_device()  # no default: say which processors the library serves (--arch)
    gemm = record.get("workload")
    problem = library.problem_from_workload(gemm) if gemm is not None else library.problem_from_query(record)
    return library.select(problem, library.device_of(record))


def workload_queries(gemms: Any) -> list[dict[str, Any]]:
    """One query record per distinct workload GEMM (``diff --from-log``): its readable fields,
    ``calls``, and the GEMM itself under ``workload``, from which each library's runtime builds
    its own problem (hipBLASLt's ``updateTensileProblem`` keeps the epilogue)."""
    from tensilekit.selection.workload import problem_from_workload

    records = []
    for gemm in gemms:
        record = problem_from_workload(gemm).model_dump(mode="json", exclude={"hipblaslt"}, exclude_none=True)
        record["id"] = f"{gemm.gemm_type}, {gemm.call_count} calls"
        record["calls"] = gemm.call_count
        record["workload"] = gemm
        records.append(record)
    return records


def master_selector(hardware: Mapping[str, Any] | None = None) -> Selector:
    """Adapter over ``tensilekit.selection.select_solution`` for master libraries.

    Queries are records in the ``corpus/select`` JSON-lines form (``m``, ``n``, ``k``, types,
    transposes, ``arch`` …); ``hardware`` supplies ``arch``/``cu_count``/``is_apu`` for records
    without them (default: the library's only processor). Each library is opened once as a
    :class:`tensilekit.library.Library`, whose runtime rules build the problem, and compiled.
    """
    opened: dict[int, tuple[Any, Any]] = {}

    def select(library: Any, query: Query) -> Any:
        if not isinstance(query, Mapping):
            raise SelectionError(
                "master libraries are queried with full query records (JSON lines with m, n, k, types, "
                f"transposes and arch, as in corpus/select), not a bare size {list(query)}"
            )
        entry = opened.get(id(library))
        if entry is None:  # the master is kept with its Library so that its id cannot be reused meanwhile
            entry = opened[id(library)] = (library, _selection_library(library, hardware))
        return _select_record(entry[1], dict(query))

    return select


def runtime_selector(
    hardware: Mapping[str, Any] | None = None, hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> Selector:  # fmt: skip
    """Tensile's runtime selection for any library: a logic file is built into its master first.
    ``hipblaslt_version`` (``"7d9fb683"``, ``"0.12.1"``): the hipBLASLt runtime a hipBLASLt
    library answers as (None: what each library shows); ``solution_selection_method``: its
    ``TENSILE_SOLUTION_SELECTION_METHOD`` (None: the environment's).

    Queries may be full records (``corpus/select`` fields) or bare sizes ``[M, N, B, K]``; what a
    query leaves out (transposes, types, HPA …) comes from the problem type the library serves,
    and the device is the library's only processor (as :func:`tensilekit.open_library` defaults
    it), unless ``hardware`` or the query's ``arch`` says otherwise. A size that fits several served problem types is an error: give records.
    """
    from tensilekit.io.master_io import master_from_data
    from tensilekit.libbuild import build_master_tree
    from tensilekit.selection.served import served_problem_types

    prepared: dict[int, tuple[Any, Any, list[dict[str, Any]]]] = {}

    def prepare(library: Any) -> tuple[Any, Any, list[dict[str, Any]]]:
        entry = prepared.get(id(library))
        if entry is None:
            master = library
            if isinstance(library, LogicFile):
                tree = build_master_tree([("logic", library)], dialect=library.dialect)
                master = master_from_data(tree, source="logic")
            if not isinstance(master, MasterLibrary):
                raise UnsupportedFormat(f"cannot select from a {type(library).__name__}")
            # the library is kept with its entry so that its id cannot be reused meanwhile
            entry = prepared[id(library)] = (
                library,
                _selection_library(master, hardware, hipblaslt_version, solution_selection_method),
                served_problem_types(master),
            )
        return entry

    def select(library: Any, query: Query) -> Any:
        _, opened, served = prepare(library)
        if isinstance(query, Mapping):
            record = dict(query)
        else:
            size = query_size(query)
            record = {"m": size[0], "n": size[1], "batch": size[2], "k": size[3]}
        if "a_type" not in record:
            if len(served) != 1:
                raise SelectionError(
                    f"the library serves {len(served)} problem types; give query records with types, not bare sizes"
                )
            record = {**served[0], **record}
        return _select_record(opened, record)

    select.__name__ = "runtime_selector (tensilekit.selection.select_solution)"
    return select


def default_selector(library: Any = None) -> tuple[Selector, str]:
    """The selector for ``library``'s kind: the selection engine for masters, exact lookup for logic."""
    if isinstance(library, MasterLibrary):
        return master_selector(), "tensilekit.selection.select_solution"
    return exact_match_selector, "exact_match_selector"


def _selected_record(selected: Any) -> tuple[Mapping[str, Any], DiffKernel] | None:
    if selected is None:
        return None
    candidate = getattr(selected, "solution", selected)
    if candidate is None:
        return None
    record: Mapping[str, Any]
    if isinstance(candidate, OpenModel):
        record = candidate.raw()
    elif isinstance(candidate, Mapping):
        record = candidate
    else:
        raise UnsupportedFormat(f"selector returned a {type(candidate).__name__}, not a solution")
    index = record.get("SolutionIndex", record.get("index"))
    name = record.get("SolutionNameMin", record.get("name"))
    return record, DiffKernel(
        index=index if isinstance(index, int) else None, name=name if isinstance(name, str) else None
    )


def selection_changes(
    a: Library,
    b: Library,
    queries: Iterable[Query],
    selector: Selector,
    *,
    compat: Compat | None = None,
) -> list[SelectionChange]:
    """Queries for which ``selector`` picks kernels of different identity in ``a`` and ``b``.

    For directories every query is asked of every file present on both sides (the change names
    the file in ``group``).
    """
    return _compare_selections(a, b, queries, selector, compat)[0]


def _compare_selections(
    a: Library, b: Library, queries: Iterable[Query], selector: Selector, compat: Compat | None
) -> tuple[list[SelectionChange], int]:
    """:func:`selection_changes`, and how many queries select no kernel anywhere (in no file of A or B)."""
    pairs: list[tuple[str | None, Library, Library]]
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        pairs = [(name, a[name], b[name]) for name in sorted(a) if name in b]
    else:
        pairs = [(None, a, b)]
    changes: list[SelectionChange] = []
    query_list = [dict(query) if isinstance(query, Mapping) else [int(v) for v in query] for query in queries]
    answered = [False] * len(query_list)
    for group, left, right in pairs:
        logic_identity = _selection_identity(left, compat)

        def identity(record: Mapping[str, Any], logic_identity: Any = logic_identity) -> Hashable:
            # a selector over a built master returns master records even for logic files
            return _master_identity(record) if "sizeMapping" in record else logic_identity(record)

        for position, query in enumerate(query_list):
            picked_a = _selected_record(selector(left, query))
            picked_b = _selected_record(selector(right, query))
            answered[position] = answered[position] or picked_a is not None or picked_b is not None
            id_a = None if picked_a is None else identity(picked_a[0])
            id_b = None if picked_b is None else identity(picked_b[0])
            if id_a != id_b:
                changes.append(
                    SelectionChange(
                        query=query,
                        group=group,
                        a=None if picked_a is None else picked_a[1],
                        b=None if picked_b is None else picked_b[1],
                    )
                )
    return changes, answered.count(False)


def _master_identity(record: Mapping[str, Any]) -> Hashable:
    return freeze({k: v for k, v in record.items() if k not in _MASTER_IGNORED_KEYS | _LOGIC_IGNORED_KEYS})


def _selection_identity(library: Library, compat: Compat | None) -> Callable[[Mapping[str, Any]], Hashable]:
    if isinstance(library, LogicFile):
        return _logic_identity(library, compat or Compat.for_dialect(library.dialect))
    return _master_identity


def grid_queries(
    library: Library, sizes: Sequence[int] = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384),
    depths: Sequence[int] = (256, 1024, 4096),
) -> list[Query]:  # fmt: skip
    """The default selection-diff queries: every M, N in ``sizes`` and K in ``depths``, batch 1.

    Bare sizes for logic files (each file's own problem type applies); for a master library one
    record per problem type it serves (see :func:`runtime_selector`). Raises TypeError unless
    ``sizes``/``depths`` are sequences of ints, ValueError for a grid over a million queries.
    """
    for name, values in (("sizes", sizes), ("depths", depths)):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"grid_queries(): {name} must be a sequence of int, not {type(values).__name__}")
        for value in values:
            require(value, int, f"each of {name}", "grid_queries")
    if len(sizes) ** 2 * len(depths) > 1_000_000:
        raise ValueError(f"grid_queries(): {len(sizes)}² × {len(depths)} queries is over a million")
    grid = [[m, n, 1, k] for m in sizes for n in sizes for k in depths]
    if not isinstance(library, MasterLibrary):
        return list(grid)
    from tensilekit.selection.served import served_problem_types

    return [
        {**served, "m": m, "n": n, "batch": b, "k": k}
        for served in served_problem_types(library)
        for m, n, b, k in grid
    ]


__all__ = [
    "DiffKernel",
    "DiffSize",
    "EfficiencyChange",
    "GroupDiff",
    "HeaderChange",
    "KernelChange",
    "Library",
    "LibraryDiff",
    "LibraryInput",
    "Query",
    "SelectionChange",
    "Selector",
    "SizeReassigned",
    "default_selector",
    "diff_libraries",
    "exact_match_selector",
    "grid_queries",
    "master_selector",
    "predicate_text",
    "query_size",
    "runtime_selector",
    "workload_queries",
    "selection_changes",
]

"""The tables of a master library with what their place in the tree fixes, and the problems an
entry's key stands for.

A ``Matching`` table sits below ``Hardware`` rows (the device), a ``ProblemMap`` (the operation)
and ``Problem`` rows (data types, HPA, metric, fp16 flags). :func:`table_contexts` collects those
row predicates for every table. :func:`entry_problems` turns one entry into the GEMM problems its
key stands for, so that lint can ask the runtime's own predicate evaluator about them:

* sizes from the key (``FreeSizeA`` = M, ``FreeSizeB`` = N, ``BatchSize`` = batch, ``BoundSize`` =
  K; batch 1 when the key has none);
* the problem type from the rows above the table; what they leave open (``StridedBatched`` in a
  table shared by ``X.yaml`` and ``X_GB.yaml``, the fp16 flags under a ``TruePred`` row, the
  tensilelite feature flags) from the kernel's own predicates, i.e. the most favourable choice;
* what a key never fixes is chosen in the kernel's favour too: packed (BLAS-minimal) leading
  dimensions and batch strides unless the kernel asks for a stride, unlimited workspace, metric
  and CU count from the rows, and alpha/beta tried over a few values (beta 0 first, or what the
  kernel's ``BetaZero``/``BetaOne`` asks for).

So a kernel "fails at its entry" only when it fails for every one of these problems.
:func:`entry_columns` holds the same problems of many keys as columns, for lint's array passes
over a table (each kernel's compiled ``canSolve`` predicate by predicate over all of them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit.errors import SelectionError, child_path
from tensilekit.model.common import copied_with
from tensilekit.model.library import (
    AnyNode,
    DecisionTreeNode,
    HardwareNode,
    MasterLibrary,
    MatchingNode,
    ProblemMapNode,
    ProblemNode,
)
from tensilekit.model.predicates import Predicate
from tensilekit.model.solution import MasterSolution
from tensilekit.selection.columns import PROBLEM_TYPE_COLUMNS, ColumnsLike, ProblemColumns, derived_dimensions
from tensilekit.selection.problem import ContractionProblem, GemmProblem, Hardware, contraction_problem
from tensilekit.selection.served import nested_predicates, predicate_problem_fields

#: Key property -> ``GemmProblem`` size field (``ProblemKey::keyForProblem`` for a GEMM).
KEY_FIELDS = {"FreeSizeA": "m", "FreeSizeB": "n", "BatchSize": "batch", "BoundSize": "k"}

#: (alpha, beta) pairs tried, in order, when a kernel fails with the first.
_SCALARS = ((1.0, 0.0), (1.0, 1.0), (-1.0, 0.0), (-1.0, 1.0), (2.0, 0.5), (1.0, 0.5))

_METRICS = {"CUEfficiency", "ExperimentalDTree", "ExperimentalGrid", "ExperimentalStreamK", "ExperimentalMLP"}
_LITE_FLAGS = {
    "GroupedGemm": "grouped_gemm",
    "UseGradient": "use_gradient",
    "UseE": "use_e",
    "Sparse": "sparse",
    "SwizzleTensorA": "swizzle_tensor_a",
    "SwizzleTensorB": "swizzle_tensor_b",
    "ActivationNoGuard": "activation_no_guard",
    "AmaxDCheck": "output_amax_d",
}
_STRIDE_FIELDS = {
    "StrideAEqual": ("lda", "stride_a"),
    "StrideBEqual": ("ldb", "stride_b"),
    "StrideCEqual": ("ldc", "stride_c"),
    "StrideDEqual": ("ldd", "stride_d"),
}


@dataclasses.dataclass(frozen=True)
class TableContext:
    """One ``Matching`` table and what the rows above it fix."""

    path: str
    node: MatchingNode
    hardware: Hardware
    operation: str | None
    row_predicates: tuple[Predicate, ...]
    """``Problem`` row predicates on the way down, outermost first."""


def table_contexts(library: MasterLibrary) -> list[TableContext]:
    """Every ``Matching`` table of ``library`` (placeholders are not followed), in file order."""
    found: list[TableContext] = []
    _walk(library.library, "library", (), None, (), found)
    return found


def _walk(
    node: AnyNode,
    path: str,
    hardware_rows: tuple[Predicate, ...],
    operation: str | None,
    rows: tuple[Predicate, ...],
    found: list[TableContext],
) -> None:
    if isinstance(node, HardwareNode):
        for number, row in enumerate(node.rows):
            _walk(
                row.library, f"{path}.rows[{number}].library", (*hardware_rows, row.predicate), operation, rows, found
            )
    elif isinstance(node, ProblemNode):
        for number, row in enumerate(node.rows):
            _walk(
                row.library, f"{path}.rows[{number}].library", hardware_rows, operation, (*rows, row.predicate), found
            )
    elif isinstance(node, ProblemMapNode):
        for key, child in node.map.items():
            _walk(child, child_path(f"{path}.map", key), hardware_rows, key, rows, found)
    elif isinstance(node, MatchingNode):
        found.append(TableContext(path, node, device_of(hardware_rows), operation, rows))
    elif isinstance(node, DecisionTreeNode):
        return  # forests are not tables; their kernels count as referenced (see rules)


def device_of(hardware_rows: Sequence[Any]) -> Hardware:
    """The device ``Hardware`` rows describe: processor, CU count, APU flag (``unknown`` if none)."""
    arch, cu_count, is_apu = "unknown", None, False
    for row in hardware_rows:
        for predicate in conjuncts(row):
            inner = list(nested_predicates(predicate)) if predicate.type == "AMDGPU" else [predicate]
            for item in inner:
                if item.type == "Processor" and isinstance(item.value, str):
                    arch = item.value
                elif item.type == "CUCount" and isinstance(item.value, int):
                    cu_count = item.value
                elif item.type == "IsAPU" and item.value is not None:
                    is_apu = bool(item.value)
    return Hardware(arch=arch, cu_count=cu_count, is_apu=is_apu)


def conjuncts(predicate: Any) -> Iterator[Any]:
    """The operands of nested ``And`` predicates (a predicate that is not an ``And`` is its own)."""
    if predicate is None:
        return
    if predicate.type == "And":
        for item in predicate.value or []:
            yield from conjuncts(item)
    else:
        yield predicate


def _fields(predicate: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``GemmProblem`` fields and tensilelite fields that satisfy the conjuncts of ``predicate``."""
    fields = predicate_problem_fields(predicate)
    lite: dict[str, Any] = {}
    for item in conjuncts(predicate):
        kind = item.type
        if kind == "TypesEqual" and len(item.value) == 5:
            lite["compute_input_type"] = item.value[4]
        elif kind == "F32XdlMathOp":
            fields["f32_xdl_math_op"] = item.value
        elif kind == "DeterministicMode":
            fields["deterministic"] = bool(item.value)
        elif kind == "Fp16AltImpl":
            fields["fp16_alt_impl"] = True
        elif kind == "Fp16AltImplRound":
            fields["fp16_alt_impl_round"] = True
        elif kind in _METRICS:
            fields["performance_metric"] = kind
        elif kind == "BetaZero":
            fields["beta"] = 0.0
        elif kind == "BetaOne":
            fields["beta"] = 1.0
        elif kind == "KernelLanguage":
            fields["kernel_language"] = item.value
        elif kind == "ArithmeticUnit":
            fields["arithmetic_unit"] = item.value
        elif kind in _STRIDE_FIELDS and item.index in (1, 2):
            fields[_STRIDE_FIELDS[kind][item.index - 1]] = int(item.value)
        elif kind in _STRIDE_FIELDS and item.index == 0 and int(item.value) != 1:
            # the GEMM model (like rocBLAS) has unit stride in dimension 0: undecidable, not dead
            raise SelectionError(f"{kind}(0, {item.value}): a stride the GEMM model cannot have")
        elif kind in _LITE_FLAGS:
            lite[_LITE_FLAGS[kind]] = item.value if kind == "Sparse" else bool(item.value)
    return fields, lite


@dataclasses.dataclass(frozen=True)
class ProblemBase:
    """A table's problems for one kernel before the key's sizes: one template per (alpha, beta)."""

    templates: tuple[GemmProblem, ...]
    operation: str | None
    batches: tuple[int, ...] = (1,)
    """Batch counts tried when the key has no ``BatchSize``: 1, and the smallest the kernel accepts."""
    _scratch: tuple[GemmProblem, ...] = dataclasses.field(default=(), repr=False, compare=False, kw_only=True)
    """A private copy of each template whose sizes :func:`entry_problems` overwrites per problem
    (``contraction_problem`` reads a problem's fields and keeps none of its own: a copy per
    problem was a third of the cost of each). Bases of the same templates may share theirs (each
    problem is built whole before it is yielded)."""

    def __post_init__(self) -> None:
        if len(self._scratch) != len(self.templates):
            object.__setattr__(self, "_scratch", tuple(copied_with(template, {}) for template in self.templates))


def problem_base(context: TableContext, solution: MasterSolution) -> ProblemBase:
    """Problem type from the table's rows, completed from the kernel's own predicates.

    Raises:
        SelectionError: the table is not a GEMM tensilekit can model (an operation identifier
            no GEMM problem has, an unknown data type, a stride the model cannot have …).
    """
    return ProblemBases().of(context, solution)


class ProblemBases:
    """:func:`problem_base` for the many kernels of one library, its parts made once.

    A big master's kernels spell a few hundred problem types over thousands of problem
    predicates: each predicate's fields and batches are read once (by identity: the library
    holds its predicates while it is linted, so ids are not reused; each is kept beside its
    result all the same), and each distinct set of template fields is validated as a
    ``GemmProblem`` once (rocBLAS_Full: 26 000 validations -> ~1 000)."""

    def __init__(self) -> None:
        self._fields: dict[int, tuple[Any, dict[str, Any], dict[str, Any]]] = {}
        self._batches: dict[int, tuple[Any, tuple[int, ...]]] = {}
        self._templates: dict[Any, tuple[tuple[GemmProblem, ...], str | None]] = {}
        self._scratches: dict[int, tuple[tuple[GemmProblem, ...], tuple[GemmProblem, ...]]] = {}

    def of(self, context: TableContext, solution: MasterSolution) -> ProblemBase:
        """:func:`problem_base` (same answers, same errors)."""
        own, own_lite = self._fields_of(solution.problem_predicate)
        fields, lite = dict(own), dict(own_lite)
        for row in context.row_predicates:
            row_fields, row_lite = self._fields_of(row)
            fields.update(row_fields)
            lite.update(row_lite)
        operation = context.operation
        if operation is None:
            operation = next(
                (str(p.value) for p in conjuncts(solution.problem_predicate) if p.type == "OperationIdentifierEqual"),
                None,
            )
        if operation is not None:
            fields.update(predicate_problem_fields(_Operation(operation)))
        fixed_beta = fields.pop("beta", None)
        templates = self._templates_of(fields, lite, operation, fixed_beta)
        known = self._scratches.get(id(templates))
        shared = known[1] if known is not None and known[0] is templates else ()
        base = ProblemBase(templates, operation, self._batches_of(solution.problem_predicate), _scratch=shared)
        if not shared:  # (the templates kept beside their scratch: their id stays theirs)
            self._scratches[id(templates)] = (templates, base._scratch)
        return base

    def _fields_of(self, predicate: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """:func:`_fields` of ``predicate`` (read-only: callers copy what they change)."""
        known = self._fields.get(id(predicate))
        if known is None or known[0] is not predicate:
            known = (predicate, *_fields(predicate))
            self._fields[id(predicate)] = known
        return known[1], known[2]

    def _batches_of(self, predicate: Any) -> tuple[int, ...]:
        known = self._batches.get(id(predicate))
        if known is None or known[0] is not predicate:
            known = (predicate, _batches(predicate))
            self._batches[id(predicate)] = known
        return known[1]

    def _templates_of(
        self, fields: dict[str, Any], lite: dict[str, Any], operation: str | None, fixed_beta: Any
    ) -> tuple[GemmProblem, ...]:
        """One validated template per (alpha, beta) tried, shared by every base that spells the
        same fields (or the error of the first that cannot be modelled)."""
        try:
            # typed: 1, 1.0 and True are equal keys but may validate differently
            memo_key: Any = (_typed(fields), _typed(lite), operation, type(fixed_beta), fixed_beta)
            hash(memo_key)
        except TypeError:  # a value that cannot be hashed (or compared): validated every time
            memo_key = None
        known = self._templates.get(memo_key) if memo_key is not None else None
        if known is None:
            known = _validated_templates(fields, lite, operation, fixed_beta)
            if memo_key is not None:
                self._templates[memo_key] = known
        templates, error = known
        if error is not None:
            raise SelectionError(error)
        return templates


def _typed(values: dict[str, Any]) -> tuple[tuple[str, type, Any], ...]:
    return tuple(sorted((name, type(value), value) for name, value in values.items()))


def _validated_templates(
    fields: dict[str, Any], lite: dict[str, Any], operation: str | None, fixed_beta: Any
) -> tuple[tuple[GemmProblem, ...], str | None]:
    """(the templates, None) or ((), why the table's problem is no GEMM tensilekit models)."""
    templates: list[GemmProblem] = []
    seen: set[tuple[float, float]] = set()
    for alpha, beta in _SCALARS:
        if fixed_beta is not None:
            beta = fixed_beta
        if (alpha, beta) in seen:
            continue
        seen.add((alpha, beta))
        values = {"m": 1, "n": 1, "k": 1, **fields, "alpha": alpha, "beta": beta}
        try:
            gemm = GemmProblem(**values, hipblaslt=lite) if lite else GemmProblem(**values)
        except ValueError as error:
            return (), f"cannot model the table's problem as a GEMM: {error}"
        if operation is not None and contraction_problem(gemm).op_id != operation:
            return (), f"operation {operation} is not a GEMM tensilekit models"
        templates.append(gemm)
    return tuple(templates), None


def _batches(predicate: Any) -> tuple[int, ...]:
    """1, and the smallest batch the kernel's own batch predicates accept (the key leaves it open)."""
    low, multiple = 1, 1
    for item in conjuncts(predicate):
        kind, index = item.type, getattr(item, "index", None)
        on_batch = (kind.startswith("Size") and index == 2) or (kind.startswith("BatchSize") and index == 0)
        if not on_batch:
            continue
        if kind == "SizeGreaterThan":
            low = max(low, int(item.value) + 1)
        elif kind in ("SizeEqual", "BatchSizeEqual"):
            low = max(low, int(item.value))
        elif kind in ("SizeMultiple", "BatchSizeMultiple") and int(item.value) > 0:
            multiple = int(item.value)
        elif kind == "SizeInRange":
            low = max(low, int(getattr(item.value, "min", 1) or 1))
    favoured = -(-low // multiple) * multiple
    return (1,) if favoured == 1 else (1, favoured)


@dataclasses.dataclass(frozen=True)
class _Operation:
    """An ``OperationIdentifierEqual`` stand-in for the ProblemMap key above a table."""

    value: str
    type: str = "OperationIdentifierEqual"


def key_fields(node: MatchingNode) -> tuple[str, ...]:
    """The ``GemmProblem`` size field each key position of ``node`` fixes (raises for a key
    property that is not a size)."""
    names: list[str] = []
    for prop in node.properties:
        name = KEY_FIELDS.get(prop.type)
        if name is None or (prop.index or 0) != 0:
            raise SelectionError(f"key property {prop.type}({prop.index}) is not a GEMM size")
        names.append(name)
    return tuple(names)


def key_sizes(node: MatchingNode, key: Sequence[int], fields: tuple[str, ...] | None = None) -> dict[str, int]:
    """``{m, n, batch, k}`` a table key fixes (raises for a key property that is not a size);
    ``fields``: :func:`key_fields` of ``node``, when the caller keeps them."""
    if len(key) != len(node.properties):
        raise SelectionError(f"key {list(key)} has {len(key)} values, the table has {len(node.properties)} properties")
    return dict(zip(key_fields(node) if fields is None else fields, map(int, key), strict=True))


def entry_problems(base: ProblemBase, sizes: dict[str, int]) -> Iterator[ContractionProblem]:
    """The problems an entry of ``sizes`` stands for, the default (batch 1, alpha 1, beta 0) first."""
    batches = (sizes["batch"],) if "batch" in sizes else base.batches
    for batch in batches:
        for template, scratch in zip(base.templates, base._scratch, strict=True):
            # the sizes are valid ints as the key gives them: not validated again. Each problem is
            # built whole from the scratch copy before it is yielded, the template's own sizes
            # first, so generators of one base may interleave
            fields = scratch.__dict__
            fields["m"], fields["n"], fields["k"] = template.m, template.n, template.k
            fields.update(sizes)
            fields["batch"] = batch
            yield contraction_problem(scratch)


def template_columns(base: ProblemBase, hardware: Hardware) -> ProblemColumns:
    """One query per template of ``base`` on ``hardware``, as columns: what every problem built
    from a template shares (all but the sizes and what :func:`contraction_problem` derives from
    them), for :func:`entry_columns`."""
    kinds = [contraction_problem(template) for template in base.templates]
    return ProblemColumns.of_problems(kinds, hardware, rocblas_k0=False, kinds={ContractionProblem})


#: Sizes, leading dimensions and strides past this go the per-problem way: a stride derived from
#: them might not fit int64 (the compiled path's columns; see ``selection.columns._gemm_columns``).
_COLUMN_SIZE_LIMIT = 1 << 31


def entry_columns(
    base: ProblemBase,
    fields: tuple[str, ...],
    keys: Sequence[Sequence[int]],
    templates: ProblemColumns,
    hardware: Hardware,
) -> ProblemColumns | None:
    """:func:`entry_problems` of each key of a table (``fields``: its :func:`key_fields`) one after
    another, as columns: the key's problems in their order, ``problems_per_key(base, fields)`` of
    them per key. ``templates``: :func:`template_columns` of ``base`` on ``hardware``. Row ``i`` as objects is
    the very problem :func:`entry_problems` builds. None where a size is negative or so large
    that a stride derived from it might not fit int64 (ask :func:`entry_problems` instead)."""
    count = len(base.templates)
    batches = (1,) if "batch" in fields else base.batches
    per_key = len(batches) * count
    table = np.array(keys, dtype=np.int64).reshape(len(keys), len(fields))
    rows = len(keys) * per_key
    template_at = np.tile(np.arange(count, dtype=np.int64), len(keys) * len(batches))
    first = base.templates[0]  # the templates differ in alpha and beta only
    numbers: dict[str, npt.NDArray[Any]] = {}
    for name in ("m", "n", "k", "batch"):
        if name in fields:
            numbers[name] = np.repeat(table[:, fields.index(name)], per_key)
        elif name == "batch":
            numbers[name] = np.tile(np.repeat(np.array(batches, dtype=np.int64), count), len(keys))
        else:
            numbers[name] = np.full(rows, getattr(first, name), dtype=np.int64)
        if rows and not 0 <= int(numbers[name].min()) <= int(numbers[name].max()) < _COLUMN_SIZE_LIMIT:
            return None
    given = [
        getattr(first, name) for name in ("lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d")
    ]
    if any(value is not None and not 0 <= value < _COLUMN_SIZE_LIMIT for value in given):
        return None

    def given_or_left_out(name: str) -> npt.NDArray[np.int64]:
        value = getattr(first, name)
        return np.full(rows, -1 if value is None else value, dtype=np.int64)  # -1: derived

    dimensions = derived_dimensions(
        numbers["m"], numbers["n"], numbers["k"], first.trans_a == "N", first.trans_b == "N", given_or_left_out
    )
    if dimensions is None:
        return None
    numbers.update(dimensions)
    spread: dict[str, tuple[npt.NDArray[Any], npt.NDArray[np.int64] | None]] = {
        name: (getattr(templates, name), template_at) for name in templates.names() if name not in numbers
    }
    return _EntryColumns(numbers, _EntryRows(base, fields, keys, batches, hardware), spread, (templates, template_at))


class _EntryColumns(ProblemColumns):
    """:func:`entry_columns`: problems of one device, each of its template's problem type (the
    columns that are not sizes, leading dimensions or strides are its template's): a predicate of
    the type and the device is evaluated on the templates (:func:`template_columns`, one object
    per base: once for all of its batches)."""

    def __init__(
        self,
        arrays: dict[str, npt.NDArray[Any]],
        rows: Sequence[tuple[ContractionProblem, Hardware]],
        spread: dict[str, tuple[npt.NDArray[Any], npt.NDArray[np.int64] | None]],
        templates: tuple[ProblemColumns, npt.NDArray[np.int64]],
    ) -> None:
        super().__init__(arrays, rows, spread)
        # the type view only while no type column is one the entries set themselves
        self._templates = templates if PROBLEM_TYPE_COLUMNS.isdisjoint(arrays) else None

    def problem_types(self) -> tuple[ColumnsLike, npt.NDArray[np.int64]] | None:
        return self._templates

    def one_device(self) -> bool:
        return True


def problems_per_key(base: ProblemBase, fields: tuple[str, ...]) -> int:
    """How many problems :func:`entry_problems` makes of a key of a table (``fields``: its :func:`key_fields`)."""
    return len(base.templates) * (1 if "batch" in fields else len(base.batches))


class _EntryRows(Sequence[tuple[ContractionProblem, Hardware]]):
    """The rows of :func:`entry_columns` as objects, built when asked (predicates compiled without
    a vector form ask for them)."""

    def __init__(
        self,
        base: ProblemBase,
        fields: tuple[str, ...],
        keys: Sequence[Sequence[int]],
        batches: tuple[int, ...],
        hardware: Hardware,
    ) -> None:
        self._base, self._fields, self._keys, self._batches, self._hardware = base, fields, keys, batches, hardware

    def __len__(self) -> int:
        return len(self._keys) * len(self._batches) * len(self._base.templates)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        templates = self._base.templates
        key_at, rest = divmod(int(i), len(self._batches) * len(templates))
        batch_at, template_at = divmod(rest, len(templates))
        template = templates[template_at]
        sizes = {"m": template.m, "n": template.n, "k": template.k}
        sizes.update(zip(self._fields, map(int, self._keys[key_at]), strict=True))
        if "batch" not in self._fields:
            sizes["batch"] = self._batches[batch_at]
        return contraction_problem(copied_with(template, sizes)), self._hardware


__all__ = [
    "KEY_FIELDS",
    "ProblemBase",
    "ProblemBases",
    "TableContext",
    "conjuncts",
    "device_of",
    "entry_columns",
    "entry_problems",
    "key_fields",
    "key_sizes",
    "problem_base",
    "problems_per_key",
    "table_contexts",
    "template_columns",
]

"""Many queries as columns: the vectorised path's view of (ContractionProblem, Hardware) pairs.

:class:`ProblemColumns` stores one numpy array per field of :class:`ContractionProblem` and
:class:`Hardware` under the same attribute names, so a compiled predicate reads ``p.m`` whether
``p`` is one problem or a column of them. Strings (types, operation identifier, metric, arch)
are numpy unicode arrays holding the file spellings (``"Float"``); ``cu_count`` is -1 when
unknown; tensilelite fields are flattened as ``lite_<name>``. ``flop_count`` and
``arithmetic_intensity`` are derived on first use with the same ``size_t`` wrap-around as C++.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.selection.problem import (
    BATCH_ROW,
    BATCH_ROW_FIELDS,
    GEMM_NUMBER_FIELDS,
    SIZE_MAX,
    ContractionProblem,
    GemmProblem,
    Hardware,
    HipblasltFields,
    PerformanceMetric,
    batch_row,
    contraction_problem,
    known_batch_row,
    operation_identifier,
)

IntArray = npt.NDArray[np.int64]

# (attribute, dtype) of every ContractionProblem field held as a column.
PROBLEM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("m", "i8"), ("n", "i8"), ("k", "i8"), ("batch", "i8"),
    ("trans_a", "U"), ("trans_b", "U"), ("op_id", "U"),
    ("a_type", "U"), ("b_type", "U"), ("c_type", "U"), ("d_type", "U"),
    ("compute_type", "U"), ("compute_input_type", "U"),
    ("a_bytes", "i8"), ("b_bytes", "i8"), ("c_bytes", "i8"), ("d_bytes", "i8"),
    ("lda", "i8"), ("ldb", "i8"), ("ldc", "i8"), ("ldd", "i8"),
    ("stride_a", "i8"), ("stride_b", "i8"), ("stride_c", "i8"), ("stride_d", "i8"),
    ("hpa", "?"), ("strided_batched", "?"), ("performance_metric", "U"),
    ("fp16_alt_impl", "?"), ("fp16_alt_impl_round", "?"), ("stochastic_rounding", "?"),
    ("deterministic", "?"), ("c_equals_d", "?"), ("f32_xdl_math_op", "U"),
    ("kernel_language", "U"), ("arithmetic_unit", "U"), ("persistent_kernel_eligible", "?"),
    ("alpha", "f8"), ("beta", "f8"), ("alpha_restriction", "U"), ("beta_restriction", "U"),
    ("workspace_size", "u8"),
)  # fmt: skip

HARDWARE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("arch", "U"),
    ("cu_count", "i8"),
    ("is_apu", "?"),
    ("wavefront", "i8"),
    ("simd_per_cu", "i8"),
)

_LITE_TYPES = {"compute_input_type", "bias_type", "activation_compute_type", "e_type"}
_LITE_STRINGS = _LITE_TYPES | {"bias_src", "activation_type", "activation_enum", "use_scale_ab"}
LITE_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (f"lite_{name}", "U" if name in _LITE_STRINGS else ("?" if info.annotation is bool else "i8"))
    for name, info in HipblasltFields.model_fields.items()
)
_ALL_COLUMNS = PROBLEM_COLUMNS + HARDWARE_COLUMNS + LITE_COLUMNS
_DTYPES = dict(_ALL_COLUMNS)
_DEFAULT_LITE = HipblasltFields()
_SIZE_MOD = 1 << 64
_PACKING_TYPES = ("Int8x4",)


def _text(value: Any) -> Any:
    return getattr(value, "value", value)


def _column(values: Sequence[Any], dtype: str) -> np.ndarray:
    if dtype == "U":
        try:  # a column holds a few distinct values (types, transposes): each spelled once
            spelled = {value: "None" if value is None else _text(value) for value in set(values)}
        except TypeError:  # unhashable
            return np.array([_text(v) if v is not None else "None" for v in values], dtype=str)
        return np.array([spelled[value] for value in values], dtype=str)
    try:
        if dtype == "i8":
            return np.array([-1 if v is None else v for v in values], dtype=np.int64)
        return np.array(values, dtype=dtype)
    except OverflowError:  # a stride left out past int64 (size_t arithmetic): see check_default_strides
        raise SelectionError(
            "a size, leading dimension or stride over the C++ int64_t maximum cannot be selected in bulk "
            "(selection.problem.check_default_strides says which)"
        ) from None


def _lite_value(lite: HipblasltFields, name: str) -> Any:
    return getattr(lite, name)


class ColumnsLike:
    """Shared interface of :class:`ProblemColumns` and its subset views."""

    size: int

    def row(self, i: int) -> tuple[ContractionProblem, Hardware]:
        raise NotImplementedError

    def take(self, positions: IntArray) -> ColumnsLike:
        return ColumnView(self, positions)

    def problem_types(self) -> tuple[ColumnsLike, IntArray] | None:
        """(one query of each problem type, each query's type as a row of it), when the columns
        were read per problem type (:data:`PROBLEM_TYPE_COLUMNS` then hold the same values for
        every query of a type); else None."""
        return None

    def one_device(self) -> bool:
        """Whether the queries were read with one device for all of them (its columns then hold
        one value: a predicate of the problem type and the device is one per problem type)."""
        return False

    def largest(self, name: str) -> int | None:
        """An upper bound of integer column ``name`` over these queries, when none of them can be
        negative (None: a negative value, or not an integer column): its largest value over the
        whole batch these columns belong to (a view shares its batch's, read once)."""
        return None

    def __len__(self) -> int:
        return self.size


class ProblemColumns(ColumnsLike):
    """Columns of problems and their devices (one row per query)."""

    def __init__(
        self,
        arrays: dict[str, np.ndarray],
        rows: Sequence[tuple[ContractionProblem, Hardware]] | None,
        spread: dict[str, tuple[np.ndarray, IntArray | None]] | None = None,
    ) -> None:
        sizes = {len(a) for a in arrays.values()}
        if len(sizes) > 1:
            raise SelectionError("query columns differ in length")
        self.size = sizes.pop() if sizes else 0
        self._arrays = arrays
        self._rows = rows
        # columns held as (one value per problem type, each query's type; None: one value for all),
        # spread over the queries when first read (most are read per problem type only)
        self._spread = spread or {}
        self._type_group: IntArray | None = None  # the spread type columns' group (None: one type)
        self._types: tuple[IntArray, IntArray] | None = None  # (first query of each type, type of each)
        self._type_view: tuple[ColumnsLike, IntArray] | None = None

    def __getattr__(self, name: str) -> Any:
        arrays = self.__dict__.get("_arrays")
        if arrays is None:
            raise AttributeError(name)
        if name in arrays:
            return arrays[name]
        if name in self._spread:
            values, group = self._spread[name]
            arrays[name] = np.repeat(values, self.size) if group is None else values[group]
            return arrays[name]
        if name == "flop_count":
            arrays[name] = _flop_count(self)
            return arrays[name]
        if name == "arithmetic_intensity":
            arrays[name] = _arithmetic_intensity(self)
            return arrays[name]
        raise AttributeError(name)

    def gather(self, name: str, positions: IntArray, kinds: int | IntArray | None = None) -> np.ndarray:
        """Column ``name`` at rows ``positions`` (a column spread per problem type is not spread
        over every query first). ``kinds``: :meth:`kinds_at` of ``positions``, when known."""
        arrays = self._arrays
        if name not in arrays and name in self._spread:
            values, group = self._spread[name]
            if group is None:
                return np.repeat(values, len(positions))
            if group is not self._type_group:  # one device per query
                return values[group[positions]]
            if kinds is None:
                kinds = self.kinds_at(positions)
            if isinstance(kinds, int):
                return np.repeat(values[kinds : kinds + 1], len(positions))
            return values[kinds]
        column: np.ndarray = getattr(self, name)[positions]
        return column

    def largest(self, name: str) -> int | None:
        known: dict[str, int | None] = self.__dict__.setdefault("_largest", {})
        if name not in known:
            # a column spread per problem type: its values per type, not spread over the queries
            values = self._arrays.get(name)
            if values is None:
                values = self._spread[name][0] if name in self._spread else getattr(self, name)
            most = None
            if values.dtype.kind in "iu" and values.size and int(values.min()) >= 0:
                most = int(values.max())
            known[name] = most
        return known[name]

    def one_device(self) -> bool:
        return self._types is not None and all(
            name in self._spread and self._spread[name][1] is None for name, _ in HARDWARE_COLUMNS
        )

    def kinds_at(self, positions: IntArray) -> int | IntArray:
        """The problem type of each query at ``positions``: one number when they share one."""
        group = self._type_group
        if group is None:
            return 0
        kinds: IntArray = group[positions]
        return int(kinds[0]) if len(kinds) and (kinds == kinds[0]).all() else kinds

    def names(self) -> list[str]:
        """The names of the columns (those derived on first use, such as ``flop_count``, aside)."""
        return list(dict.fromkeys([*self._arrays, *self._spread]))

    def problem_types(self) -> tuple[ColumnsLike, IntArray] | None:
        if self._types is None:
            return None
        if self._type_view is None:
            firsts, group = self._types
            # a copy of those rows, not a view (a view would tie these columns in a cycle)
            kinds = {
                name: np.repeat(values, len(firsts))
                if spread_by is None
                else (values if spread_by is self._type_group else values[spread_by[firsts]])
                for name, (values, spread_by) in self._spread.items()
            }
            kinds.update((name, column[firsts]) for name, column in self._arrays.items() if name not in kinds)
            self._type_view = (ProblemColumns(kinds, None), group)
        return self._type_view

    @classmethod
    def from_problems(
        cls,
        problems: Sequence[GemmProblem | ContractionProblem],
        hardware: Hardware | Sequence[Hardware],
        *,
        rocblas_k0: bool = False,
    ) -> ProblemColumns:
        """Columns for ``problems``, each on ``hardware`` (one device, or one per problem)."""
        return cls.of_problems(problems, hardware, rocblas_k0=rocblas_k0, kinds=set(map(type, problems)))

    @classmethod
    def of_problems(
        cls,
        problems: Sequence[GemmProblem | ContractionProblem],
        hardware: Hardware | Sequence[Hardware],
        *,
        rocblas_k0: bool,
        kinds: set[type],
    ) -> ProblemColumns:
        """:meth:`from_problems`, told the set of the problems' types (``set(map(type,
        problems))``; a caller that checked them has it)."""
        if problems and kinds == {GemmProblem}:
            devices = _Repeated(hardware, len(problems)) if isinstance(hardware, Hardware) else list(hardware)
            if len(devices) != len(problems):
                raise SelectionError(f"{len(problems)} problems but {len(devices)} devices")
            by_type = _gemm_columns(problems, rocblas_k0)  # type: ignore[arg-type]
            if by_type is not None:
                numbers, spread, types = by_type
                spread.update(_device_columns(devices))
                columns = cls(numbers, _ContractionRows(problems, devices, rocblas_k0), spread)  # type: ignore[arg-type]
                columns._types = types
                columns._type_group = spread["trans_a"][1]
                return columns
        converted = [
            p if isinstance(p, ContractionProblem) else contraction_problem(p, rocblas_k0=rocblas_k0) for p in problems
        ]
        devices = [hardware] * len(converted) if isinstance(hardware, Hardware) else list(hardware)
        if len(devices) != len(converted):
            raise SelectionError(f"{len(converted)} problems but {len(devices)} devices")
        arrays: dict[str, np.ndarray] = {}
        # one C-level attrgetter per problem, then columns by transposing (not one getattr per cell)
        read = operator.attrgetter(*(name for name, _ in PROBLEM_COLUMNS))
        fields = list(zip(*map(read, converted), strict=True)) if converted else [()] * len(PROBLEM_COLUMNS)
        for (name, dtype), values in zip(PROBLEM_COLUMNS, fields, strict=True):
            arrays[name] = _column(values, dtype)
        arrays.update(_spread_out(_device_columns(devices), len(devices)))
        lites = [p.lite for p in converted]
        distinct = {id(lite): lite for lite in lites}.values()  # compared once each, not per query
        if all(lite is _DEFAULT_LITE or lite == _DEFAULT_LITE for lite in distinct):
            for name, dtype in LITE_COLUMNS:
                arrays[name] = _column([getattr(_DEFAULT_LITE, name[5:])] * len(lites), dtype)
        else:
            for name, dtype in LITE_COLUMNS:
                arrays[name] = _column([_lite_value(lite, name[5:]) for lite in lites], dtype)
        return cls(arrays, list(zip(converted, devices, strict=True)))

    @classmethod
    def from_arrays(
        cls,
        *,
        m: Any,
        n: Any,
        k: Any,
        batch: Any = 1,
        trans_a: Any = "N",
        trans_b: Any = "N",
        a_type: Any = "Float",
        b_type: Any = None,
        c_type: Any = None,
        d_type: Any = None,
        compute_type: Any = None,
        hpa: Any = None,
        arch: Any,
        cu_count: Any = -1,
        is_apu: Any = False,
        alpha: Any = 1.0,
        beta: Any = 0.0,
        compute_input_type: Any = None,
        **flags: Any,
    ) -> ProblemColumns:
        """Columns straight from arrays (no per-query objects): for large generated batches.

        Leading dimensions and strides take the tight BLAS defaults; other problem flags
        (``strided_batched``, ``performance_metric`` …) may be given as scalars or arrays and
        default as in :class:`GemmProblem`. ``compute_input_type`` (tensilelite) defaults to the
        A type; the other tensilelite fields take their defaults.
        """
        m_, n_, k_ = (np.asarray(x, dtype=np.int64) for x in (m, n, k))
        size = len(m_)

        def full(value: Any, dtype: str) -> np.ndarray:
            if value is None:
                value = "None" if dtype == "U" else -1
            array = np.asarray(_text(value) if not isinstance(value, np.ndarray) else value)
            if array.ndim == 0:
                array = np.full(size, array.item() if dtype != "U" else str(array.item()))
            return array.astype(str if dtype == "U" else dtype)

        batch_ = full(batch, "i8")
        ta, tb = full(trans_a, "U"), full(trans_b, "U")
        at = full(a_type, "U")
        bt = full(b_type, "U") if b_type is not None else at
        ct = full(c_type, "U") if c_type is not None else bt
        dt = full(d_type, "U") if d_type is not None else ct
        comp = full(compute_type, "U") if compute_type is not None else dt
        bytes_of = {member.value: member.element_bytes for member in DataType}
        a_bytes, b_bytes, c_bytes, d_bytes, comp_bytes = (
            np.vectorize(bytes_of.__getitem__, otypes=[np.int64])(t) if size else np.zeros(0, np.int64)
            for t in (at, bt, ct, dt, comp)
        )
        if hpa is None:
            input_bytes = np.where(at == "Int8x4", 1, a_bytes)
            hpa_ = comp_bytes > input_bytes
        else:
            hpa_ = full(hpa, "?")
        a_normal, b_normal = ta == "N", tb == "N"
        lda = np.maximum(1, np.where(a_normal, m_, k_))
        ldb = np.maximum(1, np.where(b_normal, k_, n_))
        ldc = np.maximum(1, m_)
        complex_a = np.isin(at, ("ComplexFloat", "ComplexDouble"))
        op_id = np.empty(size, dtype=object)
        for t_a in ("N", "T", "C"):
            for t_b in ("N", "T", "C"):
                for cplx in (False, True):
                    mask = (ta == t_a) & (tb == t_b) & (complex_a == cplx)
                    if mask.any():
                        op_id[mask] = operation_identifier(t_a, t_b, cplx)
        alpha_, beta_ = full(alpha, "f8"), full(beta, "f8")

        def restriction(values: np.ndarray) -> np.ndarray:
            return np.where(values == 1.0, "One", np.where(values == -1.0, "NegativeOne", "Any"))

        defaults = GemmProblem.model_fields
        workspace = flags.pop("workspace_size", None)
        arrays: dict[str, np.ndarray] = {
            "m": m_, "n": n_, "k": k_, "batch": batch_, "trans_a": ta, "trans_b": tb,
            "op_id": op_id.astype(str), "a_type": at, "b_type": bt, "c_type": ct, "d_type": dt,
            "compute_type": comp,
            "compute_input_type": at if compute_input_type is None else full(compute_input_type, "U"),
            "a_bytes": a_bytes, "b_bytes": b_bytes, "c_bytes": c_bytes, "d_bytes": d_bytes,
            "lda": lda, "ldb": ldb, "ldc": ldc, "ldd": ldc,
            "stride_a": lda * np.where(a_normal, k_, m_), "stride_b": ldb * np.where(b_normal, n_, k_),
            "stride_c": ldc * n_, "stride_d": ldc * n_, "hpa": hpa_,
            "alpha": alpha_, "beta": beta_,
            "alpha_restriction": restriction(alpha_), "beta_restriction": restriction(beta_),
            "workspace_size": np.full(size, SIZE_MAX, dtype=np.uint64) if workspace is None else full(workspace, "u8"),
        }  # fmt: skip
        for name, dtype in PROBLEM_COLUMNS:
            if name in arrays:
                continue
            value = flags.pop(name, defaults[name].default)
            arrays[name] = full(value, dtype)
        if flags:
            raise SelectionError(f"unknown query columns: {', '.join(sorted(flags))}")
        arrays["arch"] = np.char.lower(full(arch, "U"))
        arrays["cu_count"] = full(cu_count, "i8")
        arrays["is_apu"] = full(is_apu, "?")
        arrays["wavefront"] = (
            np.array([Hardware(arch=a).wavefront for a in arrays["arch"]], dtype=np.int64)
            if size
            else np.zeros(0, np.int64)
        )
        arrays["simd_per_cu"] = np.full(size, 4, dtype=np.int64)
        for name, dtype in LITE_COLUMNS:
            arrays[name] = full(getattr(_DEFAULT_LITE, name[5:]), dtype)
        return cls(arrays, None)

    def row(self, i: int) -> tuple[ContractionProblem, Hardware]:
        """Query ``i`` as objects (the scalar path's input)."""
        if self._rows is not None:
            return self._rows[i]
        a = self._arrays
        lite_fields: dict[str, Any] = {}
        for name, dtype in LITE_COLUMNS:
            value = a[name][i].item()
            field = name[5:]
            if field in _LITE_TYPES:
                value = None if value == "None" else DataType(value)
            elif dtype == "i8" and field == "bias_length":
                value = None if value < 0 else value
            lite_fields[field] = value
        lite = HipblasltFields(**lite_fields)
        values: dict[str, Any] = {name: a[name][i].item() for name, _ in PROBLEM_COLUMNS}
        for name in ("a_type", "b_type", "c_type", "d_type", "compute_type", "compute_input_type", "f32_xdl_math_op"):
            values[name] = DataType(values[name])
        values["performance_metric"] = PerformanceMetric(values["performance_metric"])
        problem = ContractionProblem(**values, lite=lite)
        cu = int(a["cu_count"][i])
        hardware = Hardware(
            arch=str(a["arch"][i]),
            cu_count=None if cu < 0 else cu,
            is_apu=bool(a["is_apu"][i]),
            wavefront_size=int(a["wavefront"][i]),
            simd_per_cu=int(a["simd_per_cu"][i]),
        )
        return problem, hardware


class _Repeated(Sequence[Hardware]):
    """One device for every query of a batch, without a list of it."""

    def __init__(self, device: Hardware, size: int) -> None:
        self.device, self._size = device, size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.device] * len(range(*i.indices(self._size)))
        if not -self._size <= i < self._size:
            raise IndexError(i)
        return self.device


def _device_columns(devices: Sequence[Hardware]) -> dict[str, tuple[np.ndarray, IntArray | None]]:
    """The device columns of one device per query, spread (see :class:`ProblemColumns`): a batch
    names a few devices, each read once."""
    if isinstance(devices, _Repeated):
        distinct: dict[int, Hardware] = {id(devices.device): devices.device}
    else:
        distinct = {id(h): h for h in devices}
    device_fields = [(h.arch, h.cu_count, h.is_apu, h.wavefront, h.simd_per_cu) for h in distinct.values()]
    # a batch of no query (every line of a chunk unreadable) names no device: empty columns
    per_device = list(zip(*device_fields, strict=True)) or [() for _ in HARDWARE_COLUMNS]
    group: IntArray | None = None
    if len(distinct) > 1:
        number = {key: position for position, key in enumerate(distinct)}
        group = np.array([number[id(h)] for h in devices], dtype=np.int64)
    return {
        name: (_column(values, dtype), group)
        for (name, dtype), values in zip(HARDWARE_COLUMNS, per_device, strict=True)
    }


def _spread_out(spread: dict[str, tuple[np.ndarray, IntArray | None]], size: int) -> dict[str, np.ndarray]:
    return {
        name: np.repeat(values, size) if group is None else values[group] for name, (values, group) in spread.items()
    }


# the columns of the problem type: :func:`_gemm_columns` reads them off one problem of each type
_TYPE_COLUMNS = tuple(
    (name, dtype)
    for name, dtype in PROBLEM_COLUMNS
    if name not in GEMM_NUMBER_FIELDS and name not in ("alpha_restriction", "beta_restriction")
)
_INT31 = 1 << 31
PROBLEM_TYPE_COLUMNS = frozenset(name for name, _ in _TYPE_COLUMNS + LITE_COLUMNS)
"""The columns :func:`_gemm_columns` spreads from one problem of each type (the same for every
query of the type: a predicate that reads only these is evaluated once per type)."""
_BATCH_ROW_DTYPES = {name: np.uint64 if name == "workspace_size" else np.float64 if name in ("alpha", "beta") else np.int64 for name in BATCH_ROW_FIELDS}  # fmt: skip
assert BATCH_ROW.size == 8 * len(BATCH_ROW_FIELDS)


_ROWS_AT_ONCE = 4096
"""Problems whose batch rows :func:`_batch_rows` joins at once (~560 KB: they stay in the cache)."""


def _batch_rows(problems: Sequence[GemmProblem]) -> dict[str, np.ndarray] | None:
    """Each problem's :func:`~tensilekit.selection.problem.batch_row` as columns (one attribute
    read per problem: what its validation made); None when a problem's numbers do not fit one
    (a problem built without validation) or its type has no number."""
    size, fields = len(problems), len(BATCH_ROW_FIELDS)
    table = np.empty((fields, size), dtype=np.int64)
    # rows to columns a slice of problems at a time (one pass each: a copy per field, at the
    # rows' stride, cost several), the slice's rows still in the cache (all of them at once:
    # 13.6 MB per 100 000, a third slower)
    for start in range(0, size, _ROWS_AT_ONCE):
        part = problems[start : start + _ROWS_AT_ONCE]
        try:
            data = b"".join(map(known_batch_row, part))
        except AttributeError:  # some were made without validation (model_copy): their rows made now
            try:
                data = b"".join([_row_of(problem) for problem in part])
            except (struct.error, TypeError, KeyError, AttributeError):
                return None
        np.copyto(table[:, start : start + len(part)], np.frombuffer(data, dtype="<i8").reshape(len(part), fields).T)
    columns = {name: table[i].view(_BATCH_ROW_DTYPES[name]) for i, name in enumerate(BATCH_ROW_FIELDS)}
    if int(columns["problem_type"].min(initial=0)) < 0:
        return None
    return columns


def _row_of(problem: GemmProblem) -> bytes:
    try:
        return known_batch_row(problem)  # type: ignore[no-any-return]
    except AttributeError:
        return batch_row(problem)


def _gemm_columns(
    problems: Sequence[GemmProblem], rocblas_k0: bool
) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, IntArray | None]], tuple[IntArray, IntArray]] | None:
    """:meth:`ProblemColumns.from_problems`'s columns of GemmProblems without a ContractionProblem
    per query: (the number columns; the type columns spread per problem type (see
    :class:`ProblemColumns`), from one :func:`contraction_problem` per problem type; the first
    query of each problem type, each query's type). The numbers come from each problem's batch
    row, the default leading dimensions and strides as :func:`contraction_problem` derives them,
    by column. None when a default stride could pass int64 (the per-query path says which) or a
    problem has no batch row."""
    rows = _batch_rows(problems)
    if rows is None:
        return None
    size = len(problems)
    group, firsts = _problem_types(rows["problem_type"])
    kinds = [contraction_problem(problems[first]) for first in firsts]
    spread: dict[str, tuple[np.ndarray, IntArray | None]] = {
        name: (_column([getattr(kind, name) for kind in kinds], dtype), group) for name, dtype in _TYPE_COLUMNS
    }
    lites = [kind.lite for kind in kinds]
    for name, dtype in LITE_COLUMNS:
        spread[name] = (_column([_lite_value(lite, name[5:]) for lite in lites], dtype), group)

    def column(name: str) -> np.ndarray:
        return rows[name]

    m, n, k, batch, alpha, beta = (column(name) for name in ("m", "n", "k", "batch", "alpha", "beta"))
    trans_a, trans_b = spread["trans_a"][0] == "N", spread["trans_b"][0] == "N"
    a_normal = np.repeat(trans_a, size) if group is None else trans_a[group]
    b_normal = np.repeat(trans_b, size) if group is None else trans_b[group]
    # with K before rocblas_k0
    dimensions = derived_dimensions(m, n, k, a_normal, b_normal, column)
    if dimensions is None:
        return None
    numbers = dict(
        m=m, n=n, k=np.where(alpha == 0, 0, k) if rocblas_k0 else k, batch=batch, **dimensions,
        workspace_size=column("workspace_size"), alpha=alpha, beta=beta,
    )  # fmt: skip
    spread.update(alpha_restriction=_restriction(alpha), beta_restriction=_restriction(beta))
    kind_of = np.zeros(size, dtype=np.int64) if group is None else group
    return numbers, spread, (np.array(firsts, dtype=np.int64), kind_of)


_FEW_TYPES = 16
"""Problem types a batch is split into by one comparison pass each; past them, by sorting."""


def _problem_types(numbers: IntArray) -> tuple[IntArray | None, list[int]]:
    """(the problem type of each query, numbered 0, 1, ... (None: all of one type); the position of
    each type's first query), for the problem-type numbers of a batch."""
    first = numbers[0]
    if (numbers == first).all():
        return None, [0]
    present = np.flatnonzero(np.bincount(numbers))
    if len(present) > _FEW_TYPES:
        _, firsts, inverse = np.unique(numbers, return_index=True, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64), firsts.tolist()
    lookup = np.zeros(int(present[-1]) + 1, dtype=np.int64)
    lookup[present] = np.arange(len(present))
    return lookup[numbers], [int(np.argmax(numbers == number)) for number in present.tolist()]


def derived_dimensions(
    m: IntArray, n: IntArray, k: IntArray, a_normal: Any, b_normal: Any, given: Callable[[str], IntArray]
) -> dict[str, IntArray] | None:
    """The leading dimensions and strides of problems by column, as :func:`contraction_problem`
    derives them: ``given(name)`` where not negative, else the default (lda ``max(1, m)`` for
    a normal A, else ``max(1, k)``; ldd = ldc; a stride its ld times the columns). ``a_normal``,
    ``b_normal``: whether A and B are not transposed (a column, or one bool for all). None when
    a size or leading dimension reaches 2^31, where a default stride might not fit int64 (the
    per-query path's arithmetic then decides)."""
    lda = _or_default(given("lda"), lambda: np.maximum(1, np.where(a_normal, m, k)))
    ldb = _or_default(given("ldb"), lambda: np.maximum(1, np.where(b_normal, k, n)))
    ldc = _or_default(given("ldc"), lambda: np.maximum(1, m))
    ldd = _or_default(given("ldd"), lambda: ldc)
    if int(np.max(m | n | k | lda | ldb | ldc | ldd, initial=0)) >= _INT31:
        return None
    return {
        "lda": lda,
        "ldb": ldb,
        "ldc": ldc,
        "ldd": ldd,
        "stride_a": _or_default(given("stride_a"), lambda: lda * np.where(a_normal, k, m)),
        "stride_b": _or_default(given("stride_b"), lambda: ldb * np.where(b_normal, n, k)),
        "stride_c": _or_default(given("stride_c"), lambda: ldc * n),
        "stride_d": _or_default(given("stride_d"), lambda: ldd * n),
    }


def _or_default(given: IntArray, default: Any) -> IntArray:
    """``given`` where given (not negative), else ``default()``."""
    left_out = given < 0
    if left_out.all():
        column: IntArray = default()
        return column
    return np.where(left_out, default(), given) if left_out.any() else given


def _restriction(values: np.ndarray) -> tuple[np.ndarray, IntArray]:
    """``alpha_restriction``/``beta_restriction`` (:func:`contraction_problem`'s rule) spread (see
    :class:`ProblemColumns`): the spellings present (as wide as those, as the per-query path
    builds the column), and which of them each query has."""
    one = values == 1.0
    if len(values) and one.all():  # the usual batch: one pass
        return np.array(["One"]), np.zeros(len(values), dtype=np.int64)
    code = np.where(one, 0, np.where(values == -1.0, 1, 2))
    present = np.flatnonzero(np.bincount(code, minlength=3))
    spellings = np.array([("One", "NegativeOne", "Any")[i] for i in present.tolist()])
    position = np.zeros(3, dtype=np.int64)
    position[present] = np.arange(len(present))
    return spellings, position[code]


class _ContractionRows(Sequence[tuple[ContractionProblem, Hardware]]):
    """Each query as objects, built when asked (a batch asks for the few it answers one by one)."""

    def __init__(self, problems: Sequence[GemmProblem], devices: Sequence[Hardware], rocblas_k0: bool) -> None:
        self._problems, self._devices, self._rocblas_k0 = problems, devices, rocblas_k0

    def __len__(self) -> int:
        return len(self._problems)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return contraction_problem(self._problems[i], rocblas_k0=self._rocblas_k0), self._devices[i]


class ColumnView(ColumnsLike):
    """Rows ``positions`` of a base :class:`ColumnsLike`, indexed lazily per column."""

    def __init__(self, base: ColumnsLike, positions: IntArray) -> None:
        self._base = base
        self._positions = positions
        self.size = len(positions)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        base = self._base
        if isinstance(base, ProblemColumns):
            kinds = self.__dict__.get("_kinds")
            if kinds is None:
                kinds = self.__dict__["_kinds"] = base.kinds_at(self._positions)
            column = base.gather(name, self._positions, kinds)
        else:
            column = getattr(base, name)[self._positions]
        self.__dict__[name] = column
        return column

    def row(self, i: int) -> tuple[ContractionProblem, Hardware]:
        return self._base.row(int(self._positions[i]))

    def take(self, positions: IntArray) -> ColumnsLike:
        return ColumnView(self._base, self._positions[positions])

    def one_device(self) -> bool:
        return self._base.one_device()

    def largest(self, name: str) -> int | None:
        return self._base.largest(name)

    def problem_types(self) -> tuple[ColumnsLike, IntArray] | None:
        known = self.__dict__.get("_problem_types")
        if known is None:
            base = self._base.problem_types()
            known = self.__dict__["_problem_types"] = (None,) if base is None else (base[0], base[1][self._positions])
        return None if known[0] is None else known  # type: ignore[return-value]


def _flop_count(c: Any) -> np.ndarray:
    packing = np.where(np.isin(c.a_type, _PACKING_TYPES), 4, 1).astype(np.uint64)
    product = np.uint64(2) * packing
    for name in ("m", "n", "batch", "k"):
        product = product * getattr(c, name).astype(np.uint64)
    return product


def _arithmetic_intensity(c: Any) -> np.ndarray:
    u = np.uint64
    m, n, k, batch = (getattr(c, x).astype(u) for x in ("m", "n", "k", "batch"))
    gflop = (u(2) * m * n * batch * k).astype(np.float64) * 1e-9
    a_size, b_size, c_size = m * k * batch, k * n * batch, m * n * batch
    beta_nonzero = c.beta != 0
    gflop = gflop + np.where(beta_nonzero, (u(2) * c_size).astype(np.float64) * 1e-9, 0.0)
    c_size = np.where(beta_nonzero, u(2) * c_size, c_size)
    gbyte = (a_size * c.a_bytes.astype(u) + b_size * c.b_bytes.astype(u) + c_size * c.c_bytes.astype(u)).astype(
        np.float64
    ) * 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        result: np.ndarray = gflop / gbyte
    return result


__all__ = [
    "HARDWARE_COLUMNS",
    "LITE_COLUMNS",
    "PROBLEM_COLUMNS",
    "PROBLEM_TYPE_COLUMNS",
    "ColumnView",
    "ColumnsLike",
    "ProblemColumns",
    "derived_dimensions",
]

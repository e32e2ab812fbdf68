"""Shared base model settings and small enums used across the models."""

from __future__ import annotations

import contextlib
import contextvars
import enum
from collections.abc import Iterator
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ModelWrapValidatorHandler, PrivateAttr, model_validator

# What the derivation, naming and selection code relies on. Generous: every bound is far past any
# value a real kernel or GPU problem has (corpus maxima in comments), but small enough that loops
# over them end (an index assignment of 10**12 made ``range(num_c, total)`` run for ever).

MAX_TENSOR_INDICES = 18
"""Tensor indices are named ``i``..``z`` (Tensile ``globalParameters["IndexChars"]``)."""
MAX_TILE = 1 << 16  # macro tile, depth U, thread tile, work group (corpus: <= 512)
MAX_VECTOR_WIDTH = 1 << 10  # vector widths (corpus: <= 16)
MAX_SIZE = 1 << 40  # a problem size or leading dimension (corpus: <= 16 000 000)
MAX_PARAMETER = 1 << 20  # other small integer parameters (stagger, element multiples, ...)


# Set (a list) while a merge reads its inputs: a NaN efficiency is accepted and counted there.
_NAN_EFFICIENCIES: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("nan_efficiencies", default=None)


@contextlib.contextmanager
def nan_efficiencies_accepted() -> Iterator[list[float]]:
    """Accept NaN efficiencies in the logic read inside the block, as AMD's merge tools do (Tensile
    ``TensileMergeLibrary`` and tensilelite ``Utilities/merge.py`` read them and write ``.nan``);
    yields the list each accepted NaN is appended to, for the warning. Elsewhere NaN is refused."""
    seen: list[float] = []
    token = _NAN_EFFICIENCIES.set(seen)
    try:
        yield seen
    finally:
        _NAN_EFFICIENCIES.reset(token)


# Set while a loader validates a tree it parsed itself (nobody else holds its mappings): only then
# may the open models give a mapping the shared key strings in place (see OrderedOpenModel).
_PARSED_TREE_OWNED: contextvars.ContextVar[bool] = contextvars.ContextVar("parsed_tree_owned", default=False)


@contextlib.contextmanager
def parsed_tree_owned() -> Iterator[None]:
    """Inside the block the models validate a tree the caller parsed and gives away: its mappings may
    have their keys swapped for equal shared strings in place. A caller's own data (``model_validate``
    of a dict a script keeps) is never changed."""
    token = _PARSED_TREE_OWNED.set(True)
    try:
        yield
    finally:
        _PARSED_TREE_OWNED.reset(token)


def _non_negative(value: float | int) -> float | int:
    # ``not >=`` is also true for NaN. Infinity stays legal: AMD's tools write .inf for
    # kernels that were never timed (rocBLAS aquavanjaram logic), and it sorts consistently.
    if not value >= 0:
        accepted = _NAN_EFFICIENCIES.get()
        if accepted is not None and value != value:  # NaN, inside nan_efficiencies_accepted()
            accepted.append(value)
            return value
        raise ValueError("must be a number >= 0 (not negative, not NaN)")
    return value


Efficiency = Annotated[float | int, AfterValidator(_non_negative)]
"""A table efficiency or master speed: not negative, not NaN (NaN would sort arbitrarily)."""

_KEY_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
"""One tuple of each key order of string keys the open models have read: thousands of solutions
share a handful of orders, and its strings are the keys every mapping read with that order gets."""


def _shared_order(order: tuple[Any, ...]) -> tuple[Any, ...]:
    """The one tuple kept of ``order`` (``order`` itself the first time), when every key is a
    string; other orders are their own (``(1, "a") == (True, "a")``: a cached tuple must not
    swap one key type for another). An order equal to a cached one is all strings too."""
    shared = _KEY_ORDERS.get(order)
    if shared is not None:
        return shared
    if all(type(key) is str for key in order):
        _KEY_ORDERS[order] = order
    return order


def to_raw(value: Any) -> Any:
    """Plain data (dicts, lists, scalars) for a value that may hold open models."""
    if isinstance(value, OpenModel):
        return value.raw()
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(value, list):
        return [to_raw(item) for item in value]
    if isinstance(value, dict):
        return {key: to_raw(item) for key, item in value.items()}
    return value


_Model = TypeVar("_Model", bound=BaseModel)


def copied_with(model: _Model, update: dict[str, Any], fields_set: set[str] | None = None) -> _Model:
    """``model.model_copy(update=update)`` at half its cost, for a model without extra or private
    attributes whose ``update`` values are known valid (taken from a model of the same kind, or
    numbers a validation would keep as they are): nothing is validated. ``fields_set``: the new
    model's set of explicitly given fields (shared, not copied); by default ``model``'s plus
    ``update``'s keys, as ``model_copy`` sets it.

    The hot paths that build one model per query or per workload GEMM use it (pydantic 2's
    ``__copy__`` layout: ``__dict__``, ``__pydantic_fields_set__``, ``__pydantic_extra__``,
    ``__pydantic_private__``; ``test_copied_with_equals_model_copy`` checks it stays so)."""
    state = model.__dict__.copy()
    state.update(update)
    copied = object.__new__(type(model))
    setter = object.__setattr__
    setter(copied, "__dict__", state)
    setter(copied, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys() if fields_set is None else fields_set)  # fmt: skip
    setter(copied, "__pydantic_extra__", None)
    setter(copied, "__pydantic_private__", None)
    return copied


class StrictModel(BaseModel):
    """Closed model: unknown keys are errors, types are not coerced (a file's ``"64"`` stays wrong)."""

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True, frozen=False)


class OpenModel(BaseModel):
    """Open model: typed fields are checked strictly, every other key is kept verbatim."""

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    def raw(self) -> dict[str, Any]:
        """The mapping as it would be written: file keys, no invented defaults."""
        data: dict[str, Any] = {}
        fields = type(self).model_fields
        for name in self.model_fields_set:
            info = fields.get(name)
            if info is not None:
                data[info.alias or name] = to_raw(getattr(self, name))
        if self.__pydantic_extra__:
            for key, value in self.__pydantic_extra__.items():
                data[key] = to_raw(value)
        return self._ordered(data)

    def _ordered(self, data: dict[str, Any]) -> dict[str, Any]:
        return {key: data[key] for key in sorted(data, key=_declaration_rank(type(self)))}


class OrderedOpenModel(OpenModel):
    """Open model that remembers the key order it was read with (logic files are not always
    sorted, and a faithful dump must keep their order)."""

    _key_order: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        order = tuple(data)
        shared = _shared_order(order)
        # (keys shared already, as parse_yaml's default walk leaves them: the last one tells, and
        # a mapping that fools it only keeps its own equal strings)
        if shared is not order and order[-1] is not shared[-1] and type(data) is dict and _PARSED_TREE_OWNED.get():
            # the kept tuple's strings become the mapping's keys, in place (equal keys, same order,
            # same values): the keys the model keeps (its extras') are then one string for every
            # mapping of this order, and the parser's copies (it makes each anew: ~160 000 keys in
            # a 4 MB logic file) are freed as the file is read, not after it
            values = list(data.values())
            data.clear()
            data.update(zip(shared, values, strict=True))
        result = handler(data)
        if isinstance(result, OrderedOpenModel):
            private = result.__pydantic_private__
            if private is None:
                result._key_order = shared
            else:  # pydantic's __setattr__ costs ~2 us a model, thousands of times a file
                private["_key_order"] = shared
        return result

    def _ordered(self, data: dict[str, Any]) -> dict[str, Any]:
        order = self._key_order
        if order is None:
            return super()._ordered(data)
        ordered = {key: data[key] for key in order if key in data}
        if len(ordered) != len(data):
            ordered.update((key, value) for key, value in data.items() if key not in ordered)
        return ordered


def _declaration_rank(model: type[BaseModel]) -> Any:
    ranks = {(info.alias or name): number for number, (name, info) in enumerate(model.model_fields.items())}
    return lambda key: (ranks.get(key, len(ranks)), key if key not in ranks else "")


class Distance(str, enum.Enum):
    """Distance functions a ``Matching`` node may name (Tensile ``Distance.hpp``)."""

    EUCLIDEAN = "Euclidean"
    EQUALITY = "Equality"
    GRID_BASED = "GridBased"
    MANHATTAN = "Manhattan"
    RATIO = "Ratio"
    RANDOM = "Random"
    JSD = "JSD"


class DataType(str, enum.Enum):
    """Tensile C++ data-type names as master libraries serialise them (``DataTypes.cpp``).

    ``element_bytes`` is ``DataTypeInfo::elementSize`` (Int8x4 packs four int8 into 4 bytes).
    """

    FLOAT = "Float"
    DOUBLE = "Double"
    COMPLEX_FLOAT = "ComplexFloat"
    COMPLEX_DOUBLE = "ComplexDouble"
    HALF = "Half"
    INT8X4 = "Int8x4"
    INT32 = "Int32"
    BFLOAT16 = "BFloat16"
    INT8 = "Int8"
    XFLOAT32 = "XFloat32"
    FLOAT8 = "Float8"
    BFLOAT8 = "BFloat8"
    FLOAT8_BFLOAT8 = "Float8BFloat8"
    BFLOAT8_FLOAT8 = "BFloat8Float8"
    INT64 = "Int64"
    FLOAT8_FNUZ = "Float8_fnuz"
    BFLOAT8_FNUZ = "BFloat8_fnuz"

    @property
    def element_bytes(self) -> int:
        return _ELEMENT_BYTES[self]


_ELEMENT_BYTES = {
    DataType.FLOAT: 4,
    DataType.DOUBLE: 8,
    DataType.COMPLEX_FLOAT: 8,
    DataType.COMPLEX_DOUBLE: 16,
    DataType.HALF: 2,
    DataType.INT8X4: 4,
    DataType.INT32: 4,
    DataType.BFLOAT16: 2,
    DataType.INT8: 1,
    DataType.XFLOAT32: 4,
    DataType.FLOAT8: 1,
    DataType.BFLOAT8: 1,
    DataType.FLOAT8_BFLOAT8: 1,
    DataType.BFLOAT8_FLOAT8: 1,
    DataType.INT64: 8,
    DataType.FLOAT8_FNUZ: 1,
    DataType.BFLOAT8_FNUZ: 1,
}

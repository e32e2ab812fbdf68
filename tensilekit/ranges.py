"""The C++ integer ranges of the numbers tensilekit hands to AMD's code (pure, no I/O).

A number out of its C++ type's range is not a problem the runtime could ever be asked: hipBLASLt
reads sizes, leading dimensions and strides as ``int64_t`` / ``uint64_t`` (Tensile's
``ContractionProblem`` keeps sizes as ``size_t``, where a value of 2^63 and more only wraps on
the way through ``int64_t`` arguments), the batch count as ``int32_t``
(``HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT``), and a solution index as ``int``
(``ContractionSolution::index``). Readers check these ranges where they read a number, so an
out-of-range value is a located input error (or a skipped workload line with a warning), never
an ``OverflowError`` deep inside numpy.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

INT32_MAX = (1 << 31) - 1
INT32_MIN = -(1 << 31)
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)


@dataclasses.dataclass(frozen=True)
class CRange:
    """A C++ integer type's range: ``low <= value <= high``."""

    name: str
    low: int
    high: int

    def contains(self, value: int) -> bool:
        return self.low <= value <= self.high


INT32 = CRange("int32_t", INT32_MIN, INT32_MAX)
INT64 = CRange("int64_t", INT64_MIN, INT64_MAX)
CPP_INT = CRange("int", INT32_MIN, INT32_MAX)
SIZE_T = CRange("size_t", 0, (1 << 64) - 1)

SIZE = INT64
"""GEMM sizes, leading dimensions and strides (hipBLASLt's ``int64_t``; ``hipblaslt-bench``
parses them as ``int64_t`` too)."""
BATCH = INT32
"""The batch count (``int32_t``)."""
SOLUTION_INDEX = CPP_INT
"""A solution index (``ContractionSolution::index`` is an ``int``)."""


def out_of_range(value: int, crange: CRange, what: str) -> str | None:
    """Why ``value`` cannot be ``what`` (a message naming the C++ type), or None when it fits."""
    if crange.contains(value):
        return None
    # str() of a huge int is slow and refused past 4 300 digits: name its size instead
    digits = (
        str(value) if value.bit_length() <= 128 else f"a number of about {int(value.bit_length() * 0.30103)} digits"
    )
    bound = (
        f"over the C++ {crange.name} maximum {crange.high}"
        if value > crange.high
        else (f"under the C++ {crange.name} minimum {crange.low}")
    )
    return f"{what + ' ' if what else ''}{digits} is {bound}"


def check_range(value: int, crange: CRange, what: str) -> int:
    """``value`` itself when it fits ``crange``; else :class:`ValueError` saying why (callers turn
    it into a located error or a skipped workload line)."""
    message = out_of_range(value, crange, what)
    if message is not None:
        raise ValueError(message)
    return value


def checked_field(value: int, crange: CRange) -> int:
    """For pydantic field validators: ``value`` when it fits ``crange``, else a validation error
    whose message is just why (no ``Value error,`` prefix), so a model reports it with the field."""
    message = out_of_range(value, crange, "")
    if message is not None:
        raise PydanticCustomError("cpp_range", message)
    return value


_INDEX_LOW, _INDEX_HIGH = SOLUTION_INDEX.low, SOLUTION_INDEX.high


def _solution_index(value: int) -> int:
    if _INDEX_LOW <= value <= _INDEX_HIGH:  # a master's every table row: one comparison, no call
        return value
    return checked_field(value, SOLUTION_INDEX)


SolutionIndexInt = Annotated[int, AfterValidator(_solution_index)]
"""A model field holding a solution index: one out of the C++ ``int`` range is refused where it
is read (AMD's loader throws on it: ``std::bad_cast`` from msgpack, a failed load from YAML),
not passed on to overflow numpy's int64 arrays in the compiled selection path."""


__all__ = [
    "BATCH",
    "CPP_INT",
    "INT32",
    "INT32_MAX",
    "INT32_MIN",
    "INT64",
    "INT64_MAX",
    "INT64_MIN",
    "SIZE",
    "SIZE_T",
    "SOLUTION_INDEX",
    "CRange",
    "check_range",
    "checked_field",
    "SolutionIndexInt",
    "out_of_range",
]

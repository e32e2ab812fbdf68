"""What ``coverage`` reports: the class of each GEMM, the entries it matched, and the summary.

Plain frozen dataclasses (one is built per distinct GEMM of a workload that may hold tens of
thousands); ``to_dict`` gives the JSON form ``coverage --json`` prints.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import operator
from typing import Any

from tensilekit.model.common import copied_with
from tensilekit.selection.problem import GEMM_NUMBER_FIELDS, GemmProblem, Hardware
from tensilekit.workload.problem import GemmProblem as WorkloadGemm


class CoverageClass(str, enum.Enum):
    """How the runtime reached a GEMM's kernel, best first.

    ``factor`` weighs a GEMM's share of the workload in the "tune next" ranking (an exactly
    tuned GEMM has nothing to gain).
    """

    factor: float
    description: str

    def __new__(cls, value: str, factor: float, description: str) -> CoverageClass:
        member = str.__new__(cls, value)
        member._value_ = value
        member.factor = factor
        member.description = description
        return member

    EXACT = ("exact", 0.0, "an Equality hit or a table entry with exactly the GEMM's key")
    NEAR = ("near", 0.2, "the nearest usable entry is within --near of the GEMM in every dimension")
    FAR = ("far", 0.6, "the nearest usable entry is further away (or one kernel serves every size)")
    FALLBACK = ("fallback", 0.8, "served only by a later, generic row after a specific one found nothing")
    NONE = ("none", 1.0, "no kernel: the runtime fails the call")


class WeightBasis(str, enum.Enum):
    """What a GEMM's weight is: its measured time, or calls x flops when times are missing."""

    MEASURED_TIME = "measured time"
    CALLS_X_FLOPS = "calls x flops"


SIZE_NAMES = {"FreeSizeA": "M", "FreeSizeB": "N", "BoundSize": "K", "BatchSize": "batch"}
"""Matching-table properties that are GEMM sizes, by the name coverage shows them with."""


class _Compactor:
    """Keeps many frozen pydantic models of one class as (a shared model of their kind, the values
    of the fields that vary): per object a tuple instead of a model, its dict and its field set."""

    def __init__(self, model: type[Any], varying: tuple[str, ...]) -> None:
        self.model = model
        self.varying = varying
        self.values_of = operator.itemgetter(*varying)  # of a model's __dict__ (C-level: runs per GEMM)
        self.kind_of = operator.itemgetter(*(name for name in model.model_fields if name not in varying))
        self.kinds: dict[tuple[Any, ...], Any] = {}

    def split(self, value: Any) -> tuple[Any, tuple[Any, ...]]:
        """(the shared model of ``value``'s kind, its varying values); the first of a kind stands for it."""
        fields = value.__dict__
        key = self.kind_of(fields)
        shared = self.kinds.get(key)
        if shared is None:
            shared = value
            if len(self.kinds) < _MAX_KINDS:
                self.kinds[key] = value
        values = self.values_of(fields)
        if shared is not value:  # a value its kind's model has too (alpha 1.0, a stride 0 …) is shared
            values = tuple(
                mine if mine is theirs or mine != theirs or type(mine) is not type(theirs) else theirs
                for mine, theirs in zip(values, self.values_of(shared.__dict__), strict=True)
            )
        return shared, values

    def join(self, shared: Any, values: tuple[Any, ...]) -> Any:
        """The model ``split`` took apart (equal to it): ``model_copy(update=...)`` without its
        overhead (the values came from a validated model of the same kind)."""
        if values == self.values_of(shared.__dict__):
            return shared
        return copied_with(shared, dict(zip(self.varying, values, strict=True)), shared.__pydantic_fields_set__)


_MAX_KINDS = 4096  # distinct problem types kept shared per model (a workload has a handful)
# the fields that differ from one GEMM of a workload to the next; the rest (types, transposes,
# flags, epilogue) is one shared model per problem type
_PROBLEMS = _Compactor(GemmProblem, GEMM_NUMBER_FIELDS)
_WORKLOADS = _Compactor(
    WorkloadGemm,
    ("m", "n", "k", "batch", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "alpha",
     "beta", "call_count", "solution_index", "solution_name", "kernel_name"),
)  # fmt: skip


class CoverageGemm:
    """One distinct GEMM of a workload, as coverage asks about it.

    ``measured_us`` is the total measured time of all its calls (None when the workload has no
    times for it); ``origin`` the first ``file:line`` it came from; ``workload`` the
    hipBLASLt-spelled GEMM when it came from a log or CSV rather than a query file.

    Compact (a workload may hold hundreds of thousands): the problem is kept as its sizes and
    scalars over a problem of its type shared by every GEMM of that type, and :attr:`problem`
    rebuilds it (equal to the one given) when asked.
    """

    __slots__ = ("_type", "_sizes", "_workload_type", "_workload", "hardware", "gemm_type", "calls", "measured_us",
                 "origin")  # fmt: skip

    _type: GemmProblem
    _sizes: tuple[Any, ...]
    _workload_type: WorkloadGemm | None
    _workload: tuple[Any, ...] | None
    hardware: Hardware
    gemm_type: str
    calls: int
    measured_us: float | None
    origin: str | None

    def __init__(
        self, problem: GemmProblem, hardware: Hardware, gemm_type: str, calls: int = 1,
        measured_us: float | None = None, origin: str | None = None, workload: WorkloadGemm | None = None,
    ) -> None:  # fmt: skip
        setter = object.__setattr__
        shared, sizes = _PROBLEMS.split(problem)
        setter(self, "_type", shared)
        setter(self, "_sizes", sizes)
        kind, values = (None, None) if workload is None else _WORKLOADS.split(workload)
        setter(self, "_workload_type", kind)
        setter(self, "_workload", values)
        for name, value in (("hardware", hardware), ("gemm_type", gemm_type), ("calls", calls),
                            ("measured_us", measured_us), ("origin", origin)):  # fmt: skip
            setter(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    @property
    def problem(self) -> GemmProblem:
        """The GEMM's selection problem (rebuilt from its sizes over the shared type)."""
        problem: GemmProblem = _PROBLEMS.join(self._type, self._sizes)
        return problem

    @property
    def workload(self) -> WorkloadGemm | None:
        """The hipBLASLt-spelled GEMM it came from (a log or CSV), rebuilt; None for a query line."""
        if self._workload_type is None or self._workload is None:
            return None
        gemm: WorkloadGemm = _WORKLOADS.join(self._workload_type, self._workload)
        return gemm

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two GEMMs the same (their problem and device), without rebuilding the problem."""
        return (self._type, self._sizes, self.hardware)

    @property
    def m(self) -> int:
        return int(self._sizes[0])

    @property
    def n(self) -> int:
        return int(self._sizes[1])

    @property
    def k(self) -> int:
        return int(self._sizes[2])

    @property
    def batch(self) -> int:
        return int(self._sizes[3])

    @property
    def flops(self) -> int:
        """Floating-point operations of one call (2 m n k per batch)."""
        m, n, k, batch = self._sizes[:4]
        return int(2 * m * n * k * batch)

    def replace(self, **changes: Any) -> CoverageGemm:
        """A copy with some fields changed (``problem``, ``calls``, ``measured_us`` …)."""
        fields = {name: getattr(self, name) for name in
                  ("problem", "hardware", "gemm_type", "calls", "measured_us", "origin", "workload")}  # fmt: skip
        fields.update(changes)
        return CoverageGemm(**fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CoverageGemm):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def _fields(self) -> tuple[Any, ...]:
        return (self.problem, self.hardware, self.gemm_type, self.calls, self.measured_us, self.origin, self.workload)

    def __repr__(self) -> str:
        return (
            f"CoverageGemm(problem={self.problem!r}, hardware={self.hardware!r}, gemm_type={self.gemm_type!r}, "
            f"calls={self.calls!r}, measured_us={self.measured_us!r}, origin={self.origin!r}, "
            f"workload={self.workload!r})"
        )

    def __reduce__(self) -> Any:
        return (_rebuild, (self.problem, self.hardware, self.gemm_type, self.calls, self.measured_us, self.origin,
                           self.workload))  # fmt: skip


def _rebuild(*args: Any) -> CoverageGemm:
    return CoverageGemm(*args)


@dataclasses.dataclass(frozen=True, slots=True)
class EntryMatch:
    """A table entry next to the GEMM: its key, kernel, and the GEMM's size over the entry's.

    ``sizes`` and ``ratios`` name the key's size components (``M``, ``N``, ``K``, ``batch``; a
    Euclidean table has no batch); a ratio of 0.002 for N reads "you run N=8 where the entry
    was tuned for 4096".
    """

    position: int
    key: tuple[int, ...]
    index: int
    speed: float
    sizes: dict[str, int]
    ratios: dict[str, float | None]
    usable: bool | None = None
    """For the nearest entry: whether its kernel can run the GEMM (None: not asked)."""

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "key": self.key,  # a tuple: JSON writes it as a list
            "index": self.index,
            "speed": _finite(self.speed),
            "sizes": self.sizes,
            "ratios": self.ratios,  # finite or None by construction
        }
        if self.usable is not None:
            record["usable"] = self.usable
        return record


@dataclasses.dataclass(frozen=True, slots=True)
class GemmCoverage:
    """Coverage of one GEMM: its kernel (exactly what ``select`` says) and how it was reached."""

    gemm: CoverageGemm
    coverage_class: CoverageClass
    index: int | None
    name: str | None
    distance: float | None
    via: str | None
    """How the answering node answered (:class:`~tensilekit.selection.walk.Route` ``via``)."""
    fell_through: tuple[str, ...]
    table: str | None
    """The kernel-serving table: ``<distance> table, <n> entries, key [M, N, K]``."""
    matched: EntryMatch | None
    nearest: EntryMatch | None
    """The table's entry nearest to the GEMM; the ``matched`` object itself when that is it (the
    JSON form then writes ``null``: "the matched entry is the nearest")."""
    weight: float
    share: float
    score: float = 0.0
    """The "tune next" priority: share of the workload x the class factor."""

    def to_dict(self) -> dict[str, Any]:
        gemm = self.gemm
        p, hardware = gemm.problem, gemm.hardware
        distance = self.distance
        matched = _entry(self.matched)
        return {
            "gemm_type": gemm.gemm_type,
            "m": p.m,
            "n": p.n,
            "k": p.k,
            "batch": p.batch,
            "calls": gemm.calls,
            "flops": 2 * p.m * p.n * p.k * p.batch,
            "measured_us": gemm.measured_us,
            "weight": self.weight,
            "share": self.share,
            "class": self.coverage_class.value,
            "index": self.index,
            "name": self.name,
            "distance": distance if distance is None or math.isfinite(distance) else None,
            "via": self.via,
            "fell_through": self.fell_through,
            "table": self.table,
            "matched": matched,
            "nearest": None if self.nearest is self.matched else _entry(self.nearest),
            "score": self.score,
            "arch": hardware.arch,
            "cu_count": hardware.cu_count,
            "origin": gemm.origin,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class TypeSummary:
    """One problem type (``BBS_TN``): its share of the workload and of each class within it."""

    gemm_type: str
    gemms: int
    share: float
    by_class: dict[CoverageClass, float]
    """Share of the *workload's* weight in each class (sums to ``share``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "gemm_type": self.gemm_type,
            "gemms": self.gemms,
            "share": self.share,
            "by_class": {member.value: self.by_class.get(member, 0.0) for member in CoverageClass},
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Skipped:
    """A GEMM or line coverage could not ask about, and why (``file:line: message``)."""

    origin: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.message}" if self.origin else self.message


@dataclasses.dataclass(frozen=True, slots=True)
class CoverageReport:
    """Coverage of a whole workload: every GEMM, the summary and the "tune next" ranking."""

    gemms: tuple[GemmCoverage, ...]
    basis: WeightBasis
    near: float
    by_class: dict[CoverageClass, float]
    by_type: tuple[TypeSummary, ...]
    tune_next: tuple[GemmCoverage, ...]
    skipped: tuple[Skipped, ...] = ()

    @property
    def call_count(self) -> int:
        return sum(item.gemm.calls for item in self.gemms)

    def count(self, coverage_class: CoverageClass) -> int:
        """How many distinct GEMMs fall in ``coverage_class``."""
        return sum(1 for item in self.gemms if item.coverage_class is coverage_class)

    def to_dict(self) -> dict[str, Any]:
        return {
            "weight_basis": self.basis.value,
            "near": self.near,
            "gemms": [item.to_dict() for item in self.gemms],
            "summary": {
                "gemms": len(self.gemms),
                "calls": self.call_count,
                "by_class": {
                    member.value: {"share": self.by_class.get(member, 0.0), "gemms": self.count(member)}
                    for member in CoverageClass
                },
                "by_type": [summary.to_dict() for summary in self.by_type],
            },
            "tune_next": [
                {"rank": rank, "score": item.score, **item.to_dict()} for rank, item in enumerate(self.tune_next, 1)
            ],
            "skipped": [{"origin": item.origin, "message": item.message} for item in self.skipped],
        }


def _entry(entry: EntryMatch | None) -> dict[str, Any] | None:
    return None if entry is None else entry.to_dict()


def _finite(value: float | None) -> float | None:
    """JSON has no infinity or NaN: those become null."""
    if value is None or math.isinf(value) or math.isnan(value):
        return None
    return value


__all__ = [
    "SIZE_NAMES",
    "CoverageClass",
    "CoverageGemm",
    "CoverageReport",
    "EntryMatch",
    "GemmCoverage",
    "Skipped",
    "TypeSummary",
    "WeightBasis",
]

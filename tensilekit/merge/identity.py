"""Kernel identity: when AMD's merge tools consider two solution dicts "the same kernel".

Two rules exist, one per tool family (see ``shared/spec/merge.md`` §2):

* :attr:`Compat.TENSILE` -- ROCm/Tensile ``TensileMergeLibrary.solsEq``: ``str(Solution(a)) ==
  str(Solution(b))``, the *full* kernel name after Tensile fills defaults and re-derives
  parameters. Reproduced with :func:`tensilekit.model.naming.solution_name_full` (``ISA``
  defaults to ``(0, 0, 0)``, Tensile's value on a machine without ROCm, which is how AMD's golden
  outputs were made).
* :attr:`Compat.TENSILELITE` -- ``Utilities/merge.py`` ``cmpHelper``: raw dict equality after
  removing ``SolutionIndex`` and ``SolutionNameMin`` (Python ``==``, so ``1 == 1.0 == True``),
  applied after :func:`sanitize_solution`.

:class:`IdentityIndex` answers AMD's ``addKernel`` question ("index of the *first* pool entry equal
to this kernel") in O(1) per lookup while computing identities lazily, in pool order.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from tensilekit.errors import LibraryFormatError, Location, MergeError
from tensilekit.model.logic import Dialect
from tensilekit.model.naming import kernel_state, solution_name_full


class Compat(str, enum.Enum):
    """Which AMD merge tool's kernel identity (and side rules) to reproduce."""

    TENSILE = "tensile"  # ROCm/Tensile TensileMergeLibrary.py
    TENSILELITE = "tensilelite"  # ROCm/hipBLASLt tensilelite/Tensile/Utilities/merge.py

    @classmethod
    def for_dialect(cls, dialect: Dialect) -> Compat:
        """The tool that normally merges files of ``dialect``."""
        return cls.TENSILELITE if dialect is Dialect.TENSILELITE else cls.TENSILE


_DICT_IGNORED = frozenset({"SolutionIndex", "SolutionNameMin"})

KernelIdentity = Hashable
IdentityFunction = Callable[[Mapping[str, Any]], KernelIdentity]
Entry = TypeVar("Entry")


class SupportsGet(Protocol):
    """Anything with a dict-like ``get`` (a solution dict, or a merge ``Kernel``)."""

    def get(self, key: str, default: Any = None, /) -> Any: ...


def freeze(value: Any) -> Hashable:
    """A hashable value equal (and hash-equal) exactly when Python ``==`` says the data are equal.

    Dicts become frozensets of items (order-insensitive, as dict ``==`` is), lists become tuples.
    Python's numeric tower keeps ``hash(1) == hash(1.0) == hash(True)``, matching ``==``.
    """
    # exact-type fast paths first: decoded libraries are plain dicts, lists and scalars, and an
    # abstract ``isinstance(value, Mapping)`` per node dominated ``diff`` of big masters
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value  # type: ignore[no-any-return]
    if kind is dict:
        return ("__dict__", frozenset([(key, freeze(item)) for key, item in value.items()]))
    if kind is list:
        return tuple([freeze(item) for item in value])
    if isinstance(value, Mapping):
        return ("__dict__", frozenset((key, freeze(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return ("__set__", frozenset(freeze(item) for item in value))
    return value  # type: ignore[no-any-return]


def canonical(value: Any) -> str:
    """A string equal for two values exactly when Python ``==`` says they are equal.

    Numbers are spelled by value (``True``, ``1`` and ``1.0`` alike), dict items are sorted by
    their canonical key, lists keep their order, strings are quoted. NaN never equals itself
    in ``==`` and gets a unique spelling here too.
    """
    if isinstance(value, Mapping):
        items = sorted((canonical(key), canonical(item)) for key, item in value.items())
        return "{" + ",".join(f"{key}:{item}" for key, item in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return f"nan#{id(value)}"
        if value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "None"
    return f"{type(value).__name__}:{value!r}"


def dict_identity(solution: Mapping[str, Any]) -> KernelIdentity:
    """tensilelite/TU ``cmpHelper`` identity: the dict without SolutionIndex and SolutionNameMin.

    Kept as a 128-bit digest of :func:`canonical` (a frozen copy of every kernel would cost
    megabytes on large files); equal digests mean equal dicts barring a BLAKE2 collision.
    """
    text = canonical({key: value for key, value in solution.items() if key not in _DICT_IGNORED})
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def name_identity(solution: Mapping[str, Any], problem_type: Mapping[str, Any] | None = None) -> KernelIdentity:
    """TensileMergeLibrary ``solsEq`` identity: Tensile's full solution name.

    ``problem_type`` is used for solutions without their own ``ProblemType`` (the file header's).
    """
    state = kernel_state(solution, isa=None, problem_type=problem_type, kernel=False, strict=False)
    return solution_name_full(state)


def identity_function(compat: Compat, problem_type: Mapping[str, Any] | None = None) -> IdentityFunction:
    """The identity rule of ``compat``; ``problem_type`` is the header fallback for Tensile names."""
    if compat is Compat.TENSILE:
        return lambda solution: name_identity(solution, problem_type)
    return dict_identity


def sanitize_solution(solution: dict[str, Any]) -> bool:
    """TU/TL ``sanitizeSolutions`` on one dict, in place: StaggerU == 0 zeroes its dependants.

    Returns whether anything changed. Keys are added when absent, as AMD's script does.
    """
    if solution.get("StaggerU") != 0:
        return False
    changed = False
    for key in ("StaggerUMapping", "StaggerUStride", "_staggerStrideShift"):
        if key not in solution or solution[key] != 0 or type(solution[key]) is not int:
            changed = True
        solution[key] = 0
    return changed


def kernel_bucket(solution: SupportsGet | Mapping[str, Any]) -> Hashable:
    """A coarse key that equal kernels always share, under both identity rules.

    Tensile names start with ``MT<MacroTile0>x<MacroTile1>x<DepthU>`` (custom kernels are named
    by ``CustomKernelName`` alone), and equal dicts have equal values, so kernels in different
    buckets are never equal. Bucketing lets a lookup skip computing most identities.
    """
    custom = solution.get("CustomKernelName")
    if custom:
        return ("custom", str(custom))
    return freeze((solution.get("MacroTile0"), solution.get("MacroTile1"), solution.get("DepthU", -1)))


class IdentityIndex(Generic[Entry]):
    """``addKernel``'s "first equal pool entry" (T:89-102), without comparing against every entry.

    Identities are computed lazily, only within the lookup's :func:`kernel_bucket`, in pool
    order, so the first equal entry is found exactly as AMD's linear scan finds it. ``pool`` is
    shared with the caller, who appends through :meth:`append` only. Entries are solution dicts,
    or anything ``raw_of`` turns into one (``bucket_of`` must agree with :func:`kernel_bucket`).
    """

    def __init__(
        self,
        pool: list[Entry],
        identity: IdentityFunction,
        *,
        raw_of: Callable[[Entry], Mapping[str, Any]] | None = None,
        bucket_of: Callable[[Entry], Hashable] | None = None,
        side: str = "original",
        file: str | None = None,
        file_positions: Sequence[int] | None = None,
    ) -> None:
        self._pool = pool
        self._raw_of: Callable[[Entry], Mapping[str, Any]] = raw_of or (lambda entry: entry)  # type: ignore[assignment,return-value]
        bucket = bucket_of or (lambda entry: kernel_bucket(self._raw_of(entry)))
        self._file_positions = file_positions
        self._identity = identity
        self._side = side
        self._file = file
        self._ids: dict[int, KernelIdentity] = {}
        self._members: dict[Hashable, list[int]] = {}
        self._scanned: dict[Hashable, int] = {}
        self._first: dict[Hashable, dict[KernelIdentity, int]] = {}
        self._buckets: list[Hashable] = []
        for position, entry in enumerate(pool):
            key = bucket(entry)
            self._buckets.append(key)
            self._members.setdefault(key, []).append(position)

    def bucket_at(self, position: int) -> Hashable:
        return self._buckets[position]

    def identity_at(self, position: int) -> KernelIdentity:
        """Identity of the pool entry at ``position``."""
        found = self._ids.get(position)
        if found is None:
            shown = position
            if self._file_positions is not None and position < len(self._file_positions):
                shown = self._file_positions[position]
            raw = self._raw_of(self._pool[position])
            found = _identity_or_error(self._identity, raw, self._side, shown, self._file)
            self._ids[position] = found
        return found

    def find(self, key: KernelIdentity, bucket: Hashable) -> int | None:
        """Position of the first pool entry with identity ``key`` (in ``bucket``), or None."""
        first = self._first.setdefault(bucket, {})
        found = first.get(key)
        members = self._members.get(bucket, [])
        scanned = self._scanned.get(bucket, 0)
        while found is None and scanned < len(members):
            position = members[scanned]
            first.setdefault(self.identity_at(position), position)
            scanned += 1
            found = first.get(key)
        self._scanned[bucket] = scanned
        return found

    def append(self, entry: Entry, key: KernelIdentity, bucket: Hashable) -> int:
        """Append a kernel that :meth:`find` just did not find; returns its position."""
        self._pool.append(entry)
        position = len(self._pool) - 1
        self._ids[position] = key
        self._buckets.append(bucket)
        members = self._members.setdefault(bucket, [])
        members.append(position)
        self._first.setdefault(bucket, {}).setdefault(key, position)
        self._scanned[bucket] = len(members)
        return position


def _identity_or_error(
    identity: IdentityFunction, solution: Mapping[str, Any], side: str, position: int, file: str | None = None
) -> KernelIdentity:
    try:
        return identity(solution)
    except LibraryFormatError as error:
        location = error.location or Location()
        path = f"[5][{position}]" + (location.path or "")
        raise MergeError(
            f"cannot compute the kernel identity of {side} solution {position}: {error.message}",
            Location(file=file, path=path),
        ) from error


def identity_of(
    identity: IdentityFunction, solution: Mapping[str, Any], *, side: str, position: int, file: str | None = None
) -> KernelIdentity:
    """``identity(solution)``, with identity failures raised as :class:`MergeError` naming the kernel."""
    return _identity_or_error(identity, solution, side, position, file)


def identities(
    solutions: Sequence[Mapping[str, Any]], identity: IdentityFunction, *, side: str
) -> list[KernelIdentity]:
    """Identity of every solution, in order."""
    return [_identity_or_error(identity, solution, side, number) for number, solution in enumerate(solutions)]


__all__ = [
    "Compat",
    "canonical",
    "IdentityFunction",
    "IdentityIndex",
    "KernelIdentity",
    "SupportsGet",
    "dict_identity",
    "freeze",
    "identities",
    "identity_function",
    "identity_of",
    "kernel_bucket",
    "name_identity",
    "sanitize_solution",
]

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
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

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


def freeze(value: Any) -> Hashable:
    """A hashable value equal (and hash-equal) exactly when Python ``==`` says the data are equal.

    Dicts become frozensets of items (order-insensitive, as dict ``==`` is), lists become tuples.
    Python's numeric tower keeps ``hash(1) == hash(1.0) == hash(True)``, matching ``==``.
    """
    if isinstance(value, Mapping):
        return ("__dict__", frozenset((key, freeze(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return ("__set__", frozenset(freeze(item) for item in value))
    return value  # type: ignore[no-any-return]


def dict_identity(solution: Mapping[str, Any]) -> KernelIdentity:
    """tensilelite/TU ``cmpHelper`` identity: the dict without SolutionIndex and SolutionNameMin."""
    return freeze({key: value for key, value in solution.items() if key not in _DICT_IGNORED})


def name_identity(solution: Mapping[str, Any], problem_type: Mapping[str, Any] | None = None) -> KernelIdentity:
    """TensileMergeLibrary ``solsEq`` identity: Tensile's full solution name.

    ``problem_type`` is used for solutions without their own ``ProblemType`` (the file header's).
    """
    state = kernel_state(solution, isa=None, problem_type=problem_type, kernel=False)
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


class IdentityIndex:
    """``addKernel``'s "first equal pool entry", with identities computed lazily in pool order.

    ``pool`` is shared with the caller, who appends through :meth:`append` only.
    """

    def __init__(
        self,
        pool: list[dict[str, Any]],
        identity: IdentityFunction,
        *,
        side: str = "original",
        file: str | None = None,
        file_positions: Sequence[int] | None = None,
    ) -> None:
        self._pool = pool
        self._file_positions = file_positions
        self._identity = identity
        self._side = side
        self._file = file
        self._first: dict[KernelIdentity, int] = {}
        self._ids: list[KernelIdentity] = []
        self._scanned = 0

    def _scan_one(self) -> None:
        position = self._scanned
        shown = position
        if self._file_positions is not None and position < len(self._file_positions):
            shown = self._file_positions[position]
        key = _identity_or_error(self._identity, self._pool[position], self._side, shown, self._file)
        self._first.setdefault(key, position)
        self._ids.append(key)
        self._scanned += 1

    def identity_at(self, position: int) -> KernelIdentity:
        """Identity of the pool entry at ``position`` (computing earlier ones first)."""
        while self._scanned <= position:
            self._scan_one()
        return self._ids[position]

    def find(self, key: KernelIdentity) -> int | None:
        """Position of the first pool entry with identity ``key``, or None."""
        found = self._first.get(key)
        while found is None and self._scanned < len(self._pool):
            self._scan_one()
            found = self._first.get(key)
        return found

    def append(self, solution: dict[str, Any], key: KernelIdentity) -> int:
        """Append a kernel known not to be in the pool; returns its position."""
        while self._scanned < len(self._pool):
            self._scan_one()
        self._pool.append(solution)
        position = len(self._pool) - 1
        self._first.setdefault(key, position)
        self._ids.append(key)
        self._scanned = len(self._pool)
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


def identities(solutions: Sequence[Mapping[str, Any]], identity: IdentityFunction, *, side: str) -> list[KernelIdentity]:
    """Identity of every solution, in order."""
    return [_identity_or_error(identity, solution, side, number) for number, solution in enumerate(solutions)]


__all__ = [
    "Compat",
    "IdentityFunction",
    "IdentityIndex",
    "KernelIdentity",
    "dict_identity",
    "freeze",
    "identities",
    "identity_function",
    "identity_of",
    "name_identity",
    "sanitize_solution",
]

"""Merge workload records: one entry per distinct problem with summed call counts, grouped by type.

Two records are the same problem when :meth:`GemmProblem.identity` is equal (every field but the
call count and the solution that ran; strides are ignored for ``batch == 1``). This is GEKO's
``groupby(all columns but call_count).sum()`` (``geko/bench/log.py: parse``), applied across
files and formats. The first record of a problem fixes its position and its field values; the
solution fields survive only when every merged record agrees on them.

Groups follow GEKO's GEMM type (``GEMM_TYPE_FIELDS``: transposes, A/B/C types and compute type),
named by :attr:`GemmProblem.gemm_type` (``BBS_TN``). Groups are ordered by name; problems inside a
group keep input order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from tensilekit._arguments import require, require_items
from tensilekit.workload.problem import GemmProblem


class GemmGroup(BaseModel):
    """The problems of one GEMM type."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The GEMM type name, e.g. ``BBS_TN`` (disambiguated with the compute type if two differ)."""
    problems: tuple[GemmProblem, ...]

    @property
    def call_count(self) -> int:
        """Total calls of the group."""
        return sum(problem.call_count for problem in self.problems)

    @property
    def sizes(self) -> list[tuple[int, int, int, int]]:
        """``[M, N, batch, K]`` of each problem, the size list a Tensile/GEKO config wants."""
        return [problem.size for problem in self.problems]


class Workload(BaseModel):
    """A de-duplicated workload and how it was obtained."""

    model_config = ConfigDict(frozen=True)

    problems: tuple[GemmProblem, ...]
    records_in: int
    """How many records went in."""
    warnings: tuple[str, ...] = ()

    @property
    def duplicates_merged(self) -> int:
        """Records folded into an earlier record of the same problem."""
        return self.records_in - len(self.problems)

    @property
    def call_count(self) -> int:
        """Total calls."""
        return sum(problem.call_count for problem in self.problems)

    def groups(self) -> list[GemmGroup]:
        """The problems grouped by GEMM type; see :func:`group_by_gemm_type`."""
        return group_by_gemm_type(self.problems)


_SOLUTION_FIELDS = ("solution_index", "solution_name", "kernel_name")


def aggregate_problems(problems: Iterable[GemmProblem]) -> Workload:
    """Fold identical problems into one, summing their call counts (input order kept)."""
    problems = require_items(problems, GemmProblem, "problems", "aggregate_problems")
    firsts: dict[tuple[Any, ...], GemmProblem] = {}
    counts: dict[tuple[Any, ...], int] = {}
    conflicts: set[tuple[Any, ...]] = set()
    # Parsers hand out the same object for repeated lines: compute each object's key once. The
    # object is kept with its key, so its id cannot be reused while the cache lives.
    keys: dict[int, tuple[GemmProblem, tuple[Any, ...]]] = {}
    records = 0
    for problem in problems:
        records += 1
        cached = keys.get(id(problem))
        if cached is not None and cached[0] is problem:
            key = cached[1]
        else:
            key = problem.identity()
            keys[id(problem)] = (problem, key)
        first = firsts.get(key)
        if first is None:
            firsts[key] = problem
            counts[key] = problem.call_count
            continue
        counts[key] += problem.call_count
        if (
            key not in conflicts
            and first is not problem
            and any(getattr(first, name) != getattr(problem, name) for name in _SOLUTION_FIELDS)
        ):
            conflicts.add(key)
    merged: list[GemmProblem] = []
    for key, first in firsts.items():
        update: dict[str, Any] = {}
        if counts[key] != first.call_count:
            update["call_count"] = counts[key]
        if key in conflicts:
            update.update(dict.fromkeys(_SOLUTION_FIELDS))
        merged.append(first.model_copy(update=update) if update else first)
    warnings: tuple[str, ...] = ()
    if conflicts:
        warnings = (f"{len(conflicts)} problem(s) ran with different solutions; their solution fields were cleared",)
    return Workload(problems=tuple(merged), records_in=records, warnings=warnings)


def deduplicate_problems(problems: Iterable[GemmProblem]) -> list[GemmProblem]:
    """The distinct problems with summed call counts; shorthand for ``aggregate_problems(…).problems``."""
    problems = require_items(problems, GemmProblem, "problems", "deduplicate_problems")
    return list(aggregate_problems(problems).problems)


class DeviceSplit(BaseModel):
    """A workload's GEMMs split by the device they were tuned for (:func:`split_by_device`)."""

    model_config = ConfigDict(frozen=True)

    served: tuple[GemmProblem, ...]
    """The GEMMs for the device (and those that name no device), in input order."""
    others: dict[str, int] = {}
    """Rows for another device: ``gfx942 with 80 CUs`` -> how many distinct GEMMs."""
    device: str = ""
    """The device asked about, as one says it."""
    cu_nums: tuple[int, ...] = ()
    """The CU counts the served rows name when the device's is not known and they name several."""
    devices: tuple[str, ...] = ()
    """With no device asked about: the devices whose rows were folded into one GEMM per shape."""

    def note(self) -> str | None:
        """One line saying which device rows were left out and why (and, the device's CU count
        unknown, that rows of several CU counts were kept); None when there is nothing to say."""
        parts: list[str] = []
        if self.others:
            counts = ", ".join(f"{count} for {label}" for label, count in self.others.items())
            total = sum(self.others.values())
            parts.append(f"{total} GEMM row(s) are tuned for another device ({counts}), not {self.device}: left out")
        if self.cu_nums:
            numbers = ", ".join(str(number) for number in self.cu_nums)
            parts.append(
                f"rows tuned for {len(self.cu_nums)} CU counts of {self.device} ({numbers}) are all kept, each its "
                "own GEMM: give the device's CU count to keep only its rows"
            )
        if self.devices:
            parts.append(
                f"rows tuned for {len(self.devices)} devices ({', '.join(self.devices)}) are folded into one GEMM "
                "per shape: name the device (its gfx and CU count) to keep only its rows"
            )
        return "; ".join(parts) or None


def split_by_device(problems: Iterable[GemmProblem], arch: str | None, cu_count: int | None = None) -> DeviceSplit:
    """The GEMMs a device ``arch`` with ``cu_count`` CUs (None: not known) runs, and how many rows are
    for another one (:meth:`GemmProblem.served_on`): AITER's tuned CSVs carry rows per ``gfx`` and
    ``cu_num``, and a library for one device serves only its own rows.

    With no ``arch`` (a command not asked about one device) the rows of every device are kept,
    one GEMM per shape (calls summed, :func:`aggregate_problems`), and the note says so."""
    problems = require_items(problems, GemmProblem, "problems", "split_by_device")
    require(arch, str, "arch", "split_by_device", optional=True)
    if arch is None:
        labels = list(dict.fromkeys(label for problem in problems if (label := problem.device_label()) is not None))
        if not labels:
            return DeviceSplit(served=tuple(problems), device="any device")
        folded = aggregate_problems(problem.without_device() for problem in problems).problems
        return DeviceSplit(served=folded, device="any device", devices=tuple(labels) if len(labels) > 1 else ())
    served: list[GemmProblem] = []
    others: dict[str, int] = {}
    for problem in problems:
        if problem.served_on(arch, cu_count):
            served.append(problem)
        else:
            label = problem.device_label() or "another device"
            others[label] = others.get(label, 0) + 1
    processor = arch.split(":", 1)[0].strip().lower()
    device = processor if cu_count is None else f"{processor} with {cu_count} CUs"
    cu_nums = tuple(dict.fromkeys(problem.cu_num for problem in served if problem.cu_num is not None))
    return DeviceSplit(served=tuple(served), others=others, device=device, cu_nums=cu_nums if len(cu_nums) > 1 else ())


def group_by_gemm_type(problems: Iterable[GemmProblem]) -> list[GemmGroup]:
    """Group problems by GEMM type (transposes, types, compute type), ordered by type name.

    Problems are not merged here; call :func:`aggregate_problems` first for distinct problems.
    When two different type keys share a name (e.g. ``c_f32_r`` and ``c_f32_fast_bf16_r`` compute
    on f32 data are both ``SSS``), each such group's name gets its compute type appended.
    """
    problems = require_items(problems, GemmProblem, "problems", "group_by_gemm_type")
    by_key: dict[tuple[str, ...], list[GemmProblem]] = {}
    for problem in problems:
        by_key.setdefault(problem.type_key, []).append(problem)
    names: dict[str, list[tuple[str, ...]]] = {}
    for key, members in by_key.items():
        names.setdefault(members[0].gemm_type, []).append(key)
    groups: list[GemmGroup] = []
    for name, keys in names.items():
        for key in keys:
            members = by_key[key]
            label = name if len(keys) == 1 else f"{name}[{members[0].compute_type}]"
            groups.append(GemmGroup(name=label, problems=tuple(members)))
    return sorted(groups, key=lambda group: group.name)


__all__ = [
    "DeviceSplit",
    "GemmGroup",
    "Workload",
    "aggregate_problems",
    "deduplicate_problems",
    "group_by_gemm_type",
    "split_by_device",
]

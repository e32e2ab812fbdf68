"""The individual steps of a logic-file merge (used by :mod:`tensilekit.merge.merge`).

Each function is one step of the algorithm described in :mod:`tensilekit.merge.merge`'s
docstring, with the AMD lines it reproduces. State is explicit: a :class:`Side` per input
(its kernels and table rows) and the pool of :class:`Kernel` objects of the output.

A :class:`Kernel` wraps a solution model and turns it into a raw dict only when a step needs
one (identity, TL rewrites), so kernels no step touches are neither copied nor re-validated;
the output reuses their models with only ``SolutionIndex`` updated.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from tensilekit.errors import Location, MergeError
from tensilekit.merge.identity import Compat, freeze, sanitize_solution
from tensilekit.merge.report import DuplicateKey, SizeTrimmed
from tensilekit.model.common import to_raw
from tensilekit.model.logic import Dialect, ExactLogicEntry, Layout, LogicFile, LogicSolution, ProblemType

Side_ = Literal["original", "incremental"]

_FIELD_NAMES = {info.alias or name: name for name, info in LogicSolution.model_fields.items()}


class Kernel:
    """One solution during a merge: where it comes from, its model, its raw dict on demand."""

    __slots__ = ("side", "file_position", "model", "changed", "_raw")

    def __init__(self, side: Side_, file_position: int, model: LogicSolution | None, raw: dict[str, Any] | None = None):
        self.side = side
        self.file_position = file_position
        self.model = model
        self.changed = False  # the raw dict differs from the model (TL rewrites)
        self._raw = raw

    @property
    def raw(self) -> dict[str, Any]:
        """The solution as a plain dict (built once from the model, then kept and possibly edited)."""
        if self._raw is None:
            assert self.model is not None
            self._raw = self.model.raw()
        return self._raw

    def snapshot(self) -> Mapping[str, Any]:
        """The raw dict for reading only, without keeping it (identities of untouched kernels)."""
        if self._raw is not None or self.model is None:
            return self.raw
        return self.model.raw()

    def get(self, key: str, default: Any = None) -> Any:
        """``raw.get(key, default)`` without building the raw dict when it does not exist yet."""
        if self._raw is not None or self.model is None:
            return self.raw.get(key, default)
        name = _FIELD_NAMES.get(key)
        if name is not None:
            return getattr(self.model, name) if name in self.model.model_fields_set else default
        return (self.model.__pydantic_extra__ or {}).get(key, default)

    @property
    def name(self) -> str | None:
        value = self.get("SolutionNameMin")
        return value if isinstance(value, str) else None

    @property
    def bucket(self) -> Hashable:
        """:func:`tensilekit.merge.identity.kernel_bucket` of this kernel."""
        custom = self.get("CustomKernelName")
        if custom:
            return ("custom", str(custom))
        return freeze((self.get("MacroTile0"), self.get("MacroTile1"), self.get("DepthU", -1)))

    def problem_type(self) -> Any:
        if self._raw is None and self.model is not None:
            return to_raw(self.model.problem_type)
        return self.raw.get("ProblemType")

    def pool_copy(self) -> Kernel:
        """``deepcopy(solution)`` as AMD's addKernel appends it (T:89-102)."""
        raw = copy.deepcopy(self._raw) if self.changed or self.model is None else None
        copied = Kernel(self.side, self.file_position, self.model, raw)
        copied.changed = self.changed
        return copied

    def output(self, position: int) -> LogicSolution:
        """The output solution at ``position`` (its ``SolutionIndex``).

        Unchanged kernels reuse the input model (a shallow copy: nested values are shared with
        the input, as they are never modified); rewritten ones are validated from the dict.
        """
        if not self.changed and self.model is not None:
            return self.model.model_copy(update={"solution_index": position})
        raw = dict(self.raw)
        raw["SolutionIndex"] = position
        return LogicSolution.model_validate(raw)


@dataclasses.dataclass
class Row:
    """One exact-logic row while it goes through the steps."""

    key: tuple[Any, ...]
    index: int
    efficiency: Any
    source_row: int
    key_rebuilt: bool = False  # trimmed or tagged: the key is a new list (it loses YAML aliases)


@dataclasses.dataclass
class Side:
    """One input's kernels and table rows (positions shift in step 5)."""

    name: Side_
    kernels: list[Kernel]
    rows: list[Row]
    header: dict[str, Any]
    path: str | None = None

    def location(self, path: str) -> Location:
        return Location(file=self.path, path=path)


def side_from(logic: LogicFile, name: Side_, path: str | None) -> Side:
    """The kernels and rows of one input, with every table index checked."""
    if logic.exact_logic is None:
        where = "ExactLogic" if logic.layout is Layout.DICT else "[7]"
        raise MergeError(f"the {name} file has no exact-logic table to merge", Location(file=path, path=where))
    rows = [
        Row(tuple(entry.size), entry.solution, entry.efficiency, number)
        for number, entry in enumerate(logic.exact_logic)
    ]
    count = len(logic.solutions)
    for row in rows:
        if not 0 <= row.index < count:
            raise MergeError(
                f"{name} table row {row.source_row} refers to solution {row.index}, but the file has {count} solutions",
                Location(file=path, path=f"[7][{row.source_row}][1][0]"),
            )
    kernels = [Kernel(name, position, model) for position, model in enumerate(logic.solutions)]
    return Side(name, kernels, rows, logic.problem_type.raw(), path)


# ---------------------------------------------------------------------------------------------
# step 0: tensilelite ProblemType waiving and check (TL:140-175)


def waive_problem_type(
    original: Side, incremental: Side, warnings: list[str], *, solution_problem_type_optional: bool = False
) -> list[str]:
    """Waive original header keys the incremental header lacks (header and kernels), then check
    the first incremental kernel whose ProblemType differs from the reduced header.

    ``solution_problem_type_optional`` (5.x merge.py, :mod:`tensilekit.merge.merge_versions`):
    kernels without a ProblemType are skipped on both sides instead of refused."""
    waived = [key for key in original.header if key not in incremental.header]
    for key in waived:
        original.header.pop(key)
    if waived:
        used = {row.index for row in original.rows}
        for kernel in original.kernels:
            if kernel.file_position not in used:
                continue  # dropped in step 5 whatever happens to it
            problem_type = kernel.get("ProblemType")
            if problem_type is None and solution_problem_type_optional:
                continue
            problem_type = kernel.raw.get("ProblemType")
            if not isinstance(problem_type, dict):
                raise MergeError(
                    f"original solution {kernel.file_position} has no ProblemType (tensilelite 7d9fb683's merge.py needs one; "
                    "5.x's reads the header's: --tensilelite-merge 5.x)",
                    original.location(f"[5][{kernel.file_position}].ProblemType"),
                )
            for key in waived:
                if key in problem_type:
                    problem_type.pop(key)
                    kernel.changed = True
                else:
                    warnings.append(f"ProblemType waiving: original solution {kernel.file_position} has no {key!r}")
    for kernel in incremental.kernels:
        problem_type = kernel.problem_type()
        where = incremental.location(f"[5][{kernel.file_position}].ProblemType")
        if problem_type is None and solution_problem_type_optional:
            continue
        if not isinstance(problem_type, dict):
            raise MergeError(
                f"incremental solution {kernel.file_position} has no ProblemType (tensilelite 7d9fb683's merge.py needs "
                "one; 5.x's reads the header's: --tensilelite-merge 5.x)",
                where,
            )
        if problem_type == original.header:
            continue
        mismatches = []
        for key, value in original.header.items():
            if key not in problem_type:
                raise MergeError(
                    f"incremental solution {kernel.file_position}'s ProblemType has no {key!r} "
                    "(the original header has it)",
                    where,
                )
            if value != problem_type[key]:
                mismatches.append(f"{key}: {value!r} != {problem_type[key]!r}")
        if mismatches:
            raise MergeError(
                f"ProblemType in the original header doesn't match incremental solution {kernel.file_position}: "
                + "; ".join(mismatches),
                where,
            )
        break  # TL examines only the first differing solution
    return waived


# ---------------------------------------------------------------------------------------------
# step 2: solution tags (T:191-266, 280-297)

TAG_ANY, TAG_ONE, TAG_NEG_ONE, TAG_ZERO = 0, 1, 2, 3
C_EQ_D, C_NEQ_D = 0, 1


class UnsupportedTag(ValueError):
    pass


def _scalar_tag(value: Any) -> int:
    # strToScalarValueTag (T:191-201): == comparisons, so False/0.0 mean "0" and True/1.0 mean "1".
    if value == "Any":
        return TAG_ANY
    if value == 1:
        return TAG_ONE
    if value == -1:
        return TAG_NEG_ONE
    if value == 0:
        return TAG_ZERO
    raise UnsupportedTag(value)


def solution_tag(kernel: Kernel | Mapping[str, Any], compat: Compat) -> tuple[int, ...]:
    """``getSolutionTag``: (MFMA/VALU, Alpha, Beta, C==D); tensilelite's has the MFMA part only."""
    mfma = 1 if (kernel.get("EnableMatrixInstruction", False) or kernel.get("MatrixInstruction", False)) else 0
    if compat is Compat.TENSILELITE:
        return (mfma,)  # TL:255-262 (spec §5 bug 8)
    return (
        mfma,
        _scalar_tag(kernel.get("AssertAlphaValue", "Any")),
        _scalar_tag(kernel.get("AssertBetaValue", "Any")),
        C_EQ_D if kernel.get("AssertCEqualsD", False) else C_NEQ_D,
    )


def tag_label(tag: Sequence[int]) -> str:
    """Human spelling of a solution tag: ``MFMA,Alpha=Any,Beta=1,C!=D``."""
    parts = ["MFMA" if tag[0] else "VALU"]
    names = ("Any", "1", "-1", "0")
    if len(tag) > 1:
        parts.append(f"Alpha={names[tag[1]]}")
    if len(tag) > 2:
        parts.append(f"Beta={names[tag[2]]}")
    if len(tag) > 3:
        parts.append("C=D" if tag[3] == C_EQ_D else "C!=D")
    return ",".join(parts)


def row_tags(side: Side, compat: Compat, *, strict: bool, warnings: list[str]) -> list[tuple[int, ...]]:
    """Solution tag of every row (``addSolutionTagToKeys``); empty when a tag cannot be formed.

    AMD computes tags even without ``--add_solution_tags`` (for a warning), so an unsupported
    ``AssertAlphaValue``/``AssertBetaValue`` aborts T either way. Here that is a
    :class:`MergeError` only in tag mode, and a warning otherwise.
    """
    tags: list[tuple[int, ...]] = []
    cache: dict[int, tuple[int, ...]] = {}
    for row in side.rows:
        tag = cache.get(row.index)
        if tag is None:
            kernel = side.kernels[row.index]
            try:
                tag = solution_tag(kernel, compat)
            except UnsupportedTag as error:
                message = (
                    f"{side.name} solution {kernel.file_position} has an unsupported "
                    f"AssertAlphaValue/AssertBetaValue {error.args[0]!r} (only 'Any', 1, -1, 0)"
                )
                if strict:
                    raise MergeError(message, side.location(f"[5][{kernel.file_position}]")) from None
                warnings.append(message + "; AMD's TensileMergeLibrary aborts on it")
                return []
            cache[row.index] = tag
        tags.append(tag)
    return tags


def compatible_tags(tag: tuple[int, ...]) -> list[tuple[int, ...]]:
    """``findFastestCompatibleSolution``'s relaxations: Alpha/Beta to Any, C==D to C!=D."""
    if len(tag) < 4:
        raise IndexError("tuple index out of range")  # what TL's one-element tags run into
    tags = [tag]
    if tag[1] != TAG_ANY:
        tags = tags + [(t[0], TAG_ANY) + t[2:] for t in tags]
    if tag[2] != TAG_ANY:
        tags = tags + [t[:2] + (TAG_ANY,) + t[3:] for t in tags]
    if tag[3] != C_NEQ_D:
        tags = tags + [t[:3] + (C_NEQ_D,) + t[4:] for t in tags]
    return tags


def fastest_compatible(orig_dict: Mapping[tuple[Any, ...], tuple[int, Any]], key: tuple[Any, ...]) -> Any:
    """Best original efficiency among compatible tags of the same size; starts at 0 (T:255-266)."""
    best: Any = 0
    for tag in compatible_tags(key[0]):
        found = orig_dict.get((tag,) + key[1:])
        if found is not None:
            best = max(best, found[1])
    return best


def untagged(key: tuple[Any, ...], tagged: bool) -> tuple[list[Any], str | None]:
    """The plain size and the tag label of a (possibly tagged) key."""
    if tagged:
        return list(key[1:]), tag_label(key[0])
    return list(key), None


# ---------------------------------------------------------------------------------------------
# steps 3-5


def trim(side: Side, events: list[SizeTrimmed], tagged: bool) -> None:
    """``fixSizeInconsistencies`` (T:59-75): membership is tested against the table's *current* keys."""
    present = Counter(row.key for row in side.rows)
    kept: list[Row] = []
    for row in side.rows:
        if len(row.key) >= 8:
            candidate = row.key[:-4]
            before, _ = untagged(row.key, tagged)
            after, _ = untagged(candidate, tagged)
            if present[candidate] > 0:
                events.append(SizeTrimmed(side=side.name, key=before, trimmed_to=after, dropped=True))
                continue
            present[row.key] -= 1
            present[candidate] += 1
            row = dataclasses.replace(row, key=candidate, key_rebuilt=True)
            events.append(SizeTrimmed(side=side.name, key=before, trimmed_to=after, dropped=False))
        kept.append(row)
    side.rows = kept


def sanitize(side: Side) -> int:
    """TU/TL ``sanitizeSolutions`` on the kernels some row uses; returns how many changed."""
    used = {row.index for row in side.rows}
    count = 0
    for position, kernel in enumerate(side.kernels):
        if position in used and kernel.get("StaggerU") == 0 and sanitize_solution(kernel.raw):
            kernel.changed = True
            count += 1
    return count


def drop_solution_problem_types(side: Side) -> int:
    """5.x ``sanitizeSolutions``: ``del sol["ProblemType"]`` on the kernels some row uses (the
    others are dropped in step 5); returns how many had one."""
    used = {row.index for row in side.rows}
    count = 0
    for position, kernel in enumerate(side.kernels):
        if position in used and kernel.get("ProblemType") is not None:
            del kernel.raw["ProblemType"]
            kernel.changed = True
            count += 1
    return count


def drop_unused(kernels: list[Kernel], rows: list[Row]) -> tuple[list[int], list[int]]:
    """``removeUnusedKernels`` (T:104-132), stably: returns (kept, removed) old positions.

    ``SolutionIndex`` is not rewritten here: it is set from the final position on output.
    """
    used = {row.index for row in rows}
    kept = [position for position in range(len(kernels)) if position in used]
    removed = [position for position in range(len(kernels)) if position not in used]
    new_position = {old: new for new, old in enumerate(kept)}
    kernels[:] = [kernels[old] for old in kept]
    for row in rows:
        row.index = new_position[row.index]
    return kept, removed


def duplicates(side: Side, tagged: bool) -> list[DuplicateKey]:
    """Keys occurring more than once in one table, with their rows."""
    rows_by_key: dict[tuple[Any, ...], list[int]] = {}
    for number, row in enumerate(side.rows):
        rows_by_key.setdefault(row.key, []).append(number)
    found = []
    for key, numbers in rows_by_key.items():
        if len(numbers) > 1:
            plain, _ = untagged(key, tagged)
            found.append(DuplicateKey(side=side.name, key=plain, rows=numbers))
    return found


# ---------------------------------------------------------------------------------------------
# headers and output


def header_warnings(original: LogicFile, incremental: LogicFile, compat: Compat) -> list[str]:
    """What the original's header (which the output keeps) disagrees with in the incremental's."""
    warnings = []
    if original.dialect is not incremental.dialect:
        warnings.append(
            f"dialects differ: original is {original.dialect.value}, incremental {incremental.dialect.value}"
        )
    if compat is Compat.TENSILE and original.dialect is Dialect.TENSILELITE:
        warnings.append(
            "tensile (name-based) kernel identity on tensilelite logic ignores tensilelite-only parameters "
            "and can fold different kernels together (spec §2); consider compat=tensilelite"
        )
    if original.architecture_name != incremental.architecture_name:
        warnings.append(
            f"architectures differ: original {original.architecture_name}, incremental "
            f"{incremental.architecture_name}; the output keeps the original's"
        )
    elif original.architecture_cu_count != incremental.architecture_cu_count:
        warnings.append(
            f"CU counts differ: original {original.architecture_cu_count}, incremental "
            f"{incremental.architecture_cu_count}"
        )
    if original.version != incremental.version:
        warnings.append(
            f"MinimumRequiredVersion differs: original {original.version}, incremental {incremental.version}; "
            "the output keeps the original's"
        )
    if original.performance_metric != incremental.performance_metric:
        warnings.append(
            f"PerfMetric differs: original {original.performance_metric}, incremental "
            f"{incremental.performance_metric}; the output keeps the original's"
        )
    if original.tile_selection:
        warnings.append("the original has TileSelectionIndices; AMD's merge leaves them unchanged (not remapped)")
    return warnings


_NOT_COPIED = frozenset({"solutions", "exact_logic", "problem_type"})


def build_output(
    original: LogicFile, pool: Sequence[Kernel], table: Sequence[Row], header: dict[str, Any] | None
) -> LogicFile:
    """The original file with solutions and table replaced (and, TL, the waived header).

    Header values are deep copies; unchanged kernels share nested values with the inputs (see
    :meth:`Kernel.output`).
    """
    solutions = [kernel.output(position) for position, kernel in enumerate(pool)]
    rows = [ExactLogicEntry(size=list(row.key), solution=row.index, efficiency=row.efficiency) for row in table]
    problem_type = (
        ProblemType.model_validate(header) if header is not None else original.problem_type.model_copy(deep=True)
    )
    update: dict[str, Any] = {"solutions": solutions, "exact_logic": rows, "problem_type": problem_type}
    for field in original.model_fields_set - _NOT_COPIED:
        update[field] = copy.deepcopy(getattr(original, field))
    merged = original.model_copy(update=update)
    merged._source_text = None  # AMD's merge tools re-emit every file: no hand layout survives a merge
    return merged


__all__ = [
    "Kernel",
    "Row",
    "Side",
    "UnsupportedTag",
    "build_output",
    "compatible_tags",
    "drop_solution_problem_types",
    "drop_unused",
    "duplicates",
    "fastest_compatible",
    "header_warnings",
    "row_tags",
    "sanitize",
    "side_from",
    "solution_tag",
    "tag_label",
    "trim",
    "untagged",
    "waive_problem_type",
]

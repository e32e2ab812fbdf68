"""Merge an incremental logic file into an original one, exactly as AMD's merge scripts do.

Reproduces ROCm/Tensile ``Tensile/TensileMergeLibrary.py`` ("T", rocBLAS pin 09ec347, lines
cited as T:n) and ROCm/hipBLASLt ``tensilelite/Tensile/Utilities/merge.py`` ("TL", 7d9fb683);
the differences between them are selected by :attr:`MergePolicy.compat`. Outputs are
byte-identical to the AMD tools' when dumped with ``AMD_LOGIC_STYLE`` (checked on every corpus
case that has an ``expected/`` directory). ``shared/spec/merge.md`` is the rule book.

Algorithm (per file pair; state = the two solution lists and tables, as plain dicts/lists)
-------------------------------------------------------------------------------------------
0. TL only, ``compareProblemType`` (TL:140-175): original header ProblemType keys absent from
   the incremental header are *waived* (removed from the original header and from every
   original solution's ProblemType); then the first incremental solution whose ProblemType
   differs from the reduced header must agree on every header key, else :class:`MergeError`.
1. Re-index (T:397-398): ``SolutionIndex = position`` on both sides. Table entries refer to
   list positions from here on; the files' own SolutionIndex values are ignored.
2. Tags (T:280-297): each key is prefixed with a solution tag (T: MFMA/VALU, Alpha, Beta, C==D;
   TL: MFMA/VALU only). With ``add_solution_tags`` the tagged keys are used; otherwise only
   AMD's "duplicate sizes" warning is computed from them.
3. Trim (``trim``, default on; T:59-75): keys of length >= 8 lose their last four elements; a
   trimmed key already present anywhere in the (current) table drops the entry instead.
4. TL only, ``sanitizeSolutions``: StaggerU == 0 forces StaggerUMapping, StaggerUStride and
   _staggerStrideShift to 0, on both sides (so untouched original kernels change too).
5. Drop unused kernels on both sides, stably, renumbering (T:104-132).
6. Merge loop (T:308-334): ``origDict`` maps each original key to its *last* row. For every
   incremental row in order: an existing key is overwritten iff ``incEff > origEff`` (strict,
   against the original's value, never an earlier overwrite) or the policy is Forced; a new key
   is appended (with tags: unless a compatible original entry is faster, T:237-266). The kernel
   written is the *first* pool kernel equal to the incremental one (kernel identity, see
   :mod:`tensilekit.merge.identity`), else a copy appended to the pool. The efficiency written
   is the incremental value verbatim, or ``0.0`` with ``no_eff`` (TL:357).
7. Strip tags, drop kernels now unused, renumber (T:343-344): surviving original kernels first,
   in original order, then new kernels in order of first use.
8. The output is the *original* file with only solutions and table replaced (and, TL, the waived
   header). Nothing of the incremental header survives.

Deviations, all reported rather than silent: AMD's crashes (bad table index, ProblemType
mismatch, unsupported AssertAlphaValue with tags, TL tags on a new size) raise
:class:`MergeError`; the default policy's "arcturus" rule needs the incremental *path*, so
:func:`merge_logic` takes it as a keyword (without it the default is Forced, as for any path
without "arcturus"). Inputs are never modified; the returned model shares no mutable state
with them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tensilekit.errors import Location, MergeError
from tensilekit.merge.aliases import alias_pairs, merged_alias_pairs, with_alias_pairs
from tensilekit.merge.efficiency import compare_units, guess_unit
from tensilekit.merge.identity import (
    Compat,
    IdentityFunction,
    IdentityIndex,
    KernelIdentity,
    identity_function,
    identity_of,
    kernel_bucket,
    sanitize_solution,
)
from tensilekit.merge.report import (
    AmdStatistics,
    DuplicateKey,
    FileMergeReport,
    KernelRef,
    MergeReport,
    ResolvedPolicy,
    SizeAdded,
    SizeKept,
    SizeRejected,
    SizeReplaced,
    SizeTrimmed,
)
from tensilekit.model.logic import Dialect, ExactLogicEntry, Layout, LogicFile, LogicSolution, ProblemType

Side = Literal["original", "incremental"]


class MergePolicy(BaseModel):
    """How to merge: AMD's command-line options plus tensilekit's explicit extras.

    Attributes:
        force_merge: True = Forced (existing sizes always take the incremental entry), False =
            Winner (only when strictly faster), None = AMD's default: Winner iff ``"arcturus"``
            occurs in the incremental file's path.
        trim: shorten keys of length >= 8 to ``[M, N, B, K]`` (AMD default; ``--notrim`` = False).
        no_eff: write efficiency ``0.0`` for entries taken from the incremental file (TL ``--no_eff``).
        add_solution_tags: AMD's ``--add_solution_tags`` (tagged size keys).
        compat: which tool's kernel identity and side rules to reproduce; None = by the original
            file's dialect (Tensile files -> ``tensile``, tensilelite files -> ``tensilelite``).
        add_new: directory merges copy incremental files without an original to the output
            (AMD drops them silently).
        latch_default: with ``force_merge=None`` the first file's default decides the policy for
            the whole run, as AMD's scripts do (T:384). False decides per file.
        problem_type_check: tensilelite's ProblemType waiving and check (step 0). None = on for
            compat ``tensilelite`` only; ``compat=tensilelite, problem_type_check=False``
            reproduces ROCm/Tensile's older ``Tensile/Utilities/merge.py`` (TU).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    force_merge: bool | None = None
    trim: bool = True
    no_eff: bool = False
    add_solution_tags: bool = False
    compat: Compat | None = None
    add_new: bool = False
    latch_default: bool = True
    problem_type_check: bool | None = None


def default_force_merge(incremental_path: str | None) -> bool:
    """``defaultForceMergePolicy`` (T:137-143): Winner iff "arcturus" is anywhere in the path."""
    return "arcturus" not in (incremental_path or "")


def resolve_force_merge(
    policy: MergePolicy, incremental_path: str | None, latched: tuple[bool, str] | None = None
) -> tuple[bool, str]:
    """The Forced/Winner decision for one file and the reason, honouring an earlier latch."""
    if policy.force_merge is not None:
        return policy.force_merge, f"force_merge={str(policy.force_merge).lower()} requested"
    if latched is not None and policy.latch_default:
        value, first = latched
        return value, f"default latched from the first file merged ({first}), as AMD's scripts do"
    value = default_force_merge(incremental_path)
    if value:
        return True, "default: no 'arcturus' in the incremental path"
    return False, f"default: 'arcturus' in the incremental path {incremental_path!r}"


def merge_logic(
    original: LogicFile,
    incremental: LogicFile,
    policy: MergePolicy | None = None,
    *,
    incremental_path: str | None = None,
    name: str | None = None,
) -> tuple[LogicFile, MergeReport]:
    """Merge ``incremental`` into ``original``; returns the merged file and what happened.

    Pure: neither input is modified. ``incremental_path`` only feeds the default Forced/Winner
    decision (see :class:`MergePolicy`).

    Raises:
        MergeError: the files cannot be merged (AMD's tools would crash or exit).
    """
    chosen = policy or MergePolicy()
    force, reason = resolve_force_merge(chosen, incremental_path)
    merged, file_report = merge_resolved(
        original,
        incremental,
        chosen,
        force_merge=force,
        force_reason=reason,
        name=name or "<logic>",
        incremental_path=incremental_path,
    )
    report = MergeReport(policy=chosen.model_dump(mode="json"), files=[file_report])
    return merged, report


# ---------------------------------------------------------------------------------------------
# the algorithm


@dataclasses.dataclass
class _Row:
    key: tuple[Any, ...]
    index: int
    efficiency: Any
    source_row: int
    key_rebuilt: bool = False  # trimmed or tagged: the key is a new list (it loses YAML aliases)


@dataclasses.dataclass
class _Side:
    """One side's solutions and table while they go through steps 1-5."""

    name: Side
    solutions: list[dict[str, Any]]
    rows: list[_Row]
    header: dict[str, Any]
    file_positions: list[int]  # current solution position -> position in the file
    path: str | None = None

    def location(self, path: str) -> Location:
        return Location(file=self.path, path=path)


_TAG_ANY, _TAG_ONE, _TAG_NEG_ONE, _TAG_ZERO = 0, 1, 2, 3
_C_EQ_D, _C_NEQ_D = 0, 1


class _UnsupportedTag(ValueError):
    pass


def _scalar_tag(value: Any) -> int:
    # strToScalarValueTag (T:191-201): == comparisons, so False/0.0 mean "0" and True/1.0 mean "1".
    if value == "Any":
        return _TAG_ANY
    if value == 1:
        return _TAG_ONE
    if value == -1:
        return _TAG_NEG_ONE
    if value == 0:
        return _TAG_ZERO
    raise _UnsupportedTag(value)


def _solution_tag(solution: Mapping[str, Any], compat: Compat) -> tuple[int, ...]:
    mfma = 1 if (solution.get("EnableMatrixInstruction", False) or solution.get("MatrixInstruction", False)) else 0
    if compat is Compat.TENSILELITE:
        return (mfma,)  # TL:255-262 returns only the MFMA tag (spec §5 bug 8)
    return (
        mfma,
        _scalar_tag(solution.get("AssertAlphaValue", "Any")),
        _scalar_tag(solution.get("AssertBetaValue", "Any")),
        _C_EQ_D if solution.get("AssertCEqualsD", False) else _C_NEQ_D,
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
        parts.append("C=D" if tag[3] == _C_EQ_D else "C!=D")
    return ",".join(parts)


def _compatible_tags(tag: tuple[int, ...]) -> list[tuple[int, ...]]:
    # findFastestCompatibleSolution (T:237-266): relax Alpha/Beta to Any, C==D to C!=D.
    if len(tag) < 4:
        raise IndexError("tuple index out of range")
    tags = [tag]
    if tag[1] != _TAG_ANY:
        tags = tags + [(t[0], _TAG_ANY) + t[2:] for t in tags]
    if tag[2] != _TAG_ANY:
        tags = tags + [t[:2] + (_TAG_ANY,) + t[3:] for t in tags]
    if tag[3] != _C_NEQ_D:
        tags = tags + [t[:3] + (_C_NEQ_D,) + t[4:] for t in tags]
    return tags


def _fastest_compatible(orig_dict: Mapping[tuple[Any, ...], tuple[int, Any]], key: tuple[Any, ...]) -> Any:
    best: Any = 0
    for tag in _compatible_tags(key[0]):
        found = orig_dict.get((tag,) + key[1:])
        if found is not None:
            best = max(best, found[1])
    return best


def _untagged(key: tuple[Any, ...], tagged: bool) -> tuple[list[Any], str | None]:
    if tagged:
        return list(key[1:]), tag_label(key[0])
    return list(key), None


def _side_from(logic: LogicFile, name: Side, path: str | None) -> _Side:
    if logic.exact_logic is None:
        where = "ExactLogic" if logic.layout is Layout.DICT else "[7]"
        raise MergeError(f"the {name} file has no exact-logic table to merge", Location(file=path, path=where))
    solutions = [solution.raw() for solution in logic.solutions]
    rows = [_Row(tuple(entry.size), entry.solution, entry.efficiency, number) for number, entry in enumerate(logic.exact_logic)]
    for row in rows:
        if not 0 <= row.index < len(solutions):
            raise MergeError(
                f"{name} table row {row.source_row} refers to solution {row.index}, "
                f"but the file has {len(solutions)} solutions",
                Location(file=path, path=f"[7][{row.source_row}][1][0]"),
            )
    return _Side(name, solutions, rows, logic.problem_type.raw(), list(range(len(solutions))), path)


def _waive_problem_type(original: _Side, incremental: _Side, warnings: list[str]) -> list[str]:
    """TL ``compareProblemType``: waive original header keys the incremental lacks, then check."""
    waived = [key for key in original.header if key not in incremental.header]
    for key in waived:
        original.header.pop(key)
    if waived:
        for number, solution in enumerate(original.solutions):
            problem_type = solution.get("ProblemType")
            if not isinstance(problem_type, dict):
                raise MergeError(
                    f"original solution {number} has no ProblemType (tensilelite merge needs one)",
                    original.location(f"[5][{number}].ProblemType"),
                )
            for key in waived:
                if key in problem_type:
                    problem_type.pop(key)
                else:
                    warnings.append(f"ProblemType waiving: original solution {number} has no {key!r}")
    for number, solution in enumerate(incremental.solutions):
        problem_type = solution.get("ProblemType")
        if not isinstance(problem_type, dict):
            raise MergeError(
                f"incremental solution {number} has no ProblemType (tensilelite merge needs one)",
                incremental.location(f"[5][{number}].ProblemType"),
            )
        if problem_type == original.header:
            continue
        mismatches = []
        for key, value in original.header.items():
            if key not in problem_type:
                raise MergeError(
                    f"incremental solution {number}'s ProblemType has no {key!r} (original header has it)",
                    incremental.location(f"[5][{number}].ProblemType"),
                )
            if value != problem_type[key]:
                mismatches.append(f"{key}: {value!r} != {problem_type[key]!r}")
        if mismatches:
            raise MergeError(
                f"ProblemType in the original header doesn't match incremental solution {number}: "
                + "; ".join(mismatches),
                incremental.location(f"[5][{number}].ProblemType"),
            )
        break  # TL examines only the first differing solution
    return waived


def _trim(side: _Side, events: list[SizeTrimmed], tagged: bool) -> None:
    """``fixSizeInconsistencies``: membership is tested against the table's *current* keys."""
    present = Counter(row.key for row in side.rows)
    kept: list[_Row] = []
    for row in side.rows:
        if len(row.key) >= 8:
            candidate = row.key[:-4]
            before, _ = _untagged(row.key, tagged)
            after, _ = _untagged(candidate, tagged)
            if present[candidate] > 0:
                events.append(SizeTrimmed(side=side.name, key=before, trimmed_to=after, dropped=True))
                continue
            present[row.key] -= 1
            present[candidate] += 1
            row = dataclasses.replace(row, key=candidate, key_rebuilt=True)
            events.append(SizeTrimmed(side=side.name, key=before, trimmed_to=after, dropped=False))
        kept.append(row)
    side.rows = kept


def _drop_unused(solutions: list[dict[str, Any]], rows: list[_Row]) -> tuple[list[int], list[int]]:
    """``removeUnusedKernels``: returns (kept old positions, removed old positions); renumbers."""
    used = {row.index for row in rows}
    kept = [position for position in range(len(solutions)) if position in used]
    removed = [position for position in range(len(solutions)) if position not in used]
    new_position = {old: new for new, old in enumerate(kept)}
    survivors = [solutions[old] for old in kept]
    for new, solution in enumerate(survivors):
        solution["SolutionIndex"] = new
    solutions[:] = survivors
    for row in rows:
        row.index = new_position[row.index]
    return kept, removed


def _duplicates(side: _Side, tagged: bool) -> list[DuplicateKey]:
    rows_by_key: dict[tuple[Any, ...], list[int]] = {}
    for number, row in enumerate(side.rows):
        rows_by_key.setdefault(row.key, []).append(number)
    found = []
    for key, numbers in rows_by_key.items():
        if len(numbers) > 1:
            plain, _ = _untagged(key, tagged)
            found.append(DuplicateKey(side=side.name, key=plain, rows=numbers))
    return found


def _name_of(solution: Mapping[str, Any]) -> str | None:
    value = solution.get("SolutionNameMin")
    return value if isinstance(value, str) else None


@dataclasses.dataclass
class _PoolEntry:
    side: Side
    file_position: int


def merge_resolved(
    original: LogicFile,
    incremental: LogicFile,
    policy: MergePolicy,
    *,
    force_merge: bool,
    force_reason: str,
    name: str = "<logic>",
    original_path: str | None = None,
    incremental_path: str | None = None,
) -> tuple[LogicFile, FileMergeReport]:
    """Merge one pair with the Forced/Winner decision already made (see :func:`merge_logic`)."""
    warnings: list[str] = []
    if policy.compat is not None:
        compat, compat_reason = policy.compat, "requested"
    else:
        compat = Compat.for_dialect(original.dialect)
        compat_reason = f"default for a {original.dialect.value}-dialect original"
    tagged = policy.add_solution_tags
    resolved = ResolvedPolicy(
        force_merge=force_merge,
        force_merge_reason=force_reason,
        compat=compat,
        compat_reason=compat_reason,
        trim=policy.trim,
        no_eff=policy.no_eff,
        add_solution_tags=tagged,
    )
    _header_warnings(original, incremental, compat, warnings)

    orig = _side_from(original, "original", original_path)
    inc = _side_from(incremental, "incremental", incremental_path)
    original_sizes, incremental_sizes = len(orig.rows), len(inc.rows)
    original_kernels, incremental_kernels = len(orig.solutions), len(inc.solutions)

    waived: list[str] = []
    header_changed = False
    check_problem_type = policy.problem_type_check
    if check_problem_type is None:
        check_problem_type = compat is Compat.TENSILELITE
    if check_problem_type:
        waived = _waive_problem_type(orig, inc, warnings)
        header_changed = bool(waived)

    for side in (orig, inc):  # step 1
        for position, solution in enumerate(side.solutions):
            solution["SolutionIndex"] = position

    tag_counts = [0, 0]  # step 2
    for number, side in enumerate((orig, inc)):
        tags = _tags_for(side, compat, strict=tagged, warnings=warnings)
        if tagged:
            for row, tag in zip(side.rows, tags):
                row.key = (tag,) + row.key
        elif tags:
            tag_counts[number] = len({(tag,) + row.key for row, tag in zip(side.rows, tags)}) - len(
                {row.key for row in side.rows}
            )
    for count, side_name in zip(tag_counts, ("original", "incremental")):
        if count:
            warnings.append(
                f"{count} duplicate size(s) in the {side_name} table differ only by solution tag; "
                "they may not be handled correctly without --add-solution-tags"
            )

    trimmed: list[SizeTrimmed] = []
    if policy.trim:  # step 3
        _trim(orig, trimmed, tagged)
        _trim(inc, trimmed, tagged)

    sanitized = sanitized_incremental = 0
    if compat is Compat.TENSILELITE:  # step 4
        sanitized = sum(sanitize_solution(solution) for solution in orig.solutions)
        sanitized_incremental = sum(sanitize_solution(solution) for solution in inc.solutions)

    kept_orig, unused_orig = _drop_unused(orig.solutions, orig.rows)  # step 5
    orig.file_positions = kept_orig
    kept_inc, unused_inc = _drop_unused(inc.solutions, inc.rows)
    inc.file_positions = kept_inc

    duplicates = _duplicates(orig, tagged) + _duplicates(inc, tagged)
    stale_rows = sorted(number for entry in duplicates if entry.side == "original" for number in entry.rows[:-1])
    if stale_rows:
        warnings.append(
            f"{len(stale_rows)} original row(s) are shadowed by a later duplicate key and can never be "
            "updated by a merge (AMD keeps only the last occurrence in origDict)"
        )

    # step 6
    original_identity = identity_function(compat, orig.header)
    incremental_identity = identity_function(compat, inc.header)
    pool: list[dict[str, Any]] = list(orig.solutions)
    origins = [_PoolEntry("original", position) for position in orig.file_positions]
    index = IdentityIndex(
        pool, original_identity, side="original", file=orig.path, file_positions=list(orig.file_positions)
    )
    incremental_ids: dict[int, KernelIdentity] = {}
    table = [dataclasses.replace(row) for row in orig.rows]
    orig_dict: dict[tuple[Any, ...], tuple[int, Any]] = {row.key: (j, row.efficiency) for j, row in enumerate(orig.rows)}
    replaced: list[tuple[int, int, int, Any, Any, Any, Literal["faster", "forced"]]] = []
    kept_sizes: list[SizeKept] = []
    added: list[tuple[int, int]] = []  # (table row, pool index)
    rejected: list[SizeRejected] = []
    reused = 0

    def add_kernel(inc_position: int) -> int:
        nonlocal reused
        solution = inc.solutions[inc_position]
        key = incremental_ids.get(inc_position)
        if key is None:
            key = identity_of(
                incremental_identity, solution, side="incremental",
                position=inc.file_positions[inc_position], file=inc.path,
            )
            incremental_ids[inc_position] = key
        bucket = kernel_bucket(solution)
        found = index.find(key, bucket)
        if found is not None:
            reused += 1
            return found
        copied = copy.deepcopy(solution)
        copied["SolutionIndex"] = len(pool)
        origins.append(_PoolEntry("incremental", inc.file_positions[inc_position]))
        return index.append(copied, key, bucket)

    for row in inc.rows:
        stored = 0.0 if policy.no_eff else row.efficiency
        existing = orig_dict.get(row.key)
        if existing is not None:
            j, orig_eff = existing
            faster = row.efficiency > orig_eff
            if faster or force_merge:
                # old = the original row (each duplicate incremental key competes against it)
                old_index, old_eff = orig.rows[j].index, orig.rows[j].efficiency
                new_index = add_kernel(row.index)
                table[j].index, table[j].efficiency = new_index, stored
                replaced.append((j, old_index, new_index, old_eff, row.efficiency, stored, "faster" if faster else "forced"))
            else:
                plain, label = _untagged(row.key, tagged)
                kept_sizes.append(
                    SizeKept(key=plain, tag=label, original_efficiency=orig_eff, incremental_efficiency=row.efficiency,
                             tie=row.efficiency == orig_eff)
                )
            continue
        if tagged:
            try:
                best = _fastest_compatible(orig_dict, row.key)
            except IndexError:
                raise MergeError(
                    "tensilelite --add-solution-tags cannot handle a size the original lacks "
                    f"({list(row.key[1:])}): hipBLASLt's merge.py raises IndexError here (its tags "
                    "carry only MFMA/VALU); use compat=tensile or drop --add-solution-tags",
                    inc.location(f"[7][{row.source_row}]"),
                ) from None
            if best > row.efficiency:
                plain, label = _untagged(row.key, tagged)
                rejected.append(SizeRejected(key=plain, tag=label, incremental_efficiency=row.efficiency,
                                             best_compatible_efficiency=best))
                continue
        new_index = add_kernel(row.index)
        table.append(dataclasses.replace(row, index=new_index, efficiency=stored))
        added.append((len(table) - 1, new_index))

    pool_before = list(pool)
    sizes_replaced = []
    last_replacement = {entry[0]: number for number, entry in enumerate(replaced)}
    for number, (j, old_index, new_index, old_eff, inc_eff, stored, why) in enumerate(replaced):
        plain, label = _untagged(table[j].key, tagged)
        changed = old_index != new_index and index.identity_at(old_index) != index.identity_at(new_index)
        sizes_replaced.append(
            SizeReplaced(
                key=plain,
                tag=label,
                row=j,
                reason=why,
                old_kernel=_describe(pool_before, origins, old_index),
                new_kernel=_describe(pool_before, origins, new_index),
                old_efficiency=old_eff,
                new_efficiency=inc_eff,
                written_efficiency=stored,
                kernel_changed=changed,
                superseded=last_replacement[j] != number,
            )
        )
    sizes_added = []
    for row_number, pool_index in added:
        plain, label = _untagged(table[row_number].key, tagged)
        sizes_added.append(
            SizeAdded(key=plain, tag=label, row=row_number, kernel=_describe(pool_before, origins, pool_index),
                      efficiency=table[row_number].efficiency)
        )

    if tagged:  # step 7
        for row in table:
            row.key = row.key[1:]
    pool_size_before_sweep = len(pool)
    kept_pool, removed_pool = _drop_unused(pool, table)
    kernels_added = [
        KernelRef(index=new, name=_name_of(pool[new]), side="output")
        for new, old in enumerate(kept_pool)
        if origins[old].side == "incremental"
    ]
    removed_positions = sorted(
        unused_orig + [origins[old].file_position for old in removed_pool if origins[old].side == "original"]
    )
    removed_refs = [
        KernelRef(index=position, name=original.solutions[position].solution_name_min, side="original")
        for position in removed_positions
    ]
    if sanitized:
        warnings.append(f"tensilelite StaggerU sanitising rewrote {sanitized} original kernel(s)")

    merged = _build_output(original, pool, table, orig.header if header_changed else None)
    merged._source_style = with_alias_pairs(
        getattr(original, "_source_style", None) or getattr(incremental, "_source_style", None),
        merged_alias_pairs(
            alias_pairs(original),
            alias_pairs(incremental),
            original_solutions={origins[old].file_position: new for new, old in enumerate(kept_pool)
                                if origins[old].side == "original"},
            incremental_solutions={origins[old].file_position: new for new, old in enumerate(kept_pool)
                                   if origins[old].side == "incremental"},
            original_rows={row.source_row: number for number, row in enumerate(table[: len(orig.rows)])
                           if not (row.key_rebuilt or tagged)},
            incremental_rows={row.source_row: number for number, row in enumerate(table[len(orig.rows):],
                                                                                     start=len(orig.rows))
                              if not (row.key_rebuilt or tagged)},
        ),
    )
    units = compare_units(
        guess_unit([entry.efficiency for entry in original.table], original.performance_metric),
        guess_unit([entry.efficiency for entry in incremental.table], incremental.performance_metric),
    )
    if units.message:
        warnings.append(units.message)
    if not force_merge and units.original.unit.value == "none" and units.incremental.unit.value == "none":
        warnings.append("every efficiency is 0: the Winner policy can never replace an existing size")

    report = FileMergeReport(
        name=name,
        original_path=original_path,
        incremental_path=incremental_path,
        policy=resolved,
        original_sizes=original_sizes,
        incremental_sizes=incremental_sizes,
        output_sizes=len(table),
        original_kernels=original_kernels,
        incremental_kernels=incremental_kernels,
        output_kernels=len(pool),
        sizes_replaced=sizes_replaced,
        sizes_kept=kept_sizes,
        sizes_added=sizes_added,
        sizes_rejected=rejected,
        sizes_trimmed=trimmed,
        kernels_added=kernels_added,
        kernels_reused=reused,
        kernels_removed=removed_refs,
        unused_original_kernels=len(unused_orig),
        unused_incremental_kernels=len(unused_inc),
        duplicate_keys=duplicates,
        stale_duplicate_rows=stale_rows,
        tag_duplicates_original=tag_counts[0],
        tag_duplicates_incremental=tag_counts[1],
        efficiency=units,
        problem_type_waived=waived,
        sanitized_kernels=sanitized,
        sanitized_incremental_kernels=sanitized_incremental,
        amd_statistics=AmdStatistics(
            sizes_added=len(table) - len(orig.rows),
            kernels_added=pool_size_before_sweep - len(orig.solutions),
            kernels_removed=len(removed_pool) + len(unused_orig),
        ),
        warnings=warnings,
    )
    return merged, report


def _describe(pool: Sequence[Mapping[str, Any]], origins: Sequence[_PoolEntry], pool_index: int) -> KernelRef:
    origin = origins[pool_index]
    return KernelRef(index=origin.file_position, name=_name_of(pool[pool_index]), side=origin.side)


def _tags_for(side: _Side, compat: Compat, *, strict: bool, warnings: list[str]) -> list[tuple[int, ...]]:
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
            try:
                tag = _solution_tag(side.solutions[row.index], compat)
            except _UnsupportedTag as error:
                message = (
                    f"{side.name} solution {side.file_positions[row.index]} has an unsupported "
                    f"AssertAlphaValue/AssertBetaValue {error.args[0]!r} (only 'Any', 1, -1, 0)"
                )
                if strict:
                    raise MergeError(message, side.location(f"[5][{side.file_positions[row.index]}]")) from None
                warnings.append(message + "; AMD's TensileMergeLibrary aborts on it")
                return []
            cache[row.index] = tag
        tags.append(tag)
    return tags


def _header_warnings(original: LogicFile, incremental: LogicFile, compat: Compat, warnings: list[str]) -> None:
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


_COPIED_FIELDS_EXCLUDED = frozenset({"solutions", "exact_logic", "problem_type"})


def _build_output(
    original: LogicFile, pool: list[dict[str, Any]], table: list[_Row], header: dict[str, Any] | None
) -> LogicFile:
    """The original file with solutions and table replaced; no mutable state shared with it."""
    solutions = [LogicSolution.model_validate(solution) for solution in pool]
    rows = [ExactLogicEntry(size=list(row.key), solution=row.index, efficiency=row.efficiency) for row in table]
    problem_type = (
        ProblemType.model_validate(header) if header is not None else original.problem_type.model_copy(deep=True)
    )
    update: dict[str, Any] = {"solutions": solutions, "exact_logic": rows, "problem_type": problem_type}
    for field in original.model_fields_set - _COPIED_FIELDS_EXCLUDED:
        update[field] = copy.deepcopy(getattr(original, field))
    return original.model_copy(update=update)


def validate_policy_value(value: str | bool | None) -> bool | None:
    """AMD's ``--force_merge`` spelling (T:430-436): true/1, false/0, none (case-insensitive)."""
    if value is None or isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    if lowered == "none":
        return None
    raise MergeError(
        f"force_merge must be true, false or none, not {value!r} (AMD treats any other string as true)"
    )


__all__ = [
    "MergePolicy",
    "default_force_merge",
    "merge_logic",
    "merge_resolved",
    "resolve_force_merge",
    "tag_label",
    "validate_policy_value",
]

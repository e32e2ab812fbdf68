"""Merge an incremental logic file into an original one, exactly as AMD's merge scripts do.

Reproduces ROCm/Tensile ``Tensile/TensileMergeLibrary.py`` ("T", rocBLAS pin 09ec347, lines
cited as T:n) and ROCm/hipBLASLt ``tensilelite/Tensile/Utilities/merge.py`` ("TL", 7d9fb683);
the differences between them are selected by :attr:`MergePolicy.compat`. Outputs dumped with
``dumps_logic`` (the merged model carries AMD's emitter style, YAML aliases included) are
byte-identical to the AMD tools' (checked on every corpus case that has an ``expected/``
directory, and against a step-by-step re-run of the scripts' copy sequence on the others).
``shared/spec/merge.md`` is the rule book.

Algorithm (per file pair; state = each side's kernels and table rows, then the output pool)
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

tensilelite's ``merge.py`` has two versions (7d9fb683's, cited as TL above, and 5.x's); where they
differ the rule is a field of :class:`~tensilekit.merge.merge_versions.MergeScript`, chosen per pair
by :func:`~tensilekit.merge.merge_versions.merge_script_for`.

The steps live in :mod:`tensilekit.merge.steps`; kernel identity and the lazy "first equal
pool entry" index in :mod:`tensilekit.merge.identity`; which YAML aliases survive in
:mod:`tensilekit.merge.aliases`. Kernels are carried as their input models and turned into
dicts only when a step needs one, so a sizes-only merge into a 4 MB file copies almost nothing.

Deviations, all reported rather than silent: AMD's crashes (bad table index, ProblemType
mismatch, unsupported AssertAlphaValue with tags, TL tags on a new size) raise
:class:`MergeError`; the default policy's "arcturus" rule needs the incremental *path*, so
:func:`merge_logic` takes it as a keyword (without it the default is Forced, as for any path
without "arcturus"). Inputs are never modified. The returned model's header is a deep copy;
kernels the merge did not rewrite reuse the input solution models' nested values (treat the
models as immutable, or deep-copy before editing them in place).
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tensilekit._arguments import require
from tensilekit.errors import Location, MergeError
from tensilekit.merge.aliases import alias_pairs, merged_alias_pairs, with_alias_pairs
from tensilekit.merge.efficiency import compare_units, guess_unit
from tensilekit.merge.identity import Compat, IdentityIndex, KernelIdentity, identity_function, identity_of
from tensilekit.merge.merge_versions import (
    LIBRARY_TYPE_FOLDERS,
    MergeScript,
    MergeScriptName,
    merge_script_for,
)
from tensilekit.merge.report import (
    AmdStatistics,
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
from tensilekit.merge.steps import (
    Kernel,
    Row,
    build_output,
    drop_solution_problem_types,
    drop_unused,
    duplicates,
    fastest_compatible,
    header_warnings,
    row_tags,
    sanitize,
    side_from,
    tag_label,
    trim,
    untagged,
    waive_problem_type,
)
from tensilekit.model.logic import LogicFile


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
        tensilelite_merge: which version of tensilelite's ``merge.py`` to reproduce (compat
            ``tensilelite``): ``"7d9fb683"`` or ``"5.x"``; None = by the files' versions
            (:func:`tensilekit.merge.merge_versions.merge_script_for`).

    ``add_new`` None (the default) does what the merge script does: 5.x's copies incremental files
    without an original, 7d9fb683's and TensileMergeLibrary drop them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    force_merge: bool | None = None
    trim: bool = True
    no_eff: bool = False
    add_solution_tags: bool = False
    compat: Compat | None = None
    add_new: bool | None = None
    latch_default: bool = True
    problem_type_check: bool | None = None
    tensilelite_merge: MergeScriptName | None = None


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
        TypeError: an argument of the wrong type.
    """
    require(original, LogicFile, "original", "merge_logic")
    require(incremental, LogicFile, "incremental", "merge_logic")
    require(policy, MergePolicy, "policy", "merge_logic", optional=True)
    require(incremental_path, str, "incremental_path", "merge_logic", optional=True)
    require(name, str, "name", "merge_logic", optional=True)
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


def _ref(kernel: Kernel) -> KernelRef:
    return KernelRef(index=kernel.file_position, name=kernel.name, side=kernel.side)


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
    if policy.compat is not None:
        compat, compat_reason = policy.compat, "requested"
    else:
        compat = Compat.for_dialect(original.dialect)
        compat_reason = f"default for a {original.dialect.value}-dialect original"
    tagged = policy.add_solution_tags
    warnings = header_warnings(original, incremental, compat)
    script: MergeScript | None = None
    script_reason: str | None = None
    if compat is Compat.TENSILELITE:
        script, script_reason = merge_script_for(policy.tensilelite_merge, original.version, incremental.version)
        if script.checks_library_type_folder:
            check_library_type_folder(incremental, original_path, incremental_path)
    orig = side_from(original, "original", original_path)
    inc = side_from(incremental, "incremental", incremental_path)
    original_sizes, incremental_sizes = len(orig.rows), len(inc.rows)
    original_kernels = len(orig.kernels)

    waived: list[str] = []  # step 0
    check_problem_type = policy.problem_type_check
    if check_problem_type is None:
        check_problem_type = compat is Compat.TENSILELITE
    if check_problem_type:
        optional = script is not None and script.solution_problem_type_optional
        waived = waive_problem_type(orig, inc, warnings, solution_problem_type_optional=optional)
        if optional:
            warnings.extend(unchecked_header_warnings(orig.header, inc.header))

    # step 1 (positional re-index) is implicit: rows hold positions, SolutionIndex is set on output

    tag_counts = [0, 0]  # step 2
    for number, side in enumerate((orig, inc)):
        tags = row_tags(side, compat, strict=tagged, warnings=warnings)
        if tagged:
            for row, tag in zip(side.rows, tags, strict=True):
                row.key = (tag,) + row.key
                row.key_rebuilt = True
        elif tags:
            tag_counts[number] = len({(tag,) + row.key for row, tag in zip(side.rows, tags, strict=True)}) - len(
                {row.key for row in side.rows}
            )
    for count, side_name in zip(tag_counts, ("original", "incremental"), strict=True):
        if count:
            warnings.append(
                f"{count} duplicate size(s) in the {side_name} table differ only by solution tag; "
                "they may not be handled correctly without --add-solution-tags"
            )

    trimmed: list[SizeTrimmed] = []
    if policy.trim:  # step 3
        trim(orig, trimmed, tagged)
        trim(inc, trimmed, tagged)

    sanitized = sanitized_incremental = 0
    if compat is Compat.TENSILELITE:  # step 4
        sanitized, sanitized_incremental = sanitize(orig), sanitize(inc)
    if sanitized:
        warnings.append(f"tensilelite StaggerU sanitising rewrote {sanitized} original kernel(s)")
    if script is not None and script.drops_solution_problem_type:
        dropped = drop_solution_problem_types(orig)
        drop_solution_problem_types(inc)
        from tensilekit.selection.hipblaslt_versions import version_of_minimum_required

        if dropped and version_of_minimum_required(original.version) is None:
            warnings.append(
                f"tensilelite {script} merge.py removes the ProblemType of every solution ({dropped} original "
                f"kernel(s) had one); the output keeps MinimumRequiredVersion {original.version}, but only "
                "tensilelite 5.x reads solutions without a ProblemType"
            )

    _, unused_orig = drop_unused(orig.kernels, orig.rows)  # step 5
    _, unused_inc = drop_unused(inc.kernels, inc.rows)
    found_duplicates = duplicates(orig, tagged) + duplicates(inc, tagged)
    stale_rows = sorted(n for entry in found_duplicates if entry.side == "original" for n in entry.rows[:-1])
    if stale_rows:
        warnings.append(
            f"{len(stale_rows)} original row(s) are shadowed by a later duplicate key and can never be "
            "updated by a merge (AMD keeps only the last occurrence in origDict)"
        )

    # step 6: the merge loop (T:308-334)
    pool: list[Kernel] = list(orig.kernels)
    index: IdentityIndex[Kernel] = IdentityIndex(
        pool,
        identity_function(compat, orig.header),
        raw_of=lambda kernel: kernel.snapshot(),
        bucket_of=lambda kernel: kernel.bucket,
        side="original",
        file=orig.path,
        file_positions=[kernel.file_position for kernel in orig.kernels],
    )
    incremental_identity = identity_function(compat, inc.header)
    incremental_ids: dict[int, tuple[KernelIdentity, Hashable]] = {}
    table = [Row(row.key, row.index, row.efficiency, row.source_row, row.key_rebuilt) for row in orig.rows]
    orig_dict = {row.key: (j, row.efficiency) for j, row in enumerate(orig.rows)}  # the last occurrence wins
    replaced: list[tuple[int, int, int, Any, Any, Any, Literal["faster", "forced"]]] = []
    kept_sizes: list[SizeKept] = []
    added: list[tuple[int, int]] = []  # (table row, pool position)
    rejected: list[SizeRejected] = []
    reused = 0

    def add_kernel(position: int) -> int:
        nonlocal reused
        kernel = inc.kernels[position]
        cached = incremental_ids.get(position)
        if cached is None:
            identity = identity_of(
                incremental_identity,
                kernel.snapshot(),
                side="incremental",
                position=kernel.file_position,
                file=inc.path,
            )
            cached = incremental_ids[position] = (identity, kernel.bucket)
        found = index.find(*cached)
        if found is not None:
            reused += 1
            return found
        return index.append(kernel.pool_copy(), *cached)

    for row in inc.rows:
        stored = 0.0 if policy.no_eff else row.efficiency
        existing = orig_dict.get(row.key)
        if existing is not None:
            j, orig_eff = existing
            faster = row.efficiency > orig_eff
            if faster or force_merge:
                # each incremental entry competes against the *original* row (origDict)
                new_index = add_kernel(row.index)
                table[j].index, table[j].efficiency = new_index, stored
                replaced.append(
                    (
                        j,
                        orig.rows[j].index,
                        new_index,
                        orig_eff,
                        row.efficiency,
                        stored,
                        "faster" if faster else "forced",
                    )
                )
            else:
                plain, label = untagged(row.key, tagged)
                kept_sizes.append(
                    SizeKept(
                        key=plain,
                        tag=label,
                        original_efficiency=orig_eff,
                        incremental_efficiency=row.efficiency,
                        tie=row.efficiency == orig_eff,
                    )
                )
            continue
        if tagged:
            try:
                best = fastest_compatible(orig_dict, row.key)
            except IndexError:
                raise MergeError(
                    "tensilelite --add-solution-tags cannot handle a size the original lacks "
                    f"({list(row.key[1:])}): hipBLASLt's merge.py raises IndexError here (its tags "
                    "carry only MFMA/VALU); use compat=tensile or drop --add-solution-tags",
                    inc.location(f"[7][{row.source_row}]"),
                ) from None
            if best > row.efficiency:
                plain, label = untagged(row.key, tagged)
                rejected.append(
                    SizeRejected(
                        key=plain, tag=label, incremental_efficiency=row.efficiency, best_compatible_efficiency=best
                    )
                )
                continue
        new_index = add_kernel(row.index)
        table.append(Row(row.key, new_index, stored, row.source_row, row.key_rebuilt))
        added.append((len(table) - 1, new_index))

    def kernel_changed(old: int, new: int) -> bool:
        if old == new:
            return False
        if index.bucket_at(old) != index.bucket_at(new):
            return True
        return index.identity_at(old) != index.identity_at(new)

    last_replacement = {entry[0]: number for number, entry in enumerate(replaced)}
    sizes_replaced = []
    for number, (j, old, new, old_eff, inc_eff, stored, why) in enumerate(replaced):
        plain, label = untagged(table[j].key, tagged)
        sizes_replaced.append(
            SizeReplaced(
                key=plain,
                tag=label,
                row=j,
                reason=why,
                old_kernel=_ref(pool[old]),
                new_kernel=_ref(pool[new]),
                old_efficiency=old_eff,
                new_efficiency=inc_eff,
                written_efficiency=stored,
                kernel_changed=kernel_changed(old, new),
                superseded=last_replacement[j] != number,
            )
        )
    sizes_added = []
    for row_number, position in added:
        plain, label = untagged(table[row_number].key, tagged)
        sizes_added.append(
            SizeAdded(
                key=plain,
                tag=label,
                row=row_number,
                kernel=_ref(pool[position]),
                efficiency=table[row_number].efficiency,
            )
        )

    if tagged:  # step 7
        for row in table:
            row.key = row.key[1:]
    pool_size = len(pool)
    _, removed_pool = drop_unused(pool, table)
    removed_originals = [pool_position for pool_position in removed_pool if pool_position < len(orig.kernels)]
    kernels_added = [
        KernelRef(index=n, name=k.name, side="output") for n, k in enumerate(pool) if k.side == "incremental"
    ]
    removed_positions = sorted(unused_orig + [orig.kernels[p].file_position for p in removed_originals])
    kernels_removed = [
        KernelRef(index=position, name=original.solutions[position].solution_name_min, side="original")
        for position in removed_positions
    ]

    merged = build_output(original, pool, table, orig.header if waived else None)
    merged._source_style = with_alias_pairs(
        getattr(original, "_source_style", None) or getattr(incremental, "_source_style", None),
        merged_alias_pairs(
            alias_pairs(original),
            alias_pairs(incremental),
            original_solutions={k.file_position: n for n, k in enumerate(pool) if k.side == "original"},
            incremental_solutions={k.file_position: n for n, k in enumerate(pool) if k.side == "incremental"},
            original_rows={row.source_row: n for n, row in enumerate(table[: len(orig.rows)]) if not row.key_rebuilt},
            incremental_rows={
                row.source_row: n for n, row in enumerate(table) if n >= len(orig.rows) and not row.key_rebuilt
            },
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
        policy=ResolvedPolicy(
            force_merge=force_merge,
            force_merge_reason=force_reason,
            compat=compat,
            compat_reason=compat_reason,
            trim=policy.trim,
            no_eff=policy.no_eff,
            add_solution_tags=tagged,
            tensilelite_merge=None if script is None else script.name,
            tensilelite_merge_reason=script_reason,
        ),
        original_sizes=original_sizes,
        incremental_sizes=incremental_sizes,
        output_sizes=len(table),
        original_kernels=original_kernels,
        incremental_kernels=len(incremental.solutions),
        output_kernels=len(pool),
        sizes_replaced=sizes_replaced,
        sizes_kept=kept_sizes,
        sizes_added=sizes_added,
        sizes_rejected=rejected,
        sizes_trimmed=trimmed,
        kernels_added=kernels_added,
        kernels_reused=reused,
        kernels_removed=kernels_removed,
        unused_original_kernels=len(unused_orig),
        unused_incremental_kernels=len(unused_inc),
        duplicate_keys=found_duplicates,
        stale_duplicate_rows=stale_rows,
        tag_duplicates_original=tag_counts[0],
        tag_duplicates_incremental=tag_counts[1],
        efficiency=units,
        problem_type_waived=waived,
        sanitized_kernels=sanitized,
        sanitized_incremental_kernels=sanitized_incremental,
        amd_statistics=AmdStatistics(
            sizes_added=len(table) - len(orig.rows),
            kernels_added=pool_size - len(orig.kernels),
            kernels_removed=len(removed_pool) + len(unused_orig),
        ),
        warnings=warnings,
    )
    return merged, report


def check_library_type_folder(incremental: LogicFile, original_path: str | None, incremental_path: str | None) -> None:
    """5.x ``compareDestFolderToYaml`` (merge.py @6b64aab9cc6d): the incremental file must name its
    library type (``[11]``), and a file merged into a folder named Equality or GridBased must be
    of that type. ``original_path``'s folder is AMD's ``originalDir`` (it pairs files by basename
    in that folder); without a path only the first rule applies."""
    where = Location(file=incremental_path, path="[11]")
    library_type = incremental.library_type
    if not library_type:
        raise MergeError(
            "the incremental file names no library type at [11] (Equality or GridBased): tensilelite 5.x's "
            "merge.py refuses it ('Empty YAML attribute')",
            where,
        )
    if original_path is None:
        return
    folder = os.path.basename(os.path.dirname(os.path.abspath(original_path)))
    if folder in LIBRARY_TYPE_FOLDERS and folder != library_type:
        raise MergeError(
            f"the incremental file is {library_type} tuning but the original folder is {folder!r}: tensilelite "
            f'5.x\'s merge.py refuses to merge it there ("must be {folder} tuning")',
            where,
        )


def unchecked_header_warnings(original_header: dict[str, Any], incremental_header: dict[str, Any]) -> list[str]:
    """What 5.x's ``compareProblemType`` leaves unchecked: it compares the original header with
    incremental *solutions'* ProblemTypes only, and 5.x files have none, so headers that
    disagree merge silently (the output keeps the original's, for the incremental kernels too)."""
    differing = [
        f"{key}: {value!r} != {incremental_header[key]!r}"
        for key, value in original_header.items()
        if key in incremental_header and incremental_header[key] != value
    ]
    if not differing:
        return []
    return [
        "the files' ProblemType headers differ ("
        + "; ".join(differing)
        + "); tensilelite 5.x's merge.py does not compare them and the output keeps the original's"
    ]


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
    raise MergeError(f"force_merge must be true, false or none, not {value!r} (AMD treats any other string as true)")


__all__ = [
    "MergePolicy",
    "check_library_type_folder",
    "default_force_merge",
    "merge_logic",
    "merge_resolved",
    "resolve_force_merge",
    "tag_label",
    "validate_policy_value",
]

"""Prune a logic file: drop kernels nothing selects, fold identical kernels together, renumber.

1. A kernel is *used* when an exact-logic row (or ``TileSelectionIndices``) names its position.
   Unused kernels are dropped (AMD's ``removeUnusedKernels``). Files without a table
   (``FreeSize`` libraries select among all their solutions) keep every kernel.
2. Among the survivors, kernels with the same identity (:mod:`tensilekit.merge.identity`: the
   merge tools' rule for the dialect) are folded into the first one; rows are remapped.
3. Solutions are renumbered by position (``SolutionIndex``) and every reference remapped; the
   file keeps its own YAML style, with its aliases (``&id``) following the kernels that stay.

The table's rows, keys and efficiencies are otherwise untouched, so selection cannot change: a
row still names a kernel of the same identity.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Hashable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tensilekit._arguments import require
from tensilekit.errors import Location, MergeError
from tensilekit.merge.aliases import alias_pairs, remapped_alias_pairs
from tensilekit.merge.identity import Compat, identities, identity_function
from tensilekit.merge.report import KernelRef
from tensilekit.model.logic import ExactLogicEntry, LogicFile


class FoldedKernel(BaseModel):
    """A duplicate kernel and the (earlier) kernel it was folded into; positions of the input."""

    model_config = ConfigDict(extra="forbid")

    removed: KernelRef
    kept: KernelRef


class PruneReport(BaseModel):
    """What :func:`prune_logic` did to one file."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    path: str | None = None
    output_path: str | None = None
    written: bool = False
    compat: Compat
    kernels_before: int
    kernels_after: int
    unused_removed: list[KernelRef] = Field(default_factory=list)
    duplicates_folded: list[FoldedKernel] = Field(default_factory=list)
    rows_remapped: int = 0
    indices_renumbered: int = Field(0, description="kept kernels whose SolutionIndex changed")
    notes: list[str] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.unused_removed or self.duplicates_folded or self.rows_remapped or self.indices_renumbered)


def _tile_selection_indices(logic: LogicFile) -> list[int]:
    values = (logic.tile_selection or {}).get("TileSelectionIndices")
    if not isinstance(values, list):
        return []
    return [value for value in values if isinstance(value, int) and not isinstance(value, bool)]


def prune_logic(
    logic: LogicFile,
    *,
    compat: Compat | None = None,
    drop_unused: bool = True,
    deduplicate: bool = True,
    name: str | None = None,
) -> tuple[LogicFile, PruneReport]:
    """Return a pruned copy of ``logic`` and a report; ``logic`` itself is not modified.

    Raises:
        MergeError: a table row names a solution position the file does not have.
        TypeError: an argument of the wrong type.
    """
    require(logic, LogicFile, "logic", "prune_logic")
    require(compat, Compat, "compat", "prune_logic", optional=True)
    require(name, str, "name", "prune_logic", optional=True)
    chosen = compat or Compat.for_dialect(logic.dialect)
    count = len(logic.solutions)
    notes: list[str] = []
    for number, entry in enumerate(logic.table):
        if not 0 <= entry.solution < count:
            raise MergeError(
                f"table row {number} refers to solution {entry.solution}, but the file has {count} solutions",
                Location(path=f"[7][{number}][1][0]"),
            )
    tile_indices = _tile_selection_indices(logic)
    if logic.exact_logic is None or not drop_unused:
        if logic.exact_logic is None and drop_unused:
            notes.append("no exact-logic table: every kernel counts as used")
        used = set(range(count))
    else:
        used = {entry.solution for entry in logic.table} | {i for i in tile_indices if 0 <= i < count}

    survivors = [position for position in range(count) if position in used]
    unused = [position for position in range(count) if position not in used]

    canonical: dict[int, int] = {position: position for position in survivors}
    folded: list[FoldedKernel] = []
    if deduplicate and len(survivors) > 1:
        raw = [logic.solutions[position].raw() for position in survivors]
        keys = identities(raw, identity_function(chosen, logic.problem_type.raw()), side="input")
        first: dict[Hashable, int] = {}
        for position, key in zip(survivors, keys, strict=True):
            kept = first.setdefault(key, position)
            if kept != position:
                canonical[position] = kept
                folded.append(
                    FoldedKernel(
                        removed=_ref(logic, position),
                        kept=_ref(logic, kept),
                    )
                )
    final = [position for position in survivors if canonical[position] == position]
    new_position = {old: new for new, old in enumerate(final)}
    remap = {old: new_position[canonical[old]] for old in survivors}

    solutions = [
        logic.solutions[old].model_copy(update={"solution_index": new}, deep=True) for new, old in enumerate(final)
    ]
    rows: list[ExactLogicEntry] | None = None
    remapped = 0
    if logic.exact_logic is not None:
        rows = []
        for entry in logic.exact_logic:
            target = remap[entry.solution]
            if target != entry.solution:
                remapped += 1
            rows.append(ExactLogicEntry(size=list(entry.size), solution=target, efficiency=entry.efficiency))
    update: dict[str, Any] = {"solutions": solutions, "exact_logic": rows}
    if tile_indices and logic.tile_selection is not None:
        tile = dict(logic.tile_selection)
        tile["TileSelectionIndices"] = [
            remap.get(value, value) if isinstance(value, int) else value for value in tile["TileSelectionIndices"]
        ]
        update["tile_selection"] = tile
    for field in logic.model_fields_set - set(update):
        update[field] = copy.deepcopy(getattr(logic, field))
    pruned = logic.model_copy(update=update)
    style: Any = getattr(logic, "_source_style", None)
    pairs = alias_pairs(logic)
    if pairs and dataclasses.is_dataclass(style) and not isinstance(style, type):
        moved = {old: new for new, old in enumerate(final)}
        pruned._source_style = dataclasses.replace(style, alias_paths=remapped_alias_pairs(pairs, moved))
    index_changes = sum(1 for new, old in enumerate(final) if logic.solutions[old].solution_index != new)
    report = PruneReport(
        name=name,
        compat=chosen,
        kernels_before=count,
        kernels_after=len(final),
        unused_removed=[_ref(logic, position) for position in unused],
        duplicates_folded=folded,
        rows_remapped=remapped,
        indices_renumbered=index_changes,
        notes=notes,
    )
    return pruned, report


def _ref(logic: LogicFile, position: int) -> KernelRef:
    return KernelRef(index=position, name=logic.solutions[position].solution_name_min, side="original")


__all__ = ["FoldedKernel", "PruneReport", "prune_logic"]

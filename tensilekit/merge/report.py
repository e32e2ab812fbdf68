"""What a merge did, as data: :class:`MergeReport` (per run) and :class:`FileMergeReport` (per file).

The report is the typed replacement for the lines AMD's scripts print (``[O]``/``[!]``/``[X]``/
``[-]``, "n size(s) and m kernel(s) added"). Everything is JSON-serialisable with
``model_dump(mode="json")``; :mod:`tensilekit.cli.render_merge` turns it into tables and Markdown.
"""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tensilekit.merge.identity import Compat

SizeKey = list[int | float]
Efficiency = float | int


class _ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class EfficiencyUnit(str, enum.Enum):
    """What the efficiency column of an exact-logic table measures (a guess, see ``reason``)."""

    PERCENT = "percent"  # newer rocBLAS files: percent of peak (PerfMetric DeviceEfficiency/CUEfficiency)
    GFLOPS = "gflops"  # older rocBLAS files
    NONE = "none"  # every value 0.0 (hipBLASLt)
    UNKNOWN = "unknown"  # empty table


class UnitGuess(_ReportModel):
    unit: EfficiencyUnit
    reason: str
    minimum: Efficiency | None = None
    maximum: Efficiency | None = None


class EfficiencyUnits(_ReportModel):
    """The unit guess for both sides; ``mixed`` when they measure different things."""

    original: UnitGuess
    incremental: UnitGuess
    mixed: bool
    message: str | None = None


class ResolvedPolicy(_ReportModel):
    """The policy one file was actually merged with, and why."""

    force_merge: bool
    force_merge_reason: str
    compat: Compat
    compat_reason: str
    trim: bool
    no_eff: bool
    add_solution_tags: bool
    tensilelite_merge: str | None = None
    """The version of tensilelite's merge.py reproduced (compat ``tensilelite``; see
    :mod:`tensilekit.merge.merge_versions`)."""
    tensilelite_merge_reason: str | None = None

    @property
    def merge_mode(self) -> str:
        """AMD's name for the policy: ``Forced`` or ``Winner``."""
        return "Forced" if self.force_merge else "Winner"


class KernelRef(_ReportModel):
    """A kernel by position in its solutions list, with its min-name when the file has one."""

    index: int
    name: str | None = None
    side: Literal["original", "incremental", "output"] = "output"


class SizeReplaced(_ReportModel):
    """An existing size whose table entry was overwritten from the incremental file.

    ``old_*`` describe the *original* row: with duplicate incremental keys every entry competes
    against the original (AMD's origDict), and all but the last are ``superseded``.
    """

    key: SizeKey
    tag: str | None = None
    row: int = Field(description="row of the output table")
    reason: Literal["faster", "forced"]
    old_kernel: KernelRef
    new_kernel: KernelRef
    old_efficiency: Efficiency
    new_efficiency: Efficiency
    written_efficiency: Efficiency
    kernel_changed: bool = Field(description="the new kernel differs from the old one (kernel identity)")
    superseded: bool = Field(False, description="a later incremental entry overwrote this row again")

    @property
    def changed(self) -> bool:
        """The row ends up different from the original (kernel identity or efficiency)."""
        return not self.superseded and (self.kernel_changed or self.written_efficiency != self.old_efficiency)


class SizeKept(_ReportModel):
    """An existing size the incremental entry did not beat (Winner policy)."""

    key: SizeKey
    tag: str | None = None
    original_efficiency: Efficiency
    incremental_efficiency: Efficiency
    tie: bool


class SizeAdded(_ReportModel):
    """A size the original did not have, appended to the table."""

    key: SizeKey
    tag: str | None = None
    row: int
    kernel: KernelRef
    efficiency: Efficiency


class SizeRejected(_ReportModel):
    """``--add-solution-tags``: a new size rejected because a compatible original entry is faster."""

    key: SizeKey
    tag: str | None = None
    incremental_efficiency: Efficiency
    best_compatible_efficiency: Efficiency


class SizeTrimmed(_ReportModel):
    """Trim (default on): a key of length >= 8 lost its last four elements, or was dropped."""

    side: Literal["original", "incremental"]
    key: SizeKey
    trimmed_to: SizeKey
    dropped: bool


class DuplicateKey(_ReportModel):
    """A size key occurring more than once in one table (as the merge sees it, after trim)."""

    side: Literal["original", "incremental"]
    key: SizeKey
    rows: list[int]


class AmdStatistics(_ReportModel):
    """The three numbers AMD's scripts print ("n size(s) and m kernel(s) added, k kernel(s) removed").

    ``kernels_added`` counts pool growth before the final unused-kernel sweep (AMD's bug 12), so it
    can differ from ``len(FileMergeReport.kernels_added)``.
    """

    sizes_added: int
    kernels_added: int
    kernels_removed: int


class FileMergeReport(_ReportModel):
    """Everything that happened to one original/incremental pair."""

    name: str
    original_path: str | None = None
    incremental_path: str | None = None
    output_path: str | None = None
    written: bool = False
    policy: ResolvedPolicy

    original_sizes: int
    incremental_sizes: int
    output_sizes: int
    original_kernels: int
    incremental_kernels: int
    output_kernels: int

    sizes_replaced: list[SizeReplaced] = Field(default_factory=list)
    sizes_kept: list[SizeKept] = Field(default_factory=list)
    sizes_added: list[SizeAdded] = Field(default_factory=list)
    sizes_rejected: list[SizeRejected] = Field(default_factory=list)
    sizes_trimmed: list[SizeTrimmed] = Field(default_factory=list)

    kernels_added: list[KernelRef] = Field(default_factory=list, description="incremental kernels new in the output")
    kernels_reused: int = Field(0, description="incremental entries mapped onto a kernel already in the pool")
    kernels_removed: list[KernelRef] = Field(default_factory=list, description="original kernels not in the output")
    unused_original_kernels: int = 0
    unused_incremental_kernels: int = 0

    duplicate_keys: list[DuplicateKey] = Field(default_factory=list)
    stale_duplicate_rows: list[int] = Field(
        default_factory=list, description="original rows shadowed by a later duplicate key: never updated"
    )
    tag_duplicates_original: int = 0
    tag_duplicates_incremental: int = 0

    efficiency: EfficiencyUnits
    problem_type_waived: list[str] = Field(default_factory=list, description="tensilelite ProblemType waiving")
    sanitized_kernels: int = Field(0, description="tensilelite StaggerU sanitising rewrote this many original kernels")
    sanitized_incremental_kernels: int = Field(0, description="... and this many incremental kernels")
    amd_statistics: AmdStatistics
    warnings: list[str] = Field(default_factory=list)

    @property
    def changed_keys(self) -> list[SizeKey]:
        """Sizes whose (kernel, efficiency) actually changed: added ones and effective replacements."""
        keys = [entry.key for entry in self.sizes_replaced if entry.changed]
        keys.extend(entry.key for entry in self.sizes_added)
        return keys

    @property
    def has_changes(self) -> bool:
        return bool(self.sizes_added or any(entry.changed for entry in self.sizes_replaced))


class MergeReport(_ReportModel):
    """One merge run: the requested policy, every file pair, and the files that were not paired."""

    policy: dict[str, object] = Field(description="the MergePolicy as requested")
    files: list[FileMergeReport] = Field(default_factory=list)
    unpaired_incremental: list[str] = Field(
        default_factory=list, description="incremental files without an original (AMD drops them silently)"
    )
    unpaired_original: list[str] = Field(
        default_factory=list, description="original files without an incremental (AMD does not copy them)"
    )
    copied_new: list[str] = Field(default_factory=list, description="incremental files copied through (--add-new)")
    output: str | None = None
    dry_run: bool = False
    notes: list[str] = Field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [f"{report.name}: {warning}" for report in self.files for warning in report.warnings]

    @property
    def has_changes(self) -> bool:
        return bool(self.copied_new) or any(report.has_changes for report in self.files)


__all__ = [
    "AmdStatistics",
    "DuplicateKey",
    "Efficiency",
    "EfficiencyUnit",
    "EfficiencyUnits",
    "FileMergeReport",
    "KernelRef",
    "MergeReport",
    "ResolvedPolicy",
    "SizeAdded",
    "SizeKept",
    "SizeKey",
    "SizeRejected",
    "SizeReplaced",
    "SizeTrimmed",
    "UnitGuess",
]

"""Library-logic files (list form and dict form, Tensile and tensilelite dialects) as one model.

A list-form logic file is a YAML sequence whose positions mean different things per dialect.
:data:`LIST_LAYOUTS` names every position once; nothing else in tensilekit indexes the list.
The dict form (rocBLAS DecisionTree files, newest tensilelite) maps its keys through
:data:`DICT_KEYS`. Solutions keep every key they had, in the order they had it.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from tensilekit.model.common import OrderedOpenModel, StrictModel


class Dialect(str, enum.Enum):
    """Which AMD Python wrote (and reads) the file."""

    TENSILE = "tensile"  # ROCm/Tensile, rocBLAS logic
    TENSILELITE = "tensilelite"  # hipBLASLt's fork


class Layout(str, enum.Enum):
    LIST = "list"
    DICT = "dict"


TENSILELITE_LIBRARY_TYPES = frozenset({"Equality", "GridBased", "FreeSize", "Prediction", "DecisionTree"})

_COMMON_POSITIONS = (
    "version_header",  # 0  {MinimumRequiredVersion: x.y.z}
    "schedule_name",  # 1
    "architecture",  # 2  gfx942 | {Architecture, CUCount, IsAPU}
    "device_names",  # 3
    "problem_type",  # 4
    "solutions",  # 5
    "index_order",  # 6  [2, 3, 0, 1]
    "exact_logic",  # 7  [[size...], [solution position, efficiency]]
    "range_logic",  # 8  retired
    "tile_selection",  # 9  {TileSelectionIndices: [...]} or null
    "performance_metric",  # 10 DeviceEfficiency | CUEfficiency
)

LIST_LAYOUTS: dict[Dialect, tuple[str, ...]] = {
    # TE:Tensile/LibraryIO.py parseLibraryLogicList
    Dialect.TENSILE: _COMMON_POSITIONS + ("fp16_alt_impl", "distance", "fp16_alt_impl_round"),
    # HL:tensilelite/Tensile/LibraryIO.py parseLibraryLogicList
    Dialect.TENSILELITE: _COMMON_POSITIONS + ("library_type", "default_solution"),
}
"""Position -> field name, per dialect. The single place that names list positions."""

DICT_KEYS: dict[str, str] = {
    "MinimumRequiredVersion": "minimum_required_version",
    "ScheduleName": "schedule_name",
    "ArchitectureName": "architecture",
    "CUCount": "cu_count",
    "IsAPU": "is_apu",
    "DeviceNames": "device_names",
    "ProblemType": "problem_type",
    "DefaultSolution": "default_solution",
    "Solutions": "solutions",
    "IndexOrder": "index_order",
    "ExactLogic": "exact_logic",
    "RangeLogic": "range_logic",
    "TileSelectionIndices": "tile_selection",
    "PerfMetric": "performance_metric",
    "LibraryType": "library_type",
    "Fp16AltImpl": "fp16_alt_impl",
    "Fp16AltImplRound": "fp16_alt_impl_round",
    "Library": "decision_library",
}
"""Dict-form key -> field name."""


class ProblemType(OrderedOpenModel):
    """Item 4 (and each solution's copy): the problem-type dict. Untyped keys kept verbatim."""

    operation_type: str | None = Field(default=None, alias="OperationType")
    data_type: int | str | None = Field(default=None, alias="DataType")
    data_type_a: int | str | None = Field(default=None, alias="DataTypeA")
    data_type_b: int | str | None = Field(default=None, alias="DataTypeB")
    dest_data_type: int | str | None = Field(default=None, alias="DestDataType")
    compute_data_type: int | str | None = Field(default=None, alias="ComputeDataType")
    transpose_a: bool | int | None = Field(default=None, alias="TransposeA")
    transpose_b: bool | int | None = Field(default=None, alias="TransposeB")
    high_precision_accumulate: bool | None = Field(default=None, alias="HighPrecisionAccumulate")
    batched: bool | None = Field(default=None, alias="Batched")
    strided_batched: bool | None = Field(default=None, alias="StridedBatched")
    use_beta: bool | None = Field(default=None, alias="UseBeta")
    index_assignments_a: list[int] | None = Field(default=None, alias="IndexAssignmentsA")
    index_assignments_b: list[int] | None = Field(default=None, alias="IndexAssignmentsB")
    num_indices_c: int | None = Field(default=None, alias="NumIndicesC")


class LogicSolution(OrderedOpenModel):
    """One kernel of item 5. Typed: what selection, merge and diff reason about."""

    solution_index: int | None = Field(default=None, alias="SolutionIndex")
    solution_name_min: str | None = Field(default=None, alias="SolutionNameMin")
    kernel_name_min: str | None = Field(default=None, alias="KernelNameMin")
    custom_kernel_name: str | None = Field(default=None, alias="CustomKernelName")
    macro_tile0: int | None = Field(default=None, alias="MacroTile0")
    macro_tile1: int | None = Field(default=None, alias="MacroTile1")
    depth_u: int | None = Field(default=None, alias="DepthU")
    global_split_u: int | None = Field(default=None, alias="GlobalSplitU")
    work_group: list[int] | None = Field(default=None, alias="WorkGroup")
    workgroup_mapping: int | None = Field(default=None, alias="WorkGroupMapping")
    thread_tile: list[int] | None = Field(default=None, alias="ThreadTile")
    matrix_instruction: list[int] | None = Field(default=None, alias="MatrixInstruction")
    isa: list[int] | None = Field(default=None, alias="ISA")
    kernel_language: str | None = Field(default=None, alias="KernelLanguage")
    enable_matrix_instruction: bool | None = Field(default=None, alias="EnableMatrixInstruction")
    valid: bool | None = Field(default=None, alias="Valid")
    # A ProblemType dict, or "derive" in DecisionTree logic files.
    problem_type: ProblemType | str | None = Field(default=None, alias="ProblemType")


class ExactLogicEntry(StrictModel):
    """One row of item 7: ``[[M, N, B, K(, ld…)], [solution position, efficiency]]``.

    ``solution`` is a position in the file's solutions list, not a ``SolutionIndex``.
    """

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True, frozen=True)

    size: list[int]
    solution: int
    efficiency: float | int

    @model_validator(mode="before")
    @classmethod
    def _from_row(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)):
            if len(data) != 2 or not isinstance(data[1], (list, tuple)) or len(data[1]) != 2:
                raise ValueError("a table row is [[sizes...], [solution, efficiency]]")
            return {"size": data[0], "solution": data[1][0], "efficiency": data[1][1]}
        return data

    def to_row(self) -> list[Any]:
        return [list(self.size), [self.solution, self.efficiency]]

    @property
    def key4(self) -> tuple[int, ...]:
        """``(M, N, B, K)``: the size without leading dimensions."""
        return tuple(self.size[:4])


class ArchitectureSpec(OrderedOpenModel):
    """Item 2 in dict form: ``{Architecture: gfx90a, CUCount: 104, IsAPU: 0}``."""

    architecture: str = Field(alias="Architecture")
    cu_count: int | None = Field(default=None, alias="CUCount")
    is_apu: int | bool | None = Field(default=None, alias="IsAPU")


class LogicFile(StrictModel):
    """A library-logic file in either layout and dialect.

    Fields follow :data:`LIST_LAYOUTS` / :data:`DICT_KEYS`. ``list_length`` (list form) says how
    many positions the file had, so absent trailing positions stay absent on write;
    ``extra_items`` keeps positions past the dialect's known layout verbatim.
    """

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)

    dialect: Dialect
    layout: Layout = Layout.LIST
    list_length: int | None = None
    version_header: dict[str, Any] | None = None
    minimum_required_version: str | None = None
    schedule_name: str | None = None
    architecture: str | ArchitectureSpec | None = None
    cu_count: int | None = None
    is_apu: int | bool | None = None
    device_names: list[Any] | None = None
    problem_type: ProblemType
    solutions: list[LogicSolution]
    index_order: list[int] | None = None
    exact_logic: list[ExactLogicEntry] | None = None
    range_logic: Any = None
    tile_selection: dict[str, Any] | None = None
    performance_metric: str | None = None
    fp16_alt_impl: Any = None
    distance: str | None = None
    fp16_alt_impl_round: Any = None
    library_type: str | None = None
    default_solution: dict[str, Any] | None = None
    decision_library: list[Any] | None = None
    extra_items: list[Any] = Field(default_factory=list)
    extra_keys: dict[str, Any] = Field(default_factory=dict)
    dict_key_order: list[str] | None = None

    # The emitter style the file was read with (an io.yaml_codec.YamlStyle); dumps reuse it.
    _source_style: Any = PrivateAttr(default=None)

    # -- convenient derived views ------------------------------------------------------------
    @property
    def architecture_name(self) -> str | None:
        if isinstance(self.architecture, ArchitectureSpec):
            return self.architecture.architecture
        return self.architecture

    @property
    def architecture_cu_count(self) -> int | None:
        if isinstance(self.architecture, ArchitectureSpec):
            return self.architecture.cu_count
        return self.cu_count

    @property
    def version(self) -> str | None:
        if self.version_header is not None:
            value = self.version_header.get("MinimumRequiredVersion")
            return None if value is None else str(value)
        return self.minimum_required_version

    @property
    def matching_distance(self) -> str:
        """The selection method this file asks for: tensilelite library type or Tensile distance."""
        if self.layout is Layout.DICT:
            return self.library_type or "DecisionTree"
        if self.dialect is Dialect.TENSILELITE:
            return self.library_type or "Equality"
        return self.distance or "Euclidean"

    @property
    def table(self) -> list[ExactLogicEntry]:
        return self.exact_logic or []


__all__ = [
    "ArchitectureSpec",
    "DICT_KEYS",
    "Dialect",
    "ExactLogicEntry",
    "LIST_LAYOUTS",
    "Layout",
    "LogicFile",
    "LogicSolution",
    "ProblemType",
    "TENSILELITE_LIBRARY_TYPES",
]

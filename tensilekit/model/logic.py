"""Library-logic files (list form and dict form, Tensile and tensilelite dialects) as one model.

A list-form logic file is a YAML sequence whose positions mean different things per dialect.
:data:`LIST_LAYOUTS` names every position once; nothing else in tensilekit indexes the list.
The dict form (rocBLAS DecisionTree files, newest tensilelite) maps its keys through
:data:`DICT_KEYS`. Solutions keep every key they had, in the order they had it.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

# the bounds live in model.common, so model.library has them without importing this module
from tensilekit.model.common import (
    MAX_PARAMETER,
    MAX_SIZE,
    MAX_TENSOR_INDICES,
    MAX_TILE,
    MAX_VECTOR_WIDTH,
    Efficiency,
    OrderedOpenModel,
    StrictModel,
)


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


# -- value bounds checked once, when a file is read -----------------------------------------------
def _not_null(value: Any) -> Any:
    # An explicit ``null`` for a field the kernel cannot exist without (absent keys are allowed).
    if value is None:
        raise ValueError("must be an integer, not null")
    return value


def _not_zero(value: int | None) -> int | None:
    if value == 0:
        raise ValueError("must not be 0 (-1 means 'derive it')")
    return value


TensorIndex = Annotated[int, Field(ge=0, lt=MAX_TENSOR_INDICES)]
_IndexList = Annotated[list[TensorIndex], Field(max_length=MAX_TENSOR_INDICES)]
_Dimension = Annotated[int | None, Field(ge=1, le=MAX_TILE), AfterValidator(_not_null)]
_TileList = Annotated[list[Annotated[int, Field(ge=1, le=MAX_TILE)]], Field(max_length=16)]
_Parameter = Annotated[int, Field(ge=-MAX_PARAMETER, le=MAX_PARAMETER)]
_PositiveParameter = Annotated[int, Field(ge=1, le=MAX_PARAMETER)]
_VectorWidth = Annotated[int, Field(ge=-1, le=MAX_VECTOR_WIDTH)]
_ReadVectorWidth = Annotated[int, Field(ge=-2, le=MAX_VECTOR_WIDTH), AfterValidator(_not_zero)]
_Prefetch = Annotated[int, Field(ge=0, le=64)] | bool
_IndexMap = dict[TensorIndex, int]


def _problem_indices_error(
    ia: list[int], ib: list[int], num_c: int, stored: dict[str, list[int] | None]
) -> tuple[str, str] | None:
    """(field, message) of the first inconsistency of a problem type's index assignments, or None.

    Tensile ``ProblemType.assignDerivedParameters``: indices below NumIndicesC are free (in one of
    A, B) or batch (in both); the others are summation indices and must be in both.
    """
    if not 1 <= num_c < MAX_TENSOR_INDICES:
        return "NumIndicesC", f"NumIndicesC must be 1..{MAX_TENSOR_INDICES - 1}, got {num_c}"
    for name, assignment in (("IndexAssignmentsA", ia), ("IndexAssignmentsB", ib)):
        if len(set(assignment)) != len(assignment):
            return name, f"{name} {assignment} names an index twice"
    in_a, in_b = set(ia), set(ib)
    total = max(in_a | in_b | {num_c - 1}) + 1
    missing = [i for i in range(total) if i not in in_a and i not in in_b]
    if missing:
        return "IndexAssignmentsA", f"index {missing[0]} appears in neither IndexAssignmentsA nor IndexAssignmentsB"
    free = [i for i in range(num_c) if (i in in_a) != (i in in_b)]
    batch = [i for i in range(num_c) if i in in_a and i in in_b]
    summation = [i for i in range(num_c, total) if i in in_a and i in in_b]
    lonely = [i for i in range(num_c, total) if (i in in_a) != (i in in_b)]
    if lonely:
        side = "IndexAssignmentsA" if lonely[0] in in_a else "IndexAssignmentsB"
        return side, f"index {lonely[0]} is not in C (NumIndicesC {num_c}) but only in {side}"
    if not summation:
        return "IndexAssignmentsA", "no summation index (an index in A and B but not in C)"
    if not in_a & set(free) or not in_b & set(free):
        return "IndexAssignmentsA", "A and B each need a free index"
    for name, derived in (("IndicesFree", free), ("IndicesBatch", batch), ("IndicesSummation", summation)):
        value = stored.get(name)
        if value is not None and list(value) != derived:
            return name, f"{name} is {value} but the index assignments give {derived}"
    return None


_CHECKED_PROBLEM_INDICES: dict[tuple[Any, ...], tuple[str, str] | None] = {}


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
    index_assignments_a: _IndexList | None = Field(default=None, alias="IndexAssignmentsA")
    index_assignments_b: _IndexList | None = Field(default=None, alias="IndexAssignmentsB")
    num_indices_c: Annotated[int, Field(ge=1, lt=MAX_TENSOR_INDICES)] | None = Field(default=None, alias="NumIndicesC")
    indices_free: _IndexList | None = Field(default=None, alias="IndicesFree")
    indices_batch: _IndexList | None = Field(default=None, alias="IndicesBatch")
    indices_summation: _IndexList | None = Field(default=None, alias="IndicesSummation")
    mirror_dims_a: _IndexList | None = Field(default=None, alias="MirrorDimsA")
    mirror_dims_b: _IndexList | None = Field(default=None, alias="MirrorDimsB")

    @model_validator(mode="after")
    def _consistent_indices(self) -> ProblemType:
        ia, ib, num_c = self.index_assignments_a, self.index_assignments_b, self.num_indices_c
        if ia is None or ib is None or num_c is None:
            return self
        stored = {
            "IndicesFree": self.indices_free,
            "IndicesBatch": self.indices_batch,
            "IndicesSummation": self.indices_summation,
        }
        # Thousands of solutions repeat the file's problem type: check each distinct one once.
        key = (tuple(ia), tuple(ib), num_c, *(None if v is None else tuple(v) for v in stored.values()))
        if key not in _CHECKED_PROBLEM_INDICES:
            _CHECKED_PROBLEM_INDICES[key] = _problem_indices_error(ia, ib, num_c, stored)
        problem = _CHECKED_PROBLEM_INDICES[key]
        if problem is not None:
            field, message = problem
            raise PydanticCustomError("problem_indices", message, {"field": field})
        return self


class LogicSolution(OrderedOpenModel):
    """One kernel of item 5. Typed: what selection, merge and diff reason about."""

    solution_index: int | None = Field(default=None, alias="SolutionIndex")
    solution_name_min: str | None = Field(default=None, alias="SolutionNameMin")
    kernel_name_min: str | None = Field(default=None, alias="KernelNameMin")
    custom_kernel_name: str | None = Field(default=None, alias="CustomKernelName")
    macro_tile0: _Dimension = Field(default=None, alias="MacroTile0")
    macro_tile1: _Dimension = Field(default=None, alias="MacroTile1")
    depth_u: _Dimension = Field(default=None, alias="DepthU")
    global_split_u: Annotated[int, Field(ge=-1, le=MAX_TILE)] | None = Field(default=None, alias="GlobalSplitU")
    work_group: _TileList | None = Field(default=None, alias="WorkGroup")
    workgroup_mapping: _Parameter | None = Field(default=None, alias="WorkGroupMapping")
    thread_tile: _TileList | None = Field(default=None, alias="ThreadTile")
    matrix_instruction: _TileList | None = Field(default=None, alias="MatrixInstruction")
    isa: list[Annotated[int, Field(ge=0, le=MAX_PARAMETER)]] | None = Field(default=None, alias="ISA")
    kernel_language: str | None = Field(default=None, alias="KernelLanguage")
    enable_matrix_instruction: bool | None = Field(default=None, alias="EnableMatrixInstruction")
    valid: bool | None = Field(default=None, alias="Valid")
    # Read by the kernel derivation and naming (model/derive.py, model/naming.py): typed here so a
    # bad value is an error with its location when the file is read, not a crash later.
    num_threads: Annotated[int, Field(ge=1, le=MAX_TILE)] | None = Field(default=None, alias="NumThreads")
    global_read_vector_width: _ReadVectorWidth | None = Field(default=None, alias="GlobalReadVectorWidth")
    global_read_vector_width_a: _ReadVectorWidth | None = Field(default=None, alias="GlobalReadVectorWidthA")
    global_read_vector_width_b: _ReadVectorWidth | None = Field(default=None, alias="GlobalReadVectorWidthB")
    global_load_vector_width_a: _VectorWidth | None = Field(default=None, alias="GlobalLoadVectorWidthA")
    global_load_vector_width_b: _VectorWidth | None = Field(default=None, alias="GlobalLoadVectorWidthB")
    vector_width: _VectorWidth | None = Field(default=None, alias="VectorWidth")
    vector_width_a: _VectorWidth | None = Field(default=None, alias="VectorWidthA")
    vector_width_b: _VectorWidth | None = Field(default=None, alias="VectorWidthB")
    store_vector_width: _VectorWidth | None = Field(default=None, alias="StoreVectorWidth")
    local_read_vector_width: _VectorWidth | None = Field(default=None, alias="LocalReadVectorWidth")
    prefetch_global_read: _Prefetch | None = Field(default=None, alias="PrefetchGlobalRead")
    prefetch_local_read: _Prefetch | None = Field(default=None, alias="PrefetchLocalRead")
    stagger_u: Annotated[int, Field(ge=0, le=MAX_PARAMETER)] | None = Field(default=None, alias="StaggerU")
    depth_u_lds_divisor: _PositiveParameter | None = Field(default=None, alias="DepthULdsDivisor")
    loop_unroll: _PositiveParameter | None = Field(default=None, alias="LoopUnroll")
    inner_unroll: _PositiveParameter | None = Field(default=None, alias="InnerUnroll")
    assert_free0_element_multiple: _PositiveParameter | None = Field(default=None, alias="AssertFree0ElementMultiple")
    assert_free1_element_multiple: _PositiveParameter | None = Field(default=None, alias="AssertFree1ElementMultiple")
    assert_summation_element_multiple: _PositiveParameter | None = Field(
        default=None, alias="AssertSummationElementMultiple"
    )
    assert_size_equal: _IndexMap | None = Field(default=None, alias="AssertSizeEqual")
    assert_stride_a_equal: _IndexMap | None = Field(default=None, alias="AssertStrideAEqual")
    assert_stride_b_equal: _IndexMap | None = Field(default=None, alias="AssertStrideBEqual")
    assert_stride_c_equal: _IndexMap | None = Field(default=None, alias="AssertStrideCEqual")
    assert_stride_d_equal: _IndexMap | None = Field(default=None, alias="AssertStrideDEqual")
    matrix_inst_m: _PositiveParameter | None = Field(default=None, alias="MatrixInstM")
    matrix_inst_n: _PositiveParameter | None = Field(default=None, alias="MatrixInstN")
    matrix_inst_k: _PositiveParameter | None = Field(default=None, alias="MatrixInstK")
    matrix_inst_b: _PositiveParameter | None = Field(default=None, alias="MatrixInstB")
    matrix_inst_bm: _PositiveParameter | None = Field(default=None, alias="MatrixInstBM")
    matrix_inst_bn: _PositiveParameter | None = Field(default=None, alias="MatrixInstBN")
    local_split_u: _PositiveParameter | None = Field(default=None, alias="LocalSplitU")
    wavefront_size: Annotated[int, Field(ge=1, le=1024)] | None = Field(default=None, alias="WavefrontSize")
    mi_wave_tile: _TileList | None = Field(default=None, alias="MIWaveTile")
    mi_wave_group: _TileList | None = Field(default=None, alias="MIWaveGroup")
    # A ProblemType dict, or "derive" in DecisionTree logic files.
    problem_type: ProblemType | str | None = Field(default=None, alias="ProblemType")


class ExactLogicEntry(StrictModel):
    """One row of item 7: ``[[M, N, B, K(, ld…)], [solution position, efficiency]]``.

    ``solution`` is a position in the file's solutions list, not a ``SolutionIndex``.
    """

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True, frozen=True)

    size: list[Annotated[int, Field(ge=0, le=MAX_SIZE)]]
    solution: int
    efficiency: Efficiency

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
    # The text the file was read from: written back as it is while the data is unchanged
    # (hand-edited layouts no emitter setting reproduces; io.logic_io.dumps_logic)
    _source_text: str | None = PrivateAttr(default=None)
    # keys of a name-keyed ``Solutions`` mapping (canonical dict logic), restored on write
    _solution_keys: list[str] | None = PrivateAttr(default=None)

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
    "MAX_SIZE",
    "MAX_TENSOR_INDICES",
    "MAX_TILE",
    "Efficiency",
    "TensorIndex",
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

"""Predicate models: a discriminated union on ``type``, one class per value shape.

Tensile serialises every predicate as ``{type: <Name>[, index: i][, value: v]}``. The names are
grouped here by the shape of ``value`` (none, bool, int, indexed int, string, …) so each group is
one strictly typed class; :data:`PREDICATE_SHAPES` is the single table from type name to shape.
An unknown ``type`` loads as an :class:`UnmodelledPredicate` (kept as written); selection never
takes it to hold or fail silently: it says the predicate is not modelled.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

import msgpack
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from tensilekit.model.common import StrictModel as _MutableStrictModel


class StrictModel(_MutableStrictModel):
    """Predicates are values: frozen, so interned instances can be shared safely."""

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True, frozen=True)


# type name -> shape tag. Sources: Tensile ``ContractionProblemPredicates.hpp``,
# ``AMDGPUPredicates.hpp``, ``TaskPredicates.hpp`` and the tensilelite (hipBLASLt) variants, whose
# value shapes are those tensilelite's ``Contractions.py`` writes (hipBLASLt 7d9fb683
# ``ProblemType.predicates`` / ``ProblemPredicate.CompoundPredicates``).
PREDICATE_SHAPES: dict[str, str] = {
    # logic
    "TruePred": "flag",
    "FalsePred": "flag",
    "And": "list",
    "Or": "list",
    "Not": "single",
    # hardware
    "AMDGPU": "single",
    "Processor": "string",
    "CUCount": "int",
    # PCI chip ID rows (tensilelite AMDGPUPredicates.hpp): "PciChipId" (gfx950 only, current),
    # "PciChipID" (first version, every processor)
    "PciChipId": "int",
    "PciChipID": "int",
    "IsAPU": "intbool",
    "IsXPU": "intbool",
    # row markers / metric tags
    "EqualityMatching": "flag",
    "FreeSizeMatching": "flag",
    # tensilelite 2026: the row above a Prediction pool (SolutionLibrary.py @ 003add59)
    "PredictionMatching": "flag",
    "CUEfficiency": "flag",
    "ExperimentalDTree": "flag",
    "ExperimentalGrid": "flag",
    "Fp16AltImpl": "flag",
    "Fp16AltImplRound": "flag",
    # problem flags without a value
    "CDStridesEqual": "flag",
    "LDCEqualsLDD": "flag",
    "CEqualsD": "flag",
    "BetaZero": "flag",
    "BetaOne": "flag",
    "PersistentKernelCheck": "flag",
    # Tensile: a flag-style task predicate; tensilelite: a problem predicate [elemC, elemBias, GSU]
    "WorkspaceCheck": "workspace",
    # tensilelite 5.x (2026) task predicate on every solution (TaskPredicate.FromOriginalState;
    # ContractionTaskPredicates.hpp @1ea8c64f): the launch grid's work items fit in 32 bits
    "LaunchLimits": "flag",
    # sizes with an index
    "Free0SizeMultiple": "indexed",
    "Free1SizeMultiple": "indexed",
    "BatchSizeMultiple": "indexed",
    "BatchSizeEqual": "indexed",
    "BoundSizeMultiple": "indexed",
    "SizeEqual": "indexed",
    "SizeGreaterThan": "indexed",
    "SizeLessThan": "indexed",
    "SizeMultiple": "indexed",
    "StrideAEqual": "indexed",
    "StrideBEqual": "indexed",
    "StrideCEqual": "indexed",
    "StrideDEqual": "indexed",
    "SizeInRange": "range",
    # plain values
    "OperationIdentifierEqual": "string",
    "TypesEqual": "stringlist",  # 4 types (Tensile) or 5 with the compute input type (tensilelite)
    "HighPrecisionAccumulate": "bool",
    "StridedBatched": "bool",
    "GroupedGemm": "bool",
    "StochasticRounding": "bool",
    "DeterministicMode": "bool",
    "F32XdlMathOp": "string",
    "KernelLanguageCompatible": "string",
    "ArithmeticUnitCompatible": "string",
    "LeadingFree0SizesGreaterOrEqual": "int",
    "LeadingFree1SizesGreaterOrEqual": "int",
    "MaxProblemSizeGreaterThan": "int",
    "AIGreaterThanEqual": "number",
    "AILessThanEqual": "number",
    "AlphaValue": "string",
    "BetaValue": "string",
    "BufferLoadOffsetLimitCheck": "bufferload",
    "BufferStoreOffsetLimitCheck": "int",
    "GlobalSplitUCheckMinK": "mink",  # Tensile: minK; tensilelite: [minK per GSU, solution GSU]
    # older / experimental Tensile spellings
    "RangeMatching": "flag",
    "ExperimentalStreamK": "flag",
    "ExperimentalMLP": "flag",
    "TargetProcessor": "string",
    "KernelLanguage": "string",
    "ArithmeticUnit": "string",
    "ProblemSizeEqual": "indexed",
    "BufferLoadOffsetLimitCheck_Beta": "int",
    # tensilelite (hipBLASLt ContractionProblemPredicates.hpp): flags, enums and white lists
    "UseGradient": "bool",
    "UseE": "bool",
    "ActivationNoGuard": "bool",
    "UseScaleCD": "bool",
    "AmaxDCheck": "bool",
    "SupportDeviceUserArguments": "bool",
    "SwizzleTensorA": "bool",
    "SwizzleTensorB": "bool",
    # 0 dense, 1 sparse A, 2 sparse B; these three may be false/true where a logic file wrote a bool
    # (tensilelite's build copies the ProblemType value into the predicate, Contractions.py:366-375 @7d9fb683)
    "Sparse": "intbool",
    "UseBias": "intbool",  # 0 none, 1 M, 2 N, 3 both (factor dim at run time)
    "UseScaleAlphaVec": "intbool",  # same encoding as UseBias
    "Activation": "string",  # an ActivationType name (``Hipblaslt_all``, ``Gelu``, ``None``, …)
    "ActivationComputeType": "string",  # a DataType name
    "UseScaleAB": "stringorbool",  # "" (none), "Scalar" or "Vector"; false in pre-2025 logic files
    "DataTypeE": "string",
    "ActivationEnumWhiteList": "stringlist",
    "BiasDataTypeWhiteList": "stringlist",
    "BiasSrcWhiteList": "intlist",  # tensor numbers: 0 A, 1 B, 2 C, 3 D
    "SynchronizerSizeCheck": "intlist",  # [MT0, MT1, MIWaveTile0·1, NEPT/NEPBS, NumThreads(, GSU)]
    "WorkgroupNumberCheck": "intlist",  # [MT0, MT1, GSU]
    "WorkgroupMappingXCCCheck": "intpair",  # [WorkGroupMappingXCC, WorkGroupMappingXCCGroup]
}


class FlagPredicate(StrictModel):
    """A predicate without a value (``TruePred``, ``EqualityMatching``, ``CEqualsD``, …)."""

    type: Literal[
        "TruePred",
        "FalsePred",
        "EqualityMatching",
        "FreeSizeMatching",
        "PredictionMatching",
        "CUEfficiency",
        "ExperimentalDTree",
        "ExperimentalGrid",
        "Fp16AltImpl",
        "Fp16AltImplRound",
        "CDStridesEqual",
        "LDCEqualsLDD",
        "CEqualsD",
        "BetaZero",
        "BetaOne",
        "PersistentKernelCheck",
        "LaunchLimits",
        "RangeMatching",
        "ExperimentalStreamK",
        "ExperimentalMLP",
    ]
    # Older Tensile masters write some flags with a vestigial index/value
    # (``{type: CDStridesEqual, value: true}``).
    index: int | None = None
    value: bool | int | None = None


WorkspaceElementSizes = Annotated[list[int], Field(min_length=3, max_length=3)]
"""tensilelite's ``WorkspaceCheck`` value: ``[workspaceSizePerElemC, workspaceSizePerElemBias, GSU]``."""


class WorkspaceCheckPredicate(StrictModel):
    """``WorkspaceCheck`` in both dialects.

    Tensile writes a flag-style *task* predicate (``{type: WorkspaceCheck}``, older masters with a
    vestigial ``index: 0, value: 0``) that reads the solution's ``sizeMapping``. tensilelite writes a
    *problem* predicate ``{index: 0, type: WorkspaceCheck, value: [elemC, elemBias, GSU]}``
    (hipBLASLt ``ContractionProblemPredicates.hpp`` ``WorkspaceCheck``; ``Contractions.py`` omits
    it when all three are 0)."""

    type: Literal["WorkspaceCheck"]
    index: int | None = None
    value: WorkspaceElementSizes | bool | int | None = None

    @property
    def element_sizes(self) -> list[int] | None:
        """``[elemC, elemBias, GSU]`` for tensilelite's problem predicate, None for Tensile's flag."""
        return self.value if isinstance(self.value, list) else None


class BoolPredicate(StrictModel):
    type: Literal[
        "HighPrecisionAccumulate",
        "StridedBatched",
        "GroupedGemm",
        "StochasticRounding",
        "DeterministicMode",
        "UseGradient",
        "UseE",
        "ActivationNoGuard",
        "UseScaleCD",
        "AmaxDCheck",
        "SupportDeviceUserArguments",
        "SwizzleTensorA",
        "SwizzleTensorB",
    ]
    value: bool


class IntPredicate(StrictModel):
    type: Literal[
        "CUCount",
        "PciChipId",
        "PciChipID",
        "LeadingFree0SizesGreaterOrEqual",
        "LeadingFree1SizesGreaterOrEqual",
        "MaxProblemSizeGreaterThan",
        "BufferStoreOffsetLimitCheck",
        "BufferLoadOffsetLimitCheck_Beta",
    ]
    value: int


class IntOrBoolPredicate(StrictModel):
    """``IsAPU``-style hardware flags, written as 0/1 or false/true; tensilelite's ``Sparse``, ``UseBias``
    and ``UseScaleAlphaVec``, integers a logic file may give as false/true."""

    type: Literal["IsAPU", "IsXPU", "Sparse", "UseBias", "UseScaleAlphaVec"]
    value: int | bool


class NumberPredicate(StrictModel):
    type: Literal["AIGreaterThanEqual", "AILessThanEqual"]
    value: float | int


class StringPredicate(StrictModel):
    type: Literal[
        "Processor",
        "OperationIdentifierEqual",
        "F32XdlMathOp",
        "KernelLanguageCompatible",
        "ArithmeticUnitCompatible",
        "AlphaValue",
        "BetaValue",
        "TargetProcessor",
        "KernelLanguage",
        "ArithmeticUnit",
        "Activation",
        "ActivationComputeType",
        "DataTypeE",
    ]
    value: str


class ScaleABPredicate(StrictModel):
    """tensilelite's ``UseScaleAB``: ``""``, ``Scalar`` or ``Vector``, or a bool from older logic files.

    Logic files written before ``UseScaleAB`` became a string (2024, e.g. aldebaran I8II GridBased)
    say ``UseScaleAB: false``; tensilelite's ``Contractions.ProblemType.FromOriginalState``
    (``Tensile/Contractions.py:230`` @7d9fb683) copies the value unchanged, so its
    TensileCreateLibrary writes ``{type: UseScaleAB, value: false}`` into the master.
    """

    type: Literal["UseScaleAB"]
    value: str | bool


class StringListPredicate(StrictModel):
    """Type lists: ``TypesEqual`` and tensilelite's ``ActivationEnumWhiteList``/``BiasDataTypeWhiteList``."""

    type: Literal["TypesEqual", "ActivationEnumWhiteList", "BiasDataTypeWhiteList"]
    value: list[str]

    @field_validator("value")
    @classmethod
    def _types_equal_names_four_types(cls, value: list[str], info: ValidationInfo) -> list[str]:
        # a, b, c, d types (tensilelite adds the compute input type); selection reads the first four
        if info.data.get("type") == "TypesEqual" and len(value) < 4:
            raise ValueError(f"TypesEqual needs at least 4 types (A, B, C, D), got {len(value)}")
        return value


class IntListPredicate(StrictModel):
    """tensilelite's integer vectors: ``BiasSrcWhiteList``, ``SynchronizerSizeCheck`` (written with
    ``index: 0``), ``WorkgroupNumberCheck``."""

    type: Literal["BiasSrcWhiteList", "SynchronizerSizeCheck", "WorkgroupNumberCheck"]
    index: int | None = None
    value: list[int]


class IntPairPredicate(StrictModel):
    """``WorkgroupMappingXCCCheck``: ``[WorkGroupMappingXCC, WorkGroupMappingXCCGroup]`` (-1 = CU count)."""

    type: Literal["WorkgroupMappingXCCCheck"]
    value: Annotated[list[int], Field(min_length=2, max_length=2)]


class MinKPredicate(StrictModel):
    """``GlobalSplitUCheckMinK``: Tensile's minimum K, or tensilelite's ``[minK per GSU, solution GSU]``."""

    type: Literal["GlobalSplitUCheckMinK"]
    value: int | Annotated[list[int], Field(min_length=2, max_length=2)]


class IndexedPredicate(StrictModel):
    """A size or stride predicate on one index: ``{type: SizeMultiple, index: 3, value: 8}``."""

    type: Literal[
        "Free0SizeMultiple",
        "Free1SizeMultiple",
        "BatchSizeMultiple",
        "BatchSizeEqual",
        "BoundSizeMultiple",
        "SizeEqual",
        "SizeGreaterThan",
        "SizeLessThan",
        "SizeMultiple",
        "StrideAEqual",
        "StrideBEqual",
        "StrideCEqual",
        "StrideDEqual",
        "ProblemSizeEqual",
    ]
    index: int = Field(ge=-1, lt=18)  # a tensor index (-1: the bound index), model.logic.MAX_TENSOR_INDICES
    value: int


class SizeRange(StrictModel):
    min: int
    max: int


class SizeRangePredicate(StrictModel):
    type: Literal["SizeInRange"]
    index: int
    value: SizeRange


class BufferLoadLimits(StrictModel):
    DUorMT0: int
    DUorMT1: int
    ShiftPtrElemA: int
    ShiftPtrElemB: int


class BufferLoadPredicate(StrictModel):
    type: Literal["BufferLoadOffsetLimitCheck"]
    value: BufferLoadLimits


class CompoundPredicate(StrictModel):
    """``And`` / ``Or`` over a list of predicates."""

    type: Literal["And", "Or"]
    value: list[Predicate]


class WrapperPredicate(StrictModel):
    """``Not`` and ``AMDGPU``: one nested predicate."""

    type: Literal["Not", "AMDGPU"]
    value: Predicate


class UnmodelledPredicate(StrictModel):
    """A predicate whose ``type`` tensilekit does not model (a newer runtime's, or a misspelling).

    The file still loads: the predicate is kept as written (every key, for a byte-exact round
    trip), and only the solutions or rows carrying it are affected — selection reports "predicate
    type 'X' is not modelled" for them instead of guessing whether it holds, and ``validate``
    warns. (A hipBLASLt runtime that does not know the type refuses the whole library:
    ``Serialization/Base.hpp`` ``SubclassMappingTraits`` "Unknown subclass type".)"""

    model_config = ConfigDict(
        strict=False,
        extra="allow",
        populate_by_name=True,
        frozen=True,
        # in the JSON Schema, only a type no other predicate class names (so ``oneOf`` holds)
        json_schema_extra=lambda schema: schema["properties"]["type"].update({"not": {"enum": sorted(_CLASS_OF_TYPE)}}),
    )

    type: str


_UNMODELLED = "Unmodelled"


def _predicate_tag(data: Any) -> str | None:
    """The union member for a raw or model predicate: its shape class by ``type`` name,
    :class:`UnmodelledPredicate` for a type name no class lists, None (an error) without one."""
    name = data.get("type") if isinstance(data, dict) else getattr(data, "type", None)
    if not isinstance(name, str):
        return None
    return _CLASS_OF_TYPE.get(name, _UNMODELLED)


def predicate_shape(data: Any) -> str | None:
    """The shape tag for a raw or model predicate, None when the type is unknown."""
    name = data.get("type") if isinstance(data, dict) else getattr(data, "type", None)
    return PREDICATE_SHAPES.get(name) if isinstance(name, str) else None


PredicateModel = Union[
    FlagPredicate,
    BoolPredicate,
    IntPredicate,
    IntOrBoolPredicate,
    NumberPredicate,
    StringPredicate,
    ScaleABPredicate,
    StringListPredicate,
    IndexedPredicate,
    SizeRangePredicate,
    BufferLoadPredicate,
    WorkspaceCheckPredicate,
    IntListPredicate,
    IntPairPredicate,
    MinKPredicate,
    CompoundPredicate,
    WrapperPredicate,
    UnmodelledPredicate,
]
"""Any predicate model class (without the discriminator, for isinstance-style annotations)."""

_MODELLED_CLASSES: tuple[type[StrictModel], ...] = tuple(
    cls for cls in get_args(PredicateModel) if cls is not UnmodelledPredicate
)
_CLASS_OF_TYPE: dict[str, str] = {
    name: cls.__name__ for cls in _MODELLED_CLASSES for name in get_args(cls.model_fields["type"].annotation)
}
"""Predicate ``type`` name → the class that models it (from each class's ``type`` literal)."""

Predicate = Annotated[
    Union[
        Annotated[FlagPredicate, Tag("FlagPredicate")],
        Annotated[BoolPredicate, Tag("BoolPredicate")],
        Annotated[IntPredicate, Tag("IntPredicate")],
        Annotated[IntOrBoolPredicate, Tag("IntOrBoolPredicate")],
        Annotated[NumberPredicate, Tag("NumberPredicate")],
        Annotated[StringPredicate, Tag("StringPredicate")],
        Annotated[ScaleABPredicate, Tag("ScaleABPredicate")],
        Annotated[StringListPredicate, Tag("StringListPredicate")],
        Annotated[IndexedPredicate, Tag("IndexedPredicate")],
        Annotated[SizeRangePredicate, Tag("SizeRangePredicate")],
        Annotated[BufferLoadPredicate, Tag("BufferLoadPredicate")],
        Annotated[WorkspaceCheckPredicate, Tag("WorkspaceCheckPredicate")],
        Annotated[IntListPredicate, Tag("IntListPredicate")],
        Annotated[IntPairPredicate, Tag("IntPairPredicate")],
        Annotated[MinKPredicate, Tag("MinKPredicate")],
        Annotated[CompoundPredicate, Tag("CompoundPredicate")],
        Annotated[WrapperPredicate, Tag("WrapperPredicate")],
        Annotated[UnmodelledPredicate, Tag(_UNMODELLED)],
    ],
    Discriminator(_predicate_tag),
]
"""Any Tensile predicate; validated against the shape its ``type`` names, an unknown ``type`` as
an :class:`UnmodelledPredicate`."""

CompoundPredicate.model_rebuild()
WrapperPredicate.model_rebuild()


def unmodelled_types(predicate: Any) -> list[str]:
    """The ``type`` names of the :class:`UnmodelledPredicate` operands in ``predicate`` (nested in
    ``And`` / ``Or`` / ``Not`` / ``AMDGPU``), in file order."""
    if isinstance(predicate, UnmodelledPredicate):
        return [predicate.type]
    if isinstance(predicate, CompoundPredicate):
        return [name for operand in predicate.value for name in unmodelled_types(operand)]
    if isinstance(predicate, WrapperPredicate):
        return unmodelled_types(predicate.value)
    return []


def bool_scale_ab(predicate: Any) -> bool:
    """Whether ``predicate`` holds a :class:`ScaleABPredicate` whose value is a bool (nested in
    ``And`` / ``Or`` / ``Not`` / ``AMDGPU``): the pre-2025 logic form, which the runtimes read as a
    string (see :func:`tensilekit.model.checks.msgpack_load_findings`)."""
    if isinstance(predicate, ScaleABPredicate):
        return isinstance(predicate.value, bool)
    if isinstance(predicate, CompoundPredicate):
        return any(bool_scale_ab(operand) for operand in predicate.value)
    if isinstance(predicate, WrapperPredicate):
        return bool_scale_ab(predicate.value)
    return False


_PREDICATE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Predicate)
_INTERNED: dict[bytes | str, Any] = {}
_INTERN_LIMIT = 100_000


def intern_predicate(raw: Any) -> Any:
    """Validated, shared predicate models for repeated raw predicates (a master repeats the same
    few hundred predicates across tens of thousands of solutions). Anything that does not
    validate is returned unchanged so the caller's validation reports it with its location.

    The key is the raw predicate packed as msgpack (its ``repr`` when it holds something msgpack
    cannot pack): for decoded YAML/msgpack data (dicts, lists, str, int, float, bool, None) equal
    bytes mean equal values — ``1``, ``1.0`` and ``True`` pack apart — and packing is one C call,
    a tenth of the cost of building a tuple key in Python."""
    if not isinstance(raw, dict):
        return raw
    try:
        key: bytes | str = msgpack.packb(raw)
    except (TypeError, ValueError, OverflowError):
        key = repr(raw)
    cached = _INTERNED.get(key)
    if cached is not None:
        return cached
    kind = raw.get("type")
    if kind in ("And", "Or") and len(raw) == 2 and isinstance(raw.get("value"), list):
        children = [intern_predicate(child) for child in raw["value"]]
        if not all(isinstance(child, BaseModel) for child in children):
            return raw  # a child did not validate (or is no mapping): let validation report it
        cached = CompoundPredicate.model_construct(type=kind, value=children)
    else:
        try:
            cached = _PREDICATE_ADAPTER.validate_python(raw)
        except ValidationError:
            return raw
    if len(_INTERNED) < _INTERN_LIMIT:
        _INTERNED[key] = cached
    return cached


InternedPredicate = Annotated[Predicate, BeforeValidator(intern_predicate)]
"""A predicate field whose repeated values share one validated (frozen) model."""

TRUE_PREDICATE: dict[str, Any] = {"type": "TruePred"}

__all__ = [
    "PREDICATE_SHAPES",
    "TRUE_PREDICATE",
    "BoolPredicate",
    "BufferLoadLimits",
    "BufferLoadPredicate",
    "CompoundPredicate",
    "FlagPredicate",
    "IndexedPredicate",
    "IntOrBoolPredicate",
    "IntPredicate",
    "NumberPredicate",
    "Predicate",
    "PredicateModel",
    "SizeRange",
    "SizeRangePredicate",
    "StringListPredicate",
    "StringPredicate",
    "ScaleABPredicate",
    "IntListPredicate",
    "IntPairPredicate",
    "MinKPredicate",
    "UnmodelledPredicate",
    "WorkspaceCheckPredicate",
    "WorkspaceElementSizes",
    "InternedPredicate",
    "WrapperPredicate",
    "bool_scale_ab",
    "intern_predicate",
    "predicate_shape",
    "unmodelled_types",
]

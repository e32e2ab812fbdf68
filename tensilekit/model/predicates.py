"""Predicate models: a discriminated union on ``type``, one class per value shape.

Tensile serialises every predicate as ``{type: <Name>[, index: i][, value: v]}``. The names are
grouped here by the shape of ``value`` (none, bool, int, indexed int, string, …) so each group is
one strictly typed class; :data:`PREDICATE_SHAPES` is the single table from type name to shape.
An unknown ``type`` is an error (see :func:`predicate_shape`), never a silent pass.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field

from tensilekit.model.common import StrictModel

# type name -> shape tag. Sources: Tensile ``ContractionProblemPredicates.hpp``,
# ``AMDGPUPredicates.hpp``, ``TaskPredicates.hpp`` and the tensilelite (hipBLASLt) variants.
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
    "IsAPU": "intbool",
    "IsXPU": "intbool",
    # row markers / metric tags
    "EqualityMatching": "flag",
    "FreeSizeMatching": "flag",
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
    "WorkspaceCheck": "flag",
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
    "TypesEqual": "stringlist",
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
    "GlobalSplitUCheckMinK": "int",
}


class FlagPredicate(StrictModel):
    """A predicate without a value (``TruePred``, ``EqualityMatching``, ``WorkspaceCheck``, …)."""

    type: Literal[
        "TruePred",
        "FalsePred",
        "EqualityMatching",
        "FreeSizeMatching",
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
        "WorkspaceCheck",
    ]


class BoolPredicate(StrictModel):
    type: Literal[
        "HighPrecisionAccumulate",
        "StridedBatched",
        "GroupedGemm",
        "StochasticRounding",
        "DeterministicMode",
    ]
    value: bool


class IntPredicate(StrictModel):
    type: Literal[
        "CUCount",
        "LeadingFree0SizesGreaterOrEqual",
        "LeadingFree1SizesGreaterOrEqual",
        "MaxProblemSizeGreaterThan",
        "BufferStoreOffsetLimitCheck",
        "GlobalSplitUCheckMinK",
    ]
    value: int


class IntOrBoolPredicate(StrictModel):
    """``IsAPU``-style hardware flags, written as 0/1 or false/true."""

    type: Literal["IsAPU", "IsXPU"]
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
    ]
    value: str


class StringListPredicate(StrictModel):
    type: Literal["TypesEqual"]
    value: list[str]


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
    ]
    index: int
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


def predicate_shape(data: Any) -> str | None:
    """The shape tag for a raw or model predicate, None when the type is unknown."""
    name = data.get("type") if isinstance(data, dict) else getattr(data, "type", None)
    return PREDICATE_SHAPES.get(name) if isinstance(name, str) else None


Predicate = Annotated[
    Union[
        FlagPredicate,
        BoolPredicate,
        IntPredicate,
        IntOrBoolPredicate,
        NumberPredicate,
        StringPredicate,
        StringListPredicate,
        IndexedPredicate,
        SizeRangePredicate,
        BufferLoadPredicate,
        CompoundPredicate,
        WrapperPredicate,
    ],
    Field(discriminator="type"),
]
"""Any Tensile predicate; validated against the shape its ``type`` names (discriminated in Rust)."""

CompoundPredicate.model_rebuild()
WrapperPredicate.model_rebuild()

TRUE_PREDICATE: dict[str, Any] = {"type": "TruePred"}

PredicateModel = Union[
    FlagPredicate,
    BoolPredicate,
    IntPredicate,
    IntOrBoolPredicate,
    NumberPredicate,
    StringPredicate,
    StringListPredicate,
    IndexedPredicate,
    SizeRangePredicate,
    BufferLoadPredicate,
    CompoundPredicate,
    WrapperPredicate,
]

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
    "WrapperPredicate",
    "predicate_shape",
]

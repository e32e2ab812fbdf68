"""tensilelite's (hipBLASLt 7d9fb683, tensilelite 4.33.0) parameter tables, as its Python defines them.

Ported from ``/work/shared/amd/tensilelite-7d9fb68/Tensile``: ``Common.py`` (``validParameters``
478-1135, ``defaultBenchmarkCommonParameters`` 1147-1254 → ``defaultSolution``, ``defaultProblemType``
1260-1330, ``defaultInternalSupportParams`` 327-339, ``HPATypes`` 469, ``validGEMMTypes`` 450,
``internalParameters`` 321), ``Activation.py`` (``ActivationType.lookup`` 138-178) and
``TensileInstructions/Base.py`` (``_initArchCaps`` 318-330). The assembler capabilities are the
ROCm 6.4 cache ``../shared/amd/build-master`` answers with (Tensile a164ed70 ``AsmCaps.py``), for
the keys tensilelite's solution derivation reads. The Tensile tables live in
:mod:`tensilekit.model.tensile_parameters`; nothing here is shared with them on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from tensilekit.model.tensile_parameters import TENSILELITE_DATA_TYPE_BY_CODE, DataTypeInfo

TENSILELITE_COMMIT: Final = "7d9fb683db25941d38c5f89749a2c26acc493992"
TENSILELITE_VERSION: Final = "4.33.0"

#: ``validParameters`` keys, in Common.py's order (the ones min-naming may put in a name).
VALID_PARAMETERS: Final[frozenset[str]] = frozenset(
    (
        "WaveSeparateGlobalReadA", "WaveSeparateGlobalReadB", "UnrollLoopSwapGlobalReadOrder",
        "PrefetchGlobalRead", "PrefetchLocalRead", "ClusterLocalRead", "1LDSBuffer", "GlobalSplitU",
        "GlobalSplitUAlgorithm", "SuppressNoLoadLoop", "ExpandPointerSwap", "ScheduleGlobalRead",
        "ScheduleLocalWrite", "ScheduleIterAlg", "GlobalReadPerMfma", "LocalWritePerMfma", "InterleaveAlpha",
        "OptNoLoadLoop", "BufferLoad", "BufferStore", "DirectToVgprA", "DirectToVgprB",
        "DirectToVgprSparseMetadata", "DirectToLds", "UseInstOffsetForGRO", "UseSgprForGRO", "Use64bShadowLimit",
        "AssertSummationElementMultiple", "AssertFree0ElementMultiple", "AssertFree1ElementMultiple",
        "AssertAIGreaterThanEqual", "AssertAILessThanEqual", "StaggerU", "StaggerUStride", "StaggerUMapping",
        "GlobalSplitUCoalesced", "GlobalSplitUWorkGroupMappingRoundRobin", "MagicDivAlg", "WorkGroupMapping",
        "WorkGroupMappingXCC", "WorkGroupMappingXCCGroup", "MaxOccupancy", "WorkGroup", "ThreadTile", "MacroTile",
        "WavefrontSize", "MatrixInstruction", "StoreRemapVectorWidth", "SourceSwap", "StorePriorityOpt",
        "NumElementsPerBatchStore", "StoreSyncOpt", "GroupLoadStore", "MIArchVgpr", "StreamK", "StreamKAtomic",
        "StreamKXCCMapping", "DebugStreamK", "GlobalReadVectorWidthA", "GlobalReadVectorWidthB",
        "LocalReadVectorWidth", "VectorWidthA", "VectorWidthB", "VectorStore", "StoreVectorWidth",
        "NumLoadsCoalescedA", "NumLoadsCoalescedB", "DepthU", "LdsPadA", "LdsPadB", "LdsPadMetadata",
        "LdsBlockSizePerPadA", "LdsBlockSizePerPadB", "LdsBlockSizePerPadMetadata", "TransposeLDS", "NonTemporalE",
        "NonTemporalD", "NonTemporalC", "NonTemporalA", "NonTemporalB", "NonTemporalWS", "NonTemporalMetadata",
        "NonTemporal", "InnerUnroll", "PreloadKernArgs", "KernelLanguage", "ISA", "CustomKernelName", "NoReject",
        "MinVgprNumber", "MaxVgprNumber", "TotalVgprNumber", "ActivationFused", "ActivationFuncCall",
        "ActivationAlt", "WorkGroupReduction", "Sparse", "ConvertAfterDS", "ForceDisableShadowInit",
    )
)  # fmt: skip

#: ``defaultSolution``: (key, default) in ``defaultBenchmarkCommonParameters`` order — the order
#: ``Solution.__init__`` puts them into the state.
DEFAULT_SOLUTION: Final[tuple[tuple[str, Any], ...]] = (
    ("InnerUnroll", 1), ("KernelLanguage", "Assembly"), ("LdsPadA", -1), ("LdsPadB", -1), ("LdsPadMetadata", 0),
    ("LdsBlockSizePerPadA", -1), ("LdsBlockSizePerPadB", -1), ("LdsBlockSizePerPadMetadata", 0),
    ("TransposeLDS", -1), ("MaxOccupancy", 40), ("VectorWidthA", -1), ("VectorWidthB", -1), ("VectorStore", -1),
    ("StoreVectorWidth", -1), ("GlobalReadVectorWidthA", -1), ("GlobalReadVectorWidthB", -1),
    ("LocalReadVectorWidth", -1), ("WaveSeparateGlobalReadA", 0), ("WaveSeparateGlobalReadB", 0),
    ("WaveSeparateGlobalReadMetadata", 0), ("UnrollLoopSwapGlobalReadOrder", 0), ("PrefetchGlobalRead", 1),
    ("PrefetchLocalRead", 1), ("ClusterLocalRead", 1), ("SuppressNoLoadLoop", False), ("ExpandPointerSwap", True),
    ("ScheduleGlobalRead", 1), ("ScheduleLocalWrite", 1), ("ScheduleIterAlg", 3), ("GlobalReadPerMfma", 1),
    ("LocalWritePerMfma", -1), ("InterleaveAlpha", 0), ("OptNoLoadLoop", 1), ("BufferLoad", True),
    ("BufferStore", True), ("DirectToVgprA", False), ("DirectToVgprB", False), ("DirectToVgprSparseMetadata", False),
    ("DirectToLds", False), ("UseSgprForGRO", -1), ("UseInstOffsetForGRO", 0), ("AssertSummationElementMultiple", 1),
    ("AssertFree0ElementMultiple", 1), ("AssertFree1ElementMultiple", 1), ("AssertAIGreaterThanEqual", -1),
    ("AssertAILessThanEqual", -1), ("StaggerU", 32), ("StaggerUStride", 256), ("StaggerUMapping", 0),
    ("MagicDivAlg", 2), ("GlobalSplitU", 1), ("GlobalSplitUAlgorithm", "MultipleBuffer"),
    ("GlobalSplitUCoalesced", False), ("GlobalSplitUWorkGroupMappingRoundRobin", False), ("Use64bShadowLimit", 1),
    ("NumLoadsCoalescedA", 1), ("NumLoadsCoalescedB", 1), ("WorkGroup", [16, 16, 1]), ("WorkGroupMapping", 8),
    ("WorkGroupMappingXCC", 1), ("WorkGroupMappingXCCGroup", -1), ("ThreadTile", [4, 4]), ("WavefrontSize", 64),
    ("MatrixInstruction", []), ("1LDSBuffer", 0), ("DepthU", 16), ("NonTemporalE", 0), ("NonTemporalD", 0),
    ("NonTemporalC", 0), ("NonTemporalA", 0), ("NonTemporalB", 0), ("NonTemporalWS", 0), ("NonTemporalMetadata", 0),
    ("NonTemporal", -1), ("PreloadKernArgs", True), ("CustomKernelName", ""), ("NoReject", False),
    ("MinVgprNumber", 0), ("MaxVgprNumber", 256), ("TotalVgprNumber", 512), ("StoreRemapVectorWidth", 0),
    ("SourceSwap", False), ("StorePriorityOpt", False), ("NumElementsPerBatchStore", 0), ("StoreSyncOpt", 0),
    ("GroupLoadStore", False), ("MIArchVgpr", False), ("StreamK", 0), ("StreamKAtomic", 0), ("StreamKXCCMapping", 0),
    ("DebugStreamK", 0), ("ActivationFused", True), ("ActivationFuncCall", True), ("ActivationAlt", False),
    ("WorkGroupReduction", False), ("ConvertAfterDS", False), ("ForceDisableShadowInit", False),
)  # fmt: skip

#: ``defaultProblemType`` (codes are tensilelite ``DataType`` values).
DEFAULT_PROBLEM_TYPE: Final[tuple[tuple[str, Any], ...]] = (
    ("OperationType", "GEMM"), ("DataType", 0), ("DataTypeA", 0), ("DataTypeB", 0), ("DataTypeE", 0),
    ("DataTypeAmaxD", 0), ("DestDataType", 0), ("ComputeDataType", 0), ("F32XdlMathOp", 0), ("UseBeta", True),
    ("UseE", False), ("Gradient", False), ("UseBias", 0), ("BiasSrc", "D"), ("UseScaleAB", ""),
    ("UseScaleCD", False), ("UseScaleAlphaVec", 0), ("HighPrecisionAccumulate", False),
    ("SilentHighPrecisionAccumulate", False), ("Sparse", 0), ("ComplexConjugateA", False),
    ("ComplexConjugateB", False), ("StochasticRounding", False), ("TransposeA", False), ("TransposeB", True),
    ("Batched", False), ("StridedBatched", True), ("GroupedGemm", False), ("IndexAssignmentsA", [0, 2]),
    ("IndexAssignmentsB", [1, 2]), ("NumIndicesC", 2), ("UseInitialStridesAB", False),
    ("UseInitialStridesCD", False), ("AllowNoFreeDims", False), ("SetConstStrideA", []), ("SetConstStrideB", []),
    ("SetConstStrideBias", []), ("MirrorDimsA", []), ("MirrorDimsB", []), ("MirrorDimsMetadata", []),
    ("NumIndicesLD", 4), ("IndexAssignmentsLD", [3, 4, 5, 6]), ("TileAwareSelection", False),
    ("Activation", False), ("ActivationNoGuard", False), ("OutputAmaxD", False), ("SupportUserArgs", True),
)  # fmt: skip

#: ``defaultInternalSupportParams`` (Common.py:327), in order.
DEFAULT_INTERNAL_SUPPORT_PARAMS: Final[tuple[tuple[str, Any], ...]] = (
    ("KernArgsVersion", 2),
    ("SupportUserGSU", True),
    ("SupportCustomWGM", True),
    ("SupportCustomStaggerU", True),
    ("UseUniversalArgs", True),
)

#: ``internalParameters["GlobalSplitUPGR"]`` and ``globalParameters["MinKForGSU"]``.
GLOBAL_SPLIT_U_PGR: Final = 16
MIN_K_FOR_GSU: Final = 32

#: ``HPATypes`` (Common.py:469): (A/B, C/D, compute) triples whose names spell out all three types.
HPA_TYPES: Final[frozenset[tuple[str, str, str]]] = frozenset(
    {
        ("H", "S", "S"), ("H", "H", "S"), ("B", "B", "S"), ("B", "S", "S"), ("B", "H", "S"), ("I8", "I", "I"),
        ("4xi8", "I", "I"), ("I8", "I", "S"), ("I8", "I8", "S"), ("I8", "H", "S"), ("I8", "B", "S"),
        ("F8", "S", "S"), ("B8", "S", "S"), ("F8B8", "S", "S"), ("B8F8", "S", "S"), ("F8", "H", "S"),
        ("B8", "H", "S"), ("F8B8", "H", "S"), ("B8F8", "H", "S"), ("H", "F8", "S"), ("F8", "B", "S"),
        ("F8B8", "B", "S"), ("F8", "F8", "S"), ("B8", "B8", "S"), ("F8B8", "B8", "S"), ("B8F8", "B8", "S"),
        ("F8", "B8", "S"), ("B8", "F8", "S"), ("F8B8", "F8", "S"), ("B8F8", "F8", "S"),
    }
)  # fmt: skip

#: ``validGEMMTypes`` (Common.py:450): the (A/B, C/D, compute) triples ``checkIfSupportedGEMMType`` accepts.
VALID_GEMM_TYPES: Final[frozenset[tuple[str, str, str]]] = frozenset(
    {
        ("H", "H", "H"), ("S", "S", "S"), ("D", "D", "D"), ("C", "C", "C"), ("Z", "Z", "Z"), ("H", "H", "S"),
        ("H", "S", "S"), ("B", "B", "S"), ("B", "S", "S"), ("B", "H", "S"), ("I8", "I", "I"), ("4xi8", "I", "I"),
        ("I8", "I8", "I"), ("I8", "I", "S"), ("I8", "I8", "S"), ("I8", "H", "S"), ("I8", "B", "S"),
        ("F8", "S", "S"), ("B8", "S", "S"), ("F8B8", "S", "S"), ("B8F8", "S", "S"), ("F8", "H", "S"),
        ("B8", "H", "S"), ("F8B8", "H", "S"), ("B8F8", "H", "S"), ("B8", "B", "S"), ("H", "F8", "S"),
        ("F8", "B", "S"), ("F8B8", "B", "S"), ("B8F8", "B", "S"), ("F8", "F8", "S"), ("B8", "B8", "S"),
        ("F8B8", "B8", "S"), ("B8F8", "B8", "S"), ("F8", "B8", "S"), ("B8", "F8", "S"), ("F8B8", "F8", "S"),
        ("B8F8", "F8", "S"),
    }
)  # fmt: skip

#: ``ActivationType.lookup`` (Activation.py:138): name → (isGradient, extra args, type support
#: flags Half/Single/Double/BFloat16/Int8/Int16/Int32, supported-by bits HIPBLASLT=1 TENSILE=2).
ACTIVATIONS: Final[tuple[tuple[str, bool, int, tuple[bool, ...], int], ...]] = (
    ("none", False, 0, (True, True, True, True, True, True, True), 3),
    ("abs", False, 0, (True, True, True, True, False, False, True), 2),
    ("clippedrelu", False, 2, (True, True, True, False, False, False, True), 2),
    ("gelu", False, 0, (True, True, False, False, False, False, False), 3),
    ("leakyrelu", False, 1, (True, True, True, False, False, False, True), 2),
    ("relu", False, 0, (True, True, True, False, False, False, True), 3),
    ("sigmoid", False, 0, (True, True, False, False, False, False, False), 2),
    ("tanh", False, 2, (True, True, False, False, False, False, False), 2),
    ("dgelu", True, 0, (False, True, False, False, False, False, False), 3),
    ("geluscaling", False, 1, (True, True, False, False, False, False, False), 2),
    ("silu", False, 0, (True, True, False, False, False, False, False), 2),
    ("hipblaslt_all", False, 0, (False,) * 7, 1),
    ("all", False, 0, (False,) * 7, 3),
)  # fmt: skip

#: ``ActivationTypeRegister.typeAvailable``'s columns, by tensilelite data-type code.
ACTIVATION_TYPE_COLUMN: Final[Mapping[int, int]] = MappingProxyType({4: 0, 0: 1, 1: 2, 7: 3, 8: 4, 6: 6})

#: Assembler capabilities tensilelite's derivation reads, from the ROCm 6.4 cache (ISA → flags).
#: (SupportedISA, HasMFMA, HasWMMA, HasWMMA_V1, HasWMMA_V2, HasNTModifier)
_CAPS: Final[dict[tuple[int, int, int], tuple[bool, bool, bool, bool, bool, bool]]] = {
    (0, 0, 0): (False, False, False, False, False, False),
    (8, 0, 3): (True, False, False, False, False, False),
    (9, 0, 0): (True, False, False, False, False, False),
    (9, 0, 6): (True, False, False, False, False, False),
    (9, 0, 8): (True, True, False, False, False, False),
    (9, 0, 10): (True, True, False, False, False, False),
    (9, 4, 0): (True, True, False, False, False, True),
    (9, 4, 1): (True, True, False, False, False, True),
    (9, 4, 2): (True, True, False, False, False, True),
    (10, 1, 0): (True, False, False, False, False, False),
    (10, 1, 1): (True, False, False, False, False, False),
    (10, 1, 2): (True, False, False, False, False, False),
    (10, 3, 0): (True, False, False, False, False, False),
    (10, 3, 1): (True, False, False, False, False, False),
    (11, 0, 0): (True, False, True, True, False, False),
    (11, 0, 1): (True, False, True, True, False, False),
    (11, 0, 2): (True, False, True, True, False, False),
    (11, 5, 1): (True, False, True, True, False, False),
    # gfx12 is known to the ROCm 6.4 assembler, but its cache entry has no WMMA
    (12, 0, 0): (True, False, False, False, False, False),
    (12, 0, 1): (True, False, False, False, False, False),
}
_CAP_NAMES: Final = ("SupportedISA", "HasMFMA", "HasWMMA", "HasWMMA_V1", "HasWMMA_V2", "HasNTModifier")


def asm_caps(isa: tuple[int, int, int]) -> dict[str, bool]:
    """``globalParameters["AsmCaps"][isa]`` for the keys the derivation reads (unknown ISA: none)."""
    return dict(zip(_CAP_NAMES, _CAPS.get(isa, _CAPS[(0, 0, 0)]), strict=True))


def arch_caps(isa: tuple[int, int, int]) -> dict[str, bool]:
    """``_initArchCaps`` (TensileInstructions/Base.py:318-330) for the keys the derivation reads."""
    return {
        "HasEccHalf": isa in ((9, 0, 6), (9, 0, 8), (9, 0, 10), (9, 4, 0), (9, 4, 1), (9, 4, 2)),
        "HasWave32": isa[0] in (10, 11, 12),
        "HasAccCD": isa in ((9, 0, 10), (9, 4, 0), (9, 4, 1), (9, 4, 2)),
    }


_LITE_NAMES: Final = {0: "single", 1: "double", 2: "complexsingle", 3: "complexdouble"}
#: ``DataType.lookup`` (DataType.py:264-270,419-432 @7d9fb68): every type's char, name, enum and
#: libEnum, lower-cased -> the type. A custom kernel's config spells types so (``DataType: b``).
_LITE_BY_TEXT: Final[Mapping[str, DataTypeInfo]] = MappingProxyType(
    {
        text.lower(): info
        for info in TENSILELITE_DATA_TYPE_BY_CODE.values()
        for text in (info.char, info.enum, _LITE_NAMES.get(info.code, info.enum), f"tensileDataType{info.enum}")
    }
)


def lite_type(code: Any) -> DataTypeInfo:
    """A tensilelite ``DataType`` from its integer code, or from any spelling tensilelite's
    ``DataType(str)`` accepts (case-insensitive char, name, enum, libEnum); KeyError for an unknown one."""
    if isinstance(code, DataTypeInfo):
        return code
    if isinstance(code, str):
        return _LITE_BY_TEXT[code.lower()]
    if isinstance(code, bool) or not isinstance(code, int):
        raise KeyError(code)
    return TENSILELITE_DATA_TYPE_BY_CODE[code]


__all__ = [
    "ACTIVATIONS",
    "ACTIVATION_TYPE_COLUMN",
    "DEFAULT_INTERNAL_SUPPORT_PARAMS",
    "DEFAULT_PROBLEM_TYPE",
    "DEFAULT_SOLUTION",
    "GLOBAL_SPLIT_U_PGR",
    "HPA_TYPES",
    "MIN_K_FOR_GSU",
    "TENSILELITE_COMMIT",
    "TENSILELITE_VERSION",
    "VALID_GEMM_TYPES",
    "VALID_PARAMETERS",
    "arch_caps",
    "asm_caps",
    "lite_type",
]

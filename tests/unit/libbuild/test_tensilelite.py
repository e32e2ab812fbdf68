"""Unit tests for the tensilelite (hipBLASLt 7d9fb683) build: tree, indices, predicates, names, lazy files, errors.

The logic files here are written by hand (a gfx90a HHS_BH MFMA kernel); the byte-for-byte
comparisons with AMD's own build are in tests/conformance/test_build_master_hipblaslt.py and
tests/property/test_build_master_hipblaslt_props.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tensilekit.errors import InvalidValue, LibraryFormatError, TensilekitError
from tensilekit.libbuild import build_master_libraries, build_master_tree, build_tensilelite_libraries
from tensilekit.model.derive_tensilelite import solution_state
from tensilekit.model.naming_tensilelite import problem_type_name

HHS_NN: dict[str, Any] = {
    "OperationType": "GEMM",
    "DataType": 4,
    "DestDataType": 4,
    "ComputeDataType": 0,
    "HighPrecisionAccumulate": True,
    "TransposeA": False,
    "TransposeB": False,
    "Batched": True,
    "UseBeta": True,
    "UseBias": 1,
    "BiasDataTypeList": [0, 4],
    "Activation": True,
    "ActivationType": "hipblaslt_all",
    "ActivationComputeDataType": 0,
    "UseScaleAlphaVec": 1,
    "SupportUserArgs": True,
    # stored derived index fields (the file's ProblemType carries them; the library rows read them)
    "IndexAssignmentsA": [0, 3, 2],
    "IndexAssignmentsB": [3, 1, 2],
    "NumIndicesC": 3,
    "TotalIndices": 4,
    "IndicesFree": [0, 1],
    "IndicesBatch": [2],
    "IndicesSummation": [3],
}


def lite_solution(index: int | None, **overrides: Any) -> dict[str, Any]:
    """A self-consistent gfx90a MFMA solution (MT64x64x32, MI16x16x16x1, 4 waves)."""
    sol: dict[str, Any] = {
        "ProblemType": copy.deepcopy(HHS_NN),
        "KernelLanguage": "Assembly",
        "MatrixInstruction": [16, 16, 16, 1],
        "MIBlock": [16, 16, 16, 1, 1, 1],
        "MIWaveGroup": [2, 2],
        "MIWaveTile": [2, 2],
        "MIInputPerThread": 4,
        "WorkGroup": [32, 8, 1],
        "ThreadTile": [1, 1],
        "DepthU": 32,
        "GlobalReadVectorWidthA": 8,
        "GlobalReadVectorWidthB": 8,
        "VectorWidthA": 1,
        "VectorWidthB": 1,
        "StoreVectorWidth": 4,
        "LocalReadVectorWidth": 8,
        "TransposeLDS": 1,
        "LdsPadA": 8,
        "LdsPadB": 8,
        "LdsBlockSizePerPadA": 256,
        "LdsBlockSizePerPadB": 256,
        "1LDSBuffer": 0,
        "PrefetchGlobalRead": 2,
        "PrefetchLocalRead": 1,
        "StaggerU": 32,
        "StaggerUStride": 256,
        "WorkGroupMapping": 8,
        "GlobalSplitU": 1,
        "StoreRemapVectorWidth": 0,
        "NumElementsPerBatchStore": 0,
        "UseSgprForGRO": 0,
        "InternalSupportParams": {"SupportUserGSU": True, "SupportCustomWGM": True, "SupportCustomStaggerU": True},
    }
    if index is not None:
        sol["SolutionIndex"] = index
    sol.update(overrides)
    return sol


def lite_logic(
    solutions: list[dict[str, Any]],
    table: list[Any] | None,
    *,
    library_type: str = "Equality",
    arch: Any = "gfx90a",
    index_order: list[int] | None = None,
) -> list[Any]:
    return [
        {"MinimumRequiredVersion": "4.33.0"},
        "aldebaran",
        arch,
        ["Device 0050"],
        copy.deepcopy(HHS_NN),
        copy.deepcopy(solutions),
        [0, 3, 1, 2] if index_order is None else index_order,
        copy.deepcopy(table),
        None,
        None,
        "DeviceEfficiency",
        library_type,
    ]


def _node_types(tree: dict[str, Any]) -> list[str]:
    out, node = [], tree["library"]
    while True:
        out.append(node["type"])
        if node["type"] == "ProblemMap":
            node = next(iter(node["map"].values()))
        elif "rows" in node:
            node = node["rows"][0]["library"]
        else:
            return out


def _selection(tree: dict[str, Any]) -> dict[str, Any]:
    node = tree["library"]
    while node["type"] in ("Hardware", "Problem", "ProblemMap"):
        node = next(iter(node["map"].values())) if node["type"] == "ProblemMap" else node["rows"][0]["library"]
    return node


def _preds(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record["problemPredicate"]["value"])


EQ_TABLE = [[[64, 1, 64, 128], [1, 9.0]], [[32, 1, 32, 64], [0, 5.0]]]
ONE = [[[32, 1, 32, 64], [0, 5.0]]]


def test_levels_indices_and_version() -> None:
    tree = build_master_tree([("a", lite_logic([lite_solution(0), lite_solution(1, DepthU=64)], EQ_TABLE))],
                             dialect="tensilelite")  # fmt: skip
    assert list(tree) == ["solutions", "library", "version"] and tree["version"] == "4.33.0"
    # Hardware, ProblemMap, perf metric, type predicates, EqualityMatching, Matching: no Fp16 levels
    assert _node_types(tree) == ["Hardware", "ProblemMap", "Problem", "Problem", "Problem", "Matching"]
    type_rows = next(iter(tree["library"]["rows"][0]["library"]["map"].values()))["rows"][0]["library"]["rows"]
    assert type_rows[0]["library"]["rows"][0]["predicate"] == {"type": "EqualityMatching"}
    assert [s["index"] for s in tree["solutions"]] == [0, 1]  # no ArchitectureIndexMap
    matching = _selection(tree)
    # index order [0, 3, 1, 2]: batch, bound, free B, free A; Equality and GridBased keep BatchSize
    assert matching["properties"][0] == {"type": "BatchSize", "index": 0}
    assert [p["type"] for p in matching["properties"]] == ["BatchSize", "FreeSizeB", "BoundSize", "FreeSizeA"]
    assert matching["table"] == [
        {"key": [32, 1, 32, 64], "index": 0, "speed": 5.0},
        {"key": [64, 1, 64, 128], "index": 1, "speed": 9.0},
    ]


def test_later_files_continue_after_the_first_files_indices() -> None:
    a = lite_logic([lite_solution(5), lite_solution(6, DepthU=64)], [[[8, 1, 8, 8], [0, 1.0]]])
    b = lite_logic([lite_solution(0, DepthU=64)], [[[16, 1, 16, 16], [0, 1.0]]], library_type="GridBased")
    tree = build_master_tree([("a", a), ("b", b)], dialect="tensilelite")
    assert [s["index"] for s in tree["solutions"]] == [5, 6, 7]
    rows = tree["library"]["rows"][0]["library"]["map"]["Contraction_l_Ailk_Bljk_Cijk_Dijk"]["rows"][0]["library"][
        "rows"
    ][0]["library"]["rows"]
    # same types: one type row, whose selection rows are Equality first, then the GridBased TruePred
    assert [r["predicate"]["type"] for r in rows] == ["EqualityMatching", "TruePred"]
    assert rows[1]["library"]["table"] == [{"key": [16, 1, 16, 16], "index": 7}]  # GridBased: no speed


def test_missing_and_duplicate_solution_indices_are_renumbered_upwards() -> None:
    sols = [lite_solution(3), lite_solution(3, DepthU=64), lite_solution(None, DepthU=128)]
    tree = build_master_tree([("a", lite_logic(sols, [[[8, 1, 8, 8], [0, 1.0]]]))], dialect="tensilelite")
    assert [s["index"] for s in tree["solutions"]] == [3, 4, 5]
    assert [s["libraryLogicIndex"] for s in tree["solutions"]] == [3, 3, -1]


def test_free_size_covers_every_solution() -> None:
    logic = lite_logic([lite_solution(0), lite_solution(1, DepthU=64)], None, library_type="FreeSize")
    tree = build_master_tree([("f", logic)], dialect="tensilelite")
    rows = tree["library"]["rows"][0]["library"]["map"]["Contraction_l_Ailk_Bljk_Cijk_Dijk"]["rows"][0]["library"][
        "rows"
    ][0]["library"]["rows"]
    assert rows == [
        {
            "predicate": {"type": "FreeSizeMatching"},
            "library": {"type": "FreeSize", "table": [{"index": 0}, {"index": 1}]},
        }
    ]


def test_problem_predicates_in_tensilelite_order() -> None:
    sol = lite_solution(0, AssertFree0ElementMultiple=8, GlobalSplitU=4, WorkGroupMappingXCC=-8)
    record = build_master_tree([("a", lite_logic([sol], ONE))], dialect="tensilelite")["solutions"][0]
    preds = _preds(record)
    assert [p["type"] for p in preds[:3]] == ["Free0SizeMultiple", "WorkspaceCheck", "OperationIdentifierEqual"]
    assert preds[0] == {"type": "Free0SizeMultiple", "index": 0, "value": 8}
    assert preds[1] == {"type": "WorkspaceCheck", "index": 0, "value": [4, 0, 4]}  # [elemC, elemBias, GSU]
    by_type = {p["type"]: p.get("value") for p in preds}
    assert by_type["TypesEqual"] == ["Half", "Half", "Half", "Half", "Half"]
    assert by_type["BiasDataTypeWhiteList"] == ["Float", "Half"]
    assert by_type["BiasSrcWhiteList"] == [3]
    assert by_type["ActivationEnumWhiteList"] == ["None", "Gelu", "Relu"]
    assert by_type["Activation"] == "Hipblaslt_all"
    assert by_type["UseScaleAB"] == ""
    assert by_type["GlobalSplitUCheckMinK"] == [32, 4]
    assert "DeterministicMode" not in by_type  # GSU > 1 with MultipleBuffer accumulation
    assert by_type["WorkgroupMappingXCCCheck"] == [8, -1]  # abs(WorkGroupMappingXCC)
    assert by_type["BufferLoadOffsetLimitCheck"] == {
        "ShiftPtrElemB": 0,
        "ShiftPtrElemA": 0,
        "DUorMT1": 64,
        "DUorMT0": 32,
    }
    assert "taskPredicate" not in record
    assert record["internalArgsSupport"] == {
        "version": 2, "gsu": True, "wgm": True, "staggerU": True, "useUniversalArgs": True,
    }  # fmt: skip
    assert list(record) == [
        "name", "kernelName", "problemType", "hardwarePredicate", "problemPredicate", "sizeMapping",
        "internalArgsSupport", "debugKernel", "libraryLogicIndex", "index", "ideals", "linearModel",
    ]  # fmt: skip


def test_single_buffer_split_is_not_deterministic() -> None:
    sol = lite_solution(0, GlobalSplitU=4, GlobalSplitUAlgorithm="SingleBuffer")
    record = build_master_tree([("a", lite_logic([sol], ONE))], dialect="tensilelite")["solutions"][0]
    by_type = {p["type"]: p.get("value") for p in _preds(record)}
    assert by_type["DeterministicMode"] is False
    assert by_type["WorkspaceCheck"] == [4, 0, 1] and by_type["GlobalSplitUCheckMinK"] == [32, 4]
    assert record["sizeMapping"]["globalAccumulation"] == 1


def test_derivation_rules_reach_the_record() -> None:
    sol = lite_solution(0, PreloadKernArgs=True, ActivationFused=False, ActivationFuncCall=True, ExpandPointerSwap=1)
    state = solution_state(sol, isa=(9, 0, 10), cu_count=None)
    assert state["PreloadKernArgs"] == 0  # the build host's hipcc cannot preload kernel arguments
    assert state["ActivationFuncCall"] is False  # activation not fused
    assert state["ExpandPointerSwap"] == 0  # PGR 2 with half data
    assert state["_staggerStrideShift"] == 2  # ceil(log2(256 / (32 * 2)))
    assert list(state)[:3] == ["ProblemType", "InternalSupportParams", "InnerUnroll"]
    assert state["InternalSupportParams"] == {
        "KernArgsVersion": 2, "SupportUserGSU": True, "SupportCustomWGM": True, "SupportCustomStaggerU": True,
        "UseUniversalArgs": True,
    }  # fmt: skip
    mapping = build_master_tree([("a", lite_logic([sol], ONE))], dialect="tensilelite")["solutions"][0]["sizeMapping"]
    assert (mapping["macroTile"], mapping["waveNum"], mapping["staggerStrideShift"]) == ([64, 64, 1], 4, 2)
    assert mapping["globalAccumulation"] == 2 and mapping["workspaceSizePerElemC"] == 4


def test_a_rejected_kernel_keeps_its_stored_values() -> None:
    """gfx1200 has no MFMA/WMMA in the ROCm 6.4 cache: tensilelite rejects and stops before the stagger shift."""
    sol = lite_solution(0, _staggerStrideShift=7)
    state = solution_state(sol, isa=(12, 0, 0), cu_count=None)
    assert state["Valid"] is False and state["_staggerStrideShift"] == 7 and state["PreloadKernArgs"] is True
    assert state["WorkspaceCheck"] == [4, 0, 1]  # derived before the rejection


def test_names_follow_the_shared_min_naming_dict() -> None:
    sols = [lite_solution(0), lite_solution(1, DepthU=64, PrefetchGlobalRead=1)]
    first, second = build_master_tree([("a", lite_logic(sols, EQ_TABLE))], dialect="tensilelite")["solutions"]
    prefix = "Cijk_Ailk_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs_MT64x64x32_MI16x16x1_SN_"
    assert first["name"].startswith(prefix) and "_PGR2_" in first["name"] and "_GSU1_" in first["name"]
    # the first kernelName call marks StaggerU & co. required for every later name
    assert "_SU32_" not in first["name"] and "_SU32_" in second["name"] and "_WGMXCCGn1" in second["name"]
    assert "_GSU" not in first["kernelName"] and "_WGM" not in second["kernelName"]
    assert "_K1_" in first["name"]


def test_problem_type_names() -> None:
    state = solution_state(lite_solution(0), isa=(9, 0, 10), cu_count=None)
    assert problem_type_name(state["ProblemType"]) == "Cijk_Ailk_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs"
    # "Activation" present (even False) lets ActivationType through, as ProblemType.__init__ does
    pt = dict(HHS_NN, DataType=11, DataTypeA=11, DataTypeB=4, DestDataType=4, UseBias=0, Activation=False)
    mixed = solution_state(lite_solution(0, ProblemType=pt), isa=(9, 4, 2), cu_count=None)
    assert problem_type_name(mixed["ProblemType"]) == "Cijk_Ailk_Bljk_F8H_F8HS_BH_HAS_SAV_UserArgs"
    pt.pop("Activation")
    plain = solution_state(lite_solution(0, ProblemType=pt), isa=(9, 4, 2), cu_count=None)
    assert problem_type_name(plain["ProblemType"]) == "Cijk_Ailk_Bljk_F8H_F8HS_BH_SAV_UserArgs"


def test_tensilelite_type_codes_and_mixed_inputs() -> None:
    pt = dict(HHS_NN, DataType=4, DataTypeA=11, DataTypeB=4, UseBias=0, Activation=False)
    logic = lite_logic([lite_solution(0, ProblemType=pt)], ONE, arch="gfx942")
    logic[4] = copy.deepcopy(pt)
    record = build_master_tree([("m", logic)], dialect="tensilelite")["solutions"][0]
    types = record["problemType"]
    assert (types["aType"], types["bType"], types["cType"], types["computeInputType"]) == (
        "Float8",
        "Half",
        "Half",
        "Half",
    )


def test_lazy_layout_and_placeholder_names() -> None:
    a = lite_logic([lite_solution(0)], ONE)
    pt = dict(HHS_NN, UseBias=0, Activation=False, ActivationType="none", UseScaleAlphaVec=0)
    b = lite_logic([lite_solution(0, ProblemType=pt)], ONE)
    b[4] = copy.deepcopy(pt)
    files = build_master_libraries([("a", a), ("b", b)], dialect="tensilelite", lazy=True)
    plain = "TensileLibrary_HH_HH_UA_Type_HH_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
    bias = "TensileLibrary_HH_HH_HA_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
    assert list(files) == ["TensileLibrary_lazy_gfx90a", bias, plain]
    top = files["TensileLibrary_lazy_gfx90a"]
    assert top["solutions"] == [] and top["version"] == "4.33.0"
    rows = top["library"]["rows"][0]["library"]["map"]["Contraction_l_Ailk_Bljk_Cijk_Dijk"]["rows"][0]["library"][
        "rows"
    ]
    assert [r["library"]["value"] for r in rows] == [plain, bias]  # sorted by name length
    assert "version" not in files[bias] and [s["index"] for s in files[plain]["solutions"]] == [1]


def test_custom_kernels_take_their_config() -> None:
    sol = lite_solution(0, CustomKernelName="Custom_Kernel_gfx90a")
    logic = lite_logic([sol, lite_solution(1, DepthU=64)], EQ_TABLE)
    with pytest.raises(InvalidValue) as info:
        build_tensilelite_libraries([("c.yaml", logic)])
    assert info.value.location is not None and info.value.location.path == "[5][0].CustomKernelName"
    config = {"InternalSupportParams": {"KernArgsVersion": 0, "UseUniversalArgs": False}}
    tree = build_tensilelite_libraries([("c.yaml", logic)], custom_kernel_config=lambda name: config)[
        "TensileLibrary_gfx90a"
    ]
    custom = tree["solutions"][0]
    assert custom["name"] == custom["kernelName"] == "Custom_Kernel_gfx90a"
    assert custom["internalArgsSupport"]["version"] == 0 and custom["internalArgsSupport"]["staggerU"] is True
    # custom kernels take no part in min-naming: the other kernel alone decides it
    assert "_DU" not in tree["solutions"][1]["name"]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d.pop(), "[11]"),
        (lambda d: d[7].append([[1, 1, 1, 1], [9, 1.0]]), "[7][1][1][0]"),
        (lambda d: d[5][0].update(SolutionIndex="x"), "[5][0].SolutionIndex"),
        (lambda d: d[5][0]["ProblemType"].update(DataType=99), "[5][0].ProblemType.DataType"),
        (lambda d: d[5][0]["ProblemType"].update(HighPrecisionAccumulate=False), "[5][0].ProblemType"),
        (lambda d: d[4].pop("TotalIndices"), "[4].TotalIndices"),
    ],
)
def test_bad_input_names_file_and_position(mutate: Any, path: str) -> None:
    logic = lite_logic([lite_solution(0)], ONE)
    mutate(logic)
    with pytest.raises(LibraryFormatError) as info:
        build_tensilelite_libraries([("bad.yaml", logic)])
    assert isinstance(info.value, TensilekitError)
    assert info.value.location is not None and info.value.location.file == "bad.yaml"
    assert info.value.location.path == path


def test_transient_masters_may_keep_a_custom_kernels_stored_values() -> None:
    from tensilekit.model.derive_tensilelite import keep_stored_custom_kernels

    sol = lite_solution(0, CustomKernelName="Custom_Kernel_gfx90a")
    sol["InternalSupportParams"]["UseUniversalArgs"] = False
    tree = build_tensilelite_libraries(
        [("c.yaml", lite_logic([sol], ONE))], custom_kernel_config=keep_stored_custom_kernels
    )["TensileLibrary_gfx90a"]
    support = tree["solutions"][0]["internalArgsSupport"]
    assert support["version"] == 2 and support["useUniversalArgs"] is False


def test_lite_type_reads_every_spelling_tensilelites_data_type_accepts() -> None:
    """A custom kernel's config spells its types as text (``DataType: b`` in hipBLASLt's
    Custom_Cijk_Alik_Bljk_BBS_..._DTVA.s); tensilelite's ``DataType(str)`` looks the lower-cased
    text up among every type's char, name, enum and libEnum (DataType.py:264-270,419-432 @7d9fb68)."""
    from tensilekit.model.tensilelite_parameters import lite_type

    assert lite_type("b").code == lite_type("BFloat16").code == lite_type("bfloat16").code == 7
    assert lite_type("s").code == lite_type("single").code == lite_type("tensileDataTypeFloat").code == 0
    assert lite_type("f8").code == lite_type(11).code == 11
    assert lite_type("X").enum == "XFloat32"
    with pytest.raises(KeyError):
        lite_type("nope")


def test_direct_to_vgpr_is_derived_by_each_versions_rules() -> None:
    """DirectToVgprB on NN (``isDirectToVgprDoable``): 0.12.1 takes this kernel (MIWaveGroup [2, 2])
    and raises ASEM to DepthU, which its name and a BoundSizeMultiple predicate show; 7d9fb683
    rejects it (MIWaveGroup[0] must be 1) and stops deriving, so PreloadKernArgs keeps its stored value."""
    from tensilekit.model.derive_tensilelite import LITE_DERIVATION_0_12_1

    sol = lite_solution(0, DirectToVgprB=True, PreloadKernArgs=True)
    newer = solution_state(sol, isa=(9, 0, 10), cu_count=None, rules=LITE_DERIVATION_0_12_1)
    older = solution_state(sol, isa=(9, 0, 10), cu_count=None)
    assert newer["Valid"] and newer["AssertSummationElementMultiple"] == 32 and newer["PreloadKernArgs"] == 0
    assert older["Valid"] is False and older["AssertSummationElementMultiple"] == 1 and older["PreloadKernArgs"] is True
    plain = lite_solution(1, DepthU=64)
    files = [("a.yaml", lite_logic([sol, plain], EQ_TABLE))]
    tree = build_tensilelite_libraries(files, hipblaslt_version="0.12.1")["TensileLibrary_gfx90a"]
    record = next(r for r in tree["solutions"] if "_ASEM32_" in r["name"])
    assert {"index": -1, "type": "BoundSizeMultiple", "value": 32} in _preds(record)
    older_tree = build_tensilelite_libraries(files, hipblaslt_version="7d9fb683")["TensileLibrary_gfx90a"]
    assert not any("ASEM32" in r["name"] for r in older_tree["solutions"])


def test_streamk_on_other_data_types_stops_0121s_derivation_and_a_schedule_it_fails_on_is_refused() -> None:
    from tensilekit.model.derive_tensilelite import LITE_DERIVATION_0_12_1

    f8 = lite_solution(0, StreamK=3, PreloadKernArgs=True, MIWaveGroup=[2, 2])
    f8["ProblemType"] = {**f8["ProblemType"], "DataType": 11, "DestDataType": 4}
    newer = solution_state(f8, isa=(9, 4, 2), cu_count=None, rules=LITE_DERIVATION_0_12_1)
    assert newer["Valid"] is False and newer["PreloadKernArgs"] is True  # returned before the end
    half = solution_state(lite_solution(0, StreamK=3), isa=(9, 4, 2), cu_count=None, rules=LITE_DERIVATION_0_12_1)
    assert half["Valid"] is True
    schedule = lite_solution(0, StreamK=3, ScheduleLocalWrite=0)
    with pytest.raises(InvalidValue, match="ScheduleLocalWrite") as info:
        build_tensilelite_libraries([("s.yaml", lite_logic([schedule], ONE))], hipblaslt_version="0.12.1")
    assert info.value.location is not None and info.value.location.path == "[5][0].ScheduleLocalWrite"
    build_tensilelite_libraries([("s.yaml", lite_logic([schedule], ONE))], hipblaslt_version="7d9fb683")


def test_swizzled_tensors_are_named_and_predicated_by_0121() -> None:
    pt = {**HHS_NN, "TransposeA": True, "IndexAssignmentsA": [3, 0, 2], "SwizzleTensorA": True}
    sol = lite_solution(0, DirectToVgprA=True)
    sol["ProblemType"] = copy.deepcopy(pt)
    logic = lite_logic([sol], ONE)
    logic[4] = copy.deepcopy(pt)
    tree = build_tensilelite_libraries([("s.yaml", logic)], hipblaslt_version="0.12.1")["TensileLibrary_gfx90a"]
    record = tree["solutions"][0]
    assert "_HHS_STA_BH_" in record["name"] and record["problemType"]["swizzleTensorA"] is True
    assert {"type": "SwizzleTensorA", "value": True} in _preds(record)
    assert not any(p["type"] == "BoundSizeMultiple" for p in _preds(record))  # TN: the tail loop works


def test_experimental_folders_are_read_by_0121_only_when_asked(tmp_path: Path) -> None:
    """TensileCreateLibrary.py:669-671 @0.12.1: without --experimental, logic files in a folder named
    ``experimental`` (any case) are not read; 7d9fb683 reads them."""
    from click.testing import CliRunner

    from tensilekit.cli.main import cli
    from tensilekit.errors import InputNotFound
    from tensilekit.libbuild.tensilelite import experimental_logic_left_out

    files = [("logic/Experimental/a.yaml", ["a"]), ("logic/b.yaml", ["b"])]
    kept, left_out, version = experimental_logic_left_out(files, hipblaslt_version="0.12.1")
    assert kept == files[1:] and left_out == ["logic/Experimental/a.yaml"] and version.name == "0.12.1"
    assert experimental_logic_left_out(files, hipblaslt_version="0.12.1", experimental=True)[0] == files
    assert experimental_logic_left_out(files, hipblaslt_version="7d9fb683")[0] == files
    with pytest.raises(InputNotFound, match="--experimental"):
        experimental_logic_left_out(files[:1], hipblaslt_version="0.12.1")

    (tmp_path / "logic" / "EXPERIMENTAL").mkdir(parents=True)
    (tmp_path / "logic" / "b.yaml").write_text(yaml.safe_dump(lite_logic([lite_solution(0)], ONE)))
    (tmp_path / "logic" / "EXPERIMENTAL" / "a.yaml").write_text(
        yaml.safe_dump(lite_logic([lite_solution(0, DepthU=64)], ONE))
    )
    counts = {}
    for flags in ([], ["--experimental"], ["--hipblaslt-version", "7d9fb683"]):
        result = CliRunner().invoke(
            cli,
            ["build-master", str(tmp_path / "logic"), "--hipblaslt-version", "0.12.1", *flags, "--json", "-o",
             str(tmp_path / "out.yaml")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        counts[" ".join(flags)] = json.loads(result.stdout.splitlines()[-1])["solutions"]
        assert ("left out 1 logic file" in result.output) == (flags == [])
    assert counts == {"": 1, "--experimental": 2, "--hipblaslt-version 7d9fb683": 2}


@pytest.mark.corpus
def test_kernels_without_matrix_instructions_keep_prefetch_and_read_width_under_0121(corpus: Path) -> None:
    """7d9fb683 sets PrefetchLocalRead 0 and GlobalReadVectorWidthA/B 1 for a kernel without matrix
    instructions, 0.12.1 keeps them (measured: a navi31 file whose non-MFMA kernels were given PLR 1
    and GRVWA 2 names ``PLR1``/``GRVWA2`` under ``build-master-0.12.1``, not under ``build-master``)."""
    from tensilekit.model.derive_tensilelite import LITE_DERIVATION_0_12_1

    path = corpus / "logic/hipblaslt/navi31/Equality/navi31_Cijk_Alik_Bjlk_SB_Bias_HAS_SAV_UserArgs.yaml"
    stored = next(
        s for s in yaml.load(path.read_text(), Loader=yaml.CSafeLoader)[5] if not s["EnableMatrixInstruction"]
    )
    stored = {**stored, "PrefetchLocalRead": 1, "GlobalReadVectorWidthA": 2}
    newer = solution_state(stored, isa=(11, 0, 0), cu_count=None, rules=LITE_DERIVATION_0_12_1)
    older = solution_state(stored, isa=(11, 0, 0), cu_count=None)
    assert (newer["PrefetchLocalRead"], newer["GlobalReadVectorWidthA"]) == (1, 2)
    assert (older["PrefetchLocalRead"], older["GlobalReadVectorWidthA"]) == (0, 1)


def test_experimental_is_a_tensilelite_option(fixture_path: Any) -> None:
    from tensilekit.api import build_master_files

    tensile = fixture_path("logic", "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml")
    with pytest.raises(InvalidValue, match="tensilelite"):
        build_master_files([tensile], experimental=True, dialect="tensile")

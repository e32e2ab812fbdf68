"""Unit tests for tensilekit.libbuild.master: tree shape, indices, merging, lazy files, errors."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tensilekit.errors import InvalidValue, LibraryFormatError, MergeError, MissingField
from tensilekit.io.logic_io import logic_from_data
from tensilekit.libbuild import architecture_index, build_master_libraries, build_master_tree, kernel_states
from tensilekit.libbuild.master import placeholder_type_string
from tensilekit.model.naming import problem_type_state

from .logic_factory import list_logic, mapping_logic, solution

GFX90A = 606601216


def _below_map(tree_library: dict[str, Any], depth: int = 0) -> Any:
    """The node under the (single) ProblemMap key, then ``depth`` first-row steps further down."""
    node = next(iter(tree_library["rows"][0]["library"]["map"].values()))
    for _ in range(depth):
        node = node["rows"][0]["library"]
    return node


def _matching(tree: dict[str, Any]) -> Any:
    node = tree["library"]
    while node["type"] != "Matching":
        node = next(iter(node["map"].values())) if node["type"] == "ProblemMap" else node["rows"][0]["library"]
    return node


def test_architecture_index_is_hex_digits_shifted_by_18() -> None:
    assert architecture_index("gfx90a") == GFX90A
    assert architecture_index("gfx942") == 621281280
    assert architecture_index("gfx1100") == 1140850688
    assert architecture_index("fallback") == 0


def test_single_file_levels_and_indices() -> None:
    logic = list_logic(
        [solution(0), solution(1, MacroTile0=128)], [[[128, 128, 1, 64], [1, 10.0]], [[64, 64, 1, 64], [0, 5.0]]]
    )
    tree = build_master_tree([("a.yaml", logic)])
    hw = tree["library"]
    assert hw["type"] == "Hardware"
    assert hw["rows"][0]["predicate"] == {"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx90a"}}
    pmap = hw["rows"][0]["library"]
    assert pmap["type"] == "ProblemMap" and list(pmap["map"]) == ["Contraction_l_Ailk_Bljk_Cijk_Dijk"]
    levels = []
    node = pmap["map"]["Contraction_l_Ailk_Bljk_Cijk_Dijk"]
    while node["type"] == "Problem":
        levels.append(node["rows"][0]["predicate"]["type"])
        node = node["rows"][0]["library"]
    # perf metric, Fp16AltImpl, Fp16AltImplRound, type predicates, selection
    assert levels == ["TruePred", "TruePred", "TruePred", "And", "TruePred"]
    assert node["type"] == "Matching" and node["distance"] == "Euclidean"
    assert [p["type"] for p in node["properties"]] == ["FreeSizeA", "FreeSizeB", "BoundSize"]
    # keys drop the batch column and are sorted; rows refer to list positions
    assert node["table"] == [
        {"index": GFX90A, "key": [64, 64, 64], "speed": 5.0},
        {"index": GFX90A + 1, "key": [128, 128, 64], "speed": 10.0},
    ]
    assert [s["index"] for s in tree["solutions"]] == [GFX90A, GFX90A + 1]
    assert [s["libraryLogicIndex"] for s in tree["solutions"]] == [0, 1]
    assert tree["version"] == "4.44.0"
    # the two kernels differ in MacroTile0 (always prepended) and the ThreadTile that makes it
    assert [s["name"] for s in tree["solutions"]] == [
        "Cijk_Ailk_Bljk_SB_MT64x64x16_SN_K1_TT4_4",
        "Cijk_Ailk_Bljk_SB_MT128x64x16_SN_K1_TT8_4",
    ]


def test_inputs_are_not_modified() -> None:
    logic = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    before = copy.deepcopy(logic)
    build_master_tree([("a.yaml", logic)])
    assert logic == before


def test_logic_file_models_and_raw_data_build_the_same_tree() -> None:
    logic = list_logic([solution(0), solution(1, MacroTile0=128)], [[[64, 64, 1, 64], [1, 2.0]]])
    model = logic_from_data(copy.deepcopy(logic), source="a.yaml")
    assert build_master_tree([("a.yaml", model)]) == build_master_tree([("a.yaml", logic)])


def test_a_logic_file_of_the_other_dialect_is_refused() -> None:
    model = logic_from_data(
        list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]], tail=["GridBased"]), dialect="tensilelite"
    )
    with pytest.raises(InvalidValue) as info:
        build_master_tree([("lite.yaml", model)])
    assert info.value.location is not None and info.value.location.file == "lite.yaml"
    with pytest.raises(InvalidValue):
        build_master_tree([("a.yaml", model)], dialect="rocblas")


def test_kernel_states_of_a_tensilelite_file_are_what_its_build_writes(corpus: Path) -> None:
    # tensilelite logic derives through derive_tensilelite (the build's own path): every sizeMapping
    # field of the built master comes from these states; the old partial Tensile-fork derivation
    # gave another _WorkspaceSizePerElemC for 618 solutions of these files
    from tensilekit.io.logic_io import load_logic

    files = sorted((corpus / "logic" / "hipblaslt").rglob("*.yaml"))[:30]
    assert files
    for path in files:
        logic = load_logic(path)
        states = kernel_states(logic)
        records = build_master_tree([(str(path), logic)], dialect="tensilelite")["solutions"]
        assert len(states) == len(records), path
        for state, record in zip(states, records, strict=True):
            mapping = record["sizeMapping"]
            assert state["Valid"] in (True, False)  # a tensilelite Solution key
            assert mapping["workspaceSizePerElemC"] == state["_WorkspaceSizePerElemC"], path
            assert mapping["staggerStrideShift"] == state["_staggerStrideShift"], path
            assert mapping["macroTile"] == [state["MacroTile0"], state["MacroTile1"], 1], path
            assert (mapping["depthU"], mapping["globalSplitU"]) == (state["DepthU"], state["GlobalSplitU"]), path


def test_assembly_kernels_take_the_files_architecture_as_isa() -> None:
    # LibraryIO.parseLibraryLogicData: a copied kernel's stale ISA does not survive the build
    stale = [solution(0, ISA=[9, 0, 8])]
    gfx942 = logic_from_data(list_logic(copy.deepcopy(stale), [[[64, 64, 1, 64], [0, 1.0]]], arch="gfx942"))
    gfx90a = logic_from_data(list_logic(copy.deepcopy(stale), [[[64, 64, 1, 64], [0, 1.0]]]))
    assert [state["ISA"] for state in kernel_states(gfx942)] == [(9, 4, 2)]
    tree = build_master_tree([("a", gfx942), ("b", gfx90a)], separate_architectures=False)
    assert [s["name"] for s in tree["solutions"]] == [
        "Cijk_Ailk_Bljk_SB_MT64x64x16_SN_ISA942_K1_MMFSC",
        "Cijk_Ailk_Bljk_SB_MT64x64x16_SN_ISA90a_K1_MMFGLC",
    ]


def test_mapping_form_builds_only_decision_trees() -> None:
    data = mapping_logic([solution(0)], "GridBased", [])
    with pytest.raises(InvalidValue) as info:
        build_master_tree([("m.yaml", data)])
    assert info.value.location is not None and info.value.location.path == "LibraryType"
    del data["LibraryType"]
    with pytest.raises(MissingField):
        build_master_tree([("m.yaml", data)])


def test_duplicate_solution_indices_are_fixed_upwards() -> None:
    logic = list_logic(
        [solution(3), solution(3, MacroTile0=128), solution(1, MacroTile0=32)], [[[64, 64, 1, 64], [0, 1.0]]]
    )
    tree = build_master_tree([("a.yaml", logic)], separate_architectures=False)
    assert [s["index"] for s in tree["solutions"]] == [3, 4, 1]
    assert [s["libraryLogicIndex"] for s in tree["solutions"]] == [3, 3, 1]


def test_equality_file_merges_before_euclidean_and_shares_nothing_else() -> None:
    euclid = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    equality = list_logic([solution(0, MacroTile0=128)], [[[64, 64, 8, 64], [0, 2.0]]], distance="Equality")
    tree = build_master_tree([("e.yaml", euclid), ("q.yaml", equality)])
    selection = _below_map(tree["library"], 4)
    assert [r["predicate"]["type"] for r in selection["rows"]] == ["EqualityMatching", "TruePred"]
    eq_table = selection["rows"][0]["library"]
    assert [p["type"] for p in eq_table["properties"]] == ["FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize"]
    assert eq_table["table"] == [{"index": GFX90A + 1, "key": [64, 64, 8, 64], "speed": 2.0}]
    assert [s["index"] for s in tree["solutions"]] == [GFX90A, GFX90A + 1]


def test_same_predicates_share_one_table_sorted_stably() -> None:
    first = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]], [[32, 32, 1, 64], [0, 1.0]]])
    second = list_logic([solution(0, MacroTile0=128)], [[[64, 64, 1, 64], [0, 9.0]]])
    table = _matching(build_master_tree([("a", first), ("b", second)]))["table"]
    assert [(e["key"], e["index"]) for e in table] == [
        ([32, 32, 64], GFX90A),
        ([64, 64, 64], GFX90A),
        ([64, 64, 64], GFX90A + 1),
    ]


def test_hardware_rows_sort_higher_cu_count_first() -> None:
    plain = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    cu104 = list_logic(
        [solution(0, MacroTile0=128)], [[[64, 64, 1, 64], [0, 1.0]]], arch={"Architecture": "gfx90a", "CUCount": 104}
    )
    tree = build_master_tree([("plain", plain), ("cu", cu104)])
    preds = [r["predicate"]["value"] for r in tree["library"]["rows"]]
    assert preds == [
        {"type": "And", "value": [{"type": "Processor", "value": "gfx90a"}, {"type": "CUCount", "value": 104}]},
        {"type": "Processor", "value": "gfx90a"},
    ]


def test_perf_metric_and_fp16_rows() -> None:
    logic = list_logic(
        [solution(0)],
        [[[64, 64, 1, 64], [0, 1.0]]],
        perf_metric="CUEfficiency",
        tail=["Fp16AltImpl", None, "Fp16AltImplRound"],
    )
    node = _below_map(build_master_tree([("f", logic)])["library"])
    assert node["rows"][0]["predicate"] == {"type": "CUEfficiency"}
    node = node["rows"][0]["library"]
    assert node["rows"][0]["predicate"] == {"type": "Fp16AltImpl"}
    assert node["rows"][0]["library"]["rows"][0]["predicate"] == {"type": "Fp16AltImplRound"}


def test_decision_tree_mapping_form() -> None:
    sols = [solution(0), solution(1, MacroTile0=128)]
    forest = {
        "features": [{"index": 0, "type": "FreeSizeA"}],
        "region": [{"index": 2, "type": "SizeEqual", "value": 1}],
        "trees": [{"solution": 1, "tree": [{"featureIdx": 0, "threshold": 1.5, "nextIdxLTE": -2, "nextIdxGT": -1}]}],
    }
    data = mapping_logic(
        sols,
        "DecisionTree",
        [forest],
        MinimumRequiredVersion="4.40.0",
        ScheduleName="aldebaran",
        DeviceNames=[],
        PerfMetric="ExperimentalDTree",
    )
    tree = build_master_tree([("d", data)])
    metric = _below_map(tree["library"])
    assert metric["rows"][0]["predicate"] == {"type": "ExperimentalDTree"}
    region = _below_map(tree["library"], 4)
    assert region["rows"][0]["predicate"] == {"index": 2, "type": "SizeEqual", "value": 1}
    dtree = region["rows"][0]["library"]
    assert dtree["type"] == "DecisionTree"
    assert dtree["trees"][0]["value"] == {"index": GFX90A + 1, "type": "Single"}
    assert dtree["nullValue"] == {"index": -1, "type": "Single"}


def test_solution_problem_type_derive_takes_the_files() -> None:
    """rocBLAS dtree files write ``ProblemType: derive`` in each solution (parseLibraryLogicData)."""
    forest = {"features": [{"index": 0, "type": "FreeSizeA"}], "region": [], "trees": []}
    explicit = mapping_logic([solution(0)], "DecisionTree", [forest], PerfMetric="ExperimentalDTree")
    derived = copy.deepcopy(explicit)
    derived["Solutions"][0]["ProblemType"] = "derive"
    assert build_master_tree([("d", derived)]) == build_master_tree([("d", explicit)])


def test_old_global_accumulation_false_maps_to_zero() -> None:
    """Old files store ``_GlobalAccumulation: False``; FromOriginalState's if-chain gives 0."""
    logic = list_logic(
        [solution(0, _GlobalAccumulation=False, _WorkspaceSizePerElemC=0)], [[[64, 64, 1, 64], [0, 1.0]]]
    )
    assert build_master_tree([("a", logic)])["solutions"][0]["sizeMapping"]["globalAccumulation"] == 0
    bad = list_logic([solution(0, _GlobalAccumulation=[1], _WorkspaceSizePerElemC=0)], [[[64, 64, 1, 64], [0, 1.0]]])
    with pytest.raises(InvalidValue, match="_GlobalAccumulation"):
        build_master_tree([("a", bad)])


def _min_k_predicates(tree: dict[str, Any]) -> list[Any]:
    return [
        p["value"] for p in tree["solutions"][0]["problemPredicate"]["value"] if p["type"] == "GlobalSplitUCheckMinK"
    ]


@pytest.mark.parametrize("gsu", [1, 4])
def test_global_split_u_min_k_tensile(gsu: int) -> None:
    """Tensile writes MinKForGSU x GSU (tensilelite's [minK, GSU]: tests/unit/libbuild/test_tensilelite.py)."""
    sol = solution(0, GlobalSplitU=gsu, _GlobalAccumulation="MultipleBuffer", _WorkspaceSizePerElemC=4 * gsu)
    rocblas = list_logic([copy.deepcopy(sol)], [[[64, 64, 1, 64], [0, 1.0]]])
    assert _min_k_predicates(build_master_tree([("r", rocblas)])) == [256 * gsu]


@pytest.mark.parametrize(("dialect", "code", "expected"), [("tensile", 11, "BFloat8")])
def test_data_type_codes_follow_the_dialect(dialect: str, code: int, expected: str) -> None:
    """Codes from 9 on differ: hipBLASLt inserts Int64 at 9 (formats.md 1.4; tensilelite: test_tensilelite.py)."""
    sol = solution(0)
    for pt in (sol["ProblemType"],):
        pt.update(DataType=code, DestDataType=code, ComputeDataType=0, HighPrecisionAccumulate=True)
    logic = list_logic([sol], [[[64, 64, 1, 64], [0, 1.0]]], tail=["Equality"] if dialect == "tensilelite" else None)
    logic[4] = copy.deepcopy(sol["ProblemType"])
    record = build_master_tree([("t", logic)], dialect=dialect)["solutions"][0]
    assert record["problemType"]["aType"] == expected and record["problemType"]["dType"] == expected


def test_two_decision_trees_on_one_row_cannot_merge() -> None:
    data = mapping_logic([solution(0)], "DecisionTree", [{"features": [], "region": [], "trees": []}])
    with pytest.raises(MergeError):
        build_master_tree([("a", data), ("b", copy.deepcopy(data))])


def test_lazy_build_writes_placeholders() -> None:
    a = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    b = list_logic([solution(0, MacroTile0=128)], [[[64, 64, 1, 64], [0, 1.0]]])
    b[4]["HighPrecisionAccumulate"] = True
    for s in b[5]:
        s["ProblemType"]["HighPrecisionAccumulate"] = True
    files = build_master_libraries([("a", a), ("b", b)], lazy=True)
    assert list(files) == [
        "TensileLibrary_lazy_gfx90a",
        "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a",
        "TensileLibrary_Type_SS_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a",
    ]
    top = files["TensileLibrary_lazy_gfx90a"]
    assert top["solutions"] == []
    leaves = [r["library"] for r in _below_map(top["library"], 3)["rows"]]
    assert [leaf["type"] for leaf in leaves] == ["Placeholder", "Placeholder"]
    part = files["TensileLibrary_Type_SS_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"]
    assert [s["index"] for s in part["solutions"]] == [GFX90A + 1]
    assert part["library"]["type"] == "Problem" and part["library"]["rows"][0]["library"]["type"] == "Matching"


def test_a_stochastic_rounding_type_shares_the_placeholder_file_of_its_plain_twin() -> None:
    """Tensile a164ed70 ``placeholderStr``: ``_Type_<A><C>[_HPA]`` and nothing else, so the
    ``_SR`` type and its plain twin name one placeholder, whose file holds both tables merged."""
    plain = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    rounding = list_logic([solution(0, MacroTile0=128)], [[[32, 32, 1, 64], [0, 1.0]]])
    for pt in (rounding[4], *(s["ProblemType"] for s in rounding[5])):
        pt["StochasticRounding"] = True
    files = build_master_libraries([("plain", plain), ("sr", rounding)], lazy=True)
    name = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
    assert list(files) == ["TensileLibrary_lazy_gfx90a", name]
    leaves = [r["library"] for r in _below_map(files["TensileLibrary_lazy_gfx90a"]["library"], 3)["rows"]]
    assert leaves == [{"type": "Placeholder", "value": name}] * 2
    assert [s["index"] for s in files[name]["solutions"]] == [GFX90A, GFX90A + 1]
    assert [e["key"] for e in _matching(files[name])["table"]] == [[32, 32, 64], [64, 64, 64]]


def test_a_mixed_8bit_type_names_its_a_half_in_the_placeholder() -> None:
    """``placeholderStr`` writes ``aType``: ``B8`` for B8F8 data (A BFloat8, B Float8), ``F8`` for F8B8."""
    base = {"IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3}
    for code, a_char in ((13, "B8"), (12, "F8"), (11, "B8")):
        pt = problem_type_state({**base, "DataType": code, "DestDataType": 4, "HighPrecisionAccumulate": True})
        assert placeholder_type_string(pt) == f"_Type_{a_char}H_HPA"


def test_type_rows_sort_by_data_type_code_not_by_name() -> None:
    """Tensile's ``TypesEqual`` values are ``DataType`` objects, ordered by enum code: when
    ``PredicateLibrary.merge`` re-sorts, the Float row (0) comes before the Double row (1) although
    "Double" < "Float" as names."""
    double = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    for pt in (double[4], *(s["ProblemType"] for s in double[5])):
        pt.update(DataType=1, DestDataType=1, ComputeDataType=1)
    single = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    for order in ([("d", double), ("s", single)], [("s", single), ("d", double)]):
        rows = _below_map(build_master_tree(copy.deepcopy(order))["library"], 3)["rows"]
        assert [r["predicate"]["value"][0]["value"][0] for r in rows] == ["Float", "Double"]


def test_several_architectures_need_build_master_libraries() -> None:
    a = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    b = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]], arch="gfx942")
    with pytest.raises(MergeError):
        build_master_tree([("a", a), ("b", b)])
    files = build_master_libraries([("a", a), ("b", b)])
    assert sorted(files) == ["TensileLibrary_gfx90a", "TensileLibrary_gfx942"]
    assert files["TensileLibrary_gfx942"]["solutions"][0]["index"] == 621281280


# --- errors ---------------------------------------------------------------------------------


def test_table_row_with_unknown_solution_names_the_position() -> None:
    logic = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]], [[8, 8, 1, 8], [5, 1.0]]])
    with pytest.raises(InvalidValue) as info:
        build_master_tree([("bad.yaml", logic)])
    loc = info.value.location
    assert loc is not None and loc.file == "bad.yaml" and loc.path == "[7][1][1][0]"


def test_missing_macro_tile_names_the_solution_field() -> None:
    sol = solution(0)
    del sol["MacroTile0"]
    with pytest.raises(LibraryFormatError) as info:
        build_master_tree([("bad.yaml", list_logic([solution(0), sol], [[[64, 64, 1, 64], [0, 1.0]]]))])
    assert info.value.location is not None and info.value.location.path == "[5][1].MacroTile0"


@pytest.mark.parametrize(
    ("mutate", "path", "error"),
    [
        (lambda d: d.__setitem__(5, {"not": "a list"}), "[5]", InvalidValue),
        (lambda d: d.__setitem__(2, 42), "[2]", InvalidValue),
        (lambda d: d[5][0].__setitem__("MatrixInstruction", "x"), "[5][0].MatrixInstruction", InvalidValue),
        (lambda d: d[5][0].__setitem__("AssertBogus", 3), "[5][0].AssertBogus", InvalidValue),
        (lambda d: d.__setitem__(7, [[[64], [0, 1.0]]]), "[7][0][0]", InvalidValue),
        (lambda d: d[5][0]["ProblemType"].__setitem__("DataType", 99), "[5][0].ProblemType.DataType", InvalidValue),
        (lambda d: d.__delitem__(slice(4, None)), "[4]", MissingField),
    ],
)
def test_bad_input_raises_located_errors(
    mutate: Callable[[list[Any]], None], path: str, error: type[LibraryFormatError]
) -> None:
    logic = list_logic([solution(0)], [[[64, 64, 1, 64], [0, 1.0]]])
    mutate(logic)
    with pytest.raises(error) as info:
        build_master_tree([("bad.yaml", logic)])
    assert info.value.location is not None
    assert info.value.location.file == "bad.yaml"
    assert info.value.location.path == path


def test_top_level_must_be_list_or_mapping() -> None:
    with pytest.raises(LibraryFormatError) as info:
        build_master_tree([("x", "just a string")])
    assert info.value.location is not None and info.value.location.file == "x"

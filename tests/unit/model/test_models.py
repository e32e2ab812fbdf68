"""Unit tests of the models: predicate union, key order, no invented defaults, table rows, dialects."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from tensilekit.io.logic_io import detect_dialect, logic_from_data, logic_to_data
from tensilekit.model.library import (
    HardwareNode,
    MasterLibrary,
    MatchingEntry,
    SingleNode,
)
from tensilekit.model.logic import (
    DICT_KEYS,
    LIST_LAYOUTS,
    ArchitectureSpec,
    Dialect,
    ExactLogicEntry,
    Layout,
    LogicSolution,
    ProblemType,
)
from tensilekit.model.predicates import (
    PREDICATE_SHAPES,
    CompoundPredicate,
    Predicate,
    PredicateModel,
    UnmodelledPredicate,
    predicate_shape,
)
from tensilekit.model.solution import MasterSolution

PREDICATES: TypeAdapter[Any] = TypeAdapter(Predicate)

# One valid value per shape of PREDICATE_SHAPES (index included where the shape needs one).
SHAPE_EXAMPLES: dict[str, dict[str, Any]] = {
    "flag": {},
    "bool": {"value": True},
    "int": {"value": 104},
    "intbool": {"value": 0},
    "number": {"value": 12.5},
    "string": {"value": "gfx90a"},
    "stringorbool": {"value": False},
    "stringlist": {"value": ["Float", "Float", "Float", "Float"]},
    "indexed": {"index": 0, "value": 8},
    "range": {"index": 3, "value": {"min": 0, "max": 2048}},
    "bufferload": {"value": {"DUorMT0": 256, "DUorMT1": 256, "ShiftPtrElemA": 4, "ShiftPtrElemB": 4}},
    "list": {"value": [{"type": "TruePred"}, {"type": "SizeMultiple", "index": 0, "value": 2}]},
    "single": {"value": {"type": "Processor", "value": "gfx942"}},
    "workspace": {"index": 0, "value": [4, 0, 2]},
    "mink": {"value": [32, 1]},
    "intlist": {"value": [3]},
    "intpair": {"value": [1, -1]},
}
# Each shape with a value of the wrong type (flags may carry a vestigial int/bool value, not more).
SHAPE_WRONG_VALUES: dict[str, dict[str, Any]] = {
    "flag": {"value": "yes"},
    "bool": {"value": "true"},
    "int": {"value": "104"},
    "intbool": {"value": "0"},
    "number": {"value": "12.5"},
    "string": {"value": 942},
    "stringorbool": {"value": 0},
    "stringlist": {"value": "Float"},
    "indexed": {"index": "0", "value": 8},
    "range": {"index": 3, "value": {"min": 0}},
    "bufferload": {"value": {"DUorMT0": 256}},
    "list": {"value": {"type": "TruePred"}},
    "single": {"value": [{"type": "TruePred"}]},
    "workspace": {"index": 0, "value": [4, 0]},
    "mink": {"value": [32, 1, 7]},
    "intlist": {"value": ["D"]},
    "intpair": {"value": [1]},
}


def _example(name: str) -> dict[str, Any]:
    return {"type": name, **SHAPE_EXAMPLES[PREDICATE_SHAPES[name]]}


# -- predicate union -------------------------------------------------------------------------------


def test_every_shape_has_examples() -> None:
    assert set(PREDICATE_SHAPES.values()) == set(SHAPE_EXAMPLES) == set(SHAPE_WRONG_VALUES)


def test_shape_table_and_union_name_the_same_types() -> None:
    in_union: set[str] = set()
    for model in typing.get_args(PredicateModel):
        in_union.update(typing.get_args(model.model_fields["type"].annotation))
    assert in_union == set(PREDICATE_SHAPES)


@pytest.mark.parametrize("name", sorted(PREDICATE_SHAPES))
def test_known_predicate_round_trips(name: str) -> None:
    raw = _example(name)
    model = PREDICATES.validate_python(raw)
    assert model.type == name
    assert predicate_shape(raw) == predicate_shape(model) == PREDICATE_SHAPES[name]
    assert model.model_dump(by_alias=True, exclude_unset=True) == raw


@pytest.mark.parametrize("name", sorted(PREDICATE_SHAPES))
def test_predicate_with_wrong_value_type_is_rejected(name: str) -> None:
    with pytest.raises(ValidationError):
        PREDICATES.validate_python({"type": name, **SHAPE_WRONG_VALUES[PREDICATE_SHAPES[name]]})


@pytest.mark.parametrize("raw", [{"value": 1}, {"type": None}, {"type": 3}])
def test_missing_predicate_type_is_rejected(raw: dict[str, Any]) -> None:
    assert predicate_shape(raw) is None
    with pytest.raises(ValidationError) as caught:
        PREDICATES.validate_python(raw)
    assert caught.value.errors()[0]["type"] in ("union_tag_invalid", "union_tag_not_found")


@pytest.mark.parametrize("raw", [{"type": "IsGfx9"}, {"type": "truepred"}, {"index": 0, "type": "Nope", "value": [1]}])
def test_an_unknown_predicate_type_loads_as_written_unmodelled(raw: dict[str, Any]) -> None:
    """Issue 35 item 4: a type nothing models spoils only what carries it, not the file."""
    assert predicate_shape(raw) is None
    model = PREDICATES.validate_python(raw)
    assert isinstance(model, UnmodelledPredicate)
    assert model.model_dump(by_alias=True, exclude_unset=True) == raw


def test_unknown_predicate_inside_and_is_kept_unmodelled() -> None:
    model = PREDICATES.validate_python({"type": "And", "value": [{"type": "TruePred"}, {"type": "Nope"}]})
    assert isinstance(model.value[1], UnmodelledPredicate)


def test_unknown_predicate_key_is_rejected() -> None:
    with pytest.raises(ValidationError):
        PREDICATES.validate_python({"type": "TruePred", "comment": "not a Tensile key"})


def test_nested_predicates_keep_their_structure() -> None:
    raw = {
        "type": "And",
        "value": [
            {"type": "Not", "value": {"type": "Or", "value": [{"type": "BetaZero"}, {"type": "BetaOne"}]}},
            {"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx90a"}},
        ],
    }
    model = PREDICATES.validate_python(raw)
    assert isinstance(model, CompoundPredicate)
    assert model.model_dump(exclude_unset=True) == raw


def test_predicates_are_not_coerced() -> None:
    with pytest.raises(ValidationError):
        PREDICATES.validate_python({"type": "CUCount", "value": 104.0})
    with pytest.raises(ValidationError):
        PREDICATES.validate_python({"type": "HighPrecisionAccumulate", "value": 1})


# -- key order and raw() ---------------------------------------------------------------------------


def test_solution_keeps_key_order_of_typed_and_extra_keys() -> None:
    raw = {
        "_DepthULds": 32,
        "MacroTile1": 64,
        "1LDSBuffer": 0,
        "SolutionIndex": 3,
        "AssertStrideAEqual": {0: 1},
        "MacroTile0": 128,
        "ProblemType": {"UseBeta": True, "DataType": 0, "Zeta": [], "Alpha": None},
        "ISA": [9, 4, 2],
    }
    solution = LogicSolution.model_validate(raw)
    assert list(solution.raw()) == list(raw)
    assert solution.raw() == raw
    assert isinstance(solution.problem_type, ProblemType)
    assert list(solution.problem_type.raw()) == ["UseBeta", "DataType", "Zeta", "Alpha"]


def test_raw_never_invents_defaults() -> None:
    solution = LogicSolution.model_validate({"MacroTile0": 64})
    assert solution.solution_index is None  # the typed default is readable ...
    assert solution.raw() == {"MacroTile0": 64}  # ... but never written
    assert ProblemType.model_validate({}).raw() == {}
    assert ArchitectureSpec.model_validate({"Architecture": "gfx90a"}).raw() == {"Architecture": "gfx90a"}


def test_raw_keeps_explicit_nulls() -> None:
    raw = {"SolutionIndex": None, "WorkGroupMapping": None, "ProblemType": None, "Extra": None}
    assert LogicSolution.model_validate(raw).raw() == raw


def test_master_solution_raw_keeps_only_what_was_read() -> None:
    raw = {
        "index": 7,
        "name": "Cijk_Ailk_Bljk_SB_MT64x64x16",
        "info": {},
        "sizeMapping": {"depthU": 16, "extraKnob": 1},
    }
    solution = MasterSolution.model_validate(raw)
    assert solution.raw() == raw
    assert "problemPredicate" not in solution.raw() and solution.problem_predicate is None


def test_master_library_does_not_invent_version_or_defaults() -> None:
    raw = {"solutions": [{"index": 0}], "library": {"type": "Single", "index": 0}}
    assert MasterLibrary.model_validate(raw).to_raw() == raw


def test_node_type_tag_is_always_written() -> None:
    assert SingleNode(index=3).model_dump(by_alias=True, exclude_unset=True) == {"type": "Single", "index": 3}
    assert HardwareNode.model_validate({"rows": []}).model_dump(exclude_unset=True) == {"type": "Hardware", "rows": []}


def test_matching_entry_takes_index_or_old_style_value() -> None:
    assert MatchingEntry.model_validate({"key": [1, 2, 3], "index": 4}).solution_index == 4
    old = MatchingEntry.model_validate({"key": [1, 2, 3], "value": {"type": "Single", "index": 5}})
    assert old.solution_index == 5
    assert old.model_dump(exclude_unset=True) == {"key": [1, 2, 3], "value": {"type": "Single", "index": 5}}


def test_typed_fields_are_strict() -> None:
    with pytest.raises(ValidationError):
        LogicSolution.model_validate({"MacroTile0": "128"})
    with pytest.raises(ValidationError):
        LogicSolution.model_validate({"WorkGroup": [16.0, 16, 1]})
    with pytest.raises(ValidationError):
        MasterSolution.model_validate({"index": "0"})


# -- exact-logic rows ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "row",
    [
        [[1024, 1024, 1, 1024], [0, 312.5]],
        [[1, 2, 3, 4, 5, 6, 7, 8], [3, 0]],  # 8-tuple with leading dimensions, integer efficiency
        [[64, 64, 1, 64], [12, 0.0]],  # a negative or NaN efficiency is an error (issue 17)
    ],
)
def test_exact_logic_row_round_trips(row: list[Any]) -> None:
    entry = ExactLogicEntry.model_validate(row)
    assert (entry.size, entry.solution, entry.efficiency) == (row[0], row[1][0], row[1][1])
    assert entry.to_row() == row
    assert type(entry.to_row()[1][1]) is type(row[1][1])  # 0 stays 0, not 0.0 (byte-identical dumps)
    assert entry.key4 == tuple(row[0][:4])


@pytest.mark.parametrize(
    "row",
    [
        [[1024, 1024, 1, 1024]],
        [[1024, 1024, 1, 1024], [0]],
        [[1024, 1024, 1, 1024], [0, 1.0, 2]],
        [[1024, 1024, 1, 1024], 0, 1.0],
        [[1024, 1024, 1, 1024], [0.0, 1.0]],
        [[1024, 1024.5, 1, 1024], [0, 1.0]],
        [[1024, 1024, 1, 1024], ["0", 1.0]],
        [[1024, 1024, 1, 1024], [0, "fast"]],
        ["1024x1024", [0, 1.0]],
    ],
)
def test_malformed_exact_logic_row_is_rejected(row: list[Any]) -> None:
    with pytest.raises(ValidationError):
        ExactLogicEntry.model_validate(row)


def test_exact_logic_entry_is_frozen() -> None:
    entry = ExactLogicEntry.model_validate([[1, 1, 1, 1], [0, 1.0]])
    with pytest.raises(ValidationError):
        entry.solution = 1  # type: ignore[misc]


# -- dialects and layouts (formats.md table 1.2) ---------------------------------------------------

PROBLEM_TYPE = {"OperationType": "GEMM", "DataType": 0, "TransposeA": False, "TransposeB": False, "UseBeta": True}


def _list_file(*trailing: Any, version: str = "4.33.0", architecture: Any = "gfx90a") -> list[Any]:
    head = [
        {"MinimumRequiredVersion": version},
        "aldebaran",
        architecture,
        ["Device 0050"],
        dict(PROBLEM_TYPE),
        [{"SolutionIndex": 0, "MacroTile0": 64, "ProblemType": dict(PROBLEM_TYPE)}],
        [2, 3, 0, 1],
        [[[128, 128, 1, 128], [0, 10.0]]],
        None,
    ]
    return head + list(trailing)


# (trailing items 9.., expected dialect, field -> expected value)
LAYOUTS: dict[str, tuple[list[Any], Dialect, dict[str, Any]]] = {
    "9 rocBLAS<=4.32": ([], Dialect.TENSILE, {"matching_distance": "Euclidean"}),
    "10 tile-aware": (
        [{"TileSelectionIndices": [1]}],
        Dialect.TENSILE,
        {"tile_selection": {"TileSelectionIndices": [1]}},
    ),
    "11 rocBLAS>=4.27": ([None, "DeviceEfficiency"], Dialect.TENSILE, {"performance_metric": "DeviceEfficiency"}),
    "11 cu_efficiency": ([None, "CUEfficiency"], Dialect.TENSILE, {"performance_metric": "CUEfficiency"}),
    "12 fp16altimpl": ([None, "DeviceEfficiency", "Fp16AltImpl"], Dialect.TENSILE, {"fp16_alt_impl": "Fp16AltImpl"}),
    "12 hipBLASLt Equality": (
        [None, "DeviceEfficiency", "Equality"],
        Dialect.TENSILELITE,
        {"library_type": "Equality"},
    ),
    "12 hipBLASLt GridBased": (
        [None, "DeviceEfficiency", "GridBased"],
        Dialect.TENSILELITE,
        {"library_type": "GridBased", "matching_distance": "GridBased"},
    ),
    "12 hipBLASLt FreeSize": (
        [None, "DeviceEfficiency", "FreeSize"],
        Dialect.TENSILELITE,
        {"library_type": "FreeSize"},
    ),
    "13 rocBLAS equality": (
        [None, "DeviceEfficiency", None, "Equality"],
        Dialect.TENSILE,
        {"distance": "Equality", "matching_distance": "Equality", "fp16_alt_impl": None},
    ),
    "14 fp16altimpl round": (
        [None, "DeviceEfficiency", "Fp16AltImpl", None, "Fp16AltImplRound"],
        Dialect.TENSILE,
        {"fp16_alt_impl": "Fp16AltImpl", "distance": None, "fp16_alt_impl_round": "Fp16AltImplRound"},
    ),
    "13 newest tensilelite": (
        [None, "DeviceEfficiency", "Equality", {"KernelLanguage": "Assembly"}],
        Dialect.TENSILELITE,
        {"default_solution": {"KernelLanguage": "Assembly"}},
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_dialect_detection_per_layout_length(layout: str) -> None:
    trailing, dialect, fields = LAYOUTS[layout]
    data = _list_file(*trailing)
    assert detect_dialect(data) is dialect
    logic = logic_from_data(data, source=f"{layout}.yaml")
    assert (logic.dialect, logic.layout, logic.list_length) == (dialect, Layout.LIST, len(data))
    for name, value in fields.items():
        assert getattr(logic, name) == value, name
    assert logic.exact_logic is not None and logic.exact_logic[0].key4 == (128, 128, 1, 128)
    assert logic_to_data(logic) == data  # absent trailing positions stay absent


def test_positions_past_the_layout_are_kept() -> None:
    data = _list_file(None, "DeviceEfficiency", None, None, None, "from a newer tool", {"x": 1})
    logic = logic_from_data(data)
    assert logic.dialect is Dialect.TENSILE
    assert logic.extra_items == ["from a newer tool", {"x": 1}]
    assert logic_to_data(logic) == data


def test_architecture_dict_and_string() -> None:
    plain = logic_from_data(_list_file())
    assert (plain.architecture_name, plain.architecture_cu_count, plain.version) == ("gfx90a", None, "4.33.0")
    with_cus = logic_from_data(_list_file(architecture={"Architecture": "gfx90a", "CUCount": 104, "IsAPU": 0}))
    assert (with_cus.architecture_name, with_cus.architecture_cu_count) == ("gfx90a", 104)


def test_layout_tables_name_each_position_once() -> None:
    for layout in LIST_LAYOUTS.values():
        assert len(layout) == len(set(layout))
        assert layout[5] == "solutions" and layout[7] == "exact_logic"
    assert LIST_LAYOUTS[Dialect.TENSILE][11:] == ("fp16_alt_impl", "distance", "fp16_alt_impl_round")
    assert LIST_LAYOUTS[Dialect.TENSILELITE][11:] == ("library_type", "default_solution")
    assert len(set(DICT_KEYS.values())) == len(DICT_KEYS)


def test_dict_layout_decision_tree_is_tensile() -> None:
    data = {
        "ArchitectureName": "gfx90a",
        "CUCount": 104,
        "DeviceNames": ["Device 0050"],
        "Fp16AltImpl": False,
        "Library": [{"features": [], "fallback": 0, "region": [], "trees": []}],
        "LibraryType": "DecisionTree",
        "MinimumRequiredVersion": "4.40.0",
        "PerfMetric": "ExperimentalDTree",
        "ProblemType": dict(PROBLEM_TYPE),
        "ScheduleName": "aldebaran",
        "Solutions": [{"SolutionIndex": 0, "ProblemType": "derive"}],
        "SomethingNew": [1, 2],
    }
    assert detect_dialect(data) is Dialect.TENSILE
    logic = logic_from_data(data)
    assert (logic.layout, logic.matching_distance, logic.version, logic.architecture_cu_count) == (
        Layout.DICT,
        "DecisionTree",
        "4.40.0",
        104,
    )
    assert logic.extra_keys == {"SomethingNew": [1, 2]}
    assert logic.solutions[0].problem_type == "derive"
    dumped = logic_to_data(logic)
    assert dumped == data and list(dumped) == list(data)


def test_dict_layout_with_tensilelite_library_type() -> None:
    data = {
        "MinimumRequiredVersion": "4.33.0",
        "LibraryType": "Equality",
        "ProblemType": dict(PROBLEM_TYPE),
        "Solutions": [],
        "ExactLogic": [[[1, 1, 1, 1], [0, 1.0]]],
    }
    assert detect_dialect(data) is Dialect.TENSILELITE
    logic = logic_from_data(data)
    assert logic.matching_distance == "Equality" and len(logic.table) == 1
    assert logic_to_data(logic) == data


@pytest.mark.parametrize("value", [["Equality"], {"t": 1}, 12, None])
def test_unusual_position_11_means_tensile(value: Any) -> None:
    assert detect_dialect(_list_file(None, "DeviceEfficiency", value)) is Dialect.TENSILE


def test_every_modelled_predicate_class_has_a_tag_in_the_discriminated_union() -> None:
    """``Predicate`` lists its classes a second time (pydantic's tagged union): a class missing there
    makes its type unknown on load (a merge once lost ``ScaleABPredicate`` this way)."""
    import typing

    from tensilekit.model import predicates

    union = typing.get_args(predicates.Predicate)[0]
    tagged = {typing.get_args(member)[0] for member in typing.get_args(union)}
    assert set(typing.get_args(predicates.PredicateModel)) == tagged

"""Unit tests for tensilekit.merge.diff: identity-based kernel matching, size changes, selection."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from merge_factory import logic_data, make_logic, solution

from tensilekit.errors import UnsupportedFormat
from tensilekit.io.logic_io import logic_from_data
from tensilekit.io.master_io import load_master
from tensilekit.merge import Compat, MergePolicy, diff_libraries, exact_match_selector, merge_logic, selection_changes
from tensilekit.merge.diff import predicate_text

A, B, C = solution(64, 64), solution(128, 64), solution(128, 128)
TABLE = [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 1, 20.0), ([3, 3, 1, 3], 1, 30.0)]


def test_identical_is_empty() -> None:
    logic = make_logic([A, B], TABLE)
    diff = diff_libraries(logic, make_logic([A, B], TABLE))
    assert diff.is_empty and diff.groups_compared == 1 and diff.identity == "tensile"


def test_renumbering_is_not_a_difference() -> None:
    swapped = make_logic([B, A], [([1, 1, 1, 1], 1, 10.0), ([2, 2, 1, 2], 0, 20.0), ([3, 3, 1, 3], 0, 30.0)])
    assert diff_libraries(make_logic([A, B], TABLE), swapped).is_empty


def test_sizes_added_removed_reassigned_and_efficiency() -> None:
    before = make_logic([A, B], TABLE)
    after = make_logic([A, B, C], [([1, 1, 1, 1], 2, 10.0), ([2, 2, 1, 2], 1, 25.0), ([4, 4, 1, 4], 0, 1.0)])
    diff = diff_libraries(before, after)
    (group,) = diff.groups
    assert [(s.key, s.a.index, s.b.index) for s in group.sizes_reassigned] == [([1, 1, 1, 1], 0, 2)]
    assert [(e.key, e.a, e.b, e.delta) for e in group.efficiency_changes] == [([2, 2, 1, 2], 20.0, 25.0, 5.0)]
    assert [s.key for s in group.sizes_removed] == [[3, 3, 1, 3]]
    assert [s.key for s in group.sizes_added] == [[4, 4, 1, 4]]
    assert [k.index for k in group.kernels_added] == [2]
    assert sorted(map(tuple, group.changed_keys)) == [(1, 1, 1, 1), (2, 2, 1, 2), (3, 3, 1, 3), (4, 4, 1, 4)]


def test_kernel_changed_when_identity_equal_but_record_differs() -> None:
    renamed = copy.deepcopy(A)
    renamed["SolutionNameMin"] = "stale"
    renamed["LoopTail"] = True  # default value: same Tensile name
    diff = diff_libraries(make_logic([A], [([1, 1, 1, 1], 0, 1.0)]), make_logic([renamed], [([1, 1, 1, 1], 0, 1.0)]))
    (group,) = diff.groups
    assert group.kernels_changed[0].keys == ["LoopTail", "SolutionNameMin"]
    assert not group.sizes_reassigned
    lite = diff_libraries(
        make_logic([A], [([1, 1, 1, 1], 0, 1.0)]),
        make_logic([renamed], [([1, 1, 1, 1], 0, 1.0)]),
        compat=Compat.TENSILELITE,
    )
    assert lite.groups[0].sizes_reassigned and lite.identity == "tensilelite"


def test_duplicate_keys_compare_occurrence_by_occurrence() -> None:
    a = make_logic([A, B], [([1, 1, 1, 1], 0, 1.0), ([1, 1, 1, 1], 1, 2.0)])
    b = make_logic([A, B], [([1, 1, 1, 1], 0, 1.0)])
    (group,) = diff_libraries(a, b).groups
    assert [(s.key, s.kernel.index) for s in group.sizes_removed] == [([1, 1, 1, 1], 1)]


def test_header_changes() -> None:
    a = make_logic([A], [([1, 1, 1, 1], 0, 1.0)], version="4.6.0")
    b = make_logic([A], [([1, 1, 1, 1], 0, 1.0)], version="4.35.0")
    (group,) = diff_libraries(a, b).groups
    assert [change.field for change in group.header_changes] == ["version_header"]


def test_directories(tmp_path: Path) -> None:
    from tensilekit.io.yaml_codec import dump_yaml

    for side, files in (("a", {"x.yaml": TABLE, "gone.yaml": TABLE}), ("b", {"x.yaml": TABLE[:2], "new.yaml": TABLE})):
        (tmp_path / side).mkdir()
        for name, table in files.items():
            (tmp_path / side / name).write_text(dump_yaml(logic_data([A, B], table)))
    diff = diff_libraries(tmp_path / "a", tmp_path / "b")
    assert diff.kind == "directory" and diff.files_added == ["new.yaml"] and diff.files_removed == ["gone.yaml"]
    assert [group.name for group in diff.groups] == ["x.yaml"]
    assert diff.a == str(tmp_path / "a")
    mapping = diff_libraries({"x.yaml": make_logic([A, B], TABLE)}, {"x.yaml": make_logic([A, B], TABLE)})
    assert mapping.is_empty


def test_kinds_must_match() -> None:
    with pytest.raises(UnsupportedFormat):
        diff_libraries(make_logic([A], []), {"x.yaml": make_logic([A], [])})


def test_diff_of_merge_lists_exactly_the_reported_changes() -> None:
    original = make_logic([A, B], TABLE)
    incremental = make_logic(
        [C, A], [([1, 1, 1, 1], 0, 11.0), ([2, 2, 1, 2], 1, 21.0), ([3, 3, 1, 3], 0, 5.0), ([9, 9, 1, 9], 1, 1.0)]
    )
    merged, report = merge_logic(original, incremental, MergePolicy(force_merge=False))
    (group,) = diff_libraries(original, merged).groups
    assert sorted(map(tuple, group.changed_keys)) == sorted(map(tuple, report.files[0].changed_keys))


def test_selection_changes_with_exact_selector() -> None:
    a = make_logic([A, B], TABLE)
    b = make_logic([A, B], [([1, 1, 1, 1], 1, 10.0), ([2, 2, 1, 2], 1, 20.0)])
    changes = selection_changes(a, b, [[1, 1, 1, 1], [2, 2, 1, 2], [3, 3, 1, 3], [7, 7, 1, 7]], exact_match_selector)
    assert [(c.query, c.a.index if c.a else None, c.b.index if c.b else None) for c in changes] == [
        ([1, 1, 1, 1], 0, 1),
        ([3, 3, 1, 3], 1, None),
    ]
    diff = diff_libraries(a, b, [[1, 1, 1, 1]])
    assert diff.queries == 1 and len(diff.selection) == 1 and diff.selector


def test_query_records_select_by_size_in_logic_files() -> None:
    a = make_logic([A, B], TABLE)
    b = make_logic([B, A], [([1, 1, 1, 1], 1, 10.0)])
    (change,) = selection_changes(
        a, b, [{"m": 1, "n": 1, "batch": 1, "k": 1}, {"m": 3, "n": 3, "k": 3}], exact_match_selector
    )
    assert change.query == {"m": 3, "n": 3, "k": 3} and change.b is None


def test_master_selection_diff_uses_the_selection_engine(corpus: Path) -> None:
    import json

    master_path = corpus / "masters" / "aldebaran_HHS_BH_TT_fp16alt.yaml"
    queries_path = corpus / "select" / "aldebaran_HHS_BH_TT_fp16alt.jsonl"
    if not master_path.exists() or not queries_path.exists():
        pytest.skip("master or its queries not in corpus")
    queries = [json.loads(line) for line in queries_path.read_text().splitlines()[:40]]
    master = load_master(master_path)
    same = diff_libraries(master, master, queries)
    assert same.selector == "tensilekit.selection.select_solution" and same.queries == 40 and not same.selection
    changed = master.model_copy(deep=True)
    changed.solutions = changed.solutions[1:]  # the runtime can no longer pick the first kernel
    removed = master.solutions[0].index
    diff = diff_libraries(master, changed, queries)
    assert all(change.a is not None and change.a.index == removed for change in diff.selection)
    with pytest.raises(Exception, match="query records"):
        diff_libraries(master, master, [[1, 1, 1, 1]])


def test_exact_selector_matches_four_tuple_queries_on_long_keys() -> None:
    logic = make_logic([A, B], [([1, 1, 1, 1, 5, 5, 5, 5], 1, 1.0)])
    picked = exact_match_selector(logic, [1, 1, 1, 1])
    assert picked is not None and picked.macro_tile0 == 128
    assert exact_match_selector(logic, [2, 2, 1, 2]) is None


def test_custom_selector_and_selection_objects() -> None:
    class Selection:
        def __init__(self, solution: Any) -> None:
            self.solution = solution

    def always_first(library: Any, query: Any) -> Selection:
        return Selection(library.solutions[0])

    a = make_logic([A, B], TABLE)
    b = make_logic([B, A], TABLE)
    (change,) = selection_changes(a, b, [[1, 1, 1, 1]], always_first)
    assert change.a is not None and change.b is not None


def test_predicate_text() -> None:
    raw = {
        "type": "And",
        "value": [
            {"type": "TypesEqual", "value": ["Half", "Half"]},
            {"type": "HighPrecisionAccumulate", "value": True},
        ],
    }
    assert predicate_text(raw) == "And(TypesEqual(Half,Half),HighPrecisionAccumulate(true))"


def test_master_libraries(corpus: Path) -> None:
    path = corpus / "masters" / "aldebaran_HHS_BH_TT_fp16alt.yaml"
    if not path.exists():
        pytest.skip("master not in corpus")
    master = load_master(path)
    assert diff_libraries(path, path.with_suffix(".dat")).is_empty
    changed = master.model_copy(deep=True)
    node = next(node for _, node in changed.iter_nodes() if node.type == "Matching")
    entry = node.table[0]
    node.table[0] = entry.model_copy(update={"speed": (entry.speed or 0) + 1.0})
    diff = diff_libraries(master, changed)
    assert diff.kind == "master" and len(diff.groups) == 1
    assert len(diff.groups[0].efficiency_changes) == 1
    assert diff.groups[0].efficiency_changes[0].delta == pytest.approx(1.0)


def test_unnameable_tensile_kernels_fall_back_to_dict_identity() -> None:
    data = logic_data([A], [([1, 1, 1, 1], 0, 1.0)])
    del data[5][0]["MacroTile0"]
    logic = logic_from_data(data)
    assert diff_libraries(logic, logic_from_data(copy.deepcopy(data))).is_empty


def test_master_kernel_identities_agree_with_python_equality() -> None:
    """diff keys master kernels by their sorted JSON text (fast); records that ``==`` calls equal
    but spell numbers differently (1, 1.0, True), NaN, and non-str keys must still be matched
    exactly as :func:`~tensilekit.merge.identity.freeze` matches them."""
    from tensilekit.merge.diff import _Identities
    from tensilekit.merge.identity import freeze

    nan = float("nan")
    records: list[dict[Any, Any]] = [
        {"sizeMapping": {"depthU": 16, "ratio": 1.0, "flags": [True, 0]}},
        {"sizeMapping": {"depthU": 16.0, "ratio": 1, "flags": [1, 0.0]}},
        {"sizeMapping": {"ratio": True, "flags": (1, False), "depthU": 16}},
        {"sizeMapping": {"depthU": 32, "ratio": 1.0, "flags": [True, 0]}},
        {"sizeMapping": {"depthU": 16, "ratio": 1.5, "flags": [True, 0]}},
        {"sizeMapping": {"depthU": "16", "ratio": 1.0, "flags": [True, 0]}},
        {"x": 1e16},
        {"x": 10**16},
        {"x": 1e22, "s": "MacroTile0"},
        {"x": 10**22, "s": "MacroTile0"},
        {"x": 2.0, "s": "untrue 1.00e5"},
        {"x": 2, "s": "untrue 1.00e5"},
        {"x": True, "s": "false.0"},
        {"x": 1, "s": "false.0"},
        {"x": -0.0},
        {"x": 0},
        {"x": nan},
        {"x": nan},
        {"x": float("nan")},
        {1: "a"},
        {"1": "a"},
        {1.0: "a"},
    ]
    for ordered in (records, records[::-1], records[2:] + records[:2]):  # a tuple record early or late
        identities = _Identities()
        numbers = [identities.of(record) for record in ordered]
        for first in range(len(ordered)):
            for second in range(len(ordered)):
                same = freeze(ordered[first]) == freeze(ordered[second])
                assert (numbers[first] == numbers[second]) == same, (ordered[first], ordered[second])


def test_master_kernel_shapes_pair_exactly_as_identities() -> None:
    """diff pairs master kernels of one shape (the same record serialised alike, or lent by the
    other side's kernel of its index when the records are ``==``) without their identity: pairing
    must still agree with :func:`~tensilekit.merge.identity.freeze` on every pair, NaN, infinities,
    tuples, integers over 64 bits, non-str keys and key orders included."""
    from tensilekit.merge.diff import DiffKernel, _Identities, _Kernel, _same_kernel
    from tensilekit.merge.identity import freeze

    nan = float("nan")
    records: list[dict[Any, Any]] = [
        {"sizeMapping": {"depthU": 16, "ratio": 1.0, "flags": [True, 0]}, "t": "x"},
        {"t": "x", "sizeMapping": {"flags": [True, 0], "ratio": 1.0, "depthU": 16}},  # keys reordered
        {"sizeMapping": {"depthU": 16.0, "ratio": 1, "flags": [1, 0.0]}, "t": "x"},
        {"sizeMapping": {"ratio": True, "flags": (1, False), "depthU": 16}, "t": "x"},
        {"sizeMapping": {"depthU": 32, "ratio": 1.0, "flags": [True, 0]}, "t": "x"},
        {"x": nan},
        {"x": nan},
        {"x": float("inf")},
        {"x": float("inf")},
        {"x": 10**30},
        {"x": 10**30},
        {"x": 0xCB7FF80000000000},  # packs with the bytes of a NaN inside
        {1: "a"},
        {"1": "a"},
        {True: "a"},
    ]

    def kernels(
        identities: _Identities, side: list[dict[Any, Any]], partner: list[_Kernel] | None = None
    ) -> list[_Kernel]:
        built = []
        for position, record in enumerate(side):
            other = None if partner is None else partner[position]
            if other is not None and other.shape is not None and other.shape.record() == record:
                shape = other.shape
            else:
                shape = identities.shape_of(record)
            identity = None if shape is not None else identities.of(record)
            built.append(_Kernel(identity, DiffKernel(index=position), {}, shape))
        return built

    for other_side in (records, records[::-1], records[1:] + records[:1]):
        identities = _Identities()
        first = kernels(identities, records)
        second = kernels(identities, other_side, first)
        both = list(zip(records + other_side, first + second, strict=True))
        if other_side is records:  # every record packed faithfully is lent its partner's shape
            assert sum(a.shape is not None and a.shape is b.shape for a, b in zip(first, second, strict=True)) == 7
        for record_a, kernel_a in both:
            for record_b, kernel_b in both:
                same = freeze(record_a) == freeze(record_b)
                assert _same_kernel(kernel_a, kernel_b) == same, (record_a, record_b)


def _table_rows(node: Any) -> Iterator[dict[str, Any]]:
    """Every row of every matching table in a decoded master's library tree, in tree order."""
    if isinstance(node, dict):
        if isinstance(node.get("table"), list):
            yield from node["table"]
        for value in node.values():
            yield from _table_rows(value)
    elif isinstance(node, list):
        for value in node:
            yield from _table_rows(value)


def _respelled_master(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a decoded master) as another writer could spell it: keys sorted at every level,
    solutions renumbered in reverse, one kernel's bool spelled as an integer (all ``==``)."""

    def sort(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: sort(value[key]) for key in sorted(value, key=str)}
        return [sort(item) for item in value] if isinstance(value, list) else value

    respelled = sort(data)
    numbers = [entry["index"] for entry in respelled["solutions"]]
    renumbered = dict(zip(numbers, reversed(numbers), strict=True))

    for row in _table_rows(respelled["library"]):
        row["index"] = renumbered[row["index"]]
    for entry in respelled["solutions"]:
        entry["index"] = renumbered[entry["index"]]
    respelled["solutions"][0]["problemType"]["useBeta"] = int(respelled["solutions"][0]["problemType"]["useBeta"])
    return respelled


def test_master_diff_by_shapes_is_the_diff_by_identities(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A master diff pairing kernels by shape (cheap) reports exactly what pairing every kernel by
    its identity (the full rule) reports: same libraries spelled apart, kernels changed, moved,
    duplicated and given a NaN, in either order."""
    import msgpack

    from tensilekit.io.master_io import master_from_data
    from tensilekit.merge import diff as diff_module

    data = msgpack.unpackb((corpus / "masters" / "aldebaran_HHS_BH_TT_fp16alt.dat").read_bytes(), strict_map_key=False)
    changed = _respelled_master(copy.deepcopy(data))
    solutions = changed["solutions"]
    solutions[1]["sizeMapping"]["workGroupMapping"] += 3  # a real change: its sizes are reassigned
    solutions[2]["ideals"] = {"nan": float("nan")}  # never the same kernel as any other
    solutions[3]["problemType"]["useBeta"] = 1 - solutions[3]["problemType"]["useBeta"]  # changed, spelled apart
    duplicate = copy.deepcopy(solutions[4])
    duplicate["index"] = max(entry["index"] for entry in solutions) + 1
    solutions.append(duplicate)  # a second index of an equal kernel, its sizes moved to it
    moved = 0
    for row in _table_rows(changed["library"]):
        if row["index"] == solutions[4]["index"] and moved < 2:
            row["index"], moved = duplicate["index"], moved + 1
    original = master_from_data(data)
    variants = {
        "respelled": master_from_data(_respelled_master(copy.deepcopy(data))),
        "changed": master_from_data(changed),
    }
    by_shape = {
        name: (diff_libraries(original, other).model_dump_json(), diff_libraries(other, original).model_dump_json())
        for name, other in variants.items()
    }
    monkeypatch.setattr(diff_module._Identities, "shape_of", lambda self, record: None)
    for name, other in variants.items():
        by_identity = (
            diff_libraries(original, other).model_dump_json(),
            diff_libraries(other, original).model_dump_json(),
        )
        assert by_shape[name] == by_identity, name
    assert diff_libraries(original, variants["respelled"]).is_empty
    (group,) = diff_libraries(original, variants["changed"]).groups
    assert group.sizes_reassigned and group.kernels_added and group.kernels_removed and moved >= 1


def test_same_master_as_msgpack_and_yaml_pairs_every_kernel_by_shape(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same master written by Tensile as msgpack (keys in build order) and as YAML (keys
    sorted) is diffed without one kernel identity computed, nor one table's rows regrouped: each
    kernel is lent its partner's shape (issue 33: identities were ~3.5 s of rocBLAS_Full's diff)."""
    from tensilekit.merge import diff as diff_module

    def refused(*arguments: Any) -> Any:
        raise AssertionError("a kernel identity was computed")

    monkeypatch.setattr(diff_module._Identities, "of", refused)
    monkeypatch.setattr(diff_module, "_kernel_of", refused)  # only the rows regrouped look kernels up
    for name in ("aldebaran_HHS_BH_TT_fp16alt", "hipblaslt_gfx942_freesize"):
        folder = corpus / ("masters-hipblaslt" if name.startswith("hipblaslt") else "masters")
        diff = diff_libraries(folder / f"{name}.dat", folder / f"{name}.yaml")
        assert diff.is_empty and diff.groups_compared >= 1, name


def test_master_records_from_the_serializer_are_raw_records(corpus: Path) -> None:
    """diff reads each master kernel's record from pydantic's serializer, not ``raw()``: for every
    solution of the corpus masters (Tensile and hipBLASLt) the two are equal, so identities are."""
    from tensilekit.merge.diff import _JSON_KEY, _MASTER_IGNORED_KEYS, _solution_record
    from tensilekit.merge.identity import freeze
    from tensilekit.model.solution import MasterSolution

    folders = ("masters", "masters-hipblaslt", "masterlib/tensile/SolutionLibraries")
    paths = [path for folder in folders for path in sorted((corpus / folder).glob("*.dat*"))]
    paths = [path for path in paths if "rocBLAS_Full" not in path.name]  # 21 288 solutions: seconds
    assert len(paths) >= 15
    for path in paths:
        predicates: dict[Any, Any] = {}
        for kernel in load_master(path).solutions:
            dumped = kernel.model_dump(by_alias=True, exclude_unset=True)
            assert freeze(dumped) == freeze(kernel.raw()), (path.name, kernel.index)
            # diff's record: the dump with each predicate's serialisation taken once per predicate
            compared = {key: value for key, value in dumped.items() if key not in _MASTER_IGNORED_KEYS}
            record = _solution_record(kernel, predicates)
            assert record == compared and _JSON_KEY(record) == _JSON_KEY(compared), (path.name, kernel.index)
    # a predicate's field name beside its key lands among the extras: the record is the whole dump's
    both = {"index": 1, "hardwarePredicate": {"type": "TruePred"}, "hardware_predicate": {"type": "Not", "value": {}}}
    spelled_twice = MasterSolution.model_validate(both)
    dumped = spelled_twice.model_dump(by_alias=True, exclude_unset=True)
    assert _solution_record(spelled_twice, {}) == {key: dumped[key] for key in dumped if key != "index"}


@given(st.text('0123456789.-eE+truefalsx, :[]"a', max_size=16))
@settings(max_examples=500, deadline=None)
def test_respelled_numbers_are_those_of_the_whole_number_pattern(text: str) -> None:
    """The identity buckets match only the numbers _number_value may respell (not integers):
    the text it gives is the one of matching every number."""
    import re

    from tensilekit.merge.diff import _NUMBER_SPELLING, _number_value

    every_number = re.compile(r"\btrue\b|\bfalse\b|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
    assert _NUMBER_SPELLING.sub(_number_value, text) == every_number.sub(_number_value, text)


@given(st.text('0123456789.-eE+truefalsx, :[]"a', max_size=24))
@settings(max_examples=500, deadline=None)
def test_the_shortcut_respells_as_the_whole_pattern(text: str) -> None:
    """_spelled_by_value skips _NUMBER_SPELLING when no fraction or exponent could change: it must
    give the text the whole pattern gives once true and false are 1 and 0."""
    from tensilekit.merge.diff import _NUMBER_SPELLING, _number_value, _spelled_by_value

    digits = text.replace("true", "1").replace("false", "0")
    assert _spelled_by_value(text) == _NUMBER_SPELLING.sub(_number_value, digits)


def test_respelling_costs_less_than_the_record_text(corpus: Path) -> None:
    """diff's by-value respelling of a kernel's text (the first side's every kernel is new) stays
    cheaper than writing the text itself (issue 33: the whole-number pattern tried at every position
    cost ~3.6x the JSON encoding, ~2 s of rocBLAS_Full's diff; the searched shortcut ~0.3x)."""
    import time

    from tensilekit.merge.diff import _JSON_KEY, _MASTER_IGNORED_KEYS, _spelled_by_value

    library = load_master(corpus / "masters" / "arcturus_HHS_BH_NT_cueff.dat")
    records = [
        {key: value for key, value in solution.model_dump(by_alias=True, exclude_unset=True).items()
         if key not in _MASTER_IGNORED_KEYS}
        for solution in library.solutions
    ]  # fmt: skip
    texts = [_JSON_KEY(record) for record in records]

    def best(function: Any) -> float:
        fastest = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            function()
            fastest = min(fastest, time.perf_counter() - start)
        return fastest

    writing = best(lambda: [_JSON_KEY(record) for record in records])
    respelling = best(lambda: [_spelled_by_value(text) for text in texts])
    assert respelling / writing <= 1.5, f"respelling {respelling:.4f} s against the JSON text {writing:.4f} s"

"""The hipBLASLt version seam: names, detection off a master, how the caller's choice combines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary
from tensilekit.predicates.evaluate import evaluate
from tensilekit.selection.grid_batch_walk import batch_first_grid_walk
from tensilekit.selection.hipblaslt_versions import (
    HIPBLASLT_0_12_1,
    HIPBLASLT_7D9FB683,
    HIPBLASLT_VERSIONS,
    hipblaslt_version_named,
)
from tensilekit.selection.problem import Hardware
from tensilekit.selection.runtime import (
    HIPBLASLT,
    TENSILE,
    detect_runtime,
    hipblaslt_runtime,
    resolve_runtime,
)
from tensilekit.selection.walk import as_contraction


def test_versions_by_name() -> None:
    assert list(HIPBLASLT_VERSIONS) == ["7d9fb683", "0.12.1", "5.x"]
    assert hipblaslt_version_named("0.12.1") is HIPBLASLT_0_12_1
    assert hipblaslt_version_named(" V0.12.1 ") is HIPBLASLT_0_12_1
    assert hipblaslt_runtime("7d9fb683") is HIPBLASLT
    assert hipblaslt_runtime(HIPBLASLT_0_12_1).label == "hipBLASLt 0.12.1"
    with pytest.raises(SelectionError, match="unknown hipBLASLt version '0.13'.*7d9fb683, 0.12.1, 5.x"):
        hipblaslt_version_named("0.13")
    with pytest.raises(TypeError):
        hipblaslt_version_named(12)  # type: ignore[arg-type]


def test_the_callers_choice_and_the_librarys() -> None:
    v0121 = hipblaslt_runtime("0.12.1")
    assert resolve_runtime(None, None, lambda: v0121) is v0121
    assert resolve_runtime("hipblaslt", None, lambda: v0121) is v0121  # "hipblaslt": the library's version
    assert resolve_runtime("hipblaslt", None, lambda: TENSILE) is HIPBLASLT
    assert resolve_runtime(None, "7d9fb683", lambda: v0121) is HIPBLASLT
    assert resolve_runtime(HIPBLASLT, None, lambda: v0121) is HIPBLASLT  # a Runtime object is taken as given
    assert resolve_runtime("tensile", None, lambda: v0121) is TENSILE
    with pytest.raises(SelectionError, match="applies to the hipBLASLt runtime, not to tensile"):
        resolve_runtime("tensile", "0.12.1", lambda: v0121)


def _entry(m: int, n: int, b: int, k: int) -> tuple[int, int, int, int]:
    return (m, n, b, k)


def test_batch_first_walk_looks_the_batch_up_before_folding() -> None:
    keys = [_entry(128, 64, 1, 64), _entry(128, 64, 4, 64), _entry(512, 64, 1, 64)]
    distance = hipblaslt_runtime("0.12.1").grid_distance
    every = list(range(len(keys)))
    # batch 4 is in the (128, 64) cell: found there, the batch not folded into M
    assert batch_first_grid_walk(keys, (128, 64, 4, 64), lambda p: every[p], distance, 1)[0][2] == 1
    # batch 2: the cell's first batch >= 2 is 4, found there, no restart
    assert batch_first_grid_walk(keys, (128, 64, 2, 64), lambda p: every[p], distance, 1)[0][2] == 1
    # the batch-4 entry refused: nothing found, the table's first entry has batch 1, so the walk
    # restarts with batch folded into M ([512, 64, 1, 64]): the (512, 64) cell answers
    refused = [0, None, 2]
    assert batch_first_grid_walk(keys, (128, 64, 4, 64), lambda p: refused[p], distance, 1)[0][2] == 2
    # 7d9fb683 folds first: [512, 64, 1, 64]
    assert HIPBLASLT.grid_key((128, 64, 4, 64)) == (512, 64, 1, 64)


def test_ties_go_to_the_later_entry_and_k_by_absolute_difference() -> None:
    keys = [_entry(6144, 4096, 1, 12288), _entry(6144, 4096, 1, 12288), _entry(6144, 4096, 1, 65536)]
    query = (4776, 2961, 1, 38611)
    found = batch_first_grid_walk(keys, query, lambda p: p, hipblaslt_runtime("0.12.1").grid_distance, 1)
    assert found[0][2] == 1  # |12288 - 38611| < |65536 - 38611|; of the two equal entries, the later
    old = HIPBLASLT.grid_distance
    assert old(query, keys[2]) < old(query, keys[0])  # 7d9fb683's ratio prefers 65536


def test_detection_and_the_cli(corpus: Path, tmp_path: Path) -> None:
    master_path = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat"
    master = tensilekit.load_master(master_path)
    assert isinstance(master, MasterLibrary)
    assert detect_runtime(master) is HIPBLASLT
    marked = master.model_copy(
        update={
            "solutions": [
                s.model_copy(update={"problem_type": {**(s.problem_type or {}), "swizzleTensorA": False}})
                for s in master.solutions
            ]
        }
    )
    assert detect_runtime(marked).version is HIPBLASLT_0_12_1
    assert tensilekit.open_library(master_path).runtime.version is HIPBLASLT_7D9FB683
    assert tensilekit.open_library(master_path, hipblaslt_version="0.12.1").runtime.version is HIPBLASLT_0_12_1
    info = CliRunner().invoke(cli, ["info", str(master_path)])
    assert "taken for\thipBLASLt 7d9fb683" in info.output
    wrong = CliRunner().invoke(cli, ["select", "64", "64", "64", "--library", str(master_path), "--runtime", "tensile",
                                     "--hipblaslt-version", "0.12.1"])  # fmt: skip
    assert wrong.exit_code != 0 and "applies to the hipBLASLt runtime" in wrong.output
    bad = CliRunner().invoke(
        cli, ["select", "64", "64", "64", "--library", str(master_path), "--hipblaslt-version", "9"]
    )
    assert bad.exit_code == 2 and "'7d9fb683', '0.12.1'" in bad.output
    lines = CliRunner().invoke(
        cli, ["select", "4776", "2961", "38611", "--library", str(master_path), "--arch", "gfx942", "--type", "Half,Float8,Half,Half,Float",
              "--compute-type", "f32_fast_f16", "--json", "--hipblaslt-version", "0.12.1"],
    )  # fmt: skip
    assert lines.exit_code == 0, lines.output
    assert json.loads(lines.output)["index"] == 520


def _synchronizer_check(predicate: Any) -> Any:
    if getattr(predicate, "type", None) == "SynchronizerSizeCheck":
        return predicate
    value = getattr(predicate, "value", None)
    for item in value if isinstance(value, list) else [value]:
        found = _synchronizer_check(item) if hasattr(item, "type") else None
        if found is not None:
            return found
    return None


def test_synchronizer_slots_by_version(corpus: Path) -> None:
    """The five-value ``SynchronizerSizeCheck`` allows 40 960 slots under 7d9fb683, 409 600 under
    0.12.1 (no corpus query can tell them apart through AMD's C++: the GSU workspace cap refuses
    those kernels first at such sizes, so this checks the seam, not the oracle)."""
    master = tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_freesize.dat")
    assert isinstance(master, MasterLibrary)
    check = next(found for s in master.solutions if (found := _synchronizer_check(s.problem_predicate)) is not None)
    mt0, mt1, wave_tile, nept, threads = (int(v) for v in check.value)
    slots_per_tile = wave_tile * (threads // 64) * nept
    tiles = 40960 // slots_per_tile + 1  # just above 7d9fb683's limit, far below 0.12.1's
    problem = as_contraction(HIPBLASLT.problem_from_query({"m": mt0 * tiles, "n": mt1, "k": 64, "a_type": "Half"}))
    device = Hardware(arch="gfx942", cu_count=304)
    assert not evaluate(check, problem, device, rules=HIPBLASLT.predicate_rules).passed
    assert evaluate(check, problem, device, rules=hipblaslt_runtime("0.12.1").predicate_rules).passed
    assert evaluate(check, problem, device).passed is False  # the default rules are 7d9fb683's


@pytest.mark.parametrize(
    ("value", "method"), [(None, 0), ("", 0), (" 2 ", 2), ("1", 1), (2, 2), ("7", 7)]
)  # fmt: skip
def test_selection_method_values(value: Any, method: int) -> None:
    from tensilekit.selection.hipblaslt_versions import selection_method_from

    assert selection_method_from(value) == method


@pytest.mark.parametrize("value", ["streamk", "-1", -2, "2.0", True])
def test_selection_method_refuses_what_is_no_count(value: Any) -> None:
    from tensilekit.selection.hipblaslt_versions import selection_method_from

    with pytest.raises(SelectionError, match="TENSILE_SOLUTION_SELECTION_METHOD"):
        selection_method_from(value)


def test_one_runtime_per_version_and_method() -> None:
    """A method the version does not act on gives the version's plain runtime (7d9fb683 reads no
    method; 0.12.1 none but 1 and 2), so runtimes stay comparable by identity."""
    assert hipblaslt_runtime("0.12.1", 0) is hipblaslt_runtime("0.12.1")
    assert hipblaslt_runtime("0.12.1", 5) is hipblaslt_runtime("0.12.1")
    assert hipblaslt_runtime("7d9fb683", 2) is HIPBLASLT
    streamk = hipblaslt_runtime("0.12.1", 2)
    assert streamk is hipblaslt_runtime("0.12.1", 2) is not hipblaslt_runtime("0.12.1")
    assert (streamk.version, streamk.selection_method) == (HIPBLASLT_0_12_1, 2)
    assert resolve_runtime(None, None, lambda: hipblaslt_runtime("0.12.1"), 2) is streamk
    assert resolve_runtime(None, None, lambda: TENSILE, 2) is TENSILE
    assert HIPBLASLT_0_12_1.selection_metric(2) == "ExperimentalStreamK"
    assert HIPBLASLT_7D9FB683.selection_metric(2) is None


def test_version_of_logic_reads_the_problem_type() -> None:
    from tensilekit.selection.hipblaslt_versions import version_of_logic

    assert version_of_logic([{"DataType": 0}, {"SwizzleTensorB": False}]) is HIPBLASLT_0_12_1
    assert version_of_logic([{"DataType": 0}]) is HIPBLASLT_7D9FB683
    assert version_of_logic([]) is HIPBLASLT_7D9FB683


def test_version_of_logic_files_reads_the_header_before_the_problem_type() -> None:
    from tensilekit.selection.hipblaslt_versions import TENSILELITE_5X, version_of_logic_files

    def logic(minimum: str, problem_type: dict[str, object]) -> list[object]:
        return [{"MinimumRequiredVersion": minimum}, "gfx950", "gfx950", [], problem_type, []]

    assert version_of_logic_files([logic("5.0.0", {"DataType": 0})]) is TENSILELITE_5X
    assert version_of_logic_files([logic("4.33.0", {"SwizzleTensorA": False}), logic("5.1", {})]) is TENSILELITE_5X
    assert version_of_logic_files([logic("4.33.0", {"SwizzleTensorA": False})]) is HIPBLASLT_0_12_1
    assert version_of_logic_files([logic("4.33.0", {"DataType": 0}), {"Solutions": []}]) is HIPBLASLT_7D9FB683


def test_naming_the_version_keeps_the_selection_method_a_runtime_was_started_with() -> None:
    from tensilekit.selection.runtime import hipblaslt_runtime, resolve_runtime, with_hipblaslt_version

    streamk = hipblaslt_runtime("0.12.1", 2)
    assert with_hipblaslt_version(streamk, "0.12.1") is streamk
    assert resolve_runtime(streamk, "0.12.1", lambda: streamk) is streamk
    assert with_hipblaslt_version(streamk, "7d9fb683") is hipblaslt_runtime("7d9fb683")  # 7d9fb683 reads no method


def test_streamk_fixture_is_what_its_generator_writes() -> None:
    """``fixtures/streamk/*.yaml`` (the Stream-K logic the 0.12.1 conformance tests build) are what
    ``fixtures/streamk/make_logic.py`` writes today: run it after changing what it reads."""
    import importlib.util

    folder = Path(__file__).resolve().parents[3] / "fixtures" / "streamk"
    spec = importlib.util.spec_from_file_location("make_streamk_logic", folder / "make_logic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = module.logic_files()
    assert sorted(files) == sorted(path.name for path in folder.glob("*.yaml"))
    for name, text in files.items():
        assert (folder / name).read_text() == text, f"{name} is stale: run fixtures/streamk/make_logic.py"
        assert ("ExperimentalStreamK" in text) == ("StreamK: 3" in text) == name.endswith("_StreamK.yaml")


def _commands(group: Any, path: tuple[str, ...] = ()) -> Any:
    import click

    if isinstance(group, click.Group):
        for name in group.list_commands(click.Context(group)):
            yield from _commands(group.get_command(click.Context(group), name), (*path, name))
    else:
        yield " ".join(path), group


def test_every_command_that_answers_for_a_device_takes_the_version_and_the_method() -> None:
    """Issue 34: the version (and 0.12.1's selection method) on every command that answers; a
    command answers for a device when it takes --arch. tune is the exception: its runtime is the
    installed hipBLASLt the tool profile names, not a choice."""
    answering = {
        name: {opt for param in command.params for opt in getattr(param, "opts", [])}
        for name, command in _commands(cli)
    }
    answering = {name: opts for name, opts in answering.items() if "--arch" in opts and name != "tune"}
    assert {"select", "coverage", "plot coverage", "plot selection", "diff", "remap"} <= set(answering)
    for name, opts in answering.items():
        assert {"--hipblaslt-version", "--solution-selection-method"} <= opts, name


# --------------------------------------------------------------------------- tensilelite 5.x's rules
# Each field of TENSILELITE_5X that differs from 7d9fb683's (the values it had before they were read
# from 5.x's C++; the module docstring of hipblaslt_versions names path@commit for each).

FIVE = "5.x"


def test_5x_grid_walk_looks_the_batch_up_first_and_takes_k_by_absolute_difference() -> None:
    """``PropertyMatching.hpp`` @1236de37 (batch looked up first, ties to the later entry) and
    ``Distance.hpp`` @a39bf8f2 (``|K - gridK|``), as 0.12.1, not 7d9fb683."""
    five = hipblaslt_runtime(FIVE)
    assert five.grid_batch_first and not HIPBLASLT.grid_batch_first
    assert five.grid_key((128, 64, 4, 64)) == (128, 64, 4, 64) != HIPBLASLT.grid_key((128, 64, 4, 64))
    keys = [_entry(6144, 4096, 1, 12288), _entry(6144, 4096, 1, 12288), _entry(6144, 4096, 1, 65536)]
    query = (4776, 2961, 1, 38611)
    assert five.grid_distance is hipblaslt_runtime("0.12.1").grid_distance is not HIPBLASLT.grid_distance
    assert five.grid_distance(query, keys[0]) < five.grid_distance(query, keys[2])  # |12288 - K| < |65536 - K|
    assert batch_first_grid_walk(keys, query, lambda p: p, five.grid_distance, 1)[0][2] == 1  # the later tie
    batched = [_entry(128, 64, 1, 64), _entry(128, 64, 4, 64), _entry(512, 64, 1, 64)]
    assert batch_first_grid_walk(batched, (128, 64, 4, 64), lambda p: p, five.grid_distance, 1)[0][2] == 1


def test_5x_answers_the_grid_corpus_as_0121_does(corpus: Path) -> None:
    """On a built gfx942 master taken with ``hipblaslt_version="5.x"``, the GridBased queries
    0.12.1's walk answers otherwise than 7d9fb683's get 0.12.1's answers (same walk, same distance)."""
    source = corpus / "select-hipblaslt" / "hipblaslt_gfx942_grid.jsonl"
    if not source.exists():
        pytest.skip(f"{source.name} is not in this corpus")
    master_path = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat"
    records = [json.loads(line) for line in source.read_text().splitlines()]
    records = records[100:140] + records[400:420]
    answers = {}
    for version in ("7d9fb683", "0.12.1", FIVE):
        library = tensilekit.open_library(master_path, hipblaslt_version=version)
        assert library.runtime.version.name == version
        answers[version] = [library.select(library.problem_from_query(r), library.device_of(r)).index for r in records]
    assert answers[FIVE] == answers["0.12.1"] != answers["7d9fb683"]


def test_5x_computes_f16_as_float() -> None:
    """``tensile_host.cpp`` @1ea8c64f ``ConstructTensileProblem``: "fallback to f32 for f16 compute type"."""
    from tensilekit.model.common import DataType
    from tensilekit.selection.hipblaslt import compute_input_type, tensile_compute_type

    five = hipblaslt_version_named(FIVE)
    assert tensile_compute_type("f16", five) is DataType.FLOAT is not tensile_compute_type("f16", HIPBLASLT_7D9FB683)
    assert compute_input_type(DataType.BFLOAT16, DataType.BFLOAT16, "f16", five) is DataType.BFLOAT16
    assert compute_input_type(DataType.BFLOAT16, DataType.BFLOAT16, "f16", HIPBLASLT_7D9FB683) is DataType.HALF


def test_5x_synchronizer_slots(corpus: Path) -> None:
    """``ContractionProblemPredicates.hpp`` @85860bf5: 409 600 slots (the five-value check of a
    7d9fb683-built master past 7d9fb683's 40 960 holds under 5.x)."""
    master = tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_freesize.dat")
    assert isinstance(master, MasterLibrary)
    check = next(found for s in master.solutions if (found := _synchronizer_check(s.problem_predicate)) is not None)
    mt0, mt1, wave_tile, nept, threads = (int(v) for v in check.value)
    tiles = 40960 // (wave_tile * (threads // 64) * nept) + 1
    problem = as_contraction(HIPBLASLT.problem_from_query({"m": mt0 * tiles, "n": mt1, "k": 64, "a_type": "Half"}))
    device = Hardware(arch="gfx942", cu_count=304)
    assert evaluate(check, problem, device, rules=hipblaslt_runtime(FIVE).predicate_rules).passed
    assert not evaluate(check, problem, device, rules=HIPBLASLT.predicate_rules).passed


def test_5x_selection_methods_are_mlp_and_streamk() -> None:
    """``PerformanceMetricTypes.hpp`` @a39bf8f2: ``ExperimentalOption`` MLP = 1, StreamK = 2
    (0.12.1's 1 was DTree; 7d9fb683 reads no method)."""
    five = hipblaslt_version_named(FIVE)
    assert [five.selection_metric(m) for m in (0, 1, 2, 3)] == [None, "ExperimentalMLP", "ExperimentalStreamK", None]
    assert HIPBLASLT_0_12_1.selection_metric(1) == "ExperimentalDTree"
    problem = HIPBLASLT.problem_from_query({"m": 64, "n": 64, "k": 64, "a_type": "Half"})
    assert hipblaslt_runtime(FIVE, 1).reported_metric(problem).performance_metric.value == "ExperimentalMLP"
    assert hipblaslt_runtime(FIVE, 2).reported_metric(problem).performance_metric.value == "ExperimentalStreamK"
    assert hipblaslt_runtime(FIVE, 5) is hipblaslt_runtime(FIVE)  # a method 5.x does not act on


def _streamk_solution(corpus: Path) -> Any:
    master = tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat")
    assert isinstance(master, MasterLibrary)
    solution = next(s for s in master.solutions if int(s.size_mapping.workspace_size_per_elem_c or 0) > 0)
    mapping = solution.size_mapping.model_copy(update={"stream_k": 3, "stream_k_atomic": 0})
    return solution.model_copy(update={"size_mapping": mapping})


def test_5x_lists_a_streamk_row_only_under_method_2() -> None:
    """``ExactLogicLibrary.hpp`` @1ea8c64f ``findAllSolutions`` skips an ``ExperimentalStreamK``
    row unless ``useExperimentalSelection() == 2``; 7d9fb683 lists every row."""
    from tensilekit.model.predicates import FlagPredicate

    row = FlagPredicate(type="ExperimentalStreamK")
    problem = HIPBLASLT.problem_from_query({"m": 64, "n": 64, "k": 64, "a_type": "Half"})
    device = Hardware(arch="gfx942", cu_count=304)
    listed = {
        (version, method): runtime.lists_row_of_gemm_type(row, as_contraction(runtime.reported_metric(problem)), device)
        for version, method in [(FIVE, 0), (FIVE, 2), ("7d9fb683", 0)]
        for runtime in [hipblaslt_runtime(version, method)]
    }
    assert listed == {(FIVE, 0): False, (FIVE, 2): True, ("7d9fb683", 0): True}


def test_5x_index_lookup_hands_out_streamk_kernels(corpus: Path) -> None:
    """``MasterSolutionLibrary.hpp`` @1c2f3843 ``getSolutionByIndex(Hardware const&, int)`` is a map
    lookup (0.12.1's hid Stream-K kernels unless method 2)."""
    streamk = _streamk_solution(corpus)
    assert not hipblaslt_runtime(FIVE).hides_by_index(streamk)
    assert hipblaslt_runtime("0.12.1").hides_by_index(streamk)


def test_5x_streamk_partials_only_when_they_fit(corpus: Path) -> None:
    """``ContractionSolution.cpp`` @2d614b75 ``requiredWorkspaceSize``: a Stream-K kernel's partial
    tiles are asked for only when they fit the workspace (else it runs data-parallel), so a small
    workspace does not refuse it under 5.x as it does under 0.12.1."""
    streamk = _streamk_solution(corpus)
    mt0, mt1 = (int(v) for v in streamk.size_mapping.macro_tile[:2])
    device = Hardware(arch="gfx942", cu_count=304)
    query = {"m": mt0 * 37, "n": mt1 * 3, "k": 4096, "a_type": "Half", "workspace_size": 1 << 40}
    roomy = as_contraction(HIPBLASLT.problem_from_query(query))
    need = hipblaslt_runtime(FIVE).required_workspace(roomy, device, streamk)
    assert need == hipblaslt_runtime("0.12.1").required_workspace(roomy, device, streamk) > 0
    tight = as_contraction(HIPBLASLT.problem_from_query({**query, "workspace_size": need - 1}))
    assert hipblaslt_runtime(FIVE).required_workspace(tight, device, streamk) == 0
    assert hipblaslt_runtime("0.12.1").required_workspace(tight, device, streamk) == need
    # a grid that divides the tiles leaves no partial tile (``tiles % skGrid != 0``): on the CU-count
    # grid, 2 x 304 tiles over 304 CUs need nothing, 2 x 304 + 1 tiles a partial tile per workgroup
    from tensilekit.predicates.evaluate import lite_required_workspace

    for rows, wanted in [(2 * 304, 0), (2 * 304 + 1, 304)]:
        problem = as_contraction(HIPBLASLT.problem_from_query({**query, "m": mt0 * rows, "n": mt1}))
        per_workgroup = mt0 * mt1 * int(streamk.size_mapping.workspace_size_per_elem_c)
        need = lite_required_workspace(problem, device, streamk, synchronizer=False, streamk_partials_optional=True)
        assert need == wanted * per_workgroup


def test_5x_workspace_leaves_the_synchronizer_out(corpus: Path) -> None:
    """``ContractionSolution.cpp`` @2d614b75: ``requiredWorkspaceSize`` has no synchronizer
    (``requiredSynchronizerSize`` is apart); 7d9fb683 counts it for a GSU > 1, GA 3 kernel."""
    master = tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat")
    assert isinstance(master, MasterLibrary)
    solution = next(s for s in master.solutions if int(s.size_mapping.workspace_size_per_elem_c or 0) > 0)
    mapping = solution.size_mapping.model_copy(update={"global_split_u": 4, "global_accumulation": 3, "waveNum": 4})
    custom = solution.model_copy(update={"size_mapping": mapping})
    problem = as_contraction(HIPBLASLT.problem_from_query({"m": 1024, "n": 1024, "k": 4096, "a_type": "Half"}))
    device = Hardware(arch="gfx942", cu_count=304)
    five = hipblaslt_runtime(FIVE).required_workspace(problem, device, custom)
    old = HIPBLASLT.required_workspace(problem, device, custom)
    assert five == hipblaslt_runtime("0.12.1").required_workspace(problem, device, custom) < old

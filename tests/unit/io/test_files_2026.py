"""Issue 35 items 3 and 4: the files AMD's 2026 tensilelite (5.x) writes, on small fixtures of the same form.

* ``fixtures/tensilelite_5x/gfx950_Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs.yaml``: a LibraryLogic file
  as tensilelite 5.0.0 writes it (``LibraryIO.createLibraryLogic`` deletes every solution's
  ProblemType; ``parseLibraryLogicData`` gives each solution the file's, rocm-libraries
  ``projects/hipblaslt/tensilelite/Tensile/LibraryIO.py`` @09ee40199827), solutions carrying the
  5.x keys ``AssertFree1DivByMT1LowbitGT1`` / ``AssertKRingShiftTailWrapOnly`` that make no predicate.
* ``fixtures/tensilelite_5x/client_launch_limits_gfx950.yaml``: a client-build master whose solutions
  carry 5.x's ``LaunchLimits`` task predicate (``ContractionTaskPredicates.hpp`` @1ea8c64f53e4).
* ``fixtures/tensilelite_5x/client_unmodelled_predicate_gfx950.yaml``: the same with a predicate type
  nothing defines on one solution: only that solution is passed over.

(``fixtures/tensilelite_5x/make_2026.py`` writes all three.)
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import InvalidValue
from tensilekit.io.logic_io import dumps_logic, load_logic
from tensilekit.io.master_io import dumps_master, load_master, loads_master
from tensilekit.libbuild import build_master_tree, build_tensilelite_libraries
from tensilekit.lint.files import lint_file
from tensilekit.model.checks import check_logic, check_master
from tensilekit.selection.api import select_batch, select_solution
from tensilekit.selection.hipblaslt import problem_from_hipblaslt_query
from tensilekit.selection.problem import Hardware
from tensilekit.selection.unserved import no_kernel_reason

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
LOGIC = FIXTURES / "tensilelite_5x" / "gfx950_Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs.yaml"
CLIENT = FIXTURES / "tensilelite_5x" / "client_launch_limits_gfx950.yaml"
UNMODELLED = FIXTURES / "tensilelite_5x" / "client_unmodelled_predicate_gfx950.yaml"
GFX950 = Hardware(arch="gfx950", cu_count=256)


def query(m: int, n: int, k: int) -> Any:
    return problem_from_hipblaslt_query(
        {"trans_a": "T", "trans_b": "N", "a_type": "BFloat16", "b_type": "BFloat16", "c_type": "BFloat16",
         "d_type": "BFloat16", "compute_type": "f32", "compute_input_type": "BFloat16",
         "workspace_size": 134217728, "m": m, "n": n, "k": k, "batch": 1, "alpha": 1.0, "beta": 1.0}
    )  # fmt: skip


# --------------------------------------------------------------------------- item 3: logic files


def test_the_logic_fixture_has_the_5x_writer_form() -> None:
    data = yaml.safe_load(LOGIC.read_text())
    assert data[0] == {"MinimumRequiredVersion": "5.0.0"} and data[1:3] == ["gfx950", "gfx950"]
    assert all("ProblemType" not in solution for solution in data[5])
    assert all(solution["AssertFree1DivByMT1LowbitGT1"] == 0 for solution in data[5])


def test_a_5x_logic_file_reads_validates_lints_and_round_trips() -> None:
    logic = load_logic(LOGIC)
    assert [finding for finding in check_logic(logic) if finding.severity == "error"] == []
    assert dumps_logic(logic) == LOGIC.read_text()  # byte for byte
    linted = lint_file(LOGIC)
    assert linted.kind == "logic"
    assert {finding.code for finding in linted.findings} <= {"no-fallback", "size"}


def test_a_5x_logic_file_builds_with_the_files_problem_type() -> None:
    tree = build_master_tree([(str(LOGIC), yaml.safe_load(LOGIC.read_text()))], dialect="tensilelite")
    assert len(tree["solutions"]) == 3
    for solution in tree["solutions"]:
        # 5.x keeps the gfx950 ISA (7d9fb683's derivation would fall back to [9, 0, 0], gfx900)
        assert solution["hardwarePredicate"] == {"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx950"}}
        assert solution["problemType"]["operationIdentifier"] == "Contraction_l_Alik_Bljk_Cijk_Dijk"
        assert solution["problemType"]["aType"] == "BFloat16"
        kinds = [predicate["type"] for predicate in solution["problemPredicate"]["value"]]
        assert "Free1SizeDivByValueLowbitGT1" not in kinds and "KRingShiftTailWrapOnly" not in kinds
    built = loads_master(json.dumps(tree))
    assert check_master(built) == []
    assert select_solution(built, query(1024, 1024, 1024), GFX950).index == 1


def _library_predicates(solution: dict[str, Any], kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    return [predicate for predicate in solution["problemPredicate"]["value"] if predicate["type"] in kinds]


def test_a_5x_file_builds_with_the_library_fields_5x_writes() -> None:
    """5.x's TensileCreateLibrary (Contractions.py @72d2079f405e) writes ``swizzleTensorA/B`` into
    every problem type, ``SwizzleTensorA/B`` type predicates and, on a kernel with KernArgsVersion >= 1
    that is no Stream-K kernel, ``WorkgroupNumberCheck [MT0, MT1, GSU]``; built as 7d9fb683 none."""
    data = yaml.safe_load(LOGIC.read_text())
    assert all(s["InternalSupportParams"]["KernArgsVersion"] >= 1 and not s.get("StreamK") for s in data[5])
    kinds = ("SwizzleTensorA", "SwizzleTensorB", "WorkgroupNumberCheck")
    tree = build_master_tree([(str(LOGIC), copy.deepcopy(data))], dialect="tensilelite")
    for solution in tree["solutions"]:
        mapping = solution["sizeMapping"]
        assert solution["problemType"]["swizzleTensorA"] is False and solution["problemType"]["swizzleTensorB"] is False
        assert _library_predicates(solution, kinds) == [
            {"type": "SwizzleTensorA", "value": False},
            {"type": "SwizzleTensorB", "value": False},
            {"type": "WorkgroupNumberCheck", "index": 0, "value": [*mapping["macroTile"][:2], mapping["globalSplitU"]]},
        ]
    older = build_tensilelite_libraries([(str(LOGIC), copy.deepcopy(data))], hipblaslt_version="7d9fb683")
    for solution in older["TensileLibrary_gfx950"]["solutions"]:
        assert "swizzleTensorA" not in solution["problemType"] and _library_predicates(solution, kinds) == []


def test_a_swizzled_5x_kernel_has_no_0121_tail_loop_predicates() -> None:
    """0.12.1 keeps a swizzled-B kernel off its tail loop (``Free1SizeMultiple`` MT1,
    ``BoundSizeMultiple`` DepthU); 5.x writes the ``SwizzleTensorB`` predicate alone."""
    data = yaml.safe_load(LOGIC.read_text())
    data[4]["SwizzleTensorB"] = True
    kinds = ("SwizzleTensorB", "Free1SizeMultiple", "BoundSizeMultiple")
    built = {
        version: build_tensilelite_libraries([(str(LOGIC), copy.deepcopy(data))], hipblaslt_version=version)
        for version in (None, "0.12.1")
    }
    for newer, older in zip(*(b["TensileLibrary_gfx950"]["solutions"] for b in built.values()), strict=True):
        assert newer["problemType"]["swizzleTensorB"] is True
        assert {p["type"] for p in _library_predicates(newer, kinds)} == {"SwizzleTensorB"}
        guard = [p for p in _library_predicates(older, kinds) if p["type"] != "SwizzleTensorB"]
        assert guard == [
            {"type": "Free1SizeMultiple", "index": 0, "value": older["sizeMapping"]["macroTile"][1]},
            {"type": "BoundSizeMultiple", "index": -1, "value": older["sizeMapping"]["depthU"]},
        ]


def test_5x_reads_experimental_folders_only_when_asked() -> None:
    """Run.py @9369dd859ab3 ``run``: without ``--experimental`` a logic file with an ``experimental``
    path part is not read; a 5.x file is told by its header, no version named."""
    from tensilekit.libbuild.tensilelite import experimental_logic_left_out

    data = yaml.safe_load(LOGIC.read_text())
    files = [("logic/Experimental/a.yaml", data), ("logic/b.yaml", data)]
    kept, left_out, version = experimental_logic_left_out(files)
    assert kept == files[1:] and left_out == ["logic/Experimental/a.yaml"] and version.name == "5.x"
    assert experimental_logic_left_out(files, experimental=True)[0] == files


def test_an_unknown_assert_key_is_still_refused() -> None:
    """Only the two keys 5.x drops are dropped; ``FromOriginalKeyPair`` raises on any other."""
    data = yaml.safe_load(LOGIC.read_text())
    broken = copy.deepcopy(data)
    broken[5][1]["AssertSomeFutureKey"] = 1
    with pytest.raises(InvalidValue, match="unknown assertion key 'AssertSomeFutureKey'"):
        build_master_tree([(str(LOGIC), broken)], dialect="tensilelite")


# --------------------------------------------------------------------------- item 4: client masters


def test_a_launch_limits_master_loads_validates_and_round_trips() -> None:
    master = load_master(CLIENT)
    assert check_master(master) == []
    assert dumps_master(master, "yaml") == CLIENT.read_bytes()
    assert dumps_master(loads_master(dumps_master(master, "msgpack")), "yaml") == CLIENT.read_bytes()


def test_select_evaluates_launch_limits_reference_and_compiled() -> None:
    master = load_master(CLIENT)
    problems = [query(1024, 1024, 1024), query(1 << 18, 1 << 18, 64), query(128, 128, 256)]
    reference = [select_solution(master, problem, GFX950) for problem in problems]
    assert [answer.index for answer in reference] == [0, None, 0]
    # 2^18 x 2^18 in 64 x 64 tiles: 2^24 workgroups pass the problem predicate's
    # WorkgroupNumberCheck (<= 2^24), but 2^24 workgroups of 256 threads overflow uint32_t
    explained = select_solution(master, problems[1], GFX950, explain=True)
    assert "LaunchLimits: not (work items=4294967296 <= 4294967295)" in "\n".join(map(str, explained.trace))
    # one tile row more and the problem predicate refuses it before the task predicate is asked
    wider = select_solution(master, query((1 << 18) + 1, (1 << 18) + 1, 64), GFX950, explain=True)
    trace = "\n".join(map(str, wider.trace))
    assert wider.index is None and "WorkgroupNumberCheck: not" in trace and "LaunchLimits" not in trace
    compiled = select_batch(master, problems, GFX950)
    assert compiled.indices.tolist() == [0, -1, 0] and not compiled.errors


def test_an_unmodelled_predicate_spoils_only_what_carries_it() -> None:
    master = load_master(UNMODELLED)
    findings = check_master(master)
    assert [(f.severity, f.code, f.path) for f in findings] == [
        ("warning", "unmodelled-predicate", "solutions[0].taskPredicate")
    ]
    assert "'FooBar' is not modelled" in findings[0].message
    assert dumps_master(master, "yaml") == UNMODELLED.read_bytes()
    # solution 0 (first row) carries FooBar: passed over, the next row's kernel answers
    usual, huge = query(1024, 1024, 1024), query(1 << 20, 1 << 20, 64)
    explained = select_solution(master, usual, GFX950, explain=True)
    assert explained.index == 1
    assert "predicate type 'FooBar' is not modelled" in "\n".join(map(str, explained.trace))
    assert select_solution(master, huge, GFX950).index is None
    assert "'FooBar' are not modelled" in no_kernel_reason(master, huge, GFX950)
    assert select_batch(master, [usual, huge], GFX950).indices.tolist() == [1, -1]


def test_every_command_gives_one_verdict() -> None:
    runner = CliRunner()
    for path in (LOGIC, CLIENT, UNMODELLED):
        for command in ("info", "validate", "lint"):
            result = runner.invoke(cli, [command, str(path)])
            assert result.exit_code == 0, (command, path, result.output)
    result = runner.invoke(cli, ["validate", str(UNMODELLED)])
    assert "unmodelled-predicate" in result.output
    result = runner.invoke(cli, ["lint", str(UNMODELLED)])
    assert "unmodelled-predicate" in result.output
    query_args = ["--arch", "gfx950", "--cu-count", "256", "--type", "bf16", "--trans-a", "T", "1024", "1024", "1024"]
    result = runner.invoke(cli, ["select", "-l", str(LOGIC), *query_args])
    assert result.exit_code == 0 and "selected\tindex 1" in result.output, result.output
    result = runner.invoke(cli, ["select", "-l", str(CLIENT), *query_args])
    assert result.exit_code == 0 and "selected\tindex 0" in result.output, result.output
    result = runner.invoke(cli, ["select", "-l", str(UNMODELLED), *query_args])
    assert result.exit_code == 0 and "selected\tindex 1" in result.output, result.output
    huge = [*query_args[:-3], "1048576", "1048576", "64"]
    result = runner.invoke(cli, ["select", "-l", str(UNMODELLED), *huge])
    assert "'FooBar' are not modelled" in result.output
    with runner.isolated_filesystem():
        result = runner.invoke(cli, ["build-master", str(LOGIC), "-o", "TensileLibrary.yaml"])
        assert result.exit_code == 0, result.output
        result = runner.invoke(cli, ["convert", str(CLIENT), "client.dat"])
        assert result.exit_code == 0, result.output
        result = runner.invoke(cli, ["convert", "client.dat", "client.yaml"])
        assert result.exit_code == 0 and Path("client.yaml").read_bytes() == CLIENT.read_bytes()


# --------------------------------------------------------------------------- merge: 5.x's merge.py
# rocm-libraries projects/hipblaslt/tensilelite/Tensile/Utilities/merge.py @6b64aab9cc6d; the rules
# that differ from 7d9fb683's live in tensilekit/merge/merge_versions.py

# the hunks 6b64aab9cc6d adds to 7d9fb683's merge.py: sanitizeSolutions deletes every solution's
# ProblemType, compareProblemType skips solutions that have none (waiving and check)
MERGE_PY_5X_HUNKS = [
    (
        "    for sol in solList:\n        if sol.get(\"StaggerU\") == 0:",
        "    for sol in solList:\n        if \"ProblemType\" in sol:\n            del sol[\"ProblemType\"]\n"
        "        if sol.get(\"StaggerU\") == 0:",
    ),
    (
        "            oriKernelProblemType = oriData[5][i][\"ProblemType\"]",
        "            if \"ProblemType\" not in oriData[5][i]:\n                continue\n"
        "            oriKernelProblemType = oriData[5][i][\"ProblemType\"]",
    ),
    (
        "        incKernelProblemType = incData[5][i][\"ProblemType\"]",
        "        if \"ProblemType\" not in incData[5][i]:\n            continue\n"
        "        incKernelProblemType = incData[5][i][\"ProblemType\"]",
    ),
]  # fmt: skip


def incremental_5x() -> list[Any]:
    """The fixture re-tuned: two sizes faster (one with a new kernel), one size new."""
    data = yaml.safe_load(LOGIC.read_text())
    variant = copy.deepcopy(data[5][1])
    variant["WorkGroupMapping"] = 4  # another kernel
    data[5].append(variant)
    data[7][0][1] = [3, 700.0]
    data[7][2][1] = [2, 900.0]
    data[7].append([[2048, 2048, 1, 2048, 2048, 2048, 2048, 2048], [1, 950.0]])
    return data


def write_pair(root: Path, original: str, incremental: list[Any]) -> tuple[Path, Path]:
    (root / "original").mkdir(parents=True)
    (root / "incremental").mkdir()
    (root / "original" / LOGIC.name).write_text(original)
    (root / "incremental" / LOGIC.name).write_text(yaml.safe_dump(incremental, default_flow_style=None))
    return root / "original", root / "incremental"


def test_a_5x_file_merges_as_5x_merge_py_does(tmp_path: Path) -> None:
    original, incremental = write_pair(tmp_path, LOGIC.read_text(), incremental_5x())
    result = CliRunner().invoke(cli, ["merge", str(original), str(incremental), str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["files"][0]
    assert report["policy"]["tensilelite_merge"] == "5.x" and "5.0.0" in report["policy"]["tensilelite_merge_reason"]
    merged = yaml.safe_load((tmp_path / "out" / LOGIC.name).read_text())
    assert all("ProblemType" not in solution for solution in merged[5])  # written back without
    assert len(merged[5]) == 4 and [row[1][0] for row in merged[7]] == [3, 1, 2, 0, 1]
    # what the merge wrote builds and loads
    tree = build_master_tree([("merged.yaml", merged)], dialect="tensilelite")
    assert check_master(loads_master(json.dumps(tree))) == []


def test_the_5x_merge_is_byte_identical_to_amd_merge_py_with_its_5x_hunks(amd: Path, tmp_path: Path) -> None:
    """AMD's 7d9fb683 merge.py with 6b64aab9cc6d's hunks applied (the rest of the script is the
    same) is the reference; a 4.x file merged under 5.x rules (--tensilelite-merge 5.x) too."""
    source = (amd / "tensilelite-7d9fb68" / "Tensile" / "Utilities" / "merge.py").read_text()
    for before, after in MERGE_PY_5X_HUNKS:
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    script = tmp_path / "merge_5x.py"
    script.write_text(source)
    original, incremental = write_pair(tmp_path / "in", LOGIC.read_text(), incremental_5x())
    older = FIXTURES.parent / "tensilekit/data/example_files/logic-gfx942/aquavanjaram_Cijk_Alik_Bljk_BBS_BH.yaml"
    (original / older.name).write_text(older.read_text())  # tensilelite 4.33.0: solutions carry ProblemType
    retuned = yaml.safe_load(older.read_text())
    retuned[7][0][1] = [retuned[7][1][1][0], retuned[7][0][1][1] + 100.0]
    (incremental / older.name).write_text(yaml.safe_dump(retuned, default_flow_style=None))
    python = subprocess.run([str(amd / "setup-venv")], capture_output=True, text=True, check=True).stdout.strip()
    done = subprocess.run(
        [python, str(script), str(original), str(incremental), str(tmp_path / "amd")],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    args = [str(original), str(incremental), str(tmp_path / "ours"), "--tensilelite-merge", "5.x"]
    result = CliRunner().invoke(cli, ["merge", *args])
    assert result.exit_code == 0, result.output
    for name in (LOGIC.name, older.name):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "amd" / name).read_bytes(), name
    assert all(
        "ProblemType" not in solution for solution in yaml.safe_load((tmp_path / "ours" / older.name).read_text())[5]
    )
    assert "only tensilelite 5.x reads solutions without a ProblemType" in result.output


def test_7d9fb683_merge_py_refuses_a_5x_file_with_the_way_out(tmp_path: Path) -> None:
    original, incremental = write_pair(tmp_path, LOGIC.read_text(), incremental_5x())
    args = [str(original), str(incremental), str(tmp_path / "out"), "--tensilelite-merge", "7d9fb683"]
    result = CliRunner().invoke(cli, ["merge", *args])
    assert result.exit_code != 0
    assert "has no ProblemType" in result.output and "--tensilelite-merge 5.x" in result.output


def test_5x_merge_py_checks_the_library_type_and_its_folder(tmp_path: Path) -> None:
    """``compareDestFolderToYaml``: an empty [11] ends the run; so does GridBased into Equality/."""
    empty = incremental_5x()
    empty[11] = None
    original, incremental = write_pair(tmp_path / "a", LOGIC.read_text(), empty)
    result = CliRunner().invoke(cli, ["merge", str(original), str(incremental), str(tmp_path / "a" / "out")])
    assert result.exit_code != 0 and "names no library type at [11]" in result.output
    grid = incremental_5x()
    grid[11] = "GridBased"
    (tmp_path / "b").mkdir()
    original, incremental = write_pair(tmp_path / "b" / "x", LOGIC.read_text(), grid)
    equality = original.rename(tmp_path / "b" / "Equality")
    result = CliRunner().invoke(cli, ["merge", str(equality), str(incremental), str(tmp_path / "b" / "out")])
    assert result.exit_code != 0 and "GridBased tuning but the original folder is 'Equality'" in result.output


def test_5x_merge_py_copies_unpaired_files_and_warns_of_differing_headers(tmp_path: Path) -> None:
    changed = incremental_5x()
    changed[4]["UseScaleAlphaVec"] = 0
    original, incremental = write_pair(tmp_path, LOGIC.read_text(), changed)
    (incremental / "gfx950_new.yaml").write_text(LOGIC.read_text())
    result = CliRunner().invoke(cli, ["merge", str(original), str(incremental), str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["copied_new"] == ["gfx950_new.yaml"]
    assert (tmp_path / "out" / "gfx950_new.yaml").read_bytes() == LOGIC.read_bytes()
    assert any("UseScaleAlphaVec: 1 != 0" in warning for warning in report["files"][0]["warnings"])
    result = CliRunner().invoke(
        cli, ["merge", str(original), str(incremental), str(tmp_path / "out2"), "--no-add-new", "--json"]
    )
    assert json.loads(result.stdout)["copied_new"] == []


# --------------------------------------------------------------------------- 5.x names
# rocm-libraries projects/hipblaslt/tensilelite/Tensile/SolutionStructs/Problem.py @01c52f8e2e5d
# (ProblemType.__str__), SolutionStructs/Naming.py @00cf9f2ac935, Common/RequiredParameters.py @0065fcbf4c08


@pytest.mark.parametrize(
    ("fields", "name_7d9fb683", "name_5x"),
    [
        (PROBLEM_5X := yaml.safe_load(LOGIC.read_text())[4], "Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs",
         "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs"),
        ({"OperationType": "GEMM", "DataType": 0, "Batched": True, "UseBeta": True, "TransposeB": False,
          "SupportUserArgs": False},
         "Cijk_Ailk_Bljk_SB", "Cijk_Ailk_Bljk_S_B"),
        ({**{key: value for key, value in PROBLEM_5X.items() if not key.startswith("Activation")},
          "BiasDataTypeList": [0, 4], "UseScaleAlphaVec": 0, "SupportUserArgs": False, "StridedBatched": False},
         "Cijk_Alik_Bljk_BBS_BH_BiasSH_GB", "Cijk_Alik_Bljk_BBS_BH_Bias_SH_GB"),
        # the header of AMD's own 5.0.0 logic rocm-libraries projects/hipblaslt/library/src/amd_detail/rocblaslt/
        # src/Tensile/Logic/asm_full/gfx950/Equality/gfx950_Cijk_Alik_Bljk_S_B_Bias_HAS_SAV_UserArgs.yaml
        # @21c3348ac4dd, whose solutions' SolutionNameMin start Cijk_Alik_Bljk_S_B_Bias_HA_S_SAV_UserArgs_
        ({"OperationType": "GEMM", "DataType": 0, "Batched": True, "UseBeta": True, "TransposeA": True,
          "TransposeB": False, "UseBias": 1, "BiasDataTypeList": [0], "Activation": True,
          "ActivationType": "hipblaslt_all", "UseScaleAlphaVec": 1, "SupportUserArgs": True},
         "Cijk_Alik_Bljk_SB_Bias_HAS_SAV_UserArgs", "Cijk_Alik_Bljk_S_B_Bias_HA_S_SAV_UserArgs"),
    ],
    ids=["file-name", "sgemm", "bias-types", "amd-gfx950-5.0.0"],
)  # fmt: skip
def test_5x_problem_type_names(fields: dict[str, Any], name_7d9fb683: str, name_5x: str) -> None:
    from tensilekit.model.derive_tensilelite import problem_type
    from tensilekit.model.naming_tensilelite import problem_type_name, problem_type_name_5x

    assert problem_type_name(problem_type(fields)) == name_7d9fb683
    assert problem_type_name_5x(problem_type(fields)) == name_5x


def test_a_5x_build_names_as_5x_and_the_file_name_agrees() -> None:
    tree = build_master_tree([(str(LOGIC), yaml.safe_load(LOGIC.read_text()))], dialect="tensilelite")
    names = [solution["name"] for solution in tree["solutions"]]
    assert all(name.startswith(LOGIC.stem.removeprefix("gfx950_") + "_MT64x64x") for name in names)
    # 5.x names a fixed parameter set, with the internal arguments; kernel names leave those out
    assert all("_SN_" in name and "_WGM8_" in name and "_ISA950_" in name for name in names)
    kernels = [solution["kernelName"] for solution in tree["solutions"]]
    assert all("_WGM" not in kernel and "_GSU" not in kernel.split("_SN_")[1].split("_GSUA")[0] for kernel in kernels)
    assert len(set(names)) == 3


def test_the_5x_fixture_carries_the_names_5x_gives_it() -> None:
    """make_2026.py names the logic's solutions as 5.x does; the build names them the same."""
    data = yaml.safe_load(LOGIC.read_text())
    tree = build_master_tree([(str(LOGIC), data)], dialect="tensilelite")
    assert [s["SolutionNameMin"] for s in data[5]] == [s["name"] for s in tree["solutions"]]
    assert [s["KernelNameMin"] for s in data[5]] == [s["kernelName"] for s in tree["solutions"]]
    assert all("_HA_S_SAV_UserArgs_" in s["SolutionNameMin"] for s in data[5])


def test_5x_is_one_entry_of_the_version_table(tmp_path: Path) -> None:
    """Build, merge, naming and detection read 5.x's rules off ``TENSILELITE_5X``, told by one function."""
    from tensilekit.merge.merge_versions import MERGE_SCRIPTS, merge_script_for
    from tensilekit.selection.hipblaslt_versions import HIPBLASLT_VERSIONS, TENSILELITE_5X, version_of_minimum_required
    from tensilekit.selection.runtime import detect_runtime, hipblaslt_runtime

    told = [version_of_minimum_required(v) for v in ("5.0.0", " 6.1", "4.33.0", "", None, "x.5")]
    assert told == [TENSILELITE_5X, TENSILELITE_5X, None, None, None, None]
    assert all(version.merge_script in MERGE_SCRIPTS for version in HIPBLASLT_VERSIONS.values())
    assert merge_script_for(None, "4.33.0", "5.0.0")[0] is MERGE_SCRIPTS[TENSILELITE_5X.merge_script]
    for path in (CLIENT, UNMODELLED):  # task predicates: only 5.x's TensileCreateLibrary writes them
        assert detect_runtime(load_master(path)) is hipblaslt_runtime(TENSILELITE_5X)
    runner = CliRunner()
    for path in (CLIENT, LOGIC):  # the master for what built it, the logic file for what builds it
        assert "taken for\thipBLASLt 5.x" in runner.invoke(cli, ["info", str(path)]).stdout
    # 0.12.1's runtime stops at LaunchLimits ("Unknown subclass type"): asked for, it is refused
    query_args = ["--arch", "gfx950", "--cu-count", "256", "--type", "bf16", "--trans-a", "T", "1024", "1024", "1024"]
    result = runner.invoke(cli, ["select", "-l", str(CLIENT), "--hipblaslt-version", "0.12.1", *query_args])
    assert result.exit_code != 0 and "cannot load this master: it is hipBLASLt 5.x's" in result.output
    # asked for, 5.x builds a 4.33.0 gfx950 file as its TensileCreateLibrary would: 5.x names, ISA kept
    older = yaml.safe_load(LOGIC.read_text())
    older[0] = {"MinimumRequiredVersion": "4.33.0"}
    (tmp_path / "older.yaml").write_text(yaml.safe_dump(older))
    trees = {}
    for version in ("7d9fb683", "5.x"):
        out = tmp_path / f"{version}.yaml"
        args = ["build-master", str(tmp_path / "older.yaml"), "-o", str(out), "--hipblaslt-version", version]
        assert runner.invoke(cli, args).exit_code == 0
        trees[version] = yaml.safe_load(out.read_text())
    assert [s["name"] for s in trees["5.x"]["solutions"]] == [s["SolutionNameMin"] for s in older[5]]
    assert all("_ISA950_" not in s["name"] for s in trees["7d9fb683"]["solutions"])

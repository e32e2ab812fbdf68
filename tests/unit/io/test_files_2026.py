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
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import InvalidValue
from tensilekit.io.logic_io import dumps_logic, load_logic
from tensilekit.io.master_io import dumps_master, load_master, loads_master
from tensilekit.libbuild import build_master_tree
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
    problems = [query(1024, 1024, 1024), query(1 << 20, 1 << 20, 64), query(128, 128, 256)]
    reference = [select_solution(master, problem, GFX950) for problem in problems]
    assert [answer.index for answer in reference] == [0, None, 0]
    # 2^20 x 2^20 in 64 x 64 tiles: 2^28 workgroups of 256 threads overflow uint32_t
    explained = select_solution(master, problems[1], GFX950, explain=True)
    assert "LaunchLimits: not (work items=68719476736 <= 4294967295)" in "\n".join(map(str, explained.trace))
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

"""A recorded solution index read in one library: named, placed, judged (issue 24 item 3).

Differential against AMD's runtime: the corpus select-hipblaslt answers (tensilelite's C++ host
library, ``getAllSolutions`` filtered by ``isSupported`` and the heuristic's pick) over the master
AMD's TensileCreateLibrary code built.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tensilekit.recorded import RecordedSolutions, describe_solution, recorded_solution
from tensilekit.workload.problem import GemmProblem

GRID = "hipblaslt_gfx942_grid"


def _queries(corpus: Path, count: int) -> list[dict[str, Any]]:
    lines = (corpus / "select-hipblaslt" / f"{GRID}.jsonl").read_text().splitlines()
    queries = [json.loads(line) for line in lines]
    return [query for query in queries if "all_supported" in query][:count]


def _problem(query: dict[str, Any], index: int) -> GemmProblem:
    # the grid library's type as hipBLASLt's heuristic builds the query (Half x Float8 -> Half, f32_fast_f16)
    return GemmProblem(
        m=query["m"], n=query["n"], k=query["k"], batch=query["batch"], a_type="f16_r", b_type="f8_r",
        c_type="f16_r", compute_type="f32_f16_r", beta=query["beta"], solution_index=index,
    )  # fmt: skip


def test_recorded_indices_are_judged_as_amds_runtime_does(corpus: Path) -> None:
    from tensilekit.api import load_for_selection

    library = load_for_selection(corpus / "masters-hipblaslt" / f"{GRID}.dat")
    judges: dict[int | None, RecordedSolutions] = {}
    checked = 0
    for query in _queries(corpus, 4):
        workspace = query.get("workspace_size")
        if workspace not in judges:
            judges[workspace] = RecordedSolutions(
                *library, arch=query["arch"], cu_count=query["cu_count"], workspace_size=workspace
            )
        judge = judges[workspace]
        supported = set(query["all_supported"])
        for index in query["all_indices"][::7]:
            found = judge(_problem(query, index))
            assert found is not None
            assert found.supported is (index in supported), (query["id"], index, found.reason)
            assert found.heuristic_index == query["expected"]["index"]
            assert found.differs is (index != query["expected"]["index"])
            if not found.supported:
                assert found.reason
            checked += 1
        best = judge(_problem(query, query["expected"]["index"]))
        assert best is not None and best.supported and best.differs is False
    assert checked > 100


def test_an_index_the_library_lacks_is_named_as_such(corpus: Path) -> None:
    master = corpus / "masters-hipblaslt" / f"{GRID}.dat"
    query = _queries(corpus, 1)[0]
    found = recorded_solution(_problem(query, 10_000).model_copy(update={"kernel_name": "K"}), master, cu_count=304)
    assert found is not None
    assert (found.kernel, found.supported, found.name_matches) == (None, None, False)
    assert "no solution 10000" in (found.reason or "")
    assert recorded_solution(_problem(query, 3).without_solution(), master) is None


def test_describe_solution_names_and_places_it_as_the_master_records_it(corpus: Path) -> None:
    from tensilekit.io.master_io import load_master
    from tensilekit.model.common import to_raw

    path = corpus / "masters-hipblaslt" / f"{GRID}.dat"
    master = to_raw(load_master(path))
    index = _queries(corpus, 1)[0]["expected"]["index"]
    record = next(solution for solution in master["solutions"] if solution["index"] == index)
    found = describe_solution(path, index)
    assert found.kernel == record["kernelName"] and found.name == record["name"]
    assert list(found.macro_tile or ()) == record["sizeMapping"]["macroTile"]
    assert list(found.matrix_instruction or ()) == record["sizeMapping"]["matrixInstruction"]
    assert record["problemType"]["operationIdentifier"] in found.problem_type

    def table_hits(node: Any) -> int:
        if isinstance(node, list):
            return sum(table_hits(item) for item in node)
        if not isinstance(node, dict):
            return 0
        own = sum(1 for entry in node.get("table", []) if isinstance(entry, dict) and entry.get("index") == index)
        return own + sum(table_hits(value) for key, value in node.items() if key != "table")

    assert len(found.places) == table_hits(master["library"]) > 0
    with pytest.raises(Exception, match="no solution 99999"):
        describe_solution(path, 99_999)


def test_info_solution_and_select_from_log_show_the_recorded_solution(corpus: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    path = corpus / "masters-hipblaslt" / f"{GRID}.dat"
    query = _queries(corpus, 1)[0]
    best = query["expected"]["index"]
    runner = CliRunner()
    shown = runner.invoke(cli, ["info", str(path), "--solution", str(best), "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["index"] == best
    assert runner.invoke(cli, ["info", str(path), "--solution", "99999"]).exit_code == 3
    unsupported = next(index for index in query["all_indices"] if index not in set(query["all_supported"]))
    log = tmp_path / "tuning.txt"  # a header/value tuning file (TuningCacheStore.cpp@1d38aaf4) recording two GEMMs
    header = "    transA,transB,m,n,k,batch_count,a_type,b_type,c_type,d_type,compute_type,gcnArchName,CUs,solution_index,us\n"
    cells = f"N,N,{query['m']},{query['n']},{query['k']},1,f16_r,f8_r,f16_r,f16_r,f32_f16_r,gfx942,304"
    other = f"N,N,{query['m'] * 2},{query['n']},{query['k']},1,f16_r,f8_r,f16_r,f16_r,f32_f16_r,gfx942,304"
    log.write_text(f"Git Version: 7d9fb683\n{header}{cells},{best},5.0\n{header}{other},{unsupported},15.0\n")
    answered = runner.invoke(
        cli, ["select", "--library", str(path), "--from-log", str(log), "--cu-count", "304", "--workspace",
              str(query["workspace_size"]), "--json"],
    )  # fmt: skip
    assert answered.exit_code == 0, answered.output
    records = [json.loads(line) for line in answered.output.splitlines() if line.startswith("{")]
    assert [(r["recorded"]["index"], r["recorded"]["differs"]) for r in records][0] == (best, False)
    assert records[1]["recorded"]["index"] == unsupported
    text = runner.invoke(cli, ["select", "--library", str(path), "--from-log", str(log), "--cu-count", "304"])
    assert "recorded solutions (2 GEMMs" in text.output and f"recorded {best} " in text.output
    covered = runner.invoke(cli, ["coverage", "-l", str(path), "--cu-count", "304", str(log), "--json"])
    assert covered.exit_code == 0, covered.output
    recorded = json.loads(covered.output.splitlines()[-1])["recorded"]
    assert recorded["gemms"] == 2 and [row["time_us"] for row in recorded["rows"]] == [5.0, 15.0]


def test_diff_from_log_gates_on_recorded_results_an_upgrade_loses(corpus: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import cli
    from tensilekit.io.master_io import dump_master, load_master
    from tensilekit.model.identity import solution_identity
    from tensilekit.model.library import MasterLibrary

    name = "hipblaslt_gfx942_equality"  # smaller than the grid master: the diff of two builds stays quick
    old = corpus / "masters-hipblaslt" / f"{name}.dat"
    lines = (corpus / "select-hipblaslt" / f"{name}.jsonl").read_text().splitlines()
    query = next(q for q in map(json.loads, lines) if q.get("expected") and q["batch"] == 1 and q["a_type"] == "Half")
    kept = query["expected"]["index"]  # AMD's heuristic pick: supported for the query's GEMM
    raw = load_master(old).to_raw()
    # a library may hold a kernel twice under two indices: retune one that is unique
    identities = Counter(solution_identity(solution) for solution in raw["solutions"])
    retuned = next(s["index"] for s in raw["solutions"] if identities[solution_identity(s)] == 1 and s["index"] != kept)
    for solution in raw["solutions"]:  # NEW retunes it in place: same index and names, another kernel
        if solution["index"] == retuned:
            solution["sizeMapping"]["workGroupMapping"] += 97  # no other kernel of the build has it
    new = tmp_path / "new.dat"
    dump_master(MasterLibrary.model_validate(raw), new)
    log = tmp_path / "tuning.txt"
    header = (
        "    transA,transB,m,n,k,batch_count,a_type,b_type,c_type,d_type,compute_type,gcnArchName,CUs,solution_index\n"
    )
    out = {"Half": "f16_r", "Float": "f32_r"}[query["d_type"]]
    cells = f"{query['trans_a']},{query['trans_b']},{query['m']},{query['n']},{query['k']},1,f16_r,f16_r,{out},{out},f32_r,gfx942,304"
    log.write_text(f"{header}{cells},{retuned}\n{header}{cells},{kept}\n")
    runner = CliRunner()
    gate = ["--from-log", str(log), "--cu-count", "304", "--exit-code"]
    lost = runner.invoke(cli, ["diff", str(old), str(new), *gate])
    assert lost.exit_code == 1, lost.output
    assert "recorded tuning results: 2, 1 would be lost in B" in lost.output
    assert f"tuning.txt:2: missing {retuned} " in lost.output
    same = runner.invoke(cli, ["diff", str(old), str(old), *gate, "--json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.output)["recorded"] == {"rows": 2, "lost": []}


def test_select_from_log_and_coverage_judge_a_recorded_kernel_with_one_workspace_rule(
    corpus: Path, tmp_path: Path
) -> None:
    # issue 25: select --from-log judged recorded solutions with the Library's workspace, coverage
    # with none (unlimited); both now ask the Library. A kernel splitting K (GSU > 1) needs
    # workspace for its partial sums: accepted by default (128 MiB), refused when none is allowed.
    from click.testing import CliRunner

    from tensilekit.cli.main import cli
    from tensilekit.library import open_library
    from tensilekit.workload import load_workloads

    path = corpus / "masters-hipblaslt" / f"{GRID}.dat"
    library = open_library(path, cu_count=304)
    query = _queries(corpus, 1)[0]
    splitting = [index for index in query["all_supported"] if library.solution(index).size_mapping.global_split_u > 1]
    assert splitting, "the grid master splits K for this GEMM"
    log = tmp_path / "tuning.txt"
    header = "    transA,transB,m,n,k,batch_count,a_type,b_type,c_type,d_type,compute_type,gcnArchName,CUs,solution_index,us\n"
    cells = f"N,N,{query['m']},{query['n']},{query['k']},1,f16_r,f8_r,f16_r,f16_r,f32_f16_r,gfx942,304"
    log.write_text(f"Git Version: 7d9fb683\n{header}{cells},{splitting[0]},5.0\n")
    runner = CliRunner()
    verdicts = {}
    for workspace in ([], ["--workspace", "0"]):
        common = ["--library", str(path), "--cu-count", "304", *workspace]
        selected = runner.invoke(cli, ["select", *common, "--from-log", str(log), "--json"])
        assert selected.exit_code == 0, selected.output
        from_log = json.loads(selected.output.splitlines()[-1])["recorded"]
        covered = runner.invoke(cli, ["coverage", *common, str(log), "--json"])
        assert covered.exit_code == 0, covered.output
        row = json.loads(covered.output.splitlines()[-1])["recorded"]["rows"][0]
        assert (row["supported"], row["reason"]) == (from_log["supported"], from_log["reason"])
        verdicts[bool(workspace)] = (from_log["supported"], from_log["reason"] or "")
    assert verdicts[False] == (True, "")  # AMD's runtime accepts it (all_supported) with 128 MiB
    assert verdicts[True][0] is False and "Workspace" in verdicts[True][1]
    # the Python API answers the same through the Library
    problems = load_workloads([log])[0].problems
    for allowed, supported in ((0, False), (None, True)):
        opened = open_library(path, cu_count=304, workspace_size=allowed)
        found = opened.recorded(problems)
        workload = opened.recorded_workload([log])
        assert found is not None and workload is not None
        assert found[0] is not None and found[0].supported is supported
        assert workload.gemms[0].found == found[0]


def test_remap_judges_a_recorded_kernel_by_the_same_workspace_rule(corpus: Path, tmp_path: Path) -> None:
    # issue 25: remap (and diff --from-log through it) judged NEW's canSolve with unlimited
    # workspace, select and coverage with the runtime's default; now one rule, and --workspace.
    from click.testing import CliRunner

    from tensilekit.cli.main import cli
    from tensilekit.library import open_library
    from tensilekit.remapping import remap
    from tensilekit.workload import load_workloads

    path = corpus / "masters-hipblaslt" / f"{GRID}.dat"
    query = _queries(corpus, 1)[0]
    library = open_library(path, cu_count=304)
    splitting = [index for index in query["all_supported"] if library.solution(index).size_mapping.global_split_u > 1]
    log = tmp_path / "tuning.txt"
    header = "    transA,transB,m,n,k,batch_count,a_type,b_type,c_type,d_type,compute_type,gcnArchName,CUs,solution_index,us\n"
    cells = f"N,N,{query['m']},{query['n']},{query['k']},1,f16_r,f8_r,f16_r,f16_r,f32_f16_r,gfx942,304"
    log.write_text(f"Git Version: 7d9fb683\n{header}{cells},{splitting[0]},5.0\n")
    problems = load_workloads([log])[0].problems
    for allowed in (0, None, 1 << 20):
        expected = open_library(path, cu_count=304, workspace_size=allowed).recorded(problems)
        assert expected is not None and expected[0] is not None
        arguments = {} if allowed is None else {"workspace_size": allowed}
        (row,) = remap([log], path, path, cu_count=304, **arguments).rows
        assert (row.status.value == "rejected") is (not expected[0].supported), (allowed, row.reason)
        option = [] if allowed is None else ["--workspace", str(allowed)]
        shown = CliRunner().invoke(
            cli, ["remap", str(log), "--from", str(path), "--to", str(path), "--cu-count", "304", "--json", *option]
        )
        assert json.loads(shown.stdout)[0]["status"] == row.status.value, shown.output  # one JSON array
    assert not open_library(path, cu_count=304, workspace_size=0).recorded(problems)[0].supported  # type: ignore[index]

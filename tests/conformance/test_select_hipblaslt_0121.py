"""The corpus's hipBLASLt masters (built for 7d9fb683) answered as hipBLASLt 0.12.1's runtime answers them.

The answer depends on the runtime version, not only on the master: 0.12.1's GridBased walk takes
the entry of nearest K by ``|K - table K|`` and lets ties go to the later entry. Every corpus query
is put to 0.12.1's own C++ (``../shared/amd/select-oracle --version 0.12.1``, one call per master)
and to ``tensilekit select --queries … --hipblaslt-version 0.12.1``; every answer must be equal,
while the same CLI without the option keeps 7d9fb683's answers (the corpus's ``expected``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.selection import compile_library, find_all_solutions, hardware_from_query
from tensilekit.selection.runtime import hipblaslt_runtime
from tensilekit.selection.walk import ReferenceSelector, as_contraction

pytestmark = pytest.mark.corpus

MASTERS = ["aldebaran_all", "gfx942_equality", "gfx942_freesize", "gfx942_grid", "navi31_all"]


def _require_0121(amd: Path) -> None:
    if not (amd / "bin" / "tensilelite-select-oracle-0.12.1").exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide hipBLASLt 0.12.1's select-oracle in {amd}")
        pytest.skip(f"hipBLASLt 0.12.1's select-oracle is not in {amd}")


def _oracle(amd: Path, master: Path, queries: Path, version: str = "0.12.1") -> dict[str, Any]:
    _require_0121(amd)
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(queries), "--top", "1", "--version", version],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}


def _cli_answers(*arguments: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["select", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    return {line["id"]: line["index"] for line in map(json.loads, result.output.splitlines())}


@pytest.mark.parametrize("name", MASTERS)
def test_corpus_masters_under_the_0121_runtime(corpus: Path, amd: Path, name: str) -> None:
    queries = corpus / "select-hipblaslt" / f"hipblaslt_{name}.jsonl"
    master = corpus / "masters-hipblaslt" / f"hipblaslt_{name}.dat"
    if not queries.exists():
        pytest.skip(f"{queries.name} is not in this corpus")
    records = [json.loads(line) for line in queries.read_text().splitlines() if line.strip()]
    wanted = {key: answer["expected"] for key, answer in _oracle(amd, master, queries).items()}
    mine = _cli_answers("--library", str(master), "--queries", str(queries), "--hipblaslt-version", "0.12.1")
    default = _cli_answers("--library", str(master), "--queries", str(queries))
    mismatches = [
        f"{record['id']} {record['m']}x{record['n']}x{record['k']} batch {record['batch']}: 0.12.1 "
        f"{wanted[record['id']] and wanted[record['id']]['index']}, tensilekit {mine[record['id']]}"
        for record in records
        if mine[record["id"]] != (wanted[record["id"]] and wanted[record["id"]]["index"])
    ]
    assert not mismatches, f"{len(mismatches)}/{len(records)} disagree:\n" + "\n".join(mismatches[:8])
    expected = {record["id"]: record["expected"] and record["expected"]["index"] for record in records}
    assert default == expected, "without --hipblaslt-version a 7d9fb683 master keeps 7d9fb683's answers"


@pytest.mark.parametrize("version", ["7d9fb683", "0.12.1"])
@pytest.mark.parametrize("name", ["aldebaran_all", "navi31_all"])
def test_compute_f16_as_each_version_builds_it(
    corpus: Path, amd: Path, tmp_path: Path, name: str, version: str
) -> None:
    """Compute type ``f16``: 7d9fb683 builds a Half-compute problem (no kernel of these masters
    serves it), 0.12.1 a Float one with computeInputType from A and B (HHS kernels serve it)."""
    source = corpus / "select-hipblaslt" / f"hipblaslt_{name}.jsonl"
    if not source.exists():
        pytest.skip(f"{source.name} is not in this corpus")
    queries = tmp_path / "f16.jsonl"
    with queries.open("w") as out:
        for record in map(json.loads, source.read_text().splitlines()[::4]):
            record.pop("compute_input_type", None)
            out.write(json.dumps({**record, "compute_type": "f16"}) + "\n")
    master = corpus / "masters-hipblaslt" / f"hipblaslt_{name}.dat"
    expected = {key: answer["expected"] for key, answer in _oracle(amd, master, queries, version).items()}
    wanted = {key: answer and answer["index"] for key, answer in expected.items()}
    mine = _cli_answers("--library", str(master), "--queries", str(queries), "--hipblaslt-version", version)
    assert mine == wanted
    assert any(index is not None for index in wanted.values()) == (version == "0.12.1")


def test_workspace_without_the_custom_kernel_synchronizer(corpus: Path, amd: Path, tmp_path: Path) -> None:
    """0.12.1's ``requiredWorkspaceSize`` leaves out the custom-kernel synchronizer: with exactly
    the workspace the rest needs, 0.12.1 supports the custom GSU kernel and 7d9fb683 does not."""
    _require_0121(amd)
    master_path = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_freesize.dat"
    source = corpus / "select-hipblaslt" / "hipblaslt_gfx942_freesize.jsonl"
    if not source.exists():
        pytest.skip(f"{source.name} is not in this corpus")
    master = tensilekit.load_master(master_path)
    old, new = hipblaslt_runtime("7d9fb683"), hipblaslt_runtime("0.12.1")
    compiled = {version.version.name: compile_library(master, runtime=version) for version in (old, new)}
    records = []
    for record in map(json.loads, source.read_text().splitlines()[::6]):
        record = {**record, "workspace_size": None}
        problem, device = old.problem_from_query(record), hardware_from_query(record)
        for solution in find_all_solutions(compiled["7d9fb683"], problem, device):
            without = new.required_workspace(as_contraction(problem), device, solution)
            if without < old.required_workspace(as_contraction(problem), device, solution):
                records.append({**record, "workspace_size": without})
                break
    assert len(records) > 20, "the corpus master has custom GSU kernels (GlobalAccumulation 3)"
    queries = tmp_path / "workspace.jsonl"
    queries.write_text("".join(json.dumps(record) + "\n" for record in records))
    for runtime in (old, new):
        wanted = {
            key: answer["all_supported"]
            for key, answer in _oracle(amd, master_path, queries, runtime.version.name).items()
        }
        mine = {
            record["id"]: [
                s.index
                for s in find_all_solutions(
                    compiled[runtime.version.name], runtime.problem_from_query(record), hardware_from_query(record)
                )
            ]
            for record in records
        }
        assert mine == wanted, runtime.version.name


def test_diff_answers_as_the_version_named(corpus: Path) -> None:
    """``diff --queries --hipblaslt-version 0.12.1`` (``runtime_selector``) answers as ``select``
    does under 0.12.1, which differs from 7d9fb683's answer for some corpus queries."""
    from tensilekit.merge.diff import runtime_selector

    master_path = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat"
    source = corpus / "select-hipblaslt" / "hipblaslt_gfx942_grid.jsonl"
    if not source.exists():
        pytest.skip(f"{source.name} is not in this corpus")
    records = [json.loads(line) for line in source.read_text().splitlines()]
    records = records[100:140] + records[400:420]  # some of the few queries 0.12.1's GridBased walk answers otherwise
    master = tensilekit.load_master(master_path)
    library = tensilekit.open_library(master_path, hipblaslt_version="0.12.1")
    answers = {}
    for version in ("7d9fb683", "0.12.1"):
        select = runtime_selector(hipblaslt_version=version)
        answers[version] = [select(master, record).index for record in records]
    assert answers["0.12.1"] == [
        library.select(library.problem_from_query(r), library.device_of(r)).index for r in records
    ]
    assert answers["7d9fb683"] == [r["expected"] and r["expected"]["index"] for r in records]
    assert answers["7d9fb683"] != answers["0.12.1"]


def test_solution_selection_method_reaches_the_problem(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``TENSILE_SOLUTION_SELECTION_METHOD`` (the environment, or ``solution_selection_method``)
    makes a 0.12.1 problem report ExperimentalDTree (1) or ExperimentalStreamK (2); 7d9fb683 does
    not read it; a value that is no integer is a clear error."""
    master_path = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat"
    monkeypatch.delenv("TENSILE_SOLUTION_SELECTION_METHOD", raising=False)
    metric = {}
    for version, method in [("0.12.1", 0), ("0.12.1", 1), ("0.12.1", 2), ("7d9fb683", 2)]:
        library = tensilekit.open_library(master_path, hipblaslt_version=version, solution_selection_method=method)
        metric[version, method] = library.problem(128, 128, 128, type="HHS").performance_metric.value
    assert metric == {
        ("0.12.1", 0): "DeviceEfficiency", ("0.12.1", 1): "ExperimentalDTree",
        ("0.12.1", 2): "ExperimentalStreamK", ("7d9fb683", 2): "DeviceEfficiency",
    }  # fmt: skip
    monkeypatch.setenv("TENSILE_SOLUTION_SELECTION_METHOD", "2")
    library = tensilekit.open_library(master_path, hipblaslt_version="0.12.1")
    assert library.problem(128, 128, 128, type="HHS").performance_metric.value == "ExperimentalStreamK"
    assert "ExperimentalStreamK" in library.runtime.label
    monkeypatch.setenv("TENSILE_SOLUTION_SELECTION_METHOD", "streamk")
    with pytest.raises(tensilekit.TensilekitError, match="TENSILE_SOLUTION_SELECTION_METHOD='streamk'"):
        tensilekit.open_library(master_path, hipblaslt_version="0.12.1")
    result = CliRunner().invoke(
        cli, ["select", "128", "128", "128", "--library", str(master_path), "--solution-selection-method", "x"]
    )
    assert result.exit_code == 2 and "solution-selection-method" in result.output


def test_build_master_takes_the_version_the_logic_shows(corpus: Path, tmp_path: Path) -> None:
    """A logic file whose problem type names 0.12.1's ``SwizzleTensorA`` is built as 0.12.1's
    TensileCreateLibrary builds it (swizzle fields, ``WorkgroupNumberCheck``) and the master is
    taken for 0.12.1's; ``--hipblaslt-version 7d9fb683`` builds 7d9fb683's from the same file."""
    source = corpus / "logic" / "hipblaslt" / "aquavanjaram" / "gfx942" / "Equality"
    source = source / "aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml"
    logic = tmp_path / source.name
    logic.write_text(source.read_text().replace("\n  Sparse: 0\n", "\n  Sparse: 0\n  SwizzleTensorA: false\n", 1))
    assert "SwizzleTensorA" in logic.read_text()
    for option, version in [([], "0.12.1"), (["--hipblaslt-version", "7d9fb683"], "7d9fb683")]:
        out = tmp_path / f"{version}.yaml"
        result = CliRunner().invoke(cli, ["build-master", str(logic), "-o", str(out), *option])
        assert result.exit_code == 0, result.output
        text = out.read_text()
        assert ("WorkgroupNumberCheck" in text) == ("swizzleTensorA: false" in text) == (version == "0.12.1")
        assert hipblaslt_runtime(version) is tensilekit.open_library(out).runtime
    # 7d9fb683's runtime stops at 0.12.1's predicates ("Unknown subclass type SwizzleTensorA")
    with pytest.raises(tensilekit.TensilekitError, match="cannot load this master: it is hipBLASLt 0.12.1's"):
        tensilekit.open_library(tmp_path / "0.12.1.yaml", hipblaslt_version="7d9fb683")
    refused = CliRunner().invoke(
        cli, ["select", "64", "64", "64", "--library", str(tmp_path / "0.12.1.yaml"), "--hipblaslt-version", "7d9fb683"]
    )
    assert refused.exit_code != 0 and "Unknown subclass type" in refused.output


# --------------------------------------------------------------------------------------------
# Stream-K: a small master 0.12.1's own TensileCreateLibrary builds from fixtures/streamk/

STREAMK_LOGIC = Path(__file__).resolve().parents[2] / "fixtures" / "streamk"
_HHS_TN = {
    "arch": "gfx942", "trans_a": "T", "trans_b": "N", "a_type": "Half", "b_type": "Half", "c_type": "Half",
    "d_type": "Half", "compute_type": "f32",
}  # fmt: skip


@pytest.fixture(scope="module")
def streamk_master(amd: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``fixtures/streamk/`` (two HHS TN files: a plain row, an ``ExperimentalStreamK`` row of four
    non-atomic Stream-K kernels) built by ``build-master-0.12.1``: its ``master.dat``."""
    _require_0121(amd)
    out = tmp_path_factory.mktemp("streamk_master")
    logic = sorted(STREAMK_LOGIC.glob("*.yaml"))
    assert len(logic) == 2, "fixtures/streamk holds the plain and the Stream-K logic file"
    done = subprocess.run(
        [str(amd / "build-master-0.12.1"), "--arch", "gfx942", "--out", str(out), "--name", "master", *map(str, logic)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "master.dat"


def _oracle_under(amd: Path, master: Path, queries: list[dict[str, Any]], tmp: Path, method: int) -> dict[str, Any]:
    """0.12.1's C++ answers (top 1, ``findTopSolutions(.., 8)``, ``getAllSolutions``' supported
    set) with ``TENSILE_SOLUTION_SELECTION_METHOD=method``."""
    path = tmp / f"queries{method}.jsonl"
    path.write_text("".join(json.dumps(query) + "\n" for query in queries))
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(path), "--top", "8", "--version", "0.12.1"],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "TENSILE_SOLUTION_SELECTION_METHOD": str(method)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}


def test_streamk_workspace_follows_the_predicted_grid(streamk_master: Path, amd: Path, tmp_path: Path) -> None:
    """A non-atomic Stream-K kernel needs a partial tile per workgroup of the grid 0.12.1 predicts
    (``best_predicted_grid_size``; the tile count when K is 0), not per CU: asked with one byte
    less than and exactly a kernel's need, with hipBLASLt's default 128 MiB, 32 MiB, 1 MiB and 0,
    on four CU counts, 0.12.1's C++ and tensilekit agree on top 1, top 8 and the supported set
    under methods 0 and 2; and the CU-count grid (7d9fb683's) would judge many of these otherwise."""
    import random

    from tensilekit.predicates.evaluate import lite_required_workspace
    from tensilekit.selection import select_solution
    from tensilekit.selection.api import top_solutions

    master = tensilekit.load_master(streamk_master)
    streamk = [s for s in master.solutions if int(s.size_mapping.stream_k or 0) > 0]
    assert len(streamk) == 4 and len(master.solutions) > 4, "a plain row and four Stream-K kernels"
    runtime = hipblaslt_runtime("0.12.1", 2)
    rng = random.Random(34)
    queries: list[dict[str, Any]] = []
    for number in range(240):
        m, n, k = (rng.choice([rng.randint(1, 600), rng.randint(1, 20000)]) for _ in range(3))
        query = {"id": f"q{number}", **_HHS_TN, "m": m, "n": n, "k": 0 if number % 20 == 0 else k,
                 "batch": rng.choice([1, 1, 2, 7]), "cu_count": rng.choice([20, 80, 228, 304])}  # fmt: skip
        choice = number % 6
        if choice < 2:  # one byte short of, or exactly, a Stream-K kernel's need
            kernel = rng.choice(streamk)
            unlimited = as_contraction(runtime.problem_from_query({**query, "workspace_size": None}))
            query["workspace_size"] = (
                runtime.required_workspace(unlimited, hardware_from_query(query), kernel) - 1 + choice
            )
        else:
            query["workspace_size"] = [134217728, 33554432, 1 << 20, 0][choice - 2]
        queries.append(query)
    wrong_by_cus = 0
    for method in (0, 2):
        answers = _oracle_under(amd, streamk_master, queries, tmp_path, method)
        chosen = hipblaslt_runtime("0.12.1", method)
        compiled = compile_library(master, runtime=chosen)
        mismatches, listed = [], 0
        for query in queries:
            answer, device = answers[query["id"]], hardware_from_query(query)
            problem = chosen.problem_from_query(query)
            mine = (
                select_solution(compiled, problem, device).index,
                [s.index for s in top_solutions(compiled, problem, device, 8).ranked],
                [s.index for s in find_all_solutions(compiled, problem, device)],
            )
            want = (answer["expected"] and answer["expected"]["index"], answer["top"], answer["all_supported"])
            if mine != want:
                mismatches.append(f"{query}: 0.12.1 {want}, tensilekit {mine}")
            listed += any(s.index in answer["all_supported"] for s in streamk)
            if method == 2:  # the supported set with a grid of CU-count workgroups (7d9fb683's) is wrong
                contraction = as_contraction(problem)
                pool = find_all_solutions(
                    compiled, chosen.problem_from_query({**query, "workspace_size": None}), device
                )
                by_cus = [
                    s.index for s in pool
                    if lite_required_workspace(contraction, device, s, synchronizer=False) <= contraction.workspace_size
                ]  # fmt: skip
                wrong_by_cus += by_cus != answer["all_supported"]
        assert not mismatches, f"method {method}: {len(mismatches)} disagree:\n" + "\n".join(mismatches[:6])
        assert (listed > 20) == (method == 2), f"method {method}: {listed} queries list a Stream-K kernel"
    assert wrong_by_cus > 5, f"only {wrong_by_cus} queries tell the predicted grid from the CU count"


def test_index_lookup_hides_streamk_unless_method_2(
    streamk_master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recorded index (here TunableOp's ``Gemm_Hipblaslt_<index>``) is taken as hipBLASLt takes
    it, through ``getSolutionsFromIndex``, which under 0.12.1 hands out no Stream-K solution unless
    ``TENSILE_SOLUTION_SELECTION_METHOD`` is 2 (its ``MasterSolutionLibrary::getSolutionByIndex(
    Hardware const&, int)``; the oracle answers no index lookup): a Stream-K kernel is rejected
    under 0, kept under 2, given as the option or by the environment, which ``remap`` reads as
    ``select`` does; the plain row's kernel is kept under both."""
    from tensilekit.remapping import RemapStatus, remap

    master = tensilekit.load_master(streamk_master)
    streamk = next(s.index for s in master.solutions if int(s.size_mapping.stream_k or 0) > 0)
    plain = next(s.index for s in master.solutions if not int(s.size_mapping.stream_k or 0))
    artefact = tmp_path / "tunableop_results0.csv"
    artefact.write_text(
        "Validator,GCN_ARCH_NAME,gfx942:sramecc+:xnack-\n"
        f"GemmTunableOp_Half_TN,tn_4096_4096_4096_ld_4096_4096_4096,Gemm_Hipblaslt_{streamk},0.2\n"
        f"GemmTunableOp_Half_TN,tn_4096_4096_4096_ld_4096_4096_4096,Gemm_Hipblaslt_{plain},0.3\n"
    )

    def statuses(**options: Any) -> list[tuple[RemapStatus, str | None]]:
        report = remap([artefact], streamk_master, streamk_master, arch="gfx942", cu_count=304, **options)
        return [(row.status, row.reason) for row in report.rows]

    monkeypatch.delenv("TENSILE_SOLUTION_SELECTION_METHOD", raising=False)
    without = statuses()
    assert [status for status, _ in without] == [RemapStatus.REJECTED, RemapStatus.SAME], without
    assert "no Stream-K solution by index" in str(without[0][1])
    assert [status for status, _ in statuses(solution_selection_method=2)] == [RemapStatus.SAME] * 2
    monkeypatch.setenv("TENSILE_SOLUTION_SELECTION_METHOD", "2")
    assert [status for status, _ in statuses()] == [RemapStatus.SAME] * 2
    assert [status for status, _ in statuses(solution_selection_method=0)][0] is RemapStatus.REJECTED
    # the rule is 0.12.1's alone: 7d9fb683's getSolutionByIndex is a plain lookup
    query = {**_HHS_TN, "m": 4096, "n": 4096, "k": 4096, "batch": 1, "cu_count": 304, "workspace_size": None}
    for version, reached in (("7d9fb683", True), ("0.12.1", False)):
        runtime = hipblaslt_runtime(version)
        problem, device = as_contraction(runtime.problem_from_query(query)), hardware_from_query(query)
        verdict = ReferenceSelector(master, None, runtime).index_verdict(streamk, problem, device)
        assert verdict.passed is reached, (version, verdict)
    result = CliRunner().invoke(
        cli, ["remap", str(artefact), "--from", str(streamk_master), "--to", str(streamk_master), "--arch", "gfx942",
              "--cu-count", "304", "--json"], env={"TENSILE_SOLUTION_SELECTION_METHOD": "0"},
    )  # fmt: skip
    assert [row["status"] for row in json.loads(result.stdout)] == ["rejected", "same"], result.output


def test_every_answering_command_reads_the_selection_method_alike(
    streamk_master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TENSILE_SOLUTION_SELECTION_METHOD`` is read in one place of the API
    (``solution_selection_method_of``): ``open_library`` (select, coverage, plot), diff's
    ``runtime_selector`` and ``remap`` (above) answer alike under the variable and under the
    explicit method, and the CLI's ``--solution-selection-method`` only passes the option on."""
    from tensilekit.cli.main import cli as main_cli
    from tensilekit.merge.diff import runtime_selector

    record = {**_HHS_TN, "id": "q", "m": 4096, "n": 4096, "k": 4096, "batch": 1, "cu_count": 304}
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(record) + "\n")
    master = tensilekit.load_master(streamk_master)
    streamk = {s.index for s in master.solutions if int(s.size_mapping.stream_k or 0) > 0}

    def answers() -> list[int | None]:
        library = tensilekit.open_library(streamk_master, cu_count=304)
        by_select = CliRunner().invoke(main_cli, ["select", "--library", str(streamk_master), "--queries", str(queries),
                                                  "--json"])  # fmt: skip
        by_coverage = CliRunner().invoke(main_cli, ["coverage", str(queries), "--library", str(streamk_master),
                                                    "--cu-count", "304", "--json"])  # fmt: skip
        assert by_select.exit_code == 0 and by_coverage.exit_code == 0, by_select.output + by_coverage.output
        return [
            library.select(library.problem_from_query(record), library.device_of(record)).index,
            runtime_selector()(master, record).index,
            json.loads(by_select.stdout)["index"],
            json.loads(by_coverage.stdout)["gemms"][0]["index"],
        ]

    monkeypatch.delenv("TENSILE_SOLUTION_SELECTION_METHOD", raising=False)
    plain = answers()
    monkeypatch.setenv("TENSILE_SOLUTION_SELECTION_METHOD", "2")
    chosen = answers()
    assert len(set(plain)) == 1 and plain[0] not in streamk, plain
    assert len(set(chosen)) == 1 and chosen[0] in streamk, chosen
    explicit = tensilekit.open_library(streamk_master, cu_count=304, solution_selection_method=0)
    assert explicit.select(explicit.problem_from_query(record), explicit.device_of(record)).index == plain[0]
    assert runtime_selector(solution_selection_method=0)(master, record).index == plain[0]
    import click

    context = click.Context(main_cli)
    for path in (["select"], ["coverage"], ["remap"], ["diff"], ["plot", "selection"], ["plot", "coverage"]):
        command: Any = main_cli
        for name in path:
            command = command.get_command(context, name)
        option = next(p for p in command.params if p.name == "solution_selection_method")
        assert option.envvar is None, f"{path}: the API reads the environment, not the CLI"

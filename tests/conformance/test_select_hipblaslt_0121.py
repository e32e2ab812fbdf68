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
from tensilekit.selection.walk import as_contraction

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

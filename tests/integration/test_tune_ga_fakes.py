"""`tensilekit tune --mode ga` without --simulate: the fake AMD executables on PATH, driven through
the real subprocess wrappers. The fake Tensile driver reads each generated config and times its
kernels with the SIMULATED model (TENSILEKIT_FAKE_MODEL), writing the real CSV and YAML outputs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.search.configs import expand_forks
from tensilekit.search.driver import load_solution_records
from tensilekit.search.params import KernelParams

from .conftest import FAKE_BIN, ROOT, write_fake_library_logic

LIST = ROOT / "fixtures" / "logs" / "geko_list_bbs_nt.yaml"
# This interpreter directly: no version-manager shim per process. The benchmark fakes need only
# the standard library (-S); the Tensile fake imports tensilekit's GPU model.
WRAPPER = """#!{python}{flags}
import os, sys
os.execv(sys.executable, [sys.executable{extra}, {fake!r}, *sys.argv[1:]])
"""


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gafakes")
    wrappers = root / "bin"
    wrappers.mkdir()
    for tool, fast in (("hipblaslt-bench", True), ("TensileCreateLibrary", True), ("Tensile", False)):
        script = wrappers / tool
        script.write_text(WRAPPER.format(python=sys.executable, flags=" -S" if fast else "",
                                         extra=', "-S"' if fast else "", fake=str(FAKE_BIN / tool)))  # fmt: skip
        script.chmod(0o755)
    env = {
        "PATH": f"{wrappers}{os.pathsep}{os.environ.get('PATH', '')}", "TENSILEKIT_FAKE_MODEL": "gfx942",
        "TENSILEKIT_FAKE_PROFILE": "hipblaslt-develop",
        "TENSILEKIT_FAKE_ARGV_LOG": str(root / "calls.jsonl"),
    }  # fmt: skip
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        library = write_fake_library_logic(root / "library_logic", log=LIST)
        workdir = root / "W"
        # seed 1: among its kernels is one of the 4 % the SIMULATED GPU computes garbage with
        args = ["tune", "--mode", "ga", str(LIST), "--arch", "gfx942", "--workdir", str(workdir), "--library-logic",
                str(library), "--population", "8", "--generations", "2", "--devices", "0,1", "--seed", "1"]  # fmt: skip
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    calls = [json.loads(line) for line in (root / "calls.jsonl").read_text().splitlines()]
    return {"result": result, "workdir": workdir, "calls": calls}


def test_the_ga_runs_end_to_end_through_the_fake_driver(fake_run: dict[str, Any]) -> None:
    result, workdir = fake_run["result"], fake_run["workdir"]
    assert result.exit_code == 0, result.output
    report = json.loads((workdir / "report.json").read_text())
    assert report["data"] == "measured" and len(report["gemms"]) == 4
    search = json.loads((workdir / "04_search" / "search.json").read_text())
    assert search["mode"] == "ga" and all(entry["status"] == "winner" for entry in search["gemms"].values())
    assert [gemm["status"] for gemm in report["gemms"]] == ["tuned"] * 4  # the fake bench: tuned is 25 % faster
    assert list((workdir / "final_libs").glob("*.yaml")) and list((workdir / "merged").glob("*.yaml"))
    assert all(group["seeds"] == 1 for group in search["groups"].values())  # the library's kernel, via the baseline
    tools = [call["tool"] for call in fake_run["calls"]]
    assert tools.count("TensileCreateLibrary") >= 1 and tools.count("hipblaslt-bench") >= 8


def test_the_driver_read_the_generated_configs(fake_run: dict[str, Any]) -> None:
    workdir = fake_run["workdir"]
    calls = [call for call in fake_run["calls"] if call["tool"] == "Tensile"]
    # preflight asks the driver its tensilelite version (the profile's major); the rest are runs
    assert calls[0]["argv"] == ["--version"]
    runs = calls[1:]
    groups = json.loads((workdir / "04_search" / "search.json").read_text())["groups"]
    assert len(runs) == sum(group["generations"] for group in groups.values())
    for call in runs:
        config_path, output = Path(call["argv"][0]), Path(call["argv"][1])
        assert config_path.parent == workdir / "04_search" / "runs" and output.name == f"build_{config_path.stem}"
        config = yaml.safe_load(config_path.read_text())
        kernels = [KernelParams.from_fork_values(values) for values in expand_forks(config["BenchmarkProblems"][0][1])]
        data = output / "2_BenchmarkData"
        # AMD's names: <PT>_00_CSVWinner.{csv,yaml} (BenchmarkProblems.py:405-410 @7d9fb68)
        [csv_file] = data.glob("*_00_CSVWinner.csv")
        assert csv_file.read_text().count(", ") > len(kernels)
        [solutions] = data.glob("*_00_CSVWinner.yaml")
        # LibraryIO.writeSolutions: version and sizes first, then one record per benchmarked kernel
        assert len(kernels) == len(load_solution_records(solutions))
        assert len(yaml.safe_load(solutions.read_text())) == len(kernels) + 2


def test_failed_validation_is_recorded_with_infinite_cost(fake_run: dict[str, Any]) -> None:
    state = json.loads((fake_run["workdir"] / "04_search" / "ga_state.json").read_text())
    archive = [item for group in state["groups"].values() for item in group["archive"]]
    failed = [item for item in archive if item["status"] == "failed validation"]
    assert failed and all(all(time is None for time in item["times_us"]) for item in failed)
    ok = [item for item in archive if item["status"] == "ok"]
    assert len(ok) + len(failed) == len(archive)

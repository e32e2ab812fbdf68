"""``tensilekit tune --mode ga|grid`` for real, on AMD's stand-ins (issue 22's acceptance).

hipblaslt-bench and TensileCreateLibrary are the stand-ins (``../shared/amd/standins``: AMD's
hipBLASLt 7d9fb683 code); the Tensile benchmark driver, which has no stand-in, is the fake
``tests/fakes/bin/Tensile`` with ``TENSILEKIT_FAKE_STANDINS``: the solutions it benchmarks and
the ``2_BenchmarkData`` records it writes come from AMD's own tensilelite code (``Solution()``,
``LibraryIO.writeSolutions``), its times from the stand-in bench's timing model. ``--library-logic``
is real corpus logic (hipBLASLt's bf16 TN Equality file). Accepted when the merged library
(``WORKDIR/merged``) builds with the stand-in TensileCreateLibrary and the stand-in bench's
heuristic then picks, for every tuned GEMM, the tuned kernel -- identified by what that build
wrote (``MatchTable.yaml``: master index -> logic file and position), not by an assumed name.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from amd_build import amd_build_master

from tensilekit.pipeline.stages.kernel_search import EXISTING, SEARCH_CATALOG
from tensilekit.search.driver import load_solution_records

from .conftest import FAKE_BIN
from .standin_support import bench, create_library, mask64_line, run_tune

BBS_TN = "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs.yaml"
EQUALITY = "logic/hipblaslt/aquavanjaram/gfx942/Equality"
# This interpreter directly (the fake needs PyYAML); the fake runs AMD's code in AMD's venv itself.
WRAPPER = """#!{python}
import os, sys
os.execv(sys.executable, [sys.executable, {fake!r}, *sys.argv[1:]])
"""
GEMMS = [
    {"M": m, "N": n, "K": k, "transA": "T", "transB": "N", "a_type": "bf16_r", "b_type": "bf16_r",
     "c_type": "bf16_r", "d_type": "bf16_r"}
    for m, n, k in ((4096, 8, 4096), (6144, 8, 4096), (4096, 8, 14336), (1024, 16, 8192))
]  # fmt: skip


@pytest.fixture(scope="module")
def node(standins: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A gfx942 node: the logic folder, the library its hipBLASLt install built, the driver fake."""
    root = tmp_path_factory.mktemp("ganode")
    logic = root / "logic"
    logic.mkdir()
    (logic / BBS_TN).write_bytes((corpus / EQUALITY / BBS_TN).read_bytes())
    installed = create_library(standins, logic, root / "lib" / "hipblaslt", root / "tcl-cwd")
    wrappers = root / "bin"
    wrappers.mkdir()
    driver = wrappers / "Tensile"
    driver.write_text(WRAPPER.format(python=sys.executable, fake=str(FAKE_BIN / "Tensile")))
    driver.chmod(0o755)
    return {"root": root, "logic": logic, "installed": installed, "bin": wrappers}


def amd_custom_kernels(standins: Path) -> Path:
    """tensilelite's CustomKernels folder (the BBS file names one; AMD's tools find it themselves)."""
    return standins.parent / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels"


def _tune(standins: Path, node: dict[str, Path], workdir: Path, mode: str, *extra: str) -> dict[str, Any]:
    log = workdir.parent / f"{mode}.log"
    log.write_text("".join(mask64_line(gemm, calls=20 - i) + "\n" for i, gemm in enumerate(GEMMS)))
    calls = workdir.parent / f"{mode}-calls.jsonl"
    env = {
        # the driver fake before the stand-ins' folder, which holds AMD's driver too (test_tune_ga_amd_driver.py)
        "PATH": f"{node['bin']}{os.pathsep}{standins}{os.pathsep}{os.environ.get('PATH', '')}",
        "TENSILEKIT_FAKE_STANDINS": str(standins), "TENSILEKIT_FAKE_ARGV_LOG": str(calls),
        "HIPBLASLT_STANDIN_NUM_GPUS": "2",
    }  # fmt: skip
    completed = run_tune(
        standins, str(log), "--arch", "gfx942", "--workdir", str(workdir), "--mode", mode,
        "--library-logic", str(node["logic"]), "--reference-library", str(node["installed"]),
        "--tool-profile", "hipblaslt-7d9fb68", "--custom-kernels", str(amd_custom_kernels(standins)), "--devices", "0,1", "--seed", "3", *extra, env=env,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return {
        "calls": [json.loads(line) for line in calls.read_text().splitlines()],
        "search": json.loads((workdir / "04_search" / "search.json").read_text()),
    }


@pytest.fixture(scope="module", params=["ga", "grid"])
def tuned(
    request: pytest.FixtureRequest, standins: Path, node: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    mode = request.param
    root = tmp_path_factory.mktemp(f"tune-{mode}")
    workdir = root / "W"
    extra = ("--population", "8", "--generations", "2") if mode == "ga" else ()
    run = _tune(standins, node, workdir, mode, *extra)
    return {**run, "mode": mode, "root": root, "workdir": workdir}


def _results(workdir: Path) -> dict[str, dict[str, str]]:
    with open(workdir / "results" / "final_results.csv", newline="") as stream:
        return {f"{row['M']}x{row['N']}x{row['K']}": row for row in csv.DictReader(stream)}


def test_the_tuned_kernels_are_selected_after_the_merged_library_is_built(
    tuned: dict[str, Any], standins: Path, node: dict[str, Path]
) -> None:
    workdir, root = tuned["workdir"], tuned["root"]
    search = tuned["search"]
    assert search["mode"] == tuned["mode"]
    # every installed solution (the custom kernel's too) is identified in --library-logic
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert catalog["identity"]["installed_not_in_logic"] == 0
    results = _results(workdir)
    kept = {key: row for key, row in results.items() if row["status"] == "kept"}
    assert kept, "the search must beat the library on some GEMM"

    # The merged library builds with the stand-in TensileCreateLibrary (AMD's function) ...
    cwd = root / "tcl-cwd"
    rebuilt = create_library(standins, workdir / "merged", root / "rebuilt", cwd)
    table = yaml.safe_load((cwd / "MatchTable.yaml").read_text())
    # ... and its heuristic picks the tuned kernel for every kept GEMM: the master index it
    # reports is, per that build's own MatchTable, the merged-logic solution the search chose.
    for gemm in GEMMS:
        key = f"{gemm['M']}x{gemm['N']}x{gemm['K']}"
        picked = bench(standins, rebuilt, gemm, "--print_kernel_info")
        before = bench(standins, node["installed"], gemm)
        assert picked is not None and picked.results and before is not None and before.results, gemm
        index = picked.results[0].solution_index
        assert index is not None
        logic_file, position = table[index]
        assert Path(logic_file).parent == workdir / "merged" and Path(logic_file).name == BBS_TN
        record = _logic_record(logic_file, position)
        after_us, before_us = picked.results[0].us, before.results[0].us
        assert after_us is not None and before_us is not None
        if key in kept:
            winner = search["gemms"][kept[key]["id"]]["winner"]
            if winner["origin"] == EXISTING:  # no generated kernel beat it (issue 36 item 7): the library's own record
                source, position = winner["location"]
                sources = json.loads((workdir / "04_search" / SEARCH_CATALOG).read_text())["sources"]
                expected = _logic_record(str(workdir / sources[source]), position)
                assert _without_index(record) == _without_index(expected), (gemm, winner)
            else:  # the generated kernel, by the name the driver's LibraryLogic gave it
                assert record["SolutionNameMin"] == winner["solution_name"], (gemm, record["SolutionNameMin"], winner)
            assert after_us < before_us, gemm
        else:
            assert after_us <= before_us * 1.0001, ("slower after tuning", gemm)


def _without_index(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "SolutionIndex"}


def _logic_record(path: str, position: int) -> dict[str, Any]:
    data = yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return dict(data[5][position])


def test_the_driver_benchmarked_amds_solutions_of_the_generated_configs(tuned: dict[str, Any]) -> None:
    workdir = tuned["workdir"]
    runs = [call for call in tuned["calls"] if call["tool"] == "Tensile"]
    groups = tuned["search"]["groups"]
    assert runs and len(runs) == sum(group["generations"] for group in groups.values())
    for call in runs:
        config_path, output = Path(call["argv"][0]), Path(call["argv"][1])
        assert config_path.parent == workdir / "04_search" / "runs" and output.name == f"build_{config_path.stem}"
        [csv_file] = (output / "2_BenchmarkData").glob("*_00_CSVWinner.csv")
        records = load_solution_records(csv_file.with_suffix(".yaml"))
        # AMD's records (LibraryIO.writeSolutions): complete, as TensileCreateLibrary needs them
        assert records and all("CustomKernelName" in record and "MIBlock" in record for record in records)


def _option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_the_client_is_built_once_per_node_and_every_run_holds_its_gpus_lock(tuned: dict[str, Any]) -> None:
    """Issue 22 item 4: no driver run rebuilds the client (Tensile.py:129-131,169-173 and
    ClientWriter.py:172-174 @7d9fb68); as GEKO, one client per node and a per-GPU lock -- held by
    tensilekit, not passed as --client-lock, whose filelock import 7d9fb68's Tensile venv lacks
    (issue 36 item 12)."""
    workdir = tuned["workdir"]
    runs = [call["argv"] for call in tuned["calls"] if call["tool"] == "Tensile"]
    assert len(runs) >= 2
    builders = [argv for argv in runs if "--prebuilt-client" not in argv]
    assert len(builders) == 1, "exactly one run builds the client"
    build_path = Path(str(_option(builders[0], "--client-build-path")))
    client = build_path / "client" / "tensile_client"  # ClientExecutable.builtPath("client/tensile_client")
    assert client.is_file()
    for argv in runs:
        if argv is not builders[0]:
            assert _option(argv, "--prebuilt-client") == str(client) and "--client-build-path" not in argv
        assert "--client-lock" not in argv
    assert (build_path.parent / "gpu0.lock").is_file() and (build_path.parent / "gpu1.lock").is_file(), (
        "both GPUs ran the driver, each under its lock"
    )
    # no run built a client of its own (<output>/0_Build), and no config forces a rebuild
    assert not list((workdir / "04_search" / "runs").glob("build_*/0_Build"))
    for config in (workdir / "04_search" / "runs").glob("*.yaml"):
        assert yaml.safe_load(config.read_text())["GlobalParameters"]["ForceRedoLibraryClient"] is False


def test_a_runnable_config_gives_library_logic_from_amds_writer_that_amds_build_takes(
    tuned: dict[str, Any], standins: Path, node: dict[str, Path], tmp_path: Path
) -> None:
    """``configs/<group>.yaml`` (the hand-runnable first benchmark, with its LibraryLogic section):
    the driver fake's 3_LibraryLogic is written by tensilelite's own LibraryLogic.generateLogic, and
    AMD's TensileCreateLibrary library step builds it."""
    config = sorted((tuned["workdir"] / "04_search" / "configs").glob("*.yaml"))[0]
    completed = subprocess.run(
        [str(node["bin"] / "Tensile"), str(config), str(tmp_path / "out")],
        env={**os.environ, "TENSILEKIT_FAKE_STANDINS": str(standins)}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    [logic] = (tmp_path / "out" / "3_LibraryLogic").glob("*.yaml")
    assert logic.name.startswith("aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_")  # the library row's epilogue
    amd_build_master(standins.parent, "gfx942", [logic], tmp_path / "built")

"""``tune --simulate`` exercises a library AMD's TensileCreateLibrary can build (issue 22 item 10).

The simulated library's logic files (stage ``library``) and the merged library a simulated
search leaves (``WORKDIR/merged``: the simulated driver's tuned records merged into them) are
given to ``../shared/amd/build-master`` (hipBLASLt 7d9fb683's own TensileCreateLibrary library
step). Records that lack keys AMD's ``parseLibraryLogicData`` reads failed there
(``KeyError: 'CustomKernelName'``) -- the simulated path then exercised no buildable library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from amd_build import amd_build_master
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.logic_io import load_logic

from .conftest import LLAMA_LOG
from .standin_support import bench, create_library, mask64_line
from .test_tune_ga_fakes import BBS_TN, EQUALITY, GEMMS


@pytest.mark.parametrize("mode", [["--mode", "search"], ["--mode", "ga", "--population", "6", "--generations", "2"]])
def test_the_simulated_library_and_its_merged_tuning_build_with_amds_tensilecreatelibrary(
    amd: Path, tmp_path: Path, mode: list[str]
) -> None:
    workdir = tmp_path / "W"
    args = ["tune", "--simulate", str(LLAMA_LOG), "--arch", "gfx942", "--workdir", str(workdir), "--seed", "3", *mode]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    library = sorted((workdir / "02_library" / "logic").glob("*.yaml"))
    merged = sorted((workdir / "merged").glob("*.yaml"))
    assert library and merged
    for path in library:  # still labelled SIMULATED
        assert any("SIMULATED" in name for name in load_logic(path).device_names)
    for name, files in (("library", library), ("merged", merged)):
        out = amd_build_master(amd, "gfx942", files, tmp_path / name)  # asserts AMD's build succeeded
        assert list(out.glob("*.dat")) or list(out.glob("*.yaml")), f"build-master wrote no master for {name}"


@pytest.fixture(scope="module")
def amd_built_logic(standins: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """hipBLASLt's bf16 TN Equality file, and what AMD's TensileCreateLibrary (the stand-in) builds
    from it: the installed library and its MatchTable (master index -> [file, position])."""
    root = tmp_path_factory.mktemp("simlogic")
    logic = root / "logic"
    logic.mkdir()
    (logic / BBS_TN).write_bytes((corpus / EQUALITY / BBS_TN).read_bytes())
    installed = create_library(standins, logic, root / "lib", root / "cwd")
    table = yaml.safe_load((root / "cwd" / "MatchTable.yaml").read_text())
    return {"logic": logic, "installed": installed, "table": table, "root": root}


@pytest.mark.parametrize("mode", [["--mode", "search"], ["--mode", "ga", "--population", "6", "--generations", "2"]])
def test_simulate_with_library_logic_simulates_that_library_with_amds_indices_and_names(
    standins: Path, amd_built_logic: dict[str, Any], tmp_path: Path, mode: list[str]
) -> None:
    """Issue 22 item 10: ``--simulate --library-logic DIR`` simulates DIR (real records), and the
    SIMULATED bench prints the indices and names a TensileCreateLibrary build of DIR gives."""
    logic, table = amd_built_logic["logic"], amd_built_logic["table"]
    log = tmp_path / "app.log"
    log.write_text("".join(mask64_line(gemm, calls=20 - i) + "\n" for i, gemm in enumerate(GEMMS)))
    workdir = tmp_path / "W"
    custom = standins.parent / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels"
    args = ["tune", "--simulate", str(log), "--arch", "gfx942", "--workdir", str(workdir), "--seed", "3",
            "--library-logic", str(logic), "--custom-kernels", str(custom), *mode]  # fmt: skip
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert catalog["sources"] == [str(logic / BBS_TN)] and "SIMULATED" in catalog["origin"]
    indices = catalog["indices"]["T,N,bf16_r,bf16_r,bf16_r,c_f32_r"]
    baseline = json.loads((workdir / "03_baseline" / "baseline.json").read_text())["gemms"]
    for gemm, item in zip(GEMMS, baseline.values(), strict=True):
        measured = item["measured"]
        index, name = measured["solution_index"], measured["solution_name"]
        # AMD's build of DIR puts that index at the same logic position, under the same name
        assert table[index] == [str(logic / BBS_TN), indices[str(index)][1]]
        assert indices[str(index)] == [0, table[index][1], name]
        amd = bench(standins, amd_built_logic["installed"], gemm, "--algo_method", "index", "--solution_index",
                    str(index), "--print_kernel_info")  # fmt: skip
        assert amd is not None and amd.results[0].solution_name == name
    assert json.loads((workdir / "report.json").read_text())["data"] == "SIMULATED"
    # the merged library is DIR's file with the tuned solutions, and AMD's TensileCreateLibrary builds it
    [merged] = (workdir / "merged").glob("*.yaml")
    assert merged.name == BBS_TN
    create_library(standins, workdir / "merged", tmp_path / "rebuilt", tmp_path / "tcl-cwd")

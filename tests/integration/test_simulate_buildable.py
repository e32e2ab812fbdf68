"""``tune --simulate`` exercises a library AMD's TensileCreateLibrary can build (issue 22 item 10).

The simulated library's logic files (stage ``library``) and the merged library a simulated
search leaves (``WORKDIR/merged``: the simulated driver's tuned records merged into them) are
given to ``../shared/amd/build-master`` (hipBLASLt 7d9fb683's own TensileCreateLibrary library
step). Records that lack keys AMD's ``parseLibraryLogicData`` reads failed there
(``KeyError: 'CustomKernelName'``) -- the simulated path then exercised no buildable library.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from amd_build import amd_build_master
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.logic_io import load_logic

from .conftest import LLAMA_LOG


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

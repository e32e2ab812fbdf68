"""Stage build's TensileCreateLibrary step returns the folder that holds the master library:
hipBLASLt uses HIPBLASLT_TENSILE_LIBPATH as is (tensile_host.cpp:1260-1440 @7d9fb68), so the
benchmark stage must be pointed at library/ (7d9fb68's tool) or library/<arch>/ (rocm-libraries')."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.executors.local import SerialExecutor
from tensilekit.pipeline.progress import NullReporter
from tensilekit.pipeline.stage import StageContext
from tensilekit.pipeline.stages.common import create_library

FAKE_TCL = Path(__file__).resolve().parents[2] / "fakes" / "bin" / "TensileCreateLibrary"
LOGIC = "logic/hipblaslt/aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"


def _build(tmp_path: Path, profile: str, executable: Path, logic: Path) -> Path:
    config = TuneConfig(
        logs=(tmp_path / "x.log",), arch="gfx942", workdir=tmp_path, tool_profile=profile,
        create_library_executable=str(executable),
    )  # fmt: skip
    context = StageContext(
        name="build", number=5, directory=tmp_path / "05_build", run_root=tmp_path, config=config,
        executor=SerialExecutor(0, timeout=300), reporter=NullReporter(), upstream={},
    )  # fmt: skip
    return create_library(context, config, logic)


def test_the_7d9fb683_tool_writes_the_master_into_library(standins: Path, corpus: Path, tmp_path: Path) -> None:
    logic = tmp_path / "05_build" / "logic"
    logic.mkdir(parents=True)
    shutil.copyfile(corpus / LOGIC, logic / Path(LOGIC).name)
    library = _build(tmp_path, "hipblaslt-7d9fb68", standins / "TensileCreateLibrary", logic)
    assert library == tmp_path / "05_build" / "tcl" / "library"
    assert (library / "TensileLibrary_lazy_gfx942.dat").is_file()


def test_the_rocm_libraries_tool_writes_it_into_library_arch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The newer tool's layout (libraryDir in TensileCreateLibrary/Run.py @00ee1f9d), which the
    stand-ins refuse: the fake follows that source."""
    monkeypatch.setenv("TENSILEKIT_FAKE_PROFILE", "hipblaslt-develop")
    logic = tmp_path / "05_build" / "logic"
    logic.mkdir(parents=True)
    (logic / "a.yaml").write_text("- {MinimumRequiredVersion: 5.0.0}\n- aquavanjaram\n- gfx942\n")
    library = _build(tmp_path, "hipblaslt-develop", FAKE_TCL, logic)
    assert library == tmp_path / "05_build" / "tcl" / "library" / "gfx942"
    assert (library / "TensileLibrary_lazy_gfx942.dat").is_file()

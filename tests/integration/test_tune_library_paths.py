"""``tune`` on every path a user points it at hipBLASLt (issue 36, items 1, 2 and 10), on AMD's own code
(the stand-ins' hipblaslt-bench and TensileCreateLibrary):

* (a) hipBLASLt at its default place: ``$ROCM_PATH/lib/hipblaslt/library`` (the bench finds it beside its
  ``libhipblaslt.so``, played by ``HIPBLASLT_STANDIN_LIB_DIR``);
* (b) only an exported ``HIPBLASLT_TENSILE_LIBPATH`` (hipBLASLt reads it as it is; nothing at a default place);
* (c) only the logic folder: the bench finds a library tensilekit cannot read, so tensilekit builds the reference
  from ``--library-logic`` with the run's TensileCreateLibrary and points every reference run at it.

In each: every GEMM whose ``--algo_method all`` screen has a kernel 3 % faster than the heuristic's pick gets it
from the rebuilt library's heuristic, no GEMM gets slower, every benchmark loads the library solutions were
identified in (``HIPBLASLT_STANDIN_LOG`` records each call's ``HIPBLASLT_TENSILE_LIBPATH``), and the report says
which library the reference was. The bf16 file names custom kernels (``Custom_..._DTVA``): in (a) and (b) tensilekit
finds their configs where TensileCreateLibrary does, without ``--custom-kernels``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .standin_support import (
    ERR_THR,
    UPLIFT,
    assert_rebuilt_library_picks_the_best,
    copy_logic,
    create_library,
    mask64_line,
    run_tune,
    served,
)

LOGIC_FILES = (
    "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs.yaml",  # bf16 TN, 4 custom-kernel solutions
    "aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",  # f16 NT
    "aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml",  # fp8 TN
    "aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_custom.yaml",  # f8 x f16 NN (compute type c_f32_fast_f16_r)
)
CUSTOM_KERNEL = "Custom_Cijk_Alik_Bljk_BBS_BH_Bias_AS_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_K1_MIWT4_16_DTVA"
BF16 = {"transA": "T", "transB": "N", "a_type": "bf16_r", "b_type": "bf16_r", "c_type": "bf16_r", "d_type": "bf16_r"}
F16_NT = {"transA": "N", "transB": "T", "a_type": "f16_r", "b_type": "f16_r", "c_type": "f16_r", "d_type": "f16_r"}
FP8 = {"transA": "T", "transB": "N", "a_type": "f8_r", "b_type": "f8_r", "c_type": "f16_r", "d_type": "f16_r"}
F8_F16 = {"transA": "N", "transB": "N", "a_type": "f8_r", "b_type": "f16_r", "c_type": "f16_r", "d_type": "f16_r",
          "compute_type": "c_f32_fast_f16_r", "bench_compute_type": "f32_f16_r"}  # fmt: skip
GEMMS = (
    {"M": 512, "N": 64, "K": 8192, "batch": 4, **BF16},
    {"M": 1024, "N": 2048, "K": 8192, "batch": 4, **BF16},
    {"M": 64, "N": 64, "K": 512, **BF16},
    {"M": 64, "N": 256, "K": 256, **F16_NT},
    {"M": 1024, "N": 2048, "K": 512, **F16_NT},
    {"M": 128, "N": 256, "K": 4096, **FP8},
    {"M": 4096, "N": 128, "K": 4096, **F8_F16},  # the everyday LLM inference GEMM on MI300 (issue 36 item 3)
)


@pytest.fixture(scope="module")
def node(standins: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A gfx942 'node': the logic folder, the library a hipBLASLt install built from it (laid out as
    ``<rocm>/lib/hipblaslt/library``), and the workload's GEMMs with what that library gives them."""
    root = tmp_path_factory.mktemp("node")
    logic = copy_logic(corpus, root / "logic", LOGIC_FILES)
    installed = create_library(standins, logic, root / "rocm" / "lib" / "hipblaslt", root / "tcl-cwd")
    gemms = served(standins, installed, GEMMS)
    assert len(gemms) == len(GEMMS), "every GEMM is served"
    assert any(gemm["heuristic_us"] / gemm["best_us"] >= UPLIFT for gemm in gemms if gemm["a_type"] == "bf16_r")
    log = root / "app.log"
    log.write_text("".join(mask64_line(gemm, calls=10 + i) + "\n" for i, gemm in enumerate(gemms)))
    return {"root": root, "logic": logic, "installed": installed, "rocm": root / "rocm", "gemms": gemms, "log": log}


def _setup_env(setup: str, node: dict[str, Any]) -> dict[str, str]:
    if setup == "default-place":
        return {"ROCM_PATH": str(node["rocm"]), "HIPBLASLT_STANDIN_LIB_DIR": str(node["rocm"] / "lib")}
    if setup == "exported-libpath":
        return {"HIPBLASLT_TENSILE_LIBPATH": str(node["installed"])}
    return {"HIPBLASLT_STANDIN_LIB_DIR": str(node["rocm"] / "lib")}  # logic only: tensilekit cannot find it


@pytest.mark.parametrize("setup", ["default-place", "exported-libpath", "logic-only"])
def test_every_path_tunes_every_gemm_to_the_best_kernel(
    standins: Path, node: dict[str, Any], tmp_path: Path, setup: str
) -> None:
    workdir = tmp_path / "W"
    calls = tmp_path / "bench-calls.jsonl"
    completed = run_tune(
        standins, str(node["log"]), "--arch", "gfx942", "--workdir", str(workdir), "--mode", "search",
        "--library-logic", str(node["logic"]), "--err-thr", ERR_THR,  # see ERR_THR for why
        env={**_setup_env(setup, node), "HIPBLASLT_STANDIN_LOG": str(calls)},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]

    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    assert not [item["status"] for item in search.values() if item["status"].startswith("no candidate")]
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert catalog["identity"]["installed_not_in_logic"] == 0, catalog["identity"]
    assert catalog["skipped"] == []
    report = json.loads((workdir / "report.json").read_text())["reference_library"]
    reference = Path(report["folder"])
    if setup == "logic-only":  # built by this run, every solution placed by its MatchTable.yaml
        assert reference.is_relative_to(workdir) and (reference / "TensileLibrary_lazy_gfx942.dat").is_file()
        assert "--library-logic" in report["found"] and "TensileCreateLibrary" in report["found"]
        assert "MatchTable.yaml" in report["identity"]
        assert catalog["custom_kernels"] is None  # AMD's build read them itself
    else:
        assert reference == node["installed"]
        assert ("HIPBLASLT_TENSILE_LIBPATH" if setup == "exported-libpath" else "$ROCM_PATH") in report["found"]
        # tensilekit's own build of the bf16 file found the custom kernels where TensileCreateLibrary reads them
        assert (Path(catalog["custom_kernels"]["folder"]) / f"{CUSTOM_KERNEL}.s").is_file()
    assert str(reference) in (workdir / "report.md").read_text()

    # every benchmark loaded the library solutions were identified in, or the tuned library
    tuned = json.loads((workdir / "05_build" / "build.json").read_text())["library_dir"]
    loaded = [json.loads(line).get("libpath") for line in calls.read_text().splitlines() if '"argv"' in line]
    assert loaded and set(loaded) <= {str(reference), str((workdir / tuned).resolve())}, set(loaded)
    assert str(reference) in loaded

    assert_rebuilt_library_picks_the_best(standins, workdir, node["gemms"], tmp_path)


def test_an_unreadable_exported_libpath_fails_before_any_benchmark(
    standins: Path, node: dict[str, Any], tmp_path: Path
) -> None:
    """hipBLASLt loads an exported HIPBLASLT_TENSILE_LIBPATH as it is: one tensilekit cannot read is not
    silently replaced by another library."""
    empty = tmp_path / "empty-library"
    empty.mkdir()
    completed = run_tune(
        standins, str(node["log"]), "--arch", "gfx942", "--workdir", str(tmp_path / "W"),
        "--library-logic", str(node["logic"]), env={"HIPBLASLT_TENSILE_LIBPATH": str(empty)},
    )  # fmt: skip
    assert completed.returncode != 0
    assert f"HIPBLASLT_TENSILE_LIBPATH={empty}" in completed.stderr
    assert not (tmp_path / "W" / "03_baseline").exists()


@pytest.mark.parametrize("flag", ["--library-logic", "--reference-library"])
def test_a_workdir_inside_an_input_folder_is_refused(
    standins: Path, node: dict[str, Any], tmp_path: Path, flag: str
) -> None:
    logic = tmp_path / "logic"
    logic.mkdir()
    workdir = logic / "runs" / "W"
    args = ["--library-logic", str(node["logic"])] if flag == "--reference-library" else []
    completed = run_tune(
        standins, str(node["log"]), "--arch", "gfx942", "--workdir", str(workdir), flag, str(logic), *args
    )
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert str(workdir) in completed.stderr and str(logic) in completed.stderr and flag in completed.stderr
    assert not workdir.exists()

"""``tune --mode search`` on AMD's own code: the stand-ins' hipblaslt-bench (tensilelite's C++
selection over the library it finds, its indices and names) and TensileCreateLibrary (AMD's
function). Issue 22's acceptance: every GEMM whose ``--algo_method all`` screen holds a kernel at
least 3 % faster than the heuristic's pick is kept; after merging and rebuilding with the stand-in
TensileCreateLibrary the heuristic picks a kernel as fast as that one; no GEMM gets slower; no
GEMM is "no candidate" when the screen timed candidates."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import pytest

from .standin_support import (
    ERR_THR,
    GEMM_TYPES,
    UPLIFT,
    assert_rebuilt_library_picks_the_best,
    copy_logic,
    create_library,
    mask64_line,
    run_tune,
    served,
)

SIZES = (8, 64, 128, 256, 512, 1024, 1536, 2048, 4096, 6144, 8192)


def _gemms(seed: int, count: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    gemms = []
    for _ in range(count):
        trans_a, trans_b, ab, cd = rng.choice(GEMM_TYPES)
        gemms.append(
            {"M": rng.choice(SIZES), "N": rng.choice(SIZES), "K": rng.choice(SIZES[2:]), "transA": trans_a,
             "transB": trans_b, "a_type": ab, "b_type": ab, "c_type": cd, "d_type": cd}
        )  # fmt: skip
    return gemms


@pytest.fixture(scope="module")
def node(standins: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A gfx942 'node': the logic folder and the library a hipBLASLt install built from it."""
    root = tmp_path_factory.mktemp("node")
    logic = copy_logic(corpus, root / "logic")
    # laid out as an install: <lib_dir>/hipblaslt/library, lib_dir being libhipblaslt.so's folder
    installed = create_library(standins, logic, root / "lib" / "hipblaslt", root / "tcl-cwd")
    return {"root": root, "logic": logic, "installed": installed, "lib_dir": root / "lib"}


@pytest.fixture(scope="module")
def drawn(standins: Path, node: dict[str, Path]) -> list[dict[str, Any]]:
    """The drawn GEMMs the installed library serves, with what its bench gives them: the same draw
    for both ways of identifying the installed library, so the bench is asked once."""
    gemms = served(standins, node["installed"], _gemms(seed=22, count=10))
    assert len(gemms) >= 6, "the draw must leave enough GEMMs the library serves"
    return gemms


def _results(workdir: Path) -> dict[str, dict[str, str]]:
    with open(workdir / "results" / "final_results.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    return {f"{row['M']}x{row['N']}x{row['K']}{row['transA']}{row['transB']}{row['a_type']}": row for row in rows}


def _key(gemm: dict[str, Any]) -> str:
    return f"{gemm['M']}x{gemm['N']}x{gemm['K']}{gemm['transA']}{gemm['transB']}{gemm['a_type']}"


# The third way a node points at hipBLASLt -- the bench finds a library tensilekit cannot read, so the reference is
# built from the logic folder -- is test_tune_library_paths.py's "logic-only" case, on a mixed workload.
@pytest.mark.parametrize("identify_by", ["installed-index", "reference-built-from-logic"])
def test_search_keeps_every_faster_kernel_and_the_rebuilt_library_picks_it(
    standins: Path, node: dict[str, Path], drawn: list[dict[str, Any]], tmp_path: Path, identify_by: str
) -> None:
    gemms = drawn
    log = tmp_path / "app.log"
    log.write_text("".join(mask64_line(gemm, calls=10 + i) + "\n" for i, gemm in enumerate(gemms)))
    workdir = tmp_path / "W"
    args = [str(log), "--arch", "gfx942", "--workdir", str(workdir), "--mode", "search",
            "--library-logic", str(node["logic"]), "--err-thr", ERR_THR]  # see ERR_THR for why  # fmt: skip
    if identify_by == "installed-index":
        args += ["--reference-library", str(node["installed"])]
    else:  # GEKO's custom reference library, from logic files
        args += ["--reference-library", str(node["logic"])]
    completed = run_tune(standins, *args)
    assert completed.returncode == 0, completed.stderr[-3000:]

    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    assert not [item["status"] for item in search.values() if item["status"].startswith("no candidate")]
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert catalog["identity"]["installed_read"]
    if identify_by != "installed-index":
        built = workdir / catalog["reference_library_dir"]
        assert (built / "TensileLibrary_lazy_gfx942.dat").is_file()
        assert catalog["identity"]["installed_not_in_logic"] == 0
    results = _results(workdir)
    faster = [gemm for gemm in gemms if gemm["heuristic_us"] / gemm["best_us"] >= UPLIFT]
    assert faster, "the draw must hold GEMMs the library does not serve at their best"
    for gemm in faster:
        assert results[_key(gemm)]["status"] == "kept", (gemm, results[_key(gemm)]["status"])

    assert_rebuilt_library_picks_the_best(standins, workdir, gemms, tmp_path)


def test_a_library_not_built_from_library_logic_is_reported(
    standins: Path, node: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    """--library-logic without the HHS NT file: its solutions in the installed library are named
    as not coming from it, and its GEMMs are not tuned as another solution."""
    partial = copy_logic(
        corpus, tmp_path / "partial",
        names=["aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
               "aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"],
    )  # fmt: skip
    gemm = {"M": 64, "N": 160, "K": 488, "transA": "N", "transB": "T", "a_type": "f16_r", "b_type": "f16_r",
            "c_type": "f16_r", "d_type": "f16_r"}  # fmt: skip
    log = tmp_path / "app.log"
    served = {**gemm, "M": 4096, "N": 64, "K": 4096, "transA": "T", "transB": "N"}
    log.write_text(mask64_line(gemm, calls=3) + "\n" + mask64_line(served, calls=3) + "\n")
    workdir = tmp_path / "W"
    completed = run_tune(
        standins, str(log), "--arch", "gfx942", "--workdir", str(workdir), "--library-logic", str(partial),
        "--reference-library", str(node["installed"]),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "is not the one built from" in completed.stderr
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert catalog["identity"]["installed_not_in_logic"] == 16  # the NT file's 16 solutions
    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    assert search["g0001"]["status"].startswith("no candidate: none of the")
    assert "is not in --library-logic" in search["g0001"]["status"]
    assert search["g0002"]["status"] == "winner"
    assert [path.name for path in (workdir / "final_libs").glob("*.yaml")] == [
        "aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml"
    ]

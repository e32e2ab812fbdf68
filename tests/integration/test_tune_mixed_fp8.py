"""Mixed-precision fp8 -- f8 A x f16 B with ``compute_type: c_f32_fast_f16_r``, the everyday LLM
inference GEMM on MI300 -- tuned against AMD's own code (issue 36 item 3).

hipBLASLt serves it from the problem type whose ``DataType`` is the type the MFMA reads (f16),
A and B keeping their own types: gfx942's ``aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_custom.yaml``
(``DataType: 4, DataTypeA: 11, DataTypeB: 4``). Search mode on the stand-ins (the bench's
``--compute_type f32_f16_r``, tensilelite's C++ selection, AMD's TensileCreateLibrary) keeps every
GEMM whose ``--algo_method all`` screen has a kernel >= 3 % faster than the heuristic's pick, and
the rebuilt library's heuristic picks it; GA (``--simulate`` over the same logic file) writes
configs AMD's reader accepts and merges into that file exactly as AMD's merge tool does.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from . import standin_support as node_tools

F8H = "aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_custom.yaml"
UPLIFT = 1.03
MIXED = {"transA": "N", "transB": "N", "a_type": "f8_r", "b_type": "f16_r", "c_type": "f16_r", "d_type": "f16_r",
         "compute_type": "c_f32_fast_f16_r", "bench_compute_type": "f32_f16_r"}  # fmt: skip
SIZES = ((4096, 128, 4096), (8192, 256, 512), (1024, 64, 8192), (2048, 2048, 1024), (256, 32, 4096))


@pytest.fixture(scope="module")
def node(standins: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mixed_node")
    logic = node_tools.copy_logic(corpus, root / "logic", names=[F8H])
    installed = node_tools.create_library(standins, logic, root / "lib" / "hipblaslt", root / "tcl-cwd")
    return {"logic": logic, "installed": installed}


def test_search_tunes_mixed_fp8_and_the_rebuilt_library_picks_the_faster_kernel(
    standins: Path, node: dict[str, Path], tmp_path: Path
) -> None:
    gemms: list[dict[str, Any]] = []
    for m, n, k in SIZES:
        gemm = {**MIXED, "M": m, "N": n, "K": k}
        heuristic = node_tools.bench(standins, node["installed"], gemm)
        screen = node_tools.bench(standins, node["installed"], gemm, "--algo_method", "all", "-i", "10", "-j", "2")
        assert heuristic is not None and heuristic.results and screen is not None, gemm  # AMD's library serves it
        best = min(result.us for result in screen.results if result.us is not None)
        gemms.append({**gemm, "heuristic_us": heuristic.results[0].us, "best_us": best})
    faster = [gemm for gemm in gemms if gemm["heuristic_us"] / gemm["best_us"] >= UPLIFT]
    assert faster, "the sizes must hold GEMMs the library does not serve at their best"
    log = tmp_path / "app.log"
    log.write_text("".join(node_tools.mask64_line(gemm, calls=10 + i) + "\n" for i, gemm in enumerate(gemms)))
    workdir = tmp_path / "W"
    completed = node_tools.run_tune(
        standins, str(log), "--arch", "gfx942", "--workdir", str(workdir), "--mode", "search",
        "--library-logic", str(node["logic"]), "--reference-library", str(node["installed"]),
        "--err-thr", "3",  # identity and selection are tested here, not the error gate (test_tune_standins)
        env={"HIPBLASLT_STANDIN_LOG": str(tmp_path / "bench-calls.jsonl")},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "no solutions" not in completed.stdout + completed.stderr

    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    assert {item["status"] for item in search.values()} == {"winner"}, search
    # every benchmark ran the GEMM as logged: f8 x f16 with 7d9fb683's spelling of the fast compute type
    calls = [json.loads(line) for line in (tmp_path / "bench-calls.jsonl").read_text().splitlines()]
    argvs = [call["argv"] for call in calls if "argv" in call]
    assert argvs and all(argv[argv.index("--compute_type") + 1] == "f32_f16_r" for argv in argvs)
    assert all(argv[argv.index("--a_type") + 1] == "f8_r" and argv[argv.index("--b_type") + 1] == "f16_r"
               for argv in argvs)  # fmt: skip
    with open(workdir / "results" / "final_results.csv", newline="") as stream:
        status = {(int(row["M"]), int(row["N"])): row["status"] for row in csv.DictReader(stream)}
    for gemm in faster:
        assert status[(gemm["M"], gemm["N"])] == "kept", (gemm, status)

    node_tools.assert_rebuilt_library_picks_the_best(standins, workdir, gemms, tmp_path)


def test_ga_tunes_mixed_fp8_into_amds_logic_file(node: dict[str, Path], amd: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    workdir = tmp_path / "W"
    result = CliRunner().invoke(
        cli,
        ["tune", "--simulate", "--mode", "ga", "--arch", "gfx942", "--workdir", str(workdir),
         "--library-logic", str(node["logic"]), "--inline", *"4096 128 1 4096 F8H H S N N".split(),
         "--inline", *"8192 256 1 512 F8H H S N N".split(), "--population", "8", "--generations", "3", "--seed", "1"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    search = json.loads((workdir / "04_search" / "search.json").read_text())
    assert {item["status"] for item in search["gemms"].values()} == {"winner"}, search["gemms"]
    configs = sorted((workdir / "04_search" / "configs").glob("*.yaml"))
    checked = subprocess.run(
        [str(amd / "check-configs"), "--amd", "tensilelite-7d9fb68", "--arch", "gfx942", *map(str, configs)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    answers = [json.loads(line) for line in checked.stdout.splitlines() if line.startswith("{")]
    assert configs and len(answers) == len(configs), checked.stderr[-2000:]
    for answer in answers:
        assert answer["ok"] and answer["groups"][0]["valid"] > 0, answer
        assert answer["groups"][0]["problemType"] == "Cijk_Ailk_Bljk_F8H_HHS_BH"  # AMD's name for the logic's type

    assert [path.name for path in (workdir / "final_libs").glob("*.yaml")] == [F8H]
    node_tools.assert_merged_as_amd_merges(amd, workdir, tmp_path)

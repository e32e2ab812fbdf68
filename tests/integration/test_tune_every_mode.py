"""Every ``tune`` mode (search, ga, grid) with ``--simulate`` on one mixed LLM workload: bf16, f16,
fp8 (f8 x f8 -> f16), mixed f8 x f16 (``c_f32_fast_f16_r``, the everyday MI300 inference GEMM) and
a batched bf16 GEMM, as a hipBLASLt profile log (mask 64) writes them.

Each run exits 0; the fp8 and the mixed GEMM are searched (a winner, never "no solutions" or a
type the profile cannot express); the configs GA and grid write are accepted by AMD's own reader
(``../shared/amd/check-configs``); and the merge finishes with exactly what AMD's hipBLASLt merge
tool (``Utilities/merge.py``, the policy tune uses: ``--force_merge True --no_eff``) writes for the
same original and incremental files. Issue 36 items 3 and 4 (fp8 GA aborted at the merge on a
``BiasDataTypeList`` written with ROCm/Tensile's type numbers).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from tensilekit.cli.main import cli

from .standin_support import assert_merged_as_amd_merges

# (M, N, K, batch, transA, transB, A, B, C/D, compute type, calls). The small bf16/f16 GEMMs hold
# under 1 % of the GEMM time, so --keep-thr 0.99 leaves the grid run (thousands of kernels per
# group) the fp8 and the mixed GEMM only.
GEMMS = (
    (64, 64, 512, 1, "T", "N", "bf16_r", "bf16_r", "bf16_r", "c_f32_r", 1),
    (64, 256, 256, 1, "N", "T", "f16_r", "f16_r", "f16_r", "c_f32_r", 1),
    (512, 256, 8192, 1, "T", "N", "f8_r", "f8_r", "f16_r", "c_f32_r", 100),
    (4096, 128, 4096, 1, "N", "N", "f8_r", "f16_r", "f16_r", "c_f32_fast_f16_r", 100),
    (128, 64, 512, 4, "T", "N", "bf16_r", "bf16_r", "bf16_r", "c_f32_r", 1),
)
FP8, MIXED = "g0003", "g0004"
MODES = {
    "search": [],
    "ga": ["--population", "6", "--generations", "2", "--seed", "5"],
    "grid": ["--keep-thr", "0.99", "--grid-limit", "2100"],
}
GRID_SAMPLE = 24
"""Kernels per grid config given to AMD's reader: its Solution() costs ~50 ms a kernel, a grid
config holds ~2000; every config's ProblemType and global sections are read whole."""


def log_line(m: int, n: int, k: int, batch: int, ta: str, tb: str, a: str, b: str, cd: str, compute: str,
             calls: int) -> str:  # fmt: skip
    lda, ldb = (k if ta == "T" else m), (n if tb == "T" else k)
    strides = (lda * (m if ta == "T" else k), ldb * (k if tb == "T" else n), m * n) if batch > 1 else (0, 0, 0)
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {lda}, ldb: {ldb}, ldc: {m}, ldd: {m}, "
        f"stride_a: {strides[0]}, stride_b: {strides[1]}, stride_c: {strides[2]}, stride_d: {strides[2]}, "
        f"alpha: 1.0, beta: 0.0, transA: {ta}, transB: {tb}, batch_count: {batch}, scaleA: 0, scaleB: 0, "
        "scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, "
        f"a_type: {a}, b_type: {b}, c_type: {cd}, d_type: {cd}, scale_type: f32_r, bias_type: f32_r, "
        f"compute_type: {compute}, activation_type: none, flush: false, rotating: 0, cold_iters: 0, iters: 0, "
        f"call_count: {calls} }}"
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    root = tmp_path_factory.mktemp("every_mode")
    log = root / "llm.log"
    log.write_text("".join(log_line(*gemm) + "\n" for gemm in GEMMS))
    found = {}
    for mode, options in MODES.items():
        workdir = root / mode
        args = ["tune", "--simulate", str(log), "--arch", "gfx942", "--workdir", str(workdir), "--mode", mode]
        found[mode] = (workdir, CliRunner().invoke(cli, [*args, *options], catch_exceptions=False))
    return found


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_tunes_the_fp8_and_the_mixed_gemm(runs: dict[str, tuple[Path, Any]], mode: str) -> None:
    workdir, result = runs[mode]
    assert result.exit_code == 0, result.output
    assert "no solutions" not in result.output and "no data type" not in result.output
    catalog = json.loads((workdir / "02_library" / "catalog.json").read_text())
    assert "N,N,f8_r,f16_r,f16_r,c_f32_fast_f16_r" in catalog["solutions"]
    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    assert search[FP8]["status"] == "winner" and search[MIXED]["status"] == "winner", search
    if mode != "grid":  # the grid run leaves the rest to --keep-thr
        assert {item["status"] for item in search.values()} == {"winner"}
    report = json.loads((workdir / "report.json").read_text())
    statuses = " ".join(gemm["status"] for gemm in report["gemms"])
    assert "not in --library-logic" not in statuses and "installed" not in statuses


@pytest.fixture(scope="module")
def amd_reader_answers(
    runs: dict[str, tuple[Path, Any]], amd: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[list[Path], list[dict[str, Any]]]]:
    """AMD's reader on the configs of the ga and the grid run, in one call (each call costs seconds
    of AMD imports): mode -> (the configs given, grid ones sampled, and AMD's answer to each)."""
    folder = tmp_path_factory.mktemp("grid-sample")
    given: dict[str, list[Path]] = {}
    for mode in ("ga", "grid"):
        configs = sorted((runs[mode][0] / "04_search" / "configs").glob("*.yaml"))
        given[mode] = [_sample(path, folder) for path in configs] if mode == "grid" else configs
    every = [path for configs in given.values() for path in configs]
    completed = subprocess.run(
        [str(amd / "check-configs"), "--amd", "tensilelite-7d9fb68", "--arch", "gfx942", *map(str, every)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    answers = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    assert len(answers) == len(every)
    return {"ga": (given["ga"], answers[: len(given["ga"])]), "grid": (given["grid"], answers[len(given["ga"]) :])}


@pytest.mark.parametrize("mode", ["ga", "grid"])
def test_the_configs_are_accepted_by_amds_reader(
    runs: dict[str, tuple[Path, Any]], mode: str, amd_reader_answers: dict[str, tuple[list[Path], list[dict[str, Any]]]]
) -> None:
    workdir, _ = runs[mode]
    configs = sorted((workdir / "04_search" / "configs").glob("*.yaml"))
    mixed = [path for path in configs if path.name.startswith("F8HHS_NN")]
    assert mixed and any(path.name.startswith("F8HS_TN") for path in configs)
    # tensilelite's own spelling of f8 x f16 (AMD's ..._F8H_HHS_BH_custom.yaml: DataType H, DataTypeA F8)
    problem_type = yaml.safe_load(mixed[0].read_text())["BenchmarkProblems"][0][0]
    assert (problem_type["DataType"], problem_type["DataTypeA"], problem_type["DataTypeB"]) == ("H", "F8", "H")
    assert problem_type["DestDataType"] == "H" and problem_type["ComputeDataType"] == "S"
    given, answers = amd_reader_answers[mode]
    assert [path.name for path in given] == [path.name for path in configs]
    assert [Path(answer["file"]).resolve() for answer in answers] == [path.resolve() for path in given]
    for answer in answers:
        assert answer["ok"], answer
        assert all(group["valid"] > 0 for group in answer["groups"]), answer


def _sample(config: Path, folder: Path) -> Path:
    """The config with the first kernels of each fork group only (see GRID_SAMPLE)."""
    data = yaml.safe_load(config.read_text())
    for problem in data["BenchmarkProblems"]:
        for section in problem[1:]:
            for fork in section.get("ForkParameters") or []:
                if "Groups" in fork:
                    fork["Groups"] = [group[:GRID_SAMPLE] for group in fork["Groups"]]
    sample = folder / config.name
    sample.write_text(yaml.safe_dump(data, sort_keys=False))
    return sample


@pytest.mark.parametrize("mode", list(MODES))
def test_the_merge_equals_amds_merge_tool(
    runs: dict[str, tuple[Path, Any]], mode: str, amd: Path, tmp_path: Path
) -> None:
    workdir, _ = runs[mode]
    final = sorted((workdir / "final_libs").glob("*.yaml"))
    # an fp8 GEMM's tuned kernel is merged (the mixed one's file is ..._F8H_HHS_BH.yaml)
    assert any("_F8H" in path.name for path in final), final
    assert_merged_as_amd_merges(amd, workdir, tmp_path)

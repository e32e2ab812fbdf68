"""Driving AMD's stand-ins (``shared/amd/standins``) from tests: build a library with the stand-in
TensileCreateLibrary (AMD's own function), ask the stand-in hipblaslt-bench (AMD's selection), run
``tensilekit tune`` with both first on PATH. Nothing here decides what a tool prints."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit.tools.hipblaslt_bench import BenchOutput, parse_bench_output

ROOT = Path(__file__).resolve().parents[2]

# Three gfx942 Equality logic files of hipBLASLt (issue 22's reproduction): HHS TN and NT, F8HS TN.
EQUALITY = "logic/hipblaslt/aquavanjaram/gfx942/Equality"
EQUALITY_FILES = (
    "aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
    "aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
    "aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml",
)
# (transA, transB, a/b type, c/d type) the three files serve
GEMM_TYPES = (("T", "N", "f16_r", "f16_r"), ("N", "T", "f16_r", "f16_r"), ("T", "N", "f8_r", "f16_r"))


def copy_logic(corpus: Path, folder: Path, names: Sequence[str] = EQUALITY_FILES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes((corpus / EQUALITY / name).read_bytes())
    return folder


def standin_env(standins: Path, **extra: str) -> dict[str, str]:
    """The environment of a run on a node whose tools are the stand-ins (no HIPBLASLT_* leaks in)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HIPBLASLT_", "TENSILE_", "ROCM_"))}
    env["PATH"] = f"{standins}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def create_library(standins: Path, logic: Path, output: Path, cwd: Path, *, jobs: int = 1) -> Path:
    """Build ``logic`` as a hipBLASLt 7d9fb683 install does (lazy, one architecture); returns the
    folder that holds ``TensileLibrary_lazy_gfx942.dat``."""
    cwd.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [str(standins / "TensileCreateLibrary"), str(logic), str(output), "HIP", "--architecture", "gfx942",
         "--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-enumerate",
         "--version", "4.33.0", "--jobs", str(jobs)],
        cwd=cwd, env=standin_env(standins), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    folder = output / "library"
    assert (folder / "TensileLibrary_lazy_gfx942.dat").is_file()
    return folder


def gemm_args(gemm: Mapping[str, Any]) -> list[str]:
    """hipblaslt-bench's options for ``gemm`` (``batch`` > 1: strided batched with the bench's own strides;
    ``bench_compute_type``: 7d9fb683's spelling, ``f32_r`` unless given)."""
    return [
        "-m", str(gemm["M"]), "-n", str(gemm["N"]), "-k", str(gemm["K"]),
        "--transA", gemm["transA"], "--transB", gemm["transB"],
        "--a_type", gemm["a_type"], "--b_type", gemm["b_type"], "--c_type", gemm["c_type"],
        "--d_type", gemm["d_type"], "--compute_type", gemm.get("bench_compute_type", "f32_r"),
        *(["--batch_count", str(gemm["batch"])] if gemm.get("batch", 1) > 1 else []),
    ]  # fmt: skip


def bench(standins: Path, library: Path, gemm: Mapping[str, Any], *extra: str) -> BenchOutput | None:
    """What the stand-in hipblaslt-bench prints for ``gemm`` on ``library`` (None: it refused)."""
    completed = subprocess.run(
        [str(standins / "hipblaslt-bench"), *gemm_args(gemm), *extra],
        env=standin_env(standins, HIPBLASLT_TENSILE_LIBPATH=str(library)), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    if completed.returncode != 0:
        return None
    return parse_bench_output(completed.stdout)


def mask64_line(gemm: Mapping[str, Any], calls: int) -> str:
    """One hipBLASLt profile-log record (``HIPBLASLT_LOG_MASK=64``) for ``gemm`` (``batch`` > 1: packed
    strided batches; ``compute_type``: the log's spelling, ``c_f32_r`` unless given)."""
    m, n, k, batch = gemm["M"], gemm["N"], gemm["K"], gemm.get("batch", 1)
    lda = k if gemm["transA"] == "T" else m
    ldb = n if gemm["transB"] == "T" else k
    stride_a, stride_b, stride_c = (m * k, k * n, m * n) if batch > 1 else (0, 0, 0)
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {lda}, ldb: {ldb}, ldc: {m}, ldd: {m}, "
        f"stride_a: {stride_a}, stride_b: {stride_b}, stride_c: {stride_c}, stride_d: {stride_c}, alpha: 1.0, "
        f"beta: 0.0, transA: {gemm['transA']}, transB: {gemm['transB']}, batch_count: {batch}, scaleA: 0, scaleB: 0, "
        "scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, "
        f"a_type: {gemm['a_type']}, b_type: {gemm['b_type']}, c_type: {gemm['c_type']}, d_type: {gemm['d_type']}, "
        f"scale_type: f32_r, bias_type: f32_r, compute_type: {gemm.get('compute_type', 'c_f32_r')}, "
        f"activation_type: none, flush: false, rotating: 0, cold_iters: 0, iters: 0, call_count: {calls} }}"
    )


UPLIFT = 1.03
"""The default keep threshold (3 %): a GEMM whose screen holds a kernel this much faster than the
heuristic's pick must get it."""
ERR_THR = "3"
"""``--err-thr`` of the acceptance runs. These tests are about identity and selection, so the error policy must
not decide them. The stand-in's norm_error is eps x a per-kernel factor in [0.75, 1.25) (README, timing model):
kernels that all pass --verify differ by up to 1.67x, under the default 2; an earlier model's spread reached 2.71x.
3 is above any ratio either model gives, so a kernel is never dropped for an error that passes verification."""


def served(standins: Path, library: Path, gemms: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The GEMMs ``library`` has a kernel for, each with its heuristic time and the best screened time."""
    found = []
    for gemm in gemms:
        heuristic = bench(standins, library, gemm)
        screen = bench(standins, library, gemm, "--algo_method", "all", "-i", "10", "-j", "2")
        if heuristic is None or screen is None or not heuristic.results:
            continue
        times = [result.us for result in screen.results if result.us is not None]
        found.append({**gemm, "heuristic_us": heuristic.results[0].us, "best_us": min(times)})
    return found


def assert_rebuilt_library_picks_the_best(
    standins: Path, workdir: Path, gemms: Sequence[Mapping[str, Any]], scratch: Path
) -> None:
    """Rebuild ``workdir/merged`` with the stand-in TensileCreateLibrary: every GEMM whose screen had a kernel
    :data:`UPLIFT` faster than the heuristic's pick (:func:`served`) gets one as fast from the heuristic, and no
    GEMM gets slower."""
    rebuilt = create_library(standins, workdir / "merged", scratch / "rebuilt", scratch / "tcl-cwd")
    for gemm in gemms:
        after = bench(standins, rebuilt, gemm)
        assert after is not None and after.results, ("the rebuilt library does not serve", gemm)
        assert after.results[0].us <= gemm["heuristic_us"] * 1.0001, ("slower after tuning", gemm)
        if gemm["heuristic_us"] / gemm["best_us"] >= UPLIFT:
            assert after.results[0].us <= gemm["best_us"] * 1.0001, ("tuned kernel not picked", gemm)


def run_tune(standins: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``tensilekit tune ARGS`` as a user on a stand-in node runs it."""
    return subprocess.run(
        [sys.executable, "-m", "tensilekit", "tune", *args],
        env={**standin_env(standins), **(env or {})}, capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip


def assert_merged_as_amd_merges(amd: Path, workdir: Path, scratch: Path) -> None:
    """``workdir/merged`` is what hipBLASLt's own merge tool (tensilelite 7d9fb683 ``Utilities/merge.py``,
    with the policy ``tune`` merges by: ``--force_merge True --no_eff``) writes for the run's original
    files and its ``final_libs``, byte for byte (a SIMULATED run's warning line aside)."""
    from tensilekit.pipeline.stages.merge import SIMULATED_MARK

    completed = subprocess.run(
        [str(amd / "run"), "tensilelite-7d9fb68", "Utilities/merge.py", str(workdir / "09_merge" / "original"),
         str(workdir / "final_libs"), str(scratch / "amd-merged"), "--force_merge", "True", "--no_eff"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    ours = sorted((workdir / "merged").glob("*.yaml"))
    theirs = scratch / "amd-merged"
    assert ours and [path.name for path in ours] == sorted(path.name for path in theirs.glob("*.yaml"))
    for path in ours:
        assert path.read_text().removeprefix(SIMULATED_MARK) == (theirs / path.name).read_text(), path.name

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
    """The bench's type options for ``gemm``; ``bench_compute_type`` is 7d9fb683's ``--compute_type``
    spelling (default ``f32_r``; ``f32_f16_r`` for a log's ``c_f32_fast_f16_r``)."""
    return [
        "-m", str(gemm["M"]), "-n", str(gemm["N"]), "-k", str(gemm["K"]),
        "--transA", gemm["transA"], "--transB", gemm["transB"],
        "--a_type", gemm["a_type"], "--b_type", gemm["b_type"], "--c_type", gemm["c_type"],
        "--d_type", gemm["d_type"], "--compute_type", gemm.get("bench_compute_type", "f32_r"),
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
    """One hipBLASLt profile-log record (``HIPBLASLT_LOG_MASK=64``) for ``gemm``."""
    m, n, k = gemm["M"], gemm["N"], gemm["K"]
    lda = k if gemm["transA"] == "T" else m
    ldb = n if gemm["transB"] == "T" else k
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {lda}, ldb: {ldb}, ldc: {m}, ldd: {m}, "
        "stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, "
        f"transA: {gemm['transA']}, transB: {gemm['transB']}, batch_count: 1, scaleA: 0, scaleB: 0, "
        "scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, "
        f"a_type: {gemm['a_type']}, b_type: {gemm['b_type']}, c_type: {gemm['c_type']}, d_type: {gemm['d_type']}, "
        f"scale_type: f32_r, bias_type: f32_r, compute_type: {gemm.get('compute_type', 'c_f32_r')}, "
        "activation_type: none, flush: false, "
        f"rotating: 0, cold_iters: 0, iters: 0, call_count: {calls} }}"
    )


def run_tune(standins: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``tensilekit tune ARGS`` as a user on a stand-in node runs it."""
    return subprocess.run(
        [sys.executable, "-m", "tensilekit", "tune", *args],
        env={**standin_env(standins), **(env or {})}, capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip


def assert_rebuilt_library_picks(
    standins: Path,
    workdir: Path,
    gemms: Sequence[Mapping[str, Any]],
    faster: Sequence[Mapping[str, Any]],
    scratch: Path,
) -> None:
    """Build ``workdir/merged`` with the stand-in TensileCreateLibrary: no GEMM (each with its
    ``heuristic_us`` before tuning) is slower under the rebuilt library's heuristic, and every GEMM of
    ``faster`` runs at its screen's ``best_us``."""
    rebuilt = create_library(standins, workdir / "merged", scratch / "rebuilt", scratch / "tcl-cwd")
    for gemm in gemms:
        after = bench(standins, rebuilt, gemm)
        assert after is not None and after.results
        assert after.results[0].us <= gemm["heuristic_us"] * 1.0001, ("slower after tuning", gemm)
        if gemm in faster:
            assert after.results[0].us <= gemm["best_us"] * 1.0001, ("tuned kernel not picked", gemm)


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

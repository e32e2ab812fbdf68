"""Helpers for the end-to-end tuning tests: fixtures paths, fake tools, output comparison."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tensilekit.io.logic_io import dump_logic
from tensilekit.tools.simulated.gpu import SimKernel
from tensilekit.tools.simulated.library import library_logic
from tensilekit.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
FAKE_BIN = ROOT / "tests" / "fakes" / "bin"
LLAMA_LOG = ROOT / "fixtures" / "logs" / "llama3_8b_bf16_mask64.log"
FINAL_OUTPUTS = (
    "gemms.csv", "summary.csv", "report.md", "report.csv", "report.json", "uplift.png", "results", "final_libs", "full_libs", "merged",
)  # fmt: skip


def final_files(workdir: Path) -> dict[str, bytes]:
    """Every final output file (relative path -> bytes), for identity checks between runs."""
    files: dict[str, bytes] = {}
    for name in FINAL_OUTPUTS:
        path = workdir / name
        if path.is_file():
            files[name] = path.read_bytes()
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and not child.name.startswith("."):
                    files[child.relative_to(workdir).as_posix()] = child.read_bytes()
    return files


def write_fake_library_logic(directory: Path, log: Path = LLAMA_LOG, arch: str = "gfx942") -> Path:
    """Logic files whose solutions carry the names the fake hipblaslt-bench prints (1000, 1001, 1002)."""
    directory.mkdir(parents=True, exist_ok=True)
    seen: set[tuple[str, ...]] = set()
    for problem in load_workload(log).problems:
        if problem.type_key in seen:
            continue
        seen.add(problem.type_key)
        kernels = [
            SimKernel(
                1000 + i,
                f"Cijk_Ailk_Bljk_{1000 + i}_MT128x128x64_MI16x16x1_SN_fake",
                128,
                128,
                64,
                1,
                (16, 16, 16, 1),
                (64, 4, 1),
            )
            for i in range(3)
        ]
        name, logic = library_logic(arch, problem, kernels, table=[], label="fake")
        dump_logic(logic, directory / name)
    return directory


@pytest.fixture
def fake_tools(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake hipblaslt-bench, Tensile and TensileCreateLibrary first on PATH."""
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    for name in list(os.environ):
        if name.startswith("TENSILEKIT_FAKE_"):
            monkeypatch.delenv(name)
    return FAKE_BIN

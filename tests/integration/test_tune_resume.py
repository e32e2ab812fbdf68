"""A simulated run SIGKILLed at several points resumes without redoing finished stages and ends
with byte-identical final files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tensilekit.pipeline import TuneConfig, run_tuning

from .conftest import LLAMA_LOG, final_files

ENTRY = "import sys; from tensilekit.cli.main import main; sys.exit(main())"


def command(workdir: Path) -> list[str]:
    return [sys.executable, "-c", ENTRY, "tune", "--simulate", str(LLAMA_LOG), "--arch", "gfx942",
            "--workdir", str(workdir), "--devices", "0,1,2,3", "--sim-time-scale", "0.5"]  # fmt: skip


def run_until(workdir: Path, condition: Callable[[], bool] | None, log: Path, timeout: float = 90.0) -> int:
    """Run the CLI; SIGKILL it as soon as ``condition`` holds. Returns the exit status."""
    with log.open("w") as stderr:
        process = subprocess.Popen(command(workdir), stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            if condition is not None and condition():
                os.kill(process.pid, signal.SIGKILL)
                return process.wait()
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"tune did not finish in {timeout} s")
            time.sleep(0.005)
    return process.returncode


def markers(workdir: Path) -> dict[str, str]:
    return {path.parent.name: path.read_text() for path in sorted(workdir.glob("*/.done.json"))}


def cached(workdir: Path, stage: str, prefix: str = "") -> int:
    return len(list((workdir / stage / "jobs").glob(f"{prefix}*.json")))


def accurate_groups(workdir: Path) -> dict[str, dict[str, int]]:
    """The search's cached accurate jobs per GEMM: job -> device."""
    groups: dict[str, dict[str, int]] = {}
    for path in (workdir / "04_search" / "jobs").glob("acc-*.json"):
        if not path.name.endswith(".failed.json"):
            groups.setdefault(path.stem.split("-")[1], {})[path.stem] = json.loads(path.read_text())["device"]
    return groups


def test_killed_runs_resume_to_identical_results(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    run_tuning(TuneConfig(logs=(LLAMA_LOG,), arch="gfx942", workdir=reference, simulate=True, devices=(0, 1, 2, 3)))
    workdir = tmp_path / "W"

    # 1. killed right after the baseline stage completed
    status = run_until(workdir, lambda: (workdir / "03_baseline" / ".done.json").exists(), tmp_path / "run1.log")
    assert status == -signal.SIGKILL
    first = markers(workdir)
    assert {"01_ingest", "02_library", "03_baseline"} <= set(first)
    assert "04_search" not in first

    # 2. killed in the middle of the search's accurate phase
    status = run_until(workdir, lambda: cached(workdir, "04_search", "acc-") >= 20, tmp_path / "run2.log")
    assert status == -signal.SIGKILL
    second = markers(workdir)
    for stage in ("01_ingest", "02_library", "03_baseline"):
        assert second[stage] == first[stage], f"{stage} was redone"
    assert "04_search" not in second
    log = (tmp_path / "run2.log").read_text()
    assert "03_baseline skipped (up to date)" in log and "04_search running (new" in log
    # a GEMM's reference and candidates are compared with each other: reused only all together
    complete = sum(1 for jobs in accurate_groups(workdir).values() if len(jobs) == 6)

    # 3. killed while benchmarking reference against tuned
    status = run_until(workdir, lambda: cached(workdir, "06_benchmark") >= 6, tmp_path / "run3.log")
    assert status == -signal.SIGKILL
    third = markers(workdir)
    for stage in ("01_ingest", "02_library", "03_baseline"):
        assert third[stage] == first[stage], f"{stage} was redone"
    search = json.loads(third["04_search"])
    # 14 screens, 14 references timed beside their candidates, 70 candidates (--top-k 5); of the
    # GEMMs cut off in their accurate phase every run was taken again, on one GPU
    assert search["jobs_cached"] == 14 + 6 * complete and search["jobs_total"] == 98
    assert all(len(set(devices.values())) == 1 for devices in accurate_groups(workdir).values())
    assert "06_benchmark" not in third and "report.md" not in os.listdir(workdir)

    # 4. runs to the end
    assert run_until(workdir, None, tmp_path / "run4.log") == 0
    last = markers(workdir)
    for stage, text in third.items():
        assert last[stage] == text, f"{stage} was redone"
    assert json.loads(last["06_benchmark"])["jobs_cached"] >= 6
    assert final_files(workdir) == final_files(reference)
    assert "10_report" in last and (workdir / "final_libs").is_dir()

"""The real pipeline (no --simulate) against the fake AMD executables: real subprocess wrappers,
device pinning, and failures (exit, hang, garbage) that fail only their job, are retried and reported."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli

from .conftest import FAKE_BIN, LLAMA_LOG, write_fake_library_logic

# A wrapper placed before the fakes on PATH: logs the pinning environment, then acts out the
# failure rules whose words all occur in the command line (for the first `times` matching calls,
# or always with -1) by setting the fakes' own switches, and finally runs the real fake.
WRAPPER = r"""#!{python} -S
import json, os, sys
tool = os.path.basename(sys.argv[0])
line = " ".join(sys.argv[1:])
env = dict(os.environ)
with open(env["WRAP_LOG"], "a") as stream:
    stream.write(json.dumps({"tool": tool, "argv": sys.argv[1:], "rocr": env.get("ROCR_VISIBLE_DEVICES"),
                             "hip": env.get("HIP_VISIBLE_DEVICES"), "libpath": env.get("HIPBLASLT_TENSILE_LIBPATH")}) + "\n")
for number, rule in enumerate(json.loads(env.get("WRAP_RULES", "[]"))):
    if rule["tool"] != tool or not all(word in line for word in rule["words"]):
        continue
    if rule.get("tuned") is not None and bool(env.get("HIPBLASLT_TENSILE_LIBPATH")) != rule["tuned"]:
        continue
    marker = os.path.join(env["WRAP_STATE"], f"rule{number}")
    count = len(os.listdir(env["WRAP_STATE"])) and sum(1 for name in os.listdir(env["WRAP_STATE"]) if name.startswith(f"rule{number}_"))
    open(f"{marker}_{count}", "w").close()
    if rule["times"] < 0 or count < rule["times"]:
        env.update(rule["env"])
fake = os.path.join(env["WRAP_FAKES"], tool)
os.execve(sys.executable, [sys.executable, "-S", fake, *sys.argv[1:]], env)
"""

RULES = [
    # every screening run of GEMM 4096x8x4096 exits with status 3
    {"tool": "hipblaslt-bench", "words": ["-m 4096 -n 8 -k 4096 ", "--algo_method all"], "times": -1,
     "env": {"TENSILEKIT_FAKE_EXIT": "3"}},
    # the accurate run of candidate 1002 for 6144x8x4096 always prints a broken row
    {"tool": "hipblaslt-bench", "words": ["-m 6144 -n 8 -k 4096 ", "--solution_index 1002"], "times": -1,
     "env": {"TENSILEKIT_FAKE_GARBAGE": "rows"}},
    # the first heuristic run of 128256x1x4096 (its baseline) hangs past the timeout
    {"tool": "hipblaslt-bench", "words": ["-m 128256 -n 1 -k 4096 ", "--algo_method heuristic"], "times": 1,
     "env": {"TENSILEKIT_FAKE_HANG": "30"}},
    # the tuned-library run of the batched 2048x2048x128 GEMM always prints no result
    {"tool": "hipblaslt-bench", "words": ["-m 2048 -n 2048 -k 128 ", "--algo_method heuristic"], "times": -1,
     "tuned": True, "env": {"TENSILEKIT_FAKE_GARBAGE": "junk"}},
    # candidate 1001 of 28672x2048x4096 fails --verify: `failed` in atol/rtol (a result, not an error)
    {"tool": "hipblaslt-bench", "words": ["-m 28672 -n 2048 -k 4096 ", "--solution_index 1001"], "times": -1,
     "env": {"TENSILEKIT_FAKE_VERIFY_FAIL": "1001"}},
    # the first heuristic run of 4096x2048x14336 (its baseline) reports a NaN time: a measurement error
    {"tool": "hipblaslt-bench", "words": ["-m 4096 -n 2048 -k 14336 ", "--algo_method heuristic"], "times": 1,
     "env": {"TENSILEKIT_FAKE_BAD_US": "nan"}},
    # TensileCreateLibrary's build (not preflight's --help) fails once, then works
    {"tool": "TensileCreateLibrary", "words": [" HIP "], "times": 1, "env": {"TENSILEKIT_FAKE_EXIT": "1"}},
]  # fmt: skip


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fakes")
    wrappers = root / "bin"
    wrappers.mkdir()
    for tool in ("hipblaslt-bench", "TensileCreateLibrary"):
        script = wrappers / tool
        # This interpreter, directly and without site-packages: a version-manager shim and
        # site imports would cost ~0.15 s per process start (the fakes need only the stdlib).
        script.write_text(WRAPPER.replace("{python}", sys.executable))
        script.chmod(0o755)
    (root / "state").mkdir()
    library = write_fake_library_logic(root / "library_logic")
    env = {
        "PATH": f"{wrappers}{os.pathsep}{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "WRAP_LOG": str(root / "wrap.jsonl"), "WRAP_STATE": str(root / "state"), "WRAP_FAKES": str(FAKE_BIN),
        "WRAP_RULES": json.dumps(RULES), "TENSILEKIT_FAKE_ARGV_LOG": str(root / "fake.jsonl"),
        "TENSILEKIT_FAKE_PROFILE": "hipblaslt-develop",  # every fake plays the same release
    }  # fmt: skip
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        workdir = root / "W"
        args = ["tune", "--mode", "search", str(LLAMA_LOG), "--arch", "gfx942", "--workdir", str(workdir),
                "--library-logic", str(library), "--devices", "0,1,2,3", "--retries", "1", "--timeout", "2",
                "--top-k", "2"]  # fmt: skip
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {
        "result": result, "workdir": workdir, "calls": read_lines(root / "wrap.jsonl"),
        "fake_calls": read_lines(root / "fake.jsonl"), "library": library, "python": sys.executable,
    }  # fmt: skip


def test_the_run_completes_despite_failing_jobs(real_run: dict[str, Any]) -> None:
    result = real_run["result"]
    assert result.exit_code == 0, result.output
    workdir = real_run["workdir"]
    report = json.loads((workdir / "report.json").read_text())
    assert report["data"] == "measured"
    statuses = {gemm["id"]: gemm["status"] for gemm in report["gemms"]}
    assert statuses["g0003"] == "no winner: screen failed"
    assert statuses["g0011"] == "dropped: benchmark failed"
    assert statuses["g0010"] == "tuned" and statuses["g0001"] == "tuned"
    assert sum(status == "tuned" for status in statuses.values()) == 12
    assert CliRunner().invoke(cli, ["validate", str(workdir / "final_libs"), str(workdir / "merged")]).exit_code == 0


def test_failures_are_listed_with_their_attempts(real_run: dict[str, Any]) -> None:
    report = json.loads((real_run["workdir"] / "report.json").read_text())
    failures = {failure["job_id"]: failure for failure in report["failures"]}
    assert set(failures) == {"screen-g0003", "acc-g0001-1002", "tuned-g0011"}
    assert all(failure["attempts"] == 2 for failure in failures.values())
    assert failures["screen-g0003"]["error_type"] == "ToolFailed" and "status 3" in failures["screen-g0003"]["error"]
    assert failures["acc-g0001-1002"]["error_type"] == "ToolOutputError"
    assert failures["tuned-g0011"]["error_type"] == "ToolOutputError"
    markdown = (real_run["workdir"] / "report.md").read_text()
    assert "| search | screen | screen-g0003 | BBS_TN 4096x8x1x4096 | 2 | ToolFailed:" in markdown
    search = json.loads((real_run["workdir"] / "04_search" / "search.json").read_text())["gemms"]
    statuses = {entry["solution_index"]: entry["status"] for entry in search["g0001"]["candidates"]}
    assert statuses[1002] == "job failed" and search["g0001"]["winner"]["solution_index"] != 1002


def test_hangs_and_tool_failures_are_retried(real_run: dict[str, Any]) -> None:
    stderr = real_run["result"].stderr
    assert "retrying base-g0010 (attempt 1 failed: hipblaslt-bench timed out after 2 s" in stderr
    assert "retrying create-library (attempt 1 failed: TensileCreateLibrary exited with status 1" in stderr
    baseline = json.loads((real_run["workdir"] / "03_baseline" / "baseline.json").read_text())
    assert baseline["gemms"]["g0010"]["measured"]["us"] > 0


def test_measurement_errors_are_retried_and_failed_verification_is_a_result(real_run: dict[str, Any]) -> None:
    stderr = real_run["result"].stderr
    assert "retrying base-g0006 (attempt 1 failed: hipblaslt-bench reported time 'nan' us" in stderr
    baseline = json.loads((real_run["workdir"] / "03_baseline" / "baseline.json").read_text())
    assert baseline["gemms"]["g0006"]["measured"]["us"] > 0  # the retry measured it
    search = json.loads((real_run["workdir"] / "04_search" / "search.json").read_text())["gemms"]
    statuses = {entry["solution_index"]: entry["status"] for entry in search["g0002"]["candidates"]}
    assert statuses[1001] == "failed verification"
    assert search["g0002"]["winner"] is None or search["g0002"]["winner"]["solution_index"] != 1001


def test_real_command_lines_reach_the_tools(real_run: dict[str, Any]) -> None:
    calls = real_run["fake_calls"]
    bench = [call for call in calls if call["tool"] == "hipblaslt-bench" and call["argv"] != ["--version"]]
    screens = [call for call in bench if "all" in call["argv"]]  # 14 GEMMs, g0003 twice
    accurate = [call for call in bench if "index" in call["argv"]]
    assert len(screens) == 15 and all("--print_kernel_info" in call["argv"] for call in screens)
    assert accurate and all("--verify" in call["argv"] and "--solution_index" in call["argv"] for call in accurate)
    tuned = [call for call in bench if call["libpath"]]
    # the fakes play hipblaslt-develop, whose TensileCreateLibrary writes library/<arch>/ (Run.py @00ee1f9d)
    library = real_run["workdir"] / "05_build" / "tcl" / "library" / "gfx942"
    assert tuned and {call["libpath"] for call in tuned} == {str(library.resolve())}
    builds = [call for call in calls if call["tool"] == "TensileCreateLibrary" and call["argv"] != ["--help"]]
    assert len(builds) == 2 and builds[0]["argv"] == builds[1]["argv"]  # failed once, retried
    build = builds[-1]
    assert build["argv"][:3] == [
        str(real_run["workdir"] / "05_build" / "logic"),
        str(real_run["workdir"] / "05_build" / "tcl"),
        "HIP",
    ]
    # rocm-libraries' TensileCreateLibrary loads lazily by default and has no merge/separate flags
    assert "--architecture" in build["argv"] and "--merge-files" not in build["argv"]
    assert (library / "TensileLibrary_lazy_gfx942.dat").is_file()


def test_jobs_are_pinned_to_their_device(real_run: dict[str, Any]) -> None:
    calls = [call for call in real_run["calls"] if call["tool"] == "hipblaslt-bench"]
    # preflight asks the bench its version once, before any job and on no device
    assert calls[0]["argv"] == ["--version"] and calls[0]["rocr"] is None
    bench = calls[1:]
    assert all("--version" not in call["argv"] for call in bench)
    assert {call["rocr"] for call in bench} == {"0", "1", "2", "3"}
    assert {call["hip"] for call in bench} == {"0"}
    builds = [call for call in real_run["calls"] if call["tool"] == "TensileCreateLibrary"]
    assert builds and all(call["rocr"] is None and call["hip"] is None for call in builds)  # CPU jobs are not pinned


def test_preflight_says_which_tool_profile(real_run: dict[str, Any]) -> None:
    # decided by TensileCreateLibrary's options (rocm-libraries: --no-lazy-library-loading); the
    # bench's hipBLASLt version (100200 = 1.2.0) is only reported
    log = (real_run["workdir"] / "tune.log").read_text()
    assert (
        "tool profile hipblaslt-develop" in log
        and "detected: TensileCreateLibrary has --no-lazy-library-loading" in log
    )
    assert "hipBLASLt 1.2.0" in log
    run = json.loads((real_run["workdir"] / "run.json").read_text())
    assert run["config"]["tool_profile"] == "hipblaslt-develop"

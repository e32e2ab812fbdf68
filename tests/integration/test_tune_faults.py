"""The real pipeline (no --simulate) on AMD's stand-ins (``shared/amd/standins``): real subprocess
wrappers, device pinning, and the stand-ins' own faults (crash, hang, NaN, truncated row, wrong
answer) that fail only their own job and GEMM, are retried and reported.

A wrapper placed before the stand-ins on PATH logs how each tool was called (pinning
environment, argv) and, for the calls a rule matches, sets the stand-in's
``HIPBLASLT_STANDIN_FAULTS`` (or, for TensileCreateLibrary, which has no fault switch, exits 1
before running it); then it runs the stand-in itself."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli

from .conftest import LLAMA_LOG
from .standin_support import bench, copy_logic, create_library

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
    if rule.get("tuned") is not None and ("05_build" in env.get("HIPBLASLT_TENSILE_LIBPATH", "")) != rule["tuned"]:
        continue
    state = env["WRAP_STATE"]
    count = sum(1 for name in os.listdir(state) if name.startswith(f"rule{number}_"))
    open(os.path.join(state, f"rule{number}_{count}"), "w").close()
    if rule["times"] < 0 or count < rule["times"]:
        if "exit" in rule:
            sys.stderr.write("wrapper: failing this call as the test asks\n")
            sys.exit(rule["exit"])
        env["HIPBLASLT_STANDIN_FAULTS"] = rule["faults"]
target = os.path.join(env["WRAP_STANDINS"], tool)
os.execve(target, [target, *sys.argv[1:]], env)
"""

BBS_TN = "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs.yaml"
G0001 = {"M": 6144, "N": 8, "K": 4096, "transA": "T", "transB": "N", "a_type": "bf16_r", "b_type": "bf16_r",
         "c_type": "bf16_r", "d_type": "bf16_r"}  # fmt: skip
G0002 = {**G0001, "M": 28672, "N": 2048}


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _fastest(screen: Any) -> int:
    return int(
        min((result for result in screen.results if result.us and not result.winner), key=lambda r: r.us).solution_index
    )


@pytest.fixture(scope="module")
def real_run(standins: Path, amd: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("standin-faults")
    logic = copy_logic(corpus, root / "logic", names=[BBS_TN])
    installed = create_library(standins, logic, root / "lib" / "hipblaslt", root / "tcl-cwd")
    # the candidates the faults hit: the fastest screened solution of g0001 and of g0002
    screens = [
        bench(standins, installed, gemm, "--algo_method", "all", "--print_kernel_info") for gemm in (G0001, G0002)
    ]
    broken, wrong = (_fastest(screen) for screen in screens)
    rules = [
        # every screening run of GEMM 4096x8x4096 (g0003) crashes (SIGSEGV, AMD's memory-fault message)
        {"tool": "hipblaslt-bench", "words": ["-m 4096 -n 8 -k 4096 ", "--algo_method all"], "times": -1,
         "faults": "crash,sig=SEGV"},
        # the accurate run of g0001's fastest candidate always prints a truncated row
        {"tool": "hipblaslt-bench", "words": ["-m 6144 -n 8 -k 4096 ", f"--solution_index {broken} "], "times": -1,
         "faults": "trunc"},
        # the first heuristic run of 128256x1x4096 (g0010's baseline) hangs past the timeout
        {"tool": "hipblaslt-bench", "words": ["-m 128256 -n 1 -k 4096 ", "--algo_method heuristic"], "times": 1,
         "faults": "hang"},
        # the tuned-library run of the batched 2048x2048x128 GEMM (g0011) always prints a truncated row
        {"tool": "hipblaslt-bench", "words": ["-m 2048 -n 2048 -k 128 ", "--algo_method heuristic"], "times": -1,
         "tuned": True, "faults": "trunc"},
        # g0002's fastest candidate computes a wrong answer: --verify prints `failed` (a result, not an error)
        {"tool": "hipblaslt-bench", "words": ["-m 28672 -n 2048 -k 4096 ", f"--solution_index {wrong} "],
         "times": -1, "faults": "wrong"},
        # the first heuristic run of 4096x2048x14336 (g0006's baseline) reports a NaN time
        {"tool": "hipblaslt-bench", "words": ["-m 4096 -n 2048 -k 14336 ", "--algo_method heuristic"], "times": 1,
         "faults": "nan"},
        # TensileCreateLibrary's build (not preflight's --help) fails once, then works
        {"tool": "TensileCreateLibrary", "words": [" HIP "], "times": 1, "exit": 1},
    ]  # fmt: skip
    wrappers = root / "bin"
    wrappers.mkdir()
    for tool in ("hipblaslt-bench", "TensileCreateLibrary"):
        script = wrappers / tool
        script.write_text(WRAPPER.replace("{python}", sys.executable))
        script.chmod(0o755)
    (root / "state").mkdir()
    env = {
        "PATH": f"{wrappers}{os.pathsep}{standins}{os.pathsep}{os.environ.get('PATH', '')}",
        "WRAP_LOG": str(root / "wrap.jsonl"), "WRAP_STATE": str(root / "state"), "WRAP_STANDINS": str(standins),
        "WRAP_RULES": json.dumps(rules), "HIPBLASLT_STANDIN_NUM_GPUS": "4",
        "HIPBLASLT_STANDIN_LIB_DIR": str(root / "lib"),
    }  # fmt: skip
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        workdir = root / "W"
        args = ["tune", "--mode", "search", str(LLAMA_LOG), "--arch", "gfx942", "--workdir", str(workdir),
                "--library-logic", str(logic), "--reference-library", str(installed), "--devices", "0,1,2,3",
                "--retries", "1", "--timeout", "15", "--top-k", "2",
                # the file names a custom kernel: its config is in hipBLASLt's CustomKernels folder
                "--custom-kernels", str(amd / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels")]  # fmt: skip
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {
        "result": result, "workdir": workdir, "calls": read_lines(root / "wrap.jsonl"), "installed": installed,
        "broken": broken, "wrong": wrong,
    }  # fmt: skip


def _report(real_run: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads((real_run["workdir"] / "report.json").read_text()))


def test_the_run_completes_and_each_fault_hits_only_its_gemm(real_run: dict[str, Any]) -> None:
    result = real_run["result"]
    assert result.exit_code == 0, result.output
    workdir = real_run["workdir"]
    report = _report(real_run)
    assert report["data"] == "measured"
    statuses = {gemm["id"]: gemm["status"] for gemm in report["gemms"]}
    assert statuses["g0003"] == "no winner: screen failed"
    assert statuses["g0011"] == "dropped: benchmark failed"
    baseline = json.loads((workdir / "03_baseline" / "baseline.json").read_text())["gemms"]
    search = json.loads((workdir / "04_search" / "search.json").read_text())["gemms"]
    # every GEMM the library serves and no fault hit was screened and judged on its own merits
    for gemm_id, record in baseline.items():
        if record["measured"] is None or gemm_id in ("g0003", "g0011"):
            continue
        assert search[gemm_id]["status"] in ("winner", "no verified candidate"), (gemm_id, search[gemm_id])
    assert CliRunner().invoke(cli, ["validate", str(workdir / "final_libs"), str(workdir / "merged")]).exit_code == 0


def test_failures_are_listed_with_their_attempts(real_run: dict[str, Any]) -> None:
    report = _report(real_run)
    failures = {failure["job_id"]: failure for failure in report["failures"]}
    broken = f"acc-g0001-{real_run['broken']}"
    assert {"screen-g0003", broken, "compare-g0011"} <= set(failures)
    # the only other failures: GEMMs of a type the one-file library has no kernel for (NN batched)
    baseline = json.loads((real_run["workdir"] / "03_baseline" / "baseline.json").read_text())["gemms"]
    unserved = {f"base-{gemm_id}" for gemm_id, record in baseline.items() if record["measured"] is None}
    assert set(failures) == {"screen-g0003", broken, "compare-g0011"} | unserved
    assert all(failure["attempts"] == 2 for failure in failures.values())
    assert failures["screen-g0003"]["error_type"] == "ToolFailed" and "signal" in failures["screen-g0003"]["error"]
    # the tool's own last words are kept (issue 36 item 6): AMD's GPU fault text, in failures.json and the report
    assert "Memory access fault by GPU node-2" in failures["screen-g0003"]["error"]
    assert failures[broken]["error_type"] == "ToolOutputError"
    assert failures["compare-g0011"]["error_type"] == "ToolOutputError"
    assert "tuned library run: values row has 12 fields" in failures["compare-g0011"]["error"]
    markdown = (real_run["workdir"] / "report.md").read_text()
    assert "| search | screen | screen-g0003 | BBS_TN 4096x8x1x4096 | 2 | ToolFailed:" in markdown
    assert "Memory access fault by GPU node-2" in markdown
    # the report names the failures.json files its Failures table comes from, and they exist
    named = report["outputs"]["failed jobs"].split(", ")
    assert {"04_search/failures.json", "06_benchmark/failures.json"} <= set(named)
    listed = [item["job_id"] for path in named for item in json.loads((real_run["workdir"] / path).read_text())]
    assert sorted(listed) == sorted(failures)
    search = json.loads((real_run["workdir"] / "04_search" / "search.json").read_text())["gemms"]
    statuses = {entry["solution_index"]: entry["status"] for entry in search["g0001"]["candidates"]}
    assert statuses[real_run["broken"]] == "job failed"
    assert search["g0001"]["winner"]["solution_index"] != real_run["broken"]


def test_hangs_and_tool_failures_are_retried(real_run: dict[str, Any]) -> None:
    stderr = real_run["result"].stderr
    assert "retrying base-g0010 (attempt 1 failed: hipblaslt-bench timed out after 15 s" in stderr
    assert (
        "retrying create-library (attempt 1 failed: TensileCreateLibrary exited with status 1; its last output: "
        "wrapper: failing this call as the test asks" in stderr
    )
    baseline = json.loads((real_run["workdir"] / "03_baseline" / "baseline.json").read_text())
    assert baseline["gemms"]["g0010"]["measured"]["us"] > 0


def test_measurement_errors_are_retried_and_failed_verification_is_a_result(real_run: dict[str, Any]) -> None:
    stderr = real_run["result"].stderr
    assert "retrying base-g0006 (attempt 1 failed: hipblaslt-bench reported time 'nan' us" in stderr
    baseline = json.loads((real_run["workdir"] / "03_baseline" / "baseline.json").read_text())
    assert baseline["gemms"]["g0006"]["measured"]["us"] > 0  # the retry measured it
    search = json.loads((real_run["workdir"] / "04_search" / "search.json").read_text())["gemms"]
    statuses = {entry["solution_index"]: entry["status"] for entry in search["g0002"]["candidates"]}
    assert statuses[real_run["wrong"]] == "failed verification"
    assert search["g0002"]["winner"] is None or search["g0002"]["winner"]["solution_index"] != real_run["wrong"]


def test_real_command_lines_reach_the_tools(real_run: dict[str, Any]) -> None:
    calls = real_run["calls"]
    bench_calls = [call for call in calls if call["tool"] == "hipblaslt-bench" and call["argv"] != ["--version"]]
    screens = [call for call in bench_calls if "all" in call["argv"]]
    accurate = [call for call in bench_calls if "index" in call["argv"]]
    assert screens and all("--print_kernel_info" in call["argv"] for call in screens)
    # the screen is cache-cold like the accurate runs (issue 36 item 8): their rotating buffer and --flush
    assert all(
        call["argv"][call["argv"].index("--rotating") + 1] == "512" and "--flush" in call["argv"] for call in screens
    )
    assert accurate and all("--verify" in call["argv"] and "--solution_index" in call["argv"] for call in accurate)
    # reference runs use --reference-library, tuned runs the library the build stage made
    library = real_run["workdir"] / "05_build" / "tcl" / "library"
    assert {call["libpath"] for call in bench_calls} == {str(real_run["installed"]), str(library.resolve())}
    builds = [call for call in calls if call["tool"] == "TensileCreateLibrary" and call["argv"] != ["--help"]]
    assert len(builds) == 2 and builds[0]["argv"] == builds[1]["argv"]  # failed once, retried
    assert builds[-1]["argv"][:3] == [
        str(real_run["workdir"] / "05_build" / "logic"),
        str(real_run["workdir"] / "05_build" / "tcl"),
        "HIP",
    ]
    # hipBLASLt 7d9fb683's TensileCreateLibrary builds lazily only with --lazy-library-loading (and its two companions)
    assert {"--merge-files", "--separate-architectures", "--lazy-library-loading"} <= set(builds[-1]["argv"])
    assert (library / "TensileLibrary_lazy_gfx942.dat").is_file()


def test_preflight_detects_the_7d9fb683_profile(real_run: dict[str, Any]) -> None:
    # hipBLASLt 7d9fb683 prints version 1100 (0.11.0) and ships tensilelite 4.33.0: its
    # TensileCreateLibrary's --lazy-library-loading option decides, not a version threshold
    log = (real_run["workdir"] / "tune.log").read_text()
    assert "tool profile hipblaslt-7d9fb68" in log and "hipBLASLt 0.11.0" in log
    run = json.loads((real_run["workdir"] / "run.json").read_text())
    assert run["config"]["tool_profile"] == "hipblaslt-7d9fb68"


def test_jobs_are_pinned_to_their_device(real_run: dict[str, Any]) -> None:
    calls = [call for call in real_run["calls"] if call["tool"] == "hipblaslt-bench"]
    # preflight asks the bench its version once, before any job and on no device
    assert calls[0]["argv"] == ["--version"] and calls[0]["rocr"] is None
    jobs = calls[1:]
    assert all("--version" not in call["argv"] for call in jobs)
    assert {call["rocr"] for call in jobs} == {"0", "1", "2", "3"}
    assert {call["hip"] for call in jobs} == {"0"}
    builds = [call for call in real_run["calls"] if call["tool"] == "TensileCreateLibrary"]
    assert builds and all(call["rocr"] is None and call["hip"] is None for call in builds)  # CPU jobs are not pinned


def _devices(stage_dir: Path) -> dict[str, int]:
    return {
        path.stem: json.loads(path.read_text())["device"]
        for path in (stage_dir / "jobs").glob("*.json")
        if not path.name.endswith(".failed.json")  # a failure count, not a result
    }


def test_a_gemm_is_compared_on_one_gpu_with_geko_settings(real_run: dict[str, Any]) -> None:
    """Issue 22 item 7: the reference and the candidates of one GEMM, and its reference and tuned
    library runs, are timed on one device (4 here), with a rotating buffer, --flush and iterations
    sized from the baseline time; the report records the settings."""
    workdir = real_run["workdir"]
    accurate = _devices(workdir / "04_search")
    for gemm_id in {job.split("-")[1] for job in accurate if job.startswith("acc-")}:
        devices = {device for job, device in accurate.items() if job.startswith(f"acc-{gemm_id}-")}
        assert len(devices) == 1 and f"acc-{gemm_id}-reference" in accurate, (gemm_id, devices)
    compared = _devices(workdir / "06_benchmark")  # one job per GEMM runs its reference and tuned library
    assert compared and all(job.startswith("compare-") for job in compared)
    assert len(set(compared.values())) > 1  # GEMMs still spread over the GPUs
    baseline = json.loads((workdir / "03_baseline" / "baseline.json").read_text())["gemms"]
    argv = next(call["argv"] for call in real_run["calls"]
                if call["tool"] == "hipblaslt-bench" and "index" in call["argv"]
                and " ".join(call["argv"]).startswith("-m 6144 -n 8 -k 4096 "))  # fmt: skip
    assert argv[argv.index("--rotating") + 1] == "512" and "--flush" in argv
    expected = -(-500000 // baseline["g0001"]["measured"]["us"])  # ceil(0.5 s / baseline time)
    assert int(argv[argv.index("--iters") + 1]) == int(expected) == int(argv[argv.index("--cold_iters") + 1])
    measurement = _report(real_run)["measurement"]
    assert measurement["rotating_mb"] == 512 and measurement["flush"] is True
    assert measurement["keep_threshold"] == 0.03
    assert "## Measurement" in (workdir / "report.md").read_text()

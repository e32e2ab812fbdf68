"""Faults injected into AMD's own code (the stand-ins' ``HIPBLASLT_STANDIN_FAULTS``) during real
(not simulated) tuning runs: each crash, hang, NaN, truncated row or wrong answer costs only its
own GEMM or candidate, a rerun retries what failed, jobs that keep failing are retired, a run
whose jobs all fail stops (exit 4), and ``kill -9`` of the run leaves no benchmark behind.

The stand-ins (``$TENSILEKIT_AMD/standins``, ``../shared/amd/standins``) play hipblaslt-bench and
TensileCreateLibrary with hipBLASLt 7d9fb683's code; see their README. Skipped politely without
them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import PipelineAborted
from tensilekit.pipeline import TuneConfig, run_tuning
from tensilekit.pipeline.executors.local import LocalExecutor
from tensilekit.pipeline.jobs import JobOutcome
from tensilekit.pipeline.progress import NullReporter
from tensilekit.pipeline.stage import StageContext
from tensilekit.pipeline.stages.common import accurate_options, bench_job_for, bench_spec
from tensilekit.tools.hipblaslt_bench import AlgoMethod
from tensilekit.workload.problem import GemmProblem

LOGIC = "logic/hipblaslt/aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml"
GEMMS = ((4096, 64, 4096, 100), (1024, 128, 2048, 50), (2048, 16, 1024, 10))
"""g0001, g0002, g0003 of the workload: M, N, K, calls (HHS, TN: the logic file's type)."""


def _workload_line(m: int, n: int, k: int, calls: int) -> str:
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {k}, ldb: {k}, ldc: {m}, ldd: {m}, stride_a: 0, "
        "stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, "
        "a_type: f16_r, b_type: f16_r, c_type: f16_r, d_type: f16_r, scale_type: f32_r, compute_type: c_f32_r, "
        f"activation_type: none, call_count: {calls} }}"
    )


@pytest.fixture(scope="module")
def standin_node(amd: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A node with hipBLASLt "installed": the stand-ins' library built by their TensileCreateLibrary
    from one corpus logic file (``rocm/Tensile/library``), the logic folder and a workload log."""
    standins = amd / "standins"
    if not (standins / "hipblaslt-bench").is_file():
        pytest.skip(f"the hipBLASLt stand-ins are not in {standins}")
    root = tmp_path_factory.mktemp("node")
    logic = root / "logic"
    logic.mkdir()
    (logic / Path(LOGIC).name).symlink_to(corpus / LOGIC)
    (root / "cwd").mkdir()
    subprocess.run(
        [str(standins / "TensileCreateLibrary"), str(logic), str(root / "out"), "HIP", "--architecture", "gfx942",
         "--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-enumerate", "--jobs", "1",
         "--version", "4.33.0"],
        cwd=root / "cwd", check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (root / "rocm" / "lib").mkdir(parents=True)
    (root / "rocm" / "Tensile").mkdir()
    (root / "rocm" / "Tensile" / "library").symlink_to(root / "out" / "library")
    (root / "w.log").write_text("\n".join(_workload_line(*gemm) for gemm in GEMMS) + "\n")
    return root


@pytest.fixture
def node(standin_node: Path, amd: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The stand-ins first on PATH, finding the node's library; every bench call logged.

    ``ROCM_PATH`` names the node's ROCm, so tensilekit reads the library the bench loads, as on a
    node with hipBLASLt installed (test_tune_library_paths.py's "default-place"), instead of
    building its own reference from ``--library-logic`` in every run: that TensileCreateLibrary
    run (~5 s each, a dozen runs here) is test_tune_library_paths.py's "logic-only" case and
    none of these faults' business."""
    monkeypatch.setenv("PATH", f"{amd / 'standins'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HIPBLASLT_STANDIN_LIB_DIR", str(standin_node / "rocm" / "lib"))
    monkeypatch.setenv("ROCM_PATH", str(standin_node / "rocm"))
    monkeypatch.setenv("HIPBLASLT_STANDIN_LOG", str(tmp_path / "bench-calls.jsonl"))
    monkeypatch.delenv("HIPBLASLT_STANDIN_FAULTS", raising=False)
    yield standin_node


def faults(monkeypatch: pytest.MonkeyPatch, spec: str | None) -> None:
    if spec is None:
        monkeypatch.delenv("HIPBLASLT_STANDIN_FAULTS", raising=False)
    else:
        monkeypatch.setenv("HIPBLASLT_STANDIN_FAULTS", spec)


def bench_calls(log: Path, *, m: int | None = None, algo: str | None = None) -> list[dict[str, Any]]:
    """The stand-in's log lines of calls (not the exit lines) matching ``m`` and ``--algo_method``."""
    if not log.exists():
        return []
    calls = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        argv = record.get("argv")
        if not argv or "end" in record:
            continue
        options = dict(zip(argv, argv[1:], strict=False))
        if m is not None and options.get("-m") != str(m):
            continue
        if algo is not None and options.get("--algo_method") != algo:
            continue
        calls.append(record)
    return calls


def config(node: Path, workdir: Path, **changes: Any) -> TuneConfig:
    """The in-process runs name the stand-ins' release (``--tool-profile``): detecting it starts
    TensileCreateLibrary once per run (~1.5 s of AMD imports); the command-line runs below
    (kill -9, resume) still detect it."""
    values: dict[str, Any] = {
        "logs": (node / "w.log",), "arch": "gfx942", "workdir": workdir, "library_logic": node / "logic",
        "top_k": 2, "retries": 0, "accurate_iters": 10, "accurate_cold_iters": 1, "screen_iters": 2,
        "tool_profile": "hipblaslt-7d9fb68",
    }  # fmt: skip
    values.update(changes)
    return TuneConfig(**values)


def read(workdir: Path, relative: str) -> Any:
    return json.loads((workdir / relative).read_text())


def screen_rows(workdir: Path, gemm: str) -> list[dict[str, str]]:
    import csv

    with (workdir / "04_search" / "screen.csv").open() as stream:
        return [row for row in csv.DictReader(stream) if row["id"] == gemm]


# ------------------------------------------------------------------------------------------
# Item 6: screens keep their valid rows


def test_one_nan_or_cut_row_in_a_screen_costs_only_that_solution(
    node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    faults(monkeypatch, "nan,m=4096,sol=3,algo=all;trunc,m=4096,sol=5,algo=all")
    workdir = tmp_path / "W"
    report = run_tuning(config(node, workdir))

    assert not [failure for failure in report.failures if failure.stage == "search"]
    rows = screen_rows(workdir, "g0001")
    invalid = {row["solution_index"]: row["status"] for row in rows if row["status"] != "ok"}
    assert invalid == {
        "3": "invalid: time 'nan' us",
        "5": "invalid: values row has 12 fields but the header has 34",  # the cache-cold screen prints rotating_buffer
    }
    timed = [row for row in rows if row["status"] == "ok"]
    assert len(timed) > 200 and all(float(row["us"]) > 0 for row in timed)
    assert {"3", "5"}.isdisjoint(row["solution_index"] for row in timed)
    search = read(workdir, "04_search/search.json")["gemms"]
    assert [(item["solution_index"], item["reason"]) for item in search["g0001"]["invalid"]] == [
        (3, "time 'nan' us"),
        (5, "values row has 12 fields but the header has 34"),
    ]
    assert search["g0001"]["status"] != "screen failed"
    # the other GEMMs' screens were untouched by the faults
    assert search["g0002"]["invalid"] == [] and search["g0003"]["invalid"] == []
    assert len(screen_rows(workdir, "g0002")) == len([row for row in screen_rows(workdir, "g0002") if row["rank"]])


# ------------------------------------------------------------------------------------------
# Acceptance: every fault stays with its own GEMM or candidate


def test_each_fault_affects_only_its_own_gemm(node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """crash (g0002's screen), hang (g0003's screen, stopped as stalled), NaN and a cut row (two
    solutions in g0001's screen), a wrong answer (g0002's baseline), a crash of one of g0001's
    candidates (its accurate run): the run completes and every other GEMM's and candidate's results
    are those of a run without faults."""
    workdir, clean = tmp_path / "W", tmp_path / "clean"
    run_tuning(config(node, clean))
    clean_g0001 = read(clean, "04_search/search.json")["gemms"]["g0001"]
    crashing, other = (entry["solution_index"] for entry in clean_g0001["candidates"])
    assert {crashing, other}.isdisjoint({3, 5}) and clean_g0001["winner"] is not None
    faults(
        monkeypatch,
        "crash,m=1024,algo=all;hang,m=2048,algo=all;nan,m=4096,sol=3,algo=all;trunc,m=4096,sol=5,algo=all;"
        f"wrong,m=1024,algo=heuristic;crash,m=4096,sol={crashing},algo=index",
    )
    # the hung screen must be stopped by the stall limit, not by the job timeout: its failure says
    # "stalled" (asserted below); a wall-clock bound here failed on a loaded machine
    report = run_tuning(config(node, workdir, stall_timeout=2.0, timeout=120.0))

    failed = {(failure.stage, failure.job_id): failure for failure in report.failures}
    assert set(failed) == {("search", "screen-g0002"), ("search", "screen-g0003"), ("search", f"acc-g0001-{crashing}")}
    assert "killed by signal 6" in (failed["search", "screen-g0002"].error or "")
    assert "stalled (no output for 2 s)" in (failed["search", "screen-g0003"].error or "")
    assert failed["search", "screen-g0003"].timed_out

    baseline, reference = read(workdir, "03_baseline/baseline.json"), read(clean, "03_baseline/baseline.json")
    assert baseline["gemms"]["g0002"]["measured"]["verify_failed"] is True
    for gemm in ("g0001", "g0003"):
        assert baseline["gemms"][gemm] == reference["gemms"][gemm]
    search = read(workdir, "04_search/search.json")["gemms"]
    assert search["g0002"]["status"] == search["g0003"]["status"] == "screen failed"
    candidates = {entry["solution_index"]: entry for entry in search["g0001"]["candidates"]}
    assert candidates[crashing]["status"] == "job failed" and "signal 6" in candidates[crashing]["error"]
    clean_candidates = {entry["solution_index"]: entry for entry in clean_g0001["candidates"]}
    assert candidates[other] == clean_candidates[other] and candidates[other]["status"] == "ok"
    assert search["g0001"]["winner"] == candidates[other]
    kept = {row["solution_index"]: row["us"] for row in screen_rows(workdir, "g0001") if row["status"] == "ok"}
    reference_rows = {row["solution_index"]: row["us"] for row in screen_rows(clean, "g0001")}
    assert kept == {index: us for index, us in reference_rows.items() if index not in ("3", "5")}
    assert not [record for record in bench_calls(tmp_path / "bench-calls.jsonl") if _alive(record["pid"])]


def test_candidate_faults_cost_only_that_candidate(node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The accurate phase's jobs (``--algo_method index``, one candidate each) through the job
    engine: crash, NaN, cut row and hang each fail their own candidate; a wrong answer is that
    candidate's result (failed verification); the other candidates are timed."""
    faults(
        monkeypatch,
        "crash,sol=1,algo=index;nan,sol=2,algo=index;trunc,sol=3,algo=index;hang,sol=4,algo=index;"
        "wrong,sol=5,algo=index",
    )
    tune = config(node, tmp_path / "W")
    problem = GemmProblem(
        m=4096, n=64, k=4096, lda=4096, ldb=4096, ldc=4096, ldd=4096, trans_a="T", trans_b="N",
        a_type="f16_r", b_type="f16_r", c_type="f16_r", d_type="f16_r", compute_type="c_f32_r", scale_type="f32_r",
    )  # fmt: skip
    jobs = [
        bench_job_for(
            f"acc-g0001-{index}",
            bench_spec(tune, problem, accurate_options(tune, algo_method=AlgoMethod.INDEX, solution_index=index)),
            1.0,
        )
        for index in (*range(7), 100000)  # 100000: an index beyond the library's last
    ]
    context = StageContext(
        name="search", number=4, directory=tmp_path / "04_search", run_root=tmp_path, config=tune,
        executor=LocalExecutor((0,), retries=0, timeout=60, stall_timeout=2.0), reporter=NullReporter(), upstream={},
    )  # fmt: skip
    outcomes: dict[str, JobOutcome] = {outcome.job_id: outcome for outcome in context.run_jobs(jobs, phase="accurate")}
    failed = {job_id: outcome.error or "" for job_id, outcome in outcomes.items() if not outcome.ok}
    assert set(failed) == {"acc-g0001-1", "acc-g0001-2", "acc-g0001-3", "acc-g0001-4", "acc-g0001-100000"}
    assert "killed by signal 6" in failed["acc-g0001-1"]
    assert "Memory access fault by GPU node-2" in failed["acc-g0001-1"]  # what the tool said is kept
    # the bench's own error line, in the outcome, the stage's failures and the job's failure record
    no_solution = "error: NO solution found! at /hipBLASLt/clients/include/testing_matmul.hpp:2455"
    assert (
        "hipblaslt-bench exited with status 1" in failed["acc-g0001-100000"]
        and no_solution in failed["acc-g0001-100000"]
    )
    assert no_solution in next(
        failure.error or "" for failure in context.failures if failure.job_id == "acc-g0001-100000"
    )
    assert (
        no_solution
        in json.loads((tmp_path / "04_search" / "jobs" / "acc-g0001-100000.failed.json").read_text())["error"]
    )
    assert "time 'nan' us" in failed["acc-g0001-2"]
    assert "12 fields" in failed["acc-g0001-3"]
    assert "stalled" in failed["acc-g0001-4"]
    for index in (0, 5, 6):
        (result,) = outcomes[f"acc-g0001-{index}"].value["results"]
        assert result["solution_index"] == index and result["us"] > 0
        assert result["verify_failed"] is (index == 5)


# ------------------------------------------------------------------------------------------
# Item 8: reruns retry failures, retirement, abort, stall, kill -9


def test_rerunning_after_a_failure_retries_only_the_failed_job(
    node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "bench-calls.jsonl"
    workdir = tmp_path / "W"
    faults(monkeypatch, "crash,m=1024,algo=all")
    first = run_tuning(config(node, workdir))
    assert [failure.job_id for failure in first.failures] == ["screen-g0002"]
    calls_before = len(bench_calls(log))

    faults(monkeypatch, None)  # the node is fixed
    second = run_tuning(config(node, workdir))
    assert second.failures == ()
    search = next(run for run in second.runs if run.name == "search")
    assert search.status.value == "retry" and search.marker is not None
    assert search.marker.jobs_failed == 0
    # g0002's screen, its reference (timed beside its candidates) and its top 2 ran
    assert search.marker.jobs_cached == search.marker.jobs_total - 1 - 1 - 2
    # the search's calls (screens: all, candidates: index); the benchmark stage then re-measures every
    # GEMM against the rebuilt tuned library, as it must
    searched = [call for call in bench_calls(log)[calls_before:] if _option(call, "--algo_method") != "heuristic"]
    assert {_option(call, "-m") for call in searched} == {"1024"}, "only the failed GEMM's search may run again"
    assert [_option(call, "--algo_method") for call in searched] == ["all", "index", "index"]
    assert read(workdir, "04_search/search.json")["gemms"]["g0002"]["status"] != "screen failed"
    for stage in ("ingest", "library", "baseline"):
        assert next(run for run in second.runs if run.name == stage).status.value == "up-to-date"

    third = run_tuning(config(node, workdir))
    assert third.runs and all(not run.ran for run in third.runs), "a run without failures is complete"


def test_a_job_that_keeps_failing_is_retired(node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = tmp_path / "bench-calls.jsonl"
    workdir = tmp_path / "W"
    faults(monkeypatch, "crash,m=1024,algo=all")
    for attempt in (1, 2):
        report = run_tuning(config(node, workdir, retire_after=2))
        (failure,) = report.failures
        assert failure.job_id == "screen-g0002" and failure.retired is (attempt == 2)
    assert len(bench_calls(log, m=1024, algo="all")) == 2
    assert json.loads((workdir / "04_search" / "jobs" / "screen-g0002.failed.json").read_text())["failures"] == 2

    third = run_tuning(config(node, workdir, retire_after=2))
    assert len(bench_calls(log, m=1024, algo="all")) == 2, "a retired job is not started again"
    assert all(not run.ran for run in third.runs)
    (failure,) = third.failures
    assert failure.retired and failure.subject == "HHS_TN 1024x128x1x2048"
    assert "retired" in (workdir / "report.md").read_text()

    # --from-stage re-measures everything, so the count starts anew
    faults(monkeypatch, None)
    fresh = run_tuning(config(node, workdir, retire_after=2, from_stage="search"))
    assert fresh.failures == () and len(bench_calls(log, m=1024, algo="all")) == 3
    assert not (workdir / "04_search" / "jobs" / "screen-g0002.failed.json").exists()


def test_consecutive_failures_abort_the_run_resumably(
    node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "bench-calls.jsonl"
    workdir = tmp_path / "W"
    faults(monkeypatch, "crash,algo=all")  # every screen crashes: a broken node
    with pytest.raises(PipelineAborted, match="stopped after 2 consecutive failed jobs"):
        run_tuning(config(node, workdir, abort_after=2))
    assert len(bench_calls(log, algo="all")) == 2, "no job may start after the abort"
    assert not (workdir / "04_search" / ".done.json").exists()
    assert (workdir / "03_baseline" / ".done.json").exists()

    args = ["tune", str(node / "w.log"), "--arch", "gfx942", "--workdir", str(workdir), "--library-logic",
            str(node / "logic"), "--top-k", "2", "--retries", "0", "--abort-after", "2"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 4, result.output
    assert "stopped after 2 consecutive failed jobs" in result.output
    assert "rerun the same command" in result.output

    faults(monkeypatch, None)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (workdir / "10_report" / ".done.json").exists()


def test_kill_9_of_the_run_leaves_no_benchmark_running(
    node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "bench-calls.jsonl"
    faults(monkeypatch, "hang,m=1024,algo=all")
    import tensilekit

    env = {**os.environ, "PYTHONPATH": str(Path(tensilekit.__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "tensilekit", "tune", str(node / "w.log"), "--arch", "gfx942", "--workdir",
               str(tmp_path / "W"), "--library-logic", str(node / "logic"), "--stall-timeout", "0"]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hung: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not hung and time.monotonic() < deadline and process.poll() is None:
            hung = [call["pid"] for call in bench_calls(log, m=1024, algo="all")]
            time.sleep(0.05)
        assert hung, "the hanging screen never started"
        time.sleep(0.3)
        assert _alive(hung[0])
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 15
        while _alive(hung[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(hung[0]), "the hung hipblaslt-bench outlived the kill -9 of tensilekit tune"
    finally:
        process.kill()
        for pid in hung:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _option(call: dict[str, Any], flag: str) -> str:
    argv: list[str] = call["argv"]
    return argv[argv.index(flag) + 1]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            state = stream.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


# ------------------------------------------------------------------------------------------
# Issue 36 item 5: a resumed run compares reference and tuned runs taken together


def _tune_command(node: Path, workdir: Path) -> list[str]:
    return [sys.executable, "-m", "tensilekit", "tune", str(node / "w.log"), "--arch", "gfx942", "--workdir",
            str(workdir), "--library-logic", str(node / "logic"), "--top-k", "2", "--retries", "0",
            "--devices", "0,1"]  # fmt: skip


def test_a_resumed_run_times_each_gemms_reference_and_tuned_run_together(
    node: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Killed (``kill -9``) once the first GEMM's comparison is cached, then rerun on 2 GPUs: every
    GEMM's tuned-library time comes from the run right after its reference run on the same
    physical GPU (the stand-in's call log), whichever run took them."""
    import tensilekit

    monkeypatch.setenv("HIPBLASLT_STANDIN_NUM_GPUS", "2")
    log, workdir = tmp_path / "bench-calls.jsonl", tmp_path / "W"
    env = {**os.environ, "PYTHONPATH": str(Path(tensilekit.__file__).resolve().parents[1])}
    jobs = workdir / "06_benchmark" / "jobs"
    process = subprocess.Popen(_tune_command(node, workdir), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while process.poll() is None and not list(jobs.glob("compare-*.json")) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert process.poll() is None, "the run ended before its first comparison was cached"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        process.kill()
        process.wait()
    first_run_calls = len(bench_calls(log))
    resumed = subprocess.run(_tune_command(node, workdir), env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    marker = read(workdir, "06_benchmark/.done.json")
    assert 0 < marker["jobs_cached"] < marker["jobs_total"], "the rerun must resume the benchmark stage"

    tuned_library = str((workdir / "05_build" / "tcl" / "library").resolve())
    calls = bench_calls(log)
    assert len(calls) > first_run_calls
    ended = {
        record["pid"]: record["end"] for record in map(json.loads, log.read_text().splitlines()) if "end" in record
    }
    compared = read(workdir, "06_benchmark/benchmark.json")["gemms"]
    assert len(compared) >= 2
    for gemm_id, record in compared.items():
        m = str(GEMMS[int(gemm_id[1:]) - 1][0])  # g0001 is GEMMS[0]
        position = max(
            i for i, call in enumerate(calls) if call["libpath"] == tuned_library and _option(call, "-m") == m
        )
        tuned = calls[position]
        device = tuned["physical_device"]
        before = [call for call in calls[:position] if call["physical_device"] == device]
        assert before, gemm_id
        reference = before[-1]  # the call on that GPU right before the tuned run: its reference run
        assert reference["libpath"] != tuned_library and _option(reference, "-m") == m, (gemm_id, reference)
        assert reference["argv"] == tuned["argv"]
        assert ended[reference["pid"]] <= tuned["start"], "back to back, not overlapping"
        assert record["device"] == device
        assert record["reference"]["us"] > 0 and record["tuned"]["us"] > 0

    # issue 36 item 9: the run leads with the workload's GEMM time before and after (stdout, report.json)
    report = read(workdir, "report.json")
    before = after = 0.0
    for gemm in report["gemms"]:
        compared = gemm["status"] == "tuned"
        reference = gemm["reference_us"] if compared else gemm["baseline_us"]
        before += gemm["call_count"] * reference
        after += gemm["call_count"] * (gemm["tuned_us"] if compared else reference)
    workload = report["workload_time"]
    assert workload["before_us"] == pytest.approx(before) and workload["after_us"] == pytest.approx(after)
    assert workload["ratio"] == pytest.approx(before / after) and workload["timed_gemms"] == len(GEMMS)
    headline = next(line for line in resumed.stdout.splitlines() if line.startswith("Workload GEMM time"))
    assert f"{before:,.1f} us before -> {after:,.1f} us after ({before / after:.2f}x faster" in headline
    assert resumed.stdout.splitlines().index(headline) >= len(resumed.stdout.splitlines()) - 3

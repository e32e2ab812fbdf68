"""Resilience of the job engine (issue 22 items 6 and 8) without the stand-ins: screen rows the
stand-ins cannot produce (zero, negative times), the resume decision for a stage that completed
with failures, the consecutive-failure breaker and the scheduler's abort."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tensilekit.errors import PipelineAborted
from tensilekit.pipeline.executors.scheduling import Finished, Slot, run_schedule
from tensilekit.pipeline.jobs import Attempt, Job, JobContext, JobEvent, JobFinished, JobOutcome, JobStarted, make_job
from tensilekit.pipeline.resilience import FailureBreaker, FailureRecord, is_retired
from tensilekit.pipeline.stage import JobFailure
from tensilekit.pipeline.stages.common import BenchJobSpec, bench_job
from tensilekit.pipeline.state import StageMarker, StageStatus, decide
from tensilekit.tools.hipblaslt_bench import AlgoMethod, BenchOptions, InvalidMeasurement, parse_bench_output
from tensilekit.workload.problem import GemmProblem

HEADER = (
    "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,"
    "a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,activation_type,bias_vector,bias_type,"
    "hipblaslt-Gflops,hipblaslt-GB/s,us"
)
VALUES = (
    "T,N,0,1,4096,64,4096,1,4096,16777216,0,4096,262144,4096,262144,4096,262144,f16_r,f16_r,f16_r,f16_r,f32_r,"
    "0,0,0,0,0,none,0,non-supported type,{gflops},536.798,{us}"
)
PROBLEM = GemmProblem(m=4096, n=64, k=4096, trans_a="T", a_type="f16_r", compute_type="c_f32_r")


def screen_output(times: list[str]) -> str:
    """hipblaslt-bench --algo_method all output (the stand-in's layout) with one row per time."""
    lines = ["Is supported 3 / Total solutions: 3"]
    for index, us in enumerate(times):
        gflops = "35770.6" if us not in ("0", "-1") else ("inf" if us == "0" else "-1")
        lines += [f"[{index}]:{HEADER}", "    " + VALUES.format(gflops=gflops, us=us),
                  f"    --Solution index: {index}", f"    --Solution name:  Cijk_sol{index}",
                  f"    --kernel name:    Cijk_sol{index}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def fake_bench(tmp_path: Path, output: str) -> str:
    script = tmp_path / "hipblaslt-bench"
    (tmp_path / "out.txt").write_text(output)
    script.write_text(f"#!/bin/sh\ncat {tmp_path / 'out.txt'}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def run_job(executable: str, options: BenchOptions) -> dict[str, object]:
    spec = BenchJobSpec(problem=PROBLEM, options=options, executable=executable)
    return bench_job(JobContext("j", 1, None, 30.0), spec)


def test_a_screen_keeps_its_valid_rows_and_records_zero_and_negative_times(tmp_path: Path) -> None:
    executable = fake_bench(tmp_path, screen_output(["60.03", "0", "-1"]))
    value = run_job(executable, BenchOptions(algo_method=AlgoMethod.ALL))
    assert [row["solution_index"] for row in value["results"]] == [0]  # type: ignore[union-attr, index]
    assert value["invalid"] == [
        {"solution_index": 1, "solution_name": "Cijk_sol1", "kernel_name": "Cijk_sol1", "reason": "time '0' us"},
        {"solution_index": 2, "solution_name": "Cijk_sol2", "kernel_name": "Cijk_sol2", "reason": "time '-1' us"},
    ]


def test_a_screen_without_a_valid_row_fails(tmp_path: Path) -> None:
    executable = fake_bench(tmp_path, screen_output(["nan", "0"]))
    with pytest.raises(InvalidMeasurement, match=r"no valid row \(2 invalid: solution 0: time 'nan' us"):
        run_job(executable, BenchOptions(algo_method=AlgoMethod.ALL))


def test_a_run_of_one_solution_still_fails_on_a_bad_row(tmp_path: Path) -> None:
    executable = fake_bench(tmp_path, screen_output(["0"]))
    with pytest.raises(InvalidMeasurement, match="time '0' us"):
        run_job(executable, BenchOptions(algo_method=AlgoMethod.INDEX, solution_index=0))


def test_lenient_parsing_keeps_a_cut_row_with_its_solution_lines() -> None:
    text = screen_output(["60.03", "61.5"]).replace(VALUES.format(gflops="35770.6", us="61.5"), "T,N,0,1,4096,64")
    output = parse_bench_output(text, lenient=True)
    first, cut = output.results
    assert first.malformed is None and cut.solution_index == 1 and cut.solution_name == "Cijk_sol1"
    assert cut.measurement_error() == "values row has 6 fields but the header has 33" and cut.us is None


def _marker(*failures: JobFailure) -> StageMarker:
    return StageMarker(stage="search", number=4, version="1", fingerprint="f", outputs={}, failures=failures,
                       jobs_failed=len(failures))  # fmt: skip


def _failure(retired: bool) -> JobFailure:
    return JobFailure(stage="search", phase="screen", job_id="screen-g0002", attempts=2, retired=retired)


def test_a_stage_with_failed_jobs_is_retried_until_they_are_retired() -> None:
    assert decide(_marker(_failure(False)), "f", {}) == (StageStatus.RETRY, "1 failed job(s) to retry")
    assert StageStatus.RETRY.runs
    assert decide(_marker(_failure(True)), "f", {}) == (StageStatus.UP_TO_DATE, "up to date")
    assert decide(_marker(_failure(False)), "g", {})[0] is StageStatus.STALE


def test_retirement_counts_attempts_of_the_same_job() -> None:
    assert not is_retired(None, 2)
    assert not is_retired(FailureRecord(key="k", failures=1), 2)
    assert is_retired(FailureRecord(key="k", failures=2), 2)
    assert not is_retired(FailureRecord(key="k", failures=99), 0)  # 0: never


def test_the_breaker_trips_on_consecutive_failures_only() -> None:
    breaker = FailureBreaker(3)
    failed = JobOutcome(job_id="j", ok=False, error_type="ToolFailed", error="exited with status -6")
    breaker.failure("search", failed)
    breaker.failure("search", failed)
    breaker.success()
    breaker.failure("search", failed)
    breaker.failure("search", failed)
    with pytest.raises(PipelineAborted, match="stopped after 3 consecutive failed jobs, the last search/j"):
        breaker.failure("search", failed)
    FailureBreaker(0).failure("search", failed)  # 0: never


def _noop(context: object, payload: int) -> int:
    return payload


class FailingBackend:
    """Every attempt fails; two run at a time, finishing in start order."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.pending: list[Finished] = []

    def start(self, job: Job, number: int, slot: Slot | None) -> None:
        self.started.append(job.id)
        attempt = Attempt(ok=False, error_type="ToolFailed", error="boom", started=0.0, finished=0.0)
        self.pending.append(Finished(job, number, slot, attempt))

    def wait(self) -> list[Finished]:
        done, self.pending = self.pending[:1], self.pending[1:]
        return done


def test_an_abort_starts_nothing_more_and_drains_what_runs() -> None:
    jobs = [make_job(f"j{i}", _noop, i, cost=float(10 - i)) for i in range(10)]
    backend = FailingBackend()
    breaker = FailureBreaker(2)
    events: list[JobEvent] = []

    def emit(event: JobEvent) -> None:
        events.append(event)
        if isinstance(event, JobFinished):
            breaker.failure("s", event.outcome)

    with pytest.raises(PipelineAborted):
        run_schedule(jobs, [Slot("0", 0), Slot("1", 1)], backend, cpu_slots=1, retries=1, emit=emit)
    # j0 and j1 fail twice each (one retry); j1's last failure trips the breaker while j2 runs:
    # j2 is drained (its outcome still emitted, so a success would be cached) and nothing else starts
    assert backend.started == ["j0", "j1", "j0", "j1", "j2"]
    finished = [event.outcome.job_id for event in events if isinstance(event, JobFinished)]
    assert finished == ["j0", "j1", "j2"]
    assert sum(isinstance(event, JobStarted) for event in events) == 5

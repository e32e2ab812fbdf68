"""Jobs: one attempt's capture of values and errors, cache keys, device pinning."""

from __future__ import annotations

from pydantic import BaseModel

from tensilekit.errors import ToolFailed, ToolNotFound
from tensilekit.pipeline.jobs import JobContext, JobKind, device_env, job_key, make_job, run_attempt


class Payload(BaseModel):
    m: int
    name: str = "x"


def double(context: JobContext, payload: Payload) -> dict[str, int]:
    return {"value": 2 * payload.m, "device": context.device or 0}


def fail_tool(context: JobContext, payload: Payload) -> None:
    raise ToolFailed("bench timed out", argv=["hipblaslt-bench"], returncode=-15, stderr_tail="killed", timed_out=True)


def missing_tool(context: JobContext, payload: Payload) -> None:
    raise ToolNotFound("hipblaslt-bench is not on PATH")


def broken(context: JobContext, payload: Payload) -> None:
    raise ValueError("")


def ticking() -> object:
    times = iter(range(100))
    return lambda: float(next(times))


def test_successful_attempt_keeps_value_device_and_times() -> None:
    job = make_job("a", double, Payload(m=21))
    attempt = run_attempt(job, JobContext("a", 1, device=3), clock=ticking())  # type: ignore[arg-type]
    assert attempt.ok and attempt.value == {"value": 42, "device": 3}
    assert attempt.device == 3 and attempt.duration == 1.0


def test_tool_timeout_is_a_failed_retryable_attempt() -> None:
    attempt = run_attempt(make_job("a", fail_tool, Payload(m=1)), JobContext("a", 1))
    assert not attempt.ok
    assert (attempt.error_type, attempt.timed_out, attempt.returncode, attempt.retryable) == (
        "ToolFailed",
        True,
        -15,
        True,
    )
    assert attempt.stderr_tail == "killed"


def test_missing_tool_is_not_retryable() -> None:
    attempt = run_attempt(make_job("a", missing_tool, Payload(m=1)), JobContext("a", 1))
    assert not attempt.ok and not attempt.retryable and attempt.error == "hipblaslt-bench is not on PATH"


def test_exception_without_message_is_named() -> None:
    attempt = run_attempt(make_job("a", broken, Payload(m=1)), JobContext("a", 1))
    assert attempt.error == "ValueError"


def test_job_key_depends_on_function_and_payload_only() -> None:
    assert job_key(double, Payload(m=1)) == job_key(double, Payload(m=1))
    assert job_key(double, Payload(m=1)) != job_key(double, Payload(m=2))
    assert job_key(double, Payload(m=1)) != job_key(fail_tool, Payload(m=1))
    job = make_job("x", double, Payload(m=1), kind=JobKind.CPU, cost=5.0)
    assert job.key == job_key(double, Payload(m=1)) and job.kind is JobKind.CPU and job.cost == 5.0


def test_device_env_pins_with_rocr_and_renumbers_hip() -> None:
    assert device_env(None) == {}
    assert device_env(2) == {"ROCR_VISIBLE_DEVICES": "2", "HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": None}

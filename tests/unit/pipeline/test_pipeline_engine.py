"""The engine's state machine on toy stages: resume, stale, damaged, --from-stage, --only, job cache."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from tensilekit.errors import StageFailed, StaleRunDirectory
from tensilekit.pipeline.engine import run_pipeline, stage_numbers
from tensilekit.pipeline.executors.local import SerialExecutor
from tensilekit.pipeline.jobs import JobContext, make_job
from tensilekit.pipeline.progress import RecordingReporter
from tensilekit.pipeline.stage import BaseStage, StageContext, StageResult
from tensilekit.pipeline.state import RunDirectory, StageStatus

CALLS: collections.Counter[str] = collections.Counter()


def count_job(context: JobContext, payload: int) -> int:
    CALLS[context.job_id] += 1
    if payload < 0:
        raise RuntimeError("negative")
    return payload * 10


class Toy(BaseStage):
    """Writes ``out.txt`` from its config key and its inputs' outputs; counts its runs."""

    def __init__(
        self, name: str, *inputs: str, key: str | None = None, jobs: int = 0, crash: list[bool] | None = None
    ) -> None:
        self.name = name
        self.inputs = inputs
        self.outputs = ("out.txt",)
        self.key = key
        self.jobs = jobs
        self.crash = crash
        self.runs = 0

    def config_slice(self, config: dict[str, Any]) -> dict[str, Any]:
        return {self.key: config.get(self.key)} if self.key else {}

    def tools(self, config: dict[str, Any]) -> list[str]:
        return ["tool"]

    def run(self, context: StageContext) -> StageResult:
        self.runs += 1
        parts = [context.upstream_path(name, "out.txt").read_text() for name in self.inputs]
        value = context.config.get(self.key) if self.key else None
        if self.jobs:
            payloads = [-1 if (value == "bad" and i == 0) else i for i in range(self.jobs)]
            outcomes = context.run_jobs(
                [make_job(f"{self.name}-{i}", count_job, p) for i, p in enumerate(payloads)], phase="p"
            )
            parts.append(str([outcome.value for outcome in outcomes]))
        if self.crash and self.crash[0]:
            self.crash[0] = False
            raise RuntimeError("killed")
        visible = "same" if value == "same-output" else value
        context.write_text(context.path("out.txt"), f"{self.name}({visible}) <- " + " | ".join(parts))
        return StageResult(summary=f"{self.name} ok")


def pipeline(**changes: Any) -> list[Toy]:
    return [Toy("a", key="ka"), Toy("b", "a", key="kb", **changes), Toy("c", "b")]


def run(stages: list[Toy], root: Path, config: dict[str, Any] | None = None, tool: str = "v1", **options: Any) -> Any:
    return run_pipeline(
        stages, config or {"ka": 1, "kb": 2}, RunDirectory(root), executor=SerialExecutor(retries=0),
        reporter=RecordingReporter(), tool_version=lambda name: tool, **options,
    )  # fmt: skip


def statuses(result: Any) -> list[StageStatus]:
    return [stage.status for stage in result.stages]


def test_a_second_run_skips_everything(tmp_path: Path) -> None:
    stages = pipeline()
    first = run(stages, tmp_path)
    assert statuses(first) == [StageStatus.NEW] * 3
    assert sorted(path.name for path in tmp_path.iterdir()) == ["01_a", "02_b", "03_c"]
    second = run(stages, tmp_path)
    assert statuses(second) == [StageStatus.UP_TO_DATE] * 3
    assert [stage.runs for stage in stages] == [1, 1, 1]
    marker = json.loads((tmp_path / "02_b" / ".done.json").read_text())
    assert set(marker["outputs"]) == {"02_b/out.txt", "02_b/failures.json"}


def test_a_changed_option_reruns_its_stage_and_what_depends_on_it(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path)
    result = run(stages, tmp_path, {"ka": 1, "kb": 3})
    assert statuses(result) == [StageStatus.UP_TO_DATE, StageStatus.STALE, StageStatus.STALE]
    assert (tmp_path / "03_c" / "out.txt").read_text() == "c(None) <- b(3) <- a(1) <- "


def test_a_rerun_over_earlier_results_says_what_changed_and_that_they_are_replaced(tmp_path: Path) -> None:
    """A reused work folder never silently replaces an earlier run's results (a GA search's
    included): the stage's start line names the changed option and the folder replaced (issue 32 item 9)."""
    stages = pipeline()
    run(stages, tmp_path)
    reporter = RecordingReporter()
    run_pipeline(
        stages, {"ka": 1, "kb": 3}, RunDirectory(tmp_path), executor=SerialExecutor(retries=0), reporter=reporter,
        tool_version=lambda name: "v1",
    )  # fmt: skip
    (started,) = [line for line in reporter.lines if line.startswith("stage 02_b started")]
    assert "option kb: 2 -> 3" in started
    assert f"replaces the results of its earlier run in {tmp_path / '02_b'}" in started


def test_identical_outputs_do_not_invalidate_downstream(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path, {"ka": 1, "kb": "same-output"})
    result = run(stages, tmp_path, {"ka": 1, "kb": "same"})
    assert statuses(result) == [StageStatus.UP_TO_DATE, StageStatus.STALE, StageStatus.UP_TO_DATE]


def test_a_new_tool_version_makes_stages_stale(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path)
    assert statuses(run(stages, tmp_path, tool="v2"))[0] is StageStatus.STALE


def test_a_modified_output_is_damaged_and_redone(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path)
    (tmp_path / "02_b" / "out.txt").write_text("edited")
    result = run(stages, tmp_path)
    assert statuses(result) == [StageStatus.UP_TO_DATE, StageStatus.DAMAGED, StageStatus.UP_TO_DATE]
    assert (tmp_path / "02_b" / "out.txt").read_text().startswith("b(2)")


def test_no_rerun_refuses_stale_stages_and_names_the_change(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path)
    with pytest.raises(StaleRunDirectory, match=r"02_b .* is stale \(option kb: 2 -> 7\)"):
        run(stages, tmp_path, {"ka": 1, "kb": 7}, no_rerun=True)
    assert stages[1].runs == 1


def test_no_rerun_still_runs_new_stages(tmp_path: Path) -> None:
    assert statuses(run(pipeline(), tmp_path, no_rerun=True)) == [StageStatus.NEW] * 3


def test_from_stage_forces_it_and_everything_downstream(tmp_path: Path) -> None:
    stages = pipeline()
    run(stages, tmp_path)
    result = run(stages, tmp_path, from_stage="b")
    assert statuses(result) == [StageStatus.UP_TO_DATE, StageStatus.FORCED, StageStatus.FORCED]


def test_only_runs_the_named_stages_and_needs_their_upstream(tmp_path: Path) -> None:
    stages = pipeline()
    with pytest.raises(StageFailed, match="needs stage 02_b"):
        run(stages, tmp_path, only=["c"])
    run(stages, tmp_path)
    result = run(stages, tmp_path, only=["c"])
    assert statuses(result) == [StageStatus.NOT_SELECTED, StageStatus.NOT_SELECTED, StageStatus.FORCED]
    assert [stage.runs for stage in stages] == [1, 1, 2]


def test_an_interrupted_stage_reuses_its_finished_jobs(tmp_path: Path) -> None:
    CALLS.clear()
    crash = [True]
    stages = pipeline(jobs=5, crash=crash)
    with pytest.raises(RuntimeError, match="killed"):
        run(stages, tmp_path)
    assert not (tmp_path / "02_b" / ".done.json").exists()
    assert len(list((tmp_path / "02_b" / "jobs").glob("*.json"))) == 5
    result = run(stages, tmp_path)
    assert statuses(result) == [StageStatus.UP_TO_DATE, StageStatus.NEW, StageStatus.NEW]
    assert set(CALLS.values()) == {1}  # no job ran twice
    marker = result.stage("b").marker
    assert marker.jobs_total == 5 and marker.jobs_cached == 5
    # --from-stage asks for fresh measurements: the cache is not used.
    run(stages, tmp_path, from_stage="b")
    assert set(CALLS.values()) == {2}


def test_failed_jobs_are_results_recorded_in_the_marker(tmp_path: Path) -> None:
    CALLS.clear()
    result = run(pipeline(jobs=3), tmp_path, {"ka": 1, "kb": "bad"})
    marker = result.stage("b").marker
    assert marker.jobs_failed == 1 and marker.failures[0].job_id == "b-0"
    assert marker.failures[0].error == "negative"
    failures = json.loads((tmp_path / "02_b" / "failures.json").read_text())
    assert [item["job_id"] for item in failures] == ["b-0"]
    assert "b(bad) <- a(1) <-  | [None, 10, 20]" in (tmp_path / "02_b" / "out.txt").read_text()
    # failed jobs are not cached: a rerun tries them again
    run(pipeline(jobs=3), tmp_path, {"ka": 1, "kb": "bad"}, from_stage="b")
    assert CALLS["b-0"] == 2


class Lazy(BaseStage):
    name = "lazy"
    outputs = ("promised.txt",)

    def run(self, context: StageContext) -> StageResult:
        return StageResult()


def test_a_stage_that_does_not_write_its_outputs_fails(tmp_path: Path) -> None:
    with pytest.raises(StageFailed, match="did not write its output promised.txt"):
        run([Lazy()], tmp_path)  # type: ignore[list-item]
    assert not (tmp_path / "01_lazy" / ".done.json").exists()


def test_stage_numbers() -> None:
    assert stage_numbers(pipeline()) == {"a": 1, "b": 2, "c": 3}


def test_progress_lines(tmp_path: Path) -> None:
    reporter = RecordingReporter()
    run_pipeline(pipeline(jobs=2), {"ka": 1, "kb": 2}, RunDirectory(tmp_path), executor=SerialExecutor(),
                 reporter=reporter, tool_version=lambda name: "v")  # fmt: skip
    assert reporter.lines[:3] == [
        "stage 01_a started (new: not run yet)",
        "stage 01_a finished: a ok",
        "stage 02_b started (new: not run yet)",
    ]
    assert "b/p: 2 job(s) queued, 0 cached" in reporter.lines


class EveryJobFails(Toy):
    """Runs jobs that all fail, then gives up as the baseline stage does ("see failures.json")."""

    def run(self, context: StageContext) -> StageResult:
        context.run_jobs([make_job(f"{self.name}-{i}", count_job, -1) for i in range(2)], phase="p")
        raise StageFailed("every benchmark failed; see failures.json")


def test_a_failed_stage_leaves_the_failures_json_its_message_points_to(tmp_path: Path) -> None:
    with pytest.raises(StageFailed) as raised:
        run([Toy("a", key="ka"), EveryJobFails("b", "a")], tmp_path)
    path = tmp_path / "02_b" / "failures.json"
    assert str(path) in str(raised.value)
    failures = json.loads(path.read_text())
    assert [failure["job_id"] for failure in failures] == ["b-0", "b-1"]
    assert all("negative" in failure["error"] for failure in failures)
    assert not (tmp_path / "02_b" / ".done.json").exists()  # the stage did not complete

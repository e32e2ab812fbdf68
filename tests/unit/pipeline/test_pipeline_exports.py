"""The public names of tensilekit.pipeline are pinned (httpx tests/test_exported_members.py)."""

from __future__ import annotations

import tensilekit.pipeline as pipeline


def test_exported_members() -> None:
    assert sorted(pipeline.__all__) == [
        "Executor", "GemmReport", "Job", "JobContext", "JobKind", "JobOutcome", "LocalExecutor", "PipelineRun",
        "RecordingReporter", "Reporter", "RunDirectory", "SerialExecutor", "Stage", "StageContext", "StageMarker",
        "StageResult", "StageRun", "StageStatus", "TuneConfig", "TuneReport", "load_report", "run_pipeline",
        "run_tuning",
    ]  # fmt: skip
    for name in pipeline.__all__:
        assert getattr(pipeline, name) is not None

"""The tuning pipeline: from a hipBLASLt log to a merged library and an uplift report.

Resumable (stage fingerprints and completion markers in a numbered run directory), parallel
(device-pinned local pool or a Ray cluster), and runnable without a GPU (``simulate=True``).
Start with :func:`run_tuning` and :class:`TuneConfig`.

Names are imported on first use, so importing a light module of the package does not pull in
the whole pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensilekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from tensilekit.pipeline.api import load_report, run_tuning
    from tensilekit.pipeline.config import TuneConfig
    from tensilekit.pipeline.engine import PipelineRun, StageRun, run_pipeline
    from tensilekit.pipeline.executors import Executor
    from tensilekit.pipeline.executors.local import LocalExecutor, SerialExecutor
    from tensilekit.pipeline.jobs import Job, JobContext, JobKind, JobOutcome
    from tensilekit.pipeline.progress import RecordingReporter, Reporter
    from tensilekit.pipeline.report import GemmReport, TuneReport
    from tensilekit.pipeline.stage import Stage, StageContext, StageResult
    from tensilekit.pipeline.state import RunDirectory, StageMarker, StageStatus

_EXPORTS = {
    "load_report": "tensilekit.pipeline.api",
    "run_tuning": "tensilekit.pipeline.api",
    "TuneConfig": "tensilekit.pipeline.config",
    "PipelineRun": "tensilekit.pipeline.engine",
    "StageRun": "tensilekit.pipeline.engine",
    "run_pipeline": "tensilekit.pipeline.engine",
    "Executor": "tensilekit.pipeline.executors",
    "LocalExecutor": "tensilekit.pipeline.executors.local",
    "SerialExecutor": "tensilekit.pipeline.executors.local",
    "Job": "tensilekit.pipeline.jobs",
    "JobContext": "tensilekit.pipeline.jobs",
    "JobKind": "tensilekit.pipeline.jobs",
    "JobOutcome": "tensilekit.pipeline.jobs",
    "RecordingReporter": "tensilekit.pipeline.progress",
    "Reporter": "tensilekit.pipeline.progress",
    "GemmReport": "tensilekit.pipeline.report",
    "TuneReport": "tensilekit.pipeline.report",
    "Stage": "tensilekit.pipeline.stage",
    "StageContext": "tensilekit.pipeline.stage",
    "StageResult": "tensilekit.pipeline.stage",
    "RunDirectory": "tensilekit.pipeline.state",
    "StageMarker": "tensilekit.pipeline.state",
    "StageStatus": "tensilekit.pipeline.state",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Executor",
    "GemmReport",
    "Job",
    "JobContext",
    "JobKind",
    "JobOutcome",
    "LocalExecutor",
    "PipelineRun",
    "RecordingReporter",
    "Reporter",
    "RunDirectory",
    "SerialExecutor",
    "Stage",
    "StageContext",
    "StageMarker",
    "StageResult",
    "StageRun",
    "StageStatus",
    "TuneConfig",
    "TuneReport",
    "load_report",
    "run_pipeline",
    "run_tuning",
]

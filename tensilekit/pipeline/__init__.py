"""The tuning pipeline: from a hipBLASLt log to a merged library and an uplift report.

Resumable (stage fingerprints and completion markers in a numbered run directory), parallel
(device-pinned local pool or a Ray cluster), and runnable without a GPU (``simulate=True``).
Start with :func:`run_tuning` and :class:`TuneConfig`.
"""

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

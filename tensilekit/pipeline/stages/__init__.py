"""The stages of the tuning pipeline, in order: ingest -> library -> baseline -> search -> build
-> benchmark -> postprocess -> final -> merge -> report (``search`` is the dense search or, with
``--mode ga``/``grid``, the kernel search)."""

from tensilekit.pipeline.stage import Stage
from tensilekit.pipeline.stages.baseline import BaselineStage
from tensilekit.pipeline.stages.benchmark import BenchmarkStage
from tensilekit.pipeline.stages.build import BuildStage
from tensilekit.pipeline.stages.final import FinalStage
from tensilekit.pipeline.stages.ingest import IngestStage
from tensilekit.pipeline.stages.kernel_search import KernelSearchStage
from tensilekit.pipeline.stages.library import LibraryStage
from tensilekit.pipeline.stages.merge import MergeStage
from tensilekit.pipeline.stages.postprocess import PostprocessStage
from tensilekit.pipeline.stages.report import ReportStage
from tensilekit.pipeline.stages.search import SearchStage


def tune_stages(mode: str = "search") -> list[Stage]:
    """Fresh instances of every stage, in declared order.

    ``mode`` picks the ``search`` stage: the dense search over existing solutions
    (``search``) or the kernel search (``ga``, ``grid``); the other stages are the same.
    """
    search: Stage = SearchStage() if mode == "search" else KernelSearchStage(mode)
    return [
        IngestStage(),
        LibraryStage(),
        BaselineStage(),
        search,
        BuildStage(),
        BenchmarkStage(),
        PostprocessStage(),
        FinalStage(),
        MergeStage(),
        ReportStage(),
    ]


STAGE_NAMES = tuple(stage.name for stage in tune_stages())

__all__ = [
    "STAGE_NAMES",
    "BaselineStage",
    "BenchmarkStage",
    "BuildStage",
    "FinalStage",
    "IngestStage",
    "KernelSearchStage",
    "LibraryStage",
    "MergeStage",
    "PostprocessStage",
    "ReportStage",
    "SearchStage",
    "tune_stages",
]

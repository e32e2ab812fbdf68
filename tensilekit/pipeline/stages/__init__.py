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

ROCBLAS_STOPS_AT_CONFIGS = (
    "rocBLAS tuning stops at configs: with --config-dialect tensile the run ends after the search stage "
    "(ROCm/Tensile configs in 04_search/configs/ and runs/, measured by ROCm/Tensile's benchmark driver); "
    "tensilekit has no rocBLAS build or benchmark path (rocBLAS's TensileCreateLibrary, rocblas-bench), so "
    "nothing is built, benchmarked against rocBLAS or merged"
)
"""Why a ``--config-dialect tensile`` run has no build, benchmark, final, merge or report stage."""


def tune_stages(mode: str = "search", dialect: str = "tensilelite") -> list[Stage]:
    """Fresh instances of every stage, in declared order.

    ``mode`` picks the ``search`` stage: the dense search over existing solutions
    (``search``) or the kernel search (``ga``, ``grid``); the other stages are the same.
    ``dialect`` ``tensile`` (ROCm/Tensile configs, rocBLAS) stops after ``search``
    (:data:`ROCBLAS_STOPS_AT_CONFIGS`): the later stages build with hipBLASLt's TensileCreateLibrary
    and measure with hipblaslt-bench, which cannot load ROCm/Tensile kernels.
    """
    search: Stage = SearchStage() if mode == "search" else KernelSearchStage(mode)
    upstream: list[Stage] = [IngestStage(), LibraryStage(), BaselineStage(), search]
    if dialect == "tensile":
        return upstream
    return [*upstream, BuildStage(), BenchmarkStage(), PostprocessStage(), FinalStage(), MergeStage(), ReportStage()]


STAGE_NAMES = tuple(stage.name for stage in tune_stages())

__all__ = [
    "ROCBLAS_STOPS_AT_CONFIGS",
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

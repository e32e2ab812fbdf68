"""Which kernel each GEMM of a workload (a hipBLASLt log, a GEKO list …) would hit.

The workload parsers (:mod:`tensilekit.workload`) keep hipBLASLt's own spellings (``bf16_r``,
``c_f32_r``, scale modes as numbers); :func:`problem_from_workload` turns one such GEMM into the
:class:`~tensilekit.selection.problem.GemmProblem` selection works on, and
:func:`select_workload` answers every distinct GEMM of a workload, keeping its call count.
Pure functions: reading the log is the caller's business (``load_workloads``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from tensilekit._arguments import require
from tensilekit.errors import SelectionError
from tensilekit.model.library import MasterLibrary
from tensilekit.selection.answer import Selection
from tensilekit.selection.api import select_solution
from tensilekit.selection.fast import CompiledLibrary, compile_library
from tensilekit.selection.problem import GemmProblem, Hardware
from tensilekit.selection.runtime import TENSILE, Runtime, runtime_named
from tensilekit.selection.workload_problem import epilogue_fields, tensile_problem_from_workload
from tensilekit.workload.problem import GemmProblem as WorkloadGemm


def problem_from_workload(
    gemm: WorkloadGemm, runtime: Runtime | str | None = None, *, workspace_size: int | None = None
) -> GemmProblem:
    """The selection problem of one workload GEMM (types, strides, hipBLASLt epilogue flags), as
    ``runtime`` builds it (default Tensile's view; ``"hipblaslt"``: ``updateTensileProblem``'s).

    ``workspace_size`` is the bytes the application allows (a log does not record it; None =
    unlimited).

    Raises:
        SelectionError: a type or scale mode selection cannot represent.
        TypeError: an argument of the wrong type.
    """
    if not isinstance(gemm, WorkloadGemm):
        raise TypeError(f"problem_from_workload(): gemm must be a workload GemmProblem, not {type(gemm).__name__}")
    if workspace_size is not None and (isinstance(workspace_size, bool) or not isinstance(workspace_size, int)):
        raise TypeError(
            f"problem_from_workload(): workspace_size must be int or None, not {type(workspace_size).__name__}"
        )
    chosen = TENSILE if runtime is None else runtime_named(runtime)
    return chosen.problem_from_workload(gemm, workspace_size)


@dataclasses.dataclass(frozen=True)
class WorkloadSelection:
    """One distinct GEMM of a workload, how often it was called, and what selection found."""

    gemm: WorkloadGemm
    problem: GemmProblem | None
    selection: Selection | None
    error: str | None = None
    """Why the GEMM could not be asked (an unsupported type …); ``selection`` is then None."""

    @property
    def call_count(self) -> int:
        """Calls of this GEMM in the workload."""
        return self.gemm.call_count


def select_workload(
    library: MasterLibrary | CompiledLibrary,
    gemms: Iterable[WorkloadGemm],
    hardware: Hardware,
    *,
    loader: Callable[[str], MasterLibrary] | None = None,
    rocblas_k0: bool = False,
    workspace_size: int | None = None,
) -> list[WorkloadSelection]:
    """Select a kernel for every GEMM of ``gemms`` (one answer each, input order), each problem
    built as the library's runtime builds it (hipBLASLt: ``updateTensileProblem`` with the
    GEMM's epilogue; ``workspace_size`` None = unlimited).

    A GEMM selection cannot represent is answered with its ``error`` instead of stopping the
    whole workload. Raises TypeError for arguments of the wrong type.
    """
    require(library, (MasterLibrary, CompiledLibrary), "library", "select_workload")
    require(hardware, Hardware, "hardware", "select_workload")
    require(workspace_size, int, "workspace_size", "select_workload", optional=True)
    if isinstance(gemms, (str, bytes, Mapping)) or not isinstance(gemms, Iterable):
        raise TypeError(
            f"select_workload(): gemms must be an iterable of workload GemmProblem, not {type(gemms).__name__}"
        )
    gemms = list(gemms)
    for gemm in gemms:
        if not isinstance(gemm, WorkloadGemm):
            raise TypeError(
                f"select_workload(): each of gemms must be a workload GemmProblem, not {type(gemm).__name__}"
            )
    compiled = library if isinstance(library, CompiledLibrary) else compile_library(library, loader=loader)
    answers: list[WorkloadSelection] = []
    for gemm in gemms:
        try:
            problem = compiled.runtime.problem_from_workload(gemm, workspace_size)
        except SelectionError as error:
            answers.append(WorkloadSelection(gemm, None, None, error.message))
            continue
        selection = select_solution(compiled, problem, hardware, rocblas_k0=rocblas_k0)
        answers.append(WorkloadSelection(gemm, problem, selection))
    return answers


__all__ = [
    "WorkloadSelection",
    "epilogue_fields",
    "problem_from_workload",
    "select_workload",
    "tensile_problem_from_workload",
]

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

from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.model.library import MasterLibrary
from tensilekit.selection.api import select_solution
from tensilekit.selection.fast import CompiledLibrary, compile_library
from tensilekit.selection.problem import GemmProblem, Hardware, HipblasltFields, parse_data_type
from tensilekit.selection.runtime import TENSILE, Runtime, runtime_named
from tensilekit.selection.walk import Selection
from tensilekit.workload.problem import COMPUTE_TYPES
from tensilekit.workload.problem import GemmProblem as WorkloadGemm

_SCALE_MODES = {0: "", 1: "Scalar", 2: "Vector"}


def _compute(compute_type: str) -> tuple[DataType, DataType]:
    """(compute type, F32XdlMathOp) of a ``hipblasComputeType_t`` name."""
    letter = COMPUTE_TYPES.get(compute_type)
    if letter is None:
        raise SelectionError(f"unknown compute type {compute_type!r}")
    xdl = DataType.XFLOAT32 if compute_type == "c_xf32_r" else DataType.FLOAT
    return parse_data_type(letter), xdl


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


def epilogue_fields(gemm: WorkloadGemm) -> HipblasltFields:
    """The hipBLASLt epilogue of a workload GEMM (bias, activation, scales, aux, gradient …)."""
    scale_ab = max(gemm.scale_a, gemm.scale_b)
    if scale_ab not in _SCALE_MODES:
        raise SelectionError(f"scale mode {scale_ab} (block scaling) is not modelled by selection")
    try:
        return HipblasltFields(
            use_bias=int(gemm.bias),
            bias_type=parse_data_type(gemm.bias_type) if gemm.bias and gemm.bias_type else None,
            bias_src=gemm.bias_source.upper(),  # a/b/d -> A/B/D
            activation_type="None" if gemm.activation == "none" else gemm.activation,
            use_e=gemm.use_e,
            e_type=parse_data_type(gemm.aux_type) if gemm.aux_type else None,
            use_gradient=gemm.gradient,
            use_scale_ab=_SCALE_MODES[scale_ab],
            use_scale_cd=bool(gemm.scale_c or gemm.scale_d),
            use_scale_alpha_vec=int(gemm.scale_alpha_vector),
            swizzle_tensor_a=gemm.swizzle_a,
            swizzle_tensor_b=gemm.swizzle_b,
            grouped_gemm=gemm.grouped_gemm,
        )
    except ValueError as error:
        raise SelectionError(f"GEMM {gemm.m}x{gemm.n}x{gemm.k} cannot be selected for: {error}") from None


def tensile_problem_from_workload(gemm: WorkloadGemm, workspace_size: int | None = None) -> GemmProblem:
    """Tensile's view of a workload GEMM (its alpha, beta and compute type as logged)."""
    compute, xdl = _compute(gemm.compute_type)
    hipblaslt = epilogue_fields(gemm)
    try:
        return GemmProblem(
            m=gemm.m, n=gemm.n, k=gemm.k, batch=gemm.batch, trans_a=gemm.trans_a, trans_b=gemm.trans_b,
            a_type=parse_data_type(gemm.a_type), b_type=parse_data_type(gemm.b_type),
            c_type=parse_data_type(gemm.c_type), d_type=parse_data_type(gemm.d_type),
            compute_type=compute, f32_xdl_math_op=xdl, alpha=gemm.alpha, beta=gemm.beta,
            lda=gemm.lda, ldb=gemm.ldb, ldc=gemm.ldc, ldd=gemm.ldd,
            stride_a=gemm.stride_a, stride_b=gemm.stride_b, stride_c=gemm.stride_c, stride_d=gemm.stride_d,
            hipblaslt=hipblaslt, workspace_size=workspace_size,
        )  # fmt: skip
    except ValueError as error:
        raise SelectionError(f"GEMM {gemm.m}x{gemm.n}x{gemm.k} cannot be selected for: {error}") from None


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
    if not isinstance(library, (MasterLibrary, CompiledLibrary)):
        raise TypeError(
            f"select_workload(): library must be MasterLibrary or CompiledLibrary, not {type(library).__name__}"
        )
    if not isinstance(hardware, Hardware):
        raise TypeError(f"select_workload(): hardware must be Hardware, not {type(hardware).__name__}")
    if workspace_size is not None and (isinstance(workspace_size, bool) or not isinstance(workspace_size, int)):
        raise TypeError(f"select_workload(): workspace_size must be int or None, not {type(workspace_size).__name__}")
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

"""The selection problem of one workload GEMM (a hipBLASLt log line, a GEKO entry …) as Tensile
builds it, and the hipBLASLt epilogue such a GEMM carries.

Pure problem construction, without the selection engines: the runtimes
(:mod:`tensilekit.selection.runtime`, :mod:`tensilekit.selection.hipblaslt`) import it, and
:mod:`tensilekit.selection.workload` (which answers whole workloads) builds on them.
"""

from __future__ import annotations

from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.selection.problem import GemmProblem, HipblasltFields, parse_data_type
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


__all__ = ["epilogue_fields", "tensile_problem_from_workload"]

"""The problem hipBLASLt builds for a GEMM on its heuristic path, as a :class:`GemmProblem`.

hipBLASLt (7d9fb683) reaches tensilelite through ``rocblaslt_algo_get_heuristic`` ->
``getBestSolutions`` -> ``updateTensileProblem`` (``tensile_host.cpp:844-1000``): alpha = beta = 1,
strided batched, C == D, the workspace the caller's preference allows (0 when it sets none),
HPA = ``sizeof(compute) > sizeof(A)``, ``computeInputType`` from A, B and the hipBLASLt compute
type (``roc2TensileComputeInputType``, ``tensile_host.cpp:295-340``), ``F32XdlMathOp`` XFloat32
for ``f32_fast_xf32``, and the epilogue: bias, activation, scaleA/B, scaleAlphaVec (all off by
default, so tensilelite's feature predicates hold). ``ldd`` defaults to M, not to ``ldc``.
"""

from __future__ import annotations

import functools
from typing import Any

from tensilekit._arguments import require
from tensilekit.errors import SelectionError, one_line_reason
from tensilekit.model.common import DataType
from tensilekit.selection.hipblaslt_versions import DEFAULT_HIPBLASLT_VERSION, HipblasltVersion
from tensilekit.selection.problem import GemmProblem, HipblasltFields, check_default_strides, parse_data_type

# hipBLASLt compute types (``hipblasComputeType_t`` as the heuristic API and the corpus spell
# them, and the ``c_*_r`` log spelling) -> (Tensile compute type, fast compute input or None).
_COMPUTE: dict[str, tuple[DataType, DataType | None]] = {
    "f32": (DataType.FLOAT, None),
    "f32_fast_xf32": (DataType.FLOAT, None),
    "f32_fast_f16": (DataType.FLOAT, DataType.HALF),
    "f32_fast_bf16": (DataType.FLOAT, DataType.BFLOAT16),
    "f32_fast_f8_fnuz": (DataType.FLOAT, DataType.FLOAT8),
    "f32_fast_f8_ocp": (DataType.FLOAT, DataType.FLOAT8),
    "f32_fast_bf8_fnuz": (DataType.FLOAT, DataType.BFLOAT8),
    "f32_fast_bf8_ocp": (DataType.FLOAT, DataType.BFLOAT8),
    "f32_fast_f8bf8_fnuz": (DataType.FLOAT, DataType.FLOAT8_BFLOAT8),
    "f32_fast_f8bf8_ocp": (DataType.FLOAT, DataType.FLOAT8_BFLOAT8),
    "f32_fast_bf8f8_fnuz": (DataType.FLOAT, DataType.BFLOAT8_FLOAT8),
    "f32_fast_bf8f8_ocp": (DataType.FLOAT, DataType.BFLOAT8_FLOAT8),
    "f16": (DataType.HALF, DataType.HALF),
    "f64": (DataType.DOUBLE, None),
    "i32": (DataType.INT32, None),
}
_LOG_SPELLINGS = {
    "c_f32_r": "f32",
    "c_xf32_r": "f32_fast_xf32",
    "c_f32_fast_xf32_r": "f32_fast_xf32",
    "c_f32_fast_f16_r": "f32_fast_f16",
    "c_f32_fast_bf16_r": "f32_fast_bf16",
    "c_f16_r": "f16",
    "c_f64_r": "f64",
    "c_i32_r": "i32",
    # Tensile's compute type names (corpus/select queries, diff records)
    "float": "f32",
    "double": "f64",
    "int32": "i32",
    "half": "f16",
    "xfloat32": "f32_fast_xf32",
}
XF32_COMPUTE = "f32_fast_xf32"
COMPUTE_TYPE_NAMES = tuple(_COMPUTE)
"""The hipBLASLt compute types accepted (``c_*_r`` log spellings are accepted as well)."""


def compute_type_name(name: str) -> str:
    """The canonical hipBLASLt compute type name (``c_f32_r`` -> ``f32``)."""
    key = name.strip().lower()
    key = _LOG_SPELLINGS.get(key, key)
    if key not in _COMPUTE:
        raise SelectionError(f"unknown hipBLASLt compute type {name!r} (one of {', '.join(COMPUTE_TYPE_NAMES)})")
    return key


def tensile_compute_type(name: str, version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION) -> DataType:
    """``roc2TensileType``: the Tensile compute (alpha/beta) type of a hipBLASLt compute type
    (``f16`` is Float from 0.12.1 on: ``HipblasltVersion.f16_compute_as_float``)."""
    canonical = compute_type_name(name)
    if canonical == "f16" and version.f16_compute_as_float:
        return DataType.FLOAT
    return _COMPUTE[canonical][0]


def compute_input_type(
    a_type: DataType, b_type: DataType, compute: str, version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION
) -> DataType:
    """``roc2TensileComputeInputType``: the type the kernel's MAC consumes."""
    canonical = compute_type_name(compute)
    fast = None if canonical == "f16" and version.f16_compute_as_float else _COMPUTE[canonical][1]
    if fast is not None and compute_type_name(compute) != "f32":
        return fast
    if a_type is DataType.FLOAT8 and b_type is DataType.BFLOAT8:
        return DataType.FLOAT8_BFLOAT8
    if a_type is DataType.BFLOAT8 and b_type is DataType.FLOAT8:
        return DataType.BFLOAT8_FLOAT8
    return a_type if a_type.element_bytes <= b_type.element_bytes else b_type


def hipblaslt_problem(
    m: int,
    n: int,
    k: int,
    *,
    batch: int = 1,
    trans_a: str = "N",
    trans_b: str = "N",
    a_type: DataType | str = DataType.FLOAT,
    b_type: DataType | str | None = None,
    c_type: DataType | str | None = None,
    d_type: DataType | str | None = None,
    compute_type: str = "f32",
    compute_input: DataType | str | None = None,
    workspace_size: int | None = 0,
    alpha: float = 1.0,
    beta: float = 1.0,
    lda: int | None = None,
    ldb: int | None = None,
    ldc: int | None = None,
    ldd: int | None = None,
    stride_a: int | None = None,
    stride_b: int | None = None,
    stride_c: int | None = None,
    stride_d: int | None = None,
    c_equals_d: bool = True,
    epilogue: HipblasltFields | None = None,
    version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION,
) -> GemmProblem:
    """The problem ``updateTensileProblem`` builds (heuristic path) for these arguments.

    ``workspace_size=None`` means unlimited; the default 0 is hipBLASLt's when the preference sets
    no maximum. ``compute_input`` overrides the derived ``computeInputType``. ``epilogue`` carries
    bias/activation/scale settings (its ``compute_input_type`` and ``activation_compute_type`` are
    filled in here when left unset). ``version``: the hipBLASLt runtime that builds the problem.

    Raises:
        SelectionError: an unknown compute or data type, or an invalid size.
        TypeError: an argument of the wrong type.
    """
    sizes: dict[str, object] = {"m": m, "n": n, "k": k, "batch": batch}
    for name, size in sizes.items():
        require(size, int, name, "hipblaslt_problem")
    optional_sizes: dict[str, object] = {
        "lda": lda, "ldb": ldb, "ldc": ldc, "ldd": ldd, "workspace_size": workspace_size,
        "stride_a": stride_a, "stride_b": stride_b, "stride_c": stride_c, "stride_d": stride_d,
    }  # fmt: skip
    for name, size in optional_sizes.items():
        require(size, int, name, "hipblaslt_problem", optional=True)
    types: dict[str, object] = {"a_type": a_type, "b_type": b_type, "c_type": c_type, "d_type": d_type}
    for name, value in types.items():
        require(value, (str, DataType), name, "hipblaslt_problem", optional=name != "a_type")
    require(compute_input, (str, DataType), "compute_input", "hipblaslt_problem", optional=True)
    require(compute_type, str, "compute_type", "hipblaslt_problem")
    require(trans_a, str, "trans_a", "hipblaslt_problem")
    require(trans_b, str, "trans_b", "hipblaslt_problem")
    require(alpha, (int, float), "alpha", "hipblaslt_problem")
    require(beta, (int, float), "beta", "hipblaslt_problem")
    require(epilogue, HipblasltFields, "epilogue", "hipblaslt_problem", optional=True)
    a = parse_data_type(a_type)
    b = parse_data_type(b_type) if b_type is not None else a
    c = parse_data_type(c_type) if c_type is not None else (parse_data_type(d_type) if d_type is not None else b)
    d = parse_data_type(d_type) if d_type is not None else c
    name = compute_type_name(compute_type)
    compute = tensile_compute_type(name, version)
    fields = epilogue or HipblasltFields()
    updates: dict[str, Any] = {
        "compute_input_type": parse_data_type(compute_input) if compute_input is not None else (
            fields.compute_input_type or compute_input_type(a, b, name, version)
        ),
        "activation_compute_type": fields.activation_compute_type or compute,
    }  # fmt: skip
    try:
        return GemmProblem(
            m=m, n=n, k=k, batch=batch, trans_a=trans_a, trans_b=trans_b,
            a_type=a, b_type=b, c_type=c, d_type=d, compute_type=compute,
            hpa=compute.element_bytes > a.element_bytes,
            alpha=alpha, beta=beta,
            lda=lda, ldb=ldb, ldc=ldc, ldd=ldd if ldd is not None else max(1, m),
            stride_a=stride_a, stride_b=stride_b, stride_c=stride_c, stride_d=stride_d,
            strided_batched=True, c_equals_d=c_equals_d,
            f32_xdl_math_op=DataType.XFLOAT32 if name == XF32_COMPUTE else DataType.FLOAT,
            workspace_size=workspace_size,
            hipblaslt=fields.model_copy(update=updates) if epilogue is not None else _plain_fields(**updates),
        )  # fmt: skip
    except ValueError as error:
        raise SelectionError(f"invalid hipBLASLt problem: {one_line_reason(error)}") from None


@functools.lru_cache(maxsize=256)
def _plain_fields(compute_input_type: DataType, activation_compute_type: DataType) -> HipblasltFields:
    """The tensilelite fields of a problem without epilogue, one object per pair of types: the
    problems of one type then share it, which a batch compares by identity (``select_batch``)."""
    return HipblasltFields(compute_input_type=compute_input_type, activation_compute_type=activation_compute_type)


_QUERY_FIELDS = (
    "batch", "trans_a", "trans_b", "a_type", "b_type", "c_type", "d_type", "alpha", "beta",
    "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "c_equals_d",
)  # fmt: skip


def problem_from_hipblaslt_query(
    record: dict[str, Any], version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION
) -> GemmProblem:
    """A query line of ``corpus/select-hipblaslt`` as hipBLASLt's heuristic sees it.

    ``compute_type`` is a hipBLASLt compute type (``f32``, ``f32_fast_f16``, ``f32_fast_xf32`` …),
    ``compute_input_type`` (optional) tensilelite's, ``workspace_size`` the preference's maximum
    bytes (absent: 0; ``null``: unlimited). Unknown fields (``id``, ``expected`` …) are ignored.

    Raises:
        SelectionError: a field has an unusable value.
    """
    try:
        m, n, k = (int(record[name]) for name in ("m", "n", "k"))
    except (KeyError, TypeError, ValueError):
        raise SelectionError("a query needs integer m, n and k") from None
    arguments: dict[str, Any] = {
        name: record[name] for name in _QUERY_FIELDS if name in record and record[name] is not None
    }
    arguments["compute_type"] = str(record.get("compute_type") or "f32")
    if record.get("compute_input_type") is not None:
        arguments["compute_input"] = record["compute_input_type"]
    arguments["workspace_size"] = record["workspace_size"] if "workspace_size" in record else 0
    return check_default_strides(hipblaslt_problem(m, n, k, version=version, **arguments))


_ACTIVATIONS = {"relu": "Relu", "gelu": "Gelu", "silu": "Silu", "swish": "Silu", "clamp": "Clamp", "dgelu": "DGelu"}


def hipblaslt_problem_from_workload(
    gemm: Any, workspace_size: int | None = None, version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION
) -> GemmProblem:
    """The problem hipBLASLt's heuristic builds for one logged GEMM (``updateTensileProblem``):
    its sizes, layouts and types, alpha = beta = 1, and its epilogue (bias with its type and
    source, activation, scaleA/B, scaleAlphaVec, aux output, gradient), so a bias GEMM is not
    answered as a plain one. ``workspace_size`` None = unlimited (a log does not record it).

    Raises:
        SelectionError: a type, compute type or scale mode selection cannot represent.
    """
    from tensilekit.selection.workload_problem import epilogue_fields

    fields = epilogue_fields(gemm)
    activation = _ACTIVATIONS.get(fields.activation_type.lower(), fields.activation_type)
    updates: dict[str, Any] = {"activation_type": activation, "activation_enum": activation}
    if fields.use_bias and fields.bias_type is None:
        updates["bias_type"] = parse_data_type(gemm.d_type)  # hipBLASLt's default bias type: D's
    return hipblaslt_problem(
        gemm.m, gemm.n, gemm.k, batch=gemm.batch, trans_a=gemm.trans_a, trans_b=gemm.trans_b,
        a_type=gemm.a_type, b_type=gemm.b_type, c_type=gemm.c_type, d_type=gemm.d_type,
        compute_type=gemm.compute_type, workspace_size=workspace_size,
        lda=gemm.lda, ldb=gemm.ldb, ldc=gemm.ldc, ldd=gemm.ldd,
        stride_a=gemm.stride_a, stride_b=gemm.stride_b, stride_c=gemm.stride_c, stride_d=gemm.stride_d,
        epilogue=fields.model_copy(update=updates), version=version,
    )  # fmt: skip


__all__ = [
    "COMPUTE_TYPE_NAMES",
    "XF32_COMPUTE",
    "compute_input_type",
    "compute_type_name",
    "hipblaslt_problem",
    "hipblaslt_problem_from_workload",
    "problem_from_hipblaslt_query",
    "tensile_compute_type",
]

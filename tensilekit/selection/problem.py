"""The GEMM a selection query asks about, the hardware it runs on, and Tensile's view of both.

:class:`GemmProblem` is what a user states (BLAS vocabulary: M, N, K, batch, transposes, types,
alpha/beta, leading dimensions and strides, library flags) with BLAS defaults for everything left
out. :class:`Hardware` is the device (``AMDGPU`` in Tensile). :func:`contraction_problem` turns a
``GemmProblem`` into a :class:`ContractionProblem`: the fields Tensile's C++
``ContractionProblem`` exposes to predicates, distances and features (operation identifier, tensor
element sizes and strides, scalar restrictions, ``flopCount``, arithmetic intensity), laid out the
way rocBLAS ``ConstructTensileProblem`` builds it (``spec/selection.md`` b.9).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import operator
import re
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tensilekit._arguments import require
from tensilekit.errors import SelectionError, one_line_reason
from tensilekit.model.common import DataType, copied_with
from tensilekit.ranges import INT64, SIZE_T, checked_field

#: ``SIZE_MAX`` of the C++ runtime: an unlimited workspace, and the modulus of ``size_t`` products.
SIZE_MAX = (1 << 64) - 1
_SIZE_MOD = 1 << 64

Transpose = Literal["N", "T", "C"]


class PerformanceMetric(str, enum.Enum):
    """``PerformanceMetric`` of the problem (Tensile ``PerformanceMetricTypes.hpp``)."""

    AUTO = "Auto"
    DEVICE_EFFICIENCY = "DeviceEfficiency"
    CU_EFFICIENCY = "CUEfficiency"
    EXPERIMENTAL_DTREE = "ExperimentalDTree"
    EXPERIMENTAL_GRID = "ExperimentalGrid"
    EXPERIMENTAL_STREAMK = "ExperimentalStreamK"
    EXPERIMENTAL_MLP = "ExperimentalMLP"


class ScalarValue(str, enum.Enum):
    """Alpha/beta restriction (``ScalarValueTypes.hpp``): ``One`` for 1, ``NegativeOne`` for −1."""

    ANY = "Any"
    ONE = "One"
    NEGATIVE_ONE = "NegativeOne"

    @classmethod
    def of(cls, value: float) -> ScalarValue:
        if value == 1.0:
            return cls.ONE
        if value == -1.0:
            return cls.NEGATIVE_ONE
        return cls.ANY


# Tensile's abbreviations (``DataType.toChar``), longest first so "B8F8" wins over "B8".
_TYPE_CODES: dict[str, DataType] = {
    "4xi8": DataType.INT8X4,
    "F8B8": DataType.FLOAT8_BFLOAT8,
    "B8F8": DataType.BFLOAT8_FLOAT8,
    "F8N": DataType.FLOAT8_FNUZ,
    "B8N": DataType.BFLOAT8_FNUZ,
    "I64": DataType.INT64,
    "I8": DataType.INT8,
    "F8": DataType.FLOAT8,
    "B8": DataType.BFLOAT8,
    "S": DataType.FLOAT,
    "D": DataType.DOUBLE,
    "C": DataType.COMPLEX_FLOAT,
    "Z": DataType.COMPLEX_DOUBLE,
    "H": DataType.HALF,
    "B": DataType.BFLOAT16,
    "I": DataType.INT32,
    "X": DataType.XFLOAT32,
}
_CODE_PATTERN = re.compile("|".join(re.escape(code) for code in sorted(_TYPE_CODES, key=len, reverse=True)))

_CODE_OF_TYPE: dict[DataType, str] = {data_type: code for code, data_type in _TYPE_CODES.items()}


def type_code(data_type: DataType) -> str:
    """Tensile's abbreviation of a data type (``H`` for Half, ``4xi8`` for Int8x4): ``parse_data_type``'s inverse."""
    return _CODE_OF_TYPE[data_type]


# hipBLASLt / rocBLAS API spellings accepted as well.
_API_NAMES: dict[str, DataType] = {
    "f16_r": DataType.HALF,
    "bf16_r": DataType.BFLOAT16,
    "f32_r": DataType.FLOAT,
    "f64_r": DataType.DOUBLE,
    "xf32_r": DataType.XFLOAT32,
    "i8_r": DataType.INT8,
    "i32_r": DataType.INT32,
    "f32_c": DataType.COMPLEX_FLOAT,
    "f64_c": DataType.COMPLEX_DOUBLE,
    "f8_r": DataType.FLOAT8,
    "bf8_r": DataType.BFLOAT8,
    "f8_fnuz_r": DataType.FLOAT8_FNUZ,
    "bf8_fnuz_r": DataType.BFLOAT8_FNUZ,
}


# Short names people type (``--type bf16``) and ``hipDataType`` names (``HIP_R_16BF``).
SHORT_TYPE_NAMES: dict[str, DataType] = {
    "fp64": DataType.DOUBLE, "f64": DataType.DOUBLE, "double": DataType.DOUBLE,
    "fp32": DataType.FLOAT, "f32": DataType.FLOAT, "float": DataType.FLOAT, "single": DataType.FLOAT,
    "tf32": DataType.XFLOAT32, "xf32": DataType.XFLOAT32,
    "fp16": DataType.HALF, "f16": DataType.HALF, "half": DataType.HALF,
    "bf16": DataType.BFLOAT16, "bfloat16": DataType.BFLOAT16,
    "fp8": DataType.FLOAT8, "f8": DataType.FLOAT8, "bf8": DataType.BFLOAT8,
    "fp8_fnuz": DataType.FLOAT8_FNUZ, "bf8_fnuz": DataType.BFLOAT8_FNUZ,
    "int8": DataType.INT8, "i8": DataType.INT8, "int32": DataType.INT32, "i32": DataType.INT32,
    "int64": DataType.INT64,
    "c32": DataType.COMPLEX_FLOAT, "complex64": DataType.COMPLEX_FLOAT,
    "c64": DataType.COMPLEX_DOUBLE, "complex128": DataType.COMPLEX_DOUBLE,
    "hip_r_16f": DataType.HALF, "hip_r_16bf": DataType.BFLOAT16, "hip_r_32f": DataType.FLOAT,
    "hip_r_64f": DataType.DOUBLE, "hip_r_8i": DataType.INT8, "hip_r_32i": DataType.INT32,
    "hip_c_32f": DataType.COMPLEX_FLOAT, "hip_c_64f": DataType.COMPLEX_DOUBLE,
    "hip_r_8f_e4m3_fnuz": DataType.FLOAT8_FNUZ, "hip_r_8f_e5m2_fnuz": DataType.BFLOAT8_FNUZ,
    "hip_r_8f_e4m3": DataType.FLOAT8, "hip_r_8f_e5m2": DataType.BFLOAT8,
}  # fmt: skip


def parse_data_type(text: str | DataType) -> DataType:
    """One data type from any of its spellings: a Tensile name (``Half``, any case), abbreviation
    (``H``), hipBLASLt / rocBLAS API name (``f16_r``, ``rocblas_datatype_f16_r``), ``hipDataType``
    (``HIP_R_16F``) or short name (``fp16``, ``bf16``)."""
    if isinstance(text, DataType):
        return text
    known = _PARSED_TYPES.get(text)
    if known is not None:  # a query file names the same few types on every line
        return known
    found = _parse_data_type(text)
    if len(_PARSED_TYPES) < 1024:
        _PARSED_TYPES[text] = found
    return found


_PARSED_TYPES: dict[str, DataType] = {}


def _parse_data_type(text: str) -> DataType:
    token = text.strip()
    for member in DataType:
        if token == member.value or token.lower() == member.value.lower():
            return member
    if token in _TYPE_CODES:
        return _TYPE_CODES[token]
    lower = token.lower().removeprefix("rocblas_datatype_").removeprefix("hipblaslt_datatype_")
    if lower in _API_NAMES:
        return _API_NAMES[lower]
    if lower in SHORT_TYPE_NAMES:
        return SHORT_TYPE_NAMES[lower]
    raise SelectionError(
        f"unknown data type {text!r} (Tensile names such as Float/Half, codes S/D/H/B/I8/4xi8…, "
        "bf16_r, HIP_R_16BF or short names such as bf16)"
    )


# Tensile's problem-type names end in flags: ``HHS_BH`` (batched, HPA), ``B8B8S_BH_SR``.
_TYPE_NAME_FLAGS = re.compile(r"(?:_(?:[BH]+|SR))+$")


def _type_codes(raw: str) -> list[DataType] | None:
    """The types of a code string (``HHS``, ``hhs``, ``HHS_BH``, ``4xi8II``), or None."""
    for candidate in (raw, raw.upper().replace("4XI8", "4xi8")):
        codes = _TYPE_NAME_FLAGS.sub("", candidate)
        tokens = _CODE_PATTERN.findall(codes)
        if tokens and "".join(tokens) == codes:
            return [_TYPE_CODES[token] for token in tokens]
    return None


@dataclasses.dataclass(frozen=True)
class TypeSpec:
    """The five GEMM types: A, B, C, D and compute (alpha/beta)."""

    a: DataType
    b: DataType
    c: DataType
    d: DataType
    compute: DataType


def parse_type_spec(text: str) -> TypeSpec:
    """Parse ``--type``: one data type in any spelling :func:`parse_data_type` reads (``Half``,
    ``bf16``, ``bf16_r``, ``HIP_R_16BF``), a code string in either case, with or without Tensile's
    flag suffix (``S``, ``HHS``, ``hhs``, ``HHS_BH``, ``I8II``, ``4xi8II``, ``B8B8S``) or a comma
    list of those.

    One type means all five. Two mean (A/B, C/D/compute). Three mean (A/B, C/D, compute), which is
    how Tensile names its problem types (``HHS`` = half in, half out, float compute). Four mean
    (A, B, C/D, compute) and five (A, B, C, D, compute). Raises TypeError when ``text`` is no str.
    """
    require(text, str, "text", "parse_type_spec")
    raw = text.strip()
    if not raw:
        raise SelectionError("empty type specification")
    if "," in raw:
        parts = [parse_data_type(part) for part in raw.split(",")]
    else:
        try:
            parts = [parse_data_type(raw)]
        except SelectionError:
            codes = _type_codes(raw)
            if codes is None:
                raise SelectionError(f"cannot read type specification {text!r}") from None
            parts = codes
    if len(parts) == 1:
        (t,) = parts
        return TypeSpec(t, t, t, t, t)
    if len(parts) == 2:
        ab, cd = parts
        return TypeSpec(ab, ab, cd, cd, cd)
    if len(parts) == 3:
        ab, cd, compute = parts
        return TypeSpec(ab, ab, cd, cd, compute)
    if len(parts) == 4:
        a, b, cd, compute = parts
        return TypeSpec(a, b, cd, cd, compute)
    if len(parts) == 5:
        return TypeSpec(*parts)
    raise SelectionError(f"type specification {text!r} names {len(parts)} types; at most 5 (a, b, c, d, compute)")


def _input_bytes_for_hpa(data_type: DataType) -> int:
    # rocBLAS compares sizeof(Tc) with sizeof(Ti); for int8x4 Ti is int8_t.
    return 1 if data_type is DataType.INT8X4 else data_type.element_bytes


class HipblasltFields(BaseModel):
    """Problem fields only tensilelite (hipBLASLt) predicates read; defaults = feature unused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    compute_input_type: DataType | None = None
    """``computeInputType`` (5th entry of tensilelite ``TypesEqual``); None means the A type."""
    grouped_gemm: bool = False
    grouped_gemm_count: int = 1
    use_bias: int = 0
    bias_type: DataType | None = None
    bias_src: Literal["A", "B", "C", "D"] = "D"
    bias_length: int | None = None
    activation_type: str = "None"
    activation_enum: str = "None"
    activation_compute_type: DataType | None = None
    activation_no_guard: bool = False
    use_e: bool = False
    e_type: DataType | None = None
    use_gradient: bool = False
    use_scale_ab: str = ""
    use_scale_cd: bool = False
    use_scale_alpha_vec: int = 0
    output_amax_d: bool = False
    sparse: int = 0
    swizzle_tensor_a: bool = False
    swizzle_tensor_b: bool = False
    use_device_user_arguments: bool = False
    gsu: int = 0
    """``getParams().gsu()``: a GSU the caller forces (0 = the solution's own)."""
    factor_dim: int = 0
    fallback_status: bool = False


class GemmProblem(BaseModel):
    """A GEMM as a caller states it, with BLAS defaults for what is left out.

    ``D = alpha · op(A) · op(B) + beta · C``, column major, ``op(A)`` is M×K, ``op(B)`` is K×N,
    ``batch`` matrices. Leading dimensions default to the tight BLAS minimum (``lda = M`` for
    ``trans_a="N"``, else K, at least 1) and batch strides to one matrix (``stride_a = lda · cols``).
    ``hpa`` defaults to rocBLAS's rule ``sizeof(compute) > sizeof(input)``. ``alpha=1, beta=0`` are
    rocblas-bench's defaults. ``workspace_size=None`` means unlimited (``SIZE_MAX``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    # the batch's view of the problem, made once by the validation (see batch_row): outside
    # __dict__, so equality, hashing, dumps and the schema do not see it; a copy is made without it
    __slots__ = ("__tensilekit_batch_row__",)

    m: int = Field(ge=0)
    n: int = Field(ge=0)
    k: int = Field(ge=0)
    batch: int = Field(default=1, ge=0)
    trans_a: Transpose = "N"
    trans_b: Transpose = "N"
    a_type: DataType = DataType.FLOAT
    b_type: DataType | None = None
    c_type: DataType | None = None
    d_type: DataType | None = None
    compute_type: DataType | None = None
    hpa: bool | None = None
    alpha: float = 1.0
    beta: float = 0.0
    lda: int | None = Field(default=None, ge=0)
    ldb: int | None = Field(default=None, ge=0)
    ldc: int | None = Field(default=None, ge=0)
    ldd: int | None = Field(default=None, ge=0)
    stride_a: int | None = Field(default=None, ge=0)
    stride_b: int | None = Field(default=None, ge=0)
    stride_c: int | None = Field(default=None, ge=0)
    stride_d: int | None = Field(default=None, ge=0)
    strided_batched: bool = True
    performance_metric: PerformanceMetric = PerformanceMetric.DEVICE_EFFICIENCY
    fp16_alt_impl: bool = False
    fp16_alt_impl_round: bool = False
    stochastic_rounding: bool = False
    deterministic: bool = False
    c_equals_d: bool = True
    f32_xdl_math_op: DataType = DataType.FLOAT
    workspace_size: int | None = Field(default=None, ge=0)
    kernel_language: Literal["Any", "Assembly", "Source"] = "Any"
    arithmetic_unit: Literal["Any", "MFMA", "VALU"] = "Any"
    persistent_kernel_eligible: bool = True
    hipblaslt: HipblasltFields = HipblasltFields()

    @field_validator("a_type", "b_type", "c_type", "d_type", "compute_type", "f32_xdl_math_op", mode="before")
    @classmethod
    def _parse_type(cls, value: Any) -> Any:
        return parse_data_type(value) if isinstance(value, str) else value

    @field_validator("m", "n", "k", "batch", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d")
    @classmethod
    def _fits_int64(cls, value: int | None) -> int | None:
        # The runtimes take these as int64_t (hipBLASLt, rocBLAS's _64 API); Tensile keeps size_t,
        # where 2^63 and more wraps through those arguments: no answer to reproduce, so refused.
        return None if value is None else checked_field(value, INT64)

    @field_validator("workspace_size")
    @classmethod
    def _fits_size_t(cls, value: int | None) -> int | None:
        return None if value is None else checked_field(value, SIZE_T)

    @field_validator("trans_a", "trans_b", mode="before")
    @classmethod
    def _upper_transpose(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _fill_types(self) -> GemmProblem:
        # Resolve the defaults once so every later reader sees concrete values.
        b = self.b_type or self.a_type
        c = self.c_type or (self.d_type or b)
        d = self.d_type or c
        compute = self.compute_type or d
        hpa = self.hpa
        if hpa is None:
            hpa = compute.element_bytes > _input_bytes_for_hpa(self.a_type)
        for name, value in (("b_type", b), ("c_type", c), ("d_type", d), ("compute_type", compute), ("hpa", hpa)):
            object.__setattr__(self, name, value)
        try:
            object.__setattr__(self, _BATCH_ROW_SLOT, batch_row(self))
        except (struct.error, TypeError):  # not for validated fields; if ever, the batch reads it field by field
            pass
        return self

    @classmethod
    def from_types(cls, m: int, n: int, k: int, types: str | TypeSpec, **fields: Any) -> GemmProblem:
        """Build with a ``--type``-style specification (``"HHS"``, ``"Half,Half,Float"``…)."""
        spec = parse_type_spec(types) if isinstance(types, str) else types
        return cls(
            m=m,
            n=n,
            k=k,
            a_type=spec.a,
            b_type=spec.b,
            c_type=spec.c,
            d_type=spec.d,
            compute_type=spec.compute,
            **fields,
        )


class Hardware(BaseModel):
    """The device (Tensile ``AMDGPU``): processor, compute-unit count, APU flag.

    ``cu_count=None`` means unknown: ``CUCount`` predicates then never hold, so CU-specific library
    rows are skipped in favour of the generic rows. ``wavefront_size``/``simd_per_cu`` feed only
    the granularity model of ``GranularitySelection`` nodes (defaults: 32 on gfx10+, else 64; 4).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str
    cu_count: int | None = Field(default=None, ge=0)
    is_apu: bool = False
    # PCI device ID (hipDeviceAttributePciChipId, e.g. 0x75a3): tensilelite's PciChipId rows
    pci_chip_id: int | None = Field(default=None, ge=0)
    wavefront_size: int | None = None
    simd_per_cu: int = 4

    @field_validator("arch", mode="before")
    @classmethod
    def _normalise_arch(cls, value: Any) -> Any:
        # "gfx90a:sramecc+:xnack-" names the same Processor as "gfx90a".
        return value.split(":", 1)[0].strip().lower() if isinstance(value, str) else value

    @field_validator("is_apu", mode="before")
    @classmethod
    def _int_flag(cls, value: Any) -> Any:
        return bool(value) if isinstance(value, int) else value

    @property
    def wavefront(self) -> int:
        if self.wavefront_size is not None:
            return self.wavefront_size
        match = re.match(r"gfx(\d+)", self.arch)
        return 32 if match and len(match.group(1)) >= 4 else 64


def operation_identifier(trans_a: str, trans_b: str, complex_types: bool) -> str:
    """``Contraction_l_A{ilk|lik}[C]_B{ljk|jlk}[C]_Cijk_Dijk`` (ContractionProblem.cpp)."""
    a = "Alik" if trans_a in ("T", "C") else "Ailk"
    b = "Bjlk" if trans_b in ("T", "C") else "Bljk"
    if complex_types and trans_a == "C":
        a += "C"
    if complex_types and trans_b == "C":
        b += "C"
    return f"Contraction_l_{a}_{b}_Cijk_Dijk"


_PACKING = {DataType.INT8X4: 4}
_COMPLEX = (DataType.COMPLEX_FLOAT, DataType.COMPLEX_DOUBLE)


@dataclasses.dataclass(slots=True)
class ContractionProblem:
    """Tensile's view of a GEMM: what ``ContractionProblem`` answers when predicates ask.

    Sizes follow Tensile's problem-size order ``size(i) = [M, N, batch, K][i]``. Every tensor has
    unit stride in dimension 0; ``ld*`` are the dimension-1 strides and ``stride_*`` the batch
    strides. ``flop_count`` wraps modulo 2**64 as C++ ``size_t`` does.

    Treat instances as immutable. (They are not frozen because building one sits on the hot path
    of every query, and a frozen dataclass ``__init__`` costs several microseconds more.)
    """

    m: int
    n: int
    k: int
    batch: int
    trans_a: str
    trans_b: str
    op_id: str
    a_type: DataType
    b_type: DataType
    c_type: DataType
    d_type: DataType
    compute_type: DataType
    compute_input_type: DataType
    a_bytes: int
    b_bytes: int
    c_bytes: int
    d_bytes: int
    lda: int
    ldb: int
    ldc: int
    ldd: int
    stride_a: int
    stride_b: int
    stride_c: int
    stride_d: int
    hpa: bool
    strided_batched: bool
    performance_metric: PerformanceMetric
    fp16_alt_impl: bool
    fp16_alt_impl_round: bool
    stochastic_rounding: bool
    deterministic: bool
    c_equals_d: bool
    f32_xdl_math_op: DataType
    kernel_language: str
    arithmetic_unit: str
    persistent_kernel_eligible: bool
    alpha: float
    beta: float
    alpha_restriction: str
    beta_restriction: str
    workspace_size: int
    lite: HipblasltFields

    @property
    def flop_count(self) -> int:
        """``ContractionProblem::flopCount``: ``2·packing·M·N·batch·K`` (int8x4 packs 4), mod 2**64."""
        return (2 * _PACKING.get(self.a_type, 1) * self.m * self.n * self.batch * self.k) % _SIZE_MOD

    @property
    def arithmetic_intensity(self) -> float:
        """``ContractionProblem::arithmeticIntensity``: GFLOP per GB moved (C read twice if beta≠0)."""
        return _arithmetic_intensity(
            self.m, self.n, self.k, self.batch, (self.a_bytes, self.b_bytes, self.c_bytes), self.beta
        )

    def size(self, index: int) -> int:
        """``problem.size(i)``: C sizes (M, N, batch) then bound sizes (K)."""
        sizes = (self.m, self.n, self.batch, self.k)
        if not 0 <= index < len(sizes):
            raise SelectionError(f"size index {index} is out of range for a GEMM (0=M, 1=N, 2=batch, 3=K)")
        return sizes[index]

    def stride(self, tensor: str, index: int) -> int:
        """``X.strides()[i]`` for tensor ``a``/``b``/``c``/``d``."""
        strides = {
            "a": (1, self.lda, self.stride_a),
            "b": (1, self.ldb, self.stride_b),
            "c": (1, self.ldc, self.stride_c),
            "d": (1, self.ldd, self.stride_d),
        }[tensor]
        if not 0 <= index < 3:
            raise SelectionError(f"stride index {index} is out of range for a GEMM tensor (0..2)")
        return strides[index]

    @property
    def key_sizes(self) -> tuple[int, int, int, int]:
        return (self.m, self.n, self.batch, self.k)


def _arithmetic_intensity(m: int, n: int, k: int, batch: int, bytes_abc: tuple[int, int, int], beta: float) -> float:
    # ContractionProblem::arithmeticIntensity, operand by operand: size_t products (mod 2**64)
    # converted to double before the 1e-9 scaling.
    gflop = float((2 * m * n * batch * k) % _SIZE_MOD) * 1e-9
    a_size = (m * k * batch) % _SIZE_MOD
    b_size = (k * n * batch) % _SIZE_MOD
    c_size = (m * n * batch) % _SIZE_MOD
    if beta != 0:
        gflop += float((2 * c_size) % _SIZE_MOD) * 1e-9
        c_size = (2 * c_size) % _SIZE_MOD
    gbyte = float((a_size * bytes_abc[0] + b_size * bytes_abc[1] + c_size * bytes_abc[2]) % _SIZE_MOD) * 1e-9
    if gbyte == 0:
        return float("nan") if gflop == 0 else float("inf")
    return gflop / gbyte


def contraction_problem(problem: GemmProblem, *, rocblas_k0: bool = False) -> ContractionProblem:
    """Tensile's view of ``problem`` (rocBLAS ``ConstructTensileProblem`` layout).

    With ``rocblas_k0`` K becomes 0 when ``alpha == 0``, as rocBLAS does before it calls Tensile
    (``tensile_host.cpp``); leading dimensions and strides keep their values. The default models
    Tensile itself, which uses K as given (the golden corpus does). Raises TypeError when
    ``problem`` is not a GemmProblem.
    """
    if not isinstance(problem, GemmProblem):
        raise TypeError(f"contraction_problem(): problem must be GemmProblem, not {type(problem).__name__}")
    f = problem.__dict__  # plain field reads: this function is on every query's hot path
    m, n, k, batch = f["m"], f["n"], f["k"], f["batch"]
    trans_a, trans_b = f["trans_a"], f["trans_b"]
    a_normal = trans_a == "N"
    b_normal = trans_b == "N"
    lda = f["lda"]
    if lda is None:
        lda = max(1, m if a_normal else k)
    ldb = f["ldb"]
    if ldb is None:
        ldb = max(1, k if b_normal else n)
    ldc = f["ldc"]
    if ldc is None:
        ldc = max(1, m)
    ldd = f["ldd"]
    if ldd is None:
        ldd = ldc
    stride_a = f["stride_a"]
    if stride_a is None:
        stride_a = lda * (k if a_normal else m)
    stride_b = f["stride_b"]
    if stride_b is None:
        stride_b = ldb * (n if b_normal else k)
    stride_c = f["stride_c"]
    if stride_c is None:
        stride_c = ldc * n
    stride_d = f["stride_d"]
    if stride_d is None:
        stride_d = ldd * n
    alpha, beta = f["alpha"], f["beta"]
    if rocblas_k0 and alpha == 0:
        k = 0
    a_type = f["a_type"]
    b_type, c_type, d_type = f["b_type"], f["c_type"], f["d_type"]  # concrete after validation
    lite = f["hipblaslt"]
    if a_type in _COMPLEX:
        op_id = operation_identifier(trans_a, trans_b, True)
    else:
        op_id = _OP_IDS.get((trans_a, trans_b)) or operation_identifier(trans_a, trans_b, False)
    workspace = f["workspace_size"]
    return ContractionProblem(
        m,
        n,
        k,
        batch,
        trans_a,
        trans_b,
        op_id,
        a_type,
        b_type,
        c_type,
        d_type,
        f["compute_type"],
        lite.compute_input_type or a_type,
        _BYTES[a_type],
        _BYTES[b_type],
        _BYTES[c_type],
        _BYTES[d_type],
        lda,
        ldb,
        ldc,
        ldd,
        stride_a,
        stride_b,
        stride_c,
        stride_d,
        f["hpa"],
        f["strided_batched"],
        f["performance_metric"],
        f["fp16_alt_impl"],
        f["fp16_alt_impl_round"],
        f["stochastic_rounding"],
        f["deterministic"],
        f["c_equals_d"],
        f["f32_xdl_math_op"],
        f["kernel_language"],
        f["arithmetic_unit"],
        f["persistent_kernel_eligible"],
        alpha,
        beta,
        "One" if alpha == 1.0 else ("NegativeOne" if alpha == -1.0 else "Any"),
        "One" if beta == 1.0 else ("NegativeOne" if beta == -1.0 else "Any"),
        SIZE_MAX if workspace is None else workspace,
        lite,
    )


_OP_IDS = {(a, b): operation_identifier(a, b, False) for a in ("N", "T", "C") for b in ("N", "T", "C")}
_BYTES = {member: member.element_bytes for member in DataType}


#: Query fields of ``corpus/select/*.jsonl`` lines that map 1:1 onto :class:`GemmProblem`.
_QUERY_PROBLEM_FIELDS = (
    "m", "n", "k", "batch", "trans_a", "trans_b", "a_type", "b_type", "c_type", "d_type", "compute_type", "hpa",
    "alpha", "beta", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "strided_batched",
    "performance_metric", "fp16_alt_impl", "fp16_alt_impl_round", "stochastic_rounding", "deterministic",
    "c_equals_d", "f32_xdl_math_op", "workspace_size", "kernel_language", "arithmetic_unit",
)  # fmt: skip


def check_default_strides(problem: GemmProblem) -> GemmProblem:
    """``problem`` when every stride it leaves out (ld x columns, :func:`contraction_problem`'s
    defaults) fits int64; else :class:`SelectionError`. Query readers call it: such a stride is
    none a runtime could be given (hipBLASLt's are int64_t), and the compiled path keeps int64
    columns. The model itself keeps Tensile's size_t arithmetic (products wrap mod 2^64)."""
    lds = (problem.lda or 0) | (problem.ldb or 0) | (problem.ldc or 0) | (problem.ldd or 0)
    if (problem.m | problem.n | problem.k | lds) < 1 << 31:
        return problem  # every product below fits: the common case costs one test
    a_normal, b_normal = problem.trans_a == "N", problem.trans_b == "N"
    m, n, k = problem.m, problem.n, problem.k
    lda = problem.lda if problem.lda is not None else max(1, m if a_normal else k)
    ldb = problem.ldb if problem.ldb is not None else max(1, k if b_normal else n)
    ldc = problem.ldc if problem.ldc is not None else max(1, m)
    ldd = problem.ldd if problem.ldd is not None else ldc
    defaults = {
        "stride_a": (problem.stride_a, lda * (k if a_normal else m)),
        "stride_b": (problem.stride_b, ldb * (n if b_normal else k)),
        "stride_c": (problem.stride_c, ldc * n),
        "stride_d": (problem.stride_d, ldd * n),
    }
    for name, (given, default) in defaults.items():
        if given is None and default > INT64.high:
            raise SelectionError(
                f"{name} left out is ld x columns = {default}, over the C++ int64_t maximum {INT64.high} (give {name})"
            )
    return problem


def problem_from_query(record: dict[str, Any]) -> GemmProblem:
    """A :class:`GemmProblem` from one query object (the ``corpus/select`` JSON-lines format).

    Unknown fields (``id``, ``expected``, ``category`` …) are ignored; absent ones take defaults.

    Raises:
        SelectionError: a field has an unusable value.
        TypeError: ``record`` is not a mapping.
    """
    if not isinstance(record, Mapping):
        raise TypeError(f"problem_from_query(): record must be a mapping, not {type(record).__name__}")
    fast = _from_template(record)
    if fast is not None:
        return fast
    fields = {name: record[name] for name in _QUERY_PROBLEM_FIELDS if name in record and record[name] is not None}
    try:
        problem = GemmProblem(**fields)
    except ValueError as error:
        raise SelectionError(f"invalid query: {one_line_reason(error)}") from None
    return check_default_strides(problem)


def problem_record(problem: GemmProblem) -> dict[str, Any]:
    """The full problem as JSON (fields left at their defaults are left out; ``workspace_size``
    is always written, None = unlimited): :func:`problem_of_record` (and
    :meth:`tensilekit.library.Library.problem_from_query`) rebuilds it exactly."""
    fields_set = problem.__pydantic_fields_set__
    copies = _COPIES.get(id(fields_set))
    record = _record_of_copy(problem, copies[1]) if copies is not None and copies[0] is fields_set else None
    if record is None:
        record = problem.model_dump(mode="json", exclude_defaults=True)
    for name in ("m", "n", "k"):
        record[name] = getattr(problem, name)
    record["workspace_size"] = problem.workspace_size
    return record


def _record_of_copy(problem: GemmProblem, layout: tuple[tuple[str, Any, bool], ...] | None) -> dict[str, Any] | None:
    """``problem.model_dump(mode="json", exclude_defaults=True)`` of a copy of a template
    (:func:`_from_template`) from the template's own dump: only its numbers are read, each
    written unless it equals its default (None: the template's dump holds a container, which
    the records must not share: dumped in full)."""
    if layout is None:
        return None
    values = problem.__dict__
    record: dict[str, Any] = {}
    for name, value, number in layout:
        if number:
            given = values[name]
            if given == value:  # the default: left out, as exclude_defaults does
                continue
            value = given  # a plain int or float: its JSON form is itself (inf and nan too)
        record[name] = value
    return record


def _record_layout(template: GemmProblem, numbers: Iterable[str]) -> tuple[tuple[str, Any, bool], ...] | None:
    """How :func:`_record_of_copy` builds the record of a copy of ``template`` with new
    ``numbers``: per field in the model's order, (name, its default, True) for a number, (name,
    the template's JSON value, False) for another field the template's dump writes."""
    dumped = template.model_dump(mode="json", exclude_defaults=True)
    varying = set(numbers)
    layout: list[tuple[str, Any, bool]] = []
    for name, field in GemmProblem.model_fields.items():
        if name in varying:
            layout.append((name, field.default, True))  # m, n, k: PydanticUndefined, never equal
        elif name in dumped:
            if isinstance(dumped[name], (dict, list)):
                return None  # one container shared by every record: dumped in full instead
            layout.append((name, dumped[name], False))
    return tuple(layout)


def problem_of_record(record: dict[str, Any]) -> GemmProblem:
    """The problem a tensilekit answer's ``problem`` object describes, exactly (every field).

    Raises:
        SelectionError: the object is not a problem.
    """
    try:
        return GemmProblem.model_validate(record)
    except ValueError as error:
        raise SelectionError(f"invalid problem object: {error}") from None


GEMM_SIZE_FIELDS = ("m", "n", "k", "batch", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d", "workspace_size")  # fmt: skip
GEMM_SCALAR_FIELDS = ("alpha", "beta")
GEMM_NUMBER_FIELDS = GEMM_SIZE_FIELDS + GEMM_SCALAR_FIELDS
""":class:`GemmProblem`'s numbers (``m``, ``n``, ``k``, ``batch`` first): what differs from one GEMM
of a problem type to the next. The rest (types, transposes, flags) is the problem type."""

BATCH_ROW = struct.Struct("<12qQ2dq")
""":func:`batch_row`'s layout: ``m n k batch lda ldb ldc ldd stride_a stride_b stride_c stride_d``
as int64 (-1: left out), ``workspace_size`` as uint64 (``SIZE_MAX``: unlimited), ``alpha beta``
as double, the problem type's number (:func:`problem_type_number`) as int64."""
BATCH_ROW_FIELDS = GEMM_NUMBER_FIELDS + ("problem_type",)
_BATCH_ROW_SLOT = "__tensilekit_batch_row__"
# the fields of the problem type (besides the tensilelite fields, numbered on their own)
_TYPE_FIELDS = tuple(
    name for name in GemmProblem.model_fields if name not in GEMM_NUMBER_FIELDS and name != "hipblaslt"
)
_type_values = operator.itemgetter(*_TYPE_FIELDS)
_SIZES = operator.itemgetter("m", "n", "k", "batch")
_LEADING_FIELDS = operator.itemgetter("lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d")
#: Problem types (and tensilelite field sets) numbered at most: past it, a new one has no number
#: (-1) and a batch of it is read field by field.
PROBLEM_TYPES_AT_MOST = 1 << 16
_TYPE_NUMBERS: dict[tuple[Any, ...], int] = {}
_LITE_NUMBERS: dict[tuple[Any, ...], int] = {}
# numbers drawn with next() and stored with setdefault: threads building problems at once never
# give two types one number (a number may be skipped)
_COUNTERS = {id(_TYPE_NUMBERS): itertools.count(), id(_LITE_NUMBERS): itertools.count()}
# id -> (the HipblasltFields, its number): the problems of one type mostly share one object. Few
# are kept: each entry keeps its object alive (so that its id is not reused), and problems made
# one by one each get a copy of their own (4 096 entries held ~6 MB of dead copies)
_LITE_BY_ID: dict[int, tuple[HipblasltFields, int]] = {}
_LITE_BY_ID_AT_MOST = 16


def _number(numbers: dict[tuple[Any, ...], int], key: tuple[Any, ...]) -> int:
    number = numbers.get(key)
    if number is None:
        if len(numbers) >= PROBLEM_TYPES_AT_MOST:
            return -1
        number = numbers.setdefault(key, next(_COUNTERS[id(numbers)]))
    return number


def problem_type_number(problem: GemmProblem) -> int:
    """A number for ``problem``'s type: every field but its numbers (:data:`GEMM_NUMBER_FIELDS`),
    equal numbers for equal types within this process; -1 when :data:`PROBLEM_TYPES_AT_MOST`
    types are numbered already."""
    fields = problem.__dict__
    lite = fields["hipblaslt"]
    known = _LITE_BY_ID.get(id(lite))
    if known is not None and known[0] is lite:
        lite_number = known[1]
    else:
        lite_number = _number(_LITE_NUMBERS, tuple(lite.__dict__.values()))
        if len(_LITE_BY_ID) >= _LITE_BY_ID_AT_MOST:
            _LITE_BY_ID.clear()
        _LITE_BY_ID[id(lite)] = (lite, lite_number)  # kept alive: its id is not reused meanwhile
    if lite_number < 0:
        return -1
    return _number(_TYPE_NUMBERS, (_type_values(fields), lite_number))


def batch_row(problem: GemmProblem) -> bytes:
    """``problem``'s numbers and type number as one :data:`BATCH_ROW` (what a batch reads of it:
    one attribute per problem, where each field read costs as much). A validated GemmProblem
    carries it (:func:`known_batch_row`); raises ``struct.error`` for a number the row cannot hold
    (a problem built without validation)."""
    fields = problem.__dict__
    lda, ldb, ldc, ldd, stride_a, stride_b, stride_c, stride_d = _LEADING_FIELDS(fields)
    workspace = fields["workspace_size"]
    # spelled out: each problem's validation makes one (a loop over the fields cost a third more)
    return BATCH_ROW.pack(
        *_SIZES(fields),
        -1 if lda is None else lda,
        -1 if ldb is None else ldb,
        -1 if ldc is None else ldc,
        -1 if ldd is None else ldd,
        -1 if stride_a is None else stride_a,
        -1 if stride_b is None else stride_b,
        -1 if stride_c is None else stride_c,
        -1 if stride_d is None else stride_d,
        SIZE_MAX if workspace is None else workspace,
        fields["alpha"],
        fields["beta"],
        problem_type_number(problem),
    )


#: ``known_batch_row(problem)``: the row the validation made (AttributeError for a problem made
#: without it: ``model_copy``, ``model_construct``, unpickled; :func:`batch_row` then).
known_batch_row = operator.attrgetter(_BATCH_ROW_SLOT)
# what each query field is to _from_template: 1 a size, 2 a scalar, 3 another problem field
_FIELD_KINDS: dict[str, int] = {
    name: 1 if name in GEMM_SIZE_FIELDS else 2 if name in GEMM_SCALAR_FIELDS else 3 for name in _QUERY_PROBLEM_FIELDS
}
# a record's field names, in its order -> its size, scalar and other problem fields (a query
# file's lines share one or two key orders: the fields are sorted out once per order)
_LAYOUTS: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], Any, int]] = {}
_LAYOUT_NUMBERS = itertools.count()  # a number per layout ever made (never reused after a clear)
# the layout's number, the other fields' values and value types, and which numbers are given -> (the problem
# validated with zero numbers, the fields set of its copies: one set shared by all of them, as
# pydantic copies it before changing it)
_TEMPLATES: dict[tuple[Any, ...], tuple[GemmProblem, set[str]]] = {}
# id of a template's fields set -> (that set, its copies' record layout: _record_layout). A
# problem holding that very set is a copy of the template (GemmProblem is frozen, and
# model_copy copies the set): problem_record reads only its numbers
_COPIES: dict[int, tuple[set[str], tuple[tuple[str, Any, bool], ...] | None]] = {}


def _from_template(record: Mapping[str, Any]) -> GemmProblem | None:
    """``GemmProblem(**fields)`` of a query record's problem fields without validating it again
    when only its numbers are new.

    A query file repeats a few problem types with many sizes. The problem is validated once per
    distinct set of other fields (and of which numbers are given) with zero numbers, then copied
    with this line's numbers, which are plain values the validation would keep as they are
    (a non-negative ``int`` for a size, a ``float`` or small ``int`` for alpha/beta; the fields'
    only validators are the bounds, and the types' defaults do not read the numbers). Anything
    else (a bool, a float size, a string, a negative number, a size of 2^31 or more, whose bounds
    and left-out strides need checking) returns None: validated in full. Fields set to None are
    left out (their defaults), as :func:`problem_from_query` does."""
    names = tuple(record)
    layout = _LAYOUTS.get(names)
    if layout is None:
        kinds = [_FIELD_KINDS.get(name) for name in names]

        def of_kind(wanted: int) -> tuple[str, ...]:
            return tuple(name for name, kind in zip(names, kinds, strict=True) if kind == wanted)

        others = of_kind(3)
        # the other fields' values in one C call (an itemgetter of one name returns no tuple)
        read: Callable[[Mapping[str, Any]], tuple[Any, ...]] = (
            operator.itemgetter(*others) if len(others) > 1 else lambda record: tuple(record[n] for n in others)
        )
        layout = (of_kind(1), of_kind(2), others, read, next(_LAYOUT_NUMBERS))
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[names] = layout
    sizes, scalars, others, read_others, layout_number = layout
    numbers: dict[str, Any] = {}
    for name in sizes:
        value = record[name]
        if value is None:
            continue
        # 2^31 and over: validated in full (the int64/int32 bounds, check_default_strides)
        if type(value) is not int or value < 0 or value >= 1 << 31:
            return None
        numbers[name] = value
    for name in scalars:
        value = record[name]
        if value is None:
            continue
        if type(value) is int and -(2**53) <= value <= 2**53:
            value = float(value)
        elif type(value) is not float:
            return None
        numbers[name] = value
    values = read_others(record)
    # the layout's number stands for ``others`` (cheaper to hash); 1 and True differ by type
    key = (layout_number, values, tuple(map(type, values)), tuple(numbers))
    try:
        known = _TEMPLATES.get(key)
    except TypeError:  # an unhashable value (a list): validated in full
        return None
    if known is None:
        given = {name: value for name, value in zip(others, values, strict=True) if value is not None}
        try:
            template = GemmProblem(**given, **dict.fromkeys(numbers, 0))
        except ValueError:
            return None  # refused in full, with the message
        if len(_TEMPLATES) >= 4096:
            _TEMPLATES.clear()
            _COPIES.clear()
        known = _TEMPLATES[key] = (template, template.__pydantic_fields_set__ | numbers.keys())
        _COPIES[id(known[1])] = (known[1], _record_layout(template, numbers))
    # the numbers are valid as they are (above): the template's validation holds for the copy
    return copied_with(known[0], numbers, known[1])


def hardware_from_query(record: dict[str, Any], default: Hardware | None = None) -> Hardware:
    """The query's own ``arch``/``cu_count``/``is_apu``, falling back to ``default``.

    Raises SelectionError for unusable values, TypeError for arguments of the wrong type."""
    if not isinstance(record, Mapping):
        raise TypeError(f"hardware_from_query(): record must be a mapping, not {type(record).__name__}")
    if default is not None and not isinstance(default, Hardware):
        raise TypeError(f"hardware_from_query(): default must be Hardware or None, not {type(default).__name__}")
    own = tuple((type(value), value) for value in map(record.get, _DEVICE_FIELDS))  # 1 and True differ
    try:
        known = _DEVICES.get((default, own))
    except TypeError:  # an unhashable value: validated (and refused) below
        known = None
    if known is not None:  # a query file names a few devices (Hardware is frozen: shared)
        return known
    found = _hardware_from_query(record, default)
    if len(_DEVICES) < 4096:
        _DEVICES[(default, own)] = found
    return found


_DEVICE_FIELDS = ("arch", "cu_count", "is_apu", "pci_chip_id")
_DEVICES: dict[tuple[Hardware | None, tuple[Any, ...]], Hardware] = {}


def _hardware_from_query(record: dict[str, Any], default: Hardware | None) -> Hardware:
    base: dict[str, Any] = default.model_dump() if default is not None else {}
    for name in _DEVICE_FIELDS:
        if record.get(name) is not None:
            value = record[name]
            # a chip ID may be written as hex text ("0x75a3")
            try:
                base[name] = int(value, 0) if name == "pci_chip_id" and isinstance(value, str) else value
            except ValueError:
                raise SelectionError(f"invalid hardware: pci_chip_id {value!r:.40} is no number") from None
    if "arch" not in base:
        raise SelectionError("query names no arch and no default arch was given")
    try:
        return Hardware(**base)
    except ValueError as error:
        raise SelectionError(f"invalid hardware: {one_line_reason(error)}") from None


__all__ = [
    "SHORT_TYPE_NAMES",
    "SIZE_MAX",
    "check_default_strides",
    "ContractionProblem",
    "GemmProblem",
    "Hardware",
    "HipblasltFields",
    "PerformanceMetric",
    "ScalarValue",
    "Transpose",
    "TypeSpec",
    "contraction_problem",
    "hardware_from_query",
    "operation_identifier",
    "parse_data_type",
    "parse_type_spec",
    "problem_from_query",
    "problem_of_record",
    "problem_record",
    "type_code",
]

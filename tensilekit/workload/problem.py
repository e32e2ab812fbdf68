"""One GEMM problem as hipBLASLt sees it: sizes, layouts, types, epilogue flags and a call count.

Everything is in hipBLASLt's column-major terms (``m``/``n``/``k`` of ``hipblasLtMatmul``, the
same numbers a ``HIPBLASLT_LOG_MASK`` line or ``hipblaslt-bench`` prints). Type names are
hipBLASLt's bench/profile spellings: data types ``f16_r``, ``bf16_r``, ``f32_r``, ``f8_r`` …,
compute types in the ``hipblasComputeType_t`` form ``c_f32_r``, ``c_xf32_r`` … (the form the
profile log and ``hipblaslt-bench --yaml`` use). Bench spellings such as ``--compute_type f32_r``
are normalised to that form on input, so problems from different sources compare equal.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tensilekit.ranges import BATCH, INT64, SIZE, SOLUTION_INDEX, checked_field

Transpose = Literal["N", "T"]
BiasSource = Literal["a", "b", "d"]


@dataclasses.dataclass(frozen=True)
class TypeInfo:
    """What tensilekit knows about one hipBLASLt data type name."""

    name: str
    tensile: str
    """Tensile's type letter(s) as used in GEMM type names (``H``, ``B``, ``F8`` …)."""
    complex: bool = False


# hipBLASLt data-type spellings -> Tensile letters. ``f8_r``/``bf8_r`` are printed for both FNUZ
# and OCP fp8 by older hipBLASLt; newer ones print ``f8_fnuz_r`` for FNUZ (GEKO's ``F8N``).
DATA_TYPES: dict[str, TypeInfo] = {
    info.name: info
    for info in (
        TypeInfo("f16_r", "H"),
        TypeInfo("bf16_r", "B"),
        TypeInfo("f32_r", "S"),
        TypeInfo("f64_r", "D"),
        TypeInfo("xf32_r", "X"),
        TypeInfo("i8_r", "I8"),
        TypeInfo("i32_r", "I"),
        TypeInfo("f8_r", "F8"),
        TypeInfo("bf8_r", "B8"),
        TypeInfo("f8_fnuz_r", "F8N"),
        TypeInfo("bf8_fnuz_r", "B8N"),
        TypeInfo("f8_ocp_r", "F8"),
        TypeInfo("bf8_ocp_r", "B8"),
        TypeInfo("f4_r", "F4"),
        TypeInfo("f32_c", "C", complex=True),
        TypeInfo("f64_c", "Z", complex=True),
    )
}

# Compute types (``hipblasComputeType_t`` names) -> Tensile ComputeDataType letter.
COMPUTE_TYPES: dict[str, str] = {
    "c_f16_r": "H",
    "c_f16_pedantic_r": "H",
    "c_f32_r": "S",
    "c_f32_pedantic_r": "S",
    "c_f32_fast_f16_r": "S",
    "c_f32_fast_bf16_r": "S",
    "c_xf32_r": "S",
    "c_f64_r": "D",
    "c_f64_pedantic_r": "D",
    "c_i32_r": "I",
    "c_i32_pedantic_r": "I",
}

# Other spellings of compute types seen in bench lines, bench output and the bench CLI help.
_COMPUTE_ALIASES: dict[str, str] = {
    "s": "c_f32_r",
    "x": "c_xf32_r",
    "f32_r": "c_f32_r",
    "xf32_r": "c_xf32_r",
    "f64_r": "c_f64_r",
    "i32_r": "c_i32_r",
    "f16_r": "c_f16_r",
    "f32_bf16_r": "c_f32_fast_bf16_r",
    "f32_f16_r": "c_f32_fast_f16_r",
}

# Compute type -> the bench CLI spelling (``--compute_type``).
_COMPUTE_TO_BENCH: dict[str, str] = {
    "c_f32_r": "f32_r",
    "c_xf32_r": "xf32_r",
    "c_f64_r": "f64_r",
    "c_i32_r": "i32_r",
    "c_f16_r": "f16_r",
    "c_f32_fast_bf16_r": "f32_bf16_r",
    "c_f32_fast_f16_r": "f32_f16_r",
}

# Other spellings of data types (AITER's hipBLASLt cache writes ``f8_e4m3_fnuz_r``).
_DATA_ALIASES: dict[str, str] = {
    "f8_e4m3_fnuz_r": "f8_fnuz_r",
    "f8_e5m2_fnuz_r": "bf8_fnuz_r",
    "half": "f16_r",
}

_TYPE_NAME = re.compile(r"^[a-z0-9_]+$")
_SCALE_WORDS = {"s": 1, "scalar": 1, "v": 2, "vector": 2, "none": 0, "false": 0, "true": 1}


def normalize_data_type(name: str) -> str:
    """The canonical hipBLASLt spelling of a data type name (lower case, aliases resolved)."""
    text = str(name).strip().lower()
    text = _DATA_ALIASES.get(text, text)
    if not _TYPE_NAME.match(text):
        raise ValueError(f"not a hipBLASLt data type name: {name!r}")
    return text


def normalize_compute_type(name: str) -> str:
    """The canonical ``c_*`` spelling of a compute type (``f32_r`` and ``s`` become ``c_f32_r``)."""
    text = str(name).strip().lower()
    text = _COMPUTE_ALIASES.get(text, text)
    if not text.startswith("c_"):
        text = "c_" + text
    if not _TYPE_NAME.match(text):
        raise ValueError(f"not a hipBLASLt compute type name: {name!r}")
    return text


def compute_type_for_bench(compute_type: str) -> str:
    """The ``hipblaslt-bench --compute_type`` spelling of a canonical compute type."""
    return _COMPUTE_TO_BENCH.get(compute_type, compute_type.removeprefix("c_"))


def tensile_type_letters(data_type: str) -> str:
    """Tensile letters for a hipBLASLt data type; unknown names fall back to ``f4_r`` -> ``F4``."""
    info = DATA_TYPES.get(data_type)
    if info is not None:
        return info.tensile
    return data_type.removesuffix("_r").upper()


# Mixed fp8 inputs are one tensilelite DataType (Common.py:450-464 validGEMMTypes @7d9fb68:
# ('F8B8','S','S'), ('B8F8','H','S') ...; TensileInstructions/DataType.py 'char': 'F8B8'/'B8F8'),
# not DataType F8 with another B: AMD's logic files say ``DataType: 13`` (aquavanjaram gfx940
# ``..._F8B8HS_BH_...yaml``). The FNUZ spellings are the develop profile's letters.
_MIXED_INPUT_LETTERS: dict[tuple[str, str], str] = {
    ("F8", "B8"): "F8B8", ("B8", "F8"): "B8F8", ("F8N", "B8N"): "F8B8N", ("B8N", "F8N"): "B8F8N",
}  # fmt: skip


def input_type_letters(a_type: str, b_type: str) -> str:
    """Tensile's ``DataType`` letters for the inputs A and B (pure).

    Equal types are one letter set (``B``); mixed fp8 is its combined type (``F8B8``, ``B8F8``);
    any other mix is both sets (``F8H``, tensilelite's ``DataTypeA``/``DataTypeB`` in its problem
    type names). A config's ``DataType`` is the type the MFMA reads instead
    (:func:`compute_input_letters`: ``H`` for f8 x f16 with ``c_f32_fast_f16_r``).
    """
    a_letters, b_letters = tensile_type_letters(a_type), tensile_type_letters(b_type)
    if a_letters == b_letters:
        return a_letters
    return _MIXED_INPUT_LETTERS.get((a_letters, b_letters), a_letters + b_letters)


FAST_COMPUTE_FOR_INPUT: dict[str, str] = {"H": "c_f32_fast_f16_r", "B": "c_f32_fast_bf16_r"}
"""Tensile input letters -> the fp32 compute type that converts the inputs to that type before the
MFMA (hipBLASLt's ``HIPBLAS_COMPUTE_32F_FAST_16F``/``_16BF``; hipblaslt-bench ``--compute_type
f32_f16_r``/``f32_bf16_r``)."""
FAST_COMPUTE_TYPES: tuple[str, ...] = tuple(FAST_COMPUTE_FOR_INPUT.values())


def compute_input_letters(a_type: str, b_type: str, compute_type: str) -> str:
    """Tensile letters of the type the kernel's MFMA reads: tensilelite's ``DataType`` of the GEMM (pure).

    hipBLASLt builds the Tensile problem's ``computeInputType`` from A, B and the compute type
    (``roc2TensileComputeInputType``, tensile_host.cpp:295-340 @7d9fb683, ported as
    :func:`tensilekit.selection.hipblaslt.compute_input_type`), and a tensilelite library serves it
    from the problem type whose ``DataType`` is that type (``rv.computeInputType = srcType``,
    Contractions.py:126,158 @7d9fb68), A and B keeping their own ``DataTypeA``/``DataTypeB``. So f8 x f16
    with ``c_f32_fast_f16_r`` is ``H`` (AMD's gfx942 ``..._F8H_HHS_BH_custom.yaml``: ``DataType: 4``,
    ``DataTypeA: 11``, ``DataTypeB: 4``), with ``c_f32_r`` ``F8``; fp8 x bf8 is ``F8B8``.
    """
    from tensilekit.errors import TensilekitError
    from tensilekit.model.tensile_parameters import DATA_TYPE_BY_NAME
    from tensilekit.selection.hipblaslt import compute_input_type
    from tensilekit.selection.problem import parse_data_type

    a_letters, b_letters = tensile_type_letters(a_type), tensile_type_letters(b_type)
    try:
        a, b = parse_data_type(a_type), parse_data_type(b_type)
        found = compute_input_type(a, b, compute_type)
    except TensilekitError:  # a compute type hipBLASLt's heuristic has no rule for: the inputs decide
        return input_type_letters(a_type, b_type)
    if found is a or found is b:
        pair = input_type_letters(a_type, b_type)
        if pair in _MIXED_INPUT_LETTERS.values():  # F8B8 ...: mixed fp8 is one DataType of its own
            return pair
        return a_letters if found is a else b_letters
    info = DATA_TYPE_BY_NAME.get(found.value.lower())
    return info.char if info is not None else input_type_letters(a_type, b_type)


def plain_compute_type(compute_type: str) -> str:
    """The compute type without its input conversion (``c_f32_fast_f16_r`` -> ``c_f32_r``; pure)."""
    return "c_f32_r" if compute_type in FAST_COMPUTE_TYPES else compute_type


def compute_type_for_letters(a_type: str, b_type: str, compute_type: str, data_letters: str) -> str | None:
    """The compute type under which a GEMM of A and B makes the MFMA read ``data_letters`` (pure):
    ``compute_type`` (fast types made plain) when A and B alone make it, else the fast compute type
    that does (None: none does). The inverse of :func:`compute_input_letters` that type keys use.

    tensilelite matches ``TypesEqual`` (A, B, C, D, computeInputType) and its logic files store
    computeInputType as ``DataType`` (Contractions.py:158,355 @7d9fb68); hipBLASLt derives it from
    A, B and the compute type (:func:`~tensilekit.workload.problem.compute_input_letters`).
    """
    plain = plain_compute_type(compute_type)
    if compute_input_letters(a_type, b_type, plain) == data_letters:
        return plain
    for fast in FAST_COMPUTE_TYPES:
        if plain == "c_f32_r" and compute_input_letters(a_type, b_type, fast) == data_letters:
            return fast
    return None


def default_compute_type(a_type: str) -> str:
    """hipBLASLt's usual compute type for an input type: f64 -> f64, int8 -> i32, else f32."""
    if a_type in ("f64_r", "f64_c"):
        return "c_f64_r"
    if a_type == "i8_r":
        return "c_i32_r"
    if a_type == "xf32_r":
        return "c_xf32_r"
    return "c_f32_r"


def default_scale_type(compute_type: str) -> str:
    """The alpha/beta type hipBLASLt uses for a compute type (``c_xf32_r`` -> ``f32_r``)."""
    if compute_type.startswith("c_f64"):
        return "f64_r"
    if compute_type.startswith("c_i32"):
        return "i32_r"
    if compute_type.startswith("c_f16"):
        return "f16_r"
    return "f32_r"


def _normalize_transpose(value: Any) -> Any:
    if isinstance(value, bool):
        return "T" if value else "N"
    if isinstance(value, str):
        return value.strip().upper()
    return value


def _normalize_scale(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _SCALE_WORDS:
            return _SCALE_WORDS[text]
    return value


class GemmProblem(BaseModel):
    """A GEMM ``D = activation(alpha * op(A) op(B) + beta * C + bias)`` with hipBLASLt's parameters.

    Absent leading dimensions and strides get the BLAS column-major defaults: ``lda`` is the
    number of rows of A as stored (``m`` for ``N``, ``k`` for ``T``), ``ldb`` likewise (``k`` /
    ``n``), ``ldc = m`` and ``ldd = ldc``; strides are ``ld * columns``. Absent ``b_type``/``c_type``/``d_type``
    follow ``a_type``/``c_type``; an absent compute type follows the input type
    (:func:`default_compute_type`); an absent ``scale_type`` follows the compute type.

    ``call_count`` is how often the application issued this GEMM. ``solution_index``,
    ``solution_name`` and ``kernel_name`` are what the log saw running (mask 128, bench
    ``--solution_index``); they are not part of the problem's identity (:meth:`identity`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    m: int = Field(ge=1)
    n: int = Field(ge=1)
    k: int = Field(ge=1)
    batch: int = Field(default=1, ge=1)
    trans_a: Transpose = "N"
    trans_b: Transpose = "N"
    a_type: str
    # The defaults below are placeholders for type checkers: _fill_defaults replaces them whenever
    # the sizes and a_type are valid, and otherwise validation fails on those fields anyway.
    b_type: str = ""
    c_type: str = ""
    d_type: str = ""
    compute_type: str = ""
    scale_type: str = ""
    alpha: float = 1.0
    beta: float = 0.0
    lda: int = Field(default=0, ge=1)
    ldb: int = Field(default=0, ge=1)
    ldc: int = Field(default=0, ge=1)
    ldd: int = Field(default=0, ge=1)
    stride_a: int = Field(default=-1, ge=0)
    stride_b: int = Field(default=-1, ge=0)
    stride_c: int = Field(default=-1, ge=0)
    stride_d: int = Field(default=-1, ge=0)
    bias: bool = False
    bias_type: str | None = None
    bias_source: BiasSource = "d"
    activation: str = "none"
    scale_a: int = Field(default=0, ge=0)
    """0 none, 1 scalar, 2 vector, 3.. block-scaled formats (newer hipBLASLt)."""
    scale_b: int = Field(default=0, ge=0)
    scale_c: int = Field(default=0, ge=0)
    scale_d: int = Field(default=0, ge=0)
    scale_alpha_vector: bool = False
    use_e: bool = False
    gradient: bool = False
    aux_type: str | None = None
    swizzle_a: bool = False
    swizzle_b: bool = False
    grouped_gemm: bool = False
    batch_mode: int = Field(default=0, ge=0)
    """hipBLASLt's ``--batch_mode``: 0 strided batched; others (general / pointer-array batched,
    newer hipBLASLt only) are other problems, never replayed as strided."""
    gfx: str | None = None
    """The device a tuned row is for (AITER's ``gfx`` column, e.g. ``gfx942``); None when the
    source names none. AITER keys its tuned rows by ``gfx`` and ``cu_num`` before the shape
    (``aiter/tuned_gemm.py`` ``get_GEMM_A16W16_config_``, ``set_index(["gfx", "cu_num", "M", …])``
    @0584e04d7f12114adcddc7e14b9f40985f520388): the same shape for another device is another GEMM."""
    cu_num: int | None = Field(default=None, ge=1)
    """The compute units of that device (AITER's ``cu_num``); None when the source names none."""
    call_count: int = Field(default=1, ge=1)
    solution_index: int | None = None
    solution_name: str | None = None
    kernel_name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        values = dict(data)
        if values.get("a_type") is None:
            return values  # pydantic reports the missing field
        a_type = normalize_data_type(values["a_type"])
        values["a_type"] = a_type
        for name, fallback in (("b_type", a_type), ("c_type", a_type)):
            values[name] = normalize_data_type(values.get(name) or fallback)
        values["d_type"] = normalize_data_type(values.get("d_type") or values["c_type"])
        compute = values.get("compute_type")
        values["compute_type"] = normalize_compute_type(compute) if compute else default_compute_type(a_type)
        scale = values.get("scale_type")
        values["scale_type"] = normalize_data_type(scale) if scale else default_scale_type(values["compute_type"])
        for name in ("trans_a", "trans_b"):
            if name in values:
                values[name] = _normalize_transpose(values[name])
        for name in ("scale_a", "scale_b", "scale_c", "scale_d"):
            if name in values:
                values[name] = _normalize_scale(values[name])
        # Logs print bias/aux types and a bias source even when the epilogue is off (bench output
        # even says "non-supported type"); keep them only when they mean something, so the same
        # GEMM from two sources compares equal.
        if not values.get("bias"):
            values["bias_type"] = None
            values["bias_source"] = "d"
        if not values.get("use_e"):
            values["aux_type"] = None
        for name in ("bias_type", "aux_type"):
            if values.get(name) is not None:
                values[name] = normalize_data_type(values[name])
        if isinstance(values.get("activation"), str):
            values["activation"] = values["activation"].strip().lower() or "none"
        _fill_layout_defaults(values)
        return values

    @field_validator("m", "n", "k", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d")
    @classmethod
    def _size_fits_int64(cls, value: int) -> int:
        # hipBLASLt reads these as int64_t: 2^63 and more is no GEMM it could be asked
        return checked_field(value, SIZE)

    @field_validator("batch")
    @classmethod
    def _batch_fits_int32(cls, value: int) -> int:
        return checked_field(value, BATCH)

    @field_validator("call_count")
    @classmethod
    def _call_count_fits_int64(cls, value: int) -> int:
        # a count of calls, weighed as calls x flops in floats: a 400-digit count is no workload
        return checked_field(value, INT64)

    @field_validator("solution_index")
    @classmethod
    def _solution_index_fits_int(cls, value: int | None) -> int | None:
        return None if value is None else checked_field(value, SOLUTION_INDEX)

    @field_validator("bias_source", mode="before")
    @classmethod
    def _lower_bias_source(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @property
    def layout_note(self) -> str:
        """``" swizzleA"`` / ``" swizzleB"`` (hipblaslt-bench's flags) when A or B is in hipBLASLt's
        swizzled order (an AITER ``bpreshuffle`` row), else ``""``: GEMMs that differ only there
        then read apart wherever a GEMM is shown."""
        return (" swizzleA" if self.swizzle_a else "") + (" swizzleB" if self.swizzle_b else "")

    @property
    def gemm_type(self) -> str:
        """The GEKO/Tensile GEMM type name: ``<DataType><DestDataType><ComputeDataType>_<tA><tB>``.

        ``HHS_TN`` is fp16 in and out with fp32 compute and A transposed; mixed inputs name both
        (``F8B8SS_TN``); TF32 (``c_xf32_r`` on f32 data) is ``XSS`` as in GEKO's ``GemmType``.
        """
        a_letters = tensile_type_letters(self.a_type)
        b_letters = tensile_type_letters(self.b_type)
        data = a_letters if a_letters == b_letters else a_letters + b_letters
        dest = tensile_type_letters(self.d_type)
        compute = COMPUTE_TYPES.get(self.compute_type, self.compute_type.removeprefix("c_").removesuffix("_r").upper())
        if self.compute_type == "c_xf32_r" and self.a_type == self.b_type == "f32_r":
            data = "X"
        if DATA_TYPES.get(self.a_type, TypeInfo("", "")).complex:
            compute = {"S": "C", "D": "Z"}.get(compute, compute)
        return f"{data}{dest}{compute}_{self.trans_a}{self.trans_b}"

    @property
    def type_key(self) -> tuple[str, str, str, str, str, str, str]:
        """What makes two problems the same GEMM type: transposes and the four types."""
        return (self.trans_a, self.trans_b, self.a_type, self.b_type, self.c_type, self.d_type, self.compute_type)

    @property
    def flops(self) -> int:
        """Floating-point operations of one call (2 m n k per batch)."""
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def size(self) -> tuple[int, int, int, int]:
        """``(M, N, batch, K)``, the order Tensile/GEKO size lists use."""
        return (self.m, self.n, self.batch, self.k)

    def identity(self) -> tuple[Any, ...]:
        """The key under which two records are *the same problem*.

        Every field except ``call_count`` and the solution that happened to run. Strides are left
        out when ``batch == 1``: hipBLASLt ignores them then, and logs print 0 where a bench run
        prints ``ld * columns`` for the same call.
        """
        ignored = {"call_count", "solution_index", "solution_name", "kernel_name"}
        if self.batch_mode == 0:  # strided batched, the default: keys stay those of older versions
            ignored.add("batch_mode")
        if self.gfx is None and self.cu_num is None:  # no device named: keys stay those of older versions
            ignored |= {"gfx", "cu_num"}
        if self.batch == 1:
            ignored |= {"stride_a", "stride_b", "stride_c", "stride_d"}
        return tuple((name, getattr(self, name)) for name in type(self).model_fields if name not in ignored)

    def with_call_count(self, call_count: int) -> GemmProblem:
        """A copy with another call count."""
        return self.model_copy(update={"call_count": call_count})

    def device_label(self) -> str | None:
        """The device a tuned row is for, as one says it (``gfx942 with 80 CUs``); None when none is named."""
        if self.gfx is None and self.cu_num is None:
            return None
        cus = "" if self.cu_num is None else f" with {self.cu_num} CUs"
        return f"{self.gfx or 'a device'}{cus}"

    def served_on(self, arch: str, cu_count: int | None) -> bool:
        """Whether this GEMM is for the device ``arch`` with ``cu_count`` CUs (None: not known): a
        row tuned for another ``gfx`` or ``cu_num`` is not. AITER looks its rows up by the running
        device's ``get_gfx()`` and ``get_cu_num()`` (``aiter/tuned_gemm.py`` ``get_GEMM_A16W16_config``
        @0584e04d7f12114adcddc7e14b9f40985f520388), so no other row is ever used there."""
        if self.gfx is not None and _processor(self.gfx) != _processor(arch):
            return False
        return self.cu_num is None or cu_count is None or self.cu_num == cu_count

    def without_device(self) -> GemmProblem:
        """A copy that names no device (the GEMM as any device runs it)."""
        if self.gfx is None and self.cu_num is None:
            return self
        return self.model_copy(update={"gfx": None, "cu_num": None})

    def without_solution(self) -> GemmProblem:
        """A copy with the solution fields cleared."""
        return self.model_copy(update={"solution_index": None, "solution_name": None, "kernel_name": None})


def _processor(arch: str) -> str:
    """``gfx90a:sramecc+:xnack-`` and ``GFX90A`` name the processor ``gfx90a``."""
    return arch.split(":", 1)[0].strip().lower()


def _fill_layout_defaults(values: dict[str, Any]) -> None:
    try:
        m, n, k = int(values["m"]), int(values["n"]), int(values["k"])
    except (KeyError, TypeError, ValueError):
        return  # field validation reports it
    if not all(SIZE.contains(size) for size in (m, n, k)):
        return  # field validation reports the size; defaults derived from it would only repeat it
    trans_a = values.get("trans_a", "N")
    trans_b = values.get("trans_b", "N")
    rows_a, cols_a = (m, k) if trans_a == "N" else (k, m)
    rows_b, cols_b = (k, n) if trans_b == "N" else (n, k)
    defaults = {"lda": rows_a, "ldb": rows_b, "ldc": m}
    for name, value in defaults.items():
        if values.get(name) is None:
            values[name] = value
    if values.get("ldd") is None:
        values["ldd"] = values["ldc"]  # D is laid out like C unless told otherwise
    columns = {"stride_a": ("lda", cols_a), "stride_b": ("ldb", cols_b), "stride_c": ("ldc", n), "stride_d": ("ldd", n)}
    for name, (ld_name, cols) in columns.items():
        if values.get(name) is None:
            try:
                values[name] = int(values[ld_name]) * cols
            except (TypeError, ValueError):
                return


__all__ = [
    "COMPUTE_TYPES",
    "DATA_TYPES",
    "BiasSource",
    "GemmProblem",
    "Transpose",
    "TypeInfo",
    "FAST_COMPUTE_FOR_INPUT",
    "FAST_COMPUTE_TYPES",
    "compute_input_letters",
    "compute_type_for_letters",
    "compute_type_for_bench",
    "default_compute_type",
    "default_scale_type",
    "input_type_letters",
    "normalize_compute_type",
    "normalize_data_type",
    "plain_compute_type",
    "tensile_type_letters",
]

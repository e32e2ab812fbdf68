"""Tensile's problem types of a GEMM: names, ``ProblemType`` dicts, type codes and letters, and
the keys logic files are matched by.

What the tuning stages, the real tools' wrappers and the simulated tools share (the logic files,
the Tensile driver's configs and hipblaslt-bench all describe a GEMM's types their own way);
nothing here runs a tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensilekit.model.logic import LogicFile, ProblemType
from tensilekit.model.tensile_parameters import TENSILELITE_DATA_TYPE_BY_CODE, TENSILELITE_DATA_TYPES
from tensilekit.tools.costs import type_bytes
from tensilekit.workload.problem import (
    GemmProblem,
    compute_input_letters,
    compute_type_for_letters,
    input_type_letters,
    tensile_type_letters,
)

TENSILELITE_TYPE_CODES: dict[str, int] = {
    "f32_r": 0, "f64_r": 1, "f16_r": 4, "i32_r": 6, "bf16_r": 7, "i8_r": 8, "xf32_r": 10, "f8_r": 11, "bf8_r": 12,
    "f8_fnuz_r": 11, "bf8_fnuz_r": 12, "f8_ocp_r": 11, "bf8_ocp_r": 12,
}  # fmt: skip
"""hipBLASLt data-type name -> tensilelite ``DataType`` code (formats.md 1.4; the first name of a code is canonical)."""

MIXED_FP8_CODES: dict[tuple[int, int], int] = {(11, 12): 13, (12, 11): 14}
"""(A code, B code) -> tensilelite's combined ``DataType`` (13 ``F8B8``, 14 ``B8F8``)."""
TYPE_NAMES_BY_CODE: dict[int, str] = {code: name for name, code in reversed(TENSILELITE_TYPE_CODES.items())}
"""tensilelite ``DataType`` code -> its canonical hipBLASLt name."""

COMPUTE_TYPE_CODES: dict[str, int] = {"c_f32_r": 0, "c_f64_r": 1, "c_f16_r": 4, "c_i32_r": 6}
"""Compute type -> tensilelite ``ComputeDataType`` code (``c_xf32_r`` is 0 plus ``F32XdlMathOp``)."""


def problem_type_dict(problem: GemmProblem) -> dict[str, Any]:
    """A tensilelite ``ProblemType`` dict for a plain GEMM (tensilelite type codes)."""
    trans_a, trans_b = problem.trans_a == "T", problem.trans_b == "T"
    a_code = TENSILELITE_TYPE_CODES.get(problem.a_type, 0)
    b_code = TENSILELITE_TYPE_CODES.get(problem.b_type, 0)
    # Mixed fp8 is its own DataType, as in AMD's logic (aquavanjaram gfx940 ..._F8B8HS_BH_...yaml:
    # DataType: 13; tensilelite derives DataTypeA/B = DataType, SolutionStructs.py:108 @7d9fb68).
    mixed = MIXED_FP8_CODES.get((a_code, b_code))
    if mixed is not None:
        a_code = b_code = mixed
    # DataType is the type the MFMA reads (f8 x f16 with c_f32_fast_f16_r: H, as AMD's gfx942
    # ..._F8H_HHS_BH_custom.yaml: DataType 4, DataTypeA 11, DataTypeB 4).
    letters = compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)
    data_code = next((info.code for info in TENSILELITE_DATA_TYPES if info.char == letters), a_code)
    return {
        "Activation": False,
        "Batched": True,
        "ComplexConjugateA": False,
        "ComplexConjugateB": False,
        "ComputeDataType": COMPUTE_TYPE_CODES.get(problem.compute_type, 0),
        "DataType": data_code if mixed is None else a_code,
        "DataTypeA": a_code,
        "DataTypeB": b_code,
        "DestDataType": TENSILELITE_TYPE_CODES.get(problem.d_type, 0),
        "HighPrecisionAccumulate": type_bytes(problem.a_type) <= 2,
        "IndexAssignmentsA": [3, 0, 2] if trans_a else [0, 3, 2],
        "IndexAssignmentsB": [1, 3, 2] if trans_b else [3, 1, 2],
        "IndicesBatch": [2],
        "IndicesFree": [0, 1],
        "IndicesSummation": [3],
        "NumIndicesC": 3,
        "OperationType": "GEMM",
        "StridedBatched": True,
        "TransposeA": trans_a,
        "TransposeB": trans_b,
        "UseBeta": True,
        "UseBias": 0,  # an int as in AMD's logic (0 none, 1 M, 2 N, 3 both); a master's UseBias predicate holds it
    }


def problem_type_name(problem: GemmProblem) -> str:
    """Tensile's problem-type name for a plain GEMM, e.g. ``Cijk_Alik_Bljk_BBS_BH``; A and B of
    their own types lead the types as tensilelite names them (``Cijk_Ailk_Bljk_F8H_HHS_BH``,
    SolutionStructs.py:484-487 @7d9fb68)."""
    index_a = "Alik" if problem.trans_a == "T" else "Ailk"
    index_b = "Bjlk" if problem.trans_b == "T" else "Bljk"
    types = problem.gemm_type.split("_", 1)[0]
    data = compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)
    if data != input_type_letters(problem.a_type, problem.b_type):
        inputs = tensile_type_letters(problem.a_type) + tensile_type_letters(problem.b_type)
        types = f"{inputs}_{data}{types.removeprefix(inputs)}"
    return f"Cijk_{index_a}_{index_b}_{types}_BH"


_COMPUTE_NAMES = {code: name for name, code in COMPUTE_TYPE_CODES.items()}
_MIXED_FP8_PARTS = {(13, 13): (11, 12), (14, 14): (12, 11)}
"""Mixed fp8 (DataType 13 F8B8 / 14 B8F8, DataTypeA/B derived equal) -> the (A, B) fp8 codes."""
_FP8 = {"f8_fnuz_r": "f8_r", "bf8_fnuz_r": "bf8_r", "f8_ocp_r": "f8_r", "bf8_ocp_r": "bf8_r"}


def problem_type_key(problem: GemmProblem) -> tuple[str, ...]:
    """What a logic file's problem type must match: transposes, A/B/D types, compute type.

    The compute type is the one :func:`type_key_compute` gives: a fast type (``c_f32_fast_f16_r``)
    only where it changes the type the MFMA reads (f8 x f16), so f16 x f16 with
    ``c_f32_fast_f16_r`` is served by the same logic files as with ``c_f32_r``, as in hipBLASLt.
    """
    a, b, d = (_FP8.get(name, name) for name in (problem.a_type, problem.b_type, problem.d_type))
    compute = compute_type_for_letters(a, b, problem.compute_type, compute_input_letters(a, b, problem.compute_type))
    return (problem.trans_a, problem.trans_b, a, b, d, compute or problem.compute_type)


def type_key_text(key: tuple[str, ...]) -> str:
    """A problem-type key as the catalog writes it (``T,N,bf16_r,bf16_r,bf16_r,c_f32_r``)."""
    return ",".join(key)


def _bool(value: Any) -> bool:
    return bool(value) and value not in ("false", "False", 0)


def logic_type_key(problem_type: ProblemType | Mapping[str, Any]) -> tuple[str, ...] | None:
    """The :func:`problem_type_key` of a tensilelite problem type, model or raw (None if not a plain GEMM type)."""
    raw = problem_type if isinstance(problem_type, Mapping) else problem_type.model_dump(by_alias=True)
    data_type = raw.get("DataType")
    a_code = data_type if raw.get("DataTypeA") is None else raw["DataTypeA"]
    b_code = data_type if raw.get("DataTypeB") is None else raw["DataTypeB"]
    if isinstance(a_code, int) and isinstance(b_code, int):
        a_code, b_code = _MIXED_FP8_PARTS.get((a_code, b_code), (a_code, b_code))
    d_code = raw.get("DestDataType", data_type)
    compute_code = raw.get("ComputeDataType", d_code)
    names = [TYPE_NAMES_BY_CODE.get(code) if isinstance(code, int) else None for code in (a_code, b_code, d_code)]
    if any(name is None for name in names) or not isinstance(compute_code, int):
        return None
    compute = _COMPUTE_NAMES.get(compute_code)
    if compute is None:
        return None
    if compute == "c_f32_r" and raw.get("F32XdlMathOp") == 10:
        compute = "c_xf32_r"
    data_info = TENSILELITE_DATA_TYPE_BY_CODE.get(data_type) if isinstance(data_type, int) else None
    if data_info is None:
        return None
    a_name, b_name, d_name = (name or "" for name in names)
    keyed = compute_type_for_letters(a_name, b_name, compute, data_info.char)
    if keyed is None:  # an MFMA input type no hipBLASLt compute type selects for these A and B
        return None
    trans_a = "T" if _bool(raw.get("TransposeA")) else "N"
    trans_b = "T" if _bool(raw.get("TransposeB")) else "N"
    return (trans_a, trans_b, a_name, b_name, d_name, keyed)


def solution_names(logic: LogicFile) -> Iterable[tuple[int, str]]:
    """``(position, name)`` for every name a solution is known by (min name, kernel name, custom)."""
    for position, solution in enumerate(logic.solutions):
        seen: set[str] = set()
        for name in (solution.solution_name_min, solution.kernel_name_min, solution.custom_kernel_name):
            if name and name not in seen:
                seen.add(name)
                yield position, name


LETTER_TYPES: dict[str, str] = {
    "H": "f16_r", "B": "bf16_r", "S": "f32_r", "D": "f64_r", "I8": "i8_r", "I": "i32_r", "F8": "f8_r",
    "B8": "bf8_r", "F8N": "f8_fnuz_r", "B8N": "bf8_fnuz_r",
}  # fmt: skip
"""Tensile type letter -> hipBLASLt data type name (the first of ``workload.problem.DATA_TYPES``)."""
MIXED_LETTER_TYPES: dict[str, tuple[str, str]] = {
    "F8B8": ("f8_r", "bf8_r"), "B8F8": ("bf8_r", "f8_r"), "F8B8N": ("f8_fnuz_r", "bf8_fnuz_r"),
    "B8F8N": ("bf8_fnuz_r", "f8_fnuz_r"),
}  # fmt: skip
"""Combined input letters (tensilelite's mixed fp8 ``DataType``) -> (A type, B type)."""
COMPUTE_LETTERS: dict[str, str] = {"S": "c_f32_r", "D": "c_f64_r", "H": "c_f16_r", "I": "c_i32_r"}


def tensile_letters(value: Any) -> str:
    """A ``ProblemType`` data type (a tensilelite code or a letter) as Tensile's letters (``H``, ``F8``)."""
    if isinstance(value, int):
        from tensilekit.model.tensile_parameters import DATA_TYPE_BY_CODE

        return DATA_TYPE_BY_CODE[value].char
    return str(value).upper() if len(str(value)) == 1 else str(value)


def problem_from_type(problem_type: Mapping[str, Any], size: Sequence[int]) -> GemmProblem:
    """The GEMM a config's ``ProblemType`` and one ``Exact`` size describe."""
    letters = tensile_letters(problem_type.get("DataType", "S"))
    dest = tensile_letters(problem_type.get("DestDataType", letters))
    compute = tensile_letters(problem_type.get("ComputeDataType", dest))
    data_type = LETTER_TYPES.get(letters, "f32_r")
    b_type = data_type
    if letters in MIXED_LETTER_TYPES:  # F8B8: A is fp8, B bf8 (Common.py validGEMMTypes)
        data_type, b_type = MIXED_LETTER_TYPES[letters]
    compute_type = COMPUTE_LETTERS.get(compute, "c_f32_r")
    if "DataTypeA" in problem_type or "DataTypeB" in problem_type:  # F8H: DataType H, DataTypeA F8
        data_type, b_type = (
            LETTER_TYPES.get(tensile_letters(problem_type.get(key, letters)), data_type)
            for key in ("DataTypeA", "DataTypeB")
        )
        compute_type = compute_type_for_letters(data_type, b_type, compute_type, letters) or compute_type
    dest_type = LETTER_TYPES.get(dest, data_type)
    m, n, batch, k = (int(value) for value in size[:4])
    values: dict[str, Any] = {
        "m": m, "n": n, "batch": batch, "k": k,
        "trans_a": "T" if problem_type.get("TransposeA") else "N",
        "trans_b": "T" if problem_type.get("TransposeB") else "N",
        "a_type": data_type, "b_type": b_type, "c_type": dest_type, "d_type": dest_type,
        "compute_type": compute_type,
    }  # fmt: skip
    if len(size) >= 8:
        values.update(ldd=int(size[4]), ldc=int(size[5]), lda=int(size[6]), ldb=int(size[7]))
    return GemmProblem(**values)


def letters_of(problem: GemmProblem) -> str:
    """The Tensile letters of the type a problem's MFMA reads (``B`` for bf16, ``H`` for f8 x f16
    with ``c_f32_fast_f16_r``: :func:`~tensilekit.workload.problem.compute_input_letters`)."""
    return compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)


__all__ = [
    "COMPUTE_LETTERS",
    "COMPUTE_TYPE_CODES",
    "LETTER_TYPES",
    "MIXED_FP8_CODES",
    "MIXED_LETTER_TYPES",
    "TENSILELITE_TYPE_CODES",
    "TYPE_NAMES_BY_CODE",
    "letters_of",
    "logic_type_key",
    "problem_from_type",
    "problem_type_dict",
    "problem_type_key",
    "problem_type_name",
    "tensile_letters",
    "solution_names",
    "type_key_text",
]

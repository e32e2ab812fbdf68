"""Read GEMM lists that PyTorch TunableOp and AITER write as CSV.

**TunableOp** (``tunableop_untuned0.csv`` / ``tunableop_results0.csv``, see ``torch.cuda.tunable``)
has no header. ``Validator,<name>,<value>`` lines record versions; every other line is
``<op>,<params>[,<solution>[,<time ms>]]`` with ``<op>`` like ``GemmTunableOp_BFloat16_TN`` or
``ScaledGemmTunableOp_Float8_e4m3fnuz_Float8_e4m3fnuz_BFloat16_TN`` and ``<params>`` like
``tn_4096_1024_8192_ld_8192_8192_4096`` (``_B_<batch>`` for strided batched, ``_rw_<0|1>_bias_<type>``
for scaled GEMMs, no ``_ld_`` part in old files). Both name the BLAS-level call PyTorch made, i.e.
hipBLASLt's own ``transA transB m n k lda ldb ldc``, so they map to :class:`GemmProblem` directly:
PyTorch's ``GemmParams::Signature()`` prints ``transa transb _m_n_k`` (pytorch/pytorch
aten/src/ATen/cuda/tunable/GemmCommon.h@ce52423a) and ``HipblasltGemmOp::Call`` hands those very
``transa``/``transb``/``m``/``n``/``k`` to ``hipblasLtMatmul`` after checking them against the op name's
layout (GemmHipblaslt.h@35728bec, "trans mismatch"): no row/column-major swap happens after the signature.

**AITER** (``aiter/configs/*_untuned_gemm.csv``, tuned variants) has a header and is read by
column name: ``M``, ``N``, ``K`` are required; ``bias``, ``dtype``, ``outdtype``, ``scaleAB``,
``bpreshuffle`` and the device columns ``gfx``, ``cu_num`` are used when present (AITER keys its
tuned rows by all of them, so rows that differ in any are different GEMMs); tuned columns (``libtype``, ``solidx``, ``kernelName`` …) give the hipBLASLt
solution when ``libtype`` is ``hipblaslt``; anything else is ignored. AITER's ``M, N, K`` are the
PyTorch shapes of ``y[M, N] = x[M, K] @ W[N, K]^T``; hipBLASLt sees that call column-major as
``m = N, n = M, k = K`` with ``transA = T, transB = N`` (weights first), which is how it is stored.
A ``bpreshuffle`` row's weight is pre-shuffled: AITER hands it to hipBLASLt as A in the swizzled
order (``HIPBLASLT_ORDER_COL16_4R8``, ``COL16_4R16`` when scaled), so it is stored as ``swizzle_a``
(hipblaslt-bench ``--swizzleA``; a library serves it only with ``SwizzleTensorA`` kernels).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tensilekit._arguments import require, require_lines, require_path
from tensilekit.errors import InputNotFound, Location, ToolOutputError, one_line_reason
from tensilekit.workload.problem import GemmProblem, normalize_data_type
from tensilekit.workload.records import BadLine, BadLineSink, ParsedWorkload, WorkloadFormat, text_lines

# PyTorch dtype spellings (TunableOp op names and AITER "torch.<name>" columns) -> hipBLASLt names.
_TORCH_TYPES: dict[str, str] = {
    "float": "f32_r",
    "float32": "f32_r",
    "fp32": "f32_r",
    "tf32": "f32_r",
    "double": "f64_r",
    "float64": "f64_r",
    "half": "f16_r",
    "float16": "f16_r",
    "fp16": "f16_r",
    "bfloat16": "bf16_r",
    "bf16": "bf16_r",
    "c10::complex<float>": "f32_c",
    "c10::complex<double>": "f64_c",
    "complex64": "f32_c",
    "complex128": "f64_c",
    "float8_e4m3fn": "f8_r",
    "float8_e5m2": "bf8_r",
    "float8_e4m3fnuz": "f8_fnuz_r",
    "float8_e5m2fnuz": "bf8_fnuz_r",
    "fp8": "f8_r",
    "int8": "i8_r",
    "i8": "i8_r",
    "int32": "i32_r",
}


def torch_type(name: str) -> str:
    """The hipBLASLt type for a PyTorch dtype name (``torch.bfloat16``, ``BFloat16``, ``Float8_e4m3fnuz``)."""
    text = name.strip().removeprefix("torch.")
    key = text.lower() if not text.startswith("c10::") else text
    if key in _TORCH_TYPES:
        return _TORCH_TYPES[key]
    return normalize_data_type(text)  # already a hipBLASLt name such as bf16_r


# --------------------------------------------------------------------------------------------
# TunableOp


class TunableOpEntry(BaseModel):
    """One GEMM line of a TunableOp file."""

    model_config = ConfigDict(frozen=True)

    line: int
    op_name: str
    params: str
    solution: str | None = None
    """TunableOp's solution field (``Gemm_Hipblaslt_1219``, ``Gemm_Rocblas_5``, ``Default``); None if untuned."""
    time_ms: float | None = None
    """The measured time of one call; with folded lines, the mean of the lines that carry one."""
    problem: GemmProblem
    lines: int = 1
    """How many lines name this GEMM and solution (more than one only when lines were folded)."""


class TunableOpFile(BaseModel):
    """A TunableOp untuned or results file."""

    model_config = ConfigDict(frozen=True)

    source: str | None = None
    validators: dict[str, str] = {}
    entries: tuple[TunableOpEntry, ...] = ()
    bad_lines: tuple[BadLine, ...] = ()

    @property
    def tuned(self) -> bool:
        """True when the GEMM lines carry solutions (a results file)."""
        return any(entry.solution is not None for entry in self.entries)

    def to_workload(self) -> ParsedWorkload:
        """The problems of this file, one per entry, one call per line (TunableOp records no counts)."""
        return ParsedWorkload(
            format=WorkloadFormat.TUNABLEOP,
            source=self.source,
            problems=tuple(
                entry.problem if entry.lines == 1 else entry.problem.with_call_count(entry.lines)
                for entry in self.entries
            ),
            records_read=sum(entry.lines for entry in self.entries),
            bad_lines=self.bad_lines,
            metadata=dict(self.validators),
        )


def _split_op_types(middle: list[str]) -> list[str]:
    types: list[str] = []
    position = 0
    while position < len(middle):
        token = middle[position]
        if token.startswith("Float8") and position + 1 < len(middle):
            types.append(f"{token}_{middle[position + 1]}")
            position += 2
        else:
            types.append(token)
            position += 1
    return types


def _parse_params(params: str) -> dict[str, Any]:
    tokens = params.strip().split("_")
    if len(tokens) < 4 or len(tokens[0]) != 2:
        raise ValueError(f"parameters {params!r} are not <layout>_<m>_<n>_<k>…")
    values: dict[str, Any] = {"layout": tokens[0].upper()}
    values["m"], values["n"], values["k"] = (int(token) for token in tokens[1:4])
    position = 4
    while position < len(tokens):
        key = tokens[position]
        if key == "B" and position + 1 < len(tokens):
            values["batch"] = int(tokens[position + 1])
            position += 2
        elif key == "ld" and position + 3 < len(tokens):
            values["lda"], values["ldb"], values["ldc"] = (int(token) for token in tokens[position + 1 : position + 4])
            values["ldd"] = values["ldc"]
            position += 4
        elif key == "rw" and position + 1 < len(tokens):
            values["rowwise"] = tokens[position + 1] == "1"
            position += 2
        elif key == "bias" and position + 1 < len(tokens):
            values["bias"] = tokens[position + 1]
            position += 2
        else:
            raise ValueError(f"unrecognised part {key!r} in parameters {params!r}")
    return values


def problem_from_tunableop(op_name: str, params: str) -> GemmProblem:
    """The hipBLASLt problem of one TunableOp ``(op, params)`` pair; raises ``ValueError``."""
    require(op_name, str, "op_name", "problem_from_tunableop")
    require(params, str, "params", "problem_from_tunableop")
    parts = op_name.strip().split("_")
    if len(parts) < 3:
        raise ValueError(f"operator {op_name!r} is not <Op>_<type…>_<layout>")
    op, layout, types = parts[0], parts[-1].upper(), _split_op_types(parts[1:-1])
    if len(layout) != 2 or any(char not in "NT" for char in layout):
        raise ValueError(f"operator {op_name!r} has no NN/NT/TN/TT layout")
    values = _parse_params(params)
    if values["layout"] != layout:
        raise ValueError(f"operator layout {layout} does not match parameters {params!r}")
    problem: dict[str, Any] = {
        key: values[key] for key in ("m", "n", "k", "batch", "lda", "ldb", "ldc", "ldd") if key in values
    }
    problem["trans_a"], problem["trans_b"] = layout[0], layout[1]
    if op in ("GemmTunableOp", "GemmStridedBatchedTunableOp", "GemmAndBiasTunableOp"):
        if len(types) != 1:
            raise ValueError(f"operator {op_name!r} should name one data type")
        data = torch_type(types[0])
        problem.update(a_type=data, b_type=data, c_type=data, d_type=data)
        if types[0] == "tf32":
            problem["compute_type"] = "c_xf32_r"
        if op == "GemmAndBiasTunableOp":
            problem.update(bias=True, bias_type=data)
    elif op == "ScaledGemmTunableOp":
        if len(types) != 3:
            raise ValueError(f"operator {op_name!r} should name A, B and output types")
        a_type, b_type, out_type = (torch_type(name) for name in types)
        scale = 2 if values.get("rowwise") else 1
        problem.update(
            a_type=a_type,
            b_type=b_type,
            c_type=out_type,
            d_type=out_type,
            compute_type="c_f32_r",
            scale_a=scale,
            scale_b=scale,
        )
        bias = values.get("bias")
        if bias is not None and bias != "None":
            problem.update(bias=True, bias_type=torch_type(bias))
    else:
        raise ValueError(f"unknown TunableOp operator {op!r}")
    return GemmProblem.model_validate(problem)


def _hipblaslt_index(solution: str) -> int | None:
    if solution.startswith("Gemm_Hipblaslt_"):
        tail = solution.removeprefix("Gemm_Hipblaslt_")
        if tail.lstrip("-").isdigit() and int(tail) >= 0:
            return int(tail)
    return None


def parse_tunableop_csv(
    lines: str | Iterable[str], *, file: str | None = None, skip_bad_lines: bool = False, fold: bool = False
) -> TunableOpFile:
    """Read a TunableOp untuned or results file (see the module docstring for the format).

    With ``fold`` the lines naming one GEMM and solution become one entry (its first line, a
    count of lines and their mean time), so memory grows with the distinct GEMMs, not the lines;
    without it (rewriting a file line by line) every line is an entry.
    """
    sink = BadLineSink(file, skip_bad_lines)
    validators: dict[str, str] = {}
    # (op, params, solution) -> [first line, problem, lines, total time, timed lines]; without
    # ``fold`` each line is its own key
    folded: dict[tuple[Any, ...], list[Any]] = {}
    source = require_lines(lines, "lines", "parse_tunableop_csv")
    for number, raw in enumerate(source, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        fields = [field.strip() for field in text.split(",")]
        if fields[0] == "Validator":
            if len(fields) < 3:
                sink.report(number, "Validator line needs a name and a value", raw)
                continue
            validators[fields[1]] = ",".join(fields[2:])
            continue
        if len(fields) not in (2, 3, 4):
            sink.report(number, f"expected 2 to 4 fields, found {len(fields)}", raw)
            continue
        solution = fields[2] if len(fields) >= 3 and fields[2] else None
        key = (fields[0], fields[1], solution) if fold else (number,)
        known = folded.get(key)
        try:
            time_ms = float(fields[3]) if len(fields) == 4 and fields[3] else None
            if known is None:
                problem = problem_from_tunableop(fields[0], fields[1])
                index = _hipblaslt_index(solution) if solution else None
                if index is not None:
                    problem = problem.model_copy(update={"solution_index": index})
        except (ValueError, ValidationError) as error:
            sink.report(number, f"bad TunableOp GEMM line: {one_line_reason(error)}", raw)
            continue
        if known is None:
            folded[key] = known = [number, problem, 0, 0.0, 0, fields[0], fields[1], solution]
        known[2] += 1
        if time_ms is not None:
            known[3] += time_ms
            known[4] += 1
    entries = [
        TunableOpEntry(
            line=first,
            op_name=op_name,
            params=params,
            solution=solution,
            problem=problem,
            lines=count,
            time_ms=total / timed if timed else None,
        )  # fmt: skip
        for first, problem, count, total, timed, op_name, params, solution in folded.values()
    ]
    return TunableOpFile(source=file, validators=validators, entries=tuple(entries), bad_lines=tuple(sink.bad_lines))


def load_tunableop_csv(path: str | Path, *, skip_bad_lines: bool = False, fold: bool = False) -> TunableOpFile:
    """Read a TunableOp file, streamed; see :func:`parse_tunableop_csv`."""
    path = require_path(path, "path", "load_tunableop_csv")
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no such TunableOp file: {file}", Location(file=str(file)))
    with file.open(encoding="utf-8-sig", errors="replace") as stream:
        return parse_tunableop_csv(text_lines(stream), file=str(file), skip_bad_lines=skip_bad_lines, fold=fold)


# --------------------------------------------------------------------------------------------
# AITER

_AITER_REQUIRED = ("M", "N", "K")


def _aiter_bool(value: str) -> bool:
    text = value.strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0", "", "none"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def parse_aiter_csv(
    text: str | Iterable[str],
    *,
    file: str | None = None,
    skip_bad_lines: bool = False,
    default_dtype: str = "bf16_r",
    default_out_dtype: str | None = None,
) -> ParsedWorkload:
    """Read an AITER GEMM CSV by header name (see the module docstring); ``text`` is the whole
    text or its lines (a stream is read once, line by line).

    ``default_dtype`` and ``default_out_dtype`` (output defaults to the input type, or bf16 for
    int8/fp8 inputs) apply when the file has no ``dtype``/``outdtype`` column, as AITER's older
    ``a8w8_untuned_gemm.csv`` does. Tuned files name the device of each row (``gfx``, ``cu_num``):
    rows for another device are other GEMMs (:attr:`GemmProblem.gfx`). Rows that name the same
    GEMM twice are kept once, with a warning naming the first repeat's line.
    """
    lines = require_lines(text, "text", "parse_aiter_csv")
    sink = BadLineSink(file, skip_bad_lines)
    problems: dict[tuple[Any, ...], GemmProblem] = {}
    duplicates = 0
    first_duplicate: int | None = None
    for number, _, problem in _aiter_rows(lines, file, sink, default_dtype, default_out_dtype):
        identity = problem.identity()
        if identity in problems:
            duplicates += 1
            first_duplicate = first_duplicate or number
            continue
        problems[identity] = problem
    warnings: tuple[str, ...] = ()
    if duplicates:
        where = f" (first at line {first_duplicate})"
        warnings = (f"{duplicates} row(s) repeat an earlier GEMM and were dropped{where}",)
    preshuffled = sum(1 for problem in problems.values() if problem.swizzle_a)
    if preshuffled:
        warnings += (
            f"{preshuffled} GEMM(s) are for a pre-shuffled weight (AITER bpreshuffle), each a GEMM of its own: "
            "hipBLASLt is asked with A swizzled (swizzleA), which only libraries with SwizzleTensorA kernels "
            "(hipBLASLt 0.12.1 or later) serve",
        )
    return ParsedWorkload(
        format=WorkloadFormat.AITER,
        source=file,
        problems=tuple(problems.values()),
        bad_lines=tuple(sink.bad_lines),
        warnings=warnings,
        records_read=len(problems) + duplicates,
    )


def aiter_times(
    text: str | Iterable[str],
    *,
    file: str | None = None,
    default_dtype: str = "bf16_r",
    default_out_dtype: str | None = None,
) -> dict[tuple[Any, ...], float]:
    """The measured time of one call (``us`` column of tuned files) per problem identity.

    The first row of a problem counts, as :func:`parse_aiter_csv` keeps it; rows without a
    usable time (untuned files) and unreadable rows are left out. ``text`` is the whole text or
    its lines (a stream is read once).
    """
    lines = require_lines(text, "text", "aiter_times")
    times: dict[tuple[Any, ...], float] = {}
    for _, row, problem in _aiter_rows(lines, file, BadLineSink(file, True), default_dtype, default_out_dtype):
        identity = problem.identity()
        if identity in times:
            continue
        try:
            value = float(row.get("us", ""))
        except ValueError:
            continue
        if value >= 0 and not math.isinf(value) and not math.isnan(value):
            times[identity] = value
    return times


def _aiter_rows(
    lines: Iterable[str], file: str | None, sink: BadLineSink, default_dtype: str, default_out_dtype: str | None
) -> Iterator[tuple[int, dict[str, str], GemmProblem]]:
    """Each readable row of an AITER CSV with its line number and problem, read line by line;
    bad rows go to ``sink``."""
    rows = (
        (number, line)
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    )
    first = next(rows, None)
    if first is None:
        raise ToolOutputError("empty AITER CSV: no header line", Location(file=file, line=1))
    header_line, header_text = first
    header = [name.strip() for name in next(csv.reader([header_text], skipinitialspace=True))]
    missing = [name for name in _AITER_REQUIRED if name not in header]
    if missing:
        raise ToolOutputError(
            f"AITER CSV header lacks column(s) {', '.join(missing)}: {header_text.strip()!r}",
            Location(file=file, line=header_line),
        )
    known: dict[str, tuple[dict[str, str], GemmProblem]] = {}  # a repeated row is read once (bounded)
    for number, line in rows:
        seen = known.get(line)
        if seen is not None:
            yield number, *seen
            continue
        cells = [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True))]
        if len(cells) != len(header):
            sink.report(number, f"expected {len(header)} columns as in the header, found {len(cells)}", line)
            continue
        row = dict(zip(header, cells, strict=True))
        try:
            problem = _aiter_problem(row, default_dtype, default_out_dtype)
        except (ValueError, ValidationError) as error:
            sink.report(number, f"bad AITER row: {one_line_reason(error)}", line)
            continue
        if len(known) >= _ROWS_KEPT:
            known.clear()
        known[line] = (row, problem)
        yield number, row, problem


_ROWS_KEPT = 4096  # distinct row texts whose reading is remembered


def _aiter_problem(row: dict[str, str], default_dtype: str, default_out_dtype: str | None) -> GemmProblem:
    torch_m, torch_n, k = (int(row[name]) for name in _AITER_REQUIRED)
    a_type = torch_type(row["dtype"]) if row.get("dtype") else normalize_data_type(default_dtype)
    if row.get("outdtype"):
        out_type = torch_type(row["outdtype"])
    elif default_out_dtype is not None:
        out_type = normalize_data_type(default_out_dtype)
    else:
        out_type = "bf16_r" if a_type in ("i8_r", "f8_r", "bf8_r", "f8_fnuz_r", "bf8_fnuz_r") else a_type
    values: dict[str, Any] = {
        "m": torch_n,
        "n": torch_m,
        "k": k,
        "trans_a": "T",
        "trans_b": "N",
        "a_type": a_type,
        "b_type": a_type,
        "c_type": out_type,
        "d_type": out_type,
    }
    if row.get("bias") and _aiter_bool(row["bias"]):
        values.update(bias=True, bias_type=out_type)
    if row.get("scaleAB") and _aiter_bool(row["scaleAB"]):
        values.update(scale_a=1, scale_b=1)
    # the device of a tuned row: AITER's key starts with (gfx, cu_num) (aiter/tuned_gemm.py
    # get_GEMM_A16W16_config_ @0584e04d7f12114adcddc7e14b9f40985f520388)
    # a pre-shuffled weight (bpreshuffle, part of the same key) is hipBLASLt's A in the swizzled
    # order: aiter/tuned_gemm.py hipb_gemm passes bpreshuffle to hipb_mm, whose
    # hipblasLtMatmul_sol_wrapper sets matA's HIPBLASLT_MATRIX_LAYOUT_ORDER to COL16_4R8 (COL16_4R16
    # with scaleA) (ROCm/aiter gradlib/csrc/hipbsolgemm.cu @7096945233e8)
    if row.get("bpreshuffle") and _aiter_bool(row["bpreshuffle"]):
        values["swizzle_a"] = True
    if row.get("gfx"):
        values["gfx"] = row["gfx"].strip().lower()
    if row.get("cu_num"):
        values["cu_num"] = int(row["cu_num"])
    if row.get("libtype", "").lower() == "hipblaslt" and row.get("solidx", "").lstrip("-").isdigit():
        index = int(row["solidx"])
        if index >= 0:
            values["solution_index"] = index
            if row.get("kernelName"):
                values["kernel_name"] = row["kernelName"]
    return GemmProblem.model_validate(values)


def problem_from_aiter_row(
    row: dict[str, str], default_dtype: str = "bf16_r", default_out_dtype: str | None = None
) -> GemmProblem:
    """The hipBLASLt problem of one AITER row (column name -> cell); raises ``ValueError``."""
    try:
        return _aiter_problem(row, default_dtype, default_out_dtype)
    except (KeyError, ValidationError) as error:
        raise ValueError(one_line_reason(error)) from None


def load_aiter_csv(
    path: str | Path,
    *,
    skip_bad_lines: bool = False,
    default_dtype: str = "bf16_r",
    default_out_dtype: str | None = None,
) -> ParsedWorkload:
    """Read an AITER CSV file; see :func:`parse_aiter_csv`."""
    path = require_path(path, "path", "load_aiter_csv")
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no such AITER CSV: {file}", Location(file=str(file)))
    with file.open(encoding="utf-8-sig", errors="replace") as stream:
        return parse_aiter_csv(
            text_lines(stream),
            file=str(file),
            skip_bad_lines=skip_bad_lines,
            default_dtype=default_dtype,
            default_out_dtype=default_out_dtype,
        )


__all__ = [
    "TunableOpEntry",
    "TunableOpFile",
    "aiter_times",
    "load_aiter_csv",
    "load_tunableop_csv",
    "parse_aiter_csv",
    "parse_tunableop_csv",
    "problem_from_aiter_row",
    "problem_from_tunableop",
    "torch_type",
]

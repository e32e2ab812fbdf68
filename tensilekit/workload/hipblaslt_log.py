"""Parse hipBLASLt logs: bench lines (mask 32), profile lines (mask 64), extended profile (mask 128).

* Mask 32 writes one ``hipblaslt-bench --api_method c -m … --compute_type f32_r …`` line per
  matmul call (``logBenchFromTensileDataGemm``). Empty optional arguments leave double spaces and
  a flag may appear without its value (``--bias_type`` when the type is invalid), so the line is
  split on whitespace runs and a flag takes the next token only if that token is not a flag.
* Mask 64 dumps, at process exit, one YAML flow mapping per distinct argument tuple:
  ``- { function: matmul, M: …, …, call_count: n }``. Values are raw and may be empty
  (``bias_type: ,``), which strict YAML rejects, so lines are split by a small tolerant reader
  rather than a YAML parser. The field set differs between hipBLASLt versions; unknown keys are
  ignored and bench settings (``iters``, ``rotating``, ``flush`` …) are not part of a problem.
* Mask 128 prints the same tuple plus ``solution_index``, ``solution_Name`` and ``kernel_name``
  from another call site, so a run with mask 64|128 (or 32|64) logs every call more than once.
  :meth:`HipblasltLog.to_workload` therefore uses one kind of line per file (see ``prefer``).

Other hipBLASLt log lines (``[date][HIPBLASLT][pid][Trace]…``), ``tuning-cache:`` notices,
blank lines and ``#`` comments are ignored; anything else is a bad line.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tensilekit._arguments import require, require_lines, require_path
from tensilekit.errors import InputNotFound, Location
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import BadLine, BadLineSink, ParsedWorkload, WorkloadFormat, text_lines


class LogLineKind(str, enum.Enum):
    """Which hipBLASLt logging layer produced a line."""

    BENCH = "bench"
    """``HIPBLASLT_LOG_MASK=32``: one ``hipblaslt-bench …`` line per call."""
    PROFILE = "profile"
    """``HIPBLASLT_LOG_MASK=64``: one flow mapping per distinct call, with ``call_count``."""
    EXTENDED = "extended"
    """``HIPBLASLT_LOG_MASK=128``: the profile mapping plus the solution and kernel names."""


DEFAULT_PREFERENCE: tuple[LogLineKind, ...] = (LogLineKind.PROFILE, LogLineKind.EXTENDED, LogLineKind.BENCH)


class LogRecord(BaseModel):
    """One GEMM of one kind of line, its lines folded into one (the log is aggregated as it is read)."""

    model_config = ConfigDict(frozen=True)

    kind: LogLineKind
    line: int
    """The first line that logged this GEMM."""
    problem: GemmProblem
    """The GEMM, its ``call_count`` summed over every line that logged it."""
    lines: int = 1
    """How many lines logged this GEMM."""


class HipblasltLog(BaseModel):
    """Everything read from one hipBLASLt log: one record per GEMM and kind of line, in order of first line.

    A mask-32 log repeats one line per call, millions of them: lines are folded into their GEMM's
    record as they are read, so memory grows with the distinct GEMMs, not with the lines.
    """

    model_config = ConfigDict(frozen=True)

    source: str | None = None
    records: tuple[LogRecord, ...] = ()
    bad_lines: tuple[BadLine, ...] = ()
    ignored_lines: int = 0
    """Known non-GEMM lines: other log layers, tuning-cache notices, blanks, comments."""

    @property
    def lines_read(self) -> int:
        """GEMM lines read (a grouped bench line counts once per group)."""
        return sum(record.lines for record in self.records)

    @property
    def kinds(self) -> frozenset[LogLineKind]:
        """The kinds of GEMM line present."""
        return frozenset(record.kind for record in self.records)

    def problems(self, kind: LogLineKind | None = None) -> list[GemmProblem]:
        """The problems of one kind of line (all kinds when ``kind`` is None), one per GEMM with
        its calls summed over its lines, in order of first line."""
        return [record.problem for record in self.records if kind is None or record.kind == kind]

    def to_workload(self, prefer: Sequence[LogLineKind] = DEFAULT_PREFERENCE) -> ParsedWorkload:
        """The workload of this log, counting every call once.

        Lines of the first kind in ``prefer`` that the log contains are used; lines of other
        kinds describe the same calls again and are left out with a warning.
        """
        present = self.kinds
        chosen = next((kind for kind in prefer if kind in present), None)
        warnings: list[str] = []
        if chosen is not None:
            dropped = sorted(kind.value for kind in present - {chosen})
            if dropped:
                warnings.append(
                    f"log has {', '.join(dropped)} lines as well as {chosen.value} lines; "
                    f"they describe the same calls, only the {chosen.value} lines are used"
                )
        records = [record for record in self.records if record.kind == chosen]
        return ParsedWorkload(
            format=WorkloadFormat.HIPBLASLT_LOG,
            source=self.source,
            problems=tuple(record.problem for record in records),
            records_read=sum(record.lines for record in records),
            bad_lines=self.bad_lines,
            warnings=tuple(warnings),
            metadata={"line_kind": chosen.value} if chosen is not None else {},
        )


class _LineError(ValueError):
    """A line that is recognisably a GEMM record but cannot be read; becomes a BadLine."""


# --------------------------------------------------------------------------------------------
# Values


def _to_int(value: str) -> int:
    text = value.strip()
    try:
        return int(text)
    except ValueError:
        pass
    # a number of thousands of digits is refused by int() (and read as inf below): quote its start
    shown = repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"not an integer: {shown}") from None
    if not number.is_integer():
        raise ValueError(f"not an integer: {shown}")
    return int(number)


def _to_float(value: str) -> float:
    text = value.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].split(",")[0]  # complex alpha printed as (re,im): keep the real part
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"not a number: {value!r}") from None


def _to_bool(value: str) -> bool:
    text = value.strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _to_str(value: str) -> str:
    return value.strip()


def _to_solution_index(value: str) -> int | None:
    index = _to_int(value)
    return index if index >= 0 else None


# profile key -> (GemmProblem field, converter)
_PROFILE_FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "M": ("m", _to_int),
    "N": ("n", _to_int),
    "K": ("k", _to_int),
    "m": ("m", _to_int),
    "n": ("n", _to_int),
    "k": ("k", _to_int),
    "lda": ("lda", _to_int),
    "ldb": ("ldb", _to_int),
    "ldc": ("ldc", _to_int),
    "ldd": ("ldd", _to_int),
    "stride_a": ("stride_a", _to_int),
    "stride_b": ("stride_b", _to_int),
    "stride_c": ("stride_c", _to_int),
    "stride_d": ("stride_d", _to_int),
    "alpha": ("alpha", _to_float),
    "beta": ("beta", _to_float),
    "transA": ("trans_a", _to_str),
    "transB": ("trans_b", _to_str),
    "batch_count": ("batch", _to_int),
    "scaleA": ("scale_a", _to_str),
    "scaleB": ("scale_b", _to_str),
    "scaleC": ("scale_c", _to_str),
    "scaleD": ("scale_d", _to_str),
    "scaleAlpha_vector": ("scale_alpha_vector", _to_bool),
    "gradient": ("gradient", _to_bool),
    "use_e": ("use_e", _to_bool),
    "bias_vector": ("bias", _to_bool),
    "bias_source": ("bias_source", _to_str),
    "a_type": ("a_type", _to_str),
    "b_type": ("b_type", _to_str),
    "c_type": ("c_type", _to_str),
    "d_type": ("d_type", _to_str),
    "scale_type": ("scale_type", _to_str),
    "bias_type": ("bias_type", _to_str),
    "aux_type": ("aux_type", _to_str),
    "compute_type": ("compute_type", _to_str),
    "activation_type": ("activation", _to_str),
    "swizzleA": ("swizzle_a", _to_bool),
    "swizzleB": ("swizzle_b", _to_bool),
    "swizzle_a": ("swizzle_a", _to_bool),
    "swizzle_b": ("swizzle_b", _to_bool),
    "grouped_gemm": ("grouped_gemm", _to_bool),
    "batch_mode": ("batch_mode", _to_int),
    "solution_index": ("solution_index", _to_solution_index),
    "solution_Name": ("solution_name", _to_str),
    "kernel_name": ("kernel_name", _to_str),
    "call_count": ("call_count", _to_int),
}

_EXTENDED_KEYS = frozenset({"solution_Name", "kernel_name"})


def _split_flow_items(body: str) -> list[str]:
    if not any(char in body for char in "'\"([{"):
        return body.split(",")  # the printer's own lines: nothing nested, nothing quoted
    items: list[str] = []
    depth = 0
    quote: str | None = None
    current: list[str] = []
    for char in body:
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append("".join(current))
            current = []
            continue
        current.append(char)
    if quote is not None or depth != 0:
        raise _LineError("unbalanced quotes or brackets in flow mapping")
    items.append("".join(current))
    return items


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def read_flow_mapping(line: str) -> dict[str, str]:
    """Split one ``- { key: value, … }`` line into raw string values, tolerating empty values.

    Accepts ``- {a: 1}``, ``- { a: 1 }`` and ``{a: 1}``; quoted scalars are unquoted. Raises
    ``ValueError`` for a line that is not a single-line flow mapping.
    """
    text = line.strip()
    if text.startswith("-"):
        text = text[1:].strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise _LineError("not a single-line flow mapping")
    mapping: dict[str, str] = {}
    for item in _split_flow_items(text[1:-1]):
        item = item.strip()
        if not item:
            continue  # "key: , ," leftovers
        key, sep, value = item.partition(":")
        if not sep:
            raise _LineError(f"item without a colon: {item!r}")
        mapping[_unquote(key.strip())] = _unquote(value.strip())
    return mapping


def problem_from_fields(fields: dict[str, str]) -> GemmProblem:
    """Build a problem from profile-style raw fields (``M``, ``transA``, ``a_type`` … strings).

    Unknown keys are ignored; empty values count as absent. Raises ``ValueError`` (a
    :class:`pydantic.ValidationError` for model errors) when the fields do not make a problem.
    """
    function = fields.get("function", "matmul")
    if function != "matmul":
        raise _LineError(f"not a matmul record (function: {function})")
    values: dict[str, Any] = {}
    for key, raw in fields.items():
        target = _PROFILE_FIELDS.get(key)
        if target is None or raw == "":
            continue
        name, convert = target
        try:
            values[name] = convert(raw)
        except ValueError as error:
            raise _LineError(f"{key}: {error}") from None
    missing = [key for key, name in (("M", "m"), ("N", "n"), ("K", "k"), ("a_type", "a_type")) if name not in values]
    if missing:
        raise _LineError(f"missing {', '.join(missing)}")
    return GemmProblem.model_validate(values)


def parse_profile_line(line: str) -> GemmProblem:
    """Parse one mask-64/128 line ``- { function: matmul, M: …, call_count: n }``."""
    require(line, str, "line", "parse_profile_line")
    return problem_from_fields(read_flow_mapping(line))


# --------------------------------------------------------------------------------------------
# Bench lines

_BENCH_VALUE_FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "-m": ("m", _to_int),
    "--sizem": ("m", _to_int),
    "-n": ("n", _to_int),
    "--sizen": ("n", _to_int),
    "-k": ("k", _to_int),
    "--sizek": ("k", _to_int),
    "--lda": ("lda", _to_int),
    "--ldb": ("ldb", _to_int),
    "--ldc": ("ldc", _to_int),
    "--ldd": ("ldd", _to_int),
    "--stride_a": ("stride_a", _to_int),
    "--stride_b": ("stride_b", _to_int),
    "--stride_c": ("stride_c", _to_int),
    "--stride_d": ("stride_d", _to_int),
    "--alpha": ("alpha", _to_float),
    "--beta": ("beta", _to_float),
    "--transA": ("trans_a", _to_str),
    "--transB": ("trans_b", _to_str),
    "--batch_count": ("batch", _to_int),
    "--bias_source": ("bias_source", _to_str),
    "--a_type": ("a_type", _to_str),
    "--b_type": ("b_type", _to_str),
    "--c_type": ("c_type", _to_str),
    "--d_type": ("d_type", _to_str),
    "--scale_type": ("scale_type", _to_str),
    "--bias_type": ("bias_type", _to_str),
    "--aux_type": ("aux_type", _to_str),
    "--compute_type": ("compute_type", _to_str),
    "--activation_type": ("activation", _to_str),
    "--batch_mode": ("batch_mode", _to_int),
}
# Flags whose presence means "on"; in newer hipBLASLt some of them carry a value instead.
_BENCH_SWITCHES: dict[str, str] = {
    "--scaleAlpha_vector": "scale_alpha_vector",
    "--gradient": "gradient",
    "--use_e": "use_e",
    "--bias_vector": "bias",
    "--swizzleA": "swizzle_a",
    "--swizzleB": "swizzle_b",
    "--grouped_gemm": "grouped_gemm",
}
_BENCH_SCALES: dict[str, str] = {
    "--scaleA": "scale_a",
    "--scaleB": "scale_b",
    "--scaleC": "scale_c",
    "--scaleD": "scale_d",
}
_BENCH_GROUP_FIELDS = frozenset(
    {"m", "n", "k", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d"}
)


def _is_flag(token: str) -> bool:
    if not token.startswith("-"):
        return False
    try:
        float(token)
    except ValueError:
        return True
    return False


def _is_bench_command(token: str) -> bool:
    return token == "hipblaslt-bench" or token.endswith("/hipblaslt-bench")


def parse_bench_line(line: str) -> list[GemmProblem]:
    """Parse one mask-32 ``hipblaslt-bench …`` line; a grouped GEMM gives one problem per group.

    The solution index is kept when the line says ``--algo_method index --solution_index n``.
    """
    require(line, str, "line", "parse_bench_line")
    tokens = line.split()
    if not tokens or not _is_bench_command(tokens[0]):
        raise _LineError("not a hipblaslt-bench command line")
    common: dict[str, Any] = {}
    groups: list[dict[str, Any]] = [{}]
    algo_method: str | None = None
    solution_index: int | None = None
    position = 1
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if not _is_flag(token):
            raise _LineError(f"unexpected token {token!r}")
        value: str | None = None
        if position < len(tokens) and not _is_flag(tokens[position]):
            value = tokens[position]
            position += 1
        if token in _BENCH_VALUE_FIELDS:
            name, convert = _BENCH_VALUE_FIELDS[token]
            if value is None:
                if token in ("--bias_type", "--aux_type", "--activation_type"):
                    continue  # printed without a value when the type is "invalid"
                raise _LineError(f"{token} without a value")
            try:
                converted = convert(value)
            except ValueError as error:
                raise _LineError(f"{token}: {error}") from None
            if name in _BENCH_GROUP_FIELDS:
                if name in groups[-1]:
                    groups.append({})
                groups[-1][name] = converted
            else:
                common[name] = converted
        elif token in ("--precision", "-r"):
            if value is None:
                raise _LineError(f"{token} without a value")
            for name in ("a_type", "b_type", "c_type", "d_type"):
                common.setdefault(name, value)
        elif token in _BENCH_SWITCHES:
            common[_BENCH_SWITCHES[token]] = True if value is None else _to_bool(value)
        elif token in _BENCH_SCALES:
            common[_BENCH_SCALES[token]] = 1 if value is None else value
        elif token == "--algo_method":
            algo_method = value
        elif token == "--solution_index":
            if value is None:
                raise _LineError("--solution_index without a value")
            solution_index = _to_solution_index(value)
        # Anything else (--api_method, --rotating, --iters, --flush, --lde …) is a bench setting.
    if algo_method in ("index", "2") and solution_index is not None:
        common["solution_index"] = solution_index
    problems: list[GemmProblem] = []
    for group in groups:
        missing = [flag for flag, name in (("-m", "m"), ("-n", "n"), ("-k", "k")) if name not in group]
        if "a_type" not in common:
            missing.append("--a_type")
        if missing:
            raise _LineError(f"missing {', '.join(missing)}")
        problems.append(GemmProblem.model_validate({**common, **group}))
    return problems


# --------------------------------------------------------------------------------------------
# Whole logs


def _classify(stripped: str) -> str:
    if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
        return "ignore"
    first = stripped.split(None, 1)[0]
    if _is_bench_command(first):
        return "bench"
    if stripped.startswith(("-{", "- {", "{")):
        return "profile"
    if stripped.startswith("tuning-cache:") or (stripped.startswith("[") and "][HIPBLASLT][" in stripped):
        return "ignore"
    return "unknown"


def _describe(error: Exception) -> str:
    if isinstance(error, ValidationError):
        parts = []
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"])
            parts.append(f"{where}: {item['msg']}" if where else item["msg"])
        return "; ".join(parts)
    return str(error)


def parse_hipblaslt_log(
    lines: str | Iterable[str], *, file: str | None = None, skip_bad_lines: bool = False
) -> HipblasltLog:
    """Read every GEMM line of a hipBLASLt log (masks 32, 64 and 128 may be mixed).

    ``lines`` is the whole text or an iterable of lines (a file object streams). A line that
    looks like a GEMM record but cannot be read, or a line of unknown shape, raises
    :class:`~tensilekit.errors.ToolOutputError` naming ``file:line``; with ``skip_bad_lines``
    it is recorded in :attr:`HipblasltLog.bad_lines` instead.
    """
    sink = BadLineSink(file, skip_bad_lines)
    ignored = 0
    # One entry per GEMM, kind of line and solution that ran: [first line, problem, calls, lines].
    # Lines are folded in as they are read, so a log of a million calls of six GEMMs holds six.
    folded: dict[tuple[Any, ...], list[Any]] = {}
    # Mask-32 logs repeat the same line once per call: parse each distinct line once (a bounded
    # cache: a log of all-different lines must not keep them all).
    parsed: dict[str, list[tuple[tuple[Any, ...], GemmProblem]]] = {}
    source = require_lines(lines, "lines", "parse_hipblaslt_log")
    for number, raw in enumerate(source, start=1):
        stripped = raw.strip()
        known = parsed.get(stripped)
        if known is None:
            shape = _classify(stripped)
            if shape == "ignore":
                ignored += 1
                continue
            if shape == "unknown":
                sink.report(number, "not a hipBLASLt bench or profile line", raw)
                continue
            try:
                if shape == "bench":
                    kind, problems = LogLineKind.BENCH, parse_bench_line(stripped)
                else:
                    fields = read_flow_mapping(stripped)
                    kind = LogLineKind.EXTENDED if _EXTENDED_KEYS & fields.keys() else LogLineKind.PROFILE
                    problems = [problem_from_fields(fields)]
            except (ValueError, ValidationError) as error:
                sink.report(number, f"bad {shape} line: {_describe(error)}", raw)
                continue
            known = [((kind, *_fold_key(problem)), problem) for problem in problems]
            if len(parsed) >= _PARSED_LINES_KEPT:
                parsed.clear()
            parsed[stripped] = known
        for key, problem in known:
            entry = folded.get(key)
            if entry is None:
                folded[key] = [number, problem, problem.call_count, 1]
            else:
                entry[2] += problem.call_count
                entry[3] += 1
    records = tuple(
        LogRecord.model_construct(
            kind=key[0],
            line=first,
            problem=problem if calls == problem.call_count else problem.with_call_count(calls),
            lines=count,
        )
        for key, (first, problem, calls, count) in folded.items()
    )
    return HipblasltLog(source=file, records=records, bad_lines=tuple(sink.bad_lines), ignored_lines=ignored)


_PARSED_LINES_KEPT = 4096  # distinct line texts whose parse is remembered


def _fold_key(problem: GemmProblem) -> tuple[Any, ...]:
    """What two lines must share to fold into one record: the GEMM and the solution that ran
    (lines of one GEMM with different solutions stay apart; :func:`aggregate_problems` decides)."""
    return (*problem.identity(), problem.solution_index, problem.solution_name, problem.kernel_name)


def load_hipblaslt_log(path: str | Path, *, skip_bad_lines: bool = False) -> HipblasltLog:
    """Read a hipBLASLt log file (streamed line by line); see :func:`parse_hipblaslt_log`."""
    path = require_path(path, "path", "load_hipblaslt_log")
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no such log file: {file}", Location(file=str(file)))
    with file.open(encoding="utf-8-sig", errors="replace") as stream:
        return parse_hipblaslt_log(text_lines(stream), file=str(file), skip_bad_lines=skip_bad_lines)


__all__ = [
    "DEFAULT_PREFERENCE",
    "HipblasltLog",
    "LogLineKind",
    "LogRecord",
    "load_hipblaslt_log",
    "parse_bench_line",
    "parse_hipblaslt_log",
    "parse_profile_line",
    "problem_from_fields",
    "read_flow_mapping",
]

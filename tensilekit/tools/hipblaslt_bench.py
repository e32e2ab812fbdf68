"""Drive ``hipblaslt-bench``: argv for one problem or a ``--yaml`` batch, and its output parsed by name.

Output (``clients/include/argument_model.hpp``, ``testing_matmul.hpp``)::

    [0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,…,hipblaslt-Gflops,hipblaslt-GB/s,us
        N,N,0,1,128,128,128,1,…,403.298,17.6063,10.4
        --Solution index: 4993
        --Solution name:  Cijk_…
        --kernel name:    Cijk_…
    Winner:
    [0]:transA,…          (the fastest solution's block again)

Columns vary with options (``-v`` adds CPU/error columns, ``--rotating`` adds
``rotating_buffer``, ``HIPBLASLT_BENCH_FREQ`` adds clock columns, newer versions add swizzle,
aux and ``solution_index,kernel_name`` columns), so values are always read by header name.
Values may contain spaces (``non-supported type``) and grouped GEMMs print tuples with commas
(``(128,256)``). Older versions print the header without ``[k]:``; newer docs show the header,
then ``[0]:`` on a line of its own, then unindented values. Other lines (device banner,
``Is supported …``, ``Rotating buffer …``) are ignored.

The library a run uses is switched with ``HIPBLASLT_TENSILE_LIBPATH`` (:func:`library_env`):
unset for hipBLASLt's installed (reference) library, a directory for a tuned build.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tensilekit.errors import Location, ToolError, ToolOutputError
from tensilekit.tools.profiles import ToolProfile
from tensilekit.tools.runner import CommandRunner, EnvOverrides
from tensilekit.tools.tensile_client import FORCED_SOLUTION_ENV
from tensilekit.workload.hipblaslt_log import problem_from_fields
from tensilekit.workload.problem import GemmProblem, compute_type_for_bench

LIBRARY_PATH_ENV = "HIPBLASLT_TENSILE_LIBPATH"
"""hipBLASLt reads its Tensile library (``TensileLibrary*.dat`` + code objects) from here when set."""

SCRUBBED_ENV = ("HIPBLASLT_TUNING_FILE", "HIPBLASLT_TUNING_USER_MAX_WORKSPACE", FORCED_SOLUTION_ENV)
"""Variables removed from every benchmark's environment, whatever the user exported. Newer
hipblaslt-bench (client.cpp @0687ecfd; 7d9fb683's reads none of them) with ``HIPBLASLT_TUNING_FILE``
set silently runs ``--algo_method all``/``index`` as heuristic and changes the timing defaults
(``--iters``/``--cold_iters`` 1000, ``--rotating`` 512, ``--flush``; the workspace from
``HIPBLASLT_TUNING_USER_MAX_WORKSPACE``), and exits 1 when the file's ``Git Version:`` line is
another build's; :data:`~tensilekit.tools.tensile_client.FORCED_SOLUTION_ENV` forces one solution in the library
(hipblaslt-2026-interfaces.md §1 "--algo_method", "HIPBLASLT_TUNING_FILE side effects"; §4)."""

DEFAULT_EXECUTABLE = "hipblaslt-bench"
_STDOUT = "<hipblaslt-bench stdout>"


class AlgoMethod(str, enum.Enum):
    """How hipblaslt-bench picks solutions (``--algo_method``)."""

    HEURISTIC = "heuristic"
    ALL = "all"
    INDEX = "index"

    @property
    def yaml_value(self) -> int:
        """The integer ``algo_method`` takes in ``--yaml`` files."""
        return {"heuristic": 0, "all": 1, "index": 2}[self.value]


class BenchOptions(BaseModel):
    """How to run a problem: solution selection and timing settings (not the problem itself).

    ``None`` leaves a setting at hipblaslt-bench's default (10 iterations, 2 cold iterations,
    no rotating buffer). ``solution_index`` requires ``algo_method=INDEX``;
    ``requested_solution`` (-1 = all) requires ``HEURISTIC``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    algo_method: AlgoMethod = AlgoMethod.HEURISTIC
    requested_solution: int | None = Field(default=None, ge=-1)
    solution_index: int | None = Field(default=None, ge=0)
    verify: bool = False
    iters: int | None = Field(default=None, ge=1)
    cold_iters: int | None = Field(default=None, ge=0)
    rotating: int | None = Field(default=None, ge=0)
    """Rotating buffer size in MB."""
    flush: bool = False
    use_gpu_timer: bool = False
    print_kernel_info: bool = True
    api_method: Literal["c", "mix", "cpp"] | None = None
    any_stride: bool = False
    device: int | None = Field(default=None, ge=0)
    initialization: str | None = None

    @model_validator(mode="after")
    def _check_selection(self) -> BenchOptions:
        if self.solution_index is not None and self.algo_method is not AlgoMethod.INDEX:
            raise ValueError("solution_index needs algo_method='index'")
        if self.algo_method is AlgoMethod.INDEX and self.solution_index is None:
            raise ValueError("algo_method='index' needs a solution_index")
        if self.requested_solution is not None and self.algo_method is not AlgoMethod.HEURISTIC:
            raise ValueError("requested_solution is only valid with algo_method='heuristic'")
        return self


class NotExpressible(ToolError):
    """The installed hipblaslt-bench cannot express this GEMM (it would run another problem)."""


def bench_problem_issue(problem: GemmProblem, profile: ToolProfile | None) -> str | None:
    """Why ``profile``'s hipblaslt-bench cannot replay ``problem`` as logged (None: it can).

    hipBLASLt 7d9fb68 has no ``--scaleC``/``--scaleD``/``--swizzleA``/``--swizzleB``/
    ``--aux_type``/``--batch_mode`` ("Option --scaleC is not defined.", client.cpp:313-575), and
    takes ``--scaleA``/``--scaleB`` only as ``s``/``v``: anything else silently means *no
    scaling* (client.cpp:484-490, 826-834), so an MX scale mode would be measured unscaled. Its
    bench reads only the data types of ``profile.bench_data_types`` (no ``f4_r``: FP4 cannot be
    expressed there) and the compute types of ``profile.bench_compute_types`` (no f16 compute).
    """
    if profile is None:
        return None
    if problem.grouped_gemm:
        return "grouped GEMMs need all their groups on one command line"
    if profile.bench_data_types:
        unknown = sorted(
            {profile.bench_type_name(name) for name in (problem.a_type, problem.b_type, problem.c_type, problem.d_type)}
            - profile.bench_data_types
        )
        if unknown:
            return f"{profile.description}'s hipblaslt-bench has no data type {', '.join(unknown)}"
    if profile.bench_compute_type(problem.compute_type) is None:
        return f"{profile.description}'s hipblaslt-bench has no compute type {problem.compute_type} (--compute_type)"
    wanted = [
        ("--scaleC", problem.scale_c != 0), ("--scaleD", problem.scale_d != 0), ("--swizzleA", problem.swizzle_a),
        ("--swizzleB", problem.swizzle_b), ("--aux_type", bool(problem.aux_type)),
        ("--batch_mode", problem.batch_mode != 0),
    ]  # fmt: skip
    missing = [flag for flag, used in wanted if used and not profile.has_bench_flag(flag)]
    if missing:
        return f"{profile.description}'s hipblaslt-bench has no {', '.join(missing)}"
    for flag, mode in (("--scaleA", problem.scale_a), ("--scaleB", problem.scale_b)):
        if mode and profile.scale_value(mode) is None:
            return f"{profile.description}'s hipblaslt-bench cannot take scale mode {mode} ({flag} s|v only)"
    return None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def build_bench_argv(
    problem: GemmProblem,
    options: BenchOptions | None = None,
    *,
    executable: str = DEFAULT_EXECUTABLE,
    profile: ToolProfile | None = None,
) -> list[str]:
    """The hipblaslt-bench command line for one problem, in ``profile``'s spellings.

    Without a profile: newer hipBLASLt's (``--scaleA <n>``: 0 none, 1 scalar, 2 vector, 3.. MX).
    With one: its scale values (7d9fb68: ``s``/``v``) and type names (7d9fb68: ``f8_r`` for
    gfx942's FNUZ fp8). Grouped GEMMs raise ``ValueError``; a GEMM the profile's bench cannot
    express raises :class:`NotExpressible` (:func:`bench_problem_issue`).
    """
    if problem.grouped_gemm:
        raise ValueError("grouped GEMMs need all their groups on one command line; not supported")
    issue = bench_problem_issue(problem, profile)
    if issue is not None:
        raise NotExpressible(issue)
    opts = options or BenchOptions()

    def type_name(name: str) -> str:
        return profile.bench_type_name(name) if profile is not None else name

    def compute_type(name: str) -> str:  # each release's spelling (7d9fb68: f32_f16_r for c_f32_fast_f16_r)
        return (profile.bench_compute_type(name) if profile is not None else None) or compute_type_for_bench(name)

    def scale(mode: int) -> str:
        value = profile.scale_value(mode) if profile is not None else str(mode)
        return str(value)

    argv = [
        executable,
        "-m", str(problem.m), "-n", str(problem.n), "-k", str(problem.k),
        "--lda", str(problem.lda), "--ldb", str(problem.ldb), "--ldc", str(problem.ldc), "--ldd", str(problem.ldd),
        "--stride_a", str(problem.stride_a), "--stride_b", str(problem.stride_b),
        "--stride_c", str(problem.stride_c), "--stride_d", str(problem.stride_d),
        "--alpha", _number(problem.alpha), "--beta", _number(problem.beta),
        "--transA", problem.trans_a, "--transB", problem.trans_b,
        "--batch_count", str(problem.batch),
        "--a_type", type_name(problem.a_type), "--b_type", type_name(problem.b_type),
        "--c_type", type_name(problem.c_type), "--d_type", type_name(problem.d_type),
        "--compute_type", compute_type(problem.compute_type),
        "--scale_type", problem.scale_type,
    ]  # fmt: skip
    for flag, mode in (
        ("--scaleA", problem.scale_a),
        ("--scaleB", problem.scale_b),
        ("--scaleC", problem.scale_c),
        ("--scaleD", problem.scale_d),
    ):
        if mode:
            argv += [flag, scale(mode)]
    if problem.batch_mode:
        argv += ["--batch_mode", str(problem.batch_mode)]
    switches = (
        ("--scaleAlpha_vector", problem.scale_alpha_vector),
        ("--use_e", problem.use_e),
        ("--gradient", problem.gradient),
        ("--swizzleA", problem.swizzle_a),
        ("--swizzleB", problem.swizzle_b),
    )
    argv += [flag for flag, on in switches if on]
    if problem.bias:
        argv += ["--bias_vector", "--bias_source", problem.bias_source]
        if problem.bias_type:
            argv += ["--bias_type", type_name(problem.bias_type)]
    if problem.aux_type:
        argv += ["--aux_type", type_name(problem.aux_type)]
    if problem.activation != "none":
        argv += ["--activation_type", problem.activation]
    argv += _option_args(opts)
    return argv


def _option_args(opts: BenchOptions) -> list[str]:
    argv = ["--algo_method", opts.algo_method.value]
    if opts.solution_index is not None:
        argv += ["--solution_index", str(opts.solution_index)]
    if opts.requested_solution is not None:
        argv += ["--requested_solution", str(opts.requested_solution)]
    if opts.api_method is not None:
        argv += ["--api_method", opts.api_method]
    for flag, value in (
        ("--iters", opts.iters),
        ("--cold_iters", opts.cold_iters),
        ("--rotating", opts.rotating),
        ("--device", opts.device),
    ):
        if value is not None:
            argv += [flag, str(value)]
    if opts.initialization is not None:
        argv += ["--initialization", opts.initialization]
    switches = (
        ("--verify", opts.verify),
        ("--flush", opts.flush),
        ("--use_gpu_timer", opts.use_gpu_timer),
        ("--print_kernel_info", opts.print_kernel_info),
        ("--any_stride", opts.any_stride),
    )
    return argv + [flag for flag, on in switches if on]


def bench_yaml_record(problem: GemmProblem, options: BenchOptions | None = None) -> dict[str, Any]:
    """One ``--yaml`` test case (``hipblaslt_common.yaml`` Arguments names) for a problem."""
    if problem.grouped_gemm:
        raise ValueError("grouped GEMMs are not supported in --yaml records")
    opts = options or BenchOptions()
    record: dict[str, Any] = {
        "function": "matmul",
        "M": problem.m, "N": problem.n, "K": problem.k,
        "lda": problem.lda, "ldb": problem.ldb, "ldc": problem.ldc, "ldd": problem.ldd,
        "stride_a": problem.stride_a, "stride_b": problem.stride_b,
        "stride_c": problem.stride_c, "stride_d": problem.stride_d,
        "alpha": float(problem.alpha), "beta": float(problem.beta),
        "transA": problem.trans_a, "transB": problem.trans_b,
        "batch_count": problem.batch,
        "scaleA": problem.scale_a, "scaleB": problem.scale_b,
        "scaleAlpha_vector": problem.scale_alpha_vector,
        "gradient": problem.gradient, "use_e": problem.use_e,
        "bias_vector": problem.bias, "bias_source": problem.bias_source,
        "a_type": problem.a_type, "b_type": problem.b_type,
        "c_type": problem.c_type, "d_type": problem.d_type,
        "scale_type": problem.scale_type,
        "compute_type": problem.compute_type,
        "activation_type": problem.activation,
    }  # fmt: skip
    if problem.bias and problem.bias_type:
        record["bias_type"] = problem.bias_type
    record["algo_method"] = opts.algo_method.yaml_value
    if opts.solution_index is not None:
        record["solution_index"] = opts.solution_index
    if opts.requested_solution is not None:
        record["requested_solution_num"] = opts.requested_solution
    for name in ("iters", "cold_iters", "rotating", "api_method", "initialization"):
        value = getattr(opts, name)
        if value is not None:
            record[name] = value
    record.update(
        flush=opts.flush,
        use_gpu_timer=opts.use_gpu_timer,
        print_kernel_info=opts.print_kernel_info,
        unit_check=opts.verify,
    )
    return record


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def dump_bench_yaml(problems: Iterable[GemmProblem], options: BenchOptions | None = None) -> str:
    """A ``hipblaslt-bench --yaml`` file: one flow mapping per problem, options in every record."""
    lines = []
    for problem in problems:
        record = bench_yaml_record(problem, options)
        lines.append("- {" + ", ".join(f"{key}: {_yaml_scalar(value)}" for key, value in record.items()) + "}")
    return "\n".join(lines) + "\n"


def build_bench_yaml_argv(yaml_path: str | Path, *, executable: str = DEFAULT_EXECUTABLE) -> list[str]:
    """``hipblaslt-bench --yaml <file>``; every setting comes from the file's records."""
    return [executable, "--yaml", str(yaml_path)]


# --------------------------------------------------------------------------------------------
# Output

_RANK = re.compile(r"^\[(\d+)\]:(.*)$")
_NUMERIC_COLUMNS = frozenset(
    {"hipblaslt-Gflops", "hipblaslt-GB/s", "us", "CPU-Gflops", "CPU-us", "norm_error", "atol", "rtol"}
)
VERIFY_FAILED = "failed"
"""What ``--verify`` prints in ``atol``/``rtol`` when no tolerance <= 0.1 passes the allclose check
(``argument_model.hpp:128-145``, ``allclose.hpp:102-121`` @7d9fb68): that kernel failed verification."""
_TOLERANCE_COLUMNS = frozenset({"atol", "rtol"})


class InvalidMeasurement(ToolOutputError):
    """A timing no benchmark can produce (NaN, infinite, zero or negative): a measurement error of
    the job that printed it, never a result."""


_SOLUTION_LINES = {
    "--Solution index:": "solution_index",
    "--Solution name:": "solution_name",
    "--kernel name:": "kernel_name",
}


class BenchResult(BaseModel):
    """One timed solution: the values row by column name, plus the solution lines when printed."""

    model_config = ConfigDict(frozen=True)

    line: int
    """Line of the values row in the output."""
    rank: int | None = None
    """``k`` of the ``[k]:`` prefix; None for the old header without it."""
    values: dict[str, str]
    solution_index: int | None = None
    solution_name: str | None = None
    kernel_name: str | None = None
    winner: bool = False
    """True for the block printed after ``Winner:``."""
    malformed: str | None = None
    """Why the values row could not be read (cut short, a number that is not one); only from
    :func:`parse_bench_output` with ``lenient=True``. ``values`` then holds what could be read."""

    def number(self, column: str) -> float | None:
        """A numeric column, or None when the output has no such column (or ``failed`` in a tolerance)."""
        raw = self.values.get(column)
        return None if raw is None or raw == "" or raw == VERIFY_FAILED else float(raw)

    @property
    def gflops(self) -> float | None:
        """``hipblaslt-Gflops``."""
        return self.number("hipblaslt-Gflops")

    @property
    def us(self) -> float | None:
        """Average time per call in microseconds (``us``)."""
        return self.number("us")

    @property
    def gbps(self) -> float | None:
        """``hipblaslt-GB/s``."""
        return self.number("hipblaslt-GB/s")

    @property
    def verification_failed(self) -> bool:
        """True when ``--verify`` printed ``failed`` in ``atol`` or ``rtol`` for this kernel."""
        return any(self.values.get(column) == VERIFY_FAILED for column in _TOLERANCE_COLUMNS)

    def measurement_error(self) -> str | None:
        """Why this row's timing is not a measurement (a malformed row; NaN, infinite, zero or
        negative ``us``; non-finite GFlops), or None when it is one."""
        if self.malformed is not None:
            return self.malformed
        us = self.us
        if us is not None and (not math.isfinite(us) or us <= 0):
            return f"time {self.values['us']!r} us"
        gflops = self.gflops
        if gflops is not None and (not math.isfinite(gflops) or gflops < 0):
            return f"{self.values['hipblaslt-Gflops']!r} GFlops"
        return None

    def to_problem(self) -> GemmProblem:
        """The problem this row describes (raises ``ValueError`` for grouped-GEMM rows)."""
        fields = {name: value for name, value in self.values.items()}
        if fields.get("grouped_gemm", "0") not in ("0", "", "false"):
            raise ValueError("grouped-GEMM rows describe several problems")
        fields.pop("grouped_gemm", None)
        if "a_type" not in fields and "d_type" in fields:  # the old layout names only d_type
            for name in ("a_type", "b_type", "c_type"):
                fields[name] = fields["d_type"]
        problem = problem_from_fields(fields)
        update = {
            name: getattr(self, name)
            for name in ("solution_index", "solution_name", "kernel_name")
            if getattr(self, name) is not None
        }
        return problem.model_copy(update=update) if update else problem


class BenchOutput(BaseModel):
    """Everything hipblaslt-bench reported, in output order."""

    model_config = ConfigDict(frozen=True)

    results: tuple[BenchResult, ...] = ()
    """Every timed solution except the repeated ``Winner:`` block."""
    winner: BenchResult | None = None

    def best(self) -> BenchResult | None:
        """The ``Winner:`` block when printed, else the result with the most GFlops."""
        if self.winner is not None:
            return self.winner
        timed = [result for result in self.results if result.gflops is not None]
        return max(timed, key=lambda result: result.gflops or 0.0) if timed else None


def _split_values(text: str) -> list[str]:
    values: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            values.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    values.append("".join(current).strip())
    return values


def _is_header(fields: Sequence[str]) -> bool:
    return len(fields) > 1 and fields[0].strip() == "transA"


def parse_bench_output(text: str | Iterable[str], *, source: str | None = None, lenient: bool = False) -> BenchOutput:
    """Read hipblaslt-bench output by header name (see the module docstring for the layouts).

    Raises :class:`~tensilekit.errors.ToolOutputError` naming ``source`` and the line when a
    values row does not match its header or a numeric column is not a number. With
    ``lenient`` such a row is kept instead, marked :attr:`BenchResult.malformed` (one cut-short
    row among hundreds of ``--algo_method all`` rows is that solution's problem, not the
    run's); its ``--Solution`` lines still attach to it. Output without any result row parses
    to an empty :class:`BenchOutput`.
    """
    where = source or _STDOUT
    lines = text.splitlines() if isinstance(text, str) else [line.rstrip("\n") for line in text]
    header: list[str] | None = None
    rank: int | None = None
    expect_values = False
    pending_winner = False
    rows: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("Winner:"):
            pending_winner = True
            continue
        candidate = stripped
        match = _RANK.match(stripped)
        if match:
            rank = int(match.group(1))
            candidate = match.group(2).strip()
            if not candidate:  # "[0]:" alone: the values follow on the next line
                expect_values = header is not None
                continue
        fields = [field.strip() for field in candidate.split(",")]
        if _is_header(fields):
            header = fields
            if not match:
                rank = None
            expect_values = True
            continue
        if stripped.startswith("--"):
            label = next((key for key in _SOLUTION_LINES if stripped.startswith(key)), None)
            if label is not None and rows:
                value = stripped[len(label) :].strip()
                name = _SOLUTION_LINES[label]
                if name == "solution_index":
                    try:
                        rows[-1][name] = int(value)
                    except ValueError:
                        raise ToolOutputError(
                            f"solution index is not an integer: {value!r}", Location(file=where, line=number)
                        ) from None
                else:
                    rows[-1][name] = value
            continue
        if header is None or "," not in stripped or not (expect_values or raw[:1].isspace()):
            continue  # banner and progress lines
        values = _split_values(stripped)
        problem: str | None = None
        if len(values) != len(header):
            problem = f"values row has {len(values)} fields but the header has {len(header)}"
        row = dict(zip(header, values, strict=False))
        for column in sorted(_NUMERIC_COLUMNS & row.keys()):
            if problem is not None:
                break
            if column in _TOLERANCE_COLUMNS and row[column] == VERIFY_FAILED:
                continue  # that kernel failed verification: a result (BenchResult.verification_failed)
            try:
                float(row[column])
            except ValueError:
                problem = f"column {column} is not a number: {row[column]!r}"
        if problem is not None:
            if not lenient:
                raise ToolOutputError(problem, Location(file=where, line=number))
            row = {column: value for column, value in row.items() if column not in _NUMERIC_COLUMNS}
        entry: dict[str, Any] = {
            "line": number, "rank": rank, "values": row, "winner": pending_winner, "malformed": problem,
        }  # fmt: skip
        # Newer versions also print the solution as columns (solution_index, kernel_name).
        if row.get("solution_index", "").lstrip("-").isdigit() and int(row["solution_index"]) >= 0:
            entry["solution_index"] = int(row["solution_index"])
        if row.get("kernel_name"):
            entry["kernel_name"] = row["kernel_name"]
        rows.append(entry)
        pending_winner = False
        expect_values = False
    results = [BenchResult.model_validate(row) for row in rows]
    winner = next((result for result in results if result.winner), None)
    return BenchOutput(results=tuple(result for result in results if not result.winner), winner=winner)


# --------------------------------------------------------------------------------------------
# Running


def library_env(library_dir: str | Path | None) -> dict[str, str | None]:
    """Environment overrides selecting hipBLASLt's Tensile library.

    A directory selects that library (``HIPBLASLT_TENSILE_LIBPATH=<dir>``); None selects the
    library hipBLASLt was installed with by *removing* the variable, so an inherited setting
    cannot turn a reference run into a tuned one.
    """
    return {LIBRARY_PATH_ENV: None if library_dir is None else str(library_dir)}


def _run(
    runner: CommandRunner,
    argv: list[str],
    *,
    library_dir: str | Path | None,
    env: EnvOverrides | None,
    cwd: str | Path | None,
    timeout: float | None,
    lenient: bool = False,
) -> BenchOutput:
    overrides: dict[str, str | None] = dict(env or {})
    overrides.update(dict.fromkeys(SCRUBBED_ENV))
    overrides.update(library_env(library_dir))
    completed = runner.run(argv, cwd=cwd, env=overrides, timeout=timeout).check()
    output = parse_bench_output(completed.stdout, lenient=lenient)
    if not output.results and output.winner is None:
        raise ToolOutputError("hipblaslt-bench printed no result rows", Location(file=_STDOUT))
    return output


def run_bench(
    runner: CommandRunner,
    problem: GemmProblem,
    options: BenchOptions | None = None,
    *,
    executable: str = DEFAULT_EXECUTABLE,
    library_dir: str | Path | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
    profile: ToolProfile | None = None,
    lenient: bool = False,
) -> BenchOutput:
    """Benchmark one problem; ``library_dir`` None means hipBLASLt's installed library.

    Raises :class:`~tensilekit.errors.ToolFailed` for a non-zero exit or a timeout,
    :class:`~tensilekit.errors.ToolOutputError` for output without results or (unless
    ``lenient``, see :func:`parse_bench_output`) with bad rows and :class:`NotExpressible` when
    ``profile``'s bench cannot express the problem.
    """
    argv = build_bench_argv(problem, options, executable=executable, profile=profile)
    return _run(runner, argv, library_dir=library_dir, env=env, cwd=cwd, timeout=timeout, lenient=lenient)


def run_bench_yaml(
    runner: CommandRunner,
    yaml_path: str | Path,
    *,
    executable: str = DEFAULT_EXECUTABLE,
    library_dir: str | Path | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> BenchOutput:
    """Benchmark every record of a ``--yaml`` file (see :func:`dump_bench_yaml`)."""
    argv = build_bench_yaml_argv(yaml_path, executable=executable)
    return _run(runner, argv, library_dir=library_dir, env=env, cwd=cwd, timeout=timeout)


class LibraryComparison(BaseModel):
    """One problem benchmarked against the reference library and a tuned one."""

    model_config = ConfigDict(frozen=True)

    problem: GemmProblem
    reference: BenchOutput
    tuned: BenchOutput

    @property
    def speedup(self) -> float | None:
        """Tuned GFlops over reference GFlops of the best results; None if either is missing."""
        reference, tuned = self.reference.best(), self.tuned.best()
        if reference is None or tuned is None or not reference.gflops or tuned.gflops is None:
            return None
        return tuned.gflops / reference.gflops


def compare_libraries(
    runner: CommandRunner,
    problem: GemmProblem,
    tuned_library_dir: str | Path,
    options: BenchOptions | None = None,
    *,
    reference_library_dir: str | Path | None = None,
    executable: str = DEFAULT_EXECUTABLE,
    env: Mapping[str, str | None] | None = None,
    timeout: float | None = None,
) -> LibraryComparison:
    """Run the same problem with the reference library and with ``tuned_library_dir``."""
    reference = run_bench(
        runner, problem, options, executable=executable, library_dir=reference_library_dir, env=env, timeout=timeout
    )
    tuned = run_bench(
        runner, problem, options, executable=executable, library_dir=tuned_library_dir, env=env, timeout=timeout
    )
    return LibraryComparison(problem=problem, reference=reference, tuned=tuned)


__all__ = [
    "SCRUBBED_ENV",
    "DEFAULT_EXECUTABLE",
    "LIBRARY_PATH_ENV",
    "VERIFY_FAILED",
    "AlgoMethod",
    "BenchOptions",
    "BenchOutput",
    "BenchResult",
    "InvalidMeasurement",
    "LibraryComparison",
    "NotExpressible",
    "bench_problem_issue",
    "bench_yaml_record",
    "build_bench_argv",
    "build_bench_yaml_argv",
    "compare_libraries",
    "dump_bench_yaml",
    "library_env",
    "parse_bench_output",
    "run_bench",
    "run_bench_yaml",
]

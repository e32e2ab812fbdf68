"""Drive the Tensile/tensilelite benchmark driver (``Tensile config.yaml outdir``) and read its CSVs.

The driver (``Tensile/Tensile.py``) takes ``config_file… output_path`` plus options, benchmarks
every kernel its config forks for every size, and leaves:

* ``1_BenchmarkProblems/…`` working directories (sources, build, per-step ``Data/*.csv``),
* ``2_BenchmarkData/<ProblemType>_<nn>[_CSVWinner].csv`` the final step's client results (the
  suffix marks files with ``Winner*`` columns), a ``.yaml`` with the benchmarked solutions,
* ``3_LibraryLogic/*.yaml`` logic files (when the config has a ``LibraryLogic`` section).

When a benchmark client reports failures (a solution failing validation makes it exit non-zero)
the driver prints ``clientExit=<n> (ERROR) for …`` and, with the default ``ExitOnFails: 1``,
exits with status 1 right after copying the CSV, before the ``LibraryLogic`` step.

The client CSV (``ResultFileReporter``/``CSVStackFile``: ``", "`` separated, quoted where a
value has a comma) has one row per problem: ``GFlops`` (the problem index; ``GFlopsPerCU`` with the
CU-efficiency metric), ``SizeI``, ``SizeJ``, ``SizeK``, ``SizeL``… (``I``=M, ``J``=N, ``K``=batch,
``L``=K for a GEMM), ``LDD``, ``LDC``, ``LDA``, ``LDB``, ``TotalFlops``, with
``--csv-export-extra-cols`` ``WinnerGFlops``, ``WinnerTimeUS``, ``WinnerIdx``, ``WinnerName``, then
one column per solution (named by the solution) holding its GFlops: ``-1`` when the solution
failed validation, empty when it was not run for that problem. Columns are read by name, never
by position, because each AMD version adds its own: tensilelite (hipBLASLt 7d9fb68) writes
``TilesPerCu`` and ``TotalGranularity`` after ``TotalFlops`` with the extra columns; ROCm/Tensile
(09ec347, a164ed70) always writes ``WinnerFreq``, ``WinnerPower`` and ``WinnerTemperature``
(``ResultFileReporter.cpp`` ``setHeaderForKey`` in each). Those are per-problem facts, not
solutions: :data:`NON_SOLUTION_COLUMNS` names every column that is not a solution.

The driver copies the final step's results to ``2_BenchmarkData/<ProblemType>_<nn><suffix>.csv``
and the benchmarked solutions to ``<ProblemType>_<nn><suffix>.yaml``, with the same suffix:
``_CSVWinner`` whenever ``CSVExportWinner`` is set (``BenchmarkProblems.py:405-410`` @7d9fb68,
``:382-387`` @09ec347) -- see :func:`solutions_file_for`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from tensilekit.errors import InputNotFound, Location, ToolOutputError
from tensilekit.tools.profiles import ToolProfile
from tensilekit.tools.runner import CommandRunner

DEFAULT_EXECUTABLE = "Tensile"
FORCED_SOLUTION_ENV = "TENSILE_SOLUTION_INDEX"
"""Newer tensilelite's C++ host library (``MasterSolutionLibrary.hpp``, rocm-libraries develop) answers
every query with this solution index when the variable is set (``Tensile will use solution index: N``):
removed from the environment of every driver and benchmark run (hipblaslt-2026-interfaces.md §4)."""
BENCHMARK_DATA_DIR = "2_BenchmarkData"
LIBRARY_LOGIC_DIR = "3_LibraryLogic"
FAILED = -1.0
"""The GFlops value the client writes for a solution that failed validation."""

_METRIC_COLUMNS = ("GFlops", "GFlopsPerCU")
_LD_COLUMNS = {"LDD": "ldd", "LDC": "ldc", "LDA": "lda", "LDB": "ldb"}
_WINNER_COLUMNS = ("WinnerGFlops", "WinnerTimeUS", "WinnerIdx", "WinnerName")
# Per-problem columns that are not solutions, by AMD version (ResultFileReporter.cpp):
# tensilelite @7d9fb68 with extra columns; ROCm/Tensile @09ec347/@a164ed70 always.
_TENSILELITE_EXTRA_COLUMNS = ("TilesPerCu", "TotalGranularity")
_TENSILE_EXTRA_COLUMNS = ("WinnerFreq", "WinnerPower", "WinnerTemperature")
NON_SOLUTION_COLUMNS = frozenset(
    {
        *_METRIC_COLUMNS,
        *_LD_COLUMNS,
        "TotalFlops",
        *_WINNER_COLUMNS,
        *_TENSILELITE_EXTRA_COLUMNS,
        *_TENSILE_EXTRA_COLUMNS,
    }
)
"""Every client CSV column that is not a solution (besides ``Size<I…>``)."""


class TensileRunConfig(BaseModel):
    """One invocation of the benchmark driver.

    ``size_file`` is the optional second config of ``--alternate-format`` (a size list).
    ``global_parameters`` become ``--global-parameters KEY=VALUE …``; Tensile evaluates each
    VALUE as a Python literal, so strings must carry their own quotes (``"'gfx942'"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    config_file: Path
    output_dir: Path
    size_file: Path | None = None
    alternate_format: bool = False
    use_cache: bool = False
    device: int | None = None
    prebuilt_client: Path | None = None
    client_build_path: Path | None = None
    """Where the driver builds its client (``ClientBuildPath``, default ``<output>/0_Build``)."""
    client_lock: Path | None = None
    """``ClientExecutionLockPath``: a file lock held while the client runs (Common.py:1837-1842 @7d9fb68)."""
    library_format: Literal["yaml", "msgpack"] | None = None
    logic_format: Literal["yaml", "json"] | None = None
    verbose: bool = False
    global_parameters: tuple[tuple[str, str], ...] = ()

    @model_validator(mode="after")
    def _check(self) -> TensileRunConfig:
        if self.size_file is not None and not self.alternate_format:
            raise ValueError("size_file is only read with alternate_format=True")
        if self.prebuilt_client is not None and self.client_build_path is not None:
            raise ValueError("a prebuilt client is not built: give prebuilt_client or client_build_path")
        for key, _ in self.global_parameters:
            if not key or "=" in key:
                raise ValueError(f"bad global parameter name {key!r}")
        return self


def build_tensile_argv(
    config: TensileRunConfig, *, executable: str = DEFAULT_EXECUTABLE, profile: ToolProfile | None = None
) -> list[str]:
    """``Tensile <config> [<sizes>] <output> [options]`` as ``Tensile.py``'s argparse expects.

    ``--global-parameters`` takes any number of values, so it comes last. With a ``profile``,
    options its release does not define raise ``ValueError`` instead of an argparse exit:
    ROCm/Tensile has no ``--use-cache`` (it has ``--no-cache``) and no ``--logic-format``
    (Tensile.py:110-216 @09ec347; tensilelite's Tensile.py:107-213 @7d9fb68 has both).
    """
    if profile is not None:
        for flag, used in (("--use-cache", config.use_cache), ("--logic-format", config.logic_format is not None)):
            if used and flag not in profile.driver_flags:
                raise ValueError(f"{profile.description}'s Tensile driver has no {flag}")
        if config.client_build_path is not None and not profile.driver_builds_client:
            raise ValueError(f"{profile.description}'s Tensile driver builds no client (no --client-build-path)")
    argv = [executable, str(config.config_file)]
    if config.size_file is not None:
        argv.append(str(config.size_file))
    argv.append(str(config.output_dir))
    if config.alternate_format:
        argv.append("--alternate-format")
    if config.use_cache:
        argv.append("--use-cache")
    if config.device is not None:
        argv += ["--device", str(config.device)]
    if config.prebuilt_client is not None:
        argv += ["--prebuilt-client", str(config.prebuilt_client)]
    if config.client_build_path is not None:
        argv += ["--client-build-path", str(config.client_build_path)]
    if config.client_lock is not None:
        argv += ["--client-lock", str(config.client_lock)]
    if config.library_format is not None:
        argv += ["--library-format", config.library_format]
    if config.logic_format is not None:
        argv += ["--logic-format", config.logic_format]
    if config.verbose:
        argv.append("--verbose")
    if config.global_parameters:
        argv += ["--global-parameters", *(f"{key}={value}" for key, value in config.global_parameters)]
    return argv


# --------------------------------------------------------------------------------------------
# Client CSV


class ClientCsvRow(BaseModel):
    """One problem's row of a client CSV."""

    model_config = ConfigDict(frozen=True)

    line: int
    problem_index: int
    sizes: tuple[int, ...]
    """``SizeI``, ``SizeJ``, ``SizeK``, ``SizeL``… in index order."""
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    ldd: int | None = None
    total_flops: float | None = None
    winner_gflops: float | None = None
    winner_time_us: float | None = None
    winner_index: int | None = None
    winner_name: str | None = None
    gflops: dict[str, float | None]
    """Per solution name: GFlops, :data:`FAILED` (-1) for failed validation, None if not run."""

    @property
    def gemm_size(self) -> tuple[int, int, int, int]:
        """``(M, N, batch, K)`` for a GEMM's four sizes ``I, J, K, L``; ``ValueError`` otherwise."""
        if len(self.sizes) != 4:
            raise ValueError(f"{len(self.sizes)} size indices is not a plain GEMM")
        size_i, size_j, size_k, size_l = self.sizes
        return (size_i, size_j, size_k, size_l)

    @property
    def failed(self) -> list[str]:
        """Solutions that failed validation for this problem."""
        return [name for name, value in self.gflops.items() if value is not None and value < 0]

    @property
    def valid(self) -> dict[str, float]:
        """Solutions that ran and validated, with their GFlops."""
        return {name: value for name, value in self.gflops.items() if value is not None and value >= 0}

    def best(self) -> tuple[str, float] | None:
        """The fastest valid solution and its GFlops (first one on ties), or None."""
        valid = self.valid
        if not valid:
            return None
        name = max(valid, key=lambda key: valid[key])
        return name, valid[name]


class ClientCsv(BaseModel):
    """A whole client results file."""

    model_config = ConfigDict(frozen=True)

    source: str | None = None
    metric: str = "GFlops"
    """``GFlops`` (device efficiency) or ``GFlopsPerCU``."""
    solution_names: tuple[str, ...] = ()
    rows: tuple[ClientCsvRow, ...] = ()


def _cell_number(text: str, column: str, location: Location) -> float | None:
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise ToolOutputError(f"column {column!r} is not a number: {text!r}", location) from None


def _cell_int(text: str, column: str, location: Location) -> int | None:
    value = _cell_number(text, column, location)
    if value is None:
        return None
    if not value.is_integer():
        raise ToolOutputError(f"column {column!r} is not an integer: {text!r}", location)
    return int(value)


def parse_client_csv(text: str, *, source: str | None = None) -> ClientCsv:
    """Read a Tensile client results CSV by column name.

    Raises :class:`~tensilekit.errors.ToolOutputError` (file and line) for a missing or foreign
    header, a row whose field count differs from the header's, or a non-numeric number.
    """
    lines = text.splitlines()
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise ToolOutputError("empty client CSV", Location(file=source, line=1))
    header_number, header_line = numbered[0]
    header = [cell.strip() for cell in next(csv.reader([header_line], skipinitialspace=True))]
    header_location = Location(file=source, line=header_number)
    if header[0] not in _METRIC_COLUMNS or "SizeI" not in header:
        raise ToolOutputError(f"not a Tensile client CSV: header starts {', '.join(header[:3])!r}", header_location)
    if len(set(header)) != len(header):
        raise ToolOutputError("client CSV header repeats a column name", header_location)
    size_columns = [name for name in header if name.startswith("Size") and len(name) == 5 and name[4].isupper()]
    fixed = {header[0], *size_columns, *NON_SOLUTION_COLUMNS}
    solutions = tuple(name for name in header if name not in fixed)
    rows: list[ClientCsvRow] = []
    for number, line in numbered[1:]:
        location = Location(file=source, line=number)
        cells = [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True))]
        if len(cells) != len(header):
            raise ToolOutputError(f"row has {len(cells)} fields but the header has {len(header)}", location)
        row = dict(zip(header, cells, strict=True))
        index = _cell_int(row[header[0]], header[0], location)
        if index is None:
            raise ToolOutputError(f"row has no problem index in column {header[0]!r}", location)
        sizes: list[int] = []
        for column in size_columns:
            size = _cell_int(row[column], column, location)
            if size is None:
                raise ToolOutputError(f"row has no {column}", location)
            sizes.append(size)
        values = {
            "line": number,
            "problem_index": index,
            "sizes": tuple(sizes),
            "total_flops": _cell_number(row.get("TotalFlops", ""), "TotalFlops", location),
            "winner_gflops": _cell_number(row.get("WinnerGFlops", ""), "WinnerGFlops", location),
            "winner_time_us": _cell_number(row.get("WinnerTimeUS", ""), "WinnerTimeUS", location),
            "winner_index": _cell_int(row.get("WinnerIdx", ""), "WinnerIdx", location),
            "winner_name": row.get("WinnerName") or None,
            "gflops": {name: _cell_number(row[name], name, location) for name in solutions},
        }
        for column, field in _LD_COLUMNS.items():
            values[field] = _cell_int(row.get(column, ""), column, location)
        rows.append(ClientCsvRow.model_validate(values))
    return ClientCsv(source=source, metric=header[0], solution_names=solutions, rows=tuple(rows))


def solutions_file_for(csv_path: str | Path) -> Path:
    """The benchmarked-solutions YAML the driver writes next to a ``2_BenchmarkData`` CSV.

    Same stem, ``.yaml``: ``<PT>_00_CSVWinner.csv`` -> ``<PT>_00_CSVWinner.yaml``
    (``BenchmarkProblems.py:407-410`` @7d9fb68 names both with the same ``csvSuffix``).
    """
    return Path(csv_path).with_suffix(".yaml")


def load_client_csv(path: str | Path) -> ClientCsv:
    """Read a client CSV file; see :func:`parse_client_csv`."""
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no such client CSV: {file}", Location(file=str(file)))
    return parse_client_csv(file.read_text(encoding="utf-8", errors="replace"), source=str(file))


# --------------------------------------------------------------------------------------------
# Outputs and running


class TensileRunResult(BaseModel):
    """What a benchmark-driver run left in its output directory."""

    model_config = ConfigDict(frozen=True)

    output_dir: Path
    benchmark_data: tuple[ClientCsv, ...] = ()
    """``2_BenchmarkData/*.csv``, sorted by file name."""
    logic_files: tuple[Path, ...] = ()
    """``3_LibraryLogic/*.yaml`` (or ``.json``), sorted."""
    returncode: int = 0
    client_failures: int = 0
    """Benchmark steps whose client reported failures (the driver's ``clientExit=<n>``)."""


def collect_tensile_outputs(output_dir: str | Path) -> TensileRunResult:
    """Read the client CSVs and list the logic files under a driver output directory."""
    root = Path(output_dir)
    data_dir = root / BENCHMARK_DATA_DIR
    logic_dir = root / LIBRARY_LOGIC_DIR
    csvs = tuple(load_client_csv(path) for path in sorted(data_dir.glob("*.csv"))) if data_dir.is_dir() else ()
    logic: tuple[Path, ...] = ()
    if logic_dir.is_dir():
        logic = tuple(sorted(path for path in logic_dir.iterdir() if path.suffix in (".yaml", ".yml", ".json")))
    return TensileRunResult(output_dir=root, benchmark_data=csvs, logic_files=logic)


_CLIENT_EXIT = re.compile(r"^clientExit=(\d+)", re.MULTILINE)


def client_failures(stdout: str) -> int:
    """The failure count of the last ``clientExit=<n>`` line the driver printed (0 if none)."""
    counts = _CLIENT_EXIT.findall(stdout)
    return int(counts[-1]) if counts else 0


def run_tensile(
    runner: CommandRunner,
    config: TensileRunConfig,
    *,
    executable: str = DEFAULT_EXECUTABLE,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
    require: Sequence[Literal["benchmark_data", "logic"]] = ("benchmark_data",),
) -> TensileRunResult:
    """Run the benchmark driver and collect its outputs.

    Raises :class:`~tensilekit.errors.ToolFailed` for a timeout or a non-zero exit, except the
    ``ExitOnFails`` exit (status 1 after ``clientExit=<n> (ERROR)`` with the CSVs written), and
    :class:`~tensilekit.errors.ToolOutputError` when an output kind named in ``require`` is
    missing (add ``"logic"`` when the config has a ``LibraryLogic`` section) or a CSV is bad.
    Solutions that failed validation are *results* (GFlops -1, ``client_failures``), not errors.
    """
    overrides = {**(env or {}), FORCED_SOLUTION_ENV: None}
    completed = runner.run(build_tensile_argv(config, executable=executable), cwd=cwd, env=overrides, timeout=timeout)
    failures = client_failures(completed.stdout)
    result = collect_tensile_outputs(config.output_dir).model_copy(
        update={"returncode": completed.returncode, "client_failures": failures}
    )
    # ExitOnFails: status 1 after a benchmark with failures is a result (the CSV holds -1 for the
    # failed solutions), not a crash; anything else non-zero is.
    if completed.returncode != 0 and not (completed.returncode == 1 and failures and result.benchmark_data):
        raise completed.failure()
    if "benchmark_data" in require and not result.benchmark_data:
        raise ToolOutputError(
            f"Tensile wrote no {BENCHMARK_DATA_DIR}/*.csv", Location(file=str(config.output_dir / BENCHMARK_DATA_DIR))
        )
    if "logic" in require and not result.logic_files:
        raise ToolOutputError(
            f"Tensile wrote no {LIBRARY_LOGIC_DIR}/*.yaml", Location(file=str(config.output_dir / LIBRARY_LOGIC_DIR))
        )
    return result


__all__ = [
    "BENCHMARK_DATA_DIR",
    "DEFAULT_EXECUTABLE",
    "FAILED",
    "FORCED_SOLUTION_ENV",
    "LIBRARY_LOGIC_DIR",
    "ClientCsv",
    "ClientCsvRow",
    "TensileRunConfig",
    "TensileRunResult",
    "build_tensile_argv",
    "client_failures",
    "collect_tensile_outputs",
    "NON_SOLUTION_COLUMNS",
    "load_client_csv",
    "solutions_file_for",
    "parse_client_csv",
    "run_tensile",
]

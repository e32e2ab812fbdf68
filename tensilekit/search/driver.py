"""Evaluate kernels with the Tensile benchmark driver: write a config, run it, read the CSV back.

The search's fitness is measured time. :func:`evaluate_with_driver` writes one config holding
the kernels (:func:`~tensilekit.search.configs.tuning_config`), runs the driver through a
:class:`~tensilekit.tools.runner.CommandRunner` (:func:`~tensilekit.tools.tensile_client.run_tensile`)
and turns its outputs into one :class:`~tensilekit.search.ga.Measurement` per kernel
(:func:`read_driver_results`):

* the client CSV (``2_BenchmarkData/<PT>_00_CSVWinner.csv``) holds each solution's GFlops per
  size; time is ``TotalFlops / (GFlops * 1e3)`` microseconds; ``-1`` means the solution failed
  validation; a GFlops that is NaN, infinite, zero or another negative number is a
  **measurement error** of that kernel (status ``measurement error``), never a time. Columns
  that are not solutions (``TilesPerCu``, ``WinnerFreq`` …) are recognised by name
  (:data:`~tensilekit.tools.tensile_client.NON_SOLUTION_COLUMNS`);
* the benchmarked solutions (``2_BenchmarkData/<PT>_00_CSVWinner.yaml``, the CSV's stem, same
  order as its solution columns) tie columns to kernels when the driver's names are not
  tensilekit's (the real driver names solutions itself): by the parameters of each record, else
  in order. A kernel the driver did not benchmark (it rejected it) is a result too.

This is the search's subprocess edge; everything else in :mod:`tensilekit.search` is pure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import math
import shutil
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tensilekit._arguments import require, require_path
from tensilekit.errors import InvalidKernel, ToolOutputError
from tensilekit.search.configs import MINIMUM_REQUIRED_VERSION, check_tuning_arguments, tuning_config, write_config
from tensilekit.search.ga import Measurement
from tensilekit.search.params import Dialect, KernelParams, ProblemShape
from tensilekit.search.profiles import ArchProfile
from tensilekit.tools.profiles import ToolProfile
from tensilekit.tools.runner import CommandRunner
from tensilekit.tools.tensile_client import (
    FAILED,
    ClientCsv,
    TensileRunConfig,
    TensileRunResult,
    run_tensile,
    solutions_file_for,
)

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_solution_records(path: str | Path) -> list[dict[str, Any]]:
    """The solution records of a driver ``2_BenchmarkData/*.yaml`` (the version header skipped).

    A file whose items are one JSON object per line (YAML flow mappings, as the SIMULATED
    driver writes them) is read line by line, much faster than a YAML parse.
    """
    text = Path(path).read_text(encoding="utf-8")
    data: Any
    try:
        data = [json.loads(line[2:]) for line in text.splitlines() if line.strip()]
    except ValueError:
        data = yaml.load(text, Loader=_LOADER)
    if not isinstance(data, list):
        raise ToolOutputError(f"{path}: not a list of solutions")
    return [item for item in data if isinstance(item, dict) and not set(item) <= _HEADER_KEYS]


# The items LibraryIO.writeSolutions puts before the solutions (LibraryIO.py:153-167 @7d9fb68).
_HEADER_KEYS = frozenset({"MinimumRequiredVersion", "ProblemSizes", "BiasTypeArgs", "ActivationArgs"})


def _solutions_file(csv: ClientCsv) -> Path | None:
    if csv.source is None:
        return None
    candidate = solutions_file_for(csv.source)
    return candidate if candidate.is_file() else None


MEASUREMENT_ERROR = "measurement error"
"""Status prefix of a kernel whose reported GFlops no timing can produce."""


def _bad_gflops(value: float) -> bool:
    """A GFlops no timing can produce: NaN, infinite, zero, or negative other than -1."""
    return not math.isfinite(value) or value == 0 or (value < 0 and value != FAILED)


def _match_columns(
    csv: ClientCsv,
    records: Callable[[], Sequence[Mapping[str, Any]]],
    kernels: Sequence[KernelParams],
    defaults: Mapping[str, int],
    type_name: str,
) -> dict[KernelParams, int]:
    """Kernel -> solution column position: by tensilekit's name, then by the parameters of the
    solution records (``records`` is called only if names leave kernels unmatched), then the
    rest in order when as many kernels as columns remain."""
    columns = list(csv.solution_names)
    found: dict[KernelParams, int] = {}
    taken: set[int] = set()
    by_name = {name: position for position, name in enumerate(columns)}
    for kernel in kernels:
        position = by_name.get(kernel.name(type_name))
        if position is not None and position not in taken:
            found[kernel] = position
            taken.add(position)
    if len(found) < len(kernels):
        solution_records = records()
        if len(solution_records) == len(columns):
            wanted = set(kernels) - set(found)
            for position, record in enumerate(solution_records):
                if position in taken:
                    continue
                try:
                    kernel = KernelParams.from_solution(record, defaults)
                except InvalidKernel:
                    continue
                if kernel in wanted:
                    wanted.discard(kernel)
                    found[kernel] = position
                    taken.add(position)
    # The driver keeps the config's solution order: what is still unmatched pairs up in order
    # when as many kernels as columns are left (a record whose parameters the driver adjusted).
    left_kernels = [kernel for kernel in kernels if kernel not in found]
    left_columns = [position for position in range(len(columns)) if position not in taken]
    if left_kernels and len(left_kernels) == len(left_columns):
        found.update(zip(left_kernels, left_columns, strict=True))
    return found


def read_driver_results(
    result: TensileRunResult,
    kernels: Sequence[KernelParams],
    sizes: Sequence[ProblemShape],
    *,
    defaults: Mapping[str, int],
    type_name: str,
) -> list[Measurement]:
    """One measurement per kernel from a driver run's outputs (see the module docstring)."""
    require(result, TensileRunResult, "result", "read_driver_results")
    require(defaults, Mapping, "defaults", "read_driver_results")
    require(type_name, str, "type_name", "read_driver_results")
    if not result.benchmark_data:
        return [Measurement(kernel, (None,) * len(sizes), "no benchmark data") for kernel in kernels]
    csv = result.benchmark_data[0]
    solutions_file = _solutions_file(csv)

    def records() -> Sequence[Mapping[str, Any]]:
        return load_solution_records(solutions_file) if solutions_file is not None else []

    columns = _match_columns(csv, records, kernels, defaults, type_name)
    rows = {row.gemm_size: row for row in csv.rows if len(row.sizes) == 4}
    measurements: list[Measurement] = []
    for kernel in kernels:
        position = columns.get(kernel)
        if position is None:
            measurements.append(Measurement(kernel, (None,) * len(sizes), "rejected by the driver"))
            continue
        name = csv.solution_names[position]
        times: list[float | None] = []
        failed = False
        bad: list[str] = []
        for shape in sizes:
            row = rows.get(shape.size)
            gflops = row.gflops.get(name) if row is not None else None
            if gflops is None:
                times.append(None)
            elif _bad_gflops(gflops):
                bad.append(f"{gflops!r} GFlops at {'x'.join(map(str, shape.size))}")
                times.append(None)
            elif gflops == FAILED:
                failed = True
                times.append(None)
            else:
                flops = row.total_flops if row is not None and row.total_flops else shape.flops
                times.append(flops / (gflops * 1e3))
        if bad:
            status = f"{MEASUREMENT_ERROR}: " + ", ".join(bad)
        elif failed:
            status = "failed validation"
        else:
            status = "ok" if all(t is not None for t in times) else "not run on every size"
        record = (str(solutions_file), position) if solutions_file is not None else None
        measurements.append(Measurement(kernel, tuple(times), status, record))
    return measurements


@dataclasses.dataclass(frozen=True)
class SharedClient:
    """The driver's benchmark client, built once per node and shared by every driver run, and
    the per-GPU lock each run holds.

    Left alone, a tensilelite 4.x driver run builds its own client into ``<output>/0_Build`` (no
    ``PrebuiltClient``: ``ClientExecutable.getClientExecutable``, ClientExecutable.py:57-90 @7d9fb68)
    and a GA rebuilds it every generation. As GEKO does (``build_tensilelite_client`` once, then
    every run with ``--prebuilt-client``: geko/optim/optim.py ``run`` @114ce39e in
    ROCm/rocm-libraries projects/hipblaslt/utilities/geko, geko/config_generator/output_writer.py
    ``write_run_script``), the first run on a node builds it into :attr:`build_dir`
    (``--client-build-path``) while holding ``build.lock``; every later run (and any run that
    waited on that lock) passes ``--prebuilt-client`` :attr:`executable`. A driver that never
    builds its client (``builds_client`` False: rocm-libraries, whose ``--prebuilt-client``
    defaults to the separately built ``tensilelite-client``) is given neither option.

    Two runs on one GPU never time at the same time: with ``driver_locks`` the driver holds
    :meth:`gpu_lock` while its client runs (``--client-lock``, ``ClientExecutionLockPath``:
    ClientWriter.py:205 @7d9fb68; it needs ``filelock`` in the driver's venv); without, tensilekit
    holds that same file locked for the whole driver run (:attr:`ToolProfile.driver_client_lock
    <tensilekit.tools.profiles.ToolProfile.driver_client_lock>`).
    """

    folder: Path
    """``<runs>/client/<host>``: one client per node (device numbers are per node too)."""
    builds_client: bool = True
    driver_locks: bool = False

    @classmethod
    def for_node(cls, runs: str | Path, node: str | None = None, profile: ToolProfile | None = None) -> SharedClient:
        """The node's client; ``profile`` (the driver's release) says whether the driver builds it
        and whether its ``--client-lock`` works (default: tensilelite 4.x's answers)."""
        folder = Path(runs).resolve() / "client" / (node or socket.gethostname())
        if profile is None:
            return cls(folder)
        return cls(folder, builds_client=profile.driver_builds_client, driver_locks=profile.driver_client_lock)

    @property
    def build_dir(self) -> Path:
        return self.folder / "build"

    @property
    def executable(self) -> Path:
        """Where the driver's CMake build leaves the client (``builtPath("client/tensile_client")``)."""
        return self.build_dir / "client" / "tensile_client"

    def gpu_lock(self, device: int) -> Path:
        return self.folder / f"gpu{device}.lock"

    @contextlib.contextmanager
    def arguments(self, device: int | None) -> Iterator[dict[str, Path]]:
        """The :class:`TensileRunConfig` fields of one run, held for the run: the client (prebuilt,
        or build it holding the node's build lock until the run is over) and the GPU's lock."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            fields: dict[str, Path] = {}
            if self.builds_client:
                lock = stack.enter_context(open(self.folder / "build.lock", "a", encoding="utf-8"))
                fcntl.flock(lock, fcntl.LOCK_EX)
                if self.executable.is_file():
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    fields["prebuilt_client"] = self.executable
                else:
                    fields["client_build_path"] = self.build_dir
            if device is not None and self.driver_locks:
                fields["client_lock"] = self.gpu_lock(device)
            elif device is not None:
                # Taken after the build lock's decision, as every run does: no two runs wait on
                # each other's locks in opposite order.
                gpu = stack.enter_context(open(self.gpu_lock(device), "a", encoding="utf-8"))
                fcntl.flock(gpu, fcntl.LOCK_EX)
            yield fields


def evaluate_with_driver(
    runner: CommandRunner,
    kernels: Sequence[KernelParams],
    *,
    name: str,
    workdir: str | Path,
    problem_type: Mapping[str, Any],
    sizes: Sequence[ProblemShape],
    profile: ArchProfile,
    defaults: Mapping[str, int],
    type_name: str,
    dialect: Dialect = "tensilelite",
    executable: str = "Tensile",
    env: Mapping[str, str | None] | None = None,
    timeout: float | None = None,
    header: Sequence[str] = (),
    beta: bool = False,
    minimum_required_version: str = MINIMUM_REQUIRED_VERSION,
    bias_type: str | None = None,
    activation: str | None = None,
    client: SharedClient | None = None,
    device: int | None = None,
) -> list[Measurement]:
    """Benchmark ``kernels`` on ``sizes`` with the driver; one measurement per kernel.

    Writes ``<workdir>/<name>.yaml`` (+ ``.sh``) and runs the driver into
    ``<workdir>/build_<name>/`` (emptied first). With a ``client``, the run uses (or builds) that
    shared client and holds ``device``'s client lock (:class:`SharedClient`).

    Raises:
        ToolError: the driver could not be run, crashed, or wrote unreadable output (a
            solution failing validation is a result, not an error).
        TypeError: an argument of the wrong type.
    """
    if not callable(getattr(runner, "run", None)):
        raise TypeError(f"evaluate_with_driver(): runner must be a CommandRunner, not {type(runner).__name__}")
    check_tuning_arguments("evaluate_with_driver", problem_type, sizes, kernels, profile, dialect)
    require(name, str, "name", "evaluate_with_driver")
    require(type_name, str, "type_name", "evaluate_with_driver")
    require(defaults, Mapping, "defaults", "evaluate_with_driver")
    require(executable, str, "executable", "evaluate_with_driver")
    folder = require_path(workdir, "workdir", "evaluate_with_driver")
    config = tuning_config(
        problem_type, sizes, kernels, profile, dialect, library_logic=False, beta=beta,
        minimum_required_version=minimum_required_version, bias_type=bias_type, activation=activation,
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)  # the driver's working folder (write_config does not create it)
    config_path = write_config(folder, name, config, header)
    output = folder / f"build_{name}"
    shutil.rmtree(output, ignore_errors=True)
    with contextlib.ExitStack() as stack:
        fields = stack.enter_context(client.arguments(device)) if client is not None else {}
        result = run_tensile(
            runner,
            TensileRunConfig(config_file=config_path, output_dir=output, **fields),
            executable=executable,
            env=env,
            timeout=timeout,
        )
    return read_driver_results(result, kernels, sizes, defaults=defaults, type_name=type_name)


__all__ = ["MEASUREMENT_ERROR", "SharedClient", "evaluate_with_driver", "load_solution_records", "read_driver_results"]

"""The SIMULATED Tensile benchmark driver: kernels of a tuning config timed by tensilekit's GPU model.

:class:`SimulatedTensileRunner` is a :class:`~tensilekit.tools.runner.CommandRunner` that
answers ``Tensile config.yaml output_dir`` the way the real driver does, from the same GPU
model as :mod:`tensilekit.tools.simulated.gpu`: it reads the config, expands its forks into
solutions (:func:`~tensilekit.search.configs.expand_forks`), rejects the kernels a kernel
generator would (:data:`~tensilekit.search.pruning.HARDWARE_RULES`), times every solution on
every size and writes the real outputs -- ``2_BenchmarkData/<ProblemType>_00_CSVWinner.csv``
(client CSV, GFlops per solution, ``-1`` for failed validation), the benchmarked solutions
``2_BenchmarkData/<ProblemType>_00.yaml`` and, with a ``LibraryLogic`` section,
``3_LibraryLogic/<schedule>_<ProblemType>.yaml``. The fake ``tests/fakes/bin/Tensile`` calls
:func:`run_simulated_driver` too, so subprocess runs and in-process runs agree exactly.

A generated kernel is simulated as a :class:`~tensilekit.tools.simulated.gpu.SimKernel`
(:func:`sim_kernel`) whose name is the catalogue's name for the same tile, with a suffix for
every parameter that differs from the catalogue's defaults: a kernel equal to a catalogue
kernel gets the catalogue kernel's "quality", so the library's own choice, seeded into the
search, times exactly as the reference library does.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tensilekit.errors import InvalidKernel, ToolFailed
from tensilekit.io.atomic import write_text_atomic
from tensilekit.io.logic_io import dump_logic, logic_from_data
from tensilekit.model.logic import LogicSolution
from tensilekit.search.configs import config_sizes, expand_forks
from tensilekit.search.params import KernelParams
from tensilekit.search.profiles import profile_for
from tensilekit.search.pruning import HARDWARE_RULES, is_valid, make_context
from tensilekit.tools.costs import arch_spec, type_bytes
from tensilekit.tools.problem_types import (
    letters_of,
    problem_from_type,
    problem_type_dict,
    problem_type_name,
    tensile_letters,
)
from tensilekit.tools.runner import CompletedCommand, EnvOverrides
from tensilekit.tools.simulated.config import SIMULATED, SimulatorConfig
from tensilekit.tools.simulated.gpu import (
    SimKernel,
    SimulatedGpu,
    kernel_catalog,
    kernel_is_broken,
    supports,
    tuned_size_key,
    type_tag,
    write_tuned_library,
)
from tensilekit.tools.simulated.library import derived_record
from tensilekit.workload.problem import GemmProblem

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Client CSV header before the solution columns, per driver flavour (ResultFileReporter.cpp
# setHeaderForKey order with CSVExportWinner): tensilelite @7d9fb68 and ROCm/Tensile @09ec347.
_CSV_FIXED: dict[str, list[str]] = {
    "tensilelite": ["GFlops", "SizeI", "SizeJ", "SizeK", "SizeL", "LDD", "LDC", "LDA", "LDB", "TotalFlops",
                    "TilesPerCu", "TotalGranularity", "WinnerGFlops", "WinnerTimeUS", "WinnerIdx", "WinnerName"],
    "tensile": ["GFlops", "SizeI", "SizeJ", "SizeK", "SizeL", "LDD", "LDC", "LDA", "LDB", "WinnerFreq",
                "WinnerGFlops", "WinnerTimeUS", "WinnerIdx", "WinnerName", "TotalFlops", "WinnerPower",
                "WinnerTemperature"],
}  # fmt: skip
_MIN_NAME_KEYS = (
    ("lds_buffer", "1LDSB"), ("grvw_a", "GRVWA"), ("grvw_b", "GRVWB"), ("gsu", "GSU"), ("wave_group", "MIWG"),
    ("prefetch_global_read", "PGR"), ("stream_k", "SK"), ("stagger_u", "SU"), ("wgm", "WGM"), ("wgm_xcc", "WGMXCC"),
)  # fmt: skip


def driver_flavour(benchmark: Mapping[str, Any]) -> str:
    """``tensile`` when a config's kernels use ROCm/Tensile's key names, else ``tensilelite``."""
    text = json.dumps(benchmark.get("ForkParameters") or [])
    return "tensile" if "GlobalLoadVectorWidth" in text else "tensilelite"


def min_names(kernels: Sequence[KernelParams], type_name: str) -> list[str]:
    """Driver-style solution names: the tile and MI, then only the parameters that differ within
    the set (as Tensile's min-naming does), so they are unique but not tensilekit's names."""
    varying = [(gene, key) for gene, key in _MIN_NAME_KEYS if len({getattr(k, gene) for k in kernels}) > 1]
    names = []
    for kernel in kernels:
        mi = "x".join(str(value) for value in kernel.mi)
        parts = [f"{type_name}_MT{kernel.mt0}x{kernel.mt1}x{kernel.depth_u}_MI{mi}_SN"]
        for gene, key in varying:
            value = getattr(kernel, gene)
            parts.append(f"{key}{'_'.join(map(str, value)) if isinstance(value, tuple) else value}")
        names.append("_".join(parts))
    return names


_SIM_DEFAULTS = {"stream_k": 0, "wgm_xcc": 1, "prefetch_global_read": 2, "stagger_u": 32}
_SIM_ABBREVIATIONS = {
    "stream_k": "SK", "wgm_xcc": "WGMXCC", "prefetch_global_read": "PGR", "stagger_u": "SU", "grvw_a": "GRVWA",
    "grvw_b": "GRVWB",
}  # fmt: skip


def sim_kernel(params: KernelParams, problem: GemmProblem) -> SimKernel:
    """The simulated kernel of a generated kernel (see the module docstring for its name)."""
    element = type_bytes(problem.a_type)
    widest = 16 // element if element <= 16 else 1
    mi_text = "x".join(str(value) for value in params.mi)
    name = (
        f"{problem_type_name(problem)}_MT{params.mt0}x{params.mt1}x{params.depth_u}_MI{mi_text}_SN_GSU{params.gsu}"
        f"_WG64_{params.waves}_1_WGM{params.wgm}"
    )
    defaults: dict[str, int] = {**_SIM_DEFAULTS, "grvw_a": widest, "grvw_b": widest}
    for gene, abbreviation in _SIM_ABBREVIATIONS.items():
        value = getattr(params, gene)
        if value != defaults[gene]:
            name += f"_{abbreviation}{value}"
    index = 10_000_000 + int(hashlib.sha256(name.encode()).hexdigest()[:7], 16)
    return SimKernel(
        index=index, name=name, mt0=params.mt0, mt1=params.mt1, depth_u=params.depth_u, gsu=params.gsu,
        mi=params.mi, work_group=(64, params.waves, 1), wgm=params.wgm, stream_k=params.stream_k,
        vector_bytes=min(params.grvw_a, params.grvw_b) * element, prefetch=params.prefetch_global_read,
        stagger_u=params.stagger_u,
    )  # fmt: skip


def solution_record(
    params: KernelParams,
    name: str,
    position: int,
    problem: GemmProblem,
    arch: str,
    problem_type: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A tensilelite solution record for a generated kernel (what the driver's outputs hold): the
    complete record tensilelite's driver writes (:func:`~tensilekit.tools.simulated.library.derived_record`,
    so AMD's TensileCreateLibrary builds a tuned library holding it), or, for a kernel tensilelite
    7d9fb68 cannot derive (gfx950), the keys the model reads. ``problem_type`` is the config's
    (with the library row's epilogue keys, as the real driver's records carry them); default: the
    plain GEMM's."""
    spec = arch_spec(arch)
    try:
        return derived_record(
            problem_type if problem_type is not None else problem_type_dict(problem), params.fork_values("tensilelite"), isa=spec.isa, cu_count=spec.cu_count,
            name=name, position=position,
        )  # fmt: skip
    except InvalidKernel:
        pass
    return {
        "1LDSBuffer": params.lds_buffer,
        "DepthU": params.depth_u,
        "EnableMatrixInstruction": True,
        "GlobalReadVectorWidthA": params.grvw_a,
        "GlobalReadVectorWidthB": params.grvw_b,
        "GlobalSplitU": params.gsu,
        "GlobalSplitUAlgorithm": "MultipleBuffer",
        "ISA": list(spec.isa),
        "KernelLanguage": "Assembly",
        "KernelNameMin": name,
        "MIWaveGroup": list(params.wave_group),
        "MIWaveTile": list(params.wave_tile),
        "MacroTile0": params.mt0,
        "MacroTile1": params.mt1,
        "MatrixInstruction": list(params.mi),
        "PrefetchGlobalRead": params.prefetch_global_read,
        "ProblemType": problem_type_dict(problem),
        "SolutionIndex": position,
        "SolutionNameMin": name,
        "StaggerU": params.stagger_u,
        "StreamK": params.stream_k,
        "ThreadTile": [1, 1],
        "Valid": True,
        "WorkGroup": list(params.work_group),
        "WorkGroupMapping": params.wgm,
        "WorkGroupMappingXCC": params.wgm_xcc,
    }


def tuned_kernel(record: Mapping[str, Any], problem: GemmProblem, arch: str) -> SimKernel | None:
    """The simulated kernel of a generated solution record (None for records the search cannot read)."""
    try:
        params = KernelParams.from_solution(record, profile_for(arch).default_genes(letters_of(problem)))
    except InvalidKernel:
        return None
    return sim_kernel(params, problem)


def write_tuned_winners(directory: Path, arch: str, winners: Sequence[tuple[GemmProblem, str, LogicSolution]]) -> Path:
    """The simulated tuned library of ``winners`` (problem, solution name, logic-file solution) in
    ``directory``: what the simulated bench loads where a real one loads TensileCreateLibrary's
    build. A winner the catalogue does not have (a generated kernel) is described by its record."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    generated: dict[str, SimKernel] = {}
    for problem, name, solution in winners:
        table[type_tag(problem)][tuned_size_key(problem)] = name
        if name not in {kernel.name for kernel in kernel_catalog(arch, problem)}:
            kernel = tuned_kernel(solution.raw(), problem, arch)
            if kernel is not None:
                generated[name] = kernel
    write_tuned_library(
        directory, arch, {tag: dict(sorted(sizes.items())) for tag, sizes in sorted(table.items())}, generated
    )
    return directory


def _csv_text(rows: list[list[Any]], names: list[str], flavour: str) -> str:
    # The client separates cells with ", " and quotes none (solution names have no commas).
    lines = [", ".join([*_CSV_FIXED[flavour], *names])]
    lines += [", ".join(str(cell) for cell in row) for row in rows]
    return "\n".join(lines) + "\n"


def _format(value: float) -> str:
    return f"{value:.6g}"


def run_simulated_driver(
    config_path: str | Path,
    output_dir: str | Path,
    simulator: SimulatorConfig,
    amd_valid: Mapping[int, Sequence[bool]] | None = None,
) -> tuple[int, str, float]:
    """Benchmark a config's solutions on the SIMULATED GPU and write the driver's outputs.

    ``amd_valid`` (per ``BenchmarkProblems`` group, in order: one flag per forked solution) is the
    verdict of AMD's own ``Solution`` when the caller has it (the fake driver asks
    ``../shared/amd/check-configs``); without it the hardware rules decide which kernels exist.

    Returns ``(exit status, stdout, simulated busy seconds)``: status 1 when a solution failed
    validation and ``ExitOnFails`` is not 0 (the logic step is then skipped, as the real driver
    does), else 0.
    """
    group_number = -1
    with open(config_path, encoding="utf-8") as stream:
        config = yaml.load(stream, Loader=_LOADER)
    gpu = SimulatedGpu(simulator)
    arch = gpu.arch.name
    profile = profile_for(arch)
    global_parameters = config.get("GlobalParameters") or {}
    validate = int(global_parameters.get("NumElementsToValidate", 128)) != 0
    iterations = int(global_parameters.get("EnqueuesPerSync", 1)) * int(global_parameters.get("SyncsPerBenchmark", 1))
    out = Path(output_dir)
    data_dir = out / "2_BenchmarkData"
    data_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"Tensile benchmark driver -- {SIMULATED} ({arch}, no GPU was used)", f"# Config: {config_path}"]
    failures = 0
    busy = 0.0
    logic_inputs: list[tuple[GemmProblem, list[dict[str, Any]], list[tuple[list[int], int, float]]]] = []
    for problem_type, *groups in config.get("BenchmarkProblems") or []:
        for number, benchmark in enumerate(groups):
            sizes = config_sizes(benchmark)
            problems = [problem_from_type(problem_type, size) for size in sizes]
            if not problems:
                continue
            type_name = problem_type_name(problems[0])
            letters = tensile_letters(problem_type.get("DataType", "S"))
            if letters == "S" and str(problem_type.get("F32XdlMathOp", "S")) == "X":
                letters = "X"  # xf32: the X instructions (F32XdlMathOp)
            flavour = driver_flavour(benchmark)
            context = make_context(
                profile, letters, [], 8 if letters == "D" else 4, "tensile" if flavour == "tensile" else "tensilelite"
            )
            defaults = profile.default_genes(letters)
            accepted: list[KernelParams] = []
            group_number += 1
            verdicts = amd_valid.get(group_number) if amd_valid is not None else None
            for position, values in enumerate(expand_forks(benchmark)):
                try:
                    params = KernelParams.from_fork_values(values, defaults)
                except InvalidKernel:
                    continue
                exists = verdicts[position] if verdicts is not None else is_valid(params, context, HARDWARE_RULES)
                if exists:
                    accepted.append(params)
            names = min_names(accepted, type_name)
            kernels = list(zip(accepted, names, strict=True))
            rows: list[list[Any]] = []
            table: list[tuple[list[int], int, float]] = []
            for index, problem in enumerate(problems):
                gflops: list[float | None] = []
                for params, _ in kernels:
                    kernel = sim_kernel(params, problem)
                    if not supports(kernel, problem):
                        gflops.append(None)
                        continue
                    us = gpu.measure_us(problem, kernel, "accurate", "tensile")
                    busy += us * 1e-6 * max(1, iterations)
                    failed = validate and kernel_is_broken(kernel, arch)
                    failures += int(failed)
                    gflops.append(-1.0 if failed else problem.flops / (us * 1e3))
                valid = [(value, position) for position, value in enumerate(gflops) if value is not None and value > 0]
                winner = max(valid, key=lambda item: (item[0], -item[1])) if valid else None
                size = [problem.m, problem.n, problem.batch, problem.k]
                cells: dict[str, Any] = {
                    "GFlops": index, "SizeI": problem.m, "SizeJ": problem.n, "SizeK": problem.batch,
                    "SizeL": problem.k, "LDD": problem.ldd, "LDC": problem.ldc, "LDA": problem.lda,
                    "LDB": problem.ldb, "TotalFlops": problem.flops, "TilesPerCu": _format(_tiles_per_cu(problem, arch)),
                    "TotalGranularity": "", "WinnerFreq": 0, "WinnerPower": 0, "WinnerTemperature": 0,
                    "WinnerGFlops": "", "WinnerTimeUS": "", "WinnerIdx": "", "WinnerName": "",
                }  # fmt: skip
                if winner is not None:
                    cells.update(
                        WinnerGFlops=_format(winner[0]), WinnerTimeUS=_format(problem.flops / (winner[0] * 1e3)),
                        WinnerIdx=winner[1], WinnerName=names[winner[1]],
                    )  # fmt: skip
                    table.append((size, winner[1], round(winner[0], 3)))
                row: list[Any] = [cells[column] for column in _CSV_FIXED[flavour]]
                row += ["" if value is None else _format(value) for value in gflops]
                rows.append(row)
            # CSVExportWinner (always set by tensilekit) names both files with "_CSVWinner".
            stem = f"{type_name}_{number:02d}_CSVWinner"
            write_text_atomic(data_dir / f"{stem}.csv", _csv_text(rows, names, flavour))
            records = [
                solution_record(params, name, position, problems[0], arch, problem_type)
                for position, (params, name) in enumerate(kernels)
            ]
            # LibraryIO.writeSolutions' header items (version, sizes), then the solutions; one flow
            # mapping (JSON) per line: valid YAML, and fast to write and to read back.
            header_items: list[dict[str, Any]] = [
                {"MinimumRequiredVersion": str(global_parameters.get("MinimumRequiredVersion", "4.33.0"))},
                {"ProblemSizes": [{"Exact": list(size)} for size in sizes]},
            ]
            lines_out = [json.dumps(item, sort_keys=True) for item in [*header_items, *records]]
            write_text_atomic(data_dir / f"{stem}.yaml", "".join(f"- {line}\n" for line in lines_out))
            lines.append(f"# Benchmark Step: {stem} - {len(kernels)} solution(s) x {len(problems)} size(s)")
            logic_inputs.append((problems[0], records, table))
    exit_on_fails = int(global_parameters.get("ExitOnFails", 1)) != 0
    lines.append(f"clientExit={failures} {'(ERROR)' if failures else '(PASS)'} for {config_path}")
    if failures and exit_on_fails:
        return 1, "\n".join(lines) + "\n", busy
    if config.get("LibraryLogic"):
        logic_dir = out / "3_LibraryLogic"
        logic_dir.mkdir(parents=True, exist_ok=True)
        for problem, records, table in logic_inputs:
            _write_logic(logic_dir, arch, problem, records, table)
        lines.append(f"# LibraryLogic: wrote {len(logic_inputs)} file(s)")
    lines.append("# Tensile DONE")
    return 0, "\n".join(lines) + "\n", busy


def _tiles_per_cu(problem: GemmProblem, arch: str) -> float:
    # Informational only (no reader may use it): output tiles of a 256x256 tile per CU.
    tiles = -(-problem.m // 256) * -(-problem.n // 256) * problem.batch
    return tiles / arch_spec(arch).cu_count


def _write_logic(
    folder: Path,
    arch: str,
    problem: GemmProblem,
    records: list[dict[str, Any]],
    table: list[tuple[list[int], int, float]],
) -> None:
    spec = arch_spec(arch)
    used = sorted({position for _, position, _ in table})
    renumber = {old: new for new, old in enumerate(used)}
    solutions = [dict(records[old], SolutionIndex=new) for new, old in enumerate(used)]
    data = [
        {"MinimumRequiredVersion": "4.33.0"}, spec.schedule, {"Architecture": spec.name, "CUCount": spec.cu_count},
        [f"{SIMULATED} {spec.product}"], problem_type_dict(problem), solutions, [2, 3, 0, 1],
        [[size, [renumber[position], efficiency]] for size, position, efficiency in table],
        None, None, "DeviceEfficiency", "Equality",
    ]  # fmt: skip
    name = f"{spec.schedule}_{problem_type_name(problem)}.yaml"
    dump_logic(logic_from_data(data, dialect="tensilelite", source=name), folder / name)


def _positionals(argv: Sequence[str]) -> list[str]:
    positionals: list[str] = []
    for item in argv[1:]:
        if item.startswith("-"):
            break
        positionals.append(item)
    return positionals


class SimulatedTensileRunner:
    """A :class:`~tensilekit.tools.runner.CommandRunner` that plays the Tensile driver on the SIMULATED GPU."""

    def __init__(self, config: SimulatorConfig, *, sleep: Any = time.sleep) -> None:
        self.config = config
        self._sleep = sleep

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: EnvOverrides | None = None,
        timeout: float | None = None,
    ) -> CompletedCommand:
        """Answer ``Tensile <config> <output> [options]`` (see the module docstring)."""
        args = tuple(str(arg) for arg in argv)
        positionals = _positionals(args)
        if len(positionals) < 2:
            return CompletedCommand(args, 2, "", "Tensile: error: expected a config and an output path\n")
        config_path, output = Path(positionals[0]), Path(positionals[-1])
        if cwd is not None:
            config_path, output = Path(cwd) / config_path, Path(cwd) / output
        if not config_path.is_file():
            return CompletedCommand(args, 255, "", f"Tensile: cannot read config {config_path}\n")
        status, stdout, busy = run_simulated_driver(config_path, output, self.config)
        wall = self.config.startup_s + self.config.time_scale * busy
        if timeout is not None and wall > timeout:
            self._sleep(timeout)
            raise ToolFailed(
                f"Tensile ({SIMULATED}) timed out after {timeout:g} s and was killed", argv=args, returncode=-15,
                timed_out=True,
            )  # fmt: skip
        if wall > 0:
            self._sleep(wall)
        return CompletedCommand(args, status, stdout, "", duration=wall, cwd=None if cwd is None else str(cwd))


__all__ = [
    "SimulatedTensileRunner",
    "driver_flavour",
    "min_names",
    "run_simulated_driver",
    "sim_kernel",
    "solution_record",
    "tuned_kernel",
    "write_tuned_winners",
]

"""A deterministic SIMULATED GPU that stands in for hipblaslt-bench and hipBLASLt's library.

Nothing here touches a GPU. Parts: this module (architectures' model, kernel catalogue, timing,
errors, :class:`SimulatedGpu`), :mod:`~tensilekit.pipeline.simulate_bench` (the bench runner),
:mod:`~tensilekit.pipeline.simulate_library` (the library's logic files) and
:mod:`~tensilekit.pipeline.simulate_tensile` (the Tensile driver); scheduling cost estimates are
:mod:`~tensilekit.pipeline.costs`, which the real pipeline uses without the simulator. ``tensilekit tune --simulate`` replaces the real tools with
:class:`SimulatedBenchRunner`, a :class:`~tensilekit.tools.runner.CommandRunner` that answers
``hipblaslt-bench`` command lines with output in the real format, so the whole pipeline (argv
building, output parsing, library switching through ``HIPBLASLT_TENSILE_LIBPATH``) runs
unchanged. Every output it produces says SIMULATED.

Model
-----
* **Architectures** (:data:`ARCHS`): CU count, clock, dense matrix peak per input type and HBM
  bandwidth of gfx90a (MI250X, one GCD), gfx942 (MI300X) and gfx950 (MI355X), from AMD's
  published figures.
* **Kernel catalogue** (:func:`kernel_catalog`): per architecture and GEMM type, 43 kernels
  over macro tiles 16..256, depth-U 64..512, split-K (GSU) 1..8 and two MFMA shapes, named like
  Tensile solutions. Each kernel has a fixed "quality" in [0.86, 1.14] (hash of arch and name):
  implementation details no analytic model captures, and what tuning finds.
* **Time** (:func:`kernel_time_us`): waves of output tiles over the CUs, per-tile MFMA time at
  a tile-size- and MFMA-dependent efficiency, against the memory time of A/B (re)reads, C/D and
  split-K partials; the larger wins, plus launch overhead and the split-K reduction.
* **Generated kernels** (tensilekit's kernel search, :mod:`tensilekit.pipeline.simulate_tensile`)
  are :class:`SimKernel` values too; the parameters only they vary add small terms: stream-K
  spreads the last wave's tiles over every CU (5 % fix-up, 1.5 us), vectors narrower than 16
  bytes and StaggerU 0 on long K cost memory time, PrefetchGlobalRead 1 costs 4 % compute. At
  the catalogue's values these terms are exactly 1, so catalogue kernels time as before.
* **Reference library** (:func:`heuristic_kernel`): hipBLASLt's default choice is the best
  kernel by the same model *without* the quality factor and without split-K kernels -- good but
  not optimal, which leaves realistic room (a few percent, more for tile-starved shapes).
* **Measurements** (:meth:`SimulatedGpu.measure_us`): true time times log-normal noise (3 % for
  the fast screen, 1 % for accurate runs), seeded from ``(seed, arch, phase, problem, kernel)``
  only -- never from order, device or attempt -- so every executor gets identical numbers.
* **Accuracy** (:func:`norm_error`): a per-type relative error growing with split-K; 4 % of the
  kernels are broken (1000x, fail verification) and 6 % marginal (3x, dropped by ``--err-thr``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tensilekit.pipeline.costs import ARCHS, ArchSpec, arch_spec, estimate_time_us, input_letters, type_bytes
from tensilekit.workload.problem import GemmProblem

SIMULATED = "SIMULATED"
SIMULATOR_VERSION = "tensilekit-gpu-simulator/1"
TUNED_LIBRARY_FILE = "SIMULATED_library.json"
"""What a simulated tuned-library build writes; the simulated bench reads it via the libpath."""


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from ``parts`` (sha256, not Python's salted hash)."""
    digest = hashlib.sha256("|".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _gaussian(*parts: object) -> float:
    """A deterministic standard normal sample from ``parts`` (Box-Muller)."""
    u1 = max(_unit("g1", *parts), 1e-12)
    u2 = _unit("g2", *parts)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# ---------------------------------------------------------------------------------------------
# Kernel catalogue


@dataclasses.dataclass(frozen=True)
class SimKernel:
    """One simulated solution: its global index, name and the parameters the model reads."""

    index: int
    name: str
    mt0: int
    mt1: int
    depth_u: int
    gsu: int
    mi: tuple[int, int, int, int]
    work_group: tuple[int, int, int]
    wgm: int = 8
    # Parameters only generated kernels (tensilekit's kernel search) vary; the catalogue's
    # kernels keep these defaults, for which the model's extra terms are exactly 1.
    stream_k: int = 0
    vector_bytes: int = 16
    """The narrower of the A/B global-read vectors, in bytes."""
    prefetch: int = 2
    stagger_u: int = 32

    @property
    def area(self) -> int:
        return self.mt0 * self.mt1


_TILES: tuple[tuple[int, int, int], ...] = (
    (256, 256, 64), (256, 128, 64), (128, 256, 64), (128, 128, 64), (128, 128, 128), (256, 64, 64), (64, 256, 64),
    (128, 64, 128), (64, 128, 128), (64, 64, 128), (64, 64, 256), (32, 64, 256), (64, 32, 256), (32, 32, 256),
    (16, 128, 256), (128, 16, 256), (16, 64, 512), (64, 16, 512), (16, 16, 512),
)  # fmt: skip


def _split_k_options(area: int) -> tuple[int, ...]:
    if area <= 2048:
        return (1, 4, 8)
    if area <= 8192:
        return (1, 4)
    if area <= 16384:
        return (1, 2)
    return (1,)


def _mfma(arch: ArchSpec, element_bytes: int, large: bool) -> tuple[int, int, int, int]:
    k_scale = 2 if arch.name == "gfx950" and element_bytes <= 2 else 1
    base_k = {1: 16, 2: 8, 4: 2, 8: 4}.get(element_bytes, 8) * k_scale
    return (32, 32, base_k, 1) if large else (16, 16, base_k * 2, 1)


def problem_type_name(problem: GemmProblem) -> str:
    """Tensile's problem-type name for a plain GEMM, e.g. ``Cijk_Alik_Bljk_BBS_BH``; A and B of
    their own types lead the types as tensilelite names them (``Cijk_Ailk_Bljk_F8H_HHS_BH``,
    SolutionStructs.py:484-487 @7d9fb68)."""
    from tensilekit.workload.problem import compute_input_letters, input_type_letters, tensile_type_letters

    index_a = "Alik" if problem.trans_a == "T" else "Ailk"
    index_b = "Bjlk" if problem.trans_b == "T" else "Bljk"
    types = problem.gemm_type.split("_", 1)[0]
    data = compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)
    if data != input_type_letters(problem.a_type, problem.b_type):
        inputs = tensile_type_letters(problem.a_type) + tensile_type_letters(problem.b_type)
        types = f"{inputs}_{data}{types.removeprefix(inputs)}"
    return f"Cijk_{index_a}_{index_b}_{types}_BH"


def _type_tag(problem: GemmProblem) -> str:
    return ",".join(problem.type_key)


@functools.lru_cache(maxsize=256)
def _catalog(arch_name: str, type_tag: str, element_bytes: int, name_prefix: str) -> tuple[SimKernel, ...]:
    arch = arch_spec(arch_name)
    base = (int(hashlib.sha256(type_tag.encode()).hexdigest()[:8], 16) % 900 + 100) * 100
    kernels: list[SimKernel] = []
    for mt0, mt1, depth_u in _TILES:
        area = mt0 * mt1
        mi = _mfma(arch, element_bytes, large=area >= 128 * 128)
        work_group = (64, 4, 1) if area >= 128 * 128 else (64, 2, 1) if area >= 64 * 64 else (64, 1, 1)
        for gsu in _split_k_options(area):
            index = base + len(kernels)
            mi_text = "x".join(str(value) for value in mi)
            name = (
                f"{name_prefix}_MT{mt0}x{mt1}x{depth_u}_MI{mi_text}_SN_GSU{gsu}"
                f"_WG{work_group[0]}_{work_group[1]}_{work_group[2]}_WGM8"
            )
            kernels.append(SimKernel(index, name, mt0, mt1, depth_u, gsu, mi, work_group))
    return tuple(kernels)


def kernel_catalog(arch: str, problem: GemmProblem) -> tuple[SimKernel, ...]:
    """The simulated library's kernels for ``problem``'s GEMM type (sizes do not matter)."""
    return _catalog(arch, _type_tag(problem), type_bytes(problem.a_type), problem_type_name(problem))


def supports(kernel: SimKernel, problem: GemmProblem) -> bool:
    """Whether a kernel can run a problem (split-K needs at least one depth-U per split)."""
    return kernel.gsu == 1 or problem.k >= kernel.gsu * kernel.depth_u


def kernel_quality(arch: str, kernel: SimKernel) -> float:
    """The kernel's fixed speed factor in [0.86, 1.14] (lower is faster)."""
    return 0.86 + 0.28 * _unit("quality", arch, kernel.name)


def kernel_time_us(problem: GemmProblem, kernel: SimKernel, arch: ArchSpec, *, quality: bool = True) -> float:
    """The model's true time of one call in microseconds (see the module docstring)."""
    tiles_m = math.ceil(problem.m / kernel.mt0)
    tiles_n = math.ceil(problem.n / kernel.mt1)
    tiles = tiles_m * tiles_n * problem.batch * kernel.gsu
    waves: float = math.ceil(tiles / arch.cu_count)
    if kernel.stream_k:
        # Stream-K spreads the last, partial wave's work over every CU; the fix-up costs 5 %.
        waves = max(tiles / arch.cu_count, 1.0 / arch.cu_count) * 1.05
    k_per_split = math.ceil(problem.k / kernel.gsu / kernel.depth_u) * kernel.depth_u
    tile_efficiency = min(1.0, kernel.area / (256 * 256)) ** 0.25
    efficiency = (0.35 + 0.55 * tile_efficiency) * (1.0 if kernel.mi[0] == 32 else 0.95)
    per_cu_flops = arch.peak(input_letters(problem)) * 1e12 / arch.cu_count
    compute_us = waves * (2.0 * kernel.mt0 * kernel.mt1 * k_per_split) / (per_cu_flops * efficiency) * 1e6
    a_bytes, b_bytes = type_bytes(problem.a_type), type_bytes(problem.b_type)
    d_bytes = type_bytes(problem.d_type)
    reads = problem.batch * (
        problem.m * problem.k * a_bytes * max(1.0, tiles_n / 4)
        + problem.k * problem.n * b_bytes * max(1.0, tiles_m / 4)
    )
    writes = problem.m * problem.n * problem.batch * (d_bytes + (type_bytes(problem.c_type) if problem.beta else 0))
    partials = problem.m * problem.n * problem.batch * kernel.gsu * 4 * 2 if kernel.gsu > 1 else 0
    memory_us = (reads + writes + partials) / (arch.hbm_tbps * 1e12) * 1e6
    # Generated kernels only: narrower vector loads, no double-buffered prefetch and no
    # stagger on long K cost a little (all 1.0 for the catalogue's defaults).
    memory_us *= (16.0 / max(1, kernel.vector_bytes)) ** 0.1
    if kernel.stagger_u == 0 and problem.k >= 4096:
        memory_us *= 1.05
    if kernel.prefetch < 2:
        compute_us *= 1.04
    total = float(max(compute_us, memory_us)) + arch.launch_us + (2.0 if kernel.gsu > 1 else 0.0)
    total += 1.5 if kernel.stream_k else 0.0
    return total * (kernel_quality(arch.name, kernel) if quality else 1.0)


def heuristic_kernel(problem: GemmProblem, kernels: Sequence[SimKernel], arch: ArchSpec) -> SimKernel:
    """The reference library's choice: best by the model without quality, never split-K."""
    candidates = [kernel for kernel in kernels if kernel.gsu == 1] or list(kernels)
    return min(candidates, key=lambda kernel: (kernel_time_us(problem, kernel, arch, quality=False), kernel.index))


_BASE_ERROR = {1: 2e-2, 2: 2e-3, 4: 1e-6, 8: 1e-14}


def kernel_is_broken(kernel: SimKernel, arch: str) -> bool:
    """Whether the kernel is one of the 4 % that compute garbage (1000x error, fails validation)."""
    return _unit("defect", arch, kernel.name) < 0.04


def norm_error(problem: GemmProblem, kernel: SimKernel, arch: str) -> float:
    """The relative error ``hipblaslt-bench -v`` would print for this kernel (deterministic)."""
    base = _BASE_ERROR.get(type_bytes(problem.d_type), 2e-3) * math.sqrt(max(problem.k, 1) / 4096)
    error = base * (1.0 + 0.3 * math.log2(kernel.gsu)) * (0.9 + 0.2 * _unit("error", arch, kernel.name))
    defect = _unit("defect", arch, kernel.name)
    if defect < 0.04:
        error *= 1000.0
    elif defect < 0.10:
        error *= 3.0
    return error


def problem_key(problem: GemmProblem) -> str:
    """A stable text key of a problem's identity (for noise seeds)."""
    return json.dumps([list(item) if isinstance(item, tuple) else item for item in problem.identity()], default=str)


# ---------------------------------------------------------------------------------------------
# The simulated GPU and its hipblaslt-bench


class SimulatorConfig(BaseModel):
    """How the simulated GPU behaves. ``time_scale`` and ``startup_s`` only cost wall time.

    Args:
        arch: gfx90a, gfx942 or gfx950.
        seed: seeds the measurement noise.
        time_scale: wall seconds slept per simulated GPU second (0 = answer at once); used to
            give the scheduler something to schedule in benchmarks and kill tests.
        startup_s: wall seconds slept per simulated process start.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str
    seed: int = 0
    time_scale: float = Field(default=0.0, ge=0.0)
    startup_s: float = Field(default=0.0, ge=0.0)
    screen_noise: float = 0.03
    accurate_noise: float = 0.01
    library_logic: str | None = None
    """``--library-logic DIR``: the simulated library is those logic files (their records, the
    indices and names tensilekit's build of DIR gives them) instead of the built-in catalogue."""
    custom_kernels: str | None = None
    """``--custom-kernels``: the custom kernels' configs the build of ``library_logic`` needs."""


class SimulatedGpu:
    """The model of one GPU type: catalogue, reference choice, measurements, errors."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.arch = arch_spec(config.arch)

    def catalog(self, problem: GemmProblem) -> tuple[SimKernel, ...]:
        if self.config.library_logic is not None:
            return logic_catalog(self.config.library_logic, self.arch.name, self.config.custom_kernels, problem)
        return kernel_catalog(self.arch.name, problem)

    def supported(self, problem: GemmProblem) -> list[SimKernel]:
        return [kernel for kernel in self.catalog(problem) if supports(kernel, problem)]

    def reference(self, problem: GemmProblem) -> SimKernel:
        return heuristic_kernel(problem, self.supported(problem), self.arch)

    def measure_us(self, problem: GemmProblem, kernel: SimKernel, phase: str, context: str = "") -> float:
        """A measured time: the true time with seeded log-normal noise.

        ``phase`` (``screen`` or ``accurate``) sets the noise level; ``context`` (how the run
        was configured) makes differently configured runs independent samples.
        """
        sigma = self.config.screen_noise if phase == "screen" else self.config.accurate_noise
        noise = _gaussian(self.config.seed, self.arch.name, phase, context, problem_key(problem), kernel.index)
        return kernel_time_us(problem, kernel, self.arch) * math.exp(sigma * noise)

    def error(self, problem: GemmProblem, kernel: SimKernel) -> float:
        return norm_error(problem, kernel, self.arch.name)


@functools.lru_cache(maxsize=32)
def _tuned_data(path: str, mtime_ns: int) -> tuple[dict[str, dict[str, str]], dict[str, SimKernel]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    entries = data.get("entries", {})
    table = {str(tag): {str(size): str(name) for size, name in sizes.items()} for tag, sizes in entries.items()}
    kernels = {str(name): sim_kernel_from_spec(spec) for name, spec in data.get("kernels", {}).items()}
    return table, kernels


def _tuned_table(path: str, mtime_ns: int) -> dict[str, dict[str, str]]:
    return _tuned_data(path, mtime_ns)[0]


def sim_kernel_spec(kernel: SimKernel) -> dict[str, Any]:
    """A simulated kernel as JSON (the ``kernels`` table of a simulated tuned library)."""
    spec = dataclasses.asdict(kernel)
    spec["mi"] = list(kernel.mi)
    spec["work_group"] = list(kernel.work_group)
    return spec


def sim_kernel_from_spec(spec: Mapping[str, Any]) -> SimKernel:
    """The inverse of :func:`sim_kernel_spec`."""
    values = dict(spec)
    values["mi"] = tuple(int(value) for value in values["mi"])
    values["work_group"] = tuple(int(value) for value in values["work_group"])
    return SimKernel(**values)


def tuned_size_key(problem: GemmProblem) -> str:
    """The key of a problem in a simulated tuned library: ``M,N,batch,K``."""
    return ",".join(str(value) for value in problem.size)


def write_tuned_library(
    directory: str | Path,
    arch: str,
    winners: Mapping[str, Mapping[str, str]],
    kernels: Mapping[str, SimKernel] | None = None,
) -> Path:
    """Write a simulated tuned library: ``{type tag: {"M,N,B,K": kernel name}}``.

    ``kernels`` describes winners that are not in the simulated catalogue (kernels the kernel
    search generated), by name. The real pipeline builds master libraries with
    TensileCreateLibrary instead; the simulated bench reads this file from the directory
    ``HIPBLASLT_TENSILE_LIBPATH`` points at.
    """
    from tensilekit.io.atomic import write_text_atomic

    path = Path(directory) / TUNED_LIBRARY_FILE
    payload: dict[str, Any] = {"data": SIMULATED, "arch": arch, "simulator": SIMULATOR_VERSION, "entries": winners}
    if kernels:
        payload["kernels"] = {name: sim_kernel_spec(kernel) for name, kernel in sorted(kernels.items())}
    write_text_atomic(path, json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return path


def type_tag(problem: GemmProblem) -> str:
    """The GEMM-type tag a simulated tuned library is keyed by."""
    return _type_tag(problem)


# The bench runner and the library files are parts of the simulator, in their own modules.
from tensilekit.pipeline.simulate_bench import SimulatedBenchRunner  # noqa: E402
from tensilekit.pipeline.simulate_library import (  # noqa: E402
    COMPUTE_TYPE_CODES,
    TENSILELITE_TYPE_CODES,
    derived_record,
    library_logic,
    logic_catalog,
    logic_index,
    problem_type_dict,
    solution_dict,
)

__all__ = [
    "ARCHS",
    "COMPUTE_TYPE_CODES",
    "SIMULATED",
    "SIMULATOR_VERSION",
    "TENSILELITE_TYPE_CODES",
    "TUNED_LIBRARY_FILE",
    "ArchSpec",
    "SimKernel",
    "SimulatedBenchRunner",
    "SimulatedGpu",
    "SimulatorConfig",
    "arch_spec",
    "derived_record",
    "estimate_time_us",
    "heuristic_kernel",
    "kernel_catalog",
    "kernel_is_broken",
    "kernel_quality",
    "kernel_time_us",
    "library_logic",
    "logic_catalog",
    "logic_index",
    "norm_error",
    "problem_type_dict",
    "problem_type_name",
    "sim_kernel_from_spec",
    "sim_kernel_spec",
    "solution_dict",
    "supports",
    "tuned_size_key",
    "type_bytes",
    "type_tag",
    "write_tuned_library",
]

"""A deterministic SIMULATED GPU that stands in for hipblaslt-bench and hipBLASLt's library.

Nothing here touches a GPU. Parts: this module (the GPU model, kernel catalogue, timing, errors,
:class:`SimulatedGpu`, the tuned library's table and the library built from ``--library-logic``),
:mod:`~tensilekit.tools.simulated.bench` (the bench runner),
:mod:`~tensilekit.tools.simulated.library` (the library's logic files) and
:mod:`~tensilekit.tools.simulated.tensile` (the Tensile driver); the published figures it builds
on are :mod:`~tensilekit.tools.costs`, which the real pipeline uses without the simulator.
``tensilekit tune --simulate`` replaces the real tools with these
(:func:`~tensilekit.tools.toolset.toolset_for`): :class:`~tensilekit.tools.simulated.bench.SimulatedBenchRunner`
is a :class:`~tensilekit.tools.runner.CommandRunner` that answers ``hipblaslt-bench`` command
lines with output in the real format, so the whole pipeline (argv building, output parsing,
library switching through ``HIPBLASLT_TENSILE_LIBPATH``) runs unchanged. Every output it
produces says SIMULATED.

Model
-----
* **Architectures** (:data:`~tensilekit.tools.costs.ARCHS`): CU count, clock, dense matrix peak per input type and HBM
  bandwidth of gfx90a (MI250X, one GCD), gfx942 (MI300X) and gfx950 (MI355X), from AMD's
  published figures.
* **Kernel catalogue** (:func:`kernel_catalog`): per architecture and GEMM type, 43 kernels
  over macro tiles 16..256, depth-U 64..512, split-K (GSU) 1..8 and two MFMA shapes, named like
  Tensile solutions. Each kernel has a fixed "quality" in [0.86, 1.14] (hash of arch and name):
  implementation details no analytic model captures, and what tuning finds.
* **Time** (:func:`kernel_time_us`): waves of output tiles over the CUs, per-tile MFMA time at
  a tile-size- and MFMA-dependent efficiency, against the memory time of A/B (re)reads, C/D and
  split-K partials; the larger wins, plus launch overhead and the split-K reduction.
* **Generated kernels** (tensilekit's kernel search, :mod:`tensilekit.tools.simulated.tensile`)
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
from typing import TYPE_CHECKING, Any

from tensilekit.tools.costs import ArchSpec, arch_spec, input_letters, type_bytes
from tensilekit.tools.problem_types import TYPE_NAMES_BY_CODE, problem_type_key, problem_type_name
from tensilekit.tools.simulated.config import SIMULATED, SIMULATOR_VERSION, SimulatorConfig
from tensilekit.workload.problem import GemmProblem

if TYPE_CHECKING:
    from tensilekit.tools.library_index import LogicIndex

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


# ---------------------------------------------------------------------------------------------
# The simulated library built from --library-logic DIR


def _stamp(folder: str) -> tuple[tuple[str, int, int], ...]:
    stamps = []
    for path in sorted(Path(folder).rglob("*.yaml")):
        try:
            stat = path.stat()
        except OSError:
            continue
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


def logic_index(folder: str, arch: str, custom_kernels: str | None) -> tuple[LogicIndex, dict[str, Any]]:
    """DIR built as stage ``library`` builds ``--library-logic`` (TensileCreateLibrary's order,
    indices and names: :func:`~tensilekit.tools.library_index.index_logic`), and each logic
    file's data. The SIMULATED bench prints these indices and names, so simulated runs identify
    solutions by index exactly as real ones do. Cached per process while DIR's files are unchanged."""
    return _logic_index(folder, arch, custom_kernels, _stamp(folder))


@functools.lru_cache(maxsize=8)
def _logic_index(
    folder: str, arch: str, custom_kernels: str | None, stamp: tuple[tuple[str, int, int], ...]
) -> tuple[LogicIndex, dict[str, Any]]:
    from tensilekit.io.custom_kernels import custom_kernel_reader
    from tensilekit.tools.library_index import index_logic_folder

    return index_logic_folder(Path(folder), arch, custom_kernel_reader(custom_kernels) if custom_kernels else None)


def _logic_kernel(index: int, name: str, record: Mapping[str, Any], element: int) -> SimKernel:
    """The simulated kernel of a logic-file record: the parameters the model reads, from the record."""

    def number(key: str, default: int) -> int:
        value = record.get(key)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default

    mi = [int(value) for value in (record.get("MatrixInstruction") or [16, 16, 16, 1])[:4]]
    work_group = record.get("WorkGroup") or [64, 1, 1]
    threads = int(work_group[0]) * int(work_group[1]) * (int(work_group[2]) if len(work_group) > 2 else 1)
    widths = [number(key, 0) for key in ("GlobalReadVectorWidthA", "GlobalReadVectorWidthB")]
    return SimKernel(
        index=index, name=name, mt0=number("MacroTile0", 64), mt1=number("MacroTile1", 64),
        depth_u=number("DepthU", 32), gsu=max(1, number("GlobalSplitU", 1)),
        mi=(mi[0], mi[1], mi[2], mi[3]) if len(mi) == 4 else (16, 16, 16, 1),
        work_group=(64, max(1, threads // 64), 1), wgm=max(1, abs(number("WorkGroupMapping", 8))),
        stream_k=number("StreamK", 0), vector_bytes=min(widths) * element if min(widths) > 0 else 16,
        prefetch=number("PrefetchGlobalRead", 2), stagger_u=number("StaggerU", 32),
    )  # fmt: skip


@functools.lru_cache(maxsize=8)
def _logic_catalogs(
    folder: str, arch: str, custom_kernels: str | None, stamp: tuple[tuple[str, int, int], ...]
) -> dict[tuple[str, ...] | None, tuple[SimKernel, ...]]:
    built, data = _logic_index(folder, arch, custom_kernels, stamp)
    kernels: dict[tuple[str, ...] | None, list[SimKernel]] = {}
    for solution in built.solutions:
        record = data[solution.source][5][solution.position]
        element = type_bytes(TYPE_NAMES_BY_CODE.get(data[solution.source][4].get("DataType", 0), "f32_r"))
        kernels.setdefault(solution.type_key, []).append(_logic_kernel(solution.index, solution.name, record, element))
    return {key: tuple(items) for key, items in kernels.items()}


def logic_catalog(folder: str, arch: str, custom_kernels: str | None, problem: GemmProblem) -> tuple[SimKernel, ...]:
    """The simulated library's kernels for ``problem``'s GEMM type when it is ``--library-logic DIR``:
    one per built solution of that type, with the build's index and name and the record's parameters."""
    return _logic_catalogs(folder, arch, custom_kernels, _stamp(folder)).get(problem_type_key(problem), ())


__all__ = [
    "TUNED_LIBRARY_FILE",
    "SimKernel",
    "SimulatedGpu",
    "heuristic_kernel",
    "kernel_catalog",
    "kernel_is_broken",
    "kernel_quality",
    "kernel_time_us",
    "logic_catalog",
    "logic_index",
    "norm_error",
    "problem_key",
    "sim_kernel_from_spec",
    "sim_kernel_spec",
    "supports",
    "tuned_size_key",
    "type_tag",
    "write_tuned_library",
]

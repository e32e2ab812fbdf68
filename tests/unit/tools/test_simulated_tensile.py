"""The SIMULATED Tensile driver and generated kernels in the simulated GPU and tuned library."""

from __future__ import annotations

from pathlib import Path

from tensilekit.search.configs import problem_type_config
from tensilekit.search.params import KernelParams
from tensilekit.search.profiles import profile_for
from tensilekit.tools.costs import arch_spec
from tensilekit.tools.hipblaslt_bench import BenchOptions, run_bench
from tensilekit.tools.problem_types import problem_from_type, problem_type_dict
from tensilekit.tools.simulated.bench import SimulatedBenchRunner
from tensilekit.tools.simulated.config import SimulatorConfig
from tensilekit.tools.simulated.gpu import (
    heuristic_kernel,
    kernel_catalog,
    kernel_time_us,
    supports,
    write_tuned_library,
)
from tensilekit.tools.simulated.library import solution_dict
from tensilekit.tools.simulated.tensile import sim_kernel, tuned_kernel
from tensilekit.workload.problem import GemmProblem

DECODE = GemmProblem(m=6144, n=8, k=4096, trans_a="T", trans_b="N", a_type="bf16_r", compute_type="c_f32_r")
ARCH = arch_spec("gfx942")
DEFAULTS = profile_for("gfx942").default_genes("B")


def test_a_generated_copy_of_a_catalogue_kernel_times_the_same() -> None:
    for kernel in kernel_catalog("gfx942", DECODE)[:12]:
        params = KernelParams.from_solution(solution_dict(kernel, 0, problem_type_dict(DECODE), ARCH), DEFAULTS)
        twin = sim_kernel(params.replace(lds_buffer=1), DECODE)  # the LDS buffer count is not in the model
        assert twin.name == kernel.name
        assert kernel_time_us(DECODE, twin, ARCH) == kernel_time_us(DECODE, kernel, ARCH)


def test_generated_parameters_change_the_time() -> None:
    base = KernelParams(mi=(16, 16, 16, 1), mt0=64, mt1=16, wave_group=(1, 1), depth_u=128)
    times = {
        name: kernel_time_us(DECODE, sim_kernel(params, DECODE), ARCH, quality=False)
        for name, params in {"base": base, "narrow": base.replace(grvw_a=2, grvw_b=2), "pgr1": base.replace(prefetch_global_read=1),
                             "sk": base.replace(stream_k=3)}.items()
    }  # fmt: skip
    assert times["narrow"] > times["base"] and times["pgr1"] >= times["base"] and times["sk"] != times["base"]
    assert sim_kernel(base.replace(grvw_a=4), DECODE).name.endswith("_GRVWA4")


def test_problem_from_type() -> None:
    problem = problem_from_type(
        problem_type_config("B", "B", "S", "T", "N"), [6144, 8, 1, 4096, 6144, 6144, 4160, 4096]
    )
    assert (problem.a_type, problem.d_type, problem.compute_type, problem.trans_a, problem.lda) == (
        "bf16_r",
        "bf16_r",
        "c_f32_r",
        "T",
        4160,
    )


def test_the_simulated_bench_plays_generated_kernels_of_a_tuned_library(tmp_path: Path) -> None:
    params = KernelParams(mi=(16, 16, 16, 1), mt0=64, mt1=16, wave_group=(2, 1), depth_u=128, stagger_u=0)
    record = {"MatrixInstruction": [16, 16, 16, 1], "MacroTile0": 64, "MacroTile1": 16, "DepthU": 128,
              "MIWaveGroup": [2, 1], "StaggerU": 0, "SolutionNameMin": "new"}  # fmt: skip
    kernel = tuned_kernel(record, DECODE, "gfx942")
    assert kernel is not None and kernel == sim_kernel(params, DECODE)
    write_tuned_library(tmp_path, "gfx942", {"T,N,bf16_r,bf16_r,bf16_r,bf16_r,c_f32_r": {"6144,8,1,4096": "new"}},
                        {"new": kernel})  # fmt: skip
    runner = SimulatedBenchRunner(SimulatorConfig(arch="gfx942"))
    options = BenchOptions(iters=100, cold_iters=20, print_kernel_info=True)
    tuned = run_bench(runner, DECODE, options, library_dir=str(tmp_path))
    reference = run_bench(runner, DECODE, options)
    assert tuned.results[0].solution_name == kernel.name
    reference_kernel = heuristic_kernel(
        DECODE, [k for k in kernel_catalog("gfx942", DECODE) if supports(k, DECODE)], ARCH
    )
    assert reference.results[0].solution_name == reference_kernel.name

"""The SIMULATED GPU: deterministic catalogue, model, noise, and hipblaslt-bench in the real format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensilekit.errors import PipelineError, ToolFailed, ToolNotFound
from tensilekit.model.checks import check_logic
from tensilekit.tools.costs import ARCHS, arch_spec, estimate_time_us
from tensilekit.tools.hipblaslt_bench import AlgoMethod, BenchOptions, library_env, run_bench
from tensilekit.tools.simulated.bench import SimulatedBenchRunner
from tensilekit.tools.simulated.config import SIMULATED, SimulatorConfig
from tensilekit.tools.simulated.gpu import (
    SimulatedGpu,
    heuristic_kernel,
    kernel_catalog,
    kernel_time_us,
    norm_error,
    supports,
    write_tuned_library,
)
from tensilekit.tools.simulated.library import library_logic
from tensilekit.workload.problem import GemmProblem

SKINNY = GemmProblem(m=28672, n=8, k=4096, trans_a="T", a_type="bf16_r")
SQUARE = GemmProblem(m=4096, n=4096, k=4096, trans_a="T", a_type="bf16_r")


def test_architectures_are_the_three_supported_ones() -> None:
    assert set(ARCHS) == {"gfx90a", "gfx942", "gfx950"}
    assert arch_spec("gfx942").cu_count == 304
    with pytest.raises(PipelineError, match="gfx1100"):
        arch_spec("gfx1100")


def test_catalogue_is_deterministic_with_unique_indices_and_names() -> None:
    kernels = kernel_catalog("gfx942", SKINNY)
    assert kernels == kernel_catalog("gfx942", SKINNY.model_copy(update={"m": 7}))
    assert len(kernels) == 43
    assert len({kernel.index for kernel in kernels}) == len({kernel.name for kernel in kernels}) == 43
    assert all(kernel.name.startswith("Cijk_Alik_Bljk_BBS_BH_MT") for kernel in kernels)
    other_type = kernel_catalog("gfx942", SKINNY.model_copy(update={"trans_a": "N"}))
    assert {kernel.index for kernel in kernels}.isdisjoint({kernel.index for kernel in other_type})


def test_split_k_needs_enough_k_and_the_reference_never_picks_it() -> None:
    small_k = GemmProblem(m=64, n=64, k=256, a_type="f16_r")
    kernels = kernel_catalog("gfx942", small_k)
    assert all(
        supports(kernel, small_k) == (kernel.gsu == 1 or 256 >= kernel.gsu * kernel.depth_u) for kernel in kernels
    )
    for problem in (SKINNY, SQUARE, small_k):
        assert heuristic_kernel(problem, kernel_catalog("gfx942", problem), arch_spec("gfx942")).gsu == 1


def test_the_model_is_plausible() -> None:
    gpu = SimulatedGpu(SimulatorConfig(arch="gfx942"))
    best = min(kernel_time_us(SQUARE, kernel, gpu.arch) for kernel in gpu.supported(SQUARE))
    tflops = SQUARE.flops / (best * 1e-6) / 1e12
    assert 400 < tflops < 1307  # below the MI300X bf16 peak, above a third of it
    assert kernel_time_us(SQUARE, gpu.reference(SQUARE), gpu.arch) >= best
    assert estimate_time_us(SQUARE, "gfx942") > 0
    assert estimate_time_us(SQUARE, "gfx950") < estimate_time_us(SQUARE, "gfx942") < estimate_time_us(SQUARE, "gfx90a")


def test_measurements_are_seeded_and_noisy_only_within_bounds() -> None:
    gpu = SimulatedGpu(SimulatorConfig(arch="gfx942", seed=1))
    kernel = gpu.reference(SKINNY)
    true = kernel_time_us(SKINNY, kernel, gpu.arch)
    first = gpu.measure_us(SKINNY, kernel, "accurate", "ctx")
    assert first == SimulatedGpu(SimulatorConfig(arch="gfx942", seed=1)).measure_us(SKINNY, kernel, "accurate", "ctx")
    assert first != SimulatedGpu(SimulatorConfig(arch="gfx942", seed=2)).measure_us(SKINNY, kernel, "accurate", "ctx")
    assert abs(first / true - 1) < 0.06
    screens = [gpu.measure_us(SKINNY, kernel, "screen", str(i)) for i in range(50)]
    assert max(screens) / min(screens) > 1.02


def test_some_kernels_are_broken_or_marginal() -> None:
    kernels = kernel_catalog("gfx942", SQUARE)
    errors = sorted(norm_error(SQUARE, kernel, "gfx942") for kernel in kernels)
    assert errors[0] < 1e-2 and errors[-1] > 1.0


def run_sim(options: BenchOptions, problem: GemmProblem = SKINNY, **config: object) -> object:
    runner = SimulatedBenchRunner(SimulatorConfig(arch="gfx942", **config))  # type: ignore[arg-type]
    return run_bench(runner, problem, options)


def test_all_solutions_with_a_winner_in_the_real_output_format() -> None:
    output = run_sim(BenchOptions(algo_method=AlgoMethod.ALL, iters=10, cold_iters=2))
    results = output.results  # type: ignore[attr-defined]
    assert len(results) == sum(supports(kernel, SKINNY) for kernel in kernel_catalog("gfx942", SKINNY))
    winner = output.winner  # type: ignore[attr-defined]
    assert winner.us == min(result.us for result in results)
    assert winner.solution_name == winner.kernel_name and winner.solution_index is not None
    assert results[0].to_problem().without_solution().identity() == SKINNY.identity()


def test_index_and_verify() -> None:
    kernel = kernel_catalog("gfx942", SKINNY)[3]
    output = run_sim(BenchOptions(algo_method=AlgoMethod.INDEX, solution_index=kernel.index, verify=True, iters=100))
    (result,) = output.results  # type: ignore[attr-defined]
    assert result.solution_index == kernel.index
    assert result.number("norm_error") == pytest.approx(norm_error(SKINNY, kernel, "gfx942"), rel=1e-5)


def test_heuristic_is_the_reference_choice() -> None:
    output = run_sim(BenchOptions(iters=100, verify=True))
    assert output.results[0].solution_name == SimulatedGpu(SimulatorConfig(arch="gfx942")).reference(SKINNY).name  # type: ignore[attr-defined]


def test_the_simulated_runner_prints_simulated_and_rejects_other_tools() -> None:
    runner = SimulatedBenchRunner(SimulatorConfig(arch="gfx942"))
    completed = runner.run(["hipblaslt-bench", "-m", "64", "-n", "64", "-k", "64", "--a_type", "f16_r"])
    assert completed.ok and SIMULATED in completed.stdout.splitlines()[0]
    with pytest.raises(ToolNotFound):
        runner.run(["TensileCreateLibrary", "x"])
    bad = runner.run(
        [
            "hipblaslt-bench",
            "-m",
            "64",
            "--algo_method",
            "index",
            "--solution_index",
            "1",
            "-n",
            "4",
            "-k",
            "4",
            "--a_type",
            "f16_r",
        ]
    )
    assert bad.returncode == 1


def test_the_tuned_library_is_read_from_the_libpath(tmp_path: Path) -> None:
    runner = SimulatedBenchRunner(SimulatorConfig(arch="gfx942"))
    slow = max(kernel_catalog("gfx942", SKINNY), key=lambda kernel: kernel_time_us(SKINNY, kernel, arch_spec("gfx942")))
    write_tuned_library(tmp_path, "gfx942", {",".join(SKINNY.type_key): {"28672,8,1,4096": slow.name}})
    assert json.loads((tmp_path / "SIMULATED_library.json").read_text())["data"] == SIMULATED
    tuned = run_bench(runner, SKINNY, BenchOptions(iters=100), library_dir=tmp_path)
    assert tuned.results[0].solution_name == slow.name
    other = SQUARE  # not in the tuned table: the reference choice
    assert run_bench(runner, other, library_dir=tmp_path).results[0].solution_name == runner.gpu.reference(other).name
    with pytest.raises(ToolFailed):
        run_bench(runner, SKINNY, library_dir=tmp_path / "missing")
    assert library_env(None) == {"HIPBLASLT_TENSILE_LIBPATH": None}


def test_wall_time_and_timeouts_follow_the_time_scale() -> None:
    slept: list[float] = []
    runner = SimulatedBenchRunner(SimulatorConfig(arch="gfx942", time_scale=1000.0, startup_s=0.5), sleep=slept.append)
    runner.run(["hipblaslt-bench", "-m", "4096", "-n", "4096", "-k", "4096", "--a_type", "bf16_r", "--iters", "10"])
    assert slept and slept[0] > 0.5
    with pytest.raises(ToolFailed) as caught:
        runner.run(["hipblaslt-bench", "-m", "4096", "-n", "4096", "-k", "4096", "--a_type", "bf16_r"], timeout=0.1)
    assert caught.value.timed_out and slept[-1] == 0.1


def test_simulated_library_logic_is_valid_and_labelled() -> None:
    name, logic = library_logic("gfx942", SKINNY)
    assert name == "aquavanjaram_Cijk_Alik_Bljk_BBS_BH.yaml"
    assert logic.library_type == "Equality" and len(logic.solutions) == 43 and len(logic.table) == 4
    assert logic.device_names == [f"{SIMULATED} MI300X"]
    assert [finding for finding in check_logic(logic) if finding.severity == "error"] == []


def test_cost_estimates_do_not_depend_on_the_simulator() -> None:
    import subprocess
    import sys

    code = "import sys, tensilekit.tools.costs; print('tensilekit.tools.simulated.gpu' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
    from tensilekit.tools import costs
    from tensilekit.tools.simulated import gpu

    assert gpu.arch_spec is costs.arch_spec and gpu.ArchSpec is costs.ArchSpec

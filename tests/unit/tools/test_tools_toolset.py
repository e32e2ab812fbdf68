"""The tool factory: one decision, real or SIMULATED, and the same questions answered by both."""

from __future__ import annotations

import json
from pathlib import Path

from tensilekit.tools.runner import SubprocessRunner
from tensilekit.tools.simulated.bench import SimulatedBenchRunner
from tensilekit.tools.simulated.gpu import TUNED_LIBRARY_FILE, kernel_catalog
from tensilekit.tools.simulated.tensile import SimulatedTensileRunner
from tensilekit.tools.toolset import MEASURED, SIMULATED, RealTools, SimulatedTools, SimulatorConfig, toolset_for
from tensilekit.workload.problem import GemmProblem

PROBLEM = GemmProblem(m=4096, n=64, k=4096, trans_a="T", trans_b="N", a_type="bf16_r", b_type="bf16_r",
                      c_type="bf16_r", d_type="bf16_r", compute_type="c_f32_r")  # fmt: skip


def test_no_simulator_means_amds_tools() -> None:
    tools = toolset_for(None)
    assert isinstance(tools, RealTools) and tools.label == MEASURED and tools.note is None
    assert isinstance(tools.bench_runner(30.0), SubprocessRunner) and isinstance(
        tools.driver_runner(), SubprocessRunner
    )
    assert tools.versioned_tools(["hipblaslt-bench"]) == ["hipblaslt-bench"] and tools.shares_gpu_client
    # AMD's bench loads TensileCreateLibrary's build: no library is made without one
    assert tools.write_tuned_library(Path("unused"), "gfx942", []) is None


def test_a_simulator_config_means_the_simulated_tools(tmp_path: Path) -> None:
    tools = toolset_for(SimulatorConfig(arch="gfx942"))
    assert isinstance(tools, SimulatedTools) and tools.label == SIMULATED and SIMULATED in (tools.note or "")
    assert isinstance(tools.bench_runner(30.0), SimulatedBenchRunner)
    assert isinstance(tools.driver_runner(), SimulatedTensileRunner) and not tools.shares_gpu_client
    assert tools.versioned_tools(["hipblaslt-bench"]) == ["builtin:tensilekit-gpu-simulator/1"]
    name, logic = tools.catalogue_logic("gfx942", PROBLEM)
    assert name.endswith(".yaml") and logic.solutions
    kernel = kernel_catalog("gfx942", PROBLEM)[0]
    assert tools.write_tuned_library(tmp_path, "gfx942", [(PROBLEM, kernel.name, logic.solutions[0])]) == tmp_path
    table = json.loads((tmp_path / TUNED_LIBRARY_FILE).read_text())
    assert table["data"] == SIMULATED and list(table["entries"].values()) == [{"4096,64,1,4096": kernel.name}]

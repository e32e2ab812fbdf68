"""Simulated tools are tools (STYLE 2.1, issue 36 item 14): no stage module imports simulation code.

The SIMULATED bench, driver and library live in ``tensilekit.tools.simulated`` and reach a run
only through the factory ``tensilekit.tools.toolset.toolset_for``. Read from the source (every
import statement counts, those inside functions too, except ``if TYPE_CHECKING:`` blocks), so a
lazy import of the simulator from a stage fails here even when no test runs that line.
"""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
from import_graph import import_graph

SIMULATOR = "tensilekit.tools.simulated"
LIGHT = {SIMULATOR, f"{SIMULATOR}.config"}
"""The label and :class:`SimulatorConfig`: data every run's config names, no simulation code."""
STAGE_MODULES = ("tensilekit.pipeline.stages", "tensilekit.pipeline.stage", "tensilekit.pipeline.engine",
                 "tensilekit.pipeline.executors")  # fmt: skip


def _is_stage_module(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in STAGE_MODULES)


def _is_simulator(name: str) -> bool:
    return name == SIMULATOR or name.startswith(SIMULATOR + ".")


def test_the_graph_sees_the_imports() -> None:
    graph = import_graph()
    assert graph.has_edge("tensilekit.tools.toolset", "tensilekit.tools.simulated.bench")  # a lazy import counts
    assert not graph.edges["tensilekit.tools.toolset", "tensilekit.tools.simulated.bench"]["eager"]
    assert graph.edges["tensilekit.tools.simulated.bench", "tensilekit.tools.simulated.gpu"]["eager"]


def test_no_stage_module_imports_simulation_code() -> None:
    graph = import_graph()
    stages = [name for name in graph if _is_stage_module(name)]
    assert "tensilekit.pipeline.stages.library" in stages and "tensilekit.pipeline.executors.local" in stages
    direct = sorted(
        f"{name} -> {target}" for name in stages for target in graph.successors(name) if _is_simulator(target)
    )
    assert direct == []


def test_importing_any_stage_loads_no_simulator() -> None:
    """Everything a stage module imports on load, transitively, holds no simulation code: only the
    factory (``toolset``) knows the simulator, and it imports it when a simulated tool is asked for."""
    graph = import_graph()
    eager = graph.edge_subgraph([edge for edge, eager in nx.get_edge_attributes(graph, "eager").items() if eager])
    for stage in (name for name in graph if _is_stage_module(name)):
        reached = nx.descendants(eager, stage) if stage in eager else set()
        assert {name for name in reached if _is_simulator(name)} <= LIGHT, stage


def test_the_simulator_is_in_no_import_circle() -> None:
    cycles = [cycle for cycle in nx.simple_cycles(import_graph()) if any(_is_simulator(name) for name in cycle)]
    assert cycles == [], "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_a_real_run_never_loads_the_simulator() -> None:
    code = (
        "import sys\n"
        "from tensilekit.pipeline.config import TuneConfig\n"
        "from tensilekit.pipeline.stages import tune_stages\n"
        "import tensilekit.pipeline.engine, tensilekit.pipeline.executors.local\n"
        "config = TuneConfig(workdir='/run', arch='gfx942', library_logic='/logic', inline=['64 64 1 64 H H S T N'])\n"
        "stages = tune_stages('ga')\n"
        "[stage.tools(config) for stage in stages], [stage.config_slice(config) for stage in stages]\n"
        "config.toolset().bench_runner(None), config.toolset().driver_runner(), config.data_label\n"
        "print(sorted(name for name in sys.modules if name.startswith('tensilekit.tools.simulated.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(sorted(LIGHT - {SIMULATOR}))

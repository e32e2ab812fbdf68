"""What says SIMULATED and how the simulated tools behave: the light part of the simulator.

The tool factory (:mod:`tensilekit.tools.toolset`), the run's config and job specs name these
without loading the GPU model; the simulated tools themselves are the sibling modules.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

SIMULATED = "SIMULATED"
"""The label of everything the simulated tools produced (CSV ``data`` column, report, logs)."""
SIMULATOR_VERSION = "tensilekit-gpu-simulator/1"


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


__all__ = ["SIMULATED", "SIMULATOR_VERSION", "SimulatorConfig"]

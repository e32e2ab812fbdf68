"""The one place that decides whether a run drives AMD's tools or the SIMULATED ones.

A tuning stage asks its :class:`Toolset` to "run this benchmark", "run this driver" or "make
this tuned library" and cannot tell which tools answer: :class:`RealTools` runs hipblaslt-bench,
the Tensile driver and TensileCreateLibrary as processes; :class:`SimulatedTools` answers the
same command lines from tensilekit's GPU model (:mod:`tensilekit.tools.simulated`), and every
output of it says SIMULATED (:attr:`Toolset.label`). :func:`toolset_for` is the factory, fed
the run's :class:`~tensilekit.tools.simulated.config.SimulatorConfig` (None for real runs), so
job specs stay plain data that any executor can carry.

The simulator is imported only when a simulated toolset is used: a real run never loads it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensilekit.errors import PipelineError
from tensilekit.tools.runner import CommandRunner, SubprocessRunner
from tensilekit.tools.simulated.config import SIMULATED, SIMULATOR_VERSION, SimulatorConfig
from tensilekit.workload.problem import GemmProblem

if TYPE_CHECKING:
    from tensilekit.model.logic import LogicFile, LogicSolution
    from tensilekit.tools.library_index import LogicIndex

MEASURED = "measured"
"""The label of what AMD's tools measured on a GPU."""


class Toolset(abc.ABC):
    """The tools a run drives: the bench, the Tensile driver and the library they load."""

    label: str
    """``SIMULATED`` or ``measured``: what every output of these tools is labelled."""

    @abc.abstractmethod
    def bench_runner(self, stall_timeout: float | None = None) -> CommandRunner:
        """What runs ``hipblaslt-bench`` command lines (``stall_timeout``: kill a real process
        whose output stops moving)."""

    @abc.abstractmethod
    def driver_runner(self) -> CommandRunner:
        """What runs ``Tensile config.yaml output_dir`` command lines."""

    @abc.abstractmethod
    def versioned_tools(self, executables: Sequence[str]) -> list[str]:
        """The tools whose version keys cached results, for stages that run ``executables``."""

    @property
    def shares_gpu_client(self) -> bool:
        """Whether driver runs share one built client per node, each holding its GPU's lock."""
        return False

    @property
    def note(self) -> str | None:
        """A line configs and reports carry about where the numbers come from (None: GPU-measured)."""
        return None

    def catalogue_logic(self, arch: str, problem: GemmProblem) -> tuple[str, LogicFile]:
        """``(file name, logic)`` of the installed library's logic file for ``problem``'s type,
        when the tools carry their own library (the simulated ones do)."""
        raise PipelineError(f"the {self.label} tools carry no library of their own: pass --library-logic")

    def index_library_logic(self, folder: Path, arch: str, custom_kernels: Path | None) -> tuple[LogicIndex, Any]:
        """``folder`` as the bench of these tools loads it, when they load logic files directly
        (the simulated ones do): the indices and names the bench prints, and each file's data."""
        raise PipelineError(f"the {self.label} tools load built libraries, not logic files")

    def write_tuned_library(
        self, directory: Path, arch: str, winners: Sequence[tuple[GemmProblem, str, LogicSolution]]
    ) -> Path | None:
        """Make the tuned library ``directory`` from ``winners`` (problem, solution name, its
        logic-file solution) without a build, when these tools load such a library; None: build it with
        TensileCreateLibrary."""
        return None


class RealTools(Toolset):
    """AMD's tools, run as processes on this node's GPUs."""

    label = MEASURED

    def bench_runner(self, stall_timeout: float | None = None) -> CommandRunner:
        return SubprocessRunner(stall_timeout=stall_timeout)

    def driver_runner(self) -> CommandRunner:
        return SubprocessRunner()

    def versioned_tools(self, executables: Sequence[str]) -> list[str]:
        return list(executables)

    @property
    def shares_gpu_client(self) -> bool:
        return True


class SimulatedTools(Toolset):
    """tensilekit's GPU model answering the tools' command lines (:mod:`tensilekit.tools.simulated`)."""

    label = SIMULATED

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config

    def bench_runner(self, stall_timeout: float | None = None) -> CommandRunner:
        from tensilekit.tools.simulated.bench import SimulatedBenchRunner

        return SimulatedBenchRunner(self.config)

    def driver_runner(self) -> CommandRunner:
        from tensilekit.tools.simulated.tensile import SimulatedTensileRunner

        return SimulatedTensileRunner(self.config)

    def versioned_tools(self, executables: Sequence[str]) -> list[str]:
        return [f"builtin:{SIMULATOR_VERSION}"]

    @property
    def note(self) -> str | None:
        return f"{SIMULATED}: benchmarked by tensilekit's GPU model, not by a GPU"

    def catalogue_logic(self, arch: str, problem: GemmProblem) -> tuple[str, LogicFile]:
        from tensilekit.tools.simulated.library import library_logic

        return library_logic(arch, problem)

    def index_library_logic(self, folder: Path, arch: str, custom_kernels: Path | None) -> tuple[LogicIndex, Any]:
        from tensilekit.tools.simulated.gpu import logic_index

        return logic_index(str(folder), arch, None if custom_kernels is None else str(custom_kernels))

    def write_tuned_library(
        self, directory: Path, arch: str, winners: Sequence[tuple[GemmProblem, str, LogicSolution]]
    ) -> Path | None:
        from tensilekit.tools.simulated.tensile import write_tuned_winners

        return write_tuned_winners(directory, arch, winners)


def toolset_for(simulator: SimulatorConfig | None) -> Toolset:
    """The tools a run (or one of its jobs) drives: simulated when ``simulator`` is given."""
    return RealTools() if simulator is None else SimulatedTools(simulator)


__all__ = [
    "MEASURED",
    "SIMULATED",
    "RealTools",
    "SimulatedTools",
    "SimulatorConfig",
    "Toolset",
    "toolset_for",
]

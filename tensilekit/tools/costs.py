"""Scheduling cost estimates: how long a GEMM should take on a GPU, from published figures only.

The tuning stages need these to order and weigh jobs (longest first, estimated time shares) --
with AMD's tools or the simulated ones. They live here, beside the tools, so the real path does
not depend on :mod:`tensilekit.tools.simulated`; the simulator builds its GPU model on the same
figures (:class:`ArchSpec`), not the other way round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tensilekit.errors import PipelineError
from tensilekit.workload.problem import GemmProblem, compute_input_letters

# ---------------------------------------------------------------------------------------------
# Architectures


@dataclasses.dataclass(frozen=True)
class ArchSpec:
    """Published figures of one GPU (one GCD for gfx90a)."""

    name: str
    product: str
    schedule: str
    """Tensile schedule name used in logic files (``aquavanjaram`` for gfx942)."""
    cu_count: int
    clock_mhz: int
    peak_tflops: Mapping[str, float]
    """Dense matrix peak by Tensile input-type letter (``B`` bf16, ``H`` f16, ``S`` f32, ``F8`` …)."""
    hbm_tbps: float
    launch_us: float
    isa: tuple[int, int, int]

    def peak(self, letters: str) -> float:
        """Peak TFLOP/s for an input type (unknown types run at the f32 rate)."""
        return self.peak_tflops.get(letters, self.peak_tflops["S"])


ARCHS: dict[str, ArchSpec] = {
    spec.name: spec
    for spec in (
        ArchSpec("gfx90a", "MI250X (one GCD)", "aldebaran", 110, 1700,
                 {"H": 191.5, "B": 191.5, "S": 47.9, "X": 47.9, "D": 47.9, "I8": 191.5}, 1.6, 4.0, (9, 0, 10)),
        ArchSpec("gfx942", "MI300X", "aquavanjaram", 304, 2100,
                 {"H": 1307.4, "B": 1307.4, "S": 163.4, "X": 653.7, "D": 163.4, "I8": 2614.9, "F8": 2614.9,
                  "B8": 2614.9, "F8N": 2614.9, "B8N": 2614.9}, 5.3, 3.0, (9, 4, 2)),
        ArchSpec("gfx950", "MI355X", "gfx950", 256, 2400,
                 {"H": 2516.6, "B": 2516.6, "S": 157.3, "X": 157.3, "D": 78.6, "I8": 5033.2, "F8": 5033.2,
                  "B8": 5033.2, "F4": 10066.3}, 8.0, 2.5, (9, 5, 0)),
    )
}  # fmt: skip


def arch_spec(name: str) -> ArchSpec:
    """The figures of a known architecture; raises :class:`PipelineError` for others."""
    spec = ARCHS.get(name)
    if spec is None:
        raise PipelineError(f"the simulator does not know architecture {name!r} (known: {', '.join(sorted(ARCHS))})")
    return spec


_BYTES = {"f64_r": 8, "f32_r": 4, "xf32_r": 4, "i32_r": 4, "f16_r": 2, "bf16_r": 2, "i8_r": 1, "f8_r": 1,
          "bf8_r": 1, "f8_fnuz_r": 1, "bf8_fnuz_r": 1, "f8_ocp_r": 1, "bf8_ocp_r": 1, "f4_r": 1}  # fmt: skip


def type_bytes(name: str) -> int:
    """Bytes per element of a hipBLASLt data type (unknown: 2)."""
    return _BYTES.get(name, 2)


def input_letters(problem: GemmProblem) -> str:
    """The Tensile letters of the type a problem's MFMA reads (``B`` for a ``BBS`` GEMM, ``X`` for
    xf32, ``H`` for f8 x f16 with ``c_f32_fast_f16_r``), which decides its peak rate."""
    if problem.compute_type == "c_xf32_r" and problem.a_type == "f32_r":
        return "X"
    return compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)


def estimate_time_us(problem: GemmProblem, arch: str) -> float:
    """An analytic estimate of one call (roofline at 70 % of peak), for *estimated* time shares."""
    spec = arch_spec(arch)
    compute_us = problem.flops / (spec.peak(input_letters(problem)) * 1e12 * 0.7) * 1e6
    data = problem.batch * (
        problem.m * problem.k * type_bytes(problem.a_type)
        + problem.k * problem.n * type_bytes(problem.b_type)
        + problem.m * problem.n * type_bytes(problem.d_type)
    )
    memory_us = data / (spec.hbm_tbps * 1e12 * 0.8) * 1e6
    return max(compute_us, memory_us) + spec.launch_us


__all__ = ["ARCHS", "ArchSpec", "arch_spec", "estimate_time_us", "input_letters", "type_bytes"]

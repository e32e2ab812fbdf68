"""Kernel-search groups and their benchmark job (the parts of ``--mode ga``/``grid`` that do not
depend on the GA's state): which GEMMs are searched together, the ProblemType a group's configs
carry (tool-profile letters, xf32, the library row's epilogue), and the job that writes a config,
runs the driver and returns one measurement per kernel.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.jobs import JobContext
from tensilekit.pipeline.stages.common import (
    GemmEntry,
)
from tensilekit.search.clusters import cluster_sizes
from tensilekit.search.configs import (
    problem_type_config,
)
from tensilekit.search.driver import MEASUREMENT_ERROR, SharedClient, evaluate_with_driver
from tensilekit.search.params import Dialect, KernelParams, ProblemShape
from tensilekit.search.profiles import profile_for
from tensilekit.tools.hipblaslt_bench import InvalidMeasurement
from tensilekit.tools.problem_types import letters_of, problem_from_type, problem_type_name
from tensilekit.tools.profiles import DEFAULT_PROFILE, ToolProfile, tool_profile
from tensilekit.tools.toolset import SimulatorConfig, toolset_for
from tensilekit.workload.problem import (
    COMPUTE_TYPES,
    compute_input_letters,
    input_type_letters,
    tensile_type_letters,
)


class SearchGroup(BaseModel):
    """One search: a GEMM type and a cluster of its sizes, with the GEMMs that use each size."""

    model_config = ConfigDict(frozen=True)

    name: str
    gemm_type: str
    letters: str
    type_name: str
    problem_type: dict[str, Any]
    shapes: tuple[tuple[int, int, int, int, str, str, int, int], ...]
    weights: tuple[float, ...]
    gemms: tuple[tuple[str, int], ...]
    """``(GEMM id, position of its size in shapes)``."""
    compute_bytes: int = 4
    beta: bool = False
    type_letters: tuple[str, str, str] = ("S", "S", "S")
    """``(DataType, DestDataType, ComputeDataType)`` in tensilekit's letters (before the tool
    profile maps them)."""
    input_letters: tuple[str, str] | None = None
    """``(DataTypeA, DataTypeB)`` when A or B differs from ``DataType`` (:func:`input_letters`)."""
    bias_type: str | None = None
    """The GEMMs' bias type letter (benchmarked when the ProblemType has a bias epilogue)."""
    activation: str | None = None

    def problem_shapes(self) -> list[ProblemShape]:
        return [ProblemShape(*shape) for shape in self.shapes]


class DriverJobSpec(BaseModel):
    """Payload of :func:`driver_job`: benchmark some kernels of one group with the driver."""

    model_config = ConfigDict(frozen=True)

    name: str
    workdir: str
    group: SearchGroup
    kernels: tuple[dict[str, Any], ...]
    arch: str
    dialect: Dialect
    executable: str
    simulator: SimulatorConfig | None = None
    tool_profile: str = DEFAULT_PROFILE
    """The driver's release (:data:`~tensilekit.tools.profiles.PROFILES`): its
    ``MinimumRequiredVersion``, how it gets its client and whether its ``--client-lock`` works."""


def driver_job(context: JobContext, spec: DriverJobSpec) -> dict[str, Any]:
    """Write the config, run the driver (or the SIMULATED one) and return the measurements.

    A kernel with an impossible GFlops value is a ``measurement error`` of that kernel; when every
    benchmarked kernel has one, the run itself measured nothing and the job fails with
    :class:`~tensilekit.tools.hipblaslt_bench.InvalidMeasurement`, so it is retried per
    ``--retries`` and then reported, like any failed job.
    """
    tools = toolset_for(spec.simulator)
    tool = tool_profile(spec.tool_profile)
    # AMD's driver: one client per node, each run holding its GPU's lock (SharedClient).
    client = SharedClient.for_node(spec.workdir, context.node, tool) if tools.shares_gpu_client else None
    profile = profile_for(spec.arch)
    group = spec.group
    kernels = [KernelParams.from_json(item) for item in spec.kernels]
    measurements = evaluate_with_driver(
        tools.driver_runner(), kernels, name=spec.name, workdir=spec.workdir, problem_type=group.problem_type,
        sizes=group.problem_shapes(), profile=profile, defaults=profile.default_genes(group.letters),
        type_name=group.type_name, dialect=spec.dialect, executable=spec.executable, env=context.env,
        timeout=context.timeout, header=config_header(group, spec.arch, spec.dialect, tools.note),
        beta=group.beta, minimum_required_version=tool.minimum_required_version, bias_type=group.bias_type,
        activation=group.activation, client=client, device=context.device,
    )  # fmt: skip
    benchmarked = [m for m in measurements if m.status == "ok" or m.status.startswith(MEASUREMENT_ERROR)]
    if benchmarked and all(m.status.startswith(MEASUREMENT_ERROR) for m in benchmarked):
        raise InvalidMeasurement(f"{spec.name}: every kernel's time is invalid ({benchmarked[0].status})")
    return {"measurements": [measurement.to_json() for measurement in measurements]}


def config_header(group: SearchGroup, arch: str, dialect: str, note: str | None) -> list[str]:
    """The comment lines a group's configs start with (``note``: the tools' word on where the
    numbers come from, :attr:`~tensilekit.tools.toolset.Toolset.note`; SIMULATED ones say so)."""
    lines = [
        f"tensilekit kernel search: {group.gemm_type} group {group.name} for {arch} ({dialect} config)",
        "sizes (M, N, batch, K): " + "; ".join("x".join(str(v) for v in shape[:4]) for shape in group.shapes),
    ]
    if note is not None:
        lines.append(note)
    return lines


def type_letters(problem: Any) -> tuple[str, str, str]:
    """``(DataType, DestDataType, ComputeDataType)`` of a GEMM in tensilekit's letters.

    ``DataType`` is the type the MFMA reads (:func:`~tensilekit.workload.problem.compute_input_letters`):
    an fp8 x bf8 GEMM is ``F8B8``, never ``F8`` (that would tune F8 x F8, another problem); f8 x f16
    with ``c_f32_fast_f16_r`` is ``H``, its A and B in :func:`input_letters`.
    """
    return (
        compute_input_letters(problem.a_type, problem.b_type, problem.compute_type),
        tensile_type_letters(problem.d_type),
        COMPUTE_TYPES.get(problem.compute_type, "S"),
    )


def input_letters(problem: Any) -> tuple[str, str] | None:
    """``(DataTypeA, DataTypeB)`` when A or B is not of the GEMM's ``DataType`` (None: both are).

    tensilelite reads them beside ``DataType`` (SolutionStructs.py:106-120 @7d9fb68) and names the
    problem type after them (``_F8H_HHS``, :484-487); mixed fp8 (``F8B8``) is one DataType of its own.
    """
    data = compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)
    if data == input_type_letters(problem.a_type, problem.b_type):
        return None
    return tensile_type_letters(problem.a_type), tensile_type_letters(problem.b_type)


def kernel_search_issue(problem: Any) -> str | None:
    """Why tensilekit's kernel search cannot tune ``problem`` as logged (None: it can; pure).

    MX block scaling (``scaleA``/``scaleB`` >= 3, GEKO detects it the same way: pipeline.py
    ``_detect_mx_from_log`` @6349c3cb) needs the MX ProblemType keys of newer tensilelite, which
    tensilekit does not write: the config would search the unscaled GEMM, another problem.
    """
    modes = {"scaleA": problem.scale_a, "scaleB": problem.scale_b}
    block = {name: mode for name, mode in modes.items() if mode >= 3}
    if block:
        shown = ", ".join(f"{name} {mode}" for name, mode in block.items())
        return (
            f"MX block scaling ({shown}) cannot be written into a tuning config by tensilekit; "
            "tune it with --mode search"
        )
    return None


def is_xf32(problem: Any) -> bool:
    """An fp32 GEMM computed with xf32 MFMAs (``c_xf32_r``): tensilelite's ``F32XdlMathOp: X``."""
    return bool(problem.compute_type == "c_xf32_r" and problem.a_type == "f32_r")


def _problem_type(problem: Any, tool: ToolProfile | None = None, arch: str = "") -> dict[str, Any]:
    letters, dest, compute = type_letters(problem)
    inputs = input_letters(problem)
    if tool is not None:  # e.g. F8N is F8 to a release without FNUZ letters, on gfx942
        letters = tool.config_letters(letters, arch) or letters
        dest = tool.config_letters(dest, arch) or dest
        if inputs is not None:
            inputs = (
                tool.config_letters(inputs[0], arch) or inputs[0],
                tool.config_letters(inputs[1], arch) or inputs[1],
            )
    config = problem_type_config(letters, dest, compute, problem.trans_a, problem.trans_b)
    if inputs is not None:
        config["DataTypeA"], config["DataTypeB"] = inputs
    if is_xf32(problem):
        # GEKO writes F32XdlMathOp: X for xf32 (config_sections_generator.py _build_problem_type);
        # without it the kernel is plain fp32 and serves another ProblemType (..._SB vs ..._SB_X...).
        config["F32XdlMathOp"] = "X"
    return config


def build_groups(gemms: Sequence[GemmEntry], config: TuneConfig, tool: ToolProfile | None = None) -> list[SearchGroup]:
    """The searches: per GEMM type (in workload order), clusters of distinct sizes.

    ``tool`` (the driver's profile) maps type letters to the ones its release uses.
    """
    by_type: dict[str, list[GemmEntry]] = defaultdict(list)
    for gemm in gemms:
        by_type[gemm.problem.gemm_type].append(gemm)
    groups: list[SearchGroup] = []
    for gemm_type, members in by_type.items():
        shapes: list[tuple[int, int, int, int, str, str, int, int]] = []
        weights: list[float] = []
        owner: list[tuple[str, int]] = []
        for gemm in members:
            problem = gemm.problem
            shape = (problem.m, problem.n, problem.batch, problem.k, problem.trans_a, problem.trans_b,
                     problem.lda, problem.ldb)  # fmt: skip
            if shape not in shapes:
                shapes.append(shape)
                weights.append(0.0)
            position = shapes.index(shape)
            weights[position] += float(problem.call_count)
            owner.append((gemm.id, position))
        clusters = cluster_sizes(
            [ProblemShape(*shape) for shape in shapes], max_distance=config.cluster_distance,
            max_size=config.cluster_size,
        )  # fmt: skip
        first = members[0].problem
        for number, cluster in enumerate(clusters):
            local = {position: index for index, position in enumerate(cluster)}
            groups.append(
                SearchGroup(
                    name=f"{gemm_type}_{number}", gemm_type=gemm_type,
                    letters="X" if is_xf32(first) else letters_of(first), type_letters=type_letters(first),
                    input_letters=input_letters(first),
                    type_name=problem_type_name(first), problem_type=_problem_type(first, tool, config.arch),
                    shapes=tuple(shapes[position] for position in cluster),
                    weights=tuple(weights[position] for position in cluster),
                    gemms=tuple((gemm_id, local[position]) for gemm_id, position in owner if position in local),
                    compute_bytes=8 if first.compute_type == "c_f64_r" else 4,
                    beta=any(gemm.problem.beta != 0 for gemm in members),
                    bias_type=tensile_type_letters(first.bias_type) if first.bias and first.bias_type else None,
                    activation=None if first.activation == "none" else first.activation,
                )
            )  # fmt: skip
    return groups


def shape_problem(shape: Sequence[Any], group: SearchGroup) -> Any:
    """The GEMM one of a group's shapes describes (for cost estimates)."""
    return problem_from_type(group.problem_type, shape[:4])


__all__ = [
    "DriverJobSpec",
    "SearchGroup",
    "build_groups",
    "config_header",
    "driver_job",
    "input_letters",
    "is_xf32",
    "kernel_search_issue",
    "shape_problem",
    "type_letters",
]

"""The SIMULATED installed library as tensilelite logic files (what ``--simulate`` reads as ``--library-logic``).

Built on the GPU model of :mod:`tensilekit.tools.simulated.gpu`; what the simulated bench
loads (:mod:`tensilekit.tools.simulated.bench`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensilekit.errors import InvalidKernel, TensilekitError
from tensilekit.io.logic_io import logic_from_data
from tensilekit.model.logic import LogicFile
from tensilekit.model.tensile_parameters import DataTypeInfo
from tensilekit.tools.costs import ArchSpec, arch_spec, type_bytes
from tensilekit.tools.problem_types import (
    TYPE_NAMES_BY_CODE,
    problem_type_dict,
    problem_type_name,
)
from tensilekit.tools.simulated.config import SIMULATED
from tensilekit.tools.simulated.gpu import (
    SimKernel,
    heuristic_kernel,
    kernel_catalog,
    kernel_time_us,
    supports,
)
from tensilekit.workload.problem import GemmProblem

# ---------------------------------------------------------------------------------------------
# The simulated installed library (logic files)


def _record_value(value: Any) -> Any:
    """A derived state's value as ``LibraryIO.writeSolutions`` writes it (LibraryIO.py:124-152
    @7d9fb68): data types as their codes, tuples as lists."""
    if isinstance(value, DataTypeInfo):
        return value.code
    if isinstance(value, Mapping):
        return {key: _record_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_record_value(item) for item in value]
    return value


def derived_record(
    problem_type: Mapping[str, Any],
    parameters: Mapping[str, Any],
    *,
    isa: Sequence[int],
    cu_count: int | None,
    name: str,
    position: int,
) -> dict[str, Any]:
    """A complete tensilelite solution record for a kernel's config parameters, as tensilelite's
    driver writes one: ``Solution(config)`` (tensilekit's port,
    :func:`~tensilekit.model.derive_tensilelite.solution_state`), then ``SolutionIndex``,
    ``SolutionNameMin`` and ``KernelNameMin`` (BenchmarkProblems.py:338-345 @7d9fb68), written
    as ``LibraryIO.writeSolutions`` does. AMD's TensileCreateLibrary builds such records (a record
    missing keys it reads, e.g. ``CustomKernelName``, fails its ``parseLibraryLogicData``).

    Raises:
        InvalidKernel: tensilelite's derivation rejects the kernel.
    """
    from tensilekit.model.derive_tensilelite import solution_state

    config = {"ProblemType": dict(problem_type), "KernelLanguage": "Assembly", **parameters}
    try:
        state = solution_state(config, isa=(int(isa[0]), int(isa[1]), int(isa[2])), cu_count=cu_count)
    except TensilekitError as error:
        raise InvalidKernel(f"{name}: {error}") from None
    if not state.get("Valid"):
        raise InvalidKernel(f"{name}: tensilelite's Solution() rejects it")
    record: dict[str, Any] = _record_value(state)
    record.pop("CUCount", None)  # set from the logic file by parseLibraryLogicData, never written
    record.update(SolutionIndex=position, SolutionNameMin=name, KernelNameMin=name)
    return record


def solution_dict(kernel: SimKernel, position: int, problem_type: Mapping[str, Any], arch: ArchSpec) -> dict[str, Any]:
    """A complete tensilelite solution record for a simulated kernel (``SolutionIndex`` = list
    position; :func:`derived_record`): the kernel's tile, MI, waves, DepthU, GSU and WGM, the
    catalogue's defaults for the rest (16-byte loads, PrefetchGlobalRead 2, StaggerU 32), and
    ``StaggerUStride`` -1 (derived: tensilelite rejects a stride below ``DepthU`` bytes)."""
    from tensilekit.search.params import KernelParams

    element = type_bytes(TYPE_NAMES_BY_CODE.get(problem_type.get("DataType", 0), "f32_r"))
    widest = max(1, kernel.vector_bytes // element)
    params = KernelParams.from_solution(
        {"MatrixInstruction": list(kernel.mi), "MacroTile0": kernel.mt0, "MacroTile1": kernel.mt1,
         "DepthU": kernel.depth_u, "WorkGroup": list(kernel.work_group)},
        {"gsu": kernel.gsu, "stream_k": kernel.stream_k, "wgm": kernel.wgm, "wgm_xcc": 1, "grvw_a": widest,
         "grvw_b": widest, "prefetch_global_read": kernel.prefetch, "lds_buffer": 0, "stagger_u": kernel.stagger_u},
    )  # fmt: skip
    parameters = {**params.fork_values("tensilelite"), "StaggerUStride": -1}
    try:
        return derived_record(
            problem_type, parameters, isa=arch.isa, cu_count=arch.cu_count, name=kernel.name, position=position
        )
    except InvalidKernel:
        # tensilelite 7d9fb68 cannot derive it (gfx950's MFMAs are newer than it): the model's keys only
        return _minimal_record(kernel, position, problem_type, arch)


def _minimal_record(
    kernel: SimKernel, position: int, problem_type: Mapping[str, Any], arch: ArchSpec
) -> dict[str, Any]:
    return {
        "DepthU": kernel.depth_u,
        "EnableMatrixInstruction": True,
        "GlobalSplitU": kernel.gsu,
        "GlobalSplitUAlgorithm": "MultipleBuffer" if kernel.gsu > 1 else "SingleBuffer",
        "ISA": list(arch.isa),
        "KernelLanguage": "Assembly",
        "KernelNameMin": kernel.name,
        "MacroTile0": kernel.mt0,
        "MacroTile1": kernel.mt1,
        "MatrixInstruction": list(kernel.mi),
        "ProblemType": dict(problem_type),
        "SolutionIndex": position,
        "SolutionNameMin": kernel.name,
        "StaggerU": 32,
        "ThreadTile": [1, 1],
        "Valid": True,
        "WorkGroup": list(kernel.work_group),
        "WorkGroupMapping": kernel.wgm,
    }


_STANDARD_SIZES = ((1024, 1024, 1, 1024), (2048, 2048, 1, 2048), (4096, 4096, 1, 4096), (8192, 8192, 1, 8192))


def library_logic(
    arch: str,
    problem: GemmProblem,
    kernels: Sequence[SimKernel] | None = None,
    table: Iterable[tuple[Sequence[int], int, float]] | None = None,
    *,
    label: str = SIMULATED,
) -> tuple[str, LogicFile]:
    """A tensilelite Equality logic file holding ``kernels`` (default: the whole catalogue).

    ``table`` rows are ``(size, kernel position, efficiency)``; by default the reference
    choice for a few square sizes. Returns ``(file name, logic)``; the file name follows
    hipBLASLt's ``<schedule>_<ProblemType>.yaml``. ``label`` goes into the device-name list so
    simulated files say so.
    """
    spec = arch_spec(arch)
    chosen = list(kernels) if kernels is not None else list(kernel_catalog(arch, problem))
    solutions = [
        solution_dict(kernel, position, problem_type_dict(problem), spec) for position, kernel in enumerate(chosen)
    ]
    # the file's ProblemType is the solutions' derived one (AMD's build reads TotalIndices & co. from it)
    problem_type = solutions[0]["ProblemType"] if solutions else problem_type_dict(problem)
    solutions = [dict(solution, ProblemType=problem_type) for solution in solutions]
    if table is None:
        rows: list[list[Any]] = []
        for m, n, batch, k in _STANDARD_SIZES:
            sized = problem.model_copy(update={"m": m, "n": n, "k": k, "batch": batch})
            choice = heuristic_kernel(sized, [kernel for kernel in chosen if supports(kernel, sized)] or chosen, spec)
            efficiency = sized.flops / (kernel_time_us(sized, choice, spec) * 1e3)
            rows.append([[m, n, batch, k], [chosen.index(choice), round(efficiency, 1)]])
    else:
        rows = [[list(size), [position, efficiency]] for size, position, efficiency in table]
    data = [
        {"MinimumRequiredVersion": "4.33.0"},
        spec.schedule,
        {"Architecture": spec.name, "CUCount": spec.cu_count},
        [f"{label} {spec.product}"],
        problem_type,
        solutions,
        [2, 3, 0, 1],
        rows,
        None,
        None,
        "DeviceEfficiency",
        "Equality",
    ]
    name = f"{spec.schedule}_{problem_type_name(problem)}.yaml"
    return name, logic_from_data(data, dialect="tensilelite", source=name)


# ---------------------------------------------------------------------------------------------
# --simulate --library-logic DIR: the simulated library is DIR's logic files


__all__ = [
    "derived_record",
    "library_logic",
    "solution_dict",
]

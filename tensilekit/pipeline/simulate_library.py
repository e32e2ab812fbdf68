"""The SIMULATED installed library as tensilelite logic files (what ``--simulate`` reads as ``--library-logic``).

Part of :mod:`tensilekit.pipeline.simulate`'s public names.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import InvalidKernel, TensilekitError
from tensilekit.io.logic_io import logic_from_data
from tensilekit.model.logic import LogicFile
from tensilekit.model.tensile_parameters import TENSILELITE_DATA_TYPES, DataTypeInfo
from tensilekit.pipeline.library_index import LogicIndex
from tensilekit.pipeline.simulate import (
    SIMULATED,
    ArchSpec,
    SimKernel,
    arch_spec,
    heuristic_kernel,
    kernel_catalog,
    kernel_time_us,
    problem_type_name,
    supports,
    type_bytes,
)
from tensilekit.workload.problem import GemmProblem, compute_input_letters

# ---------------------------------------------------------------------------------------------
# The simulated installed library (logic files)

TENSILELITE_TYPE_CODES: dict[str, int] = {
    "f32_r": 0, "f64_r": 1, "f16_r": 4, "i32_r": 6, "bf16_r": 7, "i8_r": 8, "xf32_r": 10, "f8_r": 11, "bf8_r": 12,
    "f8_fnuz_r": 11, "bf8_fnuz_r": 12, "f8_ocp_r": 11, "bf8_ocp_r": 12,
}  # fmt: skip
"""hipBLASLt data-type name -> tensilelite ``DataType`` code (formats.md 1.4; the first name of a code is canonical)."""

MIXED_FP8_CODES: dict[tuple[int, int], int] = {(11, 12): 13, (12, 11): 14}
"""(A code, B code) -> tensilelite's combined ``DataType`` (13 ``F8B8``, 14 ``B8F8``)."""
_TYPE_NAMES_BY_CODE: dict[int, str] = {code: name for name, code in reversed(TENSILELITE_TYPE_CODES.items())}

COMPUTE_TYPE_CODES: dict[str, int] = {"c_f32_r": 0, "c_f64_r": 1, "c_f16_r": 4, "c_i32_r": 6}
"""Compute type -> tensilelite ``ComputeDataType`` code (``c_xf32_r`` is 0 plus ``F32XdlMathOp``)."""


def problem_type_dict(problem: GemmProblem) -> dict[str, Any]:
    """A tensilelite ``ProblemType`` dict for a plain GEMM (tensilelite type codes)."""
    trans_a, trans_b = problem.trans_a == "T", problem.trans_b == "T"
    a_code = TENSILELITE_TYPE_CODES.get(problem.a_type, 0)
    b_code = TENSILELITE_TYPE_CODES.get(problem.b_type, 0)
    # Mixed fp8 is its own DataType, as in AMD's logic (aquavanjaram gfx940 ..._F8B8HS_BH_...yaml:
    # DataType: 13; tensilelite derives DataTypeA/B = DataType, SolutionStructs.py:108 @7d9fb68).
    mixed = MIXED_FP8_CODES.get((a_code, b_code))
    if mixed is not None:
        a_code = b_code = mixed
    # DataType is the type the MFMA reads (f8 x f16 with c_f32_fast_f16_r: H, as AMD's gfx942
    # ..._F8H_HHS_BH_custom.yaml: DataType 4, DataTypeA 11, DataTypeB 4).
    letters = compute_input_letters(problem.a_type, problem.b_type, problem.compute_type)
    data_code = next((info.code for info in TENSILELITE_DATA_TYPES if info.char == letters), a_code)
    return {
        "Activation": False,
        "Batched": True,
        "ComplexConjugateA": False,
        "ComplexConjugateB": False,
        "ComputeDataType": COMPUTE_TYPE_CODES.get(problem.compute_type, 0),
        "DataType": data_code if mixed is None else a_code,
        "DataTypeA": a_code,
        "DataTypeB": b_code,
        "DestDataType": TENSILELITE_TYPE_CODES.get(problem.d_type, 0),
        "HighPrecisionAccumulate": type_bytes(problem.a_type) <= 2,
        "IndexAssignmentsA": [3, 0, 2] if trans_a else [0, 3, 2],
        "IndexAssignmentsB": [1, 3, 2] if trans_b else [3, 1, 2],
        "IndicesBatch": [2],
        "IndicesFree": [0, 1],
        "IndicesSummation": [3],
        "NumIndicesC": 3,
        "OperationType": "GEMM",
        "StridedBatched": True,
        "TransposeA": trans_a,
        "TransposeB": trans_b,
        "UseBeta": True,
        "UseBias": False,
    }


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

    element = type_bytes(_TYPE_NAMES_BY_CODE.get(problem_type.get("DataType", 0), "f32_r"))
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
    indices and names: :func:`~tensilekit.pipeline.library_index.index_logic`), and each logic
    file's data. The SIMULATED bench prints these indices and names, so simulated runs identify
    solutions by index exactly as real ones do. Cached per process while DIR's files are unchanged."""
    return _logic_index(folder, arch, custom_kernels, _stamp(folder))


@functools.lru_cache(maxsize=8)
def _logic_index(
    folder: str, arch: str, custom_kernels: str | None, stamp: tuple[tuple[str, int, int], ...]
) -> tuple[LogicIndex, dict[str, Any]]:
    from tensilekit.io.custom_kernels import custom_kernel_reader
    from tensilekit.pipeline.stages.library import index_logic_folder

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
        element = type_bytes(_TYPE_NAMES_BY_CODE.get(data[solution.source][4].get("DataType", 0), "f32_r"))
        kernels.setdefault(solution.type_key, []).append(_logic_kernel(solution.index, solution.name, record, element))
    return {key: tuple(items) for key, items in kernels.items()}


def logic_catalog(folder: str, arch: str, custom_kernels: str | None, problem: GemmProblem) -> tuple[SimKernel, ...]:
    """The simulated library's kernels for ``problem``'s GEMM type when it is ``--library-logic DIR``:
    one per built solution of that type, with the build's index and name and the record's parameters."""
    from tensilekit.pipeline.stages.library import problem_type_key

    return _logic_catalogs(folder, arch, custom_kernels, _stamp(folder)).get(problem_type_key(problem), ())


__all__ = [
    "COMPUTE_TYPE_CODES",
    "TENSILELITE_TYPE_CODES",
    "derived_record",
    "library_logic",
    "logic_catalog",
    "logic_index",
    "problem_type_dict",
    "solution_dict",
]

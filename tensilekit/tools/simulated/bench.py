"""The SIMULATED ``hipblaslt-bench``: command lines in, output in the real format out.

:class:`SimulatedBenchRunner` is the :class:`~tensilekit.tools.runner.CommandRunner` that
``--simulate`` puts where the real bench would run; it times problems with the GPU model of
:mod:`tensilekit.tools.simulated.gpu`; :class:`~tensilekit.tools.toolset.SimulatedTools` hands it out.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import ToolFailed, ToolNotFound
from tensilekit.tools.costs import type_bytes
from tensilekit.tools.hipblaslt_bench import LIBRARY_PATH_ENV
from tensilekit.tools.runner import CompletedCommand, EnvOverrides
from tensilekit.tools.simulated.config import SIMULATED, SIMULATOR_VERSION, SimulatorConfig
from tensilekit.tools.simulated.gpu import (
    TUNED_LIBRARY_FILE,
    SimKernel,
    SimulatedGpu,
    _tuned_data,
    kernel_time_us,
    supports,
    tuned_size_key,
    type_tag,
)
from tensilekit.workload.hipblaslt_log import parse_bench_line
from tensilekit.workload.problem import GemmProblem, compute_type_for_bench

_HEADER = (
    "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,"
    "ldd,stride_d,a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,"
    "activation_type,bias_vector,bias_type,hipblaslt-Gflops,hipblaslt-GB/s,us"
)
_VERIFY_HEADER = ",CPU-Gflops,CPU-us,norm_error,atol,rtol"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _problem_values(problem: GemmProblem) -> list[str]:
    return [
        problem.trans_a, problem.trans_b, "0", str(problem.batch), str(problem.m), str(problem.n), str(problem.k),
        _number(problem.alpha), str(problem.lda), str(problem.stride_a), _number(problem.beta), str(problem.ldb),
        str(problem.stride_b), str(problem.ldc), str(problem.stride_c), str(problem.ldd), str(problem.stride_d),
        problem.a_type, problem.b_type, problem.c_type, problem.d_type, compute_type_for_bench(problem.compute_type),
        str(problem.scale_a), str(problem.scale_b), str(problem.scale_c), str(problem.scale_d), "0",
        problem.activation, "1" if problem.bias else "0", problem.bias_type or "non-supported type",
    ]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _BenchRequest:
    problem: GemmProblem
    algo_method: str
    solution_index: int | None
    requested: int
    iters: int
    cold_iters: int
    verify: bool
    kernel_info: bool


def _parse_request(argv: Sequence[str]) -> _BenchRequest:
    tokens = ["hipblaslt-bench", *[str(arg) for arg in argv[1:]]]
    (problem,) = parse_bench_line(" ".join(tokens))
    settings: dict[str, str] = {}
    switches: set[str] = set()
    position = 1
    while position < len(tokens):
        token = tokens[position]
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if following is not None and (
            not following.startswith("-") or following.lstrip("-").replace(".", "").isdigit()
        ):
            settings[token] = following
            position += 2
        else:
            switches.add(token)
            position += 1
    index = settings.get("--solution_index")
    return _BenchRequest(
        problem=problem.without_solution(),
        algo_method=settings.get("--algo_method", "heuristic"),
        solution_index=int(index) if index is not None else None,
        requested=int(settings.get("--requested_solution", "1")),
        iters=int(settings.get("--iters", "10")),
        cold_iters=int(settings.get("--cold_iters", "2")),
        verify="--verify" in switches or "-v" in switches,
        kernel_info="--print_kernel_info" in switches,
    )


class SimulatedBenchRunner:
    """A :class:`~tensilekit.tools.runner.CommandRunner` that plays ``hipblaslt-bench`` on a :class:`SimulatedGpu`.

    It understands the command lines :func:`~tensilekit.tools.hipblaslt_bench.build_bench_argv`
    writes (heuristic, ``all`` and ``index`` solution selection, ``--verify``, iterations) and
    prints the real output layout, under a banner that says SIMULATED. With
    ``HIPBLASLT_TENSILE_LIBPATH`` set it plays the tuned library found there
    (:func:`write_tuned_library`), including kernels the kernel search generated (the library's
    ``kernels`` table); a size the tuned library lacks falls back to the reference choice. ``timeout`` is honoured against the simulated wall time.
    """

    def __init__(self, config: SimulatorConfig, *, sleep: Any = time.sleep) -> None:
        self.gpu = SimulatedGpu(config)
        self._sleep = sleep

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: EnvOverrides | None = None,
        timeout: float | None = None,
    ) -> CompletedCommand:
        """Answer one hipblaslt-bench command line (see the class docstring)."""
        if not argv or Path(str(argv[0])).name != "hipblaslt-bench":
            raise ToolNotFound(f"the simulator only plays hipblaslt-bench, not {argv[0] if argv else '<empty>'}")
        args = tuple(str(arg) for arg in argv)
        try:
            request = _parse_request(args)
        except ValueError as error:
            return CompletedCommand(
                args, 1, "", f"hipblaslt-bench: error: {error}\n", cwd=None if cwd is None else str(cwd)
            )
        library = (env or {}).get(LIBRARY_PATH_ENV)
        try:
            chosen = self._select(request, library)
        except LookupError as error:
            return CompletedCommand(args, 1, "", f"hipblaslt-bench: {error}\n", cwd=None if cwd is None else str(cwd))
        # Few iterations make a noisy screen; the seed context keeps differently configured
        # runs (reference vs tuned library, all vs index) independent samples.
        phase = "accurate" if request.iters >= 50 else "screen"
        context = f"{request.algo_method}|{request.iters}|{request.cold_iters}|{'tuned' if library else 'reference'}"
        rows = [(kernel, self.gpu.measure_us(request.problem, kernel, phase, context)) for kernel in chosen]
        busy = sum((request.iters + request.cold_iters) * us * 1e-6 for _, us in rows)
        wall = self.gpu.config.startup_s + self.gpu.config.time_scale * busy
        if timeout is not None and wall > timeout:
            self._sleep(timeout)
            raise ToolFailed(
                f"hipblaslt-bench (SIMULATED) timed out after {timeout:g} s and was killed",
                argv=args, returncode=-15, timed_out=True,
            )  # fmt: skip
        if wall > 0:
            self._sleep(wall)
        stdout = self._format(request, rows, tuned=library is not None)
        return CompletedCommand(args, 0, stdout, "", duration=wall, cwd=None if cwd is None else str(cwd))

    def _select(self, request: _BenchRequest, library: str | None) -> list[SimKernel]:
        problem = request.problem
        supported = self.gpu.supported(problem)
        if request.algo_method in ("index", "2"):
            match = [kernel for kernel in supported if kernel.index == request.solution_index]
            if not match:
                raise LookupError(f"solution index {request.solution_index} is not supported for this problem")
            return match
        if request.algo_method in ("all", "1"):
            return supported
        if library is not None:
            table = self._tuned(library)
            name = table.get(type_tag(problem), {}).get(tuned_size_key(problem))
            if name is not None:
                found = [kernel for kernel in supported if kernel.name == name]
                generated = self._tuned_kernels(library).get(name)
                if not found and generated is not None and supports(generated, problem):
                    found = [generated]
                if found:
                    return found
        reference = self.gpu.reference(problem)
        if request.requested <= 1:
            return [reference]
        ranked = sorted(
            supported, key=lambda kernel: (kernel_time_us(problem, kernel, self.gpu.arch, quality=False), kernel.index)
        )
        return ranked[: request.requested if request.requested > 0 else len(ranked)]

    @staticmethod
    def _tuned(library: str) -> dict[str, dict[str, str]]:
        return SimulatedBenchRunner._tuned_all(library)[0]

    @staticmethod
    def _tuned_kernels(library: str) -> dict[str, SimKernel]:
        return SimulatedBenchRunner._tuned_all(library)[1]

    @staticmethod
    def _tuned_all(library: str) -> tuple[dict[str, dict[str, str]], dict[str, SimKernel]]:
        path = Path(library) / TUNED_LIBRARY_FILE
        try:
            stat = path.stat()
        except OSError:
            raise LookupError(f"rocblaslt error: cannot read the Tensile library in {library}") from None
        return _tuned_data(str(path), stat.st_mtime_ns)

    def _format(self, request: _BenchRequest, rows: Sequence[tuple[SimKernel, float]], *, tuned: bool) -> str:
        problem = request.problem
        arch = self.gpu.arch
        lines = [
            f"hipBLASLt version: {SIMULATED} ({SIMULATOR_VERSION}, no GPU was used)",
            f"Device ID 0 : {SIMULATED} AMD Instinct {arch.product} {arch.name}"
            + (" (tuned library)" if tuned else ""),
            "",
            f"Is supported {len(rows)} / Total solutions: {len(self.gpu.catalog(problem))}",
        ]
        header = _HEADER + (_VERIFY_HEADER if request.verify else "")
        values = _problem_values(problem)
        data = problem.batch * (
            problem.m * problem.k * type_bytes(problem.a_type) + problem.k * problem.n * type_bytes(problem.b_type)
            + problem.m * problem.n * type_bytes(problem.d_type)
        )  # fmt: skip
        blocks: list[list[str]] = []
        for rank, (kernel, us) in enumerate(rows):
            gflops = problem.flops / (us * 1e3)
            row = values + [f"{gflops:.6g}", f"{data / (us * 1e3):.6g}", f"{us:.6g}"]
            if request.verify:
                row += [
                    f"{gflops / 50:.6g}",
                    f"{us * 50:.6g}",
                    f"{self.gpu.error(problem, kernel):.6g}",
                    "1e-05",
                    "1e-05",
                ]
            block = [f"[{rank}]:{header}", "    " + ",".join(row)]
            if request.kernel_info:
                block += [
                    f"    --Solution index: {kernel.index}",
                    f"    --Solution name:  {kernel.name}",
                    f"    --kernel name:    {kernel.name}",
                ]
            blocks.append(block)
        for block in blocks:
            lines += block
        if request.algo_method in ("all", "1") and len(rows) > 1:
            best = min(range(len(rows)), key=lambda position: (rows[position][1], rows[position][0].index))
            lines.append("Winner: ")
            lines += blocks[best]
        return "\n".join(lines) + "\n"


__all__ = ["SimulatedBenchRunner"]

"""Stage ``ingest``: read the workload logs (and ``--inline`` GEMMs) into one de-duplicated list of
GEMMs with call counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensilekit.errors import StageFailed
from tensilekit.model.common import MAX_SIZE
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.common import INGEST, PROBLEM_HEADER, WORKLOAD_FILE, TuneStage, problem_columns
from tensilekit.workload import aggregate_problems, load_workloads, parse_inline_gemm, split_by_device
from tensilekit.workload.problem import GemmProblem


def untunable_reason(problem: GemmProblem) -> str | None:
    """Why the build stage could not write ``problem`` into a logic file, checked at ingest so a
    run never benchmarks a GEMM it cannot keep: a logic file's exact key ``[M, N, batch, K, lda,
    ldb, ldc, ldd]`` holds sizes up to :data:`~tensilekit.model.common.MAX_SIZE` (2^40)."""
    key = {
        "M": problem.m, "N": problem.n, "batch": problem.batch, "K": problem.k,
        "lda": problem.lda, "ldb": problem.ldb, "ldc": problem.ldc, "ldd": problem.ldd,
    }  # fmt: skip
    over = [f"{name} {value}" for name, value in key.items() if value > MAX_SIZE]
    if not over:
        return None
    return (
        f"GEMM {problem.m}x{problem.n}x{problem.batch}x{problem.k} cannot be tuned: {', '.join(over)} over "
        f"{MAX_SIZE}, the largest size a logic file holds"
    )


_DEVICE = {"gfx", "cu_num"}  # folded away above: the run's own device


class IngestStage(TuneStage):
    """Logs (hipBLASLt mask 32/64/128, GEKO lists, TunableOp/AITER CSVs) -> ``workload.json``.

    Lines that cannot be read are skipped and listed (a profile log from a crashed process is
    common); grouped GEMMs are left out because hipblaslt-bench cannot time one group alone.
    """

    name = INGEST
    version = "1"
    outputs = (WORKLOAD_FILE, "gemms_in.csv")

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        values: dict[str, Any] = {"skip_bad_lines": True}
        if config.inline:  # only then, so runs without --inline keep their fingerprints
            values["inline"] = list(config.inline)
        return values

    def input_files(self, config: TuneConfig) -> list[Path]:
        return list(config.logs)

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        workload, parsed = load_workloads(config.logs, skip_bad_lines=True)
        if config.inline:  # GEKO's --inline GEMMs, after the logs' (identical ones add up)
            inline = [parse_inline_gemm(spec) for spec in config.inline]
            merged = aggregate_problems([*workload.problems, *inline])
            workload = merged.model_copy(
                update={
                    "warnings": workload.warnings + merged.warnings,
                    "records_in": workload.records_in + len(inline),
                }
            )
        # AITER rows tuned for another gfx are not this run's; rows of this gfx for other CU counts
        # are one GEMM to tune here (the device the run times them on), their calls summed
        split = split_by_device(workload.problems, config.arch)
        if any(problem.device_label() is not None for problem in workload.problems):
            folded = aggregate_problems(problem.without_device() for problem in split.served)
            workload = workload.model_copy(
                update={"problems": folded.problems, "warnings": workload.warnings + folded.warnings}
            )
        problems = [problem for problem in workload.problems if not problem.grouped_gemm]
        grouped = len(workload.problems) - len(problems)
        untunable = [reason for reason in map(untunable_reason, problems) if reason is not None]
        problems = [problem for problem in problems if untunable_reason(problem) is None]
        if not problems:
            sources = [str(path) for path in config.logs] + ["--inline"] * bool(config.inline)
            note = split.note()
            raise StageFailed(f"no GEMMs found in {', '.join(sources)}" + (f" ({note})" if note else ""))
        gemms = [
            {"id": f"g{position:04d}", "problem": problem.without_solution().model_dump(mode="json", exclude=_DEVICE)}
            for position, problem in enumerate(problems, start=1)
        ]
        bad_lines = [str(bad) for item in parsed for bad in item.bad_lines] + untunable
        notes = list(workload.warnings)
        if split.note() is not None:
            notes.append(str(split.note()))
        if grouped:
            notes.append(f"{grouped} grouped GEMM(s) left out (hipblaslt-bench cannot time one group alone)")
        if bad_lines:
            notes.append(f"{len(bad_lines)} unreadable line(s) skipped; see {WORKLOAD_FILE}")
        context.write_json(
            context.path(WORKLOAD_FILE),
            {
                "gemms": gemms,
                "records_in": workload.records_in,
                "call_count": sum(problem.call_count for problem in problems),
                "bad_lines": bad_lines,
                "notes": notes,
            },
        )
        context.write_csv(
            context.path("gemms_in.csv"),
            ["id", *PROBLEM_HEADER, "call_count", "flops"],
            (
                [gemm["id"], *problem_columns(problem), problem.call_count, problem.flops]
                for gemm, problem in zip(gemms, problems, strict=True)
            ),
        )
        types = {problem.gemm_type for problem in problems}
        return StageResult(
            summary=f"{len(problems)} GEMM(s) of {len(types)} type(s) from {workload.records_in} record(s)",
            notes=tuple(notes),
        )


__all__ = ["IngestStage"]

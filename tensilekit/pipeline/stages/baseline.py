"""Stage ``baseline``: time every GEMM with the installed (reference) library; pick what to tune.

Each GEMM runs once through hipblaslt-bench's heuristic (the solution the application gets
today), accurately and verified. Call count times measured time gives each GEMM's share of the
workload's GEMM time; ``--keep-thr`` keeps the GEMMs that make up that fraction of it, largest
first. The GEKO-style summaries ``gemms.csv`` (per GEMM) and ``summary.csv`` (per GEMM type),
with estimated (analytic) and measured shares, are written to the top of the work directory.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tensilekit.errors import StageFailed
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.common import (
    BASELINE,
    INGEST,
    LIBRARY,
    PROBLEM_HEADER,
    TuneStage,
    accurate_options,
    bench_job_for,
    bench_spec,
    keep_by_share,
    load_gemms,
    problem_columns,
    share_table,
)
from tensilekit.pipeline.stages.library import reference_library_dir
from tensilekit.tools.costs import estimate_time_us
from tensilekit.tools.hipblaslt_bench import bench_problem_issue

BASELINE_FILE = "baseline.json"


class BaselineStage(TuneStage):
    """Reference timings, time shares and the GEMMs to tune (``baseline.json``)."""

    name = BASELINE
    version = "1"
    inputs = (INGEST, LIBRARY)  # the library stage builds --reference-library when it is logic
    outputs = (BASELINE_FILE, "baseline.csv")

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {**config.measurement_slice(), "keep_thr": config.keep_thr}

    def tools(self, config: TuneConfig) -> list[str]:
        return self.bench_tools(config)

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        gemms = load_gemms(context)
        options = accurate_options(config, requested_solution=1)
        iterations = config.accurate_iters + config.accurate_cold_iters
        estimates = {gemm.id: estimate_time_us(gemm.problem, config.arch) for gemm in gemms}
        # A GEMM the installed bench cannot express is reported, never replayed as another problem.
        profile = config.hipblaslt_profile()
        unsupported = {
            gemm.id: issue for gemm in gemms if (issue := bench_problem_issue(gemm.problem, profile)) is not None
        }
        for gemm_id, issue in unsupported.items():
            context.log(f"{gemm_id} not benchmarked: {issue}")
        runnable = [gemm for gemm in gemms if gemm.id not in unsupported]
        reference = reference_library_dir(context)
        jobs = [
            bench_job_for(
                f"base-{gemm.id}",
                bench_spec(config, gemm.problem, options, library_dir=reference),
                estimates[gemm.id] * iterations,
            )
            for gemm in runnable
        ]
        outcomes = context.run_jobs(
            jobs, phase="baseline", subjects={f"base-{gemm.id}": gemm.label for gemm in runnable}
        )
        measured: dict[str, dict[str, Any]] = {}
        for gemm, outcome in zip(runnable, outcomes, strict=True):
            if outcome.ok and outcome.value["results"]:
                measured[gemm.id] = outcome.value["results"][0]
        if not measured:
            if unsupported:
                raise StageFailed(
                    f"no GEMM could be benchmarked: {len(unsupported)} cannot be expressed by {profile.description} "
                    f"(e.g. {next(iter(unsupported.values()))}), the others failed; see failures.json"
                )
            raise StageFailed("every baseline benchmark failed; see failures.json")
        order = [gemm.id for gemm in gemms]
        calls = {gemm.id: gemm.problem.call_count for gemm in gemms}
        estimated_share = share_table({gemm.id: calls[gemm.id] * estimates[gemm.id] for gemm in gemms})
        measured_total = {key: calls[key] * float(result["us"]) for key, result in measured.items()}
        measured_share = share_table(measured_total)
        kept = keep_by_share(measured_share, config.keep_thr, order)
        ranked = sorted(measured_share, key=lambda key: (-measured_share[key], order.index(key)))
        cumulative: dict[str, float] = {}
        running = 0.0
        for key in ranked:
            running += measured_share[key]
            cumulative[key] = running

        records = {
            gemm.id: {
                "label": gemm.label,
                "call_count": calls[gemm.id],
                "estimated_us": estimates[gemm.id],
                "estimated_share": estimated_share[gemm.id],
                "measured": measured.get(gemm.id),
                "measured_share": measured_share.get(gemm.id),
                "kept": gemm.id in kept,
                "unsupported": unsupported.get(gemm.id),
            }
            for gemm in gemms
        }
        context.write_json(
            context.path(BASELINE_FILE),
            {"gemms": records, "kept": kept, "total_us": sum(measured_total.values()), "data": config.data_label},
        )
        label = config.data_label
        context.write_csv(
            context.path("baseline.csv"),
            [
                "data",
                "id",
                *PROBLEM_HEADER,
                "call_count",
                "us",
                "gflops",
                "solution_index",
                "solution_name",
                "norm_error",
                "status",
            ],
            (
                [label, gemm.id, *problem_columns(gemm.problem), calls[gemm.id]]
                + (
                    [
                        result["us"],
                        result["gflops"],
                        result["solution_index"],
                        result["solution_name"],
                        result["norm_error"],
                        "failed verification" if result.get("verify_failed") else "ok",
                    ]
                    if (result := measured.get(gemm.id)) is not None
                    else [
                        None,
                        None,
                        None,
                        None,
                        None,
                        f"not expressible: {unsupported[gemm.id]}" if gemm.id in unsupported else "failed",
                    ]
                )
                for gemm in gemms
            ),
        )
        context.write_csv(
            context.run_root / "gemms.csv",
            ["data", "id", *PROBLEM_HEADER, "call_count", "gflop_per_call", "estimated_us", "estimated_share",
             "measured_us", "measured_share", "cumulative_share", "kept"],
            (
                [label, gemm.id, *problem_columns(gemm.problem), calls[gemm.id], gemm.problem.flops / 1e9,
                 estimates[gemm.id], estimated_share[gemm.id],
                 measured[gemm.id]["us"] if gemm.id in measured else None, measured_share.get(gemm.id),
                 cumulative.get(gemm.id), gemm.id in kept]
                for gemm in gemms
            ),
        )  # fmt: skip
        by_type: dict[str, list[str]] = defaultdict(list)
        for gemm in gemms:
            by_type[gemm.problem.gemm_type].append(gemm.id)
        context.write_csv(
            context.run_root / "summary.csv",
            ["data", "gemm_type", "gemms", "call_count", "estimated_share", "measured_share", "kept_gemms", "kept_share"],
            (
                [label, gemm_type, len(ids), sum(calls[key] for key in ids),
                 sum(estimated_share[key] for key in ids), sum(measured_share.get(key, 0.0) for key in ids),
                 sum(1 for key in ids if key in kept), sum(measured_share.get(key, 0.0) for key in ids if key in kept)]
                for gemm_type, ids in sorted(by_type.items())
            ),
        )  # fmt: skip
        kept_share = sum(measured_share[key] for key in kept)
        return StageResult(
            summary=f"{len(measured)}/{len(gemms)} GEMM(s) timed; tuning {len(kept)} covering {kept_share:.1%} of GEMM time"
        )


__all__ = ["BASELINE_FILE", "BaselineStage"]

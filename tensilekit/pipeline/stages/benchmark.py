"""Stage ``benchmark``: every tuned GEMM timed with the reference library and the tuned one.

Both runs use hipblaslt-bench's heuristic with ``--verify``, as the application would call
hipBLASLt; the only difference is ``HIPBLASLT_TENSILE_LIBPATH`` (unset for the installed
library, the ``build`` stage's library directory for the tuned one). The two jobs per GEMM are
independent, so a failure of either is a result (the GEMM cannot be judged) and the stage goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.costs import estimate_time_us
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.baseline import BASELINE_FILE
from tensilekit.pipeline.stages.build import BUILD_FILE
from tensilekit.pipeline.stages.common import (
    BASELINE,
    BENCHMARK,
    BUILD,
    INGEST,
    LIBRARY,
    PROBLEM_HEADER,
    TuneStage,
    bench_job_for,
    bench_spec,
    error_ratio,
    load_gemms,
    problem_columns,
    read_json,
    timed_options,
)
from tensilekit.pipeline.stages.library import reference_library_dir

BENCHMARK_FILE = "benchmark.json"
RAW_RESULTS = "raw_results.csv"
RESULTS_HEADER = [
    "data", "id", *PROBLEM_HEADER, "call_count", "reference_us", "reference_gflops", "reference_solution",
    "reference_norm_error", "tuned_us", "tuned_gflops", "tuned_solution", "tuned_norm_error", "uplift",
    "error_ratio", "status",
]  # fmt: skip


def compare(reference: dict[str, Any] | None, tuned: dict[str, Any] | None) -> dict[str, Any]:
    """Uplift (reference time / tuned time - 1) and error ratio of one GEMM's two runs (pure)."""
    if reference is None or tuned is None:
        return {"uplift": None, "error_ratio": None, "status": "benchmark failed"}
    if tuned.get("verify_failed"):  # hipblaslt-bench printed "failed" in atol/rtol
        return {"uplift": None, "error_ratio": None, "status": "tuned kernel failed verification"}
    uplift = reference["us"] / tuned["us"] - 1.0 if reference["us"] and tuned["us"] else None
    return {"uplift": uplift, "error_ratio": error_ratio(tuned["norm_error"], reference["norm_error"]), "status": "ok"}


class BenchmarkStage(TuneStage):
    """Reference vs tuned, verified (``benchmark.json``, ``raw_results.csv``)."""

    name = BENCHMARK
    version = "2"
    inputs = (INGEST, LIBRARY, BASELINE, BUILD)
    outputs = (BENCHMARK_FILE, RAW_RESULTS)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return config.measurement_slice()

    def tools(self, config: TuneConfig) -> list[str]:
        return self.bench_tools(config)

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        build = read_json(context.upstream_path(BUILD, BUILD_FILE))
        gemms = [gemm for gemm in load_gemms(context) if gemm.id in build["entries"]]
        library = None if build["library_dir"] is None else str((context.run_root / build["library_dir"]).resolve())
        baseline = read_json(context.upstream_path(BASELINE, BASELINE_FILE))["gemms"]
        iterations = config.accurate_iters + config.accurate_cold_iters
        reference_dir = reference_library_dir(context)
        jobs = []
        subjects: dict[str, str] = {}
        for gemm in gemms:
            # reference and tuned library on one GPU, with iterations sized by the baseline time
            options = timed_options(config, (baseline[gemm.id]["measured"] or {}).get("us"), requested_solution=1)
            cost = estimate_time_us(gemm.problem, config.arch) * iterations
            jobs.append(
                bench_job_for(
                    f"ref-{gemm.id}",
                    bench_spec(config, gemm.problem, options, library_dir=reference_dir),
                    cost,
                    device_group=gemm.id,
                )
            )
            tuned_spec = bench_spec(
                config, gemm.problem, options, library_dir=library, library_hash=build["library_hash"]
            )
            jobs.append(bench_job_for(f"tuned-{gemm.id}", tuned_spec, cost, device_group=gemm.id))
            subjects[f"ref-{gemm.id}"] = f"{gemm.label} reference library"
            subjects[f"tuned-{gemm.id}"] = f"{gemm.label} tuned library"
        outcomes = {
            job.id: outcome
            for job, outcome in zip(jobs, context.run_jobs(jobs, phase="benchmark", subjects=subjects), strict=True)
        }

        def first(job_id: str) -> dict[str, Any] | None:
            outcome = outcomes[job_id]
            return outcome.value["results"][0] if outcome.ok and outcome.value["results"] else None

        records: dict[str, dict[str, Any]] = {}
        for gemm in gemms:
            reference, tuned = first(f"ref-{gemm.id}"), first(f"tuned-{gemm.id}")
            records[gemm.id] = {"reference": reference, "tuned": tuned, **compare(reference, tuned)}
        context.write_json(
            context.path(BENCHMARK_FILE),
            {"gemms": records, "library_dir": build["library_dir"], "data": config.data_label},
        )
        rows = [results_row(config.data_label, gemm.id, gemm.problem, records[gemm.id]) for gemm in gemms]
        context.write_csv(context.path(RAW_RESULTS), RESULTS_HEADER, rows)
        results = context.own_dir(Path(context.run_root) / "results")
        context.write_csv(results / RAW_RESULTS, RESULTS_HEADER, rows)
        judged = sum(1 for record in records.values() if record["status"] == "ok")
        return StageResult(summary=f"{judged}/{len(gemms)} GEMM(s) compared, reference vs tuned library")


def results_row(label: str, gemm_id: str, problem: Any, record: dict[str, Any], status: str | None = None) -> list[Any]:
    """One row of ``raw_results.csv`` / ``final_results.csv``."""
    reference = record["reference"] or {}
    tuned = record["tuned"] or {}
    return [
        label, gemm_id, *problem_columns(problem), problem.call_count,
        reference.get("us"), reference.get("gflops"), reference.get("solution_name"), reference.get("norm_error"),
        tuned.get("us"), tuned.get("gflops"), tuned.get("solution_name"), tuned.get("norm_error"),
        record["uplift"], record["error_ratio"], status or record["status"],
    ]  # fmt: skip


__all__ = ["BENCHMARK_FILE", "RAW_RESULTS", "RESULTS_HEADER", "BenchmarkStage", "compare", "results_row"]

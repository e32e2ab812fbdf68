"""Stage ``benchmark``: every tuned GEMM timed with the reference library and the tuned one.

Both runs use hipblaslt-bench's heuristic with ``--verify``, as the application would call
hipBLASLt; the only difference is ``HIPBLASLT_TENSILE_LIBPATH`` (the reference library, or the
``build`` stage's library directory for the tuned one). The two runs of a GEMM are one job
(:func:`~tensilekit.pipeline.stages.common.bench_pair_job`): one GPU, back to back, cached as a
pair, so a resumed run never compares a cached reference time from one GPU with a tuned time
from another. A failed job is a result (the GEMM cannot be judged) and the stage goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.jobs import JobKind, make_job
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
    BenchPairSpec,
    TuneStage,
    bench_pair_job,
    bench_spec,
    error_ratio,
    load_gemms,
    problem_columns,
    read_json,
    timed_options,
)
from tensilekit.pipeline.stages.library import reference_library_dir
from tensilekit.tools.costs import estimate_time_us

BENCHMARK_FILE = "benchmark.json"
RAW_RESULTS = "raw_results.csv"
RESULTS_HEADER = [
    "data", "id", *PROBLEM_HEADER, "call_count", "reference_us", "reference_gflops", "reference_solution",
    "reference_norm_error", "tuned_us", "tuned_gflops", "tuned_solution", "tuned_norm_error", "uplift",
    "error_ratio", "status",
]  # fmt: skip


def compare_job_id(gemm_id: str) -> str:
    """The id of a GEMM's reference-and-tuned job (``compare-g0001``)."""
    return f"compare-{gemm_id}"


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
    version = "3"  # 3: reference and tuned runs are one job (compare-<id>)
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
            # reference and tuned library in one job: one GPU, back to back, cached and retried as a pair
            options = timed_options(config, (baseline[gemm.id]["measured"] or {}).get("us"), requested_solution=1)
            cost = estimate_time_us(gemm.problem, config.arch) * iterations * 2
            pair = BenchPairSpec(
                reference=bench_spec(config, gemm.problem, options, library_dir=reference_dir),
                tuned=bench_spec(
                    config, gemm.problem, options, library_dir=library, library_hash=build["library_hash"]
                ),
            )
            jobs.append(make_job(compare_job_id(gemm.id), bench_pair_job, pair, kind=JobKind.GPU, cost=cost))
            subjects[compare_job_id(gemm.id)] = f"{gemm.label} reference and tuned library"
        outcomes = context.run_jobs(jobs, phase="benchmark", subjects=subjects)

        def first(value: dict[str, Any], side: str) -> dict[str, Any] | None:
            results = value[side]["results"]
            return results[0] if results else None

        records: dict[str, dict[str, Any]] = {}
        for gemm, outcome in zip(gemms, outcomes, strict=True):
            reference, tuned = (
                (first(outcome.value, "reference"), first(outcome.value, "tuned")) if outcome.ok else (None, None)
            )
            records[gemm.id] = {
                "reference": reference,
                "tuned": tuned,
                "device": outcome.device,
                **compare(reference, tuned),
            }
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


__all__ = [
    "BENCHMARK_FILE", "RAW_RESULTS", "RESULTS_HEADER", "BenchmarkStage", "compare", "compare_job_id", "results_row",
]  # fmt: skip

"""Stage ``search``: dense search over the solutions that already exist, per GEMM, in two phases.

1. **Screen**: one ``hipblaslt-bench --algo_method all`` run per GEMM times every solution the
   library offers for it, with few iterations (fast, noisy) but cache-cold like the accurate runs
   (their rotating buffer and ``--flush``), so the ranking that picks the top k is the one
   the accurate runs would give.
2. **Accurate**: the ``--top-k`` fastest screened solutions that the library logic contains are
   re-timed one by one (``--algo_method index``), with many iterations and ``--verify``. A
   candidate whose error exceeds ``--verify-ratio`` times the reference library's error for the
   same GEMM fails verification (both errors are recorded). The fastest verified candidate is the
   GEMM's winner.

Every candidate ends as a result -- timed, failed verification, not in the library logic, or
its job failed -- and the stage fails only if no GEMM could be screened at all.
(The genetic search over new kernels is a separate mode, not this stage.)
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable
from typing import Any

from tensilekit.errors import StageFailed
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.baseline import BASELINE_FILE
from tensilekit.pipeline.stages.common import (
    BASELINE,
    INGEST,
    LIBRARY,
    PROBLEM_HEADER,
    SEARCH,
    GemmEntry,
    TuneStage,
    bench_job_for,
    bench_spec,
    error_gate_failure,
    error_ratio,
    load_gemms,
    problem_columns,
    read_json,
    screen_options,
    timed_options,
)
from tensilekit.pipeline.stages.library import CATALOG_FILE, reference_library_dir
from tensilekit.tools.costs import estimate_time_us
from tensilekit.tools.hipblaslt_bench import AlgoMethod
from tensilekit.tools.library_index import Resolution, resolve
from tensilekit.tools.problem_types import problem_type_key, type_key_text

SEARCH_FILE = "search.json"


def rank_candidates(
    results: list[dict[str, Any]], identify: Callable[[str | None, int | None], Resolution], top_k: int
) -> tuple[list[dict[str, Any]], int]:
    """The screened solutions sorted fastest first (ties: lower index), the top ``top_k`` of
    those whose logic-file solution ``identify`` finds marked ``selected``; also returns how many
    it could not place (pure). Each candidate carries ``location`` (``[source, position]`` in the
    catalog) or ``not_in_library`` (why not).
    """
    seen: set[int] = set()
    ranked: list[dict[str, Any]] = []
    for result in sorted(
        results, key=lambda item: (item["us"] if item["us"] is not None else float("inf"), item["solution_index"] or 0)
    ):
        index = result["solution_index"]
        if index is None or index in seen or result["us"] is None:
            continue
        seen.add(index)
        found = identify(result["solution_name"], index)
        ranked.append(
            dict(
                result, in_library=found.location is not None, location=found.location,
                not_in_library=found.reason, selected=False,
            )
        )  # fmt: skip
    selected = 0
    for candidate in ranked:
        if candidate["in_library"] and selected < top_k:
            candidate["selected"] = True
            selected += 1
    return ranked, sum(1 for candidate in ranked if not candidate["in_library"])


class SearchStage(TuneStage):
    """Screen then accurate top-k with verification; ``search.json`` holds the winners."""

    name = SEARCH
    version = "5"  # 5: cache-cold screen (rotating buffer, flush), both errors beside a failed gate; 4: references timed beside their candidates
    inputs = (INGEST, LIBRARY, BASELINE)
    outputs = (SEARCH_FILE, "screen.csv", "accurate.csv", "winners.csv")

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return existing_search_slice(config)

    def tools(self, config: TuneConfig) -> list[str]:
        return self.bench_tools(config)

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        baseline = read_json(context.upstream_path(BASELINE, BASELINE_FILE))
        catalog = read_json(context.upstream_path(LIBRARY, CATALOG_FILE))
        gemms = [gemm for gemm in load_gemms(context) if gemm.id in set(baseline["kept"])]
        found = search_existing(context, config, gemms, baseline, catalog, require_screen=True)
        context.write_json(context.path(SEARCH_FILE), {"gemms": found.results, "data": config.data_label})
        _write_winners(context, config, gemms, baseline, found.results)
        winners = sum(1 for result in found.results.values() if result["winner"] is not None)
        return StageResult(
            summary=f"winners for {winners}/{len(gemms)} GEMM(s) from {found.accurate_runs} accurate run(s)"
        )


def existing_search_slice(config: TuneConfig) -> dict[str, Any]:
    """The options :func:`search_existing`'s results depend on."""
    return {
        **config.measurement_slice(),
        "top_k": config.top_k,
        "screen_iters": config.screen_iters,
        "screen_cold_iters": config.screen_cold_iters,
        "verify_ratio": config.verify_ratio,
    }


@dataclasses.dataclass(frozen=True)
class ExistingSearch:
    """What :func:`search_existing` found: per GEMM its winner among the existing solutions (or why
    none), its verified candidates and the screen rows that were no measurement."""

    results: dict[str, dict[str, Any]]
    accurate_runs: int


def search_existing(
    context: StageContext,
    config: TuneConfig,
    gemms: list[GemmEntry],
    baseline: dict[str, Any],
    catalog: dict[str, Any],
    *,
    require_screen: bool,
) -> ExistingSearch:
    """Screen then accurate top-k with verification over the solutions the reference library has
    (the module docstring); writes ``screen.csv`` and ``accurate.csv`` into the stage's folder.

    Raises:
        StageFailed: ``require_screen`` and no GEMM could be screened.
    """
    estimates = {gemm.id: estimate_time_us(gemm.problem, config.arch) for gemm in gemms}
    library_size = max(1, max((len(names) for names in catalog["solutions"].values()), default=1))

    reference = reference_library_dir(context)
    options = screen_options(config)
    screen_iterations = config.screen_iters + config.screen_cold_iters
    screen_jobs = [
        bench_job_for(
            f"screen-{gemm.id}", bench_spec(config, gemm.problem, options, library_dir=reference),
            estimates[gemm.id] * screen_iterations * library_size,
        )
        for gemm in gemms
    ]  # fmt: skip
    screened = context.run_jobs(
        screen_jobs, phase="screen", subjects={f"screen-{gemm.id}": gemm.label for gemm in gemms}
    )
    if require_screen and gemms and not any(outcome.ok for outcome in screened):
        raise StageFailed("every screening benchmark failed; see failures.json")

    rankings: dict[str, list[dict[str, Any]]] = {}
    absent: dict[str, int] = {}
    accurate_jobs = []
    subjects: dict[str, str] = {}
    accurate_iterations = config.accurate_iters + config.accurate_cold_iters
    for gemm, outcome in zip(gemms, screened, strict=True):
        if not outcome.ok:
            continue
        type_text = type_key_text(problem_type_key(gemm.problem))
        ranked, missing = rank_candidates(
            outcome.value["results"], functools.partial(resolve, catalog, type_text), config.top_k
        )
        rankings[gemm.id], absent[gemm.id] = ranked, missing
        selected = [candidate for candidate in ranked if candidate["selected"]]
        if not selected:
            continue
        # The reference is timed again beside its candidates, on their GPU and with their settings:
        # a candidate must beat the heuristic's pick as measured there, not on another device.
        latency = (baseline["gemms"][gemm.id]["measured"] or {}).get("us")
        cost = estimates[gemm.id] * accurate_iterations
        reference_id = f"acc-{gemm.id}-reference"
        accurate_jobs.append(
            bench_job_for(
                reference_id,
                bench_spec(
                    config, gemm.problem, timed_options(config, latency, requested_solution=1), library_dir=reference
                ),
                cost, device_group=gemm.id,
            )
        )  # fmt: skip
        subjects[reference_id] = f"{gemm.label} reference (heuristic)"
        for candidate in selected:
            index = candidate["solution_index"]
            job_id = f"acc-{gemm.id}-{index}"
            options = timed_options(config, latency, algo_method=AlgoMethod.INDEX, solution_index=index)
            accurate_jobs.append(
                bench_job_for(
                    job_id,
                    bench_spec(config, gemm.problem, options, library_dir=reference),
                    cost,
                    device_group=gemm.id,
                )
            )
            subjects[job_id] = f"{gemm.label} solution {index}"
    accurate = {
        job.id: outcome
        for job, outcome in zip(
            accurate_jobs, context.run_jobs(accurate_jobs, phase="accurate", subjects=subjects), strict=True
        )
    }

    results = {gemm.id: _decide(config, gemm, baseline, rankings, absent, accurate) for gemm in gemms}
    for gemm, outcome in zip(gemms, screened, strict=True):  # screen rows that were no measurement
        results[gemm.id]["invalid"] = outcome.value.get("invalid", []) if outcome.ok else []
    _write_tables(context, config, gemms, rankings, results)
    return ExistingSearch(results=results, accurate_runs=len(accurate_jobs))


def _decide(
    config: TuneConfig,
    gemm: GemmEntry,
    baseline: dict[str, Any],
    rankings: dict[str, list[dict[str, Any]]],
    absent: dict[str, int],
    accurate: dict[str, Any],
) -> dict[str, Any]:
    reference = baseline["gemms"][gemm.id]["measured"]
    if gemm.id not in rankings:
        return {"winner": None, "status": "screen failed", "candidates": []}
    session = accurate.get(f"acc-{gemm.id}-reference")
    if session is not None and session.ok and session.value["results"]:
        reference = session.value["results"][0]  # timed beside the candidates, on their GPU
    candidates: list[dict[str, Any]] = []
    for candidate in rankings[gemm.id]:
        if not candidate["selected"]:
            continue
        index = candidate["solution_index"]
        outcome = accurate[f"acc-{gemm.id}-{index}"]
        entry: dict[str, Any] = {
            "solution_index": index, "solution_name": candidate["solution_name"], "screen_us": candidate["us"],
            "location": candidate["location"],
        }  # fmt: skip
        if not outcome.ok or not outcome.value["results"]:
            entry.update(status="job failed", error=outcome.error)
        else:
            timed = outcome.value["results"][0]
            ratio = error_ratio(timed["norm_error"], reference["norm_error"])
            entry.update(
                us=timed["us"], gflops=timed["gflops"], norm_error=timed["norm_error"], error_ratio=ratio,
                reference_norm_error=reference["norm_error"],
            )  # fmt: skip
            gate = error_gate_failure(timed["norm_error"], reference["norm_error"], config.verify_ratio)
            if timed["solution_index"] != index or timed["solution_name"] != candidate["solution_name"]:
                entry["status"] = f"ran another solution ({timed['solution_index']}: {timed['solution_name']})"
            elif timed.get("verify_failed"):
                entry["status"] = "failed verification"
            elif ratio is None:
                entry["status"] = "no error reported (cannot verify)"
            elif gate is not None:
                entry["status"] = f"failed verification: {gate}"
            else:
                entry["status"] = "ok"
        candidates.append(entry)
    verified = [entry for entry in candidates if entry["status"] == "ok"]
    if not verified:
        if candidates:
            status = "no verified candidate"
        elif absent.get(gemm.id):
            reasons = sorted({str(item["not_in_library"]) for item in rankings[gemm.id] if not item["in_library"]})
            status = (
                f"no candidate: none of the {absent[gemm.id]} timed solution(s) is identified in --library-logic "
                f"({'; '.join(reasons[:2])})"
            )
        else:
            status = "no candidate: the screen timed no solution"
        return {"winner": None, "status": status, "candidates": candidates}
    winner = min(verified, key=lambda entry: (entry["us"], entry["solution_index"]))
    return {"winner": winner, "status": "winner", "candidates": candidates, "baseline_us": reference["us"],
            "reference": reference}  # fmt: skip


def _write_tables(
    context: StageContext,
    config: TuneConfig,
    gemms: list[GemmEntry],
    rankings: dict[str, list[dict[str, Any]]],
    results: dict[str, dict[str, Any]],
) -> None:
    """``screen.csv`` (every screened row) and ``accurate.csv`` (every re-timed candidate)."""
    label = config.data_label
    screened_rows = (
        [label, gemm.id, *problem_columns(gemm.problem), rank, item["solution_index"], item["solution_name"],
         item["us"], item["gflops"], item["in_library"], item["selected"], item.get("not_in_library"), "ok"]
        for gemm in gemms
        for rank, item in enumerate(rankings.get(gemm.id, []), start=1)
    )  # fmt: skip
    invalid_rows = (  # rows of the screen that were no measurement: recorded, never ranked
        [label, gemm.id, *problem_columns(gemm.problem), None, item["solution_index"], item["solution_name"],
         None, None, None, False, None, f"invalid: {item['reason']}"]
        for gemm in gemms
        for item in results[gemm.id]["invalid"]
    )  # fmt: skip
    context.write_csv(
        context.path("screen.csv"),
        ["data", "id", *PROBLEM_HEADER, "rank", "solution_index", "solution_name", "us", "gflops", "in_library",
         "selected", "not_in_library", "status"],
        itertools.chain(screened_rows, invalid_rows),
    )  # fmt: skip
    context.write_csv(
        context.path("accurate.csv"),
        ["data", "id", *PROBLEM_HEADER, "solution_index", "solution_name", "screen_us", "us", "gflops",
         "norm_error", "reference_norm_error", "error_ratio", "status"],
        (
            [label, gemm.id, *problem_columns(gemm.problem), entry["solution_index"], entry["solution_name"],
             entry["screen_us"], entry.get("us"), entry.get("gflops"), entry.get("norm_error"),
             entry.get("reference_norm_error"), entry.get("error_ratio"), entry["status"]]
            for gemm in gemms
            for entry in results[gemm.id]["candidates"]
        ),
    )  # fmt: skip


def _write_winners(
    context: StageContext,
    config: TuneConfig,
    gemms: list[GemmEntry],
    baseline: dict[str, Any],
    results: dict[str, dict[str, Any]],
) -> None:
    """``winners.csv``: each GEMM's winner and its expected uplift over the baseline."""
    label = config.data_label

    def winner_row(gemm: GemmEntry) -> list[Any]:
        result = results[gemm.id]
        winner = result["winner"] or {}
        reference = baseline["gemms"][gemm.id]["measured"]["us"]
        uplift = reference / winner["us"] - 1.0 if winner else None
        return [label, gemm.id, *problem_columns(gemm.problem), gemm.problem.call_count,
                winner.get("solution_index"), winner.get("solution_name"), winner.get("us"),
                winner.get("gflops"), reference, uplift, result["status"]]  # fmt: skip

    context.write_csv(
        context.path("winners.csv"),
        ["data", "id", *PROBLEM_HEADER, "call_count", "solution_index", "solution_name", "us", "gflops",
         "baseline_us", "expected_uplift", "status"],
        (winner_row(gemm) for gemm in gemms),
    )  # fmt: skip


__all__ = [
    "SEARCH_FILE", "ExistingSearch", "SearchStage", "existing_search_slice", "rank_candidates", "search_existing",
]  # fmt: skip

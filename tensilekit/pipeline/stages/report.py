"""Stage ``report``: per-GEMM results, averages, expected effect and failures, as MD/CSV/JSON/PNG.

Reads every earlier stage's outputs and ``failures.json``; writes ``report.md``, ``report.csv``,
``report.json`` and (with matplotlib) ``uplift.png`` to the top of the work directory, and GEKO's
``results/metrics.json`` (:mod:`tensilekit.pipeline.metrics`).
"""

from __future__ import annotations

import json
from typing import Any

from tensilekit.errors import install_extra_hint
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.engine import FAILURES_NAME
from tensilekit.pipeline.metrics import MetricsRow, summarize_metrics
from tensilekit.pipeline.report import (
    CSV_HEADER,
    GemmReport,
    StageSummary,
    TuneReport,
    csv_rows,
    plot_available,
    plot_uplift,
    render_markdown,
    summarize,
)
from tensilekit.pipeline.stage import JobFailure, StageContext, StageResult, relative_to_root
from tensilekit.pipeline.stages.baseline import BASELINE_FILE
from tensilekit.pipeline.stages.benchmark import BENCHMARK_FILE
from tensilekit.pipeline.stages.common import (
    BASELINE,
    BENCHMARK,
    BUILD,
    FINAL,
    INGEST,
    LIBRARY,
    MERGE,
    POSTPROCESS,
    REPORT,
    SEARCH,
    GemmEntry,
    TuneStage,
    load_gemms,
    measurement_settings,
    read_json,
)
from tensilekit.pipeline.stages.final import FINAL_DIR, FULL_DIR
from tensilekit.pipeline.stages.library import CATALOG_FILE
from tensilekit.pipeline.stages.merge import MERGED_DIR
from tensilekit.pipeline.stages.postprocess import POSTPROCESS_FILE
from tensilekit.pipeline.stages.search import SEARCH_FILE
from tensilekit.pipeline.state import MARKER_NAME

REPORT_FILES = ("report.md", "report.csv", "report.json")
PLOT_FILE = "uplift.png"
METRICS_FILE = "results/metrics.json"
"""GEKO's run-level statistics (:mod:`tensilekit.pipeline.metrics`), where GEKO writes them."""
_STAGES = (INGEST, LIBRARY, BASELINE, SEARCH, BUILD, BENCHMARK, POSTPROCESS, FINAL, MERGE)


def gemm_status(gemm_id: str, baseline: dict[str, Any], search: dict[str, Any], decisions: dict[str, str]) -> str:
    """The report's status of one GEMM, from the first stage that stopped it (pure)."""
    record = baseline["gemms"][gemm_id]
    if record.get("unsupported"):
        return f"not expressible: {record['unsupported']}"
    if record["measured"] is None:
        return "baseline failed"
    if not record["kept"]:
        return "not tuned (below --keep-thr)"
    found = search.get(gemm_id)
    if found is None or found["winner"] is None:
        return f"no winner: {found['status'] if found else 'not searched'}"
    decision = decisions.get(gemm_id)
    if decision is None:
        return "not built"
    return "tuned" if decision == "kept" else decision


def metrics_row(gemm: GemmEntry, record: dict[str, Any], compared: dict[str, Any], decision: str | None) -> MetricsRow:
    """One GEMM's :class:`~tensilekit.pipeline.metrics.MetricsRow` from the stages' records (pure)."""
    reference = compared.get("reference") or {}
    tuned = compared.get("tuned") or {}
    problem = gemm.problem
    invalid = (decision or "").startswith(("dropped: error ratio", "dropped: tuned kernel failed", "dropped: no error"))
    return MetricsRow(
        a_type=problem.a_type, trans_a=problem.trans_a, trans_b=problem.trans_b, call_count=problem.call_count,
        reference_us=reference.get("us"), tuned_us=tuned.get("us"), time_share=record["measured_share"],
        valid=not invalid and compared.get("status") == "ok", kept=decision == "kept",
        kernel_reference=reference.get("kernel_name") or reference.get("solution_name"),
        kernel_tuned=tuned.get("kernel_name") or tuned.get("solution_name"),
    )  # fmt: skip


def gemm_report(
    gemm: GemmEntry, baseline: dict[str, Any], search: dict[str, Any], bench: dict[str, Any], decisions: dict[str, str]
) -> GemmReport:
    record = baseline["gemms"][gemm.id]
    compared = bench.get(gemm.id) or {}
    winner = (search.get(gemm.id) or {}).get("winner") or {}
    problem = gemm.problem
    return GemmReport(
        id=gemm.id, gemm_type=problem.gemm_type, m=problem.m, n=problem.n, batch=problem.batch, k=problem.k,
        call_count=problem.call_count, time_share=record["measured_share"],
        baseline_us=(record["measured"] or {}).get("us"),
        reference_us=(compared.get("reference") or {}).get("us"), tuned_us=(compared.get("tuned") or {}).get("us"),
        uplift=compared.get("uplift"), error_ratio=compared.get("error_ratio"),
        reference_norm_error=(compared.get("reference") or {}).get("norm_error"),
        tuned_norm_error=(compared.get("tuned") or {}).get("norm_error"), winner=winner.get("solution_name"),
        status=gemm_status(gemm.id, baseline, search, decisions),
    )  # fmt: skip


class ReportStage(TuneStage):
    """Everything together: ``report.{md,csv,json}`` (+ ``uplift.png``) in the work directory."""

    name = REPORT
    version = "4"  # 3: the reference library named; 4: the workload's GEMM time before and after leads
    inputs = _STAGES

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {
            "arch": config.arch, "data": config.data_label, "plot": plot_available(), "up_thr": config.up_thr,
            "err_thr": config.err_thr, "measurement": measurement_settings(config),
        }  # fmt: skip

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        gemms = load_gemms(context)
        baseline = read_json(context.upstream_path(BASELINE, BASELINE_FILE))
        search_doc = read_json(context.upstream_path(SEARCH, SEARCH_FILE))
        search = search_doc["gemms"]
        bench = read_json(context.upstream_path(BENCHMARK, BENCHMARK_FILE))["gemms"]
        decisions = read_json(context.upstream_path(POSTPROCESS, POSTPROCESS_FILE))["decisions"]
        rows = tuple(gemm_report(gemm, baseline, search, bench, decisions) for gemm in gemms)
        metrics = summarize_metrics(
            [metrics_row(gemm, baseline["gemms"][gemm.id], bench.get(gemm.id) or {}, decisions.get(gemm.id))
             for gemm in gemms],
            up_thr=config.up_thr, err_thr=config.err_thr, data=config.data_label,
        )  # fmt: skip
        context.write_json(context.run_root / METRICS_FILE, metrics)
        failures: list[JobFailure] = []
        stages: list[StageSummary] = []
        failure_files: list[str] = []
        for stage in _STAGES:
            directory = context.upstream[stage]
            failed = [JobFailure.model_validate(item) for item in read_json(directory / FAILURES_NAME)]
            if failed:
                failure_files.append(relative_to_root(directory / FAILURES_NAME, context.run_root))
            failures += failed
            marker = json.loads((directory / MARKER_NAME).read_text(encoding="utf-8"))
            stages.append(
                StageSummary(
                    number=marker["number"],
                    name=stage,
                    summary=marker["summary"],
                    jobs=marker["jobs_total"],
                    failed=marker["jobs_failed"],
                )  # fmt: skip
            )
        outputs = {
            "final logic files": f"{FINAL_DIR}/",
            "full logic files (tuned or reference, every benchmarked GEMM)": f"{FULL_DIR}/",
            "merged logic files": f"{MERGED_DIR}/",
            "per-GEMM summary": "gemms.csv",
            "per-type summary": "summary.csv",
            "results": f"results/raw_results.csv, results/final_results.csv, {METRICS_FILE}",
        }
        if failure_files:  # the files the Failures table comes from (each exists: it was just read)
            outputs["failed jobs"] = ", ".join(failure_files)
        notes: list[str] = []
        mode = search_doc.get("mode")
        if mode in ("ga", "grid"):
            folder = relative_to_root(context.upstream[SEARCH], context.run_root)
            notes.append(f"kernel search ({mode}): {search_doc.get('summary', '')}")
            outputs["kernel search"] = f"{folder}/generations.csv, {folder}/winners.csv, {folder}/configs/"
        if config.simulate:
            notes.append(f"{config.data_label}: produced by tensilekit's GPU simulator; do not ship these files.")
        catalog = read_json(context.upstream_path(LIBRARY, CATALOG_FILE))
        reference = catalog.get("reference_library") if isinstance(catalog.get("reference_library"), dict) else {}
        if reference and catalog.get("custom_kernels"):
            reference = {**reference, "custom_kernels": catalog["custom_kernels"]}
        report = TuneReport(
            data=config.data_label, arch=config.arch, gemms=rows, failures=tuple(failures), stages=tuple(stages),
            outputs=outputs, notes=tuple(notes), measurement=measurement_settings(config),
            reference_library=reference or {}, **summarize(rows),
        )  # fmt: skip
        png = plot_uplift(report) if report.tuned else None
        if png is not None:
            report = report.model_copy(update={"outputs": {**outputs, "uplift chart": PLOT_FILE}})
            context.write_bytes(context.run_root / PLOT_FILE, png)
        else:
            reason = "no GEMM was tuned" if not report.tuned else f"it needs matplotlib: {install_extra_hint('plot')}"
            report = report.model_copy(update={"notes": report.notes + (f"no {PLOT_FILE}: {reason}",)})
            (context.run_root / PLOT_FILE).unlink(missing_ok=True)
        context.write_text(context.run_root / "report.md", render_markdown(report))
        context.write_csv(context.run_root / "report.csv", CSV_HEADER, csv_rows(report))
        context.write_json(context.run_root / "report.json", report.model_dump(mode="json"))
        time = report.workload_time
        change = "-" if time is None or time.ratio is None else f"{time.ratio:.2f}x"
        before_after = "-" if time is None else f"{time.before_us:,.1f} -> {time.after_us:,.1f} us"
        return StageResult(
            summary=f"{len(report.tuned)} GEMM(s) tuned, workload GEMM time {before_after} ({change}), "
            f"{len(failures)} failure(s)"
        )


__all__ = ["METRICS_FILE", "PLOT_FILE", "REPORT_FILES", "ReportStage", "gemm_status", "metrics_row"]

"""Stage ``postprocess``: keep only tuned kernels that are accurate enough and actually faster.

A GEMM's tuned entry is dropped when its benchmark failed, when its error exceeds ``--err-thr``
times the reference library's error, or when its uplift is below ``--up-thr``. The decision is
pure (:func:`judge`); the stage writes ``final_results.csv`` (also to ``<workdir>/results/``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.benchmark import BENCHMARK_FILE, RESULTS_HEADER, results_row
from tensilekit.pipeline.stages.common import (
    BENCHMARK,
    INGEST,
    POSTPROCESS,
    TuneStage,
    error_gate_failure,
    load_gemms,
    read_json,
)

POSTPROCESS_FILE = "postprocess.json"
FINAL_RESULTS = "final_results.csv"


def judge(record: dict[str, Any], err_thr: float, up_thr: float) -> tuple[bool, str]:
    """Whether to keep one GEMM's tuned kernel, and why (pure)."""
    if record["status"] == "tuned kernel failed verification":
        return False, "dropped: tuned kernel failed verification"
    if record["status"] != "ok" or record["uplift"] is None:
        return False, "dropped: benchmark failed"
    if record["error_ratio"] is None:
        return False, "dropped: no error reported"
    tuned, reference = (record.get(side) or {} for side in ("tuned", "reference"))
    gate = error_gate_failure(tuned.get("norm_error"), reference.get("norm_error"), err_thr)
    if gate is not None:  # both errors beside the drop: each may pass --verify, the gate is relative
        return False, f"dropped: {gate}"
    if record["uplift"] < up_thr:
        return False, f"dropped: uplift {record['uplift']:.2%} < {up_thr:.2%}"
    return True, "kept"


class PostprocessStage(TuneStage):
    """Filter by ``--err-thr`` and ``--up-thr`` (``postprocess.json``, ``final_results.csv``)."""

    name = POSTPROCESS
    version = "2"  # 2: both errors beside an error-ratio drop
    inputs = (INGEST, BENCHMARK)
    outputs = (POSTPROCESS_FILE, FINAL_RESULTS)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {"err_thr": config.err_thr, "up_thr": config.up_thr}

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        records = read_json(context.upstream_path(BENCHMARK, BENCHMARK_FILE))["gemms"]
        gemms = [gemm for gemm in load_gemms(context) if gemm.id in records]
        decisions = {gemm.id: judge(records[gemm.id], config.err_thr, config.up_thr) for gemm in gemms}
        kept = [gemm.id for gemm in gemms if decisions[gemm.id][0]]
        context.write_json(
            context.path(POSTPROCESS_FILE),
            {
                "kept": kept,
                "decisions": {key: reason for key, (_, reason) in decisions.items()},
                "data": config.data_label,
            },
        )
        rows = [
            results_row(config.data_label, gemm.id, gemm.problem, records[gemm.id], decisions[gemm.id][1])
            for gemm in gemms
        ]
        context.write_csv(context.path(FINAL_RESULTS), RESULTS_HEADER, rows)
        context.write_csv(context.own_dir(Path(context.run_root) / "results") / FINAL_RESULTS, RESULTS_HEADER, rows)
        return StageResult(summary=f"kept {len(kept)} of {len(gemms)} tuned GEMM(s)")


__all__ = ["FINAL_RESULTS", "POSTPROCESS_FILE", "PostprocessStage", "judge"]

"""GEKO's metrics.json statistics (geko/optim/_metrics.py summarize @9915500485e1), computed by hand."""

from __future__ import annotations

import math

import pytest

from tensilekit.pipeline.metrics import (
    MetricsRow,
    geomean_uplift_pct,
    improvement_ranges,
    percentiles,
    regression_ranges,
    summarize_metrics,
)


def row(reference: float, tuned: float, **changes: object) -> MetricsRow:
    values: dict[str, object] = {"a_type": "bf16_r", "trans_a": "T", "trans_b": "N", "call_count": 10,
                                 "reference_us": reference, "tuned_us": tuned}  # fmt: skip
    values.update(changes)
    return MetricsRow(**values)  # type: ignore[arg-type]


def test_percentiles_interpolate_like_numpy() -> None:
    # numpy.percentile([1, 2, 3, 4], [25, 50, 75, 90, 99]) == [1.75, 2.5, 3.25, 3.7, 3.97]
    assert percentiles([4.0, 1.0, 3.0, 2.0]) == pytest.approx(
        {"p25": 1.75, "p50": 2.5, "p75": 3.25, "p90": 3.7, "p99": 3.97}
    )
    assert percentiles([]) == {"p25": None, "p50": None, "p75": None, "p90": None, "p99": None}


def test_geomean_is_of_the_ratios() -> None:
    assert geomean_uplift_pct([2.0, 0.5]) == pytest.approx(0.0)
    assert geomean_uplift_pct([1.21, 1.0]) == pytest.approx(10.0)
    assert geomean_uplift_pct([]) is None


def test_buckets_are_geko_s_disjoint_ranges() -> None:
    assert improvement_ranges([0.5, 1.0, 2.9, 3.0, 12.0, 100.0, -1.0, 0.0]) == {
        "lt_1_pct": 1, "1_to_3_pct": 2, "3_to_5_pct": 1, "5_to_10_pct": 0, "10_to_25_pct": 1, "25_to_50_pct": 0,
        "50_to_100_pct": 0, "ge_100_pct": 1,
    }  # fmt: skip
    assert regression_ranges([-0.5, -1.0, -3.0, -4.0, -10.0, 5.0]) == {
        "lt_1_pct": 1, "1_to_3_pct": 1, "3_to_5_pct": 2, "5_to_10_pct": 0, "ge_10_pct": 1,
    }  # fmt: skip


def test_summary_counts_stats_e2e_and_per_layout() -> None:
    rows = [
        row(120.0, 100.0, time_share=0.5, kept=True, kernel_reference="r", kernel_tuned="t1"),  # +20 %
        row(105.0, 100.0, time_share=0.2, kept=True, kernel_reference="r", kernel_tuned="t1", trans_b="T"),  # +5 %
        row(100.0, 125.0, time_share=0.2, kernel_reference="r", kernel_tuned="t2"),  # -20 %, not kept
        row(200.0, 100.0, time_share=0.1, valid=False, kernel_reference="r", kernel_tuned="t3"),  # wrong results
        row(50.0, None),  # never benchmarked with the tuned library
    ]
    metrics = summarize_metrics(rows, up_thr=0.01, err_thr=2.0, data="SIMULATED")
    assert metrics["data"] == "SIMULATED"
    assert metrics["config"] == {"up_thr": pytest.approx(1.01), "error_thr": 2.0, "verify": True}
    counts = metrics["counts"]
    assert (counts["n_attempted"], counts["n_valid"], counts["n_invalid"], counts["n_kept"]) == (4, 3, 1, 2)
    assert (counts["n_improved"], counts["n_regressed"], counts["n_neutral"]) == (2, 1, 0)
    assert counts["improved_cumulative"]["ge_5_pct"] == 2 and counts["improved_cumulative"]["ge_10_pct"] == 1
    assert counts["regressed_cumulative"] == {"ge_1_pct": 1, "ge_3_pct": 1, "ge_5_pct": 1, "ge_10_pct": 1}
    assert counts["improved_in_ranges"]["5_to_10_pct"] == 1 and counts["improved_in_ranges"]["10_to_25_pct"] == 1
    assert counts["regressed_in_ranges"]["ge_10_pct"] == 1
    attempted = metrics["uplift_all_attempted"]
    assert attempted["mean_uplift_pct"] == pytest.approx((20.0 + 5.0 - 20.0) / 3)
    assert attempted["median_uplift_pct"] == pytest.approx(5.0)
    assert attempted["geomean_uplift_pct"] == pytest.approx(100 * ((1.2 * 1.05 * 0.8) ** (1 / 3) - 1))
    assert (attempted["min_uplift_pct"], attempted["max_uplift_pct"]) == pytest.approx((-20.0, 20.0))
    kept = metrics["uplift_kept"]
    assert kept["mean_uplift_pct"] == pytest.approx(12.5) and "min_uplift_pct" not in kept
    e2e = metrics["e2e"]
    assert e2e["e2e_uplift_pct"] == pytest.approx(100 * (0.5 * (1 - 1 / 1.2) + 0.2 * (1 - 1 / 1.05)))
    assert e2e["coverage_pct"] == pytest.approx(70.0)
    assert e2e["e2e_us_saved_per_iter"] == pytest.approx(10 * 20.0 + 10 * 5.0)
    assert e2e["top10pct_contribution_share"] == pytest.approx(
        0.5 * (1 - 1 / 1.2) / (0.5 * (1 - 1 / 1.2) + 0.2 * (1 - 1 / 1.05))
    )
    assert metrics["diversity"] == {"n_unique_winning_kernels": 1, "unique_winners_per_gemm": 0.5,
                                    "pct_kernel_changed_in_attempted": 100.0}  # fmt: skip
    layouts = metrics["per_dtype_layout"]
    assert sorted(layouts) == ["bf16_r_TN", "bf16_r_TT"]
    assert layouts["bf16_r_TN"]["n"] == 1 and layouts["bf16_r_TN"]["max_uplift_pct"] == pytest.approx(20.0)


def test_an_empty_run_still_has_every_top_level_key() -> None:
    metrics = summarize_metrics([], up_thr=0.0, err_thr=2.0)
    assert list(metrics) == ["config", "counts", "uplift_all_attempted", "uplift_kept", "diversity", "e2e",
                             "per_dtype_layout"]  # fmt: skip
    assert metrics["uplift_all_attempted"]["geomean_uplift_pct"] is None and metrics["uplift_kept"] == {}
    assert not math.isnan(metrics["config"]["up_thr"])

"""Report rendering: SIMULATED labels, tables, the optional chart."""

from __future__ import annotations

import pytest

from tensilekit.pipeline import report as report_module
from tensilekit.pipeline.report import (
    CSV_HEADER,
    GemmReport,
    StageSummary,
    TuneReport,
    csv_rows,
    plot_uplift,
    render_markdown,
    summarize,
    workload_time,
)
from tensilekit.pipeline.stage import JobFailure


def sample(data: str = "SIMULATED") -> TuneReport:
    gemms = (
        GemmReport(id="g0001", gemm_type="BBS_TN", m=4096, n=8, batch=1, k=4096, call_count=10, time_share=0.75,
                   baseline_us=10.0, reference_us=10.0, tuned_us=8.0, uplift=0.25, error_ratio=1.0, winner="k", status="tuned"),
        GemmReport(id="g0002", gemm_type="BBS_NN", m=1, n=1, batch=1, k=1, call_count=1, status="baseline failed"),
    )  # fmt: skip
    failure = JobFailure(stage="baseline", phase="baseline", job_id="base-g0002", subject="BBS_NN 1x1x1x1",
                         attempts=2, error_type="ToolFailed", error="hipblaslt-bench exited with status 3")  # fmt: skip
    return TuneReport(
        data=data, arch="gfx942", gemms=gemms, workload_time=workload_time(gemms), average_uplift=0.25,
        weighted_uplift=0.25, gemm_time_saving=0.15,
        end_to_end={"0.5": 1.08, "1": 1.18}, failures=(failure,),
        stages=(StageSummary(number=1, name="ingest", summary="2 GEMM(s)", jobs=0, failed=0),),
        outputs={"final logic files": "final_libs/"},
    )  # fmt: skip


def test_markdown_is_labelled_simulated_and_lists_everything() -> None:
    text = render_markdown(sample())
    lines = text.splitlines()
    assert lines[0].startswith("# tensilekit tuning report -- SIMULATED")
    assert "## Summary (SIMULATED)" in lines and "## Per GEMM (SIMULATED)" in lines
    assert "* Time-share-weighted uplift: +25.00%" in lines
    # the headline leads the summary: the workload's GEMM time before and after, not a mean of ratios
    headline = lines.index("## Summary (SIMULATED)") + 2
    assert lines[headline] == (
        "**Workload GEMM time (calls x time per call): 100.0 us before -> 80.0 us after (1.25x faster, -20.0%) "
        "over 1 GEMM(s); 1 GEMM(s) without a time not counted**"
    )
    assert headline < lines.index("* Time-share-weighted uplift: +25.00%")
    assert "| 50% | 1.080x |" in lines
    assert any(
        line.startswith("| g0001 | BBS_TN | 4096 | 8 | 1 | 4096 | 10 | 75.00% | 10 | 10 | 8 | +25.00% | 1 | tuned |")
        for line in lines
    )
    assert (
        "| baseline | baseline | base-g0002 | BBS_NN 1x1x1x1 | 2 | ToolFailed: hipblaslt-bench exited with status 3 |"
        in lines
    )


def test_measured_reports_are_not_labelled() -> None:
    text = render_markdown(sample("measured"))
    assert "SIMULATED" not in text


def test_csv_rows_carry_the_data_label() -> None:
    rows = csv_rows(sample())
    assert len(rows[0]) == len(CSV_HEADER) and CSV_HEADER[0] == "data"
    assert rows[0][0] == "SIMULATED" and rows[1][-1] == "baseline failed"


def test_report_json_round_trip_excludes_runs() -> None:
    report = sample().model_copy(update={"runs": ("something",)})
    again = TuneReport.model_validate_json(report.model_dump_json())
    assert again == sample() and "runs" not in report.model_dump()
    assert [gemm.id for gemm in report.tuned] == ["g0001"] and report.simulated


def test_no_chart_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_module, "plot_available", lambda: False)
    assert plot_uplift(sample()) is None


def test_chart_with_matplotlib() -> None:
    pytest.importorskip("matplotlib")
    png = plot_uplift(sample())
    assert png is not None and png.startswith(b"\x89PNG")
    assert plot_uplift(sample()) == png  # deterministic bytes


def test_the_reference_library_is_named_with_how_it_was_found() -> None:
    reference = {"folder": "/opt/rocm/lib/hipblaslt/library", "found": "HIPBLASLT_TENSILE_LIBPATH=/x",
                 "identity": "its MatchTable.yaml", "custom_kernels": {"folder": "/t/CustomKernels", "found": "the tool"}}  # fmt: skip
    text = render_markdown(sample("measured").model_copy(update={"reference_library": reference}))
    section = text.split("## Reference library\n", 1)[1].split("\n## ", 1)[0]
    assert "`/opt/rocm/lib/hipblaslt/library`" in section and "HIPBLASLT_TENSILE_LIBPATH=/x" in section
    assert "its MatchTable.yaml" in section and "/t/CustomKernels" in section
    assert "## Reference library" not in render_markdown(sample())  # simulated: no reference library
    assert (
        TuneReport.model_validate_json(
            sample().model_copy(update={"reference_library": reference}).model_dump_json()
        ).reference_library
        == reference
    )


def _gemm(gemm_id: str, calls: int, status: str, baseline: float | None, reference: float | None = None,
          tuned: float | None = None) -> GemmReport:  # fmt: skip
    uplift = reference / tuned - 1 if reference and tuned else None
    return GemmReport(id=gemm_id, gemm_type="HHS_TN", m=1, n=1, batch=1, k=1, call_count=calls, baseline_us=baseline,
                      reference_us=reference, tuned_us=tuned, uplift=uplift, status=status)  # fmt: skip


def test_the_workload_time_is_summed_over_every_timed_gemm() -> None:
    """Issue 36 item 9: a small GEMM made 10x faster and a large one untouched -- the per-GEMM means
    say +450 %, the workload's GEMM time falls by 9 % (1100 -> 1010 us)."""
    gemms = [
        _gemm("g1", 10, "tuned", baseline=10.5, reference=10.0, tuned=1.0),  # compared: its reference time counts
        _gemm("g2", 1, "dropped: uplift 1.00% < 3.00%", baseline=1000.0, reference=999.0, tuned=990.0),
        _gemm("g3", 5, "no winner: screen failed", baseline=0.0),
        _gemm("g4", 7, "baseline failed", baseline=None),
    ]
    time = workload_time(gemms)
    assert time is not None
    assert time.before_us == pytest.approx(10 * 10.0 + 1000.0) and time.after_us == pytest.approx(10 * 1.0 + 1000.0)
    assert time.ratio == pytest.approx(1100 / 1010) and (time.timed_gemms, time.untimed_gemms) == (3, 1)
    summary = summarize(gemms)
    assert summary["workload_time"] == time and summary["average_uplift"] == pytest.approx(9.0)
    assert workload_time([_gemm("g4", 7, "baseline failed", baseline=None)]) is None

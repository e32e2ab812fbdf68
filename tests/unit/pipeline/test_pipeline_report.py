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
        data=data, arch="gfx942", gemms=gemms, average_uplift=0.25, weighted_uplift=0.25, gemm_time_saving=0.15,
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

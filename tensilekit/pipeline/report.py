"""The tuning report as data (:class:`TuneReport`) and its renderings (Markdown, CSV rows, PNG).

Pure; :func:`plot_uplift` needs matplotlib (the ``plot`` extra) and returns None without it.

The headline is the workload's GEMM time (:class:`WorkloadTime`): ``sum(calls * time per call)``
over every timed GEMM, before (the reference library) and after tuning (the tuned kernel where it
was kept, the reference time elsewhere), and their ratio -- what the application's GEMMs cost per
pass of the workload. Below it, per-GEMM statistics: uplift is ``reference time / tuned time - 1``;
the average and the time-share-weighted uplift are means of per-GEMM ratios (a few small GEMMs
made 10x faster give +900 % while the workload's time falls far less); the expected saving weighs
each GEMM by its measured share of the GEMM time: ``saving = sum(share * (1 - tuned / reference))``
over the tuned GEMMs, and an application spending fraction ``f`` of its time in these GEMMs speeds
up by ``1 / (1 - f * saving)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tensilekit.pipeline.stage import JobFailure
from tensilekit.tools.simulated.config import SIMULATED

END_TO_END_FRACTIONS = (0.25, 0.5, 0.75, 1.0)


class GemmReport(BaseModel):
    """One GEMM's line in the report."""

    model_config = ConfigDict(frozen=True)

    id: str
    gemm_type: str
    m: int
    n: int
    batch: int
    k: int
    call_count: int
    time_share: float | None = None
    """Measured share of the workload's GEMM time (baseline stage)."""
    baseline_us: float | None = None
    reference_us: float | None = None
    tuned_us: float | None = None
    uplift: float | None = None
    error_ratio: float | None = None
    reference_norm_error: float | None = None
    tuned_norm_error: float | None = None
    """The two errors ``error_ratio`` divides (hipblaslt-bench ``--verify``'s ``norm_error``)."""
    winner: str | None = None
    status: str

    @property
    def tuned(self) -> bool:
        return self.status == "tuned"


class WorkloadTime(BaseModel):
    """The workload's GEMM time per pass, ``sum(calls * us per call)``, before and after tuning."""

    model_config = ConfigDict(frozen=True)

    before_us: float
    """With the reference library: each GEMM's reference time (timed beside its tuned run where it
    was compared, else its baseline time)."""
    after_us: float
    """With the tuned kernels where they were kept, the same reference times elsewhere."""
    ratio: float | None
    """``before_us / after_us`` (how many times faster the workload's GEMMs run); None at 0 us."""
    timed_gemms: int
    untimed_gemms: int
    """GEMMs without a baseline time (failed, not expressible): in neither sum."""


def workload_time(gemms: Sequence[GemmReport]) -> WorkloadTime | None:
    """The workload's GEMM time before and after tuning over the GEMMs that have a time (pure);
    None when no GEMM has one."""
    before = after = 0.0
    timed = 0
    for gemm in gemms:
        compared = gemm.tuned and gemm.reference_us is not None and gemm.tuned_us is not None
        reference = gemm.reference_us if compared else gemm.baseline_us
        if reference is None:
            continue
        timed += 1
        before += gemm.call_count * reference
        after += gemm.call_count * (gemm.tuned_us if compared and gemm.tuned_us is not None else reference)
    if not timed:
        return None
    return WorkloadTime(
        before_us=before, after_us=after, ratio=before / after if after > 0 else None, timed_gemms=timed,
        untimed_gemms=len(gemms) - timed,
    )  # fmt: skip


class StageSummary(BaseModel):
    """A stage as the report lists it (no timings, so reports of resumed runs are identical)."""

    model_config = ConfigDict(frozen=True)

    number: int
    name: str
    summary: str
    jobs: int
    failed: int


class TuneReport(BaseModel):
    """What a tuning run found; ``report.json`` holds exactly this."""

    model_config = ConfigDict(frozen=True)

    data: str
    """``SIMULATED`` or ``measured``."""
    arch: str
    gemms: tuple[GemmReport, ...]
    workload_time: WorkloadTime | None = None
    """The headline: the workload's GEMM time before and after tuning (:func:`workload_time`)."""
    average_uplift: float | None = None
    weighted_uplift: float | None = None
    gemm_time_saving: float = 0.0
    end_to_end: dict[str, float] = {}
    """Expected end-to-end speedup keyed by the fraction of time the application spends in GEMMs."""
    failures: tuple[JobFailure, ...] = ()
    stages: tuple[StageSummary, ...] = ()
    outputs: dict[str, str] = {}
    notes: tuple[str, ...] = ()
    measurement: dict[str, Any] = {}
    """How the compared runs were measured (device, iterations, rotating buffer, flush, thresholds)."""
    reference_library: dict[str, Any] = {}
    """The library every reference run loaded (``folder``), how it was found (``found``), how its
    solutions were identified (``identity``) and, when logic files named custom kernels, where their
    configs came from (``custom_kernels``); empty for simulated runs."""
    runs: tuple[Any, ...] = Field(default=(), exclude=True)
    """What happened to each stage in the run that returned this report (``StageRun``; not saved)."""

    @property
    def simulated(self) -> bool:
        return self.data == SIMULATED

    @property
    def tuned(self) -> list[GemmReport]:
        return [gemm for gemm in self.gemms if gemm.tuned]


def summarize(gemms: Sequence[GemmReport]) -> dict[str, Any]:
    """The workload's GEMM time before and after; average and share-weighted uplift, GEMM time
    saving and end-to-end table (pure)."""
    tuned = [gemm for gemm in gemms if gemm.tuned and gemm.uplift is not None]
    if not tuned:
        return {"workload_time": workload_time(gemms), "average_uplift": None, "weighted_uplift": None,
                "gemm_time_saving": 0.0,
                "end_to_end": {f"{fraction:g}": 1.0 for fraction in END_TO_END_FRACTIONS}}  # fmt: skip
    average = sum(gemm.uplift or 0.0 for gemm in tuned) / len(tuned)
    weight = sum(gemm.time_share or 0.0 for gemm in tuned)
    weighted = (
        sum((gemm.time_share or 0.0) * (gemm.uplift or 0.0) for gemm in tuned) / weight if weight > 0 else average
    )
    saving = sum((gemm.time_share or 0.0) * (1.0 - 1.0 / (1.0 + (gemm.uplift or 0.0))) for gemm in tuned)
    end_to_end = {f"{fraction:g}": 1.0 / (1.0 - fraction * saving) for fraction in END_TO_END_FRACTIONS}
    return {
        "workload_time": workload_time(gemms),
        "average_uplift": average,
        "weighted_uplift": weighted,
        "gemm_time_saving": saving,
        "end_to_end": end_to_end,
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2%}"


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def workload_headline(time: WorkloadTime | None) -> str:
    """``Workload GEMM time (calls x time per call): 1,234.0 us before -> 456.7 us after (2.70x faster,
    -63.0%) over 14 GEMM(s)``."""
    if time is None:
        return "Workload GEMM time: no GEMM was timed"
    change = ""
    if time.ratio is not None and time.before_us > 0:
        speed = f"{time.ratio:.2f}x faster" if time.ratio >= 1 else f"{1 / time.ratio:.2f}x slower"
        change = f" ({speed}, {time.after_us / time.before_us - 1:+.1%})"
    untimed = f"; {time.untimed_gemms} GEMM(s) without a time not counted" if time.untimed_gemms else ""
    return (
        f"Workload GEMM time (calls x time per call): {time.before_us:,.1f} us before -> {time.after_us:,.1f} us "
        f"after{change} over {time.timed_gemms} GEMM(s){untimed}"
    )


def _setting(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key} {item}" for key, item in value.items())
    return "none" if value is None else str(value)


def render_markdown(report: TuneReport) -> str:
    """The human report (``report.md``)."""
    title = "# tensilekit tuning report"
    if report.simulated:
        title += f" -- {SIMULATED} (no GPU was used; every time comes from tensilekit's GPU model)"
    tuned = report.tuned
    lines = [
        title,
        "",
        f"Architecture: {report.arch}. Data: {report.data}. GEMMs in the workload: {len(report.gemms)}; "
        f"tuned: {len(tuned)}.",
        "",
        "## Summary" + (f" ({SIMULATED})" if report.simulated else ""),
        "",
        f"**{workload_headline(report.workload_time)}**",
        "",
        f"Expected GEMM time saving over the whole workload (each GEMM weighted by its baseline time share): "
        f"{report.gemm_time_saving:.2%}",
        "",
        "| share of run time spent in these GEMMs | expected end-to-end speedup |",
        "| --- | --- |",
    ]
    lines += [f"| {float(fraction):.0%} | {speedup:.3f}x |" for fraction, speedup in report.end_to_end.items()]
    lines += [
        "",
        "Per-GEMM statistics of the tuned GEMMs (means of per-GEMM ratios: how much faster a tuned GEMM got, "
        "not the workload):",
        "",
        f"* Average uplift of the tuned GEMMs: {_pct(report.average_uplift)}",
        f"* Time-share-weighted uplift: {_pct(report.weighted_uplift)}",
        "",
        "## Per GEMM" + (f" ({SIMULATED})" if report.simulated else ""),
        "",
        "| id | type | M | N | batch | K | calls | time share | baseline us | reference us | tuned us | uplift | error ratio | status |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for gemm in report.gemms:
        share = "-" if gemm.time_share is None else f"{gemm.time_share:.2%}"
        lines.append(
            f"| {gemm.id} | {gemm.gemm_type} | {gemm.m} | {gemm.n} | {gemm.batch} | {gemm.k} | {gemm.call_count} | "
            f"{share} | {_num(gemm.baseline_us)} | {_num(gemm.reference_us)} | {_num(gemm.tuned_us)} | "
            f"{_pct(gemm.uplift)} | {_num(gemm.error_ratio, 3)} | {gemm.status} |"
        )
    if report.reference_library:
        reference = report.reference_library
        lines += ["", "## Reference library", "", f"* loaded by every reference run: `{reference.get('folder')}`"]
        lines += [f"* found: {reference.get('found')}", f"* solutions identified by: {reference.get('identity')}"]
        if reference.get("custom_kernels"):
            lines.append(f"* custom kernels: {_setting(reference['custom_kernels'])}")
    if report.measurement:
        lines += ["", "## Measurement", ""]
        lines += [f"* {key.replace('_', ' ')}: {_setting(value)}" for key, value in report.measurement.items()]
    lines += ["", "## Failures", ""]
    if report.failures:
        lines += ["| stage | phase | job | subject | attempts | error |", "| --- | --- | --- | --- | ---: | --- |"]
        for failure in report.failures:
            error = f"{failure.error_type}: {failure.error}".replace("|", "\\|").replace("\n", " ")
            if failure.timed_out:
                error = "timed out -- " + error
            if failure.retired:
                error = "retired (not retried again; --from-stage re-measures) -- " + error
            lines.append(
                f"| {failure.stage} | {failure.phase} | {failure.job_id} | {failure.subject} | {failure.attempts} | {error[:1500]} |"
            )
    else:
        lines.append("No job failed.")
    lines += ["", "## Stages", "", "| # | stage | jobs | failed | summary |", "| ---: | --- | ---: | ---: | --- |"]
    lines += [
        f"| {stage.number:02d} | {stage.name} | {stage.jobs} | {stage.failed} | {stage.summary} |"
        for stage in report.stages
    ]
    lines += ["", "## Outputs", ""]
    lines += [f"* {name}: `{path}`" for name, path in report.outputs.items()]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"* {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


CSV_HEADER = [
    "data", "id", "gemm_type", "M", "N", "batch", "K", "call_count", "time_share", "baseline_us", "reference_us",
    "tuned_us", "uplift", "error_ratio", "winner", "status",
]  # fmt: skip


def csv_rows(report: TuneReport) -> list[list[Any]]:
    """``report.csv`` rows (see :data:`CSV_HEADER`)."""
    return [
        [report.data, gemm.id, gemm.gemm_type, gemm.m, gemm.n, gemm.batch, gemm.k, gemm.call_count, gemm.time_share,
         gemm.baseline_us, gemm.reference_us, gemm.tuned_us, gemm.uplift, gemm.error_ratio, gemm.winner, gemm.status]
        for gemm in report.gemms
    ]  # fmt: skip


def plot_available() -> bool:
    """Whether matplotlib (the ``plot`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def plot_uplift(report: TuneReport) -> bytes | None:
    """A PNG bar chart of the tuned GEMMs' uplift; None without matplotlib (the ``plot`` extra)."""
    if not plot_available():
        return None
    import importlib
    import io

    importlib.import_module("matplotlib").use("Agg", force=True)
    plt: Any = importlib.import_module("matplotlib.pyplot")

    tuned = report.tuned
    labels = [f"{gemm.gemm_type} {gemm.m}x{gemm.n}x{gemm.batch}x{gemm.k}" for gemm in tuned]
    values = [100.0 * (gemm.uplift or 0.0) for gemm in tuned]
    figure, axes = plt.subplots(figsize=(max(6.0, 0.45 * len(labels) + 2.0), 4.5))
    axes.bar(range(len(values)), values, color="#c0392b" if report.simulated else "#2e86c1")
    axes.set_xticks(range(len(labels)))
    axes.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    axes.set_ylabel("uplift over the reference library (%)")
    time = report.workload_time
    headline = "" if time is None or time.ratio is None else f": workload GEMM time {time.ratio:.2f}x faster"
    title = f"tensilekit tuning, {report.arch}{headline}"
    if report.simulated:
        title = f"{SIMULATED} -- " + title
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


__all__ = [
    "CSV_HEADER",
    "END_TO_END_FRACTIONS",
    "GemmReport",
    "StageSummary",
    "TuneReport",
    "WorkloadTime",
    "csv_rows",
    "plot_available",
    "plot_uplift",
    "render_markdown",
    "summarize",
    "workload_headline",
    "workload_time",
]

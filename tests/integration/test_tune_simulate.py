"""`tensilekit tune --simulate` end to end: outputs, validation, resume, devices, options."""

from __future__ import annotations

import collections
import csv
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.pipeline import RecordingReporter, SerialExecutor, TuneConfig, run_tuning
from tensilekit.pipeline.jobs import JobFinished, JobRetrying, JobStarted
from tensilekit.tools.simulated.library import library_logic
from tensilekit.workload import load_workload

from .conftest import LLAMA_LOG, final_files

STAGE_DIRS = ["01_ingest", "02_library", "03_baseline", "04_search", "05_build", "06_benchmark", "07_postprocess",
              "08_final", "09_merge", "10_report"]  # fmt: skip


def tune(workdir: Path, *options: str) -> object:
    args = [
        "tune",
        "--simulate",
        "--mode",
        "search",
        str(LLAMA_LOG),
        "--arch",
        "gfx942",
        "--workdir",
        str(workdir),
        *options,
    ]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.fixture(scope="module")
def simulated_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    workdir = tmp_path_factory.mktemp("tune") / "W"
    return workdir, tune(workdir, "--devices", "0,1,2,3")


def test_every_stage_runs_and_writes_its_outputs(simulated_run: tuple[Path, object]) -> None:
    workdir, result = simulated_run
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert sorted(path.name for path in workdir.iterdir() if path.name[:2].isdigit()) == STAGE_DIRS
    assert all((workdir / name / ".done.json").is_file() for name in STAGE_DIRS)
    for name in ("gemms.csv", "summary.csv", "report.md", "report.csv", "report.json", "results/raw_results.csv",
                 "results/final_results.csv", "tune.log"):  # fmt: skip
        assert (workdir / name).is_file(), name
    assert list((workdir / "final_libs").glob("*.yaml")) and list((workdir / "merged").glob("*.yaml"))
    stderr = result.stderr  # type: ignore[attr-defined]
    for name in STAGE_DIRS:
        assert f"{name} running (new: not run yet)" in stderr
    assert "[SIMULATED]" in stderr


def test_outputs_say_simulated(simulated_run: tuple[Path, object]) -> None:
    workdir, _ = simulated_run
    for name in ("gemms.csv", "summary.csv", "report.csv", "results/raw_results.csv", "results/final_results.csv",
                 "03_baseline/baseline.csv", "04_search/screen.csv", "04_search/accurate.csv", "04_search/winners.csv"):  # fmt: skip
        with (workdir / name).open() as stream:
            rows = list(csv.DictReader(stream))
        assert rows and {row["data"] for row in rows} == {"SIMULATED"}, name
    assert (workdir / "report.md").read_text().startswith("# tensilekit tuning report -- SIMULATED")
    assert json.loads((workdir / "report.json").read_text())["data"] == "SIMULATED"
    assert json.loads((workdir / "results" / "metrics.json").read_text())["data"] == "SIMULATED"
    assert all(line.split(" ", 1)[1].startswith("[SIMULATED]") or " stage " in f" {line.split(' ', 1)[1]}" or "job" in line
               for line in (workdir / "tune.log").read_text().splitlines())  # fmt: skip


def test_validate_accepts_the_final_and_merged_logic(simulated_run: tuple[Path, object]) -> None:
    workdir, _ = simulated_run
    result = CliRunner().invoke(
        cli, ["validate", str(workdir / "final_libs"), str(workdir / "full_libs"), str(workdir / "merged")]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith("file(s) valid")


def test_the_report_covers_every_gemm(simulated_run: tuple[Path, object]) -> None:
    workdir, result = simulated_run
    report = json.loads((workdir / "report.json").read_text())
    workload = load_workload(LLAMA_LOG)  # one duplicate line in the log, folded while read
    assert len(report["gemms"]) == len(workload.problems) == workload.records_read - 1
    tuned = [gemm for gemm in report["gemms"] if gemm["status"] == "tuned"]
    assert tuned and all(gemm["uplift"] >= 0.01 and gemm["error_ratio"] <= 2.0 for gemm in tuned)
    assert any(gemm["status"].startswith("dropped: error ratio") for gemm in report["gemms"])
    # both errors beside every error-ratio drop (issue 36 item 8): report.json, report.md, final_results.csv
    markdown = (workdir / "report.md").read_text()
    with (workdir / "results" / "final_results.csv").open() as stream:
        final = {row["id"]: row for row in csv.DictReader(stream)}
    for gemm in report["gemms"]:
        if gemm["status"].startswith("dropped: error ratio"):
            tuned_error, reference_error = gemm["tuned_norm_error"], gemm["reference_norm_error"]
            assert tuned_error / reference_error > 2.0
            beside = f"(norm_error {tuned_error:.3g} vs the reference's {reference_error:.3g})"
            assert gemm["status"].endswith(beside) and beside in markdown
            assert final[gemm["id"]]["status"] == gemm["status"]
            assert float(final[gemm["id"]]["tuned_norm_error"]) == pytest.approx(tuned_error, rel=1e-5)
            assert float(final[gemm["id"]]["reference_norm_error"]) == pytest.approx(reference_error, rel=1e-5)
    # the Measurement section says how the screen measures: cache-cold, as the accurate runs
    assert "* screen: every solution the library offers (--algo_method all), 10 timed and 2 cold iteration(s), " \
        "rotating buffer 512 MB, --flush -- measured as the accurate runs are" in markdown  # fmt: skip
    assert 0 < report["gemm_time_saving"] < 1 and report["weighted_uplift"] > 0
    tuned_sizes = sorted((gemm["m"], gemm["n"], gemm["batch"], gemm["k"]) for gemm in tuned)
    final_sizes = sorted(
        tuple(entry.size[:4]) for path in (workdir / "final_libs").glob("*.yaml") for entry in load_logic(path).table
    )
    assert final_sizes == tuned_sizes
    assert "GEMM(s) tuned (SIMULATED)" in result.stdout  # type: ignore[attr-defined]


def test_jobs_were_spread_over_all_four_devices(simulated_run: tuple[Path, object]) -> None:
    _, result = simulated_run
    lines = [line for line in result.stderr.splitlines() if "per device" in line]  # type: ignore[attr-defined]
    assert lines and all("0:" in line and "1:" in line and "2:" in line and "3:" in line for line in lines)


def test_a_rerun_skips_every_stage_and_changes_nothing(simulated_run: tuple[Path, object]) -> None:
    workdir, _ = simulated_run
    before = final_files(workdir)
    again = tune(workdir, "--devices", "0,1,2,3")
    assert again.exit_code == 0  # type: ignore[attr-defined]
    assert again.stderr.count("skipped (up to date)") == 10  # type: ignore[attr-defined]
    assert final_files(workdir) == before


def test_changing_a_threshold_redoes_only_the_stages_after_it(
    simulated_run: tuple[Path, object], tmp_path: Path
) -> None:
    source, _ = simulated_run
    workdir = tmp_path / "W"
    shutil.copytree(source, workdir)
    # just above the smallest kept uplift: postprocessing drops one more GEMM, so its outputs change
    uplifts = sorted(gemm["uplift"] for gemm in json.loads((source / "report.json").read_text())["gemms"]
                     if gemm["status"] == "tuned")  # fmt: skip
    threshold = round(uplifts[0] + 0.001, 3)
    result = tune(workdir, "--devices", "0,1", "--up-thr", str(threshold))
    stderr = result.stderr  # type: ignore[attr-defined]
    for name in STAGE_DIRS[:6]:
        assert f"{name} skipped (up to date)" in stderr
    for name in STAGE_DIRS[6:]:
        assert f"{name} running (stale" in stderr
    report = json.loads((workdir / "report.json").read_text())
    assert all(gemm["uplift"] >= threshold for gemm in report["gemms"] if gemm["status"] == "tuned")
    refused = tune(workdir, "--up-thr", "0.2", "--no-rerun")
    assert refused.exit_code == 3  # type: ignore[attr-defined]
    assert "07_postprocess" in refused.stderr and f"is stale (option up_thr: {threshold} -> 0.2)" in refused.stderr  # type: ignore[attr-defined]


def test_slots_per_device_are_honoured(tmp_path: Path) -> None:
    reporter = RecordingReporter()
    config = TuneConfig(logs=(LLAMA_LOG,), arch="gfx942", workdir=tmp_path / "W", simulate=True, devices=(0, 1),
                        slots_per_device=2, sim_time_scale=0.05, only=())  # fmt: skip
    run_tuning(config, reporter=reporter)
    running: collections.Counter[int | None] = collections.Counter()
    peak: collections.Counter[int | None] = collections.Counter()
    for _, event in reporter.events:
        if isinstance(event, JobStarted):
            running[event.device] += 1
            peak[event.device] = max(peak[event.device], running[event.device])
        elif isinstance(event, JobRetrying):
            running[event.device] -= 1
        elif isinstance(event, JobFinished):
            running[event.outcome.device] -= 1
    assert peak[0] == 2 and peak[1] == 2


def test_keep_threshold_and_merge_into(tmp_path: Path) -> None:
    target = tmp_path / "Equality"
    target.mkdir()
    problem = next(problem for problem in load_workload(LLAMA_LOG).problems if problem.trans_a == "T")
    name, existing = library_logic("gfx942", problem)
    dump_logic(existing, target / name)
    before = (target / name).read_bytes()
    workdir = tmp_path / "W"
    result = tune(workdir, "--keep-thr", "0.6", "--merge-into", str(target))
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    with (workdir / "gemms.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    kept = [row for row in rows if row["kept"] == "1"]
    assert 0 < len(kept) < len(rows)
    assert sum(float(row["measured_share"]) for row in kept) >= 0.6
    report = json.loads((workdir / "report.json").read_text())
    assert any(gemm["status"] == "not tuned (below --keep-thr)" for gemm in report["gemms"])
    assert (target / name).read_bytes() == before  # --merge-into is only read
    merged = load_logic(workdir / "merged" / name)
    merged_sizes = {tuple(entry.size[:4]) for entry in merged.table}
    assert {tuple(entry.size[:4]) for entry in existing.table} <= merged_sizes
    final = load_logic(workdir / "final_libs" / name)
    assert {tuple(entry.size[:4]) for entry in final.table} <= merged_sizes


def test_the_serial_reference_gives_the_same_files(simulated_run: tuple[Path, object], tmp_path: Path) -> None:
    source, _ = simulated_run
    workdir = tmp_path / "serial"
    run_tuning(TuneConfig(logs=(LLAMA_LOG,), arch="gfx942", workdir=workdir, simulate=True), SerialExecutor())
    assert final_files(workdir) == final_files(source)


def test_metrics_json_is_geko_s_run_summary_of_the_report(simulated_run: tuple[Path, object]) -> None:
    # GEKO writes results/metrics.json (geko/optim/optim.py analyze, geko/optim/_metrics.py @9915500485e1).
    workdir, _ = simulated_run
    metrics = json.loads((workdir / "results" / "metrics.json").read_text())
    assert {"config", "counts", "uplift_all_attempted", "uplift_kept", "diversity", "e2e", "per_dtype_layout"} <= set(
        metrics
    )
    report = json.loads((workdir / "report.json").read_text())
    tuned = [gemm for gemm in report["gemms"] if gemm["status"] == "tuned"]
    assert metrics["counts"]["n_kept"] == len(tuned) > 0
    mean = sum(100 * gemm["uplift"] for gemm in tuned) / len(tuned)
    assert metrics["uplift_kept"]["mean_uplift_pct"] == pytest.approx(mean)
    assert metrics["e2e"]["e2e_uplift_pct"] == pytest.approx(100 * report["gemm_time_saving"])
    assert sum(layout["n"] for layout in metrics["per_dtype_layout"].values()) == len(tuned)
    assert "results/metrics.json" in report["outputs"]["results"]


def test_full_libs_hold_every_benchmarked_gemm_with_the_better_solution(simulated_run: tuple[Path, object]) -> None:
    # GEKO's full_libs (library.from_full_dataframe, geko/library/operations.py @0c09056413): the tuned
    # solution where it won, the reference run's solution elsewhere, for every benchmarked GEMM.
    workdir, _ = simulated_run
    bench = json.loads((workdir / "06_benchmark" / "benchmark.json").read_text())["gemms"]
    kept = set(json.loads((workdir / "07_postprocess" / "postprocess.json").read_text())["kept"])
    assert kept and set(bench) - kept  # both kinds are in the run
    gemms = {f"g{index:04d}": problem for index, problem in enumerate(load_workload(LLAMA_LOG).problems, start=1)}
    rows: dict[tuple[int, ...], str] = {}
    for path in (workdir / "full_libs").glob("*.yaml"):
        logic = load_logic(path)
        for entry in logic.table:
            rows[tuple(entry.size[:4])] = logic.solutions[entry.solution].solution_name_min or ""
    assert len(rows) == len(bench)
    for gemm_id, record in bench.items():
        problem = gemms[gemm_id]
        side = "tuned" if gemm_id in kept else "reference"
        assert rows[(problem.m, problem.n, problem.batch, problem.k)] == record[side]["solution_name"], gemm_id
    assert json.loads((workdir / "08_final" / "final.json").read_text())["full_missing_reference"] == []

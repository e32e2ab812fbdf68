"""CLI: `tensilekit tune` options, usage errors and the error boundary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli

LOG = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "llama3_8b_bf16_mask64.log"


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, ["tune", *args])


def test_help_lists_the_options() -> None:
    result = invoke("--help")
    assert result.exit_code == 0  # type: ignore[attr-defined]
    for option in ("--arch", "--workdir", "--simulate", "--mode", "--devices", "--slots-per-device", "--executor",
                   "--address", "--retries", "--timeout", "--keep-thr", "--err-thr", "--up-thr", "--from-stage",
                   "--only", "--no-rerun", "--merge-into", "--seed", "--library-logic", "--top-k", "--inline",
                   "--bench-executable", "--create-library-executable", "--tensile-executable"):  # fmt: skip
        assert option in result.output, option  # type: ignore[attr-defined]
    assert "--sim-time-scale" not in result.output  # type: ignore[attr-defined]


def test_mode_ga_options_are_checked(tmp_path: Path) -> None:
    base = ["--simulate", "--mode", "ga", str(LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "W")]
    result = invoke(*base, "--population", "2")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "--population must be larger than the 2 elite kernels" in result.output  # type: ignore[attr-defined]
    result = invoke(*base, "--generations", "0")
    assert result.exit_code == 2 and "--generations" in result.output  # type: ignore[attr-defined]
    assert not (tmp_path / "W").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--devices", "0,0"], "distinct non-negative GPU indices"),
        (["--devices", "a"], "comma-separated list of GPU indices"),
        (["--only", "ingest,nope"], "unknown stage 'nope'"),
        (["--from-stage", "search", "--only", "report"], "--from-stage and --only cannot be combined"),
        (["--address", "auto"], "--address is only used with --executor ray"),
        (["--keep-thr", "0"], "--keep-thr"),
        (["--arch", "gfx1100"], "gfx1100"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, options: list[str], message: str) -> None:
    base = ["--simulate", str(LOG), "--workdir", str(tmp_path / "W")]
    if "--arch" not in options:
        base += ["--arch", "gfx942"]
    result = invoke(*base, *options)
    assert result.exit_code == 2 and message in result.output, result.output  # type: ignore[attr-defined]


def test_a_real_run_needs_the_library_logic(tmp_path: Path) -> None:
    result = invoke(str(LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "W"))
    assert result.exit_code == 3  # type: ignore[attr-defined]
    assert "error: a real (not --simulate) run needs --library-logic DIR" in result.stderr  # type: ignore[attr-defined]


def test_ray_without_ray_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    result = invoke("--simulate", str(LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "W"), "--executor", "ray")
    assert result.exit_code == ExitCode.USAGE  # type: ignore[attr-defined]  # a missing optional extra
    # tensilekit is not on PyPI: the message says what works from a checkout, as the README installs
    assert "Ray: install the 'ray' extra: pip install -e \".[ray]\" in the tensilekit checkout" in result.stderr  # type: ignore[attr-defined]
    assert "tensilekit[ray]" not in result.stderr  # type: ignore[attr-defined]


def test_json_report_on_stdout_with_the_serial_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no plot extra: the report says how to get the chart
    result = invoke("--simulate", str(LOG), "--arch", "gfx90a", "--workdir", str(tmp_path / "W"), "--executor", "serial",
                    "--only", "ingest")  # fmt: skip
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    result = invoke(
        "--simulate", str(LOG), "--arch", "gfx90a", "--workdir", str(tmp_path / "W"), "--executor", "serial", "--json"
    )
    report = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert report["data"] == "SIMULATED" and report["arch"] == "gfx90a" and len(report["gemms"]) == 14
    assert "01_ingest skipped (up to date)" in result.stderr  # type: ignore[attr-defined]
    assert 'no uplift.png: it needs matplotlib: pip install -e ".[plot]" in the tensilekit checkout' in " ".join(
        report["notes"]
    )


def test_inline_gemms_are_tuned_with_or_without_a_log(tmp_path: Path) -> None:
    # GEKO's --inline M N batch K DataType DestDataType ComputeDataType transA transB (geko/cli.py @0618e531).
    workdir = tmp_path / "W"
    result = invoke("--simulate", "--arch", "gfx942", "--workdir", str(workdir), "--inline", "4096", "1024", "1",
                    "4096", "B", "B", "S", "T", "N", "--inline", "1024", "512", "2", "1024", "F8B8", "H", "S", "T", "N")  # fmt: skip
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    gemms = json.loads((workdir / "01_ingest" / "workload.json").read_text())["gemms"]
    problems = [(g["problem"]["m"], g["problem"]["n"], g["problem"]["batch"], g["problem"]["a_type"],
                 g["problem"]["b_type"], g["problem"]["d_type"]) for g in gemms]  # fmt: skip
    assert problems == [(4096, 1024, 1, "bf16_r", "bf16_r", "bf16_r"), (1024, 512, 2, "f8_r", "bf8_r", "f16_r")]
    assert (workdir / "report.md").is_file()
    # with a log: the log's GEMMs first, an identical inline GEMM adds one call
    log_gemm = ["6144", "8", "1", "4096", "B", "B", "S", "T", "N"]  # the llama log's first GEMM
    result = invoke("--simulate", str(LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "L"), "--inline", *log_gemm)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    with_log = json.loads((tmp_path / "L" / "01_ingest" / "workload.json").read_text())["gemms"]
    from tensilekit.workload import load_workloads

    assert with_log[0]["problem"]["call_count"] == load_workloads([LOG])[0].problems[0].call_count + 1


def test_a_quoted_inline_gemm_is_one_gemm_and_leaves_the_next_options_alone(tmp_path: Path) -> None:
    """tune.md's own form: ``--inline "M N batch K …"`` as one value, then ``--arch``. Nine values
    would have swallowed ``--arch`` and the error named ``--arch`` as missing (issue 36, item 11)."""
    from tensilekit.cli.commands.tune import split_quoted_inline

    assert split_quoted_inline(["--inline", "64 64 1 64 B B S T N", "--arch", "gfx942"]) == [
        "--inline", "64", "64", "1", "64", "B", "B", "S", "T", "N", "--arch", "gfx942"]  # fmt: skip
    assert split_quoted_inline(["--inline=64 64 1 64 B B S T N"])[:2] == ["--inline", "64"]
    assert split_quoted_inline(["--inline", "64", "--", "--inline", "1 2"]) == [
        "--inline",
        "64",
        "--",
        "--inline",
        "1 2",
    ]
    workdir = tmp_path / "W"
    result = invoke("--simulate", "--inline", "4096 64 1 4096 H H S T N", "--inline", "8192 8192 1 1024 H H S T N",
                    "--arch", "gfx942", "--workdir", str(workdir))  # fmt: skip
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    gemms = json.loads((workdir / "01_ingest" / "workload.json").read_text())["gemms"]
    assert [(g["problem"]["m"], g["problem"]["n"], g["problem"]["k"]) for g in gemms] == [
        (4096, 64, 4096),
        (8192, 8192, 1024),
    ]
    # a quoted GEMM with a wrong count still says which --inline and why
    result = invoke("--simulate", "--inline", "4096 64 1 4096 H H S T", "--arch", "gfx942", "--workdir", str(workdir))
    output = result.output  # type: ignore[attr-defined]
    assert result.exit_code == 2 and "--inline #1: inline GEMM needs 9 values" in output and "got 8" in output, output


def test_the_workload_and_inline_gemms_are_checked(tmp_path: Path) -> None:
    base = ["--simulate", "--arch", "gfx942", "--workdir", str(tmp_path / "W")]
    result = invoke(*base)
    assert result.exit_code == 2 and "LOG files, --inline GEMMs, or both" in result.output  # type: ignore[attr-defined]
    result = invoke(*base, "--inline", "64", "64", "1", "64", "Q", "B", "S", "T", "N")
    assert result.exit_code == 2 and "unknown Tensile type letters 'Q'" in result.output  # type: ignore[attr-defined]
    result = invoke(*base, "--inline", "64", "64", "1", "64", "B", "B", "S", "T")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    # a size past int64: which --inline and why, without pydantic's "Value error," prefix
    huge = str(2**70)
    result = invoke(*base, "--inline", "8", "8", "1", "8", "B", "B", "S", "T", "N", "--inline", huge, "8", "1", "8",
                    "B", "B", "S", "T", "N")  # fmt: skip
    output = result.output  # type: ignore[attr-defined]
    assert result.exit_code == 2 and "Value error" not in output, output  # type: ignore[attr-defined]
    assert f"--inline #2: bad inline GEMM '{huge} 8 1 8 B B S T N': m: {huge} is over the C++ int64_t" in output
    assert not (tmp_path / "W").exists()


def test_rocblas_tuning_stops_at_configs(tmp_path: Path) -> None:
    """--config-dialect tensile has no benchmark path (no rocblas-bench, no rocBLAS TensileCreateLibrary):
    --help says so, and the run ends after the search stage with that message instead of building
    ROCm/Tensile winners with hipBLASLt's tools."""
    help_text = " ".join(invoke("--help").output.split())  # type: ignore[attr-defined]
    assert "rocBLAS tuning stops at configs" in help_text and "no rocBLAS build or benchmark path" in help_text
    workdir = tmp_path / "W"
    base = ["--simulate", str(LOG), "--arch", "gfx942", "--workdir", str(workdir), "--config-dialect", "tensile"]
    refused = invoke(*base)  # the dense search replays hipBLASLt's own solutions: nothing to write
    assert refused.exit_code == 2 and "rocBLAS tuning stops at configs" in refused.output  # type: ignore[attr-defined]
    assert not workdir.exists()
    result = invoke(*base, "--mode", "ga", "--population", "4", "--generations", "1")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "rocBLAS tuning stops at configs" in " ".join(result.output.split())  # type: ignore[attr-defined]
    assert list((workdir / "04_search" / "configs").glob("*.yaml"))
    assert not (workdir / "05_build").exists() and not (workdir / "report.json").exists()
    resumed = invoke(*base, "--mode", "ga", "--population", "4", "--generations", "1", "--json")
    as_json = json.loads(resumed.stdout)  # type: ignore[attr-defined]
    assert any("rocBLAS tuning stops at configs" in note for note in as_json["notes"])
    later = invoke(*base, "--mode", "ga", "--population", "4", "--generations", "1", "--only", "build")
    assert later.exit_code != 0 and "does not run" in later.output  # type: ignore[attr-defined]


def test_ingest_keeps_the_aiter_rows_of_the_run_s_device(tmp_path: Path) -> None:
    """An AITER tuned CSV with rows for gfx950 and gfx942 (AITER keys rows by gfx and cu_num,
    ``aiter/tuned_gemm.py`` @0584e04d7f12114adcddc7e14b9f40985f520388): a gfx942 run tunes the
    gfx942 rows, one GEMM per shape, and notes the gfx950 rows it left out."""
    aiter = LOG.parent / "aiter_bf16_tuned_two_devices.csv"
    workdir = tmp_path / "W"
    result = CliRunner().invoke(cli, ["tune", "--simulate", str(aiter), "--arch", "gfx942", "--workdir", str(workdir),
                                      "--only", "ingest", "--executor", "serial"])  # fmt: skip
    assert result.exit_code == 0, result.output
    ingested = json.loads((workdir / "01_ingest" / "workload.json").read_text())
    assert [(g["problem"]["m"], g["problem"]["n"]) for g in ingested["gemms"]] == [(1536, 1), (1536, 16), (7168, 64)]
    assert all("gfx" not in g["problem"] and "cu_num" not in g["problem"] for g in ingested["gemms"])
    assert ingested["records_in"] == 6
    assert any("3 for gfx950 with 256 CUs" in note for note in ingested["notes"])

"""The Tensile benchmark driver: argv, client CSV parsing, and runs against the fake driver."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tensilekit.errors import InputNotFound, ToolFailed, ToolOutputError
from tensilekit.tools.profiles import tool_profile
from tensilekit.tools.runner import FakeResult, FakeRunner, SubprocessRunner
from tensilekit.tools.tensile_client import (
    FAILED,
    NON_SOLUTION_COLUMNS,
    TensileRunConfig,
    build_tensile_argv,
    client_failures,
    collect_tensile_outputs,
    load_client_csv,
    parse_client_csv,
    run_tensile,
    solutions_file_for,
)

FixturePath = Callable[..., Path]
Calls = Callable[[], list[dict[str, Any]]]

CONFIG = """\
GlobalParameters:
  NumElementsToValidate: 128
  KernelTime: True
BenchmarkProblems:
  - - OperationType: GEMM
      DataType: b
      DestDataType: b
      ComputeDataType: s
      HighPrecisionAccumulate: True
      TransposeA: 1
      TransposeB: 0
      UseBeta: True
      Batched: True
    - BenchmarkCommonParameters:
        - KernelLanguage: ["Assembly"]
      ForkParameters:
        - MatrixInstruction: [[16, 16, 16, 1, 1, 4, 4, 2, 2]]
        - DepthU: [64]
      BenchmarkFinalParameters:
        - ProblemSizes:
          - Exact: [6144, 8, 1, 4096]
          - Exact: [6144, 2048, 1, 4096]
          - Exact: [28672, 2048, 1, 4096]
LibraryLogic:
    ScheduleName: "aquavanjaram"
    DeviceNames: ["Device 0049", "Device 0050"]
    ArchitectureName: "gfx942"
"""


def test_argv_puts_positionals_first_and_global_parameters_last() -> None:
    config = TensileRunConfig(
        config_file=Path("base.yaml"), size_file=Path("sizes.yaml"), output_dir=Path("out"), alternate_format=True,
        use_cache=True, device=1, prebuilt_client=Path("/opt/client"), library_format="msgpack",
        global_parameters=(("NumWarmups", "10"), ("Architecture", "'gfx942'")),
    )  # fmt: skip
    assert build_tensile_argv(config, executable="tensilelite/bin/Tensile") == [
        "tensilelite/bin/Tensile", "base.yaml", "sizes.yaml", "out", "--alternate-format", "--use-cache",
        "--device", "1", "--prebuilt-client", "/opt/client", "--library-format", "msgpack",
        "--global-parameters", "NumWarmups=10", "Architecture='gfx942'",
    ]  # fmt: skip
    assert build_tensile_argv(TensileRunConfig(config_file=Path("c.yaml"), output_dir=Path("o"))) == [
        "Tensile",
        "c.yaml",
        "o",
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"size_file": "s.yaml"}, "alternate_format"), ({"global_parameters": [["A=B", "1"]]}, "global parameter")],
)
def test_config_is_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TensileRunConfig.model_validate({"config_file": "c.yaml", "output_dir": "o", **fields})


# --- client CSV ---------------------------------------------------------------------------


def test_client_csv_fixture(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "tensile_client_bbs_00.csv")
    data = load_client_csv(path)
    assert data.metric == "GFlops" and data.source == str(path)
    assert len(data.solution_names) == 3 and data.solution_names[0].endswith("MT128x128x64_MI16x16x1_SN_GSU1")
    decode, prefill, mlp = data.rows
    assert decode.problem_index == 0 and decode.gemm_size == (6144, 8, 1, 4096)
    assert (decode.ldd, decode.ldc, decode.lda, decode.ldb) == (6144, 6144, 4096, 4096)
    assert decode.total_flops == 402653184 and decode.winner_index == 2
    assert decode.best() == (data.solution_names[2], 1893.27)
    assert prefill.failed == [data.solution_names[2]] and prefill.gflops[data.solution_names[2]] == FAILED
    assert prefill.best() == (data.solution_names[1], 612044.0) and prefill.winner_name == data.solution_names[1]
    assert mlp.gflops[data.solution_names[1]] is None  # not run for this problem
    assert set(mlp.valid) == {data.solution_names[0], data.solution_names[2]}
    assert mlp.line == 4


def test_minimal_csv_quoted_names_and_per_cu_metric() -> None:
    text = (
        'GFlopsPerCU, SizeI, SizeJ, SizeK, SizeL, TotalFlops, "sol,with,commas", plain\n0, 8, 8, 1, 8, 1024, -1, -1\n'
    )
    data = parse_client_csv(text)
    assert data.metric == "GFlopsPerCU" and data.solution_names == ("sol,with,commas", "plain")
    [row] = data.rows
    assert row.best() is None and row.failed == ["sol,with,commas", "plain"]
    assert row.lda is None and row.winner_gflops is None


def test_non_gemm_sizes_are_kept() -> None:
    data = parse_client_csv("GFlops, SizeI, SizeJ, SizeK, s0\n3, 8, 8, 2, 1.5\n")
    assert data.rows[0].sizes == (8, 8, 2)
    with pytest.raises(ValueError, match="not a plain GEMM"):
        _ = data.rows[0].gemm_size


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "empty client CSV"),
        ("transA,transB,m\nN,N,1\n", 1, "not a Tensile client CSV"),
        ("GFlops, SizeI, s0, s0\n0, 1, 2, 3\n", 1, "repeats a column"),
        ("GFlops, SizeI, SizeJ, s0\n0, 1, 2, 3\n1, 1\n", 3, "2 fields but the header has 4"),
        ("GFlops, SizeI, SizeJ, s0\n0, 1, 2, fast\n", 2, "column 's0' is not a number"),
        ("GFlops, SizeI, SizeJ, s0\n0, 1.5, 2, 3\n", 2, "not an integer"),
        ("GFlops, SizeI, SizeJ, s0\n, 1, 2, 3\n", 2, "no problem index"),
        ("GFlops, SizeI, SizeJ, s0\n0, , 2, 3\n", 2, "no SizeI"),
    ],
)
def test_bad_client_csv(text: str, line: int, message: str) -> None:
    with pytest.raises(ToolOutputError, match=message) as caught:
        parse_client_csv(text, source="data.csv")
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.line) == ("data.csv", line)


def test_missing_csv_and_empty_output_dir(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        load_client_csv(tmp_path / "none.csv")
    assert collect_tensile_outputs(tmp_path).benchmark_data == ()


# --- runs ---------------------------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path) -> TensileRunConfig:
    path = tmp_path / "BBS_TN_0.yaml"
    path.write_text(CONFIG)
    return TensileRunConfig(config_file=path, output_dir=tmp_path / "build", global_parameters=(("NumWarmups", "5"),))


def test_fake_driver_run(fake_bin: Path, fake_calls: Calls, config: TensileRunConfig) -> None:
    result = run_tensile(SubprocessRunner(), config, require=("benchmark_data", "logic"))
    [data] = result.benchmark_data
    assert data.source is not None and data.source.endswith("2_BenchmarkData/Cijk_Alik_Bljk_BBS_BH_00_CSVWinner.csv")
    assert [row.gemm_size for row in data.rows] == [(6144, 8, 1, 4096), (6144, 2048, 1, 4096), (28672, 2048, 1, 4096)]
    assert len(data.solution_names) == 3 and all(row.best() is not None for row in data.rows)
    for row in data.rows:
        best = row.best()
        assert best is not None and row.winner_name == best[0]
    [logic] = result.logic_files
    assert logic.name == "gfx942_Cijk_Alik_Bljk_BBS_BH.yaml" and logic.parent.name == "3_LibraryLogic"
    [call] = fake_calls()
    assert call["argv"] == build_tensile_argv(config)[1:]


def test_failed_validation_is_a_result(fake_bin: Path, config: TensileRunConfig) -> None:
    # ExitOnFails (default 1): status 1 right after the CSV is written, no LibraryLogic step.
    result = run_tensile(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_FAIL_SOLUTION": "1"})
    assert (result.returncode, result.client_failures, result.logic_files) == (1, 1, ())
    rows = result.benchmark_data[0].rows
    name = result.benchmark_data[0].solution_names[1]
    assert rows[0].failed == [] and rows[1].failed == [name]
    assert rows[1].best() is not None


def test_failures_with_exit_on_fails_off(fake_bin: Path, config: TensileRunConfig) -> None:
    config.config_file.write_text(CONFIG.replace("KernelTime: True", "KernelTime: True\n  ExitOnFails: 0"))
    result = run_tensile(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_FAIL_SOLUTION": "0"}, require=("logic",))
    assert (result.returncode, result.client_failures, len(result.logic_files)) == (0, 1, 1)


def test_client_failures_line() -> None:
    assert client_failures("# x\nclientExit=0 (PASS) for ['a.yaml']\nclientExit=2 (ERROR) for ['a.yaml']\n") == 2
    assert client_failures("no summary\n") == 0


def test_other_failures_still_raise(config: TensileRunConfig, fixture_path: FixturePath) -> None:
    crashed = FakeRunner(lambda call: FakeResult(returncode=1, stdout="clientExit=1 (ERROR) for x\n"))
    with pytest.raises(ToolFailed):  # status 1 but no CSV was written
        run_tensile(crashed, config)
    killed = FakeRunner(lambda call: FakeResult(returncode=-9, stdout="clientExit=1 (ERROR) for x\n"))
    with pytest.raises(ToolFailed):
        run_tensile(killed, config)


def test_no_driver_run_inherits_a_forced_solution_index(config: TensileRunConfig) -> None:
    """hipblaslt-2026-interfaces.md §4 "`TENSILE_SOLUTION_INDEX`": newer tensilelite's host library
    (which the driver's client loads) answers every query with that solution when it is set."""
    crashed = FakeRunner(lambda call: FakeResult(returncode=2))
    with pytest.raises(ToolFailed):
        run_tensile(crashed, config, env={"OTHER": "1"})
    [call] = crashed.calls
    assert call.env == {"OTHER": "1", "TENSILE_SOLUTION_INDEX": None}


def test_a_driver_that_builds_no_client_is_given_no_client_build_path() -> None:
    """hipblaslt-2026-interfaces.md §3 "removed driver flags": the 2026 driver has no
    --client-build-path (argparse exit 2)."""
    config = TensileRunConfig(config_file=Path("c.yaml"), output_dir=Path("o"), client_build_path=Path("b"))
    assert "--client-build-path" in build_tensile_argv(config, profile=tool_profile("hipblaslt-7d9fb68"))
    with pytest.raises(ValueError, match="builds no client"):
        build_tensile_argv(config, profile=tool_profile("hipblaslt-develop"))


def test_fake_driver_bad_csv_names_file_and_line(fake_bin: Path, config: TensileRunConfig) -> None:
    with pytest.raises(ToolOutputError, match="fields but the header has") as caught:
        run_tensile(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_GARBAGE": "csv"})
    location = caught.value.location
    assert location is not None and location.line == 4
    assert location.file is not None and location.file.endswith("Cijk_Alik_Bljk_BBS_BH_00_CSVWinner.csv")


def test_fake_driver_missing_outputs_and_failures(fake_bin: Path, config: TensileRunConfig, tmp_path: Path) -> None:
    with pytest.raises(ToolOutputError, match="no 2_BenchmarkData"):
        run_tensile(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_GARBAGE": "nocsv"})
    no_logic = tmp_path / "nologic.yaml"
    no_logic.write_text(CONFIG.split("LibraryLogic:")[0])
    bare = config.model_copy(update={"config_file": no_logic, "output_dir": tmp_path / "bare"})
    assert run_tensile(SubprocessRunner(), bare).logic_files == ()
    with pytest.raises(ToolOutputError, match="no 3_LibraryLogic"):
        run_tensile(SubprocessRunner(), bare, require=("logic",))
    with pytest.raises(ToolFailed) as failed:
        run_tensile(SubprocessRunner(), config.model_copy(update={"config_file": tmp_path / "absent.yaml"}))
    assert failed.value.returncode == 255 and "cannot read config" in failed.value.stderr_tail


def test_fake_driver_timeout(fake_bin: Path, config: TensileRunConfig) -> None:
    with pytest.raises(ToolFailed) as caught:
        run_tensile(SubprocessRunner(kill_grace=1), config, env={"TENSILEKIT_FAKE_HANG": "30"}, timeout=0.5)
    assert caught.value.timed_out


def test_run_with_fake_runner_uses_cwd_and_env(config: TensileRunConfig, fixture_path: FixturePath) -> None:
    def handler(call: Any) -> str:
        data = config.output_dir / "2_BenchmarkData"
        data.mkdir(parents=True)
        (data / "x_00.csv").write_text(fixture_path("logs", "tensile_client_bbs_00.csv").read_text())
        return "# Tensile DONE\n"

    runner = FakeRunner(handler)
    result = run_tensile(runner, config, cwd="/work", env={"ROCM_PATH": "/opt/rocm"})
    assert len(result.benchmark_data[0].rows) == 3
    assert runner.calls[0].cwd == "/work" and runner.calls[0].env == {
        "ROCM_PATH": "/opt/rocm",
        "TENSILE_SOLUTION_INDEX": None,
    }


@pytest.mark.parametrize("flavour", ["tensilelite", "tensile"])
def test_fake_driver_version_columns_are_not_solutions(fake_bin: Path, config: TensileRunConfig, flavour: str) -> None:
    # tensilelite @7d9fb68 adds TilesPerCu/TotalGranularity, ROCm/Tensile @09ec347 always adds
    # WinnerFreq/WinnerPower/WinnerTemperature (ResultFileReporter.cpp); none is a solution.
    result = run_tensile(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_FLAVOUR": flavour})
    [data] = result.benchmark_data
    assert len(data.solution_names) == 3
    assert all(name.startswith("Cijk_") for name in data.solution_names)
    assert data.source is not None
    assert solutions_file_for(data.source).name == "Cijk_Alik_Bljk_BBS_BH_00_CSVWinner.yaml"
    assert solutions_file_for(data.source).is_file()


def test_extra_columns_anywhere_in_the_header_are_not_solutions() -> None:
    # Matched by name, never by position: the same columns in another order parse the same.
    text = (
        "GFlops, SizeI, SizeJ, SizeK, SizeL, LDD, LDC, LDA, LDB, WinnerFreq, WinnerGFlops, WinnerTimeUS, WinnerIdx, "
        "WinnerName, TotalFlops, WinnerPower, WinnerTemperature, KernelA, KernelB\n"
        "0, 64, 64, 1, 64, 64, 64, 64, 64, 2100, 10, 52.4, 1, KernelB, 524288, 550, 61, 5, 10\n"
    )
    data = parse_client_csv(text)
    assert data.solution_names == ("KernelA", "KernelB")
    assert data.rows[0].total_flops == 524288 and data.rows[0].winner_name == "KernelB"
    lite = parse_client_csv(
        "GFlops, SizeI, SizeJ, SizeK, SizeL, TotalFlops, TilesPerCu, TotalGranularity, KernelA\n"
        "0, 64, 64, 1, 64, 524288, 0.01, 0.5, 5\n"
    )
    assert lite.solution_names == ("KernelA",)
    assert not NON_SOLUTION_COLUMNS & set(data.solution_names)


def test_driver_flags_follow_the_release(config: TensileRunConfig) -> None:
    from tensilekit.tools.profiles import tool_profile

    cached = config.model_copy(update={"use_cache": True, "logic_format": "json"})
    argv = build_tensile_argv(cached, profile=tool_profile("hipblaslt-7d9fb68"))
    assert "--use-cache" in argv and "--logic-format" in argv
    with pytest.raises(ValueError, match="has no --use-cache"):  # ROCm/Tensile: --no-cache only
        build_tensile_argv(cached, profile=tool_profile("tensile-09ec347"))
    assert build_tensile_argv(config, profile=tool_profile("tensile-a164ed70")) == build_tensile_argv(config)

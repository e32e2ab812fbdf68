"""hipblaslt-bench: argv and --yaml builders, the output parser, and runs against the fake tool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from tensilekit.errors import ToolFailed, ToolOutputError
from tensilekit.tools.hipblaslt_bench import (
    LIBRARY_PATH_ENV,
    SCRUBBED_ENV,
    AlgoMethod,
    BenchOptions,
    NotExpressible,
    bench_problem_issue,
    build_bench_argv,
    build_bench_yaml_argv,
    compare_libraries,
    dump_bench_yaml,
    library_env,
    parse_bench_output,
    run_bench,
    run_bench_yaml,
)
from tensilekit.tools.profiles import bench_version, tool_profile
from tensilekit.tools.runner import CommandCall, FakeResult, FakeRunner, SubprocessRunner
from tensilekit.workload.hipblaslt_log import parse_profile_line
from tensilekit.workload.problem import GemmProblem

Calls = Callable[[], list[dict[str, Any]]]

QKV = GemmProblem(m=6144, n=8, k=4096, trans_a="T", a_type="bf16_r")
HEADER = (
    "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,"
    "a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,activation_type,bias_vector,"
    "bias_type,hipblaslt-Gflops,hipblaslt-GB/s,us"
)
VALUES = "T,N,0,1,6144,8,4096,1,4096,25165824,0,4096,32768,6144,49152,6144,49152,bf16_r,bf16_r,bf16_r,bf16_r,f32_r,0,0,0,0,0,none,0,non-supported type"


# --- options and argv ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"solution_index": 3}, "needs algo_method='index'"),
        ({"algo_method": "index"}, "needs a solution_index"),
        ({"algo_method": "all", "requested_solution": -1}, "only valid with algo_method='heuristic'"),
        ({"iters": 0}, "greater than or equal to 1"),
        ({"bogus": 1}, "extra"),
    ],
)
def test_bench_options_are_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        BenchOptions.model_validate(fields)


def test_argv_for_one_problem() -> None:
    options = BenchOptions(algo_method=AlgoMethod.INDEX, solution_index=302671, iters=100, cold_iters=20,
                           rotating=512, verify=True, flush=True)  # fmt: skip
    assert build_bench_argv(QKV, options) == [
        "hipblaslt-bench", "-m", "6144", "-n", "8", "-k", "4096",
        "--lda", "4096", "--ldb", "4096", "--ldc", "6144", "--ldd", "6144",
        "--stride_a", "25165824", "--stride_b", "32768", "--stride_c", "49152", "--stride_d", "49152",
        "--alpha", "1", "--beta", "0", "--transA", "T", "--transB", "N", "--batch_count", "1",
        "--a_type", "bf16_r", "--b_type", "bf16_r", "--c_type", "bf16_r", "--d_type", "bf16_r",
        "--compute_type", "f32_r", "--scale_type", "f32_r",
        "--algo_method", "index", "--solution_index", "302671",
        "--iters", "100", "--cold_iters", "20", "--rotating", "512",
        "--verify", "--flush", "--print_kernel_info",
    ]  # fmt: skip


def test_argv_epilogue_scales_and_compute_spellings() -> None:
    problem = GemmProblem(m=64, n=64, k=64, a_type="f8_r", c_type="bf16_r", scale_a=2, scale_b=2, bias=True,
                          bias_type="bf16_r", bias_source="a", activation="gelu", swizzle_a=True, alpha=0.5)  # fmt: skip
    argv = build_bench_argv(
        problem, BenchOptions(print_kernel_info=False, requested_solution=-1), executable="/opt/bench"
    )
    assert argv[0] == "/opt/bench"
    joined = " ".join(argv)
    for part in ("--scaleA 2 --scaleB 2", "--swizzleA", "--bias_vector --bias_source a --bias_type bf16_r",
                 "--activation_type gelu", "--alpha 0.5", "--algo_method heuristic --requested_solution -1"):  # fmt: skip
        assert part in joined
    assert "--print_kernel_info" not in argv
    tf32 = GemmProblem(m=8, n=8, k=8, a_type="f32_r", compute_type="c_xf32_r")
    assert build_bench_argv(tf32)[build_bench_argv(tf32).index("--compute_type") + 1] == "xf32_r"
    with pytest.raises(ValueError, match="grouped"):
        build_bench_argv(problem.model_copy(update={"grouped_gemm": True}))


def test_argv_round_trips_through_the_bench_line_parser() -> None:
    from tensilekit.workload.hipblaslt_log import parse_bench_line

    problem = GemmProblem(
        m=96, n=40, k=72, batch=3, trans_b="T", a_type="f16_r", beta=1.0, bias=True, bias_type="f16_r"
    )
    [back] = parse_bench_line(" ".join(build_bench_argv(problem, BenchOptions(algo_method="index", solution_index=9))))
    assert back.identity() == problem.identity() and back.solution_index == 9


def test_yaml_batch_file() -> None:
    options = BenchOptions(algo_method="all", iters=50, cold_iters=10, rotating=256)
    text = dump_bench_yaml([QKV, QKV.model_copy(update={"n": 16})], options)
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("- {function: matmul, M: 6144, N: 8, K: 4096, lda: 4096")
    records = yaml.safe_load(text)
    assert records[1]["N"] == 16
    assert records[0]["compute_type"] == "c_f32_r" and records[0]["transA"] == "T"
    assert (records[0]["algo_method"], records[0]["iters"], records[0]["rotating"]) == (1, 50, 256)
    assert records[0]["print_kernel_info"] is True and "bias_type" not in records[0]
    # The records are valid profile lines again (same field names), so the problem survives.
    assert parse_profile_line(lines[0]).identity() == QKV.identity()
    assert build_bench_yaml_argv("cases.yaml") == ["hipblaslt-bench", "--yaml", "cases.yaml"]


def test_library_env_switch() -> None:
    assert library_env(None) == {LIBRARY_PATH_ENV: None}
    assert library_env(Path("/tuned/library")) == {LIBRARY_PATH_ENV: "/tuned/library"}


# --- output parsing -----------------------------------------------------------------------


def test_real_outputs_from_the_hipblaslt_readme(corpus: Path) -> None:
    text = (corpus / "samples/hipblaslt/files/clients_benchmarks_README.md").read_text()
    output = parse_bench_output(text, source="README.md")
    assert [result.line for result in output.results] == [85, 91, 97]
    verify, freq, freq_all = output.results
    assert verify.values["bias_type"] == "non-supported type"
    assert (verify.gflops, verify.us, verify.gbps) == (403.298, 10.4, 17.6063)
    assert verify.number("norm_error") == 2.44879e-07 and verify.number("missing") is None
    assert freq.values["lowest-avg-freq"] == "136" and freq_all.values["avg-freq_7"] == "141"
    problem = freq.to_problem()
    assert (problem.m, problem.n, problem.k, problem.gemm_type) == (16, 16, 4096, "BBS_TN")
    assert output.winner is None and output.best() is verify


def test_old_header_without_rank(corpus: Path) -> None:
    text = (corpus / "samples/hipblaslt/excerpts/bench_output_old_format_clients_rst.L56-57.txt").read_text()
    [result] = parse_bench_output(text).results
    assert result.rank is None and result.us == 10.0 and result.gflops == 415.278
    problem = result.to_problem()  # M/N/K upper case, only d_type named
    assert (problem.m, problem.a_type, problem.gemm_type) == (128, "f32_r", "SSS_NN")


def test_newer_doc_layouts(corpus: Path) -> None:
    winner = parse_bench_output(
        (corpus / "samples/hipblaslt-newer-docs/offline_tuning_doc__winner_output.txt").read_text()
    )
    assert winner.results == () and winner.winner is not None
    assert winner.winner.solution_index == 56537 and winner.winner.kernel_name == "<kernel_name>"
    assert winner.best() is winner.winner and winner.winner.values["rotating_buffer"] == "512"
    heuristic = parse_bench_output(
        (corpus / "samples/hipblaslt-newer-docs/offline_tuning_doc__heuristic_output.txt").read_text()
    )
    [result] = heuristic.results
    assert result.rank == 0 and result.gflops == 37575.2 and result.solution_index == 56537


def test_all_solutions_with_winner_and_kernel_info() -> None:
    text = "\n".join([
        "hipBLASLt version: 100200",
        "with 206.1 GB memory, max. SCLK 2100 MHz, max. MCLK 1300 MHz, compute capability 9.4",
        "Is supported 2 / Total solutions: 2",
        f"[0]:{HEADER}", f"    {VALUES},1000,10,0.4",
        "    --Solution index: 11", "    --Solution name:  Cijk_A", "    --kernel name:    Cijk_A",
        f"[1]:{HEADER}", f"    {VALUES},1500,15,0.3",
        "    --Solution index: 12", "    --Solution name:  Cijk_B", "    --kernel name:    Cijk_B",
        "    --adaptive: batch=4 samples=20 converged",
        "Winner: ", f"[1]:{HEADER}", f"    {VALUES},1500,15,0.3",
        "    --Solution index: 12", "    --Solution name:  Cijk_B", "    --kernel name:    Cijk_B",
    ])  # fmt: skip
    output = parse_bench_output(text)
    assert [(r.rank, r.solution_index, r.kernel_name) for r in output.results] == [(0, 11, "Cijk_A"), (1, 12, "Cijk_B")]
    assert output.winner is not None and output.winner.winner and output.winner.solution_index == 12
    problem = output.winner.to_problem()
    assert problem.solution_index == 12 and problem.kernel_name == "Cijk_B"
    assert problem.identity() == QKV.identity()


def test_grouped_gemm_tuples_keep_their_commas() -> None:
    text = f"[0]:{HEADER}\n    N,N,2,1,(128,256),(64,64),(32,32),1,(128,256),(4096,8192),0,(32,32),(2048,2048),(128,256),(8192,16384),(128,256),(8192,16384),f16_r,f16_r,f16_r,f16_r,f32_r,0,0,0,0,0,none,0,f16_r,900,9,1.5\n"
    [result] = parse_bench_output(text).results
    assert result.values["m"] == "(128,256)" and result.gflops == 900.0
    with pytest.raises(ValueError, match="grouped"):
        result.to_problem()


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (f"banner\n[0]:{HEADER}\n    {VALUES},1,2\n", 3, "32 fields but the header has 33"),
        (f"[0]:{HEADER}\n    {VALUES},fast,2,3\n", 2, "hipblaslt-Gflops is not a number"),
        (f"[0]:{HEADER}\n    {VALUES},1,2,3\n    --Solution index: twelve\n", 3, "not an integer"),
    ],
)
def test_unparsable_output_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ToolOutputError, match=message) as caught:
        parse_bench_output(text, source="bench.out")
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.line) == ("bench.out", line)


def test_output_without_results_is_empty() -> None:
    assert parse_bench_output("hipBLASLt version: 1\nnothing, here\n").results == ()


# --- runs through a FakeRunner ------------------------------------------------------------


def bench_stdout(gflops: str) -> str:
    return f"[0]:{HEADER}\n    {VALUES},{gflops},1,2\n    --Solution index: 5\n"


def test_run_bench_passes_argv_and_library_switch() -> None:
    runner = FakeRunner(lambda call: bench_stdout("2000" if call.env.get(LIBRARY_PATH_ENV) else "1000"))
    comparison = compare_libraries(runner, QKV, "/work/tuned/library", env={"OTHER": "1"}, timeout=30)
    reference_call, tuned_call = runner.calls
    assert reference_call.argv == tuple(build_bench_argv(QKV))
    assert reference_call.env == {"OTHER": "1", LIBRARY_PATH_ENV: None, **dict.fromkeys(SCRUBBED_ENV)}
    assert tuned_call.env[LIBRARY_PATH_ENV] == "/work/tuned/library" and tuned_call.timeout == 30
    assert comparison.speedup == 2.0


def test_run_bench_failures() -> None:
    failing = FakeRunner(lambda call: FakeResult(returncode=1, stderr="hipErrorNoDevice"))
    with pytest.raises(ToolFailed, match="status 1") as caught:
        run_bench(failing, QKV)
    assert caught.value.stderr_tail == "hipErrorNoDevice"
    with pytest.raises(ToolOutputError, match="no result rows"):
        run_bench(FakeRunner(lambda call: "Is supported 0 / Total solutions: 0\n"), QKV)

    def timed_out(call: CommandCall) -> str:
        raise ToolFailed("hipblaslt-bench timed out", argv=call.argv, timed_out=True)

    with pytest.raises(ToolFailed) as slow:
        run_bench(FakeRunner(timed_out), QKV, timeout=1)
    assert slow.value.timed_out


# --- runs against the fake executable -----------------------------------------------------


def test_fake_bench_heuristic_run(fake_bin: Path, fake_calls: Calls) -> None:
    output = run_bench(SubprocessRunner(), QKV)
    [result] = output.results
    assert result.solution_index == 1000 and result.gflops is not None and result.gflops > 0
    assert result.to_problem().identity() == QKV.identity()
    [call] = fake_calls()
    assert call["argv"] == build_bench_argv(QKV)[1:] and call["libpath"] is None


def test_fake_bench_all_solutions(fake_bin: Path) -> None:
    options = BenchOptions(algo_method="all", rotating=512, verify=True)
    output = run_bench(SubprocessRunner(), QKV, options, env={"TENSILEKIT_FAKE_SOLUTIONS": "4"})
    assert len(output.results) == 4 and output.winner is not None
    fastest = max(output.results, key=lambda result: result.gflops or 0)
    assert output.winner.solution_index == fastest.solution_index
    assert output.winner.values["rotating_buffer"] == "512" and "norm_error" in output.winner.values


def test_fake_bench_index_run(fake_bin: Path) -> None:
    output = run_bench(SubprocessRunner(), QKV, BenchOptions(algo_method="index", solution_index=4242))
    assert [result.solution_index for result in output.results] == [4242]


def test_an_exported_tuning_file_does_not_turn_screens_into_heuristic_runs(
    fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hipblaslt-2026-interfaces.md §1 "--algo_method" / "HIPBLASLT_TUNING_FILE side effects": a
    2026 bench with HIPBLASLT_TUNING_FILE set runs --algo_method all/index as heuristic (and exits 1
    on another build's file). A user's exported tuning file never reaches a benchmark."""
    tuning = tmp_path / "tuning.txt"
    tuning.write_text("Git Version: 7d9fb683\n")
    monkeypatch.setenv("HIPBLASLT_TUNING_FILE", str(tuning))
    monkeypatch.setenv("TENSILE_SOLUTION_INDEX", "1000")
    output = run_bench(SubprocessRunner(), QKV, BenchOptions(algo_method="index", solution_index=4242))
    assert [result.solution_index for result in output.results] == [4242]
    screen = BenchOptions(algo_method="all", requested_solution=None)
    assert len(run_bench(SubprocessRunner(), QKV, screen, env={"TENSILEKIT_FAKE_SOLUTIONS": "4"}).results) == 4
    assert tuning.read_text() == "Git Version: 7d9fb683\n"  # neither read nor rewritten


def test_fake_bench_yaml_batch(fake_bin: Path, tmp_path: Path) -> None:
    problems = [QKV, QKV.model_copy(update={"n": 2048}), GemmProblem(m=128, n=1, k=2056, batch=256, a_type="bf16_r")]
    cases = tmp_path / "cases.yaml"
    cases.write_text(dump_bench_yaml(problems, BenchOptions(iters=10)))
    output = run_bench_yaml(SubprocessRunner(), cases)
    assert [result.to_problem().identity() for result in output.results] == [p.identity() for p in problems]


def test_fake_bench_reference_versus_tuned(fake_bin: Path, fake_calls: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    # An inherited setting must not turn the reference run into a tuned one.
    monkeypatch.setenv(LIBRARY_PATH_ENV, "/stale/library")
    comparison = compare_libraries(SubprocessRunner(), QKV, "/tuned/library")
    assert comparison.speedup == pytest.approx(1.25)
    tuned = comparison.tuned.best()
    assert tuned is not None and tuned.kernel_name is not None and tuned.kernel_name.startswith("Tuned")
    assert [call["libpath"] for call in fake_calls()] == [None, "/tuned/library"]


@pytest.mark.parametrize(
    ("garbage", "message"),
    [("rows", "fields but the header has"), ("number", "is not a number"), ("junk", "no result rows")],
)
def test_fake_bench_garbage_output(fake_bin: Path, garbage: str, message: str) -> None:
    with pytest.raises(ToolOutputError, match=message):
        run_bench(SubprocessRunner(), QKV, env={"TENSILEKIT_FAKE_GARBAGE": garbage})


def test_fake_bench_failure_and_timeout(fake_bin: Path) -> None:
    with pytest.raises(ToolFailed) as failed:
        run_bench(SubprocessRunner(), QKV, env={"TENSILEKIT_FAKE_EXIT": "134"})
    assert failed.value.returncode == 134 and "simulated failure" in failed.value.stderr_tail
    with pytest.raises(ToolFailed) as slow:
        run_bench(SubprocessRunner(kill_grace=1), QKV, env={"TENSILEKIT_FAKE_HANG": "30"}, timeout=0.5)
    assert slow.value.timed_out


def test_fake_bench_rejects_unknown_flags(fake_bin: Path) -> None:
    completed = SubprocessRunner().run(["hipblaslt-bench", "--no-such-flag"])
    assert completed.returncode != 0 and "Option --no-such-flag is not defined." in completed.stderr


def test_newer_column_set_maps_back_to_the_problem() -> None:
    header = (
        "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,"
        "a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,swizzle_a,swizzle_b,"
        "activation_type,bias_vector,bias_type,aux_type,rotating_buffer,flush,use_gpu_timer,hipblaslt-Gflops,"
        "hipblaslt-GB/s,us"
    )
    values = (
        "T,N,0,1,7168,16,2048,1,2048,14680064,0,2048,32768,7168,114688,7168,114688,f8_r,f8_r,bf16_r,bf16_r,"
        "f32_r,1,1,0,0,0,0,1,none,1,bf16_r,bf16_r,512,1,1,7301.5,465.2,64.35"
    )
    [result] = parse_bench_output(f"Is supported 1 / Total solutions: 1\n[0]:{header}\n    {values}\n").results
    problem = result.to_problem()
    assert (problem.gemm_type, problem.scale_a, problem.swizzle_b, problem.swizzle_a) == ("F8BS_TN", 1, True, False)
    assert (problem.bias, problem.bias_type, problem.aux_type) == (True, "bf16_r", None)  # aux only with use_e
    assert result.values["rotating_buffer"] == "512" and result.us == 64.35


def test_failed_tolerances_mean_that_kernel_failed_verification(fake_bin: Path) -> None:
    # argument_model.hpp:128-145 @7d9fb68 prints `failed` when no tolerance <= 0.1 passes.
    options = BenchOptions(algo_method="all", verify=True)
    output = run_bench(SubprocessRunner(), QKV, options, env={"TENSILEKIT_FAKE_VERIFY_FAIL": "1001"})
    failed = [result.solution_index for result in output.results if result.verification_failed]
    assert failed == [1001]
    broken = next(result for result in output.results if result.solution_index == 1001)
    assert broken.number("atol") is None and broken.number("norm_error") is not None
    assert broken.measurement_error() is None


@pytest.mark.parametrize("bad", ["nan", "inf", "0", "-2.5"])
def test_impossible_times_are_measurement_errors(fake_bin: Path, bad: str) -> None:
    output = run_bench(SubprocessRunner(), QKV, env={"TENSILEKIT_FAKE_BAD_US": bad})
    [result] = output.results
    assert result.measurement_error() is not None and bad in (result.measurement_error() or "")


SCALED_FP8 = GemmProblem(m=4096, n=4096, k=4096, trans_a="T", a_type="f8_fnuz_r", b_type="f8_fnuz_r", c_type="bf16_r",
                         d_type="bf16_r", scale_a=1, scale_b=2)  # fmt: skip


def test_argv_follows_the_tool_profile() -> None:
    old, new = tool_profile("hipblaslt-7d9fb68"), tool_profile("hipblaslt-develop")
    argv = build_bench_argv(SCALED_FP8, profile=old)
    # 7d9fb68 takes s/v (client.cpp:484-490) and names gfx942's FNUZ fp8 f8_r
    assert argv[argv.index("--scaleA") + 1] == "s" and argv[argv.index("--scaleB") + 1] == "v"
    assert argv[argv.index("--a_type") + 1] == "f8_r"
    newer = build_bench_argv(SCALED_FP8, profile=new)
    assert newer[newer.index("--scaleA") + 1] == "1" and newer[newer.index("--a_type") + 1] == "f8_fnuz_r"
    assert build_bench_argv(SCALED_FP8) == newer  # no profile: the newer spellings


@pytest.mark.parametrize(
    ("changes", "words"),
    [({"scale_c": 1}, "--scaleC"), ({"swizzle_a": True}, "--swizzleA"), ({"aux_type": "bf16_r", "use_e": True,
      "activation": "gelu"}, "--aux_type"), ({"batch_mode": 1}, "--batch_mode"), ({"scale_a": 3}, "scale mode 3"),
     ({"a_type": "f4_r", "b_type": "f4_r"}, "has no data type f4_r")],
)  # fmt: skip
def test_gemms_an_older_bench_cannot_express_are_refused(changes: dict[str, Any], words: str) -> None:
    problem = SCALED_FP8.model_copy(update=changes)
    old = tool_profile("hipblaslt-7d9fb68")
    issue = bench_problem_issue(problem, old)
    assert issue is not None and words in issue
    with pytest.raises(NotExpressible, match=words):
        build_bench_argv(problem, profile=old)
    assert bench_problem_issue(problem, tool_profile("hipblaslt-develop")) is None
    if "batch_mode" in changes:
        argv = build_bench_argv(problem, profile=tool_profile("hipblaslt-develop"))
        assert argv[argv.index("--batch_mode") + 1] == "1"  # never dropped (replayed as strided)


def test_fake_bench_of_each_profile(fake_bin: Path) -> None:
    old_env = {"TENSILEKIT_FAKE_PROFILE": "hipblaslt-7d9fb68"}
    runner = SubprocessRunner()
    plain_fp8 = SCALED_FP8.model_copy(update={"a_type": "f8_r", "b_type": "f8_r"})
    refused = runner.run(build_bench_argv(plain_fp8.model_copy(update={"scale_c": 1})), env=old_env)
    assert refused.returncode != 0 and "Option --scaleC is not defined." in refused.stderr
    fnuz = runner.run(build_bench_argv(SCALED_FP8), env=old_env)
    assert fnuz.returncode != 0 and "Invalid value for --a_type" in fnuz.stderr
    # 7d9fb68 silently reads --scaleA 1 as "no scaling": the profile's "s" is what it measures scaled
    unscaled = run_bench(runner, plain_fp8, env=old_env)
    assert unscaled.results[0].values["scaleA"] == "0"
    scaled = run_bench(runner, SCALED_FP8, env=old_env, profile=tool_profile("hipblaslt-7d9fb68"))
    assert scaled.results[0].values["scaleA"] == "1" and scaled.results[0].values["scaleB"] == "2"
    # The banner names hipBLASLt, not its tensilelite: it is reported, never used to pick the profile.
    for name, version in (("hipblaslt-7d9fb68", "hipBLASLt 0.11.0"), ("hipblaslt-develop", "hipBLASLt 1.2.0")):
        banner = runner.run(["hipblaslt-bench", "--version"], env={"TENSILEKIT_FAKE_PROFILE": name}).stdout
        assert bench_version(banner).startswith(version)

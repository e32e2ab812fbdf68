"""Preflight: missing tools, unreadable inputs and unknown GPUs stop a real run at once with one
clear message and the right exit code; the pipeline then speaks the detected release's command line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.executors.local import SerialExecutor
from tensilekit.pipeline.progress import NullReporter
from tensilekit.pipeline.stage import StageContext
from tensilekit.pipeline.stages.common import create_library

from .conftest import LLAMA_LOG, write_fake_library_logic
from .standin_support import EQUALITY
from .standin_support import create_library as create_standin_library

BBS_TN = "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs.yaml"
F8HS_TN = "aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"

# hipBLASLt 7d9fb68's mask-32 lines (tensile_host.cpp:453-540 @7d9fb68): a bf16 GEMM, an fp8 GEMM
# scaled with `s`, and one with the bare --scaleC/--scaleD that release logs but cannot replay.
OLD_LOG = """\
hipblaslt-bench --api_method c -m 4096 -n 2048 -k 4096 --lda 4096 --ldb 4096 --ldc 4096 --ldd 4096 --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0 --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 --a_type bf16_r --b_type bf16_r --c_type bf16_r --d_type bf16_r --scale_type f32_r --bias_type --compute_type f32_r
hipblaslt-bench --api_method c -m 4096 -n 1024 -k 4096 --lda 4096 --ldb 4096 --ldc 4096 --ldd 4096 --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0 --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 --scaleA s --scaleB s --a_type f8_r --b_type f8_r --c_type bf16_r --d_type bf16_r --scale_type f32_r --bias_type --compute_type f32_r
hipblaslt-bench --api_method c -m 2048 -n 1024 -k 4096 --lda 4096 --ldb 4096 --ldc 2048 --ldd 2048 --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0 --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 --scaleA s --scaleB s --scaleC --scaleD --a_type f8_r --b_type f8_r --c_type f8_r --d_type f8_r --scale_type f32_r --bias_type --compute_type f32_r
"""


def run(args: list[str], env: dict[str, str]) -> tuple[int, str, float]:
    started = time.monotonic()
    result = CliRunner().invoke(cli, args, env=env)
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes else ""), time.monotonic() - started


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return write_fake_library_logic(tmp_path / "logic")


def base_args(tmp_path: Path, library: Path, *extra: str) -> list[str]:
    return ["tune", str(LLAMA_LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "W"), "--library-logic",
            str(library), *extra]  # fmt: skip


def test_missing_tool_is_one_message_exit_4(fake_tools: Path, tmp_path: Path, library: Path) -> None:
    code, output, seconds = run(base_args(tmp_path, library, "--bench-executable", "no-such-bench"), {})
    assert code == 4 and "'no-such-bench' was not found on PATH" in output and seconds < 10
    assert not (tmp_path / "W" / "03_baseline").exists()  # no work was started


def test_unrunnable_tool_is_exit_4(fake_tools: Path, tmp_path: Path, library: Path) -> None:
    code, output, _ = run(base_args(tmp_path, library), {"TENSILEKIT_FAKE_EXIT": "127"})
    assert code == 4 and "hipblaslt-bench cannot run" in output and "status 127" in output
    code, output, _ = run(base_args(tmp_path, library, "--mode", "ga", "--tensile-executable", "NoTensile"), {})
    assert code == 4 and "the Tensile benchmark driver 'NoTensile' was not found" in output


def test_unreadable_library_logic_is_exit_3(fake_tools: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, words in ((tmp_path / "absent", "is not a directory"), (empty, "holds no logic files")):
        code, output, seconds = run(base_args(tmp_path, folder), {})
        assert code == 3 and words in output and seconds < 10


def test_gpu_the_tools_do_not_know_is_exit_4(fake_tools: Path, tmp_path: Path, library: Path) -> None:
    args = base_args(tmp_path, library)
    args[args.index("gfx942")] = "gfx950"
    code, output, _ = run(args, {"TENSILEKIT_FAKE_PROFILE": "hipblaslt-7d9fb68"})
    assert code == 4 and "hipBLASLt 7d9fb68" in output and "does not support gfx950" in output


def test_bad_option_combinations_are_usage_errors(tmp_path: Path) -> None:
    args = ["tune", "--simulate", str(LLAMA_LOG), "--arch", "gfx942", "--workdir", str(tmp_path / "W")]
    code, output, _ = run([*args, "--mode", "ga", "--population", "2"], {})
    assert code == 2 and "population" in output
    code, output, _ = run([*args, "--tool-profile", "rocm-9"], {})
    assert code == 2


def test_the_pipeline_speaks_the_7d9fb68_command_line(
    fake_tools: Path, tmp_path: Path, corpus: Path, amd: Path, standins: Path
) -> None:
    """The stand-in hipblaslt-bench refuses --scaleA s|v ("not modelled"), so this one runs the fake,
    which plays 7d9fb68's command line; the library logic is AMD's (a bf16 TN file). The fake's
    TensileCreateLibrary writes no library tensilekit could read, so the reference library (which
    every reference run loads) is the stand-in TensileCreateLibrary's build of the same file."""
    log = tmp_path / "old.log"
    log.write_text(OLD_LOG)
    library = tmp_path / "logic"
    library.mkdir()
    (library / BBS_TN).write_bytes((corpus / EQUALITY / BBS_TN).read_bytes())
    reference = create_standin_library(standins, library, tmp_path / "reference", tmp_path / "tcl-cwd")
    calls = tmp_path / "calls.jsonl"
    env = {"TENSILEKIT_FAKE_PROFILE": "hipblaslt-7d9fb68", "TENSILEKIT_FAKE_ARGV_LOG": str(calls)}
    args = ["tune", str(log), "--arch", "gfx942", "--workdir", str(tmp_path / "W"), "--library-logic", str(library),
            "--custom-kernels", str(amd / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels"),
            "--reference-library", str(reference), "--top-k", "1"]  # fmt: skip
    code, output, _ = run(args, env)
    assert code == 0, output
    workdir = tmp_path / "W"
    assert "tool profile hipblaslt-7d9fb68" in (workdir / "tune.log").read_text()
    report = json.loads((workdir / "report.json").read_text())
    statuses = {gemm["m"]: gemm["status"] for gemm in report["gemms"]}
    # the --scaleC GEMM is reported, never replayed without its C/D scaling
    assert statuses[2048].startswith("not expressible:") and "--scaleC" in statuses[2048]
    argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    bench = [argv for argv in argvs if "-m" in argv]
    assert bench and all("--scaleC" not in argv and "2048" != argv[argv.index("-m") + 1] for argv in bench)
    fp8 = [argv for argv in bench if "f8_r" in argv]
    assert fp8 and all(argv[argv.index("--scaleA") + 1] == "s" for argv in fp8)  # 7d9fb68's spelling
    assert os.path.isfile(workdir / "report.md")


@pytest.mark.parametrize(("profile", "lazy_flags"), [("hipblaslt-7d9fb68", True), ("hipblaslt-develop", False)])
def test_each_release_gets_its_own_create_library_command_line(
    fake_tools: Path, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch, profile: str, lazy_flags: bool
) -> None:
    """The build stage's TensileCreateLibrary call, as each release's argparse takes it (the fake
    plays both: the stand-in is 7d9fb683 only)."""
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TENSILEKIT_FAKE_PROFILE", profile)
    monkeypatch.setenv("TENSILEKIT_FAKE_ARGV_LOG", str(calls))
    logic = tmp_path / "05_build" / "logic"
    logic.mkdir(parents=True)
    (logic / F8HS_TN).write_bytes((corpus / EQUALITY / F8HS_TN).read_bytes())
    config = TuneConfig(logs=(LLAMA_LOG,), arch="gfx942", workdir=tmp_path, tool_profile=profile)
    context = StageContext(
        name="build", number=5, directory=tmp_path / "05_build", run_root=tmp_path, config=config,
        executor=SerialExecutor(0, timeout=300), reporter=NullReporter(), upstream={},
    )  # fmt: skip
    library = create_library(context, config, logic)
    [build] = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    # 7d9fb68 needs --merge-files --separate-architectures for lazy loading; rocm-libraries has none
    assert ("--lazy-library-loading" in build and "--merge-files" in build) is lazy_flags
    # ... and writes library/<arch>/ (Run.py @00ee1f9d libraryDir) where 7d9fb68 writes library/.
    # hipBLASLt reads HIPBLASLT_TENSILE_LIBPATH as is, so the tuned runs must name the master's folder.
    assert library == tmp_path / "05_build" / "tcl" / "library" / ("" if lazy_flags else "gfx942")
    assert (library / "TensileLibrary_lazy_gfx942.dat").is_file()


def test_every_missing_tool_is_named_with_the_option_that_supplies_it(
    fake_tools: Path, tmp_path: Path, library: Path
) -> None:
    args = base_args(tmp_path, library, "--mode", "ga", "--bench-executable", "no-bench",
                     "--create-library-executable", "no-tcl", "--tensile-executable", "no-tensile")  # fmt: skip
    code, output, _ = run(args, {})
    assert code == 4 and "3 tools are missing" in output
    for name, option in (("no-bench", "--bench-executable"), ("no-tcl", "--create-library-executable"),
                         ("no-tensile", "--tensile-executable")):  # fmt: skip
        assert f"'{name}' was not found on PATH; install it or pass its path with {option}" in output
    assert not (tmp_path / "W" / "03_baseline").exists()

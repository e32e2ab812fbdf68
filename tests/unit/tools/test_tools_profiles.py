"""Which AMD release the installed tools are: decided from what the tools are, not from a
hipBLASLt version threshold (hipBLASLt 0.11 to 0.14 all ship tensilelite 4.33.0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.preflight import preflight
from tensilekit.tools.profiles import (
    bench_version,
    create_library_flavor_from_help,
    profile_for_tools,
    tensile_version_from_output,
    tool_profile,
)
from tensilekit.tools.runner import SubprocessRunner


def _logic(tmp_path: Path) -> Path:
    folder = tmp_path / "logic"
    folder.mkdir()
    (folder / "a.yaml").write_text("- {MinimumRequiredVersion: 4.33.0}\n")
    return folder


def test_the_7d9fb683_stand_ins_are_tensilelite_4(standins: Path, tmp_path: Path) -> None:
    """hipBLASLt 7d9fb683 prints `hipBLASLt version: 1100` (0.11.0) and is tensilelite 4.33.0, which
    refuses `MinimumRequiredVersion: 5.0.0`: its profile is 7d9fb68's, not develop's."""
    banner = SubprocessRunner().run([str(standins / "hipblaslt-bench"), "--version"]).stdout
    assert "hipBLASLt version: 1100" in banner and bench_version(banner) == "hipBLASLt 0.11.0 (git 7d9fb683)"
    config = TuneConfig(
        logs=(tmp_path / "x.log",), arch="gfx942", workdir=tmp_path / "W", library_logic=_logic(tmp_path),
        bench_executable=str(standins / "hipblaslt-bench"),
        create_library_executable=str(standins / "TensileCreateLibrary"),
    )  # fmt: skip
    decided, messages = preflight(config)
    assert decided.tool_profile == "hipblaslt-7d9fb68"
    assert decided.hipblaslt_profile().minimum_required_version == "4.33.0"
    assert decided.hipblaslt_profile().create_library_flavor == "hipblaslt-2024"
    [message] = messages
    assert "--lazy-library-loading" in message and "hipBLASLt 0.11.0 (git 7d9fb683)" in message


def test_create_library_options_tell_the_generation(standins: Path) -> None:
    help_2024 = SubprocessRunner().run([str(standins / "TensileCreateLibrary"), "--help"], timeout=120).stdout
    assert create_library_flavor_from_help(help_2024) == "hipblaslt-2024"
    # rocm-libraries TensileCreateLibrary/ParseArguments.py @2680ace6: lazy by default, no merge flags
    newer = (
        "usage: TensileCreateLibrary [-h] [--no-lazy-library-loading] [--library-format {yaml,msgpack,msgpack-indexed}]"
    )
    assert create_library_flavor_from_help(newer) == "rocm-libraries"
    assert profile_for_tools(newer)[0] == tool_profile("hipblaslt-develop")
    assert create_library_flavor_from_help("usage: TensileCreateLibrary [-h] LogicPath") is None
    profile, why = profile_for_tools("usage: TensileCreateLibrary [-h] LogicPath")
    assert profile is None and "neither" in why


def test_the_driver_version_decides_the_major() -> None:
    """versionIsCompatible needs the config's major to equal tensilelite's (Common.py:1821-1827 @7d9fb68)."""
    assert tensile_version_from_output("usage: ...\nTensile 4.33.0\n") == (4, 33, 0)
    assert tensile_version_from_output("#\n#  Tensile v5.0.0\n") == (5, 0, 0)
    assert tensile_version_from_output("Tensile: no version") is None
    help_2024 = "[--merge-files] [--separate-architectures] [--lazy-library-loading]"
    profile, why = profile_for_tools(help_2024, (4, 33, 0))
    assert profile == tool_profile("hipblaslt-7d9fb68") and "tensilelite 4.33.0" in why
    mixed, why = profile_for_tools(help_2024, (5, 0, 0))
    assert mixed is None and "different releases" in why
    unknown, why = profile_for_tools(help_2024, (9, 0, 0))
    assert unknown is None and "no profile knows" in why


def test_tune_on_a_7d9fb683_node_detects_its_profile(standins: Path, tmp_path: Path) -> None:
    """`tensilekit tune` with the stand-ins first on PATH and no --tool-profile (preflight, then ingest)."""
    log = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "llama3_8b_bf16_mask64.log"
    env = {**os.environ, "PATH": f"{standins}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = [sys.executable, "-m", "tensilekit", "tune", str(log), "--arch", "gfx942", "--workdir", str(tmp_path / "W"),
            "--library-logic", str(_logic(tmp_path)), "--only", "ingest"]  # fmt: skip
    completed = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "tool profile hipblaslt-7d9fb68" in (tmp_path / "W" / "tune.log").read_text()


def test_each_release_spells_the_compute_type_and_mixed_inputs_its_own_way() -> None:
    from tensilekit.tools.hipblaslt_bench import bench_problem_issue, build_bench_argv
    from tensilekit.workload.problem import GemmProblem

    lite, develop, rocm = (
        tool_profile("hipblaslt-7d9fb68"),
        tool_profile("hipblaslt-develop"),
        tool_profile("tensile-09ec347"),
    )
    # hipblaslt-bench @7d9fb683 (string_to_hipblas_computetype): f32_f16_r; the 2026 bench keeps it (S15)
    assert lite.bench_compute_type("c_f32_fast_f16_r") == develop.bench_compute_type("c_f32_fast_f16_r") == "f32_f16_r"
    mixed = GemmProblem(
        m=64, n=64, k=64, a_type="f8_r", b_type="f16_r", c_type="f16_r", compute_type="c_f32_fast_f16_r"
    )
    argv = build_bench_argv(mixed, profile=lite)
    assert argv[argv.index("--compute_type") + 1] == "f32_f16_r"
    # no f16 compute type in either bench: such a GEMM is reported, not run as another problem
    half = GemmProblem(m=64, n=64, k=64, a_type="f16_r", compute_type="c_f16_r")
    assert lite.bench_compute_type("c_f16_r") is None
    assert "has no compute type c_f16_r" in (bench_problem_issue(half, lite) or "")
    # tensilelite configs carry DataTypeA/DataTypeB (f8 x f16: DataType H, (F8, H)); ROCm/Tensile's cannot
    assert lite.config_type_issue(("H", "H", "S"), "gfx942", ("F8", "H")) is None
    assert "DataTypeA" in (rocm.config_type_issue(("H", "H", "S"), "gfx942", ("F8", "H")) or "")

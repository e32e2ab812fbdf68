"""Types a GEMM is tuned as: the problem that was logged, or a reported reason -- never another problem.

Mixed fp8 is tensilelite's ``F8B8``/``B8F8`` DataType (Common.py:450-464 validGEMMTypes @7d9fb68),
MX block scaling (``scaleA``/``scaleB`` >= 3) and FP4 are reported where a tool cannot express them.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tensilekit.cli.main import cli

_LINE = (
    "- {{ function: matmul, M: 4096, N: {n}, K: 4096, lda: 4096, ldb: 4096, ldc: 4096, ldd: 4096, stride_a: 0, "
    "stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, "
    "scaleA: {scale}, scaleB: {scale}, a_type: {a}, b_type: {b}, c_type: {d}, d_type: {d}, scale_type: f32_r, "
    "compute_type: c_f32_r, activation_type: none, call_count: 100 }}\n"
)
GA = ("--mode", "ga", "--population", "4", "--generations", "1")


def line(a: str, b: str, d: str, n: int = 512, scale: int = 0) -> str:
    return _LINE.format(a=a, b=b, d=d, n=n, scale=scale)


def tune(tmp_path: Path, text: str, *options: str) -> tuple[Path, dict[str, dict[str, str]]]:
    log = tmp_path / "app.log"
    log.write_text(text)
    workdir = tmp_path / "W"
    args = ["tune", "--simulate", str(log), "--workdir", str(workdir), *options]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((workdir / "report.json").read_text())
    return workdir, {gemm["id"]: gemm for gemm in report["gemms"]}


def test_mixed_fp8_is_searched_as_f8b8_and_merged(tmp_path: Path) -> None:
    workdir, gemms = tune(tmp_path, line("f8_r", "bf8_r", "f16_r"), "--arch", "gfx942", *GA)
    [config] = (workdir / "04_search" / "configs").glob("*.yaml")
    text = config.read_text()
    assert "DataType: F8B8" in text and "DataType: F8\n" not in text
    assert gemms["g0001"]["status"] == "tuned" or gemms["g0001"]["status"].startswith("dropped")
    assert (workdir / "09_merge" / ".done.json").is_file()


def test_mx_scaled_gemms_are_not_kernel_searched_as_plain_fp8(tmp_path: Path) -> None:
    text = line("f8_r", "f8_r", "bf16_r", scale=3) + line("f8_r", "f8_r", "bf16_r", n=1024)
    workdir, gemms = tune(tmp_path, text, "--arch", "gfx950", "--tool-profile", "hipblaslt-develop", *GA)
    search = json.loads((workdir / "04_search" / "search.json").read_text())
    # no generated kernel: the answer is the best existing solution the dense search found (issue 36 item 7),
    # and the answer says why no config was written
    answer = search["gemms"]["g0001"]["answer"]
    assert "MX block scaling (scaleA 3, scaleB 3)" in answer and "not searched" in answer, answer
    assert answer.startswith(f"existing solution {search['gemms']['g0001']['best_existing']['solution_index']} ")
    assert gemms["g0001"]["status"] == "tuned" or gemms["g0001"]["status"].startswith("dropped")
    [group] = search["groups"].values()
    assert group["sizes"] == [[4096, 1024, 1, 4096]]  # the MX GEMM is in no group with the plain fp8 one
    assert search["gemms"]["g0002"]["status"] == "winner"


def test_fp4_is_reported_not_expressible_by_the_7d9fb68_bench(tmp_path: Path) -> None:
    _, gemms = tune(tmp_path, line("f4_r", "f4_r", "bf16_r") + line("bf16_r", "bf16_r", "bf16_r"), "--arch", "gfx942")
    assert gemms["g0001"]["status"] == (
        "not expressible: hipBLASLt 7d9fb68 (tensilelite 4.33.0, ROCm 6.3)'s hipblaslt-bench has no data type f4_r"
    )
    assert gemms["g0002"]["status"] == "tuned"

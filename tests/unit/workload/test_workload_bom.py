"""A UTF-8 byte-order mark (what Excel and Windows editors put first in a CSV) is not content:
every workload format reads the same with it as without it (issue 23 item 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.workload import load_workload

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs"
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    "name",
    [
        "tunableop_results_llama.csv",
        "tunableop_untuned_llama.csv",
        "aiter_bf16_tuned.csv",
        "aiter_bf16_untuned_extra_cols.csv",
        "llama3_8b_bf16_mask64.log",
        "gpt_decode_f16_mask32.log",
        "deepseek_fp8_mask128.log",
        "geko_list_bbs_nt.yaml",
    ],
)
def test_a_byte_order_mark_changes_nothing(name: str, tmp_path: Path) -> None:
    plain = LOGS / name
    marked = tmp_path / name
    marked.write_bytes(BOM + plain.read_bytes())
    expected, got = load_workload(plain), load_workload(marked)
    assert got.format == expected.format
    assert [problem.model_dump() for problem in got.problems] == [problem.model_dump() for problem in expected.problems]
    assert len(got.bad_lines) == len(expected.bad_lines)
    # and through a command, which reads the file itself
    result = CliRunner().invoke(cli, ["select", "--from-log", str(marked), "--json"])
    if name == "aiter_bf16_tuned.csv":  # tuned for gfx942 only: the gfx90a sample library serves none
        assert result.exit_code == 3 and "no GEMM of the workload is for gfx90a" in result.output, result.output
        return
    assert result.exit_code in (0, 1), result.output  # 1: a GEMM the sample library has no kernel for
    assert "cannot tell the workload format" not in result.output

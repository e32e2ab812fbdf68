"""Differential test of ``remap`` on an AITER tuned CSV against AMD's code (issue 24).

The artefact is ``bf16_tuned_gemm.csv`` as AITER's gradlib tuner writes it (``aiter/configs/
bf16_tuned_gemm.csv``, ``gradlib/gemm_tuner.py``; layout as ``fixtures/remap/README.md``): one row
per (cu_num, M, N, K), torch's ``M``/``N`` (hipBLASLt's n/m of a TN GEMM), ``libtype=hipblaslt``
rows carrying ``solidx`` (the solution index) and ``kernelName``, rows of other libtypes untouched.
Its hipblaslt rows are AMD's C++ heuristic picks (``../shared/amd/select-oracle``) on an OLD
master built by AMD's tensilelite (``../shared/amd/build-master``) from bf16 TN logic (the corpus
file cut to its first kernels, so that each build takes ~1-2 s) and an F8 file; NEW masters read
them in another order (moved), without the bf16 file (missing), with one kernel retuned in place
(same and missing), and with the bf16 file twice after the F8 one (ambiguous). Every row is checked as in
``test_remap_oracle.py`` (``remap_oracle_support.check_rows_against_amd``); the written CSV moves
exactly the carried rows, and remapping to OLD itself gives the input byte for byte.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from remap_oracle_support import build_master, check_rows_against_amd, oracle, records, table_queries

from tensilekit.cli.main import cli
from tensilekit.remapping import RemapStatus, remap

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

_EQUALITY = "logic/hipblaslt/aquavanjaram/gfx942/Equality"
_BF16_TN = "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs.yaml"
_F8_TN = "aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"
_KERNELS = 10  # of the bf16 file's 228: enough for a dozen table rows, quick to build
_HEADER = (
    "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw\n"
)
# rows of other libraries, passed through untouched (AITER's asm and rocBLAS entries)
_OTHER_ROWS = (
    "gfx942,304,8,4096,4096,False,torch.bfloat16,torch.bfloat16,False,False,asm,3,4,16.9,_ZN5aiter24bf16gemm_bf16_tn_32x64E,0.0,15.88,1987.5\n",
    "gfx942,304,16,4096,4096,False,torch.bfloat16,torch.bfloat16,False,False,rocblas,1234,0,18.2,,0.0,29.5,1850.0\n",
)


def _cut(corpus: Path, folder: Path, *, retune: bool = False) -> Path:
    """The bf16 TN file with its first kernels and their table rows; ``retune`` changes kernel 0's
    WorkGroupMapping (a launch setting the kernel name omits), as retuning it in place would."""
    logic = yaml.load((corpus / _EQUALITY / _BF16_TN).read_text(), Loader=yaml.CSafeLoader)
    assert [solution["SolutionIndex"] for solution in logic[5][:_KERNELS]] == list(range(_KERNELS))
    logic[5] = logic[5][:_KERNELS]
    logic[7] = [entry for entry in logic[7] if entry[1][0] < _KERNELS]
    if retune:
        logic[5][0]["WorkGroupMapping"] = 4 if logic[5][0]["WorkGroupMapping"] != 4 else 8
    folder.mkdir(parents=True)
    target = folder / _BF16_TN
    target.write_text(yaml.dump(logic, Dumper=yaml.CSafeDumper, default_flow_style=None))
    return target


def _aiter_row(query: dict[str, Any], index: int, kernel: str) -> str:
    """An AITER row for a TN query: torch's M is hipBLASLt's n, torch's N its m."""
    cells = ["gfx942", "304", query["n"], query["m"], query["k"], "False", "torch.bfloat16", "torch.bfloat16",
             "False", "False", "hipblaslt", index, "0", "12.5", kernel, "0.0", "50.0", "1500.0"]  # fmt: skip
    return ",".join(map(str, cells)) + "\n"


@pytest.fixture(scope="module")
def aiter_builds(amd: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("remap_aiter")
    bf16, f8 = _cut(corpus, tmp / "bf16"), corpus / _EQUALITY / _F8_TN
    (tmp / "copy").mkdir()
    copy = tmp / "copy" / f"copy_{_BF16_TN}"
    copy.write_bytes(bf16.read_bytes())
    files = {
        "old": [bf16, f8],
        "moved": [f8, bf16],
        "less": [f8],
        "retuned": [_cut(corpus, tmp / "retuned", retune=True), f8],
        "ambiguous": [f8, bf16, copy],
    }
    masters = {name: build_master(amd, tmp / name, paths) for name, paths in files.items()}
    queries = [
        query
        for query in table_queries(masters["old"])
        if (query["a_type"], query["d_type"], query["trans_a"], query["trans_b"], query["batch"])
        == ("BFloat16", "BFloat16", "T", "N", 1)
    ]
    answers = oracle(amd, masters["old"], queries, tmp)
    old_records = records(masters["old"])
    text, rows = _HEADER, {}
    for query in queries:
        expected = answers[query["id"]]["expected"]
        if expected:
            if len(rows) == 3:
                text += _OTHER_ROWS[0]
            rows[text.count("\n") + 1] = query
            text += _aiter_row(query, expected["index"], old_records[expected["index"]]["kernelName"])
    text += _OTHER_ROWS[1]
    artefact = tmp / "bf16_tuned_gemm.csv"
    artefact.write_text(text)
    return {"tmp": tmp, "masters": masters, "rows": rows, "artefact": artefact}


_EXPECTED = {
    "moved": {RemapStatus.MOVED},  # the F8 file is read first in NEW
    "less": {RemapStatus.MISSING},  # NEW has no bf16 kernel
    "retuned": {RemapStatus.SAME, RemapStatus.MISSING},  # kernel 0's rows are missing, the rest stay
    "ambiguous": {RemapStatus.AMBIGUOUS},  # every bf16 kernel twice, neither at its old index
}


@pytest.mark.parametrize("new", sorted(_EXPECTED))
def test_aiter_remap_agrees_with_amds_build_and_runtime(amd: Path, aiter_builds: dict[str, Any], new: str) -> None:
    masters, rows, tmp = aiter_builds["masters"], aiter_builds["rows"], aiter_builds["tmp"]
    assert len(rows) >= 5
    report = remap([aiter_builds["artefact"]], masters["old"], masters[new])
    artefact = report.artefacts[0]
    assert not artefact.bad_lines
    assert [row.line for row in report.rows] == sorted(rows)
    runs = [(row, dict(rows[row.line], cu_count=304)) for row in report.rows]
    statuses = check_rows_against_amd(amd, masters["old"], masters[new], runs, tmp)
    assert set(statuses) == _EXPECTED[new]

    # The CSV for NEW: carried rows get NEW's solidx and kernel name, nothing else changes; rows
    # that are not carried are dropped; other libraries' rows and the header stay byte for byte.
    new_records = records(masters[new])
    before = aiter_builds["artefact"].read_text().splitlines(keepends=True)
    wanted = []
    for number, line in enumerate(before, start=1):
        row = next((row for row in report.rows if row.line == number), None)
        if row is None:
            wanted.append(line)
        elif row.status.carried:
            assert row.new_index is not None
            cells = next(csv.reader([line]))
            cells[11], cells[14] = str(row.new_index), new_records[row.new_index]["kernelName"]
            wanted.append(",".join(cells) + "\n")
    assert artefact.text == "".join(wanted)
    if new == "retuned":  # a row that stays the same is the input line itself
        assert any(line in before for line in artefact.text.splitlines(keepends=True)[1:] if ",hipblaslt," in line)


def test_aiter_remap_to_itself_is_byte_identical(aiter_builds: dict[str, Any]) -> None:
    out = aiter_builds["tmp"] / "same_bf16_tuned_gemm.csv"
    old = str(aiter_builds["masters"]["old"])
    args = ["remap", str(aiter_builds["artefact"]), "--from", old, "--to", old, "-o", str(out), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == aiter_builds["artefact"].read_bytes()
    assert result.stdout.count('"status": "same"') == len(aiter_builds["rows"])

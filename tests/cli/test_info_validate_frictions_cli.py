"""Small frictions of `info`, `validate` and `lint` (issue 25): CU counts of a master, the file
name of an empty input, the byte offset of a truncated `.dat`, a truncated YAML master."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def terminal_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSILEKIT_TERMINAL", "1")


def test_info_shows_the_cu_counts_of_a_master(runner: CliRunner, corpus: Path, tmp_path: Path) -> None:
    """AMD's master for 104-CU gfx90a, its hardware row rewritten to 20 CUs: `info` said "CU count -"."""
    text = (corpus / "masters" / "aldebaran_SB_NN_equality.yaml").read_text()
    assert text.count("{type: CUCount, value: 104}") == 1
    master = tmp_path / "TensileLibrary_20cu.yaml"
    master.write_text(text.replace("{type: CUCount, value: 104}", "{type: CUCount, value: 20}"))
    table = runner.invoke(cli, ["info", str(master)])
    assert table.exit_code == 0, table.output
    (row,) = [line for line in table.output.splitlines() if line.startswith("CU count")]
    assert row.split()[-1] == "20"
    (info,) = json.loads(runner.invoke(cli, ["info", "--json", str(master)]).output)
    assert info["cu_counts"] == [20] and info["cu_count"] == 20


def test_info_shows_the_cu_counts_of_hipblaslt_solutions(runner: CliRunner, corpus: Path) -> None:
    """hipBLASLt masters carry CUCount in each solution's hardware predicate as well."""
    master = corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat"
    (info,) = json.loads(runner.invoke(cli, ["info", "--json", str(master)]).output)
    assert info["cu_counts"] == [104]


@pytest.mark.parametrize("name", ["empty.dat", "empty.yaml"])
def test_info_of_an_empty_file_names_it(runner: CliRunner, tmp_path: Path, name: str) -> None:
    empty = tmp_path / name
    empty.write_bytes(b"")
    result = runner.invoke(cli, ["info", str(empty)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{empty}: empty input" in result.output


def test_validate_and_lint_of_a_truncated_dat_carry_the_byte_offset(
    runner: CliRunner, corpus: Path, tmp_path: Path
) -> None:
    truncated = tmp_path / "TensileLibrary_cut.dat"
    truncated.write_bytes((corpus / "masters" / "aldebaran_SB_NN.dat").read_bytes()[:3000])
    for command in (["validate", "--json"], ["lint", "--json"]):
        result = runner.invoke(cli, [*command, str(truncated)])
        (finding,) = json.loads(result.output)[0]["findings"]
        assert finding["code"] == "MsgpackDecodeError"
        assert isinstance(finding["offset"], int) and 0 < finding["offset"] <= 3000, finding
    text = runner.invoke(cli, ["validate", str(truncated)]).output
    assert f"{truncated}: byte {finding['offset']}: " in text


def test_a_truncated_yaml_master_is_called_truncated_at_its_end(
    runner: CliRunner, corpus: Path, tmp_path: Path
) -> None:
    """A master cut after its `library` still parses (YAML needs no closing bracket at the top):
    it used to be "neither a library-logic file nor a master solution library"."""
    text = (corpus / "masters" / "aldebaran_SB_NN.yaml").read_text()
    cut = text[: text.index("\nsolutions:") // 2]
    truncated = tmp_path / "TensileLibrary_cut.yaml"
    truncated.write_text(cut)
    lines = cut.rstrip().split("\n")
    where = f"{truncated}:{len(lines)}:{len(lines[-1]) + 1}: truncated or damaged YAML"
    for command in (["info"], ["validate"], ["select", "64", "64", "64", "--library"]):
        result = runner.invoke(cli, [*command, str(truncated)])
        assert result.exit_code != ExitCode.BUG, result.output
        assert where in result.output, (command, result.output)
        assert "neither a library-logic file" not in result.output


@pytest.mark.parametrize("name", ["llama3_8b_bf16_mask64.log", "geko_list_bbs_nt.yaml"])
def test_a_workload_file_given_as_a_library_is_named_as_what_it_is(
    runner: CliRunner, tmp_path: Path, name: str
) -> None:
    """Issue 32 item 3: a mask-64 log is a valid YAML list, so it read as a logic file and got a
    validation dump (``app_gfx942.log:2:3: Input should be a valid string [and 8 more problem(s)]``)."""
    log = tmp_path / name
    log.write_bytes((Path(__file__).resolve().parents[2] / "fixtures" / "logs" / name).read_bytes())
    what = "a hipBLASLt log" if name.endswith(".log") else "a GEKO size list"
    for command in (
        ["info"],
        ["validate"],
        ["select", "64", "64", "64", "--library"],
        ["build-master", "-o", str(tmp_path / "m.yaml")],
    ):
        result = runner.invoke(cli, [*command, str(log)])
        assert result.exit_code not in (0, ExitCode.BUG), (command, result.output)
        assert f"{log}: {what}" in result.output and "expected a master solution library" in result.output, (
            result.output
        )
        assert "Input should be" not in result.output
    assert not (tmp_path / "m.yaml").exists()


def test_a_master_where_logic_files_are_expected_is_called_a_master(
    runner: CliRunner, corpus: Path, tmp_path: Path
) -> None:
    master = tmp_path / "masters" / "aldebaran_SB_NN.yaml"
    master.parent.mkdir()
    master.write_bytes((corpus / "masters" / "aldebaran_SB_NN.yaml").read_bytes())
    result = runner.invoke(cli, ["build-master", str(master.parent), "-o", str(tmp_path / "m.yaml")])
    assert result.exit_code not in (0, ExitCode.BUG), result.output
    assert f"{master}: a master solution library, not a library-logic file" in result.output, result.output

"""Answers a person can read (issue 32 items 4-9): one size spelling, short kernel names with
the full ones a flag away, diff findings as data lines that name what changed, a slow phase that
says what it is doing also when piped, and the smaller frictions of item 9."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli import output
from tensilekit.cli.main import cli
from tensilekit.cli.phases import phases
from tensilekit.data import sample_library_path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SAMPLE = str(sample_library_path())
LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def invoke(*args: str, terminal: bool) -> Any:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "TENSILEKIT_TERMINAL": "1" if terminal else "0"})


# ---------------------------------------------------------------------------------------------
# item 8: a phase over 2 s says what it is doing, once, also when stderr is no terminal


def test_a_slow_phase_says_once_what_it_does_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(output, "stderr_is_terminal", lambda: False)
    monkeypatch.setattr(output, "SLOW_PHASE_SECONDS", 0.05)
    with output.progress_bar("reading big.yaml.gz", None):
        time.sleep(0.3)
    with phases("reading the logic files") as shown:
        time.sleep(0.3)
        shown.stage("building")
        time.sleep(0.3)
    with output.progress_bar("quick", None):
        pass
    captured = capsys.readouterr()
    assert captured.out == ""  # never in the command's output (--json included)
    assert captured.err.splitlines() == [
        "tensilekit: reading big.yaml.gz …",
        "tensilekit: reading the logic files …",
        "tensilekit: building …",
    ]


def test_a_quick_phase_prints_nothing_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(output, "stderr_is_terminal", lambda: False)
    with output.progress_bar("reading", None), phases("checking") as shown:
        shown.stage("locating")
    time.sleep(0.05)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------------------------
# items 5 and 6: diff


@pytest.fixture(scope="module")
def retuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample logic file and the same with its first kernel retuned in place (WGM 8 -> 4)."""
    folder = tmp_path_factory.mktemp("retuned")
    (folder / "a").mkdir()
    (folder / "b").mkdir()
    text = LOGIC.read_text()
    assert "    WorkGroupMapping: 8\n" in text
    (folder / "a" / "x.yaml").write_text(text)
    (folder / "b" / "x.yaml").write_text(text.replace("    WorkGroupMapping: 8\n", "    WorkGroupMapping: 4\n", 1))
    return folder / "a" / "x.yaml", folder / "b" / "x.yaml"


def test_diff_findings_are_data_lines_naming_the_changed_setting(retuned: tuple[Path, Path]) -> None:
    a, b = retuned
    result = invoke("diff", str(a), str(b), terminal=False)
    assert result.exit_code == 0, result.output
    data = [line for line in result.stdout.splitlines() if not line.startswith("#")]  # README's recipe
    assert "x.yaml\t~ size 4096x4096x4096: #0 → #0 (WorkGroupMapping 8 → 4; efficiency 36210.7 → 36210.7)" in data
    assert "x.yaml\t- kernel #0" in data and "x.yaml\t+ kernel #0" in data


def test_a_master_diff_labels_its_tables_and_names_the_retuned_setting(retuned: tuple[Path, Path]) -> None:
    from tensilekit.api import build_master_files
    from tensilekit.merge import diff_libraries

    (before,) = build_master_files([retuned[0]]).values()
    (after,) = build_master_files([retuned[1]]).values()
    diff = diff_libraries(before, after)
    (group,) = diff.groups
    assert group.label == "SB NN gfx90a" and "AMDGPU(Processor(gfx90a))" in group.name
    assert group.key_names == ["FreeSizeA", "FreeSizeB", "BoundSize"]
    assert {tuple(moved.changes) for moved in group.sizes_reassigned} == {("+WGM4",)}
    from rich.console import Console

    from tensilekit.cli.render_merge import render_diff

    console = Console(record=True, width=200, file=open("/dev/null", "w"))  # noqa: SIM115
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TENSILEKIT_TERMINAL", "1")
        render_diff(diff, console)
    shown = console.export_text()
    assert "SB NN gfx90a" in shown and "~ size 4096x4096x4096: " in shown and "(+WGM4; efficiency" in shown
    assert "AMDGPU(" not in shown  # the ~400-character predicate path stays in --json's name


# ---------------------------------------------------------------------------------------------
# items 5 and 7: select


def test_select_shortens_kernel_names_on_a_terminal_and_full_names_shows_them_whole() -> None:
    args = ("select", "1024", "1024", "1024", "--library", SAMPLE)
    name = json.loads(invoke(*args, "--json", terminal=False).stdout)["name"]
    assert len(name) > 80
    short = invoke(*args, terminal=True).stdout
    kernel_line = next(line for line in short.splitlines() if line.startswith("kernel"))
    assert kernel_line.split()[1].endswith("_…") and name not in short
    assert "problem      1024x1024x1024 NN " in short  # the one size spelling
    assert name in invoke(*args, "--full-names", terminal=True).stdout
    assert f"kernel\t{name}" in invoke(*args, terminal=False).stdout  # a pipe: always whole
    walk = invoke(*args, "--explain", terminal=True).stdout
    result = next(line for line in walk.splitlines() if "✓ result selected index" in line)
    assert result.endswith("_…") and name not in walk  # the walk's names as the summary's
    assert name in invoke(*args, "--explain", terminal=False).stdout


# ---------------------------------------------------------------------------------------------
# item 9


def test_coverage_says_how_many_of_tune_next_it_lists(tmp_path: Path) -> None:
    queries = tmp_path / "gemms.jsonl"
    sizes = [(64 + 8 * number, 72 + 8 * number, 80 + 8 * number) for number in range(15)]  # none tuned exactly
    queries.write_text("".join(json.dumps({"m": m, "n": n, "k": k, "arch": "gfx90a"}) + "\n" for m, n, k in sizes))
    shown = invoke("coverage", str(queries), "--library", SAMPLE, terminal=True)
    assert shown.exit_code == 0, shown.output
    assert "tune next (15 GEMM(s), the first 10 shown, share x class factor):" in shown.stdout
    assert "… 5 more: piped, --json or --format markdown list them all" in shown.stdout
    piped = invoke("coverage", str(queries), "--library", SAMPLE, terminal=False).stdout
    assert "# tune next (15 GEMM(s), share x class factor):" in piped
    assert sum(1 for line in piped.splitlines() if line.startswith("#    ") and ". SSS_NN " in line) == 15


def test_info_solution_macro_tile_reads_as_the_kernel_name_does() -> None:
    result = invoke("info", "--solution", "606601222", SAMPLE, terminal=False)
    assert result.exit_code == 0, result.output
    name = next(line.split()[1] for line in result.stdout.splitlines() if line.strip().startswith("name:"))
    assert "_MT128x128x32_MI32x32x8x1_" in name
    assert "  macro tile:   128x128, depth U 32" in result.stdout.splitlines()
    assert "  MI:           32x32x8x1" in result.stdout.splitlines()
    record = json.loads(invoke("info", "--solution", "606601222", SAMPLE, "--json", terminal=False).stdout)
    assert (record["macro_tile"], record["depth_u"]) == ([128, 128, 1], 32)


def test_a_folder_named_tensilekit_cannot_shadow_the_checkout_on_sys_path(tmp_path: Path) -> None:
    """`python` in the folder holding a clone named tensilekit/: with the checkout on sys.path (the
    README's editable_mode=compat) the real package wins over the clone folder's namespace package."""
    (tmp_path / "tensilekit").mkdir()
    probe = "import tensilekit; print(hasattr(tensilekit, 'load_logic'))"
    found = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(ROOT)}, capture_output=True, text=True
    )
    assert found.stdout.strip() == "True", found.stderr
    assert (
        'pip install -e ".[test,plot,ray]" --config-settings editable_mode=compat' in (ROOT / "README.md").read_text()
    )


# ---------------------------------------------------------------------------------------------
# item 4: select never answers from a file validate rejects


def test_select_refuses_every_logic_file_validate_rejects(tmp_path: Path) -> None:
    bad = tmp_path / "sixty_four.yaml"
    bad.write_text(LOGIC.read_text().replace("    MacroTile0: 256\n", "    MacroTile0: sixty-four\n", 1))
    candidates = [bad, *sorted((FIXTURES / "invalid").glob("*.yaml"))]
    refused = 0
    for path in candidates:
        verdict = invoke("validate", str(path), "--json", terminal=False)
        (checked,) = json.loads(verdict.stdout)
        if checked["ok"]:
            continue
        answer = invoke("select", "768", "3072", "768", "--library", str(path), "--arch", "gfx90a", terminal=False)
        assert answer.exit_code == 3, f"{path.name}: select answered from a file validate rejects\n{answer.output}"
        assert f"error: {path}" in answer.stderr, answer.stderr
        refused += 1
    assert refused > 10
    first = json.loads(invoke("validate", str(bad), "--json", terminal=False).stdout)[0]["findings"][0]
    answer = invoke("select", "768", "3072", "768", "--library", str(bad), terminal=False)
    assert f"error: {bad}:{first['line']}:{first['col']}: " in answer.stderr  # the same place validate names


def test_a_pipes_cell_text_is_what_rich_renders() -> None:
    """A table cell in a pipe is the plain text of its markup as rich renders it (tags, emoji codes,
    the control codes rich strips), whether or not the cell takes the path that skips rich."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from rich.markup import MarkupError, render

    pieces = st.sampled_from(["a", "kernel_MT64x64", "[", "]", "[bold]", "[/bold]", ":", ":smile:", "\t", "\n",
                              "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\\", "é"])  # fmt: skip

    @settings(max_examples=400, deadline=None)
    @given(st.lists(pieces, max_size=8).map("".join))
    def check(cell: str) -> None:
        try:
            expected = str(render(cell).plain).replace("\t", " ").replace("\n", " ")
        except MarkupError:
            with pytest.raises(MarkupError):
                output.plain_row([cell])
            return
        assert output.plain_row([cell, "x"]) == expected + "\tx"

    check()

"""CLI tests for ``tensilekit merge``, ``diff`` and ``prune`` (exit codes, exact lines, JSON)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml

PROBLEM_TYPE = {
    "OperationType": "GEMM",
    "DataType": 0,
    "IndexAssignmentsA": [0, 3, 2],
    "IndexAssignmentsB": [3, 1, 2],
    "NumIndicesC": 3,
    "UseBeta": True,
    "Batched": True,
    # what Tensile's build reads from the file (diff's runtime selector builds these files)
    "ComplexConjugateA": False,
    "ComplexConjugateB": False,
    "IndicesFree": [0, 1],
    "IndicesBatch": [2],
    "IndicesSummation": [3],
    "TotalIndices": 4,
}


@pytest.fixture(autouse=True)
def terminal_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the tables a terminal shows (piped output is covered in test_output_cli)."""
    monkeypatch.setenv("TENSILEKIT_TERMINAL", "1")


def kernel(mt0: int) -> dict[str, object]:
    return {
        "ProblemType": copy.deepcopy(PROBLEM_TYPE),
        "KernelLanguage": "Assembly",
        "MacroTile0": mt0,
        "MacroTile1": 64,
        "DepthU": 16,
        "WorkGroup": [16, 16, 1],
        "ThreadTile": [mt0 // 16, 4],  # MacroTile = WorkGroup x ThreadTile
        "SolutionNameMin": f"MT{mt0}",
    }


def logic(kernels: list[dict[str, object]], rows: list[tuple[list[int], int, float]]) -> str:
    data = [
        {"MinimumRequiredVersion": "4.33.0"},
        "aldebaran",
        "gfx90a",
        ["Device 0050"],
        copy.deepcopy(PROBLEM_TYPE),
        [dict(k, SolutionIndex=i) for i, k in enumerate(kernels)],
        [2, 3, 0, 1],
        [[size, [index, eff]] for size, index, eff in rows],
        None,
    ]
    return dump_yaml(data, AMD_LOGIC_STYLE)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "orig").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "orig" / "hip_A.yaml").write_text(
        logic([kernel(64)], [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 0, 10.0)])
    )
    (tmp_path / "inc" / "hip_A.yaml").write_text(logic([kernel(128)], [([1, 1, 1, 1], 0, 9.0), ([3, 3, 1, 3], 0, 5.0)]))
    (tmp_path / "inc" / "new_B.yaml").write_text(logic([kernel(32)], [([1, 1, 1, 1], 0, 1.0)]))
    return tmp_path / "orig", tmp_path / "inc"


def test_merge_directories_summary(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["merge", str(dirs[0]), str(dirs[1]), str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "hip_A.yaml: Forced (default: no 'arcturus' in the incremental path), compat tensile"
    assert lines[1] == "  sizes: 1 replaced (1 changed), 0 kept, 1 added -> 3 sizes"
    assert lines[2] == "  kernels: +1 -0 -> 2 kernels"
    assert lines[3] == f"  output: {out / 'hip_A.yaml'} (written)"
    assert "not merged (no original): new_B.yaml" in lines
    assert sorted(p.name for p in out.iterdir()) == ["hip_A.yaml"]


def test_merge_options_json_and_reports(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            "merge",
            str(dirs[0]),
            str(dirs[1]),
            str(out),
            "--force_merge",
            "FALSE",
            "--add-new",
            "--report",
            str(tmp_path / "r.md"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["files"][0]["policy"]["force_merge"] is False
    assert report["files"][0]["sizes_kept"][0]["key"] == [1, 1, 1, 1]
    assert report["copied_new"] == ["new_B.yaml"]
    assert (tmp_path / "r.md").read_text().startswith("# Merge report")
    result = CliRunner().invoke(
        cli,
        [
            "merge",
            str(dirs[0]),
            str(dirs[1]),
            str(tmp_path / "o2"),
            "--report",
            str(tmp_path / "r.json"),
            "--compat",
            "tensilelite",
            "--notrim",
            "--no-eff",
        ],
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["policy"] == {
        "force_merge": None,
        "trim": False,
        "no_eff": True,
        "add_solution_tags": False,
        "compat": "tensilelite",
        "add_new": None,
        "latch_default": True,
        "problem_type_check": None,
        "tensilelite_merge": None,
    }


def test_merge_dry_run_writes_nothing(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["merge", str(dirs[0]), str(dirs[1]), str(tmp_path / "out"), "--dry-run"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == "dry run: nothing written"
    assert not (tmp_path / "out").exists()


def test_merge_single_files(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["merge", str(dirs[0] / "hip_A.yaml"), str(dirs[1] / "hip_A.yaml"), str(tmp_path / "merged.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "merged.yaml").read_text().startswith("- {MinimumRequiredVersion: 4.33.0}")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--force-merge", "yes"], 2, "Invalid value"),
        (["--report", "r.txt"], 2, "must end in .json or .md"),
    ],
)
def test_merge_usage_errors(dirs: tuple[Path, Path], tmp_path: Path, args: list[str], code: int, message: str) -> None:
    result = CliRunner().invoke(cli, ["merge", str(dirs[0]), str(dirs[1]), str(tmp_path / "o"), *args])
    assert result.exit_code == code and message in result.output


def test_merge_missing_input_is_exit_3(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["merge", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "c")])
    assert result.exit_code == 3
    assert "no such file or directory" in result.output


def test_diff_formats_and_exit_code(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = dirs[0] / "hip_A.yaml", dirs[1] / "hip_A.yaml"
    same = CliRunner().invoke(cli, ["diff", str(a), str(a), "--exit-code"])
    assert same.exit_code == 0 and same.output.splitlines()[1] == "no differences (1 compared)"
    differ = CliRunner().invoke(cli, ["diff", str(a), str(b), "--exit-code"])
    assert differ.exit_code == 1
    # the size as every command spells it, the setting the retune changed named (issue 32 items 5, 6)
    assert "  ~ size 1x1x1: #0 → #0 (MT64 → MT128; efficiency 10.0 → 9.0)" in differ.output.splitlines()
    as_json = CliRunner().invoke(cli, ["diff", str(a), str(b), "--json"])
    assert json.loads(as_json.output)["groups"][0]["sizes_added"][0]["key"] == [3, 3, 1, 3]
    markdown = CliRunner().invoke(cli, ["diff", str(a), str(b), "--format", "markdown"])
    assert markdown.output.startswith(f"# Diff `{a}` → `{b}`")


def test_diff_with_queries(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    queries = tmp_path / "q.txt"
    # M >= 4: the kernels load 4-wide (VALU SGEMM VectorWidth 4), so smaller M has no kernel on either side
    queries.write_text("4 4 1 4\n8,8,1,8\n2 2 1 2\n")
    a, b = dirs[0] / "hip_A.yaml", dirs[1] / "hip_A.yaml"
    result = CliRunner().invoke(cli, ["diff", str(a), str(b), "--queries", str(queries), "--json"])
    data = json.loads(result.output)
    assert data["queries"] == 3
    assert [change["query"] for change in data["selection"]] == [[4, 4, 1, 4], [8, 8, 1, 8]]


def test_prune(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(logic([kernel(64), kernel(128), kernel(64)], [([1, 1, 1, 1], 2, 1.0), ([2, 2, 1, 2], 0, 1.0)]))
    result = CliRunner().invoke(cli, ["prune", str(path), "-o", str(tmp_path / "out.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert (report["kernels_before"], report["kernels_after"]) == (3, 1)
    assert [item["removed"]["index"] for item in report["duplicates_folded"]] == [2]
    table = CliRunner().invoke(cli, ["prune", str(path), "--dry-run"])
    assert table.exit_code == 0 and "dry run" in table.output


SAMPLE_LOGIC = Path(__file__).resolve().parents[2] / "fixtures" / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def _select_index(library: Path, m: int, n: int, k: int) -> int | None:
    result = CliRunner().invoke(cli, ["select", str(m), str(n), str(k), "--library", str(library), "--json"])
    assert result.exit_code == 0, result.output
    index: int | None = json.loads(result.output[result.output.index("{") :])["index"]
    return index


def test_diff_grid_lists_exactly_the_gemms_whose_kernel_changes(tmp_path: Path) -> None:
    """Dropping table entries moves the nearest entry for some grid points; the selection diff
    must list those points, with the kernels `tensilekit select` picks on each side, and no other."""
    from tensilekit.io.yaml_codec import parse_yaml

    data = parse_yaml(SAMPLE_LOGIC.read_text())
    data[7] = [row for row in data[7] if row[0][0] < 4096]  # forget the big sizes
    changed = tmp_path / SAMPLE_LOGIC.name
    changed.write_text(dump_yaml(data, AMD_LOGIC_STYLE))

    same = CliRunner().invoke(cli, ["diff", str(SAMPLE_LOGIC), str(SAMPLE_LOGIC), "--grid", "--json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.output)["queries"] == 9 * 9 * 3 and json.loads(same.output)["selection"] == []

    result = CliRunner().invoke(cli, ["diff", str(SAMPLE_LOGIC), str(changed), "--grid", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    changes = {tuple(change["query"]): change for change in report["selection"]}
    assert changes and report["selector"].startswith("runtime_selector")
    differing = 0
    for m, n, batch, k in [(4096, 4096, 1, 4096), (16384, 64, 1, 256), (64, 64, 1, 256), (1024, 1024, 1, 1024)]:
        before, after = _select_index(SAMPLE_LOGIC, m, n, k), _select_index(changed, m, n, k)
        change = changes.get((m, n, batch, k))
        if before == after:
            assert change is None, (m, n, k)
        else:
            differing += 1
            assert change is not None and (change["a"]["index"], change["b"]["index"]) == (before, after)
    assert 0 < differing < 4  # the sample points cover both outcomes


def test_diff_from_log_and_usage(tmp_path: Path) -> None:
    log = tmp_path / "hipblaslt.log"
    line = (
        "- {{ function: matmul, M: {m}, N: {m}, K: {m}, alpha: 1.0, beta: 0.0, transA: N, transB: N, "
        "batch_count: 1, a_type: f32_r, b_type: f32_r, c_type: f32_r, d_type: f32_r, scale_type: f32_r, "
        "compute_type: c_f32_r, call_count: {calls} }}\n"
    )
    log.write_text(line.format(m=1024, calls=3) + line.format(m=8000, calls=2))
    result = CliRunner().invoke(cli, ["diff", str(SAMPLE_LOGIC), str(SAMPLE_LOGIC), "--from-log", str(log), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output[result.output.index("{") :])["queries"] == 2
    both = CliRunner().invoke(cli, ["diff", str(SAMPLE_LOGIC), str(SAMPLE_LOGIC), "--grid", "--from-log", str(log)])
    assert both.exit_code == 2 and "at most one of" in both.output


def test_diff_from_log_takes_cu_count_without_arch_as_select_does(tmp_path: Path) -> None:
    """The gfx942 examples' kernels ask CUCount 304: `--cu-count 304` alone (the device's processor
    being the library's only one) must reach the selection, or every query finds no kernel in
    either build and the diff reads "0 of N select differently" although a size changed kernel."""
    from tensilekit.data.examples import example_files

    name = "aquavanjaram_Cijk_Alik_Bljk_HHS_BH.yaml"
    original = example_files()[f"logic-gfx942/{name}"].decode()
    old, new = tmp_path / "old" / name, tmp_path / "new" / name
    old.parent.mkdir()
    new.parent.mkdir()
    old.write_text(original)
    assert "    WorkGroupMapping: 8\n" in original
    new.write_text(original.replace("    WorkGroupMapping: 8\n", "    WorkGroupMapping: 4\n", 1))  # retuned in place
    log = tmp_path / "tunableop_untuned0.csv"
    log.write_text("GemmTunableOp_Half_TN,tn_4096_4096_4096_ld_4096_4096_4096\n")

    def selection(*options: str) -> dict[str, object]:
        result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--from-log", str(log), "--json", *options])
        assert result.exit_code == 0, result.output
        report: dict[str, object] = json.loads(result.stdout)
        return report

    for options in (("--cu-count", "304"), ("--cu-count", "304", "--arch", "gfx942")):
        report = selection(*options)
        (change,) = report["selection"]  # type: ignore[misc]
        assert (change["query"]["m"], change["query"]["a_type"]) == (4096, "Half"), options
        assert change["a"]["name"].endswith("_WGM8") and change["b"]["name"].endswith("_WGM4"), options
        assert report["notes"] == [], options
    unknown = selection()  # no CU count: no kernel anywhere, and the diff says so rather than "no change"
    assert unknown["selection"] == []
    assert any("none of the 1 queries selects a kernel" in note for note in unknown["notes"])  # type: ignore[attr-defined]

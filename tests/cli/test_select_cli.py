"""CLI: ``tensilekit select`` — exit codes, exact lines, JSON, --explain, --top, --queries, inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli
from tensilekit.data import sample_library_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SAMPLE_LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"
SAMPLE = str(sample_library_path())
MT128x64 = (
    "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_AF0EM4_AMAS0_ASEM4_GLVWA4_GLVWB4_GRVW4_GSU1_GSUASB_K1_"
    "LBSPPA0_LBSPPB0_LPA0_LPB1_LRVW1_TT2_64_VW1_VWB1_WG64_2_1"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _select(runner: CliRunner, *args: str) -> tuple[int, str]:
    result = runner.invoke(cli, ["select", *args], env={"COLUMNS": "200", "TENSILEKIT_TERMINAL": "1"})
    return result.exit_code, result.output


def test_single_query_json(runner: CliRunner) -> None:
    code, output = _select(runner, "1024", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--json")
    assert code == 0, output
    record = json.loads(output)
    assert {k: record[k] for k in ("id", "index", "name", "distance")} == {
        "id": None, "index": 606601220, "name": MT128x64, "distance": 0.0
    }  # fmt: skip
    # the one answer shape (issue 25): the GEMM's fields, its device and the full problem answered
    assert (record["m"], record["a_type"], record["arch"]) == (1024, "Float", "gfx90a")
    assert record["problem"]["m"] == 1024 and "workspace_size" in record["problem"]


def test_single_query_table_lines(runner: CliRunner) -> None:
    code, output = _select(runner, "1000", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--cu-count", "104")
    assert code == 0, output
    lines = [line.rstrip() for line in output.splitlines()]
    assert "device       gfx90a, 104 CUs" in lines
    assert "operation    Contraction_l_Ailk_Bljk_Cijk_Dijk" in lines
    assert "selected     index 606601220" in lines
    assert "distance     576" in lines
    assert "table entry  [1024, 1024, 1024]" in lines
    assert "macro tile   128x64" in lines


def test_types_transposes_and_no_kernel(runner: CliRunner) -> None:
    args = ["2048", "2048", "2048", "--library", SAMPLE, "--arch", "gfx90a", "--json"]
    code, output = _select(runner, *args, "--trans-a", "T", "--type", "HHS")
    assert code == 0 and json.loads(output)["index"] == 606601222
    # no kernel is the whole answer: exit 1, and the reason names what the library has
    code, output = _select(runner, *args, "--trans-b", "T")
    record = json.loads(output[: output.rindex("}") + 1])
    assert code == ExitCode.DIFFERENCES and record["index"] is None
    assert record["reason"] == (
        "the library has no kernel for NT Float (these transposes); it has: NN Float; TN Half HPA"
    )
    code, output = _select(runner, *args, "--type", "HHS", "--trans-a", "T", "--no-hpa")
    record = json.loads(output[: output.rindex("}") + 1])
    assert code == ExitCode.DIFFERENCES and record["index"] is None
    assert "(this HPA / batching / rounding variant)" in record["reason"]
    code, output = _select(runner, "64", "64", "64", "--library", SAMPLE, "--arch", "gfx90a")
    assert "selected     index 606601218" in output
    code, output = _select(runner, "64", "64", "64", "--library", SAMPLE, "--arch", "gfx942")
    assert code == ExitCode.DIFFERENCES
    assert any(line.startswith("selected     none") for line in output.splitlines())
    assert "no kernel: the library serves gfx90a only; it has no row for gfx942" in output


def test_explain_prints_the_walk(runner: CliRunner) -> None:
    code, output = _select(runner, "1000", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--explain")
    assert code == 0, output
    lines = [line.rstrip() for line in output.splitlines()]
    assert "walk" in lines
    assert "  ✓ Hardware row 0: AMDGPU(Processor: gfx90a == gfx90a)" in lines
    assert "    ✓ ProblemMap operation Contraction_l_Ailk_Bljk_Cijk_Dijk" in lines
    assert any(
        "Matching Euclidean table, 12 entries, key [FreeSizeA,FreeSizeB,BoundSize]=[1000, 1024, 1024]" in line
        for line in lines
    )
    assert any("✓ entry [1024, 1024, 1024] d=576" in line for line in lines)


def test_explain_json_has_the_trace(runner: CliRunner) -> None:
    code, output = _select(
        runner, "1000", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--explain", "--json"
    )
    record = json.loads(output)
    assert record["index"] == 606601220
    assert record["trace"][0] == {
        "depth": 0, "node": "Hardware", "path": "library.rows[0]", "passed": True,
        "message": "row 0: AMDGPU(Processor: gfx90a == gfx90a)",
    }  # fmt: skip


def test_top_ranks_alternatives(runner: CliRunner) -> None:
    code, output = _select(
        runner, "1024", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--top", "2", "--json"
    )
    record = json.loads(output)
    assert [alt["rank"] for alt in record["alternatives"]] == [1, 2]
    assert record["index"] not in [alt["index"] for alt in record["alternatives"]]
    code, output = _select(runner, "1024", "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--top", "2")
    assert "next best (each as if the ones above did not exist)" in output


def test_rocblas_k0(runner: CliRunner) -> None:
    args = ["64", "64", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--alpha", "0", "--json"]
    plain = json.loads(_select(runner, *args)[1])
    rocblas = json.loads(_select(runner, *args, "--rocblas-k0")[1])
    assert plain["distance"] == 663552.0  # nearest to (64, 64, 1024): (128, 128, 1024)…
    assert rocblas["distance"] == 64**2  # K passed as 0: nearest is (64, 64, 64)
    table = _select(runner, *args[:-1], "--rocblas-k0")[1]
    assert "K passed as 0 (rocBLAS, alpha=0)" in table


def test_library_from_logic_file_and_directory(runner: CliRunner) -> None:
    code, output = _select(runner, "1024", "1024", "1024", "--library", str(SAMPLE_LOGIC), "--arch", "gfx90a", "--json")
    assert code == 0 and json.loads(output)["index"] == 606601220
    code, output = _select(
        runner, "1024", "1024", "1024", "--library", str(FIXTURES / "logic"), "--arch", "gfx90a", "--json"
    )
    assert code == 0 and json.loads(output)["name"] == MT128x64


def test_queries_in_input_order(runner: CliRunner, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    lines = [
        {"id": "a", "m": 1024, "n": 1024, "k": 1024, "expected": {"index": 0}, "category": "x"},
        {"id": "b", "m": 64, "n": 64, "k": 64, "arch": "gfx942"},
        {"id": "c", "m": 1024, "n": 1024, "k": 1024, "trans_a": "T", "a_type": "Half", "b_type": "Half",
         "c_type": "Half", "d_type": "Half", "compute_type": "Float", "hpa": True},
        {"id": "d", "m": -5, "n": 1, "k": 1},
    ]  # fmt: skip
    queries.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    code, output = _select(runner, "--library", SAMPLE, "--arch", "gfx90a", "--queries", str(queries), "--json")
    assert code == ExitCode.BAD_INPUT, output  # an errored line makes the exit code non-zero
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [r["id"] for r in records] == ["a", "b", "c", "d"]
    assert {k: records[0][k] for k in ("id", "index", "name", "distance")} == {
        "id": "a", "index": 606601220, "name": MT128x64, "distance": 0.0
    }  # fmt: skip
    assert records[1]["index"] is None  # its own arch overrides --arch
    assert records[1]["reason"] == "the library serves gfx90a only; it has no row for gfx942"
    assert records[2]["index"] == 606601222
    assert records[3]["index"] is None and "invalid query" in records[3]["error"]
    code, output = _select(runner, "--library", SAMPLE, "--arch", "gfx90a", "--queries", str(queries))
    assert code == ExitCode.BAD_INPUT
    assert "4 queries, 2 with a kernel, 1 without, 1 not answerable" in output.splitlines()


def test_queries_from_stdin(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["select", "--library", SAMPLE, "--queries", "-", "--json"],
                           input='{"id": 1, "m": 1024, "n": 1024, "k": 1024, "arch": "gfx90a"}\n')  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["index"] == 606601220


def test_usage_errors(runner: CliRunner, tmp_path: Path) -> None:
    assert _select(runner, "--library", SAMPLE, "--arch", "gfx90a")[0] == ExitCode.USAGE  # no M N K
    code, output = _select(runner, "1", "2", "3", "--library", SAMPLE)  # the library's only arch
    assert code == ExitCode.DIFFERENCES and "no kernel: kernels for this device and problem type exist" in output
    assert "note: no --arch given; using the library's only architecture, gfx90a" in output
    code, output = _select(runner, "1024", "1024", "1024", "--arch", "gfx90a")  # the embedded sample
    assert code == 0 and "note: no --library given; using tensilekit's sample library" in output
    assert "selected     index 606601220" in output
    code, output = _select(runner, "1", "2", "3", "--library", SAMPLE, "--arch", "gfx90a", "--type", "QQ")
    assert code == ExitCode.USAGE and "cannot read type specification 'QQ'" in output and "bf16_r" in output
    code, output = _select(runner, "1", "2", "3", "--library", str(tmp_path / "missing.yaml"), "--arch", "gfx90a")
    assert code == ExitCode.BAD_INPUT and "no such file" in output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"m": 1, "n": 1, "k": 1}\nnot json\n')
    code, output = _select(runner, "--library", SAMPLE, "--arch", "gfx90a", "--queries", str(bad))
    assert code == ExitCode.BAD_INPUT and f"{bad}:2:" in output


def _log_line(m: int, n: int, k: int, calls: int, a_type: str = "f32_r", compute: str = "c_f32_r") -> str:
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {m}, ldb: {k}, ldc: {m}, ldd: {m}, "
        f"stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: N, transB: N, "
        f"batch_count: 1, scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, use_e: false, "
        f"bias_vector: false, bias_source: d, a_type: {a_type}, b_type: {a_type}, c_type: {a_type}, "
        f"d_type: {a_type}, scale_type: f32_r, bias_type: f32_r, compute_type: {compute}, "
        f"activation_type: none, flush: false, rotating: 0, cold_iters: 0, iters: 0, call_count: {calls} }}\n"
    )


def test_from_log_answers_every_distinct_gemm_with_its_calls(runner: CliRunner, tmp_path: Path) -> None:
    log = tmp_path / "hipblaslt.log"
    log.write_text(
        _log_line(1024, 1024, 1024, 7)
        + _log_line(1000, 1024, 1024, 5)
        + _log_line(1024, 1024, 1024, 3)  # the same GEMM again: calls add up
        + _log_line(64, 64, 64, 2, a_type="f64_r", compute="c_f64_r")  # a type the library lacks
    )
    code, output = _select(runner, "--from-log", str(log), "--library", SAMPLE, "--arch", "gfx90a", "--json")
    assert code == 0, output
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [(r["m"], r["calls"]) for r in records] == [(1024, 10), (1000, 5), (64, 2)]
    assert not any("call_count" in r for r in records)  # one vocabulary: calls
    for record in records[:2]:
        single = _select(runner, str(record["m"]), "1024", "1024", "--library", SAMPLE, "--arch", "gfx90a", "--json")
        answer = json.loads(single[1])
        assert {k: record[k] for k in ("index", "name", "distance")} == {
            k: answer[k] for k in ("index", "name", "distance")
        }
    assert records[2]["index"] is None and records[2]["name"] is None
    code, output = _select(runner, "--from-log", str(log), "--library", SAMPLE, "--arch", "gfx90a")
    assert code == 0, output
    assert "3 distinct GEMMs, 17 calls; 15 calls hit a kernel, 2 do not" in output
    assert "1024x1024x1024 SSS_NN" in output and "calls per kernel" in output  # one size spelling: batch 1 unsaid


def test_from_log_usage(runner: CliRunner, tmp_path: Path) -> None:
    log = tmp_path / "hipblaslt.log"
    log.write_text(_log_line(8, 8, 8, 1))
    assert _select(runner, "1", "2", "3", "--from-log", str(log), "--library", SAMPLE)[0] == ExitCode.USAGE
    code, output = _select(runner, "--from-log", str(tmp_path / "none.log"), "--library", SAMPLE)
    assert code == ExitCode.BAD_INPUT and "none.log" in output


def test_plot_selection_writes_a_png(runner: CliRunner, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "map.png"
    result = runner.invoke(cli, ["plot", "selection", "--k", "1024", "--points", "16", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "kernels over 256 grid points (256 with a kernel)" in result.output


def test_plot_without_matplotlib_says_which_extra(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    out = tmp_path / "map.png"
    result = runner.invoke(cli, ["plot", "selection", "--points", "4", "-o", str(out)])
    assert result.exit_code == ExitCode.USAGE, result.output  # MissingDependency: exit 2
    assert "install the 'plot' extra: pip install -e \".[plot]\" in the tensilekit checkout" in result.output
    assert "tensilekit[plot]" not in result.output and not out.exists()  # not on PyPI: never a name pip cannot find
    assert 'pip install -e ".[plot]"' in runner.invoke(cli, ["plot", "--help"]).output


def _answers(output: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.parametrize(
    ("library", "lines"),
    [
        (SAMPLE, None),  # rocBLAS's Tensile: the log's alpha/beta and compute type must survive
        ("hipblaslt_aldebaran_all.dat", [(16, 1335, 4608, "true"), (16, 1335, 4608, "false"), (64, 64, 64, "true")]),
    ],
)
def test_from_log_json_fed_back_to_queries_gives_the_same_answers(
    runner: CliRunner, tmp_path: Path, corpus: Path, library: str, lines: list[tuple[int, int, int, str]] | None
) -> None:
    # issue 25: "feeding select --from-log --json back to select --queries changes answers"
    if lines is None:
        log = FIXTURES / "logs" / "coverage_sgemm_mask64.log"
    else:
        library = str(corpus / "masters-hipblaslt" / library)
        log = tmp_path / "bias.log"
        log.write_text(
            "".join(
                _log_line(m, n, k, 3, a_type="f16_r").replace("bias_vector: false", f"bias_vector: {bias}")
                for m, n, k, bias in lines
            )
        )
    code, output = _select(runner, "--from-log", str(log), "--library", library, "--json")
    assert code == 0, output
    logged = _answers(output)
    assert any(answer["index"] is not None for answer in logged)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(answer) + "\n" for answer in logged))
    code, output = _select(runner, "--queries", str(answers), "--library", library, "--json")
    assert code == 0, output
    again = _answers(output)
    fields = ("index", "name", "distance", "calls", "reason")
    assert [{k: a.get(k) for k in fields} for a in again] == [{k: a.get(k) for k in fields} for a in logged]


def test_hipblaslt_library_takes_every_type_spelling(runner: CliRunner, corpus: Path) -> None:
    # issue 25: "--type bf16 / bf16_r fail on hipBLASLt libraries"; lower-case and HHS_BH were refused
    library = str(corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat")
    answers = set()
    for spelling in ("bf16", "bf16_r", "BFloat16", "HIP_R_16BF", "b"):
        code, output = _select(runner, "1024", "1024", "1024", "--library", library, "--type", spelling, "--json")
        assert code in (0, ExitCode.DIFFERENCES), output
        answers.add(
            json.dumps({k: v for k, v in json.loads(output[output.index("{") : output.rindex("}") + 1]).items()})
        )
    assert len(answers) == 1
    for spelling in ("hhs", "HHS_BH"):
        code, output = _select(runner, "64", "64", "64", "--library", SAMPLE, "--type", spelling, "--trans-a", "T")
        assert code == 0 and "selected     index 606601222" in output


def test_a_mistyped_command_gets_the_closest_ones_and_transposes_read_as_blas_spells_them() -> None:
    """Issue 32 item 9: ``selct`` got no suggestion; ``--trans-a`` choices printed lower-cased."""
    runner = CliRunner()
    result = runner.invoke(cli, ["selct", "1", "2", "3"])
    assert result.exit_code == 2 and "No such command 'selct'. Did you mean 'select'?" in result.output
    result = runner.invoke(cli, ["frobnicate"])
    assert result.exit_code == 2 and "Did you mean" not in result.output
    assert "--trans-a [N|T|C]" in runner.invoke(cli, ["select", "--help"]).output
    result = runner.invoke(cli, ["select", "64", "64", "64", "--trans-a", "x"])
    assert result.exit_code == 2 and "'X' is not one of 'N', 'T', 'C'" in result.output
    lower = runner.invoke(cli, ["select", "64", "64", "64", "--trans-a", "t", "--json"])
    upper = runner.invoke(cli, ["select", "64", "64", "64", "--trans-a", "T", "--json"])
    assert lower.exit_code == upper.exit_code and lower.stdout == upper.stdout

"""CLI: ``tensilekit coverage`` — classes, JSON, Markdown, skipped lines, outputs fed back to select and tune."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from amd_build import written
from click.testing import CliRunner

from tensilekit.cli.main import ExitCode, cli
from tensilekit.data import sample_library_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LOG = str(FIXTURES / "logs" / "coverage_sgemm_mask64.log")
EQUALITY = str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml")
SAMPLE = str(sample_library_path())


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "TENSILEKIT_TERMINAL": "1"})


def _json(*args: str) -> dict[str, Any]:
    result = invoke("coverage", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_every_class_from_a_hipblaslt_log_with_the_bad_line_listed() -> None:
    data = _json(LOG, "--library", EQUALITY, "--cu-count", "104")
    rows = [(g["gemm_type"], g["m"], g["n"], g["k"], g["calls"], g["class"]) for g in data["gemms"]]
    assert rows == [
        ("SSS_NN", 4096, 4096, 4096, 25, "exact"),
        ("SSS_NN", 4000, 4096, 4096, 10, "fallback"),
        ("SSS_NN", 4096, 8, 4096, 500, "fallback"),
        ("SSS_NN", 1024, 1024, 1024, 40, "exact"),
        ("BBS_TN", 4096, 4096, 4096, 3, "none"),
    ]
    assert data["skipped"] == [
        {"origin": f"{LOG}:4", "message": "bad profile line: M: not an integer: 'four-thousand'"}
    ]
    assert data["weight_basis"] == "calls x flops"
    fallback = data["gemms"][1]
    assert fallback["fell_through"] == ["Hardware row 0 (AMDGPU)"]
    assert fallback["matched"]["key"] == [4096, 4096, 4096] and fallback["table"].startswith("Euclidean")
    shares = data["summary"]["by_class"]
    assert sum(entry["share"] for entry in shares.values()) == pytest.approx(1.0)
    assert [entry["gemm_type"] for entry in data["summary"]["by_type"]] == ["BBS_TN", "SSS_NN"]
    # share x class factor: 10 calls of 4000x4096x4096 outweigh 3 of the unserved BBS GEMM
    assert [(item["m"], item["n"], item["class"]) for item in data["tune_next"]] == [
        (4000, 4096, "fallback"),
        (4096, 4096, "none"),
        (4096, 8, "fallback"),
    ]


def test_without_the_cu_count_the_generic_row_gives_near_and_far() -> None:
    data = _json(LOG, "--library", EQUALITY, "--arch", "gfx90a")
    assert [g["class"] for g in data["gemms"]] == ["exact", "near", "far", "exact", "none"]
    far = data["gemms"][2]
    assert far["matched"]["sizes"] == {"M": 4096, "N": 1024, "K": 4096}
    assert far["matched"]["ratios"]["N"] == pytest.approx(8 / 1024)
    assert _json(LOG, "--library", EQUALITY, "--near", "0.0")["gemms"][1]["class"] == "far"


def test_the_kernel_is_what_select_from_log_says(tmp_path: Path) -> None:
    clean = tmp_path / "clean.log"  # select --from-log stops at a bad line; coverage skips it
    clean.write_text("".join(line for line in Path(LOG).read_text().splitlines(True) if "four-thousand" not in line))
    coverage = _json(str(clean), "--library", SAMPLE)
    select = invoke("select", "--from-log", str(clean), "--library", SAMPLE, "--json")
    assert select.exit_code == 0, select.output
    answers = [json.loads(line) for line in select.stdout.splitlines()]
    assert [(g["m"], g["n"], g["index"], g["distance"]) for g in coverage["gemms"]] == [
        (a["m"], a["n"], a["index"], a["distance"]) for a in answers
    ]


def test_terminal_table_and_summary() -> None:
    result = invoke("coverage", LOG, "--library", EQUALITY, "--cu-count", "104")
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert "Coverage of 5 GEMM(s) by " + EQUALITY in lines
    assert any("4096x8x4096" in line and "fallback" in line and "4096x1024x4096" in line for line in lines)
    assert "Share of GEMM time (calls x flops) by class" in lines
    assert "tune next (3 GEMM(s), share x class factor):" in lines
    assert f"warning: {LOG}:4: bad profile line: M: not an integer: 'four-thousand' (skipped)" in result.stderr
    narrow = CliRunner().invoke(
        cli,
        ["coverage", LOG, "--library", EQUALITY, "--cu-count", "104"],
        env={"COLUMNS": "80", "TENSILEKIT_TERMINAL": "1"},
    )
    rows = [line for line in narrow.stdout.splitlines() if "4096x8x4096" in line and line.startswith("│")]
    assert len(rows) == 1 and "fallback" in rows[0] and "4096x1024x4096" in rows[0] and "N 0.00781" in rows[0]
    assert max(len(line) for line in narrow.stdout.splitlines() if line[:1] in "┏┃┡│└") <= 80


def test_markdown_report() -> None:
    result = invoke("coverage", LOG, "--library", SAMPLE, "--markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"# Coverage of 5 GEMM(s) by {SAMPLE}\n")
    assert "| SSS_NN | 4 | " in result.stdout and "## Tune next" in result.stdout
    assert f"- {LOG}:4: bad profile line" in result.stdout


def test_outputs_feed_select_queries_and_tune(tmp_path: Path) -> None:
    out = tmp_path / "cov"
    result = invoke("coverage", LOG, "--library", EQUALITY, "--cu-count", "104", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert [path.name for path in written(out)] == [
        "coverage.json", "coverage.md", "tune_next.jsonl", "tune_next_BBS_TN.yaml", "tune_next_SSS_NN.yaml",
    ]  # fmt: skip
    assert json.loads((out / "coverage.json").read_text())["summary"]["gemms"] == 5
    # select --queries reads the query lines as they are, and gives the kernels coverage reported
    select = invoke("select", "--queries", str(out / "tune_next.jsonl"), "--library", EQUALITY, "--json")
    assert select.exit_code == 0, select.output
    ranked = [json.loads(line) for line in (out / "tune_next.jsonl").read_text().splitlines()]
    answers = [json.loads(line) for line in select.stdout.splitlines()]
    assert [a["index"] for a in answers] == [r["current_index"] for r in ranked]
    # coverage reads them back too: the same GEMMs, calls and classes
    again = _json(str(out / "tune_next.jsonl"), "--library", EQUALITY)
    assert [(g["m"], g["n"], g["calls"], g["class"]) for g in again["gemms"]] == [
        (r["m"], r["n"], r["calls"], r["coverage_class"]) for r in ranked
    ]
    # tune reads the GEKO lists as workloads (its ingest stage)
    workdir = tmp_path / "W"
    tune = invoke(
        "tune", "--simulate", str(out / "tune_next_SSS_NN.yaml"), str(out / "tune_next_BBS_TN.yaml"),
        "--arch", "gfx90a", "--workdir", str(workdir), "--only", "ingest", "--executor", "serial",
    )  # fmt: skip
    assert tune.exit_code == 0, tune.output
    ingested = json.loads((workdir / "01_ingest" / "workload.json").read_text())
    sizes = sorted((g["problem"]["m"], g["problem"]["n"], g["problem"]["a_type"]) for g in ingested["gemms"])
    assert sizes == [(4000, 4096, "f32_r"), (4096, 8, "f32_r"), (4096, 4096, "bf16_r")]


def test_a_library_serving_none_of_the_workload_types_exits_1(tmp_path: Path) -> None:
    queries = tmp_path / "d.jsonl"
    queries.write_text('{"m": 64, "n": 64, "k": 64, "a_type": "Double"}\n{"m": 8, "n": 8, "k": 8, "a_type": "Int32"}\n')
    result = invoke("coverage", str(queries), "--library", SAMPLE)
    assert result.exit_code == ExitCode.DIFFERENCES
    assert (
        result.stderr.splitlines()[-1]
        == f"error: {SAMPLE}: serves none of the workload's problem types (DDD_NN, III_NN); it has: NN Float; TN Half HPA"
    )
    assert result.stdout == ""


def test_usage_and_input_errors(tmp_path: Path) -> None:
    assert invoke("coverage", LOG).exit_code == ExitCode.USAGE  # --library is required
    assert invoke("coverage", LOG, "--library", SAMPLE, "--json", "--markdown").exit_code == ExitCode.USAGE
    assert invoke("coverage", LOG, "--library", SAMPLE, "--near", "-1").exit_code == ExitCode.USAGE
    missing = invoke("coverage", str(tmp_path / "none.log"), "--library", SAMPLE)
    assert missing.exit_code == ExitCode.BAD_INPUT and "no such workload file" in missing.stderr
    unknown = tmp_path / "notes.txt"
    unknown.write_text("just some text\n")
    assert invoke("coverage", str(unknown), "--library", SAMPLE).exit_code == ExitCode.BAD_INPUT


def test_measured_times_from_tunableop_results_weigh_the_gemms(tmp_path: Path) -> None:
    results = tmp_path / "tunableop_results0.csv"
    results.write_text(
        "Validator,PT_VERSION,2.6.0\n"
        "GemmTunableOp_float_NN,nn_4096_4096_4096,Gemm_Hipblaslt_1,3.0\n"
        "GemmTunableOp_float_NN,nn_8_4096_4096,Gemm_Hipblaslt_2,1.0\n"
    )
    data = _json(str(results), "--library", SAMPLE)
    assert data["weight_basis"] == "measured time"
    assert [(g["m"], g["n"], g["measured_us"], g["share"]) for g in data["gemms"]] == [
        (4096, 4096, 3000.0, 0.75),
        (8, 4096, 1000.0, 0.25),  # nn_<m>_<n>_<k>
    ]


def test_plot_coverage_draws_the_heaviest_type_at_its_heaviest_k(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "coverage.png"
    result = invoke(
        "plot", "coverage", LOG, "--library", EQUALITY, "--cu-count", "104", "--points", "24", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert result.stdout == f"wrote {out}: 4 SSS_NN GEMM(s) on the kernel map at K=4096 (3 at that K)\n"
    other = invoke("plot", "coverage", LOG, "--library", EQUALITY, "--type", "BBS_TN", "--k", "64", "-o", str(out))
    assert other.exit_code == 0 and "1 BBS_TN GEMM(s) on the kernel map at K=64 (0 at that K)" in other.stdout
    # a type the library lacks, asked for by name: drawn, and said why the map is blank (issue 32 item 9)
    assert "note: the library has no kernel for BBS_TN at K=64 (" in other.stderr
    missing = invoke("plot", "coverage", LOG, "--library", EQUALITY, "--type", "HHS_NN", "-o", str(out))
    assert missing.exit_code == ExitCode.BAD_INPUT and "has no HHS_NN GEMM" in missing.stderr


def test_a_workload_with_no_readable_gemm_is_bad_input(tmp_path: Path) -> None:
    queries = tmp_path / "broken.jsonl"
    queries.write_text('{"m": 1}\nnot json\n')
    result = invoke("coverage", str(queries), "--library", SAMPLE)
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = result.stderr.splitlines()
    assert lines[-1] == f"error: {queries}: no GEMM could be read from the workload"
    first = next(line for line in lines if line.startswith(f"warning: {queries}:1: "))
    assert "Field required" in first and "errors.pydantic.dev" not in result.stderr  # one line per skipped line
    assert any(line.startswith(f"warning: {queries}:2: not a JSON object: Expecting value") for line in lines)


def test_json_nearest_is_null_when_the_matched_entry_is_the_nearest() -> None:
    data = _json(LOG, "--library", EQUALITY, "--arch", "gfx90a")
    assert [g["nearest"] for g in data["gemms"]] == [None] * 5
    assert data["gemms"][1]["matched"] == {
        "key": [4096, 4096, 4096], "index": 606601216, "speed": 36210.7, "sizes": {"M": 4096, "N": 4096, "K": 4096},
        "ratios": {"M": pytest.approx(4000 / 4096), "N": 1.0, "K": 1.0}, "usable": True,
    }  # fmt: skip


def test_the_garbage_collector_is_left_as_it_was() -> None:
    import gc

    before = gc.get_freeze_count()
    assert invoke("coverage", LOG, "--library", SAMPLE, "--json").exit_code == 0
    assert invoke("coverage", str(FIXTURES / "logs" / "none.log"), "--library", SAMPLE).exit_code != 0
    assert gc.get_freeze_count() == before and gc.isenabled()


def test_read_gemms_takes_times_from_aiter_and_tunableop_files(tmp_path: Path) -> None:
    from tensilekit.cli.commands.coverage import read_gemms
    from tensilekit.selection import Hardware

    results = tmp_path / "tunableop_results0.csv"
    results.write_text("GemmTunableOp_float_NN,nn_64_64_64,Gemm_Hipblaslt_1,0.5\n")
    mi300x = Hardware(arch="gfx942", cu_count=304)
    gemms, skipped = read_gemms([FIXTURES / "logs" / "aiter_bf16_tuned.csv", results], mi300x)
    # the cu_num=80 row is another device's GEMM (AITER keys tuned rows by gfx and cu_num): said in one line
    assert [item.message for item in skipped] == [
        "1 GEMM row(s) are tuned for another device (1 for gfx942 with 80 CUs), not gfx942 with 304 CUs: left out"
    ]
    assert [(g.gemm_type, g.problem.m, g.measured_us) for g in gemms] == [
        ("BBS_TN", 6144, 21.4),
        ("BBS_TN", 4096, 16.9),
        ("SSS_NN", 64, 500.0),
    ]


def _many_gemms(path: Path, count: int) -> Path:
    lines = [json.dumps({"m": 64 + i, "n": 128 + i % 5, "k": 256, "a_type": "Float"}) for i in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_long_run_reports_progress_and_json_or_a_pipe_prints_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    from collections.abc import Iterator

    from tensilekit.cli.commands import coverage as command
    from tensilekit.cli.commands.coverage import coverage_report
    from tensilekit.coverage import coverage_of

    workload = _many_gemms(tmp_path / "gemms.jsonl", 1500)
    # off a terminal (CliRunner): the same report as the Python API, and nothing on stderr
    quiet = CliRunner().invoke(cli, ["coverage", str(workload), "--library", SAMPLE, "--arch", "gfx90a", "--json"])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
    plain = CliRunner().invoke(cli, ["coverage", str(workload), "--library", SAMPLE, "--arch", "gfx90a"])
    assert plain.exit_code == 0 and plain.stderr == "", plain.stderr
    report, library, unevaluated = coverage_report(None, [workload], Path(SAMPLE), "gfx90a", None)  # type: ignore[arg-type]
    assert unevaluated == 0
    gemms = [item.gemm for item in report.gemms]
    assert json.loads(quiet.stdout) == json.loads(json.dumps(coverage_of(library.compiled, gemms).to_dict()))
    # the bar the command opens: total = the GEMMs, advanced to it; none with --json
    bars: list[tuple[str, int | None, list[int]]] = []

    @contextlib.contextmanager
    def recording(label: str, total: int | None) -> Iterator[Any]:
        steps: list[int] = []
        bars.append((label, total, steps))
        yield steps.append

    monkeypatch.setattr(command, "progress_bar", recording)
    assert CliRunner().invoke(cli, ["coverage", str(workload), "--library", SAMPLE]).exit_code == 0
    (_, total, steps), *_ = [bar for bar in bars if bar[0] == "classifying"]
    assert total == 1500 and sum(steps) == 1500
    bars.clear()
    assert CliRunner().invoke(cli, ["coverage", str(workload), "--library", SAMPLE, "--json"]).exit_code == 0
    assert [bar[1] for bar in bars if bar[0] == "classifying"] == [0]

"""Numbers out of their C++ range in workload lines are bad lines like any other (issue 23 item 10).

hipBLASLt reads sizes, leading dimensions and strides as ``int64_t`` and the batch count as
``int32_t``: a line with 2^63 (or 2^31 for the batch) is skipped with a ``file:line`` warning, or
stops the command with ``--strict`` (exit 3), in ``coverage``, ``select --from-log`` and ``tune``
(at ingest, before anything is benchmarked). Query lines with a 5 000-digit number or 100 000
nested brackets are skipped like every unreadable line. These crashed with OverflowError,
IndexError or RecursionError (exit 70) before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import InputTooLarge, ToolOutputError, WorkloadLineError
from tensilekit.io.limits import load_json_line
from tensilekit.pipeline.stages.ingest import untunable_reason
from tensilekit.ranges import INT32_MAX, INT64_MAX
from tensilekit.workload import load_workload
from tensilekit.workload.problem import GemmProblem

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs"
SAMPLE = str(Path(__file__).resolve().parents[3] / "fixtures" / "masters" / "coverage_equality_gfx90a.yaml")
TWO_63 = INT64_MAX + 1


def _edit_line(source: str, number: int, old: str, new: str, target: Path) -> Path:
    lines = (LOGS / source).read_text(encoding="utf-8").splitlines(keepends=True)
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    target.write_text("".join(lines), encoding="utf-8")
    return target


# (fixture, line number, text replaced, replacement, the field the message names)
CASES = [
    ("coverage_sgemm_mask64.log", 5, "M: 1024", f"M: {TWO_63}", "m"),
    ("coverage_sgemm_mask64.log", 5, "lda: 1024", f"lda: {TWO_63}", "lda"),
    ("coverage_sgemm_mask64.log", 5, "batch_count: 1", f"batch_count: {INT32_MAX + 1}", "batch"),
    ("gpt_decode_f16_mask32.log", 2, "-m 1024", f"-m {TWO_63}", "m"),
    ("gpt_decode_f16_mask32.log", 2, "--stride_a 0", f"--stride_a {TWO_63 * 4}", "stride_a"),
    ("tunableop_untuned_llama.csv", 2, "tn_4096_8", f"tn_{TWO_63}_8", "m"),
    ("aiter_bf16_untuned_extra_cols.csv", 3, "8,6144", f"{TWO_63},6144", "n"),  # AITER M is hipBLASLt n
    # a 400-digit call count (under the digits limit) crashed coverage's calls x flops weights
    ("coverage_sgemm_mask64.log", 1, "call_count: 20", "call_count: " + "9" * 400, "call_count"),
]


@pytest.mark.parametrize(("source", "number", "old", "new", "field"), CASES)
def test_an_out_of_range_number_is_a_located_bad_line(
    source: str, number: int, old: str, new: str, field: str, tmp_path: Path
) -> None:
    edited = _edit_line(source, number, old, new, tmp_path / source)
    plain = load_workload(LOGS / source, skip_bad_lines=True)
    parsed = load_workload(edited, skip_bad_lines=True)
    new_bad = [bad for bad in parsed.bad_lines if bad.location.line == number]
    assert len(new_bad) == 1, parsed.bad_lines
    assert new_bad[0].location.file == str(edited)
    assert f"{field}:" in new_bad[0].message and "C++ int" in new_bad[0].message
    assert len(parsed.problems) <= len(plain.problems)
    with pytest.raises(ToolOutputError) as caught:
        load_workload(edited)  # not skipping: the first bad line is an error with its place
    assert caught.value.location is not None and caught.value.location.line in {
        bad.location.line for bad in parsed.bad_lines
    }


def test_the_largest_int64_is_still_a_problem() -> None:
    problem = GemmProblem(m=INT64_MAX, n=1, k=1, a_type="f32_r", lda=INT64_MAX, batch=INT32_MAX)
    assert problem.m == INT64_MAX
    with pytest.raises(ValueError, match="int64_t maximum"):
        GemmProblem(m=TWO_63, n=1, k=1, a_type="f32_r")


def test_a_geko_size_out_of_range_is_an_error_at_its_entry(tmp_path: Path) -> None:
    edited = _edit_line("geko_list_bbs_nt.yaml", 10, "6144,  8,", f"{TWO_63},  8,", tmp_path / "list.yaml")
    result = CliRunner().invoke(cli, ["coverage", str(edited), "--library", SAMPLE, "--arch", "gfx90a"])
    assert result.exit_code == 3, result.output
    assert f"{edited}:10:" in result.output and "int64_t" in result.output


@pytest.mark.parametrize("command", [["coverage"], ["select", "--from-log"]])
def test_commands_skip_the_line_with_a_warning_or_stop_with_strict(command: list[str], tmp_path: Path) -> None:
    edited = _edit_line("coverage_sgemm_mask64.log", 5, "M: 1024", f"M: {TWO_63}", tmp_path / "big.log")
    arguments = [*command, str(edited), "--library", SAMPLE, "--arch", "gfx90a"]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code in (0, 1), result.output  # 1: coverage found untuned GEMMs
    assert f"warning: {edited}:5: " in result.stderr and "int64_t maximum" in result.stderr
    strict = CliRunner().invoke(cli, [*arguments, "--strict"])
    assert strict.exit_code == 3, strict.output
    assert f"{edited}:4:" in strict.stderr  # the fixture's own bad line 4 comes first


def _queries(tmp_path: Path) -> Path:
    good = json.dumps({"id": "ok", "m": 1024, "n": 1024, "k": 1024, "arch": "gfx90a"})
    lines = [
        good,
        '{"id": "digits", "m": ' + "9" * 5000 + ', "n": 1, "k": 1}',
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"id": "big", "m": TWO_63, "n": 1024, "k": 1024, "arch": "gfx90a"}),
        json.dumps({"id": "batch", "m": 8, "n": 8, "k": 8, "batch": TWO_63, "arch": "gfx90a"}),
    ]
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(lines * 9) + "\n", encoding="utf-8")  # 45 lines: the compiled path
    return path


def test_query_lines_with_huge_numbers_or_deep_nesting_are_skipped(tmp_path: Path) -> None:
    queries = _queries(tmp_path)
    result = CliRunner().invoke(cli, ["select", "--queries", str(queries), "--library", SAMPLE, "--json"])
    assert result.exit_code == 3, result.output  # some lines could not be answered
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 45
    errors = [record.get("error") for record in records]
    assert all(error is None for error in errors[0::5])
    for offset, expected in ((1, "more than 1000 digits"), (2, "nested more than"), (3, "int64_t"), (4, "int64_t")):
        assert all(expected in (error or "") for error in errors[offset::5]), errors[offset::5]
    assert f"{queries}:2:" in errors[1]
    coverage = CliRunner().invoke(cli, ["coverage", str(queries), "--library", SAMPLE, "--arch", "gfx90a"])
    assert coverage.exit_code in (0, 1), coverage.output
    assert f"warning: {queries}:3: nested more than" in coverage.stderr


def test_load_json_line_names_the_column() -> None:
    with pytest.raises(InputTooLarge) as digits:
        load_json_line('{"m": ' + "1" * 5000 + "}")
    assert digits.value.location is not None and digits.value.location.col == 7
    with pytest.raises(WorkloadLineError, match="not a JSON object"):
        load_json_line('{"m": 1')
    with pytest.raises(InputTooLarge, match="nested more than"):
        load_json_line("[" * 100_000 + "]" * 100_000)
    assert load_json_line('{"m": 12}') == {"m": 12}


def test_tune_refuses_at_ingest_what_no_logic_file_holds(tmp_path: Path) -> None:
    huge = GemmProblem(m=1 << 41, n=8, k=8, a_type="bf16_r")
    reason = untunable_reason(huge)
    assert reason is not None and "M 2199023255552" in reason
    assert untunable_reason(GemmProblem(m=1 << 40, n=8, k=8, a_type="bf16_r", lda=1 << 40)) is None
    edited = _edit_line("llama3_8b_bf16_mask64.log", 2, "M: 28672", f"M: {1 << 41}", tmp_path / "huge.log")
    workdir = tmp_path / "W"
    result = CliRunner().invoke(
        cli, ["tune", str(edited), "--arch", "gfx942", "--workdir", str(workdir), "--simulate", "--strict"]
    )
    assert result.exit_code == 3, result.output
    assert "cannot be tuned" in result.stderr
    assert not workdir.exists()  # refused before any stage ran


def test_huge_query_sizes_never_answer_another_kernel_than_the_cpp(amd: Path, corpus: Path, tmp_path: Path) -> None:
    """Against tensilelite's C++ (``select-oracle``): below 2^63 tensilekit answers what the C++
    answers (size_t batch 2^32 + 1 included); from 2^63 on (where the C++ size_t goes through
    hipBLASLt's int64_t arguments) tensilekit refuses the line instead of guessing."""
    import subprocess

    master = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.yaml"
    base = json.loads((corpus / "select-hipblaslt" / "hipblaslt_gfx942_grid.jsonl").read_text().splitlines()[0])
    for name in ("expected", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c", "stride_d"):
        base.pop(name, None)
    cases = [{"m": m} for m in (1024, INT64_MAX, TWO_63, TWO_63 + 1024, (1 << 64) - 1, 1 << 65)]
    cases += [{"batch": batch} for batch in (INT32_MAX, INT32_MAX + 1, (1 << 32) + 1, TWO_63)]
    queries = [{**base, "m": 1024, "n": 1024, "k": 1024, **case, "id": f"q{i}"} for i, case in enumerate(cases)]
    query_file = tmp_path / "queries.jsonl"
    query_file.write_text("".join(json.dumps(query) + "\n" for query in queries), encoding="utf-8")
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(query_file)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    oracle = {
        answer["id"]: (answer.get("expected") or {}).get("index")
        for answer in map(json.loads, done.stdout.splitlines())
    }
    result = CliRunner().invoke(cli, ["select", "--queries", str(query_file), "--library", str(master), "--json"])
    assert result.exit_code == 3, result.output  # the refused lines
    refused = set()
    for query, answer in zip(queries, map(json.loads, result.stdout.splitlines()), strict=True):
        if answer.get("error") is not None:  # refused: never another kernel than the C++'s
            assert "int64_t maximum" in answer["error"], answer
            refused.add(query["id"])
        else:
            assert answer["index"] == oracle[query["id"]], (query, answer)
    # refused exactly where a size or batch, or a stride left out (lda x K), is past int64
    assert refused == {q["id"] for q in queries if max(q["m"], q["batch"], q["m"] * q["k"]) > INT64_MAX}
    assert {"q0", "q7", "q8"}.isdisjoint(refused)  # 1024, batch INT32_MAX + 1 and 2^32 + 1: answered


def test_default_strides_past_int64_are_refused_per_query_line(tmp_path: Path) -> None:
    """m = 2^63 - 1 fits, but the stride left out (lda x K) does not: that line gets an error, the
    others their answers (the compiled path's int64 columns overflowed: exit 70)."""
    lines = [json.dumps({"id": f"q{i}", "m": 1024, "n": 1024, "k": 1024, "arch": "gfx90a"}) for i in range(20)]
    lines[3] = json.dumps({"id": "q3", "m": INT64_MAX, "n": 1024, "k": 1024, "arch": "gfx90a"})
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["select", "--queries", str(queries), "--library", SAMPLE, "--json"])
    assert result.exit_code == 3, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert "stride_a left out" in records[3]["error"] and "int64_t" in records[3]["error"]
    assert all(record.get("error") is None for position, record in enumerate(records) if position != 3)


def test_diff_queries_with_a_huge_number_is_a_located_error(tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"m": 8, "n": 8, "k": 8}\n{"m": ' + "7" * 5000 + ', "n": 8, "k": 8}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["diff", SAMPLE, SAMPLE, "--queries", str(queries)])
    assert result.exit_code == 3, result.output
    assert f"{queries}:2:7: a number with more than 1000 digits" in result.stderr

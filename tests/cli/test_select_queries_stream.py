"""``select --queries`` streams (issue 25: 100 000 lines on rocBLAS_Full in <= 600 MB): query lines are
read, answered and written a chunk at a time (:meth:`Library.answer_queries`), with the same answers,
in the same order, as one batch of every line; ``--strict`` still prints nothing when a late line is bad."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import tensilekit
import tensilekit.library
from tensilekit.cli.main import cli
from tensilekit.data import sample_library_path
from tensilekit.errors import SelectionError
from tensilekit.library import WALK_AT_MOST, Library

SAMPLE = str(sample_library_path())
PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample() -> Library:
    return tensilekit.open_library()


def _line(number: int, kind: str, size: int) -> str:
    """One query line of a kind: a served GEMM, another device, another type, an invalid problem, no JSON."""
    if kind == "unreadable":
        return "{not json"
    record: dict[str, object] = {"id": number, "m": size, "n": 1 + size % 977, "k": 64 + size % 3001}
    if kind == "other arch":
        record["arch"] = "gfx942"  # the sample serves gfx90a only: no kernel, with a reason
    elif kind == "half":
        record.update(a_type="Half", b_type="Half", c_type="Half", d_type="Half", compute_type="Float", hpa=True)
    elif kind == "invalid":
        record["m"] = -size - 1
    elif kind == "calls":
        record["calls"] = size
    return json.dumps(record)


LINES = st.lists(
    st.tuples(st.sampled_from(["served", "served", "other arch", "half", "invalid", "unreadable", "calls"]),
              st.integers(1, 20_000)),
    max_size=60,
)  # fmt: skip


def _answers(library: Library, lines: list[str], chunk_size: int | None) -> list[tuple[int, dict[str, object]]]:
    return [(a.line, a.record) for a in library.answer_queries(lines, name="q.jsonl", chunk_size=chunk_size)]


@settings(max_examples=25, deadline=None)
@given(lines=LINES, chunk_size=st.one_of(st.just(1), st.integers(1, 70)))
def test_chunked_answers_equal_one_batch_and_single_selections(
    sample: Library, lines: list[tuple[str, int]], chunk_size: int
) -> None:
    text = [_line(number, kind, size) for number, (kind, size) in enumerate(lines)]
    streamed = _answers(sample, text, chunk_size)
    assert streamed == _answers(sample, text, len(text) + 1)  # one chunk: the whole file at once
    assert [line for line, _ in streamed] == list(range(1, len(text) + 1))  # every line, in order
    for (number, record), line in zip(streamed, text, strict=True):  # each as a single query answers it
        if line.startswith("{not"):
            assert record["error"].startswith(f"q.jsonl:{number}:2: not a JSON object")
            continue
        query = json.loads(line)
        try:
            problem, device = sample.problem_from_query(query), sample.device_of(query)
        except SelectionError as error:
            assert record["error"] == f"q.jsonl:{number}: {error}"
            continue
        selection = sample.select(problem, device)
        reason = None if selection.index is not None else sample.why_not(problem, device)
        calls = query.get("calls")
        assert record == sample.answer_record(
            selection, problem, device, query_id=query["id"], calls=calls if isinstance(calls, int) else None,
            reason=reason,
        )  # fmt: skip


def test_the_cli_spells_the_walk_limit_as_the_library() -> None:
    from tensilekit.cli.commands.select import _WALK_AT_MOST

    assert _WALK_AT_MOST == WALK_AT_MOST


def test_a_chunk_is_answered_before_the_next_lines_are_read(sample: Library) -> None:
    read = 0

    def lines() -> Iterator[str]:
        nonlocal read
        for number in range(400):
            read += 1
            yield _line(number, "served", 100 + number)

    answers = sample.answer_queries(lines(), chunk_size=8)
    first = next(answers)
    # the engine is chosen on the first WALK_AT_MOST + 1 queries; the first chunk is answered then
    assert first.line == 1 and first.record["index"] is not None
    assert read <= WALK_AT_MOST + 1 + 8, read
    later = [next(answers) for _ in range(40)]
    assert read <= 41 + 8 and later[-1].line == 41
    assert sum(1 for _ in answers) == 400 - 41 and read == 400


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "table"])
def test_cli_writes_the_first_chunk_before_stdin_ends(as_json: bool) -> None:
    """Through a pipe: the answers of the first chunk arrive while stdin is still open, as JSON lines
    or as the table's tab-separated rows (a pipe's table is never held whole)."""
    chunk = tensilekit.library.QUERY_CHUNK
    command = [sys.executable, "-m", "tensilekit", "select", "-l", SAMPLE, "--queries", "-"]
    command += ["--json"] if as_json else []
    environment = {**os.environ, "PYTHONPATH": str(PROJECT), "TENSILEKIT_TERMINAL": "0"}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(_line(n, "served", 64 + n % 4000) + "\n" for n in range(chunk)).encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready, "no answer written while stdin is open: the queries are not streamed"
        if as_json:
            first = json.loads(process.stdout.readline())
            assert first["id"] == 0 and first["index"] is not None
        else:
            title, header, row = (process.stdout.readline().decode() for _ in range(3))
            assert title == f"# {SAMPLE}\n" and header.split() == ["id", "index", "distance", "kernel"]
            assert row.split("\t")[0] == "0" and row.split("\t")[1].isdigit()
        process.stdin.write((_line(chunk, "served", 1024) + "\n").encode())
        process.stdin.close()
        rest = process.stdout.read().decode().splitlines()
        assert process.wait(60) == 0, process.stderr.read() if process.stderr else ""
    if as_json:
        assert [json.loads(line)["id"] for line in rest] == list(range(1, chunk + 1))
    else:
        assert [line.split("\t")[0] for line in rest[:-1]] == [str(n) for n in range(1, chunk + 1)]
        assert rest[-1] == f"# {chunk + 1} queries, {chunk + 1} with a kernel, 0 without"


def test_strict_prints_nothing_when_a_line_after_the_first_chunk_is_bad(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tensilekit.library, "QUERY_CHUNK", 4)
    good = [_line(n, "served", 256 + n) for n in range(30)]
    for bad, said in (("{not json", ":31:2: not a JSON object"), (_line(30, "invalid", 5), ":31: invalid query")):
        queries = tmp_path / "q.jsonl"
        queries.write_text("\n".join([*good, bad, *good]) + "\n")
        args = ["select", "-l", SAMPLE, "--queries", str(queries), "--json"]
        result = CliRunner().invoke(cli, [*args, "--strict"])
        assert result.exit_code == 3 and f"{queries}{said}" in result.output, result.output
        assert not [line for line in result.stdout.splitlines() if '"index"' in line]  # no answer written
        # without --strict: every other line answered, the bad one an error record, exit 3 at the end
        result = CliRunner().invoke(cli, args)
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert result.exit_code == 3 and len(records) == 61 and f"{queries}{said}" in records[30]["error"]
        assert all(record["index"] is not None for record in records[:30] + records[31:])
        assert "1 of 61 query line(s) could not be answered" in result.stderr
        # the table in a pipe: rows held back by --strict as the JSON lines are, streamed without it
        table = args[:-1]
        rows = CliRunner().invoke(cli, [*table, "--strict"], env={"TENSILEKIT_TERMINAL": "0"}).stdout.splitlines()
        assert not [row for row in rows if row.split("\t")[0].isdigit()], rows
        rows = CliRunner().invoke(cli, table, env={"TENSILEKIT_TERMINAL": "0"}).stdout.splitlines()
        assert [row.split("\t")[0] for row in rows[2:-1]] == [str(record.get("id")) for record in records]


def test_the_garbage_collector_is_left_as_it_was(tmp_path: Path) -> None:
    """select --queries freezes the heap and raises the young threshold while it answers; a caller
    running it in process (a script, CliRunner) gets the collector back as it was."""
    import gc

    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(_line(n, "served", 64 + n) for n in range(3000)) + "\n")
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["select", "-l", SAMPLE, "--queries", str(queries), "--json"])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3000
    assert (gc.get_threshold(), gc.get_freeze_count()) == (thresholds, frozen)

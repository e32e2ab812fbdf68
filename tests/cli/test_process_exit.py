"""``python -m tensilekit`` and the console script end through :func:`tensilekit.cli.main.run`:
the exit handlers run, the output is flushed, and the process leaves without freeing its heap
object by object (~1 s of a 10 s ``select --queries`` on rocBLAS_Full, issue 25). What a user
sees must be what a normal exit gives: every byte of output, the same status, the handlers run,
other threads finished."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli, exit_status
from tensilekit.data import sample_library_path

PROJECT = Path(__file__).resolve().parents[2]
SAMPLE = str(sample_library_path())


def _python(*arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(PROJECT)}
    return subprocess.run(
        [sys.executable, *arguments], input=stdin, capture_output=True, text=True, env=environment, timeout=120
    )


@pytest.mark.parametrize(
    ("code", "status"), [(None, 0), (0, 0), (3, 3), (70, 70), (256, 0), (-1, 255), (True, 1), ("a message", 1)]
)
def test_exit_status_is_what_python_gives(code: object, status: int) -> None:
    completed = _python("-c", f"import sys; sys.exit({code!r})")
    assert completed.returncode == status == exit_status(code)


def test_answers_and_status_are_those_of_the_in_process_command(tmp_path: Path) -> None:
    """Every answer line arrives (well past one output block), with the status, as in-process."""
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(f'{{"id": {n}, "m": {64 + n}, "n": {n % 977 + 1}, "k": 128}}\n' for n in range(3000)))
    queries.write_text(queries.read_text() + '{"id": "bad", "m": -1, "n": 1, "k": 1}\n')
    arguments = ["select", "-l", SAMPLE, "--queries", str(queries), "--json"]
    in_process = CliRunner().invoke(cli, arguments)
    completed = _python("-m", "tensilekit", *arguments)
    assert completed.stdout == in_process.stdout
    assert len(completed.stdout.splitlines()) == 3001
    assert completed.returncode == in_process.exit_code == 3  # one line could not be answered
    assert "1 of 3001 query line(s) could not be answered" in completed.stderr


@pytest.mark.parametrize(("arguments", "status"), [(["--version"], 0), (["select"], 2), (["info", "/no/such.yaml"], 3)])
def test_statuses_of_usage_and_input_errors(arguments: list[str], status: int) -> None:
    assert _python("-m", "tensilekit", *arguments).returncode == status


def test_exit_handlers_registered_before_still_run() -> None:
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "sys.argv = ['tensilekit', '--version']\n"
        "from tensilekit.cli.main import run\n"
        "run()\n"
    )
    completed = _python("-c", script)
    assert completed.returncode == 0
    assert "version" in completed.stdout and "handler ran" in completed.stderr


def test_a_running_thread_is_waited_for() -> None:
    """With another thread alive the process takes Python's own exit, which joins it."""
    script = (
        "import sys, threading, time\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    print('thread finished', file=sys.stderr, flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "sys.argv = ['tensilekit', '--version']\n"
        "from tensilekit.cli.main import run\n"
        "run()\n"
    )
    completed = _python("-c", script)
    assert completed.returncode == 0 and "thread finished" in completed.stderr


def test_a_closed_reader_is_not_an_error(tmp_path: Path) -> None:
    """``tensilekit … | head -1``: the rest of the output has nowhere to go; status 0, no traceback."""
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(f'{{"id": {n}, "m": {64 + n}, "n": 8, "k": 128}}\n' for n in range(20000)))
    environment = {**os.environ, "PYTHONPATH": str(PROJECT)}
    command = [sys.executable, "-m", "tensilekit", "select", "-l", SAMPLE, "--queries", str(queries), "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline().startswith(b'{"id":0,')
        process.stdout.close()
        assert process.wait(120) == 0
        assert b"Traceback" not in process.stderr.read()

"""CommandRunner implementations: the real SubprocessRunner (against fake tools) and FakeRunner."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tensilekit.errors import ToolFailed, ToolNotFound
from tensilekit.tools.runner import (
    CommandCall,
    CommandRunner,
    CompletedCommand,
    FakeResult,
    FakeRunner,
    SubprocessRunner,
    merged_environment,
    tail,
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            state = stream.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_both_runners_satisfy_the_protocol() -> None:
    assert isinstance(SubprocessRunner(), CommandRunner)
    assert isinstance(FakeRunner(lambda call: ""), CommandRunner)


def test_argv_is_not_shell_split(tmp_path: Path) -> None:
    completed = SubprocessRunner().run(
        [sys.executable, "-c", "import os, sys; print(sys.argv[1]); print(os.getcwd())", "a b; echo $HOME"],
        cwd=tmp_path,
    )
    assert completed.ok and completed.returncode == 0
    assert completed.stdout.splitlines() == ["a b; echo $HOME", str(tmp_path)]
    assert completed.argv[-1] == "a b; echo $HOME" and completed.cwd == str(tmp_path)
    assert completed.duration > 0


def test_fake_tool_on_path_runs(fake_bin: Path) -> None:
    completed = SubprocessRunner().run(["hipblaslt-bench", "-m", "8", "-n", "8", "-k", "8", "--a_type", "f16_r"])
    assert completed.check() is completed
    assert "[0]:transA,transB" in completed.stdout


def test_environment_overrides_set_and_remove(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSILEKIT_TEST_KEEP", "kept")
    monkeypatch.setenv("TENSILEKIT_TEST_DROP", "dropped")
    script = "import os; print(os.environ.get('TENSILEKIT_TEST_KEEP'), os.environ.get('TENSILEKIT_TEST_DROP'), os.environ.get('TENSILEKIT_TEST_NEW'))"
    completed = SubprocessRunner().run(
        [sys.executable, "-c", script], env={"TENSILEKIT_TEST_DROP": None, "TENSILEKIT_TEST_NEW": "new"}
    )
    assert completed.stdout.split() == ["kept", "None", "new"]
    hermetic = SubprocessRunner(base_env={"PATH": os.environ["PATH"]}).run([sys.executable, "-c", script])
    assert hermetic.stdout.split() == ["None", "None", "None"]


def test_non_zero_exit_is_returned_then_checked(fake_bin: Path) -> None:
    completed = SubprocessRunner().run(["Tensile", "config.yaml", "out"], env={"TENSILEKIT_FAKE_EXIT": "3"})
    assert completed.returncode == 3 and not completed.ok
    with pytest.raises(ToolFailed, match="Tensile exited with status 3") as caught:
        completed.check()
    error = caught.value
    assert error.argv == ["Tensile", "config.yaml", "out"]
    assert error.returncode == 3 and not error.timed_out
    assert "simulated failure (status 3)" in error.stderr_tail
    assert error.exit_code == 4
    # the text keeps the tool's last line: every record of the failure says what the tool said
    assert error.message == "Tensile exited with status 3"
    assert str(error).startswith("Tensile exited with status 3; its last output: ")
    assert "simulated failure (status 3)" in str(error)


def test_a_tool_failure_keeps_the_last_lines_of_its_output() -> None:
    traceback = "Traceback (most recent call last):\n  File \"Common.py\", line 1841\n    import filelock\n\n" \
        "ModuleNotFoundError: No module named 'filelock'\n"  # fmt: skip
    completed = CompletedCommand(
        argv=("Tensile", "c.yaml"), returncode=1, stdout="lots of progress\n", stderr=traceback
    )
    error = completed.failure()
    assert error.last_lines[-1] == "ModuleNotFoundError: No module named 'filelock'"
    assert len(error.last_lines) == 4 and error.last_lines[0] == "Traceback (most recent call last):"
    assert str(error) == (
        "Tensile exited with status 1; its last output: Traceback (most recent call last): | "
        "File \"Common.py\", line 1841 | import filelock | ModuleNotFoundError: No module named 'filelock'"
    )
    # stdout when stderr is empty (Tensile reports there); nothing appended when the tool said nothing
    quiet = CompletedCommand(argv=("hipblaslt-bench",), returncode=1, stdout="a\nerror: NO solution found!\n")
    assert str(quiet.failure()).endswith("its last output: a | error: NO solution found!")
    assert str(CompletedCommand(argv=("x",), returncode=2).failure()) == "x exited with status 2"


def test_timeout_kills_the_whole_process_group(fake_bin: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    runner = SubprocessRunner(kill_grace=2.0)
    started = time.monotonic()
    with pytest.raises(ToolFailed, match="timed out after 1 s") as caught:
        runner.run(
            ["hipblaslt-bench", "-m", "8"],
            env={"TENSILEKIT_FAKE_HANG": "60", "TENSILEKIT_FAKE_PIDFILE": str(pidfile)},
            timeout=1,
        )
    assert time.monotonic() - started < 15
    error = caught.value
    assert error.timed_out and error.argv[0] == "hipblaslt-bench"
    assert error.returncode is not None and error.returncode < 0  # killed by a signal
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the tool's own child process survived the timeout"


def test_missing_programs_raise_tool_not_found(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound, match="is not on PATH"):
        SubprocessRunner().run(["tensilekit-no-such-tool-xyz"])
    with pytest.raises(ToolNotFound, match="does not exist"):
        SubprocessRunner().run([str(tmp_path / "bin" / "tool")])
    with pytest.raises(ValueError, match="empty argv"):
        SubprocessRunner().run([])


def test_non_executable_file_raises_tool_not_found(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(ToolNotFound, match="cannot start"):
        SubprocessRunner().run([str(script)])


def test_fake_runner_records_calls_and_builds_results() -> None:
    answers: dict[str, FakeResult | str | CompletedCommand] = {
        "ok": "output\n",
        "bad": FakeResult(returncode=2, stderr="boom"),
        "full": CompletedCommand(argv=("full",), returncode=0, stdout="x"),
    }
    runner = FakeRunner(lambda call: answers[call.argv[0]])
    assert runner.run(["ok", "--flag"], cwd="/tmp", env={"A": "1", "B": None}, timeout=5).stdout == "output\n"
    failed = runner.run(["bad"])
    assert failed.returncode == 2
    with pytest.raises(ToolFailed) as caught:
        failed.check()
    assert caught.value.stderr_tail == "boom"
    assert runner.run(["full"]).stdout == "x"
    assert runner.calls[0] == CommandCall(argv=("ok", "--flag"), cwd="/tmp", env={"A": "1", "B": None}, timeout=5)
    assert [call.argv[0] for call in runner.calls] == ["ok", "bad", "full"]


def test_fake_runner_handler_can_act_out_timeouts() -> None:
    def handler(call: CommandCall) -> str:
        raise ToolFailed("slow timed out", argv=call.argv, timed_out=True)

    with pytest.raises(ToolFailed) as caught:
        FakeRunner(handler).run(["slow"], timeout=1)
    assert caught.value.timed_out


def test_error_tail_prefers_stderr_then_stdout() -> None:
    assert CompletedCommand(argv=("t",), returncode=1, stdout="out", stderr="err").error_tail() == "err"
    assert CompletedCommand(argv=("t",), returncode=1, stdout="out", stderr=" \n").error_tail() == "out"


def test_tail_cuts_at_a_line_start() -> None:
    text = "".join(f"line {number}\n" for number in range(1000))
    cut = tail(text, 100)
    assert cut.startswith("…\nline ") and cut.endswith("line 999\n") and len(cut) <= 102
    assert tail("short") == "short"


def test_merged_environment() -> None:
    assert merged_environment({"A": "1", "B": "2"}, {"B": None, "C": "3"}) == {"A": "1", "C": "3"}
    assert merged_environment({"A": "1"}, None) == {"A": "1"}


def test_ctrl_c_stops_the_tool_and_re_raises(fake_bin: Path, tmp_path: Path) -> None:
    import signal
    import threading

    pidfile = tmp_path / "child.pid"
    # Ctrl-C as Python delivers it by default: a library an earlier test in this process started
    # (Ray's driver) may have replaced the SIGINT handler, so the test puts Python's own back
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            SubprocessRunner(kill_grace=2.0).run(
                ["hipblaslt-bench"], env={"TENSILEKIT_FAKE_HANG": "60", "TENSILEKIT_FAKE_PIDFILE": str(pidfile)}
            )
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


# ------------------------------------------------------------------------------------------
# Stall detection and kill -9 of the caller (issue 22 item 8)


def test_a_run_whose_output_stops_moving_is_killed_as_stalled() -> None:
    script = "import sys, time; print('started', flush=True); time.sleep(60)"
    started = time.monotonic()
    with pytest.raises(ToolFailed) as caught:
        SubprocessRunner(stall_timeout=0.5, kill_grace=1.0).run([sys.executable, "-c", script], timeout=60)
    assert time.monotonic() - started < 10, "the stall limit, not the total timeout, must stop it"
    assert caught.value.stalled and caught.value.timed_out
    assert "stalled (no output for 0.5 s)" in str(caught.value)


def test_a_slow_run_that_keeps_printing_is_not_stalled() -> None:
    script = "import time\nfor i in range(12):\n    print(i, flush=True)\n    time.sleep(0.1)"
    completed = SubprocessRunner(stall_timeout=0.5).run([sys.executable, "-c", script], timeout=60)
    assert completed.ok and completed.stdout.split() == [str(i) for i in range(12)]


def test_stderr_output_counts_as_progress() -> None:
    script = "import sys, time\nfor i in range(8):\n    print(i, file=sys.stderr, flush=True)\n    time.sleep(0.1)"
    completed = SubprocessRunner(stall_timeout=0.4).run([sys.executable, "-c", script], timeout=60)
    assert completed.ok and completed.stderr.split() == [str(i) for i in range(8)]


def test_the_total_timeout_still_applies_to_a_chatty_run() -> None:
    script = "import time\nwhile True:\n    print('x', flush=True)\n    time.sleep(0.05)"
    with pytest.raises(ToolFailed) as caught:
        SubprocessRunner(stall_timeout=5, kill_grace=1.0).run([sys.executable, "-c", script], timeout=0.5)
    assert caught.value.timed_out and not caught.value.stalled
    assert "timed out after 0.5 s" in str(caught.value)


def test_kill_9_of_the_caller_does_not_leave_its_tool_running(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the process-group reaper must stop the tool the caller started."""
    pid_file = tmp_path / "tool.pid"
    tool = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    caller = (
        "import sys; from tensilekit.tools.runner import SubprocessRunner; "
        f"SubprocessRunner().run([sys.executable, '-c', {tool!r}])"
    )
    import subprocess

    import tensilekit

    env = {**os.environ, "PYTHONPATH": str(Path(tensilekit.__file__).resolve().parents[1])}

    process = subprocess.Popen([sys.executable, "-c", caller], env=env)
    tool_pid = None
    try:
        deadline = time.monotonic() + 30
        while tool_pid is None and time.monotonic() < deadline:
            if pid_file.exists() and pid_file.read_text():
                tool_pid = int(pid_file.read_text())
            time.sleep(0.05)
        assert tool_pid is not None and _alive(tool_pid)
        process.kill()
        process.wait()
        deadline = time.monotonic() + 15
        while _alive(tool_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(tool_pid), "the tool outlived the kill -9 of the tensilekit process that started it"
    finally:
        process.kill()
        if tool_pid is not None and _alive(tool_pid):
            os.kill(tool_pid, 9)

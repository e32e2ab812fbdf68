"""Run external programs: the ``CommandRunner`` seam, the real subprocess runner and a fake.

Every tool wrapper takes a :class:`CommandRunner` (one method, ``run``), in the spirit of httpx's
transports: :class:`SubprocessRunner` starts real processes, :class:`FakeRunner` answers from a
function in tests. A runner returns a :class:`CompletedCommand` whatever the exit status; a
wrapper decides whether a non-zero status is fatal (:meth:`CompletedCommand.check`). A runner
raises only when there is no status to return: the program is missing (:class:`ToolNotFound`)
or it ran out of time (:class:`ToolFailed` with ``timed_out=True``).

``SubprocessRunner`` passes argv lists, never a shell. Each child starts in its own process
group (session) so that a timeout, a stall, Ctrl-C or SIGTERM kills the tool *and* everything it
spawned (Tensile starts compilers and the benchmark client): SIGTERM to the group, then SIGKILL
after a grace period. The group is registered with this process's
:class:`~tensilekit.tools.reaper.ProcessGroupReaper` while it runs, so that even a ``kill -9`` of
tensilekit does not leave a benchmark running.

Two clocks stop a run: ``timeout`` (total seconds) and ``stall_timeout`` (seconds without a byte
on stdout or stderr: a tool whose output stops moving is hung, however long it was allowed to
run). hipblaslt-bench prints a row per solution in a screen, but buffers stdout into a pipe,
so a single long ``--verify`` run may print nothing until it ends: the stall limit must exceed
the longest quiet run.
"""

from __future__ import annotations

import dataclasses
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from tensilekit.errors import ToolFailed, ToolNotFound
from tensilekit.tools.reaper import ProcessGroupReaper, process_reaper

EnvOverrides = Mapping[str, str | None]
"""Environment changes for one run: a string sets a variable, None removes it."""

DEFAULT_TAIL_CHARS = 4000


def tail(text: str, limit: int = DEFAULT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``, cut at a line start when one is near."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < limit // 4:
        cut = cut[newline + 1 :]
    return "…\n" + cut


@dataclasses.dataclass(frozen=True)
class CompletedCommand:
    """The outcome of one finished run: argv, exit status, captured output and wall time."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    """Seconds from start to exit."""
    cwd: str | None = None

    @property
    def ok(self) -> bool:
        """True when the exit status is 0."""
        return self.returncode == 0

    def failure(self, message: str | None = None) -> ToolFailed:
        """A :class:`ToolFailed` describing this run (argv, status, stderr tail)."""
        name = Path(self.argv[0]).name if self.argv else "<command>"
        if message is None and self.returncode < 0:  # subprocess' way of saying "killed by a signal"
            try:
                signal_name = signal.Signals(-self.returncode).name
            except ValueError:
                signal_name = "an unknown signal"
            message = f"{name} was killed by signal {-self.returncode} ({signal_name})"
        text = message or f"{name} exited with status {self.returncode}"
        return ToolFailed(text, argv=self.argv, returncode=self.returncode, stderr_tail=self.error_tail())

    def check(self) -> CompletedCommand:
        """Return self when the status is 0, else raise :meth:`failure`."""
        if self.returncode != 0:
            raise self.failure()
        return self

    def error_tail(self, limit: int = DEFAULT_TAIL_CHARS) -> str:
        """The end of stderr, or of stdout when stderr is empty (Tensile reports errors on stdout)."""
        return tail(self.stderr if self.stderr.strip() else self.stdout, limit)


@runtime_checkable
class CommandRunner(Protocol):
    """Runs one command to completion."""

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: EnvOverrides | None = None,
        timeout: float | None = None,
    ) -> CompletedCommand:
        """Run ``argv`` in ``cwd`` with ``env`` applied over the runner's base environment.

        Raises :class:`ToolNotFound` when ``argv[0]`` cannot be found and :class:`ToolFailed`
        (``timed_out=True``) when ``timeout`` seconds pass first. A non-zero exit is *returned*.
        """
        ...


def merged_environment(base: Mapping[str, str], overrides: EnvOverrides | None) -> dict[str, str]:
    """``base`` with ``overrides`` applied (None values remove the variable)."""
    environment = dict(base)
    for name, value in (overrides or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


class SubprocessRunner:
    """Run programs as child processes (argv lists, no shell), killing the group on timeout.

    Args:
        base_env: the environment commands start from; None means the current process's
            environment at the time of each run (never read at construction or import).
        kill_grace: seconds between SIGTERM and SIGKILL when a run is stopped.
        tail_chars: how much of stderr a :class:`ToolFailed` carries.
        stall_timeout: seconds a run may go without output before it is killed as stalled
            (:class:`ToolFailed` with ``timed_out`` and ``stalled``); None never.
        kill_on_exit: register each run's process group with this process's
            :class:`~tensilekit.tools.reaper.ProcessGroupReaper`, which kills it should this
            process die first (even by SIGKILL).
    """

    def __init__(
        self,
        *,
        base_env: Mapping[str, str] | None = None,
        kill_grace: float = 5.0,
        tail_chars: int = DEFAULT_TAIL_CHARS,
        stall_timeout: float | None = None,
        kill_on_exit: bool = True,
    ) -> None:
        if stall_timeout is not None and stall_timeout <= 0:
            raise ValueError("stall_timeout must be > 0 seconds (None: never)")
        self.base_env = dict(base_env) if base_env is not None else None
        self.kill_grace = kill_grace
        self.tail_chars = tail_chars
        self.stall_timeout = stall_timeout
        self.reaper: ProcessGroupReaper | None = process_reaper() if kill_on_exit else None

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: EnvOverrides | None = None,
        timeout: float | None = None,
    ) -> CompletedCommand:
        """Run ``argv`` and wait for it; see :meth:`CommandRunner.run`."""
        args = [str(arg) for arg in argv]
        if not args:
            raise ValueError("empty argv")
        environment = merged_environment(os.environ if self.base_env is None else self.base_env, env)
        executable = self._resolve(args[0], environment, cwd)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                [executable, *args[1:]],
                cwd=None if cwd is None else str(cwd),
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as error:
            raise ToolNotFound(f"cannot start {args[0]}: {error.strerror or error}") from None
        if self.reaper is not None:
            self.reaper.register(process.pid)
        try:
            stdout_bytes, stderr_bytes, reason = self._collect(process, timeout)
            if reason is not None:
                more_out, more_err = self._stop(process)
                stdout_bytes += more_out
                stderr_bytes += more_err
                stderr = _decode(stderr_bytes)
                stalled = reason == "stall"
                what = (
                    f"stalled (no output for {self.stall_timeout or 0:g} s)"
                    if stalled
                    else f"timed out after {timeout or 0:g} s"
                )
                raise ToolFailed(
                    f"{Path(args[0]).name} {what} and was killed",
                    argv=args,
                    returncode=process.returncode,
                    stderr_tail=tail(stderr if stderr.strip() else _decode(stdout_bytes), self.tail_chars),
                    timed_out=True,
                    stalled=stalled,
                ) from None
        except ToolFailed:
            raise
        except BaseException:
            # Ctrl-C, SIGTERM turned into an exception, or anything else: do not leave the tool running.
            self._stop(process)
            raise
        finally:
            if self.reaper is not None:
                self.reaper.unregister(process.pid)
        return CompletedCommand(
            argv=tuple(args),
            returncode=process.returncode,
            stdout=_decode(stdout_bytes),
            stderr=_decode(stderr_bytes),
            duration=time.monotonic() - started,
            cwd=None if cwd is None else str(cwd),
        )

    def _collect(self, process: subprocess.Popen[bytes], timeout: float | None) -> tuple[bytes, bytes, str | None]:
        """Read both pipes until the process closes them and exits; the third value is
        ``"timeout"`` or ``"stall"`` when a clock ran out first (the process still runs)."""
        started = last_output = time.monotonic()
        streams = [stream for stream in (process.stdout, process.stderr) if stream is not None]
        chunks: list[list[bytes]] = [[] for _ in streams]
        with selectors.DefaultSelector() as selector:
            for position, stream in enumerate(streams):
                selector.register(stream, selectors.EVENT_READ, position)
            while selector.get_map():
                deadlines = []
                if timeout is not None:
                    deadlines.append((started + timeout, "timeout"))
                if self.stall_timeout is not None:
                    deadlines.append((last_output + self.stall_timeout, "stall"))
                wait = None
                if deadlines:
                    deadline, reason = min(deadlines)
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        return _joined(chunks) + (reason,)
                for key, _ in selector.select(wait):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.data].append(data)
                        last_output = time.monotonic()
                    else:
                        selector.unregister(key.fileobj)
        remaining = None if timeout is None else max(0.0, started + timeout - time.monotonic())
        try:
            process.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            return _joined(chunks) + ("timeout",)
        for stream in streams:
            stream.close()
        return _joined(chunks) + (None,)

    @staticmethod
    def _resolve(program: str, environment: Mapping[str, str], cwd: str | Path | None) -> str:
        if os.sep in program or (os.altsep and os.altsep in program):
            path = Path(program)
            if not path.is_absolute() and cwd is not None:
                path = Path(cwd) / path
            if not path.exists():
                raise ToolNotFound(f"{program} does not exist")
            return str(path)
        found = shutil.which(program, path=environment.get("PATH", os.defpath))
        if found is None:
            raise ToolNotFound(f"{program} is not on PATH")
        return found

    def _stop(self, process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                return process.communicate(timeout=self.kill_grace)
            except subprocess.TimeoutExpired:
                continue
        # Something that left the group (setsid) still holds the pipes: stop reading them.
        process.kill()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        process.wait()
        return b"", b""


def _joined(chunks: list[list[bytes]]) -> tuple[bytes, bytes]:
    stdout, stderr = (b"".join(parts) for parts in chunks)
    return stdout, stderr


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


@dataclasses.dataclass(frozen=True)
class CommandCall:
    """One call a :class:`FakeRunner` received."""

    argv: tuple[str, ...]
    cwd: str | None
    env: dict[str, str | None]
    timeout: float | None


@dataclasses.dataclass(frozen=True)
class FakeResult:
    """What a :class:`FakeRunner` handler returns for a call."""

    returncode: int = 0
    stdout: str = ""
    stderr: str = ""


FakeHandler = Callable[[CommandCall], "FakeResult | CompletedCommand | str"]


class FakeRunner:
    """A runner that answers from ``handler`` instead of starting processes (tests).

    The handler gets a :class:`CommandCall` and returns a :class:`FakeResult`, a full
    :class:`CompletedCommand`, or just the stdout text (status 0). It may raise
    :class:`ToolFailed` or :class:`ToolNotFound` to act out timeouts and missing tools. Every
    call is recorded in :attr:`calls`.
    """

    def __init__(self, handler: FakeHandler) -> None:
        self.handler = handler
        self.calls: list[CommandCall] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: EnvOverrides | None = None,
        timeout: float | None = None,
    ) -> CompletedCommand:
        """Record the call and return the handler's answer."""
        call = CommandCall(
            argv=tuple(str(arg) for arg in argv),
            cwd=None if cwd is None else str(cwd),
            env=dict(env or {}),
            timeout=timeout,
        )
        self.calls.append(call)
        answer = self.handler(call)
        if isinstance(answer, CompletedCommand):
            return answer
        if isinstance(answer, str):
            answer = FakeResult(stdout=answer)
        return CompletedCommand(
            argv=call.argv, returncode=answer.returncode, stdout=answer.stdout, stderr=answer.stderr, cwd=call.cwd
        )


__all__ = [
    "CommandCall",
    "CommandRunner",
    "CompletedCommand",
    "EnvOverrides",
    "FakeHandler",
    "FakeResult",
    "FakeRunner",
    "SubprocessRunner",
    "merged_environment",
    "tail",
]

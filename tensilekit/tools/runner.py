"""Run external programs: the ``CommandRunner`` seam, the real subprocess runner and a fake.

Every tool wrapper takes a :class:`CommandRunner` (one method, ``run``), in the spirit of httpx's
transports: :class:`SubprocessRunner` starts real processes, :class:`FakeRunner` answers from a
function in tests. A runner returns a :class:`CompletedCommand` whatever the exit status; a
wrapper decides whether a non-zero status is fatal (:meth:`CompletedCommand.check`). A runner
raises only when there is no status to return: the program is missing (:class:`ToolNotFound`)
or it ran out of time (:class:`ToolFailed` with ``timed_out=True``).

``SubprocessRunner`` passes argv lists, never a shell. Each child starts in its own process
group (session) so that a timeout, Ctrl-C or SIGTERM kills the tool *and* everything it spawned
(Tensile starts compilers and the benchmark client): SIGTERM to the group, then SIGKILL after a
grace period.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from tensilekit.errors import ToolFailed, ToolNotFound

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
    """

    def __init__(
        self,
        *,
        base_env: Mapping[str, str] | None = None,
        kill_grace: float = 5.0,
        tail_chars: int = DEFAULT_TAIL_CHARS,
    ) -> None:
        self.base_env = dict(base_env) if base_env is not None else None
        self.kill_grace = kill_grace
        self.tail_chars = tail_chars

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
        try:
            stdout_bytes, stderr_bytes = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stdout_bytes, stderr_bytes = self._stop(process)
            stderr = _decode(stderr_bytes)
            raise ToolFailed(
                f"{Path(args[0]).name} timed out after {timeout:g} s and was killed",
                argv=args,
                returncode=process.returncode,
                stderr_tail=tail(stderr if stderr.strip() else _decode(stdout_bytes), self.tail_chars),
                timed_out=True,
            ) from None
        except BaseException:
            # Ctrl-C, SIGTERM turned into an exception, or anything else: do not leave the tool running.
            self._stop(process)
            raise
        return CompletedCommand(
            argv=tuple(args),
            returncode=process.returncode,
            stdout=_decode(stdout_bytes),
            stderr=_decode(stderr_bytes),
            duration=time.monotonic() - started,
            cwd=None if cwd is None else str(cwd),
        )

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

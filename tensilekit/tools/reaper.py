"""Kill the tools this process started when it dies, even by ``kill -9``.

Every tool runs in its own process group (session), so that a timeout or Ctrl-C can stop the
tool *and* what it spawned (:class:`~tensilekit.tools.runner.SubprocessRunner`). The price is
that a SIGKILL of tensilekit itself, which no handler can catch, would leave those groups
running: a hung hipblaslt-bench would hold its GPU forever. :class:`ProcessGroupReaper` closes
that gap with one small helper process per tensilekit process (started on first use, ~20 ms):
tensilekit tells it, through a pipe, which groups are running; when the pipe reaches end of file
-- tensilekit exited, normally or killed -- the helper sends SIGTERM to every group still
registered and SIGKILL to those still alive a grace period later, then exits.

A forked child (multiprocessing) drops its copy of the pipe, so only the process that started
the tools keeps the helper waiting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

KILL_GRACE_S = 2.0

_HELPER = f"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    try:
        op, group = line[0], int(line[1:])
    except ValueError:
        continue
    if op == "+":
        groups.add(group)
    else:
        groups.discard(group)
def alive(group):
    try:
        os.killpg(group, 0)
        return True
    except OSError:
        return False
for sig in (signal.SIGTERM, signal.SIGKILL):
    groups = {{group for group in groups if alive(group)}}
    for group in groups:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
    deadline = time.monotonic() + {KILL_GRACE_S}
    while groups and sig == signal.SIGTERM and time.monotonic() < deadline:
        time.sleep(0.05)
        groups = {{group for group in groups if alive(group)}}
"""


class ProcessGroupReaper:
    """Registers running process groups with a helper that kills them if this process dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._write: int | None = None
        self._owner = os.getpid()
        self._failed = False
        self._helper: subprocess.Popen[bytes] | None = None

    def _pipe(self) -> int | None:
        if self._owner != os.getpid():  # a forked child: the parent's helper is not ours
            if self._write is not None:
                os.close(self._write)
            self._write, self._owner, self._failed, self._helper = None, os.getpid(), False, None
        if self._write is None and not self._failed:
            read_end, write_end = os.pipe()
            try:
                self._helper = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _HELPER], stdin=read_end, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                )  # fmt: skip
            except OSError:
                os.close(write_end)
                self._failed = True  # no helper: tools still run, only kill -9 cleanup is lost
            else:
                self._write = write_end
            finally:
                os.close(read_end)
        return self._write

    def _send(self, text: str) -> None:
        with self._lock:
            descriptor = self._pipe()
            if descriptor is None:
                return
            try:
                os.write(descriptor, text.encode())
            except OSError:
                self._failed = True
                self._write = None

    def register(self, group: int) -> None:
        """Kill process group ``group`` if this process dies before :meth:`unregister`."""
        self._send(f"+{group}\n")

    def unregister(self, group: int) -> None:
        """``group`` has ended (or was stopped): forget it."""
        self._send(f"-{group}\n")


_REAPER = ProcessGroupReaper()


def process_reaper() -> ProcessGroupReaper:
    """The reaper of this process (one helper per process, started on first registration)."""
    return _REAPER


__all__ = ["KILL_GRACE_S", "ProcessGroupReaper", "process_reaper"]

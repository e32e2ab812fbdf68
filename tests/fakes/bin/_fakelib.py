"""Shared failure switches for the fake AMD executables in this directory (stdlib only).

Environment variables understood by every fake:

TENSILEKIT_FAKE_ARGV_LOG   append one JSON line {"tool", "argv", "cwd", "libpath"} per run to this file
TENSILEKIT_FAKE_EXIT       print an error on stderr and exit with this status before doing anything
TENSILEKIT_FAKE_HANG       sleep this many seconds before doing anything (timeouts)
TENSILEKIT_FAKE_PIDFILE    with HANG: first start a sleeping child process and write its pid here,
                           so a test can check that the whole process group was killed
TENSILEKIT_FAKE_GARBAGE    tool-specific malformed output (see each tool)
TENSILEKIT_FAKE_SOLUTIONS  how many solutions a benchmarking fake reports (default 3)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def start(tool: str) -> None:
    """Log the call and act out the EXIT / HANG switches."""
    log = os.environ.get("TENSILEKIT_FAKE_ARGV_LOG")
    if log:
        record = {
            "tool": tool,
            "argv": sys.argv[1:],
            "cwd": os.getcwd(),
            "libpath": os.environ.get("HIPBLASLT_TENSILE_LIBPATH"),
        }
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(record) + "\n")
    status = os.environ.get("TENSILEKIT_FAKE_EXIT")
    if status:
        sys.stdout.write(f"{tool}: starting\n")
        sys.stderr.write(f"{tool}: fatal error: simulated failure (status {status})\n")
        sys.exit(int(status))
    hang = os.environ.get("TENSILEKIT_FAKE_HANG")
    if hang:
        pidfile = os.environ.get("TENSILEKIT_FAKE_PIDFILE")
        if pidfile:
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(pidfile, "w", encoding="utf-8") as stream:
                stream.write(str(child.pid))
        sys.stdout.write(f"{tool}: working\n")
        sys.stdout.flush()
        time.sleep(float(hang))


def garbage() -> str:
    """The GARBAGE switch's value ('' when unset)."""
    return os.environ.get("TENSILEKIT_FAKE_GARBAGE", "")


def solution_count() -> int:
    """How many solutions to report."""
    return max(1, int(os.environ.get("TENSILEKIT_FAKE_SOLUTIONS", "3")))


def fail(tool: str, message: str, status: int = 1) -> None:
    """Exit like a tool that rejects its command line."""
    sys.stderr.write(f"{tool}: error: {message}\n")
    sys.exit(status)

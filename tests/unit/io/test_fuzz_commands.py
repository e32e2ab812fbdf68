"""Issue 17: a bounded, seeded fuzz run over every input kind and every command.

300 mutated inputs (fixtures and the smallest corpus files: logic, master YAML / msgpack / gzip,
workloads, query files), each read through the API and run through four commands in turn
(in-process, click's CliRunner). Fails on any exit 70 or escaping exception, any API error that
is not a TensilekitError, and any run over 10 s. ``bench/fuzz.py --minutes N`` is the long run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fuzz_driver import commands, find_corpus, fuzz  # noqa: E402

CASES = 300
PER_CASE = 4


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM bounds each run")
def test_no_crash_hang_or_foreign_exception() -> None:
    report = fuzz(find_corpus(), seed=17, cases=CASES, seconds=None, per_case=PER_CASE)
    assert report.cases == CASES and report.runs >= CASES * 2
    assert not report.failures, f"{len(report.failures)} failure(s), first:\n" + "\n".join(report.failures[:5])
    # the run did exercise both sides: inputs refused with an input error, and inputs that worked
    assert report.outcomes["exit 3 (bad input)"] > 0 and report.outcomes["exit 0"] > 0
    assert report.outcomes["api TensilekitError"] > 0 and report.outcomes["api ok"] > 0


def test_every_command_is_driven() -> None:
    driven = {template[0] for kind in ("logic", "master", "workload", "queries") for template in commands(kind)}
    assert driven >= {
        "validate",
        "info",
        "lint",
        "select",
        "diff",
        "coverage",
        "build-master",
        "merge",
        "prune",
        "convert",
    }

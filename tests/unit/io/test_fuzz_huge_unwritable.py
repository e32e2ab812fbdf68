"""Issue 23 items 10, 11 and 13 in the fuzz: a bounded, seeded run of the huge-integer and
unwritable-output generators (tests/fuzz_driver.py, the block at its end).

Huge numbers (2^31 … 2^64 + 5, 10^30, 1 000+ digits, 100 000 brackets) in workloads, query files,
masters and logic files, each read through the API and one command; and every writing command run
with its output refused (ENOSPC / EROFS / EACCES / EDQUOT at create, fsync, rename or mkdir).
Fails on exit 70, an escaping exception, a refused write that is not exit 4 with the message, a
changed old output or a temporary left behind. ``bench/fuzz.py --huge-and-unwritable`` is the
long run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fuzz_driver import WRITING_COMMANDS, find_corpus, fuzz_huge_and_unwritable  # noqa: E402

CASES = 35  # each writing command under each kind of refusal at least once (7 x 5)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM bounds each run")
def test_huge_integers_and_refused_outputs_never_crash() -> None:
    report = fuzz_huge_and_unwritable(find_corpus(), seed=23, cases=CASES, seconds=None)
    assert report.cases == 2 * CASES
    assert not report.failures, f"{len(report.failures)} failure(s), first:\n" + "\n".join(report.failures[:5])
    assert report.outcomes["exit 4 (not writable)"] >= len(WRITING_COMMANDS)  # refusals did reach the writes
    assert report.outcomes["exit 3 (bad input)"] > 0 and report.outcomes["api TensilekitError"] > 0

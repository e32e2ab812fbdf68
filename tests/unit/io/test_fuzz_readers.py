"""Issue 23: a bounded, seeded run of the hostile-reader generators (tests/fuzz_driver.py):
zstd bombs and stray frames, indexed hybrids, nesting around the limit, duplicated keys.

Each generated input is read through the API and run through two commands of its kind in turn
(in-process). Fails on any exit 70 or escaping exception, any API error that is not a
TensilekitError, and any run over 10 s. ``bench/fuzz.py --readers --minutes N`` is the long run.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fuzz_driver import READER_GENERATORS, fuzz_readers  # noqa: E402

CASES = 12  # three of each kind
PER_CASE = 2


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM bounds each run")
def test_hostile_reader_cases_neither_crash_nor_hang() -> None:
    report = fuzz_readers(seed=23, cases=CASES, seconds=None, per_case=PER_CASE)
    assert report.cases == CASES and report.runs >= CASES * 2
    assert not report.failures, f"{len(report.failures)} failure(s), first:\n" + "\n".join(report.failures[:5])
    assert report.outcomes["exit 3 (bad input)"] > 0 and report.outcomes["exit 0"] > 0


@pytest.mark.parametrize("kind", sorted(READER_GENERATORS))
def test_each_generator_is_deterministic(kind: str) -> None:
    first = READER_GENERATORS[kind](random.Random(7))
    assert first == READER_GENERATORS[kind](random.Random(7))
    seed, label, data = first
    assert seed.data == data and label and data

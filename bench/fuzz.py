"""Long hostile-input fuzz run (issue 17): counts of outcomes over mutated inputs of every kind.

    python bench/fuzz.py [--minutes N] [--seed S] [--corpus PATH] [--readers [KIND ...] | --huge-and-unwritable]

Drives the API and every command (in-process) on mutated fixtures and small corpus files, as
tests/unit/io/test_fuzz_commands.py does in CI (bounded there to 300 inputs), here for N minutes
and every command of each input kind. Prints inputs, runs and counts by outcome, then the first
failures (exit 70 / escaping exception, non-TensilekitError from the API, runs over 10 s); exits 1
if there was any. ``--readers`` runs the hostile-reader generators instead (issue 23: zstd bombs
and stray frames, indexed hybrids, deep nesting, duplicates; name kinds to run only those).

``--huge-and-unwritable`` (issue 23 items 10, 11, 13) runs the other generators instead: numbers
out of their C++ range (2^31 … 2^64 + 5, 1 000+ digits, 100 000 brackets) in every input kind,
and every writing command with its output refused (ENOSPC / EROFS / EACCES / EDQUOT injected at
create, fsync, rename or mkdir); a refused write must exit 4 naming it, leave the old output and
no temporary. With ``--tune`` the simulated tuning run is among the writing commands.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fuzz_driver import READER_GENERATORS, find_corpus, fuzz, fuzz_huge_and_unwritable, fuzz_readers  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--tune", action="store_true", help="also run simulated tuning on workloads (slow)")
    parser.add_argument(
        "--readers", nargs="*", choices=sorted(READER_GENERATORS), default=None, metavar="KIND",
        help=f"run the hostile-reader generators instead ({', '.join(sorted(READER_GENERATORS))}; default all)",
    )  # fmt: skip
    parser.add_argument(
        "--huge-and-unwritable", action="store_true", help="huge integers and refused outputs (issue 23) instead"
    )
    options = parser.parse_args()
    corpus = options.corpus or find_corpus()
    start = time.monotonic()
    if options.readers is not None:
        seconds = options.minutes * 60
        report = fuzz_readers(
            seed=options.seed, cases=None, seconds=seconds, per_case=None, kinds=tuple(options.readers)
        )
    elif options.huge_and_unwritable:
        report = fuzz_huge_and_unwritable(
            corpus, seed=options.seed, cases=None, seconds=options.minutes * 60, slow=options.tune
        )
    else:
        report = fuzz(
            corpus, seed=options.seed, cases=None, seconds=options.minutes * 60, per_case=None, slow=options.tune
        )
    elapsed = time.monotonic() - start
    print(f"{report.cases} inputs, {report.runs} runs (API reads and commands) in {elapsed:.0f} s, seed {options.seed}")
    print(f"corpus: {corpus or 'absent (fixtures only)'}")
    for outcome, count in sorted(report.outcomes.items(), key=lambda item: -item[1]):
        print(f"  {outcome:24s} {count:7d}")
    print(f"failures: {len(report.failures)}")
    for failure in report.failures[:10]:
        print("---", failure)
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

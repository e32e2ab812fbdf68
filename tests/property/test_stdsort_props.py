"""Property test: :func:`tensilekit.selection.stdsort.matching_table_order` is libstdc++'s ``std::sort``.

The runtime sorts each ``Matching`` table with ``std::sort`` and the runtime comparator
(``Serialization/MatchingLibrary.hpp``: key ascending, then speed descending); ties keep whatever
order introsort leaves, and that order decides which duplicate answers (issue 23 item 1). Here the
same comparator is compiled with the system g++ (skipped without one) and both order many random
tables with heavy ties, batched into one process call per example.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.selection.stdsort import matching_table_order  # noqa: E402

_SOURCE = r"""
#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>
struct Entry { std::array<long long, 2> key; double speed; int id; };
int main() {
    int n;
    while (std::scanf("%d", &n) == 1) {
        std::vector<Entry> table(n);
        for (int i = 0; i < n; ++i) {
            std::scanf("%lld %lld %lf", &table[i].key[0], &table[i].key[1], &table[i].speed);
            table[i].id = i;
        }
        auto comp = [](Entry const& e1, Entry const& e2) {
            return e1.key < e2.key || (e1.key == e2.key && e1.speed > e2.speed);
        };
        std::sort(table.begin(), table.end(), comp);
        for (auto const& e : table) std::printf("%d ", e.id);
        std::printf("\n");
    }
}
"""


@pytest.fixture(scope="module")
def libstdcxx_sort(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("no g++ to compile libstdc++'s std::sort with")
    folder = tmp_path_factory.mktemp("stdsort")
    (folder / "sort.cpp").write_text(_SOURCE)
    subprocess.run([compiler, "-O2", "-o", str(folder / "sort"), str(folder / "sort.cpp")], check=True, timeout=300)
    return folder / "sort"


_TABLE = st.lists(
    st.tuples(st.integers(0, 6), st.integers(0, 3), st.sampled_from([0.0, 1.0, 2.5])), min_size=0, max_size=300
)


@settings(max_examples=60, deadline=None, database=None)
@given(tables=st.lists(_TABLE, min_size=1, max_size=20))
def test_matching_table_order_is_libstdcxx_std_sort(
    libstdcxx_sort: Path, tables: list[list[tuple[int, int, float]]]
) -> None:
    text = "".join(f"{len(t)} " + " ".join(f"{a} {b} {s}" for a, b, s in t) + "\n" for t in tables)
    done = subprocess.run([str(libstdcxx_sort)], input=text, capture_output=True, text=True, timeout=60, check=True)
    for table, line in zip(tables, done.stdout.splitlines(), strict=True):
        want = [int(item) for item in line.split()]
        assert matching_table_order([(a, b) for a, b, _ in table], [s for _, _, s in table]) == want, table

"""coverage.slice: which problem type and K a coverage map shows, and over which M/N range."""

from __future__ import annotations

import pytest

from tensilekit.api import load_for_selection
from tensilekit.coverage import CoverageGemm, coverage_of, map_slice, type_name
from tensilekit.data import sample_library_path
from tensilekit.errors import SelectionError
from tensilekit.selection import GemmProblem, Hardware

DEVICE = Hardware(arch="gfx90a")


def gemm(m: int, n: int, k: int, calls: int, **fields: object) -> CoverageGemm:
    problem = GemmProblem(m=m, n=n, k=k, **fields)  # type: ignore[arg-type]
    return CoverageGemm(problem, DEVICE, type_name(problem), calls)


def test_the_heaviest_type_at_its_heaviest_k_over_the_range_of_its_gemms() -> None:
    library, _ = load_for_selection(sample_library_path())
    report = coverage_of(
        library,
        [
            gemm(64, 8, 1024, 1),
            gemm(4096, 2048, 4096, 10),
            gemm(2048, 2048, 1024, 1),
            gemm(8, 8, 8, 1, a_type="Half", compute_type="Float", trans_a="T"),
        ],
    )
    cut = map_slice(report)
    assert (cut.gemm_type, cut.k, len(cut.gemms)) == ("SSS_NN", 4096, 3)
    assert (cut.problem.m, cut.problem.n, cut.problem.k) == (1, 1, 4096)
    assert (cut.low, cut.high) == (4, 8192)
    half = map_slice(report, gemm_type="HHS_TN")
    assert (half.k, half.problem.trans_a, half.problem.a_type.value) == (8, "T", "Half")
    assert map_slice(report, k=1024).k == 1024
    with pytest.raises(SelectionError, match="no DDD_NN GEMM"):
        map_slice(report, gemm_type="DDD_NN")


def test_the_default_type_is_the_heaviest_the_library_serves() -> None:
    """A workload whose heaviest type the library lacks: the map shows the heaviest type it has a
    kernel for, never a blank map of the one it lacks (issue 32 item 9)."""
    library, _ = load_for_selection(sample_library_path())
    lacked = gemm(4096, 4096, 4096, 1000, a_type="Double", compute_type="Double")  # the sample has no Double kernel
    report = coverage_of(library, [lacked, gemm(1024, 1024, 1024, 1)])
    assert max(report.gemms, key=lambda item: item.weight).gemm.gemm_type == lacked.gemm_type
    assert map_slice(report).gemm_type == "SSS_NN"
    assert map_slice(report, gemm_type=lacked.gemm_type).gemm_type == lacked.gemm_type  # named: as asked

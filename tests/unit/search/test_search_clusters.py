"""Similar sizes of one GEMM type share a search group."""

from __future__ import annotations

import pytest

from tensilekit.search.clusters import cluster_sizes
from tensilekit.search.params import ProblemShape


def shape(m: int, n: int, k: int, batch: int = 1) -> ProblemShape:
    return ProblemShape(m, n, batch, k)


def test_decode_and_prefill_sizes_split() -> None:
    shapes = [shape(6144, 8, 4096), shape(6144, 2048, 4096), shape(4096, 1, 4096), shape(4096, 2048, 14336),
              shape(128256, 8, 4096), shape(2048, 2048, 128, batch=32)]  # fmt: skip
    assert cluster_sizes(shapes) == [[0, 2], [1, 3], [4], [5]]


def test_limits_and_order() -> None:
    shapes = [shape(4096, 16, 4096)] * 5
    assert cluster_sizes(shapes, max_size=2) == [[0, 1], [2, 3], [4]]
    assert cluster_sizes([shape(1024, 64, 1024), shape(8192, 64, 1024)], max_distance=3.0) == [[0, 1]]
    assert cluster_sizes([shape(1024, 64, 1024), shape(8192, 64, 1024)]) == [[0], [1]]
    assert cluster_sizes([]) == []
    with pytest.raises(ValueError):
        cluster_sizes(shapes, max_size=0)

"""Size clustering: similar GEMM sizes of one type share a tuning config (and a search).

GEKO writes one config per group of sizes (``BBS_TN_0.yaml``, ``BBS_TN_1.yaml`` …) so that one
benchmark run serves several sizes. tensilekit groups sizes whose M, N and K are within a
factor of ``2**max_distance`` of every other member's and whose batch is alike (1 or more).

Algorithm: sizes are visited in a fixed order (batch class, then log2 N, M, K, then input
position); each joins the first existing cluster all of whose members are close enough and
that has room (``max_size``), else it opens a new cluster. Dimensions below 16 count as 16
(the smallest tile: N = 1 and N = 8 decode GEMMs run the same kernels). The result depends only
on the sizes and their input order.

Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tensilekit._arguments import require_items
from tensilekit.search.params import ProblemShape

SMALLEST_TILE = 16


def _features(shape: ProblemShape) -> tuple[float, float, float]:
    return tuple(math.log2(max(value, SMALLEST_TILE)) for value in (shape.m, shape.n, shape.k))  # type: ignore[return-value]


def cluster_sizes(shapes: Sequence[ProblemShape], *, max_distance: float = 2.0, max_size: int = 8) -> list[list[int]]:
    """Group ``shapes`` (one GEMM type) into clusters of similar sizes.

    Args:
        shapes: the sizes, in workload order.
        max_distance: largest allowed ``|log2 a - log2 b|`` between any two members, per
            dimension (2.0: within a factor of 4).
        max_size: most sizes per cluster (one benchmark run times every kernel on each).

    Returns:
        Clusters as lists of indices into ``shapes``, each sorted; clusters ordered by their
        first index.
    """
    shapes = require_items(shapes, ProblemShape, "shapes", "cluster_sizes")
    if max_size < 1:
        raise ValueError("max_size must be at least 1")
    features = [_features(shape) for shape in shapes]
    order = sorted(
        range(len(shapes)),
        key=lambda index: (shapes[index].batch > 1, features[index][1], features[index][0], features[index][2], index),
    )
    clusters: list[list[int]] = []
    for index in order:
        for cluster in clusters:
            if len(cluster) >= max_size or (shapes[cluster[0]].batch > 1) != (shapes[index].batch > 1):
                continue
            if all(
                abs(features[index][axis] - features[member][axis]) <= max_distance + 1e-9
                for member in cluster
                for axis in range(3)
            ):
                cluster.append(index)
                break
        else:
            clusters.append([index])
    return sorted((sorted(cluster) for cluster in clusters), key=lambda cluster: cluster[0])


__all__ = ["cluster_sizes"]

"""Decision-tree features in single precision, as Tensile's ``MLFeatures`` computes them.

``DecisionTree`` nodes evaluate their ``features`` into a ``float`` (float32) key once per query
(``ProblemKey::keyForProblem<…, float>``) and compare it with float thresholds. Every function
here takes numpy arrays (or scalars) of the problem sizes and returns float32 values, so the
reference walk and the vectorised batch path share one implementation:

* ``FreeSizeA``/``FreeSizeB``/``BatchSize``/``BoundSize``: ``(float)size``.
* ``Tile0Granularity v``: ``t = (float)M · v``; ``t / ceil(t)`` (``ContractionSolution::computeGranularity``).
* ``Tile1Granularity v``: the same with N.
* ``CUGranularity {mt0, mt1, cus}``: ``t = ceil(M·mt0) · ceil(N·mt1) · cus`` (batch counted as 1,
  ``MLFeatures::tilesPerCU``), then ``t / ceil(t)``.
* ``WavesPerSIMD {mt0, mt1, cus, ws}``: ``ceil(t) · ws``.

A zero size gives ``0/0 = nan`` exactly as in C++; ``nan <= threshold`` is false, so the tree
takes the "greater" branch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit.errors import SelectionError

F32 = np.float32
FloatArray = npt.NDArray[np.float32]


def _f32(value: Any) -> FloatArray:
    return np.asarray(value).astype(F32)


def _granularity(tiles: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = (tiles / np.ceil(tiles)).astype(F32)
    return result


def _tiles_per_cu(m: Any, n: Any, factors: dict[str, Any]) -> FloatArray:
    tiles_m = _f32(m) * F32(factors["mt0"])
    tiles_n = _f32(n) * F32(factors["mt1"])
    total = (np.ceil(tiles_m) * np.ceil(tiles_n)).astype(F32)
    result: FloatArray = (total * F32(factors["cus"])).astype(F32)
    return result


def feature_value(feature: Any, m: Any, n: Any, batch: Any, k: Any) -> FloatArray:
    """Evaluate one ``features`` entry (a ``Property`` model or ``{type, index, value}``)."""
    kind = getattr(feature, "type", None)
    if kind is None and isinstance(feature, dict):
        kind = feature.get("type")
    value = getattr(feature, "value", None) if not isinstance(feature, dict) else feature.get("value")
    index = getattr(feature, "index", None) if not isinstance(feature, dict) else feature.get("index")
    if kind in ("FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize"):
        if index not in (None, 0):
            raise SelectionError(f"feature {kind}({index}): a GEMM has one index of each kind")
        return _f32({"FreeSizeA": m, "FreeSizeB": n, "BatchSize": batch, "BoundSize": k}[kind])
    if kind == "Tile0Granularity":
        return _granularity((_f32(m) * F32(value)).astype(F32))
    if kind == "Tile1Granularity":
        return _granularity((_f32(n) * F32(value)).astype(F32))
    if kind == "CUGranularity":
        return _granularity(_tiles_per_cu(m, n, _factors(value, kind)))
    if kind == "WavesPerSIMD":
        factors = _factors(value, kind)
        result: FloatArray = (np.ceil(_tiles_per_cu(m, n, factors)) * F32(factors["ws"])).astype(F32)
        return result
    raise SelectionError(f"unknown decision-tree feature {kind!r}")


def _factors(value: Any, kind: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SelectionError(f"feature {kind} needs a mapping value ({{mt0, mt1, cus[, ws]}})")
    return value


def feature_key(features: list[Any], m: Any, n: Any, batch: Any, k: Any) -> FloatArray:
    """The float32 key of a forest: one column per feature (shape ``(len(features),)`` for scalars)."""
    columns = [feature_value(feature, m, n, batch, k) for feature in features]
    stacked: FloatArray = np.stack(columns, axis=-1).astype(F32)
    return stacked


def predict(tree: list[Any], key: Any) -> bool:
    """``Tree::predict`` for one float32 key: walk from node 0; -1 is false, -2 is true."""
    node = 0
    size = len(tree)
    while 0 <= node < size:
        current = tree[node]
        feature = int(getattr(current, "feature_index", 0))
        threshold = F32(getattr(current, "threshold", 0.0))
        node = int(current.next_index_lte if key[feature] <= threshold else current.next_index_gt)
        if node == -1:
            return False
        if node == -2:
            return True
    raise SelectionError("decision tree walked out of bounds")


__all__ = ["feature_key", "feature_value", "predict"]

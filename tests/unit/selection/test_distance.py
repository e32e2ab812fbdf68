"""Distances of Tensile's Distance.hpp, operand by operand."""

from __future__ import annotations

import math

import pytest

from tensilekit.selection.distance import (
    DISTANCES,
    GlibcRand,
    _c_round,
    equality_distance,
    euclidean_bound,
    euclidean_distance,
    grid_based_distance,
    jsd_bound,
    jsd_distance,
    manhattan_bound,
    manhattan_distance,
    ratio_distance,
)


def test_euclidean_is_squared() -> None:
    assert euclidean_distance((1, 2, 3), (4, 6, 3)) == 25.0
    assert equality_distance((1, 2, 3, 4), (1, 2, 3, 4)) == 0.0


def test_euclidean_bound_looks_at_the_first_component_only() -> None:
    assert euclidean_bound((64, 4096, 128), (256, 4096, 128), 36865.0)
    assert not euclidean_bound((64, 4096, 128), (256, 4096, 128), 36864.0)  # 192² == 36864, not below
    assert euclidean_bound((5, 5, 5), (5, 5, 5), 0.0)  # an identical key always passes


def test_manhattan() -> None:
    assert manhattan_distance((1, 2, 3), (4, 6, 3)) == 7.0
    assert manhattan_bound((1, 0, 0), (4, 100, 100), 3.5)
    assert not manhattan_bound((1, 0, 0), (4, 100, 100), 3.0)


def test_ratio_and_ieee_special_values() -> None:
    assert ratio_distance((1, 2, 3), (4, 6, 3)) == pytest.approx(1 + math.log(4) + math.log(3))
    assert ratio_distance((0, 1, 1), (1, 1, 1)) == math.inf  # ln(0) = -inf, no exception
    assert math.isnan(ratio_distance((0, 1, 1), (0, 1, 1)))  # 0/0


def test_jsd() -> None:
    assert jsd_distance((1, 2, 3), (2, 4, 6)) == pytest.approx(0.0, abs=1e-15)
    assert jsd_distance((1, 2, 3), (3, 2, 1)) == pytest.approx(jsd_distance((3, 2, 1), (1, 2, 3)))
    assert jsd_distance((1, 1, 100), (100, 1, 1)) > 0.3
    assert jsd_bound((1, 2, 3), (1, 2, 3), 0.0)


def test_grid_based_inside_the_grid() -> None:
    # stepM = stepN = 1; coverage 100·200 / (128·256); K term |32 - 64| / (32 + 8·64)
    expected = 268 + 32 / (32 + 8 * 64)
    assert grid_based_distance((100, 200, 64), (128, 256, 32)) == pytest.approx(expected, abs=1e-12)


def test_grid_based_beyond_the_grid() -> None:
    spread = math.pow(math.pow(40000 - 32768, 2) + math.pow(100 - 128, 2), 0.5)
    expected = _c_round(10000 * spread) + 0 / (10 + 80)
    assert grid_based_distance((40000, 100, 10), (32768, 128, 10)) == expected


def test_c_round_is_half_away_from_zero() -> None:
    assert _c_round(2.5) == 3.0 and _c_round(-2.5) == -3.0 and _c_round(0.49999999999999994) == 0.0


def test_glibc_rand_sequence() -> None:
    rand = GlibcRand(1)
    assert [rand() for _ in range(3)] == [1804289383, 846930886, 1681692777]


def test_registry_names_every_distance() -> None:
    assert set(DISTANCES) == {"Euclidean", "Equality", "Manhattan", "Ratio", "JSD", "Random", "GridBased"}
    assert DISTANCES["Euclidean"].bound_on_first == "square"
    assert DISTANCES["GridBased"].improvement_possible((1, 1, 1), (9, 9, 9), 0.0)

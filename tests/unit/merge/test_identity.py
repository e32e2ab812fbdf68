"""Unit tests for tensilekit.merge.identity and tensilekit.merge.efficiency."""

from __future__ import annotations

from typing import Any

import pytest
from merge_factory import solution

from tensilekit.errors import MergeError
from tensilekit.merge.efficiency import compare_units, guess_unit
from tensilekit.merge.identity import (
    Compat,
    IdentityIndex,
    dict_identity,
    freeze,
    identity_function,
    kernel_bucket,
    name_identity,
    sanitize_solution,
)
from tensilekit.merge.report import EfficiencyUnit
from tensilekit.model.logic import Dialect


def test_freeze_follows_python_equality() -> None:
    assert freeze({"a": [1, 2], "b": {"c": True}}) == freeze({"b": {"c": 1}, "a": [1.0, 2]})
    assert hash(freeze({"a": [1, 2]})) == hash(freeze({"a": [1.0, 2.0]}))
    assert freeze({"a": [1, 2]}) != freeze({"a": (1, 2, 3)})
    assert freeze({"a": 1}) != freeze([("a", 1)])


def test_dict_identity_ignores_index_and_min_name_only() -> None:
    base = solution()
    assert dict_identity(base) == dict_identity({**base, "SolutionIndex": 9, "SolutionNameMin": "x"})
    assert dict_identity(base) != dict_identity({**base, "KernelNameMin": "x"})
    assert dict_identity(base) != dict_identity({**base, "LoopTail": True})  # absent != default


def test_name_identity_fills_defaults_and_normalises() -> None:
    base = solution()
    assert name_identity(base) == name_identity({**base, "LoopTail": True, "Valid": True, "MIWaveTile": [1, 1]})
    assert name_identity(base) != name_identity({**base, "LoopTail": False})
    source = solution(KernelLanguage="Source", WorkGroupMapping=-4)
    assert name_identity(source) == name_identity({**source, "WorkGroupMapping": 4})
    headerless: dict[str, Any] = {k: v for k, v in base.items() if k != "ProblemType"}
    assert name_identity(headerless, base["ProblemType"]) == name_identity(base)


def test_sanitize() -> None:
    raw = solution(StaggerU=0, StaggerUStride=256)
    assert sanitize_solution(raw) and raw["StaggerUStride"] == 0 and raw["_staggerStrideShift"] == 0
    assert not sanitize_solution(raw)
    assert not sanitize_solution(solution(StaggerU=32))


def test_identity_index_finds_first_equal_lazily_within_buckets() -> None:
    calls: list[tuple[int, int]] = []

    def identity(raw: Any) -> Any:
        calls.append((raw["MacroTile0"], raw["DepthU"]))
        return (raw["MacroTile0"], raw["DepthU"], raw.get("LoopTail"))

    pool = [solution(16), solution(32), solution(16, LoopTail=True), solution(16)]
    index = IdentityIndex(pool, identity)
    bucket = kernel_bucket(pool[0])
    assert kernel_bucket(pool[2]) == bucket != kernel_bucket(pool[1])
    assert index.find((16, 16, None), bucket) == 0 and calls == [(16, 16)]
    # a miss scans only its own bucket (never the MacroTile0=32 kernel), in pool order
    assert index.find((16, 16, False), bucket) is None and calls == [(16, 16), (16, 16), (16, 16)]
    assert index.find((16, 16, None), bucket) == 0  # the first equal entry, not the last
    new = solution(16, LoopTail=False)
    assert index.append(new, (16, 16, False), bucket) == 4 and index.find((16, 16, False), bucket) == 4
    assert index.identity_at(3) == (16, 16, None)


def test_kernel_bucket() -> None:
    assert kernel_bucket(solution(64)) == kernel_bucket({**solution(64), "MacroTile0": 64.0})
    assert kernel_bucket(solution(64, CustomKernelName="k")) == ("custom", "k")
    assert kernel_bucket({"MacroTile0": 1, "MacroTile1": 2}) == kernel_bucket(
        {"MacroTile0": 1, "MacroTile1": 2, "DepthU": -1}
    )


def test_identity_failure_is_a_merge_error() -> None:
    broken = solution()
    del broken["MacroTile0"]
    index = IdentityIndex([broken], identity_function(Compat.TENSILE), file="x.yaml", file_positions=[7])
    with pytest.raises(MergeError) as raised:
        index.find("anything", kernel_bucket(broken))
    assert raised.value.location is not None and raised.value.location.path is not None
    assert raised.value.location.path.startswith("[5][7]") and raised.value.location.file == "x.yaml"


def test_compat_for_dialect() -> None:
    assert Compat.for_dialect(Dialect.TENSILE) is Compat.TENSILE
    assert Compat.for_dialect(Dialect.TENSILELITE) is Compat.TENSILELITE


@pytest.mark.parametrize(
    ("values", "metric", "unit"),
    [
        ([], None, EfficiencyUnit.UNKNOWN),
        ([0.0, 0.0], "DeviceEfficiency", EfficiencyUnit.NONE),
        ([4250.0, 14735.0], None, EfficiencyUnit.GFLOPS),
        ([12.6, 44.5], None, EfficiencyUnit.PERCENT),
        ([52.2, 88.2], "DeviceEfficiency", EfficiencyUnit.PERCENT),
        ([52.2, 1200.0], "DeviceEfficiency", EfficiencyUnit.GFLOPS),
    ],
)
def test_guess_unit(values: list[float], metric: str | None, unit: EfficiencyUnit) -> None:
    assert guess_unit(values, metric).unit is unit


def test_compare_units() -> None:
    mixed = compare_units(guess_unit([4250.0], None), guess_unit([44.5], None))
    assert mixed.mixed and mixed.message and "gflops" in mixed.message
    assert not compare_units(guess_unit([0.0], None), guess_unit([44.5], None)).mixed


def test_canonical_follows_python_equality() -> None:
    from tensilekit.merge.identity import canonical

    assert canonical({"a": [1, True], "b": {0: 2.0}}) == canonical({"b": {0: 2}, "a": [1.0, 1]})
    assert canonical({"a": "1"}) != canonical({"a": 1})
    assert canonical([1, 2]) != canonical([2, 1])
    assert canonical({"a": None}) != canonical({"a": "None"})
    nan = float("nan")
    assert canonical(nan) != canonical(float("nan"))
    assert dict_identity({"x": 1, "SolutionIndex": 3}) == dict_identity({"x": 1.0})

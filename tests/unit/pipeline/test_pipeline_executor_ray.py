"""The Ray executor is an optional extra: a clear message when Ray is missing."""

from __future__ import annotations

import sys

import pytest

from tensilekit.errors import MissingDependency
from tensilekit.pipeline.executors.ray import RayExecutor, import_ray


def test_missing_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"install tensilekit\[ray\]"):
        import_ray()
    with pytest.raises(MissingDependency, match=r"install tensilekit\[ray\]"):
        RayExecutor()

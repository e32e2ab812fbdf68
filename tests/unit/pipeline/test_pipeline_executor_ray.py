"""The Ray executor is an optional extra: a clear message when Ray is missing; how it connects."""

from __future__ import annotations

import sys

import pytest

from tensilekit.errors import MissingDependency, ToolError
from tensilekit.pipeline.executors.ray import RayExecutor, import_ray


def test_missing_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r'pip install -e "\.\[ray\]" in the tensilekit checkout'):
        import_ray()
    with pytest.raises(MissingDependency, match=r'pip install -e "\.\[ray\]" in the tensilekit checkout'):
        RayExecutor()


def test_without_address_a_private_local_instance_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    # ray.init is recorded, not run: starting Ray twice in one process is slow on a loaded machine.
    import types

    from tensilekit.pipeline.executors import ray as ray_executor

    calls: list[dict[str, object]] = []
    fake = types.SimpleNamespace(is_initialized=lambda: False, init=lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(ray_executor, "import_ray", lambda: fake)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")  # a cluster it must not join
    executor = ray_executor.RayExecutor(local_devices=3)
    executor._connect()
    [call] = calls
    assert call["address"] == "local" and call["resources"] == {"tensilekit_device": 3}
    with pytest.raises(ToolError, match="cannot reach the Ray cluster at 127.0.0.1:9"):
        ray_executor.RayExecutor("127.0.0.1:9", connect_timeout=2)._connect()
    assert len(calls) == 1  # an unreachable address never gets to ray.init

"""The Ray executor on a local cluster started here gives the local executor's results."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tensilekit.pipeline import RecordingReporter, TuneConfig, run_tuning
from tensilekit.pipeline.jobs import JobStarted

from .conftest import LLAMA_LOG, final_files

ray = pytest.importorskip("ray")


@pytest.fixture
def local_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Ray keeps an auth token under $HOME; keep it out of the real home directory.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ray.init(num_cpus=2, resources={"tensilekit_device": 2}, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_results_are_identical_to_local_ones(tmp_path: Path, local_cluster: None) -> None:
    from tensilekit.pipeline.executors.ray import RayExecutor

    def config(workdir: Path) -> TuneConfig:
        return TuneConfig(logs=(LLAMA_LOG,), arch="gfx942", workdir=workdir, simulate=True, devices=(0, 1))

    local = run_tuning(config(tmp_path / "local"))
    executor = RayExecutor(slots_per_device=1, retries=1)
    reporter = RecordingReporter()
    try:
        remote = run_tuning(config(tmp_path / "ray"), executor, reporter=reporter)
        assert executor.devices == ("0", "1")
        assert executor.describe().startswith("ray (local Ray): 2 device(s) x 1 slot(s)")
    finally:
        executor.close()
    assert remote.model_dump() == local.model_dump()
    assert final_files(tmp_path / "ray") == final_files(tmp_path / "local")
    devices = {event.device for _, event in reporter.events if isinstance(event, JobStarted)}
    assert devices == {0, 1}


def test_unreachable_address_fails_clearly_and_fast(tmp_path: Path) -> None:
    import time

    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    started = time.monotonic()
    result = CliRunner().invoke(cli, ["tune", "--simulate", str(LLAMA_LOG), "--arch", "gfx942", "--workdir",
                                      str(tmp_path / "W"), "--executor", "ray", "--address", "127.0.0.1:9"])  # fmt: skip
    assert result.exit_code == 4 and "cannot reach the Ray cluster at 127.0.0.1:9" in result.output
    assert time.monotonic() - started < 30

"""TuneConfig: validation and the slices stages fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tensilekit.pipeline.config import TuneConfig


def config(**changes: object) -> TuneConfig:
    values: dict[str, object] = {"logs": (Path("a.log"),), "arch": "gfx942", "workdir": Path("w")}
    values.update(changes)
    return TuneConfig.model_validate(values)


def test_defaults_and_labels() -> None:
    made = config()
    assert made.devices == (0,) and made.keep_thr == 1.0 and made.data_label == "measured" and made.simulator() is None
    simulated = config(simulate=True, seed=4, sim_time_scale=2.0)
    assert simulated.data_label == "SIMULATED"
    assert simulated.simulator() is not None and simulated.simulator().seed == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "changes",
    [{"arch": "gfx1100"}, {"devices": (0, 0)}, {"devices": ()}, {"keep_thr": 0.0}, {"keep_thr": 1.5},
     {"slots_per_device": 0}, {"mode": "annealing"}, {"elite": 32, "mode": "ga"}, {"logs": ()}, {"timeout": 0},
     {"accurate_iters": 5}, {"accurate_iters": 20, "screen_iters": 30}, {"tool_profile": "rocm-9"}],
)  # fmt: skip
def test_bad_values_are_rejected(changes: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        config(**changes)


def test_rules_check_what_they_say() -> None:
    # accurate runs must not be noisier than the screen; equal is fine, whatever the numbers
    assert config(accurate_iters=10, screen_iters=10).accurate_iters == 10
    assert config(accurate_iters=40, screen_iters=20).screen_iters == 20
    # elitism is the GA's: grid and search modes take any population
    assert config(mode="grid", population=2).population == 2
    assert config(mode="ga", population=3, elite=2).elite == 2


def test_tool_profiles_follow_the_architecture() -> None:
    assert config().hipblaslt_profile().name == "hipblaslt-7d9fb68"
    assert config(arch="gfx950").hipblaslt_profile().name == "hipblaslt-develop"  # 7d9fb68 knows no gfx950
    assert config(tool_profile="hipblaslt-develop").hipblaslt_profile().minimum_required_version == "5.0.0"
    assert config(mode="ga", search_dialect="tensile").driver_profile().name == "tensile-a164ed70"


def test_measurement_slice_ignores_execution_policy() -> None:
    assert config(devices=(0, 1), retries=3, timeout=5.0).measurement_slice() == config().measurement_slice()
    assert "seed" in config(simulate=True).measurement_slice()
    assert config(simulate=True, sim_time_scale=3.0).measurement_slice() == config(simulate=True).measurement_slice()


@pytest.mark.parametrize("option", ["library_logic", "reference_library"])
def test_a_workdir_inside_an_input_folder_is_refused(tmp_path: Path, option: str) -> None:
    """The next run would read this run's outputs as logic files (issue 36, item 10); beside it is fine."""
    logic = tmp_path / "logic"
    for inside in (logic, logic / "runs" / "W"):
        with pytest.raises(ValidationError) as caught:
            config(workdir=inside, **{option: logic})
        assert str(inside) in str(caught.value) and str(logic) in str(caught.value)
    assert config(workdir=tmp_path / "logic-runs", **{option: logic}).workdir == tmp_path / "logic-runs"

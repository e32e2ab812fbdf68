"""Labels and safety: SIMULATED kernels say so in every file they reach (merged/ included), the
pipeline never writes or deletes outside its work directory, report.json is always valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.pipeline.stage import contained_dir, finite_json
from tensilekit.pipeline.stages.merge import SIMULATED_MARK

from .conftest import LLAMA_LOG, write_fake_library_logic


def tune(workdir: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["tune", "--simulate", str(LLAMA_LOG), "--arch", "gfx942", "--workdir",
                                      str(workdir), *extra])  # fmt: skip
    return result.exit_code, result.output


def test_simulated_kernels_are_marked_in_merged_files_of_a_real_library(tmp_path: Path) -> None:
    real = write_fake_library_logic(tmp_path / "real")  # a "real" library: no SIMULATED anywhere
    assert not any("SIMULATED" in path.read_text() for path in real.glob("*.yaml"))
    code, output = tune(tmp_path / "W", "--merge-into", str(real))
    assert code == 0, output
    merged = sorted((tmp_path / "W" / "merged").glob("*.yaml"))
    assert merged and all(path.read_text().startswith(SIMULATED_MARK) for path in merged)
    assert all("SIMULATED" in path.read_text() for path in (tmp_path / "W" / "final_libs").glob("*.yaml"))
    assert CliRunner().invoke(cli, ["validate", str(tmp_path / "W" / "merged")]).exit_code == 0


def test_a_symlinked_output_folder_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    workdir = tmp_path / "W"
    code, output = tune(workdir)
    assert code == 0, output
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "aquavanjaram_keep.yaml").write_text("- keep me\n")
    for path in (workdir / "merged").iterdir():
        path.unlink()
    (workdir / "merged").rmdir()
    (workdir / "merged").symlink_to(precious)
    code, output = tune(workdir, "--from-stage", "merge")
    assert code != 0 and "outside the work directory" in output
    assert (precious / "aquavanjaram_keep.yaml").read_text() == "- keep me\n"
    assert sorted(path.name for path in precious.iterdir()) == ["aquavanjaram_keep.yaml"]


def test_contained_dir_and_finite_json(tmp_path: Path) -> None:
    assert contained_dir(tmp_path, tmp_path / "a" / "b").is_dir()
    outside = tmp_path.parent / f"{tmp_path.name}_outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    for bad in (tmp_path / "link", tmp_path / "link" / "deeper", outside):
        try:
            contained_dir(tmp_path, bad)
        except Exception as error:  # StageFailed
            assert "outside the work directory" in str(error)
        else:
            raise AssertionError(f"{bad} was accepted")
    value = {"uplift": float("inf"), "ratios": [float("nan"), 1.5], "name": "x"}
    assert json.loads(json.dumps(finite_json(value), allow_nan=False)) == {
        "uplift": None,
        "ratios": [None, 1.5],
        "name": "x",
    }

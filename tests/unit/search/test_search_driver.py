"""Kernels benchmarked through the driver wrappers: the SIMULATED driver in process and the fake
``Tensile`` executable as a subprocess give the same measurements."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tensilekit.pipeline.simulate import SimulatorConfig, kernel_is_broken
from tensilekit.pipeline.simulate_tensile import SimulatedTensileRunner, problem_from_type, sim_kernel
from tensilekit.search.configs import problem_type_config
from tensilekit.search.driver import evaluate_with_driver, load_solution_records, read_driver_results
from tensilekit.search.ga import SearchProblem, random_kernel
from tensilekit.search.params import KernelParams
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import make_context
from tensilekit.tools.runner import CompletedCommand, SubprocessRunner
from tensilekit.tools.tensile_client import collect_tensile_outputs

from .search_factory import BASE, DECODE, SQUARE

FAKE_BIN = Path(__file__).resolve().parents[2] / "fakes" / "bin"
PROFILE = profile_for("gfx942")
DEFAULTS = PROFILE.default_genes("B")
PROBLEM_TYPE = problem_type_config("B", "B", "S", "T", "N")
TYPE_NAME = "Cijk_Alik_Bljk_BBS_BH"
SIZES = [DECODE, SQUARE.__class__(4096, 8, 1, 4096, "T", "N", 4096, 4096)]


def kernels() -> list[KernelParams]:
    """Ten valid kernels for SIZES, one of which the simulated GPU computes garbage with."""
    problem = SearchProblem(gene_space(PROFILE, "B"), make_context(PROFILE, "B", SIZES), (1.0, 1.0))
    rng = random.Random(3)
    found: list[KernelParams] = []
    broken: KernelParams | None = None
    gemm = problem_from_type(PROBLEM_TYPE, SIZES[0].size)
    while len(found) < 9 or broken is None:
        kernel = random_kernel(problem, rng)
        assert kernel is not None
        if kernel_is_broken(sim_kernel(kernel, gemm), "gfx942"):
            broken = broken or kernel
        elif kernel not in found and len(found) < 9:
            found.append(kernel)
    return [*found[:4], broken, *found[4:]]


def evaluate(runner: object, kernel_list: list[KernelParams], workdir: Path) -> list[object]:
    return evaluate_with_driver(
        runner, kernel_list, name="BBS_TN_0_g000", workdir=workdir, problem_type=PROBLEM_TYPE,  # type: ignore[arg-type]
        sizes=SIZES, profile=PROFILE, defaults=DEFAULTS, type_name=TYPE_NAME,
    )  # fmt: skip


def test_simulated_driver_measures_every_kernel(tmp_path: Path) -> None:
    kernel_list = kernels()
    too_big = BASE.replace(depth_u=256)  # overflows the LDS: the driver rejects it
    results = evaluate(SimulatedTensileRunner(SimulatorConfig(arch="gfx942")), [*kernel_list, too_big], tmp_path)
    statuses = [result.status for result in results]  # type: ignore[attr-defined]
    assert statuses == ["ok"] * 4 + ["failed validation"] + ["ok"] * 5 + ["rejected by the driver"]
    for result in results[:4]:
        assert all(time and 1.0 < time < 1e4 for time in result.times_us)  # type: ignore[attr-defined]
        file, position = result.record  # type: ignore[attr-defined]
        assert KernelParams.from_solution(load_solution_records(file)[position], DEFAULTS) == result.kernel  # type: ignore[attr-defined]
    assert (tmp_path / "BBS_TN_0_g000.yaml").is_file() and (tmp_path / "BBS_TN_0_g000.sh").is_file()


def test_the_fake_driver_subprocess_agrees_with_the_simulated_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TENSILEKIT_FAKE_MODEL", "gfx942")
    kernel_list = kernels()[:6]
    real = evaluate(SubprocessRunner(), kernel_list, tmp_path / "fake")
    simulated = evaluate(SimulatedTensileRunner(SimulatorConfig(arch="gfx942")), kernel_list, tmp_path / "sim")
    assert [(r.status, r.times_us) for r in real] == [(s.status, s.times_us) for s in simulated]  # type: ignore[attr-defined]
    assert real[4].status == "failed validation"  # type: ignore[attr-defined]


def test_columns_match_by_name_or_position_without_solution_records(tmp_path: Path) -> None:
    data = tmp_path / "2_BenchmarkData"
    data.mkdir()
    first, second = BASE, BASE.replace(depth_u=32)
    header = "GFlops, SizeI, SizeJ, SizeK, SizeL, LDD, LDC, LDA, LDB, TotalFlops"
    (data / "x_00.csv").write_text(
        f"{header}, {second.name(TYPE_NAME)}, other\n0, 6144, 8, 1, 4096, 6144, 6144, 4096, 4096, 402653184, 1000, -1\n"
    )
    result = collect_tensile_outputs(tmp_path)
    third = BASE.replace(gsu=2)
    [by_name, missing, extra] = read_driver_results(
        result, [second, first, third], [DECODE], defaults=DEFAULTS, type_name=TYPE_NAME
    )
    assert by_name.status == "ok" and by_name.times_us[0] == pytest.approx(402653184 / 1e6)
    assert missing.status == extra.status == "rejected by the driver"  # two kernels left, one column
    [named, in_order] = read_driver_results(result, [second, first], [DECODE], defaults=DEFAULTS, type_name=TYPE_NAME)
    assert (named.status, in_order.status) == ("ok", "failed validation")  # the rest pairs up in order
    [one, two] = read_driver_results(result, [first, third], [DECODE], defaults=DEFAULTS, type_name="T")
    assert (one.status, two.status) == ("ok", "failed validation")  # no names match: by position
    none = read_driver_results(collect_tensile_outputs(tmp_path / "nothing"), [first], [DECODE], defaults=DEFAULTS,
                               type_name=TYPE_NAME)  # fmt: skip
    assert none[0].status == "no benchmark data"


def test_runner_reports_bad_command_lines(tmp_path: Path) -> None:
    runner = SimulatedTensileRunner(SimulatorConfig(arch="gfx942"))
    assert isinstance(runner.run(["Tensile"]), CompletedCommand) and runner.run(["Tensile"]).returncode == 2
    assert runner.run(["Tensile", str(tmp_path / "none.yaml"), str(tmp_path / "out")]).returncode == 255

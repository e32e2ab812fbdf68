"""Kernels benchmarked through the driver wrappers: the SIMULATED driver in process and the fake
``Tensile`` executable as a subprocess give the same measurements."""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from pathlib import Path

import pytest

from tensilekit.search.configs import global_parameters, problem_type_config
from tensilekit.search.driver import SharedClient, evaluate_with_driver, load_solution_records, read_driver_results
from tensilekit.search.ga import SearchProblem, random_kernel
from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import make_context
from tensilekit.tools.problem_types import problem_from_type
from tensilekit.tools.profiles import tool_profile
from tensilekit.tools.runner import CompletedCommand, SubprocessRunner
from tensilekit.tools.simulated.config import SimulatorConfig
from tensilekit.tools.simulated.gpu import kernel_is_broken
from tensilekit.tools.simulated.tensile import SimulatedTensileRunner, sim_kernel
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


def _record(kernel: KernelParams, name: str) -> str:
    # A block-style record as LibraryIO.writeSolutions (yaml.dump) writes it.
    return (
        f"- 1LDSBuffer: {kernel.lds_buffer}\n  DepthU: {kernel.depth_u}\n"
        f"  GlobalReadVectorWidthA: {kernel.grvw_a}\n  GlobalReadVectorWidthB: {kernel.grvw_b}\n"
        f"  GlobalSplitU: {kernel.gsu}\n  MIWaveGroup: {list(kernel.wave_group)}\n  MacroTile0: {kernel.mt0}\n"
        f"  MacroTile1: {kernel.mt1}\n  MatrixInstruction: {list(kernel.mi)}\n"
        f"  PrefetchGlobalRead: {kernel.prefetch_global_read}\n  SolutionNameMin: {name}\n"
        f"  StaggerU: {kernel.stagger_u}\n  StreamK: {kernel.stream_k}\n  WorkGroupMapping: {kernel.wgm}\n"
        f"  WorkGroupMappingXCC: {kernel.wgm_xcc}\n"
    )


def _real_output(tmp_path: Path, kernels: list[KernelParams], cells: list[str]) -> None:
    """A driver output dir shaped as tensilelite @7d9fb68 writes it: <PT>_00_CSVWinner.{csv,yaml},
    TilesPerCu/TotalGranularity and Winner* columns, solutions named by the driver (not tensilekit)."""
    data = tmp_path / "2_BenchmarkData"
    data.mkdir(parents=True)
    names = [f"{TYPE_NAME}_MT{k.mt0}x{k.mt1}x{k.depth_u}_MI16x16x1_SN_X{i}" for i, k in enumerate(kernels)]
    header = ("GFlops, SizeI, SizeJ, SizeK, SizeL, LDD, LDC, LDA, LDB, TotalFlops, TilesPerCu, TotalGranularity, "
              "WinnerGFlops, WinnerTimeUS, WinnerIdx, WinnerName, " + ", ".join(names))  # fmt: skip
    row = f"0, 6144, 8, 1, 4096, 6144, 6144, 4096, 4096, 402653184, 0.25, 0.5, 2000, 201.3, 0, {names[0]}, "
    (data / f"{TYPE_NAME}_00_CSVWinner.csv").write_text(f"{header}\n{row}{', '.join(cells)}\n")
    solutions = "- MinimumRequiredVersion: 4.33.0\n- ProblemSizes:\n  - Exact: [6144, 8, 1, 4096]\n"
    solutions += "".join(_record(kernel, name) for kernel, name in zip(kernels, names, strict=True))
    (data / f"{TYPE_NAME}_00_CSVWinner.yaml").write_text(solutions)


def test_real_driver_output_is_matched_through_the_solution_records(tmp_path: Path) -> None:
    # The driver rejected `rejected` (no column); the others are matched by their records'
    # parameters, in a different order from the config, never paired with TilesPerCu & co.
    first, second, third = BASE, BASE.replace(depth_u=32), BASE.replace(gsu=2)
    rejected = BASE.replace(wgm=4)
    _real_output(tmp_path, [third, first, second], ["2000", "1000", "-1"])
    result = collect_tensile_outputs(tmp_path)
    assert len(result.benchmark_data[0].solution_names) == 3
    measured = read_driver_results(result, [first, second, rejected, third], [DECODE], defaults=DEFAULTS,
                                   type_name=TYPE_NAME)  # fmt: skip
    assert [m.status for m in measured] == ["ok", "failed validation", "rejected by the driver", "ok"]
    assert measured[0].times_us[0] == pytest.approx(402653184 / 1e6)
    assert measured[3].times_us[0] == pytest.approx(402653184 / 2e6)
    assert measured[0].record is not None and measured[0].record[1] == 1
    assert measured[0].record[0].endswith(f"{TYPE_NAME}_00_CSVWinner.yaml")
    records = load_solution_records(measured[0].record[0])
    assert len(records) == 3 and KernelParams.from_solution(records[1], DEFAULTS) == first


@pytest.mark.parametrize("bad", ["nan", "inf", "0", "-5", "-inf"])
def test_impossible_gflops_are_measurement_errors_of_that_kernel_only(tmp_path: Path, bad: str) -> None:
    first, second = BASE, BASE.replace(depth_u=32)
    _real_output(tmp_path, [first, second], [bad, "1000"])
    [broken, fine] = read_driver_results(
        collect_tensile_outputs(tmp_path), [first, second], [DECODE], defaults=DEFAULTS, type_name=TYPE_NAME
    )
    assert broken.status.startswith("measurement error") and broken.times_us == (None,)
    assert broken.cost((1.0,)) == float("inf")
    assert fine.status == "ok" and fine.times_us[0] == pytest.approx(402653184 / 1e6)


def test_the_fake_driver_lets_amds_reader_decide_which_kernels_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, amd: Path
) -> None:
    from tensilekit.errors import ToolFailed

    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TENSILEKIT_FAKE_MODEL", "gfx942")
    # 256x256x32 bf16 with two LDS buffers: tensilekit's LDS bound (padding upper bound) rejects
    # it, ROCm/Tensile @09ec347 accepts it (checked with check-configs).
    wide = KernelParams(mi=(16, 16, 16, 1), mt0=256, mt1=256, wave_group=(1, 4), depth_u=32, wgm=1, grvw_a=8,
                        grvw_b=8, prefetch_global_read=1, lds_buffer=0, stagger_u=32)  # fmt: skip
    kernels_nn = [BASE, wide]
    shape = [ProblemShape(8192, 8192, 1, 8192, "N", "N", 8192, 8192)]
    problem_type = problem_type_config("B", "B", "S", "N", "N")

    def run(folder: str) -> list[object]:
        return evaluate_with_driver(
            SubprocessRunner(), kernels_nn, name="BBS_NN_0_g000", workdir=tmp_path / folder, problem_type=problem_type,
            sizes=shape, profile=PROFILE, defaults=DEFAULTS, type_name="Cijk_Ailk_Bljk_BBS_BH", dialect="tensile",
        )  # fmt: skip

    ours = run("ours")
    assert [m.status for m in ours] == ["ok", "rejected by the driver"]  # type: ignore[attr-defined]
    monkeypatch.setenv("TENSILEKIT_FAKE_AMD", str(amd))
    monkeypatch.setenv("TENSILEKIT_FAKE_AMD_READER", "tensile-09ec347")
    theirs = run("amd")
    assert [m.status for m in theirs] == ["ok", "ok"]  # type: ignore[attr-defined]
    # a GEMM type ROCm/Tensile refuses ends the driver run, as its printExit does
    with pytest.raises(ToolFailed) as refused:
        evaluate_with_driver(
            SubprocessRunner(), [BASE], name="F8BS", workdir=tmp_path / "f8", sizes=shape, profile=PROFILE,
            problem_type=problem_type_config("F8", "B", "S", "N", "N"), defaults=DEFAULTS, type_name="x",
            dialect="tensile",
        )  # fmt: skip
    assert refused.value.returncode == 255


def test_a_driver_run_that_measured_nothing_is_a_failed_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tensilekit.pipeline.config import TuneConfig
    from tensilekit.pipeline.jobs import JobContext
    from tensilekit.pipeline.stages.common import GemmEntry
    from tensilekit.pipeline.stages.kernel_groups import DriverJobSpec, build_groups, driver_job
    from tensilekit.tools.hipblaslt_bench import InvalidMeasurement
    from tensilekit.workload.problem import GemmProblem

    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TENSILEKIT_FAKE_SOLUTIONS", "1")
    gemm = GemmEntry(id="g0001", problem=GemmProblem(m=6144, n=8, k=4096, trans_a="T", a_type="bf16_r"))
    config = TuneConfig(logs=(tmp_path / "x.log",), arch="gfx942", workdir=tmp_path, mode="ga")
    [group] = build_groups([gemm], config)
    spec = DriverJobSpec(name="BBS_TN_0_g000", workdir=str(tmp_path / "runs"), group=group,
                         kernels=(BASE.replace(mt1=16, wave_group=(4, 1), grvw_b=2).to_json(),), arch="gfx942",
                         dialect="tensilelite", executable="Tensile")  # fmt: skip
    context = JobContext("ga-BBS_TN_0_g000", 1, 0, None, {})
    assert driver_job(context, spec)["measurements"][0]["status"] == "ok"
    monkeypatch.setenv("TENSILEKIT_FAKE_BAD_GFLOPS", "nan")  # the only kernel: nothing was measured
    with pytest.raises(InvalidMeasurement, match="every kernel's time is invalid"):
        driver_job(context, spec)


class _ClientBuildingRunner:
    """The SIMULATED driver, plus what the real one does with the client options: with
    --client-build-path it builds the client there (slowly), else it needs --prebuilt-client (a
    driver that never builds its client takes neither). It records, per run, whether the GPU's
    lock file (``gpu<N>.lock`` in ``locks``) was held by someone else while the driver ran."""

    def __init__(self, locks: Path, builds_client: bool = True) -> None:
        self.inner = SimulatedTensileRunner(SimulatorConfig(arch="gfx942"))
        self.argvs: list[list[str]] = []
        self.locks = locks
        self.builds_client = builds_client
        self.held: list[bool] = []

    def run(self, argv: list[str], **options: object) -> CompletedCommand:
        self.argvs.append(list(argv))
        if not self.builds_client:
            assert "--client-build-path" not in argv and "--prebuilt-client" not in argv
        elif "--client-build-path" in argv:
            client = Path(argv[argv.index("--client-build-path") + 1]) / "client" / "tensile_client"
            time.sleep(0.3)
            client.parent.mkdir(parents=True, exist_ok=True)
            client.write_text("client\n")
        else:
            assert Path(argv[argv.index("--prebuilt-client") + 1]).is_file()
        device = "gpu0.lock" if "G0" in Path(argv[1]).name else "gpu1.lock"
        with open(self.locks / device, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.held.append(True)
            else:
                fcntl.flock(lock, fcntl.LOCK_UN)
                self.held.append(False)
        return self.inner.run(argv, **options)  # type: ignore[arg-type]


def _run_three(tmp_path: Path, client: SharedClient, runner: _ClientBuildingRunner) -> None:
    """Two runs at once on GPUs 0 and 1, then one more on GPU 0."""
    kernel_list = kernels()[:2]

    def run(name: str, device: int) -> None:
        evaluate_with_driver(
            runner, kernel_list, name=name, workdir=tmp_path / "runs", problem_type=PROBLEM_TYPE,  # type: ignore[arg-type]
            sizes=SIZES, profile=PROFILE, defaults=DEFAULTS, type_name=TYPE_NAME, client=client, device=device,
        )  # fmt: skip

    first = [threading.Thread(target=run, args=(f"G{device}_g000", device)) for device in (0, 1)]
    for thread in first:
        thread.start()
    for thread in first:
        thread.join()
    run("G0_g001", 0)


def test_driver_runs_share_one_client_per_node_and_hold_their_gpus_lock(tmp_path: Path) -> None:
    """Issue 22 item 4: tensilelite rebuilds the client on every run without --prebuilt-client
    (Tensile.py:129-131,169-173, ClientExecutable.py:79-90 @7d9fb68) and the config's
    ForceRedoLibraryClient: True wipes its build dir (ClientWriter.py:172-174); GEKO builds it
    once and runs each GPU under a lock (geko/optim/optim.py run @114ce39e). Issue 36 item 12: the
    7d9fb68 driver's --client-lock imports filelock, which its requirements.txt lacks, so
    tensilekit holds the GPU's lock itself for the whole run and never passes --client-lock."""
    client = SharedClient.for_node(tmp_path / "runs", "node-a", tool_profile("hipblaslt-7d9fb68"))
    runner = _ClientBuildingRunner(client.folder)
    _run_three(tmp_path, client, runner)
    builds = [argv for argv in runner.argvs if "--client-build-path" in argv]
    assert len(builds) == 1 and len(runner.argvs) == 3
    assert builds[0][builds[0].index("--client-build-path") + 1] == str(client.build_dir)
    for argv in runner.argvs:
        if argv is not builds[0]:
            assert argv[argv.index("--prebuilt-client") + 1] == str(client.executable)
        assert "--client-lock" not in argv
    assert runner.held == [True, True, True], "each run held its GPU's lock"
    assert (
        client.executable == tmp_path.resolve() / "runs" / "client" / "node-a" / "build" / "client" / "tensile_client"
    )
    assert global_parameters(SIZES)["ForceRedoLibraryClient"] is False


def test_a_rocm_libraries_driver_gets_no_client_options_and_locks_its_gpu_itself(tmp_path: Path) -> None:
    """hipblaslt-2026-interfaces.md §3 "`--prebuilt-client`" and "removed driver flags": the 2026
    driver never builds its client (``--client-build-path`` is an argparse error) and
    "`--client-lock`": filelock is in its requirements.txt, so AMD's lock is used."""
    client = SharedClient.for_node(tmp_path / "runs", "node-a", tool_profile("hipblaslt-develop"))
    runner = _ClientBuildingRunner(client.folder, builds_client=False)
    _run_three(tmp_path, client, runner)
    assert len(runner.argvs) == 3 and runner.held == [False, False, False]
    locks = sorted(Path(argv[argv.index("--client-lock") + 1]).name for argv in runner.argvs)
    assert locks == ["gpu0.lock", "gpu0.lock", "gpu1.lock"]

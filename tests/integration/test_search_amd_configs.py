"""AMD's own config reader accepts what the kernel search writes (``../shared/amd/check-configs``).

For every arch x dialect the search supports and every AMD release runnable here, configs are
generated for a spread of workloads -- every fixture log, the corpus log samples, and one GEMM of
each problem type the search handles -- as the kernel-search stage writes them (its groups, the
tool profile's letters and MinimumRequiredVersion, two GA generations: the random first and one
bred from it), plus configs with library rows' epilogues and the reviewed golden configs. All configs of one (release, arch) go to
AMD's reader in one call (each call costs ~3 s of AMD imports). What must hold (issue 15): no
config refused, >= 95 % of the submitted kernels valid (AMD's ``Solution`` accepts them), no
config without a valid kernel, and GEMM types the profile says the release cannot express are
not written at all.

gfx950 is left out: the runnable tensilelite (7d9fb68) does not know it; its configs follow the
develop profile, which is read from source only.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tensilekit.io.logic_io import load_logic
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stages.common import GemmEntry
from tensilekit.pipeline.stages.kernel_search import KernelSearchStage, build_groups
from tensilekit.search.configs import library_epilogue, problem_type_config, tuning_config, write_config
from tensilekit.search.ga import GAConfig, GAState, Measurement, advance, propose, unevaluated
from tensilekit.search.params import ProblemShape
from tensilekit.search.profiles import profile_for
from tensilekit.tools.profiles import ToolProfile, tool_profile
from tensilekit.workload import load_workload
from tensilekit.workload.problem import GemmProblem

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "search" / "expected"
READERS = {"tensilelite": ("tensilelite-7d9fb68",), "tensile": ("tensile-09ec347", "tensile-a164ed70")}
PROFILE_OF_READER = {"tensilelite-7d9fb68": "hipblaslt-7d9fb68", "tensile-09ec347": "tensile-09ec347",
                     "tensile-a164ed70": "tensile-a164ed70"}  # fmt: skip
COMBOS = [("gfx90a", "tensilelite"), ("gfx942", "tensilelite"), ("gfx90a", "tensile"), ("gfx942", "tensile")]


def workload_problems(corpus: Path | None) -> dict[str, list[GemmProblem]]:
    """Every fixture log and corpus log sample, plus one GEMM per problem type."""
    found: dict[str, list[GemmProblem]] = {}
    sources = sorted((ROOT / "fixtures" / "logs").glob("*.log")) + sorted((ROOT / "fixtures" / "logs").glob("*.csv"))
    if corpus is not None:
        sources += sorted((corpus / "samples" / "hipblaslt-newer-docs").glob("*log_line*"))
    for path in sources:
        try:
            problems = load_workload(path, skip_bad_lines=True).problems
        except Exception:  # not a workload (a client CSV fixture): nothing to tune
            continue
        if problems:
            found[path.stem] = [problem for problem in problems if not problem.grouped_gemm]
    types = {
        "HHS": ("f16_r", "f16_r", "c_f32_r"), "HSS": ("f16_r", "f32_r", "c_f32_r"), "SSS": ("f32_r", "f32_r", "c_f32_r"),
        "XSS": ("f32_r", "f32_r", "c_xf32_r"), "DDD": ("f64_r", "f64_r", "c_f64_r"), "BSS": ("bf16_r", "f32_r", "c_f32_r"),
        "I8II": ("i8_r", "i32_r", "c_i32_r"), "F8HS": ("f8_r", "f16_r", "c_f32_r"), "F8SS": ("f8_r", "f32_r", "c_f32_r"),
        "F8NBS": ("f8_fnuz_r", "bf16_r", "c_f32_r"), "F8NSS": ("f8_fnuz_r", "f32_r", "c_f32_r"),
        "B8NHS": ("bf8_fnuz_r", "f16_r", "c_f32_r"),
    }  # fmt: skip
    for name, (data, dest, compute) in types.items():
        found[f"type_{name}"] = [
            GemmProblem(
                m=m,
                n=n,
                k=k,
                trans_a=ta,
                trans_b=tb,
                a_type=data,
                b_type=data,
                c_type=dest,
                d_type=dest,
                compute_type=compute,
            )  # fmt: skip
            for m, n, k, ta, tb in (
                (4096, 4096, 4096, "T", "N"),
                (1024, 16, 8192, "N", "N"),
                (3072, 2048, 1024, "N", "T"),
            )
        ]
    return found


@dataclass
class Batch:
    """The configs of one (reader, arch), what tensilekit expects of each, and AMD's answers."""

    files: list[Path] = field(default_factory=list)
    expected_type: dict[str, str] = field(default_factory=dict)
    """file -> the problem-type name AMD must derive (library-epilogue configs)."""
    results: list[dict[str, Any]] = field(default_factory=list)


def generate(
    folder: Path, arch: str, dialect: str, tool: ToolProfile, problems: dict[str, list[GemmProblem]]
) -> tuple[list[Path], list[str]]:
    """GA configs (generations 0 and 1, synthetic times) for every workload group the profile can express."""
    profile = profile_for(arch)
    written: list[Path] = []
    skipped: list[str] = []
    for source, gemms_list in problems.items():
        gemms = [GemmEntry(id=f"g{i:04d}", problem=problem) for i, problem in enumerate(gemms_list)]
        config = TuneConfig(logs=(Path("x.log"),), arch=arch, workdir=Path("/tmp"), mode="ga", search_dialect=dialect)  # type: ignore[arg-type]
        for group in build_groups(gemms, config, tool):
            issue = tool.config_type_issue(group.type_letters, arch)
            if issue is not None:
                skipped.append(f"{source} {group.name}: {issue}")
                continue
            try:
                problem = KernelSearchStage._problem(group, profile, dialect)  # type: ignore[arg-type]
            except Exception as error:  # no MFMA for the type on this arch
                skipped.append(f"{source} {group.name}: {error}")
                continue
            ga = GAConfig(population=10, generations=2, seed=1)
            state = GAState()
            rng = random.Random(5)
            for generation in range(2):  # a third bred generation adds AMD reader time, no new kind of kernel
                population = propose(state, problem, ga, [])
                fresh = unevaluated(population, state)
                if not fresh:
                    break
                tuned = tuning_config(group.problem_type, group.problem_shapes(), fresh, profile, dialect,  # type: ignore[arg-type]
                                      beta=group.beta, minimum_required_version=tool.minimum_required_version)  # fmt: skip
                written.append(write_config(folder, f"{source}_{group.name}_g{generation}", tuned))
                times = [Measurement(k, tuple(rng.uniform(1, 100) for _ in group.shapes)) for k in fresh]
                state = advance(state, population, times, problem, ga, 0.0)
    return written, skipped


def epilogue_configs(folder: Path, corpus: Path, arch: str, dialect: str, tool: ToolProfile) -> dict[Path, str]:
    """Configs whose ProblemType carries a gfx942 library row's epilogue; -> the row's type name."""
    if arch != "gfx942" or dialect != "tensilelite":
        return {}
    rows = sorted((corpus / "logic" / "hipblaslt" / "aquavanjaram" / "gfx942").rglob("*.yaml"))
    wanted = ("BBS_BH_Bias_", "HHS_BH_Bias", "SB_Bias", "BSS_BH_Bias", "F8HS_BH_Bias", "HSS_BH_Bias", "I8II_BH_Bias")
    chosen: dict[Path, str] = {}
    profile = profile_for(arch)
    letters_of = {0: "S", 1: "D", 4: "H", 7: "B", 8: "I8", 6: "I", 10: "F8", 11: "B8"}
    for path in rows:
        if not any(key in path.name for key in wanted) or "_HH_" in path.name:
            continue
        logic = load_logic(path)
        raw = logic.problem_type.model_dump(by_alias=True)
        data, dest, compute = (
            letters_of.get(int(raw.get(key, -1)), "?") for key in ("DataType", "DestDataType", "ComputeDataType")
        )
        if (
            "?" in (data, dest, compute)
            or raw.get("DataTypeA", raw["DataType"]) != raw.get("DataTypeB", raw["DataType"])
            or raw.get("DataTypeA", raw["DataType"]) != raw["DataType"]
            or tool.config_type_issue((data, dest, compute), arch)
        ):
            continue  # fmt: skip
        base = problem_type_config(
            data, dest, compute, "T" if raw.get("TransposeA") else "N", "T" if raw.get("TransposeB") else "N"
        )
        problem_type = {**base, **library_epilogue(raw, "tensilelite")}
        shapes = [
            ProblemShape(
                4096,
                4096,
                1,
                4096,
                "T" if raw.get("TransposeA") else "N",
                "T" if raw.get("TransposeB") else "N",
                4096,
                4096,
            )
        ]
        from tensilekit.search.ga import SearchProblem
        from tensilekit.search.profiles import gene_space
        from tensilekit.search.pruning import make_context

        search = SearchProblem(
            gene_space(profile, data), make_context(profile, data, shapes, 8 if data == "D" else 4), (1.0,), "epilogue"
        )
        kernels = propose(GAState(), search, GAConfig(population=6, seed=2), [])
        config = tuning_config(problem_type, shapes, kernels, profile, "tensilelite",
                               minimum_required_version=tool.minimum_required_version)  # fmt: skip
        written = write_config(folder, f"epilogue_{path.stem}", config)
        # the row's file is named <schedule>_<ProblemType name>[_<variant>]
        chosen[written] = path.stem.split("_", 1)[1]
        if len(chosen) >= 8:
            break
    return chosen


def distinct_files(files: list[Path]) -> list[Path]:
    """``files`` without a file whose bytes an earlier one has: AMD's reader answers a config by its
    contents, and workloads of the same GEMM types write the same config (~10 % of them)."""
    seen: set[bytes] = set()
    kept = []
    for path in files:
        digest = hashlib.sha256(path.read_bytes()).digest()
        if digest not in seen:
            seen.add(digest)
            kept.append(path)
    return kept


def start_reader(amd: Path, reader: str, arch: str, files: list[Path]) -> subprocess.Popen[str]:
    """AMD's reader on ``files`` in the background: the (release, arch) calls run side by side."""
    return subprocess.Popen(
        [str(amd / "check-configs"), "--amd", reader, "--arch", arch, *map(str, files)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def reader_results(process: subprocess.Popen[str], files: list[Path]) -> list[dict[str, Any]]:
    stdout, stderr = process.communicate(timeout=900)
    results = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(files), stderr[-2000:]
    return results


@pytest.fixture(scope="module")
def batches(
    amd: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str, str], Batch]]:
    root = tmp_path_factory.mktemp("amd_configs")
    problems = workload_problems(corpus)
    # AMD's venv is made once, before the readers start side by side (they would race to make it)
    subprocess.run([str(amd / "setup-venv")], capture_output=True, timeout=900, check=True)
    found: dict[tuple[str, str, str], Batch] = {}
    running: dict[tuple[str, str, str], subprocess.Popen[str]] = {}
    try:
        for arch, dialect in COMBOS:
            for reader in READERS[dialect]:
                tool = tool_profile(PROFILE_OF_READER[reader])
                folder = root / f"{arch}_{reader}"
                folder.mkdir(parents=True)
                batch = Batch()
                batch.files, _ = generate(folder, arch, dialect, tool, problems)
                epilogues = epilogue_configs(folder, corpus, arch, dialect, tool)
                batch.files += list(epilogues)
                batch.expected_type = {str(path): name for path, name in epilogues.items()}
                golden = GOLDEN / f"{arch}_{dialect}"
                batch.files = distinct_files([*batch.files, *sorted(golden.glob("*.yaml"))])
                found[(reader, arch, dialect)] = batch
                running[(reader, arch, dialect)] = start_reader(amd, reader, arch, batch.files)
        for key, process in running.items():
            found[key].results = reader_results(process, found[key].files)
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    yield found


@pytest.mark.parametrize(("arch", "dialect", "reader"), [(a, d, r) for a, d in COMBOS for r in READERS[d]])
def test_amd_accepts_every_config_and_most_kernels(
    batches: dict[tuple[str, str, str], Batch], arch: str, dialect: str, reader: str
) -> None:
    batch = batches[(reader, arch, dialect)]
    refused = [(Path(r["file"]).name, r.get("exit") or r.get("exception")) for r in batch.results if not r["ok"]]
    assert not refused, refused[:5]
    groups = [group for result in batch.results for group in result["groups"]]
    kernels = sum(group["n"] for group in groups)
    valid = sum(group["valid"] for group in groups)
    empty = [Path(r["file"]).name for r in batch.results for g in r["groups"] if g["valid"] == 0]
    reasons = sorted({reason for g in groups for k in g["kernels"] if not k["valid"] for reason in k["reasons"][:1]})
    assert len(batch.results) >= 20 and kernels >= 200
    assert valid >= 0.95 * kernels, (valid, kernels, reasons[:10])
    assert not empty, empty[:5]
    unknown = {key for r in batch.results for key in r.get("unknown_global_keys", []) + r.get("unknown_top_keys", [])}
    assert not unknown


def test_tuned_kernels_get_the_library_rows_problem_type(batches: dict[tuple[str, str, str], Batch]) -> None:
    batch = batches[("tensilelite-7d9fb68", "gfx942", "tensilelite")]
    if not batch.expected_type:
        pytest.skip("the corpus holds no gfx942 epilogue rows")
    checked = 0
    for result in batch.results:
        expected = batch.expected_type.get(result["file"])
        if expected is None:
            continue
        [group] = result["groups"]
        name = group["problemType"]
        assert expected == name or expected.startswith(name + "_"), (result["file"], name)
        assert "_Bias" in name  # the epilogue reached AMD's ProblemType
        checked += 1
    assert checked >= 3


def test_types_a_release_cannot_express_are_not_written() -> None:
    # ROCm/Tensile has no (F8, B, S) (validGEMMTypes, Common.py:453-462 @09ec347) and no F8N;
    # 7d9fb68 reads gfx942's FNUZ fp8 as F8 (same bits) but knows no gfx950.
    tensile, lite, develop = (
        tool_profile(name) for name in ("tensile-09ec347", "hipblaslt-7d9fb68", "hipblaslt-develop")
    )
    assert tensile.config_type_issue(("F8", "B", "S"), "gfx942") is not None
    assert tensile.config_type_issue(("F8", "H", "S"), "gfx942") is None
    assert lite.config_type_issue(("F8N", "B", "S"), "gfx942") is None and lite.config_letters("F8N", "gfx942") == "F8"
    assert lite.config_type_issue(("B", "B", "S"), "gfx950") is not None
    assert develop.config_type_issue(("F8N", "B", "S"), "gfx950") is None


def test_groups_the_release_cannot_express_are_skipped_with_a_reason(tmp_path: Path) -> None:
    problems = {"fp8": [GemmProblem(m=4096, n=4096, k=4096, trans_a="T", a_type="f8_r", b_type="f8_r", c_type="bf16_r",
                                    d_type="bf16_r")]}  # fmt: skip
    written, skipped = generate(tmp_path, "gfx942", "tensile", tool_profile("tensile-09ec347"), problems)
    assert written == [] and len(skipped) == 1 and "(Ti, To, Tc) = ('F8', 'B', 'S')" in skipped[0]

"""Differential property test: tensilekit's hipBLASLt selection against tensilelite's own C++.

Each example draws a random subset of ``corpus/logic/hipblaslt`` files of one architecture, has
AMD's tensilelite TensileCreateLibrary build the master (``../shared/amd/build-master``), draws
queries of every category the corpus has (exact and near table keys, random sizes, edges, flags,
mismatches, batch > 1, tiny workspaces) and asks AMD's C++ host library
(``../shared/amd/select-oracle``) once for all of them. tensilekit must agree on the heuristic's
answer (``findTopSolutions(.., 1)`` with the XF32 retry), on ``findTopSolutions(.., 8)`` and on the
supported set of ``getAllSolutions``.

AMD's tools are found at ``$TENSILEKIT_AMD`` or ``../shared/amd``; without them the test skips
(and fails under ``CI``, as a missing corpus does). Each example costs a build (~3 s) and one
oracle call, so the example count stays small.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tensilekit  # noqa: E402
from tensilekit.cli.main import cli  # noqa: E402
from tensilekit.model.library import MasterLibrary, MatchingNode  # noqa: E402
from tensilekit.selection import (  # noqa: E402
    compile_library,
    find_all_solutions,
    hardware_from_query,
    select_batch,
    select_solution,
)
from tensilekit.selection.api import top_solutions  # noqa: E402
from tensilekit.selection.runtime import HIPBLASLT, Runtime, hipblaslt_runtime  # noqa: E402

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
_CUSTOM_KERNEL = re.compile(r"CustomKernelName: '?[A-Za-z]")  # its assembly is not in ../shared/amd
_ARCH_LINE = re.compile(r"^- (?:\{Architecture: (\w+), CUCount: (\d+)\}|(gfx\w+))\s*$", re.MULTILINE)
_MAX_LOGIC_BYTES = 1_500_000  # keeps a build near 3 s
_DEFAULT_CUS = {"gfx90a": 104, "gfx908": 120, "gfx940": 304, "gfx941": 304, "gfx942": 304, "gfx1100": 96}


@functools.lru_cache(maxsize=1)
def _logic_by_arch(corpus: Path) -> dict[str, list[Path]]:
    """The buildable hipBLASLt logic files of the corpus, by architecture."""
    groups: dict[str, list[Path]] = {}
    for path in sorted((corpus / "logic" / "hipblaslt").rglob("*.yaml")):
        if path.stat().st_size > _MAX_LOGIC_BYTES:
            continue
        text = path.read_text(encoding="utf-8")
        match = _ARCH_LINE.search(text[:400])
        if match and not _CUSTOM_KERNEL.search(text):
            groups.setdefault(match.group(1) or match.group(3), []).append(path)
    return groups


_COMPUTE_NAMES = {"Double": "f64", "Int32": "i32", "Half": "f16"}
_FAST = {"Half": "f32_fast_f16", "BFloat16": "f32_fast_bf16"}


def _served(library: MasterLibrary) -> list[dict[str, Any]]:
    """The gemm types the master's solutions serve, as query fields."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for solution in library.solutions:
        pt = solution.problem_type or {}
        compute = str(pt.get("computeType", "Float"))
        name = _COMPUTE_NAMES.get(compute, "f32")
        if name == "f32" and pt.get("computeInputType") != pt.get("aType"):
            name = _FAST.get(str(pt.get("computeInputType")), "f32")
        fields = {
            "trans_a": "T" if pt.get("transA") else "N", "trans_b": "T" if pt.get("transB") else "N",
            "a_type": pt.get("aType"), "b_type": pt.get("bType"), "c_type": pt.get("cType"),
            "d_type": pt.get("dType"), "compute_type": name,
        }  # fmt: skip
        seen.setdefault(tuple(fields.values()), fields)
    return list(seen.values())


def _table_keys(library: MasterLibrary) -> list[list[int]]:
    keys: list[list[int]] = []

    def visit(node: Any) -> None:
        if isinstance(node, MatchingNode):
            keys.extend(list(entry.key) for entry in node.table)
        for child in getattr(node, "rows", None) or []:
            visit(child.library)
        for child in (getattr(node, "map", None) or {}).values():
            visit(child)

    visit(library.library)
    return keys


def _queries(library: MasterLibrary, arch: str, seed: int, count: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    served = _served(library)
    keys = _table_keys(library) or [[128, 128, 1, 128]]
    cus = _DEFAULT_CUS.get(arch, 64)
    categories = ["exact", "near", "random", "edge", "flag", "mismatch", "batch", "workspace"]
    for number in range(count):
        category = categories[number % len(categories)]
        fields = dict(rng.choice(served))
        key = rng.choice(keys)
        m, n, k = key[0], key[1], key[-1]
        batch = key[2] if len(key) > 3 else 1
        if category == "near":
            m, n, k = (max(1, v + rng.randint(-40, 40)) for v in (m, n, k))
        elif category == "random":
            m, n, k = (rng.choice([rng.randint(1, 512), rng.randint(1, 20000)]) for _ in range(3))
        elif category == "edge":
            m, n, k = rng.choice([(1, 1, 1), (1, 4096, 1), (4096, 1, 0), (7, 13, 1), (65536, 65536, 65536)])
        elif category == "batch":
            batch = rng.choice([2, 3, 8, 64])
        workspace: int | None = rng.choice([33554432, 33554432, 134217728, None, 0])
        if category == "workspace":
            workspace = rng.choice([0, 1, 1024, 65536, 1 << 20])
        query: dict[str, Any] = {
            "id": f"q{number}", "arch": arch, "cu_count": cus, "m": m, "n": n, "k": k, "batch": batch,
            "workspace_size": workspace, **fields,
        }  # fmt: skip
        if category == "flag":
            choice = rng.choice(["xf32", "cu", "ld"])
            if choice == "xf32" and fields["a_type"] == "Float":
                query["compute_type"] = "f32_fast_xf32"
            elif choice == "cu":
                query["cu_count"] = rng.choice([20, 80, 104, 110, 120, 228, 304])
            else:
                query["lda"] = query["ldb"] = query["ldc"] = query["ldd"] = max(m, n, k) + 64
        elif category == "mismatch":
            choice = rng.choice(["trans", "type", "compute"])
            if choice == "trans":
                query["trans_a"] = "N" if fields["trans_a"] == "T" else "T"
            elif choice == "type":
                query["a_type"] = query["b_type"] = rng.choice(["Float", "Half", "BFloat16"])
            else:
                query["compute_type"] = rng.choice(["f32", "f64", "f32_fast_f16"])
        yield query


def _oracle(
    amd: Path, master: Path, queries: list[dict[str, Any]], tmp: Path, version: str = "7d9fb683"
) -> dict[str, dict[str, Any]]:
    query_file = tmp / "queries.jsonl"
    query_file.write_text("".join(json.dumps(q) + "\n" for q in queries))
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(query_file), "--top", "8", "--version", version],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {answer["id"]: answer for answer in answers}


_BUILDERS = {"7d9fb683": "build-master", "0.12.1": "build-master-0.12.1"}


def _built_and_answered(
    amd: Path, version: str, arch: str, files: list[Path], seed: int, tmp: Path
) -> tuple[MasterLibrary, list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The master ``version``'s own TensileCreateLibrary builds from ``files``, 160 queries drawn
    for it, and ``version``'s C++ answers to them."""
    master_path, library = _built(amd, version, arch, files, tmp)
    queries = list(_queries(library, arch, seed, 160))
    return library, queries, _oracle(amd, master_path, queries, tmp, version=version)


def _built(amd: Path, version: str, arch: str, files: list[Path], tmp: Path) -> tuple[Path, MasterLibrary]:
    """``tmp/master.dat`` as ``version``'s own TensileCreateLibrary builds it from ``files``, read."""
    build = subprocess.run(
        [str(amd / _BUILDERS[version]), "--arch", arch, "--out", str(tmp), "--name", "master", *map(str, files)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    library = tensilekit.load_master(tmp / "master.dat")
    assert isinstance(library, MasterLibrary)
    return tmp / "master.dat", library


def _disagreements(
    library: MasterLibrary, queries: list[dict[str, Any]], answers: dict[str, dict[str, Any]], runtime: Runtime
) -> list[str]:
    """Where tensilekit (compiled, one query and batch; detected runtime, which must be ``runtime``)
    and the oracle's answers differ: top 1, ``findTopSolutions(.., 8)``, the supported set."""
    compiled = compile_library(library)
    assert compiled.runtime is runtime, f"{compiled.runtime} detected, {runtime} expected"
    return _disagreements_compiled(compiled, queries, answers, runtime)


def _disagreements_compiled(
    compiled: Any, queries: list[dict[str, Any]], answers: dict[str, dict[str, Any]], runtime: Runtime
) -> list[str]:
    """:func:`_disagreements` for a library compiled for ``runtime``."""
    problems = [runtime.problem_from_query(query) for query in queries]
    batch = select_batch(compiled, problems, [hardware_from_query(query) for query in queries])
    disagreements = []
    for position, query in enumerate(queries):
        answer = answers[query["id"]]
        assert "error" not in answer, answer
        problem, device = problems[position], hardware_from_query(query)
        mine = select_solution(compiled, problem, device)
        want = answer["expected"]
        if (mine.index, mine.name) != ((want["index"], want["name"]) if want else (None, None)):
            disagreements.append(f"{query}: expected {want and want['index']}, got {mine.index}")
            continue
        if batch[position].index != mine.index:
            disagreements.append(f"{query}: the batch path gives {batch[position].index}, one query {mine.index}")
        ranked = [s.index for s in top_solutions(compiled, problem, device, 8).ranked]
        if ranked != answer["top"]:
            disagreements.append(f"{query}: top {answer['top']}, got {ranked}")
        supported = [s.index for s in find_all_solutions(compiled, problem, device)]
        if supported != answer["all_supported"]:
            disagreements.append(f"{query}: supported {answer['all_supported'][:10]}…, got {supported[:10]}…")
    return disagreements


@settings(max_examples=4, deadline=None, derandomize=bool(os.environ.get("CI")), database=None)
@given(data=st.data())
def test_hipblaslt_selection_agrees_with_the_cpp_runtime(
    corpus: Path, amd: Path, tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    groups = _logic_by_arch(corpus)
    arch = data.draw(st.sampled_from(sorted(groups)), label="arch")
    files = sorted(data.draw(st.lists(st.sampled_from(groups[arch]), min_size=1, max_size=3, unique=True)))
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    tmp = tmp_path_factory.mktemp("oracle")
    library, queries, answers = _built_and_answered(amd, "7d9fb683", arch, files, seed, tmp)
    disagreements = _disagreements(library, queries, answers, HIPBLASLT)
    files_named = [str(path.relative_to(corpus)) for path in files]
    assert not disagreements, f"{arch} {files_named}: {len(disagreements)} disagree:\n" + "\n".join(disagreements[:6])


_TABLE_KEY = re.compile(r"^((?:- - - |  - - )\[)(\d+), (\d+), (\d+), ", re.MULTILINE)


def _with_batches(path: Path, out: Path, rng: random.Random) -> Path:
    """A copy of a logic file with the batch of about a third of its 4-D table keys set to 2..16:
    the corpus's hipBLASLt GridBased tables hold batch 1 only, 0.12.1's batch-first walk needs more."""

    def batch(match: re.Match[str]) -> str:
        if rng.random() >= 0.35:
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}, {match.group(3)}, {rng.choice([2, 4, 8, 16])}, "

    copy = out / path.name
    copy.write_text(_TABLE_KEY.sub(batch, path.read_text(encoding="utf-8")), encoding="utf-8")
    return copy


def _require_0121(amd: Path) -> None:
    missing = [
        name for name in ("build-master-0.12.1", "bin/tensilelite-select-oracle-0.12.1") if not (amd / name).exists()
    ]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide hipBLASLt 0.12.1's tools in {amd}: {', '.join(missing)}")
        pytest.skip(f"hipBLASLt 0.12.1's tools not in {amd}: {', '.join(missing)}")


@settings(max_examples=2, deadline=None, derandomize=bool(os.environ.get("CI")), database=None)
@given(data=st.data())
def test_hipblaslt_0121_selection_agrees_with_its_cpp_runtime(
    corpus: Path, amd: Path, tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    """Masters built by 0.12.1's own TensileCreateLibrary (``build-master-0.12.1``) from corpus logic
    with batched table keys, answered by 0.12.1's C++ (``select-oracle --version 0.12.1``): tensilekit
    takes the master for 0.12.1's and agrees on every answer."""
    _require_0121(amd)
    groups = _logic_by_arch(corpus)
    arch = data.draw(st.sampled_from(sorted(groups)), label="arch")
    files = sorted(data.draw(st.lists(st.sampled_from(groups[arch]), min_size=1, max_size=3, unique=True)))
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    tmp = tmp_path_factory.mktemp("oracle0121")
    logic = tmp / "logic"
    logic.mkdir()
    rng = random.Random(seed)
    batched = [_with_batches(path, logic, rng) for path in files]
    library, queries, answers = _built_and_answered(amd, "0.12.1", arch, batched, seed, tmp)
    disagreements = _disagreements(library, queries, answers, hipblaslt_runtime("0.12.1"))
    files_named = [str(path.relative_to(corpus)) for path in files]
    assert not disagreements, f"{arch} {files_named}: {len(disagreements)} disagree:\n" + "\n".join(disagreements[:6])


def _can_stream_k(solution: dict[str, Any]) -> bool:
    """Whether 0.12.1's ``Solution`` keeps this kernel with ``StreamK`` on (its rejections,
    ``SolutionStructs.py`` 2018-2020 and 2183-2211 @0.12.1: S/H/B types, four MI wave groups, ...)."""
    problem_type = solution.get("ProblemType") or {}
    types = [problem_type.get(key) for key in ("DataType", "DataTypeA", "DataTypeB", "DestDataType")]
    wave_group = solution.get("MIWaveGroup") or [0, 0]
    return (
        all(kind in (0, 4, 7, None) for kind in types)  # single, half, bfloat16 (DataType enum)
        and wave_group[0] * wave_group[1] == 4
        and bool(solution.get("EnableMatrixInstruction"))
        and not solution.get("DirectToLds")
        and solution.get("ScheduleGlobalRead") == 1
        and solution.get("ScheduleLocalWrite") == 1
        and solution.get("ScheduleIterAlg") in (1, 3)
        and problem_type.get("StridedBatched", True)
        and not problem_type.get("GroupedGemm")
    )


def _as_streamk(path: Path, out: Path) -> Path | None:
    """A copy of a logic file as a StreamK library: every kernel that can be ``StreamK: 3`` made so,
    and the file's ``PerfMetric`` (list item 10) ``ExperimentalStreamK``, which 0.12.1's
    TensileCreateLibrary puts behind an ``ExperimentalStreamK`` problem row (``SolutionLibrary.py``
    ``performanceMetric`` @0.12.1). None when fewer than two can."""
    import yaml

    logic = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    changed = 0
    for solution in logic[5]:
        if _can_stream_k(solution):
            solution["StreamK"] = 3
            changed += 1
    if changed < 2 or len(logic) <= 10:
        return None
    logic[10] = "ExperimentalStreamK"
    copy = out / f"streamk_{path.name}"
    copy.write_text(yaml.dump(logic, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)), encoding="utf-8")
    return copy


def _oracle_with_method(
    amd: Path, master: Path, queries: list[dict[str, Any]], tmp: Path, method: int
) -> dict[str, dict[str, Any]]:
    """0.12.1's C++ answers with ``TENSILE_SOLUTION_SELECTION_METHOD=method`` in its environment."""
    previous = os.environ.get("TENSILE_SOLUTION_SELECTION_METHOD")
    os.environ["TENSILE_SOLUTION_SELECTION_METHOD"] = str(method)
    try:
        return _oracle(amd, master, queries, tmp, version="0.12.1")
    finally:
        if previous is None:
            del os.environ["TENSILE_SOLUTION_SELECTION_METHOD"]
        else:
            os.environ["TENSILE_SOLUTION_SELECTION_METHOD"] = previous


@settings(
    max_examples=1, deadline=None, derandomize=bool(os.environ.get("CI")), database=None,
    phases=[Phase.generate],  # a failing example is reported as drawn: each shrink step is a build
    suppress_health_check=[HealthCheck.filter_too_much],
)  # fmt: skip
@given(data=st.data())
def test_hipblaslt_0121_streamk_selection_method_agrees_with_its_cpp_runtime(
    corpus: Path, amd: Path, tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    """A 0.12.1 master with an ``ExperimentalStreamK`` row (a StreamK copy of a corpus logic file,
    beside the original) answered by 0.12.1's C++ under ``TENSILE_SOLUTION_SELECTION_METHOD`` 0 and
    2: without 2 no StreamK kernel is chosen, ranked or listed by ``getAllSolutions``; with 2 the
    StreamK row answers. The queries allow hipBLASLt's default workspace (128 MiB), 32 MiB, 1 MiB
    or none, which a Stream-K kernel's partial tiles may exceed. tensilekit agrees on every answer
    under each method, through the API and through ``select --solution-selection-method`` / the
    environment variable."""
    _require_0121(amd)
    groups = {arch: paths for arch, paths in _logic_by_arch(corpus).items() if not arch.startswith("gfx1")}
    rng = data.draw(st.randoms(use_true_random=True), label="rng")  # the first example is not always index 0
    arch = rng.choice(sorted(groups))  # Stream-K: no WMMA (gfx11/gfx12)
    seed = rng.randrange(2**31)
    tmp = tmp_path_factory.mktemp("streamk0121")
    logic = tmp / "logic"
    logic.mkdir()
    streamk_copy = None
    for source in rng.sample(groups[arch], len(groups[arch])):
        streamk_copy = _as_streamk(source, logic)
        if streamk_copy is not None:
            break
    assume(streamk_copy is not None)
    assert streamk_copy is not None
    files = [source, streamk_copy] if rng.random() < 0.5 else [streamk_copy]  # with and without a metric-free row
    master_path, library = _built(amd, "0.12.1", arch, files, tmp)
    streamk = {s.index for s in library.solutions if int(getattr(s.size_mapping, "stream_k", 0) or 0) > 0}
    assert streamk, "the StreamK copy's kernels are in the master"
    # hipBLASLt's default workspace and smaller ones: a Stream-K kernel's need follows 0.12.1's
    # predicted grid (HipblasltVersion.streamk_grid_predicted)
    workspaces = [134217728, 33554432, 1 << 20, 0]
    queries = [
        {**query, "workspace_size": workspaces[number % len(workspaces)]}
        for number, query in enumerate(_queries(library, arch, seed, 120))
    ]
    chosen_streamk = {}
    for method in (0, 2):
        answers = _oracle_with_method(amd, master_path, queries, tmp, method)
        runtime = hipblaslt_runtime("0.12.1", method)
        compiled = compile_library(library, runtime=runtime)
        disagreements = _disagreements_compiled(compiled, queries, answers, runtime)
        assert not disagreements, f"method {method}, {source.name}: {len(disagreements)} disagree:\n" + "\n".join(
            disagreements[:6]
        )
        chosen_streamk[method] = sum(
            1 for answer in answers.values() if answer["expected"] and answer["expected"]["index"] in streamk
        )
        listed = {index for answer in answers.values() for index in answer["top"] + answer["all_supported"]}
        if method == 0:
            assert not listed & streamk, f"without method 2 StreamK kernels are listed: {listed & streamk}"
        query_file = tmp / f"cli{method}.jsonl"
        query_file.write_text("".join(json.dumps(q) + "\n" for q in queries))
        wanted = {key: answer["expected"] and answer["expected"]["index"] for key, answer in answers.items()}
        runner = CliRunner()
        by_option = runner.invoke(
            cli, ["select", "--library", str(master_path), "--queries", str(query_file), "--json",
                  "--solution-selection-method", str(method)], env={"TENSILE_SOLUTION_SELECTION_METHOD": None},
        )  # fmt: skip
        by_environment = runner.invoke(
            cli, ["select", "--library", str(master_path), "--queries", str(query_file), "--json"],
            env={"TENSILE_SOLUTION_SELECTION_METHOD": str(method)},
        )  # fmt: skip
        for result in (by_option, by_environment):
            assert result.exit_code == 0, result.output
            assert {line["id"]: line["index"] for line in map(json.loads, result.output.splitlines())} == wanted
    assert chosen_streamk[0] == 0, chosen_streamk

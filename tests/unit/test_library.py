"""``tensilekit.open_library``: one object owning the runtime's rules (issue 25 item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tensilekit
from tensilekit.errors import SelectionError
from tensilekit.library import ArchRequired, Library, open_library
from tensilekit.selection import GemmProblem, Hardware, select_solution, unserved
from tensilekit.workload.problem import GemmProblem as WorkloadGemm

MIB_128 = 128 * 1024 * 1024


@pytest.fixture(scope="module")
def sample() -> Library:
    return tensilekit.open_library()


@pytest.fixture(scope="module")
def aldebaran(corpus: Path) -> Library:
    return open_library(corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat")


def _queries(corpus: Path, name: str) -> list[dict[str, object]]:
    path = corpus / "select-hipblaslt" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_sample_answers_as_select_solution(sample: Library) -> None:
    problem = sample.problem(1024, 1024, 1024)
    assert sample.device == Hardware(arch="gfx90a") and sample.arch_defaulted
    assert sample.runtime.name == "tensile" and sample.workspace_size is None  # Tensile: unlimited
    expected = select_solution(sample.master, problem, Hardware(arch="gfx90a"))
    assert expected.index is not None
    assert sample.select(problem).index == expected.index
    assert sample.solution(expected.index).name == expected.name
    assert sample.explain(problem).trace  # the walk is recorded
    assert [s.index for s in sample.top(problem, 2).ranked][:1] == [expected.index]


def test_hipblaslt_defaults_workspace_128_mib_and_alpha_beta_one(aldebaran: Library) -> None:
    assert aldebaran.runtime.name == "hipblaslt"
    problem = aldebaran.problem(512, 512, 512, type="S", alpha=2.0, beta=0.0)
    assert problem.workspace_size == MIB_128  # hipblaslt-bench's max_workspace_size
    assert (problem.alpha, problem.beta) == (1.0, 1.0)  # assignAlphaBeta1
    gemm = WorkloadGemm(m=512, n=512, k=512, a_type="f32_r", b_type="f32_r", c_type="f32_r", d_type="f32_r")
    assert aldebaran.problem_from_workload(gemm).workspace_size == MIB_128
    assert aldebaran.problem_from_query({"m": 8, "n": 8, "k": 8, "a_type": "Float"}).workspace_size == MIB_128
    # an explicit value wins, null = unlimited, as the query format says
    assert aldebaran.problem_from_query({"m": 8, "n": 8, "k": 8, "workspace_size": 0}).workspace_size == 0
    assert aldebaran.problem_from_query({"m": 8, "n": 8, "k": 8, "workspace_size": None}).workspace_size is None
    unlimited = open_library(aldebaran.path, workspace_size=None)
    assert unlimited.problem(8, 8, 8).workspace_size is None


def test_a_problem_object_is_taken_back_exactly(aldebaran: Library) -> None:
    problem = aldebaran.problem(300, 200, 100, type="B", trans_a="T")
    record = aldebaran.answer_record(aldebaran.select(problem), problem, aldebaran.device, calls=3)
    assert record["calls"] == 3 and "call_count" not in record
    assert aldebaran.problem_from_query(json.loads(json.dumps(record))) == problem


def test_why_not_names_the_workspace_check(corpus: Path, aldebaran: Library) -> None:
    query = next(q for q in _queries(corpus, "hipblaslt_aldebaran_all") if q["id"] == "hipblaslt_aldebaran_all/q00045")
    refused = aldebaran.problem_from_query({**query, "workspace_size": 0})
    device = aldebaran.device_of(query)
    assert aldebaran.select(refused, device).index is None
    unlimited = aldebaran.select(refused.model_copy(update={"workspace_size": None}), device)
    assert unlimited.index is not None
    reason = aldebaran.why_not(refused, device)
    assert reason.startswith("the workspace check refused")
    assert f"kernel {unlimited.index} " in reason and "size or alignment" not in reason


def test_why_not_is_computed_once_per_device_and_type(monkeypatch: pytest.MonkeyPatch, sample: Library) -> None:
    calls = []
    original = unserved.problem_type_reason
    monkeypatch.setattr(unserved, "problem_type_reason", lambda *a: calls.append(1) or original(*a))
    fresh = tensilekit.open_library()
    for m in range(1, 200):
        problem = fresh.problem(m, 64, 64, type="D")
        assert fresh.select(problem).index is None
        assert "no kernel for NN Double" in fresh.why_not(problem)
    assert len(calls) == 1


def test_lazy_library_reasons_name_types_and_transposes(corpus: Path) -> None:
    lazy = open_library(corpus / "masters" / "lazy" / "aldebaran_NN_mixed_lazy" / "TensileLibrary_lazy_gfx90a.dat")
    assert not lazy.master.solutions  # nothing decoded yet
    problem = lazy.problem(1024, 1024, 1024, type="H", trans_a="T")
    assert lazy.select(problem).index is None
    assert lazy.why_not(problem) == (
        "the library has no kernel for TN Half (these transposes); it has: NN Half; NN Half HPA; NN Int8→Int32 HPA"
    )


def test_arch_is_required_when_the_library_serves_several(corpus: Path) -> None:
    library = open_library(corpus / "masterlib" / "tensile" / "SolutionLibraries" / "KernelsLite.dat.gz")
    assert library.device is None and len(library.processors) > 1
    with pytest.raises(ArchRequired, match="gfx90a"):
        library.select(library.problem(64, 64, 64))
    assert open_library(library.path, arch="gfx90a").select(library.problem(64, 64, 64)) is not None


def test_gemm_problem_is_unchanged(sample: Library) -> None:
    assert sample.problem(64, 64, 64, type="HHS") == GemmProblem(
        m=64, n=64, k=64, a_type="Half", b_type="Half", c_type="Half", d_type="Half", compute_type="Float"
    )


def test_hipblaslt_type_spellings(aldebaran: Library) -> None:
    # issue 25: "--type bf16 / bf16_r fail on hipBLASLt libraries"; one vocabulary of type names
    problems = [aldebaran.problem(64, 64, 64, type=t) for t in ("bf16", "bf16_r", "BFloat16", "HIP_R_16BF", "B")]
    assert len({p.model_dump_json() for p in problems}) == 1
    assert problems[0].compute_type is not None and problems[0].compute_type.value == "Float"
    with pytest.raises(SelectionError):
        aldebaran.problem(64, 64, 64, type="nonsense")


@pytest.mark.parametrize("spelling", ["hhs", "HHS_BH", "hhs_bh", "Half,Half,Float", "HIP_R_16F,HIP_R_16F,f32"])
def test_problem_type_spellings_agree(sample: Library, spelling: str) -> None:
    assert sample.problem(64, 64, 64, type=spelling) == sample.problem(64, 64, 64, type="HHS")


def test_solution_by_index_reads_a_lazy_librarys_shards(corpus: Path) -> None:
    path = corpus / "masters" / "lazy" / "aldebaran_NN_mixed_lazy" / "TensileLibrary_lazy_gfx90a.dat"
    selected = open_library(path).select(open_library(path).problem(1024, 1024, 1024, type="H"))
    assert selected.index is not None
    fresh = open_library(path)  # no shard read yet
    assert fresh.solution(selected.index).name == selected.name
    with pytest.raises(SelectionError, match="no kernel with index 5"):
        fresh.solution(5)


def test_the_workspace_reason_agrees_with_amds_runtime(amd: Path, corpus: Path, tmp_path: Path) -> None:
    # AMD's tensilelite (select-oracle) answers the same GEMM with no workspace, the 128 MiB
    # default and an unlimited one: why_not's claim (this kernel, given more workspace) is its answer
    import subprocess

    master = corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat"
    library = open_library(master)
    query = next(q for q in _queries(corpus, "hipblaslt_aldebaran_all") if q["id"] == "hipblaslt_aldebaran_all/q00045")
    query = {
        k: v for k, v in query.items() if k not in ("expected", "top", "best_solution") and not k.startswith("all_")
    }
    variants = [{**query, "id": name, "workspace_size": size} for name, size in (("zero", 0), ("default", MIB_128))]
    variants.append({k: v for k, v in {**query, "id": "absent"}.items() if k != "workspace_size"})
    oracle_input = [dict(variant, workspace_size=variant.get("workspace_size", MIB_128)) for variant in variants]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in oracle_input))
    done = subprocess.run([str(amd / "select-oracle"), str(master), str(queries)], capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    expected = {a["id"]: (a.get("expected") or {}).get("index") for a in map(json.loads, done.stdout.splitlines())}
    ours = {}
    for variant in variants:  # "absent": the Library's default is what the oracle was given
        problem, device = library.problem_from_query(variant), library.device_of(variant)
        ours[variant["id"]] = library.select(problem, device).index
    assert ours == expected and expected["zero"] is None and expected["default"] is not None
    zero = library.problem_from_query(variants[0])
    assert f"kernel {expected['default']} " in library.why_not(zero, library.device_of(variants[0]))


def test_tune_next_query_lines_rebuild_the_problems_coverage_answered(aldebaran: Library) -> None:
    # a logged bias GEMM keeps its epilogue (and workspace) when coverage's tune_next.jsonl is
    # fed back to select --queries
    from tensilekit.coverage import query_lines

    gemms = [
        WorkloadGemm(m=16, n=1335, k=4608, trans_a="T", a_type="f16_r", compute_type="c_f32_r", bias=True,
                     bias_type="f32_r", activation="relu", call_count=3),
        WorkloadGemm(m=64, n=64, k=64, trans_a="T", a_type="f32_r", compute_type="c_f32_r"),
    ]  # fmt: skip
    found, skipped = aldebaran.coverage_gemms(gemms)
    assert not skipped and found[0].problem.hipblaslt.use_bias
    report = aldebaran.coverage(found, tune_next=0)
    for line, item in zip(query_lines(report.tune_next).splitlines(), report.tune_next, strict=True):
        assert aldebaran.problem_from_query(json.loads(line)) == item.gemm.problem


def test_no_kernel_on_a_partially_read_master_reads_rows_not_kernels(corpus: Path) -> None:
    # issue 25: a plain .dat is read partially; saying why a type has no kernel decoded every
    # kernel to list the types they serve (rocBLAS_Full: 1.9 s, 260 MiB). The rows the query
    # reached say it now, and the reason says it read rows (which do not name every flag).
    from tensilekit.io.master_io import load_master
    from tensilekit.io.partial_msgpack import is_partial
    from tensilekit.selection.unserved import problem_type_reason

    path = corpus / "masters" / "aldebaran_NN_mixed.dat"
    library = open_library(path)
    assert is_partial(library.master) and len(library.master.solutions) > 0
    whole = load_master(path)  # decoded whole: the kernels' own verdict, to compare with
    for spec, trans_a, what in (("D", "N", "these types"), ("H", "T", "these transposes")):
        problem = library.problem(1024, 1024, 1024, type=spec, trans_a=trans_a)
        assert library.select(problem).index is None
        decoded = library.master.solutions.decoded_count  # type: ignore[attr-defined]
        reason = library.why_not(problem)
        assert library.master.solutions.decoded_count == decoded <= 1  # type: ignore[attr-defined]
        kernels = problem_type_reason(whole, problem)
        assert kernels is not None and f"({what}); it has:" in kernels
        assert reason.split("; it has:")[0] == kernels.split("; it has:")[0]
        assert "read off the rows, the kernels not decoded" in reason
    double = library.why_not(library.problem(1024, 1024, 1024, type="D"))
    assert "NN Half" in double and "its gfx90a NN rows" in double  # what those rows have, and whose


@pytest.mark.parametrize("form", ["dat", "yaml"])
def test_a_size_missing_from_an_equality_table_is_named_not_blamed_on_predicates(corpus: Path, form: str) -> None:
    """Issue 32 item 2: an Equality table answers only the sizes it lists; the reason says that,
    with the key ``--explain`` shows, where it used to blame size or alignment predicates."""
    library = open_library(corpus / "masters-hipblaslt" / f"hipblaslt_gfx942_equality.{form}", arch="gfx942")
    problem = library.problem(1000, 2048, 512, type="HHS_BH", trans_a="T")
    assert library.select(problem).index is None
    reason = library.why_not(problem)
    assert reason.startswith("the library's Equality table has no entry for this size"), reason
    assert "[FreeSizeA,FreeSizeB,BatchSize,BoundSize]=[1000, 2048, 1, 512]" in reason
    assert "predicates fail" not in reason
    explained = [event.message for event in library.explain(problem).trace or [] if event.node == "entry"]
    assert explained == ["no entry with key [1000, 2048, 1, 512]"]


def test_why_not_says_a_served_problem_is_served_as_select_answers(sample: Library, tmp_path: Path) -> None:
    """hipBLASLt problems allow a workspace (128 MiB by default): a problem whose kernel fits it is
    served, so no "workspace check refused" (nor "no kernel accepts") sentence may come back."""
    from tensilekit.data.examples import example_files

    master = tmp_path / "TensileLibrary_gfx942.dat"
    master.write_bytes(example_files()["TensileLibrary_gfx942.dat"])
    gfx942 = open_library(master, cu_count=304)  # the examples' kernels are for 304 CUs
    for library, problem in (
        (gfx942, gfx942.problem(4096, 4096, 4096, type="HHS_BH", trans_a="T")),  # a workspace limit, met
        (sample, sample.problem(1024, 1024, 1024)),  # Tensile: no workspace limit
    ):
        selected = library.select(problem)
        assert selected.index is not None
        assert library.why_not(problem) == f"served: kernel {selected.index} ({selected.name}) is selected"
    assert gfx942.problem(8, 8, 8, type="HHS_BH", trans_a="T").workspace_size == MIB_128

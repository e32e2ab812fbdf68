"""The hipBLASLt runtime's own rules (selection/runtime.py, selection/hipblaslt.py) on small cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selection_factory import matching, predicate, problem_predicate, solution

import tensilekit
from tensilekit.data import sample_library_path
from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.model.library import MasterLibrary
from tensilekit.predicates.evaluate import MAX_GSU_WORKSPACE_SIZE, evaluate
from tensilekit.selection import Hardware, compile_library, select_solution
from tensilekit.selection.api import find_all_solutions, top_solutions
from tensilekit.selection.distance import grid_based_distance
from tensilekit.selection.hipblaslt import (
    compute_input_type,
    hipblaslt_problem,
    hipblaslt_problem_from_workload,
    problem_from_hipblaslt_query,
)
from tensilekit.selection.runtime import HIPBLASLT, TENSILE, detect_runtime, runtime_named
from tensilekit.selection.walk import as_contraction
from tensilekit.workload.problem import GemmProblem as WorkloadGemm

GFX942 = Hardware(arch="gfx942", cu_count=304)


def _master(solutions: list[dict[str, Any]], tree: dict[str, Any]) -> MasterLibrary:
    return MasterLibrary.model_validate({"solutions": solutions, "library": tree})


def test_runtime_is_detected_from_the_master(corpus: Path) -> None:
    lite = tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_navi31_all.dat")
    assert detect_runtime(lite) is HIPBLASLT
    assert detect_runtime(tensilekit.load_master(sample_library_path())) is TENSILE
    assert runtime_named("HipBLASLt") is HIPBLASLT
    # a lazy tensilelite master without solutions of its own: its problem rows test five types
    rows = {"type": "Problem", "rows": [{"predicate": {"type": "TypesEqual", "value": ["Half"] * 5},
                                         "library": {"type": "Placeholder", "value": "lib_gfx942"}}]}  # fmt: skip
    assert detect_runtime(_master([], rows)) is HIPBLASLT
    rows["rows"][0]["predicate"]["value"] = ["Half"] * 4
    assert detect_runtime(_master([], rows)) is TENSILE
    with pytest.raises(SelectionError, match="unknown runtime"):
        runtime_named("cublas")


def test_grid_key_folds_batch_into_the_larger_free_size() -> None:
    assert HIPBLASLT.grid_key((4000, 16, 4, 8192)) == (16000, 16, 1, 8192)
    assert HIPBLASLT.grid_key((16, 4000, 4, 8192)) == (16, 16000, 1, 8192)
    assert HIPBLASLT.grid_key((64, 64, 3, 8)) == (64, 192, 1, 8)  # M == N: N grows
    assert HIPBLASLT.grid_key((64, 32, 1, 8)) == (64, 32, 1, 8)
    assert TENSILE.grid_key((4000, 16, 4, 8192)) == (4000, 16, 4, 8192)


def test_grid_distance_reads_k_from_the_fourth_value_of_4d_keys() -> None:
    # same M, N: only the K term differs, and it must be K (8192 vs 1536), not batch (1 vs 1)
    exact = grid_based_distance((16, 2048, 1, 8192), (16, 2048, 1, 8192))
    other = grid_based_distance((16, 2048, 1, 8192), (16, 2048, 1, 1536))
    assert exact < other
    assert grid_based_distance((16, 2048, 8192), (16, 2048, 8192)) == exact  # Tensile's [M, N, K]


def test_workspace_check_follows_the_tensilelite_formula_and_the_128_mib_cap() -> None:
    check = predicate({"type": "WorkspaceCheck", "index": 0, "value": [4, 0, 2]})
    need = 1024 * 1024 * 4 * 2  # M·N·batch · elemC · GSU
    fits = as_contraction(hipblaslt_problem(1024, 1024, 64, workspace_size=need))
    short = as_contraction(hipblaslt_problem(1024, 1024, 64, workspace_size=need - 1))
    assert evaluate(check, fits, GFX942).passed and not evaluate(check, short, GFX942).passed
    gsu_one = predicate({"type": "WorkspaceCheck", "index": 0, "value": [4, 0, 1]})
    assert evaluate(gsu_one, as_contraction(hipblaslt_problem(8192, 8192, 64, workspace_size=0)), GFX942).passed
    huge = as_contraction(hipblaslt_problem(8192, 8192, 64, workspace_size=None))  # unlimited
    assert 8192 * 8192 * 8 > MAX_GSU_WORKSPACE_SIZE
    assert not evaluate(check, huge, GFX942).passed
    flag = predicate({"type": "WorkspaceCheck"})  # Tensile's task predicate still needs the solution
    with pytest.raises(SelectionError, match="task predicate"):
        evaluate(flag, huge, GFX942)


def test_problem_is_built_as_update_tensile_problem_does() -> None:
    assert compute_input_type(DataType.HALF, DataType.FLOAT8, "f32_fast_f16") is DataType.HALF
    assert compute_input_type(DataType.FLOAT8, DataType.BFLOAT8, "f32") is DataType.FLOAT8_BFLOAT8
    assert compute_input_type(DataType.HALF, DataType.FLOAT8, "f32") is DataType.FLOAT8
    query = {"m": 64, "n": 32, "k": 16, "a_type": "Half", "b_type": "Half", "c_type": "Half", "d_type": "Half",
             "compute_type": "f32", "ldc": 100}  # fmt: skip
    problem = as_contraction(problem_from_hipblaslt_query(query))
    assert (problem.hpa, problem.workspace_size, problem.beta, problem.ldd) == (True, 0, 1.0, 64)
    assert problem.compute_type is DataType.FLOAT and problem.compute_input_type is DataType.HALF
    xf32 = as_contraction(problem_from_hipblaslt_query({**query, "a_type": "Float", "compute_type": "f32_fast_xf32"}))
    assert xf32.f32_xdl_math_op is DataType.XFLOAT32
    assert [p.f32_xdl_math_op for p in HIPBLASLT.attempts(xf32)] == [DataType.XFLOAT32, DataType.FLOAT]
    with pytest.raises(SelectionError, match="compute type"):
        problem_from_hipblaslt_query({**query, "compute_type": "f33"})


def test_from_log_keeps_the_epilogue() -> None:
    gemm = WorkloadGemm(m=256, n=128, k=64, a_type="f16_r", compute_type="c_f32_r", bias=True, activation="gelu")
    problem = as_contraction(hipblaslt_problem_from_workload(gemm))
    lite = problem.lite
    assert (lite.use_bias, lite.bias_type, lite.activation_type) == (1, DataType.HALF, "Gelu")
    assert lite.activation_compute_type is DataType.FLOAT and (problem.alpha, problem.beta) == (1.0, 1.0)
    plain = as_contraction(hipblaslt_problem_from_workload(WorkloadGemm(m=256, n=128, k=64, a_type="f16_r")))
    assert plain.lite.use_bias == 0


def test_bias_gemm_from_a_log_is_not_answered_as_a_plain_one(corpus: Path) -> None:
    library = compile_library(tensilekit.load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_equality.dat"))
    base: dict[str, Any] = {
        "m": 128,  # an exact key of the Equality table
        "n": 2048,
        "k": 708,
        "a_type": "f16_r",
        "trans_a": "T",
        "compute_type": "c_f32_r",
    }
    plain = select_solution(library, HIPBLASLT.problem_from_workload(WorkloadGemm(**base), None), GFX942)
    assert plain.found
    # the kernels' BiasDataTypeWhiteList is [Float, Half]: a BFloat16 bias has no kernel
    with_bias = WorkloadGemm(**base, bias=True, bias_type="bf16_r")
    assert not select_solution(library, HIPBLASLT.problem_from_workload(with_bias, None), GFX942).found
    half_bias = WorkloadGemm(**base, bias=True, bias_type="f16_r")
    assert select_solution(library, HIPBLASLT.problem_from_workload(half_bias, None), GFX942).found


def _two_rows_sharing_a_kernel() -> MasterLibrary:
    grid = matching([([64, 64, 1, 64], 0, 0.0), ([64, 128, 1, 64], 1, 0.0), ([128, 64, 1, 64], 2, 0.0)], "GridBased")
    grid["properties"].insert(2, {"type": "BatchSize", "index": 0})
    single = {"type": "Single", "index": 0}
    tree = {"type": "Problem", "rows": [{"predicate": {"type": "TruePred"}, "library": single},
                                         {"predicate": {"type": "TruePred"}, "library": grid}]}  # fmt: skip
    return _master([solution(i, name=f"k{i}") for i in range(3)], tree)


def test_top_concatenates_rows_without_deduplication() -> None:
    library = _two_rows_sharing_a_kernel()
    problem = hipblaslt_problem(64, 64, 64, a_type="Float", c_type="Float")
    device = Hardware(arch="gfx90a", cu_count=104)
    ranked = top_solutions(library, problem, device, 3, runtime="hipblaslt").ranked
    assert [s.index for s in ranked] == [0, 0, 1]  # row 0 gives kernel 0, the grid row 0 again, then 1
    assert select_solution(library, problem, device, runtime="hipblaslt").index == 0
    listed = select_solution(library, problem, device, runtime="hipblaslt", top=8).alternatives
    assert [(c.index, c.source) for c in listed][:4] == [
        (0, "findTopSolutions"), (0, "findTopSolutions"), (1, "findTopSolutions"), (2, "findTopSolutions"),
    ]  # fmt: skip


def test_freesize_answers_only_through_the_get_all_solutions_fallback() -> None:
    extra = {"type": "WorkspaceCheck", "index": 0, "value": [4, 0, 2]}
    solutions = [solution(0, name="k0"), {**solution(1, name="k1"), "problemPredicate": problem_predicate(extra)}]
    for raw in solutions:
        raw["problemType"] = {"operationIdentifier": "Contraction_l_Ailk_Bljk_Cijk_Dijk", "aType": "Float",
                              "bType": "Float", "cType": "Float", "dType": "Float", "computeInputType": "Float"}  # fmt: skip
    library = _master(solutions, {"type": "FreeSize", "table": [{"index": 0}, {"index": 1}]})
    assert detect_runtime(library) is HIPBLASLT
    device = Hardware(arch="gfx90a", cu_count=104)
    problem = hipblaslt_problem(512, 512, 64, a_type="Float", c_type="Float", workspace_size=0)
    assert not select_solution(library, problem, device).found
    top = top_solutions(library, problem, device, 4)
    assert top.ranked == () and [s.index for s in top.fallback] == [0]  # k1 needs workspace
    roomy = problem.model_copy(update={"workspace_size": 512 * 512 * 8})
    assert [s.index for s in find_all_solutions(library, roomy, device)] == [0, 1]

"""The pure decisions inside the tuning stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit.model.logic import ProblemType
from tensilekit.pipeline.report import GemmReport, summarize
from tensilekit.pipeline.stages.benchmark import compare
from tensilekit.pipeline.stages.build import equality_logic
from tensilekit.pipeline.stages.common import error_ratio, keep_by_share, share_table
from tensilekit.pipeline.stages.final import full_logic, keep_sizes
from tensilekit.pipeline.stages.postprocess import judge
from tensilekit.pipeline.stages.report import gemm_status
from tensilekit.pipeline.stages.search import rank_candidates
from tensilekit.tools.library_index import Resolution
from tensilekit.tools.problem_types import logic_type_key, problem_type_dict, problem_type_key
from tensilekit.tools.simulated.library import library_logic
from tensilekit.workload.problem import GemmProblem

F8H = "aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_custom.yaml"


def test_share_table_and_keep_threshold() -> None:
    shares = share_table({"a": 6.0, "b": 3.0, "c": 1.0})
    assert shares == {"a": 0.6, "b": 0.3, "c": 0.1}
    order = ["c", "b", "a"]
    assert keep_by_share(shares, 1.0, order) == ["c", "b", "a"]
    assert keep_by_share(shares, 0.9, order) == ["b", "a"]
    assert keep_by_share(shares, 0.5, order) == ["a"]
    assert keep_by_share(shares, 0.01, order) == ["a"]
    assert share_table({"a": 0.0}) == {"a": 0.0}


def test_error_ratio() -> None:
    assert error_ratio(2e-3, 1e-3) == pytest.approx(2.0)
    assert error_ratio(0.0, 0.0) == 1.0
    assert error_ratio(None, 1.0) is None


def result(index: int, us: float | None, name: str | None = None) -> dict[str, object]:
    return {"solution_index": index, "solution_name": name or f"k{index}", "us": us, "gflops": None, "norm_error": None}


def test_rank_candidates_selects_the_fastest_present_in_the_library() -> None:
    results = [
        result(3, 9.0),
        result(1, 5.0),
        result(2, 5.0),
        result(4, 1.0, "absent"),
        result(5, None),
        result(1, 4.0),
    ]
    places = {"k1": [0, 1], "k2": [0, 2], "k3": [0, 3]}

    def identify(name: str | None, index: int | None) -> Resolution:
        return Resolution(places.get(str(name)), None if name in places else "not in the library")

    ranked, absent = rank_candidates(results, identify, top_k=2)
    assert [(item["solution_index"], item["selected"]) for item in ranked] == [
        (4, False),
        (1, True),
        (2, True),
        (3, False),
    ]
    assert ranked[1]["us"] == 4.0  # first (fastest) row of a repeated index wins
    assert absent == 1


def ERRORS(tuned: float, reference: float) -> dict[str, dict[str, float]]:  # noqa: N802 - reads as a table
    return {"tuned": {"norm_error": tuned}, "reference": {"norm_error": reference}}


@pytest.mark.parametrize(
    ("record", "kept", "reason"),
    [
        ({"status": "ok", "uplift": 0.10, "error_ratio": 1.0, **ERRORS(1e-3, 1e-3)}, True, "kept"),
        # both errors beside the drop (issue 36 item 8): each can be within --verify's tolerance
        (
            {"status": "ok", "uplift": 0.10, "error_ratio": 2.5, **ERRORS(2.5e-3, 1e-3)},
            False,
            "dropped: error ratio 2.5 > 2 (norm_error 0.0025 vs the reference's 0.001)",
        ),
        (
            {"status": "ok", "uplift": 0.005, "error_ratio": 1.0, **ERRORS(1e-3, 1e-3)},
            False,
            "dropped: uplift 0.50% < 1.00%",
        ),
        ({"status": "ok", "uplift": 0.10, "error_ratio": None}, False, "dropped: no error reported"),
        ({"status": "benchmark failed", "uplift": None, "error_ratio": None}, False, "dropped: benchmark failed"),
    ],
)
def test_judge(record: dict[str, object], kept: bool, reason: str) -> None:
    assert judge(record, err_thr=2.0, up_thr=0.01) == (kept, reason)


def test_compare() -> None:
    reference = {"us": 12.0, "norm_error": 1e-3}
    tuned = {"us": 10.0, "norm_error": 1.5e-3}
    assert compare(reference, tuned) == {
        "uplift": pytest.approx(0.2),
        "error_ratio": pytest.approx(1.5),
        "status": "ok",
    }
    assert compare(None, tuned)["status"] == "benchmark failed"


PROBLEM = GemmProblem(m=512, n=512, k=512, trans_a="T", a_type="bf16_r")


def test_equality_logic_and_keep_sizes() -> None:
    _, base = library_logic("gfx942", PROBLEM)
    chosen = [base.solutions[5], base.solutions[2]]
    rows = [([2, 2, 1, 2, 2, 2, 2, 2], 1, 3.0), ([1, 1, 1, 1, 1, 1, 1, 1], 0, 7.0), ([3, 3, 1, 3, 3, 3, 3, 3], 1, 1.0)]
    tuned = equality_logic(base, chosen, rows)
    assert [solution.solution_index for solution in tuned.solutions] == [0, 1]
    assert tuned.solutions[1].solution_name_min == base.solutions[2].solution_name_min
    assert [entry.size[0] for entry in tuned.table] == [1, 2, 3]  # sorted by size
    assert tuned.library_type == "Equality" and tuned.range_logic is None
    assert base.solutions[5].solution_index == 5  # the base is untouched
    reduced = keep_sizes(tuned, {(2, 2, 1, 2, 2, 2, 2, 2), (3, 3, 1, 3, 3, 3, 3, 3)})
    assert reduced is not None
    assert [solution.solution_name_min for solution in reduced.solutions] == [base.solutions[2].solution_name_min]
    assert [(entry.size[0], entry.solution) for entry in reduced.table] == [(2, 0), (3, 0)]
    assert keep_sizes(tuned, set()) is None


@pytest.mark.parametrize(
    "problem",
    [
        PROBLEM,
        GemmProblem(m=1, n=1, k=1, trans_b="T", a_type="f16_r"),
        GemmProblem(m=1, n=1, k=1, a_type="f32_r", compute_type="c_xf32_r"),
        GemmProblem(m=1, n=1, k=1, a_type="f8_fnuz_r", b_type="f8_fnuz_r", c_type="bf16_r", d_type="bf16_r"),
    ],
)
def test_logic_type_key_reads_back_the_problem_type(problem: GemmProblem) -> None:
    expected = problem_type_key(problem)
    if problem.compute_type == "c_xf32_r":
        expected = expected[:-1] + ("c_f32_r",)  # the simulated dict does not set F32XdlMathOp
    assert logic_type_key(ProblemType.model_validate(problem_type_dict(problem))) == expected


def gemm(status: str, share: float | None, uplift: float | None) -> GemmReport:
    return GemmReport(
        id="g", gemm_type="BBS_TN", m=1, n=1, batch=1, k=1, call_count=1, time_share=share, uplift=uplift, status=status
    )


def test_summarize_weights_by_time_share() -> None:
    gemms = [gemm("tuned", 0.5, 0.25), gemm("tuned", 0.1, 0.0), gemm("dropped", 0.4, 0.5)]
    summary = summarize(gemms)
    assert summary["average_uplift"] == pytest.approx(0.125)
    assert summary["weighted_uplift"] == pytest.approx(0.5 * 0.25 / 0.6)
    assert summary["gemm_time_saving"] == pytest.approx(0.5 * 0.2)
    assert summary["end_to_end"]["1"] == pytest.approx(1 / 0.9)
    assert summarize([gemm("dropped", 1.0, 0.5)])["average_uplift"] is None


def test_gemm_status_names_the_stage_that_stopped_it() -> None:
    baseline = {"gemms": {
        "a": {"measured": None, "kept": False}, "b": {"measured": {"us": 1}, "kept": False},
        "c": {"measured": {"us": 1}, "kept": True}, "d": {"measured": {"us": 1}, "kept": True},
        "e": {"measured": {"us": 1}, "kept": True},
    }}  # fmt: skip
    search = {"c": {"winner": None, "status": "no verified candidate"}, "d": {"winner": {}, "status": "winner"},
              "e": {"winner": {}, "status": "winner"}}  # fmt: skip
    decisions = {"d": "kept", "e": "dropped: uplift 0.1% < 1.00%"}
    assert [gemm_status(key, baseline, search, decisions) for key in "abcde"] == [
        "baseline failed", "not tuned (below --keep-thr)", "no winner: no verified candidate", "tuned",
        "dropped: uplift 0.1% < 1.00%",
    ]  # fmt: skip


def test_a_mixed_fp8_library_row_is_indexed_under_both_input_types() -> None:
    # AMD's mixed fp8 logic says DataType 13 (F8B8) and derives DataTypeA/B from it
    # (aquavanjaram gfx940 ..._F8B8HS_BH_...yaml; SolutionStructs.py:108 @7d9fb68).
    problem = GemmProblem(m=64, n=64, k=64, trans_a="T", a_type="f8_r", b_type="bf8_r", c_type="f16_r")
    raw = problem_type_dict(problem)
    assert raw["DataType"] == raw["DataTypeA"] == raw["DataTypeB"] == 13
    amd = {key: value for key, value in raw.items() if key not in ("DataTypeA", "DataTypeB")}
    assert logic_type_key(ProblemType.model_validate(amd)) == problem_type_key(problem)
    assert logic_type_key(ProblemType.model_validate(raw)) == problem_type_key(problem)


def test_kernel_search_refuses_mx_block_scaling_and_names_the_modes() -> None:
    from tensilekit.pipeline.stages.kernel_groups import kernel_search_issue, type_letters

    plain = GemmProblem(m=64, n=64, k=64, a_type="f8_r", b_type="bf8_r", c_type="f16_r", scale_a=1, scale_b=1)
    assert kernel_search_issue(plain) is None and type_letters(plain) == ("F8B8", "H", "S")
    issue = kernel_search_issue(plain.model_copy(update={"scale_b": 3}))
    assert issue is not None and "MX block scaling (scaleB 3)" in issue


def test_full_logic_keeps_won_tuned_rows_and_adds_the_reference_solution_elsewhere() -> None:
    _, base = library_logic("gfx942", PROBLEM)
    one, two, three = [1] * 8, [2] * 8, [3] * 8
    tuned = equality_logic(
        base, [base.solutions[5], base.solutions[2]], [(one, 0, 7.0), (two, 1, 3.0), (three, 1, 1.0)]
    )
    # size 1 kept; sizes 2 and 3 lost to the reference, which for size 3 is the tuned file's own solution 2
    full = full_logic(tuned, {tuple(one)}, [(two, base.solutions[9], 5.0), (three, base.solutions[2], 2.0)])
    assert full is not None and full.library_type == "Equality"
    names = [solution.solution_name_min for solution in full.solutions]
    assert names == [base.solutions[5].solution_name_min, base.solutions[9].solution_name_min,
                     base.solutions[2].solution_name_min]  # fmt: skip
    assert [(entry.size[0], entry.solution, entry.efficiency) for entry in full.table] == [
        (1, 0, 7.0), (2, 1, 5.0), (3, 2, 2.0)
    ]  # fmt: skip
    assert full_logic(tuned, set(), []) is None


def test_amds_f8h_logic_serves_the_logged_mixed_fp8_gemm(corpus: Path) -> None:
    # f8 x f16 with c_f32_fast_f16_r: hipBLASLt's computeInputType is f16 (tensile_host.cpp:295-340
    # @7d9fb683), the DataType of AMD's F8H logic (DataType 4, DataTypeA 11, DataTypeB 4).
    from tensilekit.io.logic_io import load_logic

    logic = load_logic(corpus / "logic/hipblaslt/aquavanjaram/gfx942/Equality" / F8H)
    mixed = GemmProblem(m=4096, n=128, k=4096, a_type="f8_r", b_type="f16_r", c_type="f16_r",
                        compute_type="c_f32_fast_f16_r")  # fmt: skip
    assert logic_type_key(logic.problem_type) == problem_type_key(mixed) == (
        "N", "N", "f8_r", "f16_r", "f16_r", "c_f32_fast_f16_r",
    )  # fmt: skip
    # the same inputs with plain fp32 compute make the MFMA read fp8: another problem type
    assert problem_type_key(mixed.model_copy(update={"compute_type": "c_f32_r"})) != logic_type_key(logic.problem_type)
    # and f16 x f16 is the same type with and without the fast compute type, as in hipBLASLt
    half = GemmProblem(m=64, n=64, k=64, a_type="f16_r")
    assert problem_type_key(half) == problem_type_key(half.model_copy(update={"compute_type": "c_f32_fast_f16_r"}))
    assert logic_type_key(ProblemType.model_validate(problem_type_dict(mixed))) == problem_type_key(mixed)


def test_a_solution_keyed_under_another_type_is_not_blamed_on_the_installed_library() -> None:
    from tensilekit.tools.library_index import BuiltSolution, LogicIndex, catalog_of, resolve

    def built(index: int, key: tuple[str, ...]) -> BuiltSolution:
        return BuiltSolution(index, f"k{index}", f"k{index}", "f.yaml", index, key, f"id{index}")

    wanted, other = ("N", "N", "f16_r", "f16_r", "f16_r", "c_f32_r"), ("N", "N", "f8_r", "f16_r", "f16_r", "c_f32_r")
    index = LogicIndex([built(0, wanted), built(1, other), built(2, other)], [])
    installed = {0: ("k0", "id0"), 1: ("k1", "id1"), 2: ("k2", "id2"), 3: ("k3", "id3")}
    catalog = catalog_of(index, ["f.yaml"], installed, types=[wanted])
    assert catalog["identity"]["installed_of_other_types"] == {",".join(other): [[1, 2]]}
    text = ",".join(wanted)
    assert resolve(catalog, text, "k0", 0).location == [0, 0]
    reason = resolve(catalog, text, "k2", 2).reason or ""
    assert "is in --library-logic" in reason and "not the installation" in reason
    assert resolve(catalog, text, "k3", 3).reason == "solution 3 of the reference library is not in --library-logic"


def test_a_generated_kernel_answers_only_where_it_beats_the_best_existing_solution() -> None:
    """Issue 36 item 7: 21.10 us generated against existing index 447 at 12.59 us -- 447 is the answer."""
    from tensilekit.pipeline.stages.kernel_search import (
        EXISTING,
        GENERATED,
        existing_answer_text,
        generated_or_existing,
    )

    best = {"solution_index": 447, "solution_name": "Cijk_x", "us": 12.59}
    assert generated_or_existing(21.10, best) == EXISTING
    assert generated_or_existing(12.59, best) == EXISTING  # a tie keeps the kernel the library has
    assert generated_or_existing(12.0, best) == GENERATED
    assert generated_or_existing(None, best) == EXISTING and generated_or_existing(12.0, None) == GENERATED
    assert generated_or_existing(None, None) is None
    assert existing_answer_text(best, 21.10) == (
        "existing solution 447 (12.59 us) is at least as fast as the best generated kernel (21.1 us)"
    )

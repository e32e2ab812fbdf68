"""De-duplication with summed call counts, and grouping by GEMM type."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tensilekit.workload.aggregate import aggregate_problems, deduplicate_problems, group_by_gemm_type
from tensilekit.workload.problem import GemmProblem


def bf16(m: int, n: int, k: int, **fields: object) -> GemmProblem:
    return GemmProblem.model_validate({"m": m, "n": n, "k": k, "trans_a": "T", "a_type": "bf16_r", **fields})


def test_identical_problems_are_merged_in_first_seen_order() -> None:
    workload = aggregate_problems(
        [bf16(64, 8, 32, call_count=3), bf16(128, 8, 32), bf16(64, 8, 32, call_count=4), bf16(64, 8, 32)]
    )
    assert [(p.m, p.call_count) for p in workload.problems] == [(64, 8), (128, 1)]
    assert (workload.records_in, workload.duplicates_merged, workload.call_count) == (4, 2, 9)
    assert workload.warnings == ()


def test_strides_matter_only_for_batched_problems() -> None:
    merged = aggregate_problems([bf16(64, 8, 32, stride_a=0), bf16(64, 8, 32)])
    assert len(merged.problems) == 1 and merged.problems[0].stride_a == 0  # first record's values kept
    batched = aggregate_problems([bf16(64, 8, 32, batch=2, stride_a=0), bf16(64, 8, 32, batch=2)])
    assert len(batched.problems) == 2


def test_epilogue_and_scalars_keep_problems_apart() -> None:
    problems = [bf16(64, 8, 32), bf16(64, 8, 32, beta=1.0), bf16(64, 8, 32, bias=True, bias_type="bf16_r"),
                bf16(64, 8, 32, activation="gelu"), bf16(64, 8, 32, trans_b="T")]  # fmt: skip
    assert len(aggregate_problems(problems).problems) == 5


def test_solution_fields_survive_only_when_consistent() -> None:
    same = aggregate_problems([bf16(64, 8, 32, solution_index=7), bf16(64, 8, 32, solution_index=7)])
    assert same.problems[0].solution_index == 7 and same.warnings == ()
    clash = aggregate_problems(
        [bf16(64, 8, 32, solution_index=7, kernel_name="a"), bf16(64, 8, 32, solution_index=9), bf16(64, 8, 32)]
    )
    merged = clash.problems[0]
    assert (merged.solution_index, merged.kernel_name, merged.call_count) == (None, None, 3)
    assert clash.warnings == ("1 problem(s) ran with different solutions; their solution fields were cleared",)


def test_groups_are_named_and_sorted() -> None:
    problems = [bf16(64, 8, 32), GemmProblem(m=8, n=8, k=8, a_type="f16_r"), bf16(16, 8, 32, call_count=5),
                bf16(16, 16, 16, trans_a="N")]  # fmt: skip
    groups = group_by_gemm_type(problems)
    assert [group.name for group in groups] == ["BBS_NN", "BBS_TN", "HHS_NN"]
    assert groups[1].sizes == [(64, 8, 1, 32), (16, 8, 1, 32)]
    assert groups[1].call_count == 6


def test_colliding_type_names_are_disambiguated() -> None:
    plain = GemmProblem(m=8, n=8, k=8, a_type="f32_r")
    fast = GemmProblem(m=8, n=8, k=8, a_type="f32_r", compute_type="c_f32_fast_bf16_r")
    names = [group.name for group in group_by_gemm_type([plain, fast])]
    assert names == ["SSS_NN[c_f32_fast_bf16_r]", "SSS_NN[c_f32_r]"]


def test_empty_input() -> None:
    workload = aggregate_problems([])
    assert workload.problems == () and workload.groups() == [] and workload.call_count == 0
    assert deduplicate_problems([]) == []


problems_strategy = st.lists(
    st.builds(
        bf16,
        m=st.sampled_from([16, 32]),
        n=st.sampled_from([8, 16]),
        k=st.just(32),
        call_count=st.integers(min_value=1, max_value=50),
        beta=st.sampled_from([0.0, 1.0]),
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(problems_strategy)
def test_aggregation_keeps_calls_and_is_idempotent(problems: list[GemmProblem]) -> None:
    once = aggregate_problems(problems)
    assert once.call_count == sum(problem.call_count for problem in problems)
    assert len({problem.identity() for problem in once.problems}) == len(once.problems)
    twice = aggregate_problems(once.problems)
    assert twice.problems == once.problems
    assert sum(group.call_count for group in once.groups()) == once.call_count

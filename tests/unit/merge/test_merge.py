"""Unit tests for tensilekit.merge.merge: each rule of shared/spec/merge.md on a tiny file."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from merge_factory import PROBLEM_TYPE, logic_data, make_logic, solution

from tensilekit.errors import MergeError
from tensilekit.io.logic_io import logic_from_data, logic_to_data
from tensilekit.merge import Compat, MergePolicy, merge_logic
from tensilekit.merge.merge import default_force_merge, resolve_force_merge, tag_label, validate_policy_value
from tensilekit.model.logic import LogicFile

A, B, C = solution(64, 64), solution(128, 64), solution(128, 128)
FORCED = MergePolicy(force_merge=True)
WINNER = MergePolicy(force_merge=False)


def rows(logic: LogicFile) -> list[tuple[list[int], int, float | int]]:
    return [(entry.size, entry.solution, entry.efficiency) for entry in logic.table]


def tiles(logic: LogicFile) -> list[tuple[int | None, int | None]]:
    return [(s.macro_tile0, s.macro_tile1) for s in logic.solutions]


def test_winner_replaces_only_strictly_faster() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 0, 10.0), ([3, 3, 1, 3], 0, 10.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 11.0), ([2, 2, 1, 2], 0, 10.0), ([3, 3, 1, 3], 0, 9.0)])
    merged, report = merge_logic(original, incremental, WINNER)
    assert rows(merged) == [([1, 1, 1, 1], 1, 11.0), ([2, 2, 1, 2], 0, 10.0), ([3, 3, 1, 3], 0, 10.0)]
    file_report = report.files[0]
    assert [entry.reason for entry in file_report.sizes_replaced] == ["faster"]
    assert [(entry.key, entry.tie) for entry in file_report.sizes_kept] == [([2, 2, 1, 2], True), ([3, 3, 1, 3], False)]
    assert file_report.policy.merge_mode == "Winner"


def test_forced_replaces_every_existing_size_and_drops_unused() -> None:
    original = make_logic([A, C], [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 1, 10.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 0, 1.0)])
    merged, report = merge_logic(original, incremental, FORCED)
    assert tiles(merged) == [(128, 64)]
    assert rows(merged) == [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 0, 1.0)]
    assert [ref.index for ref in report.files[0].kernels_removed] == [0, 1]
    assert all(entry.reason == "forced" and entry.kernel_changed for entry in report.files[0].sizes_replaced)


def test_new_sizes_are_appended_in_incremental_order_with_duplicates() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([B, C], [([5, 5, 1, 5], 1, 3.0), ([4, 4, 1, 4], 0, 2.0), ([5, 5, 1, 5], 0, 4.0)])
    merged, report = merge_logic(original, incremental, WINNER)
    assert rows(merged) == [
        ([1, 1, 1, 1], 0, 10.0),
        ([5, 5, 1, 5], 1, 3.0),
        ([4, 4, 1, 4], 2, 2.0),
        ([5, 5, 1, 5], 2, 4.0),
    ]
    # new kernels in order of first use while walking the incremental table
    assert tiles(merged) == [(64, 64), (128, 128), (128, 64)]
    assert [entry.row for entry in report.files[0].sizes_added] == [1, 2, 3]
    assert [ref.index for ref in report.files[0].kernels_added] == [1, 2]


def test_only_the_last_duplicate_original_key_is_updated() -> None:
    original = make_logic([A, C], [([1, 1, 1, 1], 0, 10.0), ([1, 1, 1, 1], 1, 5.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 7.0)])
    merged, report = merge_logic(original, incremental, WINNER)
    # compared with the *last* occurrence (5.0): replaced there, the first row stays stale
    assert rows(merged) == [([1, 1, 1, 1], 0, 10.0), ([1, 1, 1, 1], 1, 7.0)]
    assert report.files[0].stale_duplicate_rows == [0]
    assert report.files[0].duplicate_keys[0].rows == [0, 1]


def test_duplicate_incremental_keys_each_compete_with_the_original() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([B, C], [([1, 1, 1, 1], 0, 12.0), ([1, 1, 1, 1], 1, 11.0)])
    merged, _ = merge_logic(original, incremental, WINNER)
    # 11 < 12 but both beat the original 10: the last qualifying entry wins
    assert rows(merged) == [([1, 1, 1, 1], 0, 11.0)]
    assert tiles(merged) == [(128, 128)]


def test_trim_shortens_and_drops_per_amd() -> None:
    table = [
        ([1, 1, 1, 1, 9, 9, 9, 9], 0, 1.0),  # dropped: [1,1,1,1] occurs later
        ([2, 2, 1, 2, 9, 9, 9, 9], 0, 2.0),  # trimmed
        ([2, 2, 1, 2, 8, 8, 8, 8], 0, 3.0),  # dropped: the first one is already trimmed
        ([1, 1, 1, 1], 0, 4.0),
    ]
    original = make_logic([A], table)
    incremental = make_logic([A], [])
    merged, report = merge_logic(original, incremental, FORCED)
    assert rows(merged) == [([2, 2, 1, 2], 0, 2.0), ([1, 1, 1, 1], 0, 4.0)]
    events = [(event.key, event.trimmed_to, event.dropped) for event in report.files[0].sizes_trimmed]
    assert events == [
        ([1, 1, 1, 1, 9, 9, 9, 9], [1, 1, 1, 1], True),
        ([2, 2, 1, 2, 9, 9, 9, 9], [2, 2, 1, 2], False),
        ([2, 2, 1, 2, 8, 8, 8, 8], [2, 2, 1, 2], True),
    ]
    untrimmed, _ = merge_logic(original, incremental, MergePolicy(force_merge=True, trim=False))
    assert rows(untrimmed) == rows(original)


def test_trimmed_original_matches_four_tuple_incremental() -> None:
    original = make_logic([A], [([1, 1, 1, 1, 7, 7, 7, 7], 0, 1.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 2.0)])
    merged, _ = merge_logic(original, incremental, WINNER)
    assert rows(merged) == [([1, 1, 1, 1], 1, 2.0)] or rows(merged) == [([1, 1, 1, 1], 0, 2.0)]
    assert tiles(merged) == [(128, 64)]


def test_tensile_identity_fills_defaults_and_tensilelite_does_not() -> None:
    # The same kernel dumped with an extra default-valued key: equal for T, different for TL.
    dumped_again = solution(64, 64, LoopTail=True, SolutionNameMin="other name")
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([dumped_again], [([2, 2, 1, 2], 0, 10.0)])
    tensile, tensile_report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILE))
    lite, lite_report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    assert len(tensile.solutions) == 1 and tensile_report.files[0].kernels_reused == 1
    assert len(lite.solutions) == 2 and not lite_report.files[0].kernels_reused


def test_tensilelite_identity_ignores_index_and_name_min() -> None:
    renamed = solution(64, 64, SolutionNameMin="stale", SolutionIndex=41)
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([renamed], [([2, 2, 1, 2], 0, 10.0)], index=False)
    merged, _ = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    assert len(merged.solutions) == 1
    assert merged.solutions[0].solution_name_min == A["SolutionNameMin"]


def test_first_equal_pool_kernel_is_reused() -> None:
    original = make_logic([A, copy.deepcopy(A)], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 1, 1.0)])
    incremental = make_logic([A], [([2, 2, 1, 2], 0, 2.0)])
    merged, report = merge_logic(original, incremental, FORCED)
    assert rows(merged) == [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 0, 2.0)]
    assert len(merged.solutions) == 1
    assert not report.files[0].sizes_replaced[0].kernel_changed  # same identity, other copy


def test_tensilelite_sanitizes_staggeru_zero_on_both_sides() -> None:
    stale = solution(64, 64, StaggerU=0, StaggerUStride=256, StaggerUMapping=3)
    original = make_logic([stale], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([B], [])
    lite, report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    raw = lite.solutions[0].raw()
    assert (raw["StaggerUStride"], raw["StaggerUMapping"], raw["_staggerStrideShift"]) == (0, 0, 0)
    assert report.files[0].sanitized_kernels == 1
    tensile, _ = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILE))
    assert tensile.solutions[0].raw()["StaggerUStride"] == 256


def test_no_eff_writes_zero_but_compares_real_values() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 0, 10.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 11.0), ([2, 2, 1, 2], 0, 9.0), ([3, 3, 1, 3], 0, 5.0)])
    merged, _ = merge_logic(original, incremental, MergePolicy(force_merge=False, no_eff=True))
    assert [entry.efficiency for entry in merged.table] == [0.0, 10.0, 0.0]


def test_efficiency_is_written_verbatim() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 11)])
    merged, _ = merge_logic(original, incremental, FORCED)
    assert type(merged.table[0].efficiency) is int


def _tagged(**asserts: Any) -> dict[str, Any]:
    return solution(64, 64, MatrixInstruction=[32, 32, 8, 1], SolutionNameMin=str(asserts), **asserts)


def test_solution_tags_keep_kinds_apart_and_reject_slower_specific_entries() -> None:
    general = _tagged()
    beta_one = _tagged(AssertBetaValue=1)
    original = make_logic([general], [([1, 1, 1, 1], 0, 50.0)])
    incremental = make_logic([beta_one], [([1, 1, 1, 1], 0, 40.0), ([2, 2, 1, 2], 0, 40.0)])
    merged, report = merge_logic(original, incremental, MergePolicy(force_merge=True, add_solution_tags=True))
    # [1,1,1,1]: a Beta=1 kernel is a different kind; the general one (Beta=Any) is faster -> rejected
    assert rows(merged) == [([1, 1, 1, 1], 0, 50.0), ([2, 2, 1, 2], 1, 40.0)]
    rejected = report.files[0].sizes_rejected
    assert [(entry.key, entry.tag, entry.best_compatible_efficiency) for entry in rejected] == [
        ([1, 1, 1, 1], "MFMA,Alpha=Any,Beta=1,C!=D", 50.0)
    ]
    faster = make_logic([beta_one], [([1, 1, 1, 1], 0, 60.0)])
    both, _ = merge_logic(original, faster, MergePolicy(force_merge=True, add_solution_tags=True))
    assert [entry.size for entry in both.table] == [[1, 1, 1, 1], [1, 1, 1, 1]]  # duplicate keys written


def test_assert_alpha_false_means_zero_not_any() -> None:
    assert tag_label((1, 3, 0, 1)) == "MFMA,Alpha=0,Beta=Any,C!=D"
    original = make_logic([_tagged()], [([1, 1, 1, 1], 0, 50.0)])
    incremental = make_logic([_tagged(AssertAlphaValue=False)], [([1, 1, 1, 1], 0, 60.0)])
    merged, report = merge_logic(original, incremental, MergePolicy(force_merge=True, add_solution_tags=True))
    assert len(merged.table) == 2
    assert report.files[0].sizes_added[0].tag == "MFMA,Alpha=0,Beta=Any,C!=D"


def test_unsupported_alpha_value_errors_only_in_tag_mode() -> None:
    odd = solution(64, 64, AssertAlphaValue=2.5)
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([odd], [([1, 1, 1, 1], 0, 11.0)])
    with pytest.raises(MergeError, match="AssertAlphaValue"):
        merge_logic(original, incremental, MergePolicy(add_solution_tags=True))
    _, report = merge_logic(original, incremental, FORCED)
    assert any("aborts" in warning for warning in report.files[0].warnings)


def test_tag_duplicate_warning_counts_like_amd() -> None:
    original = make_logic([_tagged(), _tagged(AssertBetaValue=0)], [([1, 1, 1, 1], 0, 1.0), ([1, 1, 1, 1], 1, 1.0)])
    _, report = merge_logic(original, make_logic([A], []), FORCED)
    assert report.files[0].tag_duplicates_original == 1


def test_inputs_are_not_modified_and_output_shares_no_state() -> None:
    original = make_logic(
        [A, C],
        [([1, 1, 1, 1, 5, 5, 5, 5], 0, 10.0), ([2, 2, 1, 2], 1, 10.0)],
        header={**PROBLEM_TYPE, "UseInitialStrides": False},
    )
    incremental = make_logic([solution(64, 64, StaggerU=0)], [([1, 1, 1, 1], 0, 11.0)])
    before = (logic_to_data(original), logic_to_data(incremental))
    merged, _ = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    assert (logic_to_data(original), logic_to_data(incremental)) == before
    assert merged.device_names is not None and original.device_names is not None
    merged.device_names.append("changed")
    assert original.device_names == ["Device 0050", "Device 0051"]


def test_tensilelite_waives_problem_type_keys_the_incremental_lacks() -> None:
    header = {**PROBLEM_TYPE, "UseInitialStrides": False}
    old = solution(64, 64, ProblemType=copy.deepcopy(header))
    original = make_logic([old], [([1, 1, 1, 1], 0, 10.0)], header=header)
    incremental = make_logic([B], [([2, 2, 1, 2], 0, 10.0)])
    merged, report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    assert report.files[0].problem_type_waived == ["UseInitialStrides"]
    assert "UseInitialStrides" not in merged.problem_type.raw()
    assert "UseInitialStrides" not in merged.solutions[0].raw()["ProblemType"]
    unchecked, report = merge_logic(
        original, incremental, MergePolicy(compat=Compat.TENSILELITE, problem_type_check=False)
    )
    assert "UseInitialStrides" in unchecked.problem_type.raw() and not report.files[0].problem_type_waived


def test_tensilelite_problem_type_mismatch_is_an_error() -> None:
    other = solution(64, 64, ProblemType={**PROBLEM_TYPE, "DataType": 4})
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([other], [([1, 1, 1, 1], 0, 10.0)])
    with pytest.raises(MergeError, match="DataType"):
        merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE))
    merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILE))  # T does not check


def test_bad_table_index_is_a_merge_error_with_location() -> None:
    data = logic_data([A], [([1, 1, 1, 1], 3, 10.0)])
    original = logic_from_data(data)
    with pytest.raises(MergeError) as raised:
        merge_logic(original, make_logic([A], []), FORCED)
    assert raised.value.location is not None and raised.value.location.path == "[7][0][1][0]"


def test_amd_statistics_count_pool_growth() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 10.0)])
    incremental = make_logic([B, C], [([1, 1, 1, 1], 0, 11.0), ([1, 1, 1, 1], 1, 12.0)])
    merged, report = merge_logic(original, incremental, WINNER)
    stats = report.files[0].amd_statistics
    assert (stats.sizes_added, stats.kernels_added, stats.kernels_removed) == (0, 2, 2)
    assert len(merged.solutions) == 1 and len(report.files[0].kernels_added) == 1


def test_default_policy_and_latch() -> None:
    assert default_force_merge("logic/arcturus_Cijk.yaml") is False
    assert default_force_merge("arcturus/dir/vega20.yaml") is False
    assert default_force_merge("vega20_Cijk.yaml") is True and default_force_merge(None) is True
    policy = MergePolicy()
    assert resolve_force_merge(policy, "x/hip.yaml", latched=(False, "arcturus.yaml"))[0] is False
    assert resolve_force_merge(MergePolicy(latch_default=False), "x/hip.yaml", latched=(False, "a"))[0] is True
    assert resolve_force_merge(MergePolicy(force_merge=False), "x/hip.yaml")[0] is False
    _, report = merge_logic(make_logic([A], []), make_logic([A], []), incremental_path="tuning/arcturus/x.yaml")
    assert report.files[0].policy.merge_mode == "Winner"


@pytest.mark.parametrize(
    ("text", "value"),
    [("TRUE", True), ("1", True), ("false", False), ("0", False), ("None", None), (None, None), (True, True)],
)
def test_force_merge_spellings(text: Any, value: bool | None) -> None:
    assert validate_policy_value(text) is value


def test_force_merge_other_strings_are_rejected() -> None:
    with pytest.raises(MergeError):
        validate_policy_value("yes")


def test_policy_is_frozen() -> None:
    policy = MergePolicy()
    with pytest.raises(ValueError):
        policy.trim = False  # type: ignore[misc]


def test_header_warnings() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 4250.0)], version="4.6.0")
    incremental = make_logic(
        [A], [([1, 1, 1, 1], 0, 44.5)], version="4.35.0", performance_metric="DeviceEfficiency", architecture="gfx908"
    )
    _, report = merge_logic(original, incremental, WINNER)
    warnings = " ".join(report.files[0].warnings)
    assert "MinimumRequiredVersion" in warnings and "PerfMetric" in warnings and "architectures" in warnings
    assert report.files[0].efficiency.mixed


def test_missing_table_is_a_merge_error() -> None:
    data = logic_data([A], [])
    data[7] = None
    with pytest.raises(MergeError, match="exact-logic"):
        merge_logic(logic_from_data(data), make_logic([A], []))


def test_tensilelite_file_defaults_to_tensilelite_compat() -> None:
    original = make_logic([A], [([1, 1, 1, 1], 0, 0.0)], tensilelite=True)
    incremental = make_logic([B], [([1, 1, 1, 1], 0, 0.0)], tensilelite=True)
    merged, report = merge_logic(original, incremental, WINNER)
    assert report.files[0].policy.compat is Compat.TENSILELITE
    assert any("never replace" in warning for warning in report.files[0].warnings)
    assert merged.library_type == "Equality"

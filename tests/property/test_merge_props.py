"""Hypothesis laws for merge, diff and prune on generated logic files.

* ``merge(a, a)`` changes nothing observable (per row: kernel identity and efficiency);
* merge never alters sizes absent from the incremental file;
* every table entry of a merge refers to an existing kernel, and no kernel is unused;
* ``diff(a, a)`` is empty;
* ``diff(a, merge(a, b))`` lists exactly the sizes the merge report says changed;
* prune never changes which kernel (identity) a size selects;
* ``merge_logic`` agrees byte for byte with a deliberately naive reference model written from
  ``shared/spec/merge.md`` §7, emitted by PyYAML itself (not tensilekit's emitter).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.io.logic_io import dumps_logic, logic_from_data  # noqa: E402
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE  # noqa: E402
from tensilekit.merge import Compat, MergePolicy, diff_libraries, merge_logic, prune_logic  # noqa: E402
from tensilekit.merge.identity import identity_function  # noqa: E402
from tensilekit.model.logic import LogicFile  # noqa: E402

# The profile (example counts) comes from tests/property/conftest.py; these laws only need
# generous health checks, as a merge of generated files is slower than hypothesis expects.
RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PROBLEM_TYPE: dict[str, Any] = {
    "OperationType": "GEMM", "DataType": 0, "DestDataType": 0, "ComputeDataType": 0,
    "IndexAssignmentsA": [0, 3, 2], "IndexAssignmentsB": [3, 1, 2], "NumIndicesC": 3,
    "UseBeta": True, "Batched": True,
}  # fmt: skip


@st.composite
def kernels(draw: st.DrawFn) -> dict[str, Any]:
    mt0 = draw(st.sampled_from([32, 64, 128]))
    mt1 = draw(st.sampled_from([32, 64]))
    kernel: dict[str, Any] = {
        "ProblemType": copy.deepcopy(PROBLEM_TYPE),
        "KernelLanguage": "Assembly",
        "MacroTile0": mt0,
        "MacroTile1": mt1,
        "DepthU": draw(st.sampled_from([8, 16])),
        "WorkGroup": [16, 16, 1],
        "ThreadTile": [mt0 // 16, mt1 // 16],
        "SolutionNameMin": f"MT{mt0}x{mt1}",
    }
    if draw(st.booleans()):
        kernel["LoopTail"] = True  # a re-dump with a default-valued key: same Tensile name
    if draw(st.booleans()):
        kernel.update(StaggerU=0, StaggerUStride=0, StaggerUMapping=0, _staggerStrideShift=0)  # sanitised
    return kernel


SIZES = st.tuples(st.sampled_from([1, 64, 128]), st.sampled_from([1, 64]), st.just(1), st.sampled_from([16, 256]))
EFFICIENCIES = st.sampled_from([0.0, 1.5, 10.0, 10.0, 20.25, 44])


@st.composite
def logic_files(draw: st.DrawFn, *, unique_keys: bool = False, long_keys: bool = False) -> LogicFile:
    solutions = draw(st.lists(kernels(), min_size=1, max_size=5))
    keys = st.lists(SIZES, max_size=8, unique=unique_keys)
    sizes: list[list[int]] = [list(size) for size in draw(keys)]
    if long_keys:
        sizes = [size + [size[0]] * 4 if draw(st.booleans()) else size for size in sizes]
    table = [[size, [draw(st.integers(0, len(solutions) - 1)), draw(EFFICIENCIES)]] for size in sizes]
    for position, solution in enumerate(solutions):
        solution["SolutionIndex"] = position
    data = [
        {"MinimumRequiredVersion": "4.33.0"},
        "aldebaran",
        "gfx90a",
        ["Device 0050"],
        copy.deepcopy(PROBLEM_TYPE),
        solutions,
        [2, 3, 0, 1],
        table,
        None,
    ]
    return logic_from_data(data)


POLICIES = st.builds(
    MergePolicy,
    force_merge=st.booleans(),
    compat=st.sampled_from(list(Compat)),
    no_eff=st.booleans(),
)


def row_states(logic: LogicFile, compat: Compat) -> list[tuple[tuple[Any, ...], Any, Any]]:
    identity = identity_function(compat, logic.problem_type.raw())
    names = [identity(solution.raw()) for solution in logic.solutions]
    return [(tuple(entry.size), names[entry.solution], entry.efficiency) for entry in logic.table]


@RELAXED
@given(logic_files(unique_keys=True), st.booleans(), st.sampled_from(list(Compat)))
def test_merge_with_itself_changes_nothing(a: LogicFile, force: bool, compat: Compat) -> None:
    merged, report = merge_logic(a, a, MergePolicy(force_merge=force, compat=compat))
    assert row_states(merged, compat) == row_states(a, compat)
    assert not report.files[0].has_changes


@RELAXED
@given(logic_files(long_keys=True), logic_files(long_keys=True), POLICIES)
def test_sizes_absent_from_incremental_are_untouched(a: LogicFile, b: LogicFile, policy: MergePolicy) -> None:
    policy = policy.model_copy(update={"trim": False})
    merged, _ = merge_logic(a, b, policy)
    touched = {tuple(entry.size) for entry in b.table}
    before, after = row_states(a, policy.compat or Compat.TENSILE), row_states(merged, policy.compat or Compat.TENSILE)
    for position, state in enumerate(before):
        if state[0] not in touched:
            assert after[position] == state


@RELAXED
@given(logic_files(long_keys=True), logic_files(long_keys=True), POLICIES, st.booleans())
def test_every_entry_refers_to_an_existing_used_kernel(
    a: LogicFile, b: LogicFile, policy: MergePolicy, trim: bool
) -> None:
    merged, report = merge_logic(a, b, policy.model_copy(update={"trim": trim}))
    used = {entry.solution for entry in merged.table}
    assert used == set(range(len(merged.solutions)))
    assert [solution.solution_index for solution in merged.solutions] == list(range(len(merged.solutions)))
    assert report.files[0].output_kernels == len(merged.solutions)
    # and the written file reads back to the same model
    assert logic_from_data(yaml.safe_load(dumps_logic(merged, AMD_LOGIC_STYLE))).model_dump() == merged.model_dump()


@RELAXED
@given(logic_files(long_keys=True))
def test_diff_with_itself_is_empty(a: LogicFile) -> None:
    assert diff_libraries(a, a).is_empty
    assert diff_libraries(a, a, compat=Compat.TENSILELITE).is_empty


@RELAXED
@given(logic_files(unique_keys=True), logic_files(), POLICIES)
def test_diff_of_merge_lists_exactly_the_reported_changes(a: LogicFile, b: LogicFile, policy: MergePolicy) -> None:
    merged, report = merge_logic(a, b, policy)
    diff = diff_libraries(a, merged, compat=policy.compat)
    changed = {tuple(key) for group in diff.groups for key in group.changed_keys}
    assert changed == {tuple(key) for key in report.files[0].changed_keys}


@RELAXED
@given(logic_files(long_keys=True), st.sampled_from(list(Compat)))
def test_prune_keeps_every_selection(a: LogicFile, compat: Compat) -> None:
    pruned, report = prune_logic(a, compat=compat)
    assert row_states(pruned, compat) == row_states(a, compat)
    assert len(pruned.solutions) == report.kernels_after <= len(a.solutions)
    again, second = prune_logic(pruned, compat=compat)
    assert not second.changed


# ---------------------------------------------------------------------------------------------
# a naive reference model, written from the spec's checklist (§7), on plain lists


def reference_merge(
    original: list[Any], incremental: list[Any], force: bool, trim: bool, compat: Compat, no_eff: bool
) -> list[Any]:
    orig, inc = copy.deepcopy(original), copy.deepcopy(incremental)
    same = _reference_equality(compat, orig[4])
    for data in (orig, inc):
        for position, solution in enumerate(data[5]):  # 2. positions are the indices
            solution["SolutionIndex"] = position
        if trim:  # 3. trim against the current table
            kept: list[Any] = []
            for number, (key, value) in enumerate(data[7]):
                if len(key) >= 8:
                    short = key[:-4]
                    current = [k for k, _ in kept] + [k for k, _ in data[7][number + 1 :]]
                    if short in current:
                        continue
                    key = short
                kept.append([key, value])
            data[7] = kept
        if compat is Compat.TENSILELITE:
            for solution in data[5]:
                if solution.get("StaggerU") == 0:
                    solution.update(StaggerUMapping=0, StaggerUStride=0, _staggerStrideShift=0)
        _reference_drop_unused(data)  # 4.
    pool = copy.deepcopy(orig[5])
    table = copy.deepcopy(orig[7])
    last = {}
    for number, (key, value) in enumerate(orig[7]):  # 5. the last occurrence wins
        last[tuple(key)] = (number, value[1])
    for key, (position, eff) in inc[7]:
        stored = 0.0 if no_eff else eff
        kernel = inc[5][position]
        if tuple(key) in last:
            number, original_eff = last[tuple(key)]
            if eff > original_eff or force:
                table[number][1] = [_reference_add(pool, kernel, same), stored]
        else:
            table.append([key, [_reference_add(pool, kernel, same), stored]])
    result = copy.deepcopy(orig)
    result[5], result[7] = pool, table
    _reference_drop_unused(result)  # 7.
    return result


def _reference_equality(compat: Compat, header: dict[str, Any]) -> Any:
    identity = identity_function(compat, header)
    return lambda a, b: identity(a) == identity(b)


def _reference_add(pool: list[dict[str, Any]], kernel: dict[str, Any], same: Any) -> int:
    for position, existing in enumerate(pool):
        if same(existing, kernel):
            return position
    pool.append(copy.deepcopy(kernel))
    pool[-1]["SolutionIndex"] = len(pool) - 1
    return len(pool) - 1


def _reference_drop_unused(data: list[Any]) -> None:
    used = sorted({value[0] for _, value in data[7]})
    renumber = {old: new for new, old in enumerate(used)}
    data[5] = [data[5][old] for old in used]
    for position, solution in enumerate(data[5]):
        solution["SolutionIndex"] = position
    data[7] = [[key, [renumber[value[0]], value[1]]] for key, value in data[7]]


def _pyyaml(data: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, default_flow_style=None)


@RELAXED
@given(logic_files(long_keys=True), logic_files(long_keys=True), POLICIES, st.booleans())
def test_agrees_with_reference_model_byte_for_byte(a: LogicFile, b: LogicFile, policy: MergePolicy, trim: bool) -> None:
    from tensilekit.io.logic_io import logic_to_data

    compat = policy.compat or Compat.TENSILE
    expected = reference_merge(
        logic_to_data(a), logic_to_data(b), bool(policy.force_merge), trim, compat, policy.no_eff
    )
    merged, _ = merge_logic(a, b, policy.model_copy(update={"trim": trim}))
    assert dumps_logic(merged, AMD_LOGIC_STYLE) == _pyyaml(expected)

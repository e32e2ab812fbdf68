"""Hypothesis laws for selection on generated libraries and problems.

* the selected kernel is one of the library's solutions and passes all its predicates;
* a one-solution library selects that solution or nothing — and something exactly when the
  solution passes and its problem type is served;
* the compiled single-query and batch paths always agree with the reference walk;
* every compiled predicate agrees with the reference evaluator, for one query and for columns.
"""

from __future__ import annotations

from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from selection_factory import FLOAT4, master, matching, predicate, solution  # noqa: E402

from tensilekit.predicates.evaluate import evaluate, evaluate_all  # noqa: E402
from tensilekit.selection import (  # noqa: E402
    GemmProblem,
    Hardware,
    ProblemColumns,
    compile_library,
    contraction_problem,
    select_batch,
    select_solution,
)
from tensilekit.selection.kernels import compile_atom  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

sizes = st.one_of(st.integers(0, 70), st.integers(0, 5000), st.sampled_from([1, 64, 128, 4096, 2**21 + 1]))


@st.composite
def problems(draw: st.DrawFn) -> GemmProblem:
    a_type = draw(st.sampled_from(["Float", "Float", "Half", "BFloat16", "Int8x4"]))
    fields: dict[str, Any] = {
        "m": draw(sizes), "n": draw(sizes), "k": draw(sizes), "batch": draw(st.integers(1, 4)),
        "trans_a": draw(st.sampled_from("NT")), "trans_b": draw(st.sampled_from("NT")), "a_type": a_type,
        "alpha": draw(st.sampled_from([1.0, 0.0, -1.0, 0.5])), "beta": draw(st.sampled_from([1.0, 0.0, -1.0, 2.0])),
        "strided_batched": draw(st.booleans()), "c_equals_d": draw(st.booleans()),
        "deterministic": draw(st.booleans()), "fp16_alt_impl": draw(st.booleans()),
        "performance_metric": draw(st.sampled_from(["DeviceEfficiency", "CUEfficiency", "Auto", "ExperimentalDTree"])),
        "workspace_size": draw(st.one_of(st.none(), st.integers(0, 10**7))),
        "kernel_language": draw(st.sampled_from(["Any", "Any", "Assembly", "Source"])),
    }  # fmt: skip
    if a_type == "Int8x4":
        fields.update(c_type="Int32", compute_type="Int32")
    if draw(st.booleans()):
        fields["lda"] = draw(st.integers(0, 3)) + max(1, fields["m"] if fields["trans_a"] == "N" else fields["k"])
        fields["ldd"] = draw(st.sampled_from([None, 1, 5000]))
    return GemmProblem(**fields)


devices = st.builds(
    Hardware,
    arch=st.sampled_from(["gfx90a", "gfx942"]),
    cu_count=st.sampled_from([None, 104, 110]),
    is_apu=st.booleans(),
)


def _leaf(kind: str, draw: st.DrawFn) -> dict[str, Any]:
    small = st.sampled_from([1, 2, 4, 8, 64, 128])
    if kind in ("Free0SizeMultiple", "Free1SizeMultiple", "BoundSizeMultiple"):
        return {"type": kind, "index": -1 if kind == "BoundSizeMultiple" else 0, "value": draw(small)}
    if kind in ("SizeEqual", "SizeGreaterThan", "SizeLessThan", "SizeMultiple"):
        return {"type": kind, "index": draw(st.integers(0, 3)), "value": draw(st.sampled_from([1, 2, 64, 256, 4096]))}
    if kind == "SizeInRange":
        low = draw(st.integers(0, 200))
        return {
            "type": kind,
            "index": draw(st.integers(0, 3)),
            "value": {"min": low, "max": low + draw(st.integers(0, 5000))},
        }
    if kind in ("LeadingFree0SizesGreaterOrEqual", "LeadingFree1SizesGreaterOrEqual", "GlobalSplitUCheckMinK"):
        return {"type": kind, "value": draw(small)}
    if kind == "BufferLoadOffsetLimitCheck":
        return {
            "type": kind,
            "value": {
                "DUorMT0": draw(small),
                "DUorMT1": draw(small),
                "ShiftPtrElemA": draw(st.integers(0, 4)),
                "ShiftPtrElemB": 0,
            },
        }
    if kind == "BufferStoreOffsetLimitCheck":
        return {"type": kind, "value": draw(st.sampled_from([16, 256, 1024]))}
    if kind in ("StridedBatched", "DeterministicMode", "HighPrecisionAccumulate", "StochasticRounding"):
        return {"type": kind, "value": draw(st.booleans())}
    if kind in ("StrideAEqual", "StrideDEqual"):
        return {"type": kind, "index": draw(st.integers(0, 2)), "value": draw(st.sampled_from([1, 64, 5000]))}
    if kind in ("AlphaValue", "BetaValue"):
        return {"type": kind, "value": draw(st.sampled_from(["Any", "One", "NegativeOne"]))}
    if kind == "KernelLanguageCompatible":
        return {"type": kind, "value": draw(st.sampled_from(["Assembly", "Source"]))}
    if kind == "TypesEqual":
        return {
            "type": kind,
            "value": draw(st.sampled_from([FLOAT4, ["Half"] * 4, ["Int8x4", "Int8x4", "Int32", "Int32"]])),
        }
    if kind == "Processor":
        return {"type": "AMDGPU", "value": {"type": kind, "value": draw(st.sampled_from(["gfx90a", "gfx942"]))}}
    if kind == "CUCount":
        return {"type": "AMDGPU", "value": {"type": kind, "value": draw(st.sampled_from([104, 110]))}}
    if kind == "IsAPU":
        return {"type": "AMDGPU", "value": {"type": kind, "value": draw(st.integers(0, 1))}}
    if kind in ("AIGreaterThanEqual", "AILessThanEqual"):
        return {"type": kind, "value": draw(st.sampled_from([0.5, 10.0, 100.0]))}
    return {"type": kind}


LEAF_KINDS = [
    "Free0SizeMultiple", "Free1SizeMultiple", "BoundSizeMultiple", "SizeEqual", "SizeGreaterThan", "SizeLessThan",
    "SizeMultiple", "SizeInRange", "LeadingFree0SizesGreaterOrEqual", "LeadingFree1SizesGreaterOrEqual",
    "GlobalSplitUCheckMinK", "BufferLoadOffsetLimitCheck", "BufferStoreOffsetLimitCheck", "StridedBatched",
    "DeterministicMode", "HighPrecisionAccumulate", "StochasticRounding", "StrideAEqual", "StrideDEqual", "AlphaValue",
    "BetaValue", "KernelLanguageCompatible", "TypesEqual", "Processor", "CUCount", "IsAPU", "AIGreaterThanEqual",
    "AILessThanEqual", "CDStridesEqual", "LDCEqualsLDD", "CEqualsD", "BetaZero", "BetaOne", "CUEfficiency",
    "ExperimentalDTree", "Fp16AltImpl", "PersistentKernelCheck", "TruePred", "FalsePred", "EqualityMatching",
]  # fmt: skip


@st.composite
def raw_predicates(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    if depth > 0 and draw(st.integers(0, 4)) == 0:
        kind = draw(st.sampled_from(["And", "Or", "Not"]))
        if kind == "Not":
            return {"type": "Not", "value": draw(raw_predicates(depth - 1))}
        return {"type": kind, "value": draw(st.lists(raw_predicates(depth - 1), min_size=1, max_size=3))}
    return _leaf(draw(st.sampled_from(LEAF_KINDS)), draw)


@SETTINGS
@given(raw=raw_predicates(), problem=problems(), device=devices)
def test_compiled_predicates_agree_with_the_reference(
    raw: dict[str, Any], problem: GemmProblem, device: Hardware
) -> None:
    model = predicate(raw)
    contraction = contraction_problem(problem)
    expected = evaluate(model, contraction, device).passed
    atom = compile_atom(model)
    assert atom.scalar(contraction, device) is expected or bool(atom.scalar(contraction, device)) == expected
    columns = ProblemColumns.from_problems([contraction, contraction], [device, device])
    assert atom.vector(columns).tolist() == [expected, expected]


@st.composite
def libraries(draw: st.DrawFn, max_solutions: int = 5) -> Any:
    count = draw(st.integers(1, max_solutions))
    solutions = [solution(100 + i, *draw(st.lists(raw_predicates(depth=1), max_size=3))) for i in range(count)]
    distance = draw(st.sampled_from(["Euclidean", "Euclidean", "Manhattan", "Equality", "Ratio"]))
    arity = 4 if distance == "Equality" else 3
    keys = st.lists(st.sampled_from([1, 2, 64, 100, 128, 4096]), min_size=arity, max_size=arity)
    entries = draw(
        st.lists(
            st.tuples(keys, st.integers(100, 99 + count), st.sampled_from([0.0, 1.0, 2.0])), min_size=1, max_size=12
        )
    )
    return master(solutions, matching(entries, distance))


def _passes(library: Any, index: int, problem: GemmProblem, device: Hardware) -> bool:
    found = next(s for s in library.solutions if s.index == index)
    contraction = contraction_problem(problem)
    predicates = [found.task_predicate, found.problem_predicate, found.hardware_predicate]
    return evaluate_all(predicates, contraction, device, solution=found).passed


@SETTINGS
@given(library=libraries(), queries=st.lists(problems(), min_size=1, max_size=4), device=devices)
def test_selected_kernel_belongs_to_the_library_and_passes(
    library: Any, queries: list[GemmProblem], device: Hardware
) -> None:
    compiled = compile_library(library)
    batch = select_batch(compiled, queries, device)
    indices = {s.index for s in library.solutions}
    for position, problem in enumerate(queries):
        reference = select_solution(library, problem, device)
        fast = select_solution(compiled, problem, device)
        assert (fast.index, fast.distance) == (reference.index, reference.distance)
        assert (batch[position].index, batch[position].distance) == (reference.index, reference.distance)
        if reference.index is not None:
            assert reference.index in indices
            assert _passes(library, reference.index, problem, device)


@SETTINGS
@given(extra=st.lists(raw_predicates(depth=1), max_size=3), problem=problems(), device=devices,
       key=st.lists(st.integers(1, 5000), min_size=3, max_size=3))  # fmt: skip
def test_one_solution_library_selects_it_or_nothing(
    extra: list[dict[str, Any]], problem: GemmProblem, device: Hardware, key: list[int]
) -> None:
    library = master([solution(7, *extra)], matching([(key, 7, 1.0)]))
    selection = select_solution(library, problem, device)
    assert selection.index in (None, 7)
    served = (
        device.arch == "gfx90a"
        and contraction_problem(problem).op_id == "Contraction_l_Ailk_Bljk_Cijk_Dijk"
        and problem.a_type.value == "Float" and problem.c_type is not None and problem.c_type.value == "Float"
        and not problem.hpa
    )  # fmt: skip
    assert (selection.index == 7) == (served and _passes(library, 7, problem, device))

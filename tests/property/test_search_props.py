"""Properties of the GA's operators: crossover and mutation never produce a pruned kernel."""

from __future__ import annotations

import random

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.search.ga import SearchProblem, crossover, mutate, random_kernel  # noqa: E402
from tensilekit.search.params import ProblemShape  # noqa: E402
from tensilekit.search.profiles import gene_space, profile_for  # noqa: E402
from tensilekit.search.pruning import is_valid, make_context, prune_reasons  # noqa: E402

DIMENSIONS = st.sampled_from([1, 8, 16, 100, 128, 512, 2048, 2056, 4096, 6144, 14336, 28672])
SHAPES = st.builds(
    ProblemShape, m=DIMENSIONS, n=DIMENSIONS, batch=st.sampled_from([1, 32, 256]), k=DIMENSIONS,
    trans_a=st.sampled_from(["N", "T"]), trans_b=st.sampled_from(["N", "T"]),
)  # fmt: skip
CASES = st.tuples(
    st.sampled_from(["gfx90a", "gfx942", "gfx950"]), st.sampled_from(["B", "H", "S"]),
    st.sampled_from(["tensilelite", "tensile"]), st.lists(SHAPES, min_size=1, max_size=3),
)  # fmt: skip


def problem_for(arch: str, letters: str, dialect: str, shapes: list[ProblemShape]) -> SearchProblem:
    profile = profile_for(arch)
    assume(dialect in profile.dialects)
    context = make_context(profile, letters, shapes)
    return SearchProblem(gene_space(profile, letters, dialect), context, tuple(1.0 for _ in shapes))  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(case=CASES, seed=st.integers(0, 2**32 - 1), rate=st.floats(0.0, 1.0))
def test_offspring_are_never_pruned(case: tuple[str, str, str, list[ProblemShape]], seed: int, rate: float) -> None:
    problem = problem_for(*case)
    rng = random.Random(seed)
    first, second = random_kernel(problem, rng), random_kernel(problem, rng)
    assume(first is not None and second is not None)
    assert first is not None and second is not None
    for _ in range(5):
        child = crossover(first, second, problem, rng)
        assert is_valid(child, problem.context), prune_reasons(child, problem.context)
        mutated = mutate(child, problem, rng, rate)
        assert is_valid(mutated, problem.context), prune_reasons(mutated, problem.context)
        first, second = mutated, first


@settings(max_examples=30, deadline=None)
@given(case=CASES, seed=st.integers(0, 2**32 - 1))
def test_random_kernels_are_valid(case: tuple[str, str, str, list[ProblemShape]], seed: int) -> None:
    problem = problem_for(*case)
    kernel = random_kernel(problem, random.Random(seed))
    assert kernel is None or is_valid(kernel, problem.context)

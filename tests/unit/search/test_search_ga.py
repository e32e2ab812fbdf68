"""The genetic algorithm with an injected evaluator: determinism, resume, selection, stopping."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from tensilekit.errors import SearchError
from tensilekit.search.ga import (
    GAConfig,
    GAState,
    Measurement,
    SearchProblem,
    advance,
    best_per_size,
    generation_rng,
    propose,
    result_of,
    run_ga,
    state_from_json,
    state_to_json,
    tournament,
)
from tensilekit.search.params import KernelParams
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import is_valid, make_context

from .search_factory import BASE, DECODE, SQUARE

PROFILE = profile_for("gfx942")


def problem(*shapes: object, stream: str = "g") -> SearchProblem:
    sizes = shapes or (SQUARE, DECODE)
    context = make_context(PROFILE, "B", sizes)  # type: ignore[arg-type]
    return SearchProblem(gene_space(PROFILE, "B"), context, tuple(float(i + 1) for i in range(len(sizes))), stream)


def model_time(kernel: KernelParams, position: int) -> float:
    """A smooth made-up landscape: best near MT 128x16, DepthU 128, GSU 1, wide vectors."""
    return (
        10.0
        + abs(math.log2(kernel.mt0 / 128))
        + abs(math.log2(kernel.mt1 / 16))
        + abs(math.log2(kernel.depth_u / 128))
        + kernel.gsu * 0.1
        + (8 - kernel.grvw_a) * 0.05
        + position * 0.01
        + kernel.stagger_u * 1e-4
    )


class Evaluator:
    """Counts calls and kernels; kernels with DepthU 32 'fail validation'."""

    def __init__(self) -> None:
        self.calls: list[list[KernelParams]] = []

    def __call__(self, kernels: Sequence[KernelParams]) -> list[Measurement]:
        self.calls.append(list(kernels))
        results = []
        for kernel in kernels:
            if kernel.depth_u == 32:
                results.append(Measurement(kernel, (None, None), "failed validation"))
            else:
                results.append(Measurement(kernel, (model_time(kernel, 0), model_time(kernel, 1))))
        return results


CONFIG = GAConfig(population=16, generations=6, stagnation=0, seed=7)


def test_the_same_seed_gives_the_same_search_and_another_seed_another() -> None:
    first = run_ga(problem(), Evaluator(), CONFIG)
    second = run_ga(problem(), Evaluator(), CONFIG)
    assert {**state_to_json(first.state), "elapsed_s": 0} == {**state_to_json(second.state), "elapsed_s": 0}
    other = run_ga(problem(), Evaluator(), GAConfig(population=16, generations=6, stagnation=0, seed=8))
    assert list(other.state.archive) != list(first.state.archive)
    assert run_ga(problem(stream="h"), Evaluator(), CONFIG).state.population != first.state.population


def test_every_kernel_is_valid_benchmarked_once_and_costs_improve() -> None:
    evaluate = Evaluator()
    result = run_ga(problem(), evaluate, CONFIG, seeds=[BASE.replace(mt1=16, wave_group=(2, 1))])
    measured = [kernel for call in evaluate.calls for kernel in call]
    assert len(measured) == len(set(measured)) == result.evaluated
    context = problem().context
    assert all(is_valid(kernel, context) for kernel in measured)
    history = result.state.best_history
    assert all(later <= earlier for earlier, later in zip(history, history[1:], strict=False))
    assert history[-1] < history[0]
    assert evaluate.calls[0][0] == BASE.replace(mt1=16, wave_group=(2, 1))  # the seed comes first
    assert result.best is not None and result.best[1] == history[-1]


def test_failed_kernels_cost_infinity_and_are_recorded() -> None:
    result = run_ga(problem(), Evaluator(), CONFIG)
    failures = result.failures
    assert failures and all(item.status == "failed validation" and item.kernel.depth_u == 32 for item in failures)
    assert all(item.cost((1.0, 2.0)) == math.inf for item in failures)
    assert all(kernel.depth_u != 32 for kernel, _ in filter(None, result.per_size))


def test_elites_survive_and_ties_break_on_kernel_order() -> None:
    prob = problem()
    a, b, c = BASE.replace(mt1=16, wave_group=(2, 1)), BASE.replace(mt1=32, wave_group=(2, 1)), BASE
    archive = {kernel: Measurement(kernel, (1.0, 1.0)) for kernel in (c, b, a)}
    state = GAState(generation=1, population=(c, b, a), archive=archive, best_history=(3.0,))
    nxt = propose(state, prob, GAConfig(population=4, elite=2, seed=1))
    assert nxt[:2] == sorted([a, b, c])[:2]
    rng = generation_rng(0, "t", 0)
    assert tournament([c, b, a], archive, prob.weights, rng, size=20) == min(a, b, c)
    assert best_per_size(state, 2) == [(min(a, b, c), 1.0), (min(a, b, c), 1.0)]


def test_resuming_from_any_checkpoint_gives_the_uninterrupted_result() -> None:
    checkpoints: list[dict[str, object]] = []
    whole = run_ga(problem(), Evaluator(), CONFIG, checkpoint=lambda state: checkpoints.append(state_to_json(state)))
    assert len(checkpoints) == CONFIG.generations
    for saved in (checkpoints[0], checkpoints[3]):
        evaluate = Evaluator()
        resumed = run_ga(problem(), evaluate, CONFIG, state=state_from_json(saved))  # type: ignore[arg-type]
        assert state_to_json(resumed.state)["archive"] == state_to_json(whole.state)["archive"]
        assert resumed.state.best_history == whole.state.best_history
        assert sum(len(call) for call in evaluate.calls) == whole.evaluated - len(saved["archive"])  # type: ignore[arg-type]


def test_stop_conditions() -> None:
    assert run_ga(problem(), Evaluator(), CONFIG).state.stop_reason == "generations"
    stagnant = run_ga(problem(), lambda ks: [Measurement(k, (1.0, 1.0)) for k in ks], GAConfig(stagnation=2))
    assert stagnant.state.stop_reason == "stagnation" and stagnant.state.generation == 3
    ticks = iter(range(0, 1000, 10))
    budget = run_ga(problem(), Evaluator(), GAConfig(generations=50, stagnation=0, time_budget_s=25.0),
                    clock=lambda: float(next(ticks)))  # fmt: skip
    assert budget.state.stop_reason == "time budget" and budget.state.generation == 3
    base = problem(SQUARE)
    small = {name: (values[0],) for name, values in gene_space(PROFILE, "B").items()}
    small.update(mt0=(32, 64), mi=((16, 16, 16, 1),), wave_group=((2, 2),), mt1=(128,), depth_u=(64,))
    tiny = SearchProblem(small, base.context, (1.0,), "t")
    exhausted = run_ga(tiny, lambda ks: [Measurement(k, (1.0,)) for k in ks], GAConfig(population=8, stagnation=0))
    assert exhausted.state.stop_reason == "space exhausted" and exhausted.evaluated == 2


def test_missing_measurements_are_archived_as_not_measured() -> None:
    prob = problem()
    population = propose(GAState(), prob, CONFIG)
    state = advance(GAState(), population, [], prob, CONFIG, 0.0)
    assert {item.status for item in state.archive.values()} == {"not measured"}
    assert result_of(state, prob).best is not None and state.best_cost == math.inf


@pytest.mark.parametrize(
    "changes", [{"population": 1}, {"generations": 0}, {"elite": 32}, {"tournament": 0}, {"mutation_rate": 2.0},
                {"time_budget_s": 0.0}],
)  # fmt: skip
def test_bad_configs_are_rejected(changes: dict[str, object]) -> None:
    with pytest.raises(SearchError):
        GAConfig(**changes)  # type: ignore[arg-type]


def test_one_weight_per_size() -> None:
    with pytest.raises(SearchError, match="one weight per size"):
        SearchProblem(gene_space(PROFILE, "B"), make_context(PROFILE, "B", [SQUARE]), (1.0, 2.0))

"""A seeded, resumable genetic algorithm over Tensile kernel parameters (pure; the fitness is injected).

Problem
-------
A :class:`SearchProblem` is one group of similar GEMM sizes of one type (one tuning config):
the gene space (:func:`~tensilekit.search.profiles.gene_space`), the pruning context
(architecture, type, the group's sizes) and a weight per size (its call count). Individuals are
:class:`~tensilekit.search.params.KernelParams` that pass every pruning rule. The evaluator --
injected, so this module never benchmarks anything itself -- returns a :class:`Measurement` per
kernel: its time on each size (from the benchmark driver's CSV) or why it has none (failed
validation, rejected by the driver, job failed). A kernel's **cost** is
``sum(weight_i * time_i)``, the group's GEMM time if that kernel ran every size; a kernel
without a time for every size costs ``inf`` and is kept in the archive with its status.

Algorithm
---------
1. **Initial population** (generation 0): the seeds -- the kernels the current library selects
   for these sizes -- that are valid, in the order given, then random valid kernels
   (:func:`random_kernel`, constructive sampling plus rejection) until ``population`` are
   distinct.
2. Evaluate the kernels not yet in the **archive** (every kernel ever measured, with its
   measurement); a kernel is never benchmarked twice.
3. **Next generation**: the ``elite`` best of the current population survive unchanged; each
   other child is bred by two **tournaments** (``tournament`` random contestants, the cheapest
   wins), **crossover** with probability ``crossover_rate`` (uniform over the gene blocks of
   :data:`~tensilekit.search.params.GENE_BLOCKS`, so tile and waves travel together) and
   **mutation** (each gene with probability ``mutation_rate`` moves to a neighbouring value or a
   random one). Crossover and mutation retry until the result passes every pruning rule and fall
   back to an unchanged parent, so offspring are always valid. A child already in the archive
   or the new population is bred again (up to ``attempts`` times), then replaced by a random
   valid kernel; when none can be found the space is exhausted.
4. **Stop** after ``generations`` evaluated populations, when the best cost has not improved
   by more than ``tolerance`` (relative) for ``stagnation`` generations, when the accumulated
   ``elapsed_s`` reaches ``time_budget_s``, or when the space is exhausted.

Per size, the winner is the archived kernel with the lowest time on that size.

State and determinism
---------------------
:class:`GAState` holds the generation counter, the current population, the archive (in
evaluation order), the best-cost history, the stagnation counter, the elapsed time and the
stop reason; :func:`state_to_json`/:func:`state_from_json` make it a checkpoint. Randomness
comes only from ``random.Random`` instances seeded from ``(seed, stream, generation)``
(:func:`generation_rng`), never from the global ``random`` module, so a generation can be
recomputed from a checkpoint alone: a run resumed from its last checkpoint makes the same
choices as an uninterrupted one. The time budget is the only input that is not reproducible.

Tie-breaking
------------
Every comparison is on ``(cost, kernel)``: equal costs fall back to the kernel's field order
(:class:`~tensilekit.search.params.KernelParams` is ordered), so elites, tournament winners and
per-size winners never depend on dictionary or set order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tensilekit._arguments import require, require_callable, require_items
from tensilekit.errors import SearchError
from tensilekit.search.params import GENE_BLOCKS, GENES, KernelParams
from tensilekit.search.profiles import GeneSpace
from tensilekit.search.pruning import PruneContext, is_valid, narrow_space

INF = math.inf


@dataclasses.dataclass(frozen=True)
class GAConfig:
    """The genetic algorithm's settings (see the module docstring)."""

    population: int = 32
    generations: int = 8
    elite: int = 2
    tournament: int = 3
    crossover_rate: float = 0.9
    mutation_rate: float = 0.2
    stagnation: int = 4
    """Stop after this many generations without improvement (0: never)."""
    tolerance: float = 1e-3
    """Relative improvement of the best cost that counts as progress."""
    time_budget_s: float | None = None
    seed: int = 0
    attempts: int = 40

    def __post_init__(self) -> None:
        if self.population < 2:
            raise SearchError("population must be at least 2")
        if self.generations < 1:
            raise SearchError("generations must be at least 1")
        if not 0 <= self.elite < self.population:
            raise SearchError("elite must be at least 0 and smaller than the population")
        if self.tournament < 1:
            raise SearchError("tournament size must be at least 1")
        if not (0.0 <= self.crossover_rate <= 1.0 and 0.0 <= self.mutation_rate <= 1.0):
            raise SearchError("crossover and mutation rates must lie in [0, 1]")
        if self.time_budget_s is not None and self.time_budget_s <= 0:
            raise SearchError("the time budget must be positive")


@dataclasses.dataclass(frozen=True)
class SearchProblem:
    """One group of sizes to search kernels for.

    Attributes:
        space: the values of each gene (narrowed on construction with
            :func:`~tensilekit.search.pruning.narrow_space`).
        context: the pruning context (its ``sizes`` are the group's sizes, in order).
        weights: one weight per size (call counts); the cost is the weighted time.
        stream: names the group's random stream, so groups of one run draw differently.
    """

    space: GeneSpace
    context: PruneContext
    weights: tuple[float, ...]
    stream: str = ""

    def __post_init__(self) -> None:
        if len(self.weights) != len(self.context.sizes):
            raise SearchError("one weight per size is needed")
        # Draw and mutate only among values single-gene limits allow (see narrow_space).
        object.__setattr__(self, "space", narrow_space(self.space, self.context))


@dataclasses.dataclass(frozen=True)
class Measurement:
    """What the benchmark driver reported for one kernel.

    Attributes:
        kernel: the kernel.
        times_us: its time per size of the group (None: not run, failed, or not reported).
        status: ``ok``, ``failed validation``, ``rejected by the driver``, ``job failed: …``.
        record: ``(file, position)`` of the kernel's full solution record in the driver's
            output, when it wrote one.
    """

    kernel: KernelParams
    times_us: tuple[float | None, ...]
    status: str = "ok"
    record: tuple[str, int] | None = None

    def cost(self, weights: Sequence[float]) -> float:
        """``sum(weight * time)``; ``inf`` unless every size has a time and the status is ok."""
        if self.status != "ok" or any(value is None for value in self.times_us):
            return INF
        return float(sum(weight * (value or 0.0) for weight, value in zip(weights, self.times_us, strict=True)))

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel.to_json(),
            "times_us": list(self.times_us),
            "status": self.status,
            "record": list(self.record) if self.record is not None else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Measurement:
        record = data.get("record")
        return cls(
            kernel=KernelParams.from_json(data["kernel"]),
            times_us=tuple(None if value is None else float(value) for value in data["times_us"]),
            status=str(data.get("status", "ok")),
            record=(str(record[0]), int(record[1])) if record else None,
        )


@dataclasses.dataclass(frozen=True)
class GAState:
    """Where a search stands after ``generation`` evaluated populations (a checkpoint)."""

    generation: int = 0
    population: tuple[KernelParams, ...] = ()
    archive: Mapping[KernelParams, Measurement] = dataclasses.field(default_factory=dict)
    best_history: tuple[float, ...] = ()
    stagnant: int = 0
    elapsed_s: float = 0.0
    stop_reason: str | None = None

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    @property
    def best_cost(self) -> float:
        return self.best_history[-1] if self.best_history else INF


Evaluator = Callable[[Sequence[KernelParams]], Sequence[Measurement]]


# --------------------------------------------------------------------------------------------
# Randomness and ranking


def generation_rng(seed: int, stream: str, generation: int) -> random.Random:
    """The random generator of one generation of one group: seeded from sha256 of its identity."""
    digest = hashlib.sha256(f"tensilekit-ga|{seed}|{stream}|{generation}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _rank(
    kernel: KernelParams, archive: Mapping[KernelParams, Measurement], weights: Sequence[float]
) -> tuple[float, KernelParams]:
    measurement = archive.get(kernel)
    return (measurement.cost(weights) if measurement is not None else INF, kernel)


def best_kernel(state: GAState, weights: Sequence[float]) -> tuple[KernelParams, float] | None:
    """The archive's cheapest kernel and its cost (ties: kernel order); None when empty."""
    if not state.archive:
        return None
    kernel, cost = min(((k, m.cost(weights)) for k, m in state.archive.items()), key=lambda item: (item[1], item[0]))
    return kernel, cost


def best_per_size(state: GAState, size_count: int) -> list[tuple[KernelParams, float] | None]:
    """For each size, the archived kernel with the lowest time there (ties: kernel order)."""
    winners: list[tuple[KernelParams, float] | None] = []
    for position in range(size_count):
        timed = [
            (measurement.times_us[position], kernel)
            for kernel, measurement in state.archive.items()
            if measurement.status == "ok" and measurement.times_us[position] is not None
        ]
        if not timed:
            winners.append(None)
            continue
        time_us, kernel = min(timed, key=lambda item: (item[0] or 0.0, item[1]))
        winners.append((kernel, float(time_us or 0.0)))
    return winners


# --------------------------------------------------------------------------------------------
# Operators


def random_kernel(problem: SearchProblem, rng: random.Random, attempts: int = 200) -> KernelParams | None:
    """A random valid kernel: the tile genes are drawn so they fit the drawn MFMA and waves
    (constructive), the others uniformly; rejected draws are redrawn. None if none is found."""
    require(problem, SearchProblem, "problem", "random_kernel")
    require(rng, random.Random, "rng", "random_kernel")
    space = problem.space
    if any(not values for values in space.values()):
        return None
    for _ in range(attempts):
        mi = rng.choice(space["mi"])
        wave_group = rng.choice(space["wave_group"])
        assert isinstance(mi, tuple) and isinstance(wave_group, tuple)
        tiles0 = [v for v in space["mt0"] if isinstance(v, int) and v % (mi[0] * wave_group[0]) == 0]
        tiles1 = [v for v in space["mt1"] if isinstance(v, int) and v % (mi[1] * wave_group[1]) == 0]
        depths = [v for v in space["depth_u"] if isinstance(v, int) and v % mi[2] == 0]
        if not (tiles0 and tiles1 and depths):
            continue
        genes: dict[str, Any] = {
            "mi": mi, "wave_group": wave_group, "mt0": rng.choice(tiles0), "mt1": rng.choice(tiles1),
            "depth_u": rng.choice(depths),
        }  # fmt: skip
        for name in GENES:
            if name not in genes:
                genes[name] = rng.choice(space[name])
        kernel = KernelParams(**genes)
        if is_valid(kernel, problem.context):
            return kernel
    return None


def crossover(
    first: KernelParams, second: KernelParams, problem: SearchProblem, rng: random.Random, attempts: int = 40
) -> KernelParams:
    """A child taking each gene block from one parent at random; always valid.

    Retries invalid combinations and falls back to ``first`` (the caller passes the better or
    the first-drawn parent), which is valid because population members are.
    """
    require(first, KernelParams, "first", "crossover")
    require(second, KernelParams, "second", "crossover")
    require(problem, SearchProblem, "problem", "crossover")
    require(rng, random.Random, "rng", "crossover")
    one, two = first.genes(), second.genes()
    for _ in range(attempts):
        genes = dict(one)
        for block in GENE_BLOCKS:
            if rng.random() < 0.5:
                for name in block:
                    genes[name] = two[name]
        child = KernelParams(**genes)
        if is_valid(child, problem.context):
            return child
    return first


def mutate(
    kernel: KernelParams, problem: SearchProblem, rng: random.Random, rate: float, attempts: int = 40
) -> KernelParams:
    """Each gene changes with probability ``rate``: half the time to a neighbouring value of its
    list, otherwise to a random one. Always valid: invalid results are redrawn, and after
    ``attempts`` the kernel is returned unchanged."""
    require(kernel, KernelParams, "kernel", "mutate")
    require(problem, SearchProblem, "problem", "mutate")
    require(rng, random.Random, "rng", "mutate")
    require(rate, (int, float), "rate", "mutate")
    base = kernel.genes()
    for _ in range(attempts):
        genes = dict(base)
        for name in GENES:
            if rng.random() >= rate:
                continue
            values = problem.space[name]
            if len(values) < 2:
                continue
            current = genes[name]
            position = values.index(current) if current in values else rng.randrange(len(values))
            if rng.random() < 0.5:
                step = rng.choice((-1, 1))
                genes[name] = values[min(len(values) - 1, max(0, position + step))]
            else:
                genes[name] = rng.choice(values)
        child = KernelParams(**genes)
        if is_valid(child, problem.context):
            return child
    return kernel


def tournament(
    population: Sequence[KernelParams],
    archive: Mapping[KernelParams, Measurement],
    weights: Sequence[float],
    rng: random.Random,
    size: int,
) -> KernelParams:
    """The cheapest of ``size`` members drawn at random (with replacement)."""
    contestants = [population[rng.randrange(len(population))] for _ in range(size)]
    return min(contestants, key=lambda kernel: _rank(kernel, archive, weights))


# --------------------------------------------------------------------------------------------
# Generations


def propose(
    state: GAState, problem: SearchProblem, config: GAConfig, seeds: Iterable[KernelParams] = ()
) -> list[KernelParams]:
    """The population of generation ``state.generation`` (see the module docstring)."""
    require(state, GAState, "state", "propose")
    require(problem, SearchProblem, "problem", "propose")
    require(config, GAConfig, "config", "propose")
    rng = generation_rng(config.seed, problem.stream, state.generation)
    if state.generation == 0:
        population: list[KernelParams] = []
        for seed in seeds:
            if len(population) < config.population and seed not in population and is_valid(seed, problem.context):
                population.append(seed)
        return _fill_random(population, set(population), problem, config, rng)
    weights = problem.weights
    ranked = sorted(state.population, key=lambda kernel: _rank(kernel, state.archive, weights))
    children = ranked[: config.elite]
    seen = set(state.archive) | set(children)
    while len(children) < config.population:
        made: KernelParams | None = None
        for _ in range(config.attempts):
            first = tournament(state.population, state.archive, weights, rng, config.tournament)
            second = tournament(state.population, state.archive, weights, rng, config.tournament)
            child = crossover(first, second, problem, rng) if rng.random() < config.crossover_rate else first
            child = mutate(child, problem, rng, config.mutation_rate)
            if child not in seen:
                made = child
                break
        if made is None:
            made = _random_unseen(seen, problem, config, rng)
        if made is None:
            break
        children.append(made)
        seen.add(made)
    return children


def _random_unseen(
    seen: set[KernelParams], problem: SearchProblem, config: GAConfig, rng: random.Random
) -> KernelParams | None:
    for _ in range(config.attempts):
        kernel = random_kernel(problem, rng)
        if kernel is None:
            return None
        if kernel not in seen:
            return kernel
    return None


def _fill_random(
    population: list[KernelParams],
    seen: set[KernelParams],
    problem: SearchProblem,
    config: GAConfig,
    rng: random.Random,
) -> list[KernelParams]:
    while len(population) < config.population:
        kernel = _random_unseen(seen, problem, config, rng)
        if kernel is None:
            break
        population.append(kernel)
        seen.add(kernel)
    return population


def unevaluated(population: Sequence[KernelParams], state: GAState) -> list[KernelParams]:
    """The kernels of ``population`` the archive does not hold yet (in population order)."""
    return [kernel for kernel in population if kernel not in state.archive]


def advance(
    state: GAState,
    population: Sequence[KernelParams],
    measurements: Sequence[Measurement],
    problem: SearchProblem,
    config: GAConfig,
    elapsed_s: float,
) -> GAState:
    """The state after ``population`` was evaluated (``measurements`` for its new kernels).

    A new kernel without a measurement is archived as ``not measured`` (infinite cost).
    """
    require(state, GAState, "state", "advance")
    require(problem, SearchProblem, "problem", "advance")
    require(config, GAConfig, "config", "advance")
    archive = dict(state.archive)
    for measurement in measurements:
        archive.setdefault(measurement.kernel, measurement)
    for kernel in population:
        if kernel not in archive:
            archive[kernel] = Measurement(kernel, (None,) * len(problem.weights), "not measured")
    weights = problem.weights
    best = min((measurement.cost(weights) for measurement in archive.values()), default=INF)
    previous = state.best_cost
    improved = best < previous and (not math.isfinite(previous) or best < previous * (1.0 - config.tolerance))
    stagnant = 0 if improved or state.generation == 0 else state.stagnant + 1
    generation = state.generation + 1
    new_kernels = sum(1 for kernel in population if kernel not in state.archive)
    stop: str | None = None
    if generation >= config.generations:
        stop = "generations"
    elif config.stagnation and stagnant >= config.stagnation:
        stop = "stagnation"
    elif config.time_budget_s is not None and elapsed_s >= config.time_budget_s:
        stop = "time budget"
    elif new_kernels == 0:
        stop = "space exhausted"
    return GAState(
        generation=generation, population=tuple(population), archive=archive,
        best_history=(*state.best_history, best), stagnant=stagnant, elapsed_s=elapsed_s, stop_reason=stop,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class GAResult:
    """A finished search: the final state and what it found."""

    state: GAState
    best: tuple[KernelParams, float] | None
    per_size: tuple[tuple[KernelParams, float] | None, ...]

    @property
    def evaluated(self) -> int:
        return len(self.state.archive)

    @property
    def failures(self) -> list[Measurement]:
        """Archived kernels without a full set of times (failed validation, rejected …)."""
        return [measurement for measurement in self.state.archive.values() if measurement.status != "ok"]


def result_of(state: GAState, problem: SearchProblem) -> GAResult:
    """The :class:`GAResult` of a state."""
    require(state, GAState, "state", "result_of")
    require(problem, SearchProblem, "problem", "result_of")
    return GAResult(
        state=state,
        best=best_kernel(state, problem.weights),
        per_size=tuple(best_per_size(state, len(problem.weights))),
    )


def run_ga(
    problem: SearchProblem,
    evaluate: Evaluator,
    config: GAConfig,
    *,
    seeds: Sequence[KernelParams] = (),
    state: GAState | None = None,
    checkpoint: Callable[[GAState], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> GAResult:
    """Run (or resume from ``state``) the search to a stop condition.

    ``checkpoint`` is called with the state after every generation (write it atomically to
    resume after a crash); ``clock`` measures the time budget (the elapsed time in ``state``
    counts). Raises TypeError for arguments of the wrong type.
    """
    require(problem, SearchProblem, "problem", "run_ga")
    require_callable(evaluate, "evaluate", "run_ga")
    require(config, GAConfig, "config", "run_ga")
    seeds = require_items(seeds, KernelParams, "seeds", "run_ga")
    require(state, GAState, "state", "run_ga", optional=True)
    require_callable(checkpoint, "checkpoint", "run_ga", optional=True)
    require_callable(clock, "clock", "run_ga")
    current = state or GAState()
    started = clock() - current.elapsed_s
    while not current.finished:
        population = propose(current, problem, config, seeds)
        fresh = unevaluated(population, current)
        measurements = list(evaluate(fresh)) if fresh else []
        current = advance(current, population, measurements, problem, config, clock() - started)
        if checkpoint is not None:
            checkpoint(current)
    return result_of(current, problem)


# --------------------------------------------------------------------------------------------
# Checkpoints


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def state_to_json(state: GAState) -> dict[str, Any]:
    """A JSON-able checkpoint of ``state`` (infinite costs as null)."""
    require(state, GAState, "state", "state_to_json")
    return {
        "generation": state.generation,
        "population": [kernel.to_json() for kernel in state.population],
        "archive": [measurement.to_json() for measurement in state.archive.values()],
        "best_history": [_number(value) for value in state.best_history],
        "stagnant": state.stagnant,
        "elapsed_s": state.elapsed_s,
        "stop_reason": state.stop_reason,
    }


def state_from_json(data: Mapping[str, Any]) -> GAState:
    """The state a checkpoint holds (inverse of :func:`state_to_json`)."""
    require(data, Mapping, "data", "state_from_json")
    archive: dict[KernelParams, Measurement] = {}
    for item in data.get("archive", []):
        measurement = Measurement.from_json(item)
        archive[measurement.kernel] = measurement
    return GAState(
        generation=int(data.get("generation", 0)),
        population=tuple(KernelParams.from_json(item) for item in data.get("population", [])),
        archive=archive,
        best_history=tuple(INF if value is None else float(value) for value in data.get("best_history", [])),
        stagnant=int(data.get("stagnant", 0)),
        elapsed_s=float(data.get("elapsed_s", 0.0)),
        stop_reason=data.get("stop_reason"),
    )


__all__ = [
    "Evaluator",
    "GAConfig",
    "GAResult",
    "GAState",
    "Measurement",
    "SearchProblem",
    "advance",
    "best_kernel",
    "best_per_size",
    "crossover",
    "generation_rng",
    "mutate",
    "propose",
    "random_kernel",
    "result_of",
    "run_ga",
    "state_from_json",
    "state_to_json",
    "tournament",
    "unevaluated",
]

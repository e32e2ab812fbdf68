"""Stage ``search`` with ``--mode ga`` or ``--mode grid``: search new kernels with the Tensile benchmark driver.

Steps:

1. **Groups.** The GEMMs the baseline kept are grouped per GEMM type, similar sizes together
   (:func:`~tensilekit.search.clusters.cluster_sizes`); each group is one search with one
   config per benchmark run (``BBS_TN_0`` …), its sizes weighted by their call counts.
2. **Seeds.** Each group starts from the kernels the library selects for its sizes today: the
   solution hipblaslt-bench reported in the baseline stage (with ``--simulate``: the simulated
   library's heuristic choice), read from the library's logic files and repaired to the nearest
   kernel the pruning rules accept.
3. **Search.** All groups advance in lockstep, one generation at a time: the GA proposes each
   group's population (:func:`~tensilekit.search.ga.propose`; ``--mode grid``: every valid
   kernel, once), one job per group benchmarks the kernels not measured yet (writes
   ``runs/<group>_gNNN.yaml``, runs the driver, reads its CSV), and every group's state is
   checkpointed atomically to ``ga_state.json``. Killed and restarted, the stage resumes from
   the last completed generation; jobs of the interrupted one that had finished come from the
   job cache, so the result is the one an uninterrupted run produces.
4. **Existing solutions.** The solutions the library already has are screened
   and the fastest re-timed and verified, as the dense search does
   (:func:`~tensilekit.pipeline.stages.search.search_existing`; ``screen.csv``, ``accurate.csv``).
5. **Winners.** Per GEMM, the fastest kernel measured on its size -- if it is faster than the best
   verified existing solution; otherwise that existing solution is the answer
   (:func:`generated_or_existing`), placed by location in its library file. The generated winners' solution records
   (from the driver's ``2_BenchmarkData``) go into one logic file per GEMM type, named like the
   library file of that type, indexed by ``catalog.json`` -- the form the ``build`` stage reads
   for the dense search, so build, benchmark, postprocess, final and merge run unchanged.

Outputs: ``search.json`` (the dense search's schema plus ``mode``, ``groups`` and ``catalog``),
``catalog.json``, ``logic/``, ``configs/<group>.yaml`` + ``.sh`` (the first benchmark of each
group, runnable by hand), ``winners.csv`` and ``generations.csv``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import SearchError, SearchSpaceTooLarge, StageFailed, TensilekitError
from tensilekit.io.atomic import write_text_atomic
from tensilekit.io.logic_io import dump_logic, load_logic, logic_from_data
from tensilekit.model.logic import LogicFile, LogicSolution
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.jobs import JobKind, make_job
from tensilekit.pipeline.stage import StageContext, StageResult, canonical_json, relative_to_root
from tensilekit.pipeline.stages.baseline import BASELINE_FILE
from tensilekit.pipeline.stages.build import equality_logic, size_key
from tensilekit.pipeline.stages.common import (
    BASELINE,
    INGEST,
    LIBRARY,
    PROBLEM_HEADER,
    SEARCH,
    GemmEntry,
    TuneStage,
    load_gemms,
    problem_columns,
    read_json,
)
from tensilekit.pipeline.stages.kernel_groups import (
    DriverJobSpec,
    SearchGroup,
    build_groups,
    config_header,
    driver_job,
    kernel_search_issue,
    shape_problem,
)
from tensilekit.pipeline.stages.library import CATALOG_FILE, catalog_source, lookup
from tensilekit.pipeline.stages.search import SEARCH_FILE, existing_search_slice, search_existing
from tensilekit.search.configs import (
    enqueues_per_sync,
    library_epilogue,
    tuning_config,
    write_config,
)
from tensilekit.search.driver import load_solution_records
from tensilekit.search.ga import (
    GAConfig,
    GAState,
    Measurement,
    SearchProblem,
    advance,
    best_per_size,
    propose,
    state_from_json,
    state_to_json,
    unevaluated,
)
from tensilekit.search.grid import enumerate_kernels
from tensilekit.search.params import Dialect, KernelParams
from tensilekit.search.profiles import ArchProfile, gene_space, profile_for
from tensilekit.search.pruning import make_context
from tensilekit.search.seeds import seed_from_record, unique
from tensilekit.tools.costs import estimate_time_us
from tensilekit.tools.problem_types import problem_type_dict, problem_type_key, problem_type_name, type_key_text

STATE_FILE = "ga_state.json"
SEARCH_CATALOG = "catalog.json"
CONFIGS_DIR = "configs"
RUNS_DIR = "runs"
LOGIC_DIR = "logic"
GENERATIONS_FILE = "generations.csv"
WINNERS_FILE = "winners.csv"


GENERATED = "generated"
EXISTING = "existing"
"""Where a GEMM's answer comes from: a kernel the search generated, or a solution the library has."""


def generated_or_existing(generated_us: float | None, existing: Mapping[str, Any] | None) -> str | None:
    """Whose kernel answers a GEMM (pure): the generated one only if it is faster than the best
    existing solution the screen found and the accurate runs verified; else that existing
    solution; None when there is neither."""
    if existing is not None and (generated_us is None or existing["us"] <= generated_us):
        return EXISTING
    return None if generated_us is None else GENERATED


def existing_answer_text(
    existing: Mapping[str, Any], generated_us: float | None, not_searched: str | None = None
) -> str:
    """Why an existing solution answers a GEMM in a kernel search (winners.csv, search.json)."""
    solution = f"existing solution {existing['solution_index']} ({existing['us']:.4g} us)"
    if not_searched is not None:
        return f"{solution}: {not_searched}"
    if generated_us is None:
        return f"{solution}: no generated kernel was timed"
    return f"{solution} is at least as fast as the best generated kernel ({generated_us:.4g} us)"


class KernelSearchStage(TuneStage):
    """GA or grid search over new kernels; see the module docstring."""

    name = SEARCH
    version = "2"  # 2: the existing solutions are screened too; a generated kernel must beat the best of them
    inputs = (INGEST, LIBRARY, BASELINE)
    outputs = (SEARCH_FILE, SEARCH_CATALOG, LOGIC_DIR, CONFIGS_DIR, WINNERS_FILE, GENERATIONS_FILE)

    def __init__(self, mode: str = "ga") -> None:
        self.mode = mode

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {**existing_search_slice(config), **config.kernel_search_slice()}

    def tools(self, config: TuneConfig) -> list[str]:
        return config.toolset().versioned_tools([config.tensile_executable, config.bench_executable])

    # ------------------------------------------------------------------------------ run

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        if not config.simulate and shutil.which(config.tensile_executable) is None:
            raise StageFailed(
                f"the Tensile benchmark driver {config.tensile_executable!r} was not found; put hipBLASLt's "
                "tensilelite/Tensile/bin (or ROCm/Tensile's Tensile/bin) on PATH or pass --tensile-executable"
            )
        profile = profile_for(config.arch)
        baseline = read_json(context.upstream_path(BASELINE, BASELINE_FILE))
        catalog = read_json(context.upstream_path(LIBRARY, CATALOG_FILE))
        kept = set(baseline["kept"])
        gemms = [gemm for gemm in load_gemms(context) if gemm.id in kept]
        if config.search_dialect not in profile.dialects:
            raise SearchError(
                f"{config.search_dialect} configs cannot target {config.arch} "
                f"(use --config-dialect {' or '.join(profile.dialects)})"
            )
        groups: list[SearchGroup] = []
        problems: dict[str, SearchProblem] = {}
        skipped: dict[str, str] = {}
        # Why each GEMM that is in no searched group was left out (its report status).
        reasons = {
            gemm.id: f"cannot be tuned as logged: {issue}"
            for gemm in gemms
            if (issue := kernel_search_issue(gemm.problem)) is not None
        }
        for gemm_id, reason in reasons.items():
            context.log(f"{gemm_id} not searched: {reason}")
        tool = config.driver_profile()
        context.log(f"kernel search configs for {tool.description} (tool profile {tool.name})")
        built = build_groups([gemm for gemm in gemms if gemm.id not in reasons], config, tool)
        for group in built:
            issue = tool.config_type_issue(group.type_letters, config.arch, group.input_letters)
            if issue is not None:  # reported, never tuned as another problem
                skipped[group.name] = f"cannot be expressed: {issue}"
                continue
            group = self._with_library_epilogue(context, group, gemms, baseline, catalog, config.search_dialect)
            try:
                problems[group.name] = self._problem(group, profile, config.search_dialect)
            except SearchError as error:  # e.g. a data type the architecture has no MFMA for
                skipped[group.name] = str(error)
                continue
            groups.append(group)
        seeds = {group.name: self._seeds(context, group, gemms, baseline, catalog, problems[group.name], profile)
                 for group in groups}  # fmt: skip
        ga_config = GAConfig(
            population=config.population, generations=config.generations if self.mode == "ga" else 1,
            elite=config.elite, tournament=config.tournament, crossover_rate=config.crossover_rate,
            mutation_rate=config.mutation_rate, stagnation=config.stagnation if self.mode == "ga" else 0,
            time_budget_s=config.time_budget, seed=config.seed,
        )  # fmt: skip
        grid: dict[str, list[KernelParams]] = {}
        if self.mode == "grid":
            for group in list(groups):
                problem = problems[group.name]
                try:
                    kernels = enumerate_kernels(
                        problem.space, problem.context, profile.default_genes(group.letters), profile.grid_genes,
                        limit=config.grid_limit,
                    )  # fmt: skip
                except SearchSpaceTooLarge as error:  # this group's GEMMs are skipped; the others run
                    skipped[group.name] = f"--grid-limit: {error}"
                    groups.remove(group)
                    continue
                grid[group.name] = unique([*seeds[group.name], *kernels])
        for name, reason in skipped.items():
            context.log(f"group {name} not searched: {reason}")
        for group in built:
            for gemm_id, _ in group.gemms if group.name in skipped else ():
                reasons.setdefault(gemm_id, skipped[group.name])
        key = hashlib.sha256(
            canonical_json(
                {"slice": self.config_slice(config), "groups": [group.model_dump(mode="json") for group in groups],
                 "seeds": {name: [kernel.to_json() for kernel in kernels] for name, kernels in seeds.items()}}
            ).encode()
        ).hexdigest()  # fmt: skip
        states = self._load_states(context, key, groups)
        history = self._search(context, config, groups, problems, seeds, grid, ga_config, states, key)
        # The solutions the library already has, screened and re-timed as the dense search does: a
        # generated kernel is the answer only where it beats the best of them. (After the search: its
        # checkpoint counts the search's jobs alone.)
        existing = search_existing(context, config, gemms, baseline, catalog, require_screen=False)
        return self._finish(
            context, config, profile, groups, problems, seeds, states, history, gemms, baseline, catalog, skipped,
            reasons, existing.results,
        )  # fmt: skip

    @staticmethod
    def _with_library_epilogue(
        context: StageContext,
        group: SearchGroup,
        gemms: Sequence[GemmEntry],
        baseline: Mapping[str, Any],
        catalog: Mapping[str, Any],
        dialect: Dialect,
    ) -> SearchGroup:
        """The group with the epilogue keys of the library row that serves its GEMMs today
        (the logic file holding the baseline's solution), so the tuned kernel lands there."""
        by_id = {gemm.id: gemm for gemm in gemms}
        for gemm_id, _ in group.gemms:
            measured = baseline["gemms"][gemm_id]["measured"] or {}
            found = lookup(
                catalog, by_id[gemm_id].problem, measured.get("solution_name"), measured.get("solution_index")
            )
            if found is None:
                continue
            try:
                logic = load_logic(catalog_source(context.run_root, dict(catalog), found[0]))
            except TensilekitError:
                continue
            raw = logic.problem_type.model_dump(by_alias=True)
            epilogue = library_epilogue(raw, dialect)
            if not epilogue:
                return group
            return group.model_copy(update={"problem_type": {**group.problem_type, **epilogue}})
        return group

    @staticmethod
    def _problem(group: SearchGroup, profile: ArchProfile, dialect: Dialect) -> SearchProblem:
        shapes = group.problem_shapes()
        return SearchProblem(
            space=gene_space(profile, group.letters, dialect),
            context=make_context(profile, group.letters, shapes, group.compute_bytes, dialect),
            weights=group.weights, stream=group.name,
        )  # fmt: skip

    @staticmethod
    def _seeds(
        context: StageContext,
        group: SearchGroup,
        gemms: Sequence[GemmEntry],
        baseline: Mapping[str, Any],
        catalog: Mapping[str, Any],
        problem: SearchProblem,
        profile: ArchProfile,
    ) -> list[KernelParams]:
        by_id = {gemm.id: gemm for gemm in gemms}
        loaded: dict[Path, LogicFile] = {}
        seeds: list[KernelParams | None] = []
        for gemm_id, _ in group.gemms:
            measured = baseline["gemms"][gemm_id]["measured"] or {}
            found = lookup(
                catalog, by_id[gemm_id].problem, measured.get("solution_name"), measured.get("solution_index")
            )
            if found is None:
                continue
            source = catalog_source(context.run_root, dict(catalog), found[0])
            if source not in loaded:
                loaded[source] = load_logic(source)
            record = loaded[source].solutions[found[1]].raw()
            seeds.append(seed_from_record(record, profile.default_genes(group.letters), problem.context, problem.space))
        return unique(seeds)

    @staticmethod
    def _load_states(context: StageContext, key: str, groups: Sequence[SearchGroup]) -> dict[str, GAState]:
        """The checkpointed states when the checkpoint belongs to this search, else fresh ones.

        The jobs of the checkpointed generations count as cached jobs of this run, so the
        stage's job counts do not depend on whether it was interrupted.
        """
        fresh = {group.name: GAState() for group in groups}
        path = context.path(STATE_FILE)
        if context.fresh or not path.is_file():
            return fresh
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return fresh
        if data.get("key") != key:
            return fresh
        states = dict(fresh)
        for name, item in data.get("groups", {}).items():
            if name in states:
                states[name] = state_from_json(item)
        done = int(data.get("jobs", 0))
        context.jobs_total += done
        context.jobs_cached += done
        return states

    def _search(
        self,
        context: StageContext,
        config: TuneConfig,
        groups: Sequence[SearchGroup],
        problems: Mapping[str, SearchProblem],
        seeds: Mapping[str, Sequence[KernelParams]],
        grid: Mapping[str, Sequence[KernelParams]],
        ga_config: GAConfig,
        states: dict[str, GAState],
        key: str,
    ) -> list[list[Any]]:
        """Advance every group to a stop condition, a generation at a time; checkpoint each."""
        runs = context.own_dir(context.path(RUNS_DIR))
        started = time.monotonic()
        resumed_elapsed = max((state.elapsed_s for state in states.values()), default=0.0)
        self._write_first_configs(context, config, groups, problems, seeds, grid, ga_config, states)
        while True:
            active = [group for group in groups if not states[group.name].finished]
            if not active:
                break
            generation = min(states[group.name].generation for group in active)
            proposals: dict[str, list[KernelParams]] = {}
            jobs = []
            subjects: dict[str, str] = {}
            for group in active:
                state = states[group.name]
                if state.generation != generation:
                    continue
                population = (
                    list(grid[group.name]) if self.mode == "grid"
                    else propose(state, problems[group.name], ga_config, seeds[group.name])
                )  # fmt: skip
                proposals[group.name] = population
                fresh = unevaluated(population, state)
                if not fresh:
                    continue
                name = f"{group.name}_g{generation:03d}"
                spec = DriverJobSpec(
                    name=name, workdir=str(runs), group=group, kernels=tuple(kernel.to_json() for kernel in fresh),
                    arch=config.arch, dialect=config.search_dialect, executable=config.tensile_executable,
                    simulator=config.simulator(), tool_profile=config.driver_profile().name,
                )  # fmt: skip
                cost = sum(estimate_time_us(shape_problem(shape, group), config.arch) for shape in group.shapes)
                cost *= len(fresh) * 2 * enqueues_per_sync(group.problem_shapes()) * 1e-6
                jobs.append(make_job(f"ga-{name}", driver_job, spec, kind=JobKind.GPU, cost=cost))
                subjects[f"ga-{name}"] = f"{group.name} generation {generation} ({len(fresh)} kernel(s))"
            outcomes = {
                job.id: outcome
                for job, outcome in zip(jobs, context.run_jobs(jobs, phase=self.mode, subjects=subjects), strict=True)
            }
            if generation == 0 and jobs and not any(outcome.ok for outcome in outcomes.values()):
                raise StageFailed("every kernel-search benchmark of the first generation failed; see failures.json")
            elapsed = resumed_elapsed + time.monotonic() - started
            for group_name, population in proposals.items():
                group = next(item for item in groups if item.name == group_name)
                state = states[group_name]
                outcome = outcomes.get(f"ga-{group_name}_g{generation:03d}")
                measurements = self._measurements(context, outcome, unevaluated(population, state), len(group.shapes))
                states[group_name] = advance(state, population, measurements, problems[group_name], ga_config, elapsed)
            self._checkpoint(context, key, states)
            context.log(self._progress(generation, proposals, states, problems))
        return self._history(groups, states, problems)

    def _write_first_configs(
        self,
        context: StageContext,
        config: TuneConfig,
        groups: Sequence[SearchGroup],
        problems: Mapping[str, SearchProblem],
        seeds: Mapping[str, Sequence[KernelParams]],
        grid: Mapping[str, Sequence[KernelParams]],
        ga_config: GAConfig,
        states: Mapping[str, GAState],
    ) -> None:
        """``configs/<group>.yaml`` + ``.sh``: each group's first benchmark, runnable by hand."""
        profile = profile_for(config.arch)
        folder = context.path(CONFIGS_DIR)
        folder.mkdir(parents=True, exist_ok=True)  # empty when every group was skipped (--grid-limit)
        for group in groups:
            kernels = (
                list(grid[group.name]) if self.mode == "grid"
                else propose(GAState(), problems[group.name], ga_config, seeds[group.name])
            )  # fmt: skip
            tuned = tuning_config(
                group.problem_type,
                group.problem_shapes(),
                kernels,
                profile,
                config.search_dialect,
                beta=group.beta,
                minimum_required_version=config.driver_profile().minimum_required_version,
                bias_type=group.bias_type,
                activation=group.activation,
            )
            write_config(
                folder,
                group.name,
                tuned,
                config_header(group, config.arch, config.search_dialect, config.toolset().note),
            )
        context.record(folder)

    @staticmethod
    def _measurements(
        context: StageContext, outcome: Any, kernels: Sequence[KernelParams], size_count: int
    ) -> list[Measurement]:
        if outcome is None:
            return []
        if not outcome.ok:
            status = f"job failed: {outcome.error_type}"
            return [Measurement(kernel, (None,) * size_count, status) for kernel in kernels]
        measurements = []
        for item in outcome.value["measurements"]:
            measurement = Measurement.from_json(item)
            if measurement.record is not None:
                path = Path(measurement.record[0])
                if path.is_absolute() and path.is_relative_to(context.run_root):
                    measurement = Measurement(
                        measurement.kernel, measurement.times_us, measurement.status,
                        (relative_to_root(path, context.run_root), measurement.record[1]),
                    )  # fmt: skip
            measurements.append(measurement)
        return measurements

    @staticmethod
    def _checkpoint(context: StageContext, key: str, states: Mapping[str, GAState]) -> None:
        payload = {
            "key": key, "jobs": context.jobs_total, "data": context.config.data_label,
            "groups": {name: state_to_json(state) for name, state in states.items()},
        }  # fmt: skip
        write_text_atomic(context.path(STATE_FILE), json.dumps(payload, sort_keys=True) + "\n")

    @staticmethod
    def _progress(
        generation: int,
        proposals: Mapping[str, Sequence[KernelParams]],
        states: Mapping[str, GAState],
        problems: Mapping[str, SearchProblem],
    ) -> str:
        parts = []
        for name in proposals:
            state = states[name]
            best = state.best_cost
            first = next((value for value in state.best_history if value != float("inf")), best)
            gain = f"{first / best - 1.0:+.1%}" if best not in (0.0, float("inf")) else "-"
            parts.append(f"{name} {len(state.archive)} kernels, best {gain} vs generation 0"
                         + (f" [{state.stop_reason}]" if state.stop_reason else ""))  # fmt: skip
        return f"generation {generation}: " + "; ".join(parts)

    @staticmethod
    def _history(
        groups: Sequence[SearchGroup], states: Mapping[str, GAState], problems: Mapping[str, SearchProblem]
    ) -> list[list[Any]]:
        rows: list[list[Any]] = []
        for group in groups:
            state = states[group.name]
            for generation, best in enumerate(state.best_history):
                rows.append([group.name, group.gemm_type, len(group.shapes), generation,
                             None if best == float("inf") else best,
                             state.stop_reason if generation == len(state.best_history) - 1 else ""])  # fmt: skip
        return rows

    # ------------------------------------------------------------------------------ results

    def _finish(
        self,
        context: StageContext,
        config: TuneConfig,
        profile: ArchProfile,
        groups: Sequence[SearchGroup],
        problems: Mapping[str, SearchProblem],
        seeds: Mapping[str, Sequence[KernelParams]],
        states: Mapping[str, GAState],
        history: list[list[Any]],
        gemms: Sequence[GemmEntry],
        baseline: Mapping[str, Any],
        catalog: Mapping[str, Any],
        skipped: Mapping[str, str],
        reasons: Mapping[str, str],
        existing: Mapping[str, Mapping[str, Any]],
    ) -> StageResult:
        by_id = {gemm.id: gemm for gemm in gemms}
        records: dict[str, list[dict[str, Any]]] = {}
        winners: dict[str, tuple[KernelParams, float, dict[str, Any], SearchGroup]] = {}
        for group in groups:
            state = states[group.name]
            per_size = best_per_size(state, len(group.shapes))
            for gemm_id, position in group.gemms:
                found = per_size[position]
                if found is None:
                    continue
                kernel, time_us = found
                record = self._record(context, state.archive[kernel], records)
                if record is None:
                    continue
                winners[gemm_id] = (kernel, time_us, record, group)
        best_existing = {gemm_id: result["winner"] for gemm_id, result in existing.items() if result["winner"]}
        generated_times = {gemm_id: winner[1] for gemm_id, winner in winners.items()}
        answers = {
            gemm.id: answer
            for gemm in gemms
            if (answer := generated_or_existing(generated_times.get(gemm.id), best_existing.get(gemm.id))) is not None
        }
        lost = {
            gemm_id: winners.pop(gemm_id)
            for gemm_id, answer in answers.items()
            if answer == EXISTING and gemm_id in winners
        }

        # One logic file per GEMM type, named like the library's file for the type.
        logic_dir = context.own_dir(context.path(LOGIC_DIR))
        sources: list[str] = []
        solutions_index: dict[str, dict[str, list[int]]] = {}
        originals: dict[str, str] = {}
        positions: dict[str, tuple[str, int]] = {}
        by_type: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for gemm in gemms:
            if gemm.id in winners:
                by_type[problem_type_key(gemm.problem)].append(gemm.id)
        written: set[str] = set()
        for type_key, ids in by_type.items():
            problem = by_id[ids[0]].problem
            base, original = self._base_logic(
                context, catalog, type_key, problem, profile, config.driver_profile().minimum_required_version
            )
            file_name = (
                original.name if original is not None else f"{profile.schedule}_{problem_type_name(problem)}.yaml"
            )
            chosen: list[dict[str, Any]] = []
            names: list[str] = []
            rows: list[tuple[list[int], int, float]] = []
            seen_keys: set[tuple[int, ...]] = set()
            for gemm_id in ids:
                kernel, time_us, record, group = winners[gemm_id]
                name = str(record.get("SolutionNameMin") or kernel.name(group.type_name))
                if name not in names:
                    names.append(name)
                    chosen.append(dict(record, SolutionNameMin=name))
                positions[gemm_id] = (name, names.index(name))
                key = tuple(size_key(by_id[gemm_id]))
                if key not in seen_keys:
                    seen_keys.add(key)
                    gflops = by_id[gemm_id].problem.flops / (time_us * 1e3)
                    rows.append((list(key), names.index(name), round(gflops, 3)))
            solutions = [LogicSolution.model_validate(record) for record in chosen]
            dump_logic(equality_logic(base, solutions, rows), logic_dir / file_name)
            written.add(file_name)
            source_index = len(sources)
            sources.append(relative_to_root(logic_dir / file_name, context.run_root))
            solutions_index[type_key_text(type_key)] = {
                name: [source_index, position] for position, name in enumerate(names)
            }
            if original is not None:
                originals[file_name] = (
                    relative_to_root(original, context.run_root) if original.is_relative_to(context.run_root)
                    else str(original)
                )  # fmt: skip
        for stale in logic_dir.glob("*.yaml"):
            if stale.name not in written:
                stale.unlink()
        context.record(logic_dir)
        # An existing solution that is the answer is placed by location in its library file, which
        # the catalog lists after the generated files (build reads winners by location first).
        library_sources: dict[int, int] = {}
        for gemm_id in sorted(answers):
            if answers[gemm_id] == EXISTING:
                source = best_existing[gemm_id]["location"][0]
                if source not in library_sources:
                    library_sources[source] = len(sources)
                    sources.append(catalog["sources"][source])
        context.write_json(
            context.path(SEARCH_CATALOG),
            {"origin": f"kernel search ({self.mode})", "data": config.data_label, "sources": sources,
             "solutions": solutions_index, "originals": originals, "skipped": []},
        )  # fmt: skip

        results: dict[str, dict[str, Any]] = {}
        for gemm in gemms:
            reference = (baseline["gemms"][gemm.id]["measured"] or {}).get("us")
            group_name = next((group.name for group in groups if any(g == gemm.id for g, _ in group.gemms)), None)
            best = best_existing.get(gemm.id)
            compared = {
                "best_existing": None if best is None else
                {key: best[key] for key in ("solution_index", "solution_name", "us")},
                "candidates": list((existing.get(gemm.id) or {}).get("candidates", [])),
            }  # fmt: skip
            not_searched = None
            if group_name is None:
                reason = reasons.get(gemm.id) or "; ".join(sorted(set(skipped.values()))) or "no search group"
                not_searched = f"not searched: {reason}"
            if answers.get(gemm.id) == EXISTING and best is not None:
                source, position = best["location"]
                generated = lost.get(gemm.id)
                results[gemm.id] = {
                    "winner": {**best, "location": [library_sources[source], position], "origin": EXISTING},
                    "status": "winner", "baseline_us": reference, "group": group_name, **compared,
                    "generated": None if generated is None else {"solution_name": str(generated[2].get(
                        "SolutionNameMin") or generated[0].name(generated[3].type_name)), "us": generated[1]},
                    "answer": existing_answer_text(best, None if generated is None else generated[1], not_searched),
                }  # fmt: skip
                continue
            if not_searched is not None:
                results[gemm.id] = {"winner": None, "status": not_searched, "group": None, **compared}
                continue
            if gemm.id not in winners:
                results[gemm.id] = {"winner": None, "status": "no valid kernel", "group": group_name, **compared}
                continue
            kernel, time_us, _, group = winners[gemm.id]
            name, position = positions[gemm.id]
            results[gemm.id] = {
                "winner": {"solution_index": position, "solution_name": name, "us": time_us,
                           "gflops": gemm.problem.flops / (time_us * 1e3), "kernel": kernel.to_json(),
                           "origin": GENERATED},
                "status": "winner", "baseline_us": reference, "group": group.name, **compared,
            }  # fmt: skip
        summaries = {group.name: self._group_summary(group, states[group.name], seeds[group.name], problems[group.name])
                     for group in groups}  # fmt: skip
        evaluated = sum(len(states[group.name].archive) for group in groups)
        failed = sum(summary["failed"] for summary in summaries.values())
        kept_existing = sum(1 for answer in answers.values() if answer == EXISTING)
        summary = (
            f"{self.mode}: {evaluated} kernel(s) benchmarked in {len(groups)} group(s), {failed} failed; "
            f"generated winners for {len(winners)}/{len(gemms)} GEMM(s), an existing solution at least as fast "
            f"for {kept_existing} ({len(lost)} generated winner(s) lost to one)"
        )
        context.write_json(
            context.path(SEARCH_FILE),
            {"gemms": results, "data": config.data_label, "mode": self.mode, "catalog": SEARCH_CATALOG,
             "groups": summaries, "skipped_groups": dict(skipped), "summary": summary},
        )  # fmt: skip
        label = config.data_label
        context.write_csv(
            context.path(GENERATIONS_FILE),
            ["data", "group", "gemm_type", "sizes", "generation", "best_weighted_us", "stop_reason"],
            ([label, *row] for row in history),
        )
        context.write_csv(
            context.path(WINNERS_FILE),
            ["data", "id", *PROBLEM_HEADER, "call_count", "group", "solution_name", "origin", "us", "gflops",
             "best_existing_us", "baseline_us", "expected_uplift", "status"],
            (self._winner_row(label, gemm, results[gemm.id]) for gemm in gemms),
        )  # fmt: skip
        return StageResult(summary=summary)

    @staticmethod
    def _winner_row(label: str, gemm: GemmEntry, result: Mapping[str, Any]) -> list[Any]:
        winner = result["winner"] or {}
        reference = result.get("baseline_us")
        uplift = reference / winner["us"] - 1.0 if winner and reference else None
        best = result.get("best_existing") or {}
        return [label, gemm.id, *problem_columns(gemm.problem), gemm.problem.call_count, result.get("group"),
                winner.get("solution_name"), winner.get("origin"), winner.get("us"), winner.get("gflops"),
                best.get("us"), reference, uplift, result.get("answer") or result["status"]]  # fmt: skip

    @staticmethod
    def _group_summary(
        group: SearchGroup, state: GAState, seeds: Sequence[KernelParams], problem: SearchProblem
    ) -> dict[str, Any]:
        seed_costs = [state.archive[seed].cost(problem.weights) for seed in seeds if seed in state.archive]
        best = state.best_cost
        return {
            "gemm_type": group.gemm_type,
            "sizes": [list(shape[:4]) for shape in group.shapes],
            "generations": state.generation,
            "evaluated": len(state.archive),
            "failed": sum(1 for measurement in state.archive.values() if measurement.status != "ok"),
            "seeds": len(seeds),
            "seed_weighted_us": min(seed_costs) if seed_costs and min(seed_costs) != float("inf") else None,
            "best_weighted_us": None if best == float("inf") else best,
            "stop_reason": state.stop_reason,
        }

    @staticmethod
    def _record(
        context: StageContext, measurement: Measurement, cache: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any] | None:
        if measurement.record is None:
            return None
        file, position = measurement.record
        path = Path(file) if Path(file).is_absolute() else context.run_root / file
        key = str(path)
        if key not in cache:
            try:
                cache[key] = load_solution_records(path)
            except (OSError, TensilekitError):
                cache[key] = []
        records = cache[key]
        return dict(records[position]) if position < len(records) else None

    @staticmethod
    def _base_logic(
        context: StageContext,
        catalog: Mapping[str, Any],
        type_key: tuple[str, ...],
        problem: Any,
        profile: ArchProfile,
        minimum_required_version: str,
    ) -> tuple[LogicFile, Path | None]:
        """The library's logic file for a GEMM type (the header the tuned file keeps), if any;
        else a new one headed with the driver release's ``MinimumRequiredVersion`` (tensilelite
        5.0.0 writes ``5.0.0``: hipblaslt-2026-interfaces.md §3 "LibraryLogic header")."""
        entries = catalog.get("solutions", {}).get(type_key_text(type_key), {})
        indices = sorted({entry[0] for entry in entries.values()})
        if indices:
            source = catalog_source(context.run_root, dict(catalog), indices[0])
            return load_logic(source), source
        data = [
            {"MinimumRequiredVersion": minimum_required_version}, profile.schedule,
            {"Architecture": profile.arch, "CUCount": profile.cu_count}, list(profile.device_names),
            problem_type_dict(problem), [], [2, 3, 0, 1], [], None, None, "DeviceEfficiency", "Equality",
        ]  # fmt: skip
        return logic_from_data(data, dialect="tensilelite"), None


__all__ = [
    "EXISTING", "GENERATED", "KernelSearchStage", "SearchGroup", "build_groups", "driver_job", "existing_answer_text",
    "generated_or_existing",
]  # fmt: skip

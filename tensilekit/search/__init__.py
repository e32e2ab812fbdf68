"""Kernel search: Tensile tuning configs, pruning rules and a seeded, resumable genetic algorithm.

The pure core -- the kernel genome (:mod:`.params`), per-architecture parameter profiles
(:mod:`.profiles`), pruning rules (:mod:`.pruning`), size clustering (:mod:`.clusters`), the
GA (:mod:`.ga`) and the exhaustive grid (:mod:`.grid`) -- takes values and returns values. The
edges write configs (:mod:`.configs`), run the Tensile benchmark driver (:mod:`.driver`) and
read seeds from libraries (:mod:`.seeds`). The tuning pipeline runs all of it as its
``search`` stage with ``--mode ga`` or ``--mode grid``; see ``docs/search.md``.
"""

from tensilekit.search.clusters import cluster_sizes
from tensilekit.search.configs import (
    Flow,
    config_sizes,
    dumps_config,
    expand_forks,
    problem_type_config,
    range_size,
    run_script,
    tuning_config,
    write_config,
)
from tensilekit.search.driver import evaluate_with_driver, read_driver_results
from tensilekit.search.ga import (
    Evaluator,
    GAConfig,
    GAResult,
    GAState,
    Measurement,
    SearchProblem,
    advance,
    crossover,
    mutate,
    propose,
    random_kernel,
    result_of,
    run_ga,
    state_from_json,
    state_to_json,
)
from tensilekit.search.grid import enumerate_kernels, repair
from tensilekit.search.params import GENES, KernelParams, ProblemShape
from tensilekit.search.profiles import PROFILES, ArchProfile, GeneSpace, gene_space, profile_for
from tensilekit.search.pruning import RULES, PruneContext, Rule, is_valid, make_context, prune_reasons
from tensilekit.search.seeds import seed_from_record, seeds_from_master

__all__ = [
    "GENES",
    "PROFILES",
    "RULES",
    "ArchProfile",
    "Evaluator",
    "Flow",
    "GAConfig",
    "GAResult",
    "GAState",
    "GeneSpace",
    "KernelParams",
    "Measurement",
    "ProblemShape",
    "PruneContext",
    "Rule",
    "SearchProblem",
    "advance",
    "cluster_sizes",
    "config_sizes",
    "crossover",
    "dumps_config",
    "enumerate_kernels",
    "evaluate_with_driver",
    "expand_forks",
    "gene_space",
    "is_valid",
    "make_context",
    "mutate",
    "problem_type_config",
    "profile_for",
    "propose",
    "prune_reasons",
    "random_kernel",
    "range_size",
    "read_driver_results",
    "repair",
    "result_of",
    "run_ga",
    "run_script",
    "seed_from_record",
    "seeds_from_master",
    "state_from_json",
    "state_to_json",
    "tuning_config",
    "write_config",
]

"""The public names of tensilekit.search are pinned."""

from __future__ import annotations

import tensilekit.search as search


def test_exported_members() -> None:
    assert sorted(search.__all__) == sorted([
        "GENES", "PROFILES", "RULES", "ArchProfile", "Evaluator", "Flow", "GAConfig", "GAResult", "GAState",
        "GeneSpace", "KernelParams", "Measurement", "ProblemShape", "PruneContext", "Rule", "SearchProblem", "advance",
        "cluster_sizes", "config_sizes", "crossover", "dumps_config", "enumerate_kernels", "evaluate_with_driver",
        "expand_forks", "gene_space", "is_valid", "make_context", "mutate", "problem_type_config", "profile_for",
        "propose", "prune_reasons", "random_kernel", "range_size", "read_driver_results", "repair", "result_of",
        "run_ga", "run_script", "seed_from_record", "seeds_from_master", "state_from_json", "state_to_json",
        "tuning_config", "write_config",
    ])  # fmt: skip
    for name in search.__all__:
        assert getattr(search, name) is not None

"""The public names of tensilekit.tools and tensilekit.workload resolve and stay listed."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "tensilekit.tools",
        "tensilekit.tools.runner",
        "tensilekit.tools.hipblaslt_bench",
        "tensilekit.tools.tensile_client",
        "tensilekit.tools.create_library",
        "tensilekit.tools.toolset",
        "tensilekit.tools.problem_types",
        "tensilekit.tools.costs",
        "tensilekit.tools.library_index",
        "tensilekit.tools.simulated.config",
        "tensilekit.tools.simulated.gpu",
        "tensilekit.tools.simulated.bench",
        "tensilekit.tools.simulated.library",
        "tensilekit.tools.simulated.tensile",
        "tensilekit.workload",
        "tensilekit.workload.problem",
        "tensilekit.workload.hipblaslt_log",
        "tensilekit.workload.csv_workloads",
        "tensilekit.workload.geko_list",
        "tensilekit.workload.aggregate",
        "tensilekit.workload.records",
        "tensilekit.workload.detect",
    ],
)
def test_all_names_resolve(module: str) -> None:
    loaded = importlib.import_module(module)
    names = loaded.__all__
    assert len(names) == len(set(names))
    assert [name for name in names if not hasattr(loaded, name)] == []


def test_package_surfaces() -> None:
    import tensilekit.tools as tools
    import tensilekit.workload as workload

    assert {"CommandRunner", "SubprocessRunner", "FakeRunner", "run_bench", "run_tensile", "run_create_library"} <= set(
        tools.__all__
    )
    assert {"GemmProblem", "parse_hipblaslt_log", "aggregate_problems", "group_by_gemm_type", "load_workload"} <= set(
        workload.__all__
    )

"""The stage graph: dependencies, cycles, order and generations."""

from __future__ import annotations

import pytest

from tensilekit.errors import DependencyCycle, PipelineError
from tensilekit.pipeline.graph import build_graph, downstream_of, execution_order, topological_generations, upstream_of
from tensilekit.pipeline.stage import BaseStage
from tensilekit.pipeline.stages import STAGE_NAMES, tune_stages


def stage(name: str, *inputs: str) -> BaseStage:
    made = BaseStage()
    made.name = name
    made.inputs = inputs
    return made


def test_execution_order_follows_the_declared_order_where_possible() -> None:
    graph = build_graph([stage("b", "a"), stage("a"), stage("c"), stage("d", "b", "c")])
    assert execution_order(graph) == ["a", "b", "c", "d"]
    assert topological_generations(graph) == [["a", "c"], ["b"], ["d"]]
    assert upstream_of(graph, "d") == ["b", "c"]
    assert downstream_of(graph, ["b"]) == {"b", "d"}


def test_a_cycle_names_its_stages() -> None:
    with pytest.raises(DependencyCycle) as caught:
        build_graph([stage("ingest"), stage("search", "ingest", "report"), stage("report", "search")])
    message = str(caught.value)
    assert "cycle" in message and "search" in message and "report" in message and "ingest" not in message


def test_unknown_inputs_and_duplicate_names_are_errors() -> None:
    with pytest.raises(PipelineError, match="unknown stage 'nope'"):
        build_graph([stage("a", "nope")])
    with pytest.raises(PipelineError, match="two stages are named 'a'"):
        build_graph([stage("a"), stage("a")])
    with pytest.raises(PipelineError, match="no stage named 'x'"):
        downstream_of(build_graph([stage("a")]), ["x"])


def test_the_tuning_pipeline_is_a_dag_in_declared_order() -> None:
    graph = build_graph(tune_stages())
    assert execution_order(graph) == list(STAGE_NAMES)
    assert STAGE_NAMES == (
        "ingest", "library", "baseline", "search", "build", "benchmark", "postprocess", "final", "merge", "report",
    )  # fmt: skip
    assert topological_generations(graph)[0] == ["ingest"]
    # the baseline runs on the reference library, which stage library may first have to build
    # (--reference-library given as logic files): library comes before baseline
    assert topological_generations(graph)[1:3] == [["library"], ["baseline"]]

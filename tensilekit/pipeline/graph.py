"""The stage graph: a networkx DiGraph built from the stages' declared inputs.

Edges point from an upstream stage to the stage that reads it. The graph must be acyclic
(:class:`~tensilekit.errors.DependencyCycle` names the stages of a cycle). Execution follows
:func:`execution_order`, a topological order that keeps the declared order wherever the
dependencies allow, so stage folder numbers (``01_ingest`` …) are stable across runs;
:func:`topological_generations` groups stages that could run side by side.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from tensilekit.errors import DependencyCycle, PipelineError
from tensilekit.pipeline.stage import Stage


def build_graph(stages: Sequence[Stage]) -> nx.DiGraph:
    """The dependency graph of ``stages`` (node attribute ``stage``, ``order``).

    Raises:
        PipelineError: two stages share a name, or a stage reads an unknown stage.
        DependencyCycle: the dependencies form a cycle.
    """
    graph = nx.DiGraph()
    for order, stage in enumerate(stages):
        if stage.name in graph:
            raise PipelineError(f"two stages are named {stage.name!r}")
        graph.add_node(stage.name, stage=stage, order=order)
    for stage in stages:
        for upstream in stage.inputs:
            if upstream not in graph:
                raise PipelineError(f"stage {stage.name!r} reads unknown stage {upstream!r}")
            graph.add_edge(upstream, stage.name)
    check_acyclic(graph)
    return graph


def check_acyclic(graph: nx.DiGraph) -> None:
    """Raise :class:`DependencyCycle` naming the stages of a cycle, if there is one."""
    if nx.is_directed_acyclic_graph(graph):
        return
    cycle = nx.find_cycle(graph)
    names = [edge[0] for edge in cycle] + [cycle[0][0]]
    raise DependencyCycle(f"stage dependencies form a cycle: {' -> '.join(names)}")


def _order(graph: nx.DiGraph, name: str) -> int:
    return int(graph.nodes[name]["order"])


def execution_order(graph: nx.DiGraph) -> list[str]:
    """A topological order of the stages that prefers the declared order."""
    return list(nx.lexicographical_topological_sort(graph, key=lambda name: _order(graph, name)))


def topological_generations(graph: nx.DiGraph) -> list[list[str]]:
    """Stages grouped into generations; a stage's inputs are all in earlier generations."""
    return [
        sorted(generation, key=lambda name: _order(graph, name)) for generation in nx.topological_generations(graph)
    ]


def downstream_of(graph: nx.DiGraph, names: Iterable[str]) -> set[str]:
    """The named stages and every stage that depends on them, directly or not."""
    selected: set[str] = set()
    for name in names:
        if name not in graph:
            raise PipelineError(f"no stage named {name!r} (stages: {', '.join(execution_order(graph))})")
        selected.add(name)
        selected |= nx.descendants(graph, name)
    return selected


def upstream_of(graph: nx.DiGraph, name: str) -> list[str]:
    """The stages ``name`` reads directly, in execution order."""
    return sorted(graph.predecessors(name), key=lambda upstream: _order(graph, upstream))


__all__ = ["build_graph", "check_acyclic", "downstream_of", "execution_order", "topological_generations", "upstream_of"]

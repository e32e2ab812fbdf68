"""The house (issue 33): :mod:`tensilekit.library` uses coverage and recorded solutions; they never
import it back. ``Library`` reaches them as a :class:`~tensilekit.coverage.inputs.ProblemBuilder`
and a :class:`~tensilekit.recorded.OpenedLibrary`; what both sides share (``problem_record``)
lives below them, in :mod:`tensilekit.selection.problem`."""

from __future__ import annotations

import networkx as nx
from import_graph import import_graph

LIBRARY = "tensilekit.library"


def _below_library(name: str) -> bool:
    return name == "tensilekit.recorded" or name == "tensilekit.coverage" or name.startswith("tensilekit.coverage.")


def test_coverage_and_recorded_never_reach_the_library_module() -> None:
    graph = import_graph()
    modules = sorted(name for name in graph if _below_library(name))
    assert "tensilekit.coverage.inputs" in modules and "tensilekit.recorded" in modules
    assert graph.has_edge(LIBRARY, "tensilekit.recorded")  # the library does use them (a lazy import counts)
    reaching = {name: nx.shortest_path(graph, name, LIBRARY) for name in modules if nx.has_path(graph, name, LIBRARY)}
    assert reaching == {}, "; ".join(" -> ".join(path) for path in reaching.values())


def test_the_library_is_in_no_import_circle() -> None:
    graph = import_graph()
    circles = [
        [LIBRARY, *nx.shortest_path(graph, name, LIBRARY)]
        for name in graph.successors(LIBRARY)
        if nx.has_path(graph, name, LIBRARY)
    ]
    assert circles == [], "import circles: " + "; ".join(" -> ".join(circle) for circle in circles)


def test_a_library_is_what_coverage_and_recorded_take() -> None:
    from tensilekit.coverage.inputs import ProblemBuilder
    from tensilekit.library import open_library
    from tensilekit.recorded import RecordedSolutions

    library = open_library()
    assert isinstance(library, ProblemBuilder)
    assert RecordedSolutions.of(library).arch == library.device.arch  # type: ignore[union-attr]

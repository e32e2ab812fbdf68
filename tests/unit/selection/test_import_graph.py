"""``tensilekit.selection`` has no import circles (issue 25 item 4).

Every import statement of the package's modules counts, those inside functions too (a lazy import
is still a dependency, only a later one); only ``if TYPE_CHECKING:`` blocks are left out. An edge
to the package itself (``from tensilekit.selection import …``) goes to its ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import tensilekit.selection

PACKAGE = "tensilekit.selection"
FOLDER = Path(tensilekit.selection.__file__).parent


def _module_name(path: Path) -> str:
    return PACKAGE if path.name == "__init__.py" else f"{PACKAGE}.{path.stem}"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> nx.DiGraph:
    """Modules of ``tensilekit.selection`` and which of them each imports."""
    modules = {_module_name(path): path for path in sorted(FOLDER.glob("*.py"))}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target in modules and target != name:
                graph.add_edge(name, target)
    return graph


def test_the_graph_sees_the_imports() -> None:
    graph = import_graph()
    assert graph.has_edge("tensilekit.selection.api", "tensilekit.selection.fast")  # a lazy import counts
    assert graph.has_edge("tensilekit.selection.fast", "tensilekit.selection.runtime")


def test_selection_has_no_import_circles() -> None:
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)

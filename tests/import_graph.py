"""tensilekit's import graph read from its source, for tests that guard which module imports which.

Every import statement counts, those inside functions too (a lazy import is still a dependency,
only a later one), except ``if TYPE_CHECKING:`` blocks, so a lazy import that breaks a rule fails
its test even when no test runs that line.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import networkx as nx

import tensilekit

ROOT = Path(tensilekit.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """``(module, at module level)`` for every import of ``tree`` outside ``TYPE_CHECKING``."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, top)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, top))
            found.extend((f"{node.module}.{alias.name}", top) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, top) for alias in node.names)
        inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, True)
    return found


@functools.cache
def import_graph() -> nx.DiGraph:
    """tensilekit's modules; an edge per import, ``eager`` when it runs on import of the module.
    Read once per test process (about 3 s): callers only read it.

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too, so those are edges as well."""
    modules = {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target, eager in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                module = ".".join(parts[:end])
                if module in modules and module != name:
                    old = graph.get_edge_data(name, module, {}).get("eager", False)
                    graph.add_edge(name, module, eager=old or eager)
    return graph

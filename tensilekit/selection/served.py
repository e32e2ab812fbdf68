"""What a master library serves: its devices and its problem types, read off its predicates.

Used to ask a library about sizes alone (a selection diff over a grid, a logic file's own
problem type) and by the selection benchmark to make realistic random queries.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tensilekit.model.library import HardwareNode, MasterLibrary
from tensilekit.model.solution import MasterSolution
from tensilekit.selection.problem import Hardware

_FLAG_FIELDS = {
    "HighPrecisionAccumulate": "hpa",
    "StridedBatched": "strided_batched",
    "StochasticRounding": "stochastic_rounding",
}


def nested_predicates(predicate: Any) -> Iterator[Any]:
    """``predicate`` and every predicate nested in its ``value`` (And/Or/Not and AMDGPU wrappers)."""
    if predicate is None or not hasattr(predicate, "type"):
        return
    yield predicate
    value = getattr(predicate, "value", None)
    for item in value if isinstance(value, list) else [value]:
        if hasattr(item, "type"):
            yield from nested_predicates(item)


def served_problem_types(library: MasterLibrary, *, compute_input_type: bool = False) -> list[dict[str, Any]]:
    """The distinct problem types the library's kernels serve, as ``GemmProblem`` fields.

    Each is a dict of ``trans_a``/``trans_b`` (from ``OperationIdentifierEqual``), ``a_type`` …
    ``d_type`` (``TypesEqual``) and the ``hpa``/``strided_batched``/``stochastic_rounding``
    flags, in the order the kernels first name them; with ``compute_input_type`` also
    tensilelite's ``compute_input_type`` (``TypesEqual``'s 5th type), where a kernel names one.
    """
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    # predicates are interned: kernels share them, and each is read once (rocBLAS_Full: 0.5 s -> 0.19 s)
    by_predicate: dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}
    for solution in library.solutions:
        predicate = solution.problem_predicate
        known = by_predicate.get(id(predicate))
        if known is None or known[0] is not predicate:
            # a kernel whose predicates name no type serves any problem: {} (all defaults) stands for it
            fields = solution_problem_fields(solution, compute_input_type=compute_input_type)
            known = (predicate, tuple(sorted((key, str(value)) for key, value in fields.items())), fields)
            by_predicate[id(predicate)] = known
        seen.setdefault(known[1], known[2])
    return list(seen.values())


def solution_problem_fields(solution: MasterSolution, *, compute_input_type: bool = False) -> dict[str, Any]:
    """The problem type one kernel's predicates ask for (see :func:`served_problem_types`)."""
    return predicate_problem_fields(solution.problem_predicate, compute_input_type=compute_input_type)


def predicate_problem_fields(root: Any, *, compute_input_type: bool = False) -> dict[str, Any]:
    """The problem type a predicate (a kernel's, or a library row's) asks for, as ``GemmProblem`` fields."""
    fields: dict[str, Any] = {}
    for predicate in nested_predicates(root):
        if predicate.type == "OperationIdentifierEqual":
            operation = str(predicate.value)
            fields["trans_a"] = ("C" if "_AlikC" in operation else "T") if "_Alik" in operation else "N"
            fields["trans_b"] = ("C" if "_BjlkC" in operation else "T") if "_Bjlk" in operation else "N"
        elif predicate.type == "TypesEqual":
            fields.update(zip(("a_type", "b_type", "c_type", "d_type"), predicate.value[:4], strict=True))
            if compute_input_type and len(predicate.value) > 4:
                fields["compute_input_type"] = predicate.value[4]
        elif predicate.type in _FLAG_FIELDS:
            fields[_FLAG_FIELDS[predicate.type]] = bool(predicate.value)
    return fields


def served_row_types(
    library: MasterLibrary, *, processor: str | None = None, operation: str | None = None
) -> list[dict[str, Any]]:
    """The problem types a library's rows ask for (``Problem`` row predicates with types or flags,
    the operation of the ``ProblemMap`` entry above them), as :func:`served_problem_types` gives
    them: what a lazy master tells about its kernels without reading a shard.

    ``processor``: only the top-level ``Hardware`` rows for that processor (or for any);
    ``operation``: only that ``ProblemMap`` entry (``Contraction_l_Ailk_Bljk_Cijk_Dijk``). Both
    keep a partially read master to the part of its tree one query reaches (already decoded)."""
    from tensilekit.model.library import ProblemMapNode

    seen: dict[tuple[Any, ...], dict[str, Any]] = {}

    def visit(node: Any, inherited: dict[str, Any]) -> None:
        if isinstance(node, ProblemMapNode):
            keys = list(node.map) if operation is None else [key for key in (operation,) if key in node.map]
            for key in keys:
                fields = predicate_problem_fields(_Operation(key)) if "_A" in key else {}
                visit(node.map[key], {**inherited, **fields})
            return
        rows = getattr(node, "rows", None)
        if not rows:
            return
        if processor is not None and isinstance(node, HardwareNode):
            rows = [row for row in rows if _row_processor(row) in (None, processor)]
        for row in rows:
            fields = {**inherited, **predicate_problem_fields(row.predicate, compute_input_type=True)}
            if any(name.endswith("_type") for name in fields):
                seen.setdefault(tuple(sorted((key, str(value)) for key, value in fields.items())), fields)
            visit(row.library, fields)

    visit(library.library, {})
    return list(seen.values())


def _row_processor(row: Any) -> str | None:
    """The processor a ``Hardware`` row names, or None (a row for any device)."""
    for predicate in nested_predicates(row.predicate):
        if predicate.type == "Processor" and isinstance(predicate.value, str):
            return predicate.value
    return None


class _Operation:
    """An ``OperationIdentifierEqual`` predicate for a ``ProblemMap`` key."""

    type = "OperationIdentifierEqual"

    def __init__(self, value: str) -> None:
        self.value = value


def library_devices(library: MasterLibrary) -> list[Hardware]:
    """One device per top-level ``Hardware`` row that names a processor (with its CU count, if any)."""
    devices: list[Hardware] = []
    root = library.library
    if not isinstance(root, HardwareNode):
        return devices
    for row in root.rows:
        processor = cu_count = None
        for predicate in nested_predicates(row.predicate):
            if predicate.type == "Processor" and isinstance(predicate.value, str):
                processor = predicate.value
            elif predicate.type == "CUCount" and isinstance(predicate.value, int):
                cu_count = predicate.value
        if processor is not None:
            device = Hardware(arch=processor, cu_count=cu_count)
            if device not in devices:
                devices.append(device)
    return devices


__all__ = [
    "library_devices",
    "nested_predicates",
    "predicate_problem_fields",
    "served_problem_types",
    "served_row_types",
    "solution_problem_fields",
]

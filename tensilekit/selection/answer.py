"""What a selection answers: the kernel (:class:`Selection`), the next-best ones
(:class:`Candidate`) and the walk (:class:`TraceEvent`).

Plain results, imported by the walk, the runtimes and the compiled path alike (so that none of
them has to import another for its result types).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict

from tensilekit.model.solution import MasterSolution


class TraceEvent(BaseModel):
    """One step of a walk: which node, how deep, whether it held, and why."""

    model_config = ConfigDict(frozen=True)

    depth: int
    node: str
    path: str
    passed: bool | None
    message: str


class Candidate(BaseModel):
    """A next-best kernel: what would be chosen if every better-ranked one did not exist."""

    model_config = ConfigDict(frozen=True)

    rank: int
    index: int
    name: str | None
    distance: float | None
    source: str = "reselect"
    """How the runtime listed it: ``reselect`` (Tensile: selected again with the better ones
    excluded), ``findTopSolutions`` (hipBLASLt's ranking) or ``getAllSolutions`` (hipBLASLt's
    fallback when the ranking is short; unordered in hipBLASLt, by index here)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Selection:
    """The kernel the runtime picks (``index``/``name``; None when it finds none) and the walk.

    A plain frozen dataclass rather than a pydantic model: one is built per query on the fast
    path, where a model's construction would cost more than the selection. :meth:`to_dict` is the
    JSON form (as ``model_dump(mode="json")`` would give).
    """

    index: int | None
    name: str | None
    distance: float | None
    solution: MasterSolution | None = dataclasses.field(default=None, repr=False, compare=False)
    trace: tuple[TraceEvent, ...] = ()
    alternatives: tuple[Candidate, ...] = ()
    # The table key of the chosen entry (reference walk only; None from the fast path or trees).
    matched_key: tuple[int, ...] | None = None
    retried: bool = False
    """hipBLASLt only: the XF32 → Float retry (``f32_fast_xf32``) supplied the answer."""

    @property
    def found(self) -> bool:
        return self.index is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: index, name, distance, trace and alternatives (the solution is left out)."""
        return {
            "index": self.index,
            "name": self.name,
            "distance": self.distance,
            "matched_key": None if self.matched_key is None else list(self.matched_key),
            "retried": self.retried,
            "trace": [event.model_dump(mode="json") for event in self.trace],
            "alternatives": [candidate.model_dump(mode="json") for candidate in self.alternatives],
        }


# each slot's setter, in field order (the slots of a dataclass are its fields, in order)
_SETTERS = tuple(getattr(Selection, field.name).__set__ for field in dataclasses.fields(Selection))


def found_selection(
    index: int | None, name: str | None, distance: float | None, solution: MasterSolution | None, retried: bool = False
) -> Selection:
    """``Selection(index, name, distance, solution, retried=retried)`` (no walk, no trace) in
    half the time: the fast paths build one per query, and the frozen dataclass's ``__init__``
    (eight ``object.__setattr__`` calls) cost an eighth of a warm query. The slots' own setters
    fill the same fields (``test_found_selection_equals_the_constructed_one``)."""
    made = object.__new__(Selection)
    set_index, set_name, set_distance, set_solution, set_trace, set_alternatives, set_key, set_retried = _SETTERS
    set_index(made, index)
    set_name(made, name)
    set_distance(made, distance)
    set_solution(made, solution)
    set_trace(made, ())
    set_alternatives(made, ())
    set_key(made, None)
    set_retried(made, retried)
    return made


__all__ = ["Candidate", "Selection", "TraceEvent", "found_selection"]

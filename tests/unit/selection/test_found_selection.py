"""``found_selection`` (the fast paths' Selection) builds what ``Selection(...)`` builds."""

from __future__ import annotations

import dataclasses

import pytest

from tensilekit.selection.answer import Selection, found_selection


@pytest.mark.parametrize(
    ("index", "name", "distance", "retried"),
    [(3, "Cijk_x", 0.25, False), (None, None, None, False), (7, "k", 1e30, True)],
)
def test_found_selection_equals_the_constructed_one(
    index: int | None, name: str | None, distance: float | None, retried: bool
) -> None:
    solution = object()
    fast = found_selection(index, name, distance, solution, retried)  # type: ignore[arg-type]
    built = Selection(index, name, distance, solution, retried=retried)  # type: ignore[arg-type]
    assert fast == built and repr(fast) == repr(built) and hash(fast) == hash(built)
    assert [getattr(fast, field.name) for field in dataclasses.fields(Selection)] == [
        getattr(built, field.name) for field in dataclasses.fields(Selection)
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.index = 1  # type: ignore[misc]

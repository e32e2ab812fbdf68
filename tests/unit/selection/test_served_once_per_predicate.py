"""``served_problem_types`` reads each interned problem predicate once, however many kernels share
it (issue 25: a no-kernel reason on rocBLAS_Full cost 0.5 s reading all 21 288 kernels'), and
answers as reading every kernel did."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit import load_master
from tensilekit.selection import served

pytestmark = pytest.mark.corpus


def test_each_shared_predicate_is_read_once(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = load_master(corpus / "masters" / "aldebaran_SB_NN.dat")
    every = [served.solution_problem_fields(solution) for solution in library.solutions]
    expected: dict[tuple[object, ...], dict[str, object]] = {}
    for fields in every:  # the kernels' types, in first-named order
        expected.setdefault(tuple(sorted((key, str(value)) for key, value in fields.items())), fields)
    distinct = {id(solution.problem_predicate) for solution in library.solutions}
    assert len(distinct) < len(library.solutions)  # kernels share predicates (interned)
    reads = 0
    original = served.solution_problem_fields

    def counted(*args: object, **kwargs: object) -> dict[str, object]:
        nonlocal reads
        reads += 1
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(served, "solution_problem_fields", counted)
    assert served.served_problem_types(library) == list(expected.values())
    assert reads == len(distinct)

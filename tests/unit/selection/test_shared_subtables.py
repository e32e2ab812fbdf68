"""Matching sub-tables are shared between predicate signatures that leave the same entries usable
(issue 25: on rocBLAS_Full half of the signatures did, and their copies held ~100 MB)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from tensilekit.library import open_library
from tensilekit.selection.api import select_solution
from tensilekit.selection.fast import _Table

pytestmark = pytest.mark.corpus


def test_signatures_with_the_same_usable_entries_share_one_subtable(corpus: Path) -> None:
    library = open_library(corpus / "masterlib/tensile/SolutionLibraries/rocBLAS_Full.dat.gz")
    queries = (corpus / "select" / "rocBLAS_Full.jsonl").read_text().splitlines()
    lines = []
    for number, line in enumerate(queries[:200]):  # sizes varied: other alignments, other signatures
        query = json.loads(line)
        for scale in (1, 3, 7):
            lines.append(json.dumps({**query, "m": query["m"] * scale + number % 5, "k": query["k"] + scale}))
    answers = list(library.answer_queries(lines))
    tables = [table for table in gc.get_objects() if isinstance(table, _Table)]  # compiled tables reached
    signatures = [(table, signature) for table in tables for signature in table.subtables]
    shared = {id(table.subtables[signature]) for table, signature in signatures}
    masks = {(id(table), table.subtables[signature].mask.tobytes()) for table, signature in signatures}
    assert len(shared) == len(masks) < len(signatures)  # one Usable per distinct mask, and some shared
    for answer, line in list(zip(answers, lines, strict=True))[::37]:  # the walk agrees
        query = json.loads(line)
        walked = select_solution(library.reference, library.problem_from_query(query), library.device_of(query))
        assert answer.record["index"] == walked.index, line

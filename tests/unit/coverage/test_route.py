"""The Route the selectors record (coverage's only view of the walk): reference, compiled single and batch agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensilekit.api import load_for_selection
from tensilekit.coverage import Classifier, CoverageClass, CoverageGemm, coverage_of
from tensilekit.selection import (
    ProblemColumns,
    compile_library,
    contraction_problem,
    hardware_from_query,
    problem_from_query,
)
from tensilekit.selection.fast import BatchRoute
from tensilekit.selection.walk import ReferenceSelector, Route

MASTERS = [
    "aldebaran_DB_TN_dtree",
    "aldebaran_NN_mixed",
    "aldebaran_SB_NN_equality",
    "arcturus_HHS_BH_NT_cueff",
    "aquavanjaram942_B8B8S_BH_SR_NT",
    "aldebaran_HHS_BH_TT_fp16alt",
]


def _queries(corpus: Path, name: str, count: int) -> list[dict[str, object]]:
    with (corpus / "select" / f"{name}.jsonl").open() as stream:
        return [json.loads(line) for _, line in zip(range(count), stream, strict=False)]


@pytest.mark.parametrize("name", MASTERS)
def test_reference_and_compiled_routes_agree(corpus: Path, name: str) -> None:
    library, loader = load_for_selection(corpus / "masters" / f"{name}.dat")
    reference, compiled = ReferenceSelector(library, loader), compile_library(library, loader=loader)
    records = _queries(corpus, name, 150)
    problems = [contraction_problem(problem_from_query(record)) for record in records]
    devices = [hardware_from_query(record) for record in records]
    batch = BatchRoute(len(records))
    sids, _ = compiled.find_batch(ProblemColumns.from_problems(problems, devices), batch)
    vias: set[str | None] = set()
    for position, (problem, device) in enumerate(zip(problems, devices, strict=True)):
        slow, fast, bulk = Route(), Route(), batch.route(position)
        selection = reference.select(problem, device, route=slow)
        solution, _ = compiled.find(problem, device, fast)
        assert selection.index == (None if solution is None else solution.index)
        assert selection.index == (None if sids[position] < 0 else compiled.solutions[sids[position]].index)
        for other in (fast, bulk):
            assert (slow.fell_through, slow.via, slow.position) == (other.fell_through, other.via, other.position)
            assert slow.leaf is other.leaf
        if slow.via == "table":
            assert selection.matched_key == reference.sorted_table(slow.leaf).keys[slow.position]  # type: ignore[arg-type]
        vias.add(slow.via)
    assert vias - {None}


def test_equality_misses_on_the_104_cu_row_are_fallback_on_the_corpus_master(corpus: Path) -> None:
    name = "aldebaran_SB_NN_equality"
    library, loader = load_for_selection(corpus / "masters" / f"{name}.dat")
    classifier = Classifier(library, loader=loader)
    classes: dict[CoverageClass, int] = {}
    for record in _queries(corpus, name, 200):
        problem, device = problem_from_query(record), hardware_from_query(record)
        item = classifier.classify(CoverageGemm(problem, device, "SSS_NN"))
        classes[item.coverage_class] = classes.get(item.coverage_class, 0) + 1
        if item.coverage_class is CoverageClass.FALLBACK:
            assert item.fell_through and item.table is not None
        if item.coverage_class is CoverageClass.EXACT and item.table and item.table.startswith("Equality"):
            assert item.matched is not None and item.matched.key[:2] == (problem.m, problem.n)
    assert classes.get(CoverageClass.FALLBACK, 0) > 0 and classes.get(CoverageClass.EXACT, 0) > 0


def test_decision_forest_answers_are_near_and_its_null_value_a_fallback(corpus: Path) -> None:
    name = "aldebaran_DB_TN_dtree"
    library, loader = load_for_selection(corpus / "masters" / f"{name}.dat")
    classifier = Classifier(library, loader=loader)
    seen: dict[str | None, set[CoverageClass]] = {}
    for record in _queries(corpus, name, 400):
        item = classifier.classify(CoverageGemm(problem_from_query(record), hardware_from_query(record), "DDD_TN"))
        seen.setdefault(item.via, set()).add(item.coverage_class)
    assert seen["tree"] == {CoverageClass.NEAR}
    assert seen["null-value"] == {CoverageClass.FALLBACK}


def test_a_lazy_master_gives_the_classes_of_its_eager_twin(corpus: Path) -> None:
    (lazy,) = (corpus / "masters" / "lazy").glob("*/TensileLibrary_lazy_gfx90a.yaml")
    records = [record for record in _queries(corpus, "aldebaran_NN_mixed", 300) if record["a_type"] == "Half"][:60]
    gemms = [CoverageGemm(problem_from_query(r), hardware_from_query(r), "HH") for r in records]
    answers = []
    for path in (lazy, corpus / "masters" / "aldebaran_NN_mixed.dat"):
        library, loader = load_for_selection(path)
        report = coverage_of(library, gemms, loader=loader)
        answers.append([(item.index, item.coverage_class, item.matched and item.matched.key) for item in report.gemms])
    assert answers[0] == answers[1] and len(answers[0]) == len(gemms) > 0

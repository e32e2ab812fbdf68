"""lint rules on fixtures/lint/lint_cases_gfx90a.yaml: each code flags its case and passes its twin."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tensilekit.io.master_io import load_master
from tensilekit.lint import LintCode, LintOptions, lint_library
from tensilekit.model.checks import Finding
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import GemmProblem, Hardware, select_solution

CASES = Path(__file__).resolve().parents[3] / "fixtures" / "lint" / "lint_cases_gfx90a.yaml"
BASE = 606601216
NN = "library.rows[0].library.map.Contraction_l_Ailk_Bljk_Cijk_Dijk" + ".rows[0].library" * 5
TN = "library.rows[0].library.map.Contraction_l_Alik_Bljk_Cijk_Dijk" + ".rows[0].library" * 5
NT = "library.rows[0].library.map.Contraction_l_Ailk_Bjlk_Cijk_Dijk" + ".rows[0].library" * 4
TT = "library.rows[0].library.map.Contraction_l_Alik_Bjlk_Cijk_Dijk" + ".rows[0].library" * 5


@pytest.fixture(scope="module")
def cases() -> MasterLibrary:
    return load_master(CASES)


def _by_code(findings: list[Finding], code: LintCode) -> dict[str, Finding]:
    return {finding.path: finding for finding in findings if finding.code == code.value}


def _edited(library: MasterLibrary, edit: Any) -> MasterLibrary:
    raw = copy.deepcopy(library.to_raw())
    edit(raw)
    return MasterLibrary.model_validate(raw)


def _table(raw: dict[str, Any], op: str) -> dict[str, Any]:
    node = raw["library"]["rows"][0]["library"]["map"][op]
    while node["type"] != "Matching":
        node = node["rows"][0]["library"]
    return node


def test_dead_entry_flags_a_kernel_failing_at_its_own_key(cases: MasterLibrary) -> None:
    dead = _by_code(lint_library(cases), LintCode.DEAD_ENTRY)
    assert list(dead) == [f"{NN}.table[0]"]
    finding = dead[f"{NN}.table[0]"]
    assert finding.severity == "warning"
    assert "[100, 64, 64]" in finding.message
    assert "Free0SizeMultiple: not (M=100 % ==0 8)" in finding.message


def test_dead_entry_passes_what_the_key_leaves_open(cases: MasterLibrary) -> None:
    # [256,256,256] -> the same M%8 kernel (clean); the GB kernel (StridedBatched false) and the
    # kernel wanting batch > 100 at a key without batch are not dead either.
    dead = _by_code(lint_library(cases), LintCode.DEAD_ENTRY)
    for number in (4, 5, 6):
        assert f"{NN}.table[{number}]" not in dead


def test_dead_entry_ignores_scalar_and_stride_predicates(cases: MasterLibrary) -> None:
    def add_predicates(raw: dict[str, Any]) -> None:
        solution = next(s for s in raw["solutions"] if s["index"] == BASE + 5)
        solution["problemPredicate"]["value"] += [
            {"type": "BetaOne"},
            {"type": "AlphaValue", "value": "NegativeOne"},
            {"index": 1, "type": "StrideCEqual", "value": 0},
        ]

    dead = _by_code(lint_library(_edited(cases, add_predicates)), LintCode.DEAD_ENTRY)
    assert f"{NN}.table[6]" not in dead


def test_shadowed_entry_same_key_same_predicates_slower(cases: MasterLibrary) -> None:
    shadowed = _by_code(lint_library(cases), LintCode.SHADOWED_ENTRY)
    finding = shadowed[f"{NN}.table[2]"]
    assert f"index {BASE + 2}" in finding.message and f"index {BASE} has the same key and predicates" in finding.message
    # different predicates (the GB kernel under a faster one) is not shadowing
    assert f"{NN}.table[5]" not in shadowed


def test_shadowed_entry_respects_the_leftward_scan(cases: MasterLibrary) -> None:
    # Without the [129,128,128] entry, a query just above [128,128,128] in M meets the slower
    # duplicate first in the leftward scan and stops there (spec (e) 1): it can win, so no finding.
    def drop_129(raw: dict[str, Any]) -> None:
        table = _table(raw, "Contraction_l_Ailk_Bljk_Cijk_Dijk")
        table["table"] = [entry for entry in table["table"] if entry["key"] != [129, 128, 128]]

    library = _edited(cases, drop_129)
    gfx90a = Hardware(arch="gfx90a")
    assert select_solution(library, GemmProblem(m=130, n=128, k=128), gfx90a).index == BASE + 2
    assert select_solution(cases, GemmProblem(m=130, n=128, k=128), gfx90a).index == BASE
    shadowed = _by_code(lint_library(library), LintCode.SHADOWED_ENTRY)
    assert not any(path.startswith(NN) for path in shadowed)


def test_shadowed_entry_in_equality_table_is_never_tried(cases: MasterLibrary) -> None:
    shadowed = _by_code(lint_library(cases), LintCode.SHADOWED_ENTRY)
    assert "tries only the first entry of a key" in shadowed[f"{TN}.table[1]"].message
    assert f"{TN}.table[2]" not in shadowed  # the same kernel alone at its own key
    assert not any(path.startswith(NT) for path in shadowed)


def test_unreachable_kernel(cases: MasterLibrary) -> None:
    unreachable = _by_code(lint_library(cases), LintCode.UNREACHABLE_KERNEL)
    assert sorted(unreachable) == ["solutions[2]", "solutions[3]"]
    assert "referenced only by 1 dead or shadowed entry" in unreachable["solutions[2]"].message
    assert "referenced by no table entry" in unreachable["solutions[3]"].message
    # kernel 1 is dead at [100,64,64] but alive at [256,256,256]; kernel 11 is shadowed at one key
    # but alone at another: both reachable
    assert "solutions[1]" not in unreachable and "solutions[7]" not in unreachable


def test_a_dead_entry_of_a_nearest_key_table_still_reaches_its_kernel(cases: MasterLibrary) -> None:
    # Without [256,256,256] -> kernel 1, kernel 1 is named only by the entry dead at [100,64,64];
    # the runtime still hands it M=104 (its nearest entry; 104 % 8 == 0): reachable.
    def drop_256(raw: dict[str, Any]) -> None:
        table = _table(raw, "Contraction_l_Ailk_Bljk_Cijk_Dijk")
        table["table"] = [e for e in table["table"] if not (e["key"] == [256, 256, 256] and e["index"] == BASE + 1)]

    library = _edited(cases, drop_256)
    assert select_solution(library, GemmProblem(m=104, n=64, k=64), Hardware(arch="gfx90a")).index == BASE + 1
    findings = lint_library(library)
    assert f"{NN}.table[0]" in _by_code(findings, LintCode.DEAD_ENTRY)
    assert "solutions[1]" not in _by_code(findings, LintCode.UNREACHABLE_KERNEL)


def test_a_dead_entry_of_an_equality_table_does_not(cases: MasterLibrary) -> None:
    # kernel 11 asserting M % 8 == 0 at [100,100,1,100] (dead) and behind kernel 10 at [64,64,1,64]
    def m8_at_100(raw: dict[str, Any]) -> None:
        solution = next(s for s in raw["solutions"] if s["index"] == BASE + 11)
        solution["problemPredicate"]["value"].append({"index": 0, "type": "Free0SizeMultiple", "value": 8})
        _table(raw, "Contraction_l_Alik_Bljk_Cijk_Dijk")["table"][2]["key"] = [100, 100, 1, 100]

    findings = lint_library(_edited(cases, m8_at_100))
    dead = _by_code(findings, LintCode.DEAD_ENTRY)
    assert "an Equality table answers only its exact key" in dead[f"{TN}.table[2]"].message
    unreachable = _by_code(findings, LintCode.UNREACHABLE_KERNEL)
    assert "referenced only by 2 dead or shadowed entries" in unreachable["solutions[7]"].message


def test_no_fallback_only_for_equality_only_problem_types(cases: MasterLibrary) -> None:
    no_fallback = _by_code(lint_library(cases), LintCode.NO_FALLBACK)
    assert list(no_fallback) == [TN]
    assert "Contraction_l_Alik_Bljk_Cijk_Dijk Float/Float/Float/Float on gfx90a" in no_fallback[TN].message
    assert "1 table(s), 3 keys" in no_fallback[TN].message
    # and the runtime agrees: an unlisted TN size finds nothing, an unlisted NT size finds a kernel
    gfx90a = Hardware(arch="gfx90a")
    assert select_solution(cases, GemmProblem(m=100, n=100, k=100, trans_a="T"), gfx90a).index is None
    assert select_solution(cases, GemmProblem(m=100, n=100, k=100, trans_b="T"), gfx90a).index == BASE + 20


def test_grid_outlier(cases: MasterLibrary) -> None:
    outliers = _by_code(lint_library(cases), LintCode.GRID_OUTLIER)
    assert len(outliers) == 1
    (finding,) = outliers.values()
    assert finding.path.startswith(f"{TT}.table[")
    assert "grid cell M=128 N=128 batch=1 K=64" in finding.message
    assert "macro tile 256x256 (area 65536)" in finding.message
    assert "owns M in (64, 128], N in (64, 128]" in finding.message
    assert not _by_code(lint_library(cases, options=LintOptions(grid_factor=100.0)), LintCode.GRID_OUTLIER)


def test_size_information(cases: MasterLibrary) -> None:
    sizes = [f for f in lint_library(cases, measure=lambda raw: 7, file_bytes=1234) if f.code == "size"]
    assert all(f.severity == "info" for f in sizes)
    assert sizes[0].message == "12 solutions, 5 tables, 31 table entries, 1234 bytes"
    assert "problem type NN Float/Float/Float/Float: 5 solutions, 7 bytes of solution records" in [
        f.message for f in sizes
    ]
    assert "Equality table: 3 entries, 2 kernels" in [f.message for f in sizes if f.path == TN]
    assert not [f for f in lint_library(cases, options=LintOptions(size=False)) if f.code == "size"]


def test_lint_does_not_modify_the_library(cases: MasterLibrary) -> None:
    before = cases.to_raw()
    lint_library(cases)
    assert cases.to_raw() == before


def test_a_linted_library_dies_by_refcount(cases: MasterLibrary) -> None:
    """The errors lint keeps (a table it cannot model) hold no traceback once it is done: their
    frames held the linter, a cycle through the whole library that only a full collection freed
    (rocBLAS_Full: 1.3 M objects, a 1.5 s collection as lint_file returned)."""
    import gc

    def unmodelled(raw: dict[str, Any]) -> None:
        for solution in raw["solutions"]:  # a stride the GEMM model cannot have: each table's base fails
            solution["problemPredicate"]["value"].append({"type": "StrideCEqual", "index": 0, "value": 0})

    library = _edited(cases, unmodelled)
    gc.collect()
    gc.disable()
    try:
        lint_library(library)
        del library
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kept = sum(type(item).__name__ == "MasterSolution" for item in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert kept == 0


def test_can_solve_atom_by_atom_is_the_generated_function(cases: MasterLibrary) -> None:
    """Lint answers a kernel signature's first questions atom by atom (compiling its function costs
    more than they do): the same verdict as the compiled library's generated canSolve, on every
    entry's problems of every table."""
    from tensilekit.lint.rules import _GENERATED_FROM, Linter
    from tensilekit.lint.tables import entry_problems, key_sizes, problem_base

    linter = Linter(cases)
    compared = 0
    for table in linter.tables:
        for entry in table.context.node.table:
            solution = linter.solutions[entry.solution_index]
            sid = linter.compiled.sid_of(solution.index)
            base = problem_base(table.context, solution)
            for problem in entry_problems(base, key_sizes(table.context.node, entry.key)):
                linter._asked.clear()  # atom by atom each time
                by_atoms = linter._can_solve(sid, problem, table.context.hardware)
                assert by_atoms == linter.compiled.can_solve(sid, problem, table.context.hardware)
                compared += 1
    assert compared > 20 and _GENERATED_FROM > 1


def test_lint_compiles_canSolve_only_for_signatures_asked_often(
    cases: MasterLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiling a signature's canSolve costs ~0.4 ms, more than a few questions answered atom by
    atom (rocBLAS_Full: 1.5 s of lint for 3 300 signatures, three in four asked under 32 times)."""
    from tensilekit.lint import rules
    from tensilekit.selection import kernels

    compiled: list[str] = []
    generate = kernels.generate

    def counted(name: str, body: Any, helpers: Any) -> Any:
        compiled.append(name)
        return generate(name, body, helpers)

    monkeypatch.setattr(kernels, "generate", counted)
    asked: dict[tuple[int, ...], int] = {}
    can_solve = rules.Linter._can_solve

    def counting(self: Any, sid: int, problem: Any, hardware: Any) -> bool:
        atoms = self.compiled.solution_atoms[sid]
        asked[atoms] = asked.get(atoms, 0) + 1
        return can_solve(self, sid, problem, hardware)

    monkeypatch.setattr(rules.Linter, "_can_solve", counting)
    lint_library(cases)
    often = sum(count >= rules._GENERATED_FROM for count in asked.values())
    assert asked and compiled.count("can_solve") == often


def test_entry_columns_predicates_of_the_type_read_on_the_templates(corpus: Path) -> None:
    """A table's problems as columns hold their template's problem type: each predicate of a
    kernel evaluated through the columns' type view (one row per template) equals the predicate
    evaluated on every problem."""
    import numpy as np

    from tensilekit.lint.rules import Linter
    from tensilekit.lint.tables import entry_columns, key_fields, problems_per_key, template_columns
    from tensilekit.selection.columns import PROBLEM_TYPE_COLUMNS
    from tensilekit.selection.fast import _vector_of

    linter = Linter(load_master(corpus / "masters" / "aldebaran_NN_mixed.yaml"))
    compared = by_type = 0
    for table in linter.tables:
        context, fields = table.context, key_fields(table.context.node)
        entries = table.context.node.table[:50]
        base = linter._base(context, linter.solutions[entries[0].solution_index])
        templates = template_columns(base, context.hardware)
        columns = entry_columns(base, fields, [entry.key for entry in entries], templates, context.hardware)
        assert columns is not None and columns.size == len(entries) * problems_per_key(base, fields)
        types, of_row = columns.problem_types()  # type: ignore[misc]
        for name in PROBLEM_TYPE_COLUMNS & set(templates.names()):
            assert (getattr(columns, name) == getattr(types, name)[of_row]).all()
        for entry in entries:
            for atom_id in linter.compiled.solution_atoms[linter.compiled.sid_of(entry.solution_index)]:
                atom = linter.compiled.atoms.atoms[atom_id]
                if atom.constant is None:
                    with np.errstate(all="ignore"):
                        assert (_vector_of(atom, columns) == atom.vector(columns)).all()
                    compared += 1
        by_type += len(columns.__dict__.get("_atom_vectors", {})) > 0 and len(types.__dict__.get("_atom_vectors", {}))
    assert compared > 100 and by_type > 0


@pytest.mark.parametrize("fixture", ["lint_cases_gfx90a.yaml", "corpus:masters/aldebaran_NN_mixed.yaml"])
def test_bulk_table_pass_answers_as_entry_by_entry(
    fixture: str, cases: MasterLibrary, request: pytest.FixtureRequest
) -> None:
    """The table pass decides a table's entries in array passes: the same verdict as
    :meth:`Linter.decide` entry by entry (a dead or undecided one with the same reason)."""
    from tensilekit.lint.rules import Linter

    library = cases
    if fixture.startswith("corpus:"):
        library = load_master(request.getfixturevalue("corpus") / fixture.removeprefix("corpus:"))
    linter = Linter(library)
    decided = in_bulk = 0
    for table in linter.tables:
        members = list(dict.fromkeys((entry.solution_index, tuple(entry.key)) for entry in table.context.node.table))
        in_bulk += len(linter._alive_in_bulk(table.context, members))  # not all left to decide
        for number, entry in enumerate(table.context.node.table):
            verdict = table.verdicts.get(number)
            if verdict is not None:
                alone = linter.decide(table.context, linter.solutions[entry.solution_index], entry.key)
                assert verdict.alive == alone.alive
                assert verdict.alive or verdict.reason == alone.reason  # an alive verdict keeps no reason
                decided += 1
    assert decided > 20 and in_bulk > decided / 2


@pytest.mark.parametrize(
    ("master", "dead_witnesses"), [("aldebaran_NN_mixed.yaml", True), ("navi31_SB_NN.yaml", False)]
)
@pytest.mark.parametrize("span", [1, 64])
@pytest.mark.parametrize("route", ["bulk", "no columns", "batch refused"])
def test_witnesses_in_bulk_answer_as_witness_by_witness(
    master: str, dead_witnesses: bool, span: int, route: str, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a duplicate entry wins leftward, its witnesses asked in rounds of array passes and
    batch selections: the answer of asking each witness in turn, nearest first (its first
    passing problem, :meth:`Linter.decide`, and the compiled library's selection of it); also
    where the witnesses cannot be put in columns (each decided alone) or the batch selection
    refuses them (each selected alone)."""
    from tensilekit.errors import SelectionError
    from tensilekit.lint.rules import Linter, LintOptions, _Duplicate
    from tensilekit.selection.fast import CompiledLibrary

    linter = Linter(load_master(corpus / "masters" / master), options=LintOptions(witness_span=span))
    if route == "no columns":
        monkeypatch.setattr(Linter, "_first_passes", lambda *arguments, **options: None)
    if route == "batch refused":

        def refused(*arguments: Any) -> Any:
            raise SelectionError("a witness the batch cannot evaluate")

        monkeypatch.setattr(CompiledLibrary, "find_batch", refused)
    duplicates = [
        outcome for table in linter.tables for _, outcome in linter._shadowed(table) if isinstance(outcome, _Duplicate)
    ]
    seen: dict[bool | None, int] = {True: 0, False: 0, None: 0}

    def wins(duplicate: _Duplicate) -> bool:
        context = duplicate.table.context
        for key in duplicate.witnesses(1, span):
            verdict = linter.decide(context, duplicate.solution, key)
            seen[verdict.alive] += 1
            if verdict.alive is None:
                return True
            if verdict.alive and verdict.problem is not None:
                found, _ = linter.compiled.find(verdict.problem, context.hardware)
                if found is not None and found.index == duplicate.solution.index:
                    return True
        return False

    expected = [wins(duplicate) for duplicate in duplicates]
    alone: list[int] = []  # witnesses decided one by one: canSolve problem by problem
    decide = linter.decide
    monkeypatch.setattr(
        linter, "decide", lambda *arguments, **options: alone.append(1) or decide(*arguments, **options)
    )
    assert linter._win_leftward(duplicates) == expected
    assert 0 < sum(expected) < len(expected) and seen[True] and bool(seen[False]) == dead_witnesses
    if route != "no columns":  # in bulk, a witness is decided alone only where its kernel fails undecided
        assert len(alone) <= seen[None] < sum(seen.values()) / 10


def test_size_records_are_the_solution_dumps(cases: MasterLibrary) -> None:
    """The size findings dump each kernel with its predicates serialised once per predicate: the
    records equal model_dump's, key order included."""
    from tensilekit.lint.rules import _solution_record

    shared: dict[tuple[str, int], tuple[Any, Any]] = {}
    for solution in cases.solutions:
        expected = solution.model_dump(by_alias=True, exclude_unset=True)
        record = _solution_record(solution, shared)
        assert record == expected and list(record) == list(expected)
    assert 0 < len(shared) < 3 * len(cases.solutions)

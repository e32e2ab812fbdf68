"""The problems a table entry stands for: key sizes, the table's problem type, open fields in the
kernel's favour."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tensilekit.errors import SelectionError
from tensilekit.io.master_io import load_master
from tensilekit.lint.tables import TableContext, entry_problems, key_sizes, problem_base, table_contexts
from tensilekit.model.common import DataType
from tensilekit.model.library import MasterLibrary

CASES = Path(__file__).resolve().parents[3] / "fixtures" / "lint" / "lint_cases_gfx90a.yaml"
NN = "Contraction_l_Ailk_Bljk_Cijk_Dijk"


@pytest.fixture(scope="module")
def cases() -> MasterLibrary:
    return load_master(CASES)


def _context(library: MasterLibrary, operation: str, distance: str) -> TableContext:
    (context,) = [c for c in table_contexts(library) if c.operation == operation and c.node.distance == distance]
    return context


def test_contexts_carry_device_operation_and_rows(cases: MasterLibrary) -> None:
    contexts = table_contexts(cases)
    assert [(c.operation[14:23], c.node.distance) for c in contexts if c.operation] == [
        ("Ailk_Bjlk", "Equality"),
        ("Ailk_Bjlk", "Euclidean"),
        ("Ailk_Bljk", "Euclidean"),
        ("Alik_Bjlk", "GridBased"),
        ("Alik_Bljk", "Equality"),
    ]
    assert {c.hardware.arch for c in contexts} == {"gfx90a"}
    assert [p.type for p in contexts[0].row_predicates][-1] == "EqualityMatching"
    assert [p.type for p in contexts[1].row_predicates][-1] == "TruePred"


def test_entry_problem_from_key_and_table_type(cases: MasterLibrary) -> None:
    context = _context(cases, NN, "Euclidean")
    solutions = cases.solutions_by_index()
    gb_kernel = solutions[606601216 + 4]
    base = problem_base(context, gb_kernel)
    first, *others = list(entry_problems(base, key_sizes(context.node, [256, 256, 64])))
    assert (first.m, first.n, first.k, first.batch) == (256, 256, 64, 1)
    assert first.op_id == "Contraction_l_Ailk_Bljk_Cijk_Dijk"
    assert first.a_type is DataType.FLOAT and not first.hpa
    assert first.strided_batched is False  # open in the table, taken from the kernel
    assert (first.alpha, first.beta) == (1.0, 0.0)
    assert (first.lda, first.ldb, first.ldc) == (256, 64, 256)  # packed
    assert {(p.alpha, p.beta) for p in others} >= {(1.0, 1.0), (-1.0, 0.0)}


def test_batch_left_open_by_the_key_is_tried_as_the_kernel_wants(cases: MasterLibrary) -> None:
    context = _context(cases, NN, "Euclidean")
    wants_batch = cases.solutions_by_index()[606601216 + 5]  # SizeGreaterThan(2, 100)
    base = problem_base(context, wants_batch)
    assert base.batches == (1, 101)
    equality = _context(cases, "Contraction_l_Alik_Bljk_Cijk_Dijk", "Equality")
    sizes = key_sizes(equality.node, [64, 64, 3, 64])
    assert sizes == {"m": 64, "n": 64, "batch": 3, "k": 64}
    with pytest.raises(SelectionError):
        key_sizes(equality.node, [64, 64, 64])
    assert {p.batch for p in entry_problems(base, sizes)} == {3}


def test_a_table_outside_the_gemm_model_is_undecidable(cases: MasterLibrary) -> None:
    context = _context(cases, NN, "Euclidean")
    kernel = cases.solutions_by_index()[606601216]
    odd = TableContext(context.path, context.node, context.hardware, "Contraction_k_Aik_Bkj_Cij_Dij", ())
    with pytest.raises(SelectionError):
        problem_base(odd, kernel)


def test_a_resized_template_is_its_model_copy() -> None:
    """entry_problems copies templates without pydantic's generic copy (model.common.copied_with):
    same fields, same set of given fields, same problem, and a GemmProblem still (hash, equality,
    frozen)."""
    from tensilekit.model.common import copied_with
    from tensilekit.selection.problem import GemmProblem, contraction_problem

    template = GemmProblem(m=1, n=1, k=1, trans_a="T", alpha=-1.0, beta=0.5, ldc=4096)
    update = {"m": 640, "n": 128, "k": 77, "batch": 3}
    copied, expected = copied_with(template, update), template.model_copy(update=update)
    assert copied == expected and hash(copied) == hash(expected)
    assert copied.model_fields_set == expected.model_fields_set
    assert copied.model_dump() == expected.model_dump()
    assert contraction_problem(copied) == contraction_problem(expected)
    assert template.m == 1  # the template is left alone
    with pytest.raises(ValueError):
        copied.m = 2  # type: ignore[misc]


def test_entry_problems_equal_a_model_copy_per_problem_even_interleaved(cases: MasterLibrary) -> None:
    """entry_problems builds each problem on one scratch copy of each template: what it yields is
    what a copy per problem gives, also when two generators of one base take turns."""
    from tensilekit.model.common import copied_with
    from tensilekit.selection.problem import contraction_problem

    context = _context(cases, NN, "Euclidean")
    base = problem_base(context, cases.solutions_by_index()[606601216 + 5])  # batches (1, 101)

    def expected(sizes: dict[str, int]) -> list[object]:
        return [
            contraction_problem(copied_with(template, {**sizes, "batch": batch}))
            for batch in base.batches
            for template in base.templates
        ]

    small, large = key_sizes(context.node, [64, 32, 16]), key_sizes(context.node, [4096, 2048, 999])
    taking_turns = [
        problem
        for pair in zip(entry_problems(base, small), entry_problems(base, large), strict=True)
        for problem in pair
    ]
    assert taking_turns[0::2] == expected(small) and taking_turns[1::2] == expected(large)
    assert len(taking_turns) == 2 * len(base.batches) * len(base.templates) > 4
    assert all(template.m == template.n == template.k == 1 for template in base.templates)  # left alone


def test_problem_bases_answer_as_problem_base_and_share_templates(cases: MasterLibrary) -> None:
    from tensilekit.lint.tables import ProblemBases

    bases = ProblemBases()
    made: list[tuple[object, ...]] = []
    for context in table_contexts(cases):
        for solution in cases.solutions:
            try:
                expected = problem_base(context, solution)
            except SelectionError as error:
                with pytest.raises(SelectionError, match=re.escape(str(error))):
                    bases.of(context, solution)
                continue
            shared = bases.of(context, solution)
            assert shared == expected
            made.append(shared.templates)
    assert len(made) > 20
    assert len({id(template) for templates in made for template in templates}) < sum(map(len, made)) / 2


def test_entry_columns_hold_the_entry_problems(cases: MasterLibrary) -> None:
    """The bulk table pass reads an entry's problems as columns: each row (as objects and column by
    column) is the problem entry_problems builds, in its order, with or without a batch in the key."""
    from tensilekit.lint.tables import entry_columns, key_fields, problems_per_key, template_columns
    from tensilekit.selection.columns import PROBLEM_COLUMNS

    compared = 0
    for context in table_contexts(cases):
        fields = key_fields(context.node)
        keys = [tuple(entry.key) for entry in context.node.table] + [(2**31 - 2, *context.node.table[0].key[1:])]
        for solution in cases.solutions:
            try:
                base = problem_base(context, solution)
            except SelectionError:
                continue
            columns = entry_columns(base, fields, keys, template_columns(base, context.hardware), context.hardware)
            assert columns is not None
            expected = [problem for key in keys for problem in entry_problems(base, key_sizes(context.node, key))]
            assert len(expected) == columns.size == len(keys) * problems_per_key(base, fields)
            assert [columns.row(i)[0] for i in range(columns.size)] == expected
            for name, _ in PROBLEM_COLUMNS:
                values = [getattr(value, "value", value) for value in (getattr(p, name) for p in expected)]
                assert getattr(columns, name).tolist() == values, name
            compared += columns.size
        too_large = [(2**31, *context.node.table[0].key[1:])]
        assert (
            entry_columns(base, fields, too_large, template_columns(base, context.hardware), context.hardware) is None
        )
    assert compared > 100

"""The compiled path: scans, columns and batches agree with the literal C++ loop and the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from selection_factory import GFX90A, gemm, master, matching, predicate, solution

from tensilekit.selection import (
    GemmProblem,
    Hardware,
    ProblemColumns,
    compile_library,
    contraction_problem,
    select_batch,
    select_solution,
)
from tensilekit.selection.columns import PROBLEM_COLUMNS
from tensilekit.selection.distance import euclidean_bound, euclidean_distance, manhattan_bound, manhattan_distance
from tensilekit.selection.fast import _lexicographic_codes, _query_codes, _unique_rows
from tensilekit.selection.scan import Band, Usable, nearest_many, nearest_one, scan_many, scan_one


def _random_table(rng: np.random.Generator, size: int, spread: int) -> tuple[np.ndarray, np.ndarray]:
    keys = rng.integers(1, spread, size=(size, 3))
    speeds = rng.choice([0.0, 1.0, 2.0, 5.0], size=size)  # few speeds: many ties
    order = np.lexsort((-speeds, keys[:, 2], keys[:, 1], keys[:, 0]))
    return keys[order].astype(np.int64), speeds[order].astype(np.float64)


@pytest.mark.parametrize("squared", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_closed_forms_match_the_literal_scan(seed: int, squared: bool) -> None:
    rng = np.random.default_rng(seed)
    keys, speeds = _random_table(rng, int(rng.integers(1, 300)), int(rng.choice([4, 12, 60])))
    band = Band(keys, speeds)
    usable = Usable(band, rng.random(len(keys)) < 0.7)
    _assert_every_scan_agrees(band, usable, rng.integers(0, 70, size=(200, 3)).astype(np.int64), squared)


@pytest.mark.parametrize("squared", [True, False])
@pytest.mark.parametrize("copies", [3, 7, 40, 60])
def test_crowded_ties_match_the_literal_scan(copies: int, squared: bool) -> None:
    """Queries a step from keys repeated in many entries (lint's shadowing witnesses): all of the
    tree's first neighbours tie, then all of its second round's (60 copies), and the choice
    among them is still the C++ scan's."""
    rng = np.random.default_rng(copies)
    centres = rng.integers(10, 60, size=(8, 3))
    keys = np.concatenate([np.repeat(centres, copies, axis=0), rng.integers(1, 70, size=(40, 3))])
    speeds = rng.choice([1.0, 2.0, 5.0], size=len(keys))
    order = np.lexsort((-speeds, keys[:, 2], keys[:, 1], keys[:, 0]))
    band = Band(keys[order].astype(np.int64), speeds[order].astype(np.float64))
    usable = Usable(band, rng.random(len(keys)) < 0.9)
    steps = rng.integers(-3, 4, size=(len(centres) * 12, 3)) * (rng.random((len(centres) * 12, 3)) < 0.4)
    _assert_every_scan_agrees(band, usable, (np.repeat(centres, 12, axis=0) + steps).astype(np.int64), squared)


def _assert_every_scan_agrees(band: Band, usable: Usable, queries: np.ndarray, squared: bool) -> None:
    """nearest_one, nearest_many (tree and windowed scan) and scan_many answer ``queries`` as the
    literal scan (scan_one) over the usable entries."""
    keys, speeds = band.keys, band.speeds
    sub_keys = [tuple(row) for row in keys[usable.mask].tolist()]
    sub_speeds = speeds[usable.mask].tolist()
    table_keys = [tuple(row) for row in keys.tolist()]
    import bisect

    starts = np.array([bisect.bisect_left(table_keys, tuple(q)) for q in queries.tolist()], dtype=np.int64)
    distance, bound = (euclidean_distance, euclidean_bound) if squared else (manhattan_distance, manhattan_bound)
    expected = []
    for query in queries.tolist():
        position, best = scan_one(sub_keys, sub_speeds, tuple(query), distance, bound)
        expected.append((-1 if position < 0 else int(usable.positions[position]), best))
    one = [nearest_one(band, usable, tuple(q), squared) for q in queries.tolist()]
    assert one == expected
    for use_tree in (True, False):
        positions, bests = nearest_many(band, usable, queries, lambda rows: starts[rows], squared, use_tree=use_tree)
        assert list(zip(positions.tolist(), bests.tolist(), strict=True)) == expected
    window_positions, window_bests = scan_many(
        keys[usable.mask], speeds[usable.mask], usable.before[starts], queries, squared, window=2
    )
    mapped = [
        (-1 if p < 0 else int(usable.positions[p]), b)
        for p, b in zip(window_positions.tolist(), window_bests.tolist(), strict=True)
    ]
    assert mapped == expected


def test_lexicographic_codes_order_like_tuples() -> None:
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 20, size=(200, 3)), axis=0)
    codes, uniques = _lexicographic_codes(keys)
    assert codes is not None and (np.diff(codes) > 0).all()
    queries = rng.integers(-2, 23, size=(300, 3))
    table = [tuple(row) for row in keys.tolist()]
    import bisect

    expected = [bisect.bisect_left(table, tuple(q)) for q in queries.tolist()]
    assert np.searchsorted(codes, _query_codes(uniques, queries)).tolist() == expected


def test_unique_rows_numbers_bits_like_the_scalar_signature() -> None:
    bits = np.array([[True, False, True], [False, False, False], [True, False, True]])
    signatures, inverse = _unique_rows(bits)
    assert [signatures[i] for i in inverse] == [5, 0, 5]
    wide = np.zeros((2, 70), dtype=bool)
    wide[0, 69] = True
    signatures, inverse = _unique_rows(wide)
    assert sorted(signatures) == [0, 1 << 69]


def test_unique_rows_over_64_atoms_group_each_row_under_its_own_bits() -> None:
    rng = np.random.default_rng(7)
    bits = rng.random((400, 130)) < 0.02  # sparse: many rows repeat
    bits[::3] = bits[0]
    signatures, inverse = _unique_rows(bits)
    assert len(set(signatures)) == len(signatures)
    for row, group in zip(bits, inverse.tolist(), strict=True):
        assert signatures[group] == sum(1 << column for column in np.flatnonzero(row).tolist())


def test_columns_from_arrays_equal_columns_from_problems() -> None:
    problems = [
        GemmProblem(m=5, n=7, k=9, trans_a="T", a_type="Half", compute_type="Float", alpha=0.0, beta=-1.0),
        GemmProblem(m=1, n=1, k=0, trans_b="C", a_type="ComplexFloat"),
        GemmProblem(m=300000, n=2, k=3, batch=4, a_type="Int8x4", c_type="Int32", compute_type="Int32"),
    ]
    hardware = Hardware(arch="gfx90a", cu_count=104)
    from_problems = ProblemColumns.from_problems(problems, hardware)
    from_arrays = ProblemColumns.from_arrays(
        m=[5, 1, 300000], n=[7, 1, 2], k=[9, 0, 3], batch=[1, 1, 4], trans_a=np.array(["T", "N", "N"]),
        trans_b=np.array(["N", "C", "N"]), a_type=np.array(["Half", "ComplexFloat", "Int8x4"]),
        c_type=np.array(["Half", "ComplexFloat", "Int32"]), compute_type=np.array(["Float", "ComplexFloat", "Int32"]),
        alpha=np.array([0.0, 1.0, 1.0]), beta=np.array([-1.0, 0.0, 0.0]), arch="gfx90a", cu_count=104,
    )  # fmt: skip
    for name, _ in PROBLEM_COLUMNS:
        assert getattr(from_problems, name).tolist() == getattr(from_arrays, name).tolist(), name
    assert from_problems.flop_count.tolist() == [p.flop_count for p, _ in (from_problems.row(i) for i in range(3))]
    assert np.allclose(
        from_arrays.arithmetic_intensity, [from_problems.row(i)[0].arithmetic_intensity for i in range(3)]
    )
    assert from_arrays.row(0)[0] == from_problems.row(0)[0]
    assert from_arrays.row(0)[1].wavefront == from_problems.row(0)[1].wavefront


def _gemm_problems(seed: int, types: int) -> list[GemmProblem]:
    """Problems of ``types`` problem types (at most 18), with sizes, scalars, leading dimensions,
    strides and workspaces given or left out at random, and hipBLASLt problems among them."""
    import random

    from tensilekit.selection.hipblaslt import hipblaslt_problem

    rng = random.Random(seed)
    kinds = [(ta, tb, t) for ta in "NTC" for tb in "NTC" for t in ("Float", "Half")][:types]
    problems = []
    for number in range(300):
        m, n, k = (rng.choice([0, 1, rng.randint(1, 70000)]) for _ in range(3))
        if number % 5 == 0:
            workspace = rng.choice([None, 2**25])
            problems.append(hipblaslt_problem(m, n, k, a_type="Half", compute_type="f32", workspace_size=workspace))
            continue
        trans_a, trans_b, data = rng.choice(kinds)
        given = {name: rng.randint(70000, 90000) for name in ("lda", "ldc", "stride_b") if rng.random() < 0.3}
        problems.append(
            GemmProblem(
                m=m, n=n, k=k, batch=rng.choice([1, 4]), trans_a=trans_a, trans_b=trans_b, a_type=data,
                alpha=rng.choice([0.0, 1.0, -1.0, 2.5]), beta=rng.choice([0.0, 1.0]),
                workspace_size=rng.choice([None, 1024]), **given,
            )
        )  # fmt: skip
    return problems


@pytest.mark.parametrize("rocblas_k0", [False, True])
@pytest.mark.parametrize(("seed", "types"), [(0, 1), (1, 4), (2, 18)])
def test_columns_of_gemm_problems_equal_columns_of_their_contraction_problems(
    seed: int, types: int, rocblas_k0: bool
) -> None:
    """GemmProblems become columns per problem type (issue 33), as each ContractionProblem would."""

    problems = _gemm_problems(seed, types)
    devices = [Hardware(arch="gfx90a", cu_count=104), Hardware(arch="gfx942")]
    for hardware in (devices[0], [devices[i % 2] for i in range(len(problems))]):
        fast = ProblemColumns.from_problems(problems, hardware, rocblas_k0=rocblas_k0)
        each = ProblemColumns.from_problems([contraction_problem(p, rocblas_k0=rocblas_k0) for p in problems], hardware)
        assert sorted(fast.names()) == sorted(each.names())
        for name in each.names():
            column = getattr(each, name)
            assert getattr(fast, name).dtype == column.dtype, name
            assert getattr(fast, name).tolist() == column.tolist(), name
            positions = np.arange(len(problems))[::7]  # a subset, as a view of the batch reads it
            assert fast.gather(name, positions).tolist() == column[positions].tolist(), name
        assert [fast.row(i) for i in (0, 5, 299)] == [each.row(i) for i in (0, 5, 299)]


def test_columns_of_gemm_problems_read_a_slice_at_a_time_equal_those_read_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch rows are joined a slice of problems at a time; slices that end anywhere (one
    holding problems copied without validation, whose rows are made when read) give the columns
    the whole batch read at once gives."""
    from tensilekit.selection import columns as columns_module

    problems = _gemm_problems(1, 4)
    problems[8] = problems[8].model_copy(update={"m": 3})  # no row of its validation
    at_once = ProblemColumns.from_problems(problems, GFX90A)
    monkeypatch.setattr(columns_module, "_ROWS_AT_ONCE", 7)
    in_slices = ProblemColumns.from_problems(problems, GFX90A)
    assert in_slices.m.tolist()[8] == 3
    for name in at_once.names():
        assert getattr(in_slices, name).tolist() == getattr(at_once, name).tolist(), name


def test_columns_of_a_gemm_problem_past_int64_strides_take_the_per_query_path() -> None:
    from tensilekit.errors import SelectionError

    wide = [GemmProblem(m=2**40, n=2**30, k=1), GemmProblem(m=1, n=1, k=1)]
    with pytest.raises(SelectionError, match="int64"):
        ProblemColumns.from_problems(wide, GFX90A)
    given = [GemmProblem(m=2**40, n=2**30, k=1, ldc=2**40, stride_c=1, stride_d=1, stride_a=1)]
    assert ProblemColumns.from_problems(given, GFX90A).ldc.tolist() == [2**40]


def test_batch_reports_unanswerable_queries() -> None:
    stream_k = {"sizeMapping": {"streamK": 3, "workspaceSizePerElemC": 4, "macroTile": [64, 64, 1]}}
    library = master([solution(1, task={"type": "WorkspaceCheck"}, **stream_k)], matching([([8, 8, 8], 1, 1.0)]))
    problems = [gemm(8, 8, 8), gemm(9, 9, 9)]
    answers = select_batch(library, problems, [Hardware(arch="gfx90a"), Hardware(arch="gfx90a", cu_count=104)])
    assert 0 in answers.errors and "CU count" in answers.errors[0]
    assert answers[1].index == 1 and answers.indices.tolist() == [-1, 1]


def test_batch_items_and_names() -> None:
    library = master(
        [solution(1, name="alpha"), solution(2, name="beta")], matching([([8, 8, 8], 1, 1.0), ([50, 50, 50], 2, 1.0)])
    )
    compiled = compile_library(library)
    answers = select_batch(compiled, [gemm(8, 8, 8), gemm(60, 60, 60), gemm(8, 8, 8, trans_b="T")], GFX90A)
    assert answers.names == ["alpha", "beta", None]
    assert [s.index for s in answers] == [1, 2, None]
    assert answers[1].distance == 300.0
    assert len(answers) == 3
    assert select_solution(compiled, gemm(8, 8, 8), GFX90A).name == "alpha"


def test_a_problem_carries_its_batch_row_outside_its_fields() -> None:
    """The row a batch reads (issue 33) is made by the validation and is no field: equality, hash,
    dump and pickling ignore it; a copy made without validation is read as it is now."""
    import pickle

    from tensilekit.selection.problem import BATCH_ROW, batch_row, known_batch_row, problem_type_number

    problem = GemmProblem(m=3, n=4, k=5, lda=7, alpha=2.5, workspace_size=64, a_type="Half")
    twin = GemmProblem(m=3, n=4, k=5, lda=7, alpha=2.5, workspace_size=64, a_type="Half")
    assert known_batch_row(problem) == batch_row(problem)
    assert BATCH_ROW.unpack(known_batch_row(problem)) == (
        3, 4, 5, 1, 7, -1, -1, -1, -1, -1, -1, -1, 64, 2.5, 0.0, problem_type_number(problem)
    )  # fmt: skip
    assert problem == twin and hash(problem) == hash(twin) and "__tensilekit_batch_row__" not in problem.model_dump()
    assert problem_type_number(problem) == problem_type_number(GemmProblem(m=9, n=1, k=1, a_type="Half"))
    assert problem_type_number(problem) != problem_type_number(GemmProblem(m=3, n=4, k=5, a_type="Half", trans_a="T"))
    copied = problem.model_copy(update={"m": 30, "trans_b": "T"})
    for made_without_row in (copied, pickle.loads(pickle.dumps(problem))):
        with pytest.raises(AttributeError):
            known_batch_row(made_without_row)
    problems = [*_gemm_problems(3, 4)[:50], copied, problem]
    fast = ProblemColumns.from_problems(problems, GFX90A)
    each = ProblemColumns.from_problems([contraction_problem(p) for p in problems], GFX90A)
    for name in each.names():
        assert getattr(fast, name).tolist() == getattr(each, name).tolist(), name


def test_unique_rows_of_few_and_more_atoms_agree_with_their_bits() -> None:
    rng = np.random.default_rng(11)
    for width in (12, 16, 17, 40):  # counted up to 16 atoms, sorted past them
        bits = rng.random((300, width)) < 0.3
        bits[::4] = bits[1]
        signatures, inverse = _unique_rows(bits)
        assert signatures == sorted(set(signatures))
        for row, group in zip(bits, inverse.tolist(), strict=True):
            assert signatures[group] == sum(1 << column for column in np.flatnonzero(row).tolist())


def test_batch_of_one_device_or_many_answers_each_query_as_alone() -> None:
    """A row predicate of the device (and problem type) is evaluated once per problem type when the
    batch has one device, per query otherwise: the answers are each query's own."""
    library = master(
        [solution(1), solution(2)],
        matching([([8, 8, 8], 1, 1.0), ([500, 500, 500], 2, 1.0)], distance="GridBased"),
        hardware_predicate={
            "type": "And",
            "value": [
                {"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx90a"}},
                {"type": "AMDGPU", "value": {"type": "CUCount", "value": 104}},
            ],
        },
    )
    compiled = compile_library(library)
    problems = [*_gemm_problems(5, 4)[:60], *(GemmProblem(m=m, n=7, k=9, beta=1.0) for m in (1, 300, 9000))]
    devices = [GFX90A, Hardware(arch="gfx90a", cu_count=110), Hardware(arch="gfx942", cu_count=104)]
    for hardware in (*devices, [devices[i % 3] for i in range(len(problems))]):
        each = hardware if isinstance(hardware, list) else [hardware] * len(problems)
        answers = select_batch(compiled, problems, hardware)
        expected = [select_solution(compiled, p, d) for p, d in zip(problems, each, strict=True)]
        # (a NaN distance, of an M or N of 0, is None in a batch: as before issue 33)
        assert [(a.index, a.distance) for a in answers] == [
            (e.index, None if e.distance is None or math.isnan(e.distance) else e.distance) for e in expected
        ]
        assert any(a.index is not None for a in answers) == (hardware is not devices[1] and hardware is not devices[2])


_OFFSET_CHECKS = [
    {"type": "BufferLoadOffsetLimitCheck", "value": {"DUorMT0": 512, "DUorMT1": 64, "ShiftPtrElemA": 16, "ShiftPtrElemB": 0}},
    {"type": "BufferStoreOffsetLimitCheck", "value": 256},
    {"type": "BufferLoadOffsetLimitCheck_Beta", "value": 64},
]  # fmt: skip


@pytest.mark.parametrize("check", _OFFSET_CHECKS, ids=lambda check: str(check["type"]))
@pytest.mark.parametrize("seed", range(4))
def test_an_offset_check_said_to_hold_for_a_batch_holds_for_each_query(check: dict[str, object], seed: int) -> None:
    """A buffer offset check skipped for a batch (``Atom.holds_for_all`` on the batch's column
    bounds) holds for every query of the batch and of each view of it, sizes near 2**32 included;
    for small sizes it is skipped."""
    from tensilekit.selection.kernels import compile_atom

    atom = compile_atom(predicate(check))
    assert atom.offsets
    rng = np.random.default_rng(seed)
    skipped = 0
    for largest in (2**12, 2**20, 2**23, 2**26, 2**40):
        count = 64
        sizes = rng.integers(1, largest, size=(3, count))
        kinds = rng.choice(["Half", "Float", "Double"], size=count)
        columns = ProblemColumns.from_arrays(
            m=sizes[0], n=sizes[1], k=sizes[2], trans_a=rng.choice(["N", "T"], size=count), a_type=kinds,
            arch="gfx90a", beta=rng.choice([0.0, 1.0], size=count),
        )  # fmt: skip
        for view in (columns, columns.take(np.flatnonzero(rng.random(count) < 0.5))):
            if atom.holds_for_all(view.largest):
                skipped += 1
                assert atom.vector(view).all(), (check, largest)
    assert skipped >= 2  # the small sizes are always skipped

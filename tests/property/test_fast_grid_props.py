"""The compiled fast paths on the largest hipBLASLt master answer as the reference walk (issue 25).

* the one-query cell walk and the batch cell walks (by lookup, and step by step) of every ``GridBased`` table find what the
  literal transcription of ``findBestKeyMatch_GridBased`` (``_GridTable.walk``) finds, for random
  keys and random usable masks (none, few, all usable);
* ``select_batch`` (workspace checks read as one rank, operations split without sorting) gives
  every random query the kernel and distance ``select_solution`` gives it, and the reference walk.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensilekit
from tensilekit.selection import Hardware, ProblemColumns, compile_library, select_batch, select_solution
from tensilekit.selection.fast import CompiledLibrary, _GridTable, _LazyTable, _Map, _Rows

pytestmark = [pytest.mark.corpus]

_MASTER = "masters-hipblaslt/hipblaslt_gfx942_grid.dat"
_DEVICE = Hardware(arch="gfx942", cu_count=304)


@pytest.fixture(scope="module")
def compiled(corpus: Path) -> CompiledLibrary:
    path = corpus / _MASTER
    if not path.exists():
        pytest.skip(f"{_MASTER} is not in this corpus")
    return compile_library(tensilekit.load_master(path))


def _grid_tables(library: CompiledLibrary) -> list[_GridTable]:
    found: list[_GridTable] = []
    pending: list[Any] = [library.root]
    while pending:
        node = pending.pop()
        if isinstance(node, _Rows):
            pending.extend(child for _, child in node.rows)
        elif isinstance(node, _Map):
            pending.extend(node.children.values())
        elif isinstance(node, _LazyTable) and node.grid:
            table = node._get(library)
            assert isinstance(table, _GridTable)
            found.append(table)
    return found


def _same(first: tuple[int, float], second: tuple[int, float]) -> bool:
    return first[0] == second[0] and (first[1] == second[1] or (math.isnan(first[1]) and math.isnan(second[1])))


def test_cell_walks_find_what_the_literal_walk_finds(compiled: CompiledLibrary) -> None:
    rng = np.random.default_rng(25)
    tables = _grid_tables(compiled)
    assert tables, "the master has GridBased tables"
    for table in tables:
        entries = np.array(table.key_list, dtype=np.int64)
        for density in (0.0, 0.02, 0.3, 1.0):
            masks = rng.random((3, len(entries))) < density
            near = entries[rng.integers(0, len(entries), 40)] + rng.integers(-2, 3, (40, entries.shape[1]))
            wide = rng.integers(0, 70_000, (40, entries.shape[1]))
            keys = np.maximum(np.concatenate([near, wide, np.zeros((1, entries.shape[1]), np.int64)]), 0)
            groups = rng.integers(0, len(masks), len(keys))
            batch_best, batch_distance = table._walk_cells_many(keys, masks, groups)
            # the step-by-step walk (what a query whose cell is at no finite distance goes on with)
            step_best, step_distance = table._walk_cells_stepwise(keys, masks, groups)
            for number, mask in enumerate(masks):
                signature = -1 - number  # a private cache slot for this mask
                table.masks[signature] = mask.tolist()
                tables_of_mask = table.walk_tables(signature)
                for row in np.flatnonzero(groups == number).tolist():
                    key = tuple(keys[row].tolist())
                    literal = table.walk(key, mask.tolist())
                    assert _same(table.cell_walk(key, tables_of_mask), literal), key
                    assert _same((int(batch_best[row]), float(batch_distance[row])), literal), key
                    assert _same((int(step_best[row]), float(step_distance[row])), literal), key
                table.masks.pop(signature)
                table.walks.pop(signature)


def _hipblaslt_types(library: Any) -> list[dict[str, Any]]:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for solution in library.solutions:
        kind = solution.problem_type or {}
        fields = {
            "trans_a": "T" if kind.get("transA") else "N",
            "trans_b": "T" if kind.get("transB") else "N",
            "a_type": kind["aType"],
            "b_type": kind["bType"],
            "c_type": kind["cType"],
            "d_type": kind["dType"],
            "compute_type": kind.get("computeType", "Float"),
            "compute_input_type": kind.get("computeInputType"),
        }
        seen.setdefault(tuple(fields.values()), fields)
    return list(seen.values())


def test_batch_answers_equal_single_queries_and_the_reference(compiled: CompiledLibrary) -> None:
    rng = np.random.default_rng(9)
    count = 240
    types = _hipblaslt_types(compiled.library)
    choice = rng.integers(0, len(types), count)
    sizes = np.exp(rng.uniform(0.0, np.log(70_000.0), (count, 3))).astype(np.int64).clip(1, 70_000)
    # M and K at and beside the values the kernels' `m >= v` and GSU `k >= v` checks name (a
    # batch reads each family of them as one rank)
    edge = rng.random(count) < 0.4
    sizes[edge, 0] = rng.choice([1, 2, 4, 8, 16], int(edge.sum())) + rng.integers(-1, 2, int(edge.sum()))
    sizes[edge, 2] = 32 * rng.integers(1, 71, int(edge.sum())) + rng.integers(-1, 2, int(edge.sum()))
    sizes = sizes.clip(1, 70_000)
    # workspaces from none to unlimited: each workspace check passes for a different prefix of needs
    workspaces = rng.choice(np.array([0, 1 << 20, 32 << 20, 1 << 40, 2**64 - 1], dtype=np.uint64), count)
    arrays: dict[str, Any] = {
        "m": sizes[:, 0],
        "n": sizes[:, 1],
        "k": sizes[:, 2],
        "batch": np.where(rng.random(count) < 0.8, 1, rng.choice([2, 4, 64], count)),
        "alpha": 1.0,
        "beta": rng.choice([0.0, 1.0], count),
        "workspace_size": workspaces,
    }
    for name in ("trans_a", "trans_b", "a_type", "b_type", "c_type", "d_type", "compute_type", "compute_input_type"):
        arrays[name] = np.array([types[c][name] for c in choice])
    columns = ProblemColumns.from_arrays(**arrays, arch=_DEVICE.arch, cu_count=_DEVICE.cu_count)
    batch = select_batch(compiled, columns)
    answered = 0
    for position in range(count):
        problem, device = columns.row(position)
        one = select_solution(compiled, problem, device)
        reference = select_solution(compiled.reference, problem, device)
        assert (one.index, one.distance) == (reference.index, reference.distance), position
        got = batch[position]
        assert (got.index, got.distance) == (one.index, one.distance), position
        answered += one.index is not None
    assert answered > count // 4  # the queries reach the tables


def test_batch_of_gemm_problems_equals_single_queries(compiled: CompiledLibrary) -> None:
    """``select_batch`` of GemmProblems (read per problem type; predicates of the type alone
    evaluated once per type, operations split by type) answers each query as ``select_solution``:
    served and unserved types, epilogues (a bias, an activation), given leading dimensions, no
    workspace to unlimited, misses included."""
    from tensilekit.selection import GemmProblem
    from tensilekit.selection.hipblaslt import hipblaslt_problem
    from tensilekit.selection.problem import HipblasltFields

    rng = np.random.default_rng(33)
    count = 300
    types = _hipblaslt_types(compiled.library) + [
        {"trans_a": "N", "trans_b": "T", "a_type": "Half", "b_type": "Half", "c_type": "Half", "d_type": "Half",
         "compute_type": "Float", "compute_input_type": None},
    ]  # fmt: skip
    # a forced GSU: the GSU `k >= v` checks of its batch evaluated one by one
    epilogues = [
        None, HipblasltFields(use_bias=1, bias_type="Float"), HipblasltFields(activation_type="Relu"),
        HipblasltFields(gsu=2),
    ]  # fmt: skip
    workspaces = [0, 1 << 20, 32 << 20, None]
    problems: list[GemmProblem] = []
    for position in range(count):
        kind = types[int(rng.integers(len(types)))]
        m, n, k = (int(x) for x in np.exp(rng.uniform(0.0, np.log(70_000.0), 3)).astype(np.int64).clip(1, 70_000))
        problems.append(
            hipblaslt_problem(
                m, n, k, batch=int(rng.choice([1, 1, 1, 4])), trans_a=kind["trans_a"], trans_b=kind["trans_b"],
                a_type=kind["a_type"], b_type=kind["b_type"], c_type=kind["c_type"], d_type=kind["d_type"],
                compute_input=kind["compute_input_type"], workspace_size=workspaces[position % 4],
                lda=None if position % 7 else m + k + 64, beta=float(rng.choice([0.0, 1.0])),
                epilogue=epilogues[position % 4 if position % 5 == 0 else 0],
            )
        )  # fmt: skip
    batch = select_batch(compiled, problems, _DEVICE)
    answered = 0
    for position, problem in enumerate(problems):
        one = select_solution(compiled, problem, _DEVICE)
        assert (batch[position].index, batch[position].distance) == (one.index, one.distance), position
        answered += one.index is not None
    assert count // 4 < answered < count  # the queries reach the tables, and some find nothing


def _row_signatures(table: _GridTable, columns: Any) -> dict[int, int]:
    grouped = table._grouped(columns)
    assert grouped is not None
    rows, signatures, inverse = grouped
    return dict(zip(rows.tolist(), [signatures[group] for group in inverse.tolist()], strict=True))


def test_threshold_families_group_queries_as_their_atoms_one_by_one(
    compiled: CompiledLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table's `m >= v` and GSU `k >= v` checks, read as one rank per family, give every query
    the signature evaluating each check gives it: M and K at the checks' values and beside them;
    a batch with a forced GSU (the GSU checks' guard) evaluates them one by one."""
    from tensilekit.selection.hipblaslt import hipblaslt_problem
    from tensilekit.selection.problem import HipblasltFields

    rng = np.random.default_rng(5)
    types = _hipblaslt_types(compiled.library)
    problems = []
    for position in range(200):
        kind = types[position % len(types)]
        m = int(rng.choice([1, 2, 4, 8, 16, 300])) + int(rng.integers(-1, 2))
        k = 32 * int(rng.integers(1, 71)) + int(rng.integers(-1, 2))
        problems.append(
            hipblaslt_problem(
                max(m, 1), int(rng.integers(1, 5000)), k, trans_a=kind["trans_a"], trans_b=kind["trans_b"],
                a_type=kind["a_type"], b_type=kind["b_type"], c_type=kind["c_type"], d_type=kind["d_type"],
                compute_input=kind["compute_input_type"], workspace_size=32 << 20,
                epilogue=HipblasltFields(gsu=2) if position % 9 == 0 else None,
            )
        )  # fmt: skip
    tables = [table for table in _grid_tables(compiled) if table.families]
    assert tables, "a table has families of threshold checks"
    for batch in (problems, [p for number, p in enumerate(problems) if number % 9]):
        for table in tables:
            ranked = _row_signatures(table, ProblemColumns.from_problems(batch, _DEVICE))
            with monkeypatch.context() as patch:
                patch.setattr(table, "families", [])
                assert ranked == _row_signatures(table, ProblemColumns.from_problems(batch, _DEVICE))

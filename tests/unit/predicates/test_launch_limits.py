"""tensilelite 5.x (2026) task predicates and predicates tensilekit does not model.

``LaunchLimits`` (rocm-libraries ``projects/hipblaslt/tensilelite/include/Tensile/
ContractionTaskPredicates.hpp`` @1ea8c64f53e4): a non-Stream-K kernel's launch grid, workgroup
threads × tiles × batch × GSU, must fit in ``uint32_t``. The boundary cases mirror AMD's own
``LaunchLimitsTest.NonStreamKUsesGsuAndPhysicalAxes`` (a 256-thread 16×16 tile kernel:
``UINT32_MAX / 256`` tiles fit, one more does not; GSU 2 doubles the grid). A predicate type
nothing defines loads as an :class:`UnmodelledPredicate` and never holds, with a reason naming it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tensilekit.errors import SelectionError
from tensilekit.model.predicates import UnmodelledPredicate, intern_predicate, unmodelled_types
from tensilekit.model.solution import MasterSolution
from tensilekit.predicates.evaluate import MAX_LAUNCH_WORK_ITEMS, evaluate, lite_auto_gsu
from tensilekit.selection.kernels import compile_atom
from tensilekit.selection.problem import (
    ContractionProblem,
    GemmProblem,
    Hardware,
    HipblasltFields,
    contraction_problem,
)

GFX950 = Hardware(arch="gfx950", cu_count=256)
LAUNCH_LIMITS = intern_predicate({"type": "LaunchLimits"})
LIMIT = MAX_LAUNCH_WORK_ITEMS // 256  # tiles a 256-thread kernel may launch


def solution(**size_mapping: Any) -> MasterSolution:
    mapping = {"workGroup": [256, 1, 1], "macroTile": [16, 16, 1], "depthU": 32, "globalSplitU": 1, "streamK": 0}
    mapping.update(size_mapping)
    return MasterSolution.model_validate(
        {"index": 0, "taskPredicate": {"type": "LaunchLimits"}, "sizeMapping": mapping,
         "problemType": {"computeInputType": "BFloat16"}}
    )  # fmt: skip


def problem(tiles_x: int, tiles_y: int = 1, batch: int = 1, gsu: int = 0, k: int = 48) -> ContractionProblem:
    return contraction_problem(
        GemmProblem(m=tiles_x * 16, n=tiles_y * 16, k=k, batch=batch, hipblaslt=HipblasltFields(gsu=gsu))
    )


@pytest.mark.parametrize(
    ("tiles", "mapping", "gsu", "fits"),
    [
        ((LIMIT, 1, 1), {}, 0, True),  # LaunchLimitsTest: the largest grid that fits
        ((LIMIT + 1, 1, 1), {}, 0, False),  # one tile more overflows
        ((LIMIT, 2, 1), {}, 0, False),  # both axes count (version >= 1 flattens them into X)
        ((1, 1, LIMIT + 1), {}, 0, False),  # the batch multiplies the grid
        ((1 << 23, 1, 1), {}, 2, False),  # a forced GSU of 2: 2^24 workgroups x 256 threads
        ((1 << 23, 1, 1), {"globalSplitU": 2}, 0, False),  # the solution's GSU
        ((1 << 23, 1, 1), {"workGroup": [64, 1, 1], "globalSplitU": 2}, 0, True),  # fewer threads
        ((LIMIT + 1, 1, 1), {"streamK": 3}, 0, True),  # Stream-K: bounded by the grid predictor
    ],
)
def test_launch_limits_bounds_the_work_items(
    tiles: tuple[int, int, int], mapping: dict[str, Any], gsu: int, fits: bool
) -> None:
    kernel = solution(**mapping)
    query = problem(*tiles, gsu=gsu)
    verdict = evaluate(LAUNCH_LIMITS, query, GFX950, solution=kernel)
    assert verdict.passed is fits
    assert verdict.reason.startswith("LaunchLimits")
    # the compiled selector's atom answers as the reference evaluator does
    assert compile_atom(LAUNCH_LIMITS, kernel).scalar(query, GFX950) is fits


def test_auto_gsu_never_overflows_the_launch_grid() -> None:
    """calculateAutoGSU caps an automatic GSU so the grid fits: the GSU-1 grid decides."""
    kernel = solution(globalSplitU=-1)
    # one tile, 256 CUs, K = 4096: min(K / DepthU / 3, CUs / tiles) = min(42, 256)
    assert lite_auto_gsu(problem(1, 1, k=4096), GFX950, kernel) == 42
    assert lite_auto_gsu(problem(1, 1), GFX950, kernel) == 1  # K = 48 is too short to split
    assert lite_auto_gsu(problem(LIMIT, 1, k=4096), GFX950, kernel) == 1
    assert evaluate(LAUNCH_LIMITS, problem(LIMIT, 1), GFX950, solution=kernel).passed
    assert not evaluate(LAUNCH_LIMITS, problem(LIMIT + 1, 1), GFX950, solution=kernel).passed
    with pytest.raises(SelectionError, match="--cu-count"):
        lite_auto_gsu(problem(1, 1), Hardware(arch="gfx950"), kernel)


def test_launch_limits_needs_the_solution() -> None:
    with pytest.raises(SelectionError, match="task predicate"):
        evaluate(LAUNCH_LIMITS, problem(1), GFX950)


def test_an_unknown_type_loads_and_never_holds() -> None:
    raw = {"type": "And", "value": [{"type": "LaunchLimits"}, {"index": 0, "type": "FooBar", "value": [1, 2]}]}
    loaded = intern_predicate(raw)
    assert isinstance(loaded.value[1], UnmodelledPredicate)
    assert loaded.model_dump(by_alias=True, exclude_unset=True) == raw  # kept as written
    assert unmodelled_types(loaded) == ["FooBar"]
    verdict = evaluate(loaded, problem(4), GFX950, solution=solution())
    assert not verdict.passed
    assert "predicate type 'FooBar' is not modelled" in verdict.reason
    assert not compile_atom(loaded, solution()).scalar(problem(4), GFX950)


def test_a_predicate_without_a_type_is_still_an_error() -> None:
    with pytest.raises(SelectionError, match="unknown predicate type 'MysteryCheck'"):
        evaluate(SimpleNamespace(type="MysteryCheck", value=1), problem(1), GFX950)


def test_a_tensilelite_task_workspace_check_sizes_the_gsu_partials() -> None:
    """5.x's task ``WorkspaceCheck`` (``ContractionTaskPredicates.hpp`` @1ea8c64f53e4): GSU > 1
    needs M·N·batch·elemC·GSU bytes of partials (here the automatic GSU), GSU 1 none; Tensile's
    flag keeps Tensile's rule (M·N·batch·elemC whatever the GSU)."""
    check = intern_predicate({"type": "WorkspaceCheck"})
    lite = solution(workspaceSizePerElemC=4, globalSplitU=-1, macroTile=[64, 64, 1])
    one_tile = contraction_problem(GemmProblem(m=64, n=64, k=8192, workspace_size=1 << 20))
    # auto GSU: min(8192 / 32 / 3, 256 CUs / 1 tile) = 85 -> 64·64·4·85 bytes
    verdict = evaluate(check, one_tile, GFX950, solution=lite)
    assert not verdict.passed and "required=1392640" in verdict.reason
    many_tiles = contraction_problem(GemmProblem(m=8192, n=8192, k=64, workspace_size=0))
    assert evaluate(check, many_tiles, GFX950, solution=lite).passed  # GSU 1: no partials
    tensile = MasterSolution.model_validate(
        {"index": 0, "sizeMapping": {"workspaceSizePerElemC": 4, "macroTile": [64, 64, 1], "globalSplitU": 1}}
    )
    assert not evaluate(check, many_tiles, GFX950, solution=tensile).passed

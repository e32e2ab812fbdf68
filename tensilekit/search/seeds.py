"""Seed kernels: what the current library already selects for the sizes being tuned.

The GA starts from the kernels the library runs today, so its result can only match or beat
them. Two sources:

* :func:`seeds_from_master` asks tensilekit's selection model which kernel a master library
  selects for each problem (:func:`tensilekit.selection.select_solution`) and reads its
  ``sizeMapping``;
* :func:`seed_from_record` reads a logic-file solution record -- what the tuning pipeline uses,
  with the solution hipblaslt-bench reported for the baseline (real runs) or the simulated
  library's heuristic choice (``--simulate``).

Either way a seed that breaks a pruning rule only through the LDS buffer count or a vector
width is repaired (:func:`~tensilekit.search.grid.repair`); seeds that cannot be are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tensilekit._arguments import require
from tensilekit.errors import InvalidKernel
from tensilekit.search.grid import repair
from tensilekit.search.params import KernelParams
from tensilekit.search.profiles import GeneSpace
from tensilekit.search.pruning import PruneContext

if TYPE_CHECKING:  # the selection model is imported when first used (it pulls in numpy)
    from tensilekit.model.library import MasterLibrary
    from tensilekit.selection.api import CompiledLibrary
    from tensilekit.selection.problem import GemmProblem as SelectionProblem
    from tensilekit.selection.problem import Hardware


def seed_from_record(
    record: Mapping[str, Any], defaults: Mapping[str, int], context: PruneContext, space: GeneSpace
) -> KernelParams | None:
    """The (repaired) genome of a solution record, or None when it is outside the search space."""
    require(record, Mapping, "record", "seed_from_record")
    require(defaults, Mapping, "defaults", "seed_from_record")
    require(context, PruneContext, "context", "seed_from_record")
    require(space, Mapping, "space", "seed_from_record")
    try:
        kernel = KernelParams.from_solution(record, defaults)
    except InvalidKernel:
        return None
    return repair(kernel, context, space, shrink_tiles=True)


def seeds_from_master(
    library: MasterLibrary | CompiledLibrary,
    problems: Sequence[SelectionProblem],
    hardware: Hardware,
    defaults: Mapping[str, int],
    context: PruneContext,
    space: GeneSpace,
) -> list[KernelParams]:
    """The distinct (repaired) kernels ``library`` selects for ``problems``, in problem order.

    Problems the library has no kernel for, and kernels outside the search space (no matrix
    instruction, unrepairable), contribute nothing.
    """
    from tensilekit.selection.api import select_solution

    seeds: list[KernelParams] = []
    for problem in problems:
        selection = select_solution(library, problem, hardware)
        solution = selection.solution
        if solution is None or solution.size_mapping is None:
            continue
        mapping = solution.size_mapping.raw()
        try:
            kernel = KernelParams.from_master_solution(solution.name or "", mapping, defaults)
        except InvalidKernel:
            continue
        repaired = repair(kernel, context, space, shrink_tiles=True)
        if repaired is not None and repaired not in seeds:
            seeds.append(repaired)
    return seeds


def unique(kernels: Iterable[KernelParams | None]) -> list[KernelParams]:
    """The kernels without None and duplicates, first occurrence first."""
    result: list[KernelParams] = []
    for kernel in kernels:
        if kernel is not None and kernel not in result:
            result.append(kernel)
    return result


__all__ = ["seed_from_record", "seeds_from_master", "unique"]

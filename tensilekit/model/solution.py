"""Master-library solution entries: the fields selection, merge and diff read are typed.

Everything else a solution carries (``info``, ``ideals``, ``linearModel``, tensilelite's
``internalArgsSupport`` …) is kept verbatim as extra keys, so writing never drops or invents one.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from tensilekit.model.common import MAX_TILE, OpenModel
from tensilekit.model.predicates import InternedPredicate
from tensilekit.ranges import SolutionIndexInt

_Tile = list[Annotated[int, Field(ge=1, le=MAX_TILE)]]


class SizeMapping(OpenModel):
    """``sizeMapping``: tile shape and the launch parameters Tensile derives from it."""

    work_group: _Tile | None = Field(default=None, alias="workGroup")
    macro_tile: _Tile | None = Field(default=None, alias="macroTile")
    thread_tile: _Tile | None = Field(default=None, alias="threadTile")
    matrix_instruction: list[Annotated[int, Field(ge=0, le=MAX_TILE)]] | None = Field(
        default=None, alias="matrixInstruction"
    )
    depth_u: Annotated[int, Field(ge=1, le=MAX_TILE)] | None = Field(default=None, alias="depthU")
    global_split_u: Annotated[int, Field(ge=-1, le=MAX_TILE)] | None = Field(default=None, alias="globalSplitU")
    workgroup_mapping: int | None = Field(default=None, alias="workGroupMapping")
    stagger_u: int | bool | None = Field(default=None, alias="staggerU")
    persistent_kernel: int | bool | None = Field(default=None, alias="persistentKernel")
    stream_k: int | bool | None = Field(default=None, alias="streamK")
    stream_k_atomic: int | bool | None = Field(default=None, alias="streamKAtomic")
    global_accumulation: int | bool | None = Field(default=None, alias="globalAccumulation")
    workspace_size_per_elem_c: int | bool | None = Field(default=None, alias="workspaceSizePerElemC")
    custom_kernel_name: str | None = Field(default=None, alias="customKernelName")


class MasterSolution(OpenModel):
    """One entry of a master library's ``solutions`` list."""

    name: str | None = None
    kernel_name: str | None = Field(default=None, alias="kernelName")
    index: SolutionIndexInt
    library_logic_index: int | None = Field(default=None, alias="libraryLogicIndex")
    hardware_predicate: InternedPredicate | None = Field(default=None, alias="hardwarePredicate")
    problem_predicate: InternedPredicate | None = Field(default=None, alias="problemPredicate")
    task_predicate: InternedPredicate | None = Field(default=None, alias="taskPredicate")
    size_mapping: SizeMapping | None = Field(default=None, alias="sizeMapping")
    problem_type: dict[str, object] | None = Field(default=None, alias="problemType")
    debug_kernel: bool | None = Field(default=None, alias="debugKernel")


PREDICATE_FIELDS = ("hardware_predicate", "problem_predicate", "task_predicate")
"""The fields of a solution that hold its (interned, shared) predicates, in their order."""
_PREDICATE_FIELD_SET = set(PREDICATE_FIELDS)
_PREDICATE_ALIASES = {name: MasterSolution.model_fields[name].alias or name for name in PREDICATE_FIELDS}
_PREDICATE_KEYS = (*PREDICATE_FIELDS, *_PREDICATE_ALIASES.values())


def dump_sharing_predicates(
    solution: MasterSolution, predicates: dict[tuple[str, int], tuple[Any, Any]]
) -> dict[str, Any]:
    """``solution.model_dump(by_alias=True, exclude_unset=True)``'s content, each predicate's
    serialisation made once per predicate object and shared by the dumps (a master's solutions
    share a few thousand interned predicates, whose serialising is most of each dump: rocBLAS_Full
    0.6 s). The predicate keys come last (unless an extra key spells one: then the plain dump).
    ``predicates``: (field, id of the predicate) -> (the predicate, its serialisation), kept by
    the caller across the dumps of one library."""
    extra = solution.__pydantic_extra__
    if extra and any(key in extra for key in _PREDICATE_KEYS):  # an extra key ``exclude`` or the alias would meet
        return solution.model_dump(by_alias=True, exclude_unset=True)
    record = solution.model_dump(by_alias=True, exclude_unset=True, exclude=_PREDICATE_FIELD_SET)
    chosen = solution.model_fields_set
    for name in PREDICATE_FIELDS:
        if name in chosen:
            value = getattr(solution, name)
            found = predicates.get((name, id(value)))
            if found is None:  # the serializer's own output for that field (the object kept: its id stays its)
                dumped = solution.model_dump(by_alias=True, exclude_unset=True, include={name})
                found = predicates[(name, id(value))] = (value, next(iter(dumped.values())))
            record[_PREDICATE_ALIASES[name]] = found[1]
    return record


__all__ = ["PREDICATE_FIELDS", "MasterSolution", "SizeMapping", "dump_sharing_predicates"]

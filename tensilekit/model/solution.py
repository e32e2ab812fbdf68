"""Master-library solution entries: the fields selection, merge and diff read are typed.

Everything else a solution carries (``info``, ``ideals``, ``linearModel``, tensilelite's
``internalArgsSupport`` …) is kept verbatim as extra keys, so writing never drops or invents one.
"""

from __future__ import annotations

from typing import Annotated

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


__all__ = ["MasterSolution", "SizeMapping"]

"""Exhaustive (grid) search space and kernel repair: the alternative to the GA for small spaces.

:func:`enumerate_kernels` lists every valid kernel over the profile's ``grid_genes`` (the tile
genes: MFMA, macro tile, waves, DepthU, GSU) with the other genes at their defaults, in
:data:`~tensilekit.search.params.GENES` order -- what ``--mode grid`` benchmarks.
:func:`repair` turns a kernel that breaks a rule only through a default-like gene (the LDS
buffer count, a vector width) into the nearest valid one; seeds from an existing library and
grid points go through it.

Pure.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from tensilekit._arguments import require, require_items
from tensilekit.errors import SearchSpaceTooLarge
from tensilekit.search.params import GENES, KernelParams, infer_wave_group
from tensilekit.search.profiles import GeneSpace
from tensilekit.search.pruning import PruneContext, is_valid

DEFAULT_GRID_LIMIT = 2048


def _ints(values: object) -> list[int]:
    return [value for value in values if isinstance(value, int)] if isinstance(values, tuple) else []


def repair(
    kernel: KernelParams, context: PruneContext, space: GeneSpace, *, shrink_tiles: bool = False
) -> KernelParams | None:
    """``kernel`` if valid, else the nearest valid variant: the same DepthU or the next smaller
    ones, each with the LDS buffer count as given then the other, and the vector widths as given
    then narrower (tried in that order); with ``shrink_tiles`` also smaller macro tiles (same
    instruction and waves, wave layout re-split). None when none is valid.

    Libraries hold kernels the rules reject -- the SIMULATED catalogue's deep tiles overflow
    the LDS, a library may run a 128-wide tile on N = 8 -- and a seed should stay as close to
    the library's kernel as the rules allow.
    """
    require(kernel, KernelParams, "kernel", "repair")
    require(context, PruneContext, "context", "repair")
    require(space, Mapping, "space", "repair")
    if is_valid(kernel, context):
        return kernel
    found = _repair_memory(kernel, context, space)
    if found is not None or not shrink_tiles:
        return found
    tiles0 = [kernel.mt0] + sorted((t for t in _ints(space.get("mt0", ())) if t < kernel.mt0), reverse=True)
    tiles1 = [kernel.mt1] + sorted((t for t in _ints(space.get("mt1", ())) if t < kernel.mt1), reverse=True)
    instructions = [kernel.mi] + [mi for mi in space.get("mi", ()) if isinstance(mi, tuple) and mi != kernel.mi]
    tiles = sorted(
        ((a, b) for a in tiles0 for b in tiles1 if (a, b) != (kernel.mt0, kernel.mt1)),
        key=lambda pair: -pair[0] * pair[1],
    )
    # The same instruction first; another one only when the smaller tile cannot hold it.
    for mi in instructions:
        for mt0, mt1 in tiles:
            wave_group = infer_wave_group(mt0, mt1, mi, kernel.waves)
            candidate = kernel.replace(mi=mi, mt0=mt0, mt1=mt1, wave_group=wave_group)
            found = _repair_memory(candidate, context, space)
            if found is not None:
                return found
    return None


def _repair_memory(kernel: KernelParams, context: PruneContext, space: GeneSpace) -> KernelParams | None:
    if is_valid(kernel, context):
        return kernel
    depths = [kernel.depth_u] + sorted((d for d in _ints(space.get("depth_u", ())) if d < kernel.depth_u), reverse=True)
    buffers = [kernel.lds_buffer] + [
        value for value in _ints(space.get("lds_buffer", ())) if value != kernel.lds_buffer
    ]
    widths_a = [kernel.grvw_a] + sorted((w for w in _ints(space.get("grvw_a", ())) if w < kernel.grvw_a), reverse=True)
    widths_b = [kernel.grvw_b] + sorted((w for w in _ints(space.get("grvw_b", ())) if w < kernel.grvw_b), reverse=True)
    for depth in depths:
        for buffer in buffers:
            for width_a in widths_a:
                for width_b in widths_b:
                    candidate = kernel.replace(depth_u=depth, lds_buffer=buffer, grvw_a=width_a, grvw_b=width_b)
                    if is_valid(candidate, context):
                        return candidate
    return None


def enumerate_kernels(
    space: GeneSpace,
    context: PruneContext,
    defaults: Mapping[str, Any],
    genes: Sequence[str],
    *,
    limit: int = DEFAULT_GRID_LIMIT,
) -> list[KernelParams]:
    """Every valid kernel over ``genes`` (others from ``defaults``), repaired, without duplicates.

    Raises:
        SearchSpaceTooLarge: more than ``limit`` valid kernels (use the GA instead).
    """
    require(space, Mapping, "space", "enumerate_kernels")
    require(context, PruneContext, "context", "enumerate_kernels")
    require(defaults, Mapping, "defaults", "enumerate_kernels")
    genes = require_items(genes, str, "genes", "enumerate_kernels")
    varied = [name for name in GENES if name in genes]
    fixed = {name: defaults[name] for name in GENES if name not in genes}
    kernels: list[KernelParams] = []
    seen: set[KernelParams] = set()
    for values in itertools.product(*(space[name] for name in varied)):
        chosen: dict[str, Any] = {**fixed, **dict(zip(varied, values, strict=True))}
        candidate = KernelParams(**chosen)
        kernel = repair(candidate, context, space)
        if kernel is None or kernel in seen:
            continue
        seen.add(kernel)
        kernels.append(kernel)
        if len(kernels) > limit:
            raise SearchSpaceTooLarge(
                f"the grid over {', '.join(varied)} holds more than {limit} valid kernels; "
                "use --mode ga or raise --grid-limit"
            )
    return kernels


__all__ = ["DEFAULT_GRID_LIMIT", "enumerate_kernels", "repair"]

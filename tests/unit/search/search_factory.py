"""Shared values for the kernel-search tests: a profile, shapes and a valid bf16 kernel."""

from __future__ import annotations

from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import profile_for
from tensilekit.search.pruning import PruneContext, make_context

SQUARE = ProblemShape(4096, 4096, 1, 4096, "T", "N", 4096, 4096)
DECODE = ProblemShape(6144, 8, 1, 4096, "T", "N", 4096, 4096)
BASE = KernelParams(mi=(16, 16, 16, 1), mt0=128, mt1=128, wave_group=(2, 2), depth_u=64)
"""Valid for bf16 on gfx942 and SQUARE: 2 LDS buffers of (128+128)*64*2 bytes = 64 KiB exactly."""


def context_for(*shapes: ProblemShape, arch: str = "gfx942", letters: str = "B") -> PruneContext:
    return make_context(profile_for(arch), letters, shapes)

"""Shared values for the kernel-search tests: a profile, shapes and a valid bf16 kernel."""

from __future__ import annotations

from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import profile_for
from tensilekit.search.pruning import PruneContext, make_context

SQUARE = ProblemShape(4096, 4096, 1, 4096, "T", "N", 4096, 4096)
DECODE = ProblemShape(6144, 8, 1, 4096, "T", "N", 4096, 4096)
BASE = KernelParams(mi=(16, 16, 16, 1), mt0=128, mt1=128, wave_group=(2, 2), depth_u=64, lds_buffer=1)
"""Valid for bf16 on gfx942 and SQUARE, in AMD's reader too: one LDS buffer of (128+128)*64*2 bytes
plus padding. With two buffers (lds_buffer 0) AMD's Solution rejects it: "Kernel Uses 100352 >
65536 bytes of LDS" (check-configs, tensilelite-7d9fb68)."""


def context_for(*shapes: ProblemShape, arch: str = "gfx942", letters: str = "B") -> PruneContext:
    return make_context(profile_for(arch), letters, shapes)

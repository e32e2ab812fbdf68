"""Pruning rules: kernels that cannot run, or cannot win, are dropped before anything is benchmarked.

Each rule is a small named function ``rule(kernel, context) -> reason | None`` whose docstring
says why the rule exists; :data:`RULES` lists them in the order they are checked (cheapest and
most selective first). A kernel is valid for a search group when no rule rejects it for any
of the group's problem sizes. The GA's crossover and mutation only ever return kernels that
pass every rule (:mod:`tensilekit.search.ga`).

Pure; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from types import MappingProxyType

from tensilekit._arguments import require, require_items
from tensilekit.search.params import WAVEFRONT, Dialect, KernelParams, ProblemShape
from tensilekit.search.profiles import TYPE_BYTES, ArchProfile, GeneSpace

VALID_WAVES = (1, 2, 4)
"""``WaveM``/``WaveN`` of the 9-number ``MatrixInstruction``: ``2**wave`` for wave in 0..2
(``validParameters`` ``_format9``)."""
MAX_WAVE_TILE = 32
"""``WaveTileM``/``WaveTileN`` range 1..32 in tensilelite's ``_format9`` (``validTT = 32``)."""
MAX_VECTOR_BYTES = 16
MIN_VECTOR_BYTES = 4
DEFAULT_STAGGER_U_STRIDE = 256
"""``StaggerUStride``'s default in both dialects (``Common.py`` defaultBenchmarkCommonParameters);
tensilekit's configs never set it."""
STREAM_K_WAVES = 4


@dataclasses.dataclass(frozen=True)
class PruneContext:
    """What the rules check a kernel against: the architecture, the data type and the sizes.

    Attributes:
        profile: the architecture's limits and instructions.
        letters: Tensile input-type letter(s) (``B``, ``H``, ``F8`` …).
        sizes: every problem size of the search group; a kernel must suit all of them.
        compute_bytes: bytes of one accumulator element (4 for f32 accumulation, 8 for f64).
        min_depth_u: the smallest DepthU the profile offers for the type (a K below it cannot
            be helped, so it does not reject every kernel).
        dialect: the config dialect (whose AMD ``Solution`` will judge the kernel).
    """

    profile: ArchProfile
    letters: str
    sizes: tuple[ProblemShape, ...]
    compute_bytes: int = 4
    min_depth_u: int = 16
    dialect: Dialect = "tensilelite"

    @property
    def element_bytes(self) -> int:
        return TYPE_BYTES.get(self.letters, 2)


Rule = Callable[[KernelParams, PruneContext], "str | None"]


def mfma_supported(kernel: KernelParams, context: PruneContext) -> str | None:
    """The matrix instruction must exist on the architecture for the input type.

    Tensile rejects a ``MatrixInstruction`` the ISA lacks (``validMFMA`` per type, GEKO's
    ``ONLY_INCLUDE_MIs`` per architecture); benchmarking it would only produce a build error.
    """
    if kernel.mi not in context.profile.instructions(context.letters):
        shape = "x".join(str(value) for value in kernel.mi)
        return f"{context.profile.arch} has no {shape} matrix instruction for type {context.letters}"
    return None


def macro_tile_fits_mfma(kernel: KernelParams, context: PruneContext) -> str | None:
    """The macro tile must be whole MFMA tiles per wave: ``MT0 = MI_M * WaveTileM * WaveM``.

    The 9-number ``MatrixInstruction`` can only describe such tiles, and ``WaveTileM/N`` must
    lie in 1..32 (``_format9``); any other macro tile is not expressible, so it is not a kernel.
    """
    tile0, tile1 = kernel.wave_tile
    if tile0 == 0 or tile1 == 0:
        return (
            f"macro tile {kernel.mt0}x{kernel.mt1} is not a multiple of MFMA {kernel.mi[0]}x{kernel.mi[1]} "
            f"times waves {kernel.wave_group[0]}x{kernel.wave_group[1]}"
        )
    if tile0 > MAX_WAVE_TILE or tile1 > MAX_WAVE_TILE:
        return f"wave tile {tile0}x{tile1} exceeds {MAX_WAVE_TILE}"
    return None


def depth_u_fits_mfma(kernel: KernelParams, context: PruneContext) -> str | None:
    """DepthU must be a whole number of MFMA K steps (Tensile's ``LoopIters = DepthU / MatrixInstK``).

    A remainder would leave part of each unrolled iteration without an instruction to feed.
    """
    if kernel.depth_u % kernel.mi[2] != 0:
        return f"DepthU {kernel.depth_u} is not a multiple of the MFMA K {kernel.mi[2]}"
    return None


LDS_PAD_FRACTION = 0.25
"""Upper bound of the padding AMD adds to each LDS tile row (``calcLdsPad``: up to
``max(GRVW, 2*LRVW)`` elements per 128-byte block, SolutionStructs.py:2526-2605 @7d9fb68)."""
LDS_ALIGN_BYTES = 256
"""``ldsAlign`` = 64 / numRegisters elements (SolutionStructs.py:2650 @7d9fb68): 256 bytes."""


def lds_bytes(kernel: KernelParams, element_bytes: int) -> int:
    """The LDS the A and B tiles take, as AMD lays them out (an upper bound of the padding).

    Each tile is ``MT * DepthU * bpe`` plus padding, aligned (``calcLdsNumBytes``); with a
    second buffer (``PrefetchGlobalRead`` and not ``1LDSBuffer``) B's second copy starts at the
    next power of two after both first copies: ``nextpow2(A + B) + A + B``
    (``LdsOffsetA_Blk``, SolutionStructs.py:3432-3445 @7d9fb68; :4085-4091 @09ec347).
    """

    def tile(macro_tile: int) -> int:
        raw = macro_tile * kernel.depth_u * element_bytes
        padded = int(raw * (1 + LDS_PAD_FRACTION))
        return -(-padded // LDS_ALIGN_BYTES) * LDS_ALIGN_BYTES

    both = tile(kernel.mt0) + tile(kernel.mt1)
    if kernel.prefetch_global_read >= 1 and kernel.lds_buffer == 0:
        return _next_power_of_two(both) + both
    return both


def lds_fits(kernel: KernelParams, context: PruneContext) -> str | None:
    """The A and B tiles staged in LDS must fit the architecture's LDS (:func:`lds_bytes`).

    AMD's ``Solution`` rejects "Kernel Uses N > 65536 bytes of LDS" (SolutionStructs.py:3714-3716
    @7d9fb68, :4327 @09ec347; ``MaxLDS`` 64 KiB, 160 KiB on gfx950), counting padding and the
    second buffer's power-of-two offset; the padding here is an upper bound, so a kernel this
    rule accepts is not rejected for its LDS.
    """
    need = lds_bytes(kernel, context.element_bytes)
    if need > context.profile.lds_bytes:
        buffers = 2 if kernel.prefetch_global_read >= 1 and kernel.lds_buffer == 0 else 1
        return (
            f"needs {need} bytes of LDS ({buffers} buffer(s)), {context.profile.arch} has {context.profile.lds_bytes}"
        )
    return None


def stream_k_needs_four_waves(kernel: KernelParams, context: PruneContext) -> str | None:
    """Stream-K kernels need exactly four waves: ``MIWaveGroup0 * MIWaveGroup1 == 4``.

    "Stream-K requries MIWaveGroup0*MIWaveGroup1=4" (SolutionStructs.py:2971-2973 @09ec347,
    :2146 @7d9fb68).
    """
    if kernel.stream_k and kernel.waves != STREAM_K_WAVES:
        return f"StreamK {kernel.stream_k} needs {STREAM_K_WAVES} waves, not {kernel.waves}"
    return None


def stagger_u_stride_covers_depth_u(kernel: KernelParams, context: PruneContext) -> str | None:
    """With StaggerU on, ``DepthU * bytes per element`` must not exceed ``StaggerUStride`` (256).

    "StaggerUStride=256 is less than size of DepthU=N * BytesPerElement=M"
    (SolutionStructs.py:3326-3341 @09ec347, :2441 @7d9fb68); tensilekit writes no
    ``StaggerUStride``, so AMD's default applies.
    """
    if kernel.stagger_u and kernel.depth_u * context.element_bytes > DEFAULT_STAGGER_U_STRIDE:
        return (
            f"StaggerU {kernel.stagger_u} with DepthU {kernel.depth_u} x {context.element_bytes} bytes exceeds "
            f"StaggerUStride {DEFAULT_STAGGER_U_STRIDE}"
        )
    return None


def global_reads_divide_threads(kernel: KernelParams, context: PruneContext) -> str | None:
    """tensilelite: every thread loads the same number of vectors of each tile.

    ``MT * DepthU / GlobalReadVectorWidth`` must be a multiple of the workgroup's threads,
    "totalVectorsA N % NumThreads M != 0" then "No valid DepthU found"
    (``setGlobalReadVectorWidth``, SolutionStructs.py:1394-1402 and :3060 @7d9fb68). ROCm/Tensile
    narrows the vector itself instead (``setGlobalLoadVectorWidth``, SolutionStructs.py:2010
    @09ec347) when each thread would load less than one vector, which works only when the
    shrink factor divides the width ("GlobalLoadVectorWidthB 2 % pv 4 != 0").
    """
    for name, tile, width in (("A", kernel.mt0, kernel.grvw_a), ("B", kernel.mt1, kernel.grvw_b)):
        elements = tile * kernel.depth_u
        if context.dialect == "tensilelite":
            if (elements // width) % kernel.threads:
                return f"{elements // width} global-read vectors of {name} do not divide over {kernel.threads} threads"
            continue
        # ROCm/Tensile: with fewer elements than threads x width, the width shrinks by
        # pv = threads * width / elements, which must divide it evenly (SolutionStructs.py:2010-2030 @09ec347).
        wanted = kernel.threads * width
        if elements < wanted:
            shrink = wanted // elements
            if wanted % elements or width % shrink:
                return f"GlobalLoadVectorWidth{name} {width} cannot shrink for {elements} elements over {kernel.threads} threads"
    return None


def split_depth_fits_k(kernel: KernelParams, context: PruneContext) -> str | None:
    """``DepthU x GSU`` must not exceed K: every split-K slice needs at least one full unroll step.

    Otherwise the extra splits read nothing but still launch, reduce and write partials, and a
    DepthU beyond K only runs the tail loop. K smaller than the smallest DepthU offered cannot
    be helped and is allowed.
    """
    for shape in context.sizes:
        limit = max(shape.k, context.min_depth_u)
        if kernel.depth_u * kernel.gsu > limit:
            return f"DepthU {kernel.depth_u} x GSU {kernel.gsu} exceeds K {shape.k}"
    return None


def split_k_workspace_fits(kernel: KernelParams, context: PruneContext) -> str | None:
    """Split-K partial results must fit the workspace: ``GSU * M * N * batch * compute bytes``.

    With ``GlobalSplitUAlgorithm: MultipleBuffer`` each split writes its own copy of D in the
    compute type (``_WorkspaceSizePerElemC = Tc * GSU``); a kernel needing more than
    ``MaxWorkspaceSize`` (128 MiB, the configs' value) is rejected at run time.
    """
    if kernel.gsu <= 1:
        return None
    for shape in context.sizes:
        need = kernel.gsu * shape.m * shape.n * shape.batch * context.compute_bytes
        if need > context.profile.max_workspace_bytes:
            return f"GSU {kernel.gsu} needs {need} bytes of workspace for {shape.m}x{shape.n}x{shape.batch}"
    return None


def workgroup_size(kernel: KernelParams, context: PruneContext) -> str | None:
    """The workgroup must be 1, 2 or 4 waves per dimension and at most the hardware's threads.

    ``WaveM``/``WaveN`` are powers of two up to 4 in ``validParameters``, and a workgroup has at
    most 1024 threads (16 waves of 64).
    """
    wave_m, wave_n = kernel.wave_group
    if wave_m not in VALID_WAVES or wave_n not in VALID_WAVES:
        return f"wave group {wave_m}x{wave_n}: each side must be 1, 2 or 4"
    if kernel.threads > context.profile.max_threads:
        return f"{kernel.threads} threads per workgroup exceed {context.profile.max_threads}"
    return None


def accumulators_fit(kernel: KernelParams, context: PruneContext) -> str | None:
    """Each thread's share of the macro tile must fit its accumulation registers.

    ``MT0 * MT1 / threads`` accumulators of ``compute_bytes`` each, in 32-bit registers; past
    the 256 AccVGPRs the kernel spills or fails to assemble.
    """
    registers = kernel.mt0 * kernel.mt1 * context.compute_bytes // (4 * kernel.threads)
    if registers > context.profile.accumulator_registers:
        return f"{registers} accumulation registers per thread exceed {context.profile.accumulator_registers}"
    return None


def vector_width_fits_type(kernel: KernelParams, context: PruneContext) -> str | None:
    """A global-read vector must be 4 to 16 bytes (one dword to ``dwordx4``).

    ``validParameters`` documents the bounds per element size (bpe 2: GRVW 2..8); wider loads
    do not exist and narrower ones are not issued by the assembly kernels.
    """
    for name, width in (("A", kernel.grvw_a), ("B", kernel.grvw_b)):
        size = width * context.element_bytes
        if not MIN_VECTOR_BYTES <= size <= MAX_VECTOR_BYTES:
            return f"GlobalReadVectorWidth{name} {width} loads {size} bytes (must be 4..16 for type {context.letters})"
    return None


def vector_width_alignment(kernel: KernelParams, context: PruneContext) -> str | None:
    """A vector load must not straddle a row: the contiguous dimension and the leading dimension
    of A (B) must be multiples of GlobalReadVectorWidthA (B).

    Otherwise every row edge goes through Tensile's shift-pointer path, which the benchmark
    would time but which is never the fastest choice for such a size (tensilekit's policy).
    """
    for shape in context.sizes:
        for name, width, length, lead in (
            ("A", kernel.grvw_a, shape.contiguous_a, shape.lda),
            ("B", kernel.grvw_b, shape.contiguous_b, shape.ldb),
        ):
            if length % width or (lead and lead % width):
                return (
                    f"{name}'s contiguous dimension {length} (ld {lead}) is not a multiple of its vector width {width}"
                )
    return None


def tile_within_problem(kernel: KernelParams, context: PruneContext) -> str | None:
    """A macro tile must not be larger than the problem rounded up to a power of two.

    Such a tile computes mostly padding, and a smaller tile covers the problem at least as
    well; tiles at the profile's smallest size are always allowed (N = 1 still needs one).
    """
    smallest = min(context.profile.macro_tiles)
    for shape in context.sizes:
        for name, tile, length in (("MT0", kernel.mt0, shape.m), ("MT1", kernel.mt1, shape.n)):
            if tile > max(smallest, _next_power_of_two(length)):
                return f"{name} {tile} is larger than the problem's {length}"
    return None


def stream_k_excludes_split_k(kernel: KernelParams, context: PruneContext) -> str | None:
    """Stream-K already splits K across workgroups; it cannot be combined with GlobalSplitU > 1.

    Tensile's stream-K kernels require ``GlobalSplitU`` 1; the combination is rejected.
    """
    if kernel.stream_k and kernel.gsu != 1:
        return f"StreamK {kernel.stream_k} with GlobalSplitU {kernel.gsu}"
    return None


def _next_power_of_two(value: int) -> int:
    return 1 << max(0, (value - 1).bit_length())


RULES: tuple[Rule, ...] = (
    mfma_supported,
    macro_tile_fits_mfma,
    depth_u_fits_mfma,
    workgroup_size,
    stream_k_excludes_split_k,
    stream_k_needs_four_waves,
    stagger_u_stride_covers_depth_u,
    vector_width_fits_type,
    global_reads_divide_threads,
    lds_fits,
    accumulators_fit,
    tile_within_problem,
    split_depth_fits_k,
    split_k_workspace_fits,
    vector_width_alignment,
)
"""Every rule, in checking order."""

HARDWARE_RULES: tuple[Rule, ...] = (
    mfma_supported,
    macro_tile_fits_mfma,
    depth_u_fits_mfma,
    workgroup_size,
    stream_k_excludes_split_k,
    stream_k_needs_four_waves,
    stagger_u_stride_covers_depth_u,
    vector_width_fits_type,
    global_reads_divide_threads,
    lds_fits,
    accumulators_fit,
)
"""The rules a kernel generator enforces regardless of sizes (what a simulated driver rejects)."""


def prune_reasons(kernel: KernelParams, context: PruneContext, rules: Sequence[Rule] = RULES) -> list[tuple[str, str]]:
    """Every rule that rejects ``kernel``, as ``(rule name, reason)``; empty when it is valid."""
    require(kernel, KernelParams, "kernel", "prune_reasons")
    require(context, PruneContext, "context", "prune_reasons")
    found: list[tuple[str, str]] = []
    for rule in rules:
        reason = rule(kernel, context)
        if reason is not None:
            found.append((rule.__name__, reason))
    return found


def is_valid(kernel: KernelParams, context: PruneContext, rules: Sequence[Rule] = RULES) -> bool:
    """Whether no rule rejects ``kernel`` (stops at the first rejection)."""
    require(kernel, KernelParams, "kernel", "is_valid")
    require(context, PruneContext, "context", "is_valid")
    return all(rule(kernel, context) is None for rule in rules)


def narrow_space(space: GeneSpace, context: PruneContext) -> GeneSpace:
    """``space`` without the values that single-gene limits already exclude for every kernel.

    Applies the per-gene parts of :func:`tile_within_problem`, :func:`split_depth_fits_k`
    (with GSU 1 and the smallest DepthU), :func:`split_k_workspace_fits`, :func:`vector_width_fits_type` and
    :func:`vector_width_alignment`, and drops instructions larger than every allowed tile. The
    rules stay the judge; this only keeps random draws and mutations from wasting most of their
    attempts on hopeless values (a decode GEMM with N = 1 allows one MT1 of five).
    """
    smallest = min(context.profile.macro_tiles)
    limit0 = min((max(smallest, _next_power_of_two(shape.m)) for shape in context.sizes), default=1 << 30)
    limit1 = min((max(smallest, _next_power_of_two(shape.n)) for shape in context.sizes), default=1 << 30)
    depth_limit = min((max(shape.k, context.min_depth_u) for shape in context.sizes), default=1 << 30)

    def ints(name: str) -> list[int]:
        return [value for value in space[name] if isinstance(value, int)]

    def aligned(width: int, attribute: str, lead: str) -> bool:
        if not MIN_VECTOR_BYTES <= width * context.element_bytes <= MAX_VECTOR_BYTES:
            return False
        return all(
            getattr(shape, attribute) % width == 0 and getattr(shape, lead) % width == 0 for shape in context.sizes
        )

    depths = [value for value in ints("depth_u") if value <= depth_limit]
    narrowed: dict[str, tuple[object, ...]] = dict(space)
    narrowed["mt0"] = tuple(value for value in ints("mt0") if value <= limit0)
    narrowed["mt1"] = tuple(value for value in ints("mt1") if value <= limit1)
    narrowed["mi"] = tuple(mi for mi in space["mi"] if isinstance(mi, tuple) and mi[0] <= limit0 and mi[1] <= limit1)
    narrowed["depth_u"] = tuple(depths)
    largest = max((shape.m * shape.n * shape.batch for shape in context.sizes), default=0)
    workspace = context.profile.max_workspace_bytes
    narrowed["gsu"] = tuple(
        value for value in ints("gsu")
        if depths and value * min(depths) <= depth_limit
        and (value == 1 or value * largest * context.compute_bytes <= workspace)
    )  # fmt: skip
    narrowed["grvw_a"] = tuple(value for value in ints("grvw_a") if aligned(value, "contiguous_a", "lda"))
    narrowed["grvw_b"] = tuple(value for value in ints("grvw_b") if aligned(value, "contiguous_b", "ldb"))
    return MappingProxyType(narrowed)


def make_context(
    profile: ArchProfile,
    letters: str,
    sizes: Sequence[ProblemShape],
    compute_bytes: int = 4,
    dialect: Dialect = "tensilelite",
) -> PruneContext:
    """A :class:`PruneContext` with ``min_depth_u`` taken from the profile.

    Raises TypeError for arguments of the wrong type."""
    require(profile, ArchProfile, "profile", "make_context")
    require(letters, str, "letters", "make_context")
    sizes = require_items(sizes, ProblemShape, "sizes", "make_context")
    require(compute_bytes, int, "compute_bytes", "make_context")
    require(dialect, str, "dialect", "make_context")
    depth_options = profile.depth_u.get(TYPE_BYTES.get(letters, 2), (16,))
    return PruneContext(
        profile=profile, letters=letters, sizes=tuple(sizes), compute_bytes=compute_bytes,
        min_depth_u=min(depth_options), dialect=dialect,
    )  # fmt: skip


__all__ = [
    "HARDWARE_RULES",
    "MAX_WAVE_TILE",
    "RULES",
    "VALID_WAVES",
    "WAVEFRONT",
    "PruneContext",
    "Rule",
    "accumulators_fit",
    "depth_u_fits_mfma",
    "global_reads_divide_threads",
    "is_valid",
    "lds_bytes",
    "lds_fits",
    "macro_tile_fits_mfma",
    "make_context",
    "mfma_supported",
    "narrow_space",
    "prune_reasons",
    "split_depth_fits_k",
    "split_k_workspace_fits",
    "stagger_u_stride_covers_depth_u",
    "stream_k_excludes_split_k",
    "stream_k_needs_four_waves",
    "tile_within_problem",
    "vector_width_alignment",
    "vector_width_fits_type",
    "workgroup_size",
]

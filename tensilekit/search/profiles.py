"""Per-architecture parameter profiles: which kernel parameters the search may try, per GPU.

A profile holds the hardware limits the pruning rules check (CUs, LDS bytes, threads per
workgroup, accumulation registers) and the values each gene may take. The values are the
subset of Tensile's ``validParameters`` that GEKO's hardware profiles use for the same
architecture (``geko/config_generator/constants.py`` ``ONLY_INCLUDE_MIs_GFX942``/``GFX950``,
``fork_params/hw_profiles/*/optimization_param.py``); ``docs/search.md`` names the source of
every value. :func:`gene_space` narrows a profile to one data type and config dialect.

Pure data; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from tensilekit._arguments import require
from tensilekit.errors import SearchError
from tensilekit.search.params import GENES, MI, Dialect

TYPE_BYTES: Mapping[str, int] = MappingProxyType(
    {"H": 2, "B": 2, "S": 4, "X": 4, "D": 8, "I8": 1, "F8": 1, "B8": 1, "F8N": 1, "B8N": 1, "F8B8": 1, "B8F8": 1}
)
"""Bytes per element of a Tensile input-type letter (``DataType.py``)."""

_HALF_1K: tuple[MI, ...] = ((32, 32, 8, 1), (16, 16, 16, 1))
_SINGLE: tuple[MI, ...] = ((32, 32, 2, 1), (16, 16, 4, 1))
_DOUBLE: tuple[MI, ...] = ((16, 16, 4, 1),)
_FP8_942: tuple[MI, ...] = ((32, 32, 16, 1), (16, 16, 32, 1))


def _same(instructions: tuple[MI, ...], *letters: str) -> dict[str, tuple[MI, ...]]:
    return {letter: instructions for letter in letters}


@dataclasses.dataclass(frozen=True)
class ArchProfile:
    """What the search knows about one architecture.

    Attributes:
        arch, schedule, device_names, isa: the ``LibraryLogic`` identity (``ArchitectureName``,
            ``ScheduleName``, ``DeviceNames``) and the ISA triple of solution records.
        cu_count, xcc: compute units and accelerator complex dies (XCDs).
        lds_bytes: LDS a workgroup may use (Tensile ``MaxLDS``: 64 KiB; 160 KiB on gfx950).
        max_threads: threads per workgroup (1024).
        accumulator_registers: 32-bit accumulation registers per thread (256 AccVGPRs).
        max_workspace_bytes: split-K workspace a kernel may use (``MaxWorkspaceSize``, 128 MiB).
        dialects: config dialects that can target the architecture (ROCm/Tensile has no gfx950).
        matrix_instructions: MFMA shapes per input-type letter.
        macro_tiles, wave_groups, depth_u (by element bytes), gsu, stream_k, wgm, wgm_xcc,
        prefetch_global_read, lds_buffer, stagger_u: the values of each gene.
        grid_genes: the genes ``--mode grid`` enumerates; the others keep their defaults.
    """

    arch: str
    schedule: str
    device_names: tuple[str, ...]
    isa: tuple[int, int, int]
    cu_count: int
    xcc: int
    lds_bytes: int
    max_threads: int
    accumulator_registers: int
    dialects: tuple[Dialect, ...]
    matrix_instructions: Mapping[str, tuple[MI, ...]]
    max_workspace_bytes: int = 128 * 1024 * 1024
    macro_tiles: tuple[int, ...] = (16, 32, 64, 128, 256)
    wave_groups: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4))
    depth_u: Mapping[int, tuple[int, ...]] = dataclasses.field(
        default_factory=lambda: MappingProxyType(
            {1: (64, 128, 256, 512), 2: (32, 64, 128, 256, 512), 4: (16, 32, 64, 128), 8: (8, 16, 32, 64)}
        )
    )
    gsu: tuple[int, ...] = (1, 2, 4, 8, 16)
    stream_k: tuple[int, ...] = (0, 3)
    wgm: tuple[int, ...] = (1, 8, 16, 32)
    wgm_xcc: tuple[int, ...] = (1, 8)
    prefetch_global_read: tuple[int, ...] = (1, 2)
    lds_buffer: tuple[int, ...] = (0, 1)
    stagger_u: tuple[int, ...] = (0, 4, 32)
    grid_genes: tuple[str, ...] = ("mi", "mt0", "mt1", "wave_group", "depth_u", "gsu")

    def instructions(self, letters: str) -> tuple[MI, ...]:
        """The MFMA shapes for an input type (empty when the architecture has none)."""
        return self.matrix_instructions.get(letters, ())

    def vector_widths(self, element_bytes: int) -> tuple[int, ...]:
        """Global-read vector widths whose loads are 4..16 bytes (dword to dwordx4).

        ``validParameters`` comments: for bpe 4 max GRVW 4, min 1; bpe 2 max 8, min 2; bpe 1
        max 16, min 4.
        """
        return tuple(width for width in (1, 2, 4, 8, 16) if 4 <= width * element_bytes <= 16)

    def default_genes(self, letters: str) -> dict[str, int]:
        """Gene values for parameters a record or config leaves unset (and for grid mode).

        The widest vector loads, PrefetchGlobalRead 2, one data-parallel split, WGM 8,
        StaggerU 32: the values GEKO's profiles start from.
        """
        widest = max(self.vector_widths(TYPE_BYTES.get(letters, 2)), default=1)
        return {
            "gsu": 1, "stream_k": 0, "wgm": 8, "wgm_xcc": 1, "grvw_a": widest, "grvw_b": widest,
            "prefetch_global_read": 2, "lds_buffer": 0, "stagger_u": 32,
        }  # fmt: skip


def _profiles() -> dict[str, ArchProfile]:
    gfx90a = ArchProfile(
        arch="gfx90a", schedule="aldebaran",
        device_names=("Device 0050", "Device 0051", "Device 0052", "Device 0054", "Device 0062", "Device 7400",
                      "Device 740c"),
        isa=(9, 0, 10), cu_count=110, xcc=1, lds_bytes=65536, max_threads=1024, accumulator_registers=256,
        dialects=("tensilelite", "tensile"),
        matrix_instructions=MappingProxyType(
            {**_same(_HALF_1K, "H", "B", "I8"), **_same(_SINGLE, "S"), **_same(_DOUBLE, "D")}
        ),
        stream_k=(0,), wgm_xcc=(1,),
    )  # fmt: skip
    gfx942 = ArchProfile(
        arch="gfx942", schedule="aquavanjaram", device_names=("Device 0049", "Device 0050"), isa=(9, 4, 2),
        cu_count=304, xcc=8, lds_bytes=65536, max_threads=1024, accumulator_registers=256,
        dialects=("tensilelite", "tensile"),
        matrix_instructions=MappingProxyType(
            {
                **_same(_HALF_1K, "H", "B"), **_same(_SINGLE, "S"), "X": ((32, 32, 4, 1), (16, 16, 8, 1)),
                **_same(_DOUBLE, "D"), **_same(_FP8_942, "I8", "F8", "B8", "F8N", "B8N", "F8B8", "B8F8"),
            }
        ),
    )  # fmt: skip
    gfx950 = ArchProfile(
        arch="gfx950", schedule="gfx950", device_names=("Device 75a0",), isa=(9, 5, 0), cu_count=256, xcc=8,
        lds_bytes=163840, max_threads=1024, accumulator_registers=256, dialects=("tensilelite",),
        matrix_instructions=MappingProxyType(
            {
                **_same(((32, 32, 16, 1), (16, 16, 32, 1)), "H", "B", "I8"), **_same(_SINGLE, "S"),
                **_same(_DOUBLE, "D"), **_same(((32, 32, 64, 1), (16, 16, 128, 1)), "F8", "B8", "F8B8", "B8F8"),
            }
        ),
    )  # fmt: skip
    return {profile.arch: profile for profile in (gfx90a, gfx942, gfx950)}


PROFILES: Mapping[str, ArchProfile] = MappingProxyType(_profiles())
"""Every architecture the search supports, by ``gfx`` name."""


def profile_for(arch: str) -> ArchProfile:
    """The profile of ``arch``; :class:`SearchError` for architectures without one."""
    profile = PROFILES.get(arch)
    if profile is None:
        raise SearchError(f"no kernel-search profile for {arch!r} (profiles: {', '.join(sorted(PROFILES))})")
    return profile


GeneSpace = Mapping[str, tuple[object, ...]]
"""Gene name -> the values it may take, in :data:`~tensilekit.search.params.GENES` order."""


def gene_space(profile: ArchProfile, letters: str, dialect: Dialect = "tensilelite") -> GeneSpace:
    """The values of every gene for one input type and config dialect.

    Raises :class:`SearchError` when the architecture has no matrix instruction for the type
    or the dialect cannot target the architecture, TypeError for arguments of the wrong type.
    """
    require(profile, ArchProfile, "profile", "gene_space")
    require(letters, str, "letters", "gene_space")
    require(dialect, str, "dialect", "gene_space")
    if dialect not in profile.dialects:
        raise SearchError(f"{dialect} cannot target {profile.arch} (use {' or '.join(profile.dialects)})")
    instructions = profile.instructions(letters)
    if not instructions:
        raise SearchError(f"{profile.arch} has no matrix instruction for data type {letters!r}")
    element_bytes = TYPE_BYTES.get(letters, 2)
    widths = profile.vector_widths(element_bytes)
    space: dict[str, tuple[object, ...]] = {
        "mi": instructions,
        "mt0": profile.macro_tiles,
        "mt1": profile.macro_tiles,
        "wave_group": profile.wave_groups,
        "depth_u": profile.depth_u[element_bytes],
        "gsu": profile.gsu,
        "stream_k": profile.stream_k,
        "wgm": profile.wgm,
        "wgm_xcc": profile.wgm_xcc if dialect == "tensilelite" else (1,),
        "grvw_a": widths,
        "grvw_b": widths,
        "prefetch_global_read": profile.prefetch_global_read,
        "lds_buffer": profile.lds_buffer,
        "stagger_u": profile.stagger_u,
    }
    assert tuple(space) == GENES
    return MappingProxyType(space)


def space_size(space: GeneSpace) -> int:
    """How many gene combinations a space holds before pruning."""
    total = 1
    for values in space.values():
        total *= len(values)
    return total


__all__ = ["PROFILES", "TYPE_BYTES", "ArchProfile", "GeneSpace", "gene_space", "profile_for", "space_size"]

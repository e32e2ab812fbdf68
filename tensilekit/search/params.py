"""The kernel genome (:class:`KernelParams`) and the problem shapes it is judged against.

A :class:`KernelParams` is the small set of Tensile solution parameters the search varies: the
matrix instruction, the macro tile and how waves split it, DepthU, split-K (GSU), stream-K,
workgroup mapping and the memory knobs. Everything else a Tensile solution has is derived by
Tensile. This module converts a genome to and from what Tensile reads and writes:

* :meth:`KernelParams.fork_values` -- the parameter dict of one solution in a tuning config
  (``MatrixInstruction`` in the 9-number form ``[M, N, K, B, MIBlockM, WaveTileM, WaveTileN,
  WaveM, WaveN]``, so MacroTile and WorkGroup follow from it);
* :meth:`KernelParams.from_solution` -- a solution record of a logic file or of the driver's
  ``2_BenchmarkData/*.yaml`` (tensilelite and Tensile spell some keys differently);
* :meth:`KernelParams.from_master_solution` -- a master-library solution (``sizeMapping``).

Pure; no I/O.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal

from tensilekit.errors import InvalidKernel

MI = tuple[int, int, int, int]
Dialect = Literal["tensilelite", "tensile"]
DIALECTS: tuple[Dialect, ...] = ("tensilelite", "tensile")
WAVEFRONT = 64

GENES: tuple[str, ...] = (
    "mi", "mt0", "mt1", "wave_group", "depth_u", "gsu", "stream_k", "wgm", "wgm_xcc", "grvw_a", "grvw_b",
    "prefetch_global_read", "lds_buffer", "stagger_u",
)  # fmt: skip
"""The genome's fields in a fixed order (crossover blocks, grid enumeration and keys use it)."""

GENE_BLOCKS: tuple[tuple[str, ...], ...] = (
    ("mi", "mt0", "mt1", "wave_group"),
    ("depth_u", "gsu", "stream_k"),
    ("grvw_a", "grvw_b", "prefetch_global_read", "lds_buffer"),
    ("wgm", "wgm_xcc", "stagger_u"),
)
"""Genes that constrain each other travel together in crossover (a tile without its waves is
rarely valid)."""


@dataclasses.dataclass(frozen=True, order=True)
class KernelParams:
    """One kernel's tunable parameters. Frozen and ordered: the field order is the tie-break
    order of the search.

    Attributes:
        mi: ``MatrixInstruction`` ``[M, N, K, B]`` (MFMA shape).
        mt0, mt1: ``MacroTile0``/``MacroTile1``.
        wave_group: ``MIWaveGroup`` ``[WaveM, WaveN]``; the workgroup has ``WaveM*WaveN`` waves.
        depth_u: ``DepthU`` (unroll depth in K).
        gsu: ``GlobalSplitU`` (split-K).
        stream_k: ``StreamK`` (0 data-parallel, 3 two-tile stream-K with DP first).
        wgm: ``WorkGroupMapping``.
        wgm_xcc: ``WorkGroupMappingXCC`` (tensilelite only; 1 = off).
        grvw_a, grvw_b: ``GlobalReadVectorWidthA/B`` (elements per global load).
        prefetch_global_read: ``PrefetchGlobalRead``.
        lds_buffer: ``1LDSBuffer`` (1 = a single LDS buffer).
        stagger_u: ``StaggerU``.
    """

    mi: MI
    mt0: int
    mt1: int
    wave_group: tuple[int, int]
    depth_u: int
    gsu: int = 1
    stream_k: int = 0
    wgm: int = 8
    wgm_xcc: int = 1
    grvw_a: int = 8
    grvw_b: int = 8
    prefetch_global_read: int = 2
    lds_buffer: int = 0
    stagger_u: int = 32

    # ------------------------------------------------------------------ derived

    @property
    def waves(self) -> int:
        return self.wave_group[0] * self.wave_group[1]

    @property
    def threads(self) -> int:
        return self.waves * WAVEFRONT

    @property
    def wave_tile(self) -> tuple[int, int]:
        """``MIWaveTile``: MFMA tiles per wave in each dimension (0 when the tile does not divide)."""
        span0 = self.mi[0] * self.wave_group[0]
        span1 = self.mi[1] * self.wave_group[1]
        return (self.mt0 // span0 if self.mt0 % span0 == 0 else 0, self.mt1 // span1 if self.mt1 % span1 == 0 else 0)

    @property
    def work_group(self) -> tuple[int, int, int]:
        """Tensile's ``WorkGroup`` for this wave layout: ``[WaveM*MI_M, threads/(WaveM*MI_M), 1]``."""
        first = self.wave_group[0] * self.mi[0]
        return (first, max(1, self.threads // first), 1)

    def replace(self, **changes: Any) -> KernelParams:
        """A copy with some genes changed."""
        return dataclasses.replace(self, **changes)

    def genes(self) -> dict[str, Any]:
        """Gene name -> value, in :data:`GENES` order."""
        return {name: getattr(self, name) for name in GENES}

    # ------------------------------------------------------------------ naming

    def name(self, problem_type_name: str) -> str:
        """A Tensile-style solution name (``<ProblemType>_MT..._MI..._SN_<abbreviated params>``).

        Tensile names the solutions it benchmarks itself; this name is tensilekit's, used for
        the kernels it writes into logic files. Parameters appear abbreviated in sorted order as
        in Tensile's ``SolutionNameMin``.
        """
        mi = "x".join(str(value) for value in self.mi)
        wave_tile = self.wave_tile
        work_group = self.work_group
        parts = [
            f"{problem_type_name}_MT{self.mt0}x{self.mt1}x{self.depth_u}_MI{mi}_SN",
            f"1LDSB{self.lds_buffer}", f"GRVWA{self.grvw_a}", f"GRVWB{self.grvw_b}", f"GSU{self.gsu}",
            f"MIWT{wave_tile[0]}_{wave_tile[1]}", f"PGR{self.prefetch_global_read}", f"SK{self.stream_k}",
            f"SU{self.stagger_u}", f"WG{work_group[0]}_{work_group[1]}_{work_group[2]}", f"WGM{self.wgm}",
            f"WGMXCC{self.wgm_xcc}",
        ]  # fmt: skip
        return "_".join(parts)

    # ------------------------------------------------------------------ Tensile configs

    def matrix_instruction9(self) -> list[int]:
        """``MatrixInstruction`` in the 9-number form (MIBlockM 1)."""
        wave_tile = self.wave_tile
        return [*self.mi, 1, wave_tile[0], wave_tile[1], self.wave_group[0], self.wave_group[1]]

    def fork_values(self, dialect: Dialect = "tensilelite") -> dict[str, Any]:
        """The solution's parameters as a tuning config writes them (one ``Groups`` entry).

        Key names follow ``validParameters`` of the dialect: tensilelite has
        ``GlobalReadVectorWidthA/B`` and ``WorkGroupMappingXCC``; Tensile has
        ``GlobalLoadVectorWidthA/B`` and no XCC mapping (a kernel with ``wgm_xcc != 1`` cannot
        be written for it).
        """
        if dialect == "tensile" and self.wgm_xcc != 1:
            raise InvalidKernel(f"Tensile has no WorkGroupMappingXCC; cannot write wgm_xcc={self.wgm_xcc}")
        vector_keys = (
            ("GlobalReadVectorWidthA", "GlobalReadVectorWidthB")
            if dialect == "tensilelite"
            else ("GlobalLoadVectorWidthA", "GlobalLoadVectorWidthB")
        )
        values: dict[str, Any] = {
            "MatrixInstruction": self.matrix_instruction9(),
            "DepthU": self.depth_u,
            "GlobalSplitU": self.gsu,
            "GlobalSplitUAlgorithm": "MultipleBuffer",
            "StreamK": self.stream_k,
            "WorkGroupMapping": self.wgm,
        }
        if dialect == "tensilelite":
            values["WorkGroupMappingXCC"] = self.wgm_xcc
        values.update(
            {
                vector_keys[0]: self.grvw_a,
                vector_keys[1]: self.grvw_b,
                "PrefetchGlobalRead": self.prefetch_global_read,
                "1LDSBuffer": self.lds_buffer,
                "StaggerU": self.stagger_u,
            }
        )
        return values

    # ------------------------------------------------------------------ readers

    @classmethod
    def from_fork_values(cls, values: Mapping[str, Any], defaults: Mapping[str, int] | None = None) -> KernelParams:
        """The genome of one solution of a tuning config (after fork expansion).

        Genes the config does not set take ``defaults`` (a profile's
        :meth:`~tensilekit.search.profiles.ArchProfile.default_genes`), else the field defaults.

        Raises :class:`InvalidKernel` when ``MatrixInstruction`` is missing or not the
        9-number form (the 4-number form needs ``WorkGroup``/``ThreadTile``, which the search
        does not write).
        """
        mi9 = values.get("MatrixInstruction")
        if not isinstance(mi9, (list, tuple)) or len(mi9) != 9:
            raise InvalidKernel(f"MatrixInstruction {mi9!r} is not the 9-number form")
        numbers = [int(value) for value in mi9]
        mi = (numbers[0], numbers[1], numbers[2], numbers[3])
        block, tile0, tile1, wave0, wave1 = numbers[4:]
        return cls(
            mi=mi, mt0=mi[0] * block * tile0 * wave0, mt1=mi[1] * tile1 * wave1, wave_group=(wave0, wave1),
            **_scalar_genes(values, defaults),
        )  # fmt: skip

    @classmethod
    def from_solution(cls, record: Mapping[str, Any], defaults: Mapping[str, int] | None = None) -> KernelParams:
        """The genome of a solution record (logic file or driver output), either dialect.

        ``MIWaveGroup`` is used when present; older or simulated records without it get the
        wave layout inferred from ``WorkGroup`` (threads / 64 waves, split as evenly as the
        tile allows). Genes the record does not set take ``defaults``.

        Raises:
            InvalidKernel: the record lacks ``MatrixInstruction``, the macro tile or ``DepthU``.
        """
        try:
            mi_raw = list(record["MatrixInstruction"])[:4]
            mi = (int(mi_raw[0]), int(mi_raw[1]), int(mi_raw[2]), int(mi_raw[3]))
            mt0, mt1 = int(record["MacroTile0"]), int(record["MacroTile1"])
            int(record["DepthU"])
        except (KeyError, TypeError, ValueError, IndexError):
            name = record.get("SolutionNameMin") or record.get("KernelNameMin") or "<unnamed>"
            raise InvalidKernel(f"solution {name} has no MatrixInstruction/MacroTile/DepthU") from None
        group = record.get("MIWaveGroup")
        if isinstance(group, (list, tuple)) and len(group) == 2:
            wave_group = (int(group[0]), int(group[1]))
        else:
            work_group = record.get("WorkGroup") or [WAVEFRONT, 1, 1]
            threads = int(work_group[0]) * int(work_group[1])
            wave_group = infer_wave_group(mt0, mt1, mi, max(1, threads // WAVEFRONT))
        return cls(mi=mi, mt0=mt0, mt1=mt1, wave_group=wave_group, **_scalar_genes(record, defaults))

    @classmethod
    def from_master_solution(
        cls, name: str, size_mapping: Mapping[str, Any], defaults: Mapping[str, int] | None = None
    ) -> KernelParams:
        """The genome of a master-library solution: ``sizeMapping`` plus the ``_MI..`` name part.

        Raises :class:`InvalidKernel` when the name carries no matrix instruction (VALU
        kernels are outside the search space).
        """
        match = _MI_IN_NAME.search(name)
        if match is None:
            raise InvalidKernel(f"solution {name} names no matrix instruction (_MIaxbxcxd)")
        mi = (int(match[1]), int(match[2]), int(match[3]), int(match[4]))
        macro_tile = size_mapping.get("macroTile") or [0, 0]
        work_group = size_mapping.get("workGroup") or [WAVEFRONT, 1, 1]
        mt0, mt1 = int(macro_tile[0]), int(macro_tile[1])
        waves = max(1, int(work_group[0]) * int(work_group[1]) // WAVEFRONT)
        values = {
            "DepthU": size_mapping.get("depthU"), "GlobalSplitU": size_mapping.get("globalSplitU"),
            "StreamK": size_mapping.get("streamK"), "WorkGroupMapping": size_mapping.get("workGroupMapping"),
            "StaggerU": size_mapping.get("staggerU"),
        }  # fmt: skip
        return cls(
            mi=mi, mt0=mt0, mt1=mt1, wave_group=infer_wave_group(mt0, mt1, mi, waves),
            **_scalar_genes(values, defaults),
        )  # fmt: skip

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (tuples as lists), the form checkpoints and job results use."""
        data = dataclasses.asdict(self)
        data["mi"] = list(self.mi)
        data["wave_group"] = list(self.wave_group)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KernelParams:
        values = dict(data)
        values["mi"] = tuple(int(value) for value in values["mi"])
        values["wave_group"] = tuple(int(value) for value in values["wave_group"])
        return cls(**values)


_MI_IN_NAME = re.compile(r"_MI(\d+)x(\d+)x(\d+)x(\d+)(?:_|$)")

# Tensile key -> gene, with the first key found winning (tensilelite spelling first).
_SCALAR_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("depth_u", ("DepthU",)),
    ("gsu", ("GlobalSplitU",)),
    ("stream_k", ("StreamK",)),
    ("wgm", ("WorkGroupMapping",)),
    ("wgm_xcc", ("WorkGroupMappingXCC",)),
    ("grvw_a", ("GlobalReadVectorWidthA", "GlobalLoadVectorWidthA", "GlobalReadVectorWidth")),
    ("grvw_b", ("GlobalReadVectorWidthB", "GlobalLoadVectorWidthB", "GlobalReadVectorWidth")),
    ("prefetch_global_read", ("PrefetchGlobalRead",)),
    ("lds_buffer", ("1LDSBuffer",)),
    ("stagger_u", ("StaggerU",)),
)


def _scalar_genes(values: Mapping[str, Any], defaults: Mapping[str, int] | None) -> dict[str, int]:
    genes: dict[str, int] = {}
    for gene, keys in _SCALAR_KEYS:
        for key in keys:
            value = values.get(key)
            if isinstance(value, bool):
                value = int(value)
            # -1 (and GlobalSplitU 0) mean "let Tensile derive it": treated as not set.
            if isinstance(value, int) and (value > 0 or (value == 0 and gene in _ZERO_OK)):
                genes[gene] = value
                break
        else:
            if defaults is not None and gene in defaults:
                genes[gene] = defaults[gene]
    if "depth_u" not in genes:
        raise InvalidKernel("solution has no positive DepthU")
    return genes


# Genes for which 0 is a real value (not Tensile's "derive it" marker -1).
_ZERO_OK = frozenset({"stream_k", "lds_buffer", "stagger_u", "wgm"})


def infer_wave_group(mt0: int, mt1: int, mi: MI, waves: int) -> tuple[int, int]:
    """Split ``waves`` into ``(WaveM, WaveN)`` so both divide the tile; as square as possible,
    more waves along the longer tile side on ties (deterministic)."""
    options = [(first, waves // first) for first in (1, 2, 4, 8, 16) if waves % first == 0 and first <= waves]
    fitting = [
        (first, second) for first, second in options if mt0 % (mi[0] * first) == 0 and mt1 % (mi[1] * second) == 0
    ]
    candidates = fitting or options or [(1, 1)]
    return min(
        candidates,
        key=lambda pair: (abs(pair[0] - pair[1]), -(pair[0] if mt0 >= mt1 else pair[1])),
    )


@dataclasses.dataclass(frozen=True)
class ProblemShape:
    """What the pruning rules and the simulator need of one GEMM size.

    ``trans_a``/``trans_b`` are ``"N"`` or ``"T"``; ``lda``/``ldb`` are the leading dimensions
    (0 = packed).
    """

    m: int
    n: int
    batch: int
    k: int
    trans_a: str = "N"
    trans_b: str = "N"
    lda: int = 0
    ldb: int = 0

    @property
    def size(self) -> tuple[int, int, int, int]:
        """``(M, N, batch, K)``, Tensile's ``Exact`` order."""
        return (self.m, self.n, self.batch, self.k)

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def contiguous_a(self) -> int:
        """The length of A's contiguous dimension: K when A is transposed, else M."""
        return self.k if self.trans_a == "T" else self.m

    @property
    def contiguous_b(self) -> int:
        """The length of B's contiguous dimension: N when B is transposed, else K."""
        return self.n if self.trans_b == "T" else self.k


__all__ = [
    "DIALECTS",
    "GENES",
    "GENE_BLOCKS",
    "MI",
    "WAVEFRONT",
    "Dialect",
    "KernelParams",
    "ProblemShape",
    "infer_wave_group",
]

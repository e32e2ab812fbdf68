"""Seeds: the kernels a library selects today, through tensilekit's selection model or records."""

from __future__ import annotations

from pathlib import Path

from tensilekit.io.master_io import load_master
from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import is_valid, make_context
from tensilekit.search.seeds import seed_from_record, seeds_from_master, unique
from tensilekit.selection import GemmProblem, Hardware

SAMPLE = Path(__file__).resolve().parents[3] / "tensilekit" / "data" / "sample_library.yaml"
PROFILE = profile_for("gfx90a")


def test_seeds_are_what_the_library_selects() -> None:
    library = load_master(SAMPLE)
    problems = [GemmProblem(m=64, n=64, k=64), GemmProblem(m=4096, n=4096, k=1024), GemmProblem(m=64, n=64, k=64)]
    shapes = [ProblemShape(p.m, p.n, p.batch, p.k) for p in problems]
    context = make_context(PROFILE, "S", shapes)
    space = gene_space(PROFILE, "S")
    seeds = seeds_from_master(library, problems, Hardware(arch="gfx90a", cu_count=104), PROFILE.default_genes("S"),
                              context, space)  # fmt: skip
    # MT64x64x32 MI16x16x4x1 for 64^3 (once), MT256x128x16 MI32x32x2x1 for the large one, then
    # repaired: the 256-wide tile is larger than M = 64 allows, so it shrinks to the nearest valid tile.
    assert len(seeds) == 2 and all(is_valid(seed, context) for seed in seeds)
    assert (seeds[0].mi, seeds[0].mt0, seeds[0].mt1, seeds[0].depth_u) == ((16, 16, 4, 1), 64, 64, 32)
    assert seeds[1].mi == (32, 32, 2, 1) and seeds[1].depth_u == 16 and seeds[1].mt0 <= 64


def test_seed_from_record_repairs_what_it_can() -> None:
    shape = ProblemShape(6144, 8, 1, 4096, "T", "N", 4096, 4096)
    context = make_context(profile_for("gfx942"), "B", [shape])
    space = gene_space(profile_for("gfx942"), "B")
    record = {"MatrixInstruction": [16, 16, 16, 1], "MacroTile0": 64, "MacroTile1": 16, "DepthU": 512,
              "WorkGroup": [64, 1, 1], "GlobalSplitU": 1}  # fmt: skip
    seed = seed_from_record(record, profile_for("gfx942").default_genes("B"), context, space)
    # 512 overflows the LDS, and with StaggerU 32 DepthU x 2 bytes must stay within StaggerUStride 256
    assert seed is not None and (seed.depth_u, seed.lds_buffer, seed.stagger_u) == (128, 0, 32)
    assert seed_from_record({"MacroTile0": 64}, {}, context, space) is None
    kernel = KernelParams(mi=(16, 16, 16, 1), mt0=64, mt1=16, wave_group=(1, 1), depth_u=64)
    assert unique([None, kernel, kernel, None]) == [kernel]

"""Every pruning rule rejects a kernel that breaks it and keeps one that does not."""

from __future__ import annotations

import dataclasses

import pytest

from tensilekit.search.params import ProblemShape
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import (
    HARDWARE_RULES,
    RULES,
    Rule,
    accumulators_fit,
    depth_u_fits_mfma,
    global_reads_divide_threads,
    is_valid,
    lds_fits,
    macro_tile_fits_mfma,
    make_context,
    mfma_supported,
    narrow_space,
    prune_reasons,
    split_depth_fits_k,
    split_k_workspace_fits,
    stagger_u_stride_covers_depth_u,
    stream_k_excludes_split_k,
    stream_k_needs_four_waves,
    tile_within_problem,
    vector_width_alignment,
    vector_width_fits_type,
    workgroup_size,
)

from .search_factory import BASE, DECODE, SQUARE, context_for

SMALL_K = ProblemShape(2048, 2048, 32, 128, "T", "N", 128, 128)
ODD_K = ProblemShape(4096, 4096, 1, 4100, "T", "N", 4100, 4100)

CASES: list[tuple[Rule, ProblemShape, dict[str, object], dict[str, object], str]] = [
    # rule, size, rejected changes, kept changes, words of the reason
    (mfma_supported, SQUARE, {"mi": (32, 32, 2, 1), "mt0": 128, "wave_group": (2, 2)}, {}, "no 32x32x2x1"),
    (macro_tile_fits_mfma, SQUARE, {"mt0": 48}, {"mt0": 96}, "not a multiple of MFMA"),
    (macro_tile_fits_mfma, SQUARE, {"mt0": 1024, "wave_group": (1, 2)}, {"mt0": 512, "wave_group": (1, 2)}, "exceeds 32"),
    (depth_u_fits_mfma, SQUARE, {"depth_u": 24}, {"depth_u": 32}, "not a multiple of the MFMA K 16"),
    (workgroup_size, SQUARE, {"wave_group": (8, 1)}, {"wave_group": (4, 1)}, "must be 1, 2 or 4"),
    (stream_k_excludes_split_k, SQUARE, {"stream_k": 3, "gsu": 2}, {"stream_k": 3, "gsu": 1}, "StreamK 3 with GlobalSplitU 2"),
    (vector_width_fits_type, SQUARE, {"grvw_a": 16}, {"grvw_a": 2}, "loads 32 bytes"),
    # AMD: "Kernel Uses 100352 > 65536 bytes of LDS" for BASE with two buffers (tensilelite-7d9fb68).
    (lds_fits, SQUARE, {"lds_buffer": 0}, {"lds_buffer": 0, "depth_u": 32}, "needs 106496 bytes of LDS (2 buffer(s))"),
    (lds_fits, SQUARE, {"lds_buffer": 0}, {"lds_buffer": 0, "prefetch_global_read": 0}, "2 buffer(s)"),
    (lds_fits, SQUARE, {"depth_u": 128}, {"depth_u": 64}, "1 buffer(s)"),
    (stream_k_needs_four_waves, SQUARE, {"stream_k": 3, "wave_group": (2, 1)}, {"stream_k": 3}, "needs 4 waves, not 2"),
    (stagger_u_stride_covers_depth_u, SQUARE, {"depth_u": 256, "mt0": 32, "mt1": 32}, {"depth_u": 256, "mt0": 32, "mt1": 32, "stagger_u": 0}, "exceeds StaggerUStride 256"),
    (global_reads_divide_threads, SQUARE, {"mt1": 16, "depth_u": 64, "wave_group": (4, 1), "mt0": 128}, {"mt1": 16, "depth_u": 64, "wave_group": (4, 1), "mt0": 128, "grvw_b": 2}, "do not divide over 256 threads"),
    (accumulators_fit, SQUARE, {"mt0": 256, "mt1": 256, "wave_group": (1, 1)}, {"mt0": 256, "mt1": 256}, "1024 accumulation registers"),
    (tile_within_problem, DECODE, {"mt1": 128, "wave_group": (2, 1)}, {"mt1": 16, "wave_group": (2, 1)}, "MT1 128 is larger than the problem's 8"),
    (split_depth_fits_k, SMALL_K, {"depth_u": 64, "gsu": 4}, {"depth_u": 64, "gsu": 2}, "DepthU 64 x GSU 4 exceeds K 128"),
    (split_k_workspace_fits, SQUARE, {"gsu": 4}, {"gsu": 2}, "GSU 4 needs 268435456 bytes of workspace"),
    (vector_width_alignment, ODD_K, {"grvw_a": 8}, {"grvw_a": 4, "grvw_b": 4}, "not a multiple of its vector width 8"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "shape", "rejected", "kept", "words"), CASES, ids=[case[0].__name__ for case in CASES]
)
def test_rule_rejects_and_keeps(
    rule: Rule, shape: ProblemShape, rejected: dict[str, object], kept: dict[str, object], words: str
) -> None:
    context = context_for(shape)
    bad = BASE.replace(**rejected)
    good = BASE.replace(**kept)
    reason = rule(bad, context)
    assert reason is not None and words in reason
    assert rule(good, context) is None
    assert (rule.__name__, reason) in prune_reasons(bad, context)
    assert not is_valid(bad, context)


def test_every_rule_has_a_case_and_a_reason_docstring() -> None:
    assert {case[0] for case in CASES} == set(RULES)
    assert len({rule.__name__ for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.__doc__ and len(rule.__doc__.strip().splitlines()[0]) > 20, rule.__name__
    assert set(HARDWARE_RULES) <= set(RULES)


def test_too_many_threads_for_the_hardware() -> None:
    small = dataclasses.replace(profile_for("gfx942"), max_threads=128)
    context = make_context(small, "B", [SQUARE])
    assert workgroup_size(BASE, context) == "256 threads per workgroup exceed 128"


def test_base_kernel_is_valid_and_gfx950_has_more_lds() -> None:
    assert prune_reasons(BASE, context_for(SQUARE)) == []
    deep = BASE.replace(mi=(16, 16, 32, 1), depth_u=128)  # 2 x (128+128) x 128 x 2 bytes = 128 KiB
    assert lds_fits(deep, context_for(SQUARE, arch="gfx942")) is not None
    assert lds_fits(deep, context_for(SQUARE, arch="gfx950")) is None


def test_narrow_space_drops_values_no_kernel_can_use() -> None:
    context = context_for(ProblemShape(2056, 1, 256, 128, "T", "N", 128, 128))
    narrowed = narrow_space(gene_space(profile_for("gfx942"), "B"), context)
    assert narrowed["mt1"] == (16,)
    assert narrowed["mi"] == ((16, 16, 16, 1),)
    assert narrowed["depth_u"] == (32, 64, 128)
    assert narrowed["gsu"] == (1, 2, 4)
    assert narrowed["grvw_a"] == (2, 4, 8)
    assert narrowed["mt0"] == (16, 32, 64, 128, 256)

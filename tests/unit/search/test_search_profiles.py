"""Architecture profiles and the gene spaces they give per data type and dialect."""

from __future__ import annotations

import pytest

from tensilekit.errors import SearchError
from tensilekit.search.params import GENES
from tensilekit.search.profiles import PROFILES, gene_space, profile_for, space_size
from tensilekit.tools.costs import ARCHS


def test_profiles_cover_the_three_architectures_and_agree_with_the_simulator() -> None:
    assert sorted(PROFILES) == ["gfx90a", "gfx942", "gfx950"]
    for arch, profile in PROFILES.items():
        assert profile.cu_count == ARCHS[arch].cu_count and profile.schedule == ARCHS[arch].schedule
        assert tuple(ARCHS[arch].isa) == profile.isa
    assert profile_for("gfx950").lds_bytes == 160 * 1024 and profile_for("gfx942").lds_bytes == 64 * 1024
    assert profile_for("gfx950").dialects == ("tensilelite",)


@pytest.mark.parametrize(("arch", "letters", "mi"), [
    ("gfx90a", "B", (32, 32, 8, 1)), ("gfx942", "H", (16, 16, 16, 1)), ("gfx950", "B", (16, 16, 32, 1)),
    ("gfx942", "F8", (16, 16, 32, 1)), ("gfx942", "S", (32, 32, 2, 1)),
])  # fmt: skip
def test_gene_space_has_every_gene(arch: str, letters: str, mi: tuple[int, ...]) -> None:
    space = gene_space(profile_for(arch), letters)
    assert tuple(space) == GENES and mi in space["mi"]
    assert all(values for values in space.values())
    assert space_size(space) > 1000


def test_vector_widths_and_dialect_limits() -> None:
    gfx942 = profile_for("gfx942")
    assert gfx942.vector_widths(2) == (2, 4, 8)
    assert gfx942.vector_widths(4) == (1, 2, 4)
    assert gfx942.vector_widths(1) == (4, 8, 16)
    assert gene_space(gfx942, "B", "tensile")["wgm_xcc"] == (1,)
    assert gene_space(gfx942, "B", "tensilelite")["wgm_xcc"] == (1, 8)
    assert gfx942.default_genes("S")["grvw_a"] == 4 and gfx942.default_genes("B")["grvw_a"] == 8


def test_errors() -> None:
    with pytest.raises(SearchError, match="no kernel-search profile for 'gfx1100'"):
        profile_for("gfx1100")
    with pytest.raises(SearchError, match="tensile cannot target gfx950"):
        gene_space(profile_for("gfx950"), "B", "tensile")
    with pytest.raises(SearchError, match="no matrix instruction for data type 'F8'"):
        gene_space(profile_for("gfx90a"), "F8")

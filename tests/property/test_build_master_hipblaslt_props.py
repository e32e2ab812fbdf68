"""Differential property test: random sets of one architecture's hipBLASLt logic files, built by
``tensilekit build-master`` and by AMD's tensilelite (``../shared/amd/build-master``), give the same
bytes in every output file (YAML and ``.dat``, non-lazy and lazy), also when the files leave their
LDS padding to tensilelite (``-1``).

Each example costs one AMD call (~3-10 s), so the example count is modest. Files with hipBLASLt
custom kernels are left out: AMD's local tree has no ``CustomKernels`` directory either.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from amd_build import amd_build_master, build_both_formats, has_custom_kernel, written
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

#: arch -> logic/hipblaslt directories holding that architecture's files
ARCH_DIRS: dict[str, tuple[str, ...]] = {
    "gfx90a": ("aldebaran",),
    "gfx942": ("aquavanjaram/gfx942", "aquavanjaram/gfx942_20cu", "aquavanjaram/gfx942_80cu"),
    "gfx940": ("aquavanjaram/gfx940",),
    "gfx941": ("aquavanjaram/gfx941",),
    "gfx908": ("arcturus",),
    "gfx1100": ("navi31",),
    "gfx1101": ("navi32",),
    "gfx1102": ("navi33",),
    "gfx1200": ("gfx1200",),
    "gfx1201": ("gfx1201",),
}


def _files(corpus: Path) -> dict[str, list[Path]]:
    root = corpus / "logic" / "hipblaslt"
    out = {}
    for arch, dirs in ARCH_DIRS.items():
        found = sorted(p for d in dirs for p in (root / d).rglob("*.yaml") if not has_custom_kernel(p))
        assert found, f"corpus has no {arch} logic files"
        out[arch] = found
    return out


@st.composite
def logic_sets(draw: st.DrawFn, files: dict[str, list[Path]]) -> tuple[str, list[Path], bool, bool]:
    arch = draw(st.sampled_from(sorted(files)))
    chosen = draw(st.lists(st.sampled_from(files[arch]), min_size=1, max_size=6, unique=True))
    return arch, sorted(chosen), draw(st.booleans()), draw(st.booleans())


_LDS_KEYS = re.compile(r"^(\s+)(LdsPadA|LdsPadB|LdsBlockSizePerPadA|LdsBlockSizePerPadB): \d+$", re.M)


def _automatic_lds(files: list[Path], folder: Path) -> list[Path]:
    """Copies whose LDS padding is left to tensilelite (-1), as a tuning config may leave it."""
    folder.mkdir()
    out = []
    for number, path in enumerate(files):
        copy = folder / f"{number:02d}_{path.name}"
        copy.write_text(_LDS_KEYS.sub(r"\1\2: -1", path.read_text()))
        out.append(copy)
    return out


@pytest.mark.parametrize(
    ("tool", "options", "examples"),
    [("build-master", [], 6), ("build-master-0.12.1", ["--hipblaslt-version", "0.12.1"], 2)],
    ids=["7d9fb683", "0.12.1"],
)
def test_random_logic_sets_build_like_amd(
    corpus: Path, amd: Path, tool: str, options: list[str], examples: int
) -> None:
    """``build-master`` against hipBLASLt 7d9fb683's TensileCreateLibrary, and ``build-master
    --hipblaslt-version 0.12.1`` against 0.12.1's (``../shared/amd/build-master-0.12.1``)."""
    if not (amd / tool).exists():
        pytest.skip(f"{tool} is not in {amd}")
    files = _files(corpus)

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(logic_sets(files))
    def check(case: tuple[str, list[Path], bool, bool]) -> None:
        arch, chosen, lazy, automatic_lds = case
        with tempfile.TemporaryDirectory() as tmp:
            if automatic_lds:
                chosen = _automatic_lds(chosen, Path(tmp) / "auto")
            theirs = amd_build_master(amd, arch, chosen, Path(tmp) / "amd", lazy=lazy, tool=tool)
            arguments = [*map(str, chosen), *(["--lazy"] if lazy else []), *options]
            ours = build_both_formats(arguments, Path(tmp) / "ours")
            expected = sorted(p.name for p in theirs.iterdir())
            assert expected and [p.name for p in written(ours)] == expected
            for name in expected:
                assert (ours / name).read_bytes() == (theirs / name).read_bytes(), (name, [p.name for p in chosen])

    check()

"""Differential test: rocBLAS (Tensile dialect) builds by ``tensilekit build-master`` and by Tensile
a164ed70's own TensileCreateLibrary library step give the same bytes in every output file.

AMD's side runs ``generateLogicData`` → ``generateSolutions`` → ``generateKernelObjectsFromSolutions``
→ ``getKernelWriters`` → ``generateMasterFileList`` → ``writeMasterFile`` (``tests/tensile_build_driver.py``;
it reproduces ``corpus/masters`` byte for byte), every build of this module in ONE AMD process start.
Both sides write YAML and ``.dat``; file names and bytes must agree, lazy (placeholder files) or not.

Builds:

* fixed cases pinning issue 23 item 8: an XF32 type (kernel names ``…_SB_MX_…``; lazily, a placeholder
  without ``_MX``), an XF32 type and its plain twin built lazily (one ``_Type_SS`` placeholder file),
  a stochastic-rounding type with its plain twin (one placeholder file, no ``_SR``) both ways round,
  ``Fp16AltImplRound`` without ``Fp16AltImpl`` (``…_BH_…``, its ``_Fp16AltRnz`` placeholder); and three
  rules the random builds found: a mixed B8F8 type's placeholder names its A half, merged type rows
  sort by data-type code, and an HHH+HPA type computes in single (``…_HHS_BH_…``);
* a seeded handful of random builds: 1–4 files of the Tensile pool (``tensile_variants.tensile_pool``:
  ``masters-sources`` and ``logic/{rocblas,tensile}``), lazy or not, each file possibly turned into
  a variant (stochastic rounding toggled, XF32 dropped, Fp16AltImplRound only). Set
  ``TENSILEKIT_TENSILE_DIFF_SEED`` (and ``TENSILEKIT_TENSILE_DIFF_BUILDS``) to explore other draws; a
  failure names the seed and the files.

Where AMD's build refuses the files, tensilekit must refuse them too (a clean error, not exit 70).
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from amd_build import tensile_build_masters, written
from click.testing import CliRunner
from tensile_variants import VARIANTS, tensile_pool, variant_file

from tensilekit.cli.main import cli

pytestmark = pytest.mark.corpus

SEED = int(os.environ.get("TENSILEKIT_TENSILE_DIFF_SEED", "20231"))
RANDOM_BUILDS = int(os.environ.get("TENSILEKIT_TENSILE_DIFF_BUILDS", "6"))
#: chance that a drawn file is turned into one of its variants
VARIANT_CHANCE = 0.4

_MX = "logic/rocblas/aquavanjaram/aquavanjaram_Cijk_Ailk_Bjlk_SB_MX.yaml"  # gfx940: retargeted to gfx942
_SR = "masters-sources/aquavanjaram942/aquavanjaram942_Cijk_Ailk_Bjlk_B8B8S_BH_SR.yaml"
_B8 = "logic/rocblas/aquavanjaram942/aquavanjaram942_Cijk_Ailk_Bjlk_B8SS_BH.yaml"
_RZ = "logic/rocblas/aldebaran/fp16altimpl/aldebaran_Cijk_Alik_Bjlk_HHS_BHRZ.yaml"
_HH = "masters-sources/aldebaran/aldebaran_Cijk_Alik_Bjlk_HHS_BH.yaml"
_B8F8 = "logic/rocblas/aquavanjaram/aquavanjaram_Cijk_Ailk_Bjlk_B8F8HS_BH.yaml"  # gfx940: retargeted
_DGEMM = "logic/rocblas/archive/vega20_Cijk_Alik_Bljk_DB.yaml"
_SGEMM = "logic/tensile/miopen/archives/resnet50/2018-09-12/logic/vega20_Cijk_Alik_Bljk_SB.yaml"
_HBH = "logic/tensile/miopen/archives/megatron/2021-02-04/exact/vega20_Cijk_Alik_Bljk_HBH.yaml"  # no ComputeDataType

#: name -> ([(corpus file, variants)], lazy)
FIXED: dict[str, tuple[list[tuple[str, list[str]]], bool]] = {
    "xf32": ([(_MX, [])], False),
    "xf32-lazy": ([(_MX, [])], True),
    "xf32-and-plain-twin-lazy": ([(_MX, []), (_MX, ["no-xf32"])], True),
    "sr-and-plain-twin-lazy": ([(_SR, []), (_SR, ["sr"])], True),
    "plain-and-sr-twin-lazy": ([(_B8, []), (_B8, ["sr"])], True),
    "fp16-round-only": ([(_RZ, ["fp16-round-only"])], False),
    "fp16-round-only-beside-plain-lazy": ([(_HH, []), (_RZ, ["fp16-round-only"])], True),
    "mixed-b8f8-lazy": ([(_B8F8, [])], True),  # placeholder _Type_B8H_HPA: the A half
    "dgemm-then-sgemm": ([(_DGEMM, []), (_SGEMM, [])], False),  # type rows by DataType code
    "half-hpa-computes-in-single": ([(_HBH, [])], False),  # HHH+HPA is HHS_BH
    # keys Tensile's library step reads from the file's ProblemType as written: AMD stops without them
    **{
        f"no-{key}": ([(_DGEMM, [f"no-{key}"])], False)
        for key in ("TotalIndices", "IndicesSummation", "ComplexConjugateB")
    },
}
CASES = [*FIXED, *(f"random-{i}" for i in range(RANDOM_BUILDS))]
#: corpus masters (masters/SOURCES.md) the driver must reproduce: AMD's side is the oracle of this module
DRIVER_CHECKS: dict[str, list[str]] = {
    "aldebaran_HHS_BH_TT_fp16alt": [
        "aldebaran/aldebaran_Cijk_Alik_Bjlk_HHS_BH.yaml",
        "aldebaran/fp16altimpl/aldebaran_Cijk_Alik_Bjlk_HHS_BHR.yaml",
        "aldebaran/fp16altimpl/aldebaran_Cijk_Alik_Bjlk_HHS_BHRZ.yaml",
    ],
    "aquavanjaram942_B8B8S_BH_SR_NT": ["aquavanjaram942/aquavanjaram942_Cijk_Ailk_Bjlk_B8B8S_BH_SR.yaml"],
}


@dataclasses.dataclass
class Build:
    files: list[Path]
    lazy: bool
    amd: dict[str, Any] = dataclasses.field(default_factory=dict)

    def describe(self) -> str:
        return f"seed {SEED}, lazy={self.lazy}, files {[str(f) for f in self.files]}"


def _fixed(corpus: Path, folder: Path) -> dict[str, Build]:
    builds = {}
    for name, (entries, lazy) in FIXED.items():
        files = []
        for number, (rel, variants) in enumerate(entries):
            made = variant_file(corpus / rel, variants, folder / name, f"{number:02d}_{Path(rel).stem}")
            assert made is not None, f"{name}: variant {variants} does not apply to {rel}"
            files.append(made)
        builds[name] = Build(files, lazy)
    return builds


def _random(corpus: Path, folder: Path) -> dict[str, Build]:
    rng = random.Random(SEED)
    pool = tensile_pool(corpus)
    assert len(pool) >= 100, f"the Tensile pool has only {len(pool)} files"
    builds = {}
    for i in range(RANDOM_BUILDS):
        name = f"random-{i}"
        files = []
        for number, source in enumerate(rng.sample(pool, rng.randint(1, 4))):
            stem = f"{number:02d}_{source.stem}"
            variants = [rng.choice(sorted(VARIANTS))] if rng.random() < VARIANT_CHANCE else []
            made = variant_file(source, variants, folder / name, stem) if variants else None
            files.append(made or variant_file(source, [], folder / name, stem) or source)
        builds[name] = Build(files, rng.random() < 0.5)
    return builds


@pytest.fixture(scope="module")
def builds(corpus: Path, amd: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Build]:
    """Every build of this module, AMD's side done in one process."""
    root = tmp_path_factory.mktemp("tensile-diff")
    all_builds = {**_fixed(corpus, root / "variants"), **_random(corpus, root / "variants")}
    for master, sources in DRIVER_CHECKS.items():
        all_builds[f"corpus:{master}"] = Build([corpus / "masters-sources" / rel for rel in sources], False)
    jobs = [
        {"logic": [str(f) for f in build.files], "out": str(root / "amd" / name), "lazy": build.lazy}
        for name, build in all_builds.items()
    ]
    for build, result in zip(all_builds.values(), tensile_build_masters(amd, jobs, root / "scratch"), strict=True):
        build.amd = result
    return all_builds


def _ours(build: Build, out: Path) -> tuple[int, str]:
    """tensilekit's build-master of ``build`` into ``out``, YAML and msgpack (each in its own folder:
    a build owns its output folder), gathered as AMD writes them side by side."""
    out.mkdir(parents=True)
    for fmt in ("yaml", "msgpack"):
        folder = out.parent / f"{out.name}-{fmt}"
        folder.mkdir()  # an existing folder: one file per master, named as AMD names it
        args = ["build-master", "--format", fmt, *map(str, build.files), "-o", f"{folder}/"]
        result = CliRunner().invoke(cli, [*args, *(["--lazy"] if build.lazy else [])])
        if result.exit_code != 0:
            return result.exit_code, result.output
        for path in written(folder):
            shutil.copyfile(path, out / path.name)
    return 0, ""


@pytest.mark.parametrize("case", CASES)
def test_build_master_matches_tensile(builds: dict[str, Build], case: str, tmp_path: Path) -> None:
    build = builds[case]
    code, output = _ours(build, tmp_path / "ours")
    if "error" in build.amd:
        assert code not in (0, 70), f"AMD refuses ({build.amd['error'][-300:]}) but tensilekit: exit {code}"
        return
    assert code == 0, f"{build.describe()}:\n{output}"
    theirs = Path(build.amd["out"])
    expected = sorted(p.name for p in theirs.iterdir())
    assert expected, build.describe()
    assert [p.name for p in written(tmp_path / "ours")] == expected, build.describe()
    for name in expected:
        assert (tmp_path / "ours" / name).read_bytes() == (theirs / name).read_bytes(), f"{name}: {build.describe()}"


@pytest.mark.parametrize("key", ["TotalIndices", "IndicesSummation", "ComplexConjugateB"])
def test_a_problem_type_key_tensile_reads_as_written_is_refused_as_tensile_refuses(
    builds: dict[str, Build], key: str, tmp_path: Path
) -> None:
    """AMD's build stops with a KeyError; tensilekit refuses the same file, naming the key and its value."""
    build = builds[f"no-{key}"]
    assert f"KeyError: '{key}'" in build.amd.get("error", ""), build.amd
    code, output = _ours(build, tmp_path / "ours")
    text = " ".join(output.split())
    assert code not in (0, 70) and f"ProblemType has no {key}: Tensile's TensileCreateLibrary reads it" in text, output
    assert {"TotalIndices": "TotalIndices: 4", "IndicesSummation": "IndicesSummation: [3]"}.get(key, key) in text


@pytest.mark.parametrize("master", sorted(DRIVER_CHECKS))
def test_the_tensile_driver_reproduces_corpus_masters(builds: dict[str, Build], corpus: Path, master: str) -> None:
    """The AMD side of this module writes ``corpus/masters`` byte for byte (same functions, settings)."""
    result = builds[f"corpus:{master}"].amd
    assert "error" not in result, result.get("error")
    (stem,) = result["written"]
    for suffix in (".yaml", ".dat"):
        built = Path(result["out"]) / f"{stem}{suffix}"
        assert built.read_bytes() == (corpus / "masters" / f"{master}{suffix}").read_bytes(), master

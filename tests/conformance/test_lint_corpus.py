"""`tensilekit lint` on AMD's files: one real case of each finding, clean files stay clean, and
the whole corpus lints without an error."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tensilekit.inspect import iter_library_files
from tensilekit.io.master_io import load_master
from tensilekit.lint import lint_file, lint_paths
from tensilekit.selection import GemmProblem, Hardware, select_solution

pytestmark = pytest.mark.corpus


def _codes(path: Path) -> Counter[str]:
    return Counter(finding.code for finding in lint_file(path).findings)


def test_dead_entry_rocblas_gsu_kernel_below_its_min_k(corpus: Path) -> None:
    # a MIOpen arcturus exact-logic file: GSU kernels tuned at K = 4 and 128 need K >= 256
    path = corpus / "logic/tensile/miopen/archives/dlrm/2020-08-27/exact/arcturus_Cijk_Ailk_Bljk_SB.yaml"
    dead = [f for f in lint_file(path).findings if f.code == "dead-entry"]
    assert [f.path for f in dead] == ["[7][0]", "[7][1]", "[7][6]", "[7][12]"]
    assert "GlobalSplitUCheckMinK: not (K=4 >= 256)" in dead[0].message
    assert dead[0].line is not None


def test_hipblaslt_gsu_1_kernels_are_not_dead(corpus: Path) -> None:
    # hipBLASLt writes GlobalSplitUCheckMinK as [minK, GSU] and the runtime skips it for GSU 1:
    # its GSU-1 kernels tuned at K = 64 and 128 answer their own sizes
    path = corpus / "logic/hipblaslt/navi31/GridBased/navi31_Cijk_Alik_Bljk_HSS_BH_Bias_HAS_SAV_UserArgs.yaml"
    assert "dead-entry" not in _codes(path)


def test_dead_entry_clean_when_only_open_fields_fail(corpus: Path) -> None:
    # kernels asserting a beta value / a batch > 152: the key leaves beta and batch open
    for name in (
        "rocblas/nonMFMA_legacy/aldebaran_Cijk_Ailk_Bjlk_DB.yaml",
        "rocblas/aquavanjaram942X/aquavanjaram942_Cijk_Ailk_Bjlk_BBS_BH.yaml",
    ):
        assert "dead-entry" not in _codes(corpus / "logic" / name), name


def test_shadowed_and_unreachable_in_generated_master(corpus: Path) -> None:
    path = corpus / "masters/aldebaran_NN_mixed.yaml"
    findings = lint_file(path).findings
    shadowed = [f for f in findings if f.code == "shadowed-entry"]
    assert shadowed and all(f.line is not None for f in shadowed)
    unreachable = {f.path: f for f in findings if f.code == "unreachable-kernel"}
    assert "referenced by no table entry" in unreachable["solutions[61]"].message
    # the runtime agrees: the kernel no entry names is selected for no table key
    library = load_master(path)
    never = library.solutions[61].index
    hardware = Hardware(arch="gfx90a")
    for entry_key in ([784, 128, 512], [1024, 1024, 1024]):
        problem = GemmProblem(m=entry_key[0], n=entry_key[1], k=entry_key[2], a_type="Half", hpa=False)
        assert select_solution(library, problem, hardware).index != never


def test_no_fallback_equality_logic_and_clean_master(corpus: Path) -> None:
    equality = corpus / "logic/rocblas/aquavanjaram942X/equality/aquavanjaram942_Cijk_Alik_Bljk_HHS_BH.yaml"
    assert _codes(equality)["no-fallback"] == 1
    # the generated master joins that kind of table with a Euclidean one: not flagged
    assert "no-fallback" not in _codes(corpus / "masters/aldebaran_SB_NN_equality.dat")


def test_grid_outlier_hipblaslt_gridbased(corpus: Path) -> None:
    path = (
        corpus
        / "logic/hipblaslt/aquavanjaram/gfx942/GridBased/aquavanjaram_Cijk_Ailk_Bljk_HF8_HHS_BH_Bias_HAS_SAB_SAV_UserArgs.yaml"
    )
    (outlier,) = [f for f in lint_file(path).findings if f.code == "grid-outlier"]
    assert outlier.path.startswith("[7][") and outlier.line is not None
    assert "grid cell M=512 N=64 batch=1 K=1536" in outlier.message
    assert "macro tile 256x64" in outlier.message
    # the other GridBased files of that folder have none
    others = sorted(path.parent.glob("*.yaml"))[:6]
    assert not [f for other in others if other != path for f in lint_file(other).findings if f.code == "grid-outlier"]


def test_clean_master(corpus: Path) -> None:
    codes = _codes(corpus / "masters/aquavanjaram942_B8B8S_BH_SR_NT.dat")
    assert set(codes) == {"size"}


#: rocBLAS_Full's 78 MB YAML twin: its .dat holds the same library (tests/golden checks that), and
#: reading the YAML would double the longest test of the suite.
FULL_YAML = "masterlib/tensile/SolutionLibraries/rocBLAS_Full.yaml.gz"


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["logic", "masters", "masterlib"])
def test_corpus_lints_without_error(corpus: Path, folder: str) -> None:
    paths = [path for path in iter_library_files([corpus / folder]) if path != corpus / FULL_YAML]
    results = lint_paths(paths)
    assert results
    unreadable = [result.path for result in results if result.kind == "unreadable"]
    assert not unreadable
    for result in results:
        assert any(f.code == "size" for f in result.findings), result.path

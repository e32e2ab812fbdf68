"""Golden tests: ``build-master`` on hipBLASLt logic writes what tensilelite's TensileCreateLibrary writes.

``corpus/masters-hipblaslt`` holds five masters AMD's tensilelite (hipBLASLt 7d9fb683) built;
``tensilekit build-master`` (dialect detected from the files) must give the same bytes, YAML and
``.dat``. The lazy layout is compared with ``../shared/amd/build-master --lazy`` file by file.

The FreeSize master includes two files with hipBLASLt custom kernels, whose ``custom.config`` lives
in hipBLASLt's ``tensilelite/Tensile/CustomKernels/<name>.s`` (not in the corpus, nor in AMD's local
tree). With ``$TENSILEKIT_HIPBLASLT_CUSTOM_KERNELS`` pointing at that directory the test uses it;
otherwise it writes a stand-in ``.s`` per custom kernel holding only the ``custom.config`` block
(``InternalSupportParams``, the one key hipBLASLt's configs set) read from that kernel's record in
the master, so that every other byte of the master is still checked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from amd_build import (
    HIPBLASLT_MASTERS,
    amd_build_master,
    build_both_formats,
    has_custom_kernel,
    logic_files,
    written,
)
from click.testing import CliRunner

from tensilekit.cli.main import cli

pytestmark = pytest.mark.corpus


def _custom_kernels(corpus: Path, master: str, files: list[Path], folder: Path) -> Path | None:
    if not any(has_custom_kernel(f) for f in files):
        return None
    given = os.environ.get("TENSILEKIT_HIPBLASLT_CUSTOM_KERNELS")
    if given:
        return Path(given)
    folder.mkdir()
    records = yaml.load((corpus / "masters-hipblaslt" / f"{master}.yaml").read_text(), Loader=yaml.CSafeLoader)
    for record in records["solutions"]:
        custom = record["sizeMapping"]["CustomKernelName"]
        if custom:
            support = record["internalArgsSupport"]
            config = {
                "custom.config": {
                    "InternalSupportParams": {
                        "KernArgsVersion": support["version"],
                        "SupportUserGSU": support["gsu"],
                        "SupportCustomWGM": support["wgm"],
                        "SupportCustomStaggerU": support["staggerU"],
                        "UseUniversalArgs": support["useUniversalArgs"],
                    }
                }
            }
            (folder / f"{custom}.s").write_text(f".amdgpu_metadata\n---\n{yaml.safe_dump(config)}...\n")
    return folder


@pytest.mark.parametrize("master", sorted(HIPBLASLT_MASTERS))
@pytest.mark.parametrize("suffix", [".yaml", ".dat"])
def test_hipblaslt_master_is_byte_identical(corpus: Path, tmp_path: Path, master: str, suffix: str) -> None:
    _, patterns = HIPBLASLT_MASTERS[master]
    files = logic_files(corpus, patterns)
    out = tmp_path / f"{master}{suffix}"
    args = ["build-master", *map(str, files), "-o", str(out)]
    custom = _custom_kernels(corpus, master, files, tmp_path / "custom")
    if custom is not None:
        args += ["--custom-kernels", str(custom)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (corpus / "masters-hipblaslt" / f"{master}{suffix}").read_bytes()


def test_dialect_override_and_missing_custom_kernels(corpus: Path, tmp_path: Path) -> None:
    _, patterns = HIPBLASLT_MASTERS["hipblaslt_gfx942_freesize"]
    files = logic_files(corpus, patterns)
    result = CliRunner().invoke(cli, ["build-master", *map(str, files), "-o", str(tmp_path / "x.yaml")])
    assert result.exit_code == 3 and "CustomKernelName" in result.output and "--custom-kernels" in result.output
    assert not (tmp_path / "x.yaml").exists()
    _, patterns = HIPBLASLT_MASTERS["hipblaslt_navi31_all"]
    navi = list(map(str, logic_files(corpus, patterns)))
    # forced to Tensile's dialect, Tensile's derivation refuses tensilelite's kernels (with a location)
    forced = CliRunner().invoke(cli, ["build-master", *navi, "--dialect", "tensile", "-o", str(tmp_path / "t.yaml")])
    assert forced.exit_code == 3 and "[5][0]" in forced.output and not (tmp_path / "t.yaml").exists()
    lite = CliRunner().invoke(cli, ["build-master", *navi, "--dialect", "tensilelite", "-o", str(tmp_path / "l.yaml")])
    assert lite.exit_code == 0
    assert (tmp_path / "l.yaml").read_bytes() == (
        corpus / "masters-hipblaslt" / "hipblaslt_navi31_all.yaml"
    ).read_bytes()


@pytest.mark.parametrize("master", [m for m in sorted(HIPBLASLT_MASTERS) if "freesize" not in m])
def test_lazy_layout_matches_amd(corpus: Path, amd: Path, tmp_path: Path, master: str) -> None:
    """Every file of the lazy build (master + placeholders), YAML and .dat, equals AMD's --lazy build."""
    arch, patterns = HIPBLASLT_MASTERS[master]
    files = logic_files(corpus, patterns)
    theirs = amd_build_master(amd, arch, files, tmp_path / "amd", lazy=True)
    ours = build_both_formats(["--lazy", *map(str, files)], tmp_path / "ours")
    expected = sorted(p.name for p in theirs.iterdir())
    assert [p.name for p in written(ours)] == expected
    assert f"TensileLibrary_lazy_{arch}.yaml" in expected and len(expected) > 2
    for name in expected:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name

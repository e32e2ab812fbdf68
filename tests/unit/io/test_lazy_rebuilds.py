"""Issue 23 items 3-5: a lazy library is one set (master + shards + mapping), on disk and when read.

* A build owns its output folder's library files: rebuilding a folder in another ``--format``
  leaves nothing of the previous build (the runtime probes ``.dat.zlib`` before ``.dat``, so an old
  shard would answer); code objects and other files stay.
* ``diff`` of two lazy masters compares their content, which is their shards.
* A reader never combines a master of one build with shards of another: the folder is read
  through one generation, a mix is refused (``LibraryChanged``) and ``select`` reads again.

The logic files are small hand-made ones (``tests/unit/build/logic_factory.py``): two builds of
one problem type whose kernels differ, so each answer says which build it came from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tests.unit.build.logic_factory import list_logic, solution

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX folder swaps")

MASTER = "TensileLibrary_lazy_gfx90a"
SHARD = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
FORMATS = ("yaml", "msgpack", "zlib", "msgpack-indexed")
SUFFIX = {"yaml": ".yaml", "msgpack": ".dat", "zlib": ".dat.zlib", "msgpack-indexed": ".dat.zlib"}


def _logic(folder: Path, name: str, tile: int, *, sizes: tuple[int, ...] = (1024,)) -> Path:
    """One NN SGEMM logic file: kernel 0 (``MT<tile>``) for ``sizes``, kernel 1 (MT32) for 64."""
    solutions = [solution(0, MacroTile0=tile, MacroTile1=tile), solution(1, MacroTile0=32, MacroTile1=32)]
    table = [[[size, size, 1, size], [0, 100.0]] for size in sizes] + [[[64, 64, 1, 64], [1, 50.0]]]
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(list_logic(solutions, table)))
    return path


@pytest.fixture(scope="module")
def logic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logic")
    return {"old": _logic(folder, "old", 64), "new": _logic(folder, "new", 128)}


def _build(logic: Path, output: Path, fmt: str, *, lazy: bool = True) -> str:
    args = ["build-master", *(["--lazy"] if lazy else []), "--format", fmt, "-o", str(output), str(logic)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


def _select(library: Path, size: int = 1024) -> tuple[int, str]:
    """(exit code, kernel name or the error line) of one ``select``."""
    args = ["select", "-l", str(library), "--arch", "gfx90a", "--json", str(size), str(size), str(size)]
    result = CliRunner().invoke(cli, args)
    if result.exit_code != 0:
        return result.exit_code, result.output
    return 0, str(json.loads(result.stdout)["name"])


def _kernel(logic: Path, tmp_path: Path) -> str:
    fresh = tmp_path / f"fresh-{logic.stem}"
    _build(logic, fresh, "msgpack")
    code, kernel = _select(fresh)
    assert code == 0, kernel
    return kernel


# -- 3. a build owns its output folder's library files -------------------------------------------


@pytest.mark.parametrize(("first", "second"), [(a, b) for a in FORMATS for b in FORMATS if a != b])
def test_rebuild_in_another_format_leaves_no_stale_library_files(
    logic: dict[str, Path], tmp_path: Path, first: str, second: str
) -> None:
    out = tmp_path / "lib"
    _build(logic["old"], out, first)
    (out / "TensileLibrary_gfx90a.co").write_bytes(b"code object")  # not a library file: stays
    _build(logic["new"], out, second)
    names = sorted(path.name for path in out.iterdir())
    library_names = [name for name in names if not name.endswith(".co")]
    assert all(name.endswith(SUFFIX[second]) for name in library_names), names
    assert f"{MASTER}{SUFFIX[second]}" in names and f"{SHARD}{SUFFIX[second]}" in names
    assert "TensileLibrary_gfx90a.co" in names
    assert not [name for name in names if name.startswith(".")], names  # no temporaries left
    # select answers as a fresh build of the new logic does, through the folder and the master
    fresh = _kernel(logic["new"], tmp_path)
    assert _select(out) == (0, fresh)
    assert _select(out / f"{MASTER}{SUFFIX[second]}") == (0, fresh)
    # validate sees the one set: every placeholder file present, no stale catalog beside it
    result = CliRunner().invoke(cli, ["validate", str(out / f"{MASTER}{SUFFIX[second]}")])
    assert result.exit_code == 0, result.output


def test_rebuild_drops_shards_no_master_names_any_more(logic: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "lib"
    _build(logic["old"], out, "zlib")
    orphan = out / "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a.dat.zlib"
    orphan.write_bytes((out / f"{SHARD}.dat.zlib").read_bytes())  # a shard an earlier build named
    _build(logic["new"], out, "zlib")
    assert not orphan.exists()


def test_single_file_rebuild_removes_the_other_catalog_spelling(logic: dict[str, Path], tmp_path: Path) -> None:
    # X.dat and X.dat.zlib are one catalog to the runtime, which reads X.dat.zlib first
    target = tmp_path / "TensileLibrary_gfx90a.dat"
    _build(logic["old"], target, "zlib", lazy=False)
    assert (tmp_path / "TensileLibrary_gfx90a.dat.zlib").is_file()
    output = _build(logic["new"], target, "msgpack", lazy=False)
    assert not (tmp_path / "TensileLibrary_gfx90a.dat.zlib").exists()
    assert "removed stale" in output
    assert _select(target) == (0, _kernel(logic["new"], tmp_path))


# -- 4. a lazy master's content is its shards ----------------------------------------------------


@pytest.mark.parametrize("grid", [False, True])
def test_diff_of_lazy_masters_compares_their_shards(logic: dict[str, Path], tmp_path: Path, grid: bool) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _build(logic["old"], old, "msgpack")
    _build(logic["new"], new, "zlib")
    args = ["diff", "--exit-code", *(["--grid"] if grid else [])]
    result = CliRunner().invoke(cli, [*args, str(old / f"{MASTER}.dat"), str(new / f"{MASTER}.dat.zlib")])
    assert result.exit_code == 1, result.output
    assert "no differences" not in result.output
    assert "MT128x128" in result.output and "MT64x64" in result.output
    # the same logic, lazy and not: no difference (a lazy master equals its non-lazy build)
    flat = tmp_path / "TensileLibrary_gfx90a.dat"
    _build(logic["old"], flat, "msgpack", lazy=False)
    result = CliRunner().invoke(cli, [*args, str(old / f"{MASTER}.dat"), str(flat)])
    assert result.exit_code == 0, result.output
    assert "no differences" in result.output


def test_diff_of_lazy_masters_with_only_a_shard_changed(logic: dict[str, Path], tmp_path: Path) -> None:
    # the masters are byte-identical; only the shard's table differs (another size)
    folder = tmp_path / "logic"
    folder.mkdir()
    more = _logic(folder, "more", 64, sizes=(1024, 2048))
    old, new = tmp_path / "old", tmp_path / "new"
    _build(logic["old"], old, "yaml")
    _build(more, new, "yaml")
    assert (old / f"{MASTER}.yaml").read_bytes() == (new / f"{MASTER}.yaml").read_bytes()
    result = CliRunner().invoke(cli, ["diff", "--exit-code", str(old / f"{MASTER}.yaml"), str(new / f"{MASTER}.yaml")])
    assert result.exit_code == 1, result.output
    assert "2048" in result.output

"""Issue 17: Placeholder nodes are confined to the library's own folder.

A lazy master names its per-problem-type files by prefix; the prefix must be a plain name (no
``..``, no absolute path), the file must not be the master itself nor a symlink leading out of
the folder, and a lazily loaded file must not hold placeholders of its own (a chain could loop).
Each is an input error with a location, and ``select`` exits 3 (never 70, never a hang).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from amd_build import written
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.errors import InvalidValue
from tensilekit.io.master_io import load_placeholder

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
MASTER = "TensileLibrary_lazy_gfx90a.yaml"
PART = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lazy") / "lib"
    logic = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"
    result = CliRunner().invoke(cli, ["build-master", "--lazy", str(logic), "-o", str(folder), "--format", "yaml"])
    assert result.exit_code == 0, result.output
    assert [path.name for path in written(folder)] == sorted([MASTER, PART + ".yaml"])
    return folder


@pytest.fixture
def lazy(built: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "lib"
    shutil.copytree(built, folder)
    return folder


def _select(master: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["select", "-l", str(master), "--arch", "gfx90a", "1024", "1024", "1024"])
    return result.exit_code, result.output


def _rename_placeholder(folder: Path, value: str) -> Path:
    master = folder / MASTER
    text = master.read_text()
    assert f"value: {PART}" in text
    master.write_text(text.replace(f"value: {PART}", f"value: '{value}'"))
    return master


def test_a_valid_lazy_library_selects(lazy: Path) -> None:
    code, output = _select(lazy / MASTER)
    assert code == 0, output


@pytest.mark.parametrize("value", ["../../../../etc/passwd", "/etc/passwd", "sub/dir", "..", ""])
def test_placeholder_with_a_path_is_refused_when_read(lazy: Path, value: str) -> None:
    master = _rename_placeholder(lazy, value)
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(master)
    location = caught.value.location
    assert location is not None and location.file == str(master)
    assert location.path is not None and location.path.endswith(".value") and location.line == 14
    assert _select(master)[0] == 3


def test_placeholder_naming_the_master_itself(lazy: Path) -> None:
    master = _rename_placeholder(lazy, MASTER.removesuffix(".yaml"))
    code, output = _select(master)
    assert code == 3 and "names the master library itself" in output, output


def test_placeholder_symlink_out_of_the_folder(lazy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    (lazy / (PART + ".yaml")).rename(outside)
    (lazy / (PART + ".yaml")).symlink_to(outside)
    code, output = _select(lazy / MASTER)
    assert code == 3 and "leads out of the library folder" in output, output
    with pytest.raises(InvalidValue):
        load_placeholder(lazy / MASTER, PART)


def test_placeholder_file_holding_a_placeholder_cycle(lazy: Path) -> None:
    part = lazy / (PART + ".yaml")
    text = part.read_text()
    # the per-type file's library becomes a Placeholder naming the master: a cycle
    head, _, _ = text.partition("library:")
    part.write_text(head + "library: {type: Placeholder, value: TensileLibrary_lazy_gfx90a}\nsolutions: []\n...\n")
    code, output = _select(lazy / MASTER)
    assert code == 3 and "placeholders do not nest" in output, output


def test_load_placeholder_refuses_a_bad_prefix_from_the_api(lazy: Path) -> None:
    with pytest.raises(InvalidValue, match="placeholder names a library file"):
        load_placeholder(lazy / MASTER, "../" + PART)


def test_validate_reports_placeholder_problems(lazy: Path) -> None:
    from tensilekit.inspect import validate_file

    assert validate_file(lazy / MASTER).ok
    (lazy / (PART + ".yaml")).unlink()
    result = validate_file(lazy / MASTER)
    assert not result.ok
    [finding] = [f for f in result.findings if f.code == "placeholder"]
    assert "does not exist" in finding.message and finding.line == 14 and finding.path.endswith(".value")
    master = _rename_placeholder(lazy, MASTER.removesuffix(".yaml"))
    messages = [f.message for f in validate_file(master).findings if f.code == "placeholder"]
    assert messages == [f"placeholder {MASTER.removesuffix('.yaml')!r} names the master library itself"]

"""Issue 23, items 7, 8, 9 and 12: hostile inputs to the readers are located errors (exit 3),
never a hang, unbounded memory, a RecursionError or a silently different reading.

One section per kind; each case is built here (the probe's own inputs are kept back).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import InputNotFound, UnsupportedFormat
from tensilekit.io.files import read_bytes

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
MASTER = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"
LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


# -- item 8: non-regular inputs are refused before a byte is read ---------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "queue.yaml"
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_unread_by_the_reader(fifo: Path) -> None:
    # opening a FIFO for reading blocks until a writer comes: reaching here at all is the test
    with pytest.raises(UnsupportedFormat) as caught:
        read_bytes(fifo)
    assert "FIFO" in caught.value.message and caught.value.location is not None
    assert caught.value.location.file == str(fifo)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_unread_by_the_reader() -> None:
    with pytest.raises(UnsupportedFormat, match="character device"):
        read_bytes("/dev/zero")  # would read until memory runs out


@pytest.mark.parametrize(
    "command",
    [
        ["info", "{}"],
        ["validate", "{}"],
        ["convert", "{}", "{out}/x.dat"],
        ["build-master", "{}", "-o", "{out}/lib"],
        ["diff", "{}", str(MASTER)],
        ["select", "-l", "{}", "--arch", "gfx90a", "64", "64", "64"],
        ["select", "-l", str(MASTER), "--arch", "gfx90a", "--queries", "{}"],
        ["coverage", "-l", str(MASTER), "--arch", "gfx90a", "{}"],
    ],
    ids=lambda command: command[0] + ("-queries" if "--queries" in command else ""),
)
def test_every_command_refuses_a_fifo_with_its_path(command: list[str], fifo: Path, tmp_path: Path) -> None:
    args = [part.replace("{}", str(fifo)).replace("{out}", str(tmp_path)) for part in command]
    code, output = _run(*args)
    expected = 1 if command[0] == "validate" else 3  # validate reports it as an error finding
    assert code == expected, output
    assert str(fifo) in output and "FIFO" in output, output


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", [["info"], ["select", "--arch", "gfx90a", "64", "64", "64", "-l"]])
def test_commands_refuse_dev_zero(command: list[str]) -> None:
    code, output = _run(*command, "/dev/zero")
    assert code == 3 and "/dev/zero" in output and "character device" in output, output


def test_a_missing_file_is_still_not_found(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        read_bytes(tmp_path / "absent.yaml")


# -- item 12: a placeholder shard that is a symlink loop ------------------------------------------

LAZY_MASTER = "TensileLibrary_lazy_gfx90a.yaml"
SHARD = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"


@pytest.fixture(scope="module")
def lazy_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lazy") / "lib"
    code, output = _run("build-master", "--lazy", str(LOGIC), "-o", str(folder), "--format", "yaml")
    assert code == 0, output
    return folder


@pytest.mark.parametrize("spelling", [SHARD + ".yaml", SHARD + ".yaml.zlib"])
def test_a_placeholder_shard_that_is_a_symlink_loop(lazy_build: Path, tmp_path: Path, spelling: str) -> None:
    folder = tmp_path / "lib"
    shutil.copytree(lazy_build, folder)
    (folder / (SHARD + ".yaml")).unlink()
    (folder / spelling).symlink_to(spelling)  # points at itself: resolving it never ends
    master = str(folder / LAZY_MASTER)
    code, output = _run("select", "-l", master, "--arch", "gfx90a", "1024", "1024", "1024")
    assert code == 3 and "symlink loop" in output and spelling in output, output
    code, output = _run("diff", master, master)
    assert code == 3 and "symlink loop" in output, output
    # validate locates it at the placeholder node (line of the master), as for a missing shard
    code, output = _run("validate", master)
    assert code == 1 and f"{LAZY_MASTER}:14:" in output and f"{spelling} is a symlink loop" in output, output

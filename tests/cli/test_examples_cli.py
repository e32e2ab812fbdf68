"""``tensilekit examples DIR``: tensilekit's own example libraries, the files the guides use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from amd_build import amd_build_master

import tensilekit
from tensilekit.data import sample_library_path
from tensilekit.data.examples import example_files, generate_example_files, write_examples
from tensilekit.errors import OutputNotWritable

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return example_files()


def test_the_shipped_examples_are_what_the_code_generates_and_small(files: dict[str, bytes]) -> None:
    assert generate_example_files() == files, "the shipped examples are stale: run fixtures/logic/make_sample.py"
    assert sum(len(data) for data in files.values()) < 300_000


def test_the_gfx90a_files_are_the_fixtures_and_the_embedded_sample(files: dict[str, bytes]) -> None:
    for name in ("aldebaran_Cijk_Ailk_Bljk_SB.yaml", "aldebaran_Cijk_Alik_Bljk_HHS_BH.yaml"):
        assert files[f"logic/{name}"] == (FIXTURES / "logic" / f"sample_{name}").read_bytes(), name
    assert files["TensileLibrary_gfx90a.yaml"] == sample_library_path().read_bytes()
    master = tensilekit.loads_master(files["TensileLibrary_gfx90a.dat"])
    assert master == tensilekit.loads_master(files["TensileLibrary_gfx90a.yaml"])


def test_every_example_loads_as_the_kind_its_folder_says(files: dict[str, bytes]) -> None:
    for name, data in files.items():
        loaded = tensilekit.loads(data)
        kind = "master" if name.startswith("TensileLibrary") else "logic"
        assert type(loaded).__name__ == ("MasterLibrary" if kind == "master" else "LogicFile"), name


def test_the_gfx942_master_is_what_amds_build_writes(files: dict[str, bytes], amd: Path, tmp_path: Path) -> None:
    """hipBLASLt 7d9fb683's TensileCreateLibrary library code builds the same bytes from the logic."""
    logic = []
    for name, data in files.items():
        if name.startswith("logic-gfx942/"):
            path = tmp_path / "logic" / Path(name).name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            logic.append(path)
    out = amd_build_master(amd, "gfx942", sorted(logic), tmp_path / "amd")
    assert (out / "TensileLibrary_gfx942.dat").read_bytes() == files["TensileLibrary_gfx942.dat"]


def test_write_keeps_changed_files_unless_forced(tmp_path: Path) -> None:
    written = write_examples(tmp_path / "demo")
    assert sorted(path.relative_to(tmp_path / "demo").as_posix() for path in written) == sorted(example_files())
    write_examples(tmp_path / "demo")  # the same files again: nothing to refuse
    edited = tmp_path / "demo" / "tuned" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"
    edited.write_text("# my edit\n")
    with pytest.raises(OutputNotWritable, match="exists with other content.*--force"):
        write_examples(tmp_path / "demo")
    assert edited.read_text() == "# my edit\n"
    write_examples(tmp_path / "demo", force=True)
    assert edited.read_bytes() == example_files()["tuned/aldebaran_Cijk_Ailk_Bljk_SB.yaml"]


def test_the_command_says_what_it_wrote(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tensilekit", "examples", "demo"], cwd=tmp_path, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"wrote {len(example_files())} example files into demo: TensileLibrary_gfx90a.dat, ")
    (tmp_path / "demo" / "TensileLibrary_gfx90a.dat").write_bytes(b"x")
    again = subprocess.run(
        [sys.executable, "-m", "tensilekit", "examples", "demo"], cwd=tmp_path, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert again.returncode == 4
    assert "demo/TensileLibrary_gfx90a.dat: exists with other content" in again.stderr

"""Issue 18: canonical dict logic (named keys, Solutions keyed by name, factored), ``.yaml.zst``.

Fixtures: corpus hipBLASLt logic files converted by tensilekit's own writer; each converted file
must build the same master (byte for byte) as the original.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import tensilekit
from tensilekit.errors import DecodeError
from tensilekit.io.logic_io import dump_logic, dumps_logic, load_logic
from tensilekit.io.master_io import dumps_master

SAMPLES = (
    "aldebaran_Cijk_Alik_Bjlk_SB_Bias_HA_SAV.yaml",  # CUCount in the architecture
    "navi31_Cijk_Alik_Bljk_DB_UserArgs.yaml",  # Equality
    "navi31_Cijk_Alik_Bjlk_SB_Bias_HAS_SAV_UserArgs.yaml",  # GridBased
)


def _corpus_logic(corpus: Path, name: str) -> Path:
    found = sorted((corpus / "logic" / "hipblaslt").rglob(name))
    if not found:
        pytest.skip(f"{name} is not in this corpus")
    return found[0]


@pytest.fixture(params=SAMPLES)
def logic_path(request: pytest.FixtureRequest, corpus: Path) -> Path:
    return _corpus_logic(corpus, str(request.param))


def test_canonical_zst_builds_the_same_master(logic_path: Path, tmp_path: Path) -> None:
    target = tmp_path / (logic_path.stem + ".yaml.zst")
    text = dump_logic(load_logic(logic_path), target, layout="canonical")
    assert target.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # one zstd frame
    assert target.stat().st_size < len(text)
    data = yaml.safe_load(text)
    assert isinstance(data, dict) and isinstance(data["Solutions"], dict)
    assert data["LibraryType"] in ("Equality", "GridBased", "FreeSize")
    assert all("ProblemType" not in solution for solution in data["Solutions"].values())
    assert "true" in text and "True" not in text
    original = dumps_master(tensilekit.build_master([logic_path]), "msgpack")
    assert dumps_master(tensilekit.build_master([target]), "msgpack") == original
    # read back: the same text again, and detected by content under any name
    again = load_logic(target)
    assert dumps_logic(again) == text
    renamed = tmp_path / "logic.bin"
    renamed.write_bytes(target.read_bytes())
    assert dumps_logic(tensilekit.load(renamed)) == text  # type: ignore[arg-type]


def test_keyed_solutions_are_ordered_by_solution_index(logic_path: Path, tmp_path: Path) -> None:
    text = dumps_logic(load_logic(logic_path), layout="canonical")
    data = yaml.safe_load(text)
    names = list(data["Solutions"])
    assert names == sorted(names)  # yaml.dump sorts mapping keys: order comes from SolutionIndex
    logic = tensilekit.loads(text.encode())
    assert [s.solution_index for s in logic.solutions] == list(range(len(names)))  # type: ignore[union-attr]


def test_damaged_zst_is_a_clear_error(logic_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "x.yaml.zst"
    dump_logic(load_logic(logic_path), target, layout="canonical")
    target.write_bytes(target.read_bytes()[:200])
    with pytest.raises(DecodeError) as caught:
        load_logic(target)
    assert "zstd" in str(caught.value) and "x.yaml.zst" in str(caught.value)

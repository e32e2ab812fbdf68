"""Issue 18: ``build-master`` on tensilelite logic whose ``LibraryType`` is ``Prediction`` (Origami pools).

AMD's runnable tensilelite (hipBLASLt 7d9fb683, ``../shared/amd/build-master``) does not know
Prediction: its ``parseLibraryLogicList`` takes every LibraryType but FreeSize for a Matching
distance, and ``MatchingLibrary.FromOriginalState`` then fails on the missing index order (asserted
below). So the structure is the one read from the newer source, rocm-libraries
``projects/hipblaslt/tensilelite/Tensile/SolutionLibrary.py`` @ 003add5959de (``PredictionLibrary``,
``selection``) and ``Tensile/LibraryIO.py`` @ 09ee40199827 (``parseLibraryLogicList``): the pool is
every solution of the file in order, as for FreeSize, behind a Problem row whose predicate is
``PredictionMatching``, written ``{type: Prediction, table: [index, …]}``. Every other level is the
FreeSize build's, so the differential test builds the same file as FreeSize with AMD's tool, rewrites
that one level by those rules, and wants tensilekit's Prediction build byte for byte (``.dat``; the
YAML as a tree), lazy and not.

Fixture: a corpus FreeSize file (8 solutions, no custom kernels) with its LibraryType set to
Prediction (``_logic``), written per test; nothing from the corpus is kept in the project.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml
from amd_build import amd_build_master, build_both_formats, written
from click.testing import CliRunner
from selection_factory import as_prediction_pools

from tensilekit.cli.main import cli
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.io.master_io import dumps_master, load_master
from tensilekit.model.library import PredictionNode

pytestmark = pytest.mark.corpus

_SOURCE = (
    "aquavanjaram/gfx942/FreeSize/aquavanjaram_Cijk_Ailk_Bljk_HF8_HHS_BH_Bias_HAS_SAB_SAV_freesize_custom_GSU2.yaml"
)
_QUERY = "1024 1024 1024 --type fp16,fp8,fp16,fp16,f32 --compute-type f32_fast_f16 --arch gfx942".split()


def _logic(corpus: Path, folder: Path, library_type: str = "Prediction", name: str = "pred.yaml", **edit: Any) -> Path:
    """The corpus FreeSize file as ``library_type``; ``edit`` sets keys on every solution."""
    data = yaml.load((corpus / "logic" / "hipblaslt" / _SOURCE).read_text(), Loader=yaml.CSafeLoader)
    assert data[11] == "FreeSize" and data[6] is None and data[7] is None  # AMD's layout for a pool file
    data[11] = library_type
    for solution in data[5]:
        solution.update(edit)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _expected_dat(amd_dat: Path) -> bytes:
    raw = amd_dat.read_bytes()
    tree = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    assert msgpack.packb(tree) == raw  # re-packing AMD's own file is exact, so the rewrite is the only change
    return bytes(msgpack.packb(as_prediction_pools(tree)))


def test_amd_7d9fb683_does_not_know_prediction(corpus: Path, amd: Path, tmp_path: Path) -> None:
    logic = _logic(corpus, tmp_path)
    result = subprocess.run(
        [str(amd / "build-master"), "--arch", "gfx942", "--out", str(tmp_path / "amd"), str(logic)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode != 0 and "MatchingLibrary.FromOriginalState" in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_prediction_build_is_amds_freesize_build_with_the_pool_level_rewritten(
    corpus: Path, amd: Path, tmp_path: Path, lazy: bool
) -> None:
    freesize = _logic(corpus, tmp_path / "fs", "FreeSize")
    prediction = _logic(corpus, tmp_path / "pred")
    theirs = amd_build_master(amd, "gfx942", [freesize], tmp_path / "amd", lazy=lazy)
    ours = build_both_formats(
        [str(prediction), *(["--lazy"] if lazy else [])], tmp_path / "ours",
        name=None if lazy else "TensileLibrary_gfx942",
    )  # fmt: skip
    expected = sorted(p.name for p in theirs.iterdir())
    assert [p.name for p in written(ours)] == expected and len(expected) == (4 if lazy else 2)
    pools = 0
    for name in expected:
        if name.endswith(".dat"):
            assert (ours / name).read_bytes() == _expected_dat(theirs / name), name
        else:
            mine = yaml.load((ours / name).read_text(), Loader=yaml.CSafeLoader)
            assert mine == as_prediction_pools(yaml.load((theirs / name).read_text(), Loader=yaml.CSafeLoader)), name
            pools += json.dumps(mine).count('"type": "Prediction"')
    assert pools == 1  # one pool, in the master or (lazy) in its shard


def test_built_pool_loads_shows_and_select_names_origami(corpus: Path, tmp_path: Path) -> None:
    logic = _logic(corpus, tmp_path)
    runner = CliRunner()
    for suffix in (".yaml", ".dat"):
        result = runner.invoke(cli, ["build-master", str(logic), "-o", str(tmp_path / f"m{suffix}")])
        assert result.exit_code == 0, result.output
        # said, not silent: hipBLASLt's 2026 runtime would not load these 7d9fb683 records
        assert "holds a Prediction pool" in result.stderr and "CUOccupancy" in result.stderr
        assert "Prediction" not in result.stdout
    library = load_master(tmp_path / "m.dat")
    (pool,) = [node for _, node in library.iter_nodes() if isinstance(node, PredictionNode)]
    assert pool.table == [s.index for s in library.solutions] and len(pool.table) == 8
    # the YAML and .dat the build wrote are the same master
    assert dumps_master(load_master(tmp_path / "m.yaml"), "msgpack") == (tmp_path / "m.dat").read_bytes()
    assert dumps_master(library, "msgpack") == (tmp_path / "m.dat").read_bytes()

    selected = runner.invoke(cli, ["select", "-l", str(tmp_path / "m.dat"), *_QUERY])
    assert selected.exit_code == 1, selected.output
    assert "Prediction pool" in selected.output and "Origami" in selected.output and "8 candidates" in selected.output
    assert all(f"{s.index} {s.name}" in selected.output for s in library.solutions)

    info = runner.invoke(cli, ["info", "--json", str(tmp_path / "m.dat")])
    assert info.exit_code == 0, info.output
    (record,) = json.loads(info.output)
    assert record["node_counts"]["Prediction"] == 1 and record["solutions"] == 8
    assert runner.invoke(cli, ["lint", str(tmp_path / "m.dat")]).exit_code == 0
    assert runner.invoke(cli, ["validate", str(tmp_path / "m.yaml")]).exit_code == 0

    # the canonical dict form (named keys, Solutions keyed by name), as tensilekit's writer makes it,
    # builds the same master
    canonical = tmp_path / "canonical.yaml.zst"
    dump_logic(load_logic(logic), canonical, layout="canonical")
    again = runner.invoke(cli, ["build-master", str(canonical), "-o", str(tmp_path / "c.dat")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "c.dat").read_bytes() == (tmp_path / "m.dat").read_bytes()


@pytest.mark.parametrize(("fmt", "suffix"), [("msgpack", ".dat"), ("msgpack-indexed", ".dat.zlib")])
def test_lazy_shard_holds_the_pool(corpus: Path, tmp_path: Path, fmt: str, suffix: str) -> None:
    """The pool lives in the placeholder shard; ``select`` reaches it through the lazy master and
    through the folder as an installed library (indexed shards, lazy mapping)."""
    logic = _logic(corpus, tmp_path)
    out = tmp_path / "lazy"
    result = CliRunner().invoke(cli, ["build-master", "--lazy", "--format", fmt, str(logic), "-o", f"{out}/"])
    assert result.exit_code == 0, result.output
    top = out / f"TensileLibrary_lazy_gfx942{suffix}"
    master = load_master(top)
    assert not master.solutions and not any(isinstance(n, PredictionNode) for _, n in master.iter_nodes())
    (shard_path,) = [p for p in out.iterdir() if p.name.startswith("TensileLibrary_") and p != top]
    shard = load_master(shard_path)
    (pool,) = [node for _, node in shard.iter_nodes() if isinstance(node, PredictionNode)]
    assert pool.table == [s.index for s in shard.solutions] == list(range(8))
    for library in (top, out):
        selected = CliRunner().invoke(cli, ["select", "-l", str(library), *_QUERY])
        assert selected.exit_code == 1 and "Origami" in selected.output and "8 candidates" in selected.output


def test_pools_merge_and_coexist_with_freesize(corpus: Path, tmp_path: Path) -> None:
    """Two Prediction files of one type: one pool, tables concatenated with the second file's
    indices renumbered (``PredictionLibrary.merge``); a FreeSize file of the same type gets its own
    row beside it ("so that FreeSize / Prediction can co-exist")."""
    first, second = _logic(corpus, tmp_path, name="a.yaml"), _logic(corpus, tmp_path, name="b.yaml")
    freesize = _logic(corpus, tmp_path, "FreeSize", name="c.yaml")
    result = CliRunner().invoke(
        cli, ["build-master", str(first), str(second), str(freesize), "-o", str(tmp_path / "m.dat")]
    )
    assert result.exit_code == 0, result.output
    raw = msgpack.unpackb((tmp_path / "m.dat").read_bytes(), raw=False, strict_map_key=False)
    (map_row,) = raw["library"]["rows"][0]["library"]["map"].values()
    rows = map_row["rows"][0]["library"]["rows"][0]["library"]["rows"]
    assert [row["predicate"]["type"] for row in rows] == ["FreeSizeMatching", "PredictionMatching"]
    assert rows[1]["library"] == {"type": "Prediction", "table": list(range(16))}
    assert rows[0]["library"] == {"type": "FreeSize", "table": [{"index": i} for i in range(16, 24)]}


def test_what_the_pool_cannot_be_built_from_is_refused(corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    occupancy = _logic(corpus, tmp_path, name="occ.yaml", CUOccupancy=2)
    result = runner.invoke(cli, ["build-master", str(occupancy), "-o", str(tmp_path / "x.dat")])
    assert result.exit_code == 3 and "[5][0].CUOccupancy" in result.output and "Origami" in result.output
    assert str(occupancy) in result.output and not (tmp_path / "x.dat").exists()
    # the same key on a FreeSize file is no input of any ranking: it builds as hipBLASLt 7d9fb683 does
    plain = _logic(corpus, tmp_path, "FreeSize", name="fs.yaml", CUOccupancy=2)
    assert runner.invoke(cli, ["build-master", str(plain), "-o", str(tmp_path / "y.dat")]).exit_code == 0

    data = yaml.load((tmp_path / "occ.yaml").read_text(), Loader=yaml.CSafeLoader)
    data[5] = []
    (tmp_path / "empty.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    result = runner.invoke(cli, ["build-master", str(tmp_path / "empty.yaml"), "-o", str(tmp_path / "z.dat")])
    assert result.exit_code == 3 and "empty Prediction table" in result.output and "[5]" in result.output
    assert not (tmp_path / "z.dat").exists()

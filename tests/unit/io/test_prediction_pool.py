"""Issue 18: Prediction libraries (Origami pools) load, validate, show in info/lint, and ``select``
says plainly that the runtime ranks the pool with Origami's model, naming the candidates.

Fixture: the AMD-written FreeSize master with its pools written as ``Prediction`` nodes under
``PredictionMatching`` rows, as the tensilelite build writes them (``selection_factory.as_prediction_pools``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from selection_factory import as_prediction_pools

from tensilekit.cli.main import cli
from tensilekit.io.master_io import dump_master, dumps_master, load_master
from tensilekit.model.library import MasterLibrary, PredictionNode


@pytest.fixture
def pool(corpus: Path, tmp_path: Path) -> Path:
    raw = load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_freesize.dat").to_raw()
    library = MasterLibrary.model_validate({**raw, "library": as_prediction_pools(raw["library"])})
    path = tmp_path / "TensileLibrary_gfx942.dat.zlib"
    dump_master(library, path)
    return path


def test_prediction_pool_loads_and_round_trips(pool: Path, tmp_path: Path) -> None:
    library = load_master(pool)
    pools = [node for _, node in library.iter_nodes() if isinstance(node, PredictionNode)]
    assert pools and all(node.table for node in pools)
    again = tmp_path / "again.dat"
    dump_master(library, again, "msgpack-indexed")
    assert dumps_master(load_master(again), "msgpack") == dumps_master(library, "msgpack")


def test_info_lint_validate_show_the_pool(pool: Path) -> None:
    runner = CliRunner()
    info = runner.invoke(cli, ["info", "--json", str(pool)])
    assert info.exit_code == 0, info.output
    (record,) = json.loads(info.output)
    assert record["node_counts"]["Prediction"] >= 1 and record["table_entries"] == record["solutions"]
    assert runner.invoke(cli, ["lint", str(pool)]).exit_code == 0
    assert runner.invoke(cli, ["validate", str(pool)]).exit_code == 0


def test_select_names_origami_and_the_candidates(pool: Path) -> None:
    library = load_master(pool)
    result = CliRunner().invoke(
        cli, ["select", "-l", str(pool), "1024", "1024", "1024", "--type", "HSS", "--arch", "gfx942"]
    )
    assert result.exit_code == 1, result.output
    assert "Origami" in result.output and "Prediction pool" in result.output
    first = library.solutions[0]
    assert f"{first.index} {first.name}" in result.output


def test_dangling_pool_index_is_a_validation_error(pool: Path, tmp_path: Path) -> None:
    raw = load_master(pool).to_raw()
    text = json.dumps(raw["library"]).replace('"table": [0,', '"table": [9999,', 1)
    broken = MasterLibrary.model_validate({**raw, "library": json.loads(text)})
    path = tmp_path / "broken.dat"
    dump_master(broken, path)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1 and "9999" in result.output, result.output

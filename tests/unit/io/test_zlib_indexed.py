"""Issue 18: ``.dat.zlib`` catalogs and indexed msgpack (``format_version: 2``) masters.

Both are modelled from AMD's reader and writer source (see io.zlib_catalog / io.indexed_msgpack);
fixtures are corpus masters converted by tensilekit's own writer.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import msgpack
import pytest
from amd_build import written
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.errors import LibraryFormatError, TensilekitError
from tensilekit.io.indexed_msgpack import dumps_indexed, load_indexed
from tensilekit.io.master_io import dump_master, dumps_master, load_master, load_placeholder
from tensilekit.io.zlib_catalog import probe_order, read_catalog_bytes, resolve_catalog, runtime_view

MASTERS = ("masters-hipblaslt/hipblaslt_gfx942_grid.dat", "masters/aldebaran_DB_TN_dtree.dat")


@pytest.fixture(params=MASTERS)
def corpus_dat(request: pytest.FixtureRequest, corpus: Path) -> Path:
    return corpus / str(request.param)


def test_zlib_catalog_is_amd_bytes(corpus_dat: Path, tmp_path: Path) -> None:
    # LibraryIO.writeMsgPack: zlib.compress(msgpack.packb(data), 9)
    target = tmp_path / "TensileLibrary_gfx942.dat.zlib"
    result = CliRunner().invoke(cli, ["convert", str(corpus_dat), str(target)])
    assert result.exit_code == 0, result.output
    original = corpus_dat.read_bytes()
    assert target.read_bytes() == zlib.compress(original, 9)
    reloaded = load_master(target)
    assert dumps_master(reloaded, "msgpack") == original
    assert tensilekit.load(target).solutions == reloaded.solutions


def test_zlib_detected_from_content_not_name(corpus_dat: Path, tmp_path: Path) -> None:
    odd = tmp_path / "library.bin"
    odd.write_bytes(zlib.compress(corpus_dat.read_bytes(), 9))
    assert dumps_master(load_master(odd), "msgpack") == corpus_dat.read_bytes()


def test_probe_order_prefers_zlib(tmp_path: Path) -> None:
    bare = tmp_path / "X.dat"
    compressed = tmp_path / "X.dat.zlib"
    bare.write_bytes(msgpack.packb({"from": "bare"}))
    assert resolve_catalog(bare) == bare
    compressed.write_bytes(zlib.compress(msgpack.packb({"from": "zlib"}), 9))
    assert probe_order(bare) == (compressed, bare)
    assert resolve_catalog(bare) == compressed
    assert msgpack.unpackb(read_catalog_bytes(bare)[0]) == {"from": "zlib"}
    assert runtime_view([bare, compressed]) == [compressed]
    # a .zlib that does not inflate falls back to the bare file, as fileToMsgObject does
    compressed.write_bytes(b"\x78\x9c\x00garbage")
    data, found = read_catalog_bytes(bare)
    assert found == bare and msgpack.unpackb(data) == {"from": "bare"}
    bare.unlink()
    with pytest.raises(TensilekitError) as caught:
        read_catalog_bytes(bare)
    assert "X.dat.zlib" in str(caught.value)


def test_placeholders_probe_zlib_first(corpus: Path, tmp_path: Path) -> None:
    logic = sorted((corpus / "logic/hipblaslt/aquavanjaram/gfx942/GridBased").glob("*.yaml"))
    out = tmp_path / "lib"
    result = CliRunner().invoke(cli, ["build-master", "--lazy", "--format", "zlib", "-o", str(out), *map(str, logic)])
    assert result.exit_code == 0, result.output
    names = [path.name for path in written(out)]
    assert all(name.endswith(".dat.zlib") for name in names)
    assert "TensileLiteLibrary_lazy_gfx942_Mapping.dat.zlib" in names
    master = out / "TensileLibrary_lazy_gfx942.dat.zlib"
    prefix = next(n.removesuffix(".dat.zlib") for n in names if "_Type_HH_" in n)
    shard = load_placeholder(master, prefix)
    # a stale bare shard beside the .zlib is not read
    (out / f"{prefix}.dat").write_bytes(b"\xc0")
    assert load_placeholder(master, prefix).solutions == shard.solutions
    # the master named by its logical .dat name is found as the runtime finds it
    assert load_master(out / "TensileLibrary_lazy_gfx942.dat").library == load_master(master).library
    assert tensilekit.load(out / "TensileLibrary_lazy_gfx942.dat") == load_master(master)


def test_indexed_round_trips_byte_for_byte(corpus_dat: Path, tmp_path: Path) -> None:
    original = corpus_dat.read_bytes()
    master = load_master(corpus_dat)
    indexed = dumps_indexed(master)
    root = msgpack.unpackb(indexed, raw=False, strict_map_key=False)
    assert list(root)[:2] == ["format_version", "version"] or list(root)[0] == "format_version"
    assert [k for k in root if k != "version"] == ["format_version", "solutions_index", "solutions_blob", "library"]
    table = root["solutions_index"]
    indices = table[0::3]
    assert indices == sorted(indices) and len(indices) == len(master.solutions)
    spans = sorted(zip(table[1::3], table[2::3], strict=True))
    cursor = 0
    for offset, length in spans:  # slices tile the blob
        assert offset == cursor
        cursor += length
    assert cursor == len(root["solutions_blob"])
    # indexed -> model -> indexed, and -> plain .dat as AMD wrote it
    target = tmp_path / "TensileLibrary_gfx.dat.zlib"
    result = CliRunner().invoke(cli, ["convert", "--format", "msgpack-indexed", str(corpus_dat), str(target)])
    assert result.exit_code == 0, result.output
    assert zlib.decompress(target.read_bytes()) == indexed
    again = load_master(target)
    assert dumps_indexed(again) == indexed
    assert dumps_master(again, "msgpack") == original


def test_indexed_decodes_only_what_is_asked(corpus_dat: Path, tmp_path: Path) -> None:
    target = tmp_path / "lib.dat.zlib"
    dump_master(load_master(corpus_dat), target, "msgpack-indexed")
    lazy = load_indexed(str(target))
    assert lazy.decoded_count == 0 and len(lazy) > 0
    first = next(iter(lazy.slices))
    assert lazy.solution(first).index == first
    assert lazy.decoded_count == 1
    assert lazy.materialize().solutions == load_master(corpus_dat).solutions


def _indexed(table: list[int], blob: bytes | None, tree_index: int = 0, version: int = 2) -> bytes:
    root: dict[str, object] = {"format_version": version, "solutions_index": table}
    if blob is not None:
        root["solutions_blob"] = blob
    root["library"] = {"type": "Single", "index": tree_index}
    return msgpack.packb(root, use_bin_type=True)


SOLUTION = msgpack.packb({"index": 0}, use_bin_type=True)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (_indexed([0, 0, len(SOLUTION)], SOLUTION, tree_index=7), "does not carry"),
        (_indexed([0, 2**62, 2**62], SOLUTION), "runs past"),
        (_indexed([0, 0, len(SOLUTION)], SOLUTION, version=99), "format_version"),
        (_indexed([0, 0], SOLUTION), "triples"),
        (_indexed([0, 0, 64], SOLUTION), "runs past"),
        (_indexed([2**32 + 5, 0, len(SOLUTION)], SOLUTION, tree_index=5), "int"),
        (_indexed([0, -8, 1], SOLUTION), "negative"),
        (_indexed([0, 0, 1, 0, 1, 1], SOLUTION + SOLUTION), "twice"),
        (_indexed([0, 0, 1], None), "solutions_blob"),
    ],
)
def test_malformed_indexed_rejected_at_load(payload: bytes, says: str, tmp_path: Path) -> None:
    # IndexedLibraryLoad_test.cpp: each of these must fail at load, not as a later query
    path = tmp_path / "TensileLibrary_bad.dat"
    path.write_bytes(zlib.compress(payload, 9))
    with pytest.raises(LibraryFormatError) as caught:
        load_indexed(str(path))
    assert says in str(caught.value)
    result = CliRunner().invoke(cli, ["info", str(path)])
    assert result.exit_code == 3, result.output


def test_slice_holding_another_index_is_refused(tmp_path: Path) -> None:
    other = msgpack.packb({"index": 9}, use_bin_type=True)
    path = tmp_path / "x.dat"
    path.write_bytes(_indexed([7, 0, len(other)], other, tree_index=7))
    with pytest.raises(LibraryFormatError, match="holds solution 9"):
        load_master(path)


def test_mapping_is_not_written_indexed() -> None:
    from tensilekit.errors import InvalidValue
    from tensilekit.io.indexed_msgpack import indexed_layout

    with pytest.raises(InvalidValue):
        indexed_layout({"solutions": {0: "shard_a"}, "library": {}})


def test_damage_place_names_path_and_byte(corpus_dat: Path) -> None:
    from tensilekit.io.msgpack_place import damage_place

    data = corpus_dat.read_bytes()
    assert damage_place(data) is None and damage_place(zlib.compress(data, 9)) is None
    half = damage_place(data[: len(data) // 2])
    assert half is not None and half.startswith(("solutions[", "library.")) and f"of {len(data) // 2}" in half
    assert "truncated" in half
    zhalf = damage_place(zlib.compress(data, 9)[:5000])
    assert zhalf is not None and zhalf.startswith("the zlib stream ends early")
    assert "bytes after the document" in str(damage_place(data + b"\x00"))

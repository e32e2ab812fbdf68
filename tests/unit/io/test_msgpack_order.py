"""msgpack masters are written in TensileCreateLibrary's key order (object order, not sorted)."""

from __future__ import annotations

from pathlib import Path

import msgpack

import tensilekit
from tensilekit.io.master_io import dumps_master, master_to_data, tensile_msgpack_order

SAMPLE = Path(tensilekit.__file__).parent / "data" / "sample_library.yaml"


def test_sample_library_msgpack_key_order() -> None:
    master = tensilekit.load_master(SAMPLE)
    tree = msgpack.unpackb(dumps_master(master, "msgpack"), strict_map_key=False)
    assert list(tree) == ["solutions", "library", "version"]
    solution = tree["solutions"][0]
    assert list(solution)[:3] == ["name", "problemType", "hardwarePredicate"]
    assert list(solution["sizeMapping"])[:3] == ["workGroup", "macroTile", "threadTile"]
    (check,) = [p for p in solution["problemPredicate"]["value"] if p["type"] == "BufferLoadOffsetLimitCheck"]
    assert list(check["value"]) == ["ShiftPtrElemB", "ShiftPtrElemA", "DUorMT1", "DUorMT0"]
    hardware = tree["library"]
    assert list(hardware) == ["type", "rows"] and list(hardware["rows"][0]) == ["predicate", "library"]
    assert list(hardware["rows"][0]["library"]) == ["type", "property", "map"]
    # the YAML writer sorts instead, and the content is the same either way
    assert tree == master_to_data(master)


def test_unknown_keys_keep_their_place_after_the_known_ones() -> None:
    tree = {
        "version": "1",
        "extra": 1,
        "library": {"type": "Single", "index": 3},
        "solutions": [{"zz": 1, "name": "k"}],
    }
    ordered = tensile_msgpack_order(tree)
    assert list(ordered) == ["solutions", "library", "version", "extra"]
    assert list(ordered["solutions"][0]) == ["name", "zz"]
    assert list(ordered["library"]) == ["type", "index"]

"""Issue 18: a plain msgpack ``.dat`` opened lazily (``open_master``): one header scan finds
where each solution lies; a solution is decoded when asked for, as the indexed form allows.

The rule under test: whatever ``open_master`` answers equals what decoding the whole file
(``load_master``) answers, and a file the scan cannot trust is decoded whole instead.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensilekit
from tensilekit.errors import LibraryFormatError, TensilekitError
from tensilekit.io.indexed_msgpack import scan_plain_master
from tensilekit.io.master_io import load_master, load_placeholder, open_master, opens_master

MASTERS = (
    "masters-hipblaslt/hipblaslt_gfx942_grid.dat",
    "masters-hipblaslt/hipblaslt_navi31_all.dat",
    "masters/aldebaran_DB_TN_dtree.dat",
)


@pytest.mark.parametrize("name", MASTERS)
def test_corpus_master_opened_lazily_equals_the_whole_load(name: str, corpus: Path, tmp_path: Path) -> None:
    path = corpus / name
    whole = load_master(path)
    lazy = open_master(path)
    assert lazy.decoded_count == 0  # the tree only
    assert lazy.indices == tuple(solution.index for solution in whole.solutions)
    assert lazy.shell.library == whole.library
    some = whole.solutions[len(whole.solutions) // 2]
    assert lazy.solution(some.index) == some and lazy.decoded_count == 1
    assert lazy.materialize() == whole
    # the .dat.zlib twin, and the public name
    twin = tmp_path / "TensileLibrary_x.dat.zlib"
    twin.write_bytes(zlib.compress(path.read_bytes(), 9))
    assert tensilekit.open_master(twin).materialize() == whole


def test_yaml_master_opens_behind_the_same_interface(tmp_path: Path) -> None:
    from tensilekit.data import sample_library_path

    whole = load_master(sample_library_path())
    lazy = open_master(sample_library_path())
    assert lazy.materialize() == whole
    assert lazy.raw_solution(whole.solutions[0].index)["index"] == whole.solutions[0].index


# -- the scan's rule, on generated files ---------------------------------------------------------

_scalars = st.one_of(
    st.integers(-(2**40), 2**40), st.text(max_size=6), st.booleans(), st.none(), st.floats(allow_nan=False)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["index", "name", "type", "value", "rows"]), inner, max_size=3),
    ),
    max_leaves=8,
)


@st.composite
def _plain_masters(draw: st.DrawFn) -> dict[str, Any]:
    """Masters as ``unpackb`` sees them: solutions with unique integer indices in any order and
    position among their keys, nested ``index`` keys (predicates carry them) and extra keys."""
    indices = draw(st.lists(st.integers(0, 2**31 - 1), unique=True, max_size=8))
    solutions = []
    for index in indices:
        extra = draw(
            st.dictionaries(st.sampled_from(["name", "problemPredicate", "sizeMapping", "x"]), _values, max_size=3)
        )
        items = [*extra.items(), ("index", index)]
        order = draw(st.permutations(range(len(items))))
        solutions.append(dict(items[i] for i in order))
    root: dict[str, Any] = {"solutions": solutions, "library": draw(_values)}
    if draw(st.booleans()):
        root["version"] = draw(st.text(max_size=5))
    keys = draw(st.permutations(list(root)))
    return {key: root[key] for key in keys}


@given(_plain_masters())
@settings(max_examples=150, deadline=None)
def test_scan_finds_every_solution_as_unpackb_decodes_it(master: dict[str, Any]) -> None:
    raw = msgpack.packb(master, use_bin_type=True)
    scanned = scan_plain_master(raw)
    assert scanned is not None
    shell, slices, positions = scanned
    assert shell == {key: value for key, value in master.items() if key != "solutions"}
    by_index = {solution["index"]: (place, solution) for place, solution in enumerate(master["solutions"])}
    assert list(slices) == list(by_index)  # file order
    for index, (offset, length) in slices.items():
        assert msgpack.unpackb(raw[offset : offset + length], raw=False, strict_map_key=False) == by_index[index][1]
        assert positions[index] == by_index[index][0]


@pytest.mark.parametrize(
    "master",
    [
        {"solutions": [{"index": 1}, {"index": 1}], "library": {}},  # the same index twice
        {"solutions": [{"index": True}], "library": {}},  # not an integer
        {"solutions": [{"name": "k"}], "library": {}},  # no index
        {"solutions": [[1]], "library": {}},  # not a map
        {"solutions": [], "format_version": 2, "library": {}},  # an indexed root
        {"library": {}},  # no solutions
    ],
)
def test_scan_refuses_what_it_cannot_trust(master: dict[str, Any]) -> None:
    assert scan_plain_master(msgpack.packb(master, use_bin_type=True)) is None


def test_scan_refuses_trailing_or_truncated_bytes() -> None:
    raw = msgpack.packb({"solutions": [{"index": 0}], "library": {"type": "Single", "index": 0}})
    assert scan_plain_master(raw) is not None
    assert scan_plain_master(raw + b"\xc0") is None
    assert scan_plain_master(raw[:-3]) is None


# -- errors: the whole-file path names the problem; a bad solution fails only when asked for ------


def _single_master(solutions: list[dict[str, Any]], index: int = 0) -> bytes:
    return msgpack.packb({"solutions": solutions, "library": {"type": "Single", "index": index}}, use_bin_type=True)


def test_truncated_file_is_named_with_its_place(tmp_path: Path) -> None:
    raw = _single_master([{"index": 0, "name": "k0"}, {"index": 1, "name": "k1"}])
    path = tmp_path / "TensileLibrary_t.dat"
    path.write_bytes(raw[: len(raw) - 4])
    with pytest.raises(TensilekitError) as caught:
        open_master(path)
    assert str(path) in str(caught.value) and "byte" in str(caught.value)


def test_a_damaged_solution_fails_when_reached_not_before(tmp_path: Path) -> None:
    good = {"index": 0, "name": "k0", "sizeMapping": {"depthU": 16}}
    bad = {"index": 1, "name": "k1", "sizeMapping": {"depthU": -3}}  # the model's bound: depthU >= 1
    path = tmp_path / "TensileLibrary_d.dat"
    path.write_bytes(_single_master([good, bad]))
    lazy = open_master(path)
    assert lazy.solution(0).name == "k0"
    with pytest.raises(LibraryFormatError) as caught:
        lazy.solution(1)
    location = caught.value.location
    assert location is not None and location.file == str(path)
    assert location.path is not None and location.path.startswith("solutions[1].sizeMapping")
    # the byte offset points into the file, past the first solution
    assert location.offset is not None and location.offset > len(msgpack.packb(good))
    with pytest.raises(LibraryFormatError):  # the whole load refuses the file
        load_master(path)


def test_duplicate_indices_read_as_the_whole_decode_reads_them(tmp_path: Path) -> None:
    # the scan refuses duplicates; the file is then decoded whole, as load_master does
    raw = _single_master([{"index": 0, "name": "first"}, {"index": 0, "name": "second"}])
    lazy = opens_master(raw, "dup.dat")
    # the runtime keeps the last of an index (lib.solutions[s->index] = s, issue 23 item 2)
    assert lazy.solution(0).name == "second"
    assert len(lazy.materialize().solutions) == 1


def test_placeholder_shards_open_lazily(tmp_path: Path) -> None:
    shard = {
        "solutions": [{"index": 5, "name": "k5"}, {"index": 6, "name": "k6"}],
        "library": {"type": "Single", "index": 6},
    }
    (tmp_path / "TensileLibrary_Type_x.dat").write_bytes(msgpack.packb(shard, use_bin_type=True))
    master = tmp_path / "TensileLibrary_lazy_gfx90a.dat"
    master.write_bytes(_single_master([], -1))
    library = load_placeholder(master, "TensileLibrary_Type_x", lazy=True)
    assert library.solutions == []  # nothing decoded up front
    lazy_solution = library._lazy_solution  # type: ignore[attr-defined]
    assert lazy_solution(6).name == "k6" and lazy_solution(7) is None
    assert [s.name for s in load_placeholder(master, "TensileLibrary_Type_x").solutions] == ["k5", "k6"]

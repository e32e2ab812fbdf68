"""The partial msgpack reader (io.partial_msgpack) answers as the whole load does.

* generated masters (hypothesis), written as ``.dat``, ``.dat.gz`` and ``.dat.zlib`` (with a
  checkpoint every few hundred bytes, so range reads cross them): every query selects what the
  whole load selects, and the library read partially holds the same solutions and nodes;
* one query decodes one operation's subtree and a few solutions, not the file;
* corpus masters: rocBLAS_Full.dat.gz answers as AMD's runtime did (corpus/select), decoding a
  sliver of it; a smaller master agrees with its whole load;
* damage is refused with the file and where: truncated or garbled files (named by the whole-file
  reader the partial one defers to), a damaged solution or subtree found when a query reaches it
  (path and byte offset), and gzip bombs (the input limits, streamed).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from selection_factory import matching, problem_predicate, solution, type_row  # noqa: E402

from tensilekit.api import load_for_selection  # noqa: E402
from tensilekit.errors import InputTooLarge, LibraryFormatError, TensilekitError  # noqa: E402
from tensilekit.io import partial_msgpack  # noqa: E402
from tensilekit.io.limits import limits  # noqa: E402
from tensilekit.io.master_io import dump_master, load_master  # noqa: E402
from tensilekit.io.partial_msgpack import LazyNodeMap, LazySolutions, open_partial  # noqa: E402
from tensilekit.model.library import MasterLibrary, ProblemMapNode  # noqa: E402
from tensilekit.selection import GemmProblem, Hardware, compile_library, select_solution  # noqa: E402

OPS = {"NN": "Contraction_l_Ailk_Bljk_Cijk_Dijk", "NT": "Contraction_l_Ailk_Bjlk_Cijk_Dijk"}
ARCHS = ["gfx90a", "gfx942"]
SUFFIXES = [".dat", ".dat.gz", ".dat.zlib"]


def _raw_master(tables: dict[tuple[str, str], list[tuple[list[int], int, float]]], count: int) -> dict[str, Any]:
    """``Hardware(arch) → ProblemMap(op) → Problem(types) → Matching`` over solutions 0..count-1,
    each solution's operation its table's (the last one naming it)."""
    op_of = {index: op for (_, op), table in tables.items() for _, index, _ in table}
    solutions = [
        solution(index, name=f"k{index}", problemPredicate=problem_predicate(op=OPS[op_of.get(index, "NN")]))
        for index in range(count)
    ]
    rows = []
    for arch in ARCHS:
        ops = {
            OPS[op]: {"type": "Problem", "rows": [type_row(matching(table))]}
            for (a, op), table in tables.items()
            if a == arch
        }
        if ops:
            rows.append(
                {
                    "predicate": {"type": "AMDGPU", "value": {"type": "Processor", "value": arch}},
                    "library": {"type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": ops},
                }
            )
    return {"solutions": solutions, "library": {"type": "Hardware", "rows": rows}}


@st.composite
def masters(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 12))
    keys = st.lists(st.integers(1, 4096), min_size=3, max_size=3)
    entry = st.tuples(keys, st.integers(0, count - 1), st.floats(1.0, 1000.0))
    cells = draw(
        st.lists(st.tuples(st.sampled_from(ARCHS), st.sampled_from(list(OPS))), min_size=1, max_size=4, unique=True)
    )
    return _raw_master({cell: draw(st.lists(entry, min_size=1, max_size=6)) for cell in cells}, count)


queries = st.lists(
    st.tuples(
        st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 5000), st.sampled_from("NT"), st.sampled_from(ARCHS)
    ),
    min_size=1,
    max_size=6,
)


def _select(library: Any, query: tuple[int, int, int, str, str]) -> tuple[int | None, float | None]:
    m, n, k, trans_b, arch = query
    problem = GemmProblem(m=m, n=n, k=k, trans_b=trans_b, beta=1.0)
    answer = select_solution(library, problem, Hardware(arch=arch, cu_count=104))
    return answer.index, answer.distance


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(raw=masters(), asked=queries, suffix=st.sampled_from(SUFFIXES))
def test_partial_read_answers_as_the_whole_load(
    raw: dict[str, Any], asked: list[Any], suffix: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: Any
) -> None:
    monkeypatch.setattr(partial_msgpack, "CHECKPOINT", 256)  # range reads cross checkpoints
    path = tmp_path_factory.mktemp("partial") / f"TensileLibrary{suffix}"
    dump_master(MasterLibrary.model_validate(raw), path)
    whole = load_master(path)
    partial = open_partial(path)
    assert partial is not None and isinstance(partial.solutions, LazySolutions)
    compiled = compile_library(partial)  # the fast path compiles an operation when reached
    for query in asked:
        assert _select(partial, query) == _select(whole, query) == _select(compiled, query)
    # the same library, once everything is decoded
    assert list(partial.solutions) == whole.solutions
    assert list(partial.iter_nodes()) == list(whole.iter_nodes())
    assert partial == whole


def test_one_query_decodes_one_operation_and_few_solutions(tmp_path: Path) -> None:
    table = [([64 * i, 64 * i, 64], i, 100.0) for i in range(40)]
    raw = _raw_master({(arch, op): table for arch in ARCHS for op in OPS}, 40)
    path = tmp_path / "TensileLibrary.dat.gz"
    dump_master(MasterLibrary.model_validate(raw), path)
    library, _ = load_for_selection(path)
    assert _select(library, (640, 640, 64, "T", "gfx942")) == (10, 0.0)
    maps = [node.map for _, node in _shallow_nodes(library) if isinstance(node, ProblemMapNode)]
    assert all(isinstance(found, LazyNodeMap) for found in maps)
    assert sum(found.decoded_count for found in maps) == 1  # gfx942's NT subtree only
    assert isinstance(library.solutions, LazySolutions) and library.solutions.decoded_count <= 2


def test_a_compiled_partial_library_decodes_the_operations_queries_reach(tmp_path: Path) -> None:
    table = [([64 * i, 64 * i, 64], i, 100.0) for i in range(40)]
    raw = _raw_master({(arch, op): table for arch in ARCHS for op in OPS}, 40)
    path = tmp_path / "TensileLibrary.dat"
    dump_master(MasterLibrary.model_validate(raw), path)
    library, _ = load_for_selection(path)
    compiled = compile_library(library)
    maps = [node.map for _, node in _shallow_nodes(library) if isinstance(node, ProblemMapNode)]
    assert sum(found.decoded_count for found in maps) == 0
    assert _select(compiled, (640, 640, 64, "T", "gfx942")) == (10, 0.0)
    assert sum(found.decoded_count for found in maps) == 1


def _shallow_nodes(library: MasterLibrary) -> list[tuple[int, Any]]:
    """The Hardware rows' libraries, without looking into a ProblemMap (which would decode it)."""
    return list(enumerate(row.library for row in library.library.rows))  # type: ignore[union-attr]


# -- corpus -------------------------------------------------------------------------------------


def _corpus_queries(corpus: Path, name: str) -> list[dict[str, Any]]:
    path = corpus / "select" / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} is not in this corpus")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.corpus
def test_rocblas_full_answers_as_the_runtime_decoding_a_sliver(corpus: Path) -> None:
    from tensilekit.selection import hardware_from_query, problem_from_query

    queries = _corpus_queries(corpus, "rocBLAS_Full")
    path = corpus / "masters" / queries[0]["library_msgpack"]
    library, loader = load_for_selection(path)
    assert isinstance(library.solutions, LazySolutions)
    picked = queries[:: max(1, len(queries) // 12)]
    for query in picked:
        answer = select_solution(library, problem_from_query(query), hardware_from_query(query), loader=loader)
        expected = query["expected"]
        assert (answer.index, answer.distance) == (
            (None, None) if expected is None else (expected["index"], expected["distance"])
        ), query["id"]
    assert library.solutions.decoded_count < len(library.solutions) // 4


@pytest.mark.corpus
def test_a_corpus_master_agrees_with_its_whole_load(corpus: Path) -> None:
    from tensilekit.selection import hardware_from_query, problem_from_query

    queries = _corpus_queries(corpus, "aldebaran_DB_TN_dtree")
    path = corpus / "masters" / queries[0]["library_msgpack"]
    partial, loader = load_for_selection(path)
    whole = load_master(path)
    assert isinstance(partial.solutions, LazySolutions)
    for query in queries[:: max(1, len(queries) // 40)]:
        problem, device = problem_from_query(query), hardware_from_query(query)
        got = select_solution(partial, problem, device, loader=loader)
        want = select_solution(whole, problem, device, loader=loader)
        assert (got.index, got.distance) == (want.index, want.distance), query["id"]


# -- damaged input ------------------------------------------------------------------------------


def _small_raw() -> dict[str, Any]:
    return _raw_master({("gfx90a", "NN"): [([64, 64, 64], 0, 10.0), ([128, 128, 64], 1, 20.0)]}, 2)


@pytest.mark.parametrize("suffix", [".dat", ".dat.gz"])
def test_a_truncated_file_is_refused_with_its_place(tmp_path: Path, suffix: str) -> None:
    data = dump_master(MasterLibrary.model_validate(_small_raw()), None, "msgpack")
    path = tmp_path / f"TensileLibrary{suffix}"
    cut = data[: len(data) - 40]
    path.write_bytes(gzip.compress(cut) if suffix.endswith(".gz") else cut)
    assert open_partial(path) is None  # the whole-file reader names the problem
    with pytest.raises(TensilekitError) as caught:
        load_for_selection(path)
    assert caught.value.location is not None and caught.value.location.file == str(path)
    assert caught.value.location.offset is not None


def test_a_truncated_gzip_stream_is_refused(tmp_path: Path) -> None:
    data = gzip.compress(dump_master(MasterLibrary.model_validate(_small_raw()), None, "msgpack"))
    path = tmp_path / "TensileLibrary.dat.gz"
    path.write_bytes(data[: len(data) // 2])
    assert open_partial(path) is None
    with pytest.raises(TensilekitError) as caught:
        load_for_selection(path)
    assert caught.value.location is not None and caught.value.location.file == str(path)


def _write_raw(path: Path, raw: dict[str, Any]) -> bytes:
    data = msgpack.packb(raw, use_bin_type=True)
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return data


@pytest.mark.parametrize("suffix", [".dat", ".dat.gz"])
def test_a_damaged_solution_is_refused_where_it_lies_when_reached(tmp_path: Path, suffix: str) -> None:
    raw = _small_raw()
    raw["solutions"][1]["name"] = 5  # not a string: found when a query reaches solution 1
    path = tmp_path / f"TensileLibrary{suffix}"
    data = _write_raw(path, raw)
    library, _ = load_for_selection(path)  # the solutions are not decoded yet
    assert _select(library, (64, 64, 64, "N", "gfx90a"))[0] == 0
    with pytest.raises(LibraryFormatError) as caught:
        _select(library, (128, 128, 64, "N", "gfx90a"))
    location = caught.value.location
    assert location is not None and location.file == str(path)
    assert location.path == "solutions[1].name"
    # the offset is where the bad value lies in the (decompressed) file
    assert location.offset is not None and msgpack.unpackb(data[location.offset : location.offset + 1]) == 5


def test_a_damaged_subtree_is_refused_where_it_lies_when_reached(tmp_path: Path) -> None:
    raw = _raw_master({("gfx90a", "NN"): [([64, 64, 64], 0, 10.0)], ("gfx90a", "NT"): [([64, 64, 64], 1, 10.0)]}, 2)
    nt = raw["library"]["rows"][0]["library"]["map"][OPS["NT"]]
    nt["rows"][0]["library"]["table"][0]["key"] = "64x64"  # not a list of sizes
    path = tmp_path / "TensileLibrary.dat"
    data = _write_raw(path, raw)
    library, _ = load_for_selection(path)
    assert _select(library, (64, 64, 64, "N", "gfx90a"))[0] == 0  # NN never reads NT's subtree
    with pytest.raises(LibraryFormatError) as caught:
        _select(library, (64, 64, 64, "T", "gfx90a"))
    location = caught.value.location
    assert location is not None and location.file == str(path)
    assert location.path is not None and location.path.startswith(f"library.rows[0].library.map.{OPS['NT']}")
    assert location.path.endswith("table[0].key")
    assert location.offset is not None and msgpack.unpackb(data[location.offset : location.offset + 6]) == "64x64"


def test_a_gzip_bomb_is_stopped_by_the_input_limits(tmp_path: Path) -> None:
    raw = _small_raw()
    raw["solutions"][0]["padding"] = "0" * (3 << 20)
    path = tmp_path / "TensileLibrary.dat.gz"
    _write_raw(path, raw)
    with limits(ratio_floor=1 << 20), pytest.raises(InputTooLarge) as caught:
        open_partial(path)
    assert caught.value.location is not None and caught.value.location.file == str(path)
    with limits(max_input_size=1 << 20, explicit_size=True), pytest.raises(InputTooLarge):
        open_partial(path)


def test_not_a_plain_msgpack_master_is_left_to_the_whole_reader(tmp_path: Path) -> None:
    yaml_path = tmp_path / "TensileLibrary.yaml"
    dump_master(MasterLibrary.model_validate(_small_raw()), yaml_path)
    assert open_partial(yaml_path) is None
    indexed = tmp_path / "TensileLibrary_indexed.dat"
    dump_master(MasterLibrary.model_validate(_small_raw()), indexed, "msgpack-indexed")
    assert open_partial(indexed) is None
    two_members = tmp_path / "TensileLibrary_two.dat.gz"
    data = msgpack.packb(_small_raw(), use_bin_type=True)
    two_members.write_bytes(gzip.compress(data[:100]) + gzip.compress(data[100:]))
    assert open_partial(two_members) is None
    library, _ = load_for_selection(two_members)  # read whole, members joined
    assert _select(library, (64, 64, 64, "N", "gfx90a"))[0] == 0


def test_a_fifo_is_left_to_the_whole_reader_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "TensileLibrary.dat"
    os.mkfifo(fifo)
    assert open_partial(fifo) is None  # os.open of a FIFO would wait for a writer


@pytest.mark.parametrize("suffix", [".dat", ".dat.gz"])
def test_copies_of_a_partial_library_share_its_file(tmp_path: Path, suffix: str) -> None:
    import gc
    import pickle

    path = tmp_path / f"TensileLibrary{suffix}"
    dump_master(MasterLibrary.model_validate(_small_raw()), path)
    library = open_partial(path)
    assert library is not None
    copied = library.model_copy(deep=True)
    del library
    gc.collect()  # the original's source is still the copy's: its descriptor stays open
    assert _select(copied, (128, 128, 64, "N", "gfx90a"))[0] == 1
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(copied)


@pytest.mark.corpus
def test_checkpoints_do_not_keep_copies_of_the_compressed_rest(corpus: Path) -> None:
    """Each checkpoint copies the inflater; one given the whole rest of the file kept that rest as
    its unconsumed input (rocBLAS_Full: 45 checkpoints, ~70 MB). Fed in bounded pieces, each keeps
    at most one piece, and a range read from any checkpoint still gives the streamed bytes."""
    import zlib

    path = corpus / "masterlib/tensile/SolutionLibraries/rocBLAS_Full.dat.gz"
    library = open_partial(path)
    assert library is not None
    source = library.solutions._source  # type: ignore[attr-defined]
    points = source._checkpoints
    assert len(points) > 10
    kept = sum(len(point.inflater.unconsumed_tail) + len(point.inflater.unused_data) for point in points)
    assert kept <= len(points) * 65_536, kept  # one piece each (the whole rest: ~70 MB)
    whole = zlib.decompress(path.read_bytes(), 16 + zlib.MAX_WBITS)
    for point in points[1::7]:
        start = point.produced - 100
        assert source.read(start, 300_000) == whole[start : start + 300_000]

"""Unit tests for tensilekit.merge.files: pairing, latching, atomic writes, queries, prune on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from merge_factory import logic_data, solution

from tensilekit.errors import InputNotFound, InvalidValue, MergeError
from tensilekit.io.logic_io import load_logic
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml
from tensilekit.merge import MergePolicy, merge_directories, merge_files, merge_paths, prune_paths
from tensilekit.merge.files import list_logic_files, parse_queries

A, B = solution(64, 64), solution(128, 64)


def write(path: Path, sols: list[dict[str, object]], rows: list[tuple[list[int], int, float]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_yaml(logic_data(sols, rows), AMD_LOGIC_STYLE))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    original, incremental = tmp_path / "orig", tmp_path / "inc"
    for name in ("arcturus_X.yaml", "hip_Y.yaml", "only_original.yaml"):
        write(original / name, [A], [([1, 1, 1, 1], 0, 10.0)])
    write(incremental / "arcturus_X.yaml", [B], [([1, 1, 1, 1], 0, 5.0)])
    write(incremental / "hip_Y.yaml", [B], [([1, 1, 1, 1], 0, 5.0)])
    write(incremental / "new_Z.YAML", [B], [([1, 1, 1, 1], 0, 5.0)])
    (incremental / "nested.yaml").mkdir()  # a directory named *.yaml is not recursed into
    (incremental / "notes.txt").write_text("ignored")
    return original, incremental


def test_list_logic_files_is_sorted_nonrecursive_case_insensitive(dirs: tuple[Path, Path]) -> None:
    assert list_logic_files(dirs[1]) == ["arcturus_X.yaml", "hip_Y.yaml", "new_Z.YAML"]
    with pytest.raises(InputNotFound):
        list_logic_files(dirs[1] / "missing")


def test_pairing_latch_and_unpaired_files(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    report = merge_directories(*dirs, tmp_path / "out")
    assert [file.name for file in report.files] == ["arcturus_X.yaml", "hip_Y.yaml"]
    assert [file.policy.force_merge for file in report.files] == [False, False]  # hip latched to Winner
    assert report.unpaired_incremental == ["new_Z.YAML"]
    assert report.unpaired_original == ["only_original.yaml"]
    assert sorted(os.listdir(tmp_path / "out")) == ["arcturus_X.yaml", "hip_Y.yaml"]
    assert any("latched" in note for note in report.notes)
    unlatched = merge_directories(*dirs, tmp_path / "out2", MergePolicy(latch_default=False))
    assert [file.policy.force_merge for file in unlatched.files] == [False, True]


def test_add_new_copies_bytes(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    report = merge_directories(*dirs, tmp_path / "out", MergePolicy(add_new=True))
    assert report.copied_new == ["new_Z.YAML"]
    assert (tmp_path / "out" / "new_Z.YAML").read_bytes() == (dirs[1] / "new_Z.YAML").read_bytes()


def test_dry_run_writes_nothing(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    report = merge_directories(*dirs, tmp_path / "out", MergePolicy(add_new=True), dry_run=True)
    assert not (tmp_path / "out").exists()
    assert report.dry_run and not any(file.written for file in report.files)


def test_output_may_equal_original(dirs: tuple[Path, Path]) -> None:
    original, incremental = dirs
    merge_directories(original, incremental, original, MergePolicy(force_merge=True))
    merged = load_logic(original / "hip_Y.yaml")
    assert merged.solutions[0].macro_tile0 == 128
    assert (original / "only_original.yaml").exists()
    assert not [name for name in os.listdir(original) if name.endswith(".tmp")]


def test_merge_files_and_paths(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    original, incremental = dirs
    report = merge_files(original / "hip_Y.yaml", incremental / "hip_Y.yaml", tmp_path / "single.yaml")
    assert report.files[0].written and (tmp_path / "single.yaml").exists()
    (tmp_path / "into").mkdir()
    report = merge_paths(original / "hip_Y.yaml", incremental / "hip_Y.yaml", tmp_path / "into")
    assert report.files[0].output_path == str(tmp_path / "into" / "hip_Y.yaml")
    with pytest.raises(MergeError, match="both"):
        merge_paths(original, incremental / "hip_Y.yaml", tmp_path / "x")
    with pytest.raises(InputNotFound):
        merge_paths(original / "nope.yaml", incremental / "hip_Y.yaml", tmp_path / "x")


def test_merge_error_names_the_file(tmp_path: Path) -> None:
    original = write(tmp_path / "o" / "a.yaml", [A], [([1, 1, 1, 1], 5, 1.0)])
    write(tmp_path / "i" / "a.yaml", [B], [])
    with pytest.raises(MergeError) as raised:
        merge_directories(original.parent, tmp_path / "i", tmp_path / "out")
    assert raised.value.location is not None and raised.value.location.file == str(original)


@pytest.mark.parametrize(
    ("text", "queries"),
    [
        ("1 2 1 3\n# comment\n4,5,1,6\n7x8x1x9\n", [[1, 2, 1, 3], [4, 5, 1, 6], [7, 8, 1, 9]]),
        ("[[1, 2, 1, 3], [4, 5, 1, 6]]", [[1, 2, 1, 3], [4, 5, 1, 6]]),
        ("[1, 2, 1, 3]", [[1, 2, 1, 3]]),
        (
            "queries:\n- {m: 1, n: 2, k: 3}\n- {m: 4, n: 5, batch: 2, k: 6}\n",
            [{"m": 1, "n": 2, "k": 3}, {"m": 4, "n": 5, "batch": 2, "k": 6}],
        ),
        ('[{"M": 1, "N": 2, "K": 3}]', [{"m": 1, "n": 2, "k": 3}]),
        (
            '{"m": 1, "n": 2, "k": 3, "arch": "gfx90a"}\n{"m": 4, "n": 5, "k": 6}\n',
            [{"m": 1, "n": 2, "k": 3, "arch": "gfx90a"}, {"m": 4, "n": 5, "k": 6}],
        ),
    ],
)
def test_parse_queries(text: str, queries: list[object]) -> None:
    assert parse_queries(text) == queries


def test_parse_queries_rejects_garbage() -> None:
    with pytest.raises(InvalidValue) as raised:
        parse_queries("1 2 one 3\n", "q.txt")
    assert raised.value.location is not None and raised.value.location.line == 1


def test_prune_paths_in_place_and_to_output(tmp_path: Path) -> None:
    path = write(tmp_path / "p" / "a.yaml", [A, B, dict(A)], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 2, 1.0)])
    before = path.read_bytes()
    (report,) = prune_paths([path], tmp_path / "out.yaml")
    assert report.written and path.read_bytes() == before
    assert len(load_logic(tmp_path / "out.yaml").solutions) == 1
    (dry,) = prune_paths([path], dry_run=True)
    assert not dry.written and path.read_bytes() == before
    (in_place,) = prune_paths([tmp_path / "p"])
    assert in_place.written and len(load_logic(path).solutions) == 1
    (again,) = prune_paths([path])
    assert not again.changed and not again.written

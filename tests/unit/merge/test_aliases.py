"""YAML aliases in merge and prune outputs follow AMD's copy semantics (tensilekit.merge.aliases)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from merge_factory import PROBLEM_TYPE, solution

from tensilekit.io.logic_io import dumps_logic, load_logic
from tensilekit.merge import MergePolicy, merge_directories, prune_logic
from tensilekit.merge.aliases import merged_alias_pairs, remapped_alias_pairs

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def shared_file(kernels: list[dict[str, Any]], rows: list[tuple[Any, int, float]], *, share_header: bool = True) -> str:
    """A logic file as old Tensile wrote them: one ProblemType and WorkGroup object for all."""
    header = copy.deepcopy(PROBLEM_TYPE)
    problem_type = header if share_header else copy.deepcopy(PROBLEM_TYPE)
    work_group = [16, 16, 1]
    shared_key = [5, 5, 1, 5]
    solutions = []
    for position, kernel in enumerate(kernels):
        item = copy.deepcopy(kernel)
        item.update(SolutionIndex=position, ProblemType=problem_type, WorkGroup=work_group)
        solutions.append(item)
    table = [[shared_key if size == "shared" else size, [index, eff]] for size, index, eff in rows]
    data = [
        {"MinimumRequiredVersion": "4.6.0"},
        "vega20",
        "gfx906",
        ["Device 66a0"],
        header,
        solutions,
        [2, 3, 0, 1],
        table,
        None,
    ]
    return str(yaml.dump(data, Dumper=_DUMPER, default_flow_style=None))


def test_merge_output_shares_like_amd(tmp_path: Path) -> None:
    a, b, c = solution(64, 64), solution(128, 64), solution(128, 128)
    (tmp_path / "o").mkdir()
    (tmp_path / "i").mkdir()
    (tmp_path / "o" / "x.yaml").write_text(
        shared_file(
            [a, b, c], [([1, 1, 1, 1], 0, 10.0), ("shared", 1, 10.0), ([2, 2, 1, 2], 2, 10.0), ("shared", 2, 5.0)]
        )
    )
    (tmp_path / "i" / "x.yaml").write_text(
        shared_file([b, solution(32, 32)], [([1, 1, 1, 1], 1, 20.0), ([9, 9, 1, 9], 0, 1.0), ([7, 7, 1, 7], 1, 3.0)])
    )
    merge_directories(tmp_path / "o", tmp_path / "i", tmp_path / "out", MergePolicy(force_merge=False))
    text = (tmp_path / "out" / "x.yaml").read_text()
    data = yaml.load(text, Loader=_LOADER)
    solutions, table = data[5], data[7]
    originals = [s for s in solutions if s["MacroTile0"] != 32]
    appended = [s for s in solutions if s["MacroTile0"] == 32]
    assert len(originals) == 2 and len(appended) == 1  # [1,1,1,1] went to the faster 32x32 kernel
    # surviving originals were deep-copied together: still one ProblemType and WorkGroup object ...
    assert all(s["ProblemType"] is originals[0]["ProblemType"] for s in originals)
    assert all(s["WorkGroup"] is originals[0]["WorkGroup"] for s in originals)
    # ... but no longer the header's, and the appended kernel is a copy of its own
    assert data[4] is not originals[0]["ProblemType"]
    assert appended[0]["WorkGroup"] is not originals[0]["WorkGroup"]
    # the two original rows with one key object keep it
    shared_rows = [row for row in table if row[0] == [5, 5, 1, 5]]
    assert len(shared_rows) == 2 and shared_rows[0][0] is shared_rows[1][0]
    # and the text round-trips through tensilekit unchanged
    assert dumps_logic(load_logic(tmp_path / "out" / "x.yaml")) == text


def test_unchanged_winner_merge(tmp_path: Path) -> None:
    a, b = solution(64, 64), solution(128, 64)
    rows: list[tuple[Any, int, float]] = [([1, 1, 1, 1], 0, 10.0), ([2, 2, 1, 2], 1, 10.0)]
    for share_header in (False, True):
        text = shared_file([a, b], rows, share_header=share_header)
        folder = tmp_path / str(share_header)
        for side in ("o", "i"):
            (folder / side).mkdir(parents=True)
            (folder / side / "x.yaml").write_text(text)
        merge_directories(folder / "o", folder / "i", folder / "out", MergePolicy(force_merge=False))
        output = (folder / "out" / "x.yaml").read_text()
        if not share_header:  # sharing among solutions only (real vega20 files): AMD rewrites the file as it was
            assert output == text
        else:  # the copied solutions no longer share the header's ProblemType: its anchor moves to them
            data = yaml.load(output, Loader=_LOADER)
            assert data[4] is not data[5][0]["ProblemType"] and data[5][0]["ProblemType"] is data[5][1]["ProblemType"]


def test_pair_mapping() -> None:
    original = (
        ((4,), (5, 0, "ProblemType")),
        ((4,), (5, 2, "ProblemType")),
        ((5, 0, "WorkGroup"), (5, 1, "WorkGroup")),
        ((7, 0, 0), (7, 3, 0)),
        ((7, 0, 1), (7, 1, 1)),
    )
    incremental = (((5, 0, "WorkGroup"), (5, 1, "WorkGroup")), ((5, 1, "A"), (5, 1, "B")))
    pairs = merged_alias_pairs(
        original,
        incremental,
        original_solutions={0: 0, 2: 1},
        incremental_solutions={1: 2},
        original_rows={0: 0, 3: 2},
        incremental_rows={},
    )
    assert pairs == (((5, 0, "ProblemType"), (5, 1, "ProblemType")), ((7, 0, 0), (7, 2, 0)), ((5, 2, "A"), (5, 2, "B")))
    assert remapped_alias_pairs(original, {0: 1, 1: 0}) == (
        ((4,), (5, 1, "ProblemType")),
        ((5, 1, "WorkGroup"), (5, 0, "WorkGroup")),
        ((7, 0, 0), (7, 3, 0)),
        ((7, 0, 1), (7, 1, 1)),
    )


def test_prune_keeps_aliases_of_surviving_kernels() -> None:
    a, b, c = solution(64, 64), solution(128, 64), solution(128, 128)
    from tensilekit.io.logic_io import loads_logic

    logic = loads_logic(shared_file([a, b, c], [([1, 1, 1, 1], 0, 1.0), ([2, 2, 1, 2], 2, 1.0)]))
    pruned, report = prune_logic(logic)
    assert report.kernels_after == 2
    data = yaml.load(dumps_logic(pruned), Loader=_LOADER)
    assert data[5][0]["WorkGroup"] is data[5][1]["WorkGroup"]
    assert data[5][0]["ProblemType"] is data[4]

"""remap over synthetic builds: every status, both artefact formats, the identity, bad rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tensilekit.errors import UnsupportedFormat, WorkloadLineError
from tensilekit.model.identity import IdentityTable, same_solution, solution_identity
from tensilekit.remapping import BuildSolutions, RemapStatus, remap_text
from tensilekit.workload.problem import GemmProblem

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "remap"


def _record(index: int, tile: int, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "index": index,
        "name": f"{name}_MIN{index}",
        "kernelName": f"{name}_K{index}",
        "libraryLogicIndex": index + 7,
        "problemType": {"aType": "Half", "transA": False, "transB": True},
        "sizeMapping": {"macroTile": [tile, tile, 1], "workGroupMapping": 8},
        **extra,
    }


# OLD: K0..K3 at 0..3. NEW: K0 stays at 0, K1 moves to 2, K2 is gone, K3 exists twice (4 and 5).
OLD = BuildSolutions.from_records([_record(i, 16 * (i + 1), f"K{i}") for i in range(4)])
NEW = BuildSolutions.from_records(
    [
        _record(0, 16, "K0"),
        _record(1, 999, "X"),
        _record(2, 32, "K1"),
        _record(3, 998, "Y"),
        _record(4, 64, "K3"),
        _record(5, 64, "K3"),
    ]
)


def _pick(problem: GemmProblem, arch: str | None, cus: int | None) -> tuple[int | None, str]:
    return 1, "NEW's heuristic picks 1 (X)"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_identity_ignores_what_a_build_renumbers_and_nothing_else() -> None:
    first = _record(3, 64, "K3")
    assert same_solution(first, dict(first, index=9, name="other", kernelName="k", libraryLogicIndex=0))
    assert not same_solution(first, dict(first, sizeMapping={"macroTile": [64, 64, 1], "workGroupMapping": 4}))
    assert solution_identity(first) == solution_identity(_record(4, 64, "K3"))


def test_a_uid_counts_only_when_both_records_carry_it() -> None:
    first = _record(0, 16, "K0", SolutionUID="a1")
    assert same_solution(first, _record(5, 16, "K0"))
    assert same_solution(first, _record(5, 16, "K0", SolutionUID="a1"))
    assert not same_solution(first, _record(5, 16, "K0", SolutionUID="b2"))
    table = IdentityTable([_record(0, 16, "K0", SolutionUID="b2"), _record(1, 16, "K0")])
    assert table.matches(first) == [1]


def test_tunableop_rows_get_every_status() -> None:
    result = remap_text(_text("tunableop_results.csv"), "t.csv", OLD, NEW, picker=_pick)
    got = [(row.line, row.status, row.old_index, row.new_index) for row in result.rows]
    assert got == [
        (5, RemapStatus.SAME, 0, 0),
        (6, RemapStatus.MOVED, 1, 2),
        (7, RemapStatus.MISSING, 2, None),
        (8, RemapStatus.AMBIGUOUS, 3, None),
    ]
    assert result.rows[1].kernel == "K1_K2"
    assert result.rows[2].heuristic_index == 1 and "NEW's heuristic picks 1" in (result.rows[2].reason or "")
    assert result.rows[3].candidates == (4, 5)
    assert [(bad.location.line, bad.text.split(",")[1]) for bad in result.bad_lines] == [
        (11, "nt_128_garbage_128"),
        (12, "nt_2048_128_128_ld_2048_128_2048"),
    ]
    assert result.rows[0].to_json() == {
        "file": "t.csv", "line": 5, "status": "same", "old_index": 0, "new_index": 0, "kernel": "K0_K0",
        "reason": None,
    }  # fmt: skip


def test_tunableop_output_moves_rows_drops_lost_ones_and_keeps_the_rest() -> None:
    text = _text("tunableop_results.csv")
    lines = text.splitlines(keepends=True)
    result = remap_text(text, "t.csv", OLD, NEW, picker=_pick)
    expected = lines[:5] + [lines[5].replace("Gemm_Hipblaslt_1,", "Gemm_Hipblaslt_2,")] + lines[8:]
    assert result.text == "".join(expected)
    filled = remap_text(text, "t.csv", OLD, NEW, picker=_pick, fill_heuristic=True)
    assert filled.text.splitlines()[6] == "GemmTunableOp_Half_NT,nt_512_128_128_ld_512_128_512,Gemm_Hipblaslt_1,0.0303"
    assert "Gemm_Hipblaslt_3," not in filled.text  # ambiguous: nothing is picked


def test_tunableop_validators_are_set_only_when_asked() -> None:
    result = remap_text(_text("tunableop_results.csv"), "t.csv", OLD, OLD, validators={"HIPBLASLT_VERSION": "1.0"})
    assert "Validator,HIPBLASLT_VERSION,1.0\n" in result.text
    assert result.validators_kept == ("PT_VERSION", "ROCM_VERSION", "GCN_ARCH_NAME")
    with pytest.raises(UnsupportedFormat):
        remap_text(_text("tunableop_results.csv"), "t.csv", OLD, OLD, validators={"NOPE": "1"})


@pytest.mark.parametrize("name", ["tunableop_results.csv", "aiter_tuned.csv"])
def test_remapping_to_the_same_build_is_the_identity(name: str) -> None:
    text = _text(name)
    result = remap_text(text, name, OLD, OLD)
    assert result.text == text
    assert {row.status for row in result.rows} == {RemapStatus.SAME}
    crlf = text.replace("\n", "\r\n")
    assert remap_text(crlf, name, OLD, OLD).text == crlf


def test_aiter_rows_get_every_status_and_the_new_kernel_name() -> None:
    text = _text("aiter_tuned.csv")
    result = remap_text(text, "a.csv", OLD, NEW, picker=_pick)
    assert [(row.line, row.status.value, row.new_index) for row in result.rows] == [
        (2, "same", 0), (3, "moved", 2), (4, "missing", None), (5, "ambiguous", None),
    ]  # fmt: skip
    lines = text.splitlines(keepends=True)
    assert result.text == "".join(
        [lines[0], lines[1], lines[2].replace(",hipblaslt,1,0,20.2,K1_K1,", ",hipblaslt,2,0,20.2,K1_K2,"), *lines[5:]]
    )
    assert [bad.location.line for bad in result.bad_lines] == [7]


def test_strict_stops_at_the_first_bad_row() -> None:
    with pytest.raises(WorkloadLineError) as raised:
        remap_text(_text("tunableop_results.csv"), "t.csv", OLD, NEW, strict=True)
    assert str(raised.value).startswith("t.csv:11:")


def test_an_unknown_artefact_is_bad_input() -> None:
    with pytest.raises(UnsupportedFormat):
        remap_text("hello\nworld\n", "x.txt", OLD, NEW)


def test_a_solution_new_refuses_is_rejected_with_the_predicate_and_dropped() -> None:
    def refuse_moved(index: int, problem: GemmProblem, arch: str | None, cus: int | None) -> str | None:
        return "CUCount fails (not (304 == 80))" if index == 2 else None

    text = _text("tunableop_results.csv")
    result = remap_text(text, "t.csv", OLD, NEW, picker=_pick, checker=refuse_moved)
    rejected = result.rows[1]
    assert (rejected.status, rejected.old_index, rejected.new_index) == (RemapStatus.REJECTED, 1, 2)
    assert rejected.reason == "NEW refuses 2: CUCount fails (not (304 == 80)); NEW's heuristic picks 1 (X)"
    assert "nt_256_128_128" not in result.text
    filled = remap_text(text, "t.csv", OLD, NEW, picker=_pick, checker=refuse_moved, fill_heuristic=True)
    assert "nt_256_128_128_ld_256_128_256,Gemm_Hipblaslt_1,0.0202\n" in filled.text


def test_strict_names_the_first_bad_row_in_file_order() -> None:
    text = "Validator,PT_VERSION,2.6.0\nGemmTunableOp_Half_NT,nt_8_8_8_ld_8_8_8,Gemm_Hipblaslt_77,0.1\nbroken\n"
    with pytest.raises(WorkloadLineError) as raised:
        remap_text(text, "t.csv", OLD, NEW, strict=True)
    assert str(raised.value).startswith("t.csv:2:") and "OLD has no solution 77" in str(raised.value)


@pytest.mark.parametrize(
    ("name", "lines", "bad"),
    [("hipblaslt_tuning_headerless.txt", [2, 3, 4, 5], [6, 7]), ("hipblaslt_tuning_keyed.txt", [3, 5, 7, 9], [11, 13])],
)
def test_tuning_file_rows_get_every_status(name: str, lines: list[int], bad: list[int]) -> None:
    result = remap_text(_text(name), name, OLD, NEW, picker=_pick)
    assert [(row.line, row.status, row.new_index) for row in result.rows] == [
        (lines[0], RemapStatus.SAME, 0),
        (lines[1], RemapStatus.MOVED, 2),
        (lines[2], RemapStatus.MISSING, None),
        (lines[3], RemapStatus.AMBIGUOUS, None),
    ]
    assert [item.location.line for item in result.bad_lines] == bad
    assert all(str(item).startswith(f"{name}:") for item in result.bad_lines)


def test_headerless_tuning_output_rewrites_the_index_field_only() -> None:
    text = _text("hipblaslt_tuning_headerless.txt")
    lines = text.splitlines(keepends=True)
    result = remap_text(text, "h.txt", OLD, NEW, picker=_pick)
    moved = lines[2].replace(",20.2,1,gfx942", ",20.2,2,gfx942")
    assert moved != lines[2]
    assert result.text == "".join([lines[0], lines[1], moved, *lines[5:]])  # bad rows passed through


def test_keyed_tuning_output_moves_index_and_kernel_name_and_drops_whole_entries() -> None:
    text = _text("hipblaslt_tuning_keyed.txt")
    lines = text.splitlines(keepends=True)
    result = remap_text(text, "k.txt", OLD, NEW, picker=_pick)
    moved = lines[4].replace(",304,1,K1_K1,", ",304,2,K1_K2,")
    assert moved != lines[4]
    assert result.text == "".join([*lines[:4], moved, *lines[9:]])  # entries of lines 6-9 dropped whole
    filled = remap_text(text, "k.txt", OLD, NEW, picker=_pick, fill_heuristic=True)
    assert ",304,1,X_K1," in filled.text.splitlines()[6]  # missing: NEW's pick, with NEW's kernel name


@pytest.mark.parametrize("name", ["hipblaslt_tuning_headerless.txt", "hipblaslt_tuning_keyed.txt"])
def test_tuning_files_remapped_to_the_same_build_are_byte_identical(name: str) -> None:
    text = _text(name)
    assert remap_text(text, name, OLD, OLD).text == text
    crlf = text.replace("\n", "\r\n")
    assert remap_text(crlf, name, OLD, OLD).text == crlf


def test_tuning_rows_carry_the_device_for_predicates() -> None:
    seen: list[tuple[str | None, int | None]] = []

    def record(index: int, problem: GemmProblem, arch: str | None, cus: int | None) -> str | None:
        seen.append((arch, cus))
        return None

    remap_text(_text("hipblaslt_tuning_keyed.txt"), "k.txt", OLD, NEW, checker=record)
    assert seen and set(seen) == {("gfx942", 304)}


def test_tuning_files_are_read_as_workloads_with_their_recorded_index() -> None:
    from tensilekit.workload.detect import parse_workload
    from tensilekit.workload.records import WorkloadFormat

    for name in ("hipblaslt_tuning_headerless.txt", "hipblaslt_tuning_keyed.txt"):
        parsed = parse_workload(_text(name), file=name, skip_bad_lines=True)
        assert parsed.format is WorkloadFormat.HIPBLASLT_TUNING
        assert [(p.m, p.trans_b, p.solution_index) for p in parsed.problems] == [
            (128, "T", 0), (256, "T", 1), (512, "T", 2), (1024, "T", 3), (2048, "T", 9),
        ]  # fmt: skip
        assert len(parsed.bad_lines) == 1


def test_an_installed_folder_gives_every_record_of_its_lazily_read_shards(corpus: Path, tmp_path: Path) -> None:
    from tensilekit.api import load_for_selection
    from tensilekit.io.installed_library import split_lazy
    from tensilekit.io.master_io import dump_master_set, load_master
    from tensilekit.model.common import to_raw
    from tensilekit.remapping import LibraryRecords, library_records

    master = load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat")
    dump_master_set(split_lazy(master, "gfx942"), tmp_path / "lib", "msgpack", mapping=True)
    expected = {solution.index: to_raw(solution) for solution in master.solutions}
    records = LibraryRecords(*load_for_selection(tmp_path / "lib"))
    assert sorted(records) == sorted(expected)
    assert all(records[index] == expected[index] for index in (min(expected), max(expected)))
    assert len(library_records(*load_for_selection(tmp_path / "lib"))) == len(expected)


def test_strict_stops_at_the_first_bad_tuning_file_entry() -> None:
    with pytest.raises(WorkloadLineError) as raised:
        remap_text(_text("hipblaslt_tuning_headerless.txt"), "h.txt", OLD, NEW, strict=True)
    assert str(raised.value).startswith("h.txt:6:") and "37 fields" in str(raised.value)


def test_a_headerless_row_carried_to_index_0_says_hipblaslt_skips_it() -> None:
    # UserDrivenTuningParser.cpp@00ed225c: `if(problemSolution.second > 0)` -- index 0 is never applied
    swapped = BuildSolutions.from_records([dict(_record(1, 32, "K1"), index=0), dict(_record(0, 16, "K0"), index=1)])
    result = remap_text(_text("hipblaslt_tuning_headerless.txt"), "h.txt", OLD, swapped)
    moved = [row for row in result.rows if row.status is RemapStatus.MOVED]
    assert [(row.old_index, row.new_index) for row in moved] == [(0, 1), (1, 0)]
    assert moved[0].reason is None and "skips it" in (moved[1].reason or "")
    keyed = remap_text(_text("hipblaslt_tuning_keyed.txt"), "k.txt", OLD, swapped)
    assert all(row.reason is None for row in keyed.rows if row.status is RemapStatus.MOVED)

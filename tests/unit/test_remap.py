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

"""GEKO list YAML and ``--inline`` GEMMs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tensilekit.errors import InputNotFound, InvalidValue, MissingField, YamlSyntaxError
from tensilekit.workload.geko_list import load_geko_list, parse_geko_list, parse_inline_gemm, types_from_tensile

FixturePath = Callable[..., Path]

BASE = "TRANSA: N\nTRANSB: T\nDataType: H\nDestDataType: H\nComputeDataType: S\n"


def test_geko_list_fixture(fixture_path: FixturePath) -> None:
    path = fixture_path("logs", "geko_list_bbs_nt.yaml")
    workload = load_geko_list(path)
    assert workload.source == str(path)
    assert workload.metadata == {"ARCH": "gfx942"}
    assert workload.warnings == ("1 repeated size(s) dropped",)
    assert [problem.size for problem in workload.problems] == [
        (6144, 8, 1, 4096), (6144, 2048, 1, 4096), (28672, 2048, 1, 4096), (4096, 2048, 1, 14336)
    ]  # fmt: skip
    assert {problem.gemm_type for problem in workload.problems} == {"BBS_NT"}
    assert all(problem.call_count == 1 for problem in workload.problems)


@pytest.mark.parametrize(
    ("triple", "types"),
    [
        (("B", "B", "S"), ("bf16_r", "bf16_r", "bf16_r", "c_f32_r")),
        (("H", "S", "S"), ("f16_r", "f16_r", "f32_r", "c_f32_r")),
        (("F8B8", "S", "S"), ("f8_r", "bf8_r", "f32_r", "c_f32_r")),
        (("F8N", "B", "S"), ("f8_fnuz_r", "f8_fnuz_r", "bf16_r", "c_f32_r")),
        (("X", "S", "S"), ("f32_r", "f32_r", "f32_r", "c_xf32_r")),
        (("I8", "I", "I"), ("i8_r", "i8_r", "i32_r", "c_i32_r")),
        (("D", "D", "D"), ("f64_r", "f64_r", "f64_r", "c_f64_r")),
    ],
)
def test_tensile_triples(triple: tuple[str, str, str], types: tuple[str, str, str, str]) -> None:
    mapped = types_from_tensile(*triple)
    assert (mapped["a_type"], mapped["b_type"], mapped["c_type"], mapped["compute_type"]) == types
    assert mapped["d_type"] == mapped["c_type"]


@pytest.mark.parametrize(("triple", "message"), [(("Q", "S", "S"), "unknown Tensile"), (("HBS", "S", "S"), "one or two"),
                                                 (("B", "Q", "S"), "DestDataType"), (("B", "B", "Q"), "ComputeDataType"),
                                                 (("XS", "S", "S"), "TF32")])  # fmt: skip
def test_bad_tensile_triples(triple: tuple[str, str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        types_from_tensile(*triple)


def test_inline_gemm_round_trips_the_type_name() -> None:
    problem = parse_inline_gemm("1024 2048 4 512 B B S N T")
    assert (problem.m, problem.n, problem.batch, problem.k) == (1024, 2048, 4, 512)
    assert problem.gemm_type == "BBS_NT"
    for spec in (["16", "16", "1", "16", "F8B8", "S", "S", "T", "N"], "8 8 1 8 X S S N N"):
        problem = parse_inline_gemm(spec)
        letters = spec[4:7] if isinstance(spec, list) else spec.split()[4:7]
        assert problem.gemm_type.startswith("".join(letters))


@pytest.mark.parametrize("spec", ["1 2 3 B B S N T", "1 2 1 3 B B S N C", "a 2 1 3 B B S N T", "1 2 1 3 Q B S N T"])
def test_bad_inline_gemms(spec: str) -> None:
    with pytest.raises(InvalidValue, match="inline GEMM"):
        parse_inline_gemm(spec)


def test_missing_key_names_the_key() -> None:
    with pytest.raises(MissingField, match="'Sizes'") as caught:
        parse_geko_list(BASE, file="list.yaml")
    assert caught.value.location is not None and caught.value.location.file == "list.yaml"


def test_bad_size_entry_points_at_its_line() -> None:
    text = BASE + "Sizes:\n  - [16, 16, 1, 16]\n  - [16, 16, 16]\n"
    with pytest.raises(InvalidValue, match="four positive integers") as caught:
        parse_geko_list(text, file="list.yaml")
    location = caught.value.location
    assert location is not None
    assert (location.file, location.line, location.path) == ("list.yaml", 8, "Sizes[1]")


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        (BASE + "SIZE_OPTION: 1\nARCH: gfx942\n", InvalidValue, "SIZE_OPTION 1"),
        (BASE.replace("TRANSA: N", "TRANSA: C") + "Sizes: [[1, 1, 1, 1]]\n", InvalidValue, "TRANSA must be N or T"),
        (BASE.replace("DataType: H\n", "DataType: W\n") + "Sizes: [[1, 1, 1, 1]]\n", InvalidValue, "unknown Tensile"),
        (BASE + "Sizes: []\n", InvalidValue, "non-empty"),
        ("- [1, 2]\n", InvalidValue, "mapping"),
    ],
)
def test_bad_lists(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_geko_list(text)


def test_broken_yaml_reports_the_line() -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_geko_list(BASE + "Sizes: [[1, 2, 3, 4]\nARCH: gfx942\n", file="list.yaml")
    assert caught.value.location is not None and caught.value.location.line is not None
    assert caught.value.location.line == 7


def test_missing_list_file(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        load_geko_list(tmp_path / "none.yaml")

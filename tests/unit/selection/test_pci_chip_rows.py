"""Issue 18: hardware rows keyed by PCI chip ID (tensilelite ``PciChipId``/``PciChipID``) with the
``ChipIdRegistry`` fallbacks (0x75b0 -> 0x75a0 …) and ``ExactLogicLibrary``'s rule: a row reached
through a fallback is kept while later rows are tried for the device's own ID.

Fixture: three solutions of an AMD-written hipBLASLt master, their predicates opened (TruePred),
under hardware rows written by tensilekit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.master_io import dump_master, load_master
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import GemmProblem, Hardware, compile_library, select_solution

TRUE = {"type": "TruePred"}


def _row(chip: int | None, kind: str, index: int) -> dict[str, Any]:
    processor = {"type": "Processor", "value": "gfx950"}
    test = processor if chip is None else {"type": "And", "value": [processor, {"type": kind, "value": chip}]}
    return {"predicate": {"type": "AMDGPU", "value": test}, "library": {"type": "Single", "index": index}}


@pytest.fixture
def library(corpus: Path) -> MasterLibrary:
    raw = load_master(corpus / "masters-hipblaslt" / "hipblaslt_gfx942_equality.dat").to_raw()
    solutions = [
        {**s, "problemPredicate": TRUE, "taskPredicate": TRUE, "hardwarePredicate": TRUE} for s in raw["solutions"][:3]
    ]
    first, second, generic = (s["index"] for s in solutions)
    rows = [_row(0x75A0, "PciChipId", first), _row(0x75A3, "PciChipId", second), _row(None, "", generic)]
    return MasterLibrary.model_validate({**raw, "solutions": solutions, "library": {"type": "Hardware", "rows": rows}})


@pytest.mark.parametrize(
    ("chip", "arch", "row"),
    [
        (0x75A3, "gfx950", 1),  # its own row, although the 0x75a0 row before it matches by fallback
        (0x75A0, "gfx950", 0),
        (0x75B0, "gfx950", 2),  # the 0x75a0 row matches only by fallback; a row without chip test is exact
        (0x1234, "gfx950", 2),  # unknown part: the generic row
        (None, "gfx950", 2),  # chip ID unknown
    ],
)
def test_chip_rows_and_fallbacks(library: MasterLibrary, chip: int | None, arch: str, row: int) -> None:
    problem = GemmProblem(m=128, n=128, k=128)
    device = Hardware(arch=arch, pci_chip_id=chip)
    want = library.solutions[row].index
    assert select_solution(library, problem, device).index == want
    solution, _ = compile_library(library).find(*_contraction(problem), device)
    assert solution is not None and solution.index == want


def test_fallback_row_answers_when_no_exact_row_does(library: MasterLibrary) -> None:
    raw = library.to_raw()
    raw["library"]["rows"] = raw["library"]["rows"][:2]  # no generic row
    chip_only = MasterLibrary.model_validate(raw)
    problem = GemmProblem(m=128, n=128, k=128)
    fallback = select_solution(chip_only, problem, Hardware(arch="gfx950", pci_chip_id=0x75B0))
    assert fallback.index == library.solutions[0].index
    assert select_solution(chip_only, problem, Hardware(arch="gfx950", pci_chip_id=0x75A3)).index == (
        library.solutions[1].index
    )
    assert select_solution(chip_only, problem, Hardware(arch="gfx950", pci_chip_id=0x1234)).index is None


def _contraction(problem: GemmProblem) -> tuple[Any]:
    from tensilekit.selection import contraction_problem

    return (contraction_problem(problem),)


def test_current_predicate_is_gfx950_only_first_version_is_not(library: MasterLibrary) -> None:
    raw = library.to_raw()
    for row in raw["library"]["rows"]:
        row["predicate"]["value"] = (
            {"type": "Processor", "value": "gfx942"}
            if "value" not in row["predicate"]["value"] or row["predicate"]["value"]["type"] == "Processor"
            else {
                "type": "And",
                "value": [{"type": "Processor", "value": "gfx942"}, row["predicate"]["value"]["value"][1]],
            }
        )
    gfx942 = MasterLibrary.model_validate(raw)
    device = Hardware(arch="gfx942", pci_chip_id=0x75A0)
    generic = library.solutions[2].index
    assert select_solution(gfx942, GemmProblem(m=64, n=64, k=64), device).index == generic
    older = MasterLibrary.model_validate({**raw, "library": _rename(raw["library"], "PciChipId", "PciChipID")})
    assert select_solution(older, GemmProblem(m=64, n=64, k=64), device).index == library.solutions[0].index


def _rename(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {
            key: (new if key == "type" and value == old else _rename(value, old, new)) for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rename(item, old, new) for item in node]
    return node


def test_select_cli_takes_the_chip_id(library: MasterLibrary, tmp_path: Path) -> None:
    path = tmp_path / "TensileLibrary_gfx950.dat"
    dump_master(library, path)
    args = ["select", "-l", str(path), "128", "128", "128", "--arch", "gfx950", "--runtime", "tensile", "--json"]
    out = CliRunner().invoke(cli, [*args, "--pci-chip-id", "0x75a3"])
    assert out.exit_code == 0, out.output
    assert f'"index":{library.solutions[1].index}' in out.output.replace(" ", "")

"""Issue 17: a bounded, seeded fuzz run over every input kind and every command.

300 mutated inputs (fixtures and the smallest corpus files: logic, master YAML / msgpack / gzip,
workloads, query files), each read through the API and run through four commands in turn
(in-process, click's CliRunner). Fails on any exit 70 or escaping exception, any API error that
is not a TensilekitError, and any run over 10 s. ``bench/fuzz.py --minutes N`` is the long run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fuzz_driver import commands, find_corpus, fuzz  # noqa: E402

CASES = 300
PER_CASE = 4


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM bounds each run")
def test_no_crash_hang_or_foreign_exception() -> None:
    report = fuzz(find_corpus(), seed=17, cases=CASES, seconds=None, per_case=PER_CASE)
    assert report.cases == CASES and report.runs >= CASES * 2
    assert not report.failures, f"{len(report.failures)} failure(s), first:\n" + "\n".join(report.failures[:5])
    # the run did exercise both sides: inputs refused with an input error, and inputs that worked
    assert report.outcomes["exit 3 (bad input)"] > 0 and report.outcomes["exit 0"] > 0
    assert report.outcomes["api TensilekitError"] > 0 and report.outcomes["api ok"] > 0


def test_every_command_is_driven() -> None:
    driven = {template[0] for kind in ("logic", "master", "workload", "queries") for template in commands(kind)}
    assert driven >= {
        "validate",
        "info",
        "lint",
        "select",
        "diff",
        "coverage",
        "build-master",
        "merge",
        "prune",
        "convert",
    }


# Cases a long bench/fuzz.py run found (exit 70 before), kept as named regressions.
_DICT_LOGIC = """ArchitectureName: gfx90a
CUCount: 104
LibraryType: Matching
MinimumRequiredVersion: 4.40.0
ScheduleName: aldebaran
Solutions: [xxxx]
"""


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("dict_solutions.yaml", _DICT_LOGIC, "a solution must be a mapping of parameters, not str (at Solutions[0])"),
    ],
)
def test_a_dict_logic_file_whose_solution_is_no_mapping_is_located(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    path = tmp_path / name
    path.write_text(text)
    for args in (
        ["build-master", str(path), "-o", str(tmp_path / "m.yaml")],
        ["select", "-l", str(path), "--arch", "gfx90a", "64", "64", "64"],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 3 and message in result.output, (args, result.output)


def test_an_infinite_kernel_parameter_is_named_not_a_crash(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    fixture = Path(__file__).resolve().parents[3] / "fixtures" / "invalid" / "wrong_type_macrotile.yaml"
    text = fixture.read_text()
    assert "WorkGroup: [256, 1, 1]" in text
    path = tmp_path / "logic.yaml"
    path.write_text(text.replace("WorkGroup: [256, 1, 1]", "WorkGroup: [.inf, 1, 1]"))
    result = CliRunner().invoke(cli, ["build-master", str(path), "-o", str(tmp_path / "m.yaml")])
    assert result.exit_code == 3 and "WorkGroup=inf is not a finite number" in result.output, result.output

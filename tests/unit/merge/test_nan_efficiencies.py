"""Issue 31 item 10: merge reads NaN efficiencies and writes ``.nan``, as both of AMD's merge tools do.

AMD's own tools run on the same inputs (``../shared/amd/run``: Tensile 09ec347 ``TensileMergeLibrary``
and hipBLASLt 7d9fb683 tensilelite ``Utilities/merge.py``); tensilekit's output must be byte for byte
theirs, with a warning naming each input that holds NaN. Elsewhere (select, build) a NaN efficiency
is still refused.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import LibraryFormatError
from tensilekit.io.logic_io import load_logic

LOGIC = Path(__file__).resolve().parents[3] / "fixtures" / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"
ROW = re.compile(r"^(    - \[\d+, )([0-9.]+)\]$", re.MULTILINE)


def _efficiencies(text: str, change: dict[int, str]) -> str:
    """``text`` with the efficiency of table row ``n`` replaced by ``change[n]``."""
    rows = iter(range(10_000))
    return ROW.sub(lambda match: match.group(1) + change.get(next(rows), match.group(2)) + "]", text)


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    text = LOGIC.read_text()
    original, incremental = tmp_path / "original", tmp_path / "incremental"
    original.mkdir()
    incremental.mkdir()
    # NaN in the original's first rows, in the incremental's middle rows, the rest improved
    (original / LOGIC.name).write_text(_efficiencies(text, {0: ".nan", 1: ".nan", 2: ".nan"}))
    (incremental / LOGIC.name).write_text(
        _efficiencies(text, {**{n: "99999.0" for n in range(12)}, 1: ".nan", 4: ".nan", 5: ".nan", 6: ".nan"})
    )
    return original, incremental


@pytest.mark.parametrize(
    ("tool", "amd_options", "options"),
    [
        ("tensile-09ec347", ["TensileMergeLibrary", "--force_merge", "false"], ["--force-merge", "false"]),
        ("tensilelite-7d9fb68", ["Utilities/merge.py"], []),
    ],
    ids=["tensile-winner", "tensilelite-default"],
)
def test_merge_with_nan_efficiencies_is_what_amd_writes(
    amd: Path, inputs: tuple[Path, Path], tmp_path: Path, tool: str, amd_options: list[str], options: list[str]
) -> None:
    original, incremental = inputs
    script, *flags = amd_options
    done = subprocess.run(
        [str(amd / "run"), tool, script, str(original), str(incremental), str(tmp_path / "amd"), *flags],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = CliRunner().invoke(cli, ["merge", *options, str(original), str(incremental), str(tmp_path / "ours")])
    assert result.exit_code == 0, result.output
    ours = (tmp_path / "ours" / LOGIC.name).read_text()
    assert ours == (tmp_path / "amd" / LOGIC.name).read_text()
    assert ".nan]" in ours
    for path in (original, incremental):
        assert f"{path / LOGIC.name}: " in result.output and "efficiencies are NaN" in result.output
    assert "mixed efficiency units" not in result.output  # NaN measures nothing


def test_nan_is_still_refused_outside_a_merge(inputs: tuple[Path, Path]) -> None:
    with pytest.raises(LibraryFormatError, match="not NaN"):
        load_logic(inputs[0] / LOGIC.name)

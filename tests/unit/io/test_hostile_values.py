"""Issue 17 regression tests: the minimal reproducers of each crash / hang / silently accepted value.

Each case is a small mutation of a fixture. Loading it must raise an input error that names the
file, line, column and YAML path of the bad value (as a schema error does); ``validate`` must report
it; and every command that reads the file must exit 3 (bad input) quickly, never 70 (a crash) or
hang.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.errors import InvalidValue, LibraryFormatError
from tensilekit.inspect import validate_file

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
LOGIC = (FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml").read_text()
MASTER = (FIXTURES / "masters" / "coverage_equality_gfx90a.yaml").read_text()
LOGIC_NAME = "aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def _once(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _in_every_problem_type(text: str, key: str, line: str) -> str:
    """Add ``key: value`` (``line``) after ``key``'s sibling IndexAssignmentsB, keeping indentation."""
    return re.sub(r"( *)IndexAssignmentsB: \[3, 1, 2\]\n", lambda m: m.group(0) + m.group(1) + line + "\n", text)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    path: str  # YAML path of the first problem
    marker: str  # the bad text; its first occurrence is where the error must point

    @property
    def line(self) -> int:
        return self.text[: self.text.index(self.marker)].count("\n") + 1


CASES = [
    Case(
        "num_indices_c_negative",
        LOGIC.replace("NumIndicesC: 3", "NumIndicesC: -3"),
        "[4].NumIndicesC",
        "NumIndicesC: -3",
    ),
    Case(
        "indices_summation_inconsistent",
        LOGIC.replace("IndicesSummation: [3]", "IndicesSummation: [1]"),
        "[4].IndicesSummation",
        "IndicesSummation: [1]",
    ),
    Case(
        "global_read_vector_width_nan",
        _once(LOGIC, "GlobalReadVectorWidth: 4", "GlobalReadVectorWidth: .nan"),
        "[5][0].GlobalReadVectorWidth",
        "GlobalReadVectorWidth: .nan",
    ),
    Case(
        "global_read_vector_width_zero",
        _once(LOGIC, "GlobalReadVectorWidth: 4", "GlobalReadVectorWidth: 0"),
        "[5][0].GlobalReadVectorWidth",
        "GlobalReadVectorWidth: 0",
    ),
    Case(
        "prefetch_global_read_string",
        _once(LOGIC, "PrefetchGlobalRead: 2", "PrefetchGlobalRead: '2'"),
        "[5][0].PrefetchGlobalRead",
        "PrefetchGlobalRead: '2'",
    ),
    Case(
        "vector_width_list",
        _once(LOGIC, "\n    VectorWidth: 4", "\n    VectorWidth: [4]"),
        "[5][0].VectorWidth",
        "VectorWidth: [4]",
    ),
    Case(
        "assert_stride_c_equal_bad_key",
        _once(LOGIC, "AssertStrideCEqual: {0: 1}", "AssertStrideCEqual: {x: 1}"),
        "[5][0].AssertStrideCEqual.x",
        "AssertStrideCEqual: {x: 1}",
    ),
    Case(
        "mirror_dims_b_scalar",
        _in_every_problem_type(LOGIC, "MirrorDimsB", "MirrorDimsB: 7"),
        "[4].MirrorDimsB",
        "MirrorDimsB: 7",
    ),
    Case(
        "index_assignments_huge",
        LOGIC.replace("IndexAssignmentsA: [0, 3, 2]", "IndexAssignmentsA: [0, 3, 1000000000000]"),
        "[4].IndexAssignmentsA[2]",
        "IndexAssignmentsA: [0, 3, 1000000000000]",
    ),
    Case(
        "macro_tile_negative",
        _once(LOGIC, "MacroTile0: 256", "MacroTile0: -256"),
        "[5][0].MacroTile0",
        "MacroTile0: -256",
    ),
    Case(
        "macro_tile_2_pow_70",
        _once(LOGIC, "MacroTile0: 256", f"MacroTile0: {2**70}"),
        "[5][0].MacroTile0",
        "MacroTile0: 1180591620717411303424",
    ),
    Case(
        "macro_tile_null", _once(LOGIC, "MacroTile0: 256", "MacroTile0: null"), "[5][0].MacroTile0", "MacroTile0: null"
    ),
    Case("depth_u_zero", _once(LOGIC, "DepthU: 16", "DepthU: 0"), "[5][0].DepthU", "DepthU: 0"),
]


def test_non_finite_parameter_is_an_input_error(tmp_path: Path) -> None:
    """A flag spelled .inf (bench/fuzz.py seed 71): kernel naming refuses it, every command exits 3."""
    path = _write(tmp_path, _once(LOGIC, "BufferStore: true", "BufferStore: .inf"))
    for command in COMMANDS:
        args = [part.format(f=path, d=tmp_path) for part in command]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1, 3), (args, result.exit_code, result.output[-300:])
        if result.exit_code == 3 and command[0] != "info":
            assert "BufferStore" in result.output and str(path) in result.output, (args, result.output[-300:])


def _write(tmp_path: Path, text: str, name: str = LOGIC_NAME) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_bad_value_is_a_located_input_error(tmp_path: Path, case: Case) -> None:
    path = _write(tmp_path, case.text)
    with pytest.raises(LibraryFormatError) as caught:
        tensilekit.load(path)
    location = caught.value.location
    assert location is not None
    assert (location.file, location.path, location.line) == (str(path), case.path, case.line)
    assert location.col is not None
    assert str(caught.value).startswith(f"{path}:{case.line}:{location.col}: ")
    result = validate_file(path)
    assert not result.ok and result.findings[0].path == case.path and result.findings[0].line == case.line


COMMANDS = [
    ["info", "{f}"],
    ["lint", "{f}"],
    ["select", "-l", "{f}", "--arch", "gfx90a", "128", "128", "128"],
    ["diff", "{f}", "{f}"],
    ["build-master", "{f}", "-o", "{d}/out.yaml"],
    ["build-master", "--lazy", "{f}", "-o", "{d}/lazy"],
    ["merge", "{f}", "{f}", "{d}/merged.yaml"],
    ["prune", "{f}", "-o", "{d}/pruned.yaml"],
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_no_command_crashes_or_hangs(tmp_path: Path, case: Case) -> None:
    path = _write(tmp_path, case.text)
    for command in COMMANDS:
        args = [part.format(f=path, d=tmp_path) for part in command]
        start = time.monotonic()
        result = CliRunner().invoke(cli, args)
        elapsed = time.monotonic() - start
        assert result.exit_code == 3, (args, result.exit_code, result.output[-400:])
        assert f"{path}:{case.line}:" in result.output, (args, result.output[-400:])  # file:line:col
        assert elapsed < 10, (args, elapsed)
        assert not (tmp_path / "out.yaml").exists() and not (tmp_path / "merged.yaml").exists()


def test_validate_reports_every_bad_value(tmp_path: Path) -> None:
    text = _once(LOGIC, "MacroTile0: 256", "MacroTile0: -256")
    text = _once(text, "DepthU: 16", "DepthU: 0")
    text = _once(text, "PrefetchGlobalRead: 2", "PrefetchGlobalRead: '2'")
    result = validate_file(_write(tmp_path, text))
    paths = {finding.path for finding in result.findings if finding.severity == "error"}
    assert paths == {"[5][0].MacroTile0", "[5][0].DepthU", "[5][0].PrefetchGlobalRead"}
    assert all(finding.line and finding.col for finding in result.findings)


@pytest.mark.parametrize(("efficiency", "message"), [("-3.5", "negative"), (".nan", "NaN")], ids=["negative", "nan"])
def test_bad_efficiency_is_rejected(tmp_path: Path, efficiency: str, message: str) -> None:
    row = re.search(r"(\n    - \[\d+, )([0-9.]+)(\])", LOGIC)
    assert row is not None
    text = LOGIC[: row.start(2)] + efficiency + LOGIC[row.end(2) :]
    with pytest.raises(InvalidValue, match=message) as caught:
        tensilekit.load(_write(tmp_path, text))
    assert caught.value.location is not None and caught.value.location.path is not None
    assert caught.value.location.path.endswith("[1][1]")


def test_negative_size_is_rejected(tmp_path: Path) -> None:
    row = re.search(r"\n- - - \[(\d+), ", LOGIC)
    assert row is not None
    text = LOGIC[: row.start(1)] + "-" + LOGIC[row.start(1) :]
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(_write(tmp_path, text))
    assert caught.value.location is not None and caught.value.location.path == "[7][0][0][0]"


# -- master libraries --------------------------------------------------------------------------


def test_short_types_equal_list(tmp_path: Path) -> None:
    text = _once(MASTER, "value: [Float, Float, Float, Float]", "value: [Float, Float]")
    path = _write(tmp_path, text, "TensileLibrary.yaml")
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(path)
    assert caught.value.location is not None and caught.value.location.line == 39
    result = CliRunner().invoke(cli, ["select", "-l", str(path), "--arch", "gfx90a", "128", "128", "128"])
    assert result.exit_code == 3, result.output


@pytest.mark.parametrize(("key", "value"), [("speed", "-1.0"), ("speed", ".nan"), ("key", "[-4096, 4096, 1, 4096]")])
def test_bad_master_table_entry(tmp_path: Path, key: str, value: str) -> None:
    old = "speed: 40000.0" if key == "speed" else "key: [4096, 4096, 1, 4096]"
    path = _write(tmp_path, _once(MASTER, old, f"{key}: {value}"), "TensileLibrary.yaml")
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(path)
    assert caught.value.location is not None and caught.value.location.path is not None
    assert key in caught.value.location.path and caught.value.location.line is not None


def test_binary_input_errors_carry_offset_and_msgpack_path(tmp_path: Path) -> None:
    import msgpack
    import yaml

    data = yaml.safe_load(_once(MASTER, "speed: 40000.0", "speed: -1.0"))
    packed = msgpack.packb(data, use_bin_type=True)
    path = tmp_path / "TensileLibrary.dat"
    path.write_bytes(packed)
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(path)
    location = caught.value.location
    assert location is not None and location.line is None and location.path is not None
    assert location.path.endswith(".table[0].speed") and location.offset is not None
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(packed[location.offset :])
    assert next(unpacker) == -1.0
    assert f"{path}: byte {location.offset}: " in str(caught.value)


def test_master_depth_u_negative(tmp_path: Path) -> None:
    assert "depthU: 16" in MASTER
    path = _write(tmp_path, MASTER.replace("depthU: 16", "depthU: -1", 1), "TensileLibrary.yaml")
    with pytest.raises(InvalidValue) as caught:
        tensilekit.load(path)
    location = caught.value.location
    assert location is not None and location.path is not None and location.path.endswith("sizeMapping.depthU")

"""Issue 23, items 7, 8, 9 and 12: hostile inputs to the readers are located errors (exit 3),
never a hang, unbounded memory, a RecursionError or a silently different reading.

One section per kind; each case is built here (the probe's own inputs are kept back).
"""

from __future__ import annotations

import os
import shutil
import tracemalloc
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import DecodeError, InputNotFound, InputTooLarge, MsgpackDecodeError, UnsupportedFormat
from tensilekit.io.files import read_bytes
from tensilekit.io.logic_canonical import compress_zstd
from tensilekit.io.master_io import load_master
from tensilekit.io.zlib_catalog import read_catalog_bytes

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
MASTER = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"
LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


# -- item 8: non-regular inputs are refused before a byte is read ---------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "queue.yaml"
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_unread_by_the_reader(fifo: Path) -> None:
    # opening a FIFO for reading blocks until a writer comes: reaching here at all is the test
    with pytest.raises(UnsupportedFormat) as caught:
        read_bytes(fifo)
    assert "FIFO" in caught.value.message and caught.value.location is not None
    assert caught.value.location.file == str(fifo)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_unread_by_the_reader() -> None:
    with pytest.raises(UnsupportedFormat, match="character device"):
        read_bytes("/dev/zero")  # would read until memory runs out


@pytest.mark.parametrize(
    "command",
    [
        ["info", "{}"],
        ["validate", "{}"],
        ["convert", "{}", "{out}/x.dat"],
        ["build-master", "{}", "-o", "{out}/lib"],
        ["diff", "{}", str(MASTER)],
        ["select", "-l", "{}", "--arch", "gfx90a", "64", "64", "64"],
        ["select", "-l", str(MASTER), "--arch", "gfx90a", "--queries", "{}"],
        ["coverage", "-l", str(MASTER), "--arch", "gfx90a", "{}"],
    ],
    ids=lambda command: command[0] + ("-queries" if "--queries" in command else ""),
)
def test_every_command_refuses_a_fifo_with_its_path(command: list[str], fifo: Path, tmp_path: Path) -> None:
    args = [part.replace("{}", str(fifo)).replace("{out}", str(tmp_path)) for part in command]
    code, output = _run(*args)
    expected = 1 if command[0] == "validate" else 3  # validate reports it as an error finding
    assert code == expected, output
    assert str(fifo) in output and "FIFO" in output, output


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", [["info"], ["select", "--arch", "gfx90a", "64", "64", "64", "-l"]])
def test_commands_refuse_dev_zero(command: list[str]) -> None:
    code, output = _run(*command, "/dev/zero")
    assert code == 3 and "/dev/zero" in output and "character device" in output, output


def test_a_missing_file_is_still_not_found(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        read_bytes(tmp_path / "absent.yaml")


# -- item 12: a placeholder shard that is a symlink loop ------------------------------------------

LAZY_MASTER = "TensileLibrary_lazy_gfx90a.yaml"
SHARD = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"


@pytest.fixture(scope="module")
def lazy_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lazy") / "lib"
    code, output = _run("build-master", "--lazy", str(LOGIC), "-o", str(folder), "--format", "yaml")
    assert code == 0, output
    return folder


@pytest.mark.parametrize("spelling", [SHARD + ".yaml", SHARD + ".yaml.zlib"])
def test_a_placeholder_shard_that_is_a_symlink_loop(lazy_build: Path, tmp_path: Path, spelling: str) -> None:
    folder = tmp_path / "lib"
    shutil.copytree(lazy_build, folder)
    (folder / (SHARD + ".yaml")).unlink()
    (folder / spelling).symlink_to(spelling)  # points at itself: resolving it never ends
    master = str(folder / LAZY_MASTER)
    code, output = _run("select", "-l", master, "--arch", "gfx90a", "1024", "1024", "1024")
    assert code == 3 and "symlink loop" in output and spelling in output, output
    code, output = _run("diff", master, master)
    assert code == 3 and "symlink loop" in output, output
    # validate locates it at the placeholder node (line of the master), as for a missing shard
    code, output = _run("validate", master)
    assert code == 1 and f"{LAZY_MASTER}:14:" in output and f"{spelling} is a symlink loop" in output, output


# -- items 7 and 8: compressed wrappers (zstd bombs, extra frames, zlib trailing bytes) -----------


def zstd_rle_bomb(total: int, byte: bytes = b" ") -> bytes:
    """One zstd frame of RLE blocks (4 bytes -> 128 KiB each): 2 GiB in 64 KiB, built by hand in
    microseconds (RFC 8878: frame header with a 128 KiB window, then Block_Type 1 blocks)."""
    block = 1 << 17
    count = total // block
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for number in range(count):
        last = 1 if number == count - 1 else 0
        frame += ((block << 3) | (1 << 1) | last).to_bytes(3, "little") + byte
    return bytes(frame)


def test_a_zstd_bomb_stops_early_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml.zst"
    path.write_bytes(zstd_rle_bomb(2 << 30))
    assert path.stat().st_size < 70_000  # 64 KB that would inflate to 2 GiB
    tracemalloc.start()
    try:
        with pytest.raises(InputTooLarge, match="compression bomb") as caught:
            read_bytes(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 160 << 20, f"peak {peak >> 20} MiB"
    assert caught.value.location is not None and caught.value.location.file == str(path)
    code, output = _run("info", str(path))
    assert code == 3 and "compression bomb" in output and str(path) in output, output


def test_zstd_under_the_ratio_floor_is_read(tmp_path: Path) -> None:
    path = tmp_path / "blank.yaml.zst"
    path.write_bytes(zstd_rle_bomb(4 << 20))  # 4 MiB of blanks: compressible, not a bomb
    assert read_bytes(path) == b" " * (4 << 20)


def test_a_second_zstd_frame_is_refused_with_its_offset(tmp_path: Path) -> None:
    first = compress_zstd(LOGIC.read_text())
    path = tmp_path / "two.yaml.zst"
    path.write_bytes(first + compress_zstd("- appended\n"))
    with pytest.raises(DecodeError, match="zstd frame ends here") as caught:
        read_bytes(path)
    assert caught.value.location is not None and caught.value.location.offset == len(first)
    path.write_bytes(first + b"\x00junk")
    code, output = _run("build-master", str(path), "-o", str(tmp_path / "out"))
    assert code == 3 and f"byte {len(first)}" in output, output
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def msgpack_master(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("dat") / "TensileLibrary_gfx90a.dat"
    code, output = _run("convert", str(MASTER), str(path))
    assert code == 0, output
    return path.read_bytes()


def test_zlib_trailing_bytes_are_refused_with_their_offset(msgpack_master: bytes, tmp_path: Path) -> None:
    stream = zlib.compress(msgpack_master, 9)
    path = tmp_path / "TensileLibrary_gfx90a.dat.zlib"
    path.write_bytes(stream + b"\x00\x00trailing")
    with pytest.raises(MsgpackDecodeError, match="zlib stream ends here") as caught:
        read_bytes(path)
    assert caught.value.location is not None and caught.value.location.offset == len(stream)
    code, output = _run("select", "-l", str(path), "--arch", "gfx90a", "64", "64", "64")
    assert code == 3 and f"byte {len(stream)}" in output, output


def test_a_refused_zlib_falls_back_to_the_bare_catalog_as_the_runtime_does(
    msgpack_master: bytes, tmp_path: Path
) -> None:
    # MessagePack.cpp fileToMsgObject: a .zlib that readCompressedMsgObject refuses (trailing
    # bytes included) is passed over for the uncompressed file beside it
    bare = tmp_path / "TensileLibrary_gfx90a.dat"
    bare.write_bytes(msgpack_master)
    (tmp_path / "TensileLibrary_gfx90a.dat.zlib").write_bytes(zlib.compress(b"\x80", 9) + b"tail")
    data, found = read_catalog_bytes(bare)
    assert found == bare and data == msgpack_master


# -- item 7: scalars read as PyYAML (AMD's reader) reads them ------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 010\nb: *x\n",  # octal 8 under an anchor, shared by the alias
        "a: &x yes\nb: *x\n",  # a YAML 1.1 boolean under an anchor
        "- [&x 010, 2]\n",
        "- &x off\n",
        "{a: &x no}\n",
        "a: &x 1:20\n",  # sexagesimal
        "a: &x 1e3\n",  # a string to YAML 1.1, a float to YAML 1.2
        "a: &x 0o17\n",
        "? 010\n: 1\n",  # a complex key
        "a:\t010\n",
        "- - [010, 0x20, 1, 1]\n  - [0, 1.0]\n",  # hand-edited sizes
        "- - [ 010 , 0x20,1,1]\n",
        "- - [+010, -010, 0x_20, 1__0, 0b10]\n",
        "- - [09, 019]\n",  # not octal: strings
        "- - [0O1, 0X1F, 0B1]\n",  # upper-case prefixes: strings to PyYAML, numbers to yaml_rs
        "a: 0x_20\n",  # an underscore in hex: 32 to PyYAML, a string to yaml_rs
        "- - - 0X0\n",
    ],
)
def test_yaml_scalars_read_as_pyyaml_reads_them(text: str) -> None:
    import yaml

    from tensilekit.io.yaml_codec import parse_yaml

    expected = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert repr(parse_yaml(text)) == repr(expected)  # repr: True and 1 are equal but not the same


def test_hand_edited_sizes_in_a_logic_file_read_as_pyyaml(tmp_path: Path) -> None:
    import yaml

    import tensilekit

    text = LOGIC.read_text()
    row = "- - - [8192, 8192, 1, 8192]"
    assert row in text
    edited = tmp_path / "edited.yaml"
    edited.write_text(text.replace(row, "- - - [&m 010, 0x20, 1, *m]"))
    logic = tensilekit.load(edited)
    pyyaml_rows = yaml.load(edited.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))[7]
    assert pyyaml_rows[0][0] == [8, 32, 1, 8]
    assert list(logic.exact_logic[0].size) == [8, 32, 1, 8]  # type: ignore[union-attr]


# -- item 7: indexed masters ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed_master(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("indexed") / "TensileLibrary_gfx90a.dat"
    code, output = _run("convert", str(MASTER), str(path), "--format", "msgpack-indexed")
    assert code == 0, output
    return path.read_bytes()


@pytest.mark.parametrize("version", [2.0, True, "2"])
def test_indexed_format_version_must_be_the_integer_2(indexed_master: bytes, tmp_path: Path, version: object) -> None:
    import msgpack

    from tensilekit.errors import LibraryFormatError

    root = msgpack.unpackb(indexed_master, raw=False, strict_map_key=False)
    assert root["format_version"] == 2
    root["format_version"] = version  # dict order kept: format_version stays first
    path = tmp_path / "TensileLibrary_gfx90a.dat"
    path.write_bytes(msgpack.packb(root, use_bin_type=True))
    with pytest.raises(LibraryFormatError, match="format_version") as caught:
        load_master(path)
    assert caught.value.location is not None and caught.value.location.path == "format_version"
    code, output = _run("select", "-l", str(path), "--arch", "gfx90a", "64", "64", "64")
    assert code == 3 and "format_version" in output, output


# Only a negative index: one past C++ int is refused by every reader already (the plain master too,
# as the runtime's loader does; tests/unit/selection/test_solution_index_range.py).
@pytest.mark.parametrize("index", [-5, -(2**31)])
def test_convert_refuses_indices_its_indexed_reader_refuses(tmp_path: Path, index: int) -> None:
    text = MASTER.read_text()
    assert "index: 606601216" in text
    source = tmp_path / "master.yaml"
    source.write_text(text.replace("606601216", str(index)))
    assert _run("validate", str(source))[0] == 0  # a plain master may hold it
    target = tmp_path / "TensileLibrary_gfx90a.dat"
    code, output = _run("convert", str(source), str(target), "--format", "msgpack-indexed")
    assert code == 3 and str(source) in output and f"solution index {index}" in output, output
    assert not target.exists()


# -- item 9: one nesting limit for every reader, so nothing recurses into a RecursionError ------


def _master_with_solution_field(value_lines: str) -> str:
    """The fixture master with a solution's ``ideals`` replaced by ``value_lines`` (indented 2)."""
    text = MASTER.read_text()
    assert "  ideals: {}\n" in text
    return text.replace("  ideals: {}\n", value_lines, 1)


def _mixed_nesting(block_levels: int, flow_levels: int) -> str:
    """Block mappings one column deeper each, then flow lists: each way under the limit alone."""
    lines = ["  ideals:\n"]
    for level in range(block_levels):
        lines.append(" " * (3 + level) + f"k{level}:\n")
    lines.append(" " * (3 + block_levels) + "v: " + "[" * flow_levels + "1" + "]" * flow_levels + "\n")
    return "".join(lines)


def test_the_limit_is_the_one_constant() -> None:
    from tensilekit.io.limits import MAX_NESTING_DEPTH, current_limits

    assert MAX_NESTING_DEPTH == 200 and current_limits().max_depth == MAX_NESTING_DEPTH


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{}"],
        ["info", "{}"],
        ["select", "-l", "{}", "--arch", "gfx90a", "64", "64", "64"],
        ["diff", "{}", "{}"],
        ["convert", "{}", "{out}/x.dat"],
        ["lint", "{}"],
    ],
    ids=lambda command: command[0],
)
def test_yaml_nested_past_the_limit_by_mixing_indentation_and_brackets(command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(_master_with_solution_field(_mixed_nesting(150, 150)))  # ~305 levels in all
    args = [part.replace("{}", str(path)).replace("{out}", str(tmp_path)) for part in command]
    result = CliRunner().invoke(cli, args)
    assert not isinstance(result.exception, RecursionError), result.output
    assert result.exit_code in (1, 3), result.output  # validate/lint report it as a finding (1 or 3)
    assert "nested more than 200 levels" in result.output and str(path) in result.output, result.output


def test_nesting_under_the_limit_still_works_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "deep_ok.yaml"
    path.write_text(_master_with_solution_field(_mixed_nesting(90, 100)))  # ~196 levels in all
    for args in (
        ["validate", str(path)],
        ["select", "-l", str(path), "--arch", "gfx90a", "64", "64", "64"],
        ["diff", str(path), str(path)],
        ["convert", str(path), str(tmp_path / "ok.dat")],
        ["select", "-l", str(tmp_path / "ok.dat"), "--arch", "gfx90a", "64", "64", "64"],
        ["convert", str(tmp_path / "ok.dat"), str(tmp_path / "back.yaml")],
    ):
        code, output = _run(*args)
        assert code == 0, (args, output)


def test_msgpack_nested_past_the_limit(tmp_path: Path) -> None:
    import msgpack
    import yaml

    from tensilekit.io.master_io import open_master

    data = yaml.load(MASTER.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    deep: object = 1
    for _ in range(600):  # under msgpack's own stack limit (1024), past the recursion limit
        deep = [deep]
    data["solutions"][3]["ideals"] = {"x": deep}
    path = tmp_path / "TensileLibrary_gfx90a.dat"
    path.write_bytes(msgpack.packb(data, use_bin_type=True))
    with pytest.raises(InputTooLarge, match="nested more than 200") as caught:
        load_master(path)
    assert caught.value.location is not None and caught.value.location.file == str(path)
    assert (caught.value.location.path or "").startswith("solutions[3].ideals.x")
    with pytest.raises(InputTooLarge):  # the lazy path decodes that solution when selection reaches it
        open_master(path).materialize()
    # select decodes only the solutions its query reaches (io.partial_msgpack), so it is not here
    for args in (
        ["diff", str(path), str(path)],
        ["convert", str(path), str(tmp_path / "x.yaml")],
    ):
        code, output = _run(*args)
        assert code == 3 and "nested more than 200" in output, (args, output)


def test_yaml_alias_cycle_is_too_deep_not_a_recursion(tmp_path: Path) -> None:
    from tensilekit.io.yaml_codec import parse_yaml

    with pytest.raises(InputTooLarge, match="nested more than"):
        parse_yaml("a: &x [*x]\n")


@pytest.mark.parametrize("levels", [600, 100_000])
def test_deeply_nested_query_lines_are_skipped_with_a_warning(levels: int, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    nested = "[" * levels + "]" * levels
    queries.write_text('{"m": ' + nested + ', "n": 64, "k": 64}\n{"m": 64, "n": 64, "k": 64}\n')
    result = CliRunner().invoke(cli, ["select", "-l", str(MASTER), "--arch", "gfx90a", "--queries", str(queries)])
    # as for any unreadable line: a warning, the other queries answered, exit 3 at the end
    assert result.exit_code == 3 and not isinstance(result.exception, RecursionError), result.output
    assert f"{queries}:1:" in result.output and "nested more than 200" in result.output, result.output
    assert "606601218" in result.output and "1 of 2 query line(s) could not be answered" in result.output
    strict = CliRunner().invoke(
        cli, ["select", "-l", str(MASTER), "--arch", "gfx90a", "--queries", str(queries), "--strict"]
    )
    assert strict.exit_code == 3 and "nested more than 200" in strict.output, strict.output
    coverage = CliRunner().invoke(cli, ["coverage", "-l", str(MASTER), "--arch", "gfx90a", str(queries)])
    assert coverage.exit_code == 0 and "nested more than 200" in coverage.output, coverage.output


def test_diff_queries_nested_past_the_limit_are_an_input_error(tmp_path: Path) -> None:
    from tensilekit.errors import TensilekitError
    from tensilekit.merge.files import parse_queries

    line = '{"m": ' + "[" * 1000 + "]" * 1000 + ', "n": 64, "k": 64}'
    with pytest.raises(TensilekitError):  # json.loads raised RecursionError here
        parse_queries(line, "queries.jsonl")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(line + "\n")
    result = CliRunner().invoke(cli, ["diff", str(MASTER), str(MASTER), "--queries", str(queries)])
    assert result.exit_code == 3 and not isinstance(result.exception, RecursionError), result.output


@pytest.mark.parametrize("command", [["info"], ["validate"], ["lint"], ["convert", "{out}/x.dat"]])
def test_an_input_that_is_a_symlink_loop_is_named_as_one(command: list[str], tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop.name)
    args = [command[0], str(loop), *(part.replace("{out}", str(tmp_path)) for part in command[1:])]
    code, output = _run(*args)
    assert code in (1, 3) and f"{loop}: is a symlink loop" in output, output


def test_a_library_that_is_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    loop = tmp_path / "TensileLibrary_gfx90a.dat"
    loop.symlink_to(loop.name)
    code, output = _run("select", "-l", str(loop), "--arch", "gfx90a", "64", "64", "64")
    assert code == 3 and f"{loop}: is a symlink loop" in output, output  # was "no such file or directory"


@pytest.mark.parametrize("text", ["a: 0b_\n", "- 0x_\n", "a: 2001-13-45\n"])
def test_a_scalar_pyyaml_cannot_build_is_a_yaml_error(text: str) -> None:
    from tensilekit.errors import YamlSyntaxError
    from tensilekit.io.yaml_codec import parse_yaml

    with pytest.raises(YamlSyntaxError):  # PyYAML's constructor raised a bare ValueError (exit 70)
        parse_yaml(text, "x.yaml")


@pytest.mark.parametrize("levels", [1100, 100_000])
def test_msgpack_past_its_own_stack_is_the_nesting_limit_with_a_place(levels: int, tmp_path: Path) -> None:
    path = tmp_path / "TensileLibrary_gfx90a.dat"
    path.write_bytes(b"\x82\xa9solutions" + b"\x91" * levels + b"\x01" + b"\xa7library\x80")
    with pytest.raises(InputTooLarge, match="nested more than 200") as caught:
        load_master(path)  # msgpack's StackError, once reported as 'malformed msgpack: StackError'
    location = caught.value.location
    # the root map is level 1, the array at byte 11 level 2: level 201 opens at byte 11 + 199
    assert location is not None and location.offset == 11 + 199 and (location.path or "").startswith("solutions[0]")


def test_the_damage_scan_of_a_deep_shard_stops_at_the_limit() -> None:
    from tensilekit.io.msgpack_place import damage_place

    truncated = b"\x81\xa9solutions" + b"\x91" * 5000  # ends inside the nesting
    place = damage_place(truncated)  # recursed into RecursionError (exit 70 for a damaged shard)
    assert place is not None and "nested more than 200 levels" in place


@pytest.mark.parametrize("text", ["# " + "-" * 300 + "\na: 1\n", "a: '" + "-" * 300 + "'\n", "a: " + "?" * 300 + "\n"])
def test_a_long_run_of_dashes_is_not_nesting(text: str) -> None:
    from tensilekit.io.yaml_codec import parse_yaml

    assert parse_yaml(text)  # a banner comment or a scalar of 300 dashes is 1 level, not 300


def test_the_workload_api_refuses_a_fifo_unread(fifo: Path) -> None:
    from tensilekit.workload import load_workload

    with pytest.raises(UnsupportedFormat, match="FIFO"):  # once 'no such workload file'
        load_workload(fifo)

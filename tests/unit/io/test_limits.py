"""Issue 17: reader limits. Bombs and absurd inputs are errors naming the file and the limit,
found before they cost memory or time; real libraries stay far inside every default."""

from __future__ import annotations

import gzip
import sys
import tracemalloc
import zlib
from pathlib import Path

import msgpack
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.errors import InputTooLarge, MsgpackDecodeError
from tensilekit.io.files import read_bytes
from tensilekit.io.limits import MAX_NESTING_DEPTH, check_yaml_text, limits, parse_size
from tensilekit.io.yaml_codec import parse_yaml

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
MASTER = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"


def _gzip_stream(head: bytes, filler: bytes, total: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(head)]
    block = filler * (1 << 22)
    for _ in range(total // len(block)):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    return b"".join(parts)


@pytest.fixture(scope="module")
def zeros_bomb() -> bytes:
    return _gzip_stream(b"", b"\x00", 96 << 20)  # ~100 KB that would inflate to 96 MiB


def _peak_mib(function: object) -> float:
    tracemalloc.start()
    try:
        function()  # type: ignore[operator]
    except InputTooLarge:
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def test_gzip_bomb_stops_early(tmp_path: Path, zeros_bomb: bytes) -> None:
    path = tmp_path / "bomb.yaml.gz"
    path.write_bytes(zeros_bomb)
    with pytest.raises(InputTooLarge, match="compression bomb") as caught:
        tensilekit.load(path)
    assert caught.value.location is not None and caught.value.location.file == str(path)
    assert _peak_mib(lambda: tensilekit.load(path)) < 80  # stopped near the 32 MiB floor


def test_msgpack_nil_array_bomb(tmp_path: Path) -> None:
    count = 96 << 20
    path = tmp_path / "nils.dat.gz"
    path.write_bytes(_gzip_stream(b"\x81\xa9solutions\xdd" + count.to_bytes(4, "big"), b"\xc0", count))
    result = CliRunner().invoke(cli, ["info", str(path)])
    assert result.exit_code == 3 and "compression bomb" in result.output, result.output
    assert _peak_mib(lambda: tensilekit.load(path)) < 80


def test_max_input_size_raises_the_limit(tmp_path: Path, zeros_bomb: bytes) -> None:
    path = tmp_path / "zeros.yaml.gz"
    path.write_bytes(gzip.compress(b"\x00" * (40 << 20)))
    with pytest.raises(InputTooLarge):
        read_bytes(path)
    result = CliRunner().invoke(cli, ["--max-input-size", "64M", "info", str(path)])
    assert "compression bomb" not in result.output and result.exit_code == 3  # decoded, then not a library
    result = CliRunner().invoke(cli, ["--max-input-size", "16M", "info", str(path)])
    assert result.exit_code == 3 and "input size limit of 16.0 MiB" in result.output, result.output
    # the option does not leak into the next run
    assert "compression bomb" in CliRunner().invoke(cli, ["info", str(path)]).output


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    with limits(max_input_size=1000), pytest.raises(InputTooLarge, match="over the input size limit") as caught:
        tensilekit.load(MASTER)
    assert caught.value.location is not None and caught.value.location.file == str(MASTER)


def test_real_compressed_library_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "TensileLibrary.yaml.gz"
    path.write_bytes(gzip.compress(MASTER.read_bytes(), 9))
    assert tensilekit.load(path).solutions


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 100_000 + "]" * 100_000, 1),  # yaml_rs overflowed its stack on this (SIGSEGV)
        # two columns a level: the first line indented past MAX_NESTING_DEPTH columns
        ("".join(" " * level + "- x:\n" for level in range(0, 2200, 2)), MAX_NESTING_DEPTH // 2 + 1),
        ("- " * 5000 + "x\n", 1),
        ("{a: " * 3000 + "1" + "}" * 3000, 1),
    ],
    ids=["flow", "indented", "compact", "mappings"],
)
def test_nesting_depth(text: str, line: int) -> None:
    from tensilekit.io.yaml_codec import distinct_lines

    repeated = "a: 1\n" * 5  # five lines of the text, one of its distinct lines (loads_logic passes them)
    for prefix, lines in (("", None), ("", distinct_lines(text)), (repeated, distinct_lines(repeated + text))):
        with pytest.raises(InputTooLarge, match="nesting depth") as caught:
            parse_yaml(prefix + text, "deep.yaml", lines=lines)
        assert caught.value.location is not None and caught.value.location.line == line + prefix.count("\n")


def test_long_integer_is_refused_before_parsing() -> None:
    # one 5 MB integer took 66 s (quadratic) to parse
    text = "- {MinimumRequiredVersion: 4.33.0}\n- " + "7" * 5_000_000 + "\n"
    with pytest.raises(InputTooLarge, match="integer digits") as caught:
        tensilekit.loads(text, "big.yaml")
    assert caught.value.location is not None and (caught.value.location.line, caught.value.location.col) == (2, 3)


def test_alias_expansion_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 9)]
    with pytest.raises(InputTooLarge, match="alias expansion"):
        parse_yaml("\n".join(lines) + "\n", "laughs.yaml")


def test_msgpack_container_length() -> None:
    data = msgpack.packb({"solutions": list(range(50)), "library": {"type": "Single", "index": 0}})
    with limits(max_container_length=10), pytest.raises(InputTooLarge, match="container length"):
        tensilekit.loads(data, "x.dat")
    with pytest.raises(MsgpackDecodeError):
        tensilekit.loads(b"\xdc\x00\x05\xc0", "x.dat")  # a claimed length with no data behind it


def test_msgpack_depth_bound_by_header_bytes_skips_only_shallow_objects() -> None:
    """parse_msgpack walks a short object only when it has more bytes that could open a container
    than the depth limit: every nesting past the limit is still refused, maps and arrays of each
    header size alike, and shallow ones pass."""
    from tensilekit.io.msgpack_codec import parse_msgpack

    def nest(levels: int, wide: bool) -> object:
        node: object = "leaf"
        for level in range(levels):  # wide: 16-bit headers (0xdc, 0xde), else fixarray / fixmap
            node = (
                {f"k{n}": node if n == 0 else n for n in range(17 if wide else 1)}
                if level % 2
                else [node] + list(range(16 if wide else 0))
            )
        return node

    for wide in (False, True):
        with limits(max_depth=6):
            assert parse_msgpack(msgpack.packb(nest(6, wide)), "x.dat") == nest(6, wide)
            with pytest.raises(InputTooLarge, match="nested more than 6"):
                parse_msgpack(msgpack.packb(nest(7, wide)), "x.dat")


@pytest.mark.parametrize(("text", "size"), [("3G", 3 << 30), ("512M", 512 << 20), ("1000", 1000), ("1.5k", 1536)])
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_key_walk_keeps_keys_that_equal_others_spelled_apart() -> None:
    """The key walk reuses the interned keys of a key sequence met before: a sequence of other
    types that ``==`` one met (``(1,) == (True,) == (1.0,)``) keeps its own keys, and a sequence
    of str keys met again gets the interned ones."""
    from tensilekit.io.yaml_codec import _intern_keys

    name = "".join(["Macro", "Tile0"])
    tree = [{1: "a"}, {True: "b"}, {1.0: "c"}, {"".join(["Macro", "Tile0"]): 1}, {"".join(["Macro", "Tile0"]): 2}]
    _intern_keys(tree, shared=False)
    assert [type(next(iter(item))) for item in tree[:3]] == [int, bool, float]
    assert next(iter(tree[3])) is next(iter(tree[4])) is sys.intern(name) and tree[4] == {name: 2}


def test_depth_measured_by_the_key_walk_is_check_depths() -> None:
    """parse_yaml skips check_depth's walk when the key-interning walk measured the depth: both
    must count alike (containers only, the root 1), and past the limit check_depth still walks
    and names the path."""
    from tensilekit.io.limits import check_depth
    from tensilekit.io.yaml_codec import _intern_keys

    def nest(levels: int) -> object:
        node: object = "leaf"
        for level in range(levels):
            node = {"k": node, "n": 1} if level % 2 else [1, node]
        return node

    for levels in (0, 1, 2, 7, 12):
        tree = nest(levels)
        if levels:
            assert _intern_keys(tree, shared=False) == levels
    with limits(max_depth=6):
        check_depth(nest(6), "t.yaml", deepest=6)
        with pytest.raises(InputTooLarge, match="nesting depth") as caught:
            check_depth(nest(7), "t.yaml", deepest=7)
        assert caught.value.location is not None and caught.value.location.path


def _depth(node: object) -> int:
    if isinstance(node, dict):
        return 1 + max(map(_depth, node.values()), default=0)
    if isinstance(node, list):
        return 1 + max(map(_depth, node), default=0)
    return 0


_NESTED = st.recursive(
    st.one_of(st.integers(-3, 3), st.sampled_from(["a", "-", "b]", "[c", "x - y", "{"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["k", "l", "m-"]), inner, max_size=3)
    ),
    max_leaves=30,
)


@given(_NESTED, st.sampled_from([None, False, True]), st.integers(4, 40))
@settings(max_examples=300, deadline=None)
def test_the_text_bound_on_nesting_holds(data: object, flow: bool | None, max_depth: int) -> None:
    """A text that bounds its own nesting (``check_yaml_text``'s result) spares the walk of its
    tree: the bound is never below the depth of what it decodes to, and within the limit."""
    text = yaml.safe_dump(data, default_flow_style=flow, width=20)
    plain = text.replace("'", "")  # quotes give no bound: the plain scalars' brackets are the test
    try:
        decoded = yaml.safe_load(plain)
    except yaml.YAMLError:
        return
    with limits(max_depth=max_depth):
        try:
            bound = check_yaml_text(plain, None)
        except InputTooLarge:
            return
    if bound is not None:
        assert _depth(decoded) <= bound <= max_depth


def test_an_amd_master_bounds_its_nesting(corpus: Path) -> None:
    """rocBLAS_Full and the generated masters are read without walking their trees for depth."""
    for path in (corpus / "masters").glob("*.yaml"):
        assert check_yaml_text(path.read_text(), None) is not None, path


@pytest.mark.parametrize(
    "text",
    [
        "- - - - - [[[[1]]]]\n",  # compact sequences, then flow
        "a:\n- b:\n  - c:\n    - [{d: [1]}]\n",  # indentless sequences under keys
        "a: x]]]]\nb: [[[[[1]]]]]\n",  # stray closing brackets in a plain scalar before a deep flow
        "a: [[[[1,\n  [[2]]]]]]\nb: {c: [d, {e: [f]}]}\n",  # flows over lines
        "-\n  -\n    -\n      - 1\n",  # sequences opened alone on their lines
    ],
)
def test_the_text_bound_holds_on_deep_spellings(text: str) -> None:
    for max_depth in (6, 8, 12, 200):
        with limits(max_depth=max_depth):
            try:
                bound = check_yaml_text(text, None)
            except InputTooLarge:
                continue
        assert bound is None or _depth(yaml.safe_load(text)) <= bound <= max_depth, (text, max_depth)

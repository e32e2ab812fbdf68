"""Loading logic files stays fast (issue 33; the figures are ``bench/load.py``'s), with every
reader check kept: a ratio to PyYAML's C loader with generous slack, never a wall-clock time, and
the fast path's own pieces checked for what they must keep (equal data, shared keys)."""

from __future__ import annotations

import copy
import gc
import gzip
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import tensilekit
from tensilekit.io.files import gc_paused
from tensilekit.io.yaml_codec import _fast_parse_is_exact, _intern_keys

MID_SIZED = "rocblas/navi21/navi21_Cijk_Alik_Bjlk_HB.yaml"  # 0.5 MB: the CSafeLoader run ~0.4 s


def _best_of(runs: int, function: Any) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def test_logic_load_ratio_to_csafeloader(corpus: Path) -> None:
    """bench/load.py's goal is <= 0.06x on the largest files (0.146x before issue 33); a mid-sized
    file guards against a large regression (a fallback to PyYAML alone is ~1x)."""
    path = corpus / "logic" / MID_SIZED
    text = path.read_text()
    tensilekit.loads_logic(text, source=str(path))  # imports and first-use caches out of the way
    ours = _best_of(3, lambda: tensilekit.loads_logic(text, source=str(path)))
    base = _best_of(2, lambda: yaml.load(text, Loader=yaml.CSafeLoader))
    assert ours / base <= 0.3, f"loads_logic {ours:.3f} s against CSafeLoader {base:.3f} s"


def test_largest_logic_files_take_the_fast_path(corpus: Path) -> None:
    """The YAML 1.1 exactness check lets the largest corpus files through to yaml_rs (else each is
    read by PyYAML, ~10x slower): its per-line reading must not turn cautious on real files."""
    largest = sorted((corpus / "logic").rglob("*.yaml"), key=lambda p: p.stat().st_size, reverse=True)[:3]
    for path in largest:
        assert _fast_parse_is_exact(path.read_text()), path


def test_key_walk_keeps_the_data_and_shares_keys() -> None:
    """The tree walk (yaml_rs's path) gives back equal data, in place, with key order, float bits
    and types kept and each key one interned string; non-string keys are kept as they are; the
    depth it returns is the one check_depth counts (test_limits checks that count)."""
    key = "".join(["Macro", "Tile0"])  # built at run time: not interned yet
    table = [[[1024, 1024, 1, 1024], [0, 12.5]]]
    first_map = {key: 128, "f": 0.1, "n": float("-inf"), "z": -0.0, "b": True, "x": None, 7: "int key"}
    first_map[2.5] = [1, {"q": 1}]
    data = [first_map, [{"".join(["Macro", "Tile0"]): 64, "f": 1e300, "big": 1 << 70}], table]
    expected = copy.deepcopy(data)
    assert _intern_keys(data, shared=False) == 4  # data, first_map, [1, {...}], {"q": 1}
    assert data == expected
    assert [list(item) for item in data[:1] + data[1]] == [list(item) for item in expected[:1] + expected[1]]
    assert data[0] is first_map and data[2] is table  # refilled in place, nothing copied
    assert type(data[0][7]) is str and type(data[0]["b"]) is bool and str(data[0]["z"]) == "-0.0"
    first, second = (next(iter(item)) for item in data[:1] + data[1])
    assert first is second is sys.intern(key)
    assert _intern_keys("scalar", shared=False) == 1


def test_gc_paused_restores_the_collector() -> None:
    """The pause ends with the collector as it was and nothing left frozen (objects are moved to
    the oldest generation, not kept out of collection); inside someone else's freeze it does not
    unfreeze theirs."""
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with gc_paused(promote=True):
        assert not gc.isenabled()
        kept = [[index] for index in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and len(kept) == 1000
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused(promote=True):
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("text", ["a: 010\n", "- yes\n", "[1e5]\n", "k: {a: 1:30}\n", "0o7: x\n"])
def test_exactness_check_still_refuses_yaml11_spellings(text: str) -> None:
    assert not _fast_parse_is_exact(text)
    assert not _fast_parse_is_exact("x: 1\n" * 3 + text)


def test_loaded_logic_shares_the_keys_it_keeps() -> None:
    """The solutions' keys are shared by the open models (by key order, not by a walk of the
    parsed tree), the rest of the file by a walk of what the model keeps as parsed: equal keys of
    two solutions, and of two mappings of an extra item, are one string either way."""
    solution = "  - {SolutionIndex: %d, MacroTile0: 64, ProblemType: {OperationType: GEMM}, LinearKey: 1}\n"
    text = (
        "- {MinimumRequiredVersion: 4.33.0}\n- fiji\n- gfx803\n- [Device 0050]\n- {OperationType: GEMM}\n"
        "-\n" + solution % 0 + solution % 1 + "- [2, 3, 0, 1]\n- []\n- null\n- null\n- DeviceEfficiency\n"
        "- [{TreeKey: 1}, {TreeKey: 2}]\n"
    )
    logic = tensilekit.loads_logic(text)
    first, second = (solution.model_extra or {} for solution in logic.solutions)
    assert list(first) == list(second) == ["LinearKey"]
    assert next(iter(first)) is next(iter(second))
    assert first == second == {"LinearKey": 1} and logic.solutions[1].solution_index == 1
    tree_a, tree_b = logic.fp16_alt_impl  # position 11: kept as parsed
    assert next(iter(tree_a)) is next(iter(tree_b))


def test_a_callers_own_mappings_are_never_changed() -> None:
    """Only a tree the loader parsed itself has its keys swapped for the shared strings; a mapping a
    script validates and keeps is left exactly as it was (the same key objects)."""
    from tensilekit.model.logic import ProblemType

    ProblemType.model_validate({"OperationType": "GEMM", "LinearKey": 1})  # this order is now shared
    mine = {"".join(["Operation", "Type"]): "GEMM", "".join(["Linear", "Key"]): 2}
    keys = list(mine)
    ProblemType.model_validate(mine)
    assert all(kept is key for kept, key in zip(mine, keys, strict=True)) and mine["LinearKey"] == 2


def test_key_orders_are_not_shared_across_key_types() -> None:
    """``(True, "a") == (1, "a")``: a mapping keyed by 1 must not get a cached order's True (or
    back), so only orders of string keys are kept; the error names the key the file has."""
    from pydantic import ValidationError

    from tensilekit.model.logic import ProblemType

    for key in (True, 1, True):
        with pytest.raises(ValidationError) as caught:
            ProblemType.model_validate({key: "a", "OperationType": "GEMM"})
        assert repr(caught.value.errors()[0]["input"]) == repr(key)


def test_solutions_decoded_per_distinct_line_give_the_parsers_model(corpus: Path, monkeypatch: Any) -> None:
    """A logic file whose solutions io.logic_lines decodes (once per distinct entry) loads to the model
    the parser's tree gives: the same data, key orders, extras and style; a solution's lists are
    its own (tests/property/test_logic_lines_props.py holds the decoder to the parser)."""
    from tensilekit.io import logic_io, logic_lines

    path = corpus / "logic" / MID_SIZED
    text = path.read_text()
    taken: list[bool] = []

    def watched(text: str, load: Any) -> Any:
        decoded = logic_lines.decode_solutions(text, load)
        taken.append(decoded is not None)
        return decoded

    monkeypatch.setattr(logic_io, "decode_solutions", watched)
    fast = tensilekit.loads_logic(text, source=str(path))
    monkeypatch.setattr(logic_io, "decode_solutions", lambda text, load: None)
    parsed = tensilekit.loads_logic(text, source=str(path))
    assert taken == [True]
    assert fast.model_dump() == parsed.model_dump()
    assert repr(logic_io.logic_to_data(fast)) == repr(logic_io.logic_to_data(parsed))
    for mine, theirs in zip(fast.solutions, parsed.solutions, strict=True):
        assert mine._key_order == theirs._key_order
        assert repr(mine.__pydantic_extra__) == repr(theirs.__pydantic_extra__)
    assert fast._source_style == parsed._source_style
    first, second = (solution.__pydantic_extra__ for solution in fast.solutions[:2])
    shared = [key for key, value in first.items() if isinstance(value, (list, dict)) and second.get(key) is value]
    assert not shared, shared


def test_generic_loads_of_a_logic_file_takes_the_logic_readers_path(corpus: Path, monkeypatch: Any) -> None:
    """``tensilekit.load``/``loads`` of a logic file (plain or gzip) is ``load_logic``'s read, fast
    path included (a script should not need the specific reader for speed), with the same model
    and style; a text that does not open with the version item still reads through detection."""
    import tensilekit.io.logic_lines as logic_lines

    path = corpus / "logic" / MID_SIZED
    data = path.read_bytes()
    decoded: list[int] = []
    real = logic_lines.decode_solutions

    def counted(*arguments: Any) -> Any:
        decoded.append(1)
        return real(*arguments)

    monkeypatch.setattr("tensilekit.io.logic_io.decode_solutions", counted)
    expected = tensilekit.loads_logic(data.decode(), source=str(path))
    for form in (data, gzip.compress(data), data.decode()):
        logic = tensilekit.loads(form, str(path))
        assert logic.model_dump() == expected.model_dump()
        assert logic._source_style == expected._source_style
    assert len(decoded) == 4  # loads_logic, then each of the three forms
    respelled = tensilekit.loads(b"# a comment\n  " + data.replace(b"\n", b"\n  "), str(path))
    assert len(decoded) == 4 and respelled.model_dump() == expected.model_dump()


SMALL_MASTER = "masters/aldebaran_HHS_BH_TT_fp16alt.yaml"  # 240 KB, 83 solutions


def test_master_solutions_decoded_per_distinct_entry_read_as_parsed(corpus: Path, monkeypatch: Any) -> None:
    """A YAML master's solutions decoded once per distinct entry (io.logic_lines.decode_items) give
    the model (data, key order, types) and the error the per-item parse gives, for the file and
    for respellings that the entries decoder takes (a flow value wrapped elsewhere, a key repeated
    inside an entry: the parser's rule) or leaves to
    the parser (a flow-style solution, quoted keys, comments, CRLF, tabs, repeated keys, a line
    between the solutions' columns, a solution cut short)."""
    from tensilekit.errors import TensilekitError
    from tensilekit.io import logic_lines, master_io, yaml_codec

    text = (corpus / SMALL_MASTER).read_text()
    start = text.index("\nsolutions:\n- ") + len("\nsolutions:\n")
    first_end = text.index("\n- ", start) + 1
    first = yaml.safe_load(text[start:first_end])[0]
    flow = yaml.dump(first, default_flow_style=True, width=1 << 20, sort_keys=False)
    assert "'" not in flow and '"' not in flow  # a plain flow mapping: the text is still cut
    wrapped_at = text.index(", f32XdlMathOp", start)
    variants = {
        "as written": text,
        "wrapped elsewhere": text[:wrapped_at] + ",\n   " + text[wrapped_at + 2 :],
        "a flow-style solution": text[:start] + "- " + flow + text[first_end:],
        "a quoted key": text.replace("\n  index: ", "\n  'index': ", 1),
        "a comment": text.replace("\n  index: ", "\n  # note\n  index: ", 1),
        "CRLF": text.replace("\n", "\r\n"),
        "a tab": text.replace("\n  index: ", "\n  index:\t", 1),
        "a repeated key": text.replace("\n  index: ", "\n  index: 99\n  index: ", 1),
        "a repeated nested key": text.replace("\n    depthU: ", "\n    depthU: 3\n    depthU: ", 1),
        "a line at column 1": text.replace("\n  index: ", "\n index: ", 1),
        "an item at the keys' column": text.replace("\n  ideals: {}", "\n  ideals: {}\n  - 1", 1),
        "cut short": text[: text.index("\n  problemType: {", start) + 20],
    }
    taken: list[bool] = []

    def watched(*arguments: Any) -> Any:
        decoded = logic_lines.decode_items(*arguments)
        taken.append(decoded is not None)
        return decoded

    def outcome(spelled: str) -> str:
        try:
            return repr(master_io.master_to_data(tensilekit.loads_master(spelled, "master.yaml")))
        except TensilekitError as error:
            return f"{type(error).__name__}: {error}"

    for name, spelled in variants.items():
        monkeypatch.setattr(yaml_codec, "decode_items", watched)
        fast = outcome(spelled)
        monkeypatch.setattr(yaml_codec, "decode_items", lambda *arguments: None)
        assert fast == outcome(spelled), name
        if name in ("as written", "wrapped elsewhere", "a repeated nested key"):  # (the parser reads an entry)
            assert taken == [True], name
        else:
            assert True not in taken, name
        taken.clear()

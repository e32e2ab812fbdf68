"""Fuzzing the readers with damaged corpus files: only TensilekitError may come out.

Small corpus files (ten logic files, the smallest of hipblaslt/, rocblas/ and tensile/ in turn;
the six smallest masters) are mutated, seeded and deterministic: bytes truncated, flipped, inserted, lines deleted, gzip bodies damaged, and,
after decoding, random nodes replaced by values of other types (or deleted, or their keys
renamed) before re-encoding as YAML and as msgpack. For each case, ``tensilekit.loads`` and
``inspect.validate_file`` either succeed or raise a ``TensilekitError`` subclass (never KeyError,
IndexError, TypeError, RecursionError, a bare pydantic ValidationError, …), and a model that
loads can be written again.

Each failure names file, mutation and seed; ``mutate(kind, data, seed, name)`` rebuilds the
input. ``TENSILEKIT_FUZZ_ROUNDS`` (default 4) sets the seeds per mutation kind.
"""

from __future__ import annotations

import gzip
import math
import os
import random
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml

import tensilekit
from tensilekit.errors import TensilekitError
from tensilekit.inspect import validate_file
from tensilekit.io.detect import Format, detect_format
from tensilekit.io.files import read_bytes
from tensilekit.io.logic_io import dumps_logic
from tensilekit.io.master_io import dumps_master
from tensilekit.model.library import MasterLibrary

pytestmark = pytest.mark.corpus

ROUNDS = int(os.environ.get("TENSILEKIT_FUZZ_ROUNDS", "4"))
LOGIC_SAMPLES = 10
MASTER_SAMPLES = 6
MASTER_SUFFIXES = (".yaml", ".dat", ".yaml.gz", ".dat.gz")
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

Sample = tuple[str, bytes]  # (corpus-relative name, decompressed bytes)


def _smallest(paths: Iterator[Path], count: int) -> list[Path]:
    return sorted(paths, key=lambda path: (path.stat().st_size, path.as_posix()))[:count]


@pytest.fixture(scope="module")
def samples(corpus: Path) -> list[Sample]:
    """The smallest logic files (taken in turn from hipblaslt/, rocblas/, tensile/, so both dialects
    are fuzzed) and the smallest masters; by size on disk, then name: deterministic."""
    groups = [
        _smallest(folder.rglob("*.yaml"), LOGIC_SAMPLES)
        for folder in sorted((corpus / "logic").iterdir())
        if folder.is_dir()
    ]
    logic = [path for rank in zip(*groups, strict=False) for path in rank][:LOGIC_SAMPLES]
    masters = _smallest(
        (
            p
            for folder in ("masters", "masterlib")
            for p in (corpus / folder).rglob("*")
            if p.name.endswith(MASTER_SUFFIXES)
        ),
        MASTER_SAMPLES,
    )
    chosen = [(path.relative_to(corpus).as_posix(), read_bytes(path)) for path in logic + masters]
    assert len(chosen) == LOGIC_SAMPLES + MASTER_SAMPLES
    return chosen


# -- mutations -------------------------------------------------------------------------------------

# fmt: off
_PALETTE = [b"\x00", b"\t", b"{", b"}", b"[", b"]", b":", b"- ", b"'", b'"', b"\xff\xfe", b"&a ", b"*a", b"!!python/object ",
            b"\n", b"\n  ", b"#", b"%YAML 1.1\n", b"? ", b"|\n", b"\xc1", b"\xdc\xff\xff", b"\x9f"]
# fmt: on


def _is_binary(data: bytes) -> bool:
    return bool(data) and detect_format(data) is Format.MSGPACK


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, len(data))]


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _insert(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        piece = (
            rng.choice(_PALETTE) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        )
        position = rng.randrange(len(out) + 1)
        out[position:position] = piece
    return bytes(out)


def _delete_lines(data: bytes, rng: random.Random) -> bytes:
    if _is_binary(data):  # no lines in msgpack: cut out a span instead
        start = rng.randrange(len(data))
        return data[:start] + data[start + rng.randint(1, 16) :]
    lines = data.splitlines(keepends=True)
    for _ in range(min(rng.randint(1, 3), len(lines) - 1)):
        del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def _damaged_gzip(data: bytes, rng: random.Random) -> bytes:
    packed = bytearray(gzip.compress(data, mtime=0))
    position = rng.randrange(10, len(packed))  # after the 10-byte header: the deflate body or trailer
    packed[position] ^= 1 << rng.randrange(8)
    return bytes(packed)


def _deep(depth: int) -> Any:
    value: Any = 0
    for level in range(depth):
        value = [value] if level % 2 else {"type": "And", "value": value}
    return value


def _other_value(rng: random.Random, for_msgpack: bool) -> Any:
    # fmt: off
    choices: list[Any] = [
        None, True, False, 0, -1, 7, 2**31, 3.5, -0.0, math.inf, math.nan, "", "x", "128", "null", "yes",
        "Equality", "TruePred", "gfx90a", [], [1, 2, 3], ["a", None], [[]], {}, {"type": "Bogus"},
        {"type": "TruePred"}, {"type": "Single", "index": 0}, {"index": 0}, {"MinimumRequiredVersion": 4},
        [[1, 2, 1, 3], [0, 1.0]], [[1, 2], [0]], {"a": {"b": [1, {"c": None}]}}, {1: "int key"},
        _deep(rng.randint(5, 60)),
    ]
    # fmt: on
    if not for_msgpack:
        choices.append(2**70)  # msgpack cannot hold it; YAML can
    return rng.choice(choices)


def _node_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _node_paths(value, prefix + (key,))
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from _node_paths(value, prefix + (number,))


def _retype(data: Any, rng: random.Random, for_msgpack: bool) -> Any:
    """Replace, delete or re-key 1-3 random nodes of decoded data."""
    for _ in range(rng.randint(1, 3)):
        paths = list(_node_paths(data))
        path = rng.choice(paths[1:] or paths)
        if not path:
            return _other_value(rng, for_msgpack)
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        operation = rng.random()
        if operation < 0.7:
            parent[last] = _other_value(rng, for_msgpack)
        elif operation < 0.85:
            del parent[last]
        elif isinstance(parent, dict):
            parent[rng.choice(["type", "Bogus", "index", "", 5])] = parent.pop(last)
        else:
            parent.insert(last, _other_value(rng, for_msgpack))
    return data


def _decoded(data: bytes) -> Any:
    if _is_binary(data):
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    return yaml.load(data.decode("utf-8"), Loader=_SafeLoader)


def _retype_as_yaml(data: bytes, rng: random.Random) -> bytes:
    mutated = _retype(_decoded(data), rng, for_msgpack=False)
    text: str = yaml.dump(mutated, Dumper=_SafeDumper, default_flow_style=None, sort_keys=False)
    return text.encode("utf-8")


def _retype_as_msgpack(data: bytes, rng: random.Random) -> bytes:
    packed: bytes = msgpack.packb(_retype(_decoded(data), rng, for_msgpack=True), use_bin_type=True)
    return packed


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": _truncate,
    "flip": _flip,
    "insert": _insert,
    "delete_lines": _delete_lines,
    "damaged_gzip": _damaged_gzip,
    "retype_yaml": _retype_as_yaml,
    "retype_msgpack": _retype_as_msgpack,
}


def mutate(kind: str, data: bytes, seed: int, name: str) -> bytes:
    """The fuzz input for (mutation, seed, sample): deterministic across runs and machines."""
    return MUTATIONS[kind](data, random.Random(f"{kind}:{seed}:{name}"))


# -- the property ----------------------------------------------------------------------------------


def _unexpected(action: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Run ``action(*args)``; a TensilekitError is an acceptable outcome, anything else is reported."""
    try:
        return action(*args), None
    except TensilekitError:
        return None, None
    except Exception as error:  # noqa: BLE001 - the point of the test
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return None, f"{type(error).__name__}: {str(error)[:160]} ({Path(frame.filename).name}:{frame.lineno})"


def _write_again(model: Any) -> Any:
    if isinstance(model, MasterLibrary):
        return dumps_master(model, "yaml"), dumps_master(model, "msgpack")
    return dumps_logic(model)


# pydantic warns (instead of raising) when it serialises a value a model should never have held:
# that is invalid input accepted on load, so it counts as a failure here.
@pytest.mark.filterwarnings("error::UserWarning")
@pytest.mark.parametrize("seed", range(ROUNDS))
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_damaged_input_raises_only_tensilekit_errors(
    samples: list[Sample], kind: str, seed: int, tmp_path: Path
) -> None:
    problems: list[str] = []
    for number, (name, data) in enumerate(samples):
        mutated = mutate(kind, data, seed, name)
        model, problem = _unexpected(tensilekit.loads, mutated, name)
        if problem is None and model is not None:
            _, problem = _unexpected(_write_again, model)
            problem = problem and f"loaded, but writing it back failed: {problem}"
        if problem is None:
            path = tmp_path / f"case{number}{'.dat' if _is_binary(mutated) else '.yaml'}"
            path.write_bytes(mutated)
            _, problem = _unexpected(validate_file, path)
            problem = problem and f"validate_file: {problem}"
        if problem:
            problems.append(f"{name} [mutate({kind!r}, data, {seed}, name)]: {problem}")
    assert not problems, "\n".join(problems)

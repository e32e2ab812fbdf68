"""Hostile-input fuzzing of the API and the commands (issue 17), shared by the CI test
(tests/unit/io/test_fuzz_commands.py) and the long run (bench/fuzz.py).

Seeds are the project's fixtures and the smallest corpus files of each input kind (logic files,
master libraries as YAML / msgpack / gzip, workloads, query files). Each case mutates one seed,
seeded and deterministic: bytes (truncate, flip, insert, delete or repeat a line, damage gzip) or
structure (decode, replace a random node with a hostile value, such as the reproducers of issue 17,
re-encode). Each case is then read through the API (only :class:`TensilekitError` may come out)
and run through commands in-process (click's CliRunner): exit 70, an escaping exception, or a
run over the time limit is a failure; every other exit is an outcome.
"""

from __future__ import annotations

import contextlib
import gzip
import random
import shutil
import signal
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import yaml

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SAMPLE_MASTER = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"
SAMPLE_WORKLOAD = FIXTURES / "logs" / "coverage_sgemm_mask64.log"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Values that broke (or could break) code downstream of the loaders: issue 17's buckets and kin.
HOSTILE: list[Any] = [
    -3, 0, -1, 1, 2**70, 10**12, float("nan"), float("inf"), -0.5, "2", "", [4], [], {"x": 1}, {}, None,
    True, "../../../../etc/passwd", "/etc/passwd", "TensileLibrary_lazy_gfx90a", "x" * 5000,
    [0, 3, 1000000000000], [[[[[[[[1]]]]]]]], {"type": "Placeholder", "value": "../x"}, 7,
]  # fmt: skip


def find_corpus() -> Path | None:
    """The AMD corpus as tests/conftest.py finds it ($TENSILEKIT_CORPUS, ../shared/corpus), or None:
    without it the fuzz runs on the fixtures alone."""
    import os

    for candidate in (os.environ.get("TENSILEKIT_CORPUS"), FIXTURES.parent.parent / "shared" / "corpus"):
        if candidate and (Path(candidate) / "logic").is_dir():
            return Path(candidate)
    return None


@dataclass(frozen=True)
class Seed:
    kind: str  # logic | master | workload | queries
    name: str  # file name to write the case under (suffix matters: .dat, .gz, .log, .csv ...)
    data: bytes


def seeds(corpus: Path | None, per_folder: int = 3) -> list[Seed]:
    """Fixtures of every input kind, plus the smallest corpus files (when the corpus is present)."""
    found: list[Seed] = []
    for path in sorted((FIXTURES / "logic").glob("*.yaml")):
        found.append(Seed("logic", path.name, path.read_bytes()))
    master = SAMPLE_MASTER.read_bytes()
    found.append(Seed("master", "TensileLibrary_gfx90a.yaml", master))
    found.append(Seed("master", "TensileLibrary_gfx90a.dat", msgpack.packb(yaml.load(master, Loader=_Loader))))
    found.append(Seed("master", "TensileLibrary_gfx90a.yaml.gz", gzip.compress(master, mtime=0)))
    for path in sorted((FIXTURES / "logs").iterdir()):
        if path.is_file():
            found.append(Seed("workload", path.name, path.read_bytes()))
    found.append(Seed("queries", "queries.txt", b"128 128 1 128\n4096x4096x1x4096\n1024,1024,1,1024\n"))
    for path in sorted((FIXTURES / "invalid").iterdir()):
        if path.suffix in (".yaml", ".dat", ".gz", ".zlib"):
            kind = "master" if path.name.startswith(("master", "msgpack")) else "logic"
            found.append(Seed(kind, path.name, path.read_bytes()))
    if corpus is not None:
        for folder in ("logic/hipblaslt", "logic/rocblas", "logic/tensile"):
            files = sorted((corpus / folder).rglob("*.yaml"), key=lambda p: (p.stat().st_size, p.as_posix()))
            found.extend(Seed("logic", p.name, p.read_bytes()) for p in files[:per_folder])
        masters = sorted(
            (p for p in (corpus / "masters").glob("*") if p.suffix in (".yaml", ".dat")),
            key=lambda p: (p.stat().st_size, p.as_posix()),
        )
        found.extend(Seed("master", p.name, p.read_bytes()) for p in masters[: 2 * per_folder])
        selects = sorted((corpus / "select").glob("*.jsonl"), key=lambda p: p.stat().st_size)[:1]
        for path in selects:
            head = b"".join(path.read_bytes().splitlines(keepends=True)[:20])
            found.append(Seed("queries", "queries.jsonl", head))
    return found


# -- mutations --------------------------------------------------------------------------------------


def _gunzip(data: bytes) -> bytes:
    try:
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    except (OSError, EOFError, zlib.error):  # a damaged seed (fixtures/invalid): its bytes as they are
        return data


def _byte_mutation(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    raw = _gunzip(data)
    kind = rng.choice(["truncate", "flip", "insert", "delete-line", "repeat-line", "damage-gzip"])
    if kind == "truncate":
        out = raw[: rng.randrange(len(raw) + 1)]
    elif kind == "flip" and raw:
        buffer = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            buffer[rng.randrange(len(buffer))] = rng.randrange(256)
        out = bytes(buffer)
    elif kind == "insert":
        at = rng.randrange(len(raw) + 1)
        blob = rng.choice([b"\x00", b"\xff\xfe", b"[", b"{", b"- ", b": ", b"&a ", b"*a", b"\t", b"9" * 2000])
        out = raw[:at] + blob + raw[at:]
    elif kind in ("delete-line", "repeat-line"):
        lines = raw.splitlines(keepends=True) or [b""]
        number = rng.randrange(len(lines))
        lines[number : number + 1] = [] if kind == "delete-line" else [lines[number]] * rng.randint(2, 50)
        out = b"".join(lines)
    else:
        packed = gzip.compress(raw, mtime=0)
        cut = rng.randrange(10, max(11, len(packed)))
        return "damage-gzip", packed[:cut] + bytes([packed[cut % len(packed)] ^ 0xFF]) + packed[cut + 1 :]
    return kind, gzip.compress(out, mtime=0) if data[:2] == b"\x1f\x8b" else out


def _containers(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                yield from _containers(value, path + (key,))
    elif isinstance(node, list):
        for number, value in enumerate(node):
            if isinstance(value, (dict, list)):
                yield from _containers(value, path + (number,))


def _structural_mutation(data: bytes, name: str, rng: random.Random) -> tuple[str, bytes] | None:
    compressed = data[:2] == b"\x1f\x8b"
    raw = _gunzip(data)
    binary = name.endswith((".dat", ".dat.gz"))
    try:
        decoded = msgpack.unpackb(raw, strict_map_key=False) if binary else yaml.load(raw, Loader=_Loader)
    except Exception:  # noqa: BLE001 - a seed that is already damaged: mutate its bytes instead
        return None
    if not isinstance(decoded, (dict, list)):
        return None
    places = list(_containers(decoded))
    for _ in range(rng.randint(1, 3)):
        _, container = places[rng.randrange(len(places))]
        if not container:
            continue
        key = rng.choice(list(container)) if isinstance(container, dict) else rng.randrange(len(container))
        action = rng.random()
        if action < 0.8:
            container[key] = rng.choice(HOSTILE)
        elif action < 0.9 and isinstance(container, dict):
            del container[key]
        elif isinstance(container, dict):
            container[f"{key}x"] = container.pop(key)
    try:
        if binary:
            out = msgpack.packb(decoded, use_bin_type=True)
        else:
            out = yaml.dump(decoded, Dumper=_Dumper, default_flow_style=None, width=1 << 20).encode()
    except (OverflowError, ValueError, TypeError):
        return None
    return "replace-node", gzip.compress(out, mtime=0) if compressed else out


def mutate(seed: Seed, rng: random.Random) -> tuple[str, bytes]:
    if seed.kind in ("logic", "master") and rng.random() < 0.6:
        structural = _structural_mutation(seed.data, seed.name, rng)
        if structural is not None:
            return structural
    return _byte_mutation(seed.data, rng)


# -- running --------------------------------------------------------------------------------------


def commands(kind: str, *, slow: bool = False) -> list[list[str]]:
    """Argument templates per input kind: {f} the case file, {d} a scratch folder. ``slow`` adds
    the simulated tuning run (seconds per input: the long run only)."""
    master, workload = str(SAMPLE_MASTER), str(SAMPLE_WORKLOAD)
    library = [
        ["validate", "{f}"],
        ["info", "{f}"],
        ["lint", "{f}"],
        ["select", "-l", "{f}", "--arch", "gfx90a", "256", "256", "256"],
        ["diff", "{f}", "{f}"],
        ["coverage", "-l", "{f}", workload],
        ["plot", "selection", "-l", "{f}", "--points", "6", "-o", "{d}/selection.png"],
    ]
    if kind == "logic":
        return library + [
            ["build-master", "{f}", "-o", "{d}/m.yaml"],
            ["build-master", "--lazy", "{f}", "-o", "{d}/lazy"],
            ["merge", "{f}", "{f}", "{d}/merged.yaml"],
            ["prune", "{f}", "-o", "{d}/pruned.yaml"],
        ]
    if kind == "master":
        return library + [["convert", "{f}", "{d}/converted.dat"]]
    if kind == "workload":
        tune = ["tune", "{f}", "--arch", "gfx942", "--simulate", "--workdir", "{d}/run", "--mode", "ga"]
        tune += ["--population", "4", "--generations", "1"]
        return [["coverage", "-l", master, "{f}"]] + ([tune] if slow else [])
    return [["select", "-l", master, "--queries", "{f}"], ["diff", master, master, "--queries", "{f}"]]


class Hang(BaseException):
    """Raised by the alarm inside a run that exceeds the time limit (not an Exception: nothing
    in tensilekit catches it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Report:
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    cases: int = 0
    runs: int = 0

    def add(self, outcome: str, failure: str | None = None) -> None:
        self.outcomes[outcome] += 1
        self.runs += 1
        if failure is not None:
            self.failures.append(failure)


EXIT_NAMES = {0: "exit 0", 1: "exit 1 (findings)", 2: "exit 2 (usage)", 3: "exit 3 (bad input)", 4: "exit 4 (tool)"}


def _api(path: Path, kind: str) -> None:
    import tensilekit
    from tensilekit.inspect import validate_file
    from tensilekit.merge.files import load_queries

    if kind in ("logic", "master"):
        validate_file(path)
        tensilekit.load(path)
    elif kind == "queries":
        load_queries(path)


def run_case(
    seed: Seed,
    label: str,
    data: bytes,
    report: Report,
    *,
    command_choice: Callable[[list[list[str]]], list[list[str]]] = lambda all_commands: all_commands,
    limit: float = 10.0,
    slow: bool = False,
) -> None:
    """Write the case, read it through the API, then run the chosen commands; record outcomes."""
    from click.testing import CliRunner

    from tensilekit.cli.main import cli
    from tensilekit.errors import TensilekitError

    report.cases += 1
    folder = Path(tempfile.mkdtemp(prefix="tk-fuzz-"))
    try:
        path = folder / seed.name
        path.write_bytes(data)
        where = f"{seed.kind} {seed.name} [{label}]"
        start = time.monotonic()
        try:
            with time_limit(limit):
                _api(path, seed.kind)
            report.add("api ok")
        except TensilekitError:
            report.add("api TensilekitError")
        except Hang:
            report.add("api hang", f"{where}: API over {limit} s")
        except Exception:  # noqa: BLE001 - the point: nothing else may escape the API
            report.add("api other exception", f"{where}: API raised\n{traceback.format_exc(limit=-4)}")
        for template in command_choice(commands(seed.kind, slow=slow)):
            args = [part.format(f=path, d=folder) for part in template]
            allowed = 6 * limit if template[0] == "tune" else limit  # a (simulated) tuning run
            start = time.monotonic()
            try:
                with time_limit(allowed):
                    result = CliRunner().invoke(cli, args)
            except Hang:
                report.add("hang", f"{where}: {' '.join(template)} ran over {allowed} s")
                continue
            elapsed = time.monotonic() - start
            if result.exit_code == 70 or (
                result.exception is not None and not isinstance(result.exception, SystemExit)
            ):
                detail = result.output[-600:]
                if result.exc_info is not None and not isinstance(result.exception, SystemExit):
                    detail += "".join(traceback.format_exception(*result.exc_info)[-4:])
                report.add("exit 70 / crash", f"{where}: {' '.join(template)} -> {result.exit_code}\n{detail}")
            else:
                report.add(EXIT_NAMES.get(result.exit_code, f"exit {result.exit_code}"))
            if elapsed > allowed:
                report.add("slow", f"{where}: {' '.join(template)} took {elapsed:.1f} s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def commands_in_turn(per_case: int | None) -> Callable[[list[list[str]]], list[list[str]]]:
    """A command chooser for :func:`run_case`: ``per_case`` commands of each case's kind, taken
    in turn across cases (None: all of them)."""
    turn = 0

    def choose(all_commands: list[list[str]]) -> list[list[str]]:
        nonlocal turn
        if per_case is None or per_case >= len(all_commands):
            return all_commands
        chosen = [all_commands[(turn + n) % len(all_commands)] for n in range(per_case)]
        turn += per_case
        return chosen

    return choose


def fuzz(
    corpus: Path | None,
    *,
    seed: int,
    cases: int | None,
    seconds: float | None,
    per_case: int | None,
    slow: bool = False,
) -> Report:
    """``cases`` cases (or as many as fit in ``seconds``); ``per_case`` commands per case, taken in
    turn (None: every command of the kind)."""
    rng = random.Random(seed)
    pool = seeds(corpus)
    report = Report()
    choose = commands_in_turn(per_case)
    deadline = None if seconds is None else time.monotonic() + seconds

    number = 0
    while (cases is None or number < cases) and (deadline is None or time.monotonic() < deadline):
        case_seed = pool[rng.randrange(len(pool))]
        label, data = mutate(case_seed, random.Random(rng.getrandbits(32)))
        run_case(case_seed, label, data, report, command_choice=choose, slow=slow)
        number += 1
    return report


__all__ = ["HOSTILE", "Report", "Seed", "commands", "find_corpus", "fuzz", "mutate", "run_case", "seeds"]


# -- hostile readers (issue 23 items 7, 8, 9, 12): generated cases of each kind --------------------
# Self-contained: generators of zstd bombs and stray frames, indexed hybrids, deep nesting and
# duplicates, and fuzz_readers(), which runs them as fuzz() runs mutations (bench/fuzz.py --readers).

SAMPLE_LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def zstd_rle_frame(total: int, byte: bytes = b" ") -> bytes:
    """One zstd frame of RLE blocks (4 bytes -> 128 KiB each, RFC 8878): 2 GiB in 64 KiB."""
    block = 1 << 17
    count = max(1, total // block)
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic; no checksum or size; 128 KiB window
    for number in range(count):
        last = 1 if number == count - 1 else 0
        frame += ((block << 3) | (1 << 1) | last).to_bytes(3, "little") + byte
    return bytes(frame)


def _zstd(data: bytes) -> bytes:
    import zstandard

    return bytes(zstandard.ZstdCompressor(level=3).compress(data))


def gen_zstd(rng: random.Random) -> tuple[Seed, str, bytes]:
    """A ``.yaml.zst`` logic file: a bomb, a second frame, trailing bytes, or a cut frame."""
    logic = SAMPLE_LOGIC.read_bytes()
    kind = rng.choice(["bomb", "bomb-after-text", "second-frame", "trailing", "cut"])
    if kind == "bomb":
        data = zstd_rle_frame(rng.choice([64 << 20, 512 << 20, 2 << 30]), rng.choice([b" ", b"\x00", b"-"]))
    elif kind == "bomb-after-text":
        data = _zstd(logic) + zstd_rle_frame(1 << 30)
    elif kind == "second-frame":
        data = _zstd(logic) + _zstd(b"- appended: 1\n")
    elif kind == "trailing":
        data = _zstd(logic) + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    else:
        whole = _zstd(logic)
        data = whole[: rng.randrange(5, len(whole))]
    return Seed("logic", "logic.yaml.zst", data), f"zstd-{kind}", data


def _sample_master() -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(SAMPLE_MASTER.read_bytes(), Loader=_Loader)
    return data


def _indexed_root(master: dict[str, Any], version: Any, indices: list[int]) -> dict[str, Any]:
    table: list[int] = []
    blob = bytearray()
    for solution, index in zip(master["solutions"], indices, strict=True):
        packed = msgpack.packb({**solution, "index": index}, use_bin_type=True)
        table += [index, len(blob), len(packed)]
        blob += packed
    return {
        "format_version": version,
        "solutions_index": table,
        "solutions_blob": bytes(blob),
        "library": master["library"],
    }


def gen_indexed(rng: random.Random) -> tuple[Seed, str, bytes]:
    """An indexed master (``format_version``) of some hostile kind: a plain ``solutions`` list
    beside the blob, a non-integer version, indices the runtime refuses, zlib trailing bytes."""
    master = _sample_master()
    indices = [solution["index"] for solution in master["solutions"]]
    kind = rng.choice(["hybrid", "version", "indices", "zlib-trailing", "slice-mismatch"])
    version: Any = 2
    if kind == "version":
        version = rng.choice([2.0, True, "2", 3, -2, 2**64 - 1])
    elif kind == "indices":
        indices[rng.randrange(len(indices))] = rng.choice([-1, 2**31, 2**63, indices[0]])
    root = _indexed_root(master, version, indices)
    if kind == "hybrid":
        plain = [dict(solution) for solution in master["solutions"]]
        if rng.random() < 0.5:  # the list disagrees with the blob
            plain.reverse()
        root["solutions"] = plain
    elif kind == "slice-mismatch" and len(root["solutions_index"]) >= 6:
        root["solutions_index"][0], root["solutions_index"][3] = root["solutions_index"][3], root["solutions_index"][0]
    data = msgpack.packb(root, use_bin_type=True)
    name = "TensileLibrary_gfx90a.dat"
    if kind == "zlib-trailing" or rng.random() < 0.3:
        data = zlib.compress(data, 9) + (bytes(rng.randint(1, 32)) if kind == "zlib-trailing" else b"")
        name += ".zlib"
    return Seed("master", name, data), f"indexed-{kind}", data


def _nested(levels: int, leaf: Any = 1) -> Any:
    for _ in range(levels):
        leaf = [leaf] if levels % 2 else {"k": leaf}
    return leaf


def gen_deep(rng: random.Random) -> tuple[Seed, str, bytes]:
    """Nesting around the limit (150..1200 levels): in a master as YAML (brackets, indentation or
    both) or msgpack, in a logic file, or in a query line."""
    levels = rng.choice([150, 199, 201, 300, 495, 600, 1000, 1200])
    kind = rng.choice(["master-yaml-flow", "master-yaml-mixed", "master-msgpack", "logic-flow", "queries"])
    if kind == "queries":
        line = '{"m": ' + "[" * levels + "]" * levels + ', "n": 64, "k": 64}\n{"m": 64, "n": 64, "k": 64}\n'
        return Seed("queries", "queries.jsonl", line.encode()), f"deep-{kind}-{levels}", line.encode()
    if kind == "logic-flow":
        text = SAMPLE_LOGIC.read_text()
        deep = "[" * levels + "1" + "]" * levels
        data = text.replace(
            "- - AssertFree0ElementMultiple: 1", f"- - Deep: {deep}\n    AssertFree0ElementMultiple: 1", 1
        )
        return Seed("logic", SAMPLE_LOGIC.name, data.encode()), f"deep-{kind}-{levels}", data.encode()
    if kind == "master-msgpack":
        master = _sample_master()
        master["solutions"][rng.randrange(len(master["solutions"]))]["ideals"] = {"x": _nested(min(levels, 1000))}
        data = msgpack.packb(master, use_bin_type=True)
        return Seed("master", "TensileLibrary_gfx90a.dat", data), f"deep-{kind}-{levels}", data
    text = SAMPLE_MASTER.read_text()
    if kind == "master-yaml-flow":
        field = "  ideals: {x: " + "[" * levels + "1" + "]" * levels + "}\n"
    else:  # half the levels as indentation (one column each), half as brackets
        block = levels // 2
        field = "  ideals:\n" + "".join(" " * (3 + n) + f"k{n}:\n" for n in range(block))
        field += " " * (3 + block) + "v: " + "[" * (levels - block) + "1" + "]" * (levels - block) + "\n"
    data = text.replace("  ideals: {}\n", field, 1).encode()
    return Seed("master", "TensileLibrary_gfx90a.yaml", data), f"deep-{kind}-{levels}", data


def gen_duplicates(rng: random.Random) -> tuple[Seed, str, bytes]:
    """Duplicated keys: size rows of a logic file repeated (with other kernels), solution
    indices repeated in a master (YAML or msgpack)."""
    if rng.random() < 0.5:
        logic = yaml.load(SAMPLE_LOGIC.read_bytes(), Loader=_Loader)
        rows = logic[7]
        solutions = len(logic[5])
        for _ in range(rng.randint(1, 4)):
            size, (index, speed) = rows[rng.randrange(len(rows))]
            rows.insert(rng.randrange(len(rows) + 1), [list(size), [rng.randrange(solutions), speed * rng.random()]])
        data = yaml.dump(logic, Dumper=_Dumper, default_flow_style=None, width=1 << 20).encode()
        return Seed("logic", SAMPLE_LOGIC.name, data), "duplicate-size-rows", data
    master = _sample_master()
    solutions = master["solutions"]
    for _ in range(rng.randint(1, 3)):
        copy = dict(solutions[rng.randrange(len(solutions))])
        copy["name"] = copy.get("name", "") + "_DUP"
        solutions.insert(rng.randrange(len(solutions) + 1), copy)
    if rng.random() < 0.5:
        data = msgpack.packb(master, use_bin_type=True)
        return Seed("master", "TensileLibrary_gfx90a.dat", data), "duplicate-solution-index", data
    data = yaml.dump(master, Dumper=_Dumper, default_flow_style=None, width=1 << 20).encode()
    return Seed("master", "TensileLibrary_gfx90a.yaml", data), "duplicate-solution-index", data


READER_GENERATORS: dict[str, Callable[[random.Random], tuple[Seed, str, bytes]]] = {
    "zstd": gen_zstd,
    "indexed": gen_indexed,
    "deep": gen_deep,
    "duplicates": gen_duplicates,
}


def fuzz_readers(
    *, seed: int, cases: int | None, seconds: float | None, per_case: int | None, kinds: tuple[str, ...] = ()
) -> Report:
    """Generated hostile cases (``kinds`` of :data:`READER_GENERATORS`, all by default), taken
    in turn, each read through the API and run through ``per_case`` commands of its input kind
    in turn (None: all), as :func:`fuzz` runs its mutations."""
    rng = random.Random(seed)
    chosen = [READER_GENERATORS[kind] for kind in (kinds or tuple(READER_GENERATORS))]
    report = Report()
    choose = commands_in_turn(per_case)
    deadline = None if seconds is None else time.monotonic() + seconds

    number = 0
    while (cases is None or number < cases) and (deadline is None or time.monotonic() < deadline):
        case_seed, label, data = chosen[number % len(chosen)](random.Random(rng.getrandbits(32)))
        run_case(case_seed, label, data, report, command_choice=choose)
        number += 1
    return report


# -- huge integers and unwritable outputs (issue 23 items 10, 11, 13) ------------------------------
# Self-contained: generators of numbers out of their C++ range (sizes, batch, solution indices,
# thousands of digits, deep nesting) in every input kind, and runs of the writing commands on an
# output the system refuses (ENOSPC / EROFS / EACCES / EDQUOT injected as the OSError the kernel
# gives: tests may run as root, which ignores chmod). bench/fuzz.py --huge-and-unwritable runs it.

import errno as _errno  # noqa: E402
import json as _json  # noqa: E402
import os as _os  # noqa: E402
import re as _re  # noqa: E402
from unittest import mock as _mock  # noqa: E402

HUGE_INTEGERS: list[int] = [
    2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**63 + 1024, 2**64 - 1, 2**64 + 5, -(2**63) - 1, 10**30,
]  # fmt: skip
_NUMBER = _re.compile(rb"(?<![\w.])\d+(?![\w.])")
_SAMPLE_LOGIC = FIXTURES / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def _huge(rng: random.Random) -> bytes:
    if rng.random() < 0.1:
        return b"9" * rng.choice([1001, 4301, 5000])  # over the digits limit, over Python's str->int
    return str(rng.choice(HUGE_INTEGERS)).encode()


def _replace_a_number(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One integer token of ``data`` (on a random line that has one) replaced by a huge one."""
    lines = data.split(b"\n")
    candidates = [number for number, line in enumerate(lines) if _NUMBER.search(line)]
    if not candidates:
        return "no number", data
    number = rng.choice(candidates)
    matches = list(_NUMBER.finditer(lines[number]))
    match = rng.choice(matches)
    value = _huge(rng)
    lines[number] = lines[number][: match.start()] + value + lines[number][match.end() :]
    return f"huge number line {number + 1}: {value[:24].decode()}", b"\n".join(lines)


def _huge_queries(rng: random.Random) -> bytes:
    """select --queries lines: sizes, batch, leading dimensions, workspace out of range, a
    5 000-digit number, 100 000 nested brackets, among ordinary lines."""
    lines = []
    for number in range(rng.randint(17, 24)):  # over 16: the compiled path
        record: dict[str, Any] = {"id": f"q{number}", "m": 1024, "n": 1024, "k": 1024, "arch": "gfx90a"}
        roll = rng.random()
        if roll < 0.4:
            record[rng.choice(["m", "n", "k", "batch", "lda", "ldc", "stride_a", "workspace_size"])] = rng.choice(
                HUGE_INTEGERS
            )
            lines.append(_json.dumps(record))
        elif roll < 0.5:
            lines.append('{"id": "digits", "m": ' + "9" * 5000 + ', "n": 1, "k": 1}')
        elif roll < 0.55:
            lines.append("[" * 100_000 + "]" * 100_000)
        else:
            lines.append(_json.dumps(record))
    return ("\n".join(lines) + "\n").encode()


def huge_integer_case(pool: list[Seed], rng: random.Random) -> tuple[Seed, str, bytes]:
    """One case: a workload, master or logic seed with a huge number in it, or a query file."""
    roll = rng.random()
    if roll < 0.25:
        seed = Seed("queries", "queries.jsonl", b"")
        return seed, "huge queries", _huge_queries(rng)
    if roll < 0.45:  # a solution index of the sample master out of int
        text = SAMPLE_MASTER.read_bytes()
        value = _huge(rng)
        data = _re.sub(rb"index: 6066012\d\d", b"index: " + value, text, count=rng.choice([1, 0]))
        return Seed("master", "TensileLibrary_gfx90a.yaml", text), f"solution index {value[:24].decode()}", data
    kinds = ("workload",) if roll < 0.8 else ("logic", "master")
    choices = [seed for seed in pool if seed.kind in kinds and not seed.name.endswith((".gz", ".dat", ".zlib"))]
    seed = rng.choice(choices)
    label, data = _replace_a_number(seed.data, rng)
    return seed, label, data


# argument templates of the commands that write: {d} the scratch folder, {o} the output's folder
WRITING_COMMANDS: list[list[str]] = [
    ["convert", str(SAMPLE_MASTER), "{o}/converted.dat"],
    ["convert", str(SAMPLE_MASTER), "{o}/converted.yaml"],
    ["build-master", str(_SAMPLE_LOGIC), "-o", "{o}/master.yaml"],
    ["build-master", "--lazy", str(_SAMPLE_LOGIC), "-o", "{o}/lazy"],
    ["merge", str(_SAMPLE_LOGIC), str(_SAMPLE_LOGIC), "{o}/merged.yaml"],
    ["prune", str(_SAMPLE_LOGIC), "-o", "{o}/pruned.yaml"],
    ["coverage", "-l", str(SAMPLE_MASTER), str(SAMPLE_WORKLOAD), "-o", "{o}/coverage"],
]
SLOW_WRITING_COMMANDS: list[list[str]] = [
    ["tune", str(FIXTURES / "logs" / "llama3_8b_bf16_mask64.log"), "--arch", "gfx942", "--simulate", "--workdir",
     "{o}/run"],
]  # fmt: skip
REFUSALS = [_errno.ENOSPC, _errno.EROFS, _errno.EACCES, _errno.EDQUOT]
INJECTIONS = ["fsync", "create", "rename", "mkdir", "fsync-later"]


@contextlib.contextmanager
def refused_writes(where: str, code: int) -> Iterator[None]:
    """The system refuses writes the way ``where`` says (with ``code``) inside the block."""
    real_open, real_fsync, calls = _os.open, _os.fsync, Counter[str]()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, _os.strerror(code), *(args[:1] if args and isinstance(args[0], (str, Path)) else ()))

    def open_refusing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & _os.O_CREAT:
            raise OSError(code, _os.strerror(code), _os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def fsync_later(descriptor: int) -> None:
        calls["fsync"] += 1
        if calls["fsync"] > 2:
            raise OSError(code, _os.strerror(code))
        real_fsync(descriptor)

    patches = {
        "fsync": [_mock.patch.object(_os, "fsync", refuse)],
        "fsync-later": [_mock.patch.object(_os, "fsync", fsync_later)],
        "create": [_mock.patch.object(_os, "open", open_refusing)],
        "rename": [_mock.patch.object(_os, "replace", refuse), _mock.patch.object(_os, "rename", refuse)],
        "mkdir": [_mock.patch.object(_os, "mkdir", refuse)],
    }[where]
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        yield


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def run_unwritable_case(template: list[str], where: str, code: int, report: Report, *, limit: float = 60.0) -> None:
    """Run one writing command whose output the system refuses. Exit 4 naming the output, the old
    output unchanged and no temporary left; or exit 0 when the refusal never reached it (an fsync
    whose failure cannot lose data). Anything else is a failure."""
    from click.testing import CliRunner

    from tensilekit.cli.main import cli

    report.cases += 1
    folder = Path(tempfile.mkdtemp(prefix="tk-fuzz-out-"))
    try:
        out = folder / "out"
        out.mkdir()
        args = [part.format(d=folder, o=out) for part in template]
        target = next((Path(arg) for arg in args if arg.startswith(str(out))), out)
        if target.suffix in (".dat", ".yaml"):
            target.write_bytes(b"the old output\n")  # what a refused write must leave as it is
        before = _snapshot(folder)
        label = f"{' '.join(template[:2])} [{where} {_errno.errorcode.get(code, code)}]"
        try:
            with time_limit(limit), refused_writes(where, code):
                result = CliRunner().invoke(cli, args)
        except Hang:
            report.add("hang", f"{label}: ran over {limit} s")
            return
        leftovers = [str(path) for path in folder.rglob("*") if ".tmp" in path.name]
        if result.exit_code == 4:
            outcome, problem = "exit 4 (not writable)", None
            if "cannot write the output" not in result.output or "bug" in result.output:
                problem = f"{label}: exit 4 without the refusal's message:\n{result.output[-600:]}"
            elif template[0] != "tune" and _snapshot(folder) != before:
                problem = f"{label}: the old output changed although the write was refused"
        elif result.exit_code == 0:
            outcome, problem = "exit 0 (refusal not reached)", None
        else:
            outcome = "exit 70 / crash" if result.exit_code == 70 else f"exit {result.exit_code}"
            problem = f"{label}: exit {result.exit_code}\n{result.output[-600:]}"
            if result.exc_info is not None and not isinstance(result.exception, SystemExit):
                problem += "".join(traceback.format_exception(*result.exc_info)[-4:])
        if leftovers:
            problem = (problem + "\n" if problem else "") + f"{label}: temporaries left: {leftovers[:3]}"
        report.add(outcome, problem)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fuzz_huge_and_unwritable(
    corpus: Path | None, *, seed: int, cases: int | None, seconds: float | None, slow: bool = False
) -> Report:
    """Alternate huge-integer inputs (through the API and the commands of their kind, as
    :func:`fuzz`) and writing commands on a refused output; ``cases`` of each, or as many as fit
    in ``seconds``."""
    rng = random.Random(seed)
    pool = seeds(corpus)
    report = Report()
    writing = WRITING_COMMANDS + (SLOW_WRITING_COMMANDS if slow else [])
    deadline = None if seconds is None else time.monotonic() + seconds
    number = 0
    while (cases is None or number < cases) and (deadline is None or time.monotonic() < deadline):
        case_seed, label, data = huge_integer_case(pool, random.Random(rng.getrandbits(32)))
        run_case(case_seed, label, data, report, command_choice=lambda all_commands: [rng.choice(all_commands)])
        template = writing[number % len(writing)]
        where = INJECTIONS[(number // len(writing)) % len(INJECTIONS)]
        run_unwritable_case(template, where, rng.choice(REFUSALS), report)
        number += 1
    return report


__all__ += [
    "HUGE_INTEGERS",
    "INJECTIONS",
    "REFUSALS",
    "WRITING_COMMANDS",
    "fuzz_huge_and_unwritable",
    "huge_integer_case",
    "refused_writes",
    "run_unwritable_case",
]

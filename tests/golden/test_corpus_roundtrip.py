"""Golden round trips over the AMD corpus: every logic file and every master library.

Logic files (``logic/``, 250 files): the file loads; writing it back reproduces it byte for byte;
loading what was written gives the same data (``logic_to_data``); and writing again changes
nothing. Master libraries (``masters/`` incl. ``lazy/``, tensilelite's ``masters-hipblaslt/``, ``masterlib/`` incl. ``.gz``): the file
loads with every solution; YAML -> msgpack -> YAML keeps the content (``master_to_data``) and the
solution count; a ``.dat`` holds the same library as its ``.yaml`` twin; and YAML written by
TensileCreateLibrary is reproduced byte for byte.

``rocBLAS_Full`` (78 MB of YAML) is loaded once per format in a module-scoped fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tensilekit
from tensilekit.io.files import read_bytes
from tensilekit.io.logic_io import dumps_logic, logic_to_data
from tensilekit.io.master_io import decode, dumps_master, master_to_data
from tensilekit.model.library import MasterLibrary
from tensilekit.model.logic import LogicFile

pytestmark = pytest.mark.corpus

MASTER_SUFFIXES = (".yaml", ".dat", ".yaml.gz", ".dat.gz")
FULL = "masterlib/tensile/SolutionLibraries/rocBLAS_Full"
# Hand-written master YAML (Tensile test fixtures: comments, unsorted keys), not TensileCreateLibrary output.
HAND_WRITTEN_MASTERS = {
    "masterlib/tensile/sample_library.yaml",
    "masterlib/tensile/SolutionLibraries/SampleTensileKernels.yaml.gz",
}


def _corpus_at_collection() -> Path | None:
    # Parametrisation needs the file names before fixtures exist: the same search as
    # conftest.find_corpus. Tests still open files only through the ``corpus`` fixture.
    env = os.environ.get("TENSILEKIT_CORPUS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
    return next((candidate for candidate in candidates if (candidate / "logic").is_dir()), None)


def _relative_files(folders: tuple[str, ...], suffixes: tuple[str, ...], exclude: str = "") -> list[str]:
    root = _corpus_at_collection()
    if root is None:
        return ["<corpus missing>"]  # one case, so the ``corpus`` fixture decides: skip, or fail in CI
    found = []
    for folder in folders:
        for path in (root / folder).rglob("*"):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and path.name.endswith(suffixes) and not (exclude and relative.startswith(exclude)):
                found.append(relative)
    return sorted(found)


LOGIC_FILES = _relative_files(("logic",), (".yaml",))
MASTER_FILES = _relative_files(("masters", "masters-hipblaslt", "masterlib"), MASTER_SUFFIXES, exclude=FULL)
MASTER_PAIRS = sorted(
    {name.removesuffix(".gz").rsplit(".", 1)[0] for name in MASTER_FILES if name.endswith((".dat", ".dat.gz"))}
)


def first_difference(left: Any, right: Any, path: str = "") -> str | None:
    """Where two plain-data trees first differ (a YAML path), or None when ``left == right``.

    Used instead of ``assert left == right`` so a failure names the spot instead of making pytest
    diff megabytes of data. Like ``==``, it ignores key order (the byte-identical checks cover it).
    """
    if type(left) is not type(right):
        return f"{path or '<root>'}: {type(left).__name__} != {type(right).__name__}"
    if isinstance(left, dict):
        if left.keys() != right.keys():
            return f"{path or '<root>'}: keys {sorted(map(str, left.keys() ^ right.keys()))[:5]}"
        for key in left:
            found = first_difference(left[key], right[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list):
        for number, (a, b) in enumerate(zip(left, right, strict=False)):
            found = first_difference(a, b, f"{path}[{number}]")
            if found:
                return found
        return None if len(left) == len(right) else f"{path}: length {len(left)} != {len(right)}"
    if left != right and not (left != left and right != right):  # NaN == NaN here
        return f"{path}: {left!r:.80} != {right!r:.80}"
    return None


def first_text_difference(expected: str | bytes, actual: str | bytes) -> str | None:
    """The first differing line of two texts, or None when they are identical."""
    if isinstance(expected, bytes):
        expected = expected.decode("utf-8", "replace")
    if isinstance(actual, bytes):
        actual = actual.decode("utf-8", "replace")
    if expected == actual:
        return None
    old, new = expected.splitlines(keepends=True), actual.splitlines(keepends=True)
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number}: expected {a!r:.120}, got {b!r:.120}"
    return f"line {min(len(old), len(new)) + 1}: lengths differ ({len(old)} vs {len(new)} lines)"


def _corpus_file(corpus: Path, relative: str) -> Path:
    path = corpus / relative
    assert path.is_file(), f"{relative} vanished from the corpus"
    return path


# -- logic files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", LOGIC_FILES)
def test_logic_file_round_trip(corpus: Path, relative: str) -> None:
    path = _corpus_file(corpus, relative)
    text = read_bytes(path).decode("utf-8")

    logic = tensilekit.load_logic(path)
    dumped = dumps_logic(logic)
    assert (difference := first_text_difference(text, dumped)) is None, f"not byte-identical: {difference}"

    reloaded = tensilekit.loads(dumped, source=f"dump of {relative}")
    assert isinstance(reloaded, LogicFile)
    data = logic_to_data(logic)
    assert (difference := first_difference(data, logic_to_data(reloaded))) is None, difference
    assert len(reloaded.solutions) == len(logic.solutions)
    assert len(reloaded.table) == len(logic.table)

    again = dumps_logic(reloaded)
    assert (difference := first_text_difference(dumped, again)) is None, f"dump not idempotent: {difference}"


# -- master libraries ----------------------------------------------------------------------------


def _raw_solution_count(path: Path) -> int:
    decoded, _, _ = decode(read_bytes(path), str(path))
    return len(decoded["solutions"])


def check_master_round_trip(master: MasterLibrary, *, reread_yaml: bool = True) -> str:
    """YAML -> msgpack -> YAML keeps the content and solution count; returns the final YAML.

    ``reread_yaml=False`` leaves out reading the final YAML back, for a caller that checks it equal,
    byte for byte, to the file ``master`` was read from (then reading it back is that read again)."""
    data = master_to_data(master)
    via_msgpack = tensilekit.loads(dumps_master(master, "msgpack"), source="msgpack dump")
    assert isinstance(via_msgpack, MasterLibrary)
    assert (difference := first_difference(data, master_to_data(via_msgpack))) is None, f"msgpack: {difference}"
    yaml_text = dumps_master(via_msgpack, "yaml").decode("utf-8")
    if not reread_yaml:
        assert len(via_msgpack.solutions) == len(master.solutions)
        return yaml_text
    via_yaml = tensilekit.loads(yaml_text, source="yaml dump")
    assert isinstance(via_yaml, MasterLibrary)
    assert (difference := first_difference(data, master_to_data(via_yaml))) is None, f"yaml: {difference}"
    assert len(via_msgpack.solutions) == len(via_yaml.solutions) == len(master.solutions)
    return yaml_text


@pytest.mark.parametrize("relative", MASTER_FILES)
def test_master_round_trip(corpus: Path, relative: str) -> None:
    path = _corpus_file(corpus, relative)
    master = tensilekit.load(path)
    assert isinstance(master, MasterLibrary)
    assert len(master.solutions) == _raw_solution_count(path)

    yaml_text = check_master_round_trip(master)

    if ".yaml" in path.name and relative not in HAND_WRITTEN_MASTERS:
        difference = first_text_difference(read_bytes(path), yaml_text)
        assert difference is None, f"TensileCreateLibrary YAML not reproduced: {difference}"


@pytest.mark.parametrize("stem", MASTER_PAIRS)
def test_master_dat_equals_yaml(corpus: Path, stem: str) -> None:
    twins = [corpus / f"{stem}{suffix}" for suffix in MASTER_SUFFIXES]
    dat = next(path for path in twins if path.name.endswith((".dat", ".dat.gz")) and path.is_file())
    yaml_file = next((path for path in twins if ".yaml" in path.name and path.is_file()), None)
    if yaml_file is None:
        pytest.skip(f"{stem} has no YAML twin")
    from_dat, from_yaml = tensilekit.load(dat), tensilekit.load(yaml_file)
    assert isinstance(from_dat, MasterLibrary) and isinstance(from_yaml, MasterLibrary)
    assert (difference := first_difference(master_to_data(from_yaml), master_to_data(from_dat))) is None, difference


@pytest.mark.parametrize("relative", _relative_files(("masters", "masters-hipblaslt"), (".dat",)))
def test_generated_master_dat_is_reproduced_byte_for_byte(corpus: Path, relative: str) -> None:
    """The masters TensileCreateLibrary generated (corpus/masters, lazy ones included, and
    tensilelite's corpus/masters-hipblaslt): the ``.dat`` loaded and written again, and its YAML twin
    written as msgpack, are AMD's ``.dat`` byte for byte (map keys in its writer's object order, not
    sorted as in its YAML).

    One exception, tensilelite only: its ``ProblemMap`` keys are in the order its build met the
    operations, which the (sorted) YAML does not keep; there the YAML twin must hold the same data."""
    path = _corpus_file(corpus, relative)
    dat = path.read_bytes()
    from_yaml = tensilekit.load(path.with_suffix(".yaml"))
    from_dat = tensilekit.loads(dat, source=relative)
    assert isinstance(from_yaml, MasterLibrary) and isinstance(from_dat, MasterLibrary)
    assert dumps_master(from_dat, "msgpack") == dat
    if relative.startswith("masters-hipblaslt/"):
        from_yaml_data = decode(dumps_master(from_yaml, "msgpack"))[0]
        assert (difference := first_difference(decode(dat)[0], from_yaml_data)) is None, difference
    else:
        assert dumps_master(from_yaml, "msgpack") == dat


# -- rocBLAS_Full: 21 288 solutions, 78 MB of YAML; each format is loaded once -------------------


@pytest.fixture(scope="module")
def full_paths(corpus: Path) -> dict[str, Path]:
    paths = {kind: corpus / f"{FULL}.{kind}.gz" for kind in ("yaml", "dat")}
    for path in paths.values():
        assert path.is_file(), f"{path} missing from the corpus"
    return paths


@pytest.fixture(scope="module")
def full_from_yaml(full_paths: dict[str, Path]) -> Iterator[MasterLibrary]:
    master = tensilekit.load(full_paths["yaml"])
    assert isinstance(master, MasterLibrary)
    yield master


@pytest.fixture(scope="module")
def full_from_dat(full_paths: dict[str, Path]) -> Iterator[MasterLibrary]:
    master = tensilekit.load(full_paths["dat"])
    assert isinstance(master, MasterLibrary)
    yield master


def test_full_library_loads_every_solution(full_from_yaml: MasterLibrary, full_from_dat: MasterLibrary) -> None:
    assert len(full_from_yaml.solutions) == len(full_from_dat.solutions) == 21288


def test_full_library_dat_equals_yaml(full_from_yaml: MasterLibrary, full_from_dat: MasterLibrary) -> None:
    difference = first_difference(master_to_data(full_from_yaml), master_to_data(full_from_dat))
    assert difference is None, difference


def test_full_library_round_trip(full_paths: dict[str, Path], full_from_yaml: MasterLibrary) -> None:
    # the YAML written is compared with the file itself, byte for byte: reading it back would be
    # full_from_yaml's read of 78 MB again (CI time)
    yaml_text = check_master_round_trip(full_from_yaml, reread_yaml=False)
    difference = first_text_difference(read_bytes(full_paths["yaml"]), yaml_text)
    assert difference is None, f"TensileCreateLibrary YAML not reproduced: {difference}"

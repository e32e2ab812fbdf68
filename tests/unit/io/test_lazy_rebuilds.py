"""Issue 23 items 3-5: a lazy library is one set (master + shards + mapping), on disk and when read.

* A build owns its output folder's library files: rebuilding a folder in another ``--format``
  leaves nothing of the previous build (the runtime probes ``.dat.zlib`` before ``.dat``, so an old
  shard would answer); code objects and other files stay.
* ``diff`` of two lazy masters compares their content, which is their shards.
* A reader never combines a master of one build with shards of another: the folder is read
  through one generation, a mix is refused (``LibraryChanged``) and ``select`` reads again.

The logic files are small hand-made ones (``tests/unit/libbuild/logic_factory.py``): two builds of
one problem type whose kernels differ, so each answer says which build it came from.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from amd_build import written
from click.testing import CliRunner

import tensilekit
from tensilekit.api import build_master_files, load_for_selection
from tensilekit.cli.main import cli
from tensilekit.errors import LibraryChanged
from tensilekit.io.installed_library import InstalledLibrary
from tensilekit.io.master_io import dump_master_set

# the hand-made logic of tests/unit/libbuild (that folder is a package of its own under pytest's rootdir
# import mode, so it is loaded by path: no sys.path order makes it importable from here)
_spec = importlib.util.spec_from_file_location(
    "_logic_factory", Path(__file__).parents[1] / "libbuild" / "logic_factory.py"
)
assert _spec is not None and _spec.loader is not None
_factory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_factory)
NN_SGEMM_PROBLEM_TYPE, list_logic, solution = _factory.NN_SGEMM_PROBLEM_TYPE, _factory.list_logic, _factory.solution

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX folder swaps")

MASTER = "TensileLibrary_lazy_gfx90a"
SHARD = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
FORMATS = ("yaml", "msgpack", "zlib", "msgpack-indexed")
SUFFIX = {"yaml": ".yaml", "msgpack": ".dat", "zlib": ".dat.zlib", "msgpack-indexed": ".dat.zlib"}


def _logic(folder: Path, name: str, tile: int, *, sizes: tuple[int, ...] = (1024,)) -> Path:
    """One NN SGEMM logic file: kernel 0 (``MT<tile>``) for ``sizes``, kernel 1 (MT32) for 64."""
    solutions = [solution(0, MacroTile0=tile, MacroTile1=tile), solution(1, MacroTile0=32, MacroTile1=32)]
    table = [[[size, size, 1, size], [0, 100.0]] for size in sizes] + [[[64, 64, 1, 64], [1, 50.0]]]
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(list_logic(solutions, table)))
    return path


@pytest.fixture(scope="module")
def logic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logic")
    return {"old": _logic(folder, "old", 64), "new": _logic(folder, "new", 128)}


def _build(logic: Path, output: Path, fmt: str, *, lazy: bool = True) -> str:
    args = ["build-master", *(["--lazy"] if lazy else []), "--format", fmt, "-o", str(output), str(logic)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


def _select(library: Path, size: int = 1024) -> tuple[int, str]:
    """(exit code, kernel name or the error line) of one ``select``."""
    args = ["select", "-l", str(library), "--arch", "gfx90a", "--json", str(size), str(size), str(size)]
    result = CliRunner().invoke(cli, args)
    if result.exit_code != 0:
        return result.exit_code, result.output
    return 0, str(json.loads(result.stdout)["name"])


def _kernel(logic: Path, tmp_path: Path) -> str:
    fresh = tmp_path / f"fresh-{logic.stem}"
    _build(logic, fresh, "msgpack")
    code, kernel = _select(fresh)
    assert code == 0, kernel
    return kernel


# -- 3. a build owns the library files its architecture's earlier builds wrote (issue 31) --------


@pytest.mark.parametrize(("first", "second"), [(a, b) for a in FORMATS for b in FORMATS if a != b])
def test_rebuild_in_another_format_leaves_no_stale_library_files(
    logic: dict[str, Path], tmp_path: Path, first: str, second: str
) -> None:
    out = tmp_path / "lib"
    _build(logic["old"], out, first)
    (out / "TensileLibrary_gfx90a.co").write_bytes(b"code object")  # not a library file: stays
    _build(logic["new"], out, second)
    names = [path.name for path in written(out)]
    library_names = [name for name in names if not name.endswith(".co")]
    assert all(name.endswith(SUFFIX[second]) for name in library_names), names
    assert f"{MASTER}{SUFFIX[second]}" in names and f"{SHARD}{SUFFIX[second]}" in names
    assert "TensileLibrary_gfx90a.co" in names
    assert not [name for name in names if name.startswith(".")], names  # no temporaries left
    # select answers as a fresh build of the new logic does, through the folder and the master
    fresh = _kernel(logic["new"], tmp_path)
    assert _select(out) == (0, fresh)
    assert _select(out / f"{MASTER}{SUFFIX[second]}") == (0, fresh)
    # validate sees the one set: every placeholder file present, no stale catalog beside it
    result = CliRunner().invoke(cli, ["validate", str(out / f"{MASTER}{SUFFIX[second]}")])
    assert result.exit_code == 0, result.output


def test_rebuild_drops_shards_no_master_names_any_more(logic: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "lib"
    _build(_half_logic(logic["old"].parent), out, "zlib")  # its shard is HH, the next build's SS
    dropped = out / "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a.dat.zlib"
    assert dropped.is_file()
    theirs = out / "TensileLibrary_Type_DD_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a.dat.zlib"
    theirs.write_bytes(b"a file tensilekit did not write")
    _build(logic["new"], out, "zlib")
    assert not dropped.exists()  # our earlier build's, named by no master now
    assert theirs.read_bytes() == b"a file tensilekit did not write"  # never ours to remove


def test_single_file_rebuild_removes_the_other_catalog_spelling(logic: dict[str, Path], tmp_path: Path) -> None:
    # X.dat and X.dat.zlib are one catalog to the runtime, which reads X.dat.zlib first
    target = tmp_path / "TensileLibrary_gfx90a.dat"
    _build(logic["old"], target, "zlib", lazy=False)
    assert (tmp_path / "TensileLibrary_gfx90a.dat.zlib").is_file()
    output = _build(logic["new"], target, "msgpack", lazy=False)
    assert not (tmp_path / "TensileLibrary_gfx90a.dat.zlib").exists()
    assert "removed stale" in output
    assert _select(target) == (0, _kernel(logic["new"], tmp_path))


def test_flat_build_refuses_a_subtree_that_would_shadow_it(logic: dict[str, Path], tmp_path: Path) -> None:
    # the runtime loads <folder>/gfx90a/ when it holds a gfx90a master, not the folder's own
    out = tmp_path / "lib"
    out.mkdir()
    _build(logic["old"], out / "gfx90a", "msgpack")
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    result = CliRunner().invoke(cli, ["build-master", "--lazy", "-o", str(out), str(logic["new"])])
    assert result.exit_code == 3, result.output
    assert str(out / "gfx90a" / f"{MASTER}.dat") in result.output
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing written
    _build(logic["new"], out / "gfx90a", "zlib")  # into the subtree: the old set goes
    assert _select(out) == (0, _kernel(logic["new"], tmp_path))


def test_validate_warns_about_a_shadowed_catalog(logic: dict[str, Path], tmp_path: Path) -> None:
    # a folder another tool left with both spellings: the runtime reads X.dat.zlib, never X.dat
    out = tmp_path / "lib"
    _build(logic["old"], out, "zlib")
    stale = tmp_path / "stale"
    _build(logic["new"], stale, "msgpack")
    for path in stale.iterdir():
        (out / path.name).write_bytes(path.read_bytes())
    result = CliRunner().invoke(cli, ["validate", "--json", str(out / f"{MASTER}.dat.zlib")])
    assert result.exit_code == 0, result.output  # a warning: the runtime's view is consistent
    codes = [finding["code"] for record in json.loads(result.stdout) for finding in record["findings"]]
    assert codes.count("shadowed-catalog") == 2, result.output  # the master's and the shard's


# -- 4. a lazy master's content is its shards ----------------------------------------------------


@pytest.mark.parametrize("grid", [False, True])
def test_diff_of_lazy_masters_compares_their_shards(logic: dict[str, Path], tmp_path: Path, grid: bool) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _build(logic["old"], old, "msgpack")
    _build(logic["new"], new, "zlib")
    args = ["diff", "--exit-code", *(["--grid"] if grid else [])]
    result = CliRunner().invoke(cli, [*args, str(old / f"{MASTER}.dat"), str(new / f"{MASTER}.dat.zlib")])
    assert result.exit_code == 1, result.output
    assert "no differences" not in result.output
    assert "MT128x128" in result.output and "MT64x64" in result.output
    # the same logic, lazy and not: no difference (a lazy master equals its non-lazy build)
    flat = tmp_path / "TensileLibrary_gfx90a.dat"
    _build(logic["old"], flat, "msgpack", lazy=False)
    result = CliRunner().invoke(cli, [*args, str(old / f"{MASTER}.dat"), str(flat)])
    assert result.exit_code == 0, result.output
    assert "no differences" in result.output


def test_diff_of_lazy_masters_with_only_a_shard_changed(logic: dict[str, Path], tmp_path: Path) -> None:
    # the masters are byte-identical; only the shard's table differs (another size)
    folder = tmp_path / "logic"
    folder.mkdir()
    more = _logic(folder, "more", 64, sizes=(1024, 2048))
    old, new = tmp_path / "old", tmp_path / "new"
    _build(logic["old"], old, "yaml")
    _build(more, new, "yaml")
    assert (old / f"{MASTER}.yaml").read_bytes() == (new / f"{MASTER}.yaml").read_bytes()
    result = CliRunner().invoke(cli, ["diff", "--exit-code", str(old / f"{MASTER}.yaml"), str(new / f"{MASTER}.yaml")])
    assert result.exit_code == 1, result.output
    assert "2048" in result.output


# -- 5. a reader never sees a mix of two builds -------------------------------------------------


def _swap_in(logic: Path, out: Path, fmt: str = "msgpack") -> None:
    dump_master_set(build_master_files([logic], lazy=True), out, fmt)


def test_loader_refuses_a_shard_of_another_build(logic: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "lib"
    _build(logic["old"], out, "msgpack")
    for source in (out / f"{MASTER}.dat", out):
        library, loader = load_for_selection(source)
        assert loader is not None
        _swap_in(logic["new"], out)  # the old master is read; the folder is rebuilt before the shard
        with pytest.raises(LibraryChanged) as caught:
            loader(SHARD)
        assert caught.value.exit_code == 3 and caught.value.location is not None
        _swap_in(logic["old"], out)
    installed = InstalledLibrary(out)
    _swap_in(logic["new"], out)
    with pytest.raises(LibraryChanged):
        installed.materialize_all()


def _half_logic(folder: Path) -> Path:
    """A build of another problem type (HH): its shard has another name than the SS one."""
    problem_type = copy.deepcopy(NN_SGEMM_PROBLEM_TYPE)
    problem_type.update(DataType=4, DestDataType=4, ComputeDataType=4)
    data = list_logic([solution(0, ProblemType=problem_type)], [[[1024, 1024, 1, 1024], [0, 100.0]]])
    data[4] = problem_type
    path = folder / "half.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _outcome(library: Path) -> tuple[int, str]:
    """``_select`` with a no-kernel answer reduced to its verdict (the rest names paths)."""
    code, said = _select(library)
    return (code, "no kernel") if code == 1 and "no kernel" in said else (code, said)


@pytest.mark.parametrize("through", ["folder", "master"])
def test_select_across_a_rebuild_reads_one_build(
    logic: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """The rebuild lands between the master and the shard read: select reads again and answers
    as the build now in the folder does (here: no kernel, exit 1), never from the old master
    with the new shards (main: "placeholder file ... does not exist", a mix)."""
    from tensilekit.io import master_io

    half = _half_logic(tmp_path)
    out = tmp_path / "lib"
    _build(logic["old"], out, "msgpack")
    fresh = tmp_path / "fresh"
    _build(half, fresh, "msgpack")
    expected = _outcome(fresh)
    real = master_io.load_placeholder
    rebuilt: list[bool] = []

    def rebuild_first(*args: Any, **kwargs: Any) -> Any:
        if not rebuilt:
            rebuilt.append(True)
            _swap_in(half, out)
        return real(*args, **kwargs)

    monkeypatch.setattr(master_io, "load_placeholder", rebuild_first)
    monkeypatch.setattr("tensilekit.api.load_placeholder", rebuild_first)
    assert _outcome(out if through == "folder" else out / f"{MASTER}.dat") == expected
    assert rebuilt


def test_validate_across_a_rebuild(logic: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is rebuilt (another problem type) after the master was read: no finding about
    the new build's files is charged to the old master (main: "placeholder file … does not
    exist", exit 1); validate stops with LibraryChanged (exit 3), located at the folder."""
    from tensilekit.io import master_io

    half = _half_logic(logic["old"].parent)
    out = tmp_path / "lib"
    _build(logic["old"], out, "msgpack")
    rebuilt: list[bool] = []

    def rebuilding(real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not rebuilt:
                rebuilt.append(True)
                _swap_in(half, out)
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(master_io, "placeholder_problems", rebuilding(master_io.placeholder_problems))
    result = CliRunner().invoke(cli, ["validate", str(out / f"{MASTER}.dat")])
    assert rebuilt
    assert result.exit_code == 3, result.output
    assert "rewritten" in result.output and str(out) in result.output


#: The rebuilds a writer cycles through: other kernels, another problem type (another shard
#: name), every format the runtime reads as ``X.dat`` (the master path the reader names).
ROTATION = [("new", "zlib"), ("half", "msgpack"), ("old", "msgpack-indexed"), ("half", "zlib"), ("old", "msgpack")]

_WRITER = """
import sys, time
from pathlib import Path
from tensilekit.api import build_master_files
from tensilekit.io.master_io import dump_master_set

out, stop, rotation = Path(sys.argv[1]), Path(sys.argv[2]), [item.split(":") for item in sys.argv[4:]]
sets = {name: build_master_files([Path(sys.argv[3]) / (name + ".yaml")], lazy=True) for name, _ in rotation}
rebuilds, deadline = 0, time.monotonic() + 60
while not stop.exists() and time.monotonic() < deadline:
    for name, fmt in rotation:
        dump_master_set(sets[name], out, fmt)
        rebuilds += 1
print(rebuilds)
"""


@pytest.mark.parametrize("writer", ["thread", "process"])
def test_concurrent_rebuilds_never_answer_from_a_mix(logic: dict[str, Path], tmp_path: Path, writer: str) -> None:
    """A thread or another process rebuilds the folder in a loop (:data:`ROTATION`) while select
    reads it, through the folder and through the master: each answer is one build's, or a clean
    LibraryChanged error (exit 3); never an answer from a mix, never exit 70. Bounded in time."""
    half = _half_logic(logic["old"].parent)
    out = tmp_path / "lib"
    _build(logic["old"], out, "msgpack")
    answers = {(0, _kernel(logic["old"], tmp_path)), (0, _kernel(logic["new"], tmp_path))}
    fresh = tmp_path / "fresh-half"
    _build(half, fresh, "msgpack")
    answers.add(_outcome(fresh))  # the HH build has no kernel for this SGEMM: exit 1, said so
    stop = threading.Event()
    rebuilds = 0
    failures: list[BaseException] = []
    stop_file = tmp_path / "stop"
    process: subprocess.Popen[str] | None = None

    def rebuild() -> None:
        nonlocal rebuilds
        sets = {name: build_master_files([path], lazy=True) for name, path in {**logic, "half": half}.items()}
        try:
            while not stop.is_set():
                for name, fmt in ROTATION:
                    dump_master_set(sets[name], out, fmt)
                    rebuilds += 1
        except BaseException as error:  # noqa: BLE001 - reported by the test
            failures.append(error)

    thread = threading.Thread(target=rebuild, daemon=True)
    if writer == "thread":
        thread.start()
    else:
        package_root = str(Path(tensilekit.__file__).resolve().parents[1])
        argv = [sys.executable, "-c", _WRITER, str(out), str(stop_file), str(logic["old"].parent)]
        process = subprocess.Popen(
            [*argv, *(f"{name}:{fmt}" for name, fmt in ROTATION)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": package_root},
        )
        time.sleep(1.0)  # its imports and builds; the reads below overlap its rebuilds
    outcomes: list[tuple[int, str]] = []
    deadline = time.monotonic() + 6
    try:
        while time.monotonic() < deadline:
            outcomes.append(_outcome(out))
            outcomes.append(_outcome(out / f"{MASTER}.dat"))
    finally:
        stop.set()
        stop_file.touch()
        if process is not None:
            stdout, _ = process.communicate(timeout=60)
            assert process.returncode == 0
            rebuilds = int(stdout)
        else:
            thread.join(timeout=30)
    assert not failures, failures
    assert rebuilds > len(ROTATION) and len(outcomes) > 4
    for code, said in outcomes:
        assert (code, said) in answers or (code == 3 and "rewritten" in said), (code, said)
    # one whole set is left, the last one written: no temporaries, nothing of an earlier build
    last = ROTATION[(rebuilds - 1) % len(ROTATION)][1]
    names = [path.name for path in written(out)]
    assert len(names) == 2 and all(name.endswith(SUFFIX[last]) for name in names), names

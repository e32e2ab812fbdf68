"""Issue 17: all-or-nothing writes, killed deterministically at every injection point of every writer.

Each writer runs as ``python -m tensilekit ...`` with ``TENSILEKIT_KILL_AT=<point>[#n]``, which makes
the process SIGKILL itself there (``io.atomic.checkpoint``). After the kill the output is exactly
the old state or exactly the new one (issue 31: for a folder, the set of files the command writes,
once a commit the killed writer left is completed as the next tensilekit reader or writer of the
folder does), nothing else appears but our hidden ``.NAME.<pid>.<random>.tmp`` temporaries, and
the next uninterrupted run removes those and writes the new state. Plus: the umask is never changed, new files get the umask's mode,
replaced files keep theirs, and a symlinked output is written through.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io import atomic
from tensilekit.io.atomic import file_set, write_text_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
LOGIC = sorted((FIXTURES / "logic").glob("sample_*.yaml"))
MASTER = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"
PROJECT = Path(__file__).resolve().parents[3]

Snapshot = dict[str, bytes]


def snapshot(folder: Path) -> Snapshot:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@dataclass
class Scenario:
    name: str
    prepare: Callable[[Path], None]  # fills <root>/ with inputs and the old output
    args: Callable[[Path], list[str]]  # the command, given <root>
    output: str  # what the writer replaces, relative to <root> (a file or a folder)
    points: list[str]


def _raise_efficiencies(text: str) -> str:
    return re.sub(r"(\n    - \[\d+, )([0-9.]+)\]", lambda m: f"{m.group(1)}{float(m.group(2)) * 2 + 1:.1f}]", text)


def _prepare_merge(root: Path) -> None:
    (root / "out").mkdir()
    (root / "incremental").mkdir()
    for path in LOGIC:
        (root / "out" / path.name).write_bytes(path.read_bytes())  # in place: OUTPUT == ORIGINAL
        (root / "incremental" / path.name).write_text(_raise_efficiencies(path.read_text()))
    (root / "out" / "notes.txt").write_text("not a logic file: carried over untouched\n")


def _prepare_prune(root: Path) -> None:
    import copy

    import yaml

    from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml

    (root / "out").mkdir()
    for path in LOGIC:  # a duplicated kernel in each file: prune rewrites both
        data = yaml.safe_load(path.read_text())
        twin = copy.deepcopy(data[5][0])
        twin["SolutionIndex"] = len(data[5])
        data[5].append(twin)
        (root / "out" / path.name).write_text(dump_yaml(data, AMD_LOGIC_STYLE))


def _prepare_lazy(root: Path) -> None:
    result = CliRunner().invoke(cli, ["build-master", "--lazy", str(LOGIC[1]), "-o", str(root / "out")])
    assert result.exit_code == 0, result.output


def _prepare_convert(root: Path) -> None:
    (root / "out").mkdir()
    (root / "out" / "TensileLibrary.dat").write_bytes(b"an older library\n")


SCENARIOS = [
    Scenario(
        "merge-folder-in-place",
        _prepare_merge,
        lambda root: [
            "merge",
            "--force-merge",
            "true",
            str(root / "out"),
            str(root / "incremental"),
            str(root / "out"),
        ],
        "out",
        [
            "stage-created",
            "temp-created#2",
            "temp-written#2",
            "stage-written",
            "set-committing",
            "set-renamed",
            "replaced",
        ],
    ),
    Scenario(
        "prune-folder-in-place",
        _prepare_prune,
        lambda root: ["prune", str(root / "out")],
        "out",
        ["stage-created", "temp-written#1", "stage-written", "set-renamed"],
    ),
    Scenario(
        "build-master-lazy",
        _prepare_lazy,
        lambda root: ["build-master", "--lazy", str(LOGIC[0]), "-o", str(root / "out")],
        "out",
        ["stage-created", "temp-created#1", "temp-written#2", "stage-written", "set-committing", "set-renamed#2"],
    ),
    Scenario(
        "convert-file",
        _prepare_convert,
        lambda root: ["convert", str(MASTER), str(root / "out" / "TensileLibrary.dat")],
        "out/TensileLibrary.dat",
        ["temp-created", "temp-written", "renamed"],
    ),
]


def _run(args: list[str], kill_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TENSILE_", "HIPBLASLT_"))}
    env["PYTHONPATH"] = str(PROJECT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TENSILEKIT_KILL_AT", None)
    if kill_at is not None:
        env["TENSILEKIT_KILL_AT"] = kill_at
    return subprocess.run(
        [sys.executable, "-m", "tensilekit", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _state(root: Path, output: str) -> Snapshot:
    """What a reader of the output sees: a folder's files without our temporaries (hidden
    ``.tmp`` names no reader opens), once a commit a killed writer left is completed, as the next
    tensilekit reader or writer of the folder does (``atomic.recover``)."""
    target = root / output
    if target.is_dir():
        atomic.recover(target)
        return {name: data for name, data in snapshot(target).items() if not _temporary(name)}
    return {output: target.read_bytes()} if target.exists() else {}


def _temporary(relative: str) -> bool:
    return any(part.startswith(".") and part.endswith(".tmp") for part in Path(relative).parts)


def _ours_left(root: Path, output: str) -> list[str]:
    """Our temporaries beside the output (a file) or in it (a folder's staging folder)."""
    target = root / output
    folder = target if target.is_dir() else target.parent
    return sorted(path.name for path in folder.iterdir() if path.name.startswith(".") and path.name.endswith(".tmp"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_killed_writer_leaves_old_or_new(tmp_path: Path, scenario: Scenario) -> None:
    pristine = tmp_path / "pristine"
    pristine.mkdir()
    scenario.prepare(pristine)
    old = _state(pristine, scenario.output)

    finished = tmp_path / "finished"
    shutil.copytree(pristine, finished, symlinks=True)
    result = CliRunner().invoke(cli, scenario.args(finished))
    assert result.exit_code == 0, result.output
    new = _state(finished, scenario.output)
    assert new != old

    outcomes = []
    for number, point in enumerate(scenario.points):
        root = tmp_path / f"kill{number}"
        shutil.copytree(pristine, root, symlinks=True)
        killed = _run(scenario.args(root), point)
        assert killed.returncode == -9, (point, killed.returncode, killed.stderr[-500:])  # the point was reached
        state = _state(root, scenario.output)
        assert state in (old, new), f"{scenario.name}: killed at {point}: neither the old nor the new output"
        outcomes.append("old" if state == old else "new")
        assert all(name.endswith(".tmp") for name in _ours_left(root, scenario.output))
        # the next run cleans up and completes
        rerun = CliRunner().invoke(cli, scenario.args(root))
        assert rerun.exit_code == 0, rerun.output
        assert _state(root, scenario.output) == new
        assert _ours_left(root, scenario.output) == [], point
    assert "old" in outcomes and "new" in outcomes, outcomes


def test_lazy_master_appears_after_its_placeholders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The set is renamed in placeholders first, the lazy master (the file the runtime opens
    first) last; a file already in the folder is left alone."""
    renamed: list[str] = []
    real_replace = os.replace

    def recording_replace(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
        if Path(destination).parent == tmp_path / "out" and not Path(destination).name.startswith("."):
            renamed.append(Path(destination).name)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", recording_replace)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.dat").write_bytes(b"old")
    result = CliRunner().invoke(cli, ["build-master", "--lazy", str(LOGIC[0]), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert renamed[-1].startswith("TensileLibrary_lazy") and len(renamed) == 2, renamed
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted([*renamed, "old.dat", atomic.MANIFEST])
    assert (tmp_path / "out" / "old.dat").read_bytes() == b"old"
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]


def test_umask_is_never_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(mask: int) -> int:
        raise AssertionError("os.umask called: other threads may be creating files")

    monkeypatch.setattr(os, "umask", forbidden)
    write_text_atomic(tmp_path / "a.yaml", "x\n")
    with file_set(tmp_path / "set") as staging:
        (staging / "b.yaml").write_text("y\n")


def test_modes_follow_the_umask_or_the_replaced_file(tmp_path: Path) -> None:
    mask = os.umask(0o027)
    try:
        write_text_atomic(tmp_path / "new.yaml", "x\n")
        existing = tmp_path / "existing.yaml"
        existing.write_text("old\n")
        existing.chmod(0o640)
        write_text_atomic(existing, "new\n")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == 0o640
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640 and existing.read_text() == "new\n"


def test_symlinked_output_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real" / "TensileLibrary.yaml"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "TensileLibrary.yaml"
    link.symlink_to(real)
    result = CliRunner().invoke(cli, ["convert", str(MASTER), str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes().startswith(b"---") and real.read_bytes() == link.read_bytes()

    folder = tmp_path / "real-out"
    folder.mkdir()
    linked_folder = tmp_path / "out"
    linked_folder.symlink_to(folder)
    result = CliRunner().invoke(cli, ["build-master", "--lazy", str(LOGIC[0]), "-o", str(linked_folder)])
    assert result.exit_code == 0, result.output
    assert linked_folder.is_symlink() and len([path for path in folder.iterdir() if path.name[0] != "."]) == 2


def test_leftovers_of_a_live_writer_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "x.yaml"
    mine = tmp_path / f".x.yaml.{os.getpid()}.abcd0123.tmp"  # a writer that is still running (this one)
    mine.write_text("partial")
    dead = tmp_path / ".x.yaml.999999999.abcd0123.tmp"  # no such process
    dead.write_text("partial")
    unrelated = tmp_path / ".x.yaml.notes.tmp"
    unrelated.write_text("not ours")
    write_text_atomic(target, "x\n")
    assert mine.exists() and not dead.exists() and unrelated.exists()

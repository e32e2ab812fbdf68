"""SIGKILL a merge mid-write, many times: the output set is all old or all new, inputs never change.

The merge runs in a subprocess, alternately with OUTPUT == ORIGINAL (the in-place update, the
hardest case) and with a separate output directory that already holds an older result. To make
kills land inside the write window, the child writes through the real ``atomic_open`` in small
chunks with short pauses and announces each file before writing it; the parent waits for the
announcement of a randomly chosen file and kills at a random point of its write (or just
before / after it). ``TENSILEKIT_KILL_ROUNDS`` raises the number of rounds (default 10).

The merge writes into a hidden staging folder inside OUTPUT and renames its files in at the end
(issue 31, ``io.atomic.file_set``), so a kill leaves every file old or, once a commit it
interrupted is completed (as the next tensilekit reader or writer of the folder does,
``atomic.recover``), every file new; what it left behind (the hidden
``.tensilekit-set.<pid>.<random>.tmp`` staging folder) is removed by the next merge there.
Deterministic kills at each injection point of every writer: tests/unit/io/test_atomic_writes.py.
"""

from __future__ import annotations

import copy
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from merge_factory import logic_data, solution

from tensilekit.io import atomic
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml
from tensilekit.merge import MergePolicy, merge_directories

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

NAMES = ("a_Cijk.yaml", "b_Cijk.yaml")

CHILD = textwrap.dedent(
    """
    import sys, time
    import tensilekit.merge.files as files
    from tensilekit.io.atomic import atomic_open
    from tensilekit.merge import MergePolicy

    def slow_write(path, text):
        print("write", path, -(-len(text) // 32768), flush=True)
        with atomic_open(path, "w") as handle:
            for start in range(0, len(text), 32768):
                handle.write(text[start:start + 32768])
                time.sleep(0.002)

    files.write_text_atomic = slow_write
    original, incremental, output = sys.argv[1:4]
    print("ready", flush=True)
    files.merge_directories(original, incremental, output, MergePolicy(force_merge=True))
    """
)


def _big_inputs(folder: Path) -> tuple[Path, Path]:
    rng = random.Random(7)
    padding = {f"Extra{i:03d}": i for i in range(120)}
    kernels = [solution(16 * (1 + i % 8), 16 * (1 + i // 8 % 8), DepthU=8 + i, **padding) for i in range(60)]
    sizes = [[rng.randrange(1, 8192), rng.randrange(1, 8192), 1, rng.randrange(1, 8192)] for _ in range(1500)]
    original, incremental = folder / "original", folder / "incremental"
    original.mkdir()
    incremental.mkdir()
    for name in NAMES:
        rows = [(size, rng.randrange(len(kernels)), round(rng.uniform(1, 90), 3)) for size in sizes]
        (original / name).write_text(dump_yaml(logic_data(kernels, rows), AMD_LOGIC_STYLE))
        newer = copy.deepcopy(kernels[:30])
        for kernel in newer:
            kernel["DepthU"] += 100
        rows = [(size, rng.randrange(len(newer)), 95.0) for size in sizes[::3]]
        (incremental / name).write_text(dump_yaml(logic_data(newer, rows), AMD_LOGIC_STYLE))
    return original, incremental


def _snapshot(folder: Path) -> dict[str, bytes]:
    """The folder's files, without tensilekit's hidden bookkeeping (manifest, temporaries)."""
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file() and path.name[0] != "."}


def _ours(folder: Path) -> list[str]:
    return [path.name for path in folder.iterdir() if path.name.startswith(".") and path.name.endswith(".tmp")]


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TENSILE_", "HIPBLASLT_", "ROCM_"))}
    return subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True, env=env)


def test_killed_merges_leave_old_or_complete_files(tmp_path: Path) -> None:
    pristine_original, incremental = _big_inputs(tmp_path)
    pristine = _snapshot(pristine_original)
    incremental_bytes = _snapshot(incremental)

    expected_dir = tmp_path / "expected"
    merge_directories(pristine_original, incremental, expected_dir, MergePolicy(force_merge=True))
    expected = _snapshot(expected_dir)
    assert expected.keys() == pristine.keys() and all(expected[n] != pristine[n] for n in NAMES)

    # one uninterrupted run: the child's protocol works and gives the expected bytes
    probe = _spawn([str(pristine_original), str(incremental), str(tmp_path / "probe")])
    assert probe.stdout is not None and probe.stdout.readline().strip() == "ready"
    assert probe.wait(timeout=120) == 0
    probe.stdout.close()
    assert _snapshot(tmp_path / "probe") == expected

    rounds = int(os.environ.get("TENSILEKIT_KILL_ROUNDS", "10"))
    rng = random.Random(11)
    outcomes = {"old": 0, "new": 0, "temp files left": 0}
    for round_number in range(rounds):
        work = tmp_path / f"round{round_number}"
        in_place = round_number % 2 == 0
        if in_place:
            shutil.copytree(pristine_original, work)
            args = [str(work), str(incremental), str(work)]
        else:
            work.mkdir()
            for name in NAMES:  # an older result already sits in the separate output
                (work / name).write_bytes(pristine[name])
            args = [str(pristine_original), str(incremental), str(work)]
        child = _spawn(args)
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        target = rng.randrange(len(NAMES))
        for _ in range(target + 1):
            _, _, chunks = child.stdout.readline().split()
        # somewhere from just before to just after this file's write
        time.sleep(rng.uniform(-0.2, 1.2) * int(chunks) * 0.002 if rng.random() < 0.9 else 0.0)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()

        atomic.recover(work)
        states = set()
        for name in NAMES:
            data = (work / name).read_bytes()
            assert data in (pristine[name], expected[name]), f"round {round_number}: {name} is partial"
            states.add("old" if data == pristine[name] else "new")
        assert len(states) == 1, f"round {round_number}: old and new files mixed"
        outcomes[states.pop()] += len(NAMES)
        assert sorted(_snapshot(work)) == sorted(NAMES)
        leftovers = _ours(work)
        outcomes["temp files left"] += len(leftovers)
        assert _snapshot(incremental) == incremental_bytes
        assert _snapshot(pristine_original) == pristine
    assert outcomes["old"] + outcomes["new"] == rounds * len(NAMES)
    if rounds >= 10:  # the kills did land inside writes
        assert outcomes["temp files left"] > 0 and outcomes["old"] > 0

    # the next merge into a killed round's output removes what the killed one left and completes
    last = tmp_path / f"round{rounds - 1}"
    source = last if (rounds - 1) % 2 == 0 else pristine_original
    if source == last:
        for name in NAMES:
            (last / name).write_bytes(pristine[name])
    merge_directories(source, incremental, last, MergePolicy(force_merge=True))
    assert _snapshot(last) == expected
    assert not _ours(last)

"""Issue 31: a command that writes into a folder replaces only its own files, and takes any spelling
of the folder a shell would.

* ``-o`` as ``.``, ``..``, ``~/x`` (also after ``=``), an existing folder, ``a/../a``, a link to a
  folder: the files land in that folder, nothing else in it (nor beside it) changes.
* ``build-master --lazy`` of a second architecture into a folder holding a first: both libraries
  stay usable, as AMD's own selection (``../shared/amd/select-oracle``) reads them.
* two processes writing into one folder: no foreign file lost, no file of ours torn.
* output into a folder of 30 000 files costs about what it costs into an empty one.
* a file name the system cannot hold is a clear error naming it, not a crash.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import PathTooLong
from tensilekit.io.atomic import MANIFEST
from tensilekit.remapping import RemappedArtefact, RemapReport, write_remapped
from tensilekit.workload.detect import WorkloadFormat

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures"
LOG = str(FIXTURES / "logs" / "coverage_sgemm_mask64.log")
MASTER = str(FIXTURES / "masters" / "coverage_equality_gfx90a.yaml")
LOGIC = sorted((FIXTURES / "logic").glob("sample_*.yaml"))
COVERAGE_FILES = ["coverage.json", "coverage.md", "tune_next.jsonl", "tune_next_BBS_TN.yaml", "tune_next_SSS_NN.yaml"]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but tensilekit's manifest, with its bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


def _coverage(output: Path) -> None:
    result = CliRunner().invoke(cli, ["coverage", LOG, "--library", MASTER, "--cu-count", "104", "-o", str(output)])
    assert result.exit_code == 0, result.output


# -- -o spellings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "lands_in"),
    [
        ("-o=.", "work"),
        ("-o=..", "."),
        ("--output=~/x", "home/x"),
        ("-o=existing", "work/existing"),
        ("-o=existing/../existing", "work/existing"),
        ("-o=link", "work/existing"),
        ("-o=new", "work/new"),
    ],
)
def test_coverage_output_spellings(
    spelling: str, lands_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    (work / "existing").mkdir(parents=True)
    (work / "link").symlink_to("existing")
    (tmp_path / "home").mkdir()
    for folder in (tmp_path, work, work / "existing"):
        (folder / "mine.txt").write_text(f"the user's file in {folder.name}\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(work)
    before = _files(tmp_path)
    option, _, value = spelling.partition("=")
    given = [spelling] if option.startswith("--") else [option, value]  # "--output=~/x": no shell expands it
    result = CliRunner().invoke(cli, ["coverage", LOG, "--library", MASTER, "--cu-count", "104", *given])
    assert result.exit_code == 0, result.output
    target = tmp_path / lands_in
    assert sorted(
        name for name in os.listdir(target) if name.endswith((".json", ".md", ".jsonl", ".yaml")) and name != MANIFEST
    ) == (COVERAGE_FILES)
    after = _files(tmp_path)
    written = {str((target / name).relative_to(tmp_path)) for name in COVERAGE_FILES}
    assert {name: data for name, data in after.items() if name not in written} == before  # nothing else changed
    assert not (work / "~").exists() and (work / "link").is_symlink()


@pytest.mark.parametrize("spelling", [".", ".."])
def test_folder_writers_take_dot_and_dotdot(spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build-master --lazy, merge and coverage into ``.`` and ``..`` (a crash, or the parent
    copied into itself, before issue 31)."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    original, incremental = tmp_path / "original", tmp_path / "incremental"
    original.mkdir()
    incremental.mkdir()
    (original / LOGIC[0].name).write_bytes(LOGIC[0].read_bytes())
    (incremental / LOGIC[0].name).write_bytes(LOGIC[0].read_bytes())
    monkeypatch.chdir(work)
    target = work if spelling == "." else work.parent
    (target / "mine.txt").write_text("the user's\n")
    runner = CliRunner()
    for args in (
        ["build-master", "--lazy", str(LOGIC[0]), "-o", spelling],
        ["merge", "--force-merge", "true", str(original), str(incremental), spelling],
        ["coverage", LOG, "--library", MASTER, "--cu-count", "104", "-o", spelling],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    names = set(os.listdir(target))
    assert {"TensileLibrary_lazy_gfx90a.dat", LOGIC[0].name, *COVERAGE_FILES, "mine.txt"} <= names
    assert (target / "mine.txt").read_text() == "the user's\n"
    assert [path for path in target.rglob("*") if path.is_dir()] == ([] if spelling == "." else [work])
    assert not [name for name in names if name.endswith(".tmp")]


def _report(*sources: Path) -> RemapReport:
    return RemapReport(
        tuple(
            RemappedArtefact(str(source), WorkloadFormat.TUNABLEOP, f"remapped {source.name}\n", (), ())
            for source in sources
        )
    )


@pytest.mark.parametrize("spelling", ["out", "out/../out", "link", "./out/"])
def test_remap_of_one_file_into_an_existing_folder(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "tunableop_results.csv"
    source.write_text("input\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "link").symlink_to("out")
    (tmp_path / "out" / "mine.txt").write_text("the user's\n")
    monkeypatch.chdir(tmp_path)
    written = write_remapped(_report(source), spelling)
    assert [path.resolve() for path in written] == [tmp_path / "out" / source.name]
    assert (tmp_path / "out" / source.name).read_text() == "remapped tunableop_results.csv\n"
    assert sorted(os.listdir(tmp_path / "out")) == ["mine.txt", source.name]
    assert source.read_text() == "input\n"


def test_remap_expands_home_and_refuses_a_name_too_long(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "tunableop_results.csv"
    source.write_text("input\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert write_remapped(_report(source), "~/remapped.csv") == [tmp_path / "remapped.csv"]
    with pytest.raises(PathTooLong, match="file name too long") as caught:
        write_remapped(_report(source), "x" * 300 + ".csv")
    assert caught.value.location is not None and caught.value.location.file is not None
    assert caught.value.location.file.startswith("xxx")


@pytest.mark.parametrize("name", ["x" * 300, "sub/" + "y" * 256])
def test_a_name_too_long_is_an_error_naming_it(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["coverage", LOG, "--library", MASTER, "-o", name])
    assert result.exit_code == 3, result.output
    assert "file name too long" in result.output and name[:40] in result.output
    assert "internal error" not in result.output and os.listdir(tmp_path) == []


# -- a second architecture ------------------------------------------------------------------------

ARCHS = {  # arch -> (logic file, the corpus answers that name queries of its type)
    "gfx90a": (
        "aldebaran/104CU/Equality/aldebaran_Cijk_Alik_Bljk_SB_Bias_HA_SAV.yaml",
        "hipblaslt_aldebaran_all",
        ("T", "N", "Float"),
    ),
    "gfx942": (
        "aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
        "hipblaslt_gfx942_equality",
        ("N", "T", "Half"),
    ),
}


def _queries(corpus: Path, arch: str) -> list[dict[str, object]]:
    _, answers, (trans_a, trans_b, kind) = ARCHS[arch]
    lines = (corpus / "select-hipblaslt" / f"{answers}.jsonl").read_text().splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    chosen = [q for q in queries if (q["trans_a"], q["trans_b"], q["a_type"]) == (trans_a, trans_b, kind)][:4]
    return [
        {k: v for k, v in q.items() if k not in ("expected", "top", "best_solution") and not k.startswith("all_")}
        for q in chosen
    ]


def _oracle(amd: Path, master: Path, queries: list[dict[str, object]], tmp_path: Path) -> list[object]:
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(query) + "\n" for query in queries))
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(path)], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [(answer.get("expected") or {}).get("index") for answer in map(json.loads, done.stdout.splitlines())]


def test_a_second_architecture_keeps_the_first(amd: Path, corpus: Path, tmp_path: Path) -> None:
    from tensilekit.library import open_library

    logic = corpus / "logic" / "hipblaslt"
    shared = tmp_path / "lib"
    runner = CliRunner()
    for number, (arch, (path, _, _)) in enumerate(ARCHS.items()):
        alone = tmp_path / f"alone-{arch}"
        for folder in (shared, alone):
            result = runner.invoke(cli, ["build-master", "--lazy", str(logic / path), "-o", str(folder)])
            assert result.exit_code == 0, result.output
            assert "removed" not in result.output  # AMD's TensileCreateLibrary deletes nothing of another build
        if number == 0:
            first = _files(shared)
    assert {name: data for name, data in _files(shared).items() if name in first} == first
    for arch in ARCHS:
        queries = _queries(corpus, arch)
        master = shared / f"TensileLibrary_lazy_{arch}.dat"
        answers = _oracle(amd, master, queries, tmp_path)
        assert answers == _oracle(amd, tmp_path / f"alone-{arch}" / master.name, queries, tmp_path)
        assert all(answer is not None for answer in answers), (arch, answers)
        library = open_library(master)  # and tensilekit reads the shared folder as AMD's code does
        assert [library.select(library.problem_from_query(q), library.device_of(q)).index for q in queries] == answers


# -- concurrency and cost -------------------------------------------------------------------------

_OUR_WRITER = """
import hashlib, sys
from pathlib import Path
from tensilekit.io.atomic import file_set

out, rounds = Path(sys.argv[1]), int(sys.argv[2])
for number in range(rounds):
    with file_set(out, owner=lambda name: "ours", last=lambda name: name == "index.txt") as staged:
        for part in range(4):
            body = f"round {number} part {part}\\n" * (2000 + 500 * part)
            (staged / f"part{part}.txt").write_text(hashlib.sha256(body.encode()).hexdigest() + "\\n" + body)
        (staged / "index.txt").write_text(f"round {number}\\n")
"""

_FOREIGN_WRITER = """
import os, sys
from pathlib import Path

out, count = Path(sys.argv[1]), int(sys.argv[2])
for number in range(count):
    (out / f"foreign-{number:04d}.txt").write_text(f"foreign {number}\\n")
"""


def test_two_processes_writing_into_one_folder(tmp_path: Path) -> None:
    import hashlib

    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ours = subprocess.Popen([sys.executable, "-c", _OUR_WRITER, str(out), "60"], env=env)
    foreign = subprocess.Popen([sys.executable, "-c", _FOREIGN_WRITER, str(out), "600"], env=env)
    torn = []
    while ours.poll() is None:  # a reader meanwhile: every file of ours complete
        for path in out.glob("part*.txt"):
            try:
                digest, _, body = path.read_text().partition("\n")
            except FileNotFoundError:
                continue
            if hashlib.sha256(body.encode()).hexdigest() != digest:
                torn.append(path.name)
        time.sleep(0.01)
    assert ours.wait(timeout=120) == 0 and foreign.wait(timeout=120) == 0
    assert torn == []
    names = sorted(os.listdir(out))
    assert [name for name in names if name.startswith("foreign-")] == [f"foreign-{n:04d}.txt" for n in range(600)]
    assert [name for name in names if not name.startswith("foreign-")] == [
        MANIFEST, "index.txt", "part0.txt", "part1.txt", "part2.txt", "part3.txt",
    ]  # fmt: skip
    assert (out / "index.txt").read_text() == "round 59\n"


def _build_lazy(output: Path) -> None:
    result = CliRunner().invoke(cli, ["build-master", "--lazy", str(LOGIC[0]), "-o", str(output)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("write", [_coverage, _build_lazy], ids=["coverage", "build-master-lazy"])
def test_output_into_a_folder_of_30000_files_costs_what_it_costs_into_an_empty_one(
    write: Callable[[Path], None], tmp_path: Path
) -> None:
    """Bench: bench/output_folder.py (the same ratio, measured: about 1.1). Generous: 3x, not a timing."""
    crowded = tmp_path / "crowded"
    crowded.mkdir()
    for number in range(30_000):
        (crowded / f"unrelated-{number:05d}.bin").write_bytes(b"x")
    write(tmp_path / "warm")  # imports, the first read of the inputs
    timings = {}
    for name, folder in (("empty", tmp_path / "empty"), ("crowded", crowded)):
        start = time.perf_counter()
        write(folder)
        timings[name] = time.perf_counter() - start
    assert timings["crowded"] < 3 * timings["empty"] + 0.5, timings
    written = len(os.listdir(tmp_path / "empty"))
    assert len(os.listdir(crowded)) == 30_000 + written  # every unrelated file stayed


def test_only_files_the_same_owner_wrote_before_go(tmp_path: Path) -> None:
    from tensilekit.io.atomic import file_set

    def write(owner: str | None, *names: str) -> list[Path]:
        removed: list[Path] = []
        with file_set(tmp_path, owner=None if owner is None else (lambda name: owner), removed=removed) as staged:
            for name in names:
                (staged / name).write_text(f"{owner} {name}\n")
        return removed

    write("coverage", "a", "b", "c")
    write("build-master gfx942", "shard")
    (tmp_path / "d").write_text("the user's\n")
    write(None, "c")  # a merge rewrote c: it is no longer coverage's to remove
    assert write("coverage", "a") == [tmp_path / "b"]
    assert sorted(os.listdir(tmp_path)) == [MANIFEST, "a", "c", "d", "shard"]
    assert (tmp_path / "c").read_text() == "None c\n" and (tmp_path / "d").read_text() == "the user's\n"


def test_a_manifest_naming_paths_outside_the_folder_touches_nothing(tmp_path: Path) -> None:
    """A damaged or hostile manifest: entries naming anything outside the folder are dropped."""
    from tensilekit.io.atomic import file_set, recover

    folder = tmp_path / "out"
    folder.mkdir()
    outside = tmp_path / "precious.txt"
    outside.write_text("the user's\n")
    (folder / "sub").mkdir()
    (folder / MANIFEST).write_text(
        json.dumps(
            {
                "owners": {"coverage": ["../precious.txt", "sub"], "other": ["../precious.txt"]},
                "writing": {
                    "pid": 999_999_999,
                    "stage": "../.x.1.abcdef01.tmp",
                    "names": ["../precious.txt"],
                    "stale": ["../precious.txt"],
                    "owners": {},
                },
            }
        )
    )
    assert recover(folder) is False
    with file_set(folder, owner=lambda name: "coverage") as staged:
        (staged / "coverage.json").write_text("{}\n")
    assert outside.read_text() == "the user's\n" and (folder / "sub").is_dir()
    assert json.loads((folder / MANIFEST).read_text()) == {"owners": {"coverage": ["coverage.json"]}, "writing": None}

"""Docs that run: every console and Python example in README.md and docs/*.md is executed.

A block is a console example when it is fenced as ``console`` (or unlabelled) and its first line
starts with ``$ ``; each ``$`` line is run by a shell (``tensilekit`` is this checkout) and the lines
after it up to the next ``$`` are the output it must print. A ``python`` block is executed as is.
Each example runs in a fresh folder that holds the files the guides name: the corpus masters,
``fixtures/``, the sample library (``sample_library.yaml``, ``TensileLibrary_gfx90a.dat``) and
``../shared`` beside it, as in a checkout.

Comparison is modulo paths, whitespace runs and table borders; ``…`` in a shown line matches
any text, and a line that is only ``…`` matches any number of lines. Marks, in an HTML comment
right before a block:

* ``<!-- docs-test: skip: REASON -->`` — not run (it needs a GPU, ROCm, a file the corpus lacks …);
  the reason is required and reported.
* ``<!-- docs-test: setup: SHELL COMMANDS -->`` — run first, in the example's folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tensilekit.data import sample_library_path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
_MARK = re.compile(r"<!--\s*docs-test:\s*(skip|setup):\s*(.*?)\s*-->\s*$", re.DOTALL)
_BORDERS = re.compile(r"[┃│┏┓┗┛┣┫┳┻╋━─┡┩╇┼└┘┌┐├┤┬┴╭╮╯╰═║╞╡╪]")


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int
    kind: str  # "console" or "python"
    body: str
    skip: str | None
    setup: str | None

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            language, body = match.group(1), match.group(2)
            if language == "python":
                kind = "python"
            elif language in ("console", "") and body.startswith("$ "):
                kind = "console"
            else:
                continue
            before = text[: match.start()].rstrip("\n")
            mark = _MARK.search(before[-600:])
            skip = mark.group(2) if mark and mark.group(1) == "skip" else None
            setup = mark.group(2) if mark and mark.group(1) == "setup" else None
            found.append(Example(doc, text.count("\n", 0, match.start()) + 1, kind, body, skip, setup))
    return found


EXAMPLES = examples()


@pytest.fixture(scope="session")
def sample_dat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library as msgpack (``TensileLibrary_gfx90a.dat`` in the guides), made once."""
    from tensilekit.io.master_io import dump_master, load_master

    path = tmp_path_factory.mktemp("sample") / "TensileLibrary_gfx90a.dat"
    dump_master(load_master(sample_library_path()), path)
    return path


@pytest.fixture
def workspace(tmp_path: Path, corpus: Path, sample_dat: Path) -> Path:
    """A checkout-like folder: ``../shared`` beside it, the files the guides name inside it."""
    (tmp_path / "shared").symlink_to(corpus.parent, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    for folder in ("masters", "masters-hipblaslt"):
        for master in sorted((corpus / folder).iterdir()):
            if master.is_file() and master.suffix in (".yaml", ".dat"):
                (work / master.name).symlink_to(master)
    shutil.copy(sample_library_path(), work / "sample_library.yaml")
    shutil.copy(ROOT / "fixtures" / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml",
                work / "aldebaran_Cijk_Ailk_Bljk_SB.yaml")  # fmt: skip
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tensilekit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tensilekit "$@"\n')
    shim.chmod(0o755)
    shutil.copy(sample_dat, work / sample_dat.name)
    return work


def _env(bin_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "TENSILEKIT_TERMINAL": "1",  # the tables a terminal shows, as the guides do
        "COLUMNS": "400",
    }


def _normal_lines(text: str, work: Path) -> list[str]:
    text = text.replace(str(work.parent / "shared"), "../shared").replace(str(work) + "/", "").replace(str(work), ".")
    text = text.replace(str(ROOT) + "/", "")
    lines = []
    for line in text.splitlines():
        line = " ".join(_BORDERS.sub(" ", line).split())
        if line:
            lines.append(line)
    return lines


def _pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line == "…":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        text = re.sub(r"\s+#\s.*$", "", line) if "  # " in line else line  # a shown comment
        parts.append(".*?".join(re.escape(piece) for piece in text.split("…")) + r"\n")
    return re.compile("".join(parts))


def _split_console(body: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        command = lines[index][2:]
        index += 1
        while command.endswith("\\") and index < len(lines):
            command = command[:-1] + " " + lines[index].strip()
            index += 1
        output = []
        while index < len(lines) and not lines[index].startswith("$ "):
            output.append(lines[index])
            index += 1
        steps.append((command, output))
    return steps


def _run_console(example: Example, work: Path) -> None:
    env = _env(work.parent / "bin")
    shell_state = ""  # variables set by earlier lines (S=...) carry over
    last_code = 0
    for command, shown in _split_console(example.body):
        if command.strip() == "echo $?":  # the previous command's exit code, as shown
            assert [str(last_code)] == [line.strip() for line in shown], f"{example.id}: exit code {last_code}"
            continue
        if re.fullmatch(r"[A-Za-z_]+=\S+", command.strip()):
            shell_state += command.strip() + "; "
            continue
        shown_file = re.fullmatch(r"cat (\S+)", command.strip())
        if shown_file and not (work / shown_file.group(1)).exists():  # `$ cat F` shows the input it uses
            (work / shown_file.group(1)).write_text("".join(line + "\n" for line in shown), encoding="utf-8")
        completed = subprocess.run(
            ["bash", "-c", shell_state + command], cwd=work, env=env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
        last_code = completed.returncode
        expected = _normal_lines("\n".join(shown), work)
        if not expected:
            assert completed.returncode in (0, 1), f"{example.id}: $ {command}\n{completed.stderr}"
            continue
        pattern = _pattern(expected)
        for text in (completed.stdout, completed.stdout + completed.stderr, completed.stderr + completed.stdout):
            if pattern.fullmatch("\n".join(_normal_lines(text, work)) + "\n"):
                break
        else:
            actual = "\n".join(_normal_lines(completed.stdout + completed.stderr, work))
            pytest.fail(f"{example.id}: $ {command}\n--- shown\n" + "\n".join(expected) + f"\n--- printed\n{actual}")


def _run_python(example: Example, work: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", example.body], cwd=work, env=_env(work.parent / "bin"), capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, f"{example.id}\n{completed.stderr[-3000:]}"


def test_every_skip_gives_a_reason() -> None:
    for example in EXAMPLES:
        assert example.skip is None or len(example.skip) > 10, example.id


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.id for example in EXAMPLES])
def test_example_runs_as_shown(example: Example, workspace: Path) -> None:
    if example.skip:
        pytest.skip(f"marked in the doc: {example.skip}")
    if example.setup:
        subprocess.run(["bash", "-c", example.setup], cwd=workspace, env=_env(workspace.parent / "bin"), check=True,
                       capture_output=True, timeout=300)  # fmt: skip
    if example.kind == "console":
        _run_console(example, workspace)
    else:
        _run_python(example, workspace)

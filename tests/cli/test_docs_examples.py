"""Docs that run: README.md and every docs/*.md page is followed as a reader follows it.

Each page runs top to bottom, all its examples in order, in ONE fresh folder that looks like a
fresh checkout (the tracked top-level entries of this checkout, nothing else: no ``../shared``,
no corpus, no file the page does not make itself). The reader's ``tensilekit`` is this checkout.

* A ``console`` (or unlabelled) block whose first line starts with ``$ `` is run line by line by
  a shell; the lines after a ``$`` line up to the next one are the output it must print.
  Variables a line sets (``S=...``, ``export S=...``) and the folder a ``cd`` moves to carry over
  to the page's later lines.
* A ``bash`` block is run as a script (``set -e``); it must succeed.
* A ``python`` block is run as a script in the page's current folder; it must succeed.
* ``pip install`` lines are not run (the checker's tensilekit is this checkout, installed), nor
  a bare ``pytest`` (the suite is CI's own job).

Comparison is modulo paths, whitespace runs and table borders; ``…`` in a shown line matches
any text, and a line that is only ``…`` matches any number of lines. There is no hidden set-up:
what a page needs, it shows. The one mark, in an HTML comment right before a block:

* ``<!-- docs-test: skip: REASON -->`` — not run, for steps that need a GPU or ROCm node. The
  block must say so where the reader sees it, with a ``# on a node`` comment.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
_MARK = re.compile(r"<!--\s*docs-test:\s*(\w+):\s*(.*?)\s*-->\s*$", re.DOTALL)
_BORDERS = re.compile(r"[┃│┏┓┗┛┣┫┳┻╋━─┡┩╇┼└┘┌┐├┤┬┴╭╮╯╰═║╞╡╪]")
_ON_A_NODE = "# on a node"
_NOT_RUN = re.compile(r"(pip install|pytest)(\s|$)")  # the reader's environment, not the page's


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int
    kind: str  # "console", "bash" or "python"
    body: str
    skip: str | None
    mark: str | None  # the mark's kind, to refuse any but skip

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def page_examples(doc: Path) -> list[Example]:
    found = []
    text = doc.read_text(encoding="utf-8")
    for match in _FENCE.finditer(text):
        language, body = match.group(1), match.group(2)
        if language in ("python", "bash"):
            kind = language
        elif language in ("console", "") and body.startswith("$ "):
            kind = "console"
        else:
            continue
        before = text[: match.start()].rstrip("\n")
        mark = _MARK.search(before[-600:])
        skip = mark.group(2) if mark and mark.group(1) == "skip" else None
        found.append(
            Example(doc, text.count("\n", 0, match.start()) + 1, kind, body, skip, mark.group(1) if mark else None)
        )
    return found


PAGES = {doc: page_examples(doc) for doc in DOCS}


def _checkout(folder: Path) -> Path:
    """A fresh-checkout view of this checkout in ``folder``: its tracked top-level entries, linked."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    names = sorted({line.split("/", 1)[0] for line in listed.stdout.splitlines()}) if listed.returncode == 0 else []
    work = folder / "checkout"
    work.mkdir()
    for name in names or [entry.name for entry in ROOT.iterdir() if not entry.name.startswith(".")]:
        if (ROOT / name).exists():
            (work / name).symlink_to(ROOT / name, target_is_directory=(ROOT / name).is_dir())
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tensilekit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tensilekit "$@"\n')
    shim.chmod(0o755)
    return work


def _env(folder: Path) -> dict[str, str]:
    keep = {name: value for name, value in os.environ.items() if not name.startswith("TENSILEKIT_")}
    return {
        **keep,
        "HOME": str(folder),
        "PATH": f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "TENSILEKIT_TERMINAL": "1",  # the tables a terminal shows, as the guides do
        "COLUMNS": "400",
    }


def _normal_lines(text: str, work: Path) -> list[str]:
    text = text.replace(str(work) + "/", "").replace(str(work), ".").replace(str(ROOT) + "/", "")
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


class Reader:
    """One reader following one page: a shell's current folder and variables, kept line to line."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.work = _checkout(folder)
        self.cwd = self.work
        self.variables = ""  # `S=...; ` lines set earlier on the page
        self.last_code = 0
        self.env = _env(folder)
        self.mismatches: list[str] = []  # every shown output that differs, reported together at the page's end

    def shell(self, example: Example, script: str) -> subprocess.CompletedProcess[str]:
        where = self.folder / "cwd"
        wrapped = f'{self.variables}{script}\ncode=$?; pwd > "{where}"; exit $code\n'
        completed = subprocess.run(
            ["bash", "-c", wrapped], cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
        if where.exists():
            self.cwd = Path(where.read_text().strip())
        return completed

    def console(self, example: Example) -> None:
        for command, shown in _split_console(example.body):
            plain = re.sub(r"\s+#\s.*$", "", command).strip()
            if plain == "echo $?":  # the previous command's exit code, as shown
                assert [str(self.last_code)] == [line.strip() for line in shown], f"{example.id}: exit {self.last_code}"
                continue
            if _NOT_RUN.match(plain):
                continue
            if re.fullmatch(r"(export\s+)?[A-Za-z_]+=\S+", plain):
                self.variables += plain + "; "
                continue
            completed = self.shell(example, command)
            self.last_code = completed.returncode
            expected = _normal_lines("\n".join(shown), self.work)
            if not expected:
                assert completed.returncode in (0, 1), f"{example.id}: $ {command}\n{completed.stderr}"
                continue
            pattern = _pattern(expected)
            for text in (completed.stdout, completed.stdout + completed.stderr, completed.stderr + completed.stdout):
                if pattern.fullmatch("\n".join(_normal_lines(text, self.work)) + "\n"):
                    break
            else:
                printed = "\n".join(_normal_lines(completed.stdout + completed.stderr, self.work))
                self.mismatches.append(
                    f"{example.id}: $ {command}\n--- shown\n" + "\n".join(expected) + f"\n--- printed\n{printed}"
                )

    def bash(self, example: Example) -> None:
        script = "\n".join(line for line in example.body.splitlines() if not _NOT_RUN.match(line.strip()))
        completed = self.shell(example, "set -e\n" + script)
        assert completed.returncode == 0, f"{example.id}\n{completed.stdout[-2000:]}\n{completed.stderr[-3000:]}"

    def python(self, example: Example) -> None:
        completed = subprocess.run(
            [sys.executable, "-c", example.body], cwd=self.cwd, env=self.env, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert completed.returncode == 0, f"{example.id}\n{completed.stderr[-3000:]}"


def test_marks_are_visible_node_skips() -> None:
    """Only `skip:` marks, each with a reason, on a block that says `# on a node` where the reader sees it."""
    for examples in PAGES.values():
        for example in examples:
            assert example.mark in (None, "skip"), f"{example.id}: docs-test: {example.mark}: pages hide no set-up"
            if example.skip is not None:
                assert len(example.skip) > 10, example.id
                assert _ON_A_NODE in example.body, f"{example.id}: a skipped block must say {_ON_A_NODE!r}"


@pytest.mark.parametrize("doc", DOCS, ids=[str(doc.relative_to(ROOT)) for doc in DOCS])
def test_page_runs_as_a_reader_follows_it(doc: Path, tmp_path: Path) -> None:
    reader = Reader(tmp_path)
    for example in PAGES[doc]:
        if example.skip is None:
            getattr(reader, example.kind)(example)
    if reader.mismatches:
        pytest.fail("\n\n".join(reader.mismatches))

"""Fixtures for tool-wrapper tests: the fake AMD executables first on PATH, and their call log."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FAKE_BIN = Path(__file__).resolve().parents[2] / "fakes" / "bin"


@pytest.fixture
def fake_bin(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put tests/fakes/bin first on PATH (hipblaslt-bench, Tensile, TensileCreateLibrary)."""
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    for name in list(os.environ):
        if name.startswith("TENSILEKIT_FAKE_"):
            monkeypatch.delenv(name)
    return FAKE_BIN


@pytest.fixture
def fake_calls(fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[dict[str, Any]]]:
    """Make the fakes log each call; returns a reader for the logged calls."""
    log = tmp_path / "fake-calls.jsonl"
    monkeypatch.setenv("TENSILEKIT_FAKE_ARGV_LOG", str(log))

    def read() -> list[dict[str, Any]]:
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    return read

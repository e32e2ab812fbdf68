"""Shared test fixtures: corpus location, project fixtures, hermetic environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = PROJECT_ROOT / "fixtures"


def find_corpus() -> Path | None:
    """The AMD corpus: $TENSILEKIT_CORPUS, else ../shared/corpus beside the checkout."""
    env = os.environ.get("TENSILEKIT_CORPUS")
    candidates = [Path(env)] if env else []
    candidates.append(PROJECT_ROOT.parent / "shared" / "corpus")
    for candidate in candidates:
        if (candidate / "logic").is_dir():
            return candidate
    return None


CORPUS = find_corpus()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path to the corpus; skips politely when it is absent (CI requires it, see .ci/run)."""
    if CORPUS is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide the AMD corpus (TENSILEKIT_CORPUS or ../shared/corpus)")
        pytest.skip("AMD corpus not found: set TENSILEKIT_CORPUS or place ../shared/corpus")
    return CORPUS


@pytest.fixture
def fixture_path():
    def _path(*parts: str) -> Path:
        return FIXTURES.joinpath(*parts)

    return _path


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermetic tests: no TENSILE_*, HIPBLASLT_* or ROCM_* variables leak in."""
    for name in list(os.environ):
        if name.startswith(("TENSILE_", "HIPBLASLT_", "ROCM_")) and name != "TENSILEKIT_CORPUS":
            monkeypatch.delenv(name, raising=False)

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


def find_amd() -> Path | None:
    """AMD's runnable tools (README there): $TENSILEKIT_AMD, else ../shared/amd beside the checkout."""
    env = os.environ.get("TENSILEKIT_AMD")
    candidates = [Path(env)] if env else []
    candidates.append(PROJECT_ROOT.parent / "shared" / "amd")
    for candidate in candidates:
        if all((candidate / tool).is_file() for tool in ("build-master", "select-oracle", "check-configs")):
            return candidate
    return None


@pytest.fixture(scope="session")
def amd() -> Path:
    """Path to AMD's tools; skips politely when they are absent (CI requires them, see .ci/run)."""
    found = find_amd()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide AMD's tools (TENSILEKIT_AMD or ../shared/amd)")
        pytest.skip("AMD's tools not found: set TENSILEKIT_AMD or place ../shared/amd")
    _ensure_amd_venv(found)
    return found


@pytest.fixture(scope="session")
def standins(amd: Path) -> Path:
    """AMD's stand-ins for the tools ``tune`` drives (``amd/standins``, README there): hipBLASLt
    7d9fb683's hipblaslt-bench and TensileCreateLibrary, answered by AMD's own code."""
    folder = amd / "standins"
    if not (folder / "hipblaslt-bench").is_file() or not (folder / "TensileCreateLibrary").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide AMD's stand-ins ({folder})")
        pytest.skip(f"AMD's stand-ins not found in {folder}")
    return folder


def _ensure_amd_venv(amd_tools: Path) -> None:
    """Make AMD's virtual environment once, before any tool runs: each tool would otherwise make it
    on first use, and the test workers (pytest-xdist) would make it at the same time. The lock
    lets one worker create it while the others wait."""
    import fcntl
    import subprocess
    import tempfile

    with open(Path(tempfile.gettempdir()) / "tensilekit-amd-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([str(amd_tools / "setup-venv")], check=True, capture_output=True, timeout=1800)


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

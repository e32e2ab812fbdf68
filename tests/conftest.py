"""Shared test fixtures: corpus location, project fixtures, hermetic environment."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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


def pytest_configure(config: pytest.Config) -> None:
    """Byte code for the hundreds of Python processes the suite starts (tensilekit's CLI, AMD's
    tools and stand-ins, each importing AMD's Tensile): with ``PYTHONDONTWRITEBYTECODE`` set (this
    development sandbox) every one of them compiled its modules from source, ~0.5 s of CPU for
    AMD's Tensile alone. The byte code goes into pytest's cache folder (``PYTHONPYCACHEPREFIX``),
    never into the source trees (AMD's is read-only), as bench/_corpus.py does for benchmarks.
    The xdist workers start after this and inherit the variables."""
    import sys

    if os.environ.get("PYTHONDONTWRITEBYTECODE") is None or os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # byte code is written as the user chose
    cache = getattr(config, "cache", None)
    if cache is not None:
        folder = cache.mkdir("pycache")
    else:  # -p no:cacheprovider
        import tempfile

        folder = Path(tempfile.gettempdir()) / f"tensilekit-test-pycache-{os.getuid()}"
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    sys.pycache_prefix = str(folder)
    sys.dont_write_bytecode = False


# ---------------------------------------------------------------------------------------------
# Test scheduling over the xdist workers (CI has 2 cores: the suite's wall time is its longest
# worker). ``--dist loadscope`` keeps a module on one worker (its module fixtures are made once)
# and, by default, hands modules out by their number of tests, so a one-test module of 90 s came
# last and ran alone. Handing out the longest module first (longest-processing-time-first) makes
# the workers end within about one short module of each other. Each module's seconds are from a
# full run (MODULE_SECONDS, refreshed with ``python tests/conftest.py JUNIT.xml``); a module it
# does not name is weighed by its number of tests.

MODULE_SECONDS = Path(__file__).with_name("module_seconds.json")
SECONDS_PER_UNKNOWN_TEST = 0.5


def module_weights() -> dict[str, float]:
    try:
        weights = json.loads(MODULE_SECONDS.read_text())
    except (OSError, ValueError):
        return {}
    return {str(name): float(seconds) for name, seconds in weights.items()}


def longest_first_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's LoadScopeScheduling, handing out the heaviest remaining scope (module) first; None
    (xdist's own scheduling) where a pytest-xdist release no longer has what this reorders."""
    try:
        from xdist.scheduler.loadscope import LoadScopeScheduling
    except ImportError:
        return None
    if not hasattr(LoadScopeScheduling, "_assign_work_unit"):
        return None

    weights = module_weights()

    class LongestFirstScopeScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _weight(self, scope: str) -> float:
            module = scope.split("::", 1)[0]
            if module in weights:
                return weights[module] if scope == module else weights[module] / 2
            return SECONDS_PER_UNKNOWN_TEST * len(self.workqueue[scope])

        def _assign_work_unit(self, node: Any) -> None:
            queue = getattr(self, "workqueue", None)
            if queue and hasattr(queue, "move_to_end"):  # an OrderedDict of scopes, as xdist 3.x keeps it
                queue.move_to_end(max(queue, key=self._weight), last=False)
            super()._assign_work_unit(node)

    return LongestFirstScopeScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return longest_first_scheduler(config, log) if config.getvalue("dist") == "loadscope" else None


def seconds_per_module(junit_files: Iterable[Path]) -> dict[str, float]:
    """Each test module's total test time in pytest JUnit XML reports (``--junitxml``)."""
    import xml.etree.ElementTree as ET

    totals: dict[str, float] = {}
    for junit in junit_files:
        for case in ET.parse(junit).iter("testcase"):
            module = case.get("classname", "").split("::")[0]
            parts = module.split(".")
            # classname is the dotted module path, then a class name if the test is a method
            while parts and not (PROJECT_ROOT.joinpath(*parts[:-1]) / f"{parts[-1]}.py").is_file():
                parts.pop()
            if parts:
                name = "/".join(parts) + ".py"
                totals[name] = totals.get(name, 0.0) + float(case.get("time", 0.0))
    return {name: round(seconds, 1) for name, seconds in sorted(totals.items())}


if __name__ == "__main__":  # refresh MODULE_SECONDS from the JUnit XML of a full run
    import sys

    MODULE_SECONDS.write_text(json.dumps(seconds_per_module(map(Path, sys.argv[1:])), indent=1) + "\n")

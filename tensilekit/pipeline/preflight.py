"""Preflight: everything a tuning run needs is checked before any work starts, in seconds.

A missing or unrunnable tool, an unreadable ``--library-logic`` folder or an architecture the
installed tools do not know would otherwise surface as a dozen failed jobs, one per GEMM, after
the log was read and the work directory laid out. :func:`preflight` checks them first and stops
with one clear message: a tool problem is a :class:`~tensilekit.errors.ToolError` (exit 4), an
input problem an :class:`~tensilekit.errors.InputNotFound` (exit 3).

It also decides the tool profile (:mod:`tensilekit.tools.profiles`): the one named by
``--tool-profile``, else the one the tools are -- TensileCreateLibrary's options (``--help``) and,
for ``--mode ga``/``grid``, the tensilelite version the Tensile driver prints (``--version``) --
and says which and why. hipBLASLt's own version (``hipblaslt-bench --version``) is only reported:
hipBLASLt 0.11 to 0.14 all ship tensilelite 4.33.0.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tensilekit.errors import InputNotFound, Location, ToolError, ToolFailed, ToolNotFound
from tensilekit.pipeline.config import TuneConfig
from tensilekit.tools.profiles import (
    ToolProfile,
    bench_version,
    profile_for_tools,
    tensile_version_from_output,
    tool_profile,
)
from tensilekit.tools.runner import CommandRunner, SubprocessRunner

VERSION_TIMEOUT_S = 20.0
"""``hipblaslt-bench --version`` loads hipBLASLt but runs nothing (``TensileCreateLibrary --help``
imports tensilelite); longer means it hangs."""


def _executable(name: str, role: str) -> str:
    found = shutil.which(name)
    if found is None:
        path = Path(name)
        if path.is_file():
            if not os.access(path, os.X_OK):
                raise ToolNotFound(f"{role} {name} is not executable (chmod +x, or pass another executable)")
            return str(path)
        raise ToolNotFound(f"{role} {name!r} was not found on PATH; install it or pass its path")
    return found


def _check_library_logic(folder: Path) -> None:
    if not folder.is_dir():
        raise InputNotFound(
            f"--library-logic {folder} is not a directory: pass the logic folder the installed hipBLASLt was "
            "built from", Location(file=str(folder)),
        )  # fmt: skip
    try:
        first = next((path for path in sorted(folder.rglob("*.yaml")) if path.is_file()), None)
        if first is None:
            raise InputNotFound(f"--library-logic {folder} holds no logic files (*.yaml)", Location(file=str(folder)))
        with first.open("rb") as stream:
            stream.read(1)
    except PermissionError as error:
        raise InputNotFound(f"--library-logic {folder} cannot be read: {error}", Location(file=str(folder))) from None


def _probe(runner: CommandRunner, argv: list[str], role: str) -> str:
    completed = runner.run(argv, timeout=VERSION_TIMEOUT_S)
    if completed.returncode != 0:
        raise ToolFailed(
            f"{role} cannot run ({' '.join(argv)} exited with status {completed.returncode}): "
            f"{(completed.stderr or completed.stdout).strip()[-500:]}",
            argv=completed.argv, returncode=completed.returncode,
        )  # fmt: skip
    return completed.stdout + completed.stderr


def _detect_profile(runner: CommandRunner, create_library: str, driver: str | None) -> tuple[ToolProfile, str]:
    """The profile of what the tools are: TensileCreateLibrary's options, the driver's tensilelite version."""
    options = _probe(runner, [create_library, "--help"], "TensileCreateLibrary")
    version = None
    if driver is not None:
        version = tensile_version_from_output(_probe(runner, [driver, "--version"], "the Tensile benchmark driver"))
    profile, why = profile_for_tools(options, version)
    if profile is None:
        raise ToolError(
            f"cannot tell which tensilelite the tools belong to: {why}; name the release with --tool-profile"
        )
    return profile, why


def preflight(config: TuneConfig, runner: CommandRunner | None = None) -> tuple[TuneConfig, list[str]]:
    """Check tools, inputs and the architecture; return the config with its tool profile decided.

    Returns ``(config, messages)``; the messages say which profile is used and why.

    Raises:
        ToolNotFound / ToolFailed / ToolError: a tool is missing, cannot run, or does not know
            the architecture (exit 4).
        InputNotFound: ``--library-logic`` is missing, empty or unreadable (exit 3).
    """
    messages: list[str] = []
    if config.library_logic is not None:
        _check_library_logic(Path(config.library_logic))
    if config.simulate:
        profile = config.hipblaslt_profile()
        reason = "named" if config.tool_profile else "default for the architecture"
        messages.append(f"tool profile {profile.name}: {profile.description} ({reason}; SIMULATED tools)")
    else:
        bench = _executable(config.bench_executable, "hipblaslt-bench")
        create_library = _executable(config.create_library_executable, "TensileCreateLibrary")
        driver = None
        if config.mode in ("ga", "grid"):
            driver = _executable(config.tensile_executable, "the Tensile benchmark driver")
        run = runner or SubprocessRunner()
        banner = _probe(run, [bench, "--version"], "hipblaslt-bench")
        if config.tool_profile is not None:
            profile = tool_profile(config.tool_profile)
            messages.append(f"tool profile {profile.name}: {profile.description} (named; {bench_version(banner)})")
        else:
            # ROCm/Tensile's driver (--config-dialect tensile) says nothing about hipBLASLt's tensilelite.
            lite_driver = driver if config.search_dialect == "tensilelite" else None
            profile, why = _detect_profile(run, create_library, lite_driver)
            messages.append(
                f"tool profile {profile.name}: {profile.description} (detected: {why}; {bench_version(banner)})"
            )
    if config.arch not in profile.archs:
        raise ToolError(
            f"{profile.description} does not support {config.arch} (its tools know {', '.join(profile.archs)}); "
            "use the hipBLASLt release that supports it, or --tool-profile"
        )
    driver_profile = config.model_copy(update={"tool_profile": profile.name}).driver_profile()
    if config.mode in ("ga", "grid") and config.arch not in driver_profile.archs:
        raise ToolError(f"{driver_profile.description} does not support {config.arch} (--config-dialect)")
    return config.model_copy(update={"tool_profile": profile.name}), messages


__all__ = ["VERSION_TIMEOUT_S", "preflight"]

"""Where hipBLASLt finds its kernel library, as ``TensileHost::initialize`` looks for it.

hipblaslt-bench prints solution *indices* of the library hipBLASLt loaded; to know which
solution an index is, tensilekit reads that same library. The rule (hipBLASLt 7d9fb683
``library/src/amd_detail/rocblaslt/src/tensile_host.cpp:1260-1440``, the stand-in README in
``shared/amd/standins`` quotes it):

* ``HIPBLASLT_TENSILE_LIBPATH`` is used as it is (no per-architecture subfolder);
* otherwise the folder of ``libhipblaslt.so`` plus ``/../Tensile/library``, else ``/library``,
  else ``/hipblaslt/library``, then ``/<arch>`` if that exists (:func:`library_folder_beside`).

The folder of ``libhipblaslt.so`` is what the dynamic loader resolves for the bench
(``ldd``), else ``$ROCM_PATH/lib``, else ``/opt/rocm/lib``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from tensilekit.tools.hipblaslt_bench import LIBRARY_PATH_ENV
from tensilekit.tools.runner import CommandRunner, SubprocessRunner

_LDD_LINE = re.compile(r"libhipblaslt\.so\S*\s*=>\s*(?P<path>/\S+)")
LDD_TIMEOUT_S = 10.0


def _ldd_library_dir(bench: str, runner: CommandRunner) -> Path | None:
    """The folder ``ldd`` resolves ``libhipblaslt.so`` to for ``bench`` (None: not an ELF, no ldd)."""
    executable = shutil.which(bench) or bench
    if shutil.which("ldd") is None or not Path(executable).is_file():
        return None
    with open(executable, "rb") as stream:
        if stream.read(4) != b"\x7fELF":  # a script (a wrapper, a stand-in): ldd says nothing useful
            return None
    completed = runner.run(["ldd", executable], timeout=LDD_TIMEOUT_S)
    found = _LDD_LINE.search(completed.stdout) if completed.returncode == 0 else None
    return Path(found.group("path")).parent if found else None


def library_folder_beside(lib_dir: Path, arch: str) -> Path | None:
    """The library folder hipBLASLt reads when ``libhipblaslt.so`` lives in ``lib_dir`` (None: that
    folder does not exist, so hipBLASLt would fail to load any library).

    ``tensile_host.cpp:1285-1300`` @7d9fb683: ``../Tensile/library`` if readable, else
    ``/library`` when ``<dir>library`` -- sic, no slash -- is readable, else ``/hipblaslt/library``;
    then ``/<arch>`` if readable.
    """
    text = str(lib_dir)
    if os.access(text + "/../Tensile/library", os.R_OK):
        path = text + "/../Tensile/library"
    elif os.access(text + "library", os.R_OK):
        path = text + "/library"
    else:
        path = text + "/hipblaslt/library"
    if os.access(path + "/" + arch, os.R_OK):
        path += "/" + arch
    return Path(path) if Path(path).is_dir() else None


def locate_hipblaslt_library(
    arch: str,
    *,
    bench: str = "hipblaslt-bench",
    env: Mapping[str, str] | None = None,
    runner: CommandRunner | None = None,
) -> tuple[Path | None, str]:
    """The library folder hipblaslt-bench loads on this machine, and how it was found.

    Returns ``(None, why)`` when it cannot be told (no ``HIPBLASLT_TENSILE_LIBPATH``, the bench
    is not an ELF that ``ldd`` resolves, and no ROCm folder holds a library).
    """
    environment = os.environ if env is None else env
    explicit = environment.get(LIBRARY_PATH_ENV)
    if explicit:
        return Path(explicit), f"{LIBRARY_PATH_ENV}={explicit}"
    tried: list[str] = []
    resolved = _ldd_library_dir(bench, runner or SubprocessRunner())
    candidates: list[tuple[Path, str]] = []
    if resolved is not None:
        candidates.append((resolved, f"libhipblaslt.so of {bench} (ldd) in {resolved}"))
    rocm = environment.get("ROCM_PATH")
    if rocm:
        candidates.append((Path(rocm) / "lib", f"$ROCM_PATH/lib ({rocm}/lib)"))
    candidates.append((Path("/opt/rocm/lib"), "/opt/rocm/lib"))
    for lib_dir, origin in candidates:
        folder = library_folder_beside(lib_dir, arch)
        if folder is not None:
            return folder, f"hipBLASLt's library beside {origin}"
        tried.append(origin)
    return None, f"no {LIBRARY_PATH_ENV}, and no hipBLASLt library beside {', '.join(tried)}"


__all__ = ["library_folder_beside", "locate_hipblaslt_library"]

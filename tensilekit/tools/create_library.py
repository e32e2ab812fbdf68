"""Drive ``TensileCreateLibrary``: logic files in, master libraries and code objects out.

The command line follows the real argparse of tensilelite. Two generations differ:

* ``hipblaslt-2024`` (``tensilelite/Tensile/TensileCreateLibrary.py``, ROCm 6.3): positional
  ``LogicPath OutputPath RuntimeLanguage``; ``--architecture``, ``--library-format yaml|msgpack``,
  ``--merge-files``/``--no-merge-files``, ``--separate-architectures``,
  ``--lazy-library-loading`` (which the tool refuses without both ``--merge-files`` and
  ``--separate-architectures``), ``--no-generate-solution-table``, ``--global-parameters``…
* ``rocm-libraries`` (``TensileCreateLibrary/ParseArguments.py``, 2025): same positionals; lazy
  loading is the default (``--no-lazy-library-loading`` turns it off), no merge/separate flags,
  and ``--library-format`` also takes ``msgpack-indexed``.

Outputs under ``OutputPath/library/`` (7d9fb68) or ``OutputPath/library/<arch>/``
(rocm-libraries, ``libraryDir`` in ``TensileCreateLibrary/Run.py`` @00ee1f9d):
``TensileLibrary.{yaml,dat}`` (one library), ``TensileLibrary_<arch>.*`` (separate architectures)
or ``TensileLibrary_lazy_<arch>.*`` plus placeholder libraries (lazy loading), code objects
``*.co``/``*.hsaco``, and (7d9fb68 only) ``TensileManifest.txt`` listing every file the tool
meant to write; :func:`master_library_dir` finds the folder that holds the master. ``MatchTable.yaml`` (solution
index -> logic file, read by ``find_exact.py``) is written to the *working directory*, so
:func:`run_create_library` runs the tool in the output directory.
"""

from __future__ import annotations

import enum
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tensilekit.errors import InputNotFound, Location, TensilekitError, ToolOutputError
from tensilekit.tools.runner import CommandRunner

DEFAULT_EXECUTABLE = "TensileCreateLibrary"
MANIFEST_NAME = "TensileManifest.txt"
MATCH_TABLE_NAME = "MatchTable.yaml"
_STDOUT = "<TensileCreateLibrary stdout>"
MASTER_SUFFIXES = (".yaml", ".dat", ".dat.zlib")
"""How master libraries end: the newest rocm-libraries writes msgpack as ``<name>.dat.zlib`` and
its readers, given ``<name>.dat``, probe the ``.zlib`` themselves (hipblaslt-2026-interfaces.md
§2 "compressed msgpack", ClientWriter.py @041f9ba6 ``clientLibraryFiles``); 7d9fb68 writes
``.dat``/``.yaml`` only."""


class CreateLibraryFlavor(str, enum.Enum):
    """Which TensileCreateLibrary command line to speak."""

    HIPBLASLT_2024 = "hipblaslt-2024"
    ROCM_LIBRARIES = "rocm-libraries"


class CreateLibraryConfig(BaseModel):
    """One TensileCreateLibrary invocation.

    ``architecture`` is ``all``, one target (``gfx942``) or several, given as a list or as
    Tensile's ``;``-separated string. ``lazy_library_loading`` None means the flavor's default
    (off for ``hipblaslt-2024``, on for ``rocm-libraries``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    logic_dir: Path
    output_dir: Path
    runtime_language: Literal["HIP", "OCL", "HSA"] = "HIP"
    architecture: str = "all"
    library_format: Literal["yaml", "msgpack", "msgpack-indexed"] = "msgpack"
    flavor: CreateLibraryFlavor = CreateLibraryFlavor.HIPBLASLT_2024
    merge_files: bool | None = None
    separate_architectures: bool = False
    lazy_library_loading: bool | None = None
    generate_solution_table: bool = True
    code_object_version: str | None = None
    cxx_compiler: str | None = None
    jobs: int | None = Field(default=None, ge=-1)
    experimental: bool = False
    no_enumerate: bool = False
    logic_filter: str | None = None
    logic_format: Literal["yaml", "json"] | None = None
    verbose: int | None = Field(default=None, ge=0)
    keep_build_tmp: bool = False
    version: str | None = None
    global_parameters: tuple[tuple[str, str], ...] = ()

    @field_validator("architecture", mode="before")
    @classmethod
    def _join_architectures(cls, value: object) -> object:
        if isinstance(value, (list, tuple)):
            return ";".join(str(item) for item in value)
        return value

    @model_validator(mode="after")
    def _check_flavor(self) -> CreateLibraryConfig:
        if self.flavor is CreateLibraryFlavor.HIPBLASLT_2024:
            if self.library_format == "msgpack-indexed":
                raise ValueError("library_format 'msgpack-indexed' needs flavor 'rocm-libraries'")
            if self.experimental:
                # TensileCreateLibrary.py:1251-1309 @7d9fb68 defines no such option.
                raise ValueError("flavor 'hipblaslt-2024' has no --experimental option")
            if self.lazy_library_loading and not (self.merge_files and self.separate_architectures):
                # The tool itself exits with this complaint; fail before starting it.
                raise ValueError("lazy_library_loading requires merge_files=True and separate_architectures=True")
        else:
            if self.merge_files is not None or self.separate_architectures:
                raise ValueError("flavor 'rocm-libraries' has no merge-files / separate-architectures options")
            if self.global_parameters:
                raise ValueError("flavor 'rocm-libraries' has no --global-parameters")
        return self

    @property
    def lazy(self) -> bool:
        """Whether the build uses lazy library loading (flag or flavor default)."""
        if self.lazy_library_loading is not None:
            return self.lazy_library_loading
        return self.flavor is CreateLibraryFlavor.ROCM_LIBRARIES

    @property
    def library_extension(self) -> str:
        """``.yaml`` or ``.dat``, the master library file suffix."""
        return ".yaml" if self.library_format == "yaml" else ".dat"


def build_create_library_argv(config: CreateLibraryConfig, *, executable: str = DEFAULT_EXECUTABLE) -> list[str]:
    """The TensileCreateLibrary command line for ``config`` (``--global-parameters`` last)."""
    argv = [executable, str(config.logic_dir), str(config.output_dir), config.runtime_language]
    argv += ["--architecture", config.architecture, "--library-format", config.library_format]
    if config.flavor is CreateLibraryFlavor.HIPBLASLT_2024:
        if config.merge_files is not None:
            argv.append("--merge-files" if config.merge_files else "--no-merge-files")
        if config.separate_architectures:
            argv.append("--separate-architectures")
        if config.lazy:
            argv.append("--lazy-library-loading")
    elif not config.lazy:
        argv.append("--no-lazy-library-loading")
    if not config.generate_solution_table:
        argv.append("--no-generate-solution-table")
    options = (
        ("--code-object-version", config.code_object_version),
        ("--cxx-compiler", config.cxx_compiler),
        ("--jobs", None if config.jobs is None else str(config.jobs)),
        ("--logic-filter", config.logic_filter),
        ("--logic-format", config.logic_format),
        ("--verbose", None if config.verbose is None else str(config.verbose)),
        ("--version", config.version),
    )
    for flag, value in options:
        if value is not None:
            argv += [flag, value]
    switches = (
        ("--experimental", config.experimental),
        ("--no-enumerate", config.no_enumerate),
        ("--keep-build-tmp", config.keep_build_tmp),
    )
    argv += [flag for flag, on in switches if on]
    if config.global_parameters:
        argv += ["--global-parameters", *(f"{key}={value}" for key, value in config.global_parameters)]
    return argv


class CreateLibraryLog(BaseModel):
    """What TensileCreateLibrary reported on stdout (``print1`` lines)."""

    model_config = ConfigDict(frozen=True)

    architecture: str | None = None
    library_format: str | None = None
    logic_files: tuple[str, ...] = ()
    """The logic files it listed (7d9fb68 always; rocm-libraries only at ``--verbose 2``)."""
    logic_file_count: int | None = None
    """How many logic files it said it read (None: it did not say)."""
    done: bool = False
    """True when ``# Tensile Library Writer DONE`` was printed."""


# What TensileCreateLibrary.py:1364-1365,1404-1406 @7d9fb68 prints (print1):
#   "# Architecture      from TensileCreateLibrary: gfx942"
#   "# LibraryFormat     from TensileCreateLibrary: msgpack"
#   "# LibraryLogicFiles(3):" then one "#   <path>" line per file.
# rocm-libraries (TensileCreateLibrary/Run.py @00ee1f9d) prints "# LibraryLogicFiles: 3" (print1),
# per-revision "# gfx1250 ASIC revision: ..." lines, and the "#   <path>" lines only with print2,
# i.e. at --verbose 2; it has no Architecture/LibraryFormat lines.
_SETTING = re.compile(r"^# (Architecture|LibraryFormat)\s*(?:from TensileCreateLibrary)?:\s*(.*)$")
_LOGIC_COUNT = re.compile(r"^# LibraryLogicFiles(?:\((?P<paren>[^)]*)\):|:\s*(?P<colon>.*))\s*$")


def parse_create_library_output(text: str, *, source: str | None = None) -> CreateLibraryLog:
    """Read TensileCreateLibrary's progress output, as either generation prints it.

    The announced number of logic files and the listed ones need not agree: the newer tool
    lists them only at ``--verbose 2``. Raises :class:`~tensilekit.errors.ToolOutputError` only
    for a count that is not a number.
    """
    where = source or _STDOUT
    architecture: str | None = None
    library_format: str | None = None
    logic_files: list[str] = []
    count: int | None = None
    collecting = False
    done = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if collecting and line.startswith("#   "):
            logic_files.append(line[4:].strip())
            continue
        # rocm-libraries prints its per-revision "# ..." lines between the count and the list.
        collecting = collecting and line.startswith("# ") and not line.startswith("# Tensile Library Writer DONE")
        setting = _SETTING.match(line)
        counted = _LOGIC_COUNT.match(line)
        if setting is not None:
            if setting.group(1) == "Architecture":
                architecture = setting.group(2).strip()
            else:
                library_format = setting.group(2).strip()
        elif counted is not None:
            announced = (
                counted.group("paren") if counted.group("paren") is not None else counted.group("colon")
            ).strip()
            if not announced.isdigit():
                raise ToolOutputError(
                    f"logic file count is not a number: {announced!r}", Location(file=where, line=number)
                )
            count, collecting = int(announced), True
        elif line.startswith("# Tensile Library Writer DONE"):
            done = True
    return CreateLibraryLog(
        architecture=architecture, library_format=library_format, logic_files=tuple(logic_files),
        logic_file_count=count, done=done,
    )  # fmt: skip


def read_manifest(path: str | Path) -> list[Path]:
    """The files a ``TensileManifest.txt`` lists, one per line."""
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no manifest: {file}", Location(file=str(file)))
    return [Path(line.strip()) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


class CreateLibraryResult(BaseModel):
    """The files a TensileCreateLibrary run produced."""

    model_config = ConfigDict(frozen=True)

    output_dir: Path
    master_libraries: tuple[Path, ...] = ()
    """``library/TensileLibrary*.{yaml,dat}``: the master library (or one per architecture) and lazy placeholders."""
    code_objects: tuple[Path, ...] = ()
    manifest: tuple[Path, ...] = ()
    match_table: Path | None = None
    log: CreateLibraryLog = CreateLibraryLog()


def collect_create_library_outputs(
    output_dir: str | Path, *, match_table_dir: str | Path | None = None, log: CreateLibraryLog | None = None
) -> CreateLibraryResult:
    """List what a run left in ``output_dir`` and check it against the manifest.

    Raises :class:`~tensilekit.errors.ToolOutputError` naming the manifest line of the first
    listed file that does not exist.
    """
    root = Path(output_dir)
    library = root / "library"
    masters: list[Path] = []
    code_objects: list[Path] = []
    if library.is_dir():
        for path in sorted(library.rglob("*")):
            if path.name.startswith("TensileLibrary") and path.name.endswith(MASTER_SUFFIXES):
                masters.append(path)
            elif path.suffix in (".co", ".hsaco"):
                code_objects.append(path)
    manifest: list[Path] = []
    manifest_file = library / MANIFEST_NAME
    if manifest_file.is_file():
        manifest = read_manifest(manifest_file)
        for number, entry in enumerate(manifest, start=1):
            path = entry if entry.is_absolute() else root / entry
            if not path.exists():
                raise ToolOutputError(
                    f"manifest lists {entry} but it was not written", Location(file=str(manifest_file), line=number)
                )
    table = match_table_path(match_table_dir if match_table_dir is not None else root)
    return CreateLibraryResult(
        output_dir=root,
        master_libraries=tuple(masters),
        code_objects=tuple(code_objects),
        manifest=tuple(manifest),
        match_table=table if table.is_file() else None,
        log=log or CreateLibraryLog(),
    )


def run_create_library(
    runner: CommandRunner,
    config: CreateLibraryConfig,
    *,
    executable: str = DEFAULT_EXECUTABLE,
    env: Mapping[str, str | None] | None = None,
    timeout: float | None = None,
    cwd: str | Path | None = None,
) -> CreateLibraryResult:
    """Build master libraries from ``config.logic_dir`` and return what was written.

    Runs in ``cwd`` (default: the output directory, created if needed, so ``MatchTable.yaml``
    lands beside the library). Raises :class:`~tensilekit.errors.ToolFailed` for a non-zero
    exit or timeout and :class:`~tensilekit.errors.ToolOutputError` when no master library was
    written or the manifest names a missing file.
    """
    if not config.logic_dir.is_dir():
        raise InputNotFound(f"no logic directory: {config.logic_dir}", Location(file=str(config.logic_dir)))
    workdir = Path(cwd) if cwd is not None else config.output_dir
    workdir.mkdir(parents=True, exist_ok=True)
    completed = runner.run(
        build_create_library_argv(config, executable=executable), cwd=workdir, env=env, timeout=timeout
    ).check()
    log = parse_create_library_output(completed.stdout)
    result = collect_create_library_outputs(config.output_dir, match_table_dir=workdir, log=log)
    if not result.master_libraries:
        raise ToolOutputError(
            f"TensileCreateLibrary wrote no TensileLibrary*{config.library_extension}",
            Location(file=str(config.output_dir / "library")),
        )
    return result


def match_table_path(cwd: str | Path) -> Path:
    """Where a run in ``cwd`` writes ``MatchTable.yaml``: 7d9fb68's ``LibraryIO.write("MatchTable", ...)``
    (TensileCreateLibrary.py:1149) writes to the working directory, and :func:`run_create_library`
    runs the tool in the output directory unless told otherwise."""
    return Path(cwd) / MATCH_TABLE_NAME


def read_match_table(path: str | Path) -> dict[int, tuple[str, int]]:
    """``MatchTable.yaml`` -> ``{master solution index: (logic file as the tool printed it, position
    in that file's solutions)}`` (TensileCreateLibrary.py:1123-1126 @7d9fb68; the same shape in
    rocm-libraries, whose indices follow its deterministic file order).

    Raises :class:`~tensilekit.errors.InputNotFound` for a missing file and
    :class:`~tensilekit.errors.ToolOutputError` naming the file for anything else than that mapping.
    """
    from tensilekit.io.yaml_codec import parse_yaml

    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no {MATCH_TABLE_NAME}: {file}", Location(file=str(file)))
    try:
        data: Any = parse_yaml(file.read_text(encoding="utf-8"), str(file))
    except TensilekitError as error:
        raise ToolOutputError(f"{MATCH_TABLE_NAME} is not YAML: {error.message}", Location(file=str(file))) from None
    table: dict[int, tuple[str, int]] = {}
    for index, entry in (data or {}).items() if isinstance(data, dict) else [(None, data)]:
        valid = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], int)
        if not isinstance(index, int) or not valid:
            raise ToolOutputError(
                f"{MATCH_TABLE_NAME} maps solution indices to [logic file, position]; found {index!r}: {entry!r}",
                Location(file=str(file)),
            )
        table[index] = (entry[0], entry[1])
    return table


# --------------------------------------------------------------------------------------------
# Where TensileCreateLibrary finds custom kernels

CUSTOM_KERNELS_DIR = "CustomKernels"
"""``globalParameters["CustomKernelDirectory"]`` = the folder of ``Tensile/Common.py`` +
``CustomKernels`` (Common.py:270 @7d9fb68; tensilelite 0.12.1 Common.py:276; ROCm/Tensile
Common.py:300 @09ec347): ``LibraryIO.parseLibraryLogicData`` reads every ``CustomKernelName`` of a
logic file from there (LibraryIO.py:286-290 -> ``getCustomKernelConfig``, CustomKernels.py:34,67
@7d9fb68: ``<dir>/<name>.s``; rocm-libraries' also looks in sub-folders,
:func:`tensilekit.io.custom_kernels.custom_kernel_path`)."""
PROBE_TIMEOUT_S = 120.0
# ``python -v`` (PYTHONVERBOSE) names the file each module is loaded from, e.g.
#   "# code object from /x/tensilelite/Tensile/__init__.py"  (no byte-code cache)
#   "# /x/Tensile/__pycache__/__init__.cpython-311.pyc matches /x/Tensile/__init__.py"
_TENSILE_PACKAGE = re.compile(r"(?P<package>\S*/Tensile)/__init__\.py'?$")


def _imported_tensile(trace: str, cwd: Path) -> Path | None:
    """The first ``Tensile`` package a ``python -v`` trace loads (None: it loads none)."""
    for line in trace.splitlines():
        found = _TENSILE_PACKAGE.search(line.strip())
        if found is not None:
            return cwd / found.group("package").strip("'")
    return None


def custom_kernel_folder(
    runner: CommandRunner,
    executable: str = DEFAULT_EXECUTABLE,
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str | None] | None = None,
) -> tuple[Path | None, str]:
    """The ``CustomKernels`` folder the TensileCreateLibrary ``executable`` reads, and how it was
    found; ``(None, why)`` when it cannot be told or does not exist.

    It is ``CustomKernels`` beside the ``Tensile`` package the tool *imports* (:data:`CUSTOM_KERNELS_DIR`),
    so the tool is asked: ``executable --help`` runs with ``PYTHONVERBOSE=1`` and Python names the
    package it loads. That holds for every way the tool is installed -- hipBLASLt's
    ``tensilelite/Tensile/bin/TensileCreateLibrary`` (which imports an installed ``Tensile`` first,
    else ``../..``), a pip console script (the package of its python), a wrapper that runs python
    with its own ``sys.path``. A tool whose python ignores ``PYTHON*`` variables (``-E``/``-I``) says
    nothing; then the script's own place decides: ``<tree>/Tensile/bin/TensileCreateLibrary`` ->
    ``<tree>/Tensile/CustomKernels``.
    """
    where = Path(cwd) if cwd is not None else Path.cwd()
    package: Path | None = None
    try:
        completed = runner.run(
            [executable, "--help"], cwd=where, env={**(env or {}), "PYTHONVERBOSE": "1"}, timeout=PROBE_TIMEOUT_S
        )
        package = _imported_tensile(completed.stderr, where)
        how = f"the Tensile package `{executable} --help` imports" if package else "its python named no Tensile package"
    except TensilekitError as error:  # not found, timed out: the script's place may still tell
        how = f"`{executable} --help` failed: {error.message}"
    if package is None:
        found = shutil.which(executable)
        script = Path(os.path.realpath(found)) if found else None
        if script is None or script.parent.name != "bin" or not (script.parent.parent / CUSTOM_KERNELS_DIR).is_dir():
            return None, f"{how}, and {found or executable} is not in a Tensile tree's bin/"
        package = script.parent.parent
        how = f"the Tensile tree of {script} ({how})"
    folder = Path(os.path.normpath(package / CUSTOM_KERNELS_DIR))
    if not folder.is_dir():
        return None, f"{how}, which has no {CUSTOM_KERNELS_DIR} folder"
    return folder, how


def master_library_dir(output_dir: str | Path, architecture: str) -> Path | None:
    """The folder under ``output_dir/library`` that holds the master library for ``architecture``
    (None: no master was written).

    hipBLASLt uses ``HIPBLASLT_TENSILE_LIBPATH`` as is and loads ``TensileLibrary_lazy_<arch>.dat``
    (or ``TensileLibrary.dat``) from it (tensile_host.cpp:1260-1440 @7d9fb68), so a benchmark must
    point at this folder: ``library/`` for 7d9fb68's TensileCreateLibrary (TensileCreateLibrary.py:985
    @7d9fb68), ``library/<arch>/`` for rocm-libraries' (``libraryDir`` in TensileCreateLibrary/Run.py
    @00ee1f9d). Lazy masters are looked for first, then per-architecture ones, then a single one.
    """
    library = Path(output_dir) / "library"
    base = architecture.split(":")[0]
    for stem in (f"TensileLibrary_lazy_{base}", f"TensileLibrary_{base}", "TensileLibrary"):
        for extension in (".dat", ".dat.zlib", ".yaml"):
            found = sorted(library.rglob(stem + extension), key=lambda path: (len(path.parts), path))
            if found:
                return found[0].parent
    return None


def expected_master_names(config: CreateLibraryConfig, architectures: Sequence[str]) -> list[str]:
    """The master library file names the tool writes for ``architectures`` (placeholders aside)."""
    extension = config.library_extension
    if config.lazy:
        return [f"TensileLibrary_lazy_{arch}{extension}" for arch in architectures]
    # rocm-libraries always writes one master per architecture (Run.py @9369dd85: no plain
    # TensileLibrary.dat mode, hipblaslt-2026-interfaces.md §2 "output layout (G1)").
    if config.separate_architectures or config.flavor is CreateLibraryFlavor.ROCM_LIBRARIES:
        return [f"TensileLibrary_{arch}{extension}" for arch in architectures]
    return [f"TensileLibrary{extension}"]


__all__ = [
    "CUSTOM_KERNELS_DIR",
    "DEFAULT_EXECUTABLE",
    "MANIFEST_NAME",
    "MASTER_SUFFIXES",
    "MATCH_TABLE_NAME",
    "CreateLibraryConfig",
    "CreateLibraryFlavor",
    "CreateLibraryLog",
    "CreateLibraryResult",
    "build_create_library_argv",
    "collect_create_library_outputs",
    "custom_kernel_folder",
    "expected_master_names",
    "master_library_dir",
    "match_table_path",
    "parse_create_library_output",
    "read_manifest",
    "read_match_table",
    "run_create_library",
]

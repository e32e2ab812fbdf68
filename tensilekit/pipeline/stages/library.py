"""Stage ``library``: which logic-file solution each solution a benchmark reports is (``catalog.json``).

hipblaslt-bench reports a solution by its index in the library it loaded and that library's
``name``; neither is in the logic files (TensileCreateLibrary numbers solutions in file-read
order and names them over the whole build). The tuned library needs each winner's full solution
record, so this stage maps, per GEMM type of the workload, every solution to
``(logic file, list position)`` (:mod:`tensilekit.tools.library_index`):

* real runs choose the library every reference run loads (:func:`_reference_library`):
  ``--reference-library``, else the one hipBLASLt finds (:mod:`tensilekit.tools.hipblaslt_library`)
  when tensilekit can read it, else ``--library-logic`` built by the run's TensileCreateLibrary.
  A library this run built is indexed by its own ``MatchTable.yaml`` (identity by construction);
  another one's records are matched to tensilekit's build of ``--library-logic`` (AMD's names and
  match table, custom kernels from where TensileCreateLibrary reads them), and a library not built
  from ``--library-logic`` is reported;
* simulated runs write the simulated library's logic files to ``logic/`` and index those by the
  names the SIMULATED bench prints.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tensilekit.api import logic_inputs
from tensilekit.errors import InputNotFound, StageFailed, TensilekitError
from tensilekit.io.installed_library import InstalledLibrary, find_masters
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult, relative_to_root
from tensilekit.pipeline.stages.common import (
    INGEST,
    LIBRARY,
    TCL_DIR,
    TuneStage,
    create_library,
    load_gemms,
    read_json,
)
from tensilekit.tools.create_library import (
    CUSTOM_KERNELS_DIR,
    custom_kernel_folder,
    match_table_path,
    read_match_table,
)
from tensilekit.tools.hipblaslt_bench import LIBRARY_PATH_ENV
from tensilekit.tools.hipblaslt_library import locate_hipblaslt_library
from tensilekit.tools.library_index import (
    LogicIndex,
    catalog_of,
    index_build,
    index_installed,
    index_logic_folder,
    resolve,
)
from tensilekit.tools.problem_types import (
    logic_type_key,
    problem_type_key,
    solution_names,
    type_key_text,
)
from tensilekit.tools.runner import SubprocessRunner
from tensilekit.tools.toolset import Toolset
from tensilekit.workload.problem import GemmProblem

CATALOG_FILE = "catalog.json"
LOGIC_DIR = "logic"


def lookup(
    catalog: Mapping[str, Any], problem: GemmProblem, name: str | None, index: int | None = None
) -> list[int] | None:
    """``[source, position]`` of the solution a benchmark printed as ``index`` / ``name`` for a
    problem's type, or None (:func:`~tensilekit.tools.library_index.resolve` says why)."""
    return resolve(catalog, type_key_text(problem_type_key(problem)), name, index).location


class LibraryStage(TuneStage):
    """Index the solutions a benchmark can report -> logic file and position (``catalog.json``)."""

    name = LIBRARY
    version = "4"
    inputs = (INGEST,)
    outputs = (CATALOG_FILE,)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        values: dict[str, Any] = {"arch": config.arch, "simulate": config.simulate}
        if config.simulate and config.library_logic is not None:
            values["library_logic"] = str(config.library_logic)
            values["custom_kernels"] = None if config.custom_kernels is None else str(config.custom_kernels)
        if not config.simulate:
            values["reference_library"] = None if config.reference_library is None else str(config.reference_library)
            values["custom_kernels"] = None if config.custom_kernels is None else str(config.custom_kernels)
            values["create_library"] = config.create_library_executable
            # where hipBLASLt looks for its library (tools/hipblaslt_library.py): another place, another reference
            values["environment"] = {name: os.environ.get(name) for name in (LIBRARY_PATH_ENV, "ROCM_PATH")}
        return values

    def input_files(self, config: TuneConfig) -> list[Path]:
        if config.library_logic is None:
            return []
        if config.simulate:
            return [config.library_logic]
        return [config.library_logic, *([config.reference_library] if config.reference_library else [])]

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        gemms = load_gemms(context)
        wanted: dict[tuple[str, ...], GemmProblem] = {}
        for gemm in gemms:
            wanted.setdefault(problem_type_key(gemm.problem), gemm.problem)
        if not config.simulate:
            return self._index_real(context, config, wanted)
        # The SIMULATED tools load logic files themselves: their own catalogue or --library-logic.
        toolset = config.toolset()
        if config.library_logic is not None:
            return self._index_tools_logic(context, config, toolset, wanted)
        folder = context.own_dir(context.path(LOGIC_DIR))
        written: list[str] = []
        for problem in wanted.values():
            name, logic = toolset.catalogue_logic(config.arch, problem)
            dump_logic(logic, folder / name, AMD_LOGIC_STYLE)
            written.append(name)
        for stale in folder.glob("*.yaml"):
            if stale.name not in written:
                stale.unlink()
        context.record(folder)
        origin = f"{toolset.label} library for {config.arch}"
        # The tools' bench prints their own logic files' names: identity by name.
        sources: list[str] = []
        solutions: dict[str, dict[str, list[int]]] = {}
        for path in [folder / name for name in sorted(written)]:
            logic = load_logic(path)
            key = logic_type_key(logic.problem_type)
            if key is None or key not in wanted:
                continue
            source = len(sources)
            sources.append(relative_to_root(path, context.run_root))
            named = solutions.setdefault(type_key_text(key), {})
            for position, name in solution_names(logic):
                named.setdefault(name, [source, position])
        if not solutions:
            raise StageFailed(f"no solutions for the workload's GEMM types in {origin}")
        context.write_json(
            context.path(CATALOG_FILE),
            {"origin": origin, "data": config.data_label, "sources": sources, "solutions": solutions, "skipped": []},
        )
        count = sum(len({tuple(entry) for entry in named.values()}) for named in solutions.values())
        return StageResult(summary=f"{count} solution(s) in {len(sources)} logic file(s) from {origin}")

    @staticmethod
    def _index_tools_logic(
        context: StageContext, config: TuneConfig, toolset: Toolset, wanted: dict[tuple[str, ...], GemmProblem]
    ) -> StageResult:
        """``--simulate --library-logic DIR``: the SIMULATED library is DIR's logic files, and the
        SIMULATED bench prints the indices and names tensilekit's build of DIR gives them
        (:meth:`~tensilekit.tools.toolset.Toolset.index_library_logic`), so solutions are
        identified by index as in a real run whose installed library was built from DIR."""
        root = Path(str(config.library_logic))
        built, _ = toolset.index_library_logic(root, config.arch, config.custom_kernels)
        if not any(item.type_key in wanted for item in built.solutions):
            raise StageFailed(
                f"no solutions for the workload's GEMM types ({', '.join(type_key_text(key) for key in wanted)}) "
                f"in the {config.arch} logic files of {root}"
            )
        sources = list(dict.fromkeys(item.source for item in built.solutions))
        catalog = catalog_of(built, sources, None, types=wanted)
        catalog["identity"]["indices_from"] = f"the {toolset.label} bench over the build of {root}"
        context.write_json(
            context.path(CATALOG_FILE),
            {"origin": f"{toolset.label} library: {root}", "data": config.data_label, "sources": sources, **catalog,
             "reference_library": None, "skipped": built.skipped},
        )  # fmt: skip
        count = sum(item.type_key in wanted for item in built.solutions)
        return StageResult(
            summary=f"{count} solution(s) of the workload's types in {len(sources)} logic file(s) from {root} "
            f"({toolset.label} library)",
            notes=tuple(f"skipped logic file {item}" for item in built.skipped[:5]),
        )

    @staticmethod
    def _index_real(
        context: StageContext, config: TuneConfig, wanted: dict[tuple[str, ...], GemmProblem]
    ) -> StageResult:
        """Choose the library every reference run loads (:func:`_reference_library`) and map its
        indices to logic files: by the ``MatchTable.yaml`` of the build when this run built it
        (identity by construction), else by matching its records to tensilekit's build of
        ``--library-logic`` (:func:`~tensilekit.tools.library_index.catalog_of`)."""
        if config.library_logic is None:
            raise StageFailed("real runs need --library-logic DIR (the logic files hipBLASLt was built from)")
        root = Path(config.library_logic)
        notes: list[str] = []
        reference = _reference_library(context, config, notes)
        custom: CustomKernelFolder | None = None
        if reference.built is not None:
            built = index_of_build(reference.built, reference.folder, config.arch)
            installed = None
        else:
            custom = CustomKernelFolder(config.custom_kernels, config.create_library_executable)
            built, _ = index_logic_folder(root, config.arch, custom)
            installed = reference.records
        skipped = built.skipped
        notes += [f"skipped logic file {item}" for item in skipped[:5]]
        if not any(item.type_key in wanted for item in built.solutions):
            why = f"; skipped: {'; '.join(skipped[:3])}" if skipped else ""
            raise StageFailed(
                f"no solutions for the workload's GEMM types ({', '.join(type_key_text(key) for key in wanted)}) "
                f"in the {config.arch} logic files of {root}{why}"
            )
        sources = list(dict.fromkeys(item.source for item in built.solutions))
        described = f"{reference.folder} ({reference.found})"
        catalog = catalog_of(built, sources, installed, types=wanted, built_is_reference=reference.built is not None)
        identity = catalog["identity"]
        unmatched = identity["installed_not_in_logic"]
        if unmatched:
            notes.append(
                f"the reference library ({described}) is not the one built from {root}: {unmatched} of its "
                f"{identity['installed_solutions']} solutions are not in it (e.g. indices "
                f"{', '.join(map(str, identity['installed_not_in_logic_sample']))}); those are not tuned"
            )
        if not catalog["indices"]:
            notes.append(f"none of the reference library's solutions of the workload's types is in {root}")
        if custom is not None and custom.found is not None:
            notes.append(f"custom kernels: {custom.folder or 'not found'} ({custom.found})")
        context.write_json(
            context.path(CATALOG_FILE),
            {
                "origin": str(root),
                "data": config.data_label,
                "sources": sources,
                **catalog,
                "reference_library": {
                    "folder": str(reference.folder), "found": reference.found, "identity": identity["indices_from"],
                },
                "reference_library_dir": (
                    relative_to_root(reference.folder, context.run_root)
                    if reference.folder.is_relative_to(context.run_root) else str(reference.folder)
                ),
                "custom_kernels": (
                    None if custom is None or custom.found is None
                    else {"folder": None if custom.folder is None else str(custom.folder), "found": custom.found}
                ),
                "skipped": skipped,
            },
        )  # fmt: skip
        return StageResult(
            summary=(
                f"{sum(item.type_key in wanted for item in built.solutions)} solution(s) of the workload's types "
                f"in {len(sources)} logic file(s); reference library {described}"
            ),
            notes=tuple(notes),
        )


class CustomKernelFolder:
    """The custom-kernel lookup of tensilekit's build of ``--library-logic``: ``--custom-kernels``,
    else the folder the run's TensileCreateLibrary reads
    (:func:`~tensilekit.tools.create_library.custom_kernel_folder`), looked for only when a logic
    file names a custom kernel. ``folder`` / ``found`` say what was used (``found`` None: not needed)."""

    def __init__(self, given: Path | None, create_library_executable: str) -> None:
        self._executable = create_library_executable
        self.folder: Path | None = given
        self.found: str | None = None if given is None else f"--custom-kernels {given}"
        self._reader: Callable[[str], Mapping[str, Any]] | None = None

    def __call__(self, name: str) -> Mapping[str, Any]:
        if self._reader is None:
            if self.found is None:
                self.folder, self.found = custom_kernel_folder(SubprocessRunner(), self._executable)
            if self.folder is None:
                raise InputNotFound(
                    f"custom kernel {name!r}: TensileCreateLibrary's {CUSTOM_KERNELS_DIR} folder was not found "
                    f"({self.found}); give hipBLASLt's tensilelite/Tensile/{CUSTOM_KERNELS_DIR} with --custom-kernels"
                )
            from tensilekit.io.custom_kernels import custom_kernel_reader

            self._reader = custom_kernel_reader(self.folder)
        return self._reader(name)


@dataclasses.dataclass(frozen=True)
class ReferenceLibrary:
    """The library every reference run loads (``HIPBLASLT_TENSILE_LIBPATH``), and how it was found."""

    folder: Path
    found: str
    built: Path | None = None
    """The TensileCreateLibrary output folder when this run built it (its ``MatchTable.yaml`` beside)."""
    records: dict[int, tuple[str, str]] | None = None
    """``{index: (name, identity)}`` of a library this run did not build."""


def _reference_library(context: StageContext, config: TuneConfig, notes: list[str]) -> ReferenceLibrary:
    """The library every reference run loads. In order:

    1. ``--reference-library DIR``: that library, or, when DIR holds logic files, their build by the
       run's TensileCreateLibrary (GEKO's custom reference library);
    2. the library hipBLASLt finds by itself (:func:`~tensilekit.tools.hipblaslt_library.locate_hipblaslt_library`:
       an exported ``HIPBLASLT_TENSILE_LIBPATH``, else beside ``libhipblaslt.so``) when tensilekit can
       read it -- every reference run is then pointed at it explicitly, so the bench loads the very
       library the solutions were identified in; an exported ``HIPBLASLT_TENSILE_LIBPATH`` that
       cannot be read fails the stage (hipBLASLt would load it);
    3. otherwise ``--library-logic`` built by the run's TensileCreateLibrary as a whole folder.
    """
    if config.reference_library is not None:
        given = Path(config.reference_library)
        if find_masters(given) or not any(given.rglob("*.yaml")):
            return ReferenceLibrary(given, f"--reference-library {given}", records=_library_records(given, config.arch))
        return ReferenceLibrary(
            create_library(context, config, given),
            f"--reference-library {given} built by TensileCreateLibrary",
            context.path(TCL_DIR),
        )
    located, found = locate_hipblaslt_library(config.arch, bench=config.bench_executable)
    if located is not None:
        try:
            return ReferenceLibrary(located, found, records=_library_records(located, config.arch))
        except TensilekitError as error:
            if os.environ.get(LIBRARY_PATH_ENV):
                raise StageFailed(
                    f"{found}: hipblaslt-bench loads that library as it is, and tensilekit cannot read it: {error}"
                ) from None
            found = f"hipBLASLt's library at {located} ({found}) cannot be read: {error}"
    logic = Path(str(config.library_logic))
    built = create_library(context, config, logic)
    notes.append(
        f"no installed hipBLASLt library could be read ({found}): the reference library is --library-logic "
        f"{logic} built by TensileCreateLibrary, and every reference run loads it"
    )
    return ReferenceLibrary(
        built,
        f"--library-logic {logic} built by TensileCreateLibrary (no installed library could be read: {found})",
        context.path(TCL_DIR),
    )


def _solution_records(folder: Path, arch: str) -> list[dict[str, Any]]:
    """Every ``arch`` solution record of the library in ``folder`` (lazy shards read)."""
    library = InstalledLibrary(folder)
    records: list[dict[str, Any]] = []
    for master in library.choose(arch):
        records += library.materialize(master).to_raw().get("solutions", [])
    return records


def _library_records(folder: Path, arch: str) -> dict[int, tuple[str, str]]:
    """``{index: (name, identity)}`` of every ``arch`` solution of the library in ``folder``."""
    return index_installed(_solution_records(folder, arch))


def index_of_build(output: Path, folder: Path, arch: str) -> LogicIndex:
    """The solutions of the library TensileCreateLibrary built into ``output`` (master in
    ``folder``), each at the ``[logic file, position]`` its ``MatchTable.yaml`` gives."""
    records = _solution_records(folder, arch)
    # the files as the tool printed them; a relative one is relative to where it ran (the output folder)
    table = {
        index: (str(output / source), position)
        for index, (source, position) in read_match_table(match_table_path(output)).items()
    }
    types: dict[str, tuple[str, ...] | None] = {}
    for source in dict.fromkeys(source for source, _ in table.values()):
        (_, data), *_ = logic_inputs([source])[0]
        types[source] = logic_type_key(data[4]) if isinstance(data, list) and isinstance(data[4], Mapping) else None
    return index_build(records, table, types)


def reference_library_dir(context: StageContext) -> str | None:
    """``HIPBLASLT_TENSILE_LIBPATH`` of every reference run of a real run: the library stage's
    choice (:func:`_reference_library`); None for simulated runs."""
    config: TuneConfig = context.config
    if config.simulate:
        return None
    folder = read_json(context.upstream_path(LIBRARY, CATALOG_FILE)).get("reference_library_dir")
    if folder is None:
        raise StageFailed(f"{CATALOG_FILE} of stage {LIBRARY} names no reference library: rerun --from-stage library")
    return str(context.run_root / folder)


def catalog_source(run_root: Path, catalog: dict[str, Any], index: int) -> Path:
    """The logic file a catalog entry points at (relative entries are inside the run directory)."""
    path = Path(catalog["sources"][index])
    return path if path.is_absolute() else run_root / path


__all__ = [
    "CATALOG_FILE",
    "LOGIC_DIR",
    "CustomKernelFolder",
    "LibraryStage",
    "ReferenceLibrary",
    "catalog_source",
    "index_logic_folder",
    "index_of_build",
    "logic_type_key",
    "lookup",
    "problem_type_key",
    "reference_library_dir",
    "solution_names",
    "type_key_text",
]

"""Stage ``library``: which logic-file solution each solution a benchmark reports is (``catalog.json``).

hipblaslt-bench reports a solution by its index in the library it loaded and that library's
``name``; neither is in the logic files (TensileCreateLibrary numbers solutions in file-read
order and names them over the whole build). The tuned library needs each winner's full solution
record, so this stage maps, per GEMM type of the workload, every solution to
``(logic file, list position)`` (:mod:`tensilekit.pipeline.library_index`):

* real runs build ``--library-logic DIR`` as TensileCreateLibrary does (its names and its
  ``MatchTable``) and read the library hipblaslt-bench loads (``--reference-library``, else where
  hipBLASLt looks: :mod:`tensilekit.tools.hipblaslt_library`); its indices are matched to the
  build's records, and a library not built from ``--library-logic`` is reported;
* simulated runs write the simulated library's logic files to ``logic/`` and index those by the
  names the SIMULATED bench prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tensilekit.api import logic_inputs
from tensilekit.errors import StageFailed, TensilekitError
from tensilekit.io.installed_library import InstalledLibrary, find_masters
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE
from tensilekit.model.logic import LogicFile, ProblemType
from tensilekit.model.tensile_parameters import TENSILELITE_DATA_TYPE_BY_CODE
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.library_index import LogicIndex, catalog_of, index_installed, index_logic, resolve
from tensilekit.pipeline.simulate import (
    COMPUTE_TYPE_CODES,
    SIMULATED,
    TENSILELITE_TYPE_CODES,
    library_logic,
)
from tensilekit.pipeline.stage import StageContext, StageResult, relative_to_root
from tensilekit.pipeline.stages.common import INGEST, LIBRARY, TuneStage, create_library, load_gemms, read_json
from tensilekit.tools.hipblaslt_library import locate_hipblaslt_library
from tensilekit.workload.problem import GemmProblem, compute_input_letters, compute_type_for_letters

CATALOG_FILE = "catalog.json"
LOGIC_DIR = "logic"

_TYPE_NAMES = {code: name for name, code in reversed(TENSILELITE_TYPE_CODES.items())}
_COMPUTE_NAMES = {code: name for name, code in COMPUTE_TYPE_CODES.items()}
_MIXED_FP8_PARTS = {(13, 13): (11, 12), (14, 14): (12, 11)}
"""Mixed fp8 (DataType 13 F8B8 / 14 B8F8, DataTypeA/B derived equal) -> the (A, B) fp8 codes."""
_FP8 = {"f8_fnuz_r": "f8_r", "bf8_fnuz_r": "bf8_r", "f8_ocp_r": "f8_r", "bf8_ocp_r": "bf8_r"}


def problem_type_key(problem: GemmProblem) -> tuple[str, ...]:
    """What a logic file's problem type must match: transposes, A/B/D types, compute type.

    The compute type is the one :func:`type_key_compute` gives: a fast type (``c_f32_fast_f16_r``)
    only where it changes the type the MFMA reads (f8 x f16), so f16 x f16 with
    ``c_f32_fast_f16_r`` is served by the same logic files as with ``c_f32_r``, as in hipBLASLt.
    """
    a, b, d = (_FP8.get(name, name) for name in (problem.a_type, problem.b_type, problem.d_type))
    compute = compute_type_for_letters(a, b, problem.compute_type, compute_input_letters(a, b, problem.compute_type))
    return (problem.trans_a, problem.trans_b, a, b, d, compute or problem.compute_type)


def type_key_text(key: tuple[str, ...]) -> str:
    """A problem-type key as the catalog writes it (``T,N,bf16_r,bf16_r,bf16_r,c_f32_r``)."""
    return ",".join(key)


def lookup(
    catalog: Mapping[str, Any], problem: GemmProblem, name: str | None, index: int | None = None
) -> list[int] | None:
    """``[source, position]`` of the solution a benchmark printed as ``index`` / ``name`` for a
    problem's type, or None (:func:`~tensilekit.pipeline.library_index.resolve` says why)."""
    return resolve(catalog, type_key_text(problem_type_key(problem)), name, index).location


def _bool(value: Any) -> bool:
    return bool(value) and value not in ("false", "False", 0)


def logic_type_key(problem_type: ProblemType | Mapping[str, Any]) -> tuple[str, ...] | None:
    """The :func:`problem_type_key` of a tensilelite problem type, model or raw (None if not a plain GEMM type)."""
    raw = problem_type if isinstance(problem_type, Mapping) else problem_type.model_dump(by_alias=True)
    data_type = raw.get("DataType")
    a_code = data_type if raw.get("DataTypeA") is None else raw["DataTypeA"]
    b_code = data_type if raw.get("DataTypeB") is None else raw["DataTypeB"]
    if isinstance(a_code, int) and isinstance(b_code, int):
        a_code, b_code = _MIXED_FP8_PARTS.get((a_code, b_code), (a_code, b_code))
    d_code = raw.get("DestDataType", data_type)
    compute_code = raw.get("ComputeDataType", d_code)
    names = [_TYPE_NAMES.get(code) if isinstance(code, int) else None for code in (a_code, b_code, d_code)]
    if any(name is None for name in names) or not isinstance(compute_code, int):
        return None
    compute = _COMPUTE_NAMES.get(compute_code)
    if compute is None:
        return None
    if compute == "c_f32_r" and raw.get("F32XdlMathOp") == 10:
        compute = "c_xf32_r"
    data_info = TENSILELITE_DATA_TYPE_BY_CODE.get(data_type) if isinstance(data_type, int) else None
    if data_info is None:
        return None
    a_name, b_name, d_name = (name or "" for name in names)
    keyed = compute_type_for_letters(a_name, b_name, compute, data_info.char)
    if keyed is None:  # an MFMA input type no hipBLASLt compute type selects for these A and B
        return None
    trans_a = "T" if _bool(raw.get("TransposeA")) else "N"
    trans_b = "T" if _bool(raw.get("TransposeB")) else "N"
    return (trans_a, trans_b, a_name, b_name, d_name, keyed)


def solution_names(logic: LogicFile) -> Iterable[tuple[int, str]]:
    """``(position, name)`` for every name a solution is known by (min name, kernel name, custom)."""
    for position, solution in enumerate(logic.solutions):
        seen: set[str] = set()
        for name in (solution.solution_name_min, solution.kernel_name_min, solution.custom_kernel_name):
            if name and name not in seen:
                seen.add(name)
                yield position, name


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
        if config.library_logic is not None:
            return self._index_simulated_logic(context, config, wanted)
        folder = context.own_dir(context.path(LOGIC_DIR))
        written: list[str] = []
        for problem in wanted.values():
            name, logic = library_logic(config.arch, problem)
            dump_logic(logic, folder / name, AMD_LOGIC_STYLE)
            written.append(name)
        for stale in folder.glob("*.yaml"):
            if stale.name not in written:
                stale.unlink()
        context.record(folder)
        origin = f"{SIMULATED} library for {config.arch}"
        # The SIMULATED bench prints the simulated logic files' own names: identity by name.
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
    def _index_simulated_logic(
        context: StageContext, config: TuneConfig, wanted: dict[tuple[str, ...], GemmProblem]
    ) -> StageResult:
        """``--simulate --library-logic DIR``: the SIMULATED library is DIR's logic files, and the
        SIMULATED bench prints the indices and names tensilekit's build of DIR gives them
        (:func:`~tensilekit.pipeline.simulate.logic_index`), so solutions are identified by index
        as in a real run whose installed library was built from DIR."""
        from tensilekit.pipeline.simulate import logic_index

        root = Path(str(config.library_logic))
        built, _ = logic_index(
            str(root), config.arch, None if config.custom_kernels is None else str(config.custom_kernels)
        )
        if not any(item.type_key in wanted for item in built.solutions):
            raise StageFailed(
                f"no solutions for the workload's GEMM types ({', '.join(type_key_text(key) for key in wanted)}) "
                f"in the {config.arch} logic files of {root}"
            )
        sources = list(dict.fromkeys(item.source for item in built.solutions))
        catalog = catalog_of(built, sources, None, None, types=wanted)
        catalog["identity"]["indices_from"] = f"the {SIMULATED} bench over the build of {root}"
        context.write_json(
            context.path(CATALOG_FILE),
            {"origin": f"{SIMULATED} library: {root}", "data": config.data_label, "sources": sources, **catalog,
             "reference_library": None, "skipped": built.skipped},
        )  # fmt: skip
        count = sum(item.type_key in wanted for item in built.solutions)
        return StageResult(
            summary=f"{count} solution(s) of the workload's types in {len(sources)} logic file(s) from {root} "
            f"({SIMULATED} library)",
            notes=tuple(f"skipped logic file {item}" for item in built.skipped[:5]),
        )

    @staticmethod
    def _index_real(
        context: StageContext, config: TuneConfig, wanted: dict[tuple[str, ...], GemmProblem]
    ) -> StageResult:
        """Build ``--library-logic`` as TensileCreateLibrary does and read the library the bench
        loads; the catalog maps its indices (and the build's names) to logic files."""
        if config.library_logic is None:
            raise StageFailed("real runs need --library-logic DIR (the logic files hipBLASLt was built from)")
        root = Path(config.library_logic)
        built, _ = index_logic_folder(root, config.arch, config.custom_kernels)
        skipped = built.skipped
        if not any(item.type_key in wanted for item in built.solutions):
            why = f"; skipped: {'; '.join(skipped[:3])}" if skipped else ""
            raise StageFailed(
                f"no solutions for the workload's GEMM types ({', '.join(type_key_text(key) for key in wanted)}) "
                f"in the {config.arch} logic files of {root}{why}"
            )

        notes: list[str] = [f"skipped logic file {item}" for item in skipped[:5]]
        installed, installed_origin, built_reference = _read_installed(context, config, notes)
        sources = list(dict.fromkeys(item.source for item in built.solutions))
        catalog = catalog_of(built, sources, installed, installed_origin, types=wanted)
        identity = catalog["identity"]
        if installed is not None:
            matched = sum(len(entries) for entries in catalog["indices"].values())
            unmatched = identity["installed_not_in_logic"]
            if unmatched:
                notes.append(
                    f"the installed library ({installed_origin}) is not the one built from {root}: {unmatched} of its "
                    f"{len(installed)} solutions are not in it (e.g. indices "
                    f"{', '.join(map(str, identity['installed_not_in_logic_sample']))}); those are not tuned"
                )
            if not matched:
                notes.append(f"none of the installed library's solutions of the workload's types is in {root}")
        else:
            notes.append(
                f"identifying solutions by the names the build of {root} gives them (the installed library was not "
                f"read: {installed_origin}); pass --reference-library DIR to identify them by index"
            )
        context.write_json(
            context.path(CATALOG_FILE),
            {
                "origin": str(root),
                "data": config.data_label,
                "sources": sources,
                **catalog,
                "reference_library": None if installed is None else installed_origin,
                "reference_library_dir": (
                    None if built_reference is None else relative_to_root(built_reference, context.run_root)
                ),
                "skipped": skipped,
            },
        )
        return StageResult(
            summary=(
                f"{sum(item.type_key in wanted for item in built.solutions)} solution(s) of the workload's types "
                f"in {len(sources)} logic file(s) from "
                f"{root}; indices from {identity['indices_from']}"
            ),
            notes=tuple(notes),
        )


def index_logic_folder(root: Path, arch: str, custom_kernels: Path | None) -> tuple[LogicIndex, dict[str, Any]]:
    """Every ``arch`` logic file under ``root`` built as TensileCreateLibrary builds them
    (:func:`~tensilekit.pipeline.library_index.index_logic`; files it cannot build are in
    ``skipped`` with the reason), and the parsed files by path."""
    inputs: list[tuple[str, Any]] = []
    skipped: list[str] = []
    for path in sorted(root.rglob("*.yaml")):
        if not _may_serve(path, arch):
            continue
        try:
            found, dialect = logic_inputs([path])
        except TensilekitError as error:
            skipped.append(f"{path}: {error}")
            continue
        if dialect == "tensilelite":
            inputs.extend(found)
        else:
            skipped.append(f"{path}: a Tensile (rocBLAS) logic file; hipblaslt-bench runs tensilelite libraries")
    built = index_logic(inputs, arch, logic_type_key, custom_kernel_config=_custom_kernels(custom_kernels))
    return LogicIndex(built.solutions, [*skipped, *built.skipped]), dict(inputs)


def _may_serve(path: Path, arch: str) -> bool:
    """Whether a logic file may be for ``arch`` (cheap: its header names it; the build decides)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(4096)
    except OSError:
        return True  # the build reports it
    return arch.encode() in head or b"fallback" in head


def _custom_kernels(folder: Path | None) -> Any:
    if folder is None:
        return None
    from tensilekit.io.custom_kernels import custom_kernel_reader

    return custom_kernel_reader(folder)


def _reference_folder(context: StageContext, config: TuneConfig) -> tuple[Path | None, str, Path | None]:
    """The library every reference run loads, how it was found, and the folder this stage built it
    into when ``--reference-library`` is a logic folder (GEKO's custom reference library)."""
    if config.reference_library is None:
        folder, origin = locate_hipblaslt_library(config.arch, bench=config.bench_executable)
        return folder, origin, None
    given = Path(config.reference_library)
    if find_masters(given) or not any(given.rglob("*.yaml")):
        return given, f"--reference-library {given}", None
    built = create_library(context, config, given)  # logic files: build them as the install was built
    return built, f"--reference-library {given}, built with TensileCreateLibrary", built


def _read_installed(
    context: StageContext, config: TuneConfig, notes: list[str]
) -> tuple[dict[int, tuple[str, str]] | None, str, Path | None]:
    """The solutions of the library hipblaslt-bench loads (:func:`_reference_folder`), or None and
    why not; and the folder built from ``--reference-library`` logic, if any."""
    folder, origin, built = _reference_folder(context, config)
    if folder is None:
        return None, origin, None
    try:
        library = InstalledLibrary(folder)
        records: list[dict[str, Any]] = []
        for master in library.choose(config.arch):
            records += library.materialize(master).to_raw().get("solutions", [])
    except TensilekitError as error:
        if config.reference_library is not None:
            raise
        notes.append(f"cannot read hipBLASLt's library at {folder} ({origin}): {error}")
        return None, f"{folder} could not be read", None
    return index_installed(records), f"{folder}, {origin}", built


def reference_library_dir(context: StageContext) -> str | None:
    """``HIPBLASLT_TENSILE_LIBPATH`` of every reference run: ``--reference-library`` (or this
    stage's build of it, when it is a logic folder); None: the library hipBLASLt finds itself."""
    config: TuneConfig = context.config
    if config.simulate or config.reference_library is None:
        return None
    built = read_json(context.upstream_path(LIBRARY, CATALOG_FILE)).get("reference_library_dir")
    return str(context.run_root / built) if built else str(config.reference_library)


def catalog_source(run_root: Path, catalog: dict[str, Any], index: int) -> Path:
    """The logic file a catalog entry points at (relative entries are inside the run directory)."""
    path = Path(catalog["sources"][index])
    return path if path.is_absolute() else run_root / path


__all__ = [
    "CATALOG_FILE",
    "LOGIC_DIR",
    "LibraryStage",
    "catalog_source",
    "index_logic_folder",
    "logic_type_key",
    "lookup",
    "problem_type_key",
    "reference_library_dir",
    "solution_names",
    "type_key_text",
]

"""Stage ``library``: index the solutions the search may pick, by name, in their logic files.

hipblaslt-bench reports a solution by index and name; the index is only valid for one library
build, the name is stable. The tuned library needs each winner's full solution record, so this
stage maps every solution name of the workload's GEMM types, per GEMM type, to
``(logic file, list position)``:

* real runs read ``--library-logic DIR`` (the logic files the installed hipBLASLt was built
  from; only files whose name and problem type match a workload GEMM type are loaded);
* simulated runs write the simulated library's logic files to ``logic/`` and index those.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tensilekit.errors import StageFailed, TensilekitError
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE
from tensilekit.model.logic import LogicFile, ProblemType
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.simulate import (
    COMPUTE_TYPE_CODES,
    SIMULATED,
    TENSILELITE_TYPE_CODES,
    library_logic,
    problem_type_name,
)
from tensilekit.pipeline.stage import StageContext, StageResult, relative_to_root
from tensilekit.pipeline.stages.common import INGEST, LIBRARY, TuneStage, load_gemms
from tensilekit.workload.problem import GemmProblem

CATALOG_FILE = "catalog.json"
LOGIC_DIR = "logic"

_TYPE_NAMES = {code: name for name, code in reversed(TENSILELITE_TYPE_CODES.items())}
_COMPUTE_NAMES = {code: name for name, code in COMPUTE_TYPE_CODES.items()}
_MIXED_FP8_PARTS = {(13, 13): (11, 12), (14, 14): (12, 11)}
"""Mixed fp8 (DataType 13 F8B8 / 14 B8F8, DataTypeA/B derived equal) -> the (A, B) fp8 codes."""
_FP8 = {"f8_fnuz_r": "f8_r", "bf8_fnuz_r": "bf8_r", "f8_ocp_r": "f8_r", "bf8_ocp_r": "bf8_r"}


def problem_type_key(problem: GemmProblem) -> tuple[str, ...]:
    """What a logic file's problem type must match: transposes, A/B/D types, compute type."""
    a, b, d = (_FP8.get(name, name) for name in (problem.a_type, problem.b_type, problem.d_type))
    return (problem.trans_a, problem.trans_b, a, b, d, problem.compute_type)


def type_key_text(key: tuple[str, ...]) -> str:
    """A problem-type key as the catalog writes it (``T,N,bf16_r,bf16_r,bf16_r,c_f32_r``)."""
    return ",".join(key)


def lookup(catalog: dict[str, Any], problem: GemmProblem, name: str | None) -> list[int] | None:
    """``[source, position]`` of a solution name for a problem's type, or None."""
    if name is None:
        return None
    entry = catalog["solutions"].get(type_key_text(problem_type_key(problem)), {}).get(name)
    return None if entry is None else list(entry)


def _bool(value: Any) -> bool:
    return bool(value) and value not in ("false", "False", 0)


def logic_type_key(problem_type: ProblemType) -> tuple[str, ...] | None:
    """The :func:`problem_type_key` of a tensilelite problem type (None if not a plain GEMM type)."""
    raw = problem_type.model_dump(by_alias=True)
    data_type = raw.get("DataType")
    a_code = data_type if raw.get("DataTypeA") is None else raw["DataTypeA"]
    b_code = data_type if raw.get("DataTypeB") is None else raw["DataTypeB"]
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
    trans_a = "T" if _bool(raw.get("TransposeA")) else "N"
    trans_b = "T" if _bool(raw.get("TransposeB")) else "N"
    return (trans_a, trans_b, *(name or "" for name in names), compute)


def solution_names(logic: LogicFile) -> Iterable[tuple[int, str]]:
    """``(position, name)`` for every name a solution is known by (min name, kernel name, custom)."""
    for position, solution in enumerate(logic.solutions):
        seen: set[str] = set()
        for name in (solution.solution_name_min, solution.kernel_name_min, solution.custom_kernel_name):
            if name and name not in seen:
                seen.add(name)
                yield position, name


class LibraryStage(TuneStage):
    """Index solution names -> logic file and position (``catalog.json``); see the module docstring."""

    name = LIBRARY
    version = "1"
    inputs = (INGEST,)
    outputs = (CATALOG_FILE,)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {"arch": config.arch, "simulate": config.simulate}

    def input_files(self, config: TuneConfig) -> list[Path]:
        if config.simulate or config.library_logic is None:
            return []
        return [config.library_logic]

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        gemms = load_gemms(context)
        wanted: dict[tuple[str, ...], GemmProblem] = {}
        for gemm in gemms:
            wanted.setdefault(problem_type_key(gemm.problem), gemm.problem)
        if config.simulate:
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
            candidates = [folder / name for name in sorted(written)]
            origin = f"{SIMULATED} library for {config.arch}"
        else:
            if config.library_logic is None:
                raise StageFailed("real runs need --library-logic DIR (the logic files hipBLASLt was built from)")
            prefixes = {f"{problem_type_name(problem)}" for problem in wanted.values()}
            candidates = sorted(
                path for path in Path(config.library_logic).rglob("*.yaml")
                if any(prefix.rsplit("_", 1)[0] in path.name for prefix in prefixes)
            )  # fmt: skip
            if not candidates:  # unusual file names: read them all, the problem type decides
                candidates = sorted(Path(config.library_logic).rglob("*.yaml"))
            origin = str(config.library_logic)
        sources: list[str] = []
        solutions: dict[str, dict[str, list[int]]] = {}
        skipped: list[str] = []
        for path in candidates:
            try:
                logic = load_logic(path)
            except TensilekitError as error:
                skipped.append(f"{path}: {error}")
                continue
            arch = logic.architecture_name
            key = logic_type_key(logic.problem_type)
            if arch not in (config.arch, None) or key is None or key not in wanted:
                continue
            source = len(sources)
            sources.append(
                relative_to_root(path, context.run_root) if path.is_relative_to(context.run_root) else str(path)
            )
            named = solutions.setdefault(type_key_text(key), {})
            for position, name in solution_names(logic):
                named.setdefault(name, [source, position])
        if not solutions:
            raise StageFailed(f"no solutions for the workload's GEMM types in {origin}")
        context.write_json(
            context.path(CATALOG_FILE),
            {
                "origin": origin,
                "data": config.data_label,
                "sources": sources,
                "solutions": solutions,
                "skipped": skipped,
            },
        )
        notes = tuple(f"skipped unreadable logic file {item}" for item in skipped[:5])
        count = sum(len({tuple(entry) for entry in named.values()}) for named in solutions.values())
        return StageResult(summary=f"{count} solution(s) in {len(sources)} logic file(s) from {origin}", notes=notes)


def catalog_source(run_root: Path, catalog: dict[str, Any], index: int) -> Path:
    """The logic file a catalog entry points at (relative entries are inside the run directory)."""
    path = Path(catalog["sources"][index])
    return path if path.is_absolute() else run_root / path


__all__ = [
    "CATALOG_FILE",
    "LOGIC_DIR",
    "LibraryStage",
    "catalog_source",
    "logic_type_key",
    "lookup",
    "problem_type_key",
    "solution_names",
    "type_key_text",
]

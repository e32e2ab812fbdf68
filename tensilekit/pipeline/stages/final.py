"""Stage ``final``: the tuned logic reduced to the kept GEMMs (``final_libs/``) and GEKO's
``full_libs/`` (every benchmarked GEMM with the better of its tuned and reference solution).

GEKO's layout: one Equality logic file per source logic file, named like it. ``final_libs/``
holds only the sizes postprocessing kept and only the solutions those sizes use. ``full_libs/``
holds every GEMM that was benchmarked against the reference library: the tuned solution where it
was kept, the reference library's solution (the one the reference run used, from the library
logic) where it was not -- GEKO's ``library.from_full_dataframe`` (geko/library/operations.py
@0c09056413, called by geko/pipeline.py ``run_search`` @6349c3cb for ``full_libs``). Files left
without a size are not written; files from an earlier run that are no longer produced are removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import TensilekitError
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.model.logic import LogicFile, LogicSolution
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.benchmark import BENCHMARK_FILE
from tensilekit.pipeline.stages.build import BUILD_FILE, LOGIC_DIR, equality_logic, size_key
from tensilekit.pipeline.stages.common import (
    BENCHMARK,
    BUILD,
    FINAL,
    INGEST,
    LIBRARY,
    POSTPROCESS,
    TuneStage,
    load_gemms,
    read_json,
)
from tensilekit.pipeline.stages.library import CATALOG_FILE, catalog_source, lookup
from tensilekit.pipeline.stages.postprocess import POSTPROCESS_FILE

FINAL_DIR = "final_libs"
FULL_DIR = "full_libs"
FINAL_FILE = "final.json"


def keep_sizes(logic: LogicFile, keys: set[tuple[int, ...]]) -> LogicFile | None:
    """``logic`` with only the table rows whose key is in ``keys`` and the solutions they use.

    Solutions keep their relative order and are renumbered; None when no row is left (pure).
    """
    rows = [entry for entry in logic.table if tuple(entry.size) in keys]
    if not rows:
        return None
    used = sorted({entry.solution for entry in rows})
    position = {old: new for new, old in enumerate(used)}
    return equality_logic(
        logic,
        [logic.solutions[old] for old in used],
        [(list(entry.size), position[entry.solution], entry.efficiency) for entry in rows],
    )


def _solution_name(solution: LogicSolution) -> str | None:
    return solution.solution_name_min or solution.kernel_name_min


def full_logic(
    tuned: LogicFile, kept: set[tuple[int, ...]], references: Sequence[tuple[list[int], LogicSolution, float]]
) -> LogicFile | None:
    """GEKO's full library of one file: the tuned rows whose key is in ``kept``, plus one row per
    ``(size, reference solution, efficiency)`` of ``references`` (pure).

    Solutions are shared by name (the tuned ones first, in their order), renumbered; None when
    no row is left.
    """
    solutions: list[LogicSolution] = []
    names: dict[str, int] = {}

    def position(solution: LogicSolution) -> int:
        name = _solution_name(solution)
        if name is not None and name in names:
            return names[name]
        solutions.append(solution)
        if name is not None:
            names[name] = len(solutions) - 1
        return len(solutions) - 1

    rows: list[tuple[list[int], int, float]] = []
    for entry in tuned.table:
        if tuple(entry.size) in kept:
            rows.append((list(entry.size), position(tuned.solutions[entry.solution]), entry.efficiency))
    taken = {tuple(size) for size, _, _ in rows}
    for size, solution, efficiency in references:
        if tuple(size) not in taken:
            taken.add(tuple(size))
            rows.append((list(size), position(solution), efficiency))
    if not rows:
        return None
    return equality_logic(tuned, solutions, rows)


def _write_folder(context: StageContext, target: Path, files: Iterable[tuple[str, LogicFile | None]]) -> dict[str, int]:
    """Write each logic file that is not None into ``target`` (a stage-owned folder), remove the
    files an earlier run left there, and return the table size of each file written."""
    written: dict[str, int] = {}
    for name, logic in files:
        if logic is None:
            continue
        dump_logic(logic, target / name)
        written[name] = len(logic.table)
    for stale in target.glob("*.yaml"):
        if stale.name not in written:
            stale.unlink()
    context.record(target)
    return written


class FinalStage(TuneStage):
    """Kept sizes only -> ``<workdir>/final_libs/*.yaml``; best of tuned and reference for every
    benchmarked size -> ``<workdir>/full_libs/*.yaml`` (``final.json`` lists both)."""

    name = FINAL
    version = "2"
    inputs = (INGEST, LIBRARY, BUILD, BENCHMARK, POSTPROCESS)
    outputs = (FINAL_FILE,)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {"arch": config.arch}

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        build = read_json(context.upstream_path(BUILD, BUILD_FILE))
        kept = set(read_json(context.upstream_path(POSTPROCESS, POSTPROCESS_FILE))["kept"])
        gemms = {gemm.id: gemm for gemm in load_gemms(context)}
        wanted: dict[str, set[tuple[int, ...]]] = {}
        for gemm_id, entry in build["entries"].items():
            if gemm_id in kept:
                wanted.setdefault(entry["file"], set()).add(tuple(size_key(gemms[gemm_id])))
        target = context.own_dir(context.run_root / FINAL_DIR)
        written = _write_folder(
            context, target,
            ((name, keep_sizes(load_logic(context.upstream_path(BUILD, f"{LOGIC_DIR}/{name}")), wanted[name]))
             for name in sorted(wanted)),
        )  # fmt: skip
        full, missing = self._full_libs(context, build, kept, gemms)
        context.write_json(
            context.path(FINAL_FILE),
            {"files": written, "directory": FINAL_DIR, "full_files": full, "full_directory": FULL_DIR,
             "full_missing_reference": missing, "data": config.data_label},
        )  # fmt: skip
        notes = [f"{FULL_DIR}/ lacks {len(missing)} size(s): reference solution not in the library logic"]
        return StageResult(
            summary=f"{sum(written.values())} size(s) in {len(written)} logic file(s) in {FINAL_DIR}/, "
            f"{sum(full.values())} in {FULL_DIR}/",
            notes=tuple(notes) if missing else (),
        )

    @staticmethod
    def _full_libs(
        context: StageContext, build: dict[str, Any], kept: set[str], gemms: dict[str, Any]
    ) -> tuple[dict[str, int], list[str]]:
        """``full_libs/``: every benchmarked GEMM with its tuned solution if kept, else the
        reference run's solution from the library logic; returns files and GEMMs left out."""
        bench = read_json(context.upstream_path(BENCHMARK, BENCHMARK_FILE))["gemms"]
        catalog = read_json(context.upstream_path(LIBRARY, CATALOG_FILE))
        loaded: dict[Path, LogicFile] = {}
        kept_keys: dict[str, set[tuple[int, ...]]] = {}
        references: dict[str, list[tuple[list[int], LogicSolution, float]]] = {}
        missing: list[str] = []
        for gemm_id, entry in build["entries"].items():
            if gemm_id not in bench:
                continue
            key = size_key(gemms[gemm_id])
            if gemm_id in kept:
                kept_keys.setdefault(entry["file"], set()).add(tuple(key))
                continue
            reference = bench[gemm_id].get("reference") or {}
            found = lookup(
                catalog, gemms[gemm_id].problem, reference.get("solution_name"), reference.get("solution_index")
            )
            if found is None:
                missing.append(gemm_id)
                continue
            source = catalog_source(context.run_root, catalog, found[0])
            try:
                if source not in loaded:
                    loaded[source] = load_logic(source)
            except TensilekitError:
                missing.append(gemm_id)
                continue
            gflops = float(reference.get("gflops") or 0.0)
            references.setdefault(entry["file"], []).append((key, loaded[source].solutions[found[1]], gflops))
        target = context.own_dir(context.run_root / FULL_DIR)
        written = _write_folder(
            context, target,
            ((name, full_logic(load_logic(context.upstream_path(BUILD, f"{LOGIC_DIR}/{name}")),
                               kept_keys.get(name, set()), references.get(name, [])))
             for name in sorted(set(kept_keys) | set(references))),
        )  # fmt: skip
        return written, missing


__all__ = ["FINAL_DIR", "FINAL_FILE", "FULL_DIR", "FinalStage", "full_logic", "keep_sizes"]

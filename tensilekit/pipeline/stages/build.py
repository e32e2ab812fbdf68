"""Stage ``build``: Equality logic files of the winners, and a tuned library built from them.

Like hipBLASLt's ``find_exact.py``, each tuned logic file is the source logic file (named and
headed like it) reduced to the winning solutions, with an exact table of
``[M, N, batch, K, lda, ldb, ldc, ldd] -> [solution, GFlops]`` and library type ``Equality``.
Real runs then build master libraries with TensileCreateLibrary (a CPU job, so a failure is
retried like any other job); simulated runs write the simulated library's table instead. The
library directory is what the ``benchmark`` stage points ``HIPBLASLT_TENSILE_LIBPATH`` at.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from tensilekit.errors import StageFailed
from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.model.logic import ExactLogicEntry, LogicFile, LogicSolution
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult, hash_path, relative_to_root
from tensilekit.pipeline.stages.common import (
    BUILD,
    INGEST,
    LIBRARY,
    SEARCH,
    CreateLibraryJobSpec,
    GemmEntry,
    TuneStage,
    create_library,
    create_library_job,
    load_gemms,
    read_json,
)
from tensilekit.pipeline.stages.library import CATALOG_FILE, catalog_source, lookup
from tensilekit.pipeline.stages.search import SEARCH_FILE

BUILD_FILE = "build.json"
LOGIC_DIR = "logic"
LIBRARY_DIR = "library"


def equality_logic(
    base: LogicFile, solutions: list[LogicSolution], rows: list[tuple[list[int], int, float]]
) -> LogicFile:
    """``base`` reduced to ``solutions`` with an exact table of ``rows`` (size, position, efficiency)."""
    renumbered = [
        solution.model_copy(update={"solution_index": position}) for position, solution in enumerate(solutions)
    ]
    table = [
        ExactLogicEntry(size=size, solution=position, efficiency=efficiency)
        for size, position, efficiency in sorted(rows)
    ]
    return base.model_copy(
        update={
            "solutions": renumbered,
            "exact_logic": table,
            "range_logic": None,
            "library_type": "Equality",
            "index_order": base.index_order or [2, 3, 0, 1],
        }
    )


def size_key(gemm: GemmEntry) -> list[int]:
    """The exact-table key: ``[M, N, batch, K, lda, ldb, ldc, ldd]`` (find_exact's form)."""
    problem = gemm.problem
    return [problem.m, problem.n, problem.batch, problem.k, problem.lda, problem.ldb, problem.ldc, problem.ldd]


class BuildStage(TuneStage):
    """Winners -> ``logic/*.yaml`` (Equality) -> tuned library (``library/`` or ``tcl/library/``)."""

    name = BUILD
    version = "2"
    inputs = (INGEST, LIBRARY, SEARCH)
    outputs = (BUILD_FILE, LOGIC_DIR)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        values: dict[str, Any] = {"arch": config.arch, "simulate": config.simulate}
        if not config.simulate:
            values["create_library_executable"] = config.create_library_executable
            values["tool_profile"] = config.hipblaslt_profile().name  # decides the command line
        return values

    def tools(self, config: TuneConfig) -> list[str]:
        return [] if config.simulate else [config.create_library_executable]

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        gemms = {gemm.id: gemm for gemm in load_gemms(context)}
        search_doc = read_json(context.upstream_path(SEARCH, SEARCH_FILE))
        search = search_doc["gemms"]
        # The kernel search (--mode ga/grid) indexes the new kernels in its own catalog, whose
        # "originals" name the library files the tuned files are merged into.
        own_catalog = search_doc.get("catalog")
        catalog = read_json(
            context.upstream_path(SEARCH, own_catalog) if own_catalog else context.upstream_path(LIBRARY, CATALOG_FILE)
        )
        originals: dict[str, str] = catalog.get("originals", {})
        # Winners grouped by the *file name* of their source: merges pair files by name, so two
        # sources with one name (Equality/ and GridBased/ copies) become one tuned file.
        groups: dict[str, list[tuple[GemmEntry, dict[str, Any], Path, int]]] = defaultdict(list)
        for gemm_id in sorted(search):
            winner = search[gemm_id]["winner"]
            if winner is None:
                continue
            # the search placed its winner (by index where it could); the kernel search names its own
            found = winner.get("location") or lookup(catalog, gemms[gemm_id].problem, winner["solution_name"])
            if found is None:
                raise StageFailed(f"winner {winner['solution_name']} of {gemm_id} is not in {CATALOG_FILE}")
            source_index, position = found
            source = catalog_source(context.run_root, catalog, source_index)
            groups[source.name].append((gemms[gemm_id], winner, source, position))

        logic_dir = context.own_dir(context.path(LOGIC_DIR))
        loaded: dict[Path, LogicFile] = {}
        entries: dict[str, dict[str, Any]] = {}
        records: dict[str, tuple[Path, int]] = {}
        sources: dict[str, str] = {}
        for file_name, members in sorted(groups.items()):
            for _, _, source, _ in members:
                if source not in loaded:
                    loaded[source] = load_logic(source)
            base_source = min(source for _, _, source, _ in members)
            base = loaded[base_source]
            sources[file_name] = originals.get(file_name) or (
                relative_to_root(base_source, context.run_root)
                if base_source.is_relative_to(context.run_root)
                else str(base_source)
            )
            picked: list[tuple[Path, int]] = []
            rows: list[tuple[list[int], int, float]] = []
            keys: set[tuple[int, ...]] = set()
            for gemm, winner, source, position in members:
                # Problems differing only in alpha/beta/epilogue share a size key; the table can
                # hold one entry per key, so the first GEMM (by id) decides.
                if tuple(size_key(gemm)) in keys:
                    continue
                keys.add(tuple(size_key(gemm)))
                if (source, position) not in picked:
                    picked.append((source, position))
                rows.append((size_key(gemm), picked.index((source, position)), round(float(winner["gflops"]), 3)))
                entries[gemm.id] = {"file": file_name, "solution_name": winner["solution_name"]}
                records[gemm.id] = (source, position)
            solutions = [loaded[source].solutions[position] for source, position in picked]
            dump_logic(equality_logic(base, solutions, rows), logic_dir / file_name)
        for stale in logic_dir.glob("*.yaml"):
            if stale.name not in groups:
                stale.unlink()

        library_dir: Path | None = None
        if entries:
            # Tools that load their own tuned library (the SIMULATED ones) make it here; AMD's
            # hipblaslt-bench loads TensileCreateLibrary's build of the tuned logic files.
            winners = [
                (
                    gemms[gemm_id].problem,
                    entry["solution_name"],
                    loaded[records[gemm_id][0]].solutions[records[gemm_id][1]],
                )
                for gemm_id, entry in entries.items()
            ]
            library_dir = config.toolset().write_tuned_library(context.path(LIBRARY_DIR), config.arch, winners)
            if library_dir is None:
                library_dir = create_library(context, config, logic_dir)
        if library_dir is not None:
            context.record(library_dir)
        context.write_json(
            context.path(BUILD_FILE),
            {
                "library_dir": None if library_dir is None else relative_to_root(library_dir, context.run_root),
                "library_hash": None if library_dir is None else hash_path(library_dir),
                "entries": entries,
                "files": sorted(groups),
                "sources": sources,
                "data": config.data_label,
            },
        )
        kind = f"{config.data_label} library" if config.simulate else "TensileCreateLibrary build"
        return StageResult(summary=f"{len(entries)} tuned size(s) in {len(groups)} logic file(s); {kind}")


__all__ = ["BUILD_FILE", "BuildStage", "CreateLibraryJobSpec", "create_library_job", "equality_logic", "size_key"]

"""Stage ``final``: the tuned logic files reduced to the kept GEMMs, in ``<workdir>/final_libs/``.

GEKO's layout: one Equality logic file per source logic file, named like it, holding only the
sizes postprocessing kept and only the solutions those sizes use. Files left without a size are
not written; files from an earlier run that are no longer produced are removed.
"""

from __future__ import annotations

from typing import Any

from tensilekit.io.logic_io import dump_logic, load_logic
from tensilekit.model.logic import LogicFile
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.build import BUILD_FILE, LOGIC_DIR, equality_logic, size_key
from tensilekit.pipeline.stages.common import BUILD, FINAL, INGEST, POSTPROCESS, TuneStage, load_gemms, read_json
from tensilekit.pipeline.stages.postprocess import POSTPROCESS_FILE

FINAL_DIR = "final_libs"
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


class FinalStage(TuneStage):
    """Kept sizes only -> ``<workdir>/final_libs/*.yaml`` (``final.json`` lists them)."""

    name = FINAL
    version = "1"
    inputs = (INGEST, BUILD, POSTPROCESS)
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
        written: dict[str, int] = {}
        for name in sorted(wanted):
            reduced = keep_sizes(load_logic(context.upstream_path(BUILD, f"{LOGIC_DIR}/{name}")), wanted[name])
            if reduced is None:
                continue
            dump_logic(reduced, target / name)
            written[name] = len(reduced.table)
        for stale in target.glob("*.yaml"):
            if stale.name not in written:
                stale.unlink()
        context.record(target)
        context.write_json(
            context.path(FINAL_FILE), {"files": written, "directory": FINAL_DIR, "data": config.data_label}
        )
        return StageResult(summary=f"{sum(written.values())} size(s) in {len(written)} logic file(s) in {FINAL_DIR}/")


__all__ = ["FINAL_DIR", "FINAL_FILE", "FinalStage", "keep_sizes"]

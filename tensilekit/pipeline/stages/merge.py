"""Stage ``merge``: merge ``final_libs/`` into a library's logic folder with tensilekit's merge.

The original side is ``--merge-into DIR`` (a logic folder such as hipBLASLt's
``library/src/amd_detail/rocblaslt/src/Tensile/Logic/asm_full/aquavanjaram/gfx942/Equality``)
or, by default, the logic files the winners came from. ``DIR`` is only read: the merged files
are written to ``<workdir>/merged/``, so a rerun never merges twice and the user decides when
to copy them over. The policy is GEKO's (``TensileMergeLibrary --no_eff --force_merge True``):
tuned sizes replace existing entries, and files without an original are copied through.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tensilekit.io.atomic import write_text_atomic
from tensilekit.merge import MergePolicy, merge_directories
from tensilekit.pipeline.config import TuneConfig
from tensilekit.pipeline.stage import StageContext, StageResult
from tensilekit.pipeline.stages.build import BUILD_FILE
from tensilekit.pipeline.stages.common import BUILD, FINAL, MERGE, TuneStage, read_json
from tensilekit.pipeline.stages.final import FINAL_DIR, FINAL_FILE
from tensilekit.tools.toolset import SIMULATED

MERGED_DIR = "merged"
MERGE_REPORT = "merge_report.json"
ORIGINAL_DIR = "original"
MERGE_POLICY = MergePolicy(force_merge=True, no_eff=True, add_new=True)


class MergeStage(TuneStage):
    """``final_libs/`` + original logic folder -> ``<workdir>/merged/`` (``merge_report.json``)."""

    name = MERGE
    version = "1"
    inputs = (BUILD, FINAL)
    outputs = (MERGE_REPORT,)

    def config_slice(self, config: TuneConfig) -> dict[str, Any]:
        return {"merge_into": config.merge_into is not None, "policy": MERGE_POLICY.model_dump(mode="json")}

    def input_files(self, config: TuneConfig) -> list[Path]:
        return [config.merge_into] if config.merge_into is not None else []

    def run(self, context: StageContext) -> StageResult:
        config: TuneConfig = context.config
        final_dir = context.run_root / FINAL_DIR
        files = read_json(context.upstream_path(FINAL, FINAL_FILE))["files"]
        if config.merge_into is not None:
            original = Path(config.merge_into)
            origin = str(original)
        else:
            original = self._sources(context, sorted(files))
            origin = "the logic files the winners came from"
        output = context.own_dir(context.run_root / MERGED_DIR)
        for stale in output.glob("*.yaml"):
            stale.unlink()
        report = merge_directories(original, final_dir, output, MERGE_POLICY)
        if config.simulate:
            mark_simulated(output)
        context.record(output)
        context.write_json(context.path(MERGE_REPORT), report.model_dump(mode="json"))
        merged = len(report.files)
        copied = len(report.copied_new)
        return StageResult(
            summary=f"{merged} file(s) merged into {origin}, {copied} new file(s) copied; output in {MERGED_DIR}/",
            notes=tuple(report.notes[1:]),
        )

    @staticmethod
    def _sources(context: StageContext, names: list[str]) -> Path:
        """A folder of copies of the winners' source logic files, named as the final files."""
        sources = read_json(context.upstream_path(BUILD, BUILD_FILE)).get("sources", {})
        folder = context.own_dir(context.path(ORIGINAL_DIR))
        shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name in names:
            source = Path(sources[name])
            source = source if source.is_absolute() else context.run_root / source
            shutil.copyfile(source, folder / name)
        return folder


SIMULATED_MARK = f"# {SIMULATED}: tuned with tensilekit's GPU model, not measured on a GPU. Do not ship.\n"


def mark_simulated(folder: Path) -> None:
    """Start every logic file in ``folder`` with a SIMULATED comment line.

    A ``--simulate`` run merged into a real library (``--merge-into``) keeps the library's real
    header and device names, so the file itself must say that its tuned kernels are simulated.
    YAML readers (AMD's and tensilekit's) skip the comment.
    """
    for path in sorted(folder.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith(SIMULATED_MARK):
            write_text_atomic(path, SIMULATED_MARK + text)


__all__ = ["MERGED_DIR", "MERGE_POLICY", "MERGE_REPORT", "SIMULATED_MARK", "MergeStage", "mark_simulated"]

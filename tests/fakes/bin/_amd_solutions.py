"""Run inside AMD's venv (``../shared/amd/setup-venv``) by the fake Tensile driver: the solutions
tensilelite 7d9fb68's own driver would benchmark for a tuning config, written by AMD's own writer.

``python _amd_solutions.py AMD_DIR ARCH CONFIG OUT_DIR`` does, per BenchmarkProblems group, what
``BenchmarkProblems.benchmarkProblemType`` does up to the client run (BenchmarkProblems.py:270-351
@7d9fb68): ``BenchmarkProcess`` -> ``constructForkPermutations`` -> ``generateForkedSolutions``
(``Solution()``; invalid ones dropped, duplicates merged) -> SolutionIndex / SolutionNameMin /
KernelNameMin by ``Solution.getMinNaming`` -> ``LibraryIO.writeSolutions`` to ``OUT_DIR/<n>.yaml``.
Left out: kernel source writing and compilation (``writeBenchmarkFiles``), which needs ROCm.

Prints one JSON line: ``{"ok": true, "groups": [{"problemType", "file", "count"}]}``, or
``{"ok": false, "exit": [...]}`` when AMD's reader refuses the config (its ``printExit`` text).

No AMD code is copied here: it is imported from AMD_DIR. As ``../shared/amd/check-configs`` does,
tensilelite's assembler probe is answered from ROCm/Tensile@09ec347's cache (``AsmCaps.py``).
"""

import contextlib
import io
import json
import os
import sys

amd, arch, config_path, out_dir = sys.argv[1:5]
sys.path.insert(0, os.path.join(amd, "tensilelite-7d9fb68"))
os.environ["PATH"] = os.path.join(amd, "bin") + os.pathsep + os.environ.get("PATH", "")
os.environ["AMD_ARCH"] = arch
os.environ.pop("TENSILE_ROCM_ASSEMBLER_PATH", None)

namespace: dict = {}
with open(os.path.join(amd, "tensile-09ec347", "Tensile", "AsmCaps.py")) as stream:
    exec(stream.read(), namespace)
_CACHED = namespace["CACHED_ASM_CAPS"]

import Tensile.TensileInstructions.Base as base  # noqa: E402


def _cached_caps(isa, path, debug):
    caps = dict(_CACHED.get(tuple(isa), _CACHED[(0, 0, 0)]))
    caps["HasDirectToLds"] = caps.get("HasDirectToLdsDest", False) or caps.get("HasDirectToLdsNoDest", False)
    for key in ("HasWMMA_V1", "HasWMMA_V2", "HasNewBarrier"):
        caps.setdefault(key, False)
    for key in ("HasSCMPK", "HasMUBUFConst"):
        caps.setdefault(key, caps.get("SupportedISA", False))
    caps.setdefault("MaxVmcnt", 63 if caps.get("SupportedISA") else 0)
    caps.setdefault("MaxLgkmcnt", 15)
    caps["SupportedSource"] = True
    return caps


base._initAsmCaps = _cached_caps

from Tensile import Common, LibraryIO  # noqa: E402
from Tensile.BenchmarkProblems import generateForkedSolutions  # noqa: E402
from Tensile.BenchmarkStructs import BenchmarkProcess, constructForkPermutations  # noqa: E402
from Tensile.Common import gfxArch, globalParameters  # noqa: E402
from Tensile.SolutionStructs import Solution  # noqa: E402


def main() -> dict:
    captured = io.StringIO()
    groups = []
    try:
        with contextlib.redirect_stdout(captured):
            Common.restoreDefaultGlobalParameters()
            config = LibraryIO.readYAML(config_path)
            Common.assignGlobalParameters(dict(config.get("GlobalParameters", {})))
            globalParameters["CurrentISA"] = gfxArch(arch)
            for entry in config["BenchmarkProblems"]:
                for group in entry[1:]:
                    process = BenchmarkProcess(entry[0], group)
                    step = process[0]
                    permutations = constructForkPermutations(step.forkParams, step.paramGroups)
                    solutions = generateForkedSolutions(process.problemType, step.constantParams, permutations)
                    naming = Solution.getMinNaming(solutions)
                    for index, solution in enumerate(solutions):
                        solution["SolutionIndex"] = index
                        solution["SolutionNameMin"] = Solution.getNameMin(solution, naming)
                        solution["KernelNameMin"] = Solution.getNameMin(solution, naming, True)
                    path = os.path.join(out_dir, f"{len(groups)}.yaml")
                    LibraryIO.writeSolutions(path, step.problemSizes, step.biasTypeArgs, step.activationArgs,
                                             solutions, False)  # fmt: skip
                    groups.append({"problemType": str(process.problemType), "file": path, "count": len(solutions)})
    except SystemExit:
        return {"ok": False, "exit": captured.getvalue().strip().splitlines()[-3:]}
    return {"ok": True, "groups": groups}


def library_logic() -> dict:
    """``python _amd_solutions.py AMD_DIR ARCH CONFIG OUT_DIR --logic``: tensilelite's LibraryLogic
    step on OUT_DIR/2_BenchmarkData (Tensile.py:59-77 @7d9fb68: ``LibraryLogic.main`` ->
    ``generateLogic``), writing OUT_DIR/3_LibraryLogic."""
    from Tensile import LibraryLogic

    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            Common.restoreDefaultGlobalParameters()
            config = LibraryIO.readYAML(config_path)
            Common.assignGlobalParameters(dict(config.get("GlobalParameters", {})))
            globalParameters["CurrentISA"] = gfxArch(arch)
            globalParameters["WorkingPath"] = out_dir
            LibraryLogic.generateLogic(config.get("LibraryLogic") or {}, os.path.join(out_dir, "2_BenchmarkData"),
                                       os.path.join(out_dir, "3_LibraryLogic"))  # fmt: skip
    except SystemExit:
        return {"ok": False, "exit": captured.getvalue().strip().splitlines()[-3:]}
    return {"ok": True, "files": sorted(os.listdir(os.path.join(out_dir, "3_LibraryLogic")))}


print(json.dumps(library_logic() if sys.argv[5:6] == ["--logic"] else main()), flush=True)

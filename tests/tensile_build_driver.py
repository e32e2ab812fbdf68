"""Build master libraries with ROCm/Tensile a164ed70's own TensileCreateLibrary library step (no kernels, no ROCm).

Run by AMD's Python (``$TENSILEKIT_AMD/setup-venv``), never imported by the tests; :mod:`amd_build`
starts it. Many builds share one process (AMD's imports cost ~3 s)::

    python tensile_build_driver.py AMD_DIR JOBS.json RESULTS.json

``JOBS.json`` is a list of ``{"logic": [paths, in merge order], "out": dir, "lazy": bool}``. Each job
runs what ``TensileCreateLibrary()`` runs for the library files, with the same functions in the same
order: ``generateLogicData`` → ``generateSolutions`` → ``generateKernelObjectsFromSolutions`` →
``getKernelWriters`` (kernel min-naming) → ``generateMasterFileList`` → ``writeMasterFile`` (YAML and
msgpack). Settings are those of ``../corpus/masters`` (SOURCES.md): separate architectures, version
4.44.0, one CPU thread, the ROCm 6.4 assembler-capability cache (no toolchain here). Writes
``RESULTS.json``: per job ``{"out": dir, "written": [names]}`` or ``{"out": dir, "error": text}``
(AMD's own progress output goes to stderr).
"""

import json
import os
import sys
import traceback
from pathlib import Path


def main() -> None:
    amd, jobs_file, results_file = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.stdout = sys.stderr  # AMD's progress bars and warnings
    sys.path.insert(0, os.path.join(amd, "tensile-a164ed70"))
    os.environ.pop("TENSILE_ROCM_ASSEMBLER_PATH", None)

    from Tensile import TensileCreateLibrary as TCL
    from Tensile.AsmCaps import getCapabilitiesCache
    from Tensile.Common import SemanticVersion, assignGlobalParameters, gfxName, globalParameters
    from Tensile.SolutionLibrary import MasterSolutionLibrary

    config = {
        "HipConfig": os.path.join(amd, "bin", "hipconfig"),
        "ROCmAgentEnumeratorPath": False,  # no device: CurrentISA stays (0, 0, 0), as on a build server
        "CxxCompiler": "amdclang++",
        "CCompiler": "amdclang",
        "Assembler": None,
        "OffloadBundler": None,
        "CodeObjectVersion": "default",
        "SeparateArchitectures": True,
        "MergeFiles": True,
        "NumMergedFiles": 1,
        "ShortNames": False,
        "LibraryPrintDebug": False,
        "LibraryFormat": "msgpack",
        "CpuThreads": 1,
        "PrintLevel": 0,
    }
    assignGlobalParameters(config, getCapabilitiesCache(SemanticVersion(6, 4, 0)))
    archs = [gfxName(a) for a in globalParameters["SupportedISA"] if globalParameters["AsmCaps"][a]["SupportedISA"]]

    results = []
    for job in json.loads(Path(jobs_file).read_text()):
        out = Path(job["out"])
        try:
            # ArchitectureIndexMap refuses an architecture it has numbered before: one build per process
            MasterSolutionLibrary.ArchitectureSet.clear()
            lazy = bool(job.get("lazy"))
            globalParameters["LazyLibraryLoading"] = lazy
            masters = TCL.generateLogicData(list(job["logic"]), "4.44.0", 0, True)
            solutions = TCL.generateSolutions(masters, True)
            kernels, _, _ = TCL.generateKernelObjectsFromSolutions(solutions)
            _, _, naming, _ = TCL.getKernelWriters(solutions, kernels, True)
            out.mkdir(parents=True, exist_ok=True)
            written = []
            for name, lib in TCL.generateMasterFileList(masters, archs, lazy):
                for fmt in ("yaml", "msgpack"):
                    TCL.writeMasterFile(out, fmt, naming, name, lib)
                written.append(name)
            results.append({"out": str(out), "written": written})
        except BaseException:  # one job's failure is that job's answer; the batch goes on
            results.append({"out": str(out), "error": traceback.format_exc()[-3000:]})
    Path(results_file).write_text(json.dumps(results))


if __name__ == "__main__":
    main()

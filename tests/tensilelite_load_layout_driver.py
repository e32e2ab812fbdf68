"""Give hand-made tensilelite logic-file variants the load layout tensilelite derives for them.

Run by AMD's Python (``$TENSILEKIT_AMD/setup-venv``), never imported by the tests;
:func:`amd_build.amd_load_layout` starts it::

    python tensilelite_load_layout_driver.py AMD_DIR TREE OUT_DIR LOGIC.yaml...

A logic file stores each solution's derived state as tuning wrote it. A test that turns on
``DirectToVgprA`` (or ``SwizzleTensorB`` …) in a corpus file changes how tensilelite spreads the
global loads (``setGlobalLoadTileDimClassic``: ``NumLoadsCoalesced*`` starts at the DirectToVgpr
minimum), which the stored values then contradict; tensilekit keeps them as stored (not ported:
``tensilekit.model.derive_tensilelite``'s docstring). This driver derives each solution with the
tensilelite tree ``TREE`` (``tensilelite-0.12.1``, …; ``parseLibraryLogicData``'s overrides, then
``Solution(state)``) and writes ``OUT_DIR/<name>`` with only the load-layout keys replaced by the
derived ones, as tuning with that setting would have stored them. Nothing else changes: in
particular ``AssertSummationElementMultiple`` stays as given. A file on which ``Solution`` fails
(as ``parseLibraryLogicData`` in tensilelite's build would) gets ``OUT_DIR/<name>.error`` holding
the exception (``NameError: …``) instead.
"""

import copy
import importlib.util
import os
import sys
import traceback

LOAD_LAYOUT_KEYS = (
    "NumLoadsCoalescedA", "NumLoadsCoalescedB", "NumLoadsPerpendicularA", "NumLoadsPerpendicularB",
    "LSCA", "LSCB", "LSPA", "LSPB",
)  # fmt: skip


def main() -> None:
    amd, tree, out_dir, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    sys.stdout = sys.stderr  # AMD's progress output and warnings
    sys.path.insert(0, os.path.join(amd, tree))
    os.environ["TENSILELITE"] = os.path.join(amd, tree)  # else the module below puts tensilelite-7d9fb68 first
    spec = importlib.util.spec_from_file_location("bm7", os.path.join(amd, "lib", "tensilelite_build_master.py"))
    assert spec is not None and spec.loader is not None
    build_master = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_master)  # the capability table the build-master drivers answer with

    import inspect

    import Tensile.TensileInstructions.Base as TIBase
    import yaml

    TIBase._initAsmCaps = build_master.patched_initAsmCaps
    from Tensile import Common
    from Tensile.Common import assignGlobalParameters
    from Tensile.SolutionStructs import Solution

    arguments = {"RuntimeLanguage": "HIP", "CodeObjectVersion": "default", "AMDGPUArchPath": False, "PrintLevel": 0}
    takes_compiler = "cxxCompiler" in inspect.signature(Solution.__init__).parameters
    if takes_compiler:  # 0.12.1: assignGlobalParameters(config, cxxCompiler), Solution(state, cxxCompiler)
        assignGlobalParameters(arguments, "amdclang++")
    else:
        assignGlobalParameters(arguments)
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        with open(path) as handle:
            data = yaml.load(handle, Loader=yaml.CSafeLoader)
        arch = data[2]["Architecture"] if isinstance(data[2], dict) else data[2]
        cu_count = data[2]["CUCount"] if isinstance(data[2], dict) else None
        try:
            for stored in data[5]:
                state = copy.deepcopy(stored)
                state["ISA"] = Common.gfxArch(arch)  # parseLibraryLogicData (LibraryIO.py:277-284)
                state["CUCount"] = cu_count
                state["AssignedProblemIndependentDerivedParameters"] = False
                state["AssignedDerivedParameters"] = False
                solution = Solution(state, "amdclang++") if takes_compiler else Solution(state)
                for key in LOAD_LAYOUT_KEYS:
                    if key in stored and key in solution._state:
                        stored[key] = solution._state[key]
        except Exception:  # noqa: BLE001 - what AMD's code raises is the answer
            with open(os.path.join(out_dir, os.path.basename(path) + ".error"), "w") as handle:
                handle.write(traceback.format_exc())
            continue
        with open(os.path.join(out_dir, os.path.basename(path)), "w") as handle:
            yaml.dump(data, handle, Dumper=yaml.CSafeDumper)


if __name__ == "__main__":
    main()

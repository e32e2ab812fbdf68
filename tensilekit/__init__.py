"""tensilekit: typed, fast, scriptable tooling for AMD Tensile and hipBLASLt GEMM libraries.

The public API: load and write logic files and master libraries, and (see the submodules)
evaluate predicates, predict kernel selection, merge and diff libraries, drive tuning.
"""

from tensilekit._version import __version__
from tensilekit.api import build_master, build_master_files, load, loads
from tensilekit.errors import Location, TensilekitError
from tensilekit.io.logic_io import dump_logic, dumps_logic, load_logic, loads_logic
from tensilekit.io.master_io import dump_master, dumps_master, load_master, loads_master
from tensilekit.io.yaml_codec import YamlStyle
from tensilekit.model.library import MasterLibrary
from tensilekit.model.logic import Dialect, LogicFile

__all__ = [
    "Dialect",
    "Location",
    "LogicFile",
    "MasterLibrary",
    "TensilekitError",
    "YamlStyle",
    "__version__",
    "build_master",
    "build_master_files",
    "dump_logic",
    "dump_master",
    "dumps_logic",
    "dumps_master",
    "load",
    "load_logic",
    "load_master",
    "loads",
    "loads_logic",
    "loads_master",
]

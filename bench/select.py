"""Selection benchmark entry point: ``python bench/select.py [options]`` (see ``_selection.py``).

The selection issue names this file ``bench/select.py``, which collides with the standard
library's ``select`` module on ``sys.path[0]``. Two consequences are handled here:

* run as a script, bench/ moves to the end of ``sys.path`` before anything imports ``select``;
* imported as ``select`` (a sibling benchmark such as ``bench/merge.py`` has bench/ first on its
  path, and ``subprocess``/``asyncio`` import ``select``), it hands back the standard library's
  module, so the other benchmarks are unaffected.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

_BENCH_DIR = Path(__file__).resolve().parent
_PATH_WITHOUT_BENCH = [entry for entry in sys.path if Path(entry or ".").resolve() != _BENCH_DIR]

if __name__ == "__main__":
    sys.path[:] = [*_PATH_WITHOUT_BENCH, str(_BENCH_DIR)]
    from _selection import main

    main()
else:
    _spec = importlib.machinery.PathFinder.find_spec(__name__, _PATH_WITHOUT_BENCH)
    if _spec is None or _spec.loader is None:
        raise ImportError(f"the standard library module {__name__!r} was not found")
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    # The import system returns sys.modules[name] once this file finishes, i.e. the real module.
    sys.modules[__name__] = _module

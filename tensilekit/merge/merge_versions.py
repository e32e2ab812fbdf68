"""The versions of tensilelite's merge tool (``Tensile/Utilities/merge.py``) tensilekit merges as, and
the rules in which they differ.

One :class:`MergeScript` per version; every rule that differs between them is a field here, named by
what it decides, and set per version. The merge steps read the rule off the script, never its name.

==================================  ==========================================  ==========================================
rule                                7d9fb683 (hipBLASLt 7d9fb683, tensilelite   5.x (rocm-libraries
                                    4.33.0; ``shared/amd`` runs it)             ``projects/hipblaslt/tensilelite/Tensile/
                                                                                Utilities/merge.py`` @6b64aab9cc6d)
==================================  ==========================================  ==========================================
``drops_solution_problem_type``     no: kernels keep their ProblemType; it is   ``sanitizeSolutions`` deletes every
                                    part of the kernel identity (``cmpHelper``)  solution's ``ProblemType`` on both sides:
                                                                                kernels are compared without it and the
                                                                                output has none (the header carries it, as
                                                                                in the files 5.x's LibraryLogic writes)
``solution_problem_type_optional``  ``compareProblemType`` indexes every        a solution without ``ProblemType`` is
                                    solution's ``ProblemType`` (KeyError on a   skipped (``continue``), in the waiving and
                                    file without them: tensilekit refuses)      in the check; so two 5.x files are never
                                                                                checked against each other (tensilekit
                                                                                warns when their headers differ)
``copies_unpaired_incremental``     incremental files without an original are   ``avoidRegressions`` copies them to the
                                    dropped                                     output (``shutil.copyfile``)
``checks_library_type_folder``      no                                          ``compareDestFolderToYaml``: an empty
                                                                                ``[11]`` in the incremental file, or an
                                                                                original folder named ``Equality`` /
                                                                                ``GridBased`` that is not the incremental's
                                                                                ``[11]``, ends the run
==================================  ==========================================  ==========================================

Both write ``yaml.safe_dump(mergedData, default_flow_style=None)`` and keep the original's header.
5.x's ``loadData`` also expands a ``{SolutionDefaults, Solutions}`` mapping at ``[5]``; tensilekit's
logic reader does not read that form (neither does 5.x's ``LibraryIO``), so it is not modelled.

Which script merges a pair (:func:`merge_script_for`): the one asked for, else the ``merge_script`` of
a file's version (5.x's for ``MinimumRequiredVersion`` 5: 7d9fb683's script cannot read them, KeyError
``'ProblemType'``), else 7d9fb683's, whose output the differential tests hold byte for byte.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

MergeScriptName = Literal["7d9fb683", "5.x"]


@dataclasses.dataclass(frozen=True)
class MergeScript:
    """One version of tensilelite's ``Utilities/merge.py`` and its rules (see the module docstring)."""

    name: MergeScriptName
    drops_solution_problem_type: bool
    solution_problem_type_optional: bool
    copies_unpaired_incremental: bool
    checks_library_type_folder: bool

    def __str__(self) -> str:
        return self.name


MERGE_PY_7D9FB683 = MergeScript(
    "7d9fb683",
    drops_solution_problem_type=False,
    solution_problem_type_optional=False,
    copies_unpaired_incremental=False,
    checks_library_type_folder=False,
)
"""hipBLASLt 7d9fb683 ``tensilelite/Tensile/Utilities/merge.py`` (tensilelite 4.33.0, Oct 2024)."""

MERGE_PY_5X = MergeScript(
    "5.x",
    drops_solution_problem_type=True,
    solution_problem_type_optional=True,
    copies_unpaired_incremental=True,
    checks_library_type_folder=True,
)
"""rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/Utilities/merge.py`` @6b64aab9cc6d
(tensilelite 5.x, 2026): ``sanitizeSolutions``, ``compareProblemType``, ``avoidRegressions``,
``compareDestFolderToYaml``."""

MERGE_SCRIPTS: dict[str, MergeScript] = {script.name: script for script in (MERGE_PY_7D9FB683, MERGE_PY_5X)}

# folders whose name ``compareDestFolderToYaml`` checks against the incremental file's [11]
LIBRARY_TYPE_FOLDERS = ("Equality", "GridBased")


def merge_script_for(
    requested: MergeScriptName | None, original_version: str | None, incremental_version: str | None
) -> tuple[MergeScript, str]:
    """The merge script for a pair of files and why (see the module docstring)."""
    from tensilekit.selection.hipblaslt_versions import version_of_minimum_required

    if requested is not None:
        return MERGE_SCRIPTS[requested], "requested"
    for side, version in (("original", original_version), ("incremental", incremental_version)):
        if (written_by := version_of_minimum_required(version)) is not None:
            reason = f"the {side} file is tensilelite {version} (7d9fb683's merge.py cannot read it)"
            return MERGE_SCRIPTS[written_by.merge_script], reason
    return MERGE_PY_7D9FB683, "neither file is tensilelite 5.x"


__all__ = [
    "LIBRARY_TYPE_FOLDERS",
    "MERGE_PY_5X",
    "MERGE_PY_7D9FB683",
    "MERGE_SCRIPTS",
    "MergeScript",
    "MergeScriptName",
    "merge_script_for",
]

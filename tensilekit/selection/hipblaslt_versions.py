"""The hipBLASLt runtime versions tensilekit answers as, and the rules in which they differ.

One :class:`HipblasltVersion` per tensilelite C++ runtime; every rule that differs between them is a
field here, named by what it decides, and set per version (a third version, the 2026 tensilelite
5.x, is one more entry in :data:`HIPBLASLT_VERSIONS`). The selection walk, the compiled selector
and the predicates read the rule off the version the runtime was made for
(:class:`~tensilekit.selection.runtime.HipblasltRuntime`), never the version's name.

=========================  ====================================  =====================================
rule                       7d9fb683 (0.11, ROCm 6.3)             0.12.1 (ROCm 6.4)
=========================  ====================================  =====================================
``grid_batch_first``       batch folded into M (M > N) or N      the first (M, N, batch) cell is looked
                           before the walk                       up with the batch; batch is folded,
                           (``PropertyMatching.hpp``             and the walk restarted, only when the
                           ``findBestKeyMatch_GridBased``)       entry found there has batch 1
``grid_ties_to_later``     a cell's first entry of least         its last (``myDistance <=
                           distance                              bestDistance``)
``grid_k_ratio``           K term ``|tK - K| / (tK + 8 K)``      ``|tK - K|`` (``Distance.hpp``)
``f16_compute_as_float``   compute ``f16``: compute type Half,   compute type Float, computeInputType
                           computeInputType Half                 from A and B (``tensile_host.cpp``
                                                                 ``updateTensileProblem``: "fallback to
                                                                 f32 for f16 compute type")
``workspace_counts_``      ``requiredWorkspaceSize`` counts the  it does not
``synchronizer``           custom-kernel synchronizer (GSU > 1,
                           GlobalAccumulation 3)
``predicate_rules``        ``SynchronizerSizeCheck`` (five       409 600
                           values) ≤ 40 960 slots
``selection_method_``      not read                              ``TENSILE_SOLUTION_SELECTION_METHOD``
``metrics``                                                      (an integer): 1 makes every problem's
                                                                 metric ``ExperimentalDTree``, 2
                                                                 ``ExperimentalStreamK``
                                                                 (``ContractionProblem::
                                                                 performanceMetric``), so only 2 takes
                                                                 an ``ExperimentalStreamK`` row
``builds_swizzle_fields``  no ``swizzleTensorA/B``               every problem type has them, and
                                                                 ``SwizzleTensorA/B`` type predicates
``builds_workgroup_``      no ``WorkgroupNumberCheck``           ``[MT0, MT1, GSU]`` on every kernel
``number_check``                                                 with ``KernArgsVersion`` ≥ 1, no
                                                                 Stream-K
``all_solutions_gate_``    ``getAllSolutions`` (GEMM_TYPE_ONLY)  it lists an ``ExperimentalStreamK``
``streamk_rows``           lists every problem row               row's kernels only when the row's
                                                                 predicate holds (method 2), also in
                                                                 the ``findTopSolutions`` fallback
``index_lookup_hides_``    ``getSolutionByIndex(hardware,        it returns no Stream-K solution
``streamk``                index)`` (``getSolutionsFromIndex``)  unless the method is 2
                           returns any solution of the index
``streamk_grid_``          a Stream-K kernel's grid (its         ⌈M/MT0⌉·⌈N/MT1⌉·batch for K = 0,
``predicted``              workspace: a partial tile per         else ``best_predicted_grid_size``
                           workgroup) is the CU count            (``TENSILE_STREAMK_DYNAMIC_GRID``
                           (``TENSILE_STREAMK_DYNAMIC_GRID``     default 3)
                           default 0)
``experimental_logic_``    reads every logic file                TensileCreateLibrary leaves out logic
``opt_in``                                                       files under a folder named
                                                                 ``experimental`` (any case) unless
                                                                 ``--experimental`` is given
``derivation``             its ``Solution`` derivation           0.12.1's: ``SwizzleTensorA/B`` in the
                           (:data:`~tensilekit.model.            problem type (names ``STA_``/``STB_``),
                           derive_tensilelite.                   new DirectToVgpr rejections, ASEM
                           LITE_DERIVATION_7D9FB683`)            raised to DepthU for DirectToVgprA on
                                                                 TT / B on NN, Stream-K for S/H/B only
                                                                 (:class:`~tensilekit.model.
                                                                 derive_tensilelite.
                                                                 LiteDerivationRules`)
=========================  ====================================  =====================================

The ``selection_method_metrics`` and ``all_solutions_gate_streamk_rows`` rows were measured with
0.12.1's C++ (``select-oracle --version 0.12.1`` with and without
``TENSILE_SOLUTION_SELECTION_METHOD``) on masters ``build-master-0.12.1`` built from corpus logic
with an ``ExperimentalStreamK`` (``PerfMetric``, logic list item 10; ``SolutionLibrary.py``
``performanceMetric`` @0.12.1) copy; ``tests/property/test_select_hipblaslt_oracle.py`` keeps them.

A Stream-K kernel's ``requiredWorkspaceSize`` (``streamk_grid_predicted``) was read from the 0.12.1
oracle's code (``getSKGrid``, ``best_predicted_grid_size``:
:func:`~tensilekit.predicates.evaluate.predicted_streamk_grid`) and measured with it
(``tests/conformance/test_select_hipblaslt_0121.py``: workspaces one byte either side of each
kernel's need); the ``TENSILE_STREAMK_*`` overrides (fixed grid, max CUs, multiplier, the other
dynamic-grid modes) are not modelled. ``index_lookup_hides_streamk`` was read from the same code
(``MasterSolutionLibrary::getSolutionByIndex(Hardware const&, int)``, which hipBLASLt's
``getSolutionsFromIndex`` asks); the oracle answers no index lookup, so the same test holds
``remap`` to the rule, not to AMD's C++.

tensilelite 5.x (2026, rocm-libraries ``projects/hipblaslt/tensilelite``), :data:`TENSILELITE_5X`,
differs in ``names_min_5x``, ``merge_script`` (merge.py @6b64aab9cc6d) and ``assembles_isas`` (gfx950,
``Tensile.py`` @00cf9f2a). Its selection rules were read from its C++ (no 5.x oracle runs here);
paths under ``projects/hipblaslt/tensilelite/`` (``include/Tensile/`` for headers) unless named:

=============================  ======================  =====================================================
rule                           5.x                     where (rocm-libraries path@commit)
=============================  ======================  =====================================================
``grid_batch_first``           as 0.12.1               ``PropertyMatching.hpp`` @1236de37 ``findBestKeyMatch_
                                                       GridBased`` (binary path): ``firstFind``, fold and
                                                       restart only when ``batch->key[2] == 1``
``grid_ties_to_later``         as 0.12.1               same: ``myDistance <= bestDistance``
``grid_k_ratio``               as 0.12.1 (``|tK-K|``)  ``Distance.hpp`` @a39bf8f2 ``GridBasedDistance``
``f16_compute_as_float``       as 0.12.1               ``library/src/amd_detail/rocblaslt/src/tensile_host.cpp``
                                                       @1ea8c64f ``ConstructTensileProblem``: "fallback to f32
                                                       for f16 compute type"
``workspace_counts_``          as 0.12.1 (no)          ``src/ContractionSolution.cpp`` @2d614b75
``synchronizer``                                       ``requiredWorkspaceSize`` (``requiredSynchronizerSize``
                                                       is apart)
``predicate_rules``            409 600                 ``ContractionProblemPredicates.hpp`` @85860bf5 (its
                                                       ``SynchronizerSizeCheck`` has six values, limit 409 600)
``selection_method_metrics``   1 ``ExperimentalMLP``,  ``PerformanceMetricTypes.hpp`` @a39bf8f2
                               2 ``ExperimentalStreamK``  (``ExperimentalOption`` None 0, MLP 1, StreamK 2);
                                                       ``ContractionProblem.hpp`` @35fb6927 ``performanceMetric``
``all_solutions_gate_``        as 0.12.1               ``ExactLogicLibrary.hpp`` @1ea8c64f ``findAllSolutions``
``streamk_rows``                                       skips an ``ExperimentalStreamK`` row unless
                                                       ``useExperimentalSelection() == 2``
``index_lookup_hides_``        as 7d9fb683 (no)        ``MasterSolutionLibrary.hpp`` @1c2f3843
``streamk``                                            ``getSolutionByIndex(Hardware const&, int)``: a map
                                                       lookup, no Stream-K test; ``tensile_host.cpp``
                                                       @1ea8c64f ``getSolutionsFromIndex`` asks it
``streamk_partials_optional``  yes (new)               ``ContractionSolution.cpp`` @2d614b75
                                                       ``requiredWorkspaceSize``: partial tiles only when
                                                       ``tiles % skGrid != 0`` and they fit the workspace,
                                                       else none (the kernel runs data-parallel)
``streamk_grid_predicted``     as 0.12.1, a stand-in   ``getSKGrid`` @2d614b75 asks origami's
                                                       ``select_grid_size`` with ``TENSILE_STREAMK_DYNAMIC_
                                                       GRID`` 6 (``k_split_aware``), which is not modelled;
                                                       0.12.1's prediction stands in, so a 5.x Stream-K
                                                       kernel's reported workspace is approximate (whether
                                                       it is served is not: ``streamk_partials_optional``)
``builds_swizzle_fields``      as 0.12.1               ``Tensile/Contractions.py`` @72d2079f405e:
                                                       ``ProblemType.StateKeys`` end in ``swizzleTensorA/B``,
                                                       ``predicates(includeType)`` adds ``SwizzleTensorA/B``,
                                                       ``CompoundPredicates`` one for a swizzled tensor
``swizzle_full_tile_``         no (new)                same ``CompoundPredicates``: no ``BoundSizeMultiple``
``predicates``                                         / ``Free1SizeMultiple`` beside ``SwizzleTensorA/B``
                                                       (0.12.1's tail-loop guard, Contractions.py:518-527)
``builds_workgroup_``          as 0.12.1               same: ``WorkgroupNumberCheck [MT0, MT1, GSU]`` when
``number_check``                                       ``KernArgsVersion >= 1`` and not ``StreamK > 0``
``experimental_logic_opt_in``  as 0.12.1               ``Tensile/TensileCreateLibrary/Run.py`` @9369dd859ab3
                                                       ``run``: drops files with an ``experimental`` path part
                                                       unless ``--experimental`` (``ParseArguments.py``
                                                       @2680ace6a717)
``derivation``                 7d9fb683's, but for     :data:`~tensilekit.model.derive_tensilelite.
                               the swizzle defaults    LITE_DERIVATION_5X_PROVISIONAL`; 5.x's
                                                       ``SolutionStructs`` (DirectToVgpr, ASEM, Stream-K
                                                       types) not read yet
=============================  ======================  =====================================================

Not modelled from 5.x: the k-d tree GridBased lookup (``PropertyMatching.hpp`` @1236de37, a table's
``UseKdTree`` or ``TENSILE_GRIDBASED_KDTREE``), origami's grid and its ``parallel`` reduction
(workspace ``requiredWorkspaceSizeGsu(skGrid / tiles)``), and the ``TENSILE_STREAMK_*`` overrides.
Its client builds' task predicates (``WorkspaceCheck``, ``LaunchLimits``: ``ContractionTaskPredicates.hpp``
@1ea8c64f53e4) need no field: :mod:`tensilekit.predicates.evaluate` reads them, and no earlier runtime
loads them.

:func:`version_of_solutions` reads the version off a master: 0.12.1's TensileCreateLibrary
writes ``swizzleTensorA`` into every solution's problem type and ``SwizzleTensorA`` /
``WorkgroupNumberCheck`` predicates, which the 7d9fb683 runtime cannot even load (``Unknown subclass
type SwizzleTensorA``); a master with a task predicate is 5.x's; anything else is 7d9fb683's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from tensilekit.errors import SelectionError
from tensilekit.model.derive_tensilelite import (
    LITE_DERIVATION_0_12_1,
    LITE_DERIVATION_5X_PROVISIONAL,
    LITE_DERIVATION_7D9FB683,
    LiteDerivationRules,
)
from tensilekit.predicates.evaluate import DEFAULT_RULES, PredicateRules


@dataclasses.dataclass(frozen=True)
class HipblasltVersion:
    """One hipBLASLt runtime version and its rules (see the module docstring's table)."""

    name: str
    grid_batch_first: bool
    grid_ties_to_later: bool
    grid_k_ratio: bool
    f16_compute_as_float: bool
    workspace_counts_synchronizer: bool
    predicate_rules: PredicateRules
    selection_method_metrics: tuple[tuple[int, str], ...] = ()
    """``TENSILE_SOLUTION_SELECTION_METHOD`` value → the performance metric every problem reports
    (empty: the version does not read the variable)."""
    all_solutions_gate_streamk_rows: bool = False
    index_lookup_hides_streamk: bool = False
    """``getSolutionsFromIndex`` (how hipBLASLt takes a solution a tuning file, TunableOp or AITER
    names by index: ``getSolutionByIndex(hardware, index)``) hands out no Stream-K solution
    (``sizeMapping.streamK > 0``) unless the selection method is 2."""
    streamk_partials_optional: bool = False
    """A Stream-K kernel asks workspace for its partial tiles only when its grid leaves some
    (``tiles % grid != 0``) and they fit the workspace given, else none (it runs data-parallel): a
    workspace never refuses it (:func:`~tensilekit.predicates.evaluate.lite_required_workspace`)."""
    streamk_grid_predicted: bool = False
    """A Stream-K kernel's grid, which sizes its workspace (``getSKGrid``), is the tile count for
    K = 0 and else ``best_predicted_grid_size``'s (``TENSILE_STREAMK_DYNAMIC_GRID`` defaults to
    3), not the CU count (the variable defaults to 0):
    :func:`~tensilekit.predicates.evaluate.streamk_grid`."""
    builds_swizzle_fields: bool = False
    """TensileCreateLibrary writes ``swizzleTensorA/B`` into every problem type and
    ``SwizzleTensorA/B`` type predicates (Contractions.py:71, 260-262, 380-381 @0.12.1)."""
    swizzle_full_tile_predicates: bool = False
    """A swizzled kernel also gets the predicates that keep it off a tail loop (SwizzleTensorA on TT:
    ``BoundSizeMultiple`` DepthU; SwizzleTensorB: ``Free1SizeMultiple`` MT1 and ``BoundSizeMultiple``
    DepthU; Contractions.py:518-527 @0.12.1). 5.x writes only the ``SwizzleTensorA/B`` predicates
    (``projects/hipblaslt/tensilelite/Tensile/Contractions.py`` @72d2079f405e ``CompoundPredicates``)."""
    builds_workgroup_number_check: bool = False
    """TensileCreateLibrary gives every kernel with ``KernArgsVersion`` ≥ 1 that is no Stream-K
    kernel a ``WorkgroupNumberCheck [MT0, MT1, GSU]`` (Contractions.py:452-458 @0.12.1)."""
    experimental_logic_opt_in: bool = False
    """TensileCreateLibrary reads a logic file with a folder named ``experimental`` (any case) in its
    path only when given ``--experimental`` (TensileCreateLibrary.py:533-534, 669-671 @0.12.1; 7d9fb683
    has no such option and reads them all)."""
    derivation: LiteDerivationRules = LITE_DERIVATION_7D9FB683
    """How its TensileCreateLibrary derives each logic-file solution (``Solution(state)``)."""
    names_min_5x: bool = False
    """Kernels are named by :func:`~tensilekit.model.naming_tensilelite.name_min_5x`, not :class:`MinNaming`."""
    merge_script: str = "7d9fb683"
    """Its files' ``Utilities/merge.py`` (:data:`~tensilekit.merge.merge_versions.MERGE_SCRIPTS`)."""
    assembles_isas: frozenset[tuple[int, int, int]] = frozenset()
    """ISAs 7d9fb683's derivation turns into ``[9, 0, 0]`` that this version keeps (its assembler has them)."""

    def selection_metric(self, method: int) -> str | None:
        """The metric a problem reports under selection method ``method`` (None: its own)."""
        return dict(self.selection_method_metrics).get(method)

    def __str__(self) -> str:
        return self.name


HIPBLASLT_7D9FB683 = HipblasltVersion(
    "7d9fb683",
    grid_batch_first=False,
    grid_ties_to_later=False,
    grid_k_ratio=True,
    f16_compute_as_float=False,
    workspace_counts_synchronizer=True,
    predicate_rules=DEFAULT_RULES,
)
"""hipBLASLt 7d9fb683 (tensilelite 4.33.0, Oct 2024; ROCm 6.3)."""

HIPBLASLT_0_12_1 = HipblasltVersion(
    "0.12.1",
    grid_batch_first=True,
    grid_ties_to_later=True,
    grid_k_ratio=False,
    f16_compute_as_float=True,
    workspace_counts_synchronizer=False,
    predicate_rules=PredicateRules(synchronizer_slots=409600),
    selection_method_metrics=((1, "ExperimentalDTree"), (2, "ExperimentalStreamK")),
    all_solutions_gate_streamk_rows=True,
    index_lookup_hides_streamk=True,
    streamk_grid_predicted=True,
    builds_swizzle_fields=True,
    swizzle_full_tile_predicates=True,
    builds_workgroup_number_check=True,
    experimental_logic_opt_in=True,
    derivation=LITE_DERIVATION_0_12_1,
)
"""hipBLASLt 0.12.1 (ROCm 6.4; the C++ of ``../shared/amd/oracle-tensilelite/0.12.1``)."""

TENSILELITE_5X = HipblasltVersion(
    "5.x",
    grid_batch_first=True,
    grid_ties_to_later=True,
    grid_k_ratio=False,
    f16_compute_as_float=True,
    workspace_counts_synchronizer=False,
    predicate_rules=PredicateRules(synchronizer_slots=409600),
    selection_method_metrics=((1, "ExperimentalMLP"), (2, "ExperimentalStreamK")),
    all_solutions_gate_streamk_rows=True,
    index_lookup_hides_streamk=False,
    streamk_partials_optional=True,
    streamk_grid_predicted=True,
    builds_swizzle_fields=True,
    builds_workgroup_number_check=True,
    experimental_logic_opt_in=True,
    derivation=LITE_DERIVATION_5X_PROVISIONAL,
    names_min_5x=True,
    merge_script="5.x",
    assembles_isas=frozenset({(9, 5, 0)}),
)
"""tensilelite 5.x (2026; ``MinimumRequiredVersion: 5.0.0``); its rules and where they were read: module docstring."""

HIPBLASLT_VERSIONS = {v.name: v for v in (HIPBLASLT_7D9FB683, HIPBLASLT_0_12_1, TENSILELITE_5X)}
"""The versions by name, oldest first (``--hipblaslt-version``)."""

SOLUTION_SELECTION_METHOD_VARIABLE = "TENSILE_SOLUTION_SELECTION_METHOD"
"""The environment variable hipBLASLt 0.12.1's runtime reads the selection method from."""

DEFAULT_HIPBLASLT_VERSION = HIPBLASLT_7D9FB683
"""What a master that shows no later version's fields is taken for."""

_MARKERS_0_12_1 = frozenset({"SwizzleTensorA", "SwizzleTensorB", "WorkgroupNumberCheck", "ExperimentalStreamK"})
"""Predicates only 0.12.1's TensileCreateLibrary writes."""


def hipblaslt_version_named(name: str | HipblasltVersion) -> HipblasltVersion:
    """``"7d9fb683"``, ``"0.12.1"`` or ``"5.x"`` (a :class:`HipblasltVersion` passes through).

    Raises SelectionError for another name, TypeError for something that is no str."""
    if isinstance(name, HipblasltVersion):
        return name
    if not isinstance(name, str):
        raise TypeError(f"hipblaslt_version must be a version name (str), not {type(name).__name__}")
    version = HIPBLASLT_VERSIONS.get(name.strip().lower().removeprefix("v"))
    if version is None:
        raise SelectionError(f"unknown hipBLASLt version {name!r}: one of {', '.join(HIPBLASLT_VERSIONS)}")
    return version


def loads(runtime_version: HipblasltVersion, master_version: HipblasltVersion) -> bool:
    """Whether ``runtime_version``'s runtime loads a master of ``master_version``: an older runtime
    does not know a later version's predicates (hipBLASLt 7d9fb683 stops a 0.12.1 master with
    ``Unknown subclass type SwizzleTensorA``); versions are ordered as :data:`HIPBLASLT_VERSIONS`."""
    order = list(HIPBLASLT_VERSIONS)
    return order.index(runtime_version.name) >= order.index(master_version.name)


def selection_method_from(value: str | int | None) -> int:
    """The selection method of a ``TENSILE_SOLUTION_SELECTION_METHOD`` value or an explicit
    integer (None or empty: 0, the default).

    Raises SelectionError for a value that is no integer ≥ 0."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0
    try:
        method = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value).strip())
    except ValueError:
        method = -1
    if method < 0:
        raise SelectionError(
            f"{SOLUTION_SELECTION_METHOD_VARIABLE}={value!r}: the solution selection method is an integer "
            "(0 default, 1 decision tree, 2 StreamK)"
        )
    return method


def _predicate_types(predicate: Any) -> Iterable[str]:
    if predicate is None or not hasattr(predicate, "type"):
        return
    yield str(predicate.type)
    value = getattr(predicate, "value", None)
    for item in value if isinstance(value, list) else [value]:
        if hasattr(item, "type"):
            yield from _predicate_types(item)


def version_of_minimum_required(version: str | None) -> HipblasltVersion | None:
    """5.x for a ``MinimumRequiredVersion`` of 5 or later, else None (:func:`version_of_logic` reads fields)."""
    head = str(version or "").strip().split(".", 1)[0]
    return TENSILELITE_5X if head.isdigit() and int(head) >= 5 else None


def version_of_solutions(solutions: Iterable[Any]) -> HipblasltVersion | None:
    """5.x when a tensilelite solution has a task predicate, 0.12.1 when it names 0.12.1's fields,
    7d9fb683 when neither, None when there is no solution to tell by."""
    for solution in solutions:
        if set(_predicate_types(getattr(solution, "task_predicate", None))) - {"TruePred"}:
            return TENSILELITE_5X  # only 5.x's TensileCreateLibrary writes task predicates
        problem_type = getattr(solution, "problem_type", None)
        if isinstance(problem_type, dict) and "swizzleTensorA" in problem_type:
            return HIPBLASLT_0_12_1
        predicate = getattr(solution, "problem_predicate", None)
        if any(kind in _MARKERS_0_12_1 for kind in _predicate_types(predicate)):
            return HIPBLASLT_0_12_1
        return DEFAULT_HIPBLASLT_VERSION
    return None


def version_of_logic(problem_types: Iterable[Any]) -> HipblasltVersion:
    """0.12.1 when a logic file's ``ProblemType`` names 0.12.1's fields (``SwizzleTensorA``), else
    7d9fb683: the version ``build-master`` builds for when not told (a 5.x file is built as 5.x's)."""
    swizzle = ("SwizzleTensorA", "SwizzleTensorB")
    named = any(isinstance(fields, dict) and any(key in fields for key in swizzle) for fields in problem_types)
    return HIPBLASLT_0_12_1 if named else DEFAULT_HIPBLASLT_VERSION


def version_of_logic_files(logic_files: Iterable[Any]) -> HipblasltVersion:
    """The version whose TensileCreateLibrary builds these logic files (loaded YAML) when none is
    named: 5.x when one says ``MinimumRequiredVersion`` 5 or later (only 5.x's reads it), else
    :func:`version_of_logic` of their problem types."""
    files = [data for data in logic_files if isinstance(data, list)]
    for data in files:
        header = data[0] if data and isinstance(data[0], dict) else {}
        if (told := version_of_minimum_required(header.get("MinimumRequiredVersion"))) is not None:
            return told
    return version_of_logic(data[4] for data in files if len(data) > 4)


def version_of_logic_file(minimum_required: Any, problem_type: Any) -> HipblasltVersion:
    """:func:`version_of_logic_files` of one file, from its header's ``MinimumRequiredVersion`` and
    its problem type (both as loaded)."""
    return version_of_minimum_required(minimum_required) or version_of_logic([problem_type])


def build_version_of(logic_files: Iterable[Any], named: str | HipblasltVersion | None = None) -> HipblasltVersion:
    """The version a build of these logic files (loaded YAML) follows: the one ``named`` (a name
    :func:`hipblaslt_version_named` knows, or a version), else :func:`version_of_logic_files`."""
    return version_of_logic_files(logic_files) if named is None else hipblaslt_version_named(named)


def version_written_for(minimum_required: Any, build: HipblasltVersion) -> HipblasltVersion:
    """The version a file was written for within a build of version ``build``: 5.x when its header's
    ``MinimumRequiredVersion`` says so (5.x's files name 5.x's kernels whatever builds them), else
    the build's."""
    return version_of_minimum_required(minimum_required) or build


def version_of_rows(predicates: Iterable[Any]) -> HipblasltVersion:
    """0.12.1 when a problem row's predicate tests one of 0.12.1's fields, else 7d9fb683."""
    named = any(kind in _MARKERS_0_12_1 for predicate in predicates for kind in _predicate_types(predicate))
    return HIPBLASLT_0_12_1 if named else DEFAULT_HIPBLASLT_VERSION


__all__ = [
    "DEFAULT_HIPBLASLT_VERSION",
    "HIPBLASLT_0_12_1",
    "HIPBLASLT_7D9FB683",
    "HIPBLASLT_VERSIONS",
    "HipblasltVersion",
    "build_version_of",
    "SOLUTION_SELECTION_METHOD_VARIABLE",
    "TENSILELITE_5X",
    "hipblaslt_version_named",
    "loads",
    "selection_method_from",
    "version_of_logic",
    "version_of_logic_file",
    "version_of_logic_files",
    "version_of_minimum_required",
    "version_written_for",
    "version_of_rows",
    "version_of_solutions",
]

"""Which runtime answers the query: Tensile's (rocBLAS) or tensilelite's (hipBLASLt).

Both runtimes walk the same library tree with the same predicates and distances; they differ in a
handful of rules, and every one of them lives here, behind :class:`Runtime`:

=====================  ======================================  ==============================================
rule                   Tensile (rocBLAS)                       tensilelite (hipBLASLt 7d9fb683)
=====================  ======================================  ==============================================
problem of a query     rocBLAS ``ConstructTensileProblem``     ``updateTensileProblem`` (heuristic path):
                                                               hipBLASLt compute types, computeInputType,
                                                               workspace = the preference's bytes
answer (top 1)         ``findBestSolution``                    ``findTopSolutions(problem, hw, 1)``, retried
                                                               with ``F32XdlMathOp = Float`` for
                                                               ``f32_fast_xf32`` when it finds nothing
GridBased key          as built from the properties            batch folded into M (if M > N) or N, batch 1
                                                               (``PropertyMatching.hpp``, before the walk)
top N                  re-select with the winners excluded     ``findTopSolutions(.., N)``: GridBased
                       (no such runtime call; tensilekit's)    M/N group walk, rows concatenated without
                                                               de-duplication, then ``getAllSolutions``
                                                               (GEMM_TYPE_ONLY) appended when short
all solutions          ``findAllSolutions`` (DEFAULT)          ``getAllSolutions`` (GEMM_TYPE_ONLY) filtered
                                                               by ``isSolutionSupported``
Matching table order   libstdc++ ``std::sort``, key ascending  the same (``Serialization/MatchingLibrary.hpp``
                       then speed descending; equal entries    of hipBLASLt 7d9fb683)
                       as introsort leaves them
                       (``Serialization/MatchingLibrary.hpp``
                       @ Tensile 09ec347 / a164ed70)
duplicate solution     the last solution of an index: ``lib.solutions[s->index] = s`` in
index                  ``Serialization/SolutionLibrary.hpp`` ``MappingTraits<MasterSolutionLibrary>``, both
                       (not a runtime rule here: :meth:`MasterLibrary.solutions_by_index
                       <tensilekit.model.library.MasterLibrary.solutions_by_index>` keeps the last for both)
=====================  ======================================  ==============================================

Predicates whose two dialects differ in *shape* (``WorkspaceCheck`` flag vs ``[elemC, elemBias,
GSU]``, ``GlobalSplitUCheckMinK`` int vs ``[minK, GSU]``) are told apart by their value in
:mod:`tensilekit.predicates.evaluate`, not here: a master holds one dialect or the other.

:func:`detect_runtime` reads the runtime off a master (tensilelite's solutions name a
``computeInputType``); :func:`runtime_named` gives one by name (``--runtime``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tensilekit.errors import SelectionError
from tensilekit.model.common import DataType
from tensilekit.model.library import MasterLibrary
from tensilekit.model.solution import MasterSolution
from tensilekit.predicates.evaluate import DEFAULT_RULES, PredicateRules, evaluate, lite_required_workspace
from tensilekit.selection.answer import Candidate, Selection
from tensilekit.selection.distance import DistanceFunction, grid_based_distance, grid_based_distance_absolute_k
from tensilekit.selection.hipblaslt_versions import (
    DEFAULT_HIPBLASLT_VERSION,
    HIPBLASLT_VERSIONS,
    SOLUTION_SELECTION_METHOD_VARIABLE,
    HipblasltVersion,
    hipblaslt_version_named,
    selection_method_from,
    version_of_rows,
    version_of_solutions,
)
from tensilekit.selection.problem import (
    ContractionProblem,
    GemmProblem,
    Hardware,
    PerformanceMetric,
    problem_from_query,
    problem_of_record,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from tensilekit.selection.walk import ReferenceSelector

RUNTIME_NAMES = ("tensile", "hipblaslt")
"""Runtime names accepted by :func:`runtime_named` (and ``--runtime``)."""

FORMAT_DEFAULT: Any = object()
"""``problem_from_query(default_workspace=...)``: the query format's own default."""

HIPBLASLT_DEFAULT_WORKSPACE = 128 * 1024 * 1024
"""The workspace bytes a hipBLASLt problem allows unless told: hipblaslt-bench's
``max_workspace_size`` (``clients/include/testing_matmul.hpp`` "set preference", ROCm/hipBLASLt
ea61496; rocm-libraries 030f115 makes it ``--user_allocated_workspace``), what applications using
the heuristic typically pass. A log does not record it."""


@dataclasses.dataclass(frozen=True)
class TopSolutions:
    """What a runtime lists for ``--top N``: its own ranked answer and, for hipBLASLt, the
    ``getAllSolutions`` fallback appended when the ranking came up short.

    ``ranked`` is in the runtime's order (hipBLASLt may repeat a kernel: rows are concatenated
    without de-duplication). ``fallback`` holds the supported kernels not already listed, sorted
    by index: hipBLASLt gathers them in a ``std::set`` of pointers, so its order is unspecified.
    ``distances`` belongs to ``ranked`` (None where the runtime reports none).
    """

    ranked: tuple[MasterSolution, ...]
    distances: tuple[float | None, ...]
    fallback: tuple[MasterSolution, ...] = ()
    retried: bool = False
    """hipBLASLt's XF32 → Float retry supplied the ranking."""


class Runtime:
    """The rules one runtime applies on top of the shared library walk (see the module docstring)."""

    name: ClassVar[str] = ""
    label: str = ""
    """How ``info`` and the docs name the runtime (with its version where it has one)."""
    default_workspace_size: ClassVar[int | None] = None
    """Workspace bytes a problem allows when the caller does not say (None: unlimited)."""

    def problem_from_query(self, record: dict[str, Any], *, default_workspace: Any = FORMAT_DEFAULT) -> GemmProblem:
        """The problem this runtime builds from one query line (``corpus/select`` format); a
        tensilekit answer's ``problem`` object is taken as it is. ``default_workspace`` is what a
        record without ``workspace_size`` allows (bytes, None = unlimited; by default the query
        format's own: Tensile unlimited, ``corpus/select-hipblaslt`` 0)."""
        full = record.get("problem")
        if isinstance(full, dict):
            return problem_of_record(full)
        if default_workspace is not FORMAT_DEFAULT and "workspace_size" not in record:
            record = {**record, "workspace_size": default_workspace}
        return self._problem_from_query(record)

    def _problem_from_query(self, record: dict[str, Any]) -> GemmProblem:
        raise NotImplementedError

    def lists_row_of_gemm_type(self, predicate: Any, problem: ContractionProblem, hardware: Hardware) -> bool:
        """Whether ``findAllSolutions(.., GEMM_TYPE_ONLY)`` walks a problem row of this predicate
        (it asks no problem row's predicate, but for a version's exceptions)."""
        return True

    def hides_by_index(self, solution: MasterSolution) -> bool:
        """Whether the runtime's by-index lookup (what a tuning file, TunableOp or AITER names a
        solution by) does not hand out ``solution`` (none here)."""
        return False

    def problem_from_workload(self, gemm: Any, workspace_size: int | None = None) -> GemmProblem:
        """The problem this runtime builds for one workload GEMM (a hipBLASLt log line …)."""
        raise NotImplementedError

    def attempts(self, problem: ContractionProblem) -> list[ContractionProblem]:
        """The problems the runtime tries in turn until one finds a kernel (usually just one)."""
        return [problem]

    def retried(self, columns: Any) -> npt.NDArray[np.bool_]:
        """Which queries of a batch (:class:`~tensilekit.selection.columns.ProblemColumns`) have
        further :meth:`attempts` (none here)."""
        import numpy as np

        return np.zeros(columns.size, dtype=bool)

    def grid_key(self, key: tuple[int, ...]) -> tuple[int, ...]:
        """The key a ``GridBased`` table is walked with (the query key, possibly adjusted)."""
        return key

    def table_order(self, keys: Sequence[tuple[int, ...]], speeds: Sequence[float]) -> list[int]:
        """Positions of a ``Matching`` table's entries (as written) in the order this runtime's
        loader sorts them; every kind of table (Euclidean and the other distances, Equality,
        GridBased) is searched in that order, so it decides which of several entries of one key
        answers. Both runtimes run the same ``std::sort`` (see the subclasses)."""
        from tensilekit.selection.stdsort import matching_table_order

        return matching_table_order(keys, speeds)

    def grid_keys(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """:meth:`grid_key` for many query keys (rows) at once."""

        return keys

    @property
    def grid_batch_first(self) -> bool:
        """Whether ``GridBased`` tables are walked by (M, N, batch) cells, batch folded only after
        (:mod:`tensilekit.selection.grid_batch_walk`), instead of by (M, N) cells with the key of
        :meth:`grid_key`."""
        return False

    @property
    def grid_distance(self) -> DistanceFunction:
        """The ``GridBased`` distance this runtime computes."""
        return grid_based_distance

    @property
    def predicate_rules(self) -> PredicateRules:
        """How this runtime evaluates the predicates whose meaning changed between versions."""
        return DEFAULT_RULES

    def top(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware, count: int
    ) -> TopSolutions:
        """The runtime's ``count`` best kernels for ``problem``."""
        raise NotImplementedError

    def all_solutions(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware
    ) -> list[MasterSolution]:
        """Every kernel the runtime lists for ``problem`` (its "all solutions" call), by index."""
        raise NotImplementedError

    def alternatives(
        self,
        selector: ReferenceSelector,
        problem: ContractionProblem,
        hardware: Hardware,
        count: int,
        selection: Selection,
    ) -> tuple[Candidate, ...]:
        """``--top count`` as :class:`Candidate` s beside the top-1 ``selection``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class TensileRuntime(Runtime):
    """rocBLAS's Tensile: ``findBestSolution``; ``--top`` re-selects with the winners excluded."""

    name = "tensile"
    label = "Tensile (rocBLAS)"

    def table_order(self, keys: Sequence[tuple[int, ...]], speeds: Sequence[float]) -> list[int]:
        # Tensile 09ec347 / a164ed70 Source/lib/include/Tensile/Serialization/MatchingLibrary.hpp,
        # MappingTraits<DistanceMatchingTable>::mapping: std::sort by (key <, speed >) right after
        # reading "table" (speed is mapRequired there), for every distance.
        return super().table_order(keys, speeds)

    def _problem_from_query(self, record: dict[str, Any]) -> GemmProblem:
        return problem_from_query(record)

    def problem_from_workload(self, gemm: Any, workspace_size: int | None = None) -> GemmProblem:
        from tensilekit.selection.workload_problem import tensile_problem_from_workload

        return tensile_problem_from_workload(gemm, workspace_size)

    def top(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware, count: int
    ) -> TopSolutions:
        ranked: list[MasterSolution] = []
        distances: list[float | None] = []
        excluded: list[int] = []
        for _ in range(count):
            following = selector.select(problem, hardware, exclude=excluded)
            if following.solution is None:
                break
            ranked.append(following.solution)
            distances.append(following.distance)
            excluded.append(following.solution.index)
        return TopSolutions(tuple(ranked), tuple(distances))

    def all_solutions(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware
    ) -> list[MasterSolution]:
        return selector.find_all(problem, hardware)

    def alternatives(
        self,
        selector: ReferenceSelector,
        problem: ContractionProblem,
        hardware: Hardware,
        count: int,
        selection: Selection,
    ) -> tuple[Candidate, ...]:
        # The next ``count`` kernels after the selection (rank 1 = the runner-up).
        if selection.index is None:
            return ()
        ranking = self.top(selector, problem, hardware, count + 1)
        return tuple(
            Candidate(rank=rank, index=s.index, name=s.name, distance=d, source="reselect")
            for rank, (s, d) in enumerate(zip(ranking.ranked, ranking.distances, strict=True))
            if rank > 0
        )


class HipblasltRuntime(Runtime):
    """hipBLASLt's tensilelite: the heuristic path of ``rocblaslt_algo_get_heuristic``, with the
    rules of one hipBLASLt ``version`` (:mod:`tensilekit.selection.hipblaslt_versions`)."""

    name = "hipblaslt"
    default_workspace_size = HIPBLASLT_DEFAULT_WORKSPACE

    def __init__(self, version: HipblasltVersion = DEFAULT_HIPBLASLT_VERSION, selection_method: int = 0) -> None:
        self.version = version
        """The hipBLASLt version whose rules this runtime follows."""
        self.selection_method = selection_method
        """``TENSILE_SOLUTION_SELECTION_METHOD`` as the runtime was started with (0: unset); only a
        version that reads it (:attr:`HipblasltVersion.selection_method_metrics`) acts on it."""
        self.label = f"hipBLASLt {version.name}"
        metric = version.selection_metric(selection_method)
        if metric is not None:
            self.label += f" ({SOLUTION_SELECTION_METHOD_VARIABLE}={selection_method}: {metric})"

    def reported_metric(self, problem: GemmProblem) -> GemmProblem:
        """``problem`` with the performance metric this runtime's problems report: the selection
        method's where the version reads one (``ContractionProblemGemm::performanceMetric``
        returns it instead of the problem's own), else the problem's own."""
        metric = self.version.selection_metric(self.selection_method)
        if metric is None or problem.performance_metric.value == metric:
            return problem
        return problem.model_copy(update={"performance_metric": PerformanceMetric(metric)})

    def lists_row_of_gemm_type(self, predicate: Any, problem: ContractionProblem, hardware: Hardware) -> bool:
        # 0.12.1's findAllSolutions(GEMM_TYPE_ONLY) leaves out an ExperimentalStreamK row unless the
        # problem reports that metric (measured with its C++: all_supported, see hipblaslt_versions)
        if self.version.all_solutions_gate_streamk_rows and getattr(predicate, "type", None) == "ExperimentalStreamK":
            return evaluate(predicate, problem, hardware).passed
        return True

    def hides_by_index(self, solution: MasterSolution) -> bool:
        # hipBLASLt's getSolutionsFromIndex (tensile_host.cpp) asks getSolutionByIndex(hardware, index);
        # 0.12.1's MasterSolutionLibrary::getSolutionByIndex(Hardware const&, int) (read from the 0.12.1
        # oracle's code: it reads sizeMapping.streamK and Debug::useExperimentalSelection()) returns
        # nothing for a Stream-K solution unless the selection method is 2; 7d9fb683's is a map lookup
        mapping = solution.size_mapping
        return (
            self.version.index_lookup_hides_streamk
            and int(getattr(mapping, "stream_k", 0) or 0) > 0
            and self.version.selection_metric(self.selection_method) != "ExperimentalStreamK"
        )

    def table_order(self, keys: Sequence[tuple[int, ...]], speeds: Sequence[float]) -> list[int]:
        # hipBLASLt 7d9fb683 tensilelite/Tensile/Source/lib/include/Tensile/Serialization/
        # MatchingLibrary.hpp, MappingTraits<DistanceMatchingTable>::mapping: the same std::sort;
        # "speed" is mapOptional (GridBased entries have none: value-initialised 0.0, so all of a
        # key's entries tie). The kSolutionMap/kd-tree built after it for GridBased is used only
        # under TENSILE_GRIDBASED_KDTREE, not modelled.
        return super().table_order(keys, speeds)

    def _problem_from_query(self, record: dict[str, Any]) -> GemmProblem:
        from tensilekit.selection.hipblaslt import problem_from_hipblaslt_query

        return self.reported_metric(problem_from_hipblaslt_query(record, self.version))

    def problem_from_workload(self, gemm: Any, workspace_size: int | None = None) -> GemmProblem:
        from tensilekit.selection.hipblaslt import hipblaslt_problem_from_workload

        return self.reported_metric(hipblaslt_problem_from_workload(gemm, workspace_size, self.version))

    def attempts(self, problem: ContractionProblem) -> list[ContractionProblem]:
        # tensile_host.cpp getBestSolutions: nothing found for f32_fast_xf32 -> retry as plain Float.
        if problem.f32_xdl_math_op is DataType.XFLOAT32:
            return [problem, dataclasses.replace(problem, f32_xdl_math_op=DataType.FLOAT)]
        return [problem]

    def retried(self, columns: Any) -> npt.NDArray[np.bool_]:
        import numpy as np

        return np.asarray(columns.f32_xdl_math_op == DataType.XFLOAT32.value, dtype=bool)

    def grid_key(self, key: tuple[int, ...]) -> tuple[int, ...]:
        # PropertyMatching.hpp findBestKeyMatch_GridBased (hipBLASLt 7d9fb683), unless
        # TENSILE_GRIDBASED_BATCH_EXP is set: batch folds into the larger of M and N, then 1.
        # (0.12.1 folds inside its walk, only after the batch lookup: grid_batch_first.)
        if len(key) < 4 or key[2] == 1 or self.version.grid_batch_first:
            return key
        m, n, batch = key[0], key[1], key[2]
        if m > n:
            m *= batch
        else:
            n *= batch
        return (m, n, 1, *key[3:])

    def grid_keys(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        import numpy as np

        if keys.shape[1] < 4 or self.version.grid_batch_first:
            return keys
        folded = keys.copy()
        batch = keys[:, 2]
        m_larger = keys[:, 0] > keys[:, 1]
        folded[:, 0] = np.where(m_larger, keys[:, 0] * batch, keys[:, 0])
        folded[:, 1] = np.where(m_larger, keys[:, 1], keys[:, 1] * batch)
        folded[:, 2] = 1
        return folded

    def top(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware, count: int
    ) -> TopSolutions:
        tried = self.attempts(problem)
        ranked: list[MasterSolution] = []
        attempt = problem
        for attempt in tried:
            ranked = selector.find_top(attempt, hardware, count)
            if ranked:
                break
        retried = bool(ranked) and attempt is not tried[0]
        listed = {solution.index for solution in ranked}
        fallback: list[MasterSolution] = []
        if len(ranked) < count:
            fallback = [s for s in self.all_solutions(selector, problem, hardware) if s.index not in listed]
        return TopSolutions(tuple(ranked), tuple(None for _ in ranked), tuple(fallback), retried)

    def alternatives(
        self,
        selector: ReferenceSelector,
        problem: ContractionProblem,
        hardware: Hardware,
        count: int,
        selection: Selection,
    ) -> tuple[Candidate, ...]:
        # findTopSolutions(count) as hipBLASLt lists it (rank 1 first; it can differ from the top-1
        # answer), then the getAllSolutions fallback.
        ranking = self.top(selector, problem, hardware, count)
        listed = [(s, "findTopSolutions") for s in ranking.ranked] + [(s, "getAllSolutions") for s in ranking.fallback]
        return tuple(
            Candidate(rank=rank, index=s.index, name=s.name, distance=None, source=source)
            for rank, (s, source) in enumerate(listed, start=1)
        )

    def all_solutions(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware
    ) -> list[MasterSolution]:
        # getAllSolutions (tensile_host.cpp): GEMM_TYPE_ONLY, XF32 -> Float retry when empty; the
        # caller keeps what isSolutionSupported accepts: hardware and problem predicates, and the
        # solution's requiredWorkspaceSize within the workspace (stricter than WorkspaceCheck).
        attempt, candidates = self.gemm_type_solutions(selector, problem, hardware)
        return [
            s
            for s in candidates
            if selector.supports(s, attempt, hardware)
            and self.required_workspace(attempt, hardware, s) <= attempt.workspace_size
        ]

    def required_workspace(self, problem: ContractionProblem, hardware: Hardware, solution: MasterSolution) -> int:
        """``requiredWorkspaceSize`` of ``solution`` for ``problem`` as this version counts it."""
        return lite_required_workspace(
            problem, hardware, solution, synchronizer=self.version.workspace_counts_synchronizer,
            streamk_grid_predicted=self.version.streamk_grid_predicted,
            streamk_partials_optional=self.version.streamk_partials_optional,
        )  # fmt: skip

    def gemm_type_solutions(
        self, selector: ReferenceSelector, problem: ContractionProblem, hardware: Hardware
    ) -> tuple[ContractionProblem, list[MasterSolution]]:
        """``findAllSolutions(.., GEMM_TYPE_ONLY)`` with the XF32 → Float retry when it lists
        nothing: (the problem that listed them, the kernels by index)."""
        tried = self.attempts(problem)
        for attempt in tried:
            candidates = selector.find_all_gemm_type(attempt, hardware)
            if candidates:
                return attempt, candidates
        return tried[-1], []

    @property
    def grid_batch_first(self) -> bool:
        return self.version.grid_batch_first

    @property
    def grid_distance(self) -> DistanceFunction:
        return grid_based_distance if self.version.grid_k_ratio else grid_based_distance_absolute_k

    @property
    def predicate_rules(self) -> PredicateRules:
        return self.version.predicate_rules

    def __repr__(self) -> str:
        method = f", selection_method={self.selection_method}" if self.selection_method else ""
        return f"{type(self).__name__}({self.version.name!r}{method})"


TENSILE = TensileRuntime()
HIPBLASLT_RUNTIMES: dict[str, HipblasltRuntime] = {
    version.name: HipblasltRuntime(version) for version in HIPBLASLT_VERSIONS.values()
}
"""One hipBLASLt runtime per version (:data:`~tensilekit.selection.hipblaslt_versions.HIPBLASLT_VERSIONS`)."""
HIPBLASLT = HIPBLASLT_RUNTIMES[DEFAULT_HIPBLASLT_VERSION.name]
"""hipBLASLt 7d9fb683's runtime (what ``"hipblaslt"`` names)."""
_BY_NAME: dict[str, Runtime] = {TENSILE.name: TENSILE, HIPBLASLT.name: HIPBLASLT}


_WITH_SELECTION_METHOD: dict[tuple[str, int], HipblasltRuntime] = {}


def hipblaslt_runtime(version: str | HipblasltVersion, selection_method: int = 0) -> HipblasltRuntime:
    """The hipBLASLt runtime of ``version`` (``"7d9fb683"``, ``"0.12.1"``, ``"5.x"``) started with
    ``TENSILE_SOLUTION_SELECTION_METHOD=selection_method`` (0: unset; a version that does not read
    the variable ignores it). One object per (version, method), so runtimes compare by identity.

    Raises SelectionError for an unknown version or a negative method, TypeError for something
    that is no str."""
    named = hipblaslt_version_named(version)
    method = selection_method_from(selection_method)
    if method == 0 or named.selection_metric(method) is None:
        return HIPBLASLT_RUNTIMES[named.name]
    key = (named.name, method)
    if key not in _WITH_SELECTION_METHOD:
        _WITH_SELECTION_METHOD[key] = HipblasltRuntime(named, method)
    return _WITH_SELECTION_METHOD[key]


def resolve_runtime(
    runtime: str | Runtime | None, hipblaslt_version: str | HipblasltVersion | None, detected: Callable[[], Runtime],
    selection_method: int = 0,
) -> Runtime:  # fmt: skip
    """The runtime a caller's ``runtime`` and ``hipblaslt_version`` choose for a library whose own
    runtime ``detected()`` gives (called only when needed). Unnamed, the runtime is the library's;
    ``"hipblaslt"`` without a version takes the library's hipBLASLt version when it has one.
    ``selection_method``: ``TENSILE_SOLUTION_SELECTION_METHOD`` for a hipBLASLt runtime (Tensile's
    and hipBLASLt versions that do not read it ignore it, as they do).

    Raises SelectionError for an unknown name, or a hipBLASLt version with Tensile's runtime."""
    chosen = runtime_named(runtime) if runtime is not None else None
    if chosen is None or (isinstance(runtime, str) and isinstance(chosen, HipblasltRuntime) and not hipblaslt_version):
        library_runtime = detected()
        if chosen is None or isinstance(library_runtime, HipblasltRuntime):
            chosen = library_runtime
    chosen = with_hipblaslt_version(chosen, hipblaslt_version)
    if isinstance(chosen, HipblasltRuntime) and selection_method:
        return hipblaslt_runtime(chosen.version, selection_method)
    return chosen


def with_hipblaslt_version(runtime: Runtime, version: str | HipblasltVersion | None) -> Runtime:
    """``runtime`` with its hipBLASLt version replaced by ``version`` (None: as it is), its selection
    method kept.

    Raises SelectionError when ``runtime`` is Tensile's (it has no hipBLASLt version)."""
    if version is None:
        return runtime
    if not isinstance(runtime, HipblasltRuntime):
        raise SelectionError(f"a hipBLASLt version ({version}) applies to the hipBLASLt runtime, not to {runtime.name}")
    return hipblaslt_runtime(version, runtime.selection_method)  # the method it was started with stays


def runtime_named(name: str | Runtime) -> Runtime:
    """``"tensile"`` or ``"hipblaslt"`` (a :class:`Runtime` passes through).

    Raises SelectionError for another name, TypeError for something that is no str."""
    if isinstance(name, Runtime):
        return name
    if not isinstance(name, str):
        raise TypeError(f"runtime must be a runtime name (str) or a Runtime, not {type(name).__name__}")
    runtime = _BY_NAME.get(name.lower())
    if runtime is None:
        raise SelectionError(f"unknown runtime {name!r}: one of {', '.join(RUNTIME_NAMES)}")
    return runtime


def is_tensilelite_solution(solution: MasterSolution) -> bool:
    """tensilelite writes ``computeInputType`` into each solution's problem type; Tensile does not."""
    problem_type = solution.problem_type
    return isinstance(problem_type, dict) and "computeInputType" in problem_type


def _five_types(predicate: Any) -> bool:
    if predicate is None:
        return False
    if predicate.type == "TypesEqual":
        return len(predicate.value) == 5
    value = getattr(predicate, "value", None)
    if isinstance(value, list):
        return any(_five_types(item) for item in value if hasattr(item, "type"))
    return _five_types(value) if hasattr(value, "type") else False


def detect_runtime(library: MasterLibrary | Sequence[MasterSolution]) -> Runtime:
    """The runtime a master was written for: hipBLASLt when its solutions are tensilelite's, of
    the version its fields show (:mod:`~tensilekit.selection.hipblaslt_versions`).

    A lazy master without solutions of its own is tensilelite's when its problem rows test five
    types (``TypesEqual`` with the compute input type). Raises TypeError for another argument."""
    if not isinstance(library, MasterLibrary) and not (
        isinstance(library, Sequence) and all(isinstance(solution, MasterSolution) for solution in library)
    ):
        raise TypeError(f"detect_runtime(): library must be MasterLibrary, not {type(library).__name__}")
    solutions = library.solutions if isinstance(library, MasterLibrary) else library
    for solution in solutions:
        if not is_tensilelite_solution(solution):
            return TENSILE
        return hipblaslt_runtime(version_of_solutions(solutions) or DEFAULT_HIPBLASLT_VERSION)
    if isinstance(library, MasterLibrary):
        rows = [row.predicate for _, node in library.iter_nodes() for row in getattr(node, "rows", None) or []]
        if any(_five_types(predicate) for predicate in rows):
            return hipblaslt_runtime(version_of_rows(rows))
    return TENSILE


__all__ = [
    "HIPBLASLT",
    "HIPBLASLT_DEFAULT_WORKSPACE",
    "HIPBLASLT_RUNTIMES",
    "RUNTIME_NAMES",
    "TENSILE",
    "HipblasltRuntime",
    "Runtime",
    "TensileRuntime",
    "TopSolutions",
    "detect_runtime",
    "hipblaslt_runtime",
    "is_tensilelite_solution",
    "resolve_runtime",
    "runtime_named",
    "with_hipblaslt_version",
]

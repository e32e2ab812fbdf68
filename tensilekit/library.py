"""One object for one library: :func:`open_library` reads it (any form, lazily) and its
:class:`Library` answers every selection question with the runtime's own rules.

Every command (``select``, ``coverage``, ``diff``, ``plot``) and every script holds a
:class:`Library`; the rules a runtime applies on top of the library walk live here or in
:mod:`tensilekit.selection.runtime`, never in the CLI:

* **problem construction** — from M N K and ``--type``-style options (:meth:`Library.problem`),
  from a query record (:meth:`Library.problem_from_query`, also the ``problem`` object of a
  tensilekit answer), from a workload GEMM (:meth:`Library.problem_from_workload`);
* **defaults** — the device (the library's only processor when none is given); hipBLASLt's
  heuristic sets alpha = beta = 1 (``assignAlphaBeta1``) and, unless told, allows a workspace of
  :data:`HIPBLASLT_DEFAULT_WORKSPACE` (128 MiB, hipblaslt-bench's ``max_workspace_size``);
  Tensile's workspace is unlimited;
* **answers** — :meth:`~Library.select`, :meth:`~Library.top`, :meth:`~Library.explain`,
  :meth:`~Library.why_not` (the no-kernel reason, computed once per device and problem type and
  cached), :meth:`~Library.coverage`, :meth:`~Library.solution`, :meth:`~Library.served`.

Answers and problems have one JSON form (:meth:`Library.answer_record`), which every query
reader accepts back: its ``problem`` object rebuilds the very problem that was answered.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from tensilekit.errors import LibraryChanged, Location, SelectionError
from tensilekit.model.common import DataType
from tensilekit.selection.api import select_batch, select_compiled, select_solution, top_solutions
from tensilekit.selection.problem import (
    GEMM_NUMBER_FIELDS,
    GemmProblem,
    Hardware,
    PerformanceMetric,
    contraction_problem,
    hardware_from_query,
    parse_type_spec,
    problem_record,
)
from tensilekit.selection.runtime import (
    HIPBLASLT_DEFAULT_WORKSPACE,
    HipblasltRuntime,
    Runtime,
    TopSolutions,
    resolve_runtime,
    runtime_named,
)
from tensilekit.selection.walk import ReferenceSelector, Selection

if TYPE_CHECKING:
    from tensilekit.coverage import CoverageGemm, CoverageReport
    from tensilekit.model.library import MasterLibrary
    from tensilekit.model.solution import MasterSolution
    from tensilekit.recorded import RecordedSolution, RecordedWorkload
    from tensilekit.selection.api import BatchSelection
    from tensilekit.selection.columns import ColumnsLike
    from tensilekit.selection.fast import CompiledLibrary
    from tensilekit.selection.workload import WorkloadSelection
    from tensilekit.workload.problem import GemmProblem as WorkloadGemm


QUERY_CHUNK = 16_384
"""Query lines :meth:`Library.answer_queries` reads, answers and lets go of at a time: big enough
that the compiled engine's per-batch work (per table reached) is spread thin, small enough to
keep memory flat. ``select --queries`` of 100 000 lines on rocBLAS_Full (one run, shared
machine): 12 288 took 8.9 s of CPU and 562 MB peak, 16 384 8.4 s and 578 MB, 24 576 8.4 s and
608 MB (bench/big_library.py's targets: <= 8 s, <= 600 MB)."""

WALK_AT_MOST = 16
"""Up to this many queries are walked one by one: compiling a table decodes every solution in it,
which a lazily read shard (indexed or ``.dat``) would otherwise do for a single answer."""

COMPILE_SECONDS_PER_KERNEL = 0.5e-3
"""What compiling a library costs per kernel it holds in memory (decoding it and registering its
predicates: rocBLAS_Full.dat.gz's 21 288 kernels took 11 s, aldebaran_NN_mixed's 526 0.28 s; a
lazy master's shards compile when reached, so nothing up front). :meth:`Library.select` walks
until walking has cost that much, then compiles: never much more than twice what the better
choice in hindsight would have cost."""


class ArchRequired(SelectionError):
    """No device was given and the library serves several processors (or none by name)."""


class _Default:
    """The runtime's own default (a sentinel: ``None`` means unlimited workspace)."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""Stands for "the runtime's default" where ``None`` already means something (unlimited)."""

# hipBLASLt compute type of a Tensile compute type, for M N K options (``--type``): hipBLASLt has
# no half/bfloat16/8-bit compute, so a one-type spelling such as ``bf16`` or ``HHS``'s
# half-precision compute means accumulation in f32 (HIPBLAS_COMPUTE_32F), as hipblaslt-bench does.
_HIPBLASLT_COMPUTE = {
    "Float": "f32", "Double": "f64", "Int32": "i32", "XFloat32": "f32_fast_xf32",
    "Half": "f32", "BFloat16": "f32", "Float8": "f32", "BFloat8": "f32", "Float8_fnuz": "f32",
    "BFloat8_fnuz": "f32", "Int8": "i32",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Library:
    """A library opened for selection, with the runtime that answers from it.

    Build one with :func:`open_library`. ``master`` is the library (a lazy master keeps its
    shards unread until a query reaches them; ``loader`` reads them); ``runtime`` answers as
    rocBLAS's Tensile or hipBLASLt's tensilelite does.
    """

    master: MasterLibrary
    loader: Callable[[str], MasterLibrary] | None
    runtime: Runtime
    path: Path | None = None
    device: Hardware | None = None
    """The default device (the given ``arch``, else the library's only processor), or None."""
    arch_defaulted: bool = False
    """No ``arch`` was given: :attr:`device` is the library's only processor."""
    workspace_size: int | None = None
    """Workspace bytes problems built here allow (None: unlimited)."""
    _cache: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    # -- the library --------------------------------------------------------------------------

    @property
    def processors(self) -> list[str]:
        """The gfx processors the library's top-level ``Hardware`` rows name, in row order."""
        if "processors" not in self._cache:
            from tensilekit.api import library_processors

            self._cache["processors"] = library_processors(self.master)
        return list(self._cache["processors"])

    @property
    def reference(self) -> ReferenceSelector:
        """The reference walk (decodes only the solutions a query reaches: a handful of queries)."""
        if "reference" not in self._cache:
            self._cache["reference"] = ReferenceSelector(self.master, self.loader, self.runtime)
        selector: ReferenceSelector = self._cache["reference"]
        return selector

    @property
    def compiled(self) -> CompiledLibrary:
        """The compiled, vectorised engine (built on first use; many queries)."""
        if "compiled" not in self._cache:
            from tensilekit.selection.fast import compile_library

            self._cache["compiled"] = compile_library(self.master, loader=self.loader, runtime=self.runtime)
        compiled: CompiledLibrary = self._cache["compiled"]
        return compiled

    @property
    def is_compiled(self) -> bool:
        """The compiled engine exists already (:attr:`compiled` was asked for)."""
        return "compiled" in self._cache

    @property
    def reads_shards(self) -> bool:
        """The library is lazy (a master with no solutions of its own): queries read its shards on
        demand, and a rebuild of its folder may swap them mid-read (:class:`LibraryChanged`)."""
        return not self.master.solutions

    def _engine(self) -> Any:
        """The compiled engine when it exists already, else the reference walk."""
        return self._cache.get("compiled") or self.reference

    def solution(self, index: int) -> MasterSolution:
        """The kernel with this master ``index`` (a lazy library reads its shards, in row order,
        until one holds it; shards already read are not read again).

        Raises:
            SelectionError: no kernel has that index.
        """
        if "by_index" not in self._cache:
            self._cache["by_index"] = self.master.solutions_by_index()
        found: MasterSolution | None = self._cache["by_index"].get(index)
        if found is not None:
            return found
        from tensilekit.model.library import PlaceholderNode

        selector = self.reference
        prefixes = [node.value for _, node in self.master.iter_nodes() if isinstance(node, PlaceholderNode)]
        for prefix in [None, *dict.fromkeys(prefixes)]:
            if prefix is not None:
                selector.load_placeholder(prefix)
            try:
                return selector.solution(index)
            except SelectionError:
                continue
        raise SelectionError(f"the library has no kernel with index {index}")

    def served(self) -> list[dict[str, Any]]:
        """The problem types the library serves, as ``GemmProblem`` fields (``trans_a``, ``a_type`` …,
        ``compute_input_type`` for tensilelite): read off its kernels, or for a lazy library whose
        kernels are in unread shards, off its problem rows."""
        if "served" not in self._cache:
            from tensilekit.selection.unserved import library_served

            self._cache["served"] = library_served(self.master)
        return [dict(fields) for fields in self._cache["served"]]

    def serves_any(self, problems: Iterable[GemmProblem]) -> bool:
        """Whether any of ``problems`` is of a problem type the library serves (True when the
        library's kernels name no types)."""
        from tensilekit.coverage.inputs import is_served

        # the problem-type fields coverage compares (tensilelite's compute input type is the
        # runtime's to derive, not the workload's to name)
        served = [{k: v for k, v in fields.items() if k != "compute_input_type"} for fields in self.served()]
        return not served or any(is_served(problem, served) for problem in problems)

    def served_label(self) -> str:
        """The problem types the library serves, for people (``NN Float; TN Half HPA``)."""
        from tensilekit.selection.unserved import problem_type_label

        return "; ".join(dict.fromkeys(problem_type_label(fields) for fields in self.served()))

    # -- the device ---------------------------------------------------------------------------

    def device_reason(self, hardware: Hardware | None = None) -> str | None:
        """Why no row of the library serves the device (processor, CU count), or None if one may."""
        from tensilekit.selection.unserved import device_reason

        return device_reason(self.master, hardware if hardware is not None else self.require_device())

    def hardware(
        self, arch: str | None = None, cu_count: int | None = None, *, is_apu: bool | None = None,
        pci_chip_id: int | None = None,
    ) -> Hardware:  # fmt: skip
        """The device to answer for: ``arch`` (else the default device) with the given fields.

        Raises:
            ArchRequired: no ``arch`` and no default device (the library serves several).
        """
        base = self.device
        if arch is None and base is None:
            raise ArchRequired(self._arch_required_message())
        fields: dict[str, Any] = base.model_dump() if base is not None else {}
        if arch is not None:
            fields = {"arch": arch}
        for name, value in (("cu_count", cu_count), ("is_apu", is_apu), ("pci_chip_id", pci_chip_id)):
            if value is not None:
                fields[name] = value
        return Hardware(**fields)

    def with_device(
        self, arch: str | None = None, cu_count: int | None = None, *, is_apu: bool | None = None,
        pci_chip_id: int | None = None, required_for: str | None = None,
    ) -> Library:  # fmt: skip
        """This library with another default device (``arch`` None: the current default's
        processor, with the other fields given). The caches are shared.

        Raises:
            ArchRequired: with ``required_for``, when there is no ``arch`` and no default one.
        """
        if arch is None and self.device is None:
            if required_for is not None:
                raise ArchRequired(self._arch_required_message(required_for))
            return self
        device = self.hardware(arch, cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id)
        return dataclasses.replace(self, device=device, arch_defaulted=self.arch_defaulted and arch is None,
                                   _cache=self._cache)  # fmt: skip

    def _arch_required_message(self, required_for: str = "") -> str:
        processors = self.processors
        return f"--arch is required{required_for} (the library serves {', '.join(processors) or 'no named processor'})"

    def require_device(self, required_for: str = "") -> Hardware:
        """The default device; raises :class:`ArchRequired` (saying what it is needed for) without one."""
        if self.device is None:
            raise ArchRequired(self._arch_required_message(required_for))
        return self.device

    def device_of(self, record: Mapping[str, Any]) -> Hardware:
        """A query record's own ``arch``/``cu_count``/``is_apu``/``pci_chip_id`` over the default device."""
        return hardware_from_query(dict(record), self.device)

    # -- problems -----------------------------------------------------------------------------

    def problem(
        self, m: int, n: int, k: int, *, type: str = "S", batch: int = 1, trans_a: str = "N",
        trans_b: str = "N", hpa: bool | None = None, alpha: float = 1.0, beta: float = 0.0,
        metric: str | PerformanceMetric = "DeviceEfficiency", compute_type: str | None = None,
        workspace_size: int | None | _Default = DEFAULT,
    ) -> GemmProblem:  # fmt: skip
        """The problem this library's runtime builds for an M×N×K GEMM.

        ``type`` is any spelling of the problem types (``S``, ``HHS``, ``HHS_BH``, ``bf16``,
        ``bf16_r``, ``BFloat16``, ``HIP_R_16BF``, ``Half,Half,Float`` …). hipBLASLt's heuristic
        builds the problem with alpha = beta = 1 whatever the call will use, its compute type from
        ``compute_type`` (``f32``, ``f32_fast_xf32`` …) or from the types, and the workspace of
        :attr:`workspace_size` unless ``workspace_size`` is given (None = unlimited).

        Raises:
            SelectionError: an unreadable type or an invalid size.
        """
        spec = parse_type_spec(type)
        workspace = self.workspace_size if isinstance(workspace_size, _Default) else workspace_size
        if isinstance(self.runtime, HipblasltRuntime):
            from tensilekit.selection.hipblaslt import hipblaslt_problem

            compute = compute_type or _HIPBLASLT_COMPUTE.get(spec.compute.value)
            if compute is None:
                raise SelectionError(f"hipBLASLt has no compute type for {spec.compute.value}")
            # the heuristic path sets alpha = beta = 1 (assignAlphaBeta1), whatever the call will use
            return self.runtime.reported_metric(hipblaslt_problem(
                m, n, k, batch=batch, trans_a=trans_a.upper(), trans_b=trans_b.upper(), a_type=spec.a,
                b_type=spec.b, c_type=spec.c, d_type=spec.d, compute_type=compute, alpha=1.0, beta=1.0,
                workspace_size=workspace, version=self.runtime.version,
            ))  # fmt: skip
        try:
            return GemmProblem(
                m=m, n=n, k=k, batch=batch, trans_a=trans_a.upper(), trans_b=trans_b.upper(),
                a_type=spec.a, b_type=spec.b, c_type=spec.c, d_type=spec.d, compute_type=spec.compute, hpa=hpa,
                alpha=alpha, beta=beta, performance_metric=PerformanceMetric(metric), workspace_size=workspace,
            )  # fmt: skip
        except ValueError as error:
            raise SelectionError(f"invalid problem: {error}") from None

    def problem_from_query(self, record: Mapping[str, Any]) -> GemmProblem:
        """The problem of one query record (``corpus/select`` fields, or a tensilekit answer whose
        ``problem`` object is taken as it is); a record without ``workspace_size`` allows
        :attr:`workspace_size`."""
        return self.runtime.problem_from_query(dict(record), default_workspace=self.workspace_size)

    def problem_from_workload(self, gemm: WorkloadGemm) -> GemmProblem:
        """The problem this runtime builds for a workload GEMM (a log does not record the
        workspace: :attr:`workspace_size` is allowed)."""
        return self.runtime.problem_from_workload(gemm, self.workspace_size)

    # -- answers ------------------------------------------------------------------------------

    def select(
        self, problem: GemmProblem, hardware: Hardware | None = None, *, explain: bool = False, top: int = 0,
        rocblas_k0: bool = False,
    ) -> Selection:  # fmt: skip
        """The kernel the runtime selects (``index`` None: no kernel; :meth:`why_not` says why).

        Questions are walked one by one (the walk decodes only the kernels it reaches) until
        compiling pays: past :data:`WALK_AT_MOST` questions, once walking has cost what compiling
        this library is expected to (:data:`COMPILE_SECONDS_PER_KERNEL`). From then on every plain
        question is answered by the compiled engine, with the same answer at a fraction of the
        cost; a script asking many questions needs nothing else. ``explain`` and ``top`` always walk.
        """
        device = hardware if hardware is not None else self.require_device()
        if explain or top:
            return select_solution(self.reference, problem, device, explain=explain, top=top, rocblas_k0=rocblas_k0)
        compiled = self._cache.get("compiled")
        if compiled is None and self._compiling_pays():
            compiled = self.compiled
        if compiled is None:
            start = time.perf_counter()
            try:
                return select_solution(self.reference, problem, device, rocblas_k0=rocblas_k0)
            finally:
                self._cache["walked"] += 1
                self._cache["walk_seconds"] += time.perf_counter() - start
        if type(problem) is GemmProblem and type(device) is Hardware:
            # the warm question: straight to the compiled walk, without select_solution's checks
            # (the types are exact; the runtime is the compiled library's own)
            return select_compiled(compiled, contraction_problem(problem, rocblas_k0=rocblas_k0), device)
        return select_solution(compiled, problem, device, rocblas_k0=rocblas_k0)

    def _compiling_pays(self) -> bool:
        """Walking has cost as much as compiling is expected to (past :data:`WALK_AT_MOST` questions):
        the ski-rental rule, within twice the cheaper of walking on and compiling at once."""
        cache = self._cache
        if "walked" not in cache:
            cache["walked"], cache["walk_seconds"] = 0, 0.0
            # kernels a compile decodes up front (a lazy master's shards compile when reached)
            cache["compile_estimate"] = COMPILE_SECONDS_PER_KERNEL * len(self.master.solutions)
        return bool(cache["walked"] >= WALK_AT_MOST and cache["walk_seconds"] >= cache["compile_estimate"])

    def explain(self, problem: GemmProblem, hardware: Hardware | None = None, *, rocblas_k0: bool = False) -> Selection:
        """:meth:`select` with the walk recorded (``trace``: every row, predicate and entry considered)."""
        return self.select(problem, hardware, explain=True, rocblas_k0=rocblas_k0)

    def top(
        self, problem: GemmProblem, count: int, hardware: Hardware | None = None, *, rocblas_k0: bool = False
    ) -> TopSolutions:
        """The runtime's ``count`` best kernels (hipBLASLt: ``findTopSolutions`` then its
        ``getAllSolutions`` fallback; Tensile: repeated selection)."""
        device = hardware if hardware is not None else self.require_device()
        return top_solutions(self.reference, problem, device, count, rocblas_k0=rocblas_k0)

    def select_batch(
        self, problems: Sequence[GemmProblem] | ColumnsLike, hardware: Hardware | Sequence[Hardware] | None = None,
        *, rocblas_k0: bool = False,
    ) -> BatchSelection:  # fmt: skip
        """Many queries at once through the compiled engine (same answers as :meth:`select`).

        ``problems``: a list of problems (read into columns per problem type), or ready
        :class:`~tensilekit.selection.ProblemColumns` (``ProblemColumns.from_arrays``: numpy
        arrays, no object per query; they name their devices)."""
        from tensilekit.selection.columns import ColumnsLike

        if isinstance(problems, ColumnsLike):
            return select_batch(self.compiled, problems)
        device = hardware if hardware is not None else self.require_device()
        return select_batch(self.compiled, problems, device, rocblas_k0=rocblas_k0)

    def select_workload(
        self, gemms: Iterable[WorkloadGemm], hardware: Hardware | None = None, *, rocblas_k0: bool = False
    ) -> list[WorkloadSelection]:
        """One answer per distinct workload GEMM (its problem as :meth:`problem_from_workload` builds it)."""
        from tensilekit.selection.workload import select_workload

        device = hardware if hardware is not None else self.require_device()
        return select_workload(self.compiled, gemms, device, rocblas_k0=rocblas_k0, workspace_size=self.workspace_size)

    def why_not(self, problem: GemmProblem, hardware: Hardware | None = None, *, rocblas_k0: bool = False) -> str:
        """Why the runtime finds no kernel for ``problem`` on ``hardware``, in one line; for a
        problem that does get one, a line that says so (``served: kernel N (name) is selected``),
        the kernel :meth:`select` answers (with the same ``rocblas_k0``).

        The device and problem-type verdicts are computed once per (device, problem type) and
        cached, so a workload of unserved GEMMs costs one look each; when the workspace the
        problem allows is what refused every kernel, the answer says so and names the kernel
        an unlimited workspace would get.
        """
        from tensilekit.selection.unserved import device_reason, problem_type_reason, row_type_reason

        device = hardware if hardware is not None else self.require_device()
        key = (device, _type_key(problem))
        reason = self._cache.setdefault("why_not", {}).get(key)
        partial = self._partially_read()
        if reason is None:
            reason = device_reason(self.master, device)
            if reason is None and partial:  # the rows the query reached, not every kernel decoded
                reason = row_type_reason(self.master, problem, device)
            elif reason is None:
                reason = problem_type_reason(self.served(), problem)
            self._cache["why_not"][key] = reason = reason or ""
        if reason:
            return str(reason)
        # the device and type are served: the problem may well be (the workspace and size
        # reasons below only hold for a problem the runtime refuses)
        selected = self.select(problem, device, rocblas_k0=rocblas_k0)
        if selected.index is not None:
            return f"served: kernel {selected.index} ({selected.name}) is selected"
        workspace = self._workspace_reason(problem, device)
        if workspace is not None:
            return workspace
        missing = self._missing_entry_reason(problem, device)
        if missing is not None:
            return missing
        if not self.master.solutions:
            return (
                "kernels for this device and problem type exist in this lazy library's shards, but none accepts "
                "this problem (size or alignment predicates fail; --explain shows each)"
            )
        if partial:
            return (
                "rows for this device and problem type exist, but no kernel accepts this problem (size or alignment "
                "predicates fail, or a flag rows do not name, such as general batching; --explain shows each)"
            )
        from tensilekit.selection.unserved import unmodelled_note

        return (
            "kernels for this device and problem type exist, but none accepts this problem "
            "(size or alignment predicates fail; --explain shows each)" + unmodelled_note(self.master)
        )

    def _missing_entry_reason(self, problem: GemmProblem, device: Hardware) -> str | None:
        """The size is simply not in the Equality table(s) the walk reached: no predicate failed.

        An Equality table answers only the keys it lists (``findBestKeyMatch`` of
        ``EqualityMatching``, ``PropertyMatching.hpp``), so "size or alignment predicates fail"
        would send a reader after the wrong cause. Read off the walk (the reasons ``--explain``
        shows), only for GEMMs that get no kernel.
        """
        trace = self.explain(problem, device).trace or ()
        entries = [event for event in trace if event.node == "entry"]
        if not entries or any(not event.message.startswith("no entry with key") for event in entries):
            return None
        tables = [event.message for event in trace if event.node == "Matching" and " table, " in event.message]
        where = tables[0].partition(" entries, ")[2] if tables else entries[0].message.removeprefix("no entry with ")
        count = "table has" if len(tables) <= 1 else f"{len(tables)} tables have"
        return (
            f"the library's Equality {count} no entry for this size ({where}): an Equality table serves only "
            "the sizes it lists; --explain shows the table"
        )

    def _partially_read(self) -> bool:
        """The master was read partially (a plain ``.dat``/``.dat.gz``: its kernels decoded on
        demand), so listing the types its kernels serve would decode them all. A property of the
        library, not of what was decoded so far: every command gives the same reason."""
        if "partial" not in self._cache:
            from tensilekit.io.partial_msgpack import is_partial

            # a lazy master's kernels are in its shards: its rows in memory say what it serves
            self._cache["partial"] = is_partial(self.master) and len(self.master.solutions) > 0
        return bool(self._cache["partial"])

    def _workspace_reason(self, problem: GemmProblem, device: Hardware) -> str | None:
        """The workspace check's verdict, if allowing any workspace would find a kernel."""
        if problem.workspace_size is None:
            return None
        unlimited = problem.model_copy(update={"workspace_size": None})
        try:
            selection = select_solution(self._engine(), unlimited, device)
        except SelectionError:
            return None
        if selection.index is None:
            return None
        runtime = self.runtime
        needed = (
            _required_workspace(selection, unlimited, device, runtime)
            if isinstance(runtime, HipblasltRuntime)
            else None
        )
        need = f"{needed} bytes of workspace" if needed is not None else "more workspace"
        return (
            f"the workspace check refused: the problem allows {problem.workspace_size} bytes of workspace; with "
            f"more, kernel {selection.index} ({selection.name}) would be selected, which needs {need} "
            "(give a larger workspace, e.g. --workspace)"
        )

    def coverage(
        self, gemms: Sequence[CoverageGemm], *, near: float | None = None, tune_next: int | None = None,
        skipped: Sequence[Any] = (), progress: Callable[[int], None] | None = None,
    ) -> CoverageReport:  # fmt: skip
        """How well the library covers ``gemms`` (see :func:`tensilekit.coverage.coverage_of`);
        read them with :meth:`coverage_gemms`."""
        from tensilekit.coverage import DEFAULT_NEAR, DEFAULT_TUNE_NEXT, coverage_of

        return coverage_of(
            self.compiled, list(gemms), near=DEFAULT_NEAR if near is None else near,
            tune_next=DEFAULT_TUNE_NEXT if tune_next is None else tune_next, skipped=list(skipped),
            progress=progress,
        )  # fmt: skip

    def coverage_gemms(
        self, source: str | Path | Iterable[WorkloadGemm], hardware: Hardware | None = None
    ) -> tuple[list[CoverageGemm], list[Any]]:
        """The distinct GEMMs of a query JSON-lines text/file or of workload GEMMs, with their
        problems built as this library's runtime builds them, and what was skipped."""
        from tensilekit.coverage import gemms_from_queries, gemms_from_workload
        from tensilekit.workload.records import text_lines

        device = hardware if hardware is not None else self.require_device()
        if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and Path(source).is_file()):
            with Path(source).open(encoding="utf-8", errors="replace") as stream:
                return gemms_from_queries(text_lines(stream), file=str(source), hardware=device, library=self)
        if isinstance(source, str):
            return gemms_from_queries(source, hardware=device, library=self)
        return gemms_from_workload(source, device, library=self)

    def recorded(
        self, problems: Sequence[WorkloadGemm], hardware: Hardware | None = None
    ) -> list[RecordedSolution | None] | None:
        """The solution each workload record recorded (a tuning artefact's index), judged here on
        ``hardware`` with the workspace this library allows (:func:`tensilekit.recorded.recorded_solutions`)."""
        from tensilekit.recorded import recorded_solutions

        return recorded_solutions(self, problems, hardware)

    def recorded_workload(
        self, paths: Sequence[str | Path], hardware: Hardware | None = None
    ) -> RecordedWorkload | None:
        """The recorded solutions of tuning artefacts judged here, weighed by their recorded time
        (:func:`tensilekit.recorded.recorded_workload`; ``coverage`` prints it)."""
        from tensilekit.recorded import recorded_workload

        return recorded_workload(paths, self, hardware)

    def answer_queries(
        self, lines: Iterable[str], *, name: str = "<queries>", rocblas_k0: bool = False, explain: bool = False,
        top: int = 0, strict: bool = False, chunk_size: int | None = None,
        indexing: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
    ) -> Iterator[QueryAnswer]:  # fmt: skip
        """One :class:`QueryAnswer` per non-blank line of a JSON-lines query stream, in line order,
        streamed: lines are read ``chunk_size`` (default :data:`QUERY_CHUNK`) at a time, each chunk answered (through the
        compiled engine in one batch when it can) and yielded before the next is read, so memory
        holds one chunk, not the file.

        Up to :data:`WALK_AT_MOST` queries (and no ``top``) are walked one by one, as compiling a
        table decodes every solution in it; more, or ``top``, compile the library first (inside
        ``indexing()``, e.g. a progress bar). A line that is no JSON object is answered with its
        error (``unreadable``); a query whose problem cannot be built, or that cannot be answered,
        with its error naming ``name:line``.

        Raises:
            SelectionError: the stream is not UTF-8 text; with ``strict``, at the first line that
                is unreadable or whose problem cannot be built (answers of the lines before it
                were yielded already: a caller that must print nothing then holds them back).
        """
        prepared = self._prepared_queries(_query_records(lines, name, strict=strict), name, strict)
        head: list[_PreparedQuery] = []
        readable = 0
        for item in prepared:  # enough of the stream to choose the engine
            head.append(item)
            readable += not item.unreadable
            if readable > WALK_AT_MOST:
                break
        if readable > WALK_AT_MOST or top:
            with indexing():
                self.compiled  # noqa: B018 - compiled once, before the answers
        walk = explain or bool(top) or not self.is_compiled
        pending = itertools.chain(head, prepared)
        del head
        while True:
            chunk = list(itertools.islice(pending, max(1, chunk_size or QUERY_CHUNK)))
            if not chunk:
                return
            yield from self._answer_chunk(chunk, name, walk, rocblas_k0, explain, top)

    def _prepared_queries(
        self, parsed: Iterable[tuple[int, dict[str, Any] | None, str | None]], name: str, strict: bool
    ) -> Iterator[_PreparedQuery]:
        """Each parsed line's problem and device, built as the line is read: a chunk then holds
        problems, not the lines' records too."""
        from tensilekit.errors import TensilekitError

        # problem_from_query and device_of without their copies of the record: it is this
        # loop's own (parsed from the line), and neither changes it
        problem_of, default_workspace = self.runtime.problem_from_query, self.workspace_size
        default_device = self.device
        for number, record, failed in parsed:
            if record is None:
                yield _PreparedQuery(number, None, None, None, None, failed, True)
                continue
            calls = record.get("calls")
            query_id, calls = record.get("id"), calls if isinstance(calls, int) else None
            try:
                problem = problem_of(record, default_workspace=default_workspace)
                device = hardware_from_query(record, default_device)
            except TensilekitError as error:
                if strict:
                    location = error.location or Location()
                    if location.file is None:
                        error.location = dataclasses.replace(location, file=name, line=number)
                    raise error from None
                yield _PreparedQuery(number, query_id, calls, None, None, f"{name}:{number}: {error}", False)
                continue
            yield _PreparedQuery(number, query_id, calls, problem, device, None, False)

    def _answer_chunk(
        self, chunk: list[_PreparedQuery], name: str, walk: bool, rocblas_k0: bool, explain: bool, top: int
    ) -> Iterator[QueryAnswer]:
        """The answers of one chunk of query lines (:meth:`answer_queries`)."""
        from tensilekit.errors import TensilekitError
        from tensilekit.io.files import gc_paused
        from tensilekit.selection import ProblemColumns

        batch = None
        if not walk:
            asked = [item for item in chunk if item.problem is not None]
            columns = ProblemColumns.from_problems(
                [contraction_problem(item.problem, rocblas_k0=rocblas_k0) for item in asked],  # type: ignore[arg-type]
                [item.device for item in asked],  # type: ignore[misc]
            )
            # the GC paused: a cold chunk builds tables (sorted keys, sub-tables, decoded nodes),
            # and each full collection would walk the whole library again meanwhile
            with gc_paused():
                batch = select_batch(self.compiled, columns) if asked else None
            del asked, columns
        position = 0  # in the batch
        for number, query_id, calls, problem, device, failed, unreadable in chunk:
            if problem is None or device is None:
                assert failed is not None
                record = {"id": query_id, "index": None, "name": None, "distance": None, "error": failed}
                yield QueryAnswer(number, record, error=failed, unreadable=unreadable)
                continue
            try:
                if batch is None:
                    selection = self.select(problem, device, explain=explain, top=top, rocblas_k0=rocblas_k0)
                elif position in batch.errors:
                    raise SelectionError(batch.errors[position])
                else:
                    selection = batch[position]
            except LibraryChanged:
                raise  # the whole read is dropped and done again, not this query's error
            except TensilekitError as failure:
                message = f"{name}:{number}: {failure}"
                record = {"id": query_id, "index": None, "name": None, "distance": None, "error": message}
                yield QueryAnswer(number, record, error=message)
                continue
            finally:
                position += 1
            reason = None if selection.index is not None else self.why_not(problem, device, rocblas_k0=rocblas_k0)
            answer = self.answer_record(selection, problem, device, query_id=query_id, calls=calls, reason=reason)
            yield QueryAnswer(number, answer, selection=selection)

    # -- the JSON form ------------------------------------------------------------------------

    def answer_record(
        self, selection: Selection | None, problem: GemmProblem | None, hardware: Hardware | None = None,
        *, query_id: Any = None, calls: int | None = None, reason: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The one JSON shape of an answer (every command writes it; every query reader takes it back).

        ``id``; the GEMM's readable fields (``m``, ``n``, ``k``, ``batch``, transposes, types,
        ``arch``); ``calls`` when known; ``index``, ``name``, ``distance`` (None: no kernel) and
        ``reason`` when there is none; ``problem``: the full problem answered, which
        :meth:`problem_from_query` takes as it is.
        """
        return answer_record(selection, problem, hardware, query_id=query_id, calls=calls, reason=reason)


@dataclasses.dataclass(frozen=True)
class QueryAnswer:
    """The answer to one query line (:meth:`Library.answer_queries`)."""

    line: int
    """The line's number in the stream (1-based)."""
    record: dict[str, Any]
    """The answer's JSON shape (:meth:`Library.answer_record`), or for an error ``id``, ``index``,
    ``name``, ``distance`` (None) and ``error``."""
    selection: Selection | None = None
    """The selection answered (None for an error)."""
    error: str | None = None
    """Why the line has no answer, naming ``file:line``."""
    unreadable: bool = False
    """The line is no JSON object (it was skipped)."""


class _PreparedQuery(NamedTuple):
    """A query line as a chunk holds it (:meth:`Library.answer_queries`): what its answer needs."""

    line: int
    query_id: Any
    calls: int | None
    problem: GemmProblem | None
    device: Hardware | None
    error: str | None
    """Why the line has no problem (naming ``file:line``), or None."""
    unreadable: bool


def _query_records(
    lines: Iterable[str], name: str, *, strict: bool
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, query record, None) per non-blank line, or (number, None, located error)
    for a line that is no JSON object.

    Raises:
        SelectionError: the stream is not UTF-8 text; with ``strict``, at the first unreadable line.
    """
    from tensilekit.errors import DecodeError
    from tensilekit.io.limits import load_json_line

    numbered = enumerate(lines, start=1)
    while True:
        try:
            number, line = next(numbered)
        except StopIteration:
            return
        except UnicodeDecodeError as error:  # gzip or binary data given as queries
            raise SelectionError(f"not UTF-8 text ({error.reason})", Location(file=name)) from None
        text = line.strip()
        if not text:
            continue
        column = None
        try:
            record = load_json_line(text)
            problem = None if isinstance(record, dict) else "each line must hold one JSON object"
        except DecodeError as error:  # not JSON, or over a reader limit (digits, nesting)
            record, problem, column = None, error.message, error.location.col if error.location else None
        if problem is None:
            yield number, record, None
            continue
        location = Location(file=name, line=number, col=column)
        if strict:
            raise SelectionError(problem, location)
        yield number, None, f"{location}: {problem}"


def answer_record(
    selection: Selection | None, problem: GemmProblem | None, hardware: Hardware | None = None,
    *, query_id: Any = None, calls: int | None = None, reason: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """:meth:`Library.answer_record` (without a library)."""
    record: dict[str, Any] = {"id": query_id}
    if problem is not None:
        record.update(
            m=problem.m, n=problem.n, k=problem.k, batch=problem.batch, trans_a=problem.trans_a,
            trans_b=problem.trans_b, a_type=_type(problem.a_type), b_type=_type(problem.b_type),
            c_type=_type(problem.c_type), d_type=_type(problem.d_type), compute_type=_type(problem.compute_type),
        )  # fmt: skip
    if hardware is not None:
        record["arch"] = hardware.arch
        if hardware.cu_count is not None:
            record["cu_count"] = hardware.cu_count
    if calls is not None:
        record["calls"] = calls
    if selection is None:
        record.update(index=None, name=None, distance=None)
    else:
        record.update(index=selection.index, name=selection.name, distance=_number(selection.distance))
        if selection.retried:
            record["retried"] = True  # hipBLASLt's XF32 -> Float retry answered
    if reason is not None:
        record["reason"] = reason
    if problem is not None:
        record["problem"] = problem_record(problem)
    return record


def _type(value: Any) -> Any:
    if type(value) is DataType:  # by its member attribute: the ``value`` property costs ~0.3 us, x5 per answer
        return value._value_
    return getattr(value, "value", value)


def _number(value: float | None) -> float | None:
    import math

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


_NUMBER_FIELDS = frozenset(GEMM_NUMBER_FIELDS)


def _type_key(problem: GemmProblem) -> tuple[Any, ...]:
    """What the device/problem-type verdict depends on: the problem without its sizes and scalars
    (read off the frozen model's fields: this runs once per no-kernel answer)."""
    return tuple(value for name, value in problem.__dict__.items() if name not in _NUMBER_FIELDS)


def _required_workspace(
    selection: Selection, problem: GemmProblem, device: Hardware, runtime: HipblasltRuntime
) -> int | None:
    """Bytes of workspace the selected tensilelite kernel asks for (None when unknown)."""
    if selection.solution is None:
        return None
    try:
        return int(runtime.required_workspace(contraction_problem(problem), device, selection.solution))
    except Exception:  # noqa: BLE001 - a Tensile kernel or missing field: say "needs more" instead
        return None


def open_library(
    path: str | Path | None = None, *, arch: str | None = None, cu_count: int | None = None,
    is_apu: bool = False, pci_chip_id: int | None = None, runtime: str | Runtime | None = None,
    workspace_size: int | None | _Default = DEFAULT, subtree: str | None = None,
    asic_revision: int | None = None, hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> Library:  # fmt: skip
    """Open a library for selection.

    Args:
        path: a master library (YAML, msgpack ``.dat``, ``.dat.zlib``, gzip; a lazy master reads
            its shards on demand), a logic file or directory of logic files (built into a master
            as TensileCreateLibrary would), or an installed library folder. None: tensilekit's
            sample library.
        arch, cu_count, is_apu, pci_chip_id: the default device (``arch`` defaults to the
            library's only processor; without one, every question must name its device).
        runtime: ``"tensile"`` or ``"hipblaslt"`` (default: detected from the library).
        hipblaslt_version: the hipBLASLt runtime to answer as, ``"7d9fb683"`` or ``"0.12.1"``
            (default: what the library shows: a master with 0.12.1's fields, such as
            ``SwizzleTensorA``, is 0.12.1's, any other 7d9fb683's); hipBLASLt libraries only.
        solution_selection_method: ``TENSILE_SOLUTION_SELECTION_METHOD`` to answer under (0 default,
            1 decision tree, 2 StreamK: hipBLASLt 0.12.1 takes ``ExperimentalStreamK`` rows only
            under 2; 7d9fb683 does not read it). None: the environment variable, as hipBLASLt.
        workspace_size: bytes the caller allows (default: hipBLASLt 128 MiB, as hipblaslt-bench's
            ``max_workspace_size``; Tensile unlimited; None: unlimited).
        subtree, asic_revision: an installed library's silicon-revision tree.

    Raises:
        TensilekitError: the library cannot be read (the error names the file and where).
        TypeError, ValueError: an argument of the wrong type or an empty path.
    """
    from tensilekit._arguments import require, require_path
    from tensilekit.api import library_runtime, load_for_selection, solution_selection_method_of

    if path is None:
        from tensilekit.data import sample_library_path

        path = sample_library_path()
    path = require_path(path, "path", "open_library")
    require(arch, str, "arch", "open_library", optional=True)
    require(cu_count, int, "cu_count", "open_library", optional=True)
    require(pci_chip_id, int, "pci_chip_id", "open_library", optional=True)
    require(runtime, (str, Runtime), "runtime", "open_library", optional=True)
    require(subtree, str, "subtree", "open_library", optional=True)
    require(asic_revision, int, "asic_revision", "open_library", optional=True)
    require(hipblaslt_version, str, "hipblaslt_version", "open_library", optional=True)
    if not isinstance(workspace_size, _Default):
        require(workspace_size, int, "workspace_size", "open_library", optional=True)
    require(solution_selection_method, int, "solution_selection_method", "open_library", optional=True)
    method = solution_selection_method_of(solution_selection_method)
    master, loader = load_for_selection(path, subtree=subtree, asic_revision=asic_revision)
    try:
        detected: list[Runtime] = []

        def library_version() -> Runtime:
            detected.append(library_runtime(master, loader))
            return detected[-1]

        chosen = resolve_runtime(runtime, hipblaslt_version, library_version, method)
        if isinstance(chosen, HipblasltRuntime):
            _check_loadable(chosen, detected[0] if detected else library_version())
    except SelectionError as error:
        raise SelectionError(error.message, Location(file=str(path))) from None
    return library_of(
        master, loader, chosen, path=path, arch=arch, cu_count=cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id,
        workspace_size=workspace_size,
    )  # fmt: skip


def _check_loadable(chosen: HipblasltRuntime, library: Runtime) -> None:
    """Raise SelectionError when ``chosen``'s runtime cannot load a master taken for ``library``."""
    from tensilekit.selection.hipblaslt_versions import loads

    if isinstance(library, HipblasltRuntime) and not loads(chosen.version, library.version):
        raise SelectionError(
            f"hipBLASLt {chosen.version}'s runtime cannot load this master: it is hipBLASLt {library.version}'s "
            f"(it names {library.version}'s fields or predicates, such as SwizzleTensorA or LaunchLimits, which "
            f"{chosen.version} stops at with 'Unknown subclass type'); answer as its own version"
        )


def library_of(
    master: MasterLibrary, loader: Callable[[str], MasterLibrary] | None = None, runtime: str | Runtime | None = None,
    *, path: Path | None = None, arch: str | None = None, cu_count: int | None = None, is_apu: bool = False,
    pci_chip_id: int | None = None, workspace_size: int | None | _Default = DEFAULT,
) -> Library:  # fmt: skip
    """A :class:`Library` over a master already in memory (see :func:`open_library`)."""
    from tensilekit.api import library_processors, library_runtime

    chosen = runtime_named(runtime) if runtime is not None else library_runtime(master, loader)
    defaulted = False
    if arch is None:
        processors = library_processors(master)
        if len(processors) == 1:
            arch, defaulted = processors[0], True
    device = None
    if arch is not None:
        try:
            device = Hardware(arch=arch, cu_count=cu_count, is_apu=is_apu, pci_chip_id=pci_chip_id)
        except ValueError as error:
            raise SelectionError(f"invalid device: {error}", Location(file=str(path)) if path else None) from None
    if isinstance(workspace_size, _Default):
        workspace_size = chosen.default_workspace_size
    return Library(
        master, loader, chosen, path=path, device=device, arch_defaulted=defaulted, workspace_size=workspace_size
    )


__all__ = [
    "COMPILE_SECONDS_PER_KERNEL",
    "DEFAULT",
    "HIPBLASLT_DEFAULT_WORKSPACE",
    "QUERY_CHUNK",
    "WALK_AT_MOST",
    "ArchRequired",
    "Library",
    "QueryAnswer",
    "answer_record",
    "library_of",
    "open_library",
    "problem_record",
]

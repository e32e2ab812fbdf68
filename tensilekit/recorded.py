"""What a recorded solution index is in one library build: name it, place it, judge it.

TunableOp results (``Gemm_Hipblaslt_<index>``), AITER tuned CSVs (``solidx``) and hipBLASLt tuning
files (``solution_index``) record a tuned GEMM as a solution index of the build they were tuned
with; tensilekit reads them as workloads whose problems carry that ``solution_index``.

* :func:`describe_solution` names solution N of a library: kernel and solution name, macro tile,
  matrix instruction, problem type, and where the tree refers to it (``tensilekit info LIBRARY
  --solution N``).
* :func:`recorded_solution` / :class:`RecordedSolutions` tell, for a recorded GEMM, what its index
  names in the library (kernel name), whether the library's predicates still accept it for that
  GEMM on the device (``canSolve``, the deciding predicate named when not), and whether the
  library's heuristic would pick another solution (``select --from-log`` and ``coverage`` show it).

Whether an index names *the same kernel* in two builds is :mod:`tensilekit.remapping`'s question; here
the index is read in one build, so a record tuned with another build names whatever that build
put there (the kernel name it recorded, when it did, is compared: ``name_matches``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tensilekit.errors import Location, SelectionError
from tensilekit.model.library import (
    DecisionTreeNode,
    FreeSizeNode,
    GranularitySelectionNode,
    MasterLibrary,
    MatchingNode,
    PredictionNode,
    SingleNode,
)
from tensilekit.remapping import RUNTIME_WORKSPACE, Checker, LibraryRecords, Picker, _judges
from tensilekit.selection.problem import Hardware
from tensilekit.workload.problem import GemmProblem
from tensilekit.workload.records import ParsedWorkload, WorkloadFormat

if TYPE_CHECKING:
    from tensilekit.selection.runtime import Runtime

Loader = Callable[[str], MasterLibrary] | None


class OpenedLibrary(Protocol):
    """What judging recorded solutions reads of an opened library (:class:`tensilekit.library.Library`
    is one): named by its fields, so this module need not import the library module, which
    imports it."""

    @property
    def master(self) -> MasterLibrary: ...

    @property
    def loader(self) -> Loader: ...

    @property
    def device(self) -> Hardware | None: ...

    @property
    def workspace_size(self) -> int | None: ...

    @property
    def runtime(self) -> Runtime: ...

    def require_device(self, required_for: str = "") -> Hardware:
        """The default device; raises the library's arch-required error without one."""
        ...


@dataclasses.dataclass(frozen=True)
class SolutionDescription:
    """Solution ``index`` of one library, as ``info --solution`` prints it."""

    index: int
    kernel: str | None
    name: str | None
    macro_tile: tuple[int, ...] | None
    """The master's ``sizeMapping.macroTile``: ``[MT0, MT1, 1]`` (its third is not the name's depth U)."""
    matrix_instruction: tuple[int, ...] | None
    problem_type: str
    file: str | None
    """The shard holding the solution (a lazy library), else None (the master itself)."""
    places: tuple[str, ...]
    """Where the tree selects it: ``<YAML path>`` and, in a table, ``key [..]``."""
    depth_u: int | None = None
    """``sizeMapping.depthU``: the third number of the kernel name's ``MT128x64x128``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kernel": self.kernel,
            "name": self.name,
            "macro_tile": list(self.macro_tile) if self.macro_tile else None,
            "depth_u": self.depth_u,
            "matrix_instruction": list(self.matrix_instruction) if self.matrix_instruction else None,
            "problem_type": self.problem_type,
            "file": self.file,
            "places": list(self.places),
        }


def _ints(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list | tuple) and value and all(isinstance(item, int) for item in value):
        return tuple(value)
    return None


def problem_type_text(problem_type: Any) -> str:
    """``Contraction_l_Ailk_Bljk_Cijk_Dijk Half,Float8->Half (compute Float)`` from a record's ``problemType``."""
    if not isinstance(problem_type, dict):
        return "?"
    types = [problem_type.get(key) for key in ("aType", "bType")]
    inputs = ",".join(str(item) for item in dict.fromkeys(types) if item is not None) or "?"
    output = problem_type.get("dType") or problem_type.get("cType") or "?"
    compute = problem_type.get("computeType") or problem_type.get("computeDataType") or "?"
    return f"{problem_type.get('operationIdentifier', '?')} {inputs}->{output} (compute {compute})"


def _references(library: MasterLibrary, index: int, root: str) -> Iterator[str]:
    """Where ``library``'s tree refers to solution ``index``."""
    for path, node in library.iter_nodes():
        where = f"{root}{path.removeprefix('library')}"
        if isinstance(node, SingleNode) and node.index == index:
            yield where
        elif isinstance(node, MatchingNode):
            for number, entry in enumerate(node.table):
                if entry.index == index:
                    yield f"{where}.table[{number}] key {list(entry.key)}"
        elif isinstance(node, FreeSizeNode) and any(entry.index == index for entry in node.table):
            yield f"{where} (FreeSize pool)"
        elif isinstance(node, PredictionNode) and index in node.table:
            yield f"{where} (Prediction pool)"
        elif isinstance(node, GranularitySelectionNode) and (
            index in node.indices or any(entry.value == index for entry in node.exact)
        ):
            yield f"{where} (GranularitySelection)"
        elif isinstance(node, DecisionTreeNode):
            continue  # its leaves are nodes of their own, walked above


def describe_solution(path: str | Path, index: int) -> SolutionDescription:
    """Name and place solution ``index`` of the library at ``path`` (any form
    :func:`tensilekit.api.load_for_selection` reads); :class:`SelectionError` when it has none."""
    from tensilekit.api import load_for_selection

    library, loader = load_for_selection(path)
    records = LibraryRecords(library, loader)
    if index not in records:
        known = sorted(records)
        span = f"{known[0]}..{known[-1]}, {len(known)} solutions" if known else "no solutions"
        raise SelectionError(f"no solution {index} in this library ({span})", Location(file=str(path)))
    record = records[index]
    shard = records.shard_of(index)
    places = list(_references(library, index, "library"))
    if shard is not None and loader is not None:
        places += _references(loader(shard), index, f"{shard}:library")
    mapping = record.get("sizeMapping")
    size_mapping: dict[str, Any] = mapping if isinstance(mapping, dict) else {}
    return SolutionDescription(
        index=index,
        kernel=_text(record.get("kernelName")),
        name=_text(record.get("name")),
        macro_tile=_ints(size_mapping.get("macroTile")),
        matrix_instruction=_ints(size_mapping.get("matrixInstruction") or size_mapping.get("MatrixInstruction")),
        problem_type=problem_type_text(record.get("problemType")),
        file=shard,
        places=tuple(places),
        depth_u=size_mapping.get("depthU") if isinstance(size_mapping.get("depthU"), int) else None,
    )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


@dataclasses.dataclass(frozen=True)
class RecordedSolution:
    """A recorded GEMM's solution index read in one library."""

    index: int
    kernel: str | None
    """The library's kernel name for ``index``; None when it has no such solution."""
    recorded_kernel: str | None = None
    """The kernel name the record itself carries (AITER ``kernelName``, tuning ``kernel_name``)."""
    supported: bool | None = None
    """The library's predicates accept it for this GEMM on the device; None when not decided
    (no such solution, or the device is unknown)."""
    reason: str | None = None
    """Why it is not supported (the deciding predicate), or why it was not decided."""
    heuristic_index: int | None = None
    heuristic_kernel: str | None = None

    @property
    def present(self) -> bool:
        return self.kernel is not None or self.supported is not None

    @property
    def differs(self) -> bool | None:
        """True when the heuristic picks another solution (None when it picks none)."""
        return None if self.heuristic_index is None else self.heuristic_index != self.index

    @property
    def name_matches(self) -> bool | None:
        """Whether the recorded kernel name is this library's name for the index (None: not recorded)."""
        if self.recorded_kernel is None:
            return None
        return self.recorded_kernel == self.kernel

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kernel": self.kernel,
            "recorded_kernel": self.recorded_kernel,
            "name_matches": self.name_matches,
            "supported": self.supported,
            "reason": self.reason,
            "heuristic_index": self.heuristic_index,
            "heuristic_kernel": self.heuristic_kernel,
            "differs": self.differs,
        }


class RecordedSolutions:
    """Judge recorded GEMMs against one library (its records read and its judges built once)."""

    def __init__(
        self,
        library: MasterLibrary,
        loader: Loader,
        *,
        arch: str | None = None,
        cu_count: int | None = None,
        workspace_size: Any = RUNTIME_WORKSPACE,
        runtime: Runtime | None = None,
    ) -> None:
        """``arch``/``cu_count``: the device (default: the library's only architecture);
        ``workspace_size``: what the calls may use (None: unlimited; by default the runtime's
        default, as :func:`tensilekit.open_library` allows: hipBLASLt 128 MiB, Tensile unlimited);
        ``runtime``: the runtime that judges (None: :func:`tensilekit.api.answering_runtime`'s)."""
        from tensilekit.api import library_processors

        self.records = LibraryRecords(library, loader)
        processors = library_processors(library)
        self.arch = arch or (processors[0] if len(processors) == 1 else None)
        self.cu_count = cu_count
        judges: tuple[Picker, Checker] = _judges(
            library, loader, self.arch, cu_count, unknown_cus_decide=True, workspace_size=workspace_size,
            runtime=runtime,
        )  # fmt: skip
        self._pick, self._check = judges
        self._seen: dict[tuple[int, GemmProblem, str | None, int | None], RecordedSolution] = {}

    @classmethod
    def of(cls, library: OpenedLibrary, hardware: Hardware | None = None) -> RecordedSolutions:
        """Judge against ``library`` on ``hardware`` (default: its device) with the workspace it
        allows, as its runtime (version and selection method): the one rule ``select``,
        ``select --from-log`` and ``coverage`` share."""
        device = hardware if hardware is not None else library.device
        return cls(
            library.master, library.loader, arch=device.arch if device is not None else None,
            cu_count=device.cu_count if device is not None else None, workspace_size=library.workspace_size,
            runtime=library.runtime,
        )  # fmt: skip

    @classmethod
    def from_path(cls, path: str | Path, *, arch: str | None = None, cu_count: int | None = None) -> RecordedSolutions:
        """Judge against the library at ``path``, read as :func:`tensilekit.open_library` reads it,
        with its runtime's default workspace (:data:`~tensilekit.remapping.RUNTIME_WORKSPACE`)."""
        from tensilekit._arguments import require_path
        from tensilekit.api import load_for_selection

        master, loader = load_for_selection(require_path(path, "path", "RecordedSolutions.from_path"))
        return cls(master, loader, arch=arch, cu_count=cu_count)

    def kernel(self, index: int) -> str | None:
        if index not in self.records:
            return None
        record = self.records[index]
        return _text(record.get("kernelName")) or _text(record.get("name"))

    def __call__(
        self, record: GemmProblem, *, arch: str | None = None, cu_count: int | None = None
    ) -> RecordedSolution | None:
        """What ``record``'s ``solution_index`` is here; None when it records none."""
        index = record.solution_index
        if index is None:
            return None
        problem = record.without_solution().with_call_count(1)
        key = (index, problem, arch, cu_count)
        known = self._seen.get(key)
        if known is None:
            known = self._judge(index, problem, arch, cu_count)
            self._seen[key] = known
        return dataclasses.replace(known, recorded_kernel=record.kernel_name)

    def _judge(self, index: int, problem: GemmProblem, arch: str | None, cu_count: int | None) -> RecordedSolution:
        picked, _ = self._pick(problem, arch, cu_count)
        found = RecordedSolution(
            index,
            self.kernel(index),
            heuristic_index=picked,
            heuristic_kernel=self.kernel(picked) if picked is not None else None,
        )
        if index not in self.records:
            return dataclasses.replace(found, reason=f"the library has no solution {index}")
        if (arch or self.arch) is None:
            reason = "not judged: the library serves several architectures (give --arch)"
            return dataclasses.replace(found, reason=reason)
        refused = self._check(index, problem, arch, cu_count)
        return dataclasses.replace(found, supported=refused is None, reason=refused)


def recorded_solution(
    record: GemmProblem,
    library: str | Path | RecordedSolutions,
    *,
    arch: str | None = None,
    cu_count: int | None = None,
) -> RecordedSolution | None:
    """What a workload record's recorded solution index is in ``library`` (a path, or a
    :class:`RecordedSolutions` to judge many records against one library); None when the record
    carries no index. See the module docstring."""
    judge = library if isinstance(library, RecordedSolutions) else RecordedSolutions.from_path(library, arch=arch)
    return judge(record, arch=arch, cu_count=cu_count)


def recorded_solutions(
    library: OpenedLibrary, problems: Sequence[GemmProblem], hardware: Hardware | None = None
) -> list[RecordedSolution | None] | None:
    """Each problem's recorded solution judged in ``library`` on ``hardware`` (default: its
    device) with the workspace the library allows (:meth:`RecordedSolutions.of`); None for a
    problem recording none; None when no problem records one (the workload is not a tuning result)."""
    if not any(problem.solution_index is not None for problem in problems):
        return None
    judge = RecordedSolutions.of(library, hardware)
    return [judge(problem) for problem in problems]


def recorded_line(problem: GemmProblem, found: RecordedSolution) -> str:
    """One GEMM's recorded solution, as ``select --from-log`` and ``coverage`` print it."""
    shape = f"{problem.m}x{problem.n}x{problem.k} batch {problem.batch} {problem.gemm_type}{problem.layout_note}"
    if found.kernel is None:
        state = f"not in this library ({found.reason})"
    elif found.supported is None:
        state = found.reason or "not judged"
    else:
        state = "supported" if found.supported else f"refused: {found.reason}"
    if found.heuristic_index is None:
        pick = "heuristic picks none"
    else:
        pick = f"heuristic picks {found.heuristic_index}" + (" (differs)" if found.differs else " (same)")
    renamed = " (recorded kernel name differs)" if found.name_matches is False else ""
    return f"  {shape}: recorded {found.index} {found.kernel or '?'}{renamed}; {state}; {pick}"


def recorded_lines(problems: Sequence[GemmProblem], recorded: Sequence[RecordedSolution | None]) -> str:
    """The recorded solutions of a workload, one line per GEMM recording one, under a heading."""
    lines = [
        recorded_line(problem, found) for problem, found in zip(problems, recorded, strict=True) if found is not None
    ]
    differs = sum(1 for found in recorded if found is not None and found.differs)
    refused = sum(1 for found in recorded if found is not None and found.supported is False)
    missing = sum(1 for found in recorded if found is not None and found.kernel is None)
    heading = (
        f"recorded solutions ({len(lines)} GEMMs: {refused} refused, {missing} not in this library, "
        f"{differs} differ from the heuristic)"
    )
    return "\n".join([heading, *lines])


@dataclasses.dataclass(frozen=True)
class RecordedGemm:
    """One distinct GEMM of a tuning artefact, its recorded solution judged, and its weight."""

    problem: GemmProblem
    found: RecordedSolution
    time_us: float | None
    """The recorded time of one call (AITER ``us``, TunableOp's time, a tuning file's ``us``)."""

    @property
    def lost(self) -> bool:
        """The recorded solution is not there, or the predicates refuse it."""
        return self.found.kernel is None or self.found.supported is False

    def to_json(self) -> dict[str, Any]:
        problem = self.problem
        return {
            "m": problem.m, "n": problem.n, "k": problem.k, "batch": problem.batch,
            "gemm_type": problem.gemm_type, "call_count": problem.call_count, "time_us": self.time_us,
            **self.found.to_json(),
        }  # fmt: skip


@dataclasses.dataclass(frozen=True)
class RecordedWorkload:
    """The recorded solutions of tuning artefacts against one library (``coverage`` shows it)."""

    gemms: tuple[RecordedGemm, ...]

    def _weight(self, gemm: RecordedGemm) -> float:
        return (gemm.time_us or 0.0) * gemm.problem.call_count

    @property
    def lost_time_share(self) -> float | None:
        """Share of the recorded time (time x calls) whose recorded solution is lost; None without times."""
        total = sum(self._weight(gemm) for gemm in self.gemms)
        if not total:
            return None
        return sum(self._weight(gemm) for gemm in self.gemms if gemm.lost) / total

    def to_json(self) -> dict[str, Any]:
        return {
            "gemms": len(self.gemms),
            "refused": sum(1 for gemm in self.gemms if gemm.found.supported is False),
            "missing": sum(1 for gemm in self.gemms if gemm.found.kernel is None),
            "differ": sum(1 for gemm in self.gemms if gemm.found.differs),
            "lost_time_share": self.lost_time_share,
            "rows": [gemm.to_json() for gemm in self.gemms],
        }

    def lines(self) -> str:
        """The text ``coverage`` prints under its report."""
        text = recorded_lines([gemm.problem for gemm in self.gemms], [gemm.found for gemm in self.gemms])
        share = self.lost_time_share
        if share is not None:
            text += f"\n  {share:.1%} of the recorded time (us x calls) is on GEMMs whose recorded solution is lost"
        return text


def _recorded_times(parsed: Sequence[ParsedWorkload]) -> dict[tuple[Any, ...], float]:
    """Recorded time of one call per GEMM identity, from every artefact that carries one."""
    from tensilekit.workload import aiter_times, load_tunableop_csv
    from tensilekit.workload.records import text_lines
    from tensilekit.workload.tuning_file import parse_tuning_file

    times: dict[tuple[Any, ...], float] = {}
    for item in parsed:
        if item.source is None:
            continue
        if item.format is WorkloadFormat.AITER:
            with Path(item.source).open(encoding="utf-8-sig", errors="replace") as stream:
                for identity, value in aiter_times(text_lines(stream), file=item.source).items():
                    times.setdefault(identity, value)
        elif item.format is WorkloadFormat.TUNABLEOP:
            for entry in load_tunableop_csv(item.source, skip_bad_lines=True, fold=True).entries:
                if entry.time_ms is not None:
                    times.setdefault(entry.problem.identity(), entry.time_ms * 1000.0)
        elif item.format is WorkloadFormat.HIPBLASLT_TUNING:
            text = Path(item.source).read_text(encoding="utf-8", errors="replace")
            for row in parse_tuning_file(text, file=item.source).rows:
                if row.us is not None:
                    times.setdefault(row.problem.identity(), row.us)
    return times


def recorded_workload(
    paths: Sequence[str | Path], library: OpenedLibrary, hardware: Hardware | None = None
) -> RecordedWorkload | None:
    """The recorded solutions of the workload files ``paths`` judged against ``library`` on
    ``hardware`` (default: its device) as :func:`recorded_solutions` judges them, each GEMM
    weighed by its recorded time; None when no file records a solution.
    A GEMM recorded with two different solutions (AITER rows per ``cu_num``) records none."""
    from tensilekit.workload import load_workloads, split_by_device

    workload, parsed = load_workloads(paths, skip_bad_lines=True)
    device = hardware if hardware is not None else library.require_device()
    problems = split_by_device(workload.problems, device.arch, device.cu_count).served  # rows of this device
    found = recorded_solutions(library, problems, device)
    if found is None:
        return None
    times = _recorded_times(parsed)
    return RecordedWorkload(
        tuple(
            RecordedGemm(problem, item, times.get(problem.identity()))
            for problem, item in zip(problems, found, strict=True)
            if item is not None
        )
    )


__all__ = [
    "RecordedGemm",
    "RecordedSolution",
    "RecordedWorkload",
    "RecordedSolutions",
    "SolutionDescription",
    "describe_solution",
    "problem_type_text",
    "recorded_line",
    "recorded_lines",
    "recorded_solution",
    "recorded_solutions",
    "recorded_workload",
]

"""Canonical dict logic files, ``.yaml.zst`` logic, factored logic.

Followed from ROCm/rocm-libraries ``projects/hipblaslt/tensilelite`` (rocm-libraries#9331, #12361):

* ``Tensile/LibraryIO.py`` @ 4cbb0598f7c8 ``createLibraryLogic`` (the writer TensileCreateLibrary's
  tuning flow now uses): a root mapping with named keys in the order ``MinimumRequiredVersion,
  ScheduleName, ArchitectureName, CUCount, DeviceNames, ProblemType, DefaultSolution, Solutions,
  IndexOrder, ExactLogic, RangeLogic, TileSelectionIndices, PerfMetric, LibraryType``;
  ``ProblemType`` keys sorted; each solution without ``ProblemType`` (factored: the file's one
  applies), without the fields equal to ``DefaultSolution``, keys sorted with ``SolutionIndex,
  KernelNameMin, SolutionNameMin`` first (``reorderSolutionDictForDictMerge``); booleans
  ``true``/``false``. ``prepareLibraryLogicDict`` / ``solutionStateToSolution`` read it back:
  missing solution keys come from ``DefaultSolution``, the problem type from the file.
* ``Solutions`` may be a mapping keyed by solution name (rocm-libraries#12361); it is read as the
  list of its values in file order, and written back keyed by ``SolutionNameMin``.
* ``Tensile/Utilities/compress_logic_yamls.py`` (rocm-libraries): ``<file>.yaml.zst`` is one zstd
  frame over the YAML text (``zstandard.ZstdCompressor(level)``); read here transparently.
"""

from __future__ import annotations

from typing import Any

from tensilekit.errors import LibraryFormatError, Location

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
CANONICAL_ROOT_ORDER = (
    "MinimumRequiredVersion", "ScheduleName", "ArchitectureName", "CUCount", "DeviceNames", "ProblemType",
    "DefaultSolution", "Solutions", "IndexOrder", "ExactLogic", "RangeLogic", "TileSelectionIndices",
    "PerfMetric", "LibraryType",
)  # fmt: skip
_LEADING_SOLUTION_KEYS = ("SolutionIndex", "KernelNameMin", "SolutionNameMin")


def is_zstd(data: bytes) -> bool:
    return data[:4] == ZSTD_MAGIC


def decompress_zstd(data: bytes, source: str | None = None) -> bytes:
    """The YAML text of a ``.yaml.zst`` logic file: one zstd frame, inflated under the same size
    and ratio guard as gzip and zlib (:func:`tensilekit.io.limits.inflate_zstd`); bytes after the
    frame (a second frame, appended data) are refused with their offset."""
    try:
        import zstandard  # noqa: F401 - only to say what is missing
    except ImportError:  # pragma: no cover - a declared dependency
        from tensilekit.errors import MissingDependency

        raise MissingDependency("reading .zst files needs the 'zstandard' package") from None
    from tensilekit.io.limits import inflate_zstd

    return inflate_zstd(data, source)


def compress_zstd(text: str, level: int = 19) -> bytes:
    """``<file>.yaml.zst`` bytes as ``compress_logic_yamls.py compress --level`` writes them."""
    import zstandard

    return bytes(zstandard.ZstdCompressor(level=level).compress(text.encode("utf-8")))


def solutions_keyed_by_name(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("Solutions"), dict)


def unkey_solutions(data: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """``data`` with a name-keyed ``Solutions`` mapping turned into a list ordered by
    ``SolutionIndex`` (a YAML mapping has no order of its own — ``yaml.dump`` sorts its keys — and
    ``ExactLogic`` rows name solutions by that index, which is also the list position in AMD's files)."""
    return {**data, "Solutions": [solution for _, solution in keyed_solutions(data, source)]}


def keyed_solutions(data: dict[str, Any], source: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(key, solution)`` of a name-keyed ``Solutions`` mapping, by ``SolutionIndex``."""
    pairs = []
    for name, solution in data["Solutions"].items():
        where = Location(file=source, path=f"Solutions.{name}")
        if not isinstance(solution, dict):
            raise LibraryFormatError(f"solution {name!r} must be a mapping of parameters", where)
        index = solution.get("SolutionIndex")
        if not isinstance(index, int) or isinstance(index, bool):
            raise LibraryFormatError(f"solution {name!r} has no integer SolutionIndex to order it by", where)
        pairs.append((str(name), solution))
    pairs.sort(key=lambda pair: pair[1]["SolutionIndex"])
    indices = [solution["SolutionIndex"] for _, solution in pairs]
    if len(set(indices)) != len(indices):
        raise LibraryFormatError("two keyed solutions share a SolutionIndex", Location(file=source, path="Solutions"))
    return pairs


def expanded_solutions(data: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """A dict-form logic file with its Solutions unkeyed (when keyed) and each completed by
    :func:`expanded_solution`; other shapes are left for the model to refuse with their place."""
    if isinstance(data.get("Solutions"), dict):
        data = unkey_solutions(data, source)
    solutions = data.get("Solutions")
    if isinstance(solutions, list):
        for position, solution in enumerate(solutions):
            if not isinstance(solution, dict):
                raise LibraryFormatError(
                    f"a solution must be a mapping of parameters, not {type(solution).__name__}",
                    Location(file=source, path=f"Solutions[{position}]"),
                )
        data = {**data, "Solutions": [expanded_solution(solution, data) for solution in solutions]}
    return data


def expanded_solution(solution: dict[str, Any], logic_root: dict[str, Any]) -> dict[str, Any]:
    """A factored solution as the runtime-side reader completes it: ``DefaultSolution`` fills the
    keys it lacks and the file's ``ProblemType`` applies (``solutionStateToSolution``)."""
    full = dict(solution)
    defaults = logic_root.get("DefaultSolution")
    if isinstance(defaults, dict):
        for key, value in defaults.items():
            full.setdefault(key, value)
    if "ProblemType" not in full and isinstance(logic_root.get("ProblemType"), dict):
        full["ProblemType"] = logic_root["ProblemType"]
    return full


def _canonical_solution(solution: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    state = {k: v for k, v in solution.items() if k != "ProblemType" and not (k in defaults and defaults[k] == v)}
    ordered: dict[str, Any] = {}
    for key in sorted(state):
        value = state[key]
        ordered[key] = (
            dict(sorted(value.items())) if key == "InternalSupportParams" and isinstance(value, dict) else value
        )
    lead = {key: ordered.pop(key) for key in _LEADING_SOLUTION_KEYS if key in ordered}
    return {**lead, **ordered}


def canonical_data(plain: dict[str, Any], *, keyed: bool = True) -> dict[str, Any]:
    """The canonical dict form of a logic file given as its named fields (dict layout data)."""
    defaults = plain.get("DefaultSolution") if isinstance(plain.get("DefaultSolution"), dict) else {}
    assert isinstance(defaults, dict)
    solutions = [_canonical_solution(s, defaults) for s in plain.get("Solutions") or []]
    out: dict[str, Any] = {}
    for key in CANONICAL_ROOT_ORDER:
        if key == "ProblemType" and isinstance(plain.get(key), dict):
            out[key] = dict(sorted(plain[key].items()))
        elif key == "DefaultSolution" and defaults:
            out[key] = dict(sorted(defaults.items()))
        elif key == "Solutions":
            # keyed only when SolutionIndex orders the solutions as their positions do (how a
            # keyed file is read back); otherwise the list keeps ExactLogic's positions exact
            if keyed and all(s.get("SolutionIndex") == i for i, s in enumerate(solutions)):
                named: dict[str, Any] = {}
                for position, solution in enumerate(solutions):
                    name = str(solution.get("SolutionNameMin") or solution.get("SolutionIndex", position))
                    if name in named:
                        name = f"{name}#{position}"
                    named[name] = solution
                out[key] = named
            else:
                out[key] = solutions
        elif key in plain:
            out[key] = plain[key]
        elif key in ("CUCount", "TileSelectionIndices", "PerfMetric", "DeviceNames"):
            out[key] = None
    out.update((key, value) for key, value in plain.items() if key not in out and key not in CANONICAL_ROOT_ORDER)
    return out


def tensilelite_build_form(data: dict[str, Any], source: str | None = None) -> list[Any]:
    """A tensilelite dict-form logic file (keyed, factored, named keys) as the list form its
    build reads: Solutions unkeyed, each completed from ``DefaultSolution`` and the file's
    ``ProblemType``, then :func:`tensilelite_list_form`. Every entry point of the build
    (``build-master``, ``lint``, the Python API) goes through this one conversion."""
    return tensilelite_list_form(expanded_solutions(data, source))


def tensilelite_list_form(data: dict[str, Any]) -> list[Any]:
    """A tensilelite dict-form (canonical) logic file as the list tensilelite 7d9fb683's
    ``parseLibraryLogicList`` reads (LibraryIO.py:316-363): the 2026 TensileCreateLibrary reads
    the named keys into the same fields, so the build sees one shape whichever form was written.
    Solutions must already be a list (see :func:`unkey_solutions`, :func:`expanded_solution`)."""
    architecture: Any = data.get("ArchitectureName")
    if data.get("CUCount") is not None or data.get("IsAPU") is not None:
        architecture = {"Architecture": architecture}
        if data.get("CUCount") is not None:
            architecture["CUCount"] = data["CUCount"]
        if data.get("IsAPU") is not None:
            architecture["IsAPU"] = data["IsAPU"]
    version = data.get("MinimumRequiredVersion")
    tile_selection = data.get("TileSelectionIndices")
    return [
        {"MinimumRequiredVersion": version},
        data.get("ScheduleName"),
        architecture,
        data.get("DeviceNames"),
        data.get("ProblemType"),
        data.get("Solutions"),
        data.get("IndexOrder"),
        data.get("ExactLogic"),
        data.get("RangeLogic"),
        None if tile_selection is None else {"TileSelectionIndices": tile_selection},
        data.get("PerfMetric"),
        data.get("LibraryType"),
    ]


__all__ = [
    "CANONICAL_ROOT_ORDER",
    "ZSTD_MAGIC",
    "canonical_data",
    "compress_zstd",
    "decompress_zstd",
    "expanded_solution",
    "is_zstd",
    "keyed_solutions",
    "tensilelite_build_form",
    "tensilelite_list_form",
    "solutions_keyed_by_name",
    "unkey_solutions",
]

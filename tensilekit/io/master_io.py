"""Read and write master solution libraries (YAML, msgpack ``.dat``, gzip/zlib wrapped).

Loading resolves nothing lazily: a ``Placeholder`` stays a node; :func:`load_placeholder`
reads the file it names (``<dir of master>/<prefix><extension of master>``, as the C++ does).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tensilekit._arguments import require, require_output_path, require_path
from tensilekit.errors import InvalidValue, LibraryFormatError, Location, UnsupportedFormat, error_context
from tensilekit.io.detect import Format, Kind, decompress, detect_format, detect_kind
from tensilekit.io.files import decode_text, gc_paused, read_bytes, resolve_path
from tensilekit.io.locations import to_format_error
from tensilekit.io.msgpack_codec import dump_msgpack, parse_msgpack
from tensilekit.io.yaml_codec import AMD_MASTER_STYLE, TextCut, YamlStyle, dump_yaml, interned_keys, parse_yaml
from tensilekit.model.library import MasterLibrary, PlaceholderNode, placeholder_name
from tensilekit.model.solution import MasterSolution

if TYPE_CHECKING:
    from tensilekit.io.indexed_msgpack import LazyMaster


def decode(
    data: bytes | str, source: str | None = None, *, models: bool = False, cut: TextCut | None = None
) -> tuple[Any, Format, str | None]:
    """Decode bytes or text into plain data; returns (data, format, text-if-YAML).

    ``models`` (for :func:`master_from_data` only): a YAML master cut into its top-level parts
    comes back with each solution and the library tree validated as it is decoded (its
    :class:`MasterSolution` and node models in place of their mappings; a part that does not
    validate stays plain, and :func:`master_from_data` reports it as before), so that the plain
    tree of one solution at a time is alive (rocBLAS_Full: ~400 MB less at the peak).
    ``cut``: given a YAML text's top-level cut as it is decoded (:class:`TextCut`), to locate
    paths in the text later without cutting it again."""
    parts = _MasterParts() if models else None
    with error_context(source or "<input>"):
        if isinstance(data, str):
            with gc_paused():
                return parse_yaml(data, source, parts=parts, cut=cut), Format.YAML, data
        raw, _ = decompress(data, source)
        fmt = detect_format(raw)
        with gc_paused():
            if fmt is Format.MSGPACK:
                return parse_msgpack(raw, source), fmt, None
            text = decode_text(raw, source)
            del raw
            return parse_yaml(text, source, parts=parts, cut=cut), fmt, text


# The mappings of a solution the model keeps as they are (its extras, problemType, sizeMapping's
# extras): their keys are made one string per spelling as each solution is read. Predicates are
# kept as shared models (``InternedPredicate``), not as the mappings read.
_PREDICATE_KEYS_OF_SOLUTION = frozenset({"hardwarePredicate", "problemPredicate", "taskPredicate"})


class _SolutionParts:
    """Builds each solution of a YAML master as it is decoded (``decode(models=True)``)."""

    def __init__(self) -> None:
        self._keys: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # each key sequence met, interned

    def __call__(self, raw: Any) -> Any:
        if type(raw) is not dict:
            return raw
        self._share_keys(raw, predicates=True)
        return self.of_interned(raw)

    def of_interned(self, raw: Any) -> Any:
        """The solution of ``raw``, whose keys are interned strings already (decoded per entry)."""
        if type(raw) is not dict:
            return raw
        try:
            return MasterSolution.model_validate(raw)
        except ValidationError:
            return raw  # master_from_data validates it again in place, with its location

    def _share_keys(self, node: dict[Any, Any], *, predicates: bool = False) -> None:
        keys = interned_keys(tuple(node), self._keys)
        values = list(node.values())
        node.clear()
        node.update(zip(keys, values, strict=True))
        for key, value in zip(keys, values, strict=True):
            if type(value) is dict:
                if value and not (predicates and key in _PREDICATE_KEYS_OF_SOLUTION):
                    self._share_keys(value)
            elif type(value) is list and value:
                self._share_items(value)

    def _share_items(self, items: list[Any]) -> None:
        for value in items:
            if type(value) is dict:
                if value:
                    self._share_keys(value)
            elif type(value) is list and value:
                self._share_items(value)


def _library_part(raw: Any) -> Any:
    """The library tree of a YAML master as a node model (plain when it does not validate)."""
    try:
        return MasterLibrary.model_validate({"solutions": [], "library": raw}).library
    except ValidationError:
        return raw


class _MasterParts(dict[str, Callable[[Any], Any]]):
    """``parse_yaml``'s part builders for a master, a fresh key table for each document."""

    def __init__(self) -> None:
        super().__init__(solutions=_SolutionParts(), library=_library_part)


def text_again(data: bytes, source: str | None = None) -> Callable[[], str]:
    """The YAML text of ``data`` (gzip/zlib allowed), decoded again when asked: a big master's
    model is then built without its text beside it (78 MB for rocBLAS_Full), and only an error
    (its line and column) reads the text once more."""
    return lambda: decode_text(decompress(data, source)[0], source)


def master_from_data(
    data: Any,
    *,
    source: str | None = None,
    text: str | Callable[[], str] | None = None,
    binary: bytes | None = None,
) -> MasterLibrary:
    """Validate decoded data as a :class:`MasterLibrary` (an indexed file's solutions are decoded).
    ``text``: the YAML it was decoded from, or a function giving it (:func:`text_again`), for
    errors' lines; ``binary``: the msgpack bytes it was decoded from (gzip/zlib allowed), so errors
    also carry their byte offset."""
    indexed = isinstance(data, dict) and "format_version" in data
    if indexed:
        from tensilekit.io.indexed_msgpack import indexed_to_data

        data = indexed_to_data(data, source)
    with error_context(source or "<input>"):
        try:
            kind = detect_kind(data, None if callable(text) else text)
        except UnsupportedFormat:
            if not callable(text):
                raise
            kind = detect_kind(data, text())  # a master cut short is located in its text
        if kind is not Kind.MASTER:
            raise LibraryFormatError("not a master solution library (no 'solutions' and 'library')", Location(path=""))
        try:
            with gc_paused():
                library = MasterLibrary.model_validate(data)
        except ValidationError as error:
            problem = to_format_error(error, data, source=source, text=text() if callable(text) else text)
            if binary is not None and text is None and not indexed:
                add_offsets(problem, decompress(binary, source)[0])
            raise problem from None
    if indexed:
        from tensilekit.io.indexed_msgpack import check_tree_indices

        check_tree_indices(library, {solution.index for solution in library.solutions}, source)
    return library


def add_offsets(error: LibraryFormatError, data: bytes) -> None:
    """Fill in the byte offsets of a model error (and its related ones) found in msgpack ``data``."""
    from tensilekit.io.msgpack_codec import offsets_of
    from tensilekit.io.yaml_codec import parse_path

    problems = [error, *error.related]
    paths = [parse_path(p.location.path) for p in problems if p.location is not None and p.location.path]
    found = offsets_of(data, paths)
    for problem in problems:
        location = problem.location
        if location is not None and location.path and location.offset is None:
            offset = found.get(tuple(parse_path(location.path)))
            if offset is not None:
                problem.location = dataclasses.replace(location, offset=offset)


def opens_master(data: bytes | str, source: str | None = None) -> LazyMaster:
    """:func:`open_master` of bytes (or YAML text)."""
    from tensilekit.io.indexed_msgpack import LazyMaster

    if isinstance(data, bytes):
        with error_context(source or "<input>"):
            raw, _ = decompress(data, source)
            if detect_format(raw) is Format.MSGPACK:
                with gc_paused():
                    lazy = LazyMaster.from_plain(raw, source)
                    if lazy is not None:
                        return lazy
                    decoded = parse_msgpack(raw, source)  # indexed, or a layout the scan does not trust
                    if isinstance(decoded, dict) and "format_version" in decoded:
                        return LazyMaster(decoded, source)
                return LazyMaster.from_master(master_from_data(decoded, source=source, binary=raw), source)
    return LazyMaster.from_master(loads_master(data, source), source)


def open_master(path: str | Path) -> LazyMaster:
    """Open a master library for selection: the tree is read and validated now, each solution
    is decoded (and validated) when first asked for, as hipBLASLt's ``SolutionBlobCache`` does.

    A plain msgpack ``.dat`` (``.dat.zlib``) is scanned once for where each solution lies,
    without decoding it; an indexed file carries that table; YAML is read whole. Use
    :func:`load_master` for the whole validated library; ``open_master(path).materialize()``
    gives the same. Raises TypeError/ValueError for a ``path`` that is no path.
    """
    path = require_path(path, "path", "open_master")
    from tensilekit.io.zlib_catalog import read_catalog_bytes

    data, found = read_catalog_bytes(path) if not Path(path).exists() else (read_bytes(path), Path(path))
    return opens_master(data, str(found))


def loads_master(data: bytes | str, source: str | None = None) -> MasterLibrary:
    """Parse a master library from bytes (YAML or msgpack, optionally gzip/zlib) or YAML text.

    Raises TypeError when ``data`` is neither bytes nor str."""
    require(data, (bytes, str), "data", "loads_master")
    require(source, str, "source", "loads_master", optional=True)
    # One GC pause over decode and validation, the decoded tree dropped inside it: the deferred
    # collection then scans the model only, not the model and the plain tree it was built from.
    with gc_paused():
        decoded, _, text = decode(data, source, models=True)
        if isinstance(data, bytes) and text is not None:
            del text  # the model is built without the text beside it (an error decodes it again)
            library = master_from_data(decoded, source=source, text=text_again(data, source))
        else:
            library = master_from_data(
                decoded, source=source, text=text, binary=data if isinstance(data, bytes) else None
            )
        del decoded
    return library


def load_master(path: str | Path) -> MasterLibrary:
    """Read ``TensileLibrary*.yaml`` / ``.dat`` (``.gz``, ``.dat.zlib``, indexed) from disk.

    A ``.dat`` name that does not exist is read as the runtime would: ``<name>.zlib`` first.
    Raises TypeError/ValueError for a ``path`` that is no path.
    """
    path = require_path(path, "path", "load_master")
    if not Path(path).exists():
        from tensilekit.io.zlib_catalog import read_catalog_bytes

        data, found = read_catalog_bytes(path)
        return loads_master(data, str(found))
    return loads_master(read_bytes(path), str(path))


def master_to_data(master: MasterLibrary) -> dict[str, Any]:
    with gc_paused():
        return master.to_raw()


# Key order of TensileCreateLibrary's msgpack output: Python's state() dicts are written in
# insertion order (the YAML writer sorts instead). Read off the corpus masters AMD generated.
_ROOT_KEYS = ("solutions", "library", "version")
_SOLUTION_KEYS = (
    "name", "problemType", "hardwarePredicate", "problemPredicate", "taskPredicate", "sizeMapping",
    "debugKernel", "libraryLogicIndex", "index", "ideals", "linearModel",
)  # fmt: skip
_PROBLEM_TYPE_KEYS = (
    "operationIdentifier", "aType", "bType", "cType", "dType", "useBeta", "highPrecisionAccumulate",
    "useInitialStridesAB", "useInitialStridesCD", "stridedBatched", "f32XdlMathOp", "stochasticRounding",
)  # fmt: skip
_SIZE_MAPPING_KEYS = (
    "workGroup", "macroTile", "threadTile", "depthU", "staggerU", "globalSplitU", "staggerStrideShift",
    "workGroupMapping", "packSummationDims", "packBatchDims", "magicDivAlg", "streamK", "streamKAtomic",
    "persistentKernel", "persistentKernelAlongBatch", "sourceKernel", "globalAccumulation",
    "workspaceSizePerElemC", "preloadKernargs",
)  # fmt: skip
# tensilelite (hipBLASLt 7d9fb683 ``Contractions.py`` ``Solution.state``/``ProblemType.state``/
# ``SizeMapping.state``) builds these dicts in another order; read off ../corpus/masters-hipblaslt.
_LITE_SOLUTION_KEYS = (
    "name", "kernelName", "problemType", "hardwarePredicate", "problemPredicate", "taskPredicate", "sizeMapping",
    "internalArgsSupport", "debugKernel", "libraryLogicIndex", "index", "ideals", "linearModel",
)  # fmt: skip
_LITE_PROBLEM_TYPE_KEYS = (
    "operationIdentifier", "transA", "transB", "computeInputType", "aType", "bType", "cType", "dType", "eType",
    "computeType", "useBeta", "useBias", "biasSrcWhiteList", "useE", "useScaleAB", "useScaleCD",
    "useScaleAlphaVec", "biasDataTypeWhiteList", "highPrecisionAccumulate", "useInitialStridesAB",
    "useInitialStridesCD", "stridedBatched", "groupedGemm", "useGradient", "activationType",
    "activationArgLength", "activationComputeDataType", "activationNoGuard", "sparse", "f32XdlMathOp",
    "supportDeviceUserArguments", "outputAmaxD",
)  # fmt: skip
_LITE_SIZE_MAPPING_KEYS = (
    "waveNum", "workGroup", "macroTile", "threadTile", "matrixInstruction", "grvwA", "grvwB", "gwvwC", "gwvwD",
    "depthU", "staggerU", "staggerUMapping", "globalSplitUPGR", "globalSplitU", "staggerStrideShift",
    "workGroupMapping", "packBatchDims", "magicDivAlg", "streamK", "streamKAtomic", "sourceKernel",
    "globalAccumulation", "workspaceSizePerElemC", "workspaceSizePerElemBias", "activationFused",
    "CustomKernelName", "workGroupMappingXCC", "workGroupMappingXCCGroup", "globalSplitUCoalesced",
    "globalSplitUWorkGroupMappingRoundRobin",
)  # fmt: skip
_LITE_INTERNAL_ARGS_KEYS = ("version", "gsu", "wgm", "staggerU", "useUniversalArgs")
_NODE_KEYS = {
    "Matching": ("type", "properties", "table", "distance"),
    "ProblemMap": ("type", "property", "map"),
    "DecisionTree": ("type", "features", "trees", "nullValue"),
}
_PREDICATE_KEYS = ("type", "index", "value")
_BUFFER_LOAD_CHECK_KEYS = ("ShiftPtrElemB", "ShiftPtrElemA", "DUorMT1", "DUorMT0")


def _ordered(node: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``node`` with ``keys`` first, in that order; any other key after them, as it was."""
    out = {key: node[key] for key in keys if key in node}
    out.update((key, value) for key, value in node.items() if key not in out)
    return out


def _predicate_order(node: Any) -> Any:
    if isinstance(node, list):
        return [_predicate_order(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "type" not in node:  # a plain value mapping (SizeInRange bounds, granularity factors)
        return dict(sorted(node.items(), key=lambda item: str(item[0])))
    ordered = _ordered(node, _PREDICATE_KEYS)
    value = ordered.get("value")
    if node["type"] == "BufferLoadOffsetLimitCheck" and isinstance(value, dict):
        ordered["value"] = _ordered(value, _BUFFER_LOAD_CHECK_KEYS)
    elif "value" in ordered:
        ordered["value"] = _predicate_order(value)
    return ordered


def _library_order(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    ordered = _ordered(node, _NODE_KEYS.get(kind, ("type", "rows", "value", "index")) if isinstance(kind, str) else ())
    if "rows" in ordered:
        ordered["rows"] = [
            _ordered(
                {
                    **row,
                    "predicate": _predicate_order(row.get("predicate")),
                    "library": _library_order(row.get("library")),
                },
                ("predicate", "library"),
            )
            for row in ordered["rows"]
        ]
    if kind == "ProblemMap":
        ordered["map"] = {op: _library_order(child) for op, child in ordered["map"].items()}
    if kind == "Matching":
        ordered["properties"] = [_ordered(p, ("type", "index")) for p in ordered["properties"]]
        ordered["table"] = [_ordered(entry, ("key", "index", "value", "speed")) for entry in ordered["table"]]
    if kind == "DecisionTree":
        ordered["features"] = [
            _ordered(f, ("index", "type") if "index" in f else ("type", "value")) for f in ordered["features"]
        ]
        ordered["trees"] = [
            _ordered(
                {**t, "tree": [dict(sorted(n.items())) for n in t["tree"]], "value": _library_order(t["value"])},
                ("tree", "value"),
            )
            for t in ordered["trees"]
        ]
        ordered["nullValue"] = _library_order(ordered["nullValue"])
    return ordered


def _solution_order(record: dict[str, Any]) -> dict[str, Any]:
    problem_type = record.get("problemType")
    # tensilelite's solutions are the ones whose problem type names a compute input type.
    lite = isinstance(problem_type, dict) and "computeInputType" in problem_type
    ordered = _ordered(record, _LITE_SOLUTION_KEYS if lite else _SOLUTION_KEYS)
    for key in ("hardwarePredicate", "problemPredicate", "taskPredicate"):
        if key in ordered:
            ordered[key] = _predicate_order(ordered[key])
    if isinstance(problem_type, dict):
        ordered["problemType"] = _ordered(problem_type, _LITE_PROBLEM_TYPE_KEYS if lite else _PROBLEM_TYPE_KEYS)
    if isinstance(ordered.get("sizeMapping"), dict):
        keys = _LITE_SIZE_MAPPING_KEYS if lite else _SIZE_MAPPING_KEYS
        ordered["sizeMapping"] = _ordered(ordered["sizeMapping"], keys)
    if isinstance(ordered.get("internalArgsSupport"), dict):
        ordered["internalArgsSupport"] = _ordered(ordered["internalArgsSupport"], _LITE_INTERNAL_ARGS_KEYS)
    return ordered


def tensile_msgpack_order(data: dict[str, Any]) -> dict[str, Any]:
    """The master tree with every map in the key order TensileCreateLibrary's msgpack writer uses."""
    ordered = _ordered(data, _ROOT_KEYS)
    ordered["solutions"] = [_solution_order(s) if isinstance(s, dict) else s for s in ordered.get("solutions", [])]
    ordered["library"] = _library_order(ordered.get("library"))
    return ordered


def dumps_master(master: MasterLibrary, fmt: Format | str = Format.YAML, style: YamlStyle = AMD_MASTER_STYLE) -> bytes:
    """Serialise as TensileCreateLibrary does: YAML (sorted keys, ``---``/``...``) or msgpack (keys
    in the writer's object order). Raises TypeError for arguments of the wrong type, ValueError for
    an unknown ``fmt``."""
    require(master, MasterLibrary, "master", "dumps_master")
    require(fmt, (Format, str), "fmt", "dumps_master")
    require(style, YamlStyle, "style", "dumps_master")
    data = master_to_data(master)
    if Format(fmt) is Format.MSGPACK:
        return dump_msgpack(tensile_msgpack_order(data))
    with gc_paused():
        return dump_yaml(data, style).encode("utf-8")


def format_for_path(path: str | Path) -> Format:
    """``.dat``/``.msgpack`` → msgpack, anything else → YAML."""
    suffixes = [suffix.lower() for suffix in Path(path).suffixes]
    return Format.MSGPACK if any(s in (".dat", ".msgpack") for s in suffixes) else Format.YAML


# Formats beyond YAML/msgpack a master can be written in (``--format``): ``zlib`` is msgpack in
# a ``.dat.zlib`` catalog, ``msgpack-indexed`` the format_version 2 layout (io.indexed_msgpack).
WRITE_FORMATS = ("yaml", "msgpack", "zlib", "msgpack-indexed")


def dump_master(master: MasterLibrary, path: str | Path | None = None, fmt: Format | str | None = None) -> bytes:
    """Write ``master`` atomically (format from ``fmt`` or the file suffix); returns the bytes.

    ``fmt`` is one of :data:`WRITE_FORMATS`; a path ending in ``.zlib`` is zlib-compressed at
    level 9 as hipBLASLt's ``LibraryIO.writeMsgPack`` does (``io.zlib_catalog``).

    Raises InputNotFound when the folder of ``path`` does not exist (it is not created, as the
    CLI refuses it too), UnsupportedFormat when ``path`` is a folder, TypeError/ValueError for
    arguments of the wrong type.
    """
    if path is not None:
        path = require_output_path(path, "path", "dump_master")
    require(master, MasterLibrary, "master", "dump_master")
    require(fmt, (Format, str), "fmt", "dump_master", optional=True)
    name = str(path) if path is not None else ""
    if fmt is not None and str(getattr(fmt, "value", fmt)) == "msgpack-indexed":
        from tensilekit.io.indexed_msgpack import dumps_indexed

        payload = dumps_indexed(master)
    elif fmt is not None and str(getattr(fmt, "value", fmt)) == "zlib":
        payload = dumps_master(master, Format.MSGPACK)
        name = name if name.endswith(".zlib") else name + ".zlib"
    else:
        chosen = Format(fmt) if fmt is not None else (format_for_path(path) if path is not None else Format.YAML)
        payload = dumps_master(master, chosen)
    if name.endswith(".zlib"):
        from tensilekit.io.zlib_catalog import compress_catalog

        payload = compress_catalog(payload)
    if path is not None:
        from tensilekit.io.atomic import write_bytes_atomic

        if str(path).endswith(".gz"):
            import gzip

            payload = gzip.compress(payload, mtime=0)
        write_bytes_atomic(path, payload)
    return payload


def dump_master_set(
    masters: dict[str, MasterLibrary],
    directory: str | Path,
    fmt: Format | str = Format.MSGPACK,
    *,
    mapping: bool | None = None,
    removed: list[Path] | None = None,
) -> list[Path]:
    """Write several masters (``name -> library``, e.g. a lazy library and its placeholder files)
    into ``directory`` as one set (``io.atomic.file_set``): staged, then renamed in file by file,
    each lazy master last (the runtime opens it first, then the files its placeholders name).
    Returns the final paths.

    ``mapping``: also write tensilelite's ``TensileLiteLibrary_lazy_<arch>_Mapping`` beside a lazy
    master. That file belongs to the 2026 TensileCreateLibrary (rocm-libraries ``Run.py``), the one
    that writes ``.dat.zlib`` and indexed catalogs; hipBLASLt 7d9fb683 writes none. Default (None):
    with the 2026 formats (``zlib``, ``msgpack-indexed``) only, so a YAML or ``.dat`` lazy set stays
    byte for byte what 7d9fb683 writes.

    Each architecture's files are owned by the builds of that architecture: the library files an
    earlier tensilekit build of the same architecture wrote into the folder and this one does not
    write again (another format's, a shard no longer named), and the other catalog spelling of a
    file written (``X.dat.zlib`` beside ``X.dat``: the runtime reads it first) are removed and
    appended to ``removed`` when given. Every other file stays: another architecture's library,
    code objects, files tensilekit did not write (AMD's TensileCreateLibrary deletes nothing of
    another build either)."""
    from tensilekit.io.atomic import file_set

    chosen = str(getattr(fmt, "value", fmt))
    suffix = set_suffix(chosen)
    order = sorted(masters, key=lambda name: name.startswith("TensileLibrary_lazy"))
    from tensilekit.io.installed_library import lazy_mappings

    if mapping is None:
        mapping = chosen in ("zlib", "msgpack-indexed")
    # tensilelite lazy sets get TensileLiteLibrary_lazy_<arch>_Mapping, always msgpack (Run.py)
    mappings = lazy_mappings(masters) if mapping else {}
    mapping_suffix = ".dat" if chosen in ("yaml", "msgpack") else ".dat.zlib"
    written = [f"{name}{suffix}" for name in order if not name.startswith("TensileLibrary_lazy")]
    written += [f"{name}{mapping_suffix}" for name in mappings]
    written += [f"{name}{suffix}" for name in order if name.startswith("TensileLibrary_lazy")]
    folder = Path(directory)
    with file_set(
        folder,
        owner=library_file_owner,
        last=lambda name: name.startswith("TensileLibrary_lazy"),
        shadowed=lambda name: [sibling.name for sibling in catalog_siblings(folder / name)],
        removed=removed,
    ) as staging:
        for name in order:
            if name.startswith("TensileLibrary_lazy"):
                for mapping_name, table in mappings.items():
                    payload = dump_msgpack(table)
                    if mapping_suffix.endswith(".zlib"):
                        from tensilekit.io.zlib_catalog import compress_catalog

                        payload = compress_catalog(payload)
                    (staging / f"{mapping_name}{mapping_suffix}").write_bytes(payload)
                mappings = {}
            dump_master(masters[name], staging / f"{name}{suffix}", "msgpack" if chosen == "zlib" else chosen)
    return [Path(directory) / name for name in written]


_ARCH_IN_NAME = re.compile(r".*_(gfx[0-9a-z]+)(?:_Mapping)?\.[^_]*")


def library_file_owner(name: str) -> str:
    """The owner key of a library file a build writes (``io.atomic.file_set``): the builds of its
    architecture (``TensileLibrary_Type_…_gfx942.dat`` → ``build-master gfx942``)."""
    match = _ARCH_IN_NAME.fullmatch(name)
    return f"build-master {match.group(1) if match else ''}".rstrip()


def catalog_siblings(path: str | Path) -> list[Path]:
    """The other spellings of the catalog ``path`` the runtime probes (``X.dat`` ↔ ``X.dat.zlib``)
    that exist: stale once ``path`` is written, and the ``.zlib`` one would be read first."""
    from tensilekit.io.zlib_catalog import probe_order

    target = Path(path)
    if not target.name.endswith((".dat", ".dat.zlib")):
        return []
    return [candidate for candidate in probe_order(target) if candidate != target and candidate.is_file()]


def set_suffix(fmt: str) -> str:
    """The file suffix of a master written in ``fmt`` into a library folder (AMD writes both the
    zlib and the indexed layout as ``.dat.zlib``)."""
    return {"yaml": ".yaml", "msgpack": ".dat"}.get(fmt, ".dat.zlib")


def _is_symlink_loop(path: Path) -> bool:
    try:
        resolve_path(path)
    except UnsupportedFormat:
        return True
    return False


def placeholder_problems(master: MasterLibrary, master_path: str | Path) -> list[tuple[str, str]]:
    """(YAML path, problem) for each Placeholder of ``master`` (read from ``master_path``) whose
    file is missing, is the master itself or leads out of its folder (what ``validate`` reports;
    loading it would fail). A placeholder file counts as present as ``<name>.zlib`` too, the
    runtime's first probe."""
    path = Path(master_path)
    name = path.name
    if name.endswith(".zlib"):
        name = name[: -len(".zlib")]
    suffix = "".join(Path(name).suffixes[-2:]) if name.endswith(".gz") else Path(name).suffix
    folder = path.parent.resolve()
    problems: list[tuple[str, str]] = []
    for where, node in master.iter_nodes():
        if not isinstance(node, PlaceholderNode):
            continue
        target = path.with_name(node.value + suffix)
        candidates = (target.with_name(target.name + ".zlib"), target)
        looping = [candidate.name for candidate in candidates if _is_symlink_loop(candidate)]
        if looping:  # neither a file nor absent: it never resolves, and is never read
            problems.append((f"{where}.value", f"placeholder file {looping[0]} is a symlink loop"))
            continue
        resolved = resolve_path(target)
        if resolved in (path.resolve(), path.resolve().with_name(path.name.removesuffix(".zlib"))):
            problems.append((f"{where}.value", f"placeholder {node.value!r} names the master library itself"))
        elif resolved.parent != folder:
            problems.append((f"{where}.value", f"placeholder {node.value!r} leads out of the library folder"))
        elif not any(candidate.is_file() for candidate in candidates):
            problems.append((f"{where}.value", f"placeholder file {target.name} does not exist"))
    return problems


def shadowed_catalogs(master: MasterLibrary, master_path: str | Path) -> list[tuple[str, str]]:
    """(YAML path, message) for each file of the set at ``master_path`` that has both catalog
    spellings: the runtime reads ``X.dat.zlib`` and never ``X.dat``, so one of the two is left over
    from another build (what ``validate`` warns about; tensilekit's own builds remove it)."""
    from tensilekit.io.zlib_catalog import logical_name

    path = Path(master_path)
    logical = logical_name(path)
    found: list[tuple[str, str]] = []
    if logical.suffix == ".dat":
        for other in catalog_siblings(path):
            read = other if other.name.endswith(".zlib") else path
            unread = path if read == other else other
            found.append(("", f"{unread.name} beside {read.name}: the runtime reads {read.name} only (a stale file?)"))
        for where, node in master.iter_nodes():
            if isinstance(node, PlaceholderNode):
                bare = path.with_name(node.value + ".dat")
                if bare.is_file() and bare.with_name(bare.name + ".zlib").is_file():
                    found.append(
                        (
                            f"{where}.value",
                            f"{bare.name} beside {bare.name}.zlib: the runtime reads the .zlib only (a stale file?)",
                        )
                    )
    return found


def load_placeholder(master_path: str | Path, prefix: str, *, lazy: bool = False) -> MasterLibrary:
    """Load the lazily referenced library ``prefix`` beside ``master_path`` (same extension).

    Confined to the master's folder: the name is a plain file prefix (the model refuses ``/`` and
    ``..``), the file must not be the master itself or lead out of the folder through a symlink,
    and it must hold no Placeholder of its own (TensileCreateLibrary never writes one, and a chain
    of them could loop). With ``lazy``, an indexed shard's solutions are decoded only when
    selection reaches them (:func:`open_master`, ``LazyMaster.lazy_master``).
    """
    from tensilekit.io.zlib_catalog import logical_name, probe_order, resolve_catalog

    master = Path(master_path)
    # the runtime derives the extension from the logical name (X.dat for X.dat.zlib) and probes
    # <prefix>.dat.zlib before <prefix>.dat for every placeholder (MessagePack.cpp fileToMsgObject)
    logical = logical_name(master)
    suffix = "".join(logical.suffixes[-2:]) if logical.suffix == ".gz" else logical.suffix
    where = Location(file=str(master_path), path="Placeholder.value")
    try:
        placeholder_name(prefix)  # the model's rule, again for API callers
    except ValueError as error:
        raise InvalidValue(str(error), where) from None
    target = resolve_catalog(master.with_name(prefix + suffix))
    folder = master.parent.resolve()
    for candidate in probe_order(target):  # a loop is neither a file nor absent: say so
        try:
            resolve_path(candidate)
        except UnsupportedFormat as error:
            raise UnsupportedFormat(
                f"placeholder {prefix!r} names {candidate.name}, which {error.message}", Location(file=str(candidate))
            ) from None
    resolved = resolve_path(target)
    if resolved.parent != folder:
        raise InvalidValue(f"placeholder {prefix!r} leads out of the library folder (to {resolved})", where)
    if master.exists() and resolved == master.resolve():
        raise InvalidValue(f"placeholder {prefix!r} names the master library itself", where)
    from tensilekit.io.zlib_catalog import read_catalog_bytes

    data, target = read_catalog_bytes(target)  # a damaged .zlib falls back to the bare file
    if lazy:
        library = opens_master(data, str(target)).lazy_master()
    else:
        decoded, _, text = decode(data, str(target), models=True)
        library = master_from_data(decoded, source=str(target), text=text)
    for path, node in library.iter_nodes():
        if isinstance(node, PlaceholderNode):
            raise InvalidValue(
                f"a lazily loaded library holds a Placeholder ({node.value!r}); placeholders do not nest",
                Location(file=str(target), path=f"{path}.value"),
            )
    return library


__all__ = [
    "decode",
    "dump_master",
    "catalog_siblings",
    "dump_master_set",
    "library_file_owner",
    "dumps_master",
    "format_for_path",
    "load_master",
    "load_placeholder",
    "placeholder_problems",
    "loads_master",
    "open_master",
    "opens_master",
    "master_from_data",
    "master_to_data",
    "set_suffix",
    "shadowed_catalogs",
    "WRITE_FORMATS",
    "text_again",
]

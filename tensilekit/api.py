"""Format- and kind-detecting entry points over the logic and master readers/writers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensilekit._arguments import require, require_callable, require_path, require_paths
from tensilekit.errors import (
    InputNotFound,
    InvalidValue,
    LibraryChanged,
    LibraryFormatError,
    Location,
    MergeError,
    TensilekitError,
    UnsupportedFormat,
    error_context,
)
from tensilekit.io.detect import Kind, decompress, detect_kind
from tensilekit.io.files import decode_text, read_bytes
from tensilekit.io.master_io import decode, load_placeholder, master_from_data, text_again
from tensilekit.io.yaml_codec import detect_style, parse_yaml
from tensilekit.model.library import HardwareNode, MasterLibrary, PlaceholderNode, join_masters
from tensilekit.model.solution import MasterSolution

if TYPE_CHECKING:
    from tensilekit.model.derive_tensilelite import CustomKernelConfig
    from tensilekit.model.logic import LogicFile
    from tensilekit.selection.runtime import Runtime


def _custom_kernel_reader(directory: str | Path) -> CustomKernelConfig:
    from tensilekit.io.custom_kernels import custom_kernel_reader  # lazy: only builds read custom kernels

    return custom_kernel_reader(directory)


# How every AMD writer opens a library-logic file: its version item (Tensile's and tensilelite's
# LibraryIO: ``- {MinimumRequiredVersion: …}``, older block form ``- MinimumRequiredVersion: …``
# then the next item), after comment or blank lines. Only such a first item is taken, so a text
# that matches is a list whose first item is that one-key mapping: a logic file to detect_kind.
_LOGIC_OPENING = r"(?:[ \t]*(?:#[^\n]*)?\r?\n)*- (?:\{MinimumRequiredVersion: [^,{}\[\]#\n]*\}|MinimumRequiredVersion: [^,{}\[\]#\n]*\n- )"
_LOGIC_OPENING_TEXT = re.compile(_LOGIC_OPENING)
_LOGIC_OPENING_BYTES = re.compile(_LOGIC_OPENING.encode())


def loads(data: bytes | str, source: str | None = None) -> LogicFile | MasterLibrary:
    """Decode a logic file or a master library from text or bytes, detecting kind and format.

    Raises TypeError when ``data`` is neither bytes nor str."""
    require(data, (bytes, str), "data", "loads")
    require(source, str, "source", "loads", optional=True)
    with error_context(source or "<input>"):
        # a text that opens as a logic file takes the logic reader's own path (its solutions
        # decoded once per distinct line): the same model as the path below, at load_logic's speed
        logic_text: str | None = None
        if isinstance(data, str):
            raw = None
            if _LOGIC_OPENING_TEXT.match(data):
                logic_text = data
        else:
            raw = decompress(data, source)[0]
            if _LOGIC_OPENING_BYTES.match(raw):
                logic_text = decode_text(raw, source)
        if logic_text is not None:
            from tensilekit.io.logic_io import loads_logic  # lazy, as below

            return loads_logic(logic_text, source=source)
        decoded, _, text = decode(data if raw is None else raw, source, models=True)
        del raw
        kind = detect_kind(decoded, text)
    if kind is Kind.MASTER:
        if isinstance(data, bytes) and text is not None:
            del text  # the model is built without the text beside it (an error decodes it again)
            return master_from_data(decoded, source=source, text=text_again(data, source))
        return master_from_data(decoded, source=source, text=text, binary=data if isinstance(data, bytes) else None)
    from tensilekit.io.logic_io import logic_from_data  # lazy: `select` on a master reads no logic file

    logic = logic_from_data(decoded, source=source, text=text)
    if text is not None:
        logic._source_style = detect_style(text, decoded)
        logic._source_text = text
    return logic


def load(path: str | Path) -> LogicFile | MasterLibrary:
    """Read any Tensile library file: logic YAML (also ``.yaml.zst``, canonical dict form), master
    YAML/msgpack (``.dat``, ``.dat.zlib``, indexed), gzip wrapped. A ``.dat`` name that does not
    exist is read as the runtime would: ``<name>.zlib`` first.

    Raises TypeError/ValueError for a ``path`` that is no path, InputNotFound when it does not exist."""
    path = require_path(path, "path", "load")
    if not Path(path).exists():
        from tensilekit.io.zlib_catalog import read_catalog_bytes

        data, found = read_catalog_bytes(path)
        return loads(data, str(found))
    return loads(read_bytes(path), str(path))


def logic_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Logic files named directly and ``*.yaml`` files inside directories (recursive, sorted)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.name.lower().endswith((".yaml", ".yml", ".yaml.zst")) and p.is_file()  # .zst: compressed logic
                )
            )
        elif path.exists():
            found.append(path)
        else:
            raise InputNotFound("no such file or directory", Location(file=str(path)))
    if not found:
        raise InputNotFound("no logic files found", Location(file=", ".join(str(p) for p in paths)))
    return found


def logic_inputs(
    paths: Iterable[str | Path], *, dialect: str | None = None, stage: Callable[[str], None] | None = None
) -> tuple[list[tuple[str, Any]], str]:
    """Logic files or directories -> ``(path, parsed YAML in the build's list form)`` pairs in
    :func:`logic_paths` order, and their one dialect (``tensile`` or ``tensilelite``).

    Raises:
        LibraryFormatError: a file is not a logic file (location names it).
        MergeError: the files mix both dialects.
    """
    inputs: list[tuple[str, Any]] = []
    dialects = set()
    files = logic_paths(paths)
    for number, path in enumerate(files, 1):
        if stage is not None:  # seconds per big file: the CLI names each on a terminal
            stage(
                f"{number}/{len(files)} reading {Path(path).name}" if len(files) > 1 else f"reading {Path(path).name}"
            )
        with error_context(path):
            data = parse_yaml(decode_text(read_bytes(path), str(path)), str(path))
            if isinstance(data, dict):  # canonical dict logic: keyed and factored solutions completed
                from tensilekit.io.logic_canonical import expanded_solutions

                data = expanded_solutions(data, str(path))
            if detect_kind(data) is not Kind.LOGIC:
                raise UnsupportedFormat(
                    "a master solution library, not a library-logic file: logic files (the YAML files "
                    "TensileCreateLibrary reads) are expected here",
                    Location(file=str(path)),
                )
            from tensilekit.io.logic_io import detect_dialect

            file_dialect = dialect or detect_dialect(data).value
            dialects.add(file_dialect)
            if isinstance(data, dict) and file_dialect == "tensilelite":
                from tensilekit.io.logic_canonical import tensilelite_list_form

                data = tensilelite_list_form(data)  # tensilelite's build reads the list form
        inputs.append((str(path), data))
    if len(dialects) > 1:
        raise MergeError("cannot build one library from both Tensile and tensilelite logic files")
    return inputs, dialects.pop()


def build_master_files(
    paths: Iterable[str | Path],
    *,
    lazy: bool = False,
    separate_architectures: bool = True,
    dialect: str | None = None,
    custom_kernels: str | Path | CustomKernelConfig | None = None,
    stage: Callable[[str], None] | None = None,
    hipblaslt_version: str | None = None,
    experimental: bool = False,
    left_out: list[str] | None = None,
) -> dict[str, MasterLibrary]:
    """Logic files or directories -> every master file TensileCreateLibrary would write, by base name.

    The dialect (``tensile`` for rocBLAS, ``tensilelite`` for hipBLASLt) is detected from the
    files unless ``dialect`` names it. ``custom_kernels`` is hipBLASLt's
    ``tensilelite/Tensile/CustomKernels`` directory, needed by logic files with custom kernels
    (or a ``name -> custom.config`` lookup). ``stage`` is told each phase as it starts
    (``reading X.yaml (3/8)``, ``building``), for a progress display. ``hipblaslt_version``
    (tensilelite only): build as hipBLASLt ``"7d9fb683"``'s or ``"0.12.1"``'s TensileCreateLibrary
    (default: 0.12.1 when a file's problem type names its fields, such as ``SwizzleTensorA``,
    else 7d9fb683). ``experimental``: TensileCreateLibrary's ``--experimental`` (hipBLASLt 0.12.1),
    without which a logic file in a folder named ``experimental`` is not read; ``left_out``, when
    given, receives those files' paths.

    Raises TypeError/ValueError for arguments of the wrong type (``paths`` must be an iterable of
    paths, not one path), InputNotFound for a path that does not exist (or when every file is left
    out as experimental).
    """
    paths = require_paths(paths, "paths", "build_master_files")
    require(experimental, bool, "experimental", "build_master_files")
    require(dialect, str, "dialect", "build_master_files", optional=True)
    require(hipblaslt_version, str, "hipblaslt_version", "build_master_files", optional=True)
    require_callable(stage, "stage", "build_master_files", optional=True)
    if custom_kernels is not None and not isinstance(custom_kernels, (str, Path)) and not callable(custom_kernels):
        raise TypeError(
            f"build_master_files(): custom_kernels must be a folder or a lookup, not {type(custom_kernels).__name__}"
        )
    inputs, file_dialect = logic_inputs(paths, dialect=dialect, stage=stage)
    from tensilekit.libbuild import build_master_libraries  # lazy: `select` on a master never builds

    if experimental and file_dialect != "tensilelite":
        raise InvalidValue(
            f"--experimental (experimental=True) applies to tensilelite logic (hipBLASLt 0.12.1's "
            f"TensileCreateLibrary), not {file_dialect}"
        )
    if file_dialect == "tensilelite":
        from tensilekit.libbuild.tensilelite import experimental_logic_left_out

        inputs, dropped, version = experimental_logic_left_out(
            inputs, hipblaslt_version=hipblaslt_version, experimental=experimental
        )
        hipblaslt_version = version.name  # as the given files show it, also when some are left out
        if left_out is not None:
            left_out += dropped

    if stage is not None:
        stage("building")

    try:
        raw = build_master_libraries(
            inputs,
            dialect=file_dialect,
            lazy=lazy,
            separate_architectures=separate_architectures,
            custom_kernel_config=(
                _custom_kernel_reader(custom_kernels) if isinstance(custom_kernels, (str, Path)) else custom_kernels
            ),
            hipblaslt_version=hipblaslt_version,
        )
    except LibraryFormatError as error:
        if len(inputs) == 1:  # raised after the per-file steps (kernel naming): still one file
            error.with_file(inputs[0][0])
        _add_lines(error)
        raise
    return {name: master_from_data(tree, source=name) for name, tree in raw.items()}


def _add_lines(error: LibraryFormatError) -> None:
    """Line and column for an error the builder raised with a YAML path only (the file is read
    again: only on the error path)."""
    from tensilekit.io.files import read_text
    from tensilekit.io.locations import add_line

    file = error.location.file if error.location is not None else None
    if file is None or not Path(file).is_file():
        return
    try:
        text = read_text(file)
    except TensilekitError:
        return
    for problem in (error, *error.related):
        if problem.location is not None and problem.location.file == file:
            add_line(problem, text)


def load_for_selection(
    path: str | Path, *, subtree: str | None = None, asic_revision: int | None = None
) -> tuple[MasterLibrary, Callable[[str], MasterLibrary] | None]:
    """The library to select from, and the loader of its lazy placeholders.

    ``path`` may be a master library (YAML, msgpack ``.dat``, gzip), a library-logic file, a
    directory of logic files, or an installed library folder; logic is built into a master on
    the fly (tensilekit.libbuild, as TensileCreateLibrary would, several architectures joined under
    one ``Hardware`` node). ``subtree``/``asic_revision`` choose an installed folder's silicon
    revision tree (:meth:`tensilekit.io.installed_library.InstalledLibrary.choose`).
    """
    from tensilekit.io.atomic import FolderGeneration

    path = Path(path)
    # a lazy master and its shards are one set: read through one generation of their folder
    # (a rebuild swaps the folder; a mix is refused with LibraryChanged, never answered from)
    generation = FolderGeneration([path.parent, *([path] if path.is_dir() else [])])
    if not path.exists():
        from tensilekit.io.zlib_catalog import resolve_catalog

        path = resolve_catalog(path)  # a logical X.dat served by X.dat.zlib, as the runtime probes
    if not path.exists():
        generation.check()  # gone with a rebuild in another format, not missing
        if path.is_symlink():  # exists() follows links: a loop (or a dangling link) is named as one
            from tensilekit.io.files import resolve_path

            resolve_path(path)
        raise InputNotFound("no such file or directory", Location(file=str(path)))
    # a transient master: hipBLASLt custom kernels keep their stored values (no CustomKernels dir)
    if path.is_dir():
        from tensilekit.io.installed_library import InstalledLibrary, is_installed_library
        from tensilekit.model.derive_tensilelite import keep_stored_custom_kernels

        if is_installed_library(path):  # an installed hipBLASLt library: masters, shards read on demand
            return InstalledLibrary(path).for_selection(label=subtree, asic_revision=asic_revision)
        generation.check()  # no master seen: a folder listed while a rebuild removed it is not logic
        _no_subtree(path, subtree, asic_revision)
        return _joined(build_master_files([path], custom_kernels=keep_stored_custom_kernels)), None
    _no_subtree(path, subtree, asic_revision)
    try:
        with error_context(path):
            # a plain msgpack master (.dat, .gz, .zlib): a query decodes only what it reaches
            from tensilekit.io.partial_msgpack import open_partial

            partial = open_partial(path)
            if partial is None:  # a YAML master: cut by indentation, each part decoded when reached
                from tensilekit.io.partial_yaml import opens_partial_yaml

                whole = read_bytes(path)
                partial = opens_partial_yaml(whole, str(path))
            if partial is not None:
                data, text = None, None
            else:
                data, _, text = decode(whole, str(path), models=True)
                kind = detect_kind(data, text)
    except TensilekitError:
        generation.check()
        raise
    if partial is not None or kind is Kind.MASTER:
        library = partial if partial is not None else master_from_data(data, source=str(path), text=text)
        if partial is None:
            refuse_unloadable_master(library, path)
        master_path = path

        def load_shard(prefix: str) -> MasterLibrary:
            try:
                shard = load_placeholder(master_path, prefix)
            except TensilekitError:
                generation.check()  # a shard gone or damaged because the folder was swapped
                raise
            generation.check()
            return shard

        return library, load_shard
    from tensilekit.model.derive_tensilelite import keep_stored_custom_kernels

    return _joined(build_master_files([path], custom_kernels=keep_stored_custom_kernels)), None


def refuse_unloadable_master(master: MasterLibrary, path: str | Path) -> None:
    """A master ``validate`` rejects is not answered from: its first error (``check_master``, the
    rules ``validate`` applies) is raised, located, the others in ``related``. The runtime refuses
    such a file at load, e.g. a table entry naming a solution the file lacks: "[MatchingLibrary]
    Invalid solution index" (Serialization/MatchingLibrary.hpp ``MappingTraits<MatchingTableEntry>``,
    rocm-libraries d75d2f6c; Tensile alike). A lazily decoded msgpack master is checked entry by
    entry as the walk reaches it instead (decoding it whole would cost what laziness saves).

    Raises:
        LibraryFormatError: the first error, with file and (YAML) line.
    """
    from tensilekit.model.checks import check_master

    errors = [finding for finding in check_master(master) if finding.severity == "error"]
    if not errors:
        return
    problems = [
        LibraryFormatError(f"{finding.message} [{finding.code}]", Location(file=str(path), path=finding.path or None))
        for finding in errors
    ]
    first = problems[0]
    first.related = problems[1:]
    if first.related:
        first.message += f" [and {len(first.related)} more problem(s)]"
    _add_lines(first)
    raise first


def _no_subtree(path: Path, subtree: str | None, asic_revision: int | None) -> None:
    if subtree is not None or asic_revision is not None:
        from tensilekit.io.installed_library import UnknownSubtree

        raise UnknownSubtree.not_installed(path)


def runtime_sample(library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None) -> list[MasterSolution]:
    """Solutions that tell which runtime a library is for: its own, or for a lazy master (no
    solutions of its own) those of the first shard its first Placeholder names (one shard read)."""
    if library.solutions or loader is None:
        return list(library.solutions[:1])
    for _, node in library.iter_nodes():
        if isinstance(node, PlaceholderNode):
            try:
                shard = loader(node.value)
                lazy_indices = getattr(shard, "_lazy_indices", None)  # an indexed shard read lazily
                if lazy_indices:
                    return [shard._lazy_solution(lazy_indices[0])]  # type: ignore[attr-defined]
                return list(shard.solutions[:1])
            except LibraryChanged:
                raise
            except TensilekitError:
                continue  # a damaged shard is reported by the query that reaches it; try the next
    return []


def library_runtime(library: MasterLibrary, loader: Callable[[str], MasterLibrary] | None = None) -> Runtime:
    """The runtime a library is for (``selection.runtime.detect_runtime``); a lazy master whose
    rows do not tell is asked through its first shard (one shard read)."""
    from tensilekit.selection.runtime import TENSILE, detect_runtime

    runtime = detect_runtime(library)
    if runtime is TENSILE and not library.solutions and loader is not None:
        runtime = detect_runtime(runtime_sample(library, loader))
    return runtime


def answering_runtime(
    library: MasterLibrary,
    loader: Callable[[str], MasterLibrary] | None = None,
    *,
    runtime: str | Runtime | None = None,
    hipblaslt_version: str | None = None,
    solution_selection_method: int | None = None,
) -> Runtime:
    """The runtime that answers for ``library``: ``runtime`` and ``hipblaslt_version`` as
    :func:`~tensilekit.selection.runtime.resolve_runtime` takes them (unnamed: what the library
    shows, :func:`library_runtime`), started with the selection method of
    :func:`solution_selection_method`. Every command that answers (``select``, ``coverage``,
    ``remap``, ``diff``, ``plot``) chooses its runtime here."""
    from tensilekit.selection.runtime import resolve_runtime

    method = solution_selection_method_of(solution_selection_method)
    return resolve_runtime(runtime, hipblaslt_version, lambda: library_runtime(library, loader), method)


def solution_selection_method_of(value: int | None = None) -> int:
    """The hipBLASLt solution selection method a call answers under: ``value``, or when None the
    ``TENSILE_SOLUTION_SELECTION_METHOD`` environment variable, read as hipBLASLt reads it (unset
    or empty: 0). The one place the environment is read for it.

    Raises SelectionError for a value (or variable) that is no integer ≥ 0."""
    import os

    from tensilekit.selection.hipblaslt_versions import SOLUTION_SELECTION_METHOD_VARIABLE, selection_method_from

    return selection_method_from(os.environ.get(SOLUTION_SELECTION_METHOD_VARIABLE) if value is None else value)


def _joined(files: dict[str, MasterLibrary]) -> MasterLibrary:
    if len(files) == 1:
        return next(iter(files.values()))
    if any(name.startswith("TensileLibrary_lazy") for name in files):
        raise UnsupportedFormat("lazy libraries cannot be joined; select on the master file instead")
    return join_masters(files.values())


def library_processors(library: MasterLibrary) -> list[str]:
    """The gfx processors named by the library's top-level ``Hardware`` rows, in row order."""
    found: list[str] = []

    def visit(predicate: Any) -> None:
        if isinstance(predicate, dict):
            if predicate.get("type") == "Processor" and isinstance(predicate.get("value"), str):
                if predicate["value"] not in found:
                    found.append(predicate["value"])
            value = predicate.get("value")
            for child in value if isinstance(value, list) else [value]:
                visit(child)

    root = library.library
    if isinstance(root, HardwareNode):
        for row in root.rows:
            visit(row.predicate.model_dump())
    return found


def build_master(paths: Iterable[str | Path] | str | Path) -> MasterLibrary:
    """Build the (single-architecture, non-lazy) master library of logic files or directories.

    The library part of AMD's TensileCreateLibrary: no kernels are compiled, no ROCm is needed.
    Raises TypeError/ValueError for ``paths`` that are no paths, InputNotFound for a missing one.
    """
    items = [require_path(paths, "paths", "build_master")] if isinstance(paths, (str, Path)) else paths
    items = require_paths(items, "paths", "build_master")
    files = build_master_files(items)
    if len(files) != 1:
        raise MergeError(f"logic files span several architectures ({', '.join(files)}); use build_master_files")
    return next(iter(files.values()))


__all__ = [
    "answering_runtime",
    "build_master",
    "build_master_files",
    "library_processors",
    "load",
    "load_for_selection",
    "loads",
    "logic_paths",
    "library_runtime",
    "runtime_sample",
    "solution_selection_method_of",
]

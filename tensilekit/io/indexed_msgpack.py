"""Indexed msgpack masters (``format_version: 2``): solutions as one blob, decoded when selected.

hipBLASLt's ``--library-format msgpack-indexed`` (rocm-libraries#11295). The root map is
``{format_version: 2, [version], solutions_index, solutions_blob, library}``, in that order:

* ``solutions_index`` is flat: ``[index, offset, length, index, offset, length, …]``, sorted by
  solution index; each slice ``solutions_blob[offset:offset + length]`` is one solution packed on
  its own (the same map a plain ``.dat`` holds in ``solutions``); the slices tile the blob;
* ``solutions_blob`` is msgpack ``bin``; ``library`` is the tree, unchanged.

Followed from ROCm/rocm-libraries ``projects/hipblaslt/tensilelite``:

* writer contract: the unit tests of ``Tensile.LibraryIO.writeMsgPackIndexed`` (fixed key order,
  table sorted by index, slices tiling the blob, no invented ``version``, refuses a mapping
  file) and ``tests/IndexedLibraryLoad_test.cpp`` @ 211a015921f3 ``toIndexed``;
* reader rules: ``tests/IndexedLibraryLoad_test.cpp`` @ 211a015921f3 — an unknown
  ``format_version``, a table that is not triples, negative fields, an index wider than ``int``,
  a slice past the blob, a duplicate index, a missing blob, a tree naming an index the table does
  not carry, and a slice decoding to another index are all rejected at load;
  ``include/Tensile/MasterSolutionLibrary.hpp`` @ 1c2f384358bd (``SolutionBlobCache``: a solution
  is parsed only when a query reaches it).

AMD writes this layout as ``.dat.zlib`` (zlib level 9, :mod:`tensilekit.io.zlib_catalog`);
tensilekit writes whatever the target name says and reads either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator
from typing import Any

import msgpack
from pydantic import ValidationError

from tensilekit.errors import InvalidValue, LibraryFormatError, Location, format_path
from tensilekit.io.limits import check_depth, current_limits
from tensilekit.io.msgpack_codec import dump_msgpack, parse_msgpack, solution_spans
from tensilekit.io.yaml_codec import parse_path
from tensilekit.model.library import (
    FreeSizeNode,
    GranularitySelectionNode,
    MasterLibrary,
    MatchingNode,
    PredictionNode,
    SingleNode,
)
from tensilekit.model.solution import MasterSolution

FORMAT_VERSION = 2
_INT_MAX = 2**31 - 1  # the runtime keeps solution indices in an int


def is_indexed(data: Any) -> bool:
    """True for a decoded root that declares a ``format_version`` (the indexed layout)."""
    return isinstance(data, dict) and "format_version" in data


def _slices(data: dict[str, Any], source: str | None) -> tuple[bytes, dict[int, tuple[int, int]]]:
    """The blob and ``index -> (offset, length)``, checked as the runtime checks them at load."""

    def fail(message: str, path: str) -> LibraryFormatError:
        return LibraryFormatError(message, Location(file=source, path=path))

    version = data.get("format_version")
    if type(version) is not int or version != FORMAT_VERSION:  # 2.0 and true are not 2 to the runtime
        raise fail(f"unknown indexed-library format_version {version!r} (this reader knows 2)", "format_version")
    if "solutions_blob" not in data:
        raise fail("an indexed library without solutions_blob", "solutions_blob")
    blob = data["solutions_blob"]
    if not isinstance(blob, (bytes, bytearray)):
        raise fail(f"solutions_blob must be msgpack bin, not {type(blob).__name__}", "solutions_blob")
    table = data.get("solutions_index")
    if not isinstance(table, list):
        raise fail("an indexed library without a solutions_index list", "solutions_index")
    if len(table) % 3:
        raise fail(
            f"solutions_index holds {len(table)} numbers, not [index, offset, length] triples", "solutions_index"
        )
    slices: dict[int, tuple[int, int]] = {}
    for position in range(0, len(table), 3):
        index, offset, length = table[position : position + 3]
        where = f"solutions_index[{position}]"
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (index, offset, length)):
            raise fail("solutions_index entries must be integers", where)
        if min(index, offset, length) < 0:
            raise fail(f"negative field in [{index}, {offset}, {length}]", where)
        if index > _INT_MAX:
            raise fail(f"solution index {index} does not fit the runtime's int", where)
        if offset + length > len(blob):  # Python ints do not wrap
            raise fail(f"slice [{offset}, +{length}] runs past the {len(blob)}-byte solutions_blob", where)
        if index in slices:
            raise fail(f"solution index {index} appears twice in solutions_index", where)
        slices[index] = (offset, length)
    return bytes(blob), slices


def _tree_indices(library: MasterLibrary) -> Iterator[tuple[str, int]]:
    """Every solution index the tree names, with its path (−1, "no solution", left out)."""
    for path, node in library.iter_nodes():
        if isinstance(node, SingleNode):
            yield f"{path}.index", node.index
        elif isinstance(node, MatchingNode):
            for number, entry in enumerate(node.table):
                if entry.index is not None:
                    yield f"{path}.table[{number}].index", entry.index
        elif isinstance(node, FreeSizeNode):
            for number, item in enumerate(node.table):
                yield f"{path}.table[{number}].index", item.index
        elif isinstance(node, GranularitySelectionNode):
            for number, index in enumerate(node.indices):
                yield f"{path}.indices[{number}]", index
        elif isinstance(node, PredictionNode):
            for number, index in enumerate(node.table):
                yield f"{path}.table[{number}]", index


def check_tree_indices(library: MasterLibrary, available: Collection[int], source: str | None) -> None:
    """An indexed file whose tree names an index its table does not carry fails at load (the
    runtime rejects it there rather than answering nothing later)."""
    for path, index in _tree_indices(library):
        if index >= 0 and index not in available:
            raise LibraryFormatError(
                f"the tree names solution {index}, which solutions_index does not carry",
                Location(file=source, path=path),
            )


def scan_plain_master(raw: bytes) -> tuple[dict[str, Any], dict[int, tuple[int, int]], dict[int, int]] | None:
    """One pass over a plain msgpack master: the root without ``solutions`` (decoded), each
    solution's ``index -> (offset, length)`` and ``index -> place``; the solutions themselves are
    skipped, not decoded (a tenth of the time of ``unpackb``). None when the bytes are not a map
    with a ``solutions`` array of maps, each with one integer ``index`` seen once, and nothing
    after the root: the caller decodes such a file whole, which reports the problem."""
    longest = current_limits().max_container_length
    unpacker = msgpack.Unpacker(
        None,
        raw=False,
        strict_map_key=False,
        use_list=True,
        max_buffer_size=max(len(raw), 1),
        max_array_len=longest,
        max_map_len=longest,
    )
    unpacker.feed(raw)
    shell: dict[str, Any] = {}
    slices: dict[int, tuple[int, int]] = {}
    positions: dict[int, int] = {}
    seen_solutions = False
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if key != "solutions":
                if not isinstance(key, str) or key in shell or key in _INDEXED_KEYS:
                    return None  # an indexed root (format_version first) is read by its table
                shell[key] = unpacker.unpack()
                continue
            if seen_solutions:
                return None
            seen_solutions = True
            for position, (index, start, length) in enumerate(solution_spans(unpacker)):
                if type(index) is not int or index in slices:
                    return None
                slices[index] = (start, length)
                positions[index] = position
        if unpacker.tell() != len(raw):
            return None
    except (ValueError, msgpack.UnpackException, TypeError, UnicodeDecodeError, RecursionError):
        return None  # msgpack's OutOfData, ExtraData, FormatError, StackError and limits
    if not seen_solutions or "library" not in shell:
        return None
    return shell, slices, positions


class LazyMaster:
    """A master opened lazily: the tree is validated, each solution decoded on request.

    Built from an indexed root (``LazyMaster(data)``), from a plain msgpack ``.dat``
    (:meth:`from_plain`, whose solutions are located by one header scan instead of a table), or
    from a loaded library (:meth:`from_master`, for YAML: nothing left to decode).
    ``shell`` is the :class:`MasterLibrary` of the tree with no solutions; :meth:`solution`
    decodes (and keeps) one solution; :meth:`materialize` gives the whole library.
    """

    def __init__(self, data: dict[str, Any], source: str | None = None) -> None:
        blob, slices = _slices(data, source)
        shell = {key: value for key, value in data.items() if key not in _IGNORED_KEYS}
        self._open(shell, blob, slices, source, positions=None)

    @classmethod
    def from_plain(cls, raw: bytes, source: str | None = None) -> LazyMaster | None:
        """A plain (non-indexed) msgpack master opened lazily, or None when its layout is not
        the one a header scan can trust (the caller then decodes it whole, which names the
        problem): the scan skips each solution, keeping its byte range and ``index``."""
        scanned = scan_plain_master(raw)
        if scanned is None:
            return None
        shell, slices, positions = scanned
        check_depth(shell, source)  # the tree; each solution is checked when decoded (parse_msgpack)
        library = cls.__new__(cls)
        library._open(shell, raw, slices, source, positions=positions)
        return library

    @classmethod
    def from_master(cls, master: MasterLibrary, source: str | None = None) -> LazyMaster:
        """A library already in memory (every solution decoded), behind the same interface."""
        library = cls.__new__(cls)
        library.source, library.blob, library.slices, library._positions = source, b"", {}, None
        library.shell = master.model_copy(update={"solutions": []})
        library._decoded = master.solutions_by_index()  # the runtime keeps the last of an index
        library._order = tuple(library._decoded)
        return library

    def _open(
        self,
        shell: dict[str, Any],
        blob: bytes,
        slices: dict[int, tuple[int, int]],
        source: str | None,
        positions: dict[int, int] | None,
    ) -> None:
        from tensilekit.io.master_io import master_from_data

        self.source = source
        self.blob, self.slices = blob, slices
        self._positions = positions  # plain .dat: solution index -> place in 'solutions'
        self.shell = master_from_data({**shell, "solutions": []}, source=source)
        check_tree_indices(self.shell, self.slices.keys(), source)
        self._decoded: dict[int, MasterSolution] = {}
        self._order: tuple[int, ...] = tuple(slices)  # solution indices, in file order

    def _path(self, index: int) -> list[object]:
        """Where solution ``index`` sits in the file, as an error path."""
        if self._positions is not None:
            return ["solutions", self._positions[index]]
        return [f"solutions_blob[index {index}]"]

    def __len__(self) -> int:
        return len(self._order)

    @property
    def indices(self) -> tuple[int, ...]:
        """Every solution index the file carries, in file order."""
        return self._order

    @property
    def decoded_count(self) -> int:
        """How many solutions have been decoded so far."""
        return len(self._decoded)

    def raw_solution(self, index: int) -> dict[str, Any]:
        """The plain map of solution ``index``, decoded from its slice."""
        if index not in self.slices and index in self._decoded:
            return self._decoded[index].model_dump(by_alias=True, exclude_unset=True)
        if index not in self.slices:
            where = Location(file=self.source, path=f"solutions_blob[index {index}]")
            raise LibraryFormatError(f"no solution {index} in solutions_index", where)
        offset, length = self.slices[index]
        try:
            raw = parse_msgpack(self.blob[offset : offset + length], self.source)
        except LibraryFormatError as error:
            raise self._relocated(error, index, offset) from None
        if not isinstance(raw, dict) or raw.get("index") != index:
            found = raw.get("index") if isinstance(raw, dict) else type(raw).__name__
            where = Location(file=self.source, path=format_path(self._path(index)), offset=offset)
            raise LibraryFormatError(f"the slice of solution {index} holds solution {found!r}", where)
        return raw

    def _relocated(self, error: LibraryFormatError, index: int, offset: int) -> LibraryFormatError:
        """``error`` (located inside one solution's slice) located in the whole file."""
        for problem in (error, *error.related):
            location = problem.location or Location(file=self.source)
            inner = parse_path(location.path) if location.path else []
            problem.location = dataclasses.replace(
                location,
                path=format_path(self._path(index) + inner),
                offset=None if location.offset is None else offset + location.offset,
            )
        return error

    def solution(self, index: int) -> MasterSolution:
        """Solution ``index`` as a model (decoded once)."""
        found = self._decoded.get(index)
        if found is None:
            raw = self.raw_solution(index)
            try:
                found = MasterSolution.model_validate(raw)
            except ValidationError as error:
                from tensilekit.io.locations import to_format_error
                from tensilekit.io.master_io import add_offsets

                problem = to_format_error(error, raw, source=self.source)
                offset, length = self.slices[index]
                add_offsets(problem, self.blob[offset : offset + length])
                raise self._relocated(problem, index, offset) from None
            self._decoded[index] = found
        return found

    def find(self, index: int) -> MasterSolution | None:
        """Solution ``index`` decoded, or None when the table does not carry it."""
        return self.solution(index) if index in self.slices or index in self._decoded else None

    def lazy_master(self) -> MasterLibrary:
        """The tree as a :class:`MasterLibrary` with no solutions of its own, carrying this table:
        selection (``_lazy_solution``) decodes a solution when a query reaches it, as the
        runtime's ``SolutionBlobCache`` does. Only for selection; anything else wants
        :meth:`materialize`."""
        shell = self.shell.model_copy()
        object.__setattr__(shell, "_lazy_solution", self.find)
        object.__setattr__(shell, "_lazy_indices", self._order)
        return shell

    def raw_solutions(self) -> list[dict[str, Any]]:
        """Every solution's plain map, in file order (an indexed table is sorted by index)."""
        return [self.raw_solution(index) for index in self._order]

    def materialize(self) -> MasterLibrary:
        """The whole library with every solution decoded (in file order)."""
        solutions = [self.solution(index) for index in self._order]
        return self.shell.model_copy(update={"solutions": solutions})


_INDEXED_KEYS = ("format_version", "solutions_index", "solutions_blob")
_IGNORED_KEYS = (*_INDEXED_KEYS, "solutions")
"""Keys of an indexed root that are not the plain tree: an indexed root's solutions are its blob's.
A plain ``solutions`` list beside the blob (issue 23 item 6) is ignored, as the runtime ignores
it: tensilelite's ``Serialization/SolutionLibrary.hpp`` ``MappingTraits<MasterSolutionLibrary>::
mapping`` (the indexed-format source, ``MasterSolutionLibrary.hpp`` @ 1c2f384358bd) reads
``solutions_index``/``solutions_blob`` through ``readIndexedSolutions`` when ``format_version`` is 2
and maps ``solutions`` only in the other branch, so the key is never read (only
``TENSILE_DB=0x1000``'s unused-key check would name it). ``validate`` warns
(:func:`plain_solutions_beside_blob`)."""


def plain_solutions_beside_blob(raw: bytes) -> int | None:
    """How many solutions a plain ``solutions`` list holds in an indexed root (msgpack bytes,
    uncompressed) that also has ``format_version``; None when there is no such list. Reads the
    root's keys and skips the values (nothing is built)."""
    unpacker = msgpack.Unpacker(None, raw=False, strict_map_key=False, max_buffer_size=max(len(raw), 1))
    unpacker.feed(raw)
    listed: int | None = None
    indexed = False
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if key == "solutions":
                try:
                    listed = unpacker.read_array_header()
                except ValueError:  # not an array: the length is what is reported
                    listed = -1
                    unpacker.skip()
                    continue
                for _ in range(listed):
                    unpacker.skip()
            else:
                indexed = indexed or key == "format_version"
                unpacker.skip()
    except (ValueError, msgpack.UnpackException, TypeError, UnicodeDecodeError, RecursionError):
        return None
    return listed if indexed else None


def indexed_to_data(data: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """The plain ``{solutions, library, version}`` tree of an indexed root (every slice decoded)."""
    blob, slices = _slices(data, source)
    solutions = []
    for index, (offset, length) in slices.items():
        raw = parse_msgpack(blob[offset : offset + length], source)
        if not isinstance(raw, dict) or raw.get("index") != index:
            found = raw.get("index") if isinstance(raw, dict) else type(raw).__name__
            raise LibraryFormatError(
                f"the slice of solution {index} holds solution {found!r}",
                Location(file=source, path=f"solutions_blob[index {index}]"),
            )
        solutions.append(raw)
    plain: dict[str, Any] = {"solutions": solutions}
    plain.update((key, value) for key, value in data.items() if key not in _IGNORED_KEYS)
    ordered: dict[str, Any] = {key: plain[key] for key in ("solutions", "library", "version") if key in plain}
    ordered.update((key, value) for key, value in plain.items() if key not in ordered)
    return ordered


def indexed_layout(data: dict[str, Any]) -> dict[str, Any]:
    """A plain master tree (writer key order already applied) in the indexed layout."""
    solutions = data.get("solutions", [])
    if not isinstance(solutions, list) or any(not isinstance(s, dict) or "index" not in s for s in solutions):
        # LibraryIO.writeMsgPackIndexed refuses a lazy mapping ({index: name}) and other non-masters
        raise InvalidValue("only a master library ({solutions, library}) can be written indexed")
    for position, solution in enumerate(solutions):
        index = solution["index"]
        # what _slices refuses on reading, refused before writing (named where the input holds it)
        if type(index) is not int or not 0 <= index <= _INT_MAX:
            raise InvalidValue(
                f"solution index {index!r} cannot be written indexed: the table holds indices 0..{_INT_MAX} "
                "(the runtime's int)",
                Location(path=f"solutions[{position}].index"),
            )
    table: list[int] = []
    blob = bytearray()
    seen: set[int] = set()
    for solution in sorted(solutions, key=lambda s: s["index"]):
        if solution["index"] in seen:
            raise InvalidValue(f"solution index {solution['index']} appears twice; an indexed table needs unique ones")
        seen.add(solution["index"])
        packed = dump_msgpack(solution)
        table.extend((solution["index"], len(blob), len(packed)))
        blob += packed
    root: dict[str, Any] = {"format_version": FORMAT_VERSION}
    if "version" in data:
        root["version"] = data["version"]
    root["solutions_index"] = table
    root["solutions_blob"] = bytes(blob)
    root["library"] = data["library"]
    root.update((k, v) for k, v in data.items() if k not in ("solutions", "library", "version"))
    return root


def dumps_indexed(master: MasterLibrary) -> bytes:
    """The indexed msgpack bytes of ``master`` (uncompressed; AMD zlib-wraps them as ``.dat.zlib``)."""
    from tensilekit.io.master_io import master_to_data, tensile_msgpack_order

    root = indexed_layout(tensile_msgpack_order(master_to_data(master)))
    # the reader's own load checks, so nothing is written that load_master would refuse
    _, slices = _slices(root, None)
    check_tree_indices(master, slices.keys(), None)
    return dump_msgpack(root)


IndexedLibrary = LazyMaster
"""The earlier name of :class:`LazyMaster` (it first served indexed files only)."""


def load_indexed(path: str) -> LazyMaster:
    """Open an indexed master (``.dat`` or ``.dat.zlib``) lazily."""
    from tensilekit.io.master_io import decode
    from tensilekit.io.zlib_catalog import read_catalog_bytes

    raw, found = read_catalog_bytes(path)
    data, _, _ = decode(raw, str(found))
    if not is_indexed(data):
        raise LibraryFormatError("not an indexed library (no format_version)", Location(file=str(found)))
    return LazyMaster(data, str(found))


__all__ = [
    "FORMAT_VERSION",
    "IndexedLibrary",
    "LazyMaster",
    "check_tree_indices",
    "dumps_indexed",
    "indexed_layout",
    "indexed_to_data",
    "is_indexed",
    "load_indexed",
    "plain_solutions_beside_blob",
    "scan_plain_master",
]

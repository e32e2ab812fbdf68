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

from collections.abc import Collection, Iterator
from typing import Any

from pydantic import ValidationError

from tensilekit.errors import InvalidValue, LibraryFormatError, Location
from tensilekit.io.msgpack_codec import dump_msgpack, parse_msgpack
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
    if version != FORMAT_VERSION or isinstance(version, bool):
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


class IndexedLibrary:
    """An indexed master opened lazily: the tree is validated, each solution decoded on request.

    ``shell`` is the :class:`MasterLibrary` of the tree with no solutions; :meth:`solution`
    decodes (and keeps) one solution; :meth:`materialize` gives the whole library.
    """

    def __init__(self, data: dict[str, Any], source: str | None = None) -> None:
        self.source = source
        self.blob, self.slices = _slices(data, source)
        shell = {key: value for key, value in data.items() if key not in _INDEXED_KEYS}
        shell["solutions"] = []
        from tensilekit.io.master_io import master_from_data

        self.shell = master_from_data(shell, source=source)
        check_tree_indices(self.shell, self.slices.keys(), source)
        self._decoded: dict[int, MasterSolution] = {}

    def __len__(self) -> int:
        return len(self.slices)

    @property
    def decoded_count(self) -> int:
        """How many solutions have been decoded so far."""
        return len(self._decoded)

    def raw_solution(self, index: int) -> dict[str, Any]:
        """The plain map of solution ``index``, decoded from its slice."""
        where = Location(file=self.source, path=f"solutions_blob[index {index}]")
        if index not in self.slices:
            raise LibraryFormatError(f"no solution {index} in solutions_index", where)
        offset, length = self.slices[index]
        raw = parse_msgpack(self.blob[offset : offset + length], self.source)
        if not isinstance(raw, dict) or raw.get("index") != index:
            found = raw.get("index") if isinstance(raw, dict) else type(raw).__name__
            raise LibraryFormatError(f"the slice of solution {index} holds solution {found!r}", where)
        return raw

    def solution(self, index: int) -> MasterSolution:
        """Solution ``index`` as a model (decoded once)."""
        found = self._decoded.get(index)
        if found is None:
            raw = self.raw_solution(index)
            try:
                found = MasterSolution.model_validate(raw)
            except ValidationError as error:
                from tensilekit.io.locations import to_format_error

                raise to_format_error(error, raw, source=self.source) from None
            self._decoded[index] = found
        return found

    def find(self, index: int) -> MasterSolution | None:
        """Solution ``index`` decoded, or None when the table does not carry it."""
        return self.solution(index) if index in self.slices else None

    def lazy_master(self) -> MasterLibrary:
        """The tree as a :class:`MasterLibrary` with no solutions of its own, carrying this table:
        selection (``_lazy_solution``) decodes a solution when a query reaches it, as the
        runtime's ``SolutionBlobCache`` does. Only for selection; anything else wants
        :meth:`materialize`."""
        shell = self.shell.model_copy()
        object.__setattr__(shell, "_lazy_solution", self.find)
        object.__setattr__(shell, "_lazy_indices", tuple(self.slices))
        return shell

    def raw_solutions(self) -> list[dict[str, Any]]:
        """Every solution's plain map, in table order (by index)."""
        return [self.raw_solution(index) for index in self.slices]

    def materialize(self) -> MasterLibrary:
        """The whole library with every solution decoded."""
        solutions = [self.solution(index) for index in self.slices]
        return self.shell.model_copy(update={"solutions": solutions})


_INDEXED_KEYS = ("format_version", "solutions_index", "solutions_blob")


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
    plain.update((key, value) for key, value in data.items() if key not in _INDEXED_KEYS)
    ordered: dict[str, Any] = {key: plain[key] for key in ("solutions", "library", "version") if key in plain}
    ordered.update((key, value) for key, value in plain.items() if key not in ordered)
    return ordered


def indexed_layout(data: dict[str, Any]) -> dict[str, Any]:
    """A plain master tree (writer key order already applied) in the indexed layout."""
    solutions = data.get("solutions", [])
    if not isinstance(solutions, list) or any(not isinstance(s, dict) or "index" not in s for s in solutions):
        # LibraryIO.writeMsgPackIndexed refuses a lazy mapping ({index: name}) and other non-masters
        raise InvalidValue("only a master library ({solutions, library}) can be written indexed")
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

    return dump_msgpack(indexed_layout(tensile_msgpack_order(master_to_data(master))))


def load_indexed(path: str) -> IndexedLibrary:
    """Open an indexed master (``.dat`` or ``.dat.zlib``) lazily."""
    from tensilekit.io.master_io import decode
    from tensilekit.io.zlib_catalog import read_catalog_bytes

    raw, found = read_catalog_bytes(path)
    data, _, _ = decode(raw, str(found))
    if not is_indexed(data):
        raise LibraryFormatError("not an indexed library (no format_version)", Location(file=str(found)))
    return IndexedLibrary(data, str(found))


__all__ = [
    "FORMAT_VERSION",
    "IndexedLibrary",
    "check_tree_indices",
    "dumps_indexed",
    "indexed_layout",
    "indexed_to_data",
    "is_indexed",
    "load_indexed",
]

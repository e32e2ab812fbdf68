"""Partial reading of plain msgpack masters (``.dat``, ``.dat.gz``, ``.dat.zlib``) for selection.

A query reaches one architecture's row, one operation of its ``ProblemMap`` and a few solutions;
decoding the whole file (rocBLAS_Full: 47 MB, 21 288 solutions, a 7 MB tree) costs seconds and
hundreds of MiB for nothing. :func:`open_partial` reads the file once as a stream:

* each solution is skipped, keeping its byte range and ``index`` (msgpack's C ``skip``);
* the tree is decoded down to each ``ProblemMap``, whose children are skipped and kept as byte
  ranges: :class:`LazyNodeMap` decodes and validates a child when it is first looked up;
* :class:`LazySolutions` (the library's ``solutions``) decodes a solution when it is first
  asked for by index (``find``), position or iteration (iterating decodes all, in file order).

So every consumer sees the same library as a whole load; only what it touches is decoded.
Compressed input is inflated as a stream through the :mod:`tensilekit.io.limits` guards and
never held whole: every :data:`CHECKPOINT` bytes of output a copy of the inflater is kept (about
45 KB each), and a byte range is read back by inflating from the checkpoint before it.

Anything the stream scan does not trust (not a map, no ``solutions`` list of maps with integer
``index``, an indexed root, a truncated or damaged stream, a second gzip member, a tree whose
shell does not validate) makes :func:`open_partial` return None: the caller decodes the file
whole, which names the problem and where. A damaged part found later (a child or solution that
does not decode or validate) is refused with its file, path and byte offset.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import stat
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast, overload

import msgpack
from pydantic import TypeAdapter, ValidationError

from tensilekit.errors import LibraryFormatError, Location, TensilekitError, format_path
from tensilekit.io.detect import Compression, detect_compression
from tensilekit.io.limits import check_file_size, check_inflated, current_limits
from tensilekit.io.msgpack_codec import solution_spans
from tensilekit.model.library import AnyNode, LibraryNode, MasterLibrary, ProblemMapNode
from tensilekit.model.solution import MasterSolution

CHECKPOINT = 1 << 20
"""Output bytes between two inflater copies: a range read inflates at most this much extra."""
_READ_SIZE = 1 << 18  # bytes the scan pulls from the stream at a time
_INPUT_SIZE = 1 << 16  # compressed bytes given to the inflater at a time
_CACHED_SEGMENTS = 4  # inflated segments kept for reads that follow each other
_DECODE_RUN = 512  # solutions decoded together when iterating


class SliceSource(Protocol):
    """A file whose parts (slices) are decoded on their own: msgpack byte ranges of a ``.dat``
    (:class:`ByteSource`), or YAML text ranges (:mod:`tensilekit.io.partial_yaml`)."""

    name: str

    def decode_slice(self, start: int, length: int, prefix: list[object], validate: Any) -> Any:
        """The slice at ``start`` decoded and passed to ``validate``; errors located at ``prefix``
        (the slice's path) in the whole file."""
        ...


class ByteSource(SliceSource, Protocol):
    """The decoded (decompressed) bytes of a file: streamed once, then read back by range."""

    def stream(self) -> _Stream: ...

    def read(self, offset: int, length: int) -> bytes: ...


class _Stream(Protocol):
    def read(self, size: int = -1) -> bytes: ...


class _Shared:
    """A source is a read-only view of one file: copies share it (a copied descriptor would be
    closed twice), and it does not travel to another process."""

    def __copy__(self) -> _Shared:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self

    def __getstate__(self) -> Any:
        raise TypeError("a partially read library cannot be pickled (load it whole with load_master)")


class _Unsupported(Exception):
    """The file is not one the partial reader trusts: decode it whole instead."""


# -- sources ------------------------------------------------------------------------------------


class _MsgpackSlices(_Shared):
    """A source whose slices are msgpack: decoded by :func:`_decode_slice`."""

    name: str

    def read(self, offset: int, length: int) -> bytes:
        raise NotImplementedError

    def decode_slice(self, start: int, length: int, prefix: list[object], validate: Any) -> Any:
        """Decode and validate the slice at ``start``; errors located in the whole file."""
        return _decode_slice(cast(ByteSource, self), start, length, prefix, validate)  # its subclasses stream


class PlainFile(_MsgpackSlices):
    """An uncompressed file, read back with ``pread`` (the open descriptor keeps this version of
    the file even when a rebuild replaces its name)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.name, self._fd = str(path), fd

    def __del__(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass

    def stream(self) -> _Stream:
        source = self

        class _Sequential:
            position = 0

            def read(self, size: int = -1) -> bytes:
                chunk = os.pread(source._fd, size if size >= 0 else 1 << 30, self.position)
                self.position += len(chunk)
                return chunk

        return _Sequential()

    def read(self, offset: int, length: int) -> bytes:
        data = os.pread(self._fd, length, offset)
        if len(data) != length:
            raise LibraryFormatError("the file changed while it was read", Location(file=self.name, offset=offset))
        return data


@dataclasses.dataclass(frozen=True)
class _Checkpoint:
    produced: int  # output bytes before this point
    consumed: int  # compressed bytes before this point
    inflater: Any  # zlib.Decompress, copied (never advanced itself)


class InflatedFile(_MsgpackSlices):
    """A gzip (one member) or zlib file: the compressed bytes in memory, inflated as a stream
    with checkpoints, so a range is read back without holding the output whole."""

    def __init__(self, path: Path, data: bytes, wbits: int) -> None:
        self.name, self._data, self._wbits = str(path), data, wbits
        self._checkpoints: list[_Checkpoint] = []
        self._size: int | None = None
        self._segments: OrderedDict[int, bytes] = OrderedDict()  # start -> inflated bytes

    def stream(self) -> _Stream:
        return _InflatingStream(self)

    def read(self, offset: int, length: int) -> bytes:
        for start, segment in self._segments.items():
            if start <= offset and offset + length <= start + len(segment):
                self._segments.move_to_end(start)
                return segment[offset - start : offset - start + length]
        starts = [point.produced for point in self._checkpoints]
        point = self._checkpoints[bisect.bisect_right(starts, offset) - 1]
        inflater = point.inflater.copy()
        pending = self._data[point.consumed :]
        out = bytearray()
        needed = offset + length - point.produced
        # on to the next checkpoint: reads in file order (iterating every solution) then hit the
        # cache instead of inflating from the same checkpoint again for each
        wanted = -(-needed // CHECKPOINT) * CHECKPOINT
        try:
            while len(out) < wanted and pending:
                out += inflater.decompress(pending, max(wanted - len(out), CHECKPOINT))
                pending = inflater.unconsumed_tail
                if inflater.eof:
                    break
        except zlib.error as error:  # the scan read these bytes: the file cannot have changed
            raise LibraryFormatError(f"damaged compressed data: {error}", Location(file=self.name)) from None
        if len(out) < needed:
            raise LibraryFormatError("compressed data ended early", Location(file=self.name, offset=offset))
        segment = bytes(out)
        self._segments[point.produced] = segment
        while len(self._segments) > _CACHED_SEGMENTS:
            self._segments.popitem(last=False)
        return segment[offset - point.produced : offset - point.produced + length]


class _InflatingStream:
    """The output of an :class:`InflatedFile`, read in order; keeps its checkpoints."""

    def __init__(self, file: InflatedFile) -> None:
        self._file = file
        self._inflater = zlib.decompressobj(file._wbits)
        self._data = memoryview(file._data)
        self._consumed = 0  # compressed bytes the inflater has used
        self._produced = 0
        self._next_checkpoint = 0
        file._checkpoints.clear()

    def read(self, size: int = -1) -> bytes:
        inflater, file = self._inflater, self._file
        if inflater.eof:
            if bytes(self._data[self._consumed :]).strip(b"\x00"):
                raise _Unsupported("a second gzip member")  # the whole-file reader joins them
            return b""
        if self._produced >= self._next_checkpoint:
            file._checkpoints.append(_Checkpoint(self._produced, self._consumed, inflater.copy()))
            self._next_checkpoint = self._produced + CHECKPOINT
        room = min(size if size > 0 else _READ_SIZE, self._next_checkpoint - self._produced)
        # the input is fed a bounded piece at a time: the inflater keeps what it leaves unused as
        # a copy (unconsumed_tail), and every checkpoint's copy of the inflater would keep its own
        # copy of the rest of the file (~70 MB for rocBLAS_Full's 45 checkpoints)
        given = self._data[self._consumed : self._consumed + _INPUT_SIZE]
        try:
            chunk = inflater.decompress(given, room)
        except zlib.error:
            raise _Unsupported("damaged compressed data") from None
        self._consumed += len(given) - len(inflater.unconsumed_tail) - len(inflater.unused_data)
        self._produced += len(chunk)
        check_inflated(self._produced, self._consumed, file.name)
        if not chunk and not inflater.eof and (not given or inflater.unconsumed_tail):
            raise _Unsupported("compressed data ended before the end-of-stream marker")
        return chunk if chunk or inflater.eof or not given else self.read(size)


def _source(path: Path) -> ByteSource | None:
    """The file as a :class:`ByteSource`, or None when it is not msgpack (YAML, zstd, empty)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO or device: the whole-file reader refuses it (os.open would block)
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None  # the whole-file reader says why
    try:
        size = os.fstat(fd).st_size
        check_file_size(size, str(path))
        head = os.pread(fd, 4, 0)
        compression = detect_compression(head)
        if compression is Compression.NONE:
            if head and _msgpack_map(head[0]):
                plain, fd = PlainFile(path, fd), -1  # the descriptor is the source's now
                return plain
            return None
        data = os.pread(fd, size, 0)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    if compression not in (Compression.GZIP, Compression.ZLIB):
        return None
    inflated = InflatedFile(path, data, 16 + zlib.MAX_WBITS if compression is Compression.GZIP else zlib.MAX_WBITS)
    try:
        first = inflated.stream().read(1)
    except _Unsupported:
        return None
    return inflated if first and _msgpack_map(first[0]) else None


def _msgpack_map(byte: int) -> bool:
    return 0x80 <= byte <= 0x8F or byte in (0xDE, 0xDF)


# -- lazy parts of the library --------------------------------------------------------------------


def _relocated(error: LibraryFormatError, prefix: list[object], start: int, source: str) -> LibraryFormatError:
    """``error``, located inside a slice decoded on its own, located in the whole file."""
    from tensilekit.io.yaml_codec import parse_path

    for problem in (error, *error.related):
        location = problem.location or Location(file=source)
        inner = parse_path(location.path) if location.path else []
        problem.location = dataclasses.replace(
            location,
            file=source,
            path=format_path(prefix + inner),
            offset=start if location.offset is None else start + location.offset,
        )
    return error


def _decode_slice(source: ByteSource, start: int, length: int, prefix: list[object], validate: Any) -> Any:
    """Decode and validate ``length`` bytes at ``start``; errors located in the whole file."""
    from tensilekit.io.locations import to_format_error
    from tensilekit.io.master_io import add_offsets
    from tensilekit.io.msgpack_codec import parse_msgpack

    data = source.read(start, length)
    try:
        raw = parse_msgpack(data, source.name)
        try:
            return validate(raw)
        except ValidationError as error:
            problem = to_format_error(error, raw, source=source.name)
            add_offsets(problem, data)
            raise problem from None
    except LibraryFormatError as error:
        raise _relocated(error, prefix, start, source.name) from None


_NODE_ADAPTER: TypeAdapter[Any] | None = None


def validate_node(raw: Any) -> AnyNode:
    """A library tree node, validated strictly (as a ``ProblemMap`` child of a whole load is)."""
    global _NODE_ADAPTER
    if _NODE_ADAPTER is None:
        _NODE_ADAPTER = TypeAdapter(LibraryNode)
    node: AnyNode = _NODE_ADAPTER.validate_python(raw, strict=True)
    return node


class LazyNodeMap(Mapping[str, AnyNode]):
    """A ``ProblemMap``'s ``map`` whose children are decoded (and validated) when looked up."""

    def __init__(self, source: SliceSource, ranges: dict[str, tuple[int, int]], path: list[object]) -> None:
        self._source, self._ranges, self._path = source, ranges, path
        self._decoded: dict[str, AnyNode] = {}

    def __getitem__(self, key: str) -> AnyNode:
        found = self._decoded.get(key)
        if found is None:
            from tensilekit.io.files import gc_paused

            start, length = self._ranges[key]  # KeyError: not in the map
            with gc_paused():
                found = self._source.decode_slice(start, length, [*self._path, "map", key], validate_node)
            self._decoded[key] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)

    def __contains__(self, key: object) -> bool:
        return key in self._ranges

    @property
    def decoded_count(self) -> int:
        """How many children have been decoded so far."""
        return len(self._decoded)

    def __repr__(self) -> str:
        return f"LazyNodeMap({list(self._ranges)!r}, decoded {list(self._decoded)!r})"


class LazySolutions(Sequence[MasterSolution]):
    """A master's ``solutions``, each decoded and validated when first asked for.

    ``find(index)`` answers as the runtime's loader keeps them (the last solution of an index);
    positions, slices and iteration follow the file's list."""

    def __init__(self, source: SliceSource, entries: list[tuple[int, int, int]]) -> None:
        self._source = source
        self._entries = entries  # (index, offset, length) per solution, in file order
        self._where = {index: position for position, (index, _, _) in enumerate(entries)}  # the last wins
        self._decoded: dict[int, MasterSolution] = {}  # position -> solution

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, position: int) -> MasterSolution: ...

    @overload
    def __getitem__(self, position: slice) -> list[MasterSolution]: ...

    def __getitem__(self, position: int | slice) -> MasterSolution | list[MasterSolution]:
        if isinstance(position, slice):
            return [self._at(number) for number in range(*position.indices(len(self._entries)))]
        if position < 0:
            position += len(self._entries)
        if not 0 <= position < len(self._entries):
            raise IndexError("solution position out of range")
        return self._at(position)

    def __iter__(self) -> Iterator[MasterSolution]:
        from tensilekit.io.files import gc_paused

        start, size = 0, 1
        while start < len(self._entries):
            # runs growing to _DECODE_RUN, each with the cyclic GC paused (it would rescan the
            # growing library every few hundred allocations): asking for the first solution
            # (the runtime detection) still decodes that one only
            with gc_paused():
                run = [self._at(position) for position in range(start, min(start + size, len(self._entries)))]
            yield from run
            start, size = start + size, min(2 * size, _DECODE_RUN)

    def _at(self, position: int) -> MasterSolution:
        found = self._decoded.get(position)
        if found is None:
            _, start, length = self._entries[position]
            found = self._source.decode_slice(
                start, length, ["solutions", position], lambda raw: MasterSolution.model_validate(raw)
            )
            self._decoded[position] = found
        return found

    def find(self, index: int) -> MasterSolution | None:
        """Solution ``index`` (the last of that index in the file), or None when there is none."""
        position = self._where.get(index)
        return None if position is None else self._at(position)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, LazySolutions)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like the list it stands for

    @property
    def indices(self) -> tuple[int, ...]:
        """Every solution index, in file order."""
        return tuple(index for index, _, _ in self._entries)

    @property
    def decoded_count(self) -> int:
        """How many solutions have been decoded so far."""
        return len(self._decoded)

    def __repr__(self) -> str:
        return f"LazySolutions({len(self._entries)} solutions, {len(self._decoded)} decoded)"


# -- the scan -----------------------------------------------------------------------------------


@dataclasses.dataclass
class _Deferred:
    """A ``map`` whose children were skipped: their byte ranges, by key."""

    ranges: dict[str, tuple[int, int]]


def _read_node(unpacker: Any, path: list[object], deferred: list[tuple[list[object], _Deferred]]) -> dict[str, Any]:
    """Decode the tree node at the unpacker, leaving ``ProblemMap`` children as byte ranges."""
    node: dict[str, Any] = {}
    for _ in range(unpacker.read_map_header()):
        key = unpacker.unpack()
        if not isinstance(key, str) or key in node:
            raise _Unsupported("a node key that is not a string, or one seen twice")
        if key == "rows":
            rows = []
            for number in range(unpacker.read_array_header()):
                row: dict[str, Any] = {}
                for _ in range(unpacker.read_map_header()):
                    row_key = unpacker.unpack()
                    if not isinstance(row_key, str) or row_key in row:
                        raise _Unsupported("a row key that is not a string, or one seen twice")
                    if row_key == "library":
                        row[row_key] = _read_node(unpacker, [*path, "rows", number, "library"], deferred)
                    else:
                        row[row_key] = unpacker.unpack()
                rows.append(row)
            node[key] = rows
        elif key == "map":
            ranges: dict[str, tuple[int, int]] = {}
            for _ in range(unpacker.read_map_header()):
                child = unpacker.unpack()
                if not isinstance(child, str) or child in ranges:
                    raise _Unsupported("a map key that is not a string, or one seen twice")
                start = unpacker.tell()
                unpacker.skip()
                ranges[child] = (start, unpacker.tell() - start)
            node[key] = _Deferred(ranges)
        else:
            node[key] = unpacker.unpack()
    if isinstance(node.get("map"), _Deferred):
        if node.get("type") != "ProblemMap":
            raise _Unsupported("a 'map' outside a ProblemMap")
        deferred.append((path, node["map"]))
        node["map"] = {}
    return node


@dataclasses.dataclass
class _Scanned:
    root: dict[str, Any]
    entries: list[tuple[int, int, int]]
    deferred: list[tuple[list[object], _Deferred]]


def _scan(source: ByteSource) -> _Scanned:
    longest = current_limits().max_container_length
    unpacker = msgpack.Unpacker(
        source.stream(),
        read_size=_READ_SIZE,
        raw=False,
        strict_map_key=False,
        use_list=True,
        max_buffer_size=min(current_limits().max_input_size, 2**31 - 1),
        max_array_len=longest,
        max_map_len=longest,
    )
    root: dict[str, Any] = {}
    entries: list[tuple[int, int, int]] | None = None
    deferred: list[tuple[list[object], _Deferred]] = []
    for _ in range(unpacker.read_map_header()):
        key = unpacker.unpack()
        if not isinstance(key, str) or key in root or key == "format_version" or (key == "solutions" and entries):
            raise _Unsupported("an indexed root, or a root key that is not a string or is seen twice")
        if key == "solutions":
            entries = []
            for index, start, length in solution_spans(unpacker):
                if type(index) is not int:
                    raise _Unsupported("a solution without an integer index")
                entries.append((index, start, length))
            root[key] = []
        elif key == "library":
            root[key] = _read_node(unpacker, ["library"], deferred)
        else:
            root[key] = unpacker.unpack()
    try:
        unpacker.unpack()
    except msgpack.OutOfData:
        pass
    else:
        raise _Unsupported("data after the root")
    if entries is None or "library" not in root:
        raise _Unsupported("no solutions or library")
    return _Scanned(root, entries, deferred)


def node_at(library: MasterLibrary, path: list[object]) -> Any:
    node: Any = library
    for part in path:
        node = node[part] if isinstance(part, int) else getattr(node, str(part))
    return node


def open_partial(path: str | Path) -> MasterLibrary | None:
    """The master at ``path`` read partially (see the module docstring), or None when the file is
    not a plain msgpack master this reader trusts; the caller then decodes it whole."""
    from tensilekit.io.master_io import master_from_data

    path = Path(path)
    source = _source(path)
    if source is None:
        return None
    try:
        scanned = _scan(source)
    except TensilekitError:
        raise  # an input limit (several are ValueErrors too)
    except (_Unsupported, ValueError, msgpack.UnpackException, TypeError, UnicodeDecodeError, RecursionError):
        return None  # msgpack's OutOfData, FormatError, StackError and limits included
    try:
        library = master_from_data(scanned.root, source=source.name)
    except TensilekitError:
        return None  # the whole-file reader reports it with its byte offset
    for where, maps in scanned.deferred:
        node = node_at(library, where)
        if not isinstance(node, ProblemMapNode):
            return None
        object.__setattr__(node, "map", LazyNodeMap(source, maps.ranges, where))
    object.__setattr__(library, "solutions", LazySolutions(source, scanned.entries))
    return library


def is_partial(library: MasterLibrary) -> bool:
    """True for a library :func:`open_partial` opened (its solutions decoded on demand)."""
    return isinstance(library.solutions, LazySolutions)


__all__ = [
    "CHECKPOINT",
    "LazyNodeMap",
    "LazySolutions",
    "SliceSource",
    "is_partial",
    "node_at",
    "open_partial",
    "validate_node",
]

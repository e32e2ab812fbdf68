"""A whole installed hipBLASLt library folder as one input (``/opt/rocm/lib/hipblaslt/library``).

What the runtime finds in such a folder (ROCm/rocm-libraries ``projects/hipblaslt/tensilelite``):

* the master ``TensileLibrary_lazy_<arch>.dat`` (or ``TensileLibrary_<arch>.dat`` when not lazy),
  flat in the folder or, since the per-architecture layout (rocm-libraries#5354), in
  ``<folder>/<arch>/``; silicon revisions get their own subtree (``gfx1250v0/``) whose files are
  still named for the compiler target (``gfx1250``);
* the lazy mapping ``TensileLiteLibrary_lazy_<arch>_Mapping.dat`` — ``{first solution index:
  shard prefix}`` — beside the master (``include/Tensile/MasterSolutionLibrary.hpp`` @
  1c2f384358bd ``initLibraryMapping``/``loadLibrary``: ``upper_bound(index) - 1``; written by
  ``TensileCreateLibrary/Run.py`` from each shard's smallest index, always as msgpack);
* one shard per Placeholder, ``<prefix>.dat``; every catalog name is probed ``.zlib`` first
  (:mod:`tensilekit.io.zlib_catalog`).

:class:`InstalledLibrary` opens only the masters (trees); shards are read when a query reaches
their Placeholder, as the runtime does, so one ``select`` reads one shard, not hundreds.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tensilekit.errors import (
    InputNotFound,
    LibraryChanged,
    LibraryFormatError,
    Location,
    SelectionError,
    TensilekitError,
)
from tensilekit.model.library import MasterLibrary, PlaceholderNode, join_masters

# TensileLibrary_lazy_gfx942.dat, TensileLibrary_gfx90a.yaml, TensileLibrary_lazy_gfx1250-strict.dat.zlib;
# shards (TensileLibrary_Type_…_gfx942) never match: their first word is not lazy or gfx…
_MASTER = re.compile(
    r"TensileLibrary_(?P<lazy>lazy_)?(?:(?P<device>ID[0-9A-Fa-f]{4})_)?"
    r"(?P<arch>gfx[0-9a-z]+(?:-[0-9A-Za-z]+)*)(?:_(?P<suffix>ID[0-9A-Fa-f]{4}))?\.(?:dat|yaml)(?:\.zlib)?"
)
_MAPPING = re.compile(
    r"TensileLiteLibrary_lazy_(?:(?P<arch>gfx[0-9a-z]+(?:[-_][0-9A-Za-z-]+)*)_)?Mapping\.dat(?:\.zlib)?"
)


class ShardUnreadable(SelectionError):
    """A lazily loaded shard could not be read; names the shard, its file and the place."""

    @classmethod
    def of(cls, prefix: str, error: TensilekitError) -> ShardUnreadable:
        location = error.location or Location()
        detail = error.message
        if location.file and Path(location.file).is_file():
            from tensilekit.io.msgpack_place import damage_place

            data = Path(location.file).read_bytes()
            place = damage_place(data) if location.path is None else None
            detail = f"{error.message} ({len(data)} bytes" + (f"; {place})" if place else ")")
        return cls(f"shard {prefix} cannot be read: {detail}", location)


def revisioned_arch_name(arch: str, asic_revision: int) -> str:
    """The library subtree a device loads (hipBLASLt ``rocblaslt_revisioned_arch_name``): an A0
    gfx1250 (``hipDeviceProp_t::asicRevision`` 0) loads ``gfx1250v0/``, every other device (a
    revision unknown to HIP is -1) the tree named for its processor. ``gfx1250-strict`` keeps its
    name. The files in the subtree are still named for the processor, and the runtime never falls
    back from ``gfx1250v0/`` to ``gfx1250/`` (B0 kernels give wrong results on A0).

    Ported from ``projects/hipblaslt/library/src/amd_detail/rocblaslt/src/include/rocblaslt_arch_revision.hpp``
    (somayeh-rahimipour/rocm-libraries-fork @ 6b05219a6101) and its use in ``tensile_host.cpp``
    ``TensileHost::initialize``: without ``HIPBLASLT_TENSILE_LIBPATH`` the runtime loads
    ``<library>/<subtree>/`` when it holds ``TensileLibrary_lazy_<processor>.dat(.zlib)|.yaml``,
    else the folder itself (ROCm/rocm-libraries @ 003add5959de: ``path / processor``);
    ``HIPBLASLT_TENSILE_LIBPATH`` is used as it is (point ``--library`` at the subtree).
    """
    return "gfx1250v0" if arch == "gfx1250" and asic_revision == 0 else arch


def _label_list(labels: list[str]) -> str:
    return ", ".join("." + " (the folder itself)" if label == "." else label for label in labels)


class UnknownSubtree(TensilekitError, ValueError):
    """A subtree label the installed library folder does not have (a usage error, exit 2)."""

    exit_code = 2

    @classmethod
    def of(cls, library: InstalledLibrary, label: str, arch: str | None, served: set[str]) -> UnknownSubtree:
        if served:
            why = f"subtree {label!r} serves {', '.join(sorted(served))}, not {arch}"
        else:
            why = f"no subtree {label!r} holds a master"
        return cls(f"{why}; this folder has: {_label_list(library.labels())}", Location(file=str(library.folder)))

    @classmethod
    def not_installed(cls, path: str | Path) -> UnknownSubtree:
        return cls(
            "a subtree or an ASIC revision chooses among the trees of an installed library folder; this is not one",
            Location(file=str(path)),
        )


@dataclasses.dataclass
class InstalledMaster:
    """One master the runtime could load: its folder label (``gfx942``, ``gfx1250v0``, or ``.``
    when flat), the architecture in its name, its file (after the ``.zlib`` probe)."""

    label: str
    arch: str
    path: Path
    lazy: bool
    mapping_path: Path | None = None
    device_id: str | None = None  # a per-silicon stem (…_ID75a0_gfx950): the PCI device it serves


def _catalog_files(folder: Path) -> list[Path]:
    from tensilekit.io.zlib_catalog import runtime_view

    # names first (a folder may hold 30 000 other files): only Tensile* names can be catalogs
    with os.scandir(folder) as entries:
        names = sorted(entry.name for entry in entries if entry.name.startswith("Tensile") and entry.is_file())
    return runtime_view([folder / name for name in names])


def master_arch(name: str) -> str | None:
    """The architecture in a master's file (or base) name, e.g. ``gfx942`` for
    ``TensileLibrary_lazy_gfx942.dat``; None for a shard, a mapping or another file."""
    match = _MASTER.fullmatch(name if name.endswith((".dat", ".yaml", ".zlib")) else name + ".dat")
    return match.group("arch") if match else None


def _subtrees(root: Path) -> list[Path]:
    """The per-architecture subfolders (``gfx942/``, ``gfx1250v0/``) of an installed library folder."""
    with os.scandir(root) as entries:
        return sorted(root / entry.name for entry in entries if entry.name.startswith("gfx") and entry.is_dir())


def find_masters(folder: str | Path) -> list[InstalledMaster]:
    """The masters of an installed library folder (flat and per-architecture subfolders)."""
    root = Path(folder)
    found: list[InstalledMaster] = []
    folders = [root, *_subtrees(root)]
    for sub in folders:
        files = _catalog_files(sub)
        mappings: dict[str | None, Path] = {}
        for path in files:
            match = _MAPPING.fullmatch(path.name)
            if match:
                mappings[match.group("arch")] = path
        for path in files:
            match = _MASTER.fullmatch(path.name)
            if not match:
                continue
            arch = match.group("arch")
            lazy = match.group("lazy") is not None
            # per-arch mapping first; the flat shared one of older installs as fallback
            mapping = mappings.get(arch, mappings.get(None)) if lazy else None
            label = "." if sub == root else sub.name
            device = match.group("device") or match.group("suffix")
            found.append(InstalledMaster(label, arch, path, lazy, mapping, device))
    return found


def is_installed_library(folder: str | Path) -> bool:
    """A folder holding at least one master catalog (not a folder of logic files)."""
    path = Path(folder)
    return path.is_dir() and bool(find_masters(path))


def read_mapping(path: str | Path) -> dict[int, str]:
    """A lazy mapping file as ``{first index: shard prefix}`` (keys as the runtime parses them)."""
    from tensilekit.io.master_io import decode
    from tensilekit.io.zlib_catalog import read_catalog_bytes

    raw, found = read_catalog_bytes(path)
    data, _, _ = decode(raw, str(found))
    if not isinstance(data, dict):
        raise LibraryFormatError("a lazy mapping must be a map {first index: shard}", Location(file=str(found)))
    mapping: dict[int, str] = {}
    for key, value in data.items():
        text = str(key)
        # MessagePackLoadLibraryMapping: std::from_chars over the whole key, into an int
        if not re.fullmatch(r"-?[0-9]+", text) or not isinstance(value, str):
            raise LibraryFormatError(
                f"mapping entry {key!r}: {value!r} is not 'index: shard prefix'", Location(file=str(found), path=text)
            )
        mapping[int(text)] = value
    return dict(sorted(mapping.items()))


def is_mapping_name(path: str | Path) -> bool:
    """``TensileLiteLibrary_lazy_[<arch>_]Mapping.dat[.zlib]``."""
    return _MAPPING.fullmatch(Path(path).name) is not None


def check_mapping(path: str | Path) -> dict[int, str]:
    """Read a mapping and check that every shard it names is beside it (``.zlib`` first);
    raises :class:`LibraryFormatError` naming the first missing shard."""
    from tensilekit.io.zlib_catalog import resolve_catalog

    mapping = read_mapping(path)
    folder = Path(path).parent
    for first, prefix in mapping.items():
        if not resolve_catalog(folder / f"{prefix}.dat").is_file():
            raise LibraryFormatError(
                f"the mapping sends index {first} to shard {prefix}, which is not in this folder",
                Location(file=str(path), path=str(first)),
            )
    return mapping


def shard_for_index(mapping: dict[int, str], index: int) -> str | None:
    """The shard holding solution ``index``: the entry with the largest first index ≤ ``index``."""
    chosen: str | None = None
    for first, prefix in mapping.items():
        if first > index:
            break
        chosen = prefix
    return chosen


def lazy_mappings(masters: dict[str, MasterLibrary]) -> dict[str, dict[int, str]]:
    """The mapping files TensileCreateLibrary writes beside tensilelite lazy masters, by base name.

    ``Run.py``: each shard's smallest solution index → the shard's name, ascending.
    """
    out: dict[str, dict[int, str]] = {}
    for name, master in masters.items():
        if not name.startswith("TensileLibrary_lazy_"):
            continue
        shards = [node.value for _, node in master.iter_nodes() if isinstance(node, PlaceholderNode)]
        if not any(_is_lite(masters[shard]) for shard in shards if shard in masters):
            continue  # Tensile (rocBLAS) lazy libraries have no mapping file
        firsts: dict[int, str] = {}
        for shard in shards:
            library = masters.get(shard)
            if library is not None and library.solutions:
                firsts[min(s.index for s in library.solutions)] = shard
        arch = name.removeprefix("TensileLibrary_lazy_")
        out[f"TensileLiteLibrary_lazy_{arch}_Mapping"] = dict(sorted(firsts.items()))
    return out


def _is_lite(master: MasterLibrary) -> bool:
    # tensilelite solutions carry kernelName / a computeInputType (the writer's key order rule too)
    raw = master.solutions[0].model_dump(by_alias=True, exclude_unset=True) if master.solutions else {}
    problem_type = raw.get("problemType")
    return "kernelName" in raw or (isinstance(problem_type, dict) and "computeInputType" in problem_type)


class InstalledLibrary:
    """An installed library folder: its masters, loaded on demand, and their shards."""

    def __init__(self, folder: str | Path) -> None:
        from tensilekit.io.atomic import FolderGeneration

        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise InputNotFound("no such library folder", Location(file=str(folder)))
        # masters and shards are one set: everything is read through one generation of the
        # folder and its subtrees (a rebuild swaps a folder in; a mix raises LibraryChanged)
        self.generation = FolderGeneration([self.folder, *_subtrees(self.folder)])
        self.masters = find_masters(self.folder)
        self.generation.check()  # a listing taken while a rebuild swapped the folder is partial
        if not self.masters:
            raise InputNotFound(
                "no TensileLibrary_lazy_<arch>.dat(.zlib) or TensileLibrary_<arch>.dat(.zlib) in this folder",
                Location(file=str(folder)),
            )
        self._loaded: dict[Path, MasterLibrary] = {}
        self.shards_read: list[Path] = []

    def archs(self) -> list[str]:
        return sorted({master.arch for master in self.masters})

    def labels(self) -> list[str]:
        """The subtrees holding a master (``.`` for the folder itself), sorted."""
        return sorted({master.label for master in self.masters})

    def choose(
        self, arch: str | None = None, label: str | None = None, *, asic_revision: int | None = None
    ) -> list[InstalledMaster]:
        """The masters serving ``arch`` (all when None), one per architecture, as one device loads one.

        By default each architecture's own subtree (``gfx942/``), else the flat folder. ``label``
        names the subtree to load instead for the architecture it serves (``gfx1250v0``: its
        files are named for ``gfx1250``); the other architectures keep their default.
        ``asic_revision`` picks the subtree as the runtime does from the device
        (:func:`revisioned_arch_name`), and as the runtime never falls back to another tree.

        Raises:
            UnknownSubtree: ``label`` is not a subtree of this folder, or serves none of ``arch``
                (exit 2, listing the labels the folder has).
            InputNotFound: the tree the device's revision loads is not in this folder.
        """
        if label is not None:
            served = {master.arch for master in self.masters if master.label == label}
            if not served or (arch is not None and arch not in served):
                raise UnknownSubtree.of(self, label, arch, served)
        by_arch: dict[str, dict[str, InstalledMaster]] = {}
        for master in self.masters:
            if arch is None or master.arch == arch:
                by_arch.setdefault(master.arch, {}).setdefault(master.label, master)  # the first of a label
        chosen: list[InstalledMaster] = []
        for name, by_label in by_arch.items():
            revision = -1 if asic_revision is None else asic_revision
            wanted = label if label in by_label else revisioned_arch_name(name, revision)
            picked = by_label.get(wanted) or (by_label.get(".") if wanted == name else None)
            if picked is None and asic_revision is None:
                picked = next(iter(by_label.values()))  # no device named: the tree the folder has
            if picked is None:
                raise InputNotFound(
                    f"a {name} device of ASIC revision {asic_revision} loads the {wanted} tree, which this "
                    f"folder lacks (the runtime does not fall back to another tree; the folder has "
                    f"{_label_list(self.labels())})",
                    Location(file=str(self.folder)),
                )
            chosen.append(picked)
        return chosen

    def load(self, master: InstalledMaster) -> MasterLibrary:
        from tensilekit.io.master_io import load_master

        library = self._loaded.get(master.path)
        if library is None:
            try:
                library = load_master(master.path)
            except TensilekitError:
                self.generation.check()  # gone or damaged because the folder was swapped
                raise
            self.generation.check()
            self._loaded[master.path] = library
        return library

    def loader(self, master: InstalledMaster) -> Callable[[str], MasterLibrary]:
        """Reads the shard a Placeholder names, beside ``master`` (``.zlib`` first), recording it."""
        from tensilekit.io.master_io import load_placeholder

        def load_shard(prefix: str) -> MasterLibrary:
            try:
                library = load_placeholder(master.path, prefix, lazy=True)
            except TensilekitError:
                self.generation.check()
                raise
            self.generation.check()
            self.shards_read.append(master.path.with_name(prefix))
            return library

        return load_shard

    def mapping(self, master: InstalledMaster) -> dict[int, str]:
        return read_mapping(master.mapping_path) if master.mapping_path is not None else {}

    def shard_prefixes(self, master: InstalledMaster) -> list[str]:
        library = self.load(master)
        return [node.value for _, node in library.iter_nodes() if isinstance(node, PlaceholderNode)]

    def for_selection(
        self, arch: str | None = None, label: str | None = None, *, asic_revision: int | None = None
    ) -> tuple[MasterLibrary, Callable[[str], MasterLibrary]]:
        """One library answering for every chosen architecture (their ``Hardware`` rows joined) and
        the loader of its placeholders (each resolved beside the master that names it); ``label``
        and ``asic_revision`` as in :meth:`choose`."""
        chosen = self.choose(arch, label, asic_revision=asic_revision)
        if not chosen:
            raise InputNotFound(
                f"no master for {arch} in this library (it serves {', '.join(self.archs())})",
                Location(file=str(self.folder)),
            )
        failed: dict[str, ShardUnreadable] = {}
        owners: dict[str, InstalledMaster] = {}
        libraries: list[MasterLibrary] = []
        for master in chosen:
            library = self.load(master)
            libraries.append(library)
            for _, node in library.iter_nodes():
                if isinstance(node, PlaceholderNode):
                    owners.setdefault(node.value, master)
        loaders = {id(master): self.loader(master) for master in chosen}

        def load_shard(prefix: str) -> MasterLibrary:
            owner = owners.get(prefix)
            if owner is None:
                raise LibraryFormatError(f"no master names placeholder {prefix!r}", Location(file=str(self.folder)))
            if prefix in failed:
                raise failed[prefix]
            try:
                return loaders[id(owner)](prefix)
            except LibraryChanged:
                raise  # not this shard's fault: the whole read is dropped (and retried)
            except TensilekitError as error:
                # a selection error: the batch reports it for the queries reaching this shard and
                # answers the others (selection.api.select_batch)
                failed[prefix] = ShardUnreadable.of(prefix, error)
                raise failed[prefix] from None

        if len(libraries) == 1:
            return libraries[0], load_shard
        return join_masters(libraries), load_shard

    def materialize_all(
        self, arch: str | None = None, label: str | None = None, *, asic_revision: int | None = None
    ) -> MasterLibrary:
        """Every chosen master (:meth:`choose`) with all its shards inlined, joined under one
        ``Hardware`` node."""
        masters = [self.materialize(master) for master in self.choose(arch, label, asic_revision=asic_revision)]
        return masters[0] if len(masters) == 1 else join_masters(masters)

    def folders(self, label: str | None = None, *, asic_revision: int | None = None) -> list[Path]:
        """The folders the chosen masters live in (:meth:`choose`): what the runtime reads."""
        return list(
            dict.fromkeys(master.path.parent for master in self.choose(None, label, asic_revision=asic_revision))
        )

    def materialize(
        self, master: InstalledMaster, *, on_error: Callable[[TensilekitError], None] | None = None
    ) -> MasterLibrary:
        """``master`` with every placeholder replaced by its shard's tree (all shards read): what
        lint, info, coverage over everything and diff need. A shard that cannot be read raises,
        or with ``on_error`` is reported and left a Placeholder, so the other shards still count."""
        library, read = inline_placeholders(
            self.load(master), master.path, on_error=on_error, check=self.generation.check
        )
        self.shards_read.extend(read)
        return library


def inline_placeholders(
    library: MasterLibrary,
    master_path: str | Path,
    *,
    on_error: Callable[[TensilekitError], None] | None = None,
    check: Callable[[], None] | None = None,
) -> tuple[MasterLibrary, list[Path]]:
    """``library`` (read from ``master_path``) with every Placeholder replaced by its shard's tree
    and the shard's solutions added: a lazy master's content, as the runtime would see it once
    every shard is loaded; and the shard files read. A library without placeholders comes back
    as it is. A shard that cannot be read raises, or with ``on_error`` is reported and left a
    Placeholder, so the other shards still count. ``check`` is called after each shard read
    and before an error is handled (:meth:`FolderGeneration.check`: a read across a rebuild)."""
    from tensilekit.io.master_io import load_placeholder

    if not any(isinstance(node, PlaceholderNode) for _, node in library.iter_nodes()):
        return library, []
    path = Path(master_path)
    raw = library.to_raw()
    solutions: list[Any] = list(raw.get("solutions", []))
    read: list[Path] = []

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("type") == "Placeholder":
                try:
                    shard = load_placeholder(path, node["value"])
                except TensilekitError as error:
                    if check is not None:
                        check()
                    if on_error is None:
                        raise
                    on_error(error)
                    return node
                if check is not None:
                    check()
                read.append(path.with_name(node["value"]))
                shard_raw = shard.to_raw()
                solutions.extend(shard_raw["solutions"])
                return shard_raw["library"]
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    tree = inline(raw["library"])
    return MasterLibrary.model_validate({**raw, "solutions": solutions, "library": tree}), read


def _referenced(node: Any, found: set[int]) -> None:
    """Every solution index a raw subtree names."""
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "Single" and isinstance(node.get("index"), int):
            found.add(node["index"])
        elif kind == "Prediction":
            found.update(i for i in node.get("table", []) if isinstance(i, int))
        elif kind in ("Matching", "FreeSize"):
            for entry in node.get("table", []):
                if isinstance(entry, dict) and isinstance(entry.get("index"), int):
                    found.add(entry["index"])
        elif kind == "GranularitySelection":
            found.update(i for i in node.get("indices", []) if isinstance(i, int))
        for value in node.values():
            if isinstance(value, (dict, list)):
                _referenced(value, found)
    elif isinstance(node, list):
        for item in node:
            _referenced(item, found)


def split_lazy(master: MasterLibrary, arch: str) -> dict[str, MasterLibrary]:
    """A non-lazy master split the way TensileCreateLibrary lays out a lazy library: the
    ``TensileLibrary_lazy_<arch>`` tree keeps Hardware → ProblemMap → Problem rows, and each
    problem type's subtree moves to its own shard behind a ``Placeholder`` (with the solutions it
    names). Used to make installed-library fixtures from AMD-written masters."""
    raw = master.to_raw()
    by_index = {solution["index"]: solution for solution in raw["solutions"]}
    shards: dict[str, MasterLibrary] = {}

    def shard(subtree: dict[str, Any], stem: str) -> dict[str, Any]:
        name = f"TensileLibrary_Type_{len(shards):04d}_{stem}_{arch}"
        found: set[int] = set()
        _referenced(subtree, found)
        solutions = [by_index[i] for i in sorted(found) if i in by_index]
        shards[name] = MasterLibrary.model_validate({"solutions": solutions, "library": subtree})
        return {"type": "Placeholder", "value": name}

    def type_rows(node: dict[str, Any], stem: str) -> dict[str, Any]:
        # Problem(TruePred) → Problem(type predicates) → <leaf>: the leaf's row becomes a placeholder
        if node.get("type") != "Problem":
            return shard(node, stem)
        rows = []
        for row in node["rows"]:
            child = row["library"]
            if child.get("type") == "Problem" and all(r["predicate"].get("type") != "TruePred" for r in child["rows"]):
                child = {**child, "rows": [{**r, "library": shard(r["library"], stem)} for r in child["rows"]]}
            else:
                child = shard(child, stem)
            rows.append({**row, "library": child})
        return {**node, "rows": rows}

    def walk(node: dict[str, Any], stem: str) -> dict[str, Any]:
        kind = node.get("type")
        if kind == "Hardware":
            return {**node, "rows": [{**row, "library": walk(row["library"], stem)} for row in node["rows"]]}
        if kind == "ProblemMap":
            return {**node, "map": {op: type_rows(child, op) for op, child in node["map"].items()}}
        return shard(node, stem)

    tree = walk(raw["library"], "Contraction")
    lazy = {key: value for key, value in raw.items() if key not in ("solutions", "library")}
    lazy_master = MasterLibrary.model_validate({"solutions": [], "library": tree, **lazy})
    return {**shards, f"TensileLibrary_lazy_{arch}": lazy_master}


__all__ = [
    "InstalledLibrary",
    "UnknownSubtree",
    "InstalledMaster",
    "ShardUnreadable",
    "find_masters",
    "check_mapping",
    "inline_placeholders",
    "is_installed_library",
    "is_mapping_name",
    "master_arch",
    "lazy_mappings",
    "read_mapping",
    "revisioned_arch_name",
    "shard_for_index",
    "split_lazy",
]

"""Which containers an output shares (YAML ``&id``/``*id``), following AMD's copy semantics.

Old rocBLAS logic files use YAML aliases (solutions sharing one ``WorkGroup``/``ThreadTile``
list). PyYAML loads an alias as the *same* Python object and dumps any object reached twice as
an anchor and alias again, so what AMD's merge writes depends on which objects are still shared
after its copies (spec §4; checked against a step-by-step re-run of the scripts' copy sequence):

* header positions (all but 5 and 7): unchanged objects, internal sharing kept;
* surviving *original* solutions: copied together (``deepcopy(pool)``), so sharing among them is
  kept; sharing with the header is lost;
* appended incremental solutions: each ``deepcopy``'d on its own, so only sharing *inside* one
  solution survives;
* table keys: copied together, so sharing between key lists survives, except for keys rebuilt by
  trimming or solution tags; the ``[index, efficiency]`` lists are always rebuilt.

Sharing is carried as (anchor path, alias path) pairs, the form
:func:`tensilekit.io.yaml_codec.detect_style` reads them in (``YamlStyle.alias_paths``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Path = tuple[object, ...]
AliasPairs = tuple[tuple[Path, Path], ...]

SOLUTIONS, TABLE = 5, 7


def alias_pairs(logic: Any) -> AliasPairs:
    """The (anchor, alias) path pairs the file was read with (empty when unknown)."""
    style = getattr(logic, "_source_style", None)
    pairs = getattr(style, "alias_paths", None) or ()
    return tuple(pairs)


def _groups(pairs: Iterable[tuple[Path, Path]]) -> list[list[Path]]:
    """Paths that are one shared object: the anchor first, then its aliases (file order)."""
    groups: dict[Path, list[Path]] = {}
    for anchor, alias in pairs:
        if anchor and alias:
            groups.setdefault(anchor, [anchor]).append(alias)
    return list(groups.values())


def _region(path: Path) -> str:
    if path[0] == SOLUTIONS and len(path) >= 2 and isinstance(path[1], int):
        return "solutions"
    if path[0] == TABLE and len(path) >= 3 and isinstance(path[1], int) and path[2] == 0:
        return "keys"  # a row's key list; rows and [index, efficiency] lists are always rebuilt
    if path[0] in (SOLUTIONS, TABLE):
        return "rebuilt"
    return "header"


def _moved(path: Path, solutions: Mapping[int, int], rows: Mapping[int, int]) -> Path | None:
    region = _region(path)
    if region == "solutions":
        position = solutions.get(path[1])  # type: ignore[call-overload]
        return None if position is None else (SOLUTIONS, position, *path[2:])
    if region == "keys":
        row = rows.get(path[1])  # type: ignore[call-overload]
        return None if row is None else (TABLE, row, *path[2:])
    return path if region == "header" else None


def _shared(members: Iterable[Path | None]) -> list[tuple[Path, Path]]:
    kept = [member for member in members if member is not None]
    return [(kept[0], other) for other in kept[1:]]


def merged_alias_pairs(
    original: AliasPairs,
    incremental: AliasPairs,
    *,
    original_solutions: Mapping[int, int],
    incremental_solutions: Mapping[int, int],
    original_rows: Mapping[int, int],
    incremental_rows: Mapping[int, int],
) -> AliasPairs:
    """Output pairs of a merge. The mappings send a file position (solution, or table row whose
    key object survives) to its output position.

    Each shared object is split by where its copies end up: the header keeps its own sharing, the
    surviving original solutions theirs (one ``deepcopy`` of the pool), the original table keys
    theirs; an appended incremental solution only shares inside itself (its own ``deepcopy``),
    and incremental table keys among the appended rows.
    """
    pairs: list[tuple[Path, Path]] = []
    for group in _groups(original):
        for region in ("header", "solutions", "keys"):
            members = [path for path in group if _region(path) == region]
            pairs += _shared(_moved(path, original_solutions, original_rows) for path in members)
    for group in _groups(incremental):
        keys = [path for path in group if _region(path) == "keys"]
        pairs += _shared(_moved(path, incremental_solutions, incremental_rows) for path in keys)
        by_solution: dict[object, list[Path]] = {}
        for path in group:
            if _region(path) == "solutions":
                by_solution.setdefault(path[1], []).append(path)
        for members in by_solution.values():
            pairs += _shared(_moved(path, incremental_solutions, {}) for path in members)
    return tuple(pairs)


def remapped_alias_pairs(pairs: Iterable[tuple[Path, Path]], solutions: Mapping[int, int]) -> AliasPairs:
    """Pairs of a file whose solutions moved (``solutions``: old position -> new; absent = gone)."""
    out: list[tuple[Path, Path]] = []
    identity_rows: _AllRows = _AllRows()
    for group in _groups(pairs):
        out += _shared(_moved(path, solutions, identity_rows) if _region(path) != "rebuilt" else path for path in group)
    return tuple(out)


class _AllRows(dict[int, int]):
    """Rows stay where they are."""

    def get(self, key: int, default: Any = None) -> Any:
        return key


def with_alias_pairs(template: Any, pairs: AliasPairs) -> Any:
    """A default (AMD) emitter style of the same class as ``template`` carrying ``pairs``.

    ``template`` is the ``YamlStyle`` a file was read with; its class's defaults are AMD's
    ``yaml.dump(..., default_flow_style=None)`` settings. Returns None without a template.
    Duck-typed so the pure merge core needs no import from :mod:`tensilekit.io`.
    """
    if template is None:
        return None
    return type(template)(alias_paths=pairs)


__all__ = ["AliasPairs", "alias_pairs", "merged_alias_pairs", "remapped_alias_pairs", "with_alias_pairs"]

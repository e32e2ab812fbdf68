"""Several entries of one key in a ``Matching`` table: which one the runtime answers with.

The runtime sorts a table with libstdc++'s ``std::sort`` by (key ascending, speed descending)
(:mod:`tensilekit.selection.stdsort`; Tensile and tensilelite alike), and every search then meets
a key's entries in that order. Per table kind (``PropertyMatching.hpp``, both runtimes):

* ``Equality`` (``DistanceMatchingTable<…, Equality>::findBestKeyMatch``): ``lower_bound`` finds
  the first entry of the key and only that one is tried; the others are never used.
* ``GridBased`` (``findBestKeyMatch_GridBased``): the cell's entries are scanned in order keeping
  the best by strict ``<``: the first whose kernel can solve the problem answers.
* every other distance (``findBestKeyMatch_BinSearch``: Euclidean, Manhattan, Ratio, JSD, Random):
  at the key itself and from below, the rightward scan meets the first entry, and a later one
  replaces it only with a strictly higher speed (never, in this order); from above, the leftward
  scan meets the **last** entry first, and an earlier one replaces it only with a strictly higher
  speed that the early-exit bound still lets it reach (not when the whole distance lies in the
  first key value, ``spec/selection.md`` (e) 1).

In each case a kernel that cannot solve the problem hands over to the next entry (Equality: to
nothing). :func:`duplicate_keys` finds the groups, :func:`describe_duplicate` words the rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tensilekit.selection.stdsort import matching_table_order

if TYPE_CHECKING:
    from tensilekit.model.logic import LogicFile


@dataclasses.dataclass(frozen=True)
class DuplicateKey:
    """One key written more than once: its entries in the runtime's sorted order."""

    key: tuple[int, ...]
    entries: tuple[int, ...]
    """Positions (as the caller numbers them) in the order the runtime meets them."""
    speeds: tuple[float, ...]


def duplicate_keys(
    keys: Sequence[tuple[int, ...]], speeds: Sequence[float], labels: Sequence[int] | None = None
) -> list[DuplicateKey]:
    """The keys that occur more than once in a table given in the order the runtime loads it,
    each with its entries (``labels[i]``, default ``i``) in the order ``std::sort`` leaves them;
    groups by key ascending."""
    order = matching_table_order(keys, speeds)
    names = list(range(len(keys))) if labels is None else list(labels)
    found: list[DuplicateKey] = []
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and keys[order[end]] == keys[order[start]]:
            end += 1
        if end - start > 1:
            group = order[start:end]
            found.append(
                DuplicateKey(tuple(keys[group[0]]), tuple(names[i] for i in group), tuple(speeds[i] for i in group))
            )
        start = end
    return found


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe_duplicate(duplicate: DuplicateKey, distance: str, noun: str = "row", *, key_names: str = "key") -> str:
    """``rows 3 and 17 share [M, N, K] = [..] with equal speed 1.5; the runtime answers with row 17
    …``: the rule of the module docstring for this group and table kind (``noun``: ``row`` or
    ``entry``; ``key_names`` what the key is called)."""
    plural = "entries" if noun == "entry" else f"{noun}s"
    named = [str(entry) for entry in sorted(duplicate.entries)]
    first, last = duplicate.entries[0], duplicate.entries[-1]
    rest = [f"{noun} {entry}" for entry in duplicate.entries[1:]]
    speeds = duplicate.speeds
    equal = all(speed == speeds[0] for speed in speeds)
    if distance == "GridBased":
        speed_text = ""
    elif equal:
        speed_text = f" with equal speed {speeds[0]:g}"
    else:
        pairs = zip(duplicate.entries, speeds, strict=True)
        speed_text = " (speeds " + ", ".join(f"{noun} {e}: {s:g}" for e, s in pairs) + ")"
    why = "first in the runtime's std::sort order" if speeds[0] == speeds[1] else "the fastest"
    head = f"{plural} {_join(named)} share {key_names} {list(duplicate.key)}{speed_text}"
    if distance == "Equality":
        never = "never answers" if len(rest) == 1 else "never answer"
        return f"{head}; the runtime tries only {noun} {first} ({why}); {_join(rest)} {never}"
    if distance == "GridBased":
        return f"{head}; the runtime uses {noun} {first} ({why}), {_join(rest)} only where its kernel cannot solve the problem"
    if equal:
        above = f"from above with {noun} {last} (the leftward scan meets it first; an equal speed does not replace it)"
    else:
        above = (
            f"from above, a query differing in the first key value only stops on {noun} {last} "
            "(the slowest, met first by the leftward scan)"
        )
    return f"{head}; the runtime answers with {noun} {first} ({why}) at this key and from below, and {above}"


def logic_table(logic: LogicFile) -> tuple[str, str, list[tuple[int, ...]], list[float], list[int]] | None:
    """A list-layout logic file's table as the built master holds it: (distance, key names such as
    ``[M, N, K]``, keys, speeds, row numbers) in the order AMD's build writes the entries (a stable sort by key), each key made of
    the size columns the build keeps; None when the file has no such table (``FreeSize``, decision
    trees) or its index order is unusable (``validate`` reports that).

    The key columns differ between the builders: tensilelite's ``MatchingLibrary.FromOriginalState``
    (hipBLASLt 7d9fb683 ``Tensile/SolutionLibrary.py:76-118``) keeps the batch for ``Equality`` and
    ``GridBased``, Tensile's (a164ed70) for ``Equality`` only; so two Tensile rows that differ only
    in batch (or any two rows differing only in leading dimensions) are one key to the runtime."""
    from tensilekit.model.logic import Dialect, Layout

    if logic.layout is not Layout.LIST or logic.exact_logic is None or logic.index_order is None:
        return None
    distance = logic.matching_distance
    if distance in ("FreeSize", "DecisionTree"):
        return None
    codes = {2, 3, 1}
    if distance == "Equality" or (distance == "GridBased" and logic.dialect is Dialect.TENSILELITE):
        codes.add(0)
    positions = [place for place, code in enumerate(logic.index_order) if code in codes]
    rows: list[tuple[tuple[int, ...], float, int]] = []
    for number, row in enumerate(logic.exact_logic):
        if len(row.size) <= max(positions, default=-1):
            return None
        speed = 0.0 if distance == "GridBased" else float(row.efficiency)
        rows.append((tuple(row.size[place] for place in positions), speed, number))
    rows.sort(key=lambda row: row[0])  # the Python writer: table.sort(key=lambda r: r["key"])
    names = "[" + ", ".join(_SIZE_NAMES[logic.index_order[place]] for place in positions) + "]"
    return distance, names, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


_SIZE_NAMES = {0: "batch", 1: "K", 2: "M", 3: "N"}  # index codes of the rocBLAS order [2, 3, 0, 1]


__all__ = ["DuplicateKey", "describe_duplicate", "duplicate_keys", "logic_table"]

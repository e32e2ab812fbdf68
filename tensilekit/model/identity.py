"""Solution identity across builds: when two master solution records name the same kernel.

A solution index, ``name`` and ``kernelName`` belong to *one build* of a library, not to the
kernel. Two solutions of two builds (Tensile or tensilelite masters alike) are the same when their
master records are equal apart from the fields a build renumbers or renames:

* ``index`` -- the master index: TensileCreateLibrary numbers solutions in the order it reads
  the logic files (``glob`` order, completion order with ``--jobs`` > 1), so adding, removing
  or reordering logic files shifts it (TensileCreateLibrary.py, ``MasterSolutionLibrary`` @7d9fb68).
* ``name`` and ``kernelName`` -- min-names computed over the *whole build* (``getMinNaming`` +
  ``applyNaming``, TensileCreateLibrary.py:793,1499 @7d9fb68): the same kernel gets a longer or
  shorter name when the other solutions of the build change. Names are not identities either way:
  they omit launch settings such as WorkGroupMapping, StaggerU or GlobalSplitU.
* ``libraryLogicIndex`` -- the logic file's ``SolutionIndex`` (``Contractions.py:663``
  ``rv.libraryLogicIndex = int(info.get("SolutionIndex", -1))`` in both tensilelite @7d9fb68 and
  Tensile @a164ed70 ``Contractions.py:562``), which AMD's merge tools renumber when a logic file is
  retuned or merged (tensilelite ``Utilities/merge.py`` ``reindexSolutions``), although the kernel
  is unchanged. Tensile masters (``corpus/masters``) carry the same four fields and renumber
  ``index`` the same way (``SolutionLibrary.py:517,587`` @a164ed70 ``soln.index = curIndex``), so
  both dialects drop the same set.

Everything else -- predicates, problem type, size mapping, ``ideals``/``linearModel``,
``internalArgsSupport`` -- decides what the runtime does with the kernel and stays in the
identity. ``SolutionUID`` (newer dict-form tensilelite logic: an optional field right after
``SolutionIndex``, kept byte for byte where present) is set aside from the record comparison and
compared on its own *when both records carry it*: a build that has it names the kernel for good,
and a library without it still matches by record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

#: Fields a build renumbers or renames: not part of a solution's identity.
RENUMBERED_FIELDS = frozenset({"index", "name", "kernelName", "libraryLogicIndex"})

#: Spellings of the stable solution id of newer tensilelite (logic ``SolutionUID``).
UID_FIELDS = ("SolutionUID", "solutionUID")


def solution_identity(record: Mapping[str, Any]) -> str:
    """A master solution record without the renumbered fields and the UID, as one canonical string."""
    kept = {key: value for key, value in record.items() if key not in RENUMBERED_FIELDS and key not in UID_FIELDS}
    return json.dumps(kept, sort_keys=True, default=str)


def solution_uid(record: Mapping[str, Any]) -> str | None:
    """The record's ``SolutionUID`` as text, or None when it has none."""
    for key in UID_FIELDS:
        if record.get(key) is not None:
            return str(record[key])
    return None


def same_solution(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """True when two records (of any two builds) are the same solution (see the module docstring)."""
    uids = solution_uid(first), solution_uid(second)
    if uids[0] is not None and uids[1] is not None and uids[0] != uids[1]:
        return False
    return solution_identity(first) == solution_identity(second)


class IdentityTable:
    """The solutions of one build by identity: which indices are "the same" as a given record.

    ``records`` is a list of records or a mapping ``index -> record`` whose values may be decoded
    on demand (:class:`tensilekit.remapping.LibraryRecords`). Identities are computed once each, and
    the by-identity index is built on the first :meth:`matches` (a build only looked *up in*, the
    OLD one of a remap, decodes just the records asked for). Records are indexed with their UID,
    so a lookup is two dictionary reads however many records share an identity.
    """

    def __init__(self, records: Iterable[Mapping[str, Any]] | Mapping[int, Mapping[str, Any]]) -> None:
        self.records: Mapping[int, Mapping[str, Any]] = (
            records if isinstance(records, Mapping) else {int(record["index"]): record for record in records}
        )
        self._identities: dict[int, str] = {}
        self._by_identity: dict[str, list[int]] | None = None
        self._by_uid: dict[tuple[str, str | None], list[int]] = defaultdict(list)

    def identity(self, index: int) -> str:
        """The identity of this build's solution ``index`` (computed once)."""
        found = self._identities.get(index)
        if found is None:
            found = self._identities[index] = solution_identity(self.records[index])
        return found

    def _index(self) -> dict[str, list[int]]:
        if self._by_identity is None:
            self._by_identity = defaultdict(list)
            for index, record in self.records.items():
                identity = self.identity(index)
                self._by_identity[identity].append(index)
                self._by_uid[identity, solution_uid(record)].append(index)
        return self._by_identity

    def matches(self, record: Mapping[str, Any], identity: str | None = None) -> list[int]:
        """Indices of this build's solutions that are ``record``'s solution, ascending.

        ``identity`` is ``record``'s :func:`solution_identity` when the caller has it already.
        """
        by_identity = self._index()
        identity = solution_identity(record) if identity is None else identity
        uid = solution_uid(record)
        if uid is None:
            return sorted(by_identity.get(identity, []))
        return sorted(self._by_uid.get((identity, uid), []) + self._by_uid.get((identity, None), []))


__all__ = ["RENUMBERED_FIELDS", "UID_FIELDS", "IdentityTable", "same_solution", "solution_identity", "solution_uid"]

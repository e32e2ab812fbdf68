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
    """The solutions of one build by identity: which indices are "the same" as a given record."""

    def __init__(self, records: Iterable[Mapping[str, Any]]) -> None:
        self.records: dict[int, Mapping[str, Any]] = {}
        self._by_identity: dict[str, list[int]] = defaultdict(list)
        for record in records:
            index = int(record["index"])
            self.records[index] = record
            self._by_identity[solution_identity(record)].append(index)

    def matches(self, record: Mapping[str, Any]) -> list[int]:
        """Indices of this build's solutions that are ``record``'s solution, ascending."""
        uid = solution_uid(record)
        found = self._by_identity.get(solution_identity(record), [])
        return sorted(index for index in found if uid is None or solution_uid(self.records[index]) in (None, uid))


__all__ = ["RENUMBERED_FIELDS", "UID_FIELDS", "IdentityTable", "same_solution", "solution_identity", "solution_uid"]

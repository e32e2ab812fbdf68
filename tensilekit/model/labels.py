"""The readable forms every command prints: a GEMM size, a kernel name's short form, a problem
type's short label, the settings two kernel names differ in.

One spelling in one place (issue 32 items 5-7): ``select``, ``coverage``, ``diff`` and ``tune``
print a size as :func:`size_text` (``24x128x699 batch 2048``) and key it in JSON as
:data:`SIZE_KEYS`; a kernel name on a terminal is :func:`short_kernel_name` (the full name is a
``--full-names`` away, and always what a pipe or ``--json`` gets, as git shows short hashes and
``--no-abbrev-commit`` the full ones). Pure text: no I/O, no model imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

SIZE_KEYS = ("m", "n", "k", "batch")
"""The JSON keys of a GEMM size, in every command's records."""

SIZE_HEADER = "M x N x K"
"""The heading of a table column of :func:`size_text` sizes."""


def size_text(m: Any, n: Any, k: Any, batch: Any = 1) -> str:
    """``MxNxK``, with `` batch B`` when the GEMM is batched: one spelling for every command."""
    text = f"{m}x{n}x{k}"
    return text if batch in (1, None) else f"{text} batch {batch}"


def size_record_text(record: Mapping[str, Any]) -> str:
    """:func:`size_text` of a record keyed by :data:`SIZE_KEYS` (``batch`` may be left out)."""
    return size_text(record.get("m"), record.get("n"), record.get("k"), record.get("batch", 1))


def table_key_text(key: Sequence[Any]) -> str:
    """A GEMM table key as a size: a 4-number key is ``[M, N, batch, K]`` (free0, free1, batch,
    summation: the order Tensile's and tensilelite's GEMM logic tables and masters store sizes in,
    Tensile/LibraryLogic.py ``ProblemSizes`` / tensilelite ContractionProblem ``sizes()``); any
    other key (leading dimensions, hipBLASLt extras) is shown as its numbers."""
    if len(key) == 4:
        m, n, batch, k = key
        return size_text(m, n, k, batch)
    return "[" + ", ".join(str(value) for value in key) + "]"


_SIZE_PROPERTIES = {"FreeSizeA": "m", "FreeSizeB": "n", "BoundSize": "k", "BatchSize": "batch"}
"""A master ``Matching`` table's size properties (index 0) by their :data:`SIZE_KEYS` name."""


def matching_key_text(key: Sequence[Any], properties: Sequence[str] | None) -> str:
    """A table key as a size: by its table's property names (a master ``Matching`` node:
    ``FreeSizeA``, ``FreeSizeB``, ``BoundSize`` [, ``BatchSize``]) when they are M, N and K;
    without names, by :func:`table_key_text`'s logic-table order."""
    if properties is None or len(properties) != len(key):
        return table_key_text(key)
    named = {_SIZE_PROPERTIES.get(name): value for name, value in zip(properties, key, strict=True)}
    if None in named or not {"m", "n", "k"} <= named.keys():
        return "[" + ", ".join(str(value) for value in key) + "]"
    return size_text(named["m"], named["n"], named["k"], named.get("batch", 1))


# a kernel name's tokens kept in its short form: the problem-type head, then the settings a
# person tells tunings apart by (macro tile incl. depth U, matrix instruction, global split U,
# work-group mapping, stream-K); the letters must be followed by a digit (MIAV, GSUASB are others)
_KEPT_SETTING = re.compile(r"^(MT|MI|GSU|WGM|SK)\d")
_SETTING = re.compile(r"^([A-Za-z]+)")


def _head_length(tokens: Sequence[str]) -> int:
    """Tokens before the first setting (``Cijk_Ailk_Bljk_HHS_BH``): the problem type."""
    for position, token in enumerate(tokens):
        if token.startswith("MT") and token[2:3].isdigit():
            return position
    return 0


def short_kernel_name(name: str) -> str:
    """A Tensile/tensilelite kernel name shortened for a terminal: its problem-type head and the
    settings in :data:`_KEPT_SETTING`, ``…`` marking what was left out (a name without a macro
    tile token, or one already short, is returned whole)."""
    tokens = name.split("_")
    head = _head_length(tokens)
    if head == 0:
        return name
    kept = tokens[:head] + [token for token in tokens[head:] if _KEPT_SETTING.match(token)]
    if len(kept) == len(tokens):
        return name
    return "_".join(kept) + "_…"


_MI_IN_NAME = re.compile(r"_MI(\d+x\d+x\d+x\d+)_")


def matrix_instruction_in_name(name: str | None) -> str | None:
    """``32x32x8x1`` of a kernel name's ``_MI32x32x8x1_`` (None without one): what a master whose
    record lacks the matrix instruction still shows."""
    found = _MI_IN_NAME.search(name) if name else None
    return found.group(1) if found else None


def kernel_name(name: str, *, full: bool) -> str:
    """The name a command shows: whole when ``full``, else :func:`short_kernel_name`."""
    return name if full else short_kernel_name(name)


def kernel_name_changes(a: str | None, b: str | None) -> list[str]:
    """The settings two kernel names differ in, as ``WGM8 → WGM4`` (a token only one side has is
    ``-X`` or ``+X``). Tokens are paired by their leading letters (the parameter abbreviation)."""
    if not a or not b or a == b:
        return []
    tokens_a, tokens_b = a.split("_"), b.split("_")
    if len(tokens_a) == len(tokens_b):  # one naming: paired by position (Tensile writes a fixed order)
        return [f"{x} → {y}" for x, y in zip(tokens_a, tokens_b, strict=True) if x != y]
    only_a = [token for token in tokens_a if token not in tokens_b]
    only_b = [token for token in tokens_b if token not in tokens_a]
    changes = []
    for token in only_a:
        letters = _SETTING.match(token)
        partner = next(
            (other for other in only_b if letters and _SETTING.match(other) and _letters(other) == letters.group(1)),
            None,
        )
        if partner is not None:
            only_b.remove(partner)
            changes.append(f"{token} → {partner}")
        else:
            changes.append(f"-{token}")
    return changes + [f"+{token}" for token in only_b]


def _letters(token: str) -> str:
    found = _SETTING.match(token)
    return found.group(1) if found else ""


_TRANSPOSED = {"A": "i", "B": "l"}  # the free index an operand's first (contiguous) index has untransposed


def problem_type_label(parts: Sequence[str], kernel_names: Sequence[str | None] = ()) -> str | None:
    """A short label for a master table (``HHS_BH TN gfx942``) from the predicate path naming it
    and its kernels' names: the data-type token of the kernels' problem-type head, the transposes
    of the operation identifier (``Contraction_l_Alik_Bljk_Cijk_Dijk``: A ``T``, B ``N``), the
    processor. None when the path names none of these."""
    words: list[str] = []
    head = next((_type_token(name) for name in kernel_names if name and _type_token(name)), None)
    if head:
        words.append(head)
    operation = next((part for part in parts if part.startswith("Contraction_")), None)
    if operation is not None:
        letters = ""
        for operand in ("A", "B"):
            token = next((t for t in operation.split("_") if t.startswith(operand) and len(t) > 2), None)
            if token is None:
                break
            transposed = token[1] != _TRANSPOSED[operand]
            letters += ("C" if token.endswith("C") else "T") if transposed else "N"
        words.append(letters)
    processor = next((found.group() for part in parts if (found := re.search(r"gfx[0-9a-f]+", part))), None)
    if processor is not None:
        words.append(processor)
    return " ".join(words) or None


def _type_token(name: str) -> str:
    """``HHS_BH`` of ``Cijk_Ailk_Bljk_HHS_BH_MT…``: the head after the operands' index tokens."""
    tokens = name.split("_")
    head = _head_length(tokens)
    # after the B operand's index token (``Bljk``): a custom kernel's name has more before it
    operand_b = next((place for place, token in enumerate(tokens[:head]) if re.fullmatch("B[a-z]+C?", token)), None)
    return "_".join(tokens[operand_b + 1 : head]) if operand_b is not None and head > operand_b + 1 else ""


__all__ = [
    "SIZE_HEADER",
    "SIZE_KEYS",
    "kernel_name",
    "kernel_name_changes",
    "matching_key_text",
    "matrix_instruction_in_name",
    "problem_type_label",
    "short_kernel_name",
    "size_record_text",
    "size_text",
    "table_key_text",
]

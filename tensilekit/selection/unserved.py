"""Why a library has no kernel for a query: the device, problem type or transposes it lacks.

When the runtime finds no kernel the answer alone ("null") does not say whether the library
simply has no row for this device or problem type — a mistyped ``--arch``, single precision asked
of a half-precision library — or whether its kernels exist but reject this size. This module
reads the library's rows and kernel predicates (:mod:`.served`) and says which, in one line
that names what the library does have.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from tensilekit.model.checks import unmodelled_predicates
from tensilekit.model.library import HardwareNode, MasterLibrary
from tensilekit.selection.problem import GemmProblem, Hardware, contraction_problem
from tensilekit.selection.served import (
    library_devices,
    nested_predicates,
    served_problem_types,
    served_row_types,
)


def _has_generic_device_row(library: MasterLibrary) -> bool:
    """A top-level row that names no processor serves every device."""
    root = library.library
    if not isinstance(root, HardwareNode):
        return True
    return any(
        not any(predicate.type == "Processor" for predicate in nested_predicates(row.predicate)) for row in root.rows
    )


def device_reason(library: MasterLibrary, hardware: Hardware) -> str | None:
    """Why no device row of ``library`` accepts ``hardware`` (processor, CU count), or None if one may."""
    if _has_generic_device_row(library):
        return None
    devices = library_devices(library)
    same_arch = [device for device in devices if device.arch == hardware.arch]
    if not same_arch:
        served = ", ".join(sorted({device.arch for device in devices})) or "no processor"
        return f"the library serves {served} only; it has no row for {hardware.arch}"
    if all(device.cu_count is not None for device in same_arch) and hardware.cu_count not in {
        device.cu_count for device in same_arch
    }:
        counts = ", ".join(str(device.cu_count) for device in same_arch)
        given = "no --cu-count" if hardware.cu_count is None else f"{hardware.cu_count} CUs"
        return f"the library's {hardware.arch} rows are for {counts} CUs only ({given} given)"
    return None


def problem_type_label(fields: dict[str, Any]) -> str:
    """``NN Half/Float8 HPA``: transposes, A type (/ B type, → D type, compute input type when they
    differ) and the flags that matter."""
    a_type = str(fields.get("a_type", "any type"))
    b_type = str(fields.get("b_type", a_type))
    d_type = str(fields.get("d_type", a_type))
    types = a_type if b_type == a_type else f"{a_type}/{b_type}"  # mixed inputs: A/B
    types += "" if d_type == a_type else f"→{d_type}"
    compute_input = fields.get("compute_input_type")
    if compute_input is not None and str(compute_input) != a_type:
        types += f" (compute input {compute_input})"
    transposes = f"{fields.get('trans_a', '?')}{fields.get('trans_b', '?')}"
    flags = []
    if fields.get("hpa"):
        flags.append("HPA")
    if fields.get("strided_batched") is False:
        flags.append("general batched")
    if fields.get("stochastic_rounding"):
        flags.append("stochastic rounding")
    return " ".join([transposes, types, *flags])


def _value(value: Any) -> str:
    return str(getattr(value, "value", value))


def _wanted(problem: GemmProblem) -> dict[str, Any]:
    """The problem-type fields of ``problem`` as the kernels' and rows' predicates name them."""
    resolved = contraction_problem(problem)
    # a real type's conjugate transpose is its transpose (the operation identifier has no C)
    real = _value(resolved.a_type) not in ("ComplexFloat", "ComplexDouble")
    return {
        "trans_a": "T" if real and problem.trans_a == "C" else problem.trans_a,
        "trans_b": "T" if real and problem.trans_b == "C" else problem.trans_b,
        "a_type": _value(resolved.a_type),
        "b_type": _value(resolved.b_type),
        "c_type": _value(resolved.c_type),
        "d_type": _value(resolved.d_type),
        "compute_input_type": _value(resolved.compute_input_type),
        "hpa": bool(resolved.hpa),
        "strided_batched": problem.strided_batched,
        "stochastic_rounding": problem.stochastic_rounding,
    }


def problem_type_reason(
    library: MasterLibrary | Sequence[dict[str, Any]], problem: GemmProblem, *, rows_of: str | None = None
) -> str | None:
    """Why no kernel of ``library`` (or of the problem types it serves, ``Library.served()``)
    serves ``problem``'s types / transposes / flags, or None if one may.

    ``rows_of``: the types given are a part of the library's rows (``gfx908 NN``, see
    :func:`row_type_reason`), not its kernels, and the answer says so."""
    served = library_served(library) if isinstance(library, MasterLibrary) else list(library)
    if not served or any(not fields for fields in served):
        return None
    wanted = _wanted(problem)

    def matches(fields: dict[str, Any], keys: tuple[str, ...]) -> bool:
        return all(key not in fields or _value(fields[key]) == _value(wanted[key]) for key in keys)

    if any(matches(fields, tuple(wanted)) for fields in served):
        return None
    has = "; ".join(dict.fromkeys(problem_type_label(fields) for fields in served))
    asked = problem_type_label(wanted)
    type_keys = ("a_type", "b_type", "c_type", "d_type")
    if not any(matches(fields, type_keys) for fields in served):
        what = "these types"
    elif not any(matches(fields, (*type_keys, "compute_input_type")) for fields in served):
        what = "this compute input type"
    elif not any(matches(fields, (*type_keys, "trans_a", "trans_b")) for fields in served):
        what = "these transposes"
    else:
        what = "this HPA / batching / rounding variant"
    if rows_of is not None:
        return f"the library has no kernel for {asked} ({what}); it has: {has} ({rows_of}; {_ROWS_ONLY})"
    return f"the library has no kernel for {asked} ({what}); it has: {has}"


_ROWS_ONLY = (
    "read off the rows, the kernels not decoded: rows name types, transposes and some flags, not every "
    "flag a kernel asks for, such as general batching"
)


def row_type_reason(library: MasterLibrary, problem: GemmProblem, hardware: Hardware) -> str | None:
    """:func:`problem_type_reason` from the rows one query reaches (``hardware``'s processor, the
    problem's operation; every operation's only when the library has no entry for it) instead of
    every kernel: cheap on a partially read master, whose kernels would all be decoded to list
    their types. The answer says that it read rows only."""
    operation = contraction_problem(problem).op_id
    wanted = _wanted(problem)
    rows = served_row_types(library, processor=hardware.arch, operation=operation)
    scope = f"its {hardware.arch} {wanted['trans_a']}{wanted['trans_b']} rows"
    if not rows:  # no entry for these transposes: what the device's other entries serve
        rows, scope = served_row_types(library, processor=hardware.arch), f"its {hardware.arch} rows"
    return problem_type_reason(rows, problem, rows_of=scope) if rows else None


def library_served(library: MasterLibrary) -> list[dict[str, Any]]:
    """The problem types ``library`` serves: its kernels', or a lazy master's rows' (its kernels
    are in unread shards)."""
    if library.solutions:
        return served_problem_types(library, compute_input_type=True)
    return served_row_types(library)


_UNMODELLED_NOTES: dict[int, tuple[weakref.ref[MasterLibrary], str]] = {}
"""The note per library (by id; the entry goes when the library does): models are unhashable."""


def unmodelled_note(library: MasterLibrary) -> str:
    """``""``, or a clause naming the predicates of ``library`` tensilekit does not model (their
    solutions and rows are passed over, so one may be what stands between the problem and a
    kernel); worked out once per library."""
    cached = _UNMODELLED_NOTES.get(id(library))
    if cached is not None and cached[0]() is library:
        return cached[1]
    found = unmodelled_predicates(library)
    note = ""
    if found:
        names = ", ".join(repr(name) for name in sorted({name for _, name in found}))
        places = ", ".join(path for path, _ in found[:3]) + (", …" if len(found) > 3 else "")
        note = (
            f"; {len(found)} predicate(s) of type {names} are not modelled and were passed over ({places}): "
            "one may stand in the way"
        )
    key = id(library)
    _UNMODELLED_NOTES[key] = (weakref.ref(library, lambda _: _UNMODELLED_NOTES.pop(key, None)), note)
    return note


def no_kernel_reason(library: MasterLibrary, problem: GemmProblem, hardware: Hardware) -> str:
    """One line saying why the runtime finds no kernel for ``problem`` on ``hardware`` (the
    device and problem type only; ``Library.why_not`` also names the workspace check and caches)."""
    if not library.solutions:  # a lazy master: its kernels are in placeholder files, its types in its rows
        return (
            device_reason(library, hardware)
            or problem_type_reason(library, problem)
            or (
                "no kernel of this lazy library's placeholder files accepts this problem (--explain shows where the walk stops)"
            )
        )
    return (
        device_reason(library, hardware)
        or problem_type_reason(library, problem)
        or "kernels for this device and problem type exist, but none accepts this problem "
        "(size or alignment predicates fail; --explain shows each)"
        + unmodelled_note(library)
    )


__all__ = [
    "device_reason",
    "library_served",
    "no_kernel_reason",
    "problem_type_label",
    "problem_type_reason",
    "row_type_reason",
    "unmodelled_note",
]

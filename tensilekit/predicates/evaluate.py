"""Evaluate one Tensile predicate against a problem and a device: ``Verdict(passed, reason)``.

The semantics are those of the C++ runtime, predicate by predicate: problem predicates from
``ContractionProblemPredicates.hpp`` (Tensile, and the tensilelite variants of hipBLASLt),
hardware predicates from ``AMDGPUPredicates.hpp``, the task predicate ``WorkspaceCheck`` from
``TaskPredicates.hpp`` and tensilelite 5.x's ``LaunchLimits`` (``ContractionTaskPredicates.hpp``). ``spec/selection.md`` (b.5) is the table this module implements.

A predicate type this module does not know never passes silently: one the loader kept as an
:class:`~tensilekit.model.predicates.UnmodelledPredicate` fails with a reason that names it
(:func:`unmodelled_reason`), any other raises :class:`~tensilekit.errors.SelectionError`. Compound predicates short-circuit like ``std::all_of`` /
``std::any_of``; the reason then names the first deciding operand.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tensilekit.errors import SelectionError
from tensilekit.model.predicates import UnmodelledPredicate

if TYPE_CHECKING:  # the problem model is only needed for annotations (avoids an import cycle)
    from tensilekit.selection.problem import ContractionProblem, Hardware

TWO_POW_32 = 1 << 32
_SIZE_MOD = 1 << 64
#: ``CUEfficiency`` for metric ``Auto``: flops below a 1500³ square GEMM.
AUTO_CU_EFFICIENCY_FLOPS = 1500 * 1500 * 1500 * 2


class PredicateLike(Protocol):
    """Anything with a ``type`` (and optionally ``index``/``value``): the models, or raw shims."""

    @property
    def type(self) -> str: ...


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Outcome of one predicate: ``passed`` and a one-line human ``reason``."""

    passed: bool
    reason: str
    type: str = ""

    def __bool__(self) -> bool:
        return self.passed


_Handler = Callable[[Any, "ContractionProblem", "Hardware", Any], Verdict]


def _text(value: Any) -> str:
    """An enum member's file spelling (``Float``), anything else as ``str``."""
    return str(getattr(value, "value", value))


def _value(predicate: Any) -> Any:
    value: Any = getattr(predicate, "value", None)
    if hasattr(value, "model_dump") and not hasattr(value, "type"):
        return value.model_dump(by_alias=True)
    return value


def _index(predicate: Any) -> int:
    index = getattr(predicate, "index", None)
    if index is None:
        raise SelectionError(f"predicate {predicate.type} has no index")
    return int(index)


def _verdict(predicate: Any, passed: bool, detail: str) -> Verdict:
    return Verdict(bool(passed), f"{predicate.type}: {detail}", predicate.type)


def _compare(predicate: Any, left: Any, op: str, right: Any, passed: bool) -> Verdict:
    return _verdict(predicate, passed, f"{left} {op} {right}" if passed else f"not ({left} {op} {right})")


# -------------------------------------------------------------------------------- logic


def _true(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _verdict(pred, True, "always")


def _false(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _verdict(pred, False, "never")


@dataclasses.dataclass(frozen=True)
class PredicateRules:
    """How a runtime version evaluates the predicates whose meaning changed between versions
    (set per hipBLASLt version in :mod:`tensilekit.selection.hipblaslt_versions`)."""

    synchronizer_slots: int = 40960
    """The limit of the five-value ``SynchronizerSizeCheck`` (hipBLASLt 7d9fb683: 40 960; 0.12.1:
    409 600)."""


DEFAULT_RULES = PredicateRules()
"""hipBLASLt 7d9fb683's (and Tensile's) predicate rules."""


def _and(pred: Any, p: ContractionProblem, h: Hardware, s: Any, rules: PredicateRules = DEFAULT_RULES) -> Verdict:
    operands = _value(pred) or []
    for number, operand in enumerate(operands):
        verdict = evaluate(operand, p, h, solution=s, rules=rules)
        if not verdict.passed:
            return Verdict(False, f"And[{number}] {verdict.reason}", pred.type)
    return Verdict(True, f"And: all {len(operands)} hold", pred.type)


def _or(pred: Any, p: ContractionProblem, h: Hardware, s: Any, rules: PredicateRules = DEFAULT_RULES) -> Verdict:
    operands = _value(pred) or []
    for number, operand in enumerate(operands):
        verdict = evaluate(operand, p, h, solution=s, rules=rules)
        if verdict.passed:
            return Verdict(True, f"Or[{number}] {verdict.reason}", pred.type)
    return Verdict(False, f"Or: none of {len(operands)} holds", pred.type)


def _not(pred: Any, p: ContractionProblem, h: Hardware, s: Any, rules: PredicateRules = DEFAULT_RULES) -> Verdict:
    inner = evaluate(_value(pred), p, h, solution=s, rules=rules)
    return Verdict(not inner.passed, f"Not({inner.reason})", pred.type)


# -------------------------------------------------------------------------------- hardware


def _amdgpu(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    inner = evaluate(_value(pred), p, h, solution=s)
    return Verdict(inner.passed, f"AMDGPU({inner.reason})", pred.type)


def _processor(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = str(_value(pred)).lower()
    return _compare(pred, h.arch, "==", want, h.arch == want)


# tensilelite ``ChipIdRegistry`` (include/Tensile/AMDGPUPredicates.hpp, rocm-libraries): the PCI
# chip IDs a gfx950 device may use solutions of besides its own (mi355 / other mi350 parts -> mi350)
CHIP_ID_FALLBACKS: dict[int, tuple[int, ...]] = {
    0x75B0: (0x75A0,), 0x75A2: (0x75A0,), 0x75B2: (0x75A0,), 0x75A3: (0x75A0,), 0x75B3: (0x75A0,),
    0x75A8: (0x75A0,), 0x75B8: (0x75A0,),
}  # fmt: skip
_CHIP_ID_PROCESSORS = ("gfx950",)  # ChipIdRegistry::supportsChipIdPredicate (PciChipId only)


def _chip_applies(pred: Any, h: Hardware) -> bool:
    """Whether the device's chip ID takes part: known, and for ``PciChipId`` a gfx950 part."""
    if h.pci_chip_id is None:
        return False
    return pred.type == "PciChipID" or h.arch.lower() in _CHIP_ID_PROCESSORS


def chip_fallback_match(predicate: Any, h: Hardware) -> bool:
    """``HardwarePredicate::isFallbackMatch``: a chip-ID test in ``predicate`` that the device passes
    only through ``CHIP_ID_FALLBACKS`` (its own ID differs). Such a row's solution is kept while the
    rows after it are tried for an exact one (``ExactLogicLibrary::findBestSolution``)."""
    if predicate is None:
        return False
    if predicate.type in ("PciChipId", "PciChipID"):
        want = int(predicate.value)
        return (
            _chip_applies(predicate, h)
            and h.pci_chip_id != want
            and want in CHIP_ID_FALLBACKS.get(int(h.pci_chip_id or 0), ())
        )
    value = getattr(predicate, "value", None)
    children = value if isinstance(value, list) else [value]
    return any(chip_fallback_match(child, h) for child in children if hasattr(child, "type"))


def has_chip_predicate(predicate: Any) -> bool:
    if predicate is None:
        return False
    if predicate.type in ("PciChipId", "PciChipID"):
        return True
    value = getattr(predicate, "value", None)
    children = value if isinstance(value, list) else [value]
    return any(has_chip_predicate(child) for child in children if hasattr(child, "type"))


def _pci_chip_id(pred: Any, p: Hardware | ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = int(_value(pred))
    if not _chip_applies(pred, h):
        reason = "device PCI chip ID unknown" if h.pci_chip_id is None else f"no chip-ID rows on {h.arch}"
        return _verdict(pred, False, f"{reason}, needs 0x{want:x}")
    chip = int(h.pci_chip_id or 0)
    passed = chip == want or want in CHIP_ID_FALLBACKS.get(chip, ())
    how = " (fallback)" if passed and chip != want else ""
    return _compare(pred, f"0x{chip:x}", "==", f"0x{want:x}{how}", passed)


def _cu_count(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = int(_value(pred))
    if h.cu_count is None:
        return _verdict(pred, False, f"device CU count unknown, needs {want}")
    return _compare(pred, h.cu_count, "==", want, h.cu_count == want)


def _is_apu(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = bool(_value(pred))
    return _compare(pred, f"isAPU={int(h.is_apu)}", "==", int(want), h.is_apu == want)


# -------------------------------------------------------------------------------- sizes


def _free0_multiple(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    size = _free_size("A", _index(pred), p)
    value = int(_value(pred))
    return _compare(pred, f"M={size}", "% ==0", value, size % value == 0)


def _free1_multiple(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    size = _free_size("B", _index(pred), p)
    value = int(_value(pred))
    return _compare(pred, f"N={size}", "% ==0", value, size % value == 0)


def _free_size(tensor: str, index: int, p: ContractionProblem) -> int:
    if index != 0:
        raise SelectionError(f"free size index {index} of {tensor}: a GEMM has one free index per side")
    return p.m if tensor == "A" else p.n


def _batch_size(index: int, p: ContractionProblem) -> int:
    if index != 0:
        raise SelectionError(f"batch size index {index}: a GEMM has one batch index")
    return p.batch


def _bound_size(index: int, p: ContractionProblem) -> int:
    # BoundSizeMultiple: a negative index counts from the end (index -1 is the last bound index).
    if index < 0:
        index += 1
    if index != 0:
        raise SelectionError(f"bound size index {index}: a GEMM has one bound (summation) index")
    return p.k


def _batch_multiple(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    size, value = _batch_size(_index(pred), p), int(_value(pred))
    return _compare(pred, f"batch={size}", "% ==0", value, size % value == 0)


def _batch_equal(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    size, value = _batch_size(_index(pred), p), int(_value(pred))
    return _compare(pred, f"batch={size}", "==", value, size == value)


def _bound_multiple(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    size, value = _bound_size(_index(pred), p), int(_value(pred))
    return _compare(pred, f"K={size}", "% ==0", value, size % value == 0)


_SIZE_NAMES = ("M", "N", "batch", "K")


def _size_label(index: int, p: ContractionProblem) -> str:
    return f"{_SIZE_NAMES[index] if 0 <= index < 4 else index}={p.size(index)}"


def _size_equal(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    index, value = _index(pred), int(_value(pred))
    return _compare(pred, _size_label(index, p), "==", value, p.size(index) == value)


def _size_greater(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    index, value = _index(pred), int(_value(pred))
    return _compare(pred, _size_label(index, p), ">", value, p.size(index) > value)


def _size_less(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    index, value = _index(pred), int(_value(pred))
    return _compare(pred, _size_label(index, p), "<", value, p.size(index) < value)


def _size_multiple(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    index, value = _index(pred), int(_value(pred))
    return _compare(pred, _size_label(index, p), "% ==0", value, p.size(index) % value == 0)


def _size_in_range(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    index, bounds = _index(pred), _value(pred)
    low, high = int(_get(bounds, "min", 0)), int(_get(bounds, "max", (1 << 64) - 1))
    size = p.size(index)
    return _compare(pred, _size_label(index, p), "in", f"[{low}, {high})", low <= size < high)


def _problem_size_equal(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    # problemSizes() of a GEMM: free A, free B, batch, bound — the same order as size(i).
    return _size_equal(pred, p, h, s)


def _max_problem_size_greater(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value, largest = int(_value(pred)), max(p.m, p.n, p.k)
    return _compare(pred, f"max(M,N,K)={largest}", ">", value, largest > value)


def _leading_free0(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = int(_value(pred))
    return _compare(pred, f"M={p.m}", ">=", value, p.m >= value)


def _leading_free1(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = int(_value(pred))
    passed = p.n >= value or (p.lite.grouped_gemm and p.n == 0)
    return _compare(pred, f"N={p.n}", ">=", value, passed)


def _global_split_u_min_k(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = _value(pred)
    if isinstance(value, (list, tuple)):
        # tensilelite: [minK per GSU, solution GSU]; a forced GSU replaces the solution's; -1 = auto.
        gsu = p.lite.gsu if p.lite.gsu != 0 else int(value[1])
        if gsu == -1:
            return _verdict(pred, True, "auto GSU bypasses the check")
        min_k = (0 if gsu == 1 else gsu) * int(value[0])
    else:
        min_k = int(value)
    return _compare(pred, f"K={p.k}", ">=", min_k, p.k >= min_k)


# -------------------------------------------------------------------------------- strides, buffers


def _stride_equal(tensor: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        index, value = _index(pred), int(_value(pred))
        stride = p.stride(tensor, index)
        return _compare(pred, f"{tensor.upper()}.stride[{index}]={stride}", "==", value, stride == value)

    return handler


def _cd_strides_equal(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    passed = p.ldc == p.ldd and p.stride_c == p.stride_d
    expected = _value(pred)
    if isinstance(expected, bool):  # an older Tensile wrote CDStridesEqual with a value
        passed = passed == expected
    return _compare(pred, f"C.strides=(1,{p.ldc},{p.stride_c})", "==", f"D.strides=(1,{p.ldd},{p.stride_d})", passed)


def _ldc_equals_ldd(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _compare(pred, f"ldc={p.ldc}", "==", f"ldd={p.ldd}", p.ldc == p.ldd)


def _buffer_load(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    v = _value(pred)
    du0, du1 = int(_get(v, "DUorMT0")), int(_get(v, "DUorMT1"))
    shift_a, shift_b = int(_get(v, "ShiftPtrElemA")), int(_get(v, "ShiftPtrElemB"))
    a = ((p.lda * du0 + shift_a) * p.a_bytes) % _SIZE_MOD
    b = ((p.ldb * du1 + shift_b) * p.b_bytes) % _SIZE_MOD
    passed = a < TWO_POW_32 and b < TWO_POW_32
    detail = f"(lda={p.lda}·{du0}+{shift_a})·{p.a_bytes}={a} and (ldb={p.ldb}·{du1}+{shift_b})·{p.b_bytes}={b} < 2^32"
    return _verdict(pred, passed, detail if passed else f"not {detail}")


def _buffer_load_beta(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    if p.beta == 0:
        return _verdict(pred, True, "beta == 0, C not read")
    value = int(_value(pred))
    offset = (p.ldc * p.c_bytes * value) % _SIZE_MOD
    return _compare(pred, f"ldc={p.ldc}·{p.c_bytes}·{value}={offset}", "<", "2^32", offset < TWO_POW_32)


def _buffer_store(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = int(_value(pred))
    offset = (p.ldd * p.d_bytes * value) % _SIZE_MOD
    return _compare(pred, f"ldd={p.ldd}·{p.d_bytes}·{value}={offset}", "<", "2^32", offset < TWO_POW_32)


# -------------------------------------------------------------------------------- problem type, flags


def _op_id(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = str(_value(pred))
    return _compare(pred, p.op_id, "==", want, p.op_id == want)


def _types_equal(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = [str(item) for item in _value(pred)]
    have = [p.a_type.value, p.b_type.value, p.c_type.value, p.d_type.value]
    if len(want) == 5:  # tensilelite adds the compute input type
        have.append(p.compute_input_type.value)
    elif len(want) != 4:
        raise SelectionError(f"TypesEqual needs 4 or 5 types, got {len(want)}")
    return _compare(pred, f"({', '.join(have)})", "==", f"({', '.join(want)})", have == want)


def _flag_equal(attribute: str, label: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have, want = bool(getattr(p, attribute)), bool(_value(pred))
        return _compare(pred, f"{label}={have}", "==", want, have == want)

    return handler


def _lite_equal(attribute: str, label: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have, want = getattr(p.lite, attribute), _value(pred)
        if isinstance(have, bool):
            want = bool(want)
        return _compare(pred, f"{label}={have}", "==", want, have == want)

    return handler


def _string_equal(attribute: str, label: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have, want = _text(getattr(p, attribute)), str(_value(pred))
        return _compare(pred, f"{label}={have}", "==", want, have == want)

    return handler


def _compatible(attribute: str, label: str) -> _Handler:
    # KernelLanguageCompatible / ArithmeticUnitCompatible: a problem left at Any accepts every kernel.
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have, want = _text(getattr(p, attribute)), str(_value(pred))
        return _compare(pred, f"{label}={have}", "in", f"(Any, {want})", have in ("Any", want))

    return handler


def _problem_flag(attribute: str, label: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have = bool(getattr(p, attribute))
        return _verdict(pred, have, f"{label} is {'set' if have else 'not set'}")

    return handler


def _beta_zero(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _compare(pred, f"beta={p.beta}", "==", 0.0, p.beta == 0.0)


def _beta_one(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _compare(pred, f"beta={p.beta}", "==", 1.0, p.beta == 1.0)


def _scalar_value(attribute: str, label: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have, want = getattr(p, attribute), str(_value(pred))
        return _compare(pred, f"{label}={have}", "matches", want, want == "Any" or have == want)

    return handler


def _ai_ge(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = float(_value(pred))
    return _compare(pred, f"AI={p.arithmetic_intensity:.6g}", ">=", value, p.arithmetic_intensity >= value)


def _ai_le(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = float(_value(pred))
    return _compare(pred, f"AI={p.arithmetic_intensity:.6g}", "<=", value, p.arithmetic_intensity <= value)


def _cu_efficiency(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    metric = _text(p.performance_metric)
    if metric == "CUEfficiency":
        return _verdict(pred, True, "metric is CUEfficiency")
    if metric == "Auto":
        passed = p.flop_count < AUTO_CU_EFFICIENCY_FLOPS
        return _verdict(pred, passed, f"metric Auto and flops={p.flop_count} {'<' if passed else '>='} 2·1500³")
    return _verdict(pred, False, f"metric is {metric}")


def _metric_equal(metric: str) -> _Handler:
    def handler(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
        have = _text(p.performance_metric)
        return _compare(pred, f"metric={have}", "==", metric, have == metric)

    return handler


def _marker(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    return _verdict(pred, True, "row marker, always true")


def _persistent_kernel(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    have = p.persistent_kernel_eligible
    return _verdict(pred, have, "problem is PK-eligible" if have else "problem is not PK-eligible")


# -------------------------------------------------------------------------------- task


def required_workspace(p: ContractionProblem, h: Hardware, solution: Any) -> int:
    """``ContractionSolution::requiredWorkspaceSize``: partial tiles + flags for non-atomic Stream-K
    (``streamK >= 2``, grid = CU count), else ``M·N·batch·workspaceSizePerElemC``."""
    mapping = getattr(solution, "size_mapping", None)
    per_elem = int(getattr(mapping, "workspace_size_per_elem_c", 0) or 0)
    stream_k = int(getattr(mapping, "stream_k", 0) or 0)
    if stream_k >= 2:
        if h.cu_count is None:
            raise SelectionError("Stream-K workspace needs the device CU count (--cu-count)")
        tile = getattr(mapping, "macro_tile", None) or [0, 0]
        grid = h.cu_count
        return (int(tile[0]) * int(tile[1]) * per_elem * grid + grid * 4) % _SIZE_MOD
    return (p.m * p.n * p.batch * per_elem) % _SIZE_MOD


#: tensilelite's ``MAX_GSU_WORKSPACE_SIZE``: a GSU kernel needing more partial-sum space never runs.
MAX_GSU_WORKSPACE_SIZE = 128 * 1024 * 1024


def _workspace(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    sizes = _value(pred)
    if isinstance(sizes, (list, tuple)):
        return _lite_workspace(pred, [int(item) for item in sizes], p)
    if s is None:
        raise SelectionError("WorkspaceCheck is a task predicate: evaluate it with the solution")
    problem_type = getattr(s, "problem_type", None)
    if isinstance(problem_type, dict) and "computeInputType" in problem_type:
        # a tensilelite solution (its problem type names computeInputType): 5.x's task predicate
        return _lite_task_workspace(pred, p, h, s)
    need = required_workspace(p, h, s)
    have = "unlimited" if p.workspace_size == (1 << 64) - 1 else str(p.workspace_size)
    return _compare(pred, f"required={need}", "<=", f"workspace={have}", need <= p.workspace_size)


def lite_workspace_need(sizes: Sequence[int], p: ContractionProblem) -> tuple[int, bool]:
    """tensilelite ``WorkspaceCheck`` (hipBLASLt ``ContractionProblemPredicates.hpp``, problem
    predicate ``[elemC, elemBias, GSU]``): (bytes needed, within the 128 MiB GSU cap).

    ``gsu`` is the forced GSU or the solution's; a GSU of 1 needs no workspace. The bias
    reduction term only counts for gradient GEMMs with a bias (``reductionSize``)."""
    gsu = p.lite.gsu if p.lite.gsu > 0 else sizes[2]
    multiplier = gsu if gsu > 1 else 0
    elem_c, elem_bias = sizes[0] * multiplier, sizes[1] * multiplier
    partials = (p.m * p.n * p.batch * elem_c) % _SIZE_MOD
    reduction = 0
    lite = p.lite
    if lite.use_gradient and lite.use_bias and lite.bias_type is not None:
        if lite.bias_src == "D" and elem_c == 0:
            reduction = p.m * p.n * p.batch * p.compute_type.element_bytes
        elif lite.bias_src == "A":
            reduction = p.m * elem_bias
        elif lite.bias_src == "B":
            reduction = p.n * elem_bias
    return (partials + reduction) % _SIZE_MOD, partials <= MAX_GSU_WORKSPACE_SIZE


def _extra(mapping: Any, name: str) -> Any:
    extra = getattr(mapping, "model_extra", None) or {}
    return extra.get(name, 0)


#: ``streamk::best_predicted_grid_size``'s cost terms (hipBLASLt 0.12.1 ``ContractionSolution.cpp``,
#: read from the 0.12.1 oracle's code): a fixed cost per workgroup (5.04 + 8.30), the cost of
#: writing partial sums when a tile is split, of one MAC-loop iteration, of each further peer's fixup.
_STREAMK_COSTS = (5.04 + 8.30, 5.47, 4.17, 18.59)


def _safe_ceil_div(n: int, d: int) -> int:
    """``streamk::math::safe_ceil_div`` (0 for a divisor of 0)."""
    return 0 if d == 0 else n // d + (n % d != 0)


@functools.lru_cache(maxsize=8192)
def predicted_streamk_grid(mt0: int, mt1: int, depth_u: int, m: int, n: int, k: int, batch: int, cu_count: int) -> int:
    """hipBLASLt 0.12.1's ``streamk::best_predicted_grid_size(MT0, MT1, DepthU, M, N, K, batch,
    1, CUs)`` (``TENSILE_STREAMK_DYNAMIC_GRID=3``, its default): the workgroup count g in 1..CUs
    of least predicted time ``a + b·[peers > 1] + c·⌈iters/g⌉ + d·(peers − 1)``, iters = tiles ×
    ⌈K/DepthU⌉ × batch, peers = ⌈⌈K/DepthU⌉ / ⌈iters/g⌉⌉; the first g of the least time. The
    sums are taken in the C++'s order in doubles, so ties fall as they fall there."""
    import numpy as np

    if cu_count < 1:
        return 0
    iters_per_tile = _safe_ceil_div(k, depth_u)
    iters = (_safe_ceil_div(m, mt0) * _safe_ceil_div(n, mt1) * iters_per_tile * batch) % _SIZE_MOD
    if iters == 0:  # every g predicts the same time (no iteration to share)
        return 1
    grids = np.arange(1, cu_count + 1, dtype=np.uint64)
    per_grid = iters // grids + (iters % grids != 0)
    peers = iters_per_tile // per_grid + (iters_per_tile % per_grid != 0)
    a, b, c, d = _STREAMK_COSTS
    runtime = (a + np.where(peers > 1, b, 0.0)) + c * per_grid.astype(np.float64)
    runtime = runtime + d * (peers - np.uint64(1)).astype(np.float64)
    return int(np.argmin(runtime)) + 1


def streamk_grid(p: ContractionProblem, h: Hardware, solution: Any, *, predicted: bool) -> int:
    """``ContractionSolution::getSKGrid``: the workgroups a Stream-K kernel launches (without the
    ``TENSILE_STREAMK_*`` overrides). ``predicted`` (hipBLASLt 0.12.1): the tile count
    ⌈M/MT0⌉·⌈N/MT1⌉·batch when K is 0, else :func:`predicted_streamk_grid`; otherwise (7d9fb683,
    whose ``TENSILE_STREAMK_DYNAMIC_GRID`` defaults to 0) the CU count.

    Raises SelectionError when the device's CU count is unknown."""
    if h.cu_count is None:
        raise SelectionError("Stream-K workspace needs the device CU count (--cu-count)")
    if not predicted:
        return h.cu_count
    mapping = solution.size_mapping
    tile = list(getattr(mapping, "macro_tile", None) or [1, 1])
    mt0, mt1 = max(int(tile[0]), 1), max(int(tile[1]), 1)
    if p.k == 0:  # getSKGrid returns the tiles before asking any grid model
        return -(-p.m // mt0) * -(-p.n // mt1) * p.batch
    depth_u = int(getattr(mapping, "depth_u", 0) or 0)
    return predicted_streamk_grid(mt0, mt1, depth_u, p.m, p.n, p.k, p.batch, h.cu_count)


def lite_required_workspace(
    p: ContractionProblem,
    h: Hardware,
    solution: Any,
    *,
    synchronizer: bool = True,
    streamk_grid_predicted: bool = False,
    streamk_partials_optional: bool = False,
) -> int:
    """tensilelite ``ContractionSolution::requiredWorkspaceSize`` (hipBLASLt 7d9fb683 era), what
    ``isSolutionSupported`` compares with the workspace: GSU partial sums, the gradient-bias
    reduction, amaxD per workgroup and the custom-kernel synchronizer (``synchronizer``: hipBLASLt
    0.12.1 counts it no more, ``HipblasltVersion.workspace_counts_synchronizer``); non-atomic
    Stream-K kernels a partial tile per workgroup of :func:`streamk_grid` (the CU count, or
    0.12.1's predicted grid with ``streamk_grid_predicted``); with ``streamk_partials_optional``
    (tensilelite 5.x, ``HipblasltVersion.streamk_partials_optional``) none when the grid divides the
    tiles or the partials exceed the problem's workspace (the kernel then runs data-parallel)."""
    import numpy as np

    mapping = solution.size_mapping
    per_elem_c = int(getattr(mapping, "workspace_size_per_elem_c", 0) or 0)
    per_elem_bias = int(_extra(mapping, "workspaceSizePerElemBias") or 0)
    tile = list(getattr(mapping, "macro_tile", None) or [1, 1])
    if int(getattr(mapping, "stream_k", 0) or 0) > 0 and not int(getattr(mapping, "stream_k_atomic", 0) or 0):
        grid = streamk_grid(p, h, solution, predicted=streamk_grid_predicted)
        partials = (int(tile[0]) * int(tile[1]) * per_elem_c * grid) % _SIZE_MOD
        if streamk_partials_optional:
            # tensilelite 5.x src/ContractionSolution.cpp @2d614b75 requiredWorkspaceSize: tiles =
            # getNumTiles(sizeMapping, 1) (no batch); partials only for skGrid > 0, tiles % skGrid != 0,
            # and only "if(idealWorkspace <= problem.workspaceSize())", else the kernel runs as DP
            tiles = _safe_ceil_div(p.m, max(int(tile[0]), 1)) * _safe_ceil_div(p.n, max(int(tile[1]), 1))
            if grid <= 0 or tiles == 0 or tiles % grid == 0 or partials > p.workspace_size:
                return 0
        return partials
    gsu = p.lite.gsu if p.lite.gsu > 0 else int(getattr(mapping, "global_split_u", 1) or 1)
    multiplier = gsu if gsu > 1 else 0
    size = p.m * p.n * p.batch * per_elem_c * multiplier
    problem_type = solution.problem_type or {}
    lite = p.lite
    if problem_type.get("useGradient") and problem_type.get("useBias") and lite.bias_type is not None:
        if lite.bias_src == "A":
            size += p.m * per_elem_bias * multiplier
        elif lite.bias_src == "B":
            size += p.n * per_elem_bias * multiplier
        elif lite.bias_src == "D" and multiplier == 0:
            size += p.m * p.n * p.batch * per_elem_bias * gsu
    tiles = int(np.ceil(np.float32(p.m) / np.float32(tile[0]))) * int(np.ceil(np.float32(p.n) / np.float32(tile[1])))
    if problem_type.get("outputAmaxD"):
        size += 4 * tiles * p.batch * max(gsu, 1)  # amaxD (Float) per workgroup
    if synchronizer and gsu > 1 and int(getattr(mapping, "global_accumulation", 0) or 0) == 3:
        size += tiles * int(_extra(mapping, "waveNum") or 0) * 4  # custom-kernel synchronizer
    return size % _SIZE_MOD


def _lite_workspace(pred: Any, sizes: list[int], p: ContractionProblem) -> Verdict:
    need, within_cap = lite_workspace_need(sizes, p)
    if not within_cap:
        return _verdict(pred, False, f"GSU partials {need} bytes > the 128 MiB cap")
    have = "unlimited" if p.workspace_size == (1 << 64) - 1 else str(p.workspace_size)
    return _compare(pred, f"required={need}", "<=", f"workspace={have}", need <= p.workspace_size)


#: ``std::numeric_limits<uint32_t>::max()``: the most work items (threads) one launch may hold.
MAX_LAUNCH_WORK_ITEMS = (1 << 32) - 1
#: tensilelite's ``MAX_WORKGROUP_NUMBER`` (``WorkgroupNumberCheck``, ``calculateAutoGSU``).
MAX_WORKGROUP_NUMBER = 16777216
#: ``GsuSynchronizerElements * SynchronizerGroupedSlots``: the MBSK synchronizer slots of a
#: non-grouped GEMM (``SynchronizerSizeCheck`` with six values).
_SYNCHRONIZER_SLOTS = 409600


def _launch_threads(mapping: Any) -> int:
    threads = 1
    for size in list(getattr(mapping, "work_group", None) or [1, 1, 1]):
        threads *= max(int(size), 1)
    return threads


def _tiles(p: ContractionProblem, mapping: Any) -> tuple[int, int]:
    """``(⌈M/MT0⌉, ⌈N/MT1⌉)``, integer ``CeilDivide`` as ``getNumWorkGroups`` computes them."""
    tile = list(getattr(mapping, "macro_tile", None) or [1, 1])
    return -(-p.m // max(int(tile[0]), 1)), -(-p.n // max(int(tile[1]), 1))


def lite_auto_gsu(p: ContractionProblem, h: Hardware, solution: Any) -> int:
    """tensilelite 5.x ``ContractionSolution::calculateAutoGSU`` (rocm-libraries
    ``projects/hipblaslt/tensilelite/src/ContractionSolution.cpp``, newest stored variant; the index
    lists the path @2d614b754ef5): the solution's ``globalSplitU`` unless it is -1; then
    min(⌊K/DU/3⌋, ⌊CUs/workgroups⌋) (at least 1), capped by ``MAX_WORKGROUP_NUMBER``, the bound
    size, the MBSK synchronizer and the launch grid (work items within ``uint32_t``)."""
    import numpy as np

    mapping = solution.size_mapping
    given = int(getattr(mapping, "global_split_u", 1) if mapping is not None else 1)
    if given != -1:
        return given
    if h.cu_count is None:
        raise SelectionError("the solution's GSU is chosen at run time from the CU count: give --cu-count")
    tiles0, tiles1 = _tiles(p, mapping)
    workgroups = tiles0 * tiles1 * p.batch
    if workgroups == 0:
        return 1
    depth_u = max(int(getattr(mapping, "depth_u", 1) or 1), 1)
    tile = list(getattr(mapping, "macro_tile", None) or [1, 1])
    gsu = min(max(1, int(np.floor(np.float32(p.k) / np.float32(depth_u) / 3.0))), max(1, h.cu_count // workgroups))
    if gsu > 1:
        ceil_m = np.ceil(np.float32(p.m) / np.float32(tile[0]))
        ceil_n = np.ceil(np.float32(p.n) / np.float32(tile[1]))
        gsu = min(gsu, int(MAX_WORKGROUP_NUMBER / ceil_m / ceil_n / p.batch))
    if gsu > 1:
        gsu = min(gsu, int(np.ceil(np.float32(p.k) / np.float32(depth_u))))
    if gsu > 1 and int(getattr(mapping, "global_accumulation", 0) or 0) == 3:
        usage = int(_extra(mapping, "synchronizerSizePerWG") or 0) * tiles0 * tiles1 * p.batch
        fits = (
            usage <= _SYNCHRONIZER_SLOTS // 16 and p.lite.grouped_gemm_count <= 16
            if p.lite.grouped_gemm
            else usage <= _SYNCHRONIZER_SLOTS
        )
        gsu = gsu if fits else 1
    gsu = min(gsu, (MAX_LAUNCH_WORK_ITEMS // _launch_threads(mapping)) // workgroups)
    return max(gsu, 1)


def _launch_limits(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    """tensilelite 5.x ``LaunchLimits`` task predicate (rocm-libraries ``projects/hipblaslt/
    tensilelite/include/Tensile/ContractionTaskPredicates.hpp`` @1ea8c64f53e4; its Python writer,
    ``TaskPredicate.FromOriginalState``, adds it to the non-Stream-K solutions of a 2026 client
    build): a Stream-K kernel (``sizeMapping.streamK != 0``) passes, its grid is the grid
    predictor's; any other kernel passes when ``calculateGrid``'s work items, workgroup threads ×
    ⌈M/MT0⌉ × ⌈N/MT1⌉ × batch × GSU (the problem's GSU, else :func:`lite_auto_gsu`), fit in
    ``uint32_t``. Later sources (``LaunchLimitsTest``, @d022434c) also bound Stream-K grids and
    cluster padding; that is not modelled. hipBLASLt 7d9fb683 and 0.12.1 know no such predicate
    (their runtime refuses a library naming it: ``Unknown subclass type``)."""
    if s is None:
        raise SelectionError("LaunchLimits is a task predicate: evaluate it with the solution")
    mapping = getattr(s, "size_mapping", None)
    if int(getattr(mapping, "stream_k", 0) or 0) != 0:
        return _verdict(pred, True, "Stream-K kernel: its grid is bounded by the grid predictor")
    tiles0, tiles1 = _tiles(p, mapping)
    gsu = p.lite.gsu if p.lite.gsu > 0 else lite_auto_gsu(p, h, s)
    items = _launch_threads(mapping) * tiles0 * tiles1 * p.batch * max(gsu, 1)
    return _compare(pred, f"work items={items}", "<=", MAX_LAUNCH_WORK_ITEMS, items <= MAX_LAUNCH_WORK_ITEMS)


def _lite_task_workspace(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    """tensilelite 5.x task ``WorkspaceCheck`` (``ContractionTaskPredicates.hpp`` @1ea8c64f53e4,
    written as ``{type: WorkspaceCheck}`` when ``_WorkspaceSizePerElemC > 0``): the GSU partial
    sums (GSU > 1) within ``MAX_GSU_WORKSPACE_SIZE``, then ``requiredWorkspaceSize`` within the
    workspace (the synchronizer is not counted, as from hipBLASLt 0.12.1 on; a Stream-K kernel's
    partial tiles only when they fit: ``TENSILELITE_5X.streamk_partials_optional``)."""
    mapping = s.size_mapping
    gsu = p.lite.gsu if p.lite.gsu > 0 else lite_auto_gsu(p, h, s)
    multiplier = gsu if gsu > 1 else 0
    per_elem_c = int(getattr(mapping, "workspace_size_per_elem_c", 0) or 0)
    partials = p.m * p.n * p.batch * per_elem_c * multiplier
    if partials > MAX_GSU_WORKSPACE_SIZE:
        return _verdict(pred, False, f"GSU partials {partials} bytes > the 128 MiB cap")
    if p.lite.gsu <= 0 and gsu != int(getattr(mapping, "global_split_u", 1) or 1):
        # requiredWorkspaceSize sizes the partials for the GSU the kernel runs with (auto GSU)
        p = dataclasses.replace(p, lite=p.lite.model_copy(update={"gsu": gsu}))
    need = lite_required_workspace(
        p, h, s, synchronizer=False, streamk_grid_predicted=True, streamk_partials_optional=True
    )  # the rules of TENSILELITE_5X, the only runtime that loads task predicates
    have = "unlimited" if p.workspace_size == (1 << 64) - 1 else str(p.workspace_size)
    return _compare(pred, f"required={need}", "<=", f"workspace={have}", need <= p.workspace_size)


# -------------------------------------------------------------------------------- tensilelite extras


def _activation(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want, have = str(_value(pred)), p.lite.activation_type
    hipblaslt_all = ("DGelu", "Gelu", "Relu", "Silu", "Clamp")
    passed = want == "All" or have in (want, "None") or (want == "Hipblaslt_all" and have in hipblaslt_all)
    return _compare(pred, f"activation={have}", "served by", want, passed)


def _activation_enum_white_list(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    allowed = [str(item) for item in _value(pred)]
    if p.lite.activation_type not in ("All", "Hipblaslt_all"):
        return _verdict(pred, True, "activation type is fixed")
    have = p.lite.activation_enum
    return _compare(pred, f"activationEnum={have}", "in", allowed, have in allowed)


def _activation_compute_type(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    if p.lite.activation_type == "None":
        return _verdict(pred, True, "no activation")
    have = p.lite.activation_compute_type.value if p.lite.activation_compute_type else "None"
    want = str(_value(pred))
    return _compare(pred, f"activationComputeType={have}", "==", want, have == want)


def _use_bias(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = int(_value(pred))
    return _verdict(pred, not p.lite.use_bias or bool(value), f"problem useBias={p.lite.use_bias}, solution {value}")


def _data_type_e(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    if not p.lite.use_e:
        return _verdict(pred, True, "E not used")
    have = p.lite.e_type.value if p.lite.e_type else "None"
    want = str(_value(pred))
    return _compare(pred, f"E type={have}", "==", want, have == want)


def _use_scale_ab(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    have, want = p.lite.use_scale_ab, str(_value(pred))
    return _compare(pred, f"useScaleAB={have!r}", "in", f"('', {want!r})", have in ("", want))


def _use_scale_cd(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want = bool(_value(pred))
    return _verdict(pred, not p.lite.use_scale_cd or want, f"problem useScaleCD={p.lite.use_scale_cd}, solution {want}")


def _use_scale_alpha_vec(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value, have = int(_value(pred)), p.lite.use_scale_alpha_vec
    return _verdict(pred, not have or bool(have & value), f"problem useScaleAlphaVec={have}, solution {value}")


def _bias_type_white_list(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    if not p.lite.use_bias:
        return _verdict(pred, True, "no bias")
    allowed = [str(item) for item in _value(pred)]
    have = p.lite.bias_type.value if p.lite.bias_type else "None"
    return _compare(pred, f"bias type={have}", "in", allowed, have in allowed)


_TENSOR_NUMBER = {"A": 0, "B": 1, "C": 2, "D": 3}


def _bias_src_white_list(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    lite = p.lite
    if not lite.use_bias:
        return _verdict(pred, True, "no bias")
    if lite.use_scale_alpha_vec and lite.use_bias != lite.use_scale_alpha_vec:
        return _verdict(pred, False, "bias and scaleAlphaVec disagree on the dimension")
    allowed = [int(item) for item in _value(pred)]
    source = _TENSOR_NUMBER[lite.bias_src]
    if source not in allowed:
        return _compare(pred, f"bias source={lite.bias_src}", "in", allowed, False)
    length = lite.bias_length
    if length is None:
        return _verdict(pred, True, f"bias source {lite.bias_src} allowed")
    factor_dim = {1: 0, 2: 1, 3: lite.factor_dim}.get(lite.use_bias, 0)
    if lite.bias_src in ("A", "D"):
        needed = p.m if (lite.use_bias == 1 or lite.bias_src != "D") else (p.m, p.n, p.batch)[factor_dim]
        return _compare(pred, f"bias length={length}", ">=", needed, length >= needed)
    if lite.bias_src == "B":
        return _compare(pred, f"bias length={length}", "==", p.n, length == p.n)
    return _verdict(pred, True, f"bias source {lite.bias_src} allowed")


def _amax_d(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    want, have = bool(_value(pred)), p.lite.output_amax_d
    passed = have == want and (not want or p.lite.gsu in (0, 1))
    return _compare(pred, f"outputAmaxD={have}", "==", want, passed)


def _device_user_arguments(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    lite = p.lite
    if lite.use_device_user_arguments and lite.grouped_gemm:
        want = bool(_value(pred))
        return _compare(pred, "useDeviceUserArguments=True", "==", want, want)
    return _verdict(pred, True, "device user arguments not requested for grouped GEMM")


def _synchronizer_size(
    pred: Any, p: ContractionProblem, h: Hardware, s: Any, rules: PredicateRules = DEFAULT_RULES
) -> Verdict:
    import numpy as np

    value = [int(item) for item in _value(pred)]
    tiles = np.ceil(np.float32(p.m) / np.float32(value[0])) * np.ceil(np.float32(p.n) / np.float32(value[1]))
    grouped_ok = not p.lite.grouped_gemm or p.lite.grouped_gemm_count <= 16
    if len(value) == 5:
        # hipBLASLt 7d9fb683 (Oct 2024) and 0.12.1: [MT0, MT1, MIWaveTile, NEPT/NEPBS, NumThreads], no
        # GSU and no batch term; NumThreads / 64 is an integer division (float arithmetic as in the
        # C++); the limit is the version's (rules.synchronizer_slots)
        total = tiles * np.float32(value[2]) * np.float32(value[4] // 64) * np.float32(value[3])
        limit = rules.synchronizer_slots
        passed = bool(total <= np.float32(limit)) and grouped_ok
        return _compare(pred, f"synchronizer slots={total}", "<=", limit, passed)
    # newer tensilelite: a sixth value, the solution's GSU, and the batch count
    gsu = p.lite.gsu if p.lite.gsu != 0 else value[5]
    if gsu in (-1, 1):
        return _verdict(pred, True, f"GSU={gsu} needs no synchronizer")
    total = tiles * np.float32(value[2]) * np.float32(value[4]) * np.float32(value[3]) * np.float32(p.batch)
    passed = bool(total <= np.float32(409600)) and grouped_ok
    return _compare(pred, f"synchronizer slots={total}", "<=", 409600, passed)


def _workgroup_number(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    import numpy as np

    value = [int(item) for item in _value(pred)]
    gsu = p.lite.gsu if p.lite.gsu != 0 else value[2]
    if gsu == -1:
        return _verdict(pred, True, "auto GSU bypasses the check")
    gsu = max(gsu, 1)
    tiles = np.ceil(np.float32(p.m) / np.float32(value[0])) * np.ceil(np.float32(p.n) / np.float32(value[1]))
    groups = tiles * np.float32(gsu) * np.float32(p.batch)
    return _compare(pred, f"workgroups={groups:.0f}", "<=", 16777216, bool(groups <= np.float32(16777216)))


def _workgroup_mapping_xcc(pred: Any, p: ContractionProblem, h: Hardware, s: Any) -> Verdict:
    value = [int(item) for item in _value(pred)]
    if value[0] == -1:
        return _verdict(pred, True, "XCC chosen at run time")
    xcc = 1 if p.lite.fallback_status else value[0]
    if xcc == 1:
        return _verdict(pred, True, "WGMXCC=1 fits any CU count")
    if value[1] == -1:
        if h.cu_count is None:
            raise SelectionError("WorkgroupMappingXCCCheck needs the device CU count")
        group = h.cu_count
    else:
        group = value[1]
    passed = xcc > 0 and (xcc & (xcc - 1)) == 0 and group % xcc == 0
    return _compare(pred, f"WGMXCCG={group}", "% ==0 with power-of-two", f"WGMXCC={xcc}", passed)


def _get(mapping: Any, key: str, default: Any = None) -> Any:
    if isinstance(mapping, Mapping):
        return mapping.get(key, default)
    return getattr(mapping, key, default)


HANDLERS: dict[str, _Handler] = {
    # logic
    "TruePred": _true,
    "FalsePred": _false,
    "And": _and,
    "Or": _or,
    "Not": _not,
    # hardware (AMDGPUPredicates.hpp)
    "AMDGPU": _amdgpu,
    "Processor": _processor,
    "TargetProcessor": _processor,
    "CUCount": _cu_count,
    "PciChipId": _pci_chip_id,
    "PciChipID": _pci_chip_id,
    "IsAPU": _is_apu,
    # sizes
    "Free0SizeMultiple": _free0_multiple,
    "Free1SizeMultiple": _free1_multiple,
    "BatchSizeMultiple": _batch_multiple,
    "BatchSizeEqual": _batch_equal,
    "BoundSizeMultiple": _bound_multiple,
    "ProblemSizeEqual": _problem_size_equal,
    "MaxProblemSizeGreaterThan": _max_problem_size_greater,
    "LeadingFree0SizesGreaterOrEqual": _leading_free0,
    "LeadingFree1SizesGreaterOrEqual": _leading_free1,
    "SizeEqual": _size_equal,
    "SizeGreaterThan": _size_greater,
    "SizeLessThan": _size_less,
    "SizeMultiple": _size_multiple,
    "SizeInRange": _size_in_range,
    "GlobalSplitUCheckMinK": _global_split_u_min_k,
    # strides and buffer limits
    "StrideAEqual": _stride_equal("a"),
    "StrideBEqual": _stride_equal("b"),
    "StrideCEqual": _stride_equal("c"),
    "StrideDEqual": _stride_equal("d"),
    "CDStridesEqual": _cd_strides_equal,
    "LDCEqualsLDD": _ldc_equals_ldd,
    "BufferLoadOffsetLimitCheck": _buffer_load,
    "BufferLoadOffsetLimitCheck_Beta": _buffer_load_beta,
    "BufferStoreOffsetLimitCheck": _buffer_store,
    # problem type and flags
    "OperationIdentifierEqual": _op_id,
    "TypesEqual": _types_equal,
    "HighPrecisionAccumulate": _flag_equal("hpa", "HPA"),
    "StridedBatched": _flag_equal("strided_batched", "stridedBatched"),
    "StochasticRounding": _flag_equal("stochastic_rounding", "stochasticRounding"),
    "DeterministicMode": _flag_equal("deterministic", "deterministicMode"),
    "F32XdlMathOp": _string_equal("f32_xdl_math_op", "f32XdlMathOp"),
    "KernelLanguageCompatible": _compatible("kernel_language", "kernelLanguage"),
    "ArithmeticUnitCompatible": _compatible("arithmetic_unit", "arithmeticUnit"),
    "KernelLanguage": _string_equal("kernel_language", "kernelLanguage"),
    "ArithmeticUnit": _string_equal("arithmetic_unit", "arithmeticUnit"),
    "Fp16AltImpl": _problem_flag("fp16_alt_impl", "fp16AltImpl"),
    "Fp16AltImplRound": _problem_flag("fp16_alt_impl_round", "fp16AltImplRound"),
    "CEqualsD": _problem_flag("c_equals_d", "cEqualsD"),
    "BetaZero": _beta_zero,
    "BetaOne": _beta_one,
    "AlphaValue": _scalar_value("alpha_restriction", "alphaRestriction"),
    "BetaValue": _scalar_value("beta_restriction", "betaRestriction"),
    "AIGreaterThanEqual": _ai_ge,
    "AILessThanEqual": _ai_le,
    "PersistentKernelCheck": _persistent_kernel,
    # performance metric rows and row markers
    "CUEfficiency": _cu_efficiency,
    "ExperimentalDTree": _metric_equal("ExperimentalDTree"),
    "ExperimentalGrid": _metric_equal("ExperimentalGrid"),
    "ExperimentalStreamK": _metric_equal("ExperimentalStreamK"),
    "ExperimentalMLP": _metric_equal("ExperimentalMLP"),
    "EqualityMatching": _marker,
    "FreeSizeMatching": _marker,
    "PredictionMatching": _marker,
    "RangeMatching": _marker,
    # task
    "WorkspaceCheck": _workspace,
    "LaunchLimits": _launch_limits,
    # tensilelite (hipBLASLt ContractionProblemPredicates.hpp)
    "GroupedGemm": _lite_equal("grouped_gemm", "groupedGemm"),
    "UseGradient": _lite_equal("use_gradient", "useGradient"),
    "UseE": _lite_equal("use_e", "useE"),
    "Sparse": _lite_equal("sparse", "sparse"),
    "SwizzleTensorA": _lite_equal("swizzle_tensor_a", "swizzleTensorA"),
    "SwizzleTensorB": _lite_equal("swizzle_tensor_b", "swizzleTensorB"),
    "ActivationNoGuard": _lite_equal("activation_no_guard", "activationNoGuard"),
    "Activation": _activation,
    "ActivationEnumWhiteList": _activation_enum_white_list,
    "ActivationComputeType": _activation_compute_type,
    "UseBias": _use_bias,
    "DataTypeE": _data_type_e,
    "UseScaleAB": _use_scale_ab,
    "UseScaleCD": _use_scale_cd,
    "UseScaleAlphaVec": _use_scale_alpha_vec,
    "BiasDataTypeWhiteList": _bias_type_white_list,
    "BiasSrcWhiteList": _bias_src_white_list,
    "AmaxDCheck": _amax_d,
    "SupportDeviceUserArguments": _device_user_arguments,
    "SynchronizerSizeCheck": _synchronizer_size,
    "WorkgroupNumberCheck": _workgroup_number,
    "WorkgroupMappingXCCCheck": _workgroup_mapping_xcc,
}
"""Predicate ``type`` → evaluator. Anything else is an error."""

#: Types whose ``value`` (or nested value) holds further predicates.
COMPOUND_TYPES = frozenset({"And", "Or", "Not", "AMDGPU"})


def evaluate(
    predicate: PredicateLike | None,
    problem: ContractionProblem,
    hardware: Hardware,
    *,
    solution: Any = None,
    rules: PredicateRules = DEFAULT_RULES,
) -> Verdict:
    """Evaluate ``predicate`` for ``problem`` on ``hardware``.

    ``solution`` is needed only for the task predicate ``WorkspaceCheck`` (it reads the solution's
    ``sizeMapping``). ``None`` as predicate is C++'s default ``True`` predicate. ``rules``: the
    runtime version's meaning of the predicates that changed (:class:`PredicateRules`).

    Raises:
        SelectionError: the predicate type is unknown, or the predicate cannot be evaluated for a
            GEMM (e.g. a size index beyond ``[M, N, batch, K]``).
    """
    if predicate is None:
        return Verdict(True, "no predicate (true)", "TruePred")
    kind = getattr(predicate, "type", None)
    ruled = _RULED.get(kind) if isinstance(kind, str) and rules is not DEFAULT_RULES else None
    if ruled is not None:
        return ruled(predicate, problem, hardware, solution, rules)
    handler = HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        if isinstance(predicate, UnmodelledPredicate):
            # loaded, but nothing says what it tests: never taken to hold (the solution or row
            # carrying it is passed over), and the reason names it
            return Verdict(False, unmodelled_reason(kind), str(kind))
        raise SelectionError(f"unknown predicate type {kind!r}: cannot decide whether it holds")
    return handler(predicate, problem, hardware, solution)


def unmodelled_reason(kind: object) -> str:
    """What selection says of a predicate type tensilekit does not model."""
    return f"predicate type {kind!r} is not modelled (tensilekit cannot tell whether it holds; passed over)"


_RULED: dict[str, Callable[[Any, ContractionProblem, Hardware, Any, PredicateRules], Verdict]] = {
    "And": _and,
    "Or": _or,
    "Not": _not,
    "SynchronizerSizeCheck": _synchronizer_size,
}
"""The handlers whose verdict depends on :class:`PredicateRules` (compounds pass them on)."""


def evaluate_all(
    predicates: Sequence[PredicateLike | None], problem: ContractionProblem, hardware: Hardware, *, solution: Any = None
) -> Verdict:
    """All of ``predicates`` in order (``canSolve`` = task ∧ problem ∧ hardware), first failure wins."""
    for predicate in predicates:
        verdict = evaluate(predicate, problem, hardware, solution=solution)
        if not verdict.passed:
            return verdict
    return Verdict(True, "all hold", "And")


__all__ = [
    "AUTO_CU_EFFICIENCY_FLOPS",
    "COMPOUND_TYPES",
    "DEFAULT_RULES",
    "HANDLERS",
    "MAX_GSU_WORKSPACE_SIZE",
    "MAX_LAUNCH_WORK_ITEMS",
    "MAX_WORKGROUP_NUMBER",
    "TWO_POW_32",
    "PredicateLike",
    "PredicateRules",
    "Verdict",
    "evaluate",
    "evaluate_all",
    "lite_auto_gsu",
    "lite_required_workspace",
    "predicted_streamk_grid",
    "lite_workspace_need",
    "required_workspace",
    "streamk_grid",
    "unmodelled_reason",
]

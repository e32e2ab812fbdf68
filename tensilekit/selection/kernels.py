"""Predicates compiled into Python expressions: one query (``scalar``) or a column of queries (``vector``).

:func:`compile_atom` turns one predicate into an :class:`Atom`: a Python expression over ``p``
(the problem) and ``h`` (the hardware). For one query ``p`` is a
:class:`~tensilekit.selection.problem.ContractionProblem` and ``h`` a ``Hardware``; for many, both
are one :class:`~tensilekit.selection.columns.ProblemColumns` view and the same expression (built
from ``==``, ``%``, ``&``, ``|``) works element-wise. Expressions are joined into generated
functions (:func:`generate`), so a table's whole predicate signature costs one Python call.

The semantics are those of :func:`tensilekit.predicates.evaluate.evaluate` (the reference, with
reasons). A predicate without a hand-written expression calls that reference — row by row in the
vector case — so the fast path never decides differently; it is only slower there.

``canSolve`` of a solution is the conjunction of its task, problem and hardware predicates;
flattening nested ``And`` gives its *atoms* (:func:`conjuncts`). Atoms are deduplicated across a
library by canonical key, so each distinct test runs once per query however many solutions share it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tensilekit.predicates.evaluate import (
    AUTO_CU_EFFICIENCY_FLOPS,
    DEFAULT_RULES,
    MAX_GSU_WORKSPACE_SIZE,
    TWO_POW_32,
    PredicateRules,
    evaluate,
)
from tensilekit.selection.problem import SIZE_MAX, ContractionProblem, Hardware

BoolArray = npt.NDArray[np.bool_]
Scalar = Callable[[ContractionProblem, Hardware], bool]
Vector = Callable[[Any], BoolArray]
_SIZE_MOD = 1 << 64
AtLeast = tuple[str, int, str]
"""(column, value, guard column or "") of :attr:`Atom.at_least`."""
Offset = tuple[str, int, int, str, int]
"""(column, scale, shift, bytes column, factor) of :attr:`Atom.offsets`, all constants >= 0."""


@dataclasses.dataclass(eq=False)
class Atom:
    """One compiled predicate: a scalar and a vector expression (``constant`` if query-independent)."""

    key: str
    scalar_expr: str
    vector_expr: str
    constant: bool | None = None
    helpers: dict[str, Any] = dataclasses.field(default_factory=dict)
    _scalar: Scalar | None = None
    _vector: Vector | None = None
    workspace_elem: int | None = None
    """tensilelite ``WorkspaceCheck``: the bytes per element of C it needs; for the usual problem
    it holds iff ``m * n * batch * workspace_elem`` fits (see :func:`_lite_workspace_atom`)."""
    at_least: AtLeast | None = None
    """``(column, value, guard)``: the atom holds iff ``p.column >= value``, for every query
    whose ``guard`` column is 0 (``guard`` empty: every query). Atoms of one column and guard
    are one rank per query (how many of their sorted values it reaches; see ``fast._Table``)."""
    offsets: tuple[Offset, ...] = ()
    """The buffer offset checks: the products ``(column * scale + shift) * bytes * factor`` that
    must stay below 2**32 (the atom holds if each does; see :meth:`holds_for_all`)."""

    def holds_for_all(self, largest: Callable[[str], int | None]) -> bool:
        """Whether the atom holds for every query whose columns ``largest`` bounds (see
        :meth:`~tensilekit.selection.columns.ColumnsLike.largest`) without evaluating it: each
        offset, and every step of its product, below 2**32 at the columns' bounds (the columns
        then neither negative nor wrapping around in int64, so each query's vector result holds)."""
        if not self.offsets:
            return False
        for column, scale, shift, bytes_column, factor in self.offsets:
            most, size = largest(column), largest(bytes_column)
            if most is None or size is None:
                return False
            step = most * scale
            if step >= TWO_POW_32 or step + shift >= TWO_POW_32:
                return False
            step = (step + shift) * size
            if step >= TWO_POW_32 or step * factor >= TWO_POW_32:
                return False
        return True

    @property
    def scalar(self) -> Scalar:
        if self._scalar is None:
            self._scalar = _lambda(self.scalar_expr, self.helpers)
        return self._scalar

    @property
    def vector(self) -> Vector:
        if self._vector is None:
            function = _lambda(self.vector_expr, self.helpers)

            def vector(c: Any) -> Any:
                result = np.asarray(function(c, c), dtype=bool)
                if result.shape == (c.size,):  # the usual case, without broadcast_to's overhead
                    return result.copy()  # (it may be a column of ``c``: the caller owns the result)
                return np.broadcast_to(result, (c.size,)).copy()  # a query-independent value

            self._vector = vector
        return self._vector


NAMESPACE: dict[str, Any] = {
    "np": np,
    "U64": np.uint64,
    "SIZE_MOD": _SIZE_MOD,
    "TWO_POW_32": TWO_POW_32,
    "AUTO_FLOPS": AUTO_CU_EFFICIENCY_FLOPS,
    "AUTO_FLOPS_U64": np.uint64(AUTO_CU_EFFICIENCY_FLOPS),
    "MAX_GSU_WS": MAX_GSU_WORKSPACE_SIZE,
}


def _lambda(expression: str, helpers: dict[str, Any]) -> Any:
    return eval(f"lambda p, h: ({expression})", {**NAMESPACE, **helpers})  # noqa: S307 (generated from models)


_FIELD = re.compile(r"\b([ph])\.(\w+)")


def generate(name: str, body: Sequence[str], helpers: dict[str, Any]) -> Any:
    """Compile a generated function ``name(p, h)`` from source lines (one level of indentation).

    Every ``p.x`` / ``h.x`` read is hoisted into a local once, since the same fields recur in many
    atoms of one signature.
    """
    fields = sorted(set(_FIELD.findall("\n".join(body))))
    preamble = [f"{owner}_{field} = {owner}.{field}" for owner, field in fields]
    lines = preamble + [_FIELD.sub(lambda match: f"{match.group(1)}_{match.group(2)}", line) for line in body]
    source = f"def {name}(p, h):\n" + "".join(f"    {line}\n" for line in lines)
    namespace = {**NAMESPACE, **helpers}
    exec(compile(source, f"<tensilekit:{name}>", "exec"), namespace)  # noqa: S102 (generated from models)
    function: Any = namespace[name]
    return function


SOLUTION_DEPENDENT = frozenset({"WorkspaceCheck", "LaunchLimits"})
"""Task predicates whose verdict also reads the solution (its ``sizeMapping``)."""


def is_lite_solution(solution: Any) -> bool:
    """A tensilelite (hipBLASLt) solution: its problem type names a ``computeInputType``."""
    problem_type = getattr(solution, "problem_type", None)
    return isinstance(problem_type, dict) and "computeInputType" in problem_type


def canonical_key(predicate: Any, solution: Any = None) -> str:
    """Identity of a predicate for deduplication (``WorkspaceCheck`` also depends on the solution)."""
    if hasattr(predicate, "model_dump"):
        data = predicate.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = {
            "type": predicate.type,
            "index": getattr(predicate, "index", None),
            "value": repr(getattr(predicate, "value", None)),
        }
    if predicate.type in SOLUTION_DEPENDENT:
        mapping = getattr(solution, "size_mapping", None)
        if is_lite_solution(solution):
            # tensilelite's task predicates read the solution's GSU (auto GSU: tile, DepthU,
            # workgroup, accumulation), so its whole sizeMapping is part of the identity
            data["solution"] = mapping.model_dump(mode="json", by_alias=True) if mapping is not None else None
        else:
            data["solution"] = [
                getattr(mapping, "workspace_size_per_elem_c", None),
                getattr(mapping, "stream_k", None),
                getattr(mapping, "macro_tile", None),
            ]
    return json.dumps(data, sort_keys=True)


def conjuncts(predicate: Any) -> list[Any]:
    """The operands of a (nested) ``And``, ``TruePred`` dropped; any other predicate is one operand."""
    if predicate is None or predicate.type == "TruePred":
        return []
    if predicate.type == "And":
        out: list[Any] = []
        for operand in predicate.value or []:
            out.extend(conjuncts(operand))
        return out
    return [predicate]


_SIZE_ATTR = ("m", "n", "batch", "k")


def _both(expression: str) -> tuple[str, str]:
    return expression, expression


def _kernel(predicate: Any, solution: Any) -> tuple[str, str] | bool | None:
    """(scalar, vector) expressions for ``predicate``; a bool if constant; None = use the reference."""
    kind = predicate.type
    value: Any = getattr(predicate, "value", None)
    index: Any = getattr(predicate, "index", None)
    if kind in ("TruePred", "EqualityMatching", "FreeSizeMatching", "PredictionMatching", "RangeMatching"):
        return True
    if kind == "FalsePred":
        return False
    if kind == "Processor":
        return _both(f"h.arch == {str(value).lower()!r}")
    if kind == "CUCount":
        return _both(f"h.cu_count == {int(value)!r}")
    if kind == "IsAPU":
        return _both(f"h.is_apu == {bool(value)!r}")
    if kind in ("Free0SizeMultiple", "Free1SizeMultiple", "BatchSizeMultiple", "BatchSizeEqual", "BoundSizeMultiple"):
        position = int(index) + (1 if kind == "BoundSizeMultiple" and int(index) < 0 else 0)
        if position != 0:
            return None  # the reference raises the right error
        attr = {"Free0SizeMultiple": "m", "Free1SizeMultiple": "n", "BoundSizeMultiple": "k"}.get(kind, "batch")
        if kind == "BatchSizeEqual":
            return _both(f"p.{attr} == {int(value)}")
        return _both(f"p.{attr} % {int(value)} == 0")
    if kind in ("SizeEqual", "ProblemSizeEqual", "SizeGreaterThan", "SizeLessThan", "SizeMultiple"):
        if not 0 <= int(index) < 4:
            return None
        attr = _SIZE_ATTR[int(index)]
        op = {"SizeEqual": "==", "ProblemSizeEqual": "==", "SizeGreaterThan": ">", "SizeLessThan": "<"}.get(kind)
        if op is None:
            return _both(f"p.{attr} % {int(value)} == 0")
        return _both(f"p.{attr} {op} {int(value)}")
    if kind == "SizeInRange":
        if not 0 <= int(index) < 4:
            return None
        attr = _SIZE_ATTR[int(index)]
        low = int(getattr(value, "min", 0))
        high = int(getattr(value, "max", SIZE_MAX))
        return _both(f"(p.{attr} >= {low}) & (p.{attr} < {high})")
    if kind == "MaxProblemSizeGreaterThan":
        v = int(value)
        return f"max(p.m, p.n, p.k) > {v}", f"np.maximum(np.maximum(p.m, p.n), p.k) > {v}"
    if kind == "LeadingFree0SizesGreaterOrEqual":
        return _both(f"p.m >= {int(value)}")
    if kind == "LeadingFree1SizesGreaterOrEqual":
        v = int(value)
        return (
            f"p.n >= {v} or (p.lite.grouped_gemm and p.n == 0)",
            f"(p.n >= {v}) | (p.lite_grouped_gemm & (p.n == 0))",
        )
    if kind == "GlobalSplitUCheckMinK" and not isinstance(value, (list, tuple)):
        return _both(f"p.k >= {int(value)}")
    if kind in ("StrideAEqual", "StrideBEqual", "StrideCEqual", "StrideDEqual"):
        tensor = kind[6].lower()
        position, v = int(index), int(value)
        if position == 0:
            return v == 1
        if position not in (1, 2):
            return None
        attr = f"ld{tensor}" if position == 1 else f"stride_{tensor}"
        return _both(f"p.{attr} == {v}")
    if kind == "CDStridesEqual":
        same = "((p.ldc == p.ldd) & (p.stride_c == p.stride_d))"
        if isinstance(value, bool):
            return _both(f"{same} == {value!r}")
        return _both(same)
    if kind == "LDCEqualsLDD":
        return _both("p.ldc == p.ldd")
    if kind == "BufferLoadOffsetLimitCheck":
        limits = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else dict(value)
        du0, du1 = int(limits["DUorMT0"]), int(limits["DUorMT1"])
        sa, sb = int(limits["ShiftPtrElemA"]), int(limits["ShiftPtrElemB"])
        return _both(
            f"(((p.lda * {du0} + {sa}) * p.a_bytes) < 4294967296) & (((p.ldb * {du1} + {sb}) * p.b_bytes) < 4294967296)"
        )
    if kind == "BufferStoreOffsetLimitCheck":
        return _both(f"p.ldd * p.d_bytes * {int(value)} < 4294967296")
    if kind == "BufferLoadOffsetLimitCheck_Beta":
        return _both(f"(p.beta == 0) | (p.ldc * p.c_bytes * {int(value)} < 4294967296)")
    if kind == "OperationIdentifierEqual":
        return _both(f"p.op_id == {str(value)!r}")
    if kind == "TypesEqual":
        types = [str(t) for t in value]
        names = ["a_type", "b_type", "c_type", "d_type", "compute_input_type"]
        if len(types) not in (4, 5):
            return None
        scalar = " and ".join(f"p.{n} == {t!r}" for n, t in zip(names, types, strict=False))
        vector = " & ".join(f"(p.{n} == {t!r})" for n, t in zip(names, types, strict=False))
        return scalar, vector
    flags = {
        "HighPrecisionAccumulate": "hpa",
        "StridedBatched": "strided_batched",
        "StochasticRounding": "stochastic_rounding",
        "DeterministicMode": "deterministic",
    }
    if kind in flags:
        return _both(f"p.{flags[kind]} == {bool(value)!r}")
    if kind in ("F32XdlMathOp", "KernelLanguage", "ArithmeticUnit"):
        attr = {
            "F32XdlMathOp": "f32_xdl_math_op",
            "KernelLanguage": "kernel_language",
            "ArithmeticUnit": "arithmetic_unit",
        }[kind]
        return _both(f"p.{attr} == {str(value)!r}")
    if kind in ("KernelLanguageCompatible", "ArithmeticUnitCompatible"):
        attr = "kernel_language" if kind == "KernelLanguageCompatible" else "arithmetic_unit"
        return _both(f"(p.{attr} == {str(value)!r}) | (p.{attr} == 'Any')")
    problem_flags = {
        "Fp16AltImpl": "fp16_alt_impl",
        "Fp16AltImplRound": "fp16_alt_impl_round",
        "CEqualsD": "c_equals_d",
        "PersistentKernelCheck": "persistent_kernel_eligible",
    }
    if kind in problem_flags:
        return _both(f"p.{problem_flags[kind]} == True")
    if kind == "BetaZero":
        return _both("p.beta == 0.0")
    if kind == "BetaOne":
        return _both("p.beta == 1.0")
    if kind in ("AlphaValue", "BetaValue"):
        want = str(value)
        if want == "Any":
            return True
        attr = "alpha_restriction" if kind == "AlphaValue" else "beta_restriction"
        return _both(f"p.{attr} == {want!r}")
    if kind == "AIGreaterThanEqual":
        return _both(f"p.arithmetic_intensity >= {float(value)!r}")
    if kind == "AILessThanEqual":
        return _both(f"p.arithmetic_intensity <= {float(value)!r}")
    if kind == "CUEfficiency":
        return (
            "p.performance_metric == 'CUEfficiency' or (p.performance_metric == 'Auto' and p.flop_count < AUTO_FLOPS)",
            "(p.performance_metric == 'CUEfficiency') | ((p.performance_metric == 'Auto') & (p.flop_count < AUTO_FLOPS_U64))",
        )
    if kind in ("ExperimentalDTree", "ExperimentalGrid", "ExperimentalStreamK", "ExperimentalMLP"):
        return _both(f"p.performance_metric == {kind!r}")
    if kind == "WorkspaceCheck" and solution is not None and not is_lite_solution(solution):
        mapping = getattr(solution, "size_mapping", None)
        per_elem = int(getattr(mapping, "workspace_size_per_elem_c", 0) or 0)
        if int(getattr(mapping, "stream_k", 0) or 0) >= 2:
            return None
        return (
            f"(p.m * p.n * p.batch * {per_elem}) % SIZE_MOD <= p.workspace_size",
            f"(p.m.astype(U64) * p.n.astype(U64) * p.batch.astype(U64) * U64({per_elem})) <= p.workspace_size",
        )
    return None


def _lite_workspace_atom(key: str, predicate: Any, sizes: list[int]) -> Atom:
    """tensilelite ``WorkspaceCheck`` ``[elemC, elemBias, GSU]``: compiled for the usual problem
    (no forced GSU, no gradient bias); other problems ask the reference."""
    gsu = sizes[2]
    elem_c = sizes[0] * (gsu if gsu > 1 else 0)
    name = f"_ws_{abs(hash(key)):x}"

    def scalar(p: ContractionProblem, h: Hardware) -> bool:
        if p.lite.gsu <= 0 and not p.lite.use_gradient:
            need = (p.m * p.n * p.batch * elem_c) % _SIZE_MOD
            return need <= MAX_GSU_WORKSPACE_SIZE and need <= p.workspace_size
        return evaluate(predicate, p, h).passed

    def vector(c: Any) -> BoolArray:
        need = c.m.astype(np.uint64) * c.n.astype(np.uint64) * c.batch.astype(np.uint64) * np.uint64(elem_c)
        out: BoolArray = (need <= np.uint64(MAX_GSU_WORKSPACE_SIZE)) & (need <= c.workspace_size)
        unusual = np.flatnonzero((c.lite_gsu > 0) | c.lite_use_gradient)
        for i in unusual.tolist():
            problem, hardware = c.row(i)
            out[i] = evaluate(predicate, problem, hardware).passed
        return out

    # inline for the usual problem (a generated signature evaluates dozens of these per query:
    # one per distinct workspace need, where a call each cost most of a warm query)
    usual = f"(_ws := (p.m * p.n * p.batch * {elem_c}) % SIZE_MOD) <= MAX_GSU_WS and _ws <= p.workspace_size"
    scalar_expr = f"(({usual}) if p.lite.gsu <= 0 and not p.lite.use_gradient else {name}(p, h))"
    return Atom(key, scalar_expr, f"{name}_v(p)", None, {name: scalar, f"{name}_v": vector}, workspace_elem=elem_c)


def _guarded_atom(
    key: str, predicate: Any, guard: tuple[str, str], fast: tuple[str, str], at_least: AtLeast | None = None
) -> Atom:
    """An atom compiled for the queries ``guard`` admits (``fast``); the others ask the reference."""
    name = f"_guarded_{abs(hash(key)):x}"
    guard_v = _lambda(guard[1], {})
    fast_v = _lambda(fast[1], {})

    def reference(p: ContractionProblem, h: Hardware) -> bool:
        return evaluate(predicate, p, h).passed

    def vector(c: Any) -> BoolArray:
        admitted = np.broadcast_to(np.asarray(guard_v(c, c), dtype=bool), (c.size,))
        out: BoolArray = np.broadcast_to(np.asarray(fast_v(c, c), dtype=bool), (c.size,)).copy()
        for i in np.flatnonzero(~admitted).tolist():
            problem, hardware = c.row(i)
            out[i] = evaluate(predicate, problem, hardware).passed
        return out

    scalar = f"(({fast[0]}) if ({guard[0]}) else {name}(p, h))"
    return Atom(key, scalar, f"{name}_v(p)", None, {name: reference, f"{name}_v": vector}, at_least=at_least)


_HIPBLASLT_ALL = ("DGelu", "Gelu", "Relu", "Silu", "Clamp")  # evaluate._activation's set


def _lite_kernel(key: str, predicate: Any) -> Atom | tuple[str, str] | bool | None:
    """tensilelite's feature predicates (semantics of :mod:`tensilekit.predicates.evaluate`)."""
    kind = predicate.type
    value: Any = getattr(predicate, "value", None)
    flags = {
        "GroupedGemm": "grouped_gemm", "UseGradient": "use_gradient", "UseE": "use_e",
        "ActivationNoGuard": "activation_no_guard", "SwizzleTensorA": "swizzle_tensor_a",
        "SwizzleTensorB": "swizzle_tensor_b",
    }  # fmt: skip
    if kind in flags:
        return (f"p.lite.{flags[kind]} == {bool(value)!r}", f"p.lite_{flags[kind]} == {bool(value)!r}")
    if kind == "Sparse":
        return (f"p.lite.sparse == {int(value)}", f"p.lite_sparse == {int(value)}")
    if kind == "UseBias":
        return True if int(value) else ("p.lite.use_bias == 0", "p.lite_use_bias == 0")
    if kind == "UseScaleAlphaVec":
        v = int(value)
        return (
            f"p.lite.use_scale_alpha_vec == 0 or (p.lite.use_scale_alpha_vec & {v}) != 0",
            f"(p.lite_use_scale_alpha_vec == 0) | ((p.lite_use_scale_alpha_vec & {v}) != 0)",
        )
    if kind == "UseScaleCD":
        return True if value else ("p.lite.use_scale_cd == False", "p.lite_use_scale_cd == False")
    if kind == "UseScaleAB":
        want = str(value)
        return (
            f"p.lite.use_scale_ab == '' or p.lite.use_scale_ab == {want!r}",
            f"(p.lite_use_scale_ab == '') | (p.lite_use_scale_ab == {want!r})",
        )
    if kind == "Activation":
        want = str(value)
        if want == "All":
            return True
        allowed = sorted({want, "None", *(_HIPBLASLT_ALL if want == "Hipblaslt_all" else ())})
        return (f"p.lite.activation_type in {tuple(allowed)!r}", f"np.isin(p.lite_activation_type, {allowed!r})")
    if kind == "ActivationEnumWhiteList":
        allowed = [str(item) for item in value]
        return (
            f"p.lite.activation_type not in ('All', 'Hipblaslt_all') or p.lite.activation_enum in {tuple(allowed)!r}",
            f"~np.isin(p.lite_activation_type, ['All', 'Hipblaslt_all']) | np.isin(p.lite_activation_enum, {allowed!r})",
        )
    if kind == "ActivationComputeType":
        want = str(value)
        return (
            "p.lite.activation_type == 'None' or (p.lite.activation_compute_type is not None"
            f" and p.lite.activation_compute_type.value == {want!r})",
            f"(p.lite_activation_type == 'None') | (p.lite_activation_compute_type == {want!r})",
        )
    if kind == "BiasDataTypeWhiteList":
        allowed = [str(item) for item in value]
        return (
            f"p.lite.use_bias == 0 or (p.lite.bias_type is not None and p.lite.bias_type.value in {tuple(allowed)!r})",
            f"(p.lite_use_bias == 0) | np.isin(p.lite_bias_type, {allowed!r})",
        )
    if kind == "DataTypeE":
        want = str(value)
        return (
            f"p.lite.use_e == False or (p.lite.e_type is not None and p.lite.e_type.value == {want!r})",
            f"(p.lite_use_e == False) | (p.lite_e_type == {want!r})",
        )
    if kind == "AmaxDCheck":
        if not value:
            return ("p.lite.output_amax_d == False", "p.lite_output_amax_d == False")
        return (
            "p.lite.output_amax_d == True and p.lite.gsu in (0, 1)",
            "(p.lite_output_amax_d == True) & ((p.lite_gsu == 0) | (p.lite_gsu == 1))",
        )
    if kind == "SupportDeviceUserArguments":
        if value:
            return True
        return (
            "not (p.lite.use_device_user_arguments and p.lite.grouped_gemm)",
            "~(p.lite_use_device_user_arguments & p.lite_grouped_gemm)",
        )
    if kind == "BiasSrcWhiteList":
        return _guarded_atom(key, predicate, ("p.lite.use_bias == 0", "p.lite_use_bias == 0"), ("True", "True"))
    if kind == "GlobalSplitUCheckMinK" and isinstance(value, (list, tuple)):
        v0, v1 = int(value[0]), int(value[1])
        least = (0 if v1 == 1 else v1) * v0
        min_k = "True" if v1 == -1 else f"p.k >= {least}"
        at_least = None if v1 == -1 else ("k", least, "lite_gsu")
        return _guarded_atom(key, predicate, ("p.lite.gsu == 0", "p.lite_gsu == 0"), (min_k, min_k), at_least)
    if kind == "WorkgroupMappingXCCCheck":
        xcc, group = int(value[0]), int(value[1])
        if xcc in (-1, 1):
            return True
        fits = xcc > 0 and (xcc & (xcc - 1)) == 0
        if group != -1:
            constant = fits and group % xcc == 0
            return True if constant else ("p.lite.fallback_status == True", "p.lite_fallback_status == True")
        xcc_ok = (
            (
                f"p.lite.fallback_status or h.cu_count % {xcc} == 0",
                f"p.lite_fallback_status | (h.cu_count % {xcc} == 0)",
            )
            if fits
            else ("p.lite.fallback_status == True", "p.lite_fallback_status == True")
        )
        return _guarded_atom(key, predicate, ("h.cu_count is not None", "h.cu_count >= 0"), xcc_ok)
    return None


def compile_atom(predicate: Any, solution: Any = None, rules: PredicateRules = DEFAULT_RULES) -> Atom:
    """Compile one predicate (compound ones included) into an :class:`Atom`, evaluated with the
    runtime's ``rules`` where the reference answers."""
    key = canonical_key(predicate, solution)
    kind = predicate.type
    if kind in ("And", "Or"):
        parts = [compile_atom(operand, solution, rules) for operand in (predicate.value or [])]
        return _combine(key, kind, parts)
    if kind in ("Not", "AMDGPU"):
        inner = compile_atom(predicate.value, solution, rules)
        if kind == "AMDGPU":
            return dataclasses.replace(inner, key=key, _scalar=None, _vector=None)
        if inner.constant is not None:
            return Atom(key, repr(not inner.constant), repr(not inner.constant), not inner.constant)
        return Atom(
            key, f"not ({inner.scalar_expr})", f"~np.asarray({inner.vector_expr}, dtype=bool)", None, inner.helpers
        )
    value = getattr(predicate, "value", None)
    if kind == "WorkspaceCheck" and isinstance(value, (list, tuple)):
        return _lite_workspace_atom(key, predicate, [int(item) for item in value])
    fast = _kernel(predicate, solution)
    if fast is None:
        lite = _lite_kernel(key, predicate)
        if isinstance(lite, Atom):
            return lite
        fast = lite
    if isinstance(fast, bool):
        return Atom(key, repr(fast), repr(fast), fast)
    if fast is not None:
        at_least: AtLeast | None = None
        if predicate.type == "LeadingFree0SizesGreaterOrEqual":  # _kernel's p.m >= value
            at_least = ("m", int(predicate.value), "")
        return Atom(key, fast[0], fast[1], at_least=at_least, offsets=_offsets(predicate))
    return _reference_atom(key, predicate, solution, rules)


def _offsets(predicate: Any) -> tuple[Offset, ...]:
    """:attr:`Atom.offsets` of a buffer offset check (as :func:`_kernel` compiles it), else ()."""
    kind, value = predicate.type, getattr(predicate, "value", None)
    if value is None:
        return ()
    if kind == "BufferLoadOffsetLimitCheck":
        limits = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else dict(value)
        du0, du1 = int(limits["DUorMT0"]), int(limits["DUorMT1"])
        sa, sb = int(limits["ShiftPtrElemA"]), int(limits["ShiftPtrElemB"])
        offsets: tuple[Offset, ...] = (("lda", du0, sa, "a_bytes", 1), ("ldb", du1, sb, "b_bytes", 1))
    elif kind == "BufferStoreOffsetLimitCheck":
        offsets = (("ldd", 1, 0, "d_bytes", int(value)),)
    elif kind == "BufferLoadOffsetLimitCheck_Beta":  # (beta == 0) | offset: the offset suffices
        offsets = (("ldc", 1, 0, "c_bytes", int(value)),)
    else:
        return ()
    return offsets if all(number >= 0 for offset in offsets for number in offset[1:] if isinstance(number, int)) else ()


def _reference_atom(key: str, predicate: Any, solution: Any, rules: PredicateRules = DEFAULT_RULES) -> Atom:
    name = f"_ref_{abs(hash(key)):x}"

    def scalar(p: ContractionProblem, h: Hardware) -> bool:
        return evaluate(predicate, p, h, solution=solution, rules=rules).passed

    def vector(c: Any) -> BoolArray:
        out = np.empty(c.size, dtype=bool)
        for i in range(c.size):
            problem, hardware = c.row(i)
            out[i] = evaluate(predicate, problem, hardware, solution=solution, rules=rules).passed
        return out

    return Atom(key, f"{name}(p, h)", f"{name}_v(p)", None, {name: scalar, f"{name}_v": vector})


def _combine(key: str, kind: str, parts: list[Atom]) -> Atom:
    is_and = kind == "And"
    if any(part.constant is (not is_and) for part in parts):
        value = not is_and
        return Atom(key, repr(value), repr(value), value)
    live = [part for part in parts if part.constant is None]
    if not live:
        return Atom(key, repr(is_and), repr(is_and), is_and)
    helpers: dict[str, Any] = {}
    for part in live:
        helpers.update(part.helpers)
    word, op = ("and", "&") if is_and else ("or", "|")
    scalar = f" {word} ".join(f"({part.scalar_expr})" for part in live)
    vector = f" {op} ".join(f"np.asarray({part.vector_expr}, dtype=bool)" for part in live)
    return Atom(key, scalar, vector, None, helpers)


class AtomTable:
    """Deduplicated atoms of one library: ``intern`` returns a stable id per distinct predicate."""

    def __init__(self, rules: PredicateRules = DEFAULT_RULES) -> None:
        self.rules = rules
        """The runtime's predicate rules every atom is compiled with."""
        self.atoms: list[Atom] = []
        self._ids: dict[str, int] = {}
        # interned (shared, frozen) predicate models: skip recomputing their canonical key
        self._by_object: dict[int, tuple[Any, int]] = {}

    def intern(self, predicate: Any, solution: Any = None) -> int:
        solution_free = predicate.type not in SOLUTION_DEPENDENT
        if solution_free:
            cached = self._by_object.get(id(predicate))
            if cached is not None and cached[0] is predicate:
                return cached[1]
        key = canonical_key(predicate, solution)
        found = self._ids.get(key)
        if found is None:
            found = len(self.atoms)
            self.atoms.append(compile_atom(predicate, solution, self.rules))
            self._ids[key] = found
        if solution_free:
            self._by_object[id(predicate)] = (predicate, found)
        return found


def all_of(atoms: Sequence[Atom], name: str) -> Scalar:
    """Generated ``name(p, h)``: the conjunction of ``atoms`` with short-circuit (scalar)."""
    live = [atom for atom in atoms if atom.constant is not True]
    if any(atom.constant is False for atom in live):
        never: Scalar = generate(name, ["return False"], {})
        return never
    helpers: dict[str, Any] = {}
    for atom in live:
        helpers.update(atom.helpers)
    body = [f"if not ({atom.scalar_expr}): return False" for atom in live] + ["return True"]
    function: Scalar = generate(name, body, helpers)
    return function


def bitmask_of(atoms: Sequence[Atom], name: str) -> Callable[[ContractionProblem, Hardware], int]:
    """Generated ``name(p, h)``: an int whose bit ``i`` says whether ``atoms[i]`` holds."""
    helpers: dict[str, Any] = {}
    body = ["s = 0"]
    for number, atom in enumerate(atoms):
        helpers.update(atom.helpers)
        if atom.constant is True:
            body.append(f"s |= {1 << number}")
        elif atom.constant is None:
            body.append(f"if {atom.scalar_expr}: s |= {1 << number}")
    body.append("return s")
    function: Callable[[ContractionProblem, Hardware], int] = generate(name, body, helpers)
    return function


def guarded_bitmask_of(
    required: Sequence[Atom], atoms: Sequence[Atom], name: str, places: Sequence[int] | None = None
) -> Callable[[ContractionProblem, Hardware], int | None]:
    """Generated ``name(p, h)``: None unless every ``required`` atom holds, else :func:`bitmask_of`'s
    int over ``atoms`` (one call where a table's signature took two); ``places[i]`` is the bit
    of ``atoms[i]`` (default ``i``)."""
    helpers: dict[str, Any] = {}
    body: list[str] = []
    for atom in required:
        helpers.update(atom.helpers)
        if atom.constant is False:
            body.append("return None")
        elif atom.constant is None:
            body.append(f"if not ({atom.scalar_expr}): return None")
    body.append("s = 0")
    for number, atom in enumerate(atoms):
        helpers.update(atom.helpers)
        bit = 1 << (number if places is None else places[number])
        if atom.constant is True:
            body.append(f"s |= {bit}")
        elif atom.constant is None:
            body.append(f"if {atom.scalar_expr}: s |= {bit}")
    body.append("return s")
    function: Callable[[ContractionProblem, Hardware], int | None] = generate(name, body, helpers)
    return function


__all__ = [
    "Atom",
    "AtomTable",
    "all_of",
    "bitmask_of",
    "guarded_bitmask_of",
    "canonical_key",
    "compile_atom",
    "conjuncts",
    "generate",
]

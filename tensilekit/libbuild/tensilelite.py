"""tensilelite (hipBLASLt 7d9fb683) logic files → master library, as its TensileCreateLibrary writes it.

The Tensile build is :mod:`tensilekit.libbuild.master`; the two differ in almost every level (no
``ArchitectureIndexMap``, no Fp16 rows, ~30 problem predicates, ``internalArgsSupport``, placeholder
names, row sorting), so the tensilelite one is a port of its own, from
``/work/shared/amd/tensilelite-7d9fb68/Tensile``:

* ``LibraryIO.parseLibraryLogicList``/``parseLibraryLogicData`` (LibraryIO.py:251-363): list-form
  files only (every hipBLASLt file); ``FreeSize`` tables cover ``[0, len(solutions))``;
* solution derivation: :mod:`tensilekit.model.derive_tensilelite`;
* ``Contractions.py``: ``ProblemType.FromOriginalState``/``predicates`` (54-334),
  ``ProblemPredicate`` (349-474), ``SizeMapping`` (476-560), ``InternalArgsSupport`` (562-581),
  ``Solution.FromOriginalState`` (598-650);
* ``SolutionLibrary.py``: ``MasterSolutionLibrary.FromOriginalState`` (299-477) with and without the
  lazy ``placeholder`` level, ``FixSolutionIndices``, ``merge`` (534-575), the ``PredicateLibrary``
  row merge and sort (251-270, ``Properties.Predicate.__lt__`` and
  ``Hardware.HardwarePredicate.__lt__``), ``MatchingLibrary``/``FreeSizeLibrary``;
* ``Prediction`` pools (Origami), which 7d9fb683 does not know: followed from the newer source,
  rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/SolutionLibrary.py`` @ 003add5959de
  (``PredictionLibrary``; the ``PredictionMatching`` row of ``selection``) and ``LibraryIO.py`` @
  09ee40199827 (the table is every solution, as for FreeSize); the solution records stay 7d9fb683's,
  and a pool whose solutions carry a 2026 Origami input these records cannot hold is refused;
* ``TensileCreateLibrary.generateLogicDataAndSolutions`` (1075-1152): files merged in the given
  order, indices continue from the first file's ``SolutionIndex`` values (no arch offset);
  ``generateKernelObjectsFromSolutions``/``getSolutionAndKernelWriters`` (kernel de-duplication and
  ``kernelMinNaming``) and ``applyNaming`` (``name`` and ``kernelName``), see
  :mod:`tensilekit.model.naming_tensilelite`.

The result is the raw tree (plain dicts in the writer's key order, so msgpack output needs no
re-ordering) per output file, as ``../shared/amd/build-master`` writes it.

hipBLASLt 0.12.1's TensileCreateLibrary (``../shared/amd/build-master-0.12.1``) differs in a few
rules, each a field of its :class:`~tensilekit.selection.hipblaslt_versions.HipblasltVersion`: the
swizzle fields and predicates and ``WorkgroupNumberCheck`` here, ``--experimental``
(:func:`experimental_logic_left_out`), and its ``Solution`` derivation (``derivation``, a
:class:`~tensilekit.model.derive_tensilelite.LiteDerivationRules`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tensilekit.errors import (
    InvalidValue,
    LibraryFormatError,
    Location,
    MergeError,
    MissingField,
    TensilekitError,
    error_context,
)
from tensilekit.model.derive_tensilelite import (
    LITE_DERIVATION_7D9FB683,
    CustomKernelConfig,
    LiteDerivationRules,
    LiteState,
    bias_type_list_default,
    problem_type,
    problem_types_differ,
    solution_state,
)
from tensilekit.model.naming import gfx_isa
from tensilekit.model.naming_tensilelite import MinNaming, name_full, name_min_5x, unique_kernels
from tensilekit.model.tensile_parameters import DataTypeInfo
from tensilekit.model.tensilelite_parameters import (
    ACTIVATION_TYPE_COLUMN,
    ACTIVATIONS,
    GLOBAL_SPLIT_U_PGR,
    MIN_K_FOR_GSU,
    TENSILELITE_VERSION,
    lite_type,
)

if TYPE_CHECKING:
    from tensilekit.selection.hipblaslt_versions import HipblasltVersion

_INDEX_NAMES = "ijklmnopqrstuvwxyz"

# ------------------------------------------------------------------------------------------
# predicates (Properties.Predicate / Hardware.HardwarePredicate)


class _DType:
    """A ``DataType`` value inside a predicate: ordered by its code, written as its enum name."""

    __slots__ = ("info",)

    def __init__(self, info: DataTypeInfo) -> None:
        self.info = info

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DType) and other.info.code == self.info.code

    def __lt__(self, other: _DType) -> bool:
        return self.info.code < other.info.code

    def __hash__(self) -> int:
        return hash(self.info.code)

    def state(self) -> str:
        return self.info.enum


class _Activation:
    """``ActivationType``: ordered by its lower-case value, written capitalised."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value.lower()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Activation) and other.value == self.value

    def __lt__(self, other: _Activation) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def state(self) -> str:
        return self.value.capitalize()


def _state(value: Any) -> Any:
    """``Utils.state`` on predicate values."""
    if isinstance(value, (Pred, _DType, _Activation)):
        return value.state()
    if isinstance(value, dict):
        return {k: _state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_state(v) for v in value]
    return value


class Pred:
    """``Properties.Predicate``: equality on (class, tag, value, index), AMD's ``__lt__``."""

    __slots__ = ("tag", "index", "value")

    def __init__(self, tag: str, *, index: Any = None, value: Any = None) -> None:
        self.tag, self.index, self.value = tag, index, value

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.tag == self.tag
            and other.value == self.value
            and other.index == self.index
        )

    def __hash__(self) -> int:
        return hash(self.tag)

    def __lt__(self, other: Pred) -> bool:
        # Properties.py:88-110: TruePred sorts last, dict values compare as sets of their values
        if other.tag == "TruePred":
            return self.tag != "TruePred"
        if self.tag == "TruePred":
            return False
        mine: Any = set(self.value.values()) if type(self.value) is dict else self.value
        theirs: Any = set(other.value.values()) if type(other.value) is dict else other.value
        return bool((self.tag, self.index, mine) < (other.tag, other.index, theirs))

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.tag}
        if self.index is not None:
            out["index"] = _state(self.index)
        if self.value is not None:
            out["value"] = _state(self.value)
        return out


class HardwarePred(Pred):
    """``Hardware.HardwarePredicate``: more CUs first, then by processor."""

    __slots__ = ()

    def _processor_and_cus(self) -> tuple[Pred | None, int]:
        inner = self.value
        if inner.tag == "And":
            proc = next((p for p in inner.value if p.tag == "Processor"), None)
            cus = next((p for p in inner.value if p.tag == "CUCount"), None)
            return proc, cus.value if cus is not None else 0
        return inner, 0

    def __lt__(self, other: Pred) -> bool:
        if other.tag == "TruePred" or self.tag == "TruePred":
            return super().__lt__(other)
        assert isinstance(other, HardwarePred)
        my_proc, my_cus = self._processor_and_cus()
        their_proc, their_cus = other._processor_and_cus()
        if my_cus == their_cus == 0:
            assert my_proc is not None and their_proc is not None
            return Pred.__lt__(Pred(my_proc.tag, value=my_proc.value), Pred(their_proc.tag, value=their_proc.value))
        return bool(my_cus > their_cus)


def _and(preds: Sequence[Pred]) -> Pred:
    if not preds:
        return Pred("TruePred")
    if len(preds) == 1:
        return preds[0]
    return Pred("And", value=tuple(preds))


def hardware_predicate(isa: Sequence[int], cu_count: int | None) -> HardwarePred:
    """``HardwarePredicate.FromHardware`` (Hardware.py:33-40)."""
    gfx = f"gfx{isa[0]}{isa[1]}{isa[2]:x}"
    if cu_count is None:
        return HardwarePred("AMDGPU", value=HardwarePred("Processor", value=gfx))
    inner = _and([HardwarePred("Processor", value=gfx), HardwarePred("CUCount", value=cu_count)])
    return HardwarePred("AMDGPU", value=HardwarePred(inner.tag, value=inner.value))


# ------------------------------------------------------------------------------------------
# Contractions.ProblemType


def _lite_dtype(value: Any, path: str) -> DataTypeInfo:
    try:
        return lite_type(value)
    except KeyError:
        raise InvalidValue(f"unknown tensilelite data type {value!r}", Location(path=path)) from None


def _activation_arg_length(name: str) -> int:
    """``len(getAdditionalArgStringList())`` (Activation.py:204-230), NORMAL export."""
    if name in ("all", "hipblaslt_all"):
        return max(extra for _, gradient, extra, _, _ in ACTIVATIONS if not gradient)
    return next((extra for n, _, extra, _, _ in ACTIVATIONS if n == name), 0)


def _activation_enums(data: DataTypeInfo, supported_by: int, gradient_only: bool) -> list[str]:
    """``ActivationType.getEnumStrList`` (Activation.py:226-240), capitalised."""
    column = ACTIVATION_TYPE_COLUMN.get(data.code)
    out = []
    for name, gradient, _, can, bits in ACTIVATIONS:
        if gradient != gradient_only:  # passActivation
            continue
        if name in ("all", "hipblaslt_all"):
            continue
        if column is not None and can[column] and bits & supported_by:
            out.append(name.capitalize())
    return out


@dataclasses.dataclass
class LiteContraction:
    """``Contractions.ProblemType`` built by ``FromOriginalState`` from a problem-type mapping."""

    operation_identifier: str
    trans_a: bool
    trans_b: bool
    a: DataTypeInfo
    b: DataTypeInfo
    c: DataTypeInfo
    e: DataTypeInfo
    compute: DataTypeInfo
    compute_input: DataTypeInfo
    use_beta: Any
    use_bias: Any
    bias_types: list[DataTypeInfo]
    bias_sources: list[int]
    use_e: Any
    gradient: Any
    amax_d: Any
    scale_ab: Any
    scale_cd: Any
    scale_alpha_vec: Any
    activation: str
    activation_args: int
    activation_compute: DataTypeInfo
    activation_no_guard: Any
    hpa: Any
    initial_strides_ab: Any
    initial_strides_cd: Any
    strided_batched: Any
    grouped_gemm: Any
    sparse: int
    f32_xdl_math_op: DataTypeInfo
    user_args: Any
    swizzle: tuple[bool, bool] | None = None
    """``(swizzleTensorA, swizzleTensorB)`` where the build writes them (hipBLASLt 0.12.1's,
    ``HipblasltVersion.builds_swizzle_fields``), else None."""

    def state(self) -> dict[str, Any]:
        """``ProblemType.StateKeys`` order (Contractions.py:55-59)."""
        return {
            "operationIdentifier": self.operation_identifier,
            "transA": self.trans_a,
            "transB": self.trans_b,
            "computeInputType": self.compute_input.enum,
            "aType": self.a.enum,
            "bType": self.b.enum,
            "cType": self.c.enum,
            "dType": self.c.enum,
            "eType": self.e.enum,
            "computeType": self.compute.enum,
            "useBeta": self.use_beta,
            "useBias": self.use_bias,
            "biasSrcWhiteList": list(self.bias_sources),
            "useE": self.use_e,
            "useScaleAB": self.scale_ab,
            "useScaleCD": self.scale_cd,
            "useScaleAlphaVec": self.scale_alpha_vec,
            "biasDataTypeWhiteList": [t.enum for t in self.bias_types],
            "highPrecisionAccumulate": self.hpa,
            "useInitialStridesAB": self.initial_strides_ab,
            "useInitialStridesCD": self.initial_strides_cd,
            "stridedBatched": self.strided_batched,
            "groupedGemm": self.grouped_gemm,
            "useGradient": self.gradient,
            "activationType": self.activation.capitalize(),
            "activationArgLength": self.activation_args,
            "activationComputeDataType": self.activation_compute.enum,
            "activationNoGuard": self.activation_no_guard,
            "sparse": self.sparse,
            "f32XdlMathOp": self.f32_xdl_math_op.enum,
            "supportDeviceUserArguments": self.user_args,
            "outputAmaxD": self.amax_d,
        } | ({"swizzleTensorA": self.swizzle[0], "swizzleTensorB": self.swizzle[1]} if self.swizzle else {})

    def operation_predicates(self) -> list[Pred]:
        """``predicates(includeOperation=True)`` (Contractions.py:287-299)."""
        preds = [Pred("OperationIdentifierEqual", value=self.operation_identifier)]
        if not self.use_beta:
            preds.append(Pred("BetaZero"))
        preds.append(Pred("BiasDataTypeWhiteList", value=[_DType(t) for t in self.bias_types]))
        preds.append(Pred("BiasSrcWhiteList", value=list(self.bias_sources)))
        preds.append(Pred("AmaxDCheck", value=self.amax_d))
        if self.activation in ("all", "hipblaslt_all"):
            supported_by = 3 if self.activation == "all" else 1
            enums = _activation_enums(self.activation_compute, supported_by, bool(self.gradient))
            preds.append(Pred("ActivationEnumWhiteList", value=enums))
        return preds

    def type_predicates(self) -> list[Pred]:
        """``predicates(includeType=True)`` (Contractions.py:301-318)."""
        types = (self.a, self.b, self.c, self.c, self.compute_input)
        return [
            Pred("TypesEqual", value=tuple(_DType(t) for t in types)),
            Pred("HighPrecisionAccumulate", value=self.hpa),
            Pred("Activation", value=_Activation(self.activation)),
            Pred("ActivationComputeType", value=_DType(self.activation_compute)),
            Pred("ActivationNoGuard", value=self.activation_no_guard),
            Pred("UseGradient", value=self.gradient),
            Pred("UseBias", value=self.use_bias),
            Pred("UseE", value=self.use_e),
            Pred("StridedBatched", value=self.strided_batched),
            Pred("GroupedGemm", value=self.grouped_gemm),
            Pred("UseScaleAB", value=self.scale_ab),
            Pred("UseScaleCD", value=self.scale_cd),
            Pred("UseScaleAlphaVec", value=self.scale_alpha_vec),
            Pred("Sparse", value=self.sparse),
            Pred("F32XdlMathOp", value=_DType(self.f32_xdl_math_op)),
            Pred("SupportDeviceUserArguments", value=self.user_args),
        ] + (
            [Pred("SwizzleTensorA", value=self.swizzle[0]), Pred("SwizzleTensorB", value=self.swizzle[1])]
            if self.swizzle
            else []
        )

    def placeholder_type(self) -> str:
        """``placeholderStr(includeType=True)`` (Contractions.py:271-283)."""
        name = f"_Type_{self.a.char}{self.c.char}"
        return name + ("_HPA" if self.hpa else "")

    def selection_suffix(self) -> str:
        """The placeholder-name part ``selection`` adds (SolutionLibrary.py:406-434)."""
        name = f"_{self.a.char}{self.b.char}_{self.c.char}{self.compute_input.char}"
        if self.activation != "none":
            name += (
                "_A"
                if self.activation == "all"
                else "_HA"
                if self.activation == "hipblaslt_all"
                else "_" + self.activation.upper()
            )
        if self.swizzle and self.swizzle[0]:
            name += "_STA"  # SolutionLibrary.py:411-415 @0.12.1
        if self.swizzle and self.swizzle[1]:
            name += "_STB"
        if self.use_bias:
            name += "_Bias"
        if self.use_e:
            name += "_Grad" if self.gradient else "_Aux"
        if self.grouped_gemm:
            name += "_GG"
        else:
            name += "" if self.strided_batched else "_GB"
        if self.scale_ab == "Scalar":
            name += "_SAB"
        elif self.scale_ab == "Vector":
            name += "_SABV"
        if self.scale_cd:
            name += "_SCD"
        if self.scale_alpha_vec:
            name += "_SAV"
        if self.sparse:
            name += "_SPB" if self.sparse == 2 else "_SPA"
        if self.f32_xdl_math_op.enum != "Float" and self.compute_input.enum == "Float":
            name += "_M" + self.f32_xdl_math_op.char
        if self.user_args:
            name += "_UA"
        return name


def contraction_type(
    d: Mapping[str, Any], *, path: str = "ProblemType", swizzle_fields: bool = False
) -> LiteContraction:
    """``Contractions.ProblemType.FromOriginalState(d)`` (Contractions.py:60-250).

    ``d`` is a derived problem type (:func:`~tensilekit.model.derive_tensilelite.problem_type`) or
    the file's stored ``ProblemType`` mapping (the library rows are built from the latter).
    """
    if not isinstance(d, Mapping):
        raise InvalidValue("ProblemType must be a mapping", Location(path=path))
    try:
        contraction = _contraction_type(d, path)
        if swizzle_fields:  # Contractions.py:260-262 @0.12.1
            contraction.swizzle = (bool(d.get("SwizzleTensorA", False)), bool(d.get("SwizzleTensorB", False)))
        return contraction
    except TensilekitError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidValue(f"inconsistent ProblemType index fields or values ({exc!r})", Location(path=path)) from exc


def _contraction_type(d: Mapping[str, Any], path: str) -> LiteContraction:

    def need(key: str) -> Any:
        if key not in d:
            raise MissingField(f"ProblemType has no {key}", Location(path=f"{path}.{key}"))
        return d[key]

    def typ(key: str) -> DataTypeInfo:
        return _lite_dtype(need(key), f"{path}.{key}")

    total = need("TotalIndices")
    names: list[str | None] = [None] * total
    a_names, b_names = ["_"] * len(need("IndexAssignmentsA")), ["_"] * len(need("IndexAssignmentsB"))
    num_c = need("NumIndicesC")
    d_names = [_INDEX_NAMES[i] for i in range(num_c)]
    bound = list(need("IndicesSummation"))
    sum_names = [_INDEX_NAMES[num_c + i] for i in range(len(bound))]
    ia, ib = list(d["IndexAssignmentsA"]), list(d["IndexAssignmentsB"])
    c_names = ["_"] * num_c
    for i in range(num_c):
        if i in need("IndicesBatch"):
            a_names[ia.index(i)] = b_names[ib.index(i)] = c_names[i] = d_names[i]
        elif i in ia:
            a_names[ia.index(i)] = c_names[i] = d_names[i]
        elif i in ib:
            b_names[ib.index(i)] = c_names[i] = d_names[i]
        else:
            raise InvalidValue(f"free index {i} is in neither A nor B", Location(path=path))
        names[i] = d_names[i]
    for k, i in enumerate(bound):
        a_mirror = i in d.get("MirrorDimsA", [])
        b_mirror = i in d.get("MirrorDimsB", [])
        a_names[ia.index(i)] = sum_names[k].upper() if a_mirror else sum_names[k]
        b_names[ib.index(i)] = sum_names[k].upper() if b_mirror else sum_names[k]
    op_id = "_".join(
        [
            "Contraction",
            "".join(sum_names),
            "A" + "".join(a_names) + ("C" if d.get("ComplexConjugateA") else ""),
            "B" + "".join(b_names) + ("C" if d.get("ComplexConjugateB") else ""),
            "C" + "".join(c_names),
            "D" + "".join(d_names),
        ]
    )
    src = typ("DataType")
    dst = typ("DestDataType") if "DestDataType" in d else src
    compute = typ("ComputeDataType") if "ComputeDataType" in d else dst
    a = typ("DataTypeA") if "DataTypeA" in d else src
    b = typ("DataTypeB") if "DataTypeB" in d else src
    if "F8B8" in (a.char, b.char):
        a, b = lite_type(11), lite_type(12)
    elif "B8F8" in (a.char, b.char):
        a, b = lite_type(12), lite_type(11)
    e = typ("DataTypeE") if "DataTypeE" in d else dst
    use_bias: Any = 0
    bias_types: list[DataTypeInfo] = []
    bias_sources: list[int] = []
    if "UseBias" in d:
        use_bias = d["UseBias"]
        if "BiasDataTypeList" in d:
            bias_types = sorted(
                (_lite_dtype(t, f"{path}.BiasDataTypeList") for t in d["BiasDataTypeList"]), key=lambda t: t.code
            )
        else:
            bias_types = bias_type_list_default({k: typ(k) for k in ("DataType", "ComputeDataType", "DestDataType")})
        if "BiasSrc" in d:
            if d["BiasSrc"] not in ("A", "B", "C", "D"):
                raise InvalidValue(f"unknown BiasSrc {d['BiasSrc']!r}", Location(path=f"{path}.BiasSrc"))
            bias_sources = ["ABCD".index(d["BiasSrc"])]
    activation = str(d.get("ActivationType", "none")).lower()
    if activation not in {name for name, *_ in ACTIVATIONS} and activation != "exp":
        raise InvalidValue(f"unknown activation type {activation!r}", Location(path=f"{path}.ActivationType"))
    return LiteContraction(
        operation_identifier=op_id,
        trans_a=bool(need("TransposeA")),
        trans_b=bool(need("TransposeB")),
        a=a,
        b=b,
        c=dst,
        e=e,
        compute=compute,
        compute_input=src,
        use_beta=d.get("UseBeta", True),
        use_bias=use_bias,
        bias_types=bias_types,
        bias_sources=bias_sources,
        use_e=d.get("UseE", False),
        gradient=d.get("Gradient", False),
        amax_d=d.get("OutputAmaxD", False),
        scale_ab=d.get("UseScaleAB", ""),
        scale_cd=d.get("UseScaleCD", False),
        scale_alpha_vec=d.get("UseScaleAlphaVec", 0),
        activation=activation,
        activation_args=_activation_arg_length(activation),
        activation_compute=typ("ActivationComputeDataType"),
        activation_no_guard=d.get("ActivationNoGuard", False),
        hpa=d.get("HighPrecisionAccumulate", False),
        initial_strides_ab=d.get("UseInitialStridesAB", False),
        initial_strides_cd=d.get("UseInitialStridesCD", False),
        strided_batched=d.get("StridedBatched", True),
        grouped_gemm=d.get("GroupedGemm", False),
        sparse=int(d.get("Sparse", 0)),
        f32_xdl_math_op=typ("F32XdlMathOp") if "F32XdlMathOp" in d else lite_type(0),
        user_args=d.get("SupportUserArgs", False),
    )


# ------------------------------------------------------------------------------------------
# Contractions.Solution


_DEPRECATED_ASSERT_KEYS = frozenset({"AssertFree1DivByMT1LowbitGT1", "AssertKRingShiftTailWrapOnly"})
"""tensilelite 5.x (2026) solution keys that make no predicate: tensilelite 5.0.0's writer puts them
in every solution (``AssertFree1DivByMT1LowbitGT1: 0``), and after PR #7443 ("manual revert
KRingShift") ``ProblemPredicate.FromOriginalKeyPair`` drops them silently instead of raising
``Unknown assertion key`` (rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/Tests/unit/``
test of deprecated Assert keys, ``TestDeprecatedAssertKeys``; the 7d9fb683 reader knows neither key).
Any other unknown ``Assert*`` key is still an error, as there."""


def _key_pair_predicate(key: str, value: Any, path: str) -> Pred | None:
    """``ProblemPredicate.FromOriginalKeyPair`` (Contractions.py:351-382)."""
    if key == "AssertAIGreaterThanEqual":
        return Pred("AIGreaterThanEqual", value=value) if value > 0 else None
    if key == "AssertAILessThanEqual":
        return Pred("AILessThanEqual", value=value) if value > 0 else None
    if key.endswith("Multiple"):
        if value == 1:
            return None
        tags = {
            "AssertFree0ElementMultiple": ("Free0SizeMultiple", 0),
            "AssertFree1ElementMultiple": ("Free1SizeMultiple", 0),
            "AssertSummationElementMultiple": ("BoundSizeMultiple", -1),
        }
        if key not in tags:
            raise InvalidValue(f"unknown Multiple key {key!r}", Location(path=f"{path}.{key}"))
        tag, index = tags[key]
        return Pred(tag, index=index, value=value)
    if key == "WorkspaceCheck" and not all(v == 0 for v in value):
        return Pred("WorkspaceCheck", index=0, value=value)
    if key in _DEPRECATED_ASSERT_KEYS:
        return None
    if key.startswith("Assert"):
        raise InvalidValue(f"unknown assertion key {key!r}", Location(path=f"{path}.{key}"))
    return None


def _compound_predicates(state: LiteState, ptype: LiteContraction, rules: HipblasltVersion | None = None) -> list[Pred]:
    """``ProblemPredicate.CompoundPredicates`` (Contractions.py:384-466), with the rules of the
    hipBLASLt version built for (None: 7d9fb683's)."""
    preds = []
    if "BatchSizeEqual" in state:
        preds.append(Pred("BatchSizeEqual", index=0, value=state["BatchSizeEqual"]))
    if "SynchronizerSizeCheck" in state:
        per_batch = state["NumElementsPerBatchStore"]
        values = [
            state["MacroTile0"],
            state["MacroTile1"],
            state["MIWaveTile"][0] * state["MIWaveTile"][1],
            int(state["NumElementsPerThread"] / per_batch) if per_batch != 0 else 1,
            state["NumThreads"],
        ]
        preds.append(Pred("SynchronizerSizeCheck", index=0, value=values))
    if (
        rules is not None
        and rules.builds_workgroup_number_check
        and state["InternalSupportParams"]["KernArgsVersion"] >= 1
        and not state.get("StreamK", 0) > 0
    ):
        values = [state["MacroTile0"], state["MacroTile1"], state["GlobalSplitU"]]
        preds.append(Pred("WorkgroupNumberCheck", index=0, value=values))
    pt = state["ProblemType"]
    if ptype.a.enum != "Int8x4":
        preds.append(
            Pred("LeadingFree0SizesGreaterOrEqual", value=state["GlobalReadVectorWidthA"] if pt["TLUA"] else 1)
        )
        preds.append(
            Pred("LeadingFree1SizesGreaterOrEqual", value=state["GlobalReadVectorWidthB"] if pt["TLUB"] else 1)
        )
    if len(state["PackedC0IndicesX"]) > 1:
        preds.append(Pred("CDStridesEqual"))
    if "KernelLanguage" in state:
        preds.append(Pred("KernelLanguageCompatible", value=state["KernelLanguage"]))
    if "GlobalSplitU" in state and state["GlobalSplitU"] > 1:
        if state.get("_GlobalAccumulation") != "MultipleBuffer":
            preds.append(Pred("DeterministicMode", value=False))
    if state.get("StreamK", 0) > 0 and state.get("StreamKAtomic") == 1:
        preds.append(Pred("DeterministicMode", value=False))
    if state.get("BufferLoad") is True:
        tlua, tlub = pt["TLUA"], pt["TLUB"]
        shift_a = tlua and state["AssertFree0ElementMultiple"] < state["GlobalReadVectorWidthA"]
        shift_b = tlub and state["AssertFree1ElementMultiple"] < state["GlobalReadVectorWidthB"]
        limits = {
            "ShiftPtrElemB": state["GlobalReadVectorWidthB"] if shift_b else 0,
            "ShiftPtrElemA": state["GlobalReadVectorWidthA"] if shift_a else 0,
            "DUorMT1": state["DepthU"] if tlub else state["MacroTile1"],
            "DUorMT0": state["DepthU"] if tlua else state["MacroTile0"],
        }
        preds.append(Pred("BufferLoadOffsetLimitCheck", value=limits))
        preds.append(Pred("BufferLoadOffsetLimitCheck_Beta", value=state["MacroTile1"]))
    if state.get("BufferStore") is True:
        preds.append(Pred("BufferStoreOffsetLimitCheck", value=state["MacroTile1"]))
    if state.get("_GlobalAccumulation") is not None and not state["StreamK"]:
        preds.append(Pred("GlobalSplitUCheckMinK", value=[MIN_K_FOR_GSU, state["GlobalSplitU"]]))
    if "WorkGroupMappingXCC" in state and "WorkGroupMappingXCCGroup" in state:
        preds.append(
            Pred("WorkgroupMappingXCCCheck", value=[state["WorkGroupMappingXCC"], state["WorkGroupMappingXCCGroup"]])
        )
    if _swizzles(rules):  # Contractions.py:518-527 @0.12.1: swizzled kernels have no working tail loop
        full_tiles = rules is not None and rules.swizzle_full_tile_predicates
        if pt.get("SwizzleTensorA"):
            preds.append(Pred("SwizzleTensorA", value=pt["SwizzleTensorA"]))
            if full_tiles and pt["TransposeB"]:
                preds.append(Pred("BoundSizeMultiple", index=-1, value=state["DepthU"]))
        if pt.get("SwizzleTensorB"):
            preds.append(Pred("SwizzleTensorB", value=pt["SwizzleTensorB"]))
            if full_tiles:
                preds.append(Pred("Free1SizeMultiple", index=0, value=state["MacroTile1"]))
                preds.append(Pred("BoundSizeMultiple", index=-1, value=state["DepthU"]))
    return preds


def _size_mapping(d: LiteState) -> dict[str, Any]:
    """``SizeMapping.FromOriginalState`` (Contractions.py:508-551), StateKeys order."""
    accumulation = 0
    if d["GlobalSplitUAlgorithm"] == "SingleBuffer":
        accumulation = 1
    if d["GlobalSplitUAlgorithm"] == "MultipleBuffer":
        accumulation = 2
    if d["_GlobalAccumulation"] == "MultipleBufferSingleKernel":
        accumulation = 3
    if d["_GlobalAccumulation"] == "PartialsBuffer":
        accumulation = 4
    return {
        "waveNum": d["NumThreads"] // d["WavefrontSize"],
        "workGroup": list(d["WorkGroup"]),
        "macroTile": [d["MacroTile0"], d["MacroTile1"], 1],
        "threadTile": list(d["ThreadTile"]),
        "matrixInstruction": list(d["MatrixInstruction"]),
        "grvwA": d["GlobalReadVectorWidthA"],
        "grvwB": d["GlobalReadVectorWidthB"],
        "gwvwC": d["StoreVectorWidth"],
        "gwvwD": d["StoreVectorWidth"],
        "depthU": d["DepthU"],
        "staggerU": d.get("StaggerU", 0),
        "staggerUMapping": d.get("StaggerUMapping", 0),
        "globalSplitUPGR": GLOBAL_SPLIT_U_PGR,
        "globalSplitU": d["GlobalSplitU"],
        "staggerStrideShift": d.get("_staggerStrideShift", 0),
        "workGroupMapping": d["WorkGroupMapping"],
        "packBatchDims": 0,
        "magicDivAlg": d.get("MagicDivAlg", 1),
        "streamK": d.get("StreamK", 0),
        "streamKAtomic": d.get("StreamKAtomic", 0),
        "sourceKernel": d["KernelLanguage"] == "Source",
        "globalAccumulation": accumulation,
        "workspaceSizePerElemC": d["_WorkspaceSizePerElemC"],
        "workspaceSizePerElemBias": d["_WorkspaceSizePerElemBias"],
        "activationFused": d["ActivationFused"],
        "CustomKernelName": d["CustomKernelName"],
        "workGroupMappingXCC": d["WorkGroupMappingXCC"],
        "workGroupMappingXCCGroup": d["WorkGroupMappingXCCGroup"],
        "globalSplitUCoalesced": d["GlobalSplitUCoalesced"],
        "globalSplitUWorkGroupMappingRoundRobin": d["GlobalSplitUWorkGroupMappingRoundRobin"],
    }


@dataclasses.dataclass(eq=False)
class _Solution:
    """``Contractions.Solution`` (name and kernelName filled in by ``applyNaming``)."""

    state: LiteState
    index: Any  # None until FixSolutionIndices
    body: dict[str, Any]
    name: str = ""
    kernel_name: str = ""

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kernelName": self.kernel_name}
        out.update(self.body)
        out["index"] = self.index
        out["ideals"] = out.pop("ideals")
        out["linearModel"] = out.pop("linearModel")
        return out


def _solution(state: LiteState, path: str, rules: HipblasltVersion | None = None) -> _Solution:
    """``Contractions.Solution.FromOriginalState`` (Contractions.py:610-650) as the hipBLASLt
    version ``rules`` builds it (None: 7d9fb683)."""
    index = state.get("SolutionIndex")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise InvalidValue(f"SolutionIndex must be an integer, got {index!r}", Location(path=f"{path}.SolutionIndex"))
    try:
        ptype = contraction_type(state["ProblemType"], path=f"{path}.ProblemType", swizzle_fields=_swizzles(rules))
        preds = [p for p in (_key_pair_predicate(k, v, path) for k, v in state.items()) if p is not None]
        preds += ptype.operation_predicates() + ptype.type_predicates() + _compound_predicates(state, ptype, rules)
        support = state["InternalSupportParams"]
        body: dict[str, Any] = {
            "problemType": ptype.state(),
            "hardwarePredicate": hardware_predicate(state["ISA"], state["CUCount"]).state(),
            "problemPredicate": _and(preds).state(),
            "sizeMapping": _size_mapping(state),
            "internalArgsSupport": {
                "version": support["KernArgsVersion"],
                "gsu": support["SupportUserGSU"],
                "wgm": support["SupportCustomWGM"],
                "staggerU": support["SupportCustomStaggerU"],
                "useUniversalArgs": support["UseUniversalArgs"],
            },
            "debugKernel": state.get("DebugKernel", False),
            "libraryLogicIndex": int(str(index)) if index is not None else -1,
            "ideals": state.get("Ideals", {}),
            "linearModel": state.get("LinearModel", {}),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidValue(f"solution record cannot be built: {exc!r}", Location(path=path)) from exc
    return _Solution(state, index, body)


# ------------------------------------------------------------------------------------------
# SolutionLibrary


@dataclasses.dataclass(eq=False)
class _Row:
    predicate: Pred
    library: Any


@dataclasses.dataclass(eq=False)
class _PredicateLib:
    tag: str
    rows: list[_Row]

    def merge(self, other: Any) -> None:
        """``PredicateLibrary.merge`` (SolutionLibrary.py:251-266)."""
        if not isinstance(other, _PredicateLib) or other.tag != self.tag:
            raise MergeError(f"cannot merge a {type(other).__name__} into a {self.tag} predicate library")
        for row in other.rows:
            mine = next((r for r in self.rows if r.predicate == row.predicate), None)
            if mine is not None:
                mine.library.merge(row.library)
            else:
                self.rows.append(row)
        if isinstance(self.rows[0].library, _PlaceholderLib):
            self.rows.sort(key=lambda r: len(r.library.name))
        else:
            self.rows.sort(key=lambda r: r.predicate)

    def state(self) -> dict[str, Any]:
        return {
            "type": self.tag,
            "rows": [{"predicate": r.predicate.state(), "library": r.library.state()} for r in self.rows],
        }


@dataclasses.dataclass(eq=False)
class _ProblemMapLib:
    mapping: dict[str, Any]

    def merge(self, other: Any) -> None:
        if not isinstance(other, _ProblemMapLib):
            raise MergeError(f"cannot merge a {type(other).__name__} into a ProblemMap library")
        for key, value in other.mapping.items():
            if key in self.mapping:
                self.mapping[key].merge(value)
            else:
                self.mapping[key] = value

    def state(self) -> dict[str, Any]:
        return {
            "type": "ProblemMap",
            "property": {"type": "OperationIdentifier"},
            "map": {k: v.state() for k, v in self.mapping.items()},
        }


@dataclasses.dataclass(eq=False)
class _Entry:
    key: list[int]
    solution: _Solution
    speed: Any
    has_speed: bool


@dataclasses.dataclass(eq=False)
class _MatchingLib:
    properties: list[dict[str, Any]]
    table: list[_Entry]
    distance: str

    def merge(self, other: Any) -> None:
        if not (
            isinstance(other, _MatchingLib) and other.properties == self.properties and other.distance == self.distance
        ):
            raise MergeError("cannot merge matching tables with different properties or distance")
        self.table += other.table
        self.table.sort(key=lambda e: e.key)

    def state(self) -> dict[str, Any]:
        table = []
        for e in self.table:
            entry: dict[str, Any] = {"key": list(e.key), "index": e.solution.index}
            if e.has_speed:
                entry["speed"] = e.speed
            table.append(entry)
        return {"type": "Matching", "properties": self.properties, "table": table, "distance": self.distance}


@dataclasses.dataclass(eq=False)
class _PoolLib:
    """A pool of solutions with no size key; two pools of one kind merge by joining."""

    solutions: list[_Solution]
    kind: ClassVar[str]

    def merge(self, other: Any) -> None:
        if type(other) is not type(self):
            raise MergeError(f"cannot merge a {type(other).__name__} into a {self.kind} library")
        self.solutions += other.solutions


class _FreeSizeLib(_PoolLib):
    kind = "FreeSize"

    def state(self) -> dict[str, Any]:
        return {"type": "FreeSize", "table": [{"index": s.index} for s in self.solutions]}


class _PredictionLib(_PoolLib):
    """``PredictionLibrary`` (rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/SolutionLibrary.py``
    @ 003add5959de): the pool Origami ranks at run time; its table holds the candidates' indices
    (``IndexSolutionLibrary.state()``), not FreeSize's ``{index: …}`` entries. Not in hipBLASLt
    7d9fb683, whose ``selection`` takes any other LibraryType for a Matching distance and fails."""

    kind = "Prediction"

    def state(self) -> dict[str, Any]:
        return {"type": "Prediction", "table": [s.index for s in self.solutions]}


@dataclasses.dataclass(eq=False)
class _PlaceholderLib:
    name: str

    def merge(self, other: Any) -> None:
        return None

    def state(self) -> dict[str, Any]:
        return {"type": "Placeholder", "value": self.name}


@dataclasses.dataclass(eq=False)
class _Master:
    solutions: dict[int, _Solution]
    library: Any
    lazy: dict[str, _Master]
    version: str | None = None

    def merge(self, other: _Master, start: int = 0) -> int:
        """``MasterSolutionLibrary.merge`` (SolutionLibrary.py:534-575); returns the next free index."""
        cur = max(start, max(self.solutions) + 1 if self.solutions else 0)
        if self.lazy:
            cur = max(cur, max(max(lib.solutions) for lib in self.lazy.values()) + 1)
        for name, lib in other.lazy.items():
            if name in self.lazy:
                cur = self.lazy[name].merge(lib, cur)
            else:
                renumbered = {}
                for s in lib.solutions.values():
                    s.index = cur
                    renumbered[cur] = s
                    cur += 1
                lib.solutions = renumbered
                self.lazy[name] = lib
        for s in other.solutions.values():
            s.index = cur
            self.solutions[cur] = s
            cur += 1
        self.library.merge(other.library)
        return cur

    def tree(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "solutions": [s.record() for s in self.solutions.values()],
            "library": self.library.state(),
        }
        if self.version is not None:
            out["version"] = self.version
        return out


@dataclasses.dataclass
class _Logic:
    """``parseLibraryLogicList``'s fields of one list-form tensilelite logic file."""

    architecture: str
    cu_count: int | None
    problem_type: Mapping[str, Any]
    solutions: list[Any]
    library_type: str  # "Matching", "FreeSize" or "Prediction"
    index_order: Any
    table: Any
    distance: Any
    perf_metric: Any
    minimum_version: str = ""


def _parse_logic(data: Any) -> _Logic:
    """``parseLibraryLogicList`` (LibraryIO.py:316-363)."""
    if not isinstance(data, list):
        raise InvalidValue("a tensilelite logic file is a YAML list", Location(path=""))
    if len(data) < 9:
        raise InvalidValue(f"logic file is missing required fields (len = {len(data)} < 9)", Location(path=""))
    arch = data[2]
    if isinstance(arch, Mapping):
        if "Architecture" not in arch or "CUCount" not in arch:
            raise MissingField("architecture entry needs Architecture and CUCount", Location(path="[2]"))
        architecture, cu_count = arch["Architecture"], arch["CUCount"]
    else:
        architecture, cu_count = arch, None
    if not isinstance(architecture, str):
        raise InvalidValue("architecture must be a string", Location(path="[2]"))
    if not isinstance(data[4], Mapping):
        raise InvalidValue("ProblemType must be a mapping", Location(path="[4]"))
    if not isinstance(data[5], list):
        raise InvalidValue("solutions must be a list", Location(path="[5]"))
    perf = data[10] if len(data) > 10 and data[10] else None
    library_type = data[11] if len(data) > 11 and data[11] else None
    if library_type is None:
        raise MissingField("logic file is missing its matching property (library type)", Location(path="[11]"))
    header = data[0] if isinstance(data[0], Mapping) else {}
    version = str(header.get("MinimumRequiredVersion", ""))
    if library_type in _POOL_TYPES:  # the whole solution list, in order (Prediction: LibraryIO.py @ 09ee4019)
        pool = [0, len(data[5])]
        return _Logic(architecture, cu_count, data[4], data[5], library_type, None, pool, None, perf, version)
    return _Logic(architecture, cu_count, data[4], data[5], "Matching", data[6], data[7], library_type, perf, version)


#: LibraryTypes whose table is every solution of the file (``parseLibraryLogicList``). ``Prediction``
#: is the 2026 addition (rocm-libraries ``projects/hipblaslt/tensilelite/Tensile/LibraryIO.py``
#: @ 09ee40199827); hipBLASLt 7d9fb683 knows only FreeSize.
_POOL_TYPES = ("FreeSize", "Prediction")

#: Origami inputs a 2026 logic file may carry per solution that this build's records (hipBLASLt
#: 7d9fb683 ``SizeMapping``) have no field for: the 2026 ``SizeMapping`` writes ``CUOccupancy``
#: (``Tensile/Contractions.py`` @ 012a6dcf) and the runtime feeds it and ``useSubtileImpl`` to
#: Origami (``include/Tensile/Serialization/PredictionLibrary.hpp`` @ 03da8efd). Dropping them
#: would change the ranking, so a Prediction pool that has them is refused.
_ORIGAMI_ONLY_INPUTS = ("CUOccupancy", "UseSubtileImpl")

_MATCHING_PROPERTIES = {2: ("FreeSizeA", 0), 3: ("FreeSizeB", 0), 1: ("BoundSize", 0)}


def _matching(logic: _Logic, solutions: list[_Solution]) -> _MatchingLib:
    """``MatchingLibrary.FromOriginalState`` (SolutionLibrary.py:76-118)."""
    props = dict(_MATCHING_PROPERTIES)
    if logic.distance in ("Equality", "GridBased"):
        props[0] = ("BatchSize", 0)
    order = logic.index_order
    if not isinstance(order, list) or not all(isinstance(i, int) for i in order):
        raise InvalidValue("index order must be a list of integers", Location(path="[6]"))
    if not isinstance(logic.table, list):
        raise InvalidValue("exact logic must be a list", Location(path="[7]"))
    properties = [{"type": props[i][0], "index": props[i][1]} for i in order if i in props]
    key_order = [pos for pos, code in enumerate(order) if code in props]
    table = []
    for n, row in enumerate(logic.table):
        where = f"[7][{n}]"
        try:
            position = row[1][0]
            key = [row[0][i] for i in key_order]
            speed = row[1][1] if logic.distance != "GridBased" else None
        except (IndexError, KeyError, TypeError):
            raise InvalidValue("table row must be [size, [solution, speed]]", Location(path=where)) from None
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(solutions):
            raise InvalidValue(
                f"table row refers to solution {position!r}, but the file has {len(solutions)}",
                Location(path=f"{where}[1][0]"),
            )
        table.append(_Entry(key, solutions[position], speed, logic.distance != "GridBased"))
    try:
        table.sort(key=lambda e: e.key)
    except TypeError:
        raise InvalidValue("table keys must be lists of integers", Location(path="[7]")) from None
    return _MatchingLib(properties, table, str(logic.distance))


def _prediction_pool(logic: _Logic, solutions: list[_Solution]) -> _PredictionLib:
    """``PredictionLibrary.FromOriginalState`` (SolutionLibrary.py @ 003add5959de), refusing what the
    runtime would refuse (an empty table: ``ProblemPredictionLibrary requires non empty mapping
    index set``, Serialization/PredictionLibrary.hpp @ 03da8efd) and what this build cannot carry."""
    start, count = logic.table
    pool = solutions[start : start + count]
    if not pool:
        raise InvalidValue(
            "a Prediction logic file needs at least one solution: hipBLASLt rejects an empty Prediction table",
            Location(path="[5]"),
        )
    for position, solution in enumerate(pool, start):
        for key in _ORIGAMI_ONLY_INPUTS:
            if key in solution.state:
                raise InvalidValue(
                    f"{key} is an input of Origami's ranking of a Prediction pool, but the records this "
                    "build writes (hipBLASLt 7d9fb683 sizeMapping) have no field for it; building would "
                    "drop it and change the pool's ranking",
                    Location(path=f"[5][{position}].{key}"),
                )
    return _PredictionLib(pool)


def _selection(logic: _Logic, solutions: list[_Solution]) -> _PredicateLib:
    if logic.library_type == "FreeSize":
        start, count = logic.table
        return _PredicateLib(
            "Problem", [_Row(Pred("FreeSizeMatching"), _FreeSizeLib(solutions[start : start + count]))]
        )
    if logic.library_type == "Prediction":
        # a row of its own "so that FreeSize / Prediction can co-exist" (SolutionLibrary.py @ 003add5959de)
        return _PredicateLib("Problem", [_Row(Pred("PredictionMatching"), _prediction_pool(logic, solutions))])
    matching = _matching(logic, solutions)
    predicate = Pred("EqualityMatching") if logic.distance == "Equality" else Pred("TruePred")
    return _PredicateLib("Problem", [_Row(predicate, matching)])


def _fix_indices(solutions: list[_Solution]) -> None:
    """``MasterSolutionLibrary.FixSolutionIndices`` (SolutionLibrary.py:284-297)."""
    highest = max((s.index for s in solutions if s.index is not None), default=-1)
    seen: set[int] = set()
    for s in solutions:
        if s.index is None or s.index in seen:
            highest += 1
            s.index = highest
        else:
            seen.add(s.index)


def _swizzles(rules: HipblasltVersion | None) -> bool:
    return rules is not None and rules.builds_swizzle_fields


def _from_logic(
    logic: _Logic, states: list[LiteState], *, lazy: bool, rules: HipblasltVersion | None = None
) -> _Master:
    """``MasterSolutionLibrary.FromOriginalState`` (SolutionLibrary.py:299-477)."""
    ptype = contraction_type(logic.problem_type, path="[4]", swizzle_fields=_swizzles(rules))
    solutions = [_solution(s, f"[5][{i}]", rules) for i, s in enumerate(states)]
    _fix_indices(solutions)
    selection = _selection(logic, solutions)
    name = "TensileLibrary"
    lazy_master: _Master | None = None
    library: Any = selection
    placeholder: _PlaceholderLib | None = None
    if lazy:
        name += ptype.selection_suffix()
        lazy_master = _Master({s.index: s for s in solutions}, selection, {})
        placeholder = _PlaceholderLib(name)
        library = placeholder
    library = _PredicateLib("Problem", [_Row(_and(ptype.type_predicates()), library)])
    if lazy:
        name += ptype.placeholder_type()
    metric = Pred(logic.perf_metric) if logic.perf_metric not in (None, "DeviceEfficiency") else Pred("TruePred")
    library = _PredicateLib("Problem", [_Row(metric, library)])
    if lazy and metric.tag != "TruePred":
        name += "_" + metric.tag
    library = _ProblemMapLib({ptype.operation_identifier: library})
    if lazy:
        name += "_" + ptype.operation_identifier
    hardware = (
        Pred("TruePred")
        if logic.architecture == "fallback"
        else hardware_predicate(gfx_isa(logic.architecture), logic.cu_count)
    )
    library = _PredicateLib("Hardware", [_Row(hardware, library)])
    if lazy:
        if logic.cu_count:
            name += f"_CU{logic.cu_count}"
        name += "_" + logic.architecture
    if lazy_master is not None and placeholder is not None:
        placeholder.name = name
        return _Master({}, library, {name: lazy_master})
    return _Master({s.index: s for s in solutions}, library, {})


def _states(
    logic: _Logic,
    custom_kernel_config: CustomKernelConfig | None,
    derivation: LiteDerivationRules = LITE_DERIVATION_7D9FB683,
    build_version: HipblasltVersion | None = None,
) -> list[LiteState]:
    """``parseLibraryLogicData``'s ``Solution(...)`` per solution, checked against the file's problem
    type, as the hipBLASLt version of ``derivation`` derives them (ISAs: the file's version's, else
    ``build_version``'s)."""
    from tensilekit.selection.hipblaslt_versions import DEFAULT_HIPBLASLT_VERSION, version_written_for

    written_by = version_written_for(logic.minimum_version, build_version or DEFAULT_HIPBLASLT_VERSION)
    isa = (0, 0, 0) if logic.architecture == "fallback" else gfx_isa(logic.architecture)
    file_type = problem_type(logic.problem_type, path="[4]", rules=derivation)
    states = []
    for i, raw in enumerate(logic.solutions):
        if isinstance(raw, Mapping) and "ProblemType" not in raw:
            # tensilelite 5.0.0's LibraryLogic writes no per-solution ProblemType: the file's is
            # theirs (hipblaslt-2026-interfaces.md §3 "per-solution ProblemType", artefact A5).
            raw = {**raw, "ProblemType": logic.problem_type}
        state = solution_state(
            raw,
            isa=isa,
            cu_count=logic.cu_count,
            path=f"[5][{i}]",
            custom_kernel_config=custom_kernel_config,
            file_activation=file_type["ActivationType"],
            rules=derivation,
        )
        if isa in written_by.assembles_isas:  # the runtime's Processor row is the file's ISA
            state["ISA"] = isa
        try:  # names are made after every file is read: fail here, where the file is known
            name_full(state, derivation.valid_parameters)
        except TensilekitError:
            raise
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise InvalidValue(f"solution cannot be named: {exc!r}", Location(path=f"[5][{i}]")) from exc
        differ = problem_types_differ(file_type, state["ProblemType"])
        if differ:
            raise InvalidValue(
                "solution's ProblemType does not match the file's, so tensilelite refuses the file: "
                + _problem_type_differences(differ, file_type, state["ProblemType"], logic.problem_type),
                Location(path=f"[5][{i}].ProblemType"),
            )
        states.append(state)
    return states


def _problem_type_differences(
    keys: list[str], file_type: Mapping[str, Any], solution_type: Mapping[str, Any], stored: Any
) -> str:
    """``parseLibraryLogicData``'s mismatch report (``Tensile/LibraryIO.py:296-305`` @7d9fb683, the same
    in tensilelite 5.x): both sides are compared after tensilelite's defaults fill them
    (``ProblemType.__init__`` → ``assignParameterWithDefault``, ``Common.py:1776``), so a key the
    file omits counts as its default; this says so."""

    def shown(value: Any) -> str:
        enum = getattr(value, "enum", None)
        return enum if isinstance(enum, str) else repr(value)

    parts = []
    for key in keys:
        omitted = isinstance(stored, Mapping) and key not in stored
        file_side = shown(file_type.get(key)) + (" (the file omits it: tensilelite's default)" if omitted else "")
        parts.append(f"{key} is {file_side} in the file but {shown(solution_type.get(key))} in the solution")
    return "; ".join(parts)


def solution_states(data: Any, custom_kernel_config: CustomKernelConfig | None = None) -> list[LiteState]:
    """Each solution of a tensilelite logic file (parsed YAML) as the build derives it:
    ``parseLibraryLogicData``'s ``Solution(...)`` (:func:`~tensilekit.model.derive_tensilelite.solution_state`),
    checked against the file's problem type and nameable. Custom kernels need ``custom_kernel_config``."""
    logic = _parse_logic(data)
    try:
        return _states(logic, custom_kernel_config)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise LibraryFormatError(f"malformed logic file: {exc!r}", Location(path="[5]")) from exc


def experimental_logic_left_out(
    logic_files: Sequence[tuple[str, Any]],
    *,
    hipblaslt_version: str | HipblasltVersion | None = None,
    experimental: bool = False,
) -> tuple[list[tuple[str, Any]], list[str], HipblasltVersion]:
    """TensileCreateLibrary's ``--experimental`` (hipBLASLt 0.12.1, 5.x): without it, logic files with a
    folder named ``experimental`` (any case) in their path are not read (TensileCreateLibrary.py:669-671
    @0.12.1, on the path as given, ``Path(file).parts``). Returns the files kept, the sources left out
    and the version (``hipblaslt_version``, or the one all the given files show), which the build of
    the kept files must use. 7d9fb683 reads every file.

    Raises InputNotFound when every file is left out."""
    from pathlib import PurePath

    from tensilekit.errors import InputNotFound
    from tensilekit.selection.hipblaslt_versions import build_version_of

    rules = build_version_of((data for _, data in logic_files), hipblaslt_version)
    if experimental or not rules.experimental_logic_opt_in:
        return list(logic_files), [], rules
    kept, left_out = [], []
    for source, data in logic_files:
        if "experimental" in (part.lower() for part in PurePath(source).parts):
            left_out.append(source)
        else:
            kept.append((source, data))
    if not kept:
        raise InputNotFound(
            f"every logic file is in a folder named 'experimental', which hipBLASLt {rules.name}'s "
            "TensileCreateLibrary reads only with --experimental",
            Location(file=", ".join(left_out[:3]) + (", …" if len(left_out) > 3 else "")),
        )
    return kept, left_out, rules


def build_tensilelite_libraries(
    logic_files: Sequence[tuple[str, Any]],
    *,
    lazy: bool = False,
    version: str | None = TENSILELITE_VERSION,
    custom_kernel_config: CustomKernelConfig | None = None,
    match_table: dict[int, tuple[str, int]] | None = None,
    refused: list[tuple[str, TensilekitError]] | None = None,
    hipblaslt_version: str | HipblasltVersion | None = None,
) -> dict[str, dict[str, Any]]:
    """Every master file tensilelite's TensileCreateLibrary writes for these logic files, by base name.

    ``hipblaslt_version``: whose TensileCreateLibrary (``"7d9fb683"`` or ``"0.12.1"``; default:
    0.12.1 when a file's problem type names its fields, ``SwizzleTensorA``, else 7d9fb683).

    ``logic_files`` are ``(source name, parsed YAML)`` pairs in merge order (AMD's build sorts the
    paths). Keys are ``TensileLibrary_<arch>``, or with ``lazy`` ``TensileLibrary_lazy_<arch>``
    plus one placeholder file per problem type (no ``version`` on those). Each value is the raw
    tree in the writer's key order (``solutions``, ``library``, ``version``).
    ``custom_kernel_config(name)`` gives a custom kernel's ``custom.config`` (hipBLASLt's
    ``CustomKernels/<name>.s``); files with custom kernels need it.

    ``match_table``, when given, is filled as TensileCreateLibrary's ``MatchTable.yaml``
    (``generateLogicDataAndSolutions``, TensileCreateLibrary.py:1146-1149 @7d9fb68): every master
    solution index -> ``(source, position of the solution in that logic file)``.

    ``refused``, when given, collects ``(source, error)`` for each file whose own steps fail (a
    custom kernel without its config, a malformed file) and the build goes on without it; without
    it the first such error is raised.

    Raises:
        LibraryFormatError: a logic file does not fit (location names file and position).
        MergeError: libraries that cannot be merged.
    """
    if not logic_files:
        raise InvalidValue("no logic files given")
    from tensilekit.selection import hipblaslt_versions as versions

    rules = versions.build_version_of((data for _, data in logic_files), hipblaslt_version)
    masters: dict[str, _Master] = {}
    next_index = 0
    # (source, the file's solutions in file order): merges renumber them in place
    per_file: list[tuple[str, list[_Solution]]] = []
    names_5x = False  # a 5.x file is built by 5.x's TensileCreateLibrary, which names as 5.x does
    for source, data in logic_files:
        try:
            with error_context(source):
                logic = _parse_logic(data)
                names_5x = names_5x or versions.version_written_for(logic.minimum_version, rules).names_min_5x
                try:
                    states = _states(logic, custom_kernel_config, rules.derivation, rules)
                    new = _from_logic(logic, states, lazy=lazy, rules=rules)
                except (KeyError, IndexError, TypeError, AttributeError) as exc:
                    raise LibraryFormatError(f"malformed logic file: {exc!r}", Location(path="[5]")) from exc
        except TensilekitError as error:
            if refused is None:
                raise
            refused.append((source, error))  # left out, as if it had not been given
            continue
        per_file.append(
            (source, [*new.solutions.values(), *(s for lib in new.lazy.values() for s in lib.solutions.values())])
        )
        arch = logic.architecture
        if arch in masters:
            next_index = masters[arch].merge(new, next_index)
        else:
            new.version = version
            masters[arch] = new
    if "fallback" in masters:
        fallback = masters.pop("fallback")
        for master in masters.values():
            master.merge(fallback)
        if not masters:
            masters["fallback"] = fallback

    # generateLogicDataAndSolutions' solution list (lazy: codeObjectFile set), then kernel naming
    ordered: list[_Solution] = []
    for master in masters.values():
        ordered += master.solutions.values()
        for name, lib in master.lazy.items():
            for s in lib.solutions.values():
                s.state["codeObjectFile"] = name
                ordered.append(s)
    for s in ordered:
        s.state["Kernel"] = True  # Solution.getKernels
    valid = rules.derivation.valid_parameters
    naming = MinNaming.of(unique_kernels([s.state for s in ordered], valid), valid)

    if match_table is not None:
        for source, solutions in per_file:
            for position, solution in enumerate(solutions):
                match_table[solution.index] = (source, position)
    out: dict[str, dict[str, Any]] = {}
    for arch, master in masters.items():
        base = ("TensileLibrary_lazy_" if lazy else "TensileLibrary_") + arch
        for lib in (master, *master.lazy.values()):
            for s in lib.solutions.values():  # applyNaming
                if names_5x:
                    s.name = name_min_5x(s.state)
                    s.kernel_name = name_min_5x(s.state, ignore_internal_args=True)
                    continue
                s.name = naming.name(s.state)
                s.kernel_name = naming.name(s.state, ignore_internal_args=True)
        out[base] = master.tree()
        for name, lib in master.lazy.items():
            out[name] = lib.tree()
    return out


__all__ = [
    "HardwarePred",
    "LiteContraction",
    "Pred",
    "build_tensilelite_libraries",
    "contraction_type",
    "experimental_logic_left_out",
    "hardware_predicate",
    "solution_states",
]

"""Predicate evaluation: one verdict per predicate type, the C++ semantics of spec/selection.md b.5."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from selection_factory import GFX90A, gemm, predicate

from tensilekit.errors import SelectionError
from tensilekit.predicates.evaluate import HANDLERS, Verdict, evaluate, evaluate_all, required_workspace
from tensilekit.selection import GemmProblem, Hardware, HipblasltFields, contraction_problem

# (predicate, problem fields, expected) — problem is gemm(m, n, k, **fields) on gfx90a/104 CUs
CASES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({"type": "TruePred"}, {}, True),
    ({"type": "FalsePred"}, {}, False),
    ({"type": "And", "value": [{"type": "TruePred"}, {"type": "FalsePred"}]}, {}, False),
    ({"type": "Or", "value": [{"type": "FalsePred"}, {"type": "TruePred"}]}, {}, True),
    ({"type": "Not", "value": {"type": "FalsePred"}}, {}, True),
    ({"type": "Free0SizeMultiple", "index": 0, "value": 8}, {"m": 64}, True),
    ({"type": "Free0SizeMultiple", "index": 0, "value": 8}, {"m": 65}, False),
    ({"type": "Free1SizeMultiple", "index": 0, "value": 8}, {"n": 63}, False),
    ({"type": "BatchSizeMultiple", "index": 0, "value": 2}, {"batch": 4}, True),
    ({"type": "BatchSizeEqual", "index": 0, "value": 2}, {"batch": 4}, False),
    ({"type": "BoundSizeMultiple", "index": -1, "value": 128}, {"k": 256}, True),
    ({"type": "BoundSizeMultiple", "index": -1, "value": 128}, {"k": 200}, False),
    ({"type": "BoundSizeMultiple", "index": 0, "value": 4}, {"k": 200}, True),
    ({"type": "SizeEqual", "index": 2, "value": 3}, {"batch": 3}, True),
    ({"type": "SizeGreaterThan", "index": 3, "value": 256}, {"k": 256}, False),
    ({"type": "SizeGreaterThan", "index": 3, "value": 256}, {"k": 257}, True),
    ({"type": "SizeLessThan", "index": 1, "value": 4096}, {"n": 4096}, False),
    ({"type": "SizeMultiple", "index": 0, "value": 3}, {"m": 9}, True),
    ({"type": "SizeInRange", "index": 0, "value": {"min": 10, "max": 20}}, {"m": 20}, False),
    ({"type": "SizeInRange", "index": 0, "value": {"min": 10, "max": 20}}, {"m": 10}, True),
    ({"type": "MaxProblemSizeGreaterThan", "value": 1000}, {"k": 1001}, True),
    ({"type": "LeadingFree0SizesGreaterOrEqual", "value": 8}, {"m": 7}, False),
    ({"type": "LeadingFree1SizesGreaterOrEqual", "value": 8}, {"n": 8}, True),
    ({"type": "GlobalSplitUCheckMinK", "value": 4096}, {"k": 4095}, False),
    ({"type": "StrideAEqual", "index": 0, "value": 1}, {}, True),
    ({"type": "StrideAEqual", "index": 1, "value": 100}, {"lda": 100}, True),
    ({"type": "StrideBEqual", "index": 2, "value": 5}, {}, False),
    ({"type": "StrideCEqual", "index": 1, "value": 64}, {"ldc": 64}, True),
    ({"type": "StrideDEqual", "index": 0, "value": 2}, {}, False),
    ({"type": "CDStridesEqual"}, {"ldc": 128, "ldd": 128}, True),
    ({"type": "CDStridesEqual"}, {"ldc": 128, "ldd": 256}, False),
    ({"type": "LDCEqualsLDD"}, {"ldc": 128, "ldd": 256}, False),
    # (lda·DU + shift)·bytes < 2^32: 2^21·512·4 = 2^32 fails, one less passes
    (
        {
            "type": "BufferLoadOffsetLimitCheck",
            "value": {"DUorMT0": 512, "DUorMT1": 1, "ShiftPtrElemA": 0, "ShiftPtrElemB": 0},
        },
        {"lda": 2**21},
        False,
    ),  # fmt: skip
    (
        {
            "type": "BufferLoadOffsetLimitCheck",
            "value": {"DUorMT0": 512, "DUorMT1": 1, "ShiftPtrElemA": 0, "ShiftPtrElemB": 0},
        },
        {"lda": 2**21 - 1},
        True,
    ),  # fmt: skip
    ({"type": "BufferStoreOffsetLimitCheck", "value": 256}, {"ldd": 2**22}, False),
    ({"type": "BufferStoreOffsetLimitCheck", "value": 256}, {"ldd": 2**22 - 1, "ldc": 7}, True),
    ({"type": "OperationIdentifierEqual", "value": "Contraction_l_Alik_Bljk_Cijk_Dijk"}, {"trans_a": "T"}, True),
    ({"type": "OperationIdentifierEqual", "value": "Contraction_l_Alik_Bljk_Cijk_Dijk"}, {}, False),
    ({"type": "TypesEqual", "value": ["Half", "Half", "Half", "Half"]}, {"a_type": "Half"}, True),
    ({"type": "TypesEqual", "value": ["Half", "Half", "Float", "Float"]}, {"a_type": "Half"}, False),
    ({"type": "HighPrecisionAccumulate", "value": True}, {"a_type": "Half", "compute_type": "Float"}, True),
    ({"type": "StridedBatched", "value": False}, {}, False),
    ({"type": "StochasticRounding", "value": True}, {"stochastic_rounding": True}, True),
    ({"type": "DeterministicMode", "value": False}, {"deterministic": True}, False),
    ({"type": "F32XdlMathOp", "value": "XFloat32"}, {"f32_xdl_math_op": "XFloat32"}, True),
    ({"type": "F32XdlMathOp", "value": "Float"}, {"f32_xdl_math_op": "XFloat32"}, False),
    ({"type": "KernelLanguageCompatible", "value": "Assembly"}, {}, True),
    ({"type": "KernelLanguageCompatible", "value": "Assembly"}, {"kernel_language": "Source"}, False),
    ({"type": "ArithmeticUnitCompatible", "value": "MFMA"}, {"arithmetic_unit": "MFMA"}, True),
    ({"type": "Fp16AltImpl"}, {"fp16_alt_impl": True}, True),
    ({"type": "Fp16AltImplRound"}, {}, False),
    ({"type": "CEqualsD"}, {"c_equals_d": False}, False),
    ({"type": "BetaZero"}, {"beta": 0.0}, True),
    ({"type": "BetaOne"}, {"beta": 0.5}, False),
    ({"type": "AlphaValue", "value": "One"}, {"alpha": 1.0}, True),
    ({"type": "AlphaValue", "value": "NegativeOne"}, {"alpha": 1.0}, False),
    ({"type": "AlphaValue", "value": "Any"}, {"alpha": 2.5}, True),
    ({"type": "BetaValue", "value": "Any"}, {"beta": -1.0}, True),
    ({"type": "BetaValue", "value": "One"}, {"beta": 2.0}, False),
    ({"type": "AIGreaterThanEqual", "value": 100.0}, {"m": 4096, "n": 4096, "k": 4096}, True),
    ({"type": "AILessThanEqual", "value": 1.0}, {"m": 4096, "n": 4096, "k": 4096}, False),
    ({"type": "PersistentKernelCheck"}, {}, True),
    ({"type": "CUEfficiency"}, {"performance_metric": "CUEfficiency"}, True),
    ({"type": "CUEfficiency"}, {}, False),
    ({"type": "CUEfficiency"}, {"performance_metric": "Auto", "m": 1000, "n": 1000, "k": 1000}, True),
    ({"type": "CUEfficiency"}, {"performance_metric": "Auto", "m": 1500, "n": 1500, "k": 1500}, False),
    ({"type": "ExperimentalDTree"}, {"performance_metric": "ExperimentalDTree"}, True),
    ({"type": "ExperimentalGrid"}, {"performance_metric": "ExperimentalDTree"}, False),
    ({"type": "EqualityMatching"}, {}, True),
    ({"type": "FreeSizeMatching"}, {}, True),
    ({"type": "PredictionMatching"}, {}, True),
    ({"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx90a"}}, {}, True),
    ({"type": "AMDGPU", "value": {"type": "Processor", "value": "gfx942"}}, {}, False),
    ({"type": "AMDGPU", "value": {"type": "CUCount", "value": 104}}, {}, True),
    ({"type": "AMDGPU", "value": {"type": "CUCount", "value": 110}}, {}, False),
    ({"type": "AMDGPU", "value": {"type": "IsAPU", "value": 0}}, {}, True),
    ({"type": "AMDGPU", "value": {"type": "IsAPU", "value": 1}}, {}, False),
]


@pytest.mark.parametrize(("raw", "fields", "expected"), CASES, ids=[f"{c[0]['type']}-{n}" for n, c in enumerate(CASES)])
def test_predicate_semantics(raw: dict[str, Any], fields: dict[str, Any], expected: bool) -> None:
    fields = dict(fields)
    m, n, k = fields.pop("m", 64), fields.pop("n", 64), fields.pop("k", 64)
    verdict = evaluate(predicate(raw), gemm(m, n, k, **fields), GFX90A)
    assert isinstance(verdict, Verdict)
    assert verdict.passed is expected
    assert verdict.reason.startswith(raw["type"])


def test_every_handler_has_a_case_or_a_tensilelite_test() -> None:
    covered = {case[0]["type"] for case in CASES} | {"TargetProcessor", "ProblemSizeEqual", "KernelLanguage",
                                                     "ArithmeticUnit", "RangeMatching", "WorkspaceCheck",
                                                     "BufferLoadOffsetLimitCheck_Beta", "Processor", "CUCount", "IsAPU"}  # fmt: skip
    covered |= set(TENSILELITE)
    covered |= {"ExperimentalStreamK", "ExperimentalMLP"}
    covered |= {"PciChipId", "PciChipID"}  # tests/unit/selection/test_pci_chip_rows.py
    covered |= {"LaunchLimits"}  # tests/unit/predicates/test_launch_limits.py
    assert set(HANDLERS) <= covered


def test_reasons_name_the_failing_operand() -> None:
    raw = {"type": "And", "value": [{"type": "TruePred"}, {"type": "Free0SizeMultiple", "index": 0, "value": 8}]}
    verdict = evaluate(predicate(raw), gemm(65, 64, 64), GFX90A)
    assert not verdict
    assert verdict.reason == "And[1] Free0SizeMultiple: not (M=65 % ==0 8)"


def test_unknown_type_is_an_error_not_a_pass() -> None:
    with pytest.raises(SelectionError, match="unknown predicate type 'MysteryCheck'"):
        evaluate(SimpleNamespace(type="MysteryCheck", value=1), gemm(1, 1, 1), GFX90A)


def test_size_index_beyond_a_gemm_is_an_error() -> None:
    with pytest.raises(SelectionError, match="out of range"):
        evaluate(predicate({"type": "SizeEqual", "index": 4, "value": 1}), gemm(1, 1, 1), GFX90A)


def test_none_is_cpp_default_true() -> None:
    assert evaluate(None, gemm(1, 1, 1), GFX90A).passed


def test_unknown_cu_count_never_matches() -> None:
    verdict = evaluate(predicate({"type": "CUCount", "value": 104}), gemm(1, 1, 1), Hardware(arch="gfx90a"))
    assert not verdict and "unknown" in verdict.reason


def test_workspace_check_uses_the_solution() -> None:
    problem = contraction_problem(GemmProblem(m=100, n=10, k=64, workspace_size=4000))
    solution = SimpleNamespace(
        size_mapping=SimpleNamespace(workspace_size_per_elem_c=4, stream_k=0, macro_tile=[64, 64, 1])
    )
    assert required_workspace(problem, GFX90A, solution) == 4000
    check = predicate({"type": "WorkspaceCheck"})
    assert evaluate(check, problem, GFX90A, solution=solution).passed
    tight = contraction_problem(GemmProblem(m=100, n=10, k=64, workspace_size=3999))
    assert not evaluate(check, tight, GFX90A, solution=solution).passed
    with pytest.raises(SelectionError, match="task predicate"):
        evaluate(check, problem, GFX90A)


def test_workspace_for_stream_k_is_partial_tiles_and_flags() -> None:
    problem = contraction_problem(GemmProblem(m=100, n=10, k=64))
    solution = SimpleNamespace(
        size_mapping=SimpleNamespace(workspace_size_per_elem_c=4, stream_k=3, macro_tile=[64, 32, 1])
    )
    assert required_workspace(problem, Hardware(arch="gfx942", cu_count=304), solution) == 64 * 32 * 4 * 304 + 304 * 4
    with pytest.raises(SelectionError, match="CU count"):
        required_workspace(problem, Hardware(arch="gfx942"), solution)


def test_evaluate_all_reports_the_first_failure() -> None:
    predicates = [predicate({"type": "TruePred"}), predicate({"type": "BetaZero"}), predicate({"type": "FalsePred"})]
    verdict = evaluate_all(predicates, gemm(1, 1, 1, beta=1.0), GFX90A)
    assert verdict.type == "BetaZero"


def test_buffer_load_beta_skips_when_c_is_not_read() -> None:
    check = SimpleNamespace(type="BufferLoadOffsetLimitCheck_Beta", value=1 << 20)
    assert evaluate(check, gemm(64, 64, 64, beta=0.0, ldc=1 << 20), GFX90A).passed
    assert not evaluate(check, gemm(64, 64, 64, beta=1.0, ldc=1 << 20), GFX90A).passed


def _lite(**fields: Any) -> Any:
    return contraction_problem(GemmProblem(m=256, n=128, k=512, hipblaslt=HipblasltFields(**fields)))


# tensilelite predicates (hipBLASLt ContractionProblemPredicates.hpp); duck-typed predicates
TENSILELITE: dict[str, list[tuple[Any, dict[str, Any], bool]]] = {
    "GroupedGemm": [(True, {"grouped_gemm": True}, True), (True, {}, False)],
    "UseGradient": [(False, {}, True)],
    "UseE": [(True, {}, False)],
    "Sparse": [(0, {}, True), (1, {}, False)],
    "SwizzleTensorA": [(False, {}, True)],
    "SwizzleTensorB": [(True, {}, False)],
    "ActivationNoGuard": [(False, {}, True)],
    "Activation": [("Relu", {}, True), ("Relu", {"activation_type": "Gelu"}, False),
                   ("Hipblaslt_all", {"activation_type": "Gelu"}, True), ("All", {"activation_type": "Silu"}, True)],
    "ActivationEnumWhiteList": [(["Relu"], {"activation_type": "All", "activation_enum": "Gelu"}, False),
                                (["Relu"], {}, True)],
    "ActivationComputeType": [("Float", {}, True), ("Float", {"activation_type": "Relu", "activation_compute_type": "Half"}, False)],
    "UseBias": [(0, {"use_bias": 1}, False), (1, {"use_bias": 1}, True), (0, {}, True)],
    "DataTypeE": [("Half", {}, True), ("Half", {"use_e": True, "e_type": "Float"}, False)],
    "UseScaleAB": [("Scalar", {}, True), ("Scalar", {"use_scale_ab": "Vector"}, False)],
    "UseScaleCD": [(False, {"use_scale_cd": True}, False)],
    "UseScaleAlphaVec": [(1, {"use_scale_alpha_vec": 1}, True), (2, {"use_scale_alpha_vec": 1}, False)],
    "BiasDataTypeWhiteList": [(["Half"], {"use_bias": 1, "bias_type": "Float"}, False), (["Float"], {"use_bias": 1, "bias_type": "Float"}, True)],
    "BiasSrcWhiteList": [([3], {"use_bias": 1, "bias_src": "D", "bias_length": 256}, True),
                         ([3], {"use_bias": 1, "bias_src": "D", "bias_length": 255}, False),
                         ([0], {"use_bias": 1, "bias_src": "D"}, False),
                         ([1], {"use_bias": 1, "bias_src": "B", "bias_length": 128}, True)],
    "AmaxDCheck": [(True, {"output_amax_d": True}, True), (True, {"output_amax_d": True, "gsu": 4}, False)],
    "SupportDeviceUserArguments": [(False, {"use_device_user_arguments": True, "grouped_gemm": True}, False), (False, {}, True)],
    "SynchronizerSizeCheck": [([256, 128, 1, 1, 1, 1], {}, True), ([1, 1, 64, 64, 64, 4], {}, False)],
    "WorkgroupNumberCheck": [([256, 128, 1], {}, True), ([1, 1, -1], {}, True)],
    "WorkgroupMappingXCCCheck": [([8, 32], {}, True), ([3, 32], {}, False), ([-1, 0], {}, True)],
    "GlobalSplitUCheckMinK": [([64, 4], {}, True), ([256, 4], {}, False), ([512, 1], {}, True), ([64, -1], {}, True)],
}  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "value", "fields", "expected"),
    [(kind, value, fields, expected) for kind, cases in TENSILELITE.items() for value, fields, expected in cases],
)
def test_tensilelite_predicates(kind: str, value: Any, fields: dict[str, Any], expected: bool) -> None:
    verdict = evaluate(SimpleNamespace(type=kind, value=value, index=0), _lite(**fields), GFX90A)
    assert verdict.passed is expected, verdict.reason


def test_tensilelite_types_equal_checks_the_compute_input_type() -> None:
    check = SimpleNamespace(type="TypesEqual", value=["Float"] * 4 + ["BFloat16"])
    assert not evaluate(check, _lite(), GFX90A).passed
    assert evaluate(check, _lite(compute_input_type="BFloat16"), GFX90A).passed

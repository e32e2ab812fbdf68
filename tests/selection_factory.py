"""Small synthetic master libraries and problems for the selection tests (raw dicts → models)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from tensilekit.model.library import MasterLibrary
from tensilekit.model.predicates import Predicate
from tensilekit.selection import ContractionProblem, GemmProblem, Hardware, contraction_problem
from tensilekit.selection.served import library_devices, served_problem_types

NN = "Contraction_l_Ailk_Bljk_Cijk_Dijk"
FLOAT4 = ["Float", "Float", "Float", "Float"]
_PREDICATE = TypeAdapter(Predicate)


def predicate(raw: dict[str, Any]) -> Any:
    """A validated predicate model from its file form."""
    return _PREDICATE.validate_python(raw)


def problem_predicate(*extra: dict[str, Any], op: str = NN, types: list[str] | None = None) -> dict[str, Any]:
    """``And`` of the problem-type predicates a generated solution carries, plus ``extra``."""
    return {
        "type": "And",
        "value": [
            {"type": "OperationIdentifierEqual", "value": op},
            {"type": "TypesEqual", "value": types or FLOAT4},
            {"type": "HighPrecisionAccumulate", "value": False},
            {"type": "StridedBatched", "value": True},
            *extra,
        ],
    }


def solution(index: int, *extra: dict[str, Any], task: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": fields.pop("name", f"kernel{index}"),
        "index": index,
        "hardwarePredicate": {"type": "TruePred"},
        "problemPredicate": problem_predicate(*extra),
        "taskPredicate": task or {"type": "TruePred"},
    }
    raw.update(fields)
    return raw


def type_row(library: dict[str, Any], types: list[str] | None = None) -> dict[str, Any]:
    return {
        "predicate": {
            "type": "And",
            "value": [
                {"type": "TypesEqual", "value": types or FLOAT4},
                {"type": "HighPrecisionAccumulate", "value": False},
            ],
        },
        "library": library,
    }


def matching(entries: list[tuple[list[int], int, float]], distance: str = "Euclidean") -> dict[str, Any]:
    properties = [{"type": "FreeSizeA", "index": 0}, {"type": "FreeSizeB", "index": 0}]
    if distance == "Equality":
        properties.append({"type": "BatchSize", "index": 0})
    properties.append({"type": "BoundSize", "index": 0})
    table = []
    for key, index, speed in entries:
        entry: dict[str, Any] = {"key": key, "index": index}
        if distance != "GridBased":
            entry["speed"] = speed
        table.append(entry)
    return {"type": "Matching", "properties": properties, "distance": distance, "table": table}


def master(
    solutions: list[dict[str, Any]],
    selection: dict[str, Any],
    *,
    arch: str = "gfx90a",
    op: str = NN,
    hardware_predicate: dict[str, Any] | None = None,
) -> MasterLibrary:
    """``Hardware → ProblemMap(op) → Problem(types) → selection node`` (the generated shape)."""
    hardware = hardware_predicate or {"type": "AMDGPU", "value": {"type": "Processor", "value": arch}}
    tree = {
        "type": "Hardware",
        "rows": [
            {
                "predicate": hardware,
                "library": {
                    "type": "ProblemMap",
                    "property": {"type": "OperationIdentifier"},
                    "map": {op: {"type": "Problem", "rows": [type_row(selection)]}},
                },
            }
        ],
    }
    return MasterLibrary.model_validate({"solutions": solutions, "library": tree})


def gemm(m: int, n: int, k: int, **fields: Any) -> ContractionProblem:
    fields.setdefault("beta", 1.0)
    return contraction_problem(GemmProblem(m=m, n=n, k=k, **fields))


GFX90A = Hardware(arch="gfx90a", cu_count=104)


def served_types(library: MasterLibrary) -> tuple[list[dict[str, Any]], list[str]]:
    """The problem types the library's solutions serve, and the processors its rows name."""
    processors = sorted({device.arch for device in library_devices(library)})
    return served_problem_types(library), processors or ["gfx90a"]


def random_queries(library: MasterLibrary, count: int, seed: int) -> tuple[list[GemmProblem], list[Hardware]]:
    """Queries in the spirit of the corpus categories: served types, random and edge sizes, flags."""
    import random

    rng = random.Random(seed)
    types, processors = served_types(library)
    problems: list[GemmProblem] = []
    devices: list[Hardware] = []
    for _ in range(count):
        fields = dict(rng.choice(types))
        if rng.random() < 0.1:
            fields["trans_a"] = rng.choice("NT")
        m, n, k = (int(rng.choice([rng.uniform(1, 70000), rng.uniform(1, 5000), rng.randint(0, 4)])) for _ in range(3))
        fields.update(m=m, n=n, k=k, batch=rng.choice([1, 1, 1, 2, 8, 64]), beta=rng.choice([1.0, 1.0, 0.0, 0.5, -1.0]),
                      alpha=rng.choice([1.0, 1.0, 0.0, -1.0, 2.5]), strided_batched=rng.random() < 0.85,
                      performance_metric=rng.choice(["DeviceEfficiency"] * 5 + ["CUEfficiency", "Auto", "ExperimentalDTree"]),
                      fp16_alt_impl=rng.random() < 0.1, fp16_alt_impl_round=rng.random() < 0.05,
                      deterministic=rng.random() < 0.05, workspace_size=rng.choice([None, None, None, 0]),
                      c_equals_d=rng.random() < 0.95)  # fmt: skip
        if rng.random() < 0.1:
            fields["lda"] = rng.choice([2**21, 5 * 10**7]) + m + k
        if rng.random() < 0.05:
            fields["ldd"] = rng.choice([2**22, 3 * 10**7])
        problems.append(GemmProblem(**fields))
        devices.append(Hardware(arch=rng.choice(processors + ["gfx90a"]), cu_count=rng.choice([104, 110, 120, 304, None]),
                                is_apu=rng.random() < 0.05))  # fmt: skip
    return problems, devices


def as_prediction_pools(node: Any) -> Any:
    """A master tree (plain data) with each FreeSize level written as a Prediction pool, as
    rocm-libraries ``SolutionLibrary.py`` @ 003add5959de writes one: the ``FreeSizeMatching`` row
    becomes ``PredictionMatching`` and the pool ``{type: Prediction, table: [index, …]}``."""
    if isinstance(node, dict):
        if node.get("type") == "FreeSizeMatching":
            return {**node, "type": "PredictionMatching"}
        if node.get("type") == "FreeSize":
            return {"type": "Prediction", "table": [entry["index"] for entry in node["table"]]}
        return {key: as_prediction_pools(value) for key, value in node.items()}
    if isinstance(node, list):
        return [as_prediction_pools(item) for item in node]
    return node

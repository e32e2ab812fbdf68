"""Golden tuning configs per architecture profile and dialect (``expected/<case>/``).

Each case builds a search group's first benchmark config (a seeded GA's generation 0) and
compares the written ``.yaml`` and ``.sh`` byte for byte with the reviewed files; then checks
that the YAML reads back as the same config, expands (as the driver does) to exactly the
kernels, every kernel passes the pruning rules, and every key is documented in docs/search.md.

Set ``TENSILEKIT_REGENERATE_GOLDEN=1`` to rewrite the expected files (then review the diff).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tensilekit.search.configs import expand_forks, problem_type_config, range_size, tuning_config, write_config
from tensilekit.search.ga import GAConfig, GAState, SearchProblem, propose
from tensilekit.search.params import Dialect, KernelParams, ProblemShape
from tensilekit.search.profiles import gene_space, profile_for
from tensilekit.search.pruning import is_valid, make_context

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
DOCS = HERE.parents[2] / "docs" / "search.md"
DECODE = (
    ProblemShape(6144, 8, 1, 4096, "T", "N", 4096, 4096),
    ProblemShape(4096, 8, 1, 4096, "T", "N", 4096, 4096),
    ProblemShape(4096, 8, 1, 14336, "T", "N", 14336, 14336),
)
PREFILL_NT = (ProblemShape(6144, 2048, 1, 4096, "N", "T", 6160, 2048),)

CASES: dict[str, dict[str, Any]] = {
    "gfx90a_tensilelite": {"arch": "gfx90a", "dialect": "tensilelite"},
    "gfx90a_tensile": {"arch": "gfx90a", "dialect": "tensile"},
    "gfx942_tensilelite": {"arch": "gfx942", "dialect": "tensilelite"},
    "gfx942_tensile": {"arch": "gfx942", "dialect": "tensile"},
    "gfx950_tensilelite": {"arch": "gfx950", "dialect": "tensilelite"},
    "gfx942_tensilelite_nt_range": {"arch": "gfx942", "dialect": "tensilelite", "shapes": PREFILL_NT, "beta": True,
                                    "ranges": [range_size([1024, 1024, 2048], [2048], [1], [4096])]},
}  # fmt: skip


def build(case: dict[str, Any]) -> tuple[dict[str, Any], list[KernelParams], str]:
    arch, dialect = case["arch"], case["dialect"]
    shapes = case.get("shapes", DECODE)
    profile = profile_for(arch)
    problem = SearchProblem(
        gene_space(profile, "B", dialect),
        make_context(profile, "B", shapes, dialect=dialect),
        tuple(1.0 for _ in shapes),
        "golden",
    )
    kernels = propose(GAState(), problem, GAConfig(population=6, seed=0))
    trans_a, trans_b = shapes[0].trans_a, shapes[0].trans_b
    config = tuning_config(
        problem_type_config("B", "B", "S", trans_a, trans_b), shapes, kernels, profile, dialect,
        ranges=case.get("ranges", ()), beta=case.get("beta", False),
    )  # fmt: skip
    return config, kernels, f"BBS_{trans_a}{trans_b}_0"


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_matches_the_reviewed_file(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    config, kernels, stem = build(case)
    header = [f"golden case {name}: {case['arch']}, {case['dialect']} config"]
    written = write_config(tmp_path, stem, config, header)
    expected_dir = EXPECTED / name
    if os.environ.get("TENSILEKIT_REGENERATE_GOLDEN"):
        expected_dir.mkdir(parents=True, exist_ok=True)
        for suffix in (".yaml", ".sh"):
            (expected_dir / f"{stem}{suffix}").write_bytes((tmp_path / f"{stem}{suffix}").read_bytes())
    for suffix in (".yaml", ".sh"):
        assert (tmp_path / f"{stem}{suffix}").read_bytes() == (expected_dir / f"{stem}{suffix}").read_bytes(), suffix

    # invariants: reads back, expands to exactly the kernels, all valid, idempotent
    loaded = yaml.safe_load(written.read_text())
    assert loaded == config
    dialect: Dialect = case["dialect"]
    defaults = profile_for(case["arch"]).default_genes("B")
    expanded = [
        KernelParams.from_fork_values(values, defaults) for values in expand_forks(loaded["BenchmarkProblems"][0][1])
    ]
    assert expanded == kernels and len(kernels) == 6
    context = make_context(profile_for(case["arch"]), "B", case.get("shapes", DECODE), dialect=dialect)
    assert all(is_valid(kernel, context) for kernel in kernels)
    (tmp_path / "again").mkdir()
    again = write_config(tmp_path / "again", stem, loaded, header)
    assert yaml.safe_load(again.read_text()) == loaded
    if dialect == "tensile":
        assert "WorkGroupMappingXCC" not in written.read_text() and "GlobalLoadVectorWidthA" in written.read_text()


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_every_key_written_is_documented() -> None:
    text = re.sub(r"```.*?```", "", DOCS.read_text(encoding="utf-8"), flags=re.DOTALL)
    spans = re.findall(r"`([^`\n]+)`", text)
    documented = {word for span in spans for word in re.findall(r"[A-Za-z0-9]+", span)}
    used: set[str] = set()
    for case in CASES.values():
        used |= _keys(build(case)[0])
    assert used <= documented, sorted(used - documented)


# ``validParameters`` of the kernel keys tensilekit writes, transcribed from hipBLASLt
# tensilelite/Tensile/Common/ValidParameters.py (029a0b4b) and ROCm/Tensile Tensile/Common.py (3bc3d95d).
_MFMA_LITE = [[32, 32, 4, 2], [32, 32, 8, 1], [16, 16, 4, 4], [16, 16, 16, 1], [4, 4, 4, 16],  # H
              [32, 32, 1, 2], [32, 32, 2, 1], [16, 16, 1, 4], [16, 16, 4, 1], [4, 4, 1, 16],  # S
              [32, 32, 2, 2], [32, 32, 4, 1], [16, 16, 2, 4], [16, 16, 8, 1], [4, 4, 2, 16],  # B
              [16, 16, 4, 1], [4, 4, 4, 4], [32, 32, 4, 1], [16, 16, 8, 1],  # D, X
              [32, 32, 16, 1], [16, 16, 32, 1], [16, 16, 16, 1]]  # F8N, WMMA  # fmt: skip
VALID: dict[str, dict[str, Any]] = {
    "tensilelite": {
        "DepthU": range(2, 1025), "GlobalSplitU": range(0, 1025),
        "GlobalSplitUAlgorithm": ["SingleBuffer", "MultipleBuffer", "MultipleBufferSingleKernel"],
        "StreamK": [0, 1, 2, 3], "WorkGroupMapping": range(-1024, 1025), "WorkGroupMappingXCC": [1, 2, 4, 8, 16, 32],
        "GlobalReadVectorWidthA": [-2, -1, 1, 2, 3, 4, 6, 8, 16], "GlobalReadVectorWidthB": [-2, -1, 1, 2, 3, 4, 6, 8, 16],
        "PrefetchGlobalRead": [0, 1, 2], "1LDSBuffer": [-1, 0, 1], "StaggerU": [0, 2, 4, 8, 16, 32, 64], "SourceSwap": [False, True],
        "KernelLanguage": ["Assembly"], "_mfma": _MFMA_LITE, "_tt": 32,
    },
    "tensile": {
        "DepthU": [*range(-16, 0), *range(2, 1025)], "GlobalSplitU": range(1, 4097),
        "GlobalSplitUAlgorithm": ["SingleBuffer", "MultipleBuffer"], "StreamK": [0, 1, 2, 3],
        "WorkGroupMapping": range(-1024, 1025), "GlobalLoadVectorWidthA": [-1, 1, 2, 3, 4, 6, 8, 16],
        "GlobalLoadVectorWidthB": [-1, 1, 2, 3, 4, 6, 8, 16], "PrefetchGlobalRead": [0, 1, 2], "1LDSBuffer": [-1, 0, 1],
        "StaggerU": [0, 2, 4, 8, 16, 32, 64], "KernelLanguage": ["Assembly"], "ScheduleIterAlg": [0, 1, 2, 3], "_mfma": _MFMA_LITE, "_tt": 64,
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_kernel_value_is_valid_for_the_driver(name: str) -> None:
    case = CASES[name]
    valid = VALID[case["dialect"]]
    config = build(case)[0]
    for solution in expand_forks(config["BenchmarkProblems"][0][1]):
        for key, value in solution.items():
            if key == "MatrixInstruction":
                mi, block, tile0, tile1, wave0, wave1 = value[:4], value[4], value[5], value[6], value[7], value[8]
                assert mi in valid["_mfma"] and block == 1 and wave0 in (1, 2, 4) and wave1 in (1, 2, 4)
                assert 1 <= tile0 <= valid["_tt"] and 1 <= tile1 <= valid["_tt"]
            else:
                assert key in valid and value in valid[key], (key, value)

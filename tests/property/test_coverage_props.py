"""Hypothesis: coverage's kernel is select's, for random workloads on corpus libraries.

* every GEMM's kernel and distance equal ``select_solution`` on the library (the reference walk
  ``select M N K`` uses) and ``select_batch`` (the compiled path of ``select --queries``);
* the classes partition the workload: shares sum to 1, ``none`` exactly when no kernel;
* ``exact`` means the matched entry has the GEMM's key; ``near`` that every size is within the factor;
* the tune-next ranking holds only GEMMs that are not exact, best score first.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.api import load_for_selection  # noqa: E402
from tensilekit.coverage import Classifier, CoverageClass, CoverageGemm, coverage_of, type_name  # noqa: E402
from tensilekit.selection import GemmProblem, Hardware, select_batch, select_solution  # noqa: E402
from tensilekit.selection.fast import CompiledLibrary  # noqa: E402
from tensilekit.selection.served import served_problem_types  # noqa: E402

CORPUS_MASTERS = [
    ("aldebaran_SB_NN_equality", "gfx90a"),
    ("aldebaran_DB_TN_dtree", "gfx90a"),
    ("aldebaran_NN_mixed", "gfx90a"),
    ("arcturus_HHS_BH_NT_cueff", "gfx908"),
    ("aquavanjaram942_B8B8S_BH_SR_NT", "gfx942"),
]


@cache
def _library(corpus: Path, name: str) -> tuple[Any, CompiledLibrary, list[dict[str, Any]]]:
    library, loader = load_for_selection(corpus / "masters" / f"{name}.dat")
    return library, Classifier(library, loader=loader).compiled, served_problem_types(library)


sizes = st.one_of(st.integers(1, 70000), st.integers(1, 512), st.sampled_from([64, 128, 1024, 4096, 8192, 4000, 7680]))


def draw_workload(data: st.DataObject, corpus: Path) -> tuple[str, list[CoverageGemm]]:
    name, arch = data.draw(st.sampled_from(CORPUS_MASTERS))
    _, _, served = _library(corpus, name)
    device = Hardware(arch=arch, cu_count=data.draw(st.sampled_from([None, 104, 110, 120, 304])))
    gemms = []
    for _ in range(data.draw(st.integers(1, 12))):
        fields = dict(data.draw(st.sampled_from(served)))
        fields.update(
            m=data.draw(sizes), n=data.draw(sizes), k=data.draw(sizes), batch=data.draw(st.sampled_from([1, 1, 1, 2, 16])),
            beta=data.draw(st.sampled_from([0.0, 1.0])),
            performance_metric=data.draw(st.sampled_from(["DeviceEfficiency", "CUEfficiency", "ExperimentalDTree"])),
        )  # fmt: skip
        if data.draw(st.booleans()):
            fields["trans_b"] = data.draw(st.sampled_from("NT"))
        problem = GemmProblem(**fields)
        measured = data.draw(st.one_of(st.none(), st.floats(0.0, 1e6)))
        gemms.append(CoverageGemm(problem, device, type_name(problem), data.draw(st.integers(1, 1000)), measured))
    return name, gemms


@settings(deadline=None)
@given(st.data(), st.sampled_from([0.0, 0.1, 0.5]))
def test_coverage_kernel_is_select_kernel(corpus: Path, data: st.DataObject, near: float) -> None:
    name, gemms = draw_workload(data, corpus)
    library, compiled, _ = _library(corpus, name)
    report = coverage_of(compiled, gemms, near=near, tune_next=0)
    assert len(report.gemms) == len(gemms) and not report.skipped
    batch = select_batch(compiled, [gemm.problem for gemm in gemms], [gemm.hardware for gemm in gemms])
    for position, (item, gemm) in enumerate(zip(report.gemms, gemms, strict=True)):
        reference = select_solution(library, gemm.problem, gemm.hardware)
        assert (item.index, item.distance) == (reference.index, reference.distance)
        assert item.index == batch[position].index
        assert (item.coverage_class is CoverageClass.NONE) == (item.index is None)
        if item.coverage_class is CoverageClass.EXACT and item.matched is not None:
            assert reference.matched_key == item.matched.key
        if item.coverage_class is CoverageClass.NEAR and item.matched is not None:
            assert all(r is not None and 1 / (1 + near) <= r <= 1 + near for r in item.matched.ratios.values())
    total = sum(report.by_class.values())
    assert total == pytest.approx(1.0) or total == 0.0
    assert all(item.coverage_class is not CoverageClass.EXACT for item in report.tune_next)
    scores = [item.score for item in report.tune_next]
    assert scores == sorted(scores, reverse=True)
    assert len(report.tune_next) == sum(1 for item in report.gemms if item.coverage_class is not CoverageClass.EXACT)

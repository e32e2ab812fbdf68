"""coverage.classify: each class on hand-made and fixture libraries, the matched and nearest entries, weights."""

from __future__ import annotations

from typing import Any

import pytest
from selection_factory import GFX90A, master, matching, solution

from tensilekit.api import load_for_selection
from tensilekit.coverage import (
    Classifier,
    CoverageClass,
    CoverageGemm,
    WeightBasis,
    coverage_of,
    type_name,
)
from tensilekit.data import sample_library_path
from tensilekit.errors import SelectionError
from tensilekit.selection import GemmProblem, Hardware, select_solution

GFX90A_ANY_CU = Hardware(arch="gfx90a")


def sgemm(m: int, n: int, k: int, calls: int = 1, measured_us: float | None = None, **fields: object) -> CoverageGemm:
    problem = GemmProblem(m=m, n=n, k=k, **fields)  # type: ignore[arg-type]
    return CoverageGemm(problem, GFX90A_ANY_CU, type_name(problem), calls, measured_us)


@pytest.fixture(scope="module")
def sample() -> Classifier:
    library, loader = load_for_selection(sample_library_path())
    return Classifier(library, loader=loader)


def test_an_entry_with_exactly_the_gemm_key_is_exact(sample: Classifier) -> None:
    item = sample.classify(sgemm(4096, 4096, 4096))
    assert item.coverage_class is CoverageClass.EXACT
    assert item.matched is not None and item.matched.key == (4096, 4096, 4096)
    assert item.matched.ratios == {"M": 1.0, "N": 1.0, "K": 1.0}
    assert item.distance == 0.0 and item.via == "table"
    assert item.table == "Euclidean table, 12 entries, key [M, N, K]"


def test_within_ten_percent_in_every_dimension_is_near_and_just_outside_is_far(sample: Classifier) -> None:
    near = sample.classify(sgemm(4000, 4096, 4096))
    assert near.coverage_class is CoverageClass.NEAR
    assert near.matched is not None and near.matched.ratios["M"] == pytest.approx(4000 / 4096)
    # 4096 / 1.1 = 3723.6: M = 3700 is more than 10 % below the entry
    far = sample.classify(sgemm(3700, 4096, 4096))
    assert far.coverage_class is CoverageClass.FAR
    wider = Classifier(sample.compiled, near=0.2).classify(sgemm(3700, 4096, 4096))
    assert wider.coverage_class is CoverageClass.NEAR


def test_a_skinny_gemm_on_a_square_entry_is_far_with_the_ratio_that_shows_it(sample: Classifier) -> None:
    item = sample.classify(sgemm(4096, 8, 4096))
    assert item.coverage_class is CoverageClass.FAR
    assert item.matched is not None and item.matched.sizes == {"M": 4096, "N": 1024, "K": 4096}
    assert item.matched.ratios["N"] == pytest.approx(8 / 1024)
    assert item.nearest is not None and item.nearest.position == item.matched.position


def test_an_unserved_type_has_no_kernel(sample: Classifier) -> None:
    item = sample.classify(sgemm(4096, 4096, 4096, a_type="Double"))
    assert item.coverage_class is CoverageClass.NONE
    assert (item.index, item.matched, item.nearest, item.via) == (None, None, None, None)


def test_an_equality_hit_is_exact_and_a_miss_served_by_the_generic_row_is_fallback(fixture_path: Any) -> None:
    library, _ = load_for_selection(fixture_path("masters", "coverage_equality_gfx90a.yaml"))
    classifier = Classifier(library)
    cu104 = Hardware(arch="gfx90a", cu_count=104)
    hit = classifier.classify(CoverageGemm(GemmProblem(m=1024, n=1024, k=1024), cu104, "SSS_NN"))
    assert hit.coverage_class is CoverageClass.EXACT
    assert hit.table is not None and hit.table.startswith("Equality table")
    assert hit.matched is not None and hit.matched.sizes == {"M": 1024, "N": 1024, "batch": 1, "K": 1024}
    miss = classifier.classify(CoverageGemm(GemmProblem(m=4000, n=4096, k=4096), cu104, "SSS_NN"))
    assert miss.coverage_class is CoverageClass.FALLBACK
    assert miss.fell_through == ("Hardware row 0 (AMDGPU)",)
    assert miss.table is not None and miss.table.startswith("Euclidean table")
    # without a CU count the CU-104 row does not hold: the generic row is the normal path, not a fallback
    plain = classifier.classify(CoverageGemm(GemmProblem(m=4000, n=4096, k=4096), GFX90A_ANY_CU, "SSS_NN"))
    assert (plain.coverage_class, plain.fell_through) == (CoverageClass.NEAR, ())


def test_the_nearest_entry_is_reported_when_its_kernel_cannot_run_the_gemm() -> None:
    # the nearest entry's kernel needs M % 64 == 0; the runtime skips it for the farther one
    library = master(
        [solution(1, {"type": "Free0SizeMultiple", "index": 0, "value": 64}), solution(2)],
        matching([([1024, 1024, 1024], 1, 100.0), ([4096, 4096, 4096], 2, 50.0)]),
    )
    item = Classifier(library).classify(CoverageGemm(GemmProblem(m=1000, n=1024, k=1024, beta=1.0), GFX90A, "SSS_NN"))
    assert item.index == 2 and item.coverage_class is CoverageClass.FAR
    assert item.nearest is not None and item.nearest.key == (1024, 1024, 1024)
    assert item.nearest.usable is False and item.nearest.index == 1
    assert item.matched is not None and item.matched.key == (4096, 4096, 4096)


@pytest.mark.parametrize(
    ("m", "n", "k"), [(4096, 4096, 4096), (1000, 1024, 512), (1, 1, 1), (70000, 3, 9000), (0, 16, 16)]
)
def test_the_kernel_is_what_select_says(sample: Classifier, m: int, n: int, k: int) -> None:
    gemm = sgemm(m, n, k)
    expected = select_solution(sample.compiled.library, gemm.problem, gemm.hardware)
    item = sample.classify(gemm)
    assert (item.index, item.distance) == (expected.index, expected.distance)


def test_weights_are_measured_time_only_when_every_gemm_has_one(sample: Classifier) -> None:
    timed = [sgemm(4096, 4096, 4096, calls=2, measured_us=300.0), sgemm(4096, 8, 4096, calls=9, measured_us=100.0)]
    report = coverage_of(sample.compiled, timed)
    assert report.basis is WeightBasis.MEASURED_TIME
    assert [item.share for item in report.gemms] == [0.75, 0.25]
    mixed = [timed[0], sgemm(4096, 8, 4096, calls=9)]
    report = coverage_of(sample.compiled, mixed)
    assert report.basis is WeightBasis.CALLS_X_FLOPS
    flops = [2 * 4096**3 * 2, 2 * 4096 * 8 * 4096 * 9]
    assert report.gemms[0].share == pytest.approx(flops[0] / sum(flops))


def test_summary_shares_per_class_and_type_and_the_tune_next_ranking(sample: Classifier) -> None:
    gemms = [
        sgemm(4096, 4096, 4096, measured_us=50.0),  # exact
        sgemm(4000, 4096, 4096, measured_us=30.0),  # near: 0.3 x 0.2
        sgemm(4096, 8, 4096, measured_us=15.0),  # far: 0.15 x 0.6
        sgemm(64, 64, 64, a_type="Double", measured_us=5.0),  # none: 0.05 x 1.0
    ]
    report = coverage_of(sample.compiled, gemms)
    assert report.by_class[CoverageClass.EXACT] == pytest.approx(0.5)
    assert report.by_class[CoverageClass.NONE] == pytest.approx(0.05)
    assert sum(report.by_class.values()) == pytest.approx(1.0)
    assert [(kind.gemm_type, kind.gemms) for kind in report.by_type] == [("DDD_NN", 1), ("SSS_NN", 3)]
    assert report.by_type[1].by_class[CoverageClass.NEAR] == pytest.approx(0.3)
    assert [(item.gemm.problem.m, item.coverage_class.value) for item in report.tune_next] == [
        (4096, "far"),
        (4000, "near"),
        (64, "none"),
    ]
    assert coverage_of(sample.compiled, gemms, tune_next=1).tune_next == report.tune_next[:1]


def test_a_gemm_the_library_cannot_evaluate_is_skipped_not_fatal() -> None:
    table = matching([([8, 8, 8], 1, 1.0)])
    table["properties"][0]["index"] = 1  # FreeSizeA(1): a GEMM has one free index per side
    library = master([solution(1)], table)
    gemm = CoverageGemm(GemmProblem(m=8, n=8, k=8), GFX90A, "SSS_NN", origin="w.log:3")
    report = coverage_of(library, [gemm])
    assert report.gemms == ()
    assert len(report.skipped) == 1 and report.skipped[0].origin == "w.log:3"


def test_near_must_not_be_negative(sample: Classifier) -> None:
    with pytest.raises(SelectionError, match="near"):
        Classifier(sample.compiled, near=-0.1)


def test_json_form_has_every_field(sample: Classifier) -> None:
    report = coverage_of(sample.compiled, [sgemm(4096, 8, 4096, calls=3)])
    data = report.to_dict()
    gemm = data["gemms"][0]
    assert gemm["class"] == "far" and gemm["calls"] == 3 and gemm["matched"]["ratios"]["N"] == pytest.approx(8 / 1024)
    assert data["weight_basis"] == "calls x flops"
    assert data["summary"]["by_class"]["far"] == {"share": 1.0, "gemms": 1}
    assert data["tune_next"][0]["rank"] == 1


def test_progress_advances_to_the_total_and_changes_nothing(sample: Classifier) -> None:
    gemms = [sgemm(64 + i, 128 + i % 7, 256) for i in range(5000)]  # two chunks of the batch path
    steps: list[int] = []
    report = coverage_of(sample.compiled, gemms, progress=steps.append)
    assert steps == [4096, 904] and sum(steps) == len(gemms)
    assert report == coverage_of(sample.compiled, gemms)


def test_progress_counts_the_gemms_redone_one_by_one() -> None:
    table = matching([([8, 8, 8], 1, 1.0)])
    table["properties"][0]["index"] = 1  # the batch path cannot evaluate it: every GEMM is retried and skipped
    library = master([solution(1)], table)
    gemms = [CoverageGemm(GemmProblem(m=8, n=8, k=8), GFX90A, "SSS_NN", origin=f"w.log:{n}") for n in range(3)]
    steps: list[int] = []
    report = coverage_of(library, gemms, progress=steps.append)
    assert sum(steps) == 3 and len(report.skipped) == 3

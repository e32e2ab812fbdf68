"""Differential test: kernels no corpus logic has (DirectToVgpr, tensor swizzling, Stream-K on other
data types), built by ``tensilekit build-master`` and by AMD's tensilelite (``../shared/amd/build-master``
for hipBLASLt 7d9fb683, ``build-master-0.12.1`` for 0.12.1), give the same bytes (YAML and ``.dat``;
for 0.12.1 lazy too).

The logic files are made here from small gfx942 corpus files, one change each (the table below),
then given the load layout tensilelite derives for them (``amd_build.amd_load_layout``), as a tuning
run with that setting would have stored it. All variants are built together (one AMD call per
build): what 0.12.1 adds shows in the names (``STA_``/``STB_``, ``ASEM64``), the predicates
(``BoundSizeMultiple``, ``Free1SizeMultiple``, ``SwizzleTensorA/B``) and in the solutions tensilelite
rejects (kept in the library with the derivation stopped where it returned), which the test checks
AMD's output has, so that a change of corpus cannot leave them untested.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from amd_build import amd_build_master, amd_load_layout, build_both_formats, written
from click.testing import CliRunner

from tensilekit.cli.main import cli

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

_G = "aquavanjaram/gfx942"
_TT = f"{_G}/GridBased/aquavanjaram_Cijk_Alik_Bjlk_F8BS_BH_BiasSB_HAS_SAB_SAV_UserArgs.yaml"
_NN = f"{_G}/GridBased/aquavanjaram_Cijk_Ailk_Bljk_F8BS_BH_BiasSB_HAS_SAB_SAV_UserArgs.yaml"
_TN = f"{_G}/Equality/aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"
_NT = f"{_G}/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml"

#: In a variant's solution changes: changes to every other solution (the first, third …).
EVERY_OTHER = "every other"

#: name -> (corpus logic file, ProblemType changes, changes to every solution)
VARIANTS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # DirectToVgprA on TT: ASEM raised to DepthU (0.12.1); one solution (PLR 0) rejected
    "a_tt_dtva": (_TT, {}, {"DirectToVgprA": True}),
    # swizzled A on TT: STA_, SwizzleTensorA and BoundSizeMultiple predicates
    "b_tt_swizzle_a": (_TT, {"SwizzleTensorA": True}, {"DirectToVgprA": True}),
    # DirectToVgprB on NN: ASEM raised for B
    "c_nn_dtvb": (_NN, {}, {"DirectToVgprB": True, "WaveSeparateGlobalReadB": 0}),
    # swizzled A on TN (no tail-loop predicate), swizzled B on TN (Free1SizeMultiple)
    "d_tn_swizzle_a": (_TN, {"SwizzleTensorA": True}, {"DirectToVgprA": True}),
    "e_tn_swizzle_b": (_TN, {"SwizzleTensorB": True}, {"DirectToVgprB": True}),
    # Stream-K on F8: 0.12.1 rejects the data type and stops deriving
    "f_tn_streamk_f8": (_TN, {}, {"StreamK": 3}),
    # DirectToVgprA on NT (TLU, half: the packing checks); Stream-K on half (accepted; no SAV, another
    # problem type than g's)
    "g_nt_dtva": (_NT, {}, {"DirectToVgprA": True}),
    "h_nt_streamk": (_NT, {"UseScaleAlphaVec": 0}, {"StreamK": 3}),
    # every other solution with another MinVgprNumber: 7d9fb683 names all kernels MVN…, 0.12.1 none
    "i_tt_min_vgpr": (_TT, {}, {EVERY_OTHER: {"MinVgprNumber": 8}}),
}

#: A variant 0.12.1's Solution fails on (``reject(statue, …)``): not built, refused.
REFUSED = ("z_tn_streamk_schedule", (_TN, {}, {"StreamK": 3, "ScheduleLocalWrite": 0}))


def _variant(source: Path, problem_type: Mapping[str, Any], solutions: Mapping[str, Any], out: Path) -> Path:
    data = yaml.load(source.read_text(), Loader=yaml.CSafeLoader)
    for state in (data[4], *(solution["ProblemType"] for solution in data[5])):
        state.update(problem_type)
    for number, solution in enumerate(data[5]):
        solution.update({key: value for key, value in solutions.items() if key != EVERY_OTHER})
        if number % 2 == 0:
            solution.update(solutions.get(EVERY_OTHER, {}))
    out.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper))
    return out


@pytest.fixture(scope="module")
def derived(corpus: Path, amd: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every variant (and :data:`REFUSED`), as 0.12.1's Solution derives its load layout."""
    folder = tmp_path_factory.mktemp("variants")
    (folder / "made").mkdir()
    made = [
        _variant(corpus / "logic" / "hipblaslt" / source, pt, changes, folder / "made" / f"{name}.yaml")
        for name, (source, pt, changes) in [*VARIANTS.items(), REFUSED]
    ]
    return amd_load_layout(amd, "tensilelite-0.12.1", made, folder / "logic")


@pytest.fixture(scope="module")
def variants(derived: list[Path]) -> list[Path]:
    return derived[:-1]


def _compare(theirs: Path, ours: Path) -> None:
    expected = sorted(path.name for path in theirs.iterdir())
    assert expected and [path.name for path in written(ours)] == expected
    for name in expected:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


def test_variants_build_like_hipblaslt_0121(amd: Path, variants: list[Path], tmp_path: Path) -> None:
    for lazy in (False, True):
        flag = ["--lazy"] if lazy else []
        theirs = amd_build_master(
            amd, "gfx942", variants, tmp_path / f"amd{lazy}", lazy=lazy, tool="build-master-0.12.1"
        )
        ours = build_both_formats(
            [*map(str, variants), *flag, "--hipblaslt-version", "0.12.1"], tmp_path / f"ours{lazy}"
        )
        _compare(theirs, ours)
        if not lazy:  # what the variants are for is in AMD's master
            master = (theirs / "TensileLibrary_gfx942.yaml").read_text()
            for shown in ("STA_", "STB_", "_ASEM64_", "_ASEM1_", "type: BoundSizeMultiple", "type: Free1SizeMultiple"):
                assert shown in master, shown
            assert "_MVN" not in master
        else:
            names = " ".join(path.name for path in theirs.iterdir())
            assert "_STA_" in names and "_STB_" in names


def test_variants_build_like_hipblaslt_7d9fb683(amd: Path, variants: list[Path], tmp_path: Path) -> None:
    """hipBLASLt 7d9fb683 derives the same files by its own DirectToVgpr rules (no ASEM raise, the
    swizzle keys unknown to it)."""
    theirs = amd_build_master(amd, "gfx942", variants, tmp_path / "amd")
    ours = build_both_formats([*map(str, variants), "--hipblaslt-version", "7d9fb683"], tmp_path / "ours")
    _compare(theirs, ours)
    master = (theirs / "TensileLibrary_gfx942.yaml").read_text()
    assert "_ASEM64_" not in master and "_MVN8_" in master


def test_streamk_with_schedule_local_write_is_refused_as_0121_refuses_it(derived: list[Path], tmp_path: Path) -> None:
    """0.12.1's Solution fails on a Stream-K kernel with ScheduleLocalWrite != 1 (``reject(statue, …)``,
    a NameError, in the Solution() its build calls per logic-file solution): tensilekit refuses the
    file and writes nothing; 7d9fb683 builds it."""
    made = derived[-1]
    error = made.with_name(made.name + ".error")
    assert not made.exists() and "NameError: name 'statue' is not defined" in error.read_text()
    logic = made.parent.parent / "made" / made.name
    out = tmp_path / "ours"
    out.mkdir()
    ours = CliRunner().invoke(cli, ["build-master", str(logic), "--hipblaslt-version", "0.12.1", "-o", f"{out}/"])
    assert ours.exit_code not in (0, None) and ours.exception is not None
    assert made.name in ours.output and "ScheduleLocalWrite" in ours.output and "Traceback" not in ours.output
    assert list(out.iterdir()) == []
    older = CliRunner().invoke(cli, ["build-master", str(logic), "--hipblaslt-version", "7d9fb683", "-o", f"{out}/"])
    assert older.exit_code == 0, older.output

"""Differential property test of ``remap`` against AMD's code (issue 24): random subsets and orders
of small gfx942 hipBLASLt logic files for OLD and for NEW, both built by AMD's tensilelite
(``../shared/amd/build-master``), so indices shift, solutions disappear and (one kernel's launch
setting retuned in place) records change under an unchanged kernel name, or (a row file read
twice) several solutions of NEW share one identity. TunableOp rows are made
from AMD's C++ heuristic on OLD (``../shared/amd/select-oracle``); every remapped row's status is
checked against AMD's records and select-oracle's answers on NEW
(``remap_oracle_support.check_rows_against_amd``).

Each example costs two builds (~1-3 s each, cached across examples) and two oracle calls, so the
example count is small and the file is marked slow.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from remap_oracle_support import (
    DEVICES,
    build_master,
    check_rows_against_amd,
    oracle,
    tunableop_line,
    tunableop_queries,
)

from tensilekit.remapping import RemapStatus, remap

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

_ROOT = "logic/hipblaslt/aquavanjaram"
#: files whose GEMM types a TunableOp file names (Half NT; Float NN on 80 CUs): OLD has one at least
_ROW_FILES = (
    "gfx942/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
    "gfx942_80cu/Equality/aquavanjaram_Cijk_Ailk_Bljk_SB_UserArgs.yaml",
)
#: small files of other types: they shift the indices of the row files' solutions
_OTHER_FILES = (
    "gfx942/Equality/aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml",
    "gfx942/GridBased/aquavanjaram_Cijk_Ailk_Bljk_F8BS_BH_BiasSB_HAS_SAB_SAV_UserArgs.yaml",
    "gfx942/FreeSize/aquavanjaram_Cijk_Ailk_Bljk_HSS_BH_Bias_HAS_SAV_Freesize_custom_GSUs.yaml",
)
_WGM = re.compile(r"^    WorkGroupMapping: (\d+)$", re.M)


@st.composite
def build_pairs(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...], int | None, bool]:
    """OLD's files (a row file among them) and NEW's, each in a drawn order; which kernel of NEW's
    first row file is retuned (None: none); whether NEW reads a copy of that file too (every
    kernel of it twice: ambiguous)."""
    first = draw(st.sampled_from(_ROW_FILES))
    rest = draw(
        st.lists(st.sampled_from([f for f in _ROW_FILES + _OTHER_FILES if f != first]), max_size=2, unique=True)
    )
    old = draw(st.permutations([first, *rest]))
    new = draw(st.lists(st.sampled_from(_ROW_FILES + _OTHER_FILES), min_size=1, max_size=3, unique=True))
    retune = draw(st.none() | st.integers(min_value=0, max_value=15))
    return tuple(old), tuple(new), retune, draw(st.booleans())


def _retuned(source: Path, occurrence: int, folder: Path) -> Path:
    """``source`` with one kernel's WorkGroupMapping changed (a launch setting kernel names omit):
    same file name, same table, so that kernel keeps its place and its name."""
    text = source.read_text(encoding="utf-8")
    found = list(_WGM.finditer(text))
    match = found[occurrence % len(found)]
    value = "4" if match.group(1) != "4" else "8"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    target.write_text(text[: match.start(1)] + value + text[match.end(1) :], encoding="utf-8")
    return target


def test_random_builds_remap_like_amd(corpus: Path, amd: Path) -> None:
    seen: set[RemapStatus] = set()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        masters: dict[tuple[Any, ...], Path] = {}  # Hypothesis repeats builds: each is made once

        def built(files: tuple[str, ...], retune: int | None = None, duplicate: bool = False) -> Path:
            row_file = next((number for number, name in enumerate(files) if name in _ROW_FILES), None)
            key = (files, retune, duplicate) if row_file is not None else (files, None, False)
            if key not in masters:
                folder = tmp / f"build{len(masters)}"
                paths = [corpus / _ROOT / name for name in files]
                if row_file is not None and duplicate:
                    (folder / "copy").mkdir(parents=True)
                    paths.append(folder / "copy" / f"copy_{paths[row_file].name}")
                    paths[-1].write_bytes(paths[row_file].read_bytes())
                if row_file is not None and retune is not None:
                    paths[row_file] = _retuned(paths[row_file], retune, folder / "retuned")
                masters[key] = build_master(amd, folder, paths)
            return masters[key]

        @settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(build_pairs())
        @example((_ROW_FILES, (_OTHER_FILES[0], _ROW_FILES[1], _ROW_FILES[0]), None, True))  # moved, ambiguous
        def check(case: tuple[tuple[str, ...], tuple[str, ...], int | None, bool]) -> None:
            old_files, new_files, retune, duplicate = case
            old = built(old_files)
            new = built(new_files, retune, duplicate)
            queries = tunableop_queries(old)
            answers = oracle(amd, old, queries, tmp)
            runs: list[tuple[Any, dict[str, Any]]] = []
            for dtype, counts in DEVICES.items():
                recorded = [(q, answers[q["id"]]["expected"]) for q in queries if q["a_type"] == dtype]
                recorded = [(query, expected["index"]) for query, expected in recorded if expected]
                if not recorded:
                    continue
                artefact = tmp / f"tunableop_{dtype}.csv"
                artefact.write_text("".join(tunableop_line(query, index) for query, index in recorded))
                for cus in counts:
                    report = remap([artefact], old, new, cu_count=cus)
                    assert not report.artefacts[0].bad_lines
                    assert [(row.line, row.old_index) for row in report.rows] == [
                        (line, index) for line, (_, index) in enumerate(recorded, start=1)
                    ]
                    runs += [
                        (row, dict(query, cu_count=cus)) for row, (query, _) in zip(report.rows, recorded, strict=True)
                    ]
            assert runs, "OLD holds a row file: some rows are recorded"
            seen.update(check_rows_against_amd(amd, old, new, runs, tmp))

        check()
    print("statuses seen:", sorted(status.value for status in seen))  # shown with -s

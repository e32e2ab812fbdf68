"""Differential test of ``remap`` against AMD's code.

AMD's tensilelite TensileCreateLibrary (``../shared/amd/build-master``) builds an OLD master and two
NEW masters from different subsets of ``corpus/logic/hipblaslt`` files, so indices shift and some
solutions disappear. TunableOp rows are made from AMD's C++ heuristic on OLD
(``../shared/amd/select-oracle``: each query's ``expected`` index). For every row remap reports:

* ``same``/``moved`` -- NEW's record at ``new_index``, as AMD wrote it (the msgpack bytes, not
  tensilekit's model), equals OLD's apart from the renumbered fields, and select-oracle lists
  ``new_index`` among the supported solutions (``all_supported``) of the row's problem on NEW;
* ``rejected`` -- the same record equality, and select-oracle does *not* list ``new_index``
  (the 80-CU float kernels on a 304-CU device);
* ``missing`` -- no record of NEW equals OLD's; for missing and rejected rows the heuristic pick
  given is select-oracle's ``expected`` on NEW (none when NEW serves no Half NT GEMM; the retuned kernel's new record when
  one kernel of a file was retuned in place);
* ``ambiguous`` -- several do.

Four builds and four oracle calls (~3 s each), so the file is marked slow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from remap_oracle_support import (
    DEVICES,
    build_master,
    check_rows_against_amd,
    oracle,
    records,
    standin_create_library,
    tunableop_line,
    tunableop_queries,
)

from tensilekit.cli.main import cli
from tensilekit.remapping import RemapRow, RemapStatus, remap

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

_FILES = {  # gfx942 logic of two plain types TunableOp can name (Half NT, float NN: 80-CU rows)
    "half": "aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml",
    "gsu": "aquavanjaram/gfx942/FreeSize/aquavanjaram_Cijk_Ailk_Bljk_HSS_BH_Bias_HAS_SAV_Freesize_custom_GSUs.yaml",
    "float80": "aquavanjaram/gfx942_80cu/Equality/aquavanjaram_Cijk_Ailk_Bljk_SB_UserArgs.yaml",
}
_BUILDS = {"old": ["half", "float80"], "new_more": ["half", "gsu", "float80"], "new_less": ["gsu", "float80"]}


def _retuned(corpus: Path, tmp: Path) -> Path:
    """The Half file with its first kernel retuned (WorkGroupMapping 8 -> 4, a launch setting
    kernel names omit): same file name, same table, so that kernel keeps its index."""
    source = corpus / "logic" / "hipblaslt" / _FILES["half"]
    text = source.read_text(encoding="utf-8")
    assert text.count("    WorkGroupMapping: 8\n") > 1
    (tmp / "retuned").mkdir()
    target = tmp / "retuned" / source.name
    target.write_text(text.replace("    WorkGroupMapping: 8\n", "    WorkGroupMapping: 4\n", 1), encoding="utf-8")
    return target


def _build(amd: Path, corpus: Path, out: Path, names: list[str]) -> Path:
    # The retuned copy lives under tmp, which sorts before or after the corpus depending on where
    # each is: the order is the list's.
    files = [name if name.startswith("/") else str(corpus / "logic" / "hipblaslt" / _FILES[name]) for name in names]
    return build_master(amd, out, files)


@pytest.fixture(scope="module")
def builds(amd: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("remap")
    builds = dict(_BUILDS, new_retuned=[str(_retuned(corpus, tmp)), "float80"])
    masters = {name: _build(amd, corpus, tmp / name, files) for name, files in builds.items()}
    queries = tunableop_queries(masters["old"])
    answers = oracle(amd, masters["old"], queries, tmp)
    rows: dict[int, dict[str, Any]] = {}
    text = "Validator,PT_VERSION,2.6.0\nValidator,GCN_ARCH_NAME,gfx942:sramecc+:xnack-\n"
    for query in queries:
        expected = answers[query["id"]]["expected"]
        if expected:
            rows[text.count("\n") + 1] = query
            text += tunableop_line(query, expected["index"])
    artefact = tmp / "tunableop_results0.csv"
    artefact.write_text(text)
    return {"tmp": tmp, "masters": masters, "rows": rows, "artefact": artefact}


_DEVICES = {dtype: DEVICES[dtype] for dtype in ("Half", "Float")}  # the types of OLD's TunableOp rows


def _remapped(builds: dict[str, Any], new: Path) -> list[tuple[str, int, RemapRow, dict[str, Any]]]:
    """The recorded rows remapped to ``new``, one TunableOp file per type and one run per device:
    (type, CU count, row, its select-oracle query)."""
    masters, rows, tmp = builds["masters"], builds["rows"], builds["tmp"]
    runs = []
    for dtype, counts in _DEVICES.items():
        lines = [line for line, query in sorted(rows.items()) if query["a_type"] == dtype]
        artefact = tmp / f"{dtype}.csv"
        artefact.write_text("".join(builds["artefact"].read_text().splitlines(keepends=True)[n - 1] for n in lines))
        numbering = dict(enumerate(lines, start=1))  # artefact line -> line of the whole file
        for cus in counts:
            report = remap([artefact], masters["old"], new, cu_count=cus)
            assert not report.artefacts[0].bad_lines
            assert [row.line for row in report.rows] == sorted(numbering)
            runs += [(dtype, cus, row, dict(rows[numbering[row.line]], cu_count=cus)) for row in report.rows]
    return runs


@pytest.mark.parametrize("new", ["new_more", "new_less", "new_retuned"])
def test_remap_agrees_with_amds_build_and_runtime(amd: Path, builds: dict[str, Any], new: str) -> None:
    masters, rows, tmp = builds["masters"], builds["rows"], builds["tmp"]
    assert len(rows) >= 10
    runs = _remapped(builds, masters[new])
    found = check_rows_against_amd(amd, masters["old"], masters[new], [(row, query) for _, _, row, query in runs], tmp)
    statuses: dict[tuple[str, int], set[RemapStatus]] = {}
    for (dtype, cus, _, _), status in zip(runs, found, strict=True):
        statuses.setdefault((dtype, cus), set()).add(status)
    moved_or_same = {RemapStatus.MOVED} if new != "new_retuned" else {RemapStatus.SAME}
    assert statuses[("Float", 80)] == moved_or_same
    assert statuses[("Float", 304)] == {RemapStatus.REJECTED}
    if new == "new_more":  # the Half file is read first in both builds; the 80-CU file shifts
        assert statuses[("Half", 304)] == {RemapStatus.SAME}
    elif new == "new_less":  # the Half file is gone
        assert statuses[("Half", 304)] == {RemapStatus.MISSING}
    else:  # one kernel retuned in place: its rows are missing, and the heuristic picks the new kernel
        assert statuses[("Half", 304)] == {RemapStatus.SAME, RemapStatus.MISSING}
        picks = {row.heuristic_index for _, _, row, _ in runs if row.status is RemapStatus.MISSING}
        assert picks == {0}


def test_remap_to_a_standin_tensilecreatelibrary_build(amd: Path, corpus: Path, builds: dict[str, Any]) -> None:
    """NEW built as a hipBLASLt install builds it (AMD's TensileCreateLibrary through the stand-in,
    which orders the logic files its own way): every row checked against AMD as above; all of OLD's
    files are there, so nothing is missing, and the lazy build of the same logic answers the same."""
    masters, tmp = builds["masters"], builds["tmp"]
    (tmp / "tcl_logic").mkdir()
    for name in ("gsu", "float80", "half"):
        source = corpus / "logic" / "hipblaslt" / _FILES[name]
        (tmp / "tcl_logic" / source.name).write_bytes(source.read_bytes())
    new = standin_create_library(amd, tmp / "tcl_logic", tmp / "tcl")
    assert len(records(new)) == len(records(masters["new_more"]))
    runs = _remapped(builds, new)
    found = check_rows_against_amd(amd, masters["old"], new, [(row, query) for _, _, row, query in runs], tmp)
    assert RemapStatus.MISSING not in found and RemapStatus.AMBIGUOUS not in found
    assert {
        status for (dtype, cus, _, _), status in zip(runs, found, strict=True) if cus == 304 and dtype == "Float"
    } == {RemapStatus.REJECTED}
    lazy = standin_create_library(amd, tmp / "tcl_logic", tmp / "tcl_lazy", lazy=True)
    assert [(row.status, row.new_index) for _, _, row, _ in _remapped(builds, lazy)] == [
        (row.status, row.new_index) for _, _, row, _ in runs
    ]


def test_cli_remap_to_itself_is_byte_identical(builds: dict[str, Any]) -> None:
    out = builds["tmp"] / "same.csv"
    old = str(builds["masters"]["old"])
    result = CliRunner().invoke(cli, ["remap", str(builds["artefact"]), "--from", old, "--to", old, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == builds["artefact"].read_bytes()


def test_cli_json_rows_and_exit_code(builds: dict[str, Any]) -> None:
    old, new = str(builds["masters"]["old"]), str(builds["masters"]["new_less"])
    out = builds["tmp"] / "carried.csv"
    args = ["remap", str(builds["artefact"]), "--from", old, "--to", new, "--json", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    objects = json.loads(result.stdout)  # one array, as info/lint/validate (issue 32 item 9)
    assert isinstance(objects, list) and len(objects) == len(builds["rows"])
    assert all(
        set(item) == {"file", "line", "status", "old_index", "new_index", "kernel", "reason"} for item in objects
    )
    missing = [item for item in objects if item["status"] == "missing"]
    assert missing and all(item["new_index"] is None and "NEW" in item["reason"] for item in missing)
    carried = out.read_text().splitlines()
    moved = {item["line"]: item["new_index"] for item in objects if item["status"] == "moved"}
    assert len(carried) == 2 + len(moved)
    assert all(line.split(",")[2] in {f"Gemm_Hipblaslt_{index}" for index in moved.values()} for line in carried[2:])


def test_cli_bad_input_exits_3(builds: dict[str, Any]) -> None:
    old = str(builds["masters"]["old"])
    bad = builds["tmp"] / "not_an_artefact.txt"
    bad.write_text("hello\n")
    result = CliRunner().invoke(cli, ["remap", str(bad), "--from", old, "--to", old])
    assert result.exit_code == 3, result.output
    inplace = CliRunner().invoke(
        cli, ["remap", str(builds["artefact"]), "--from", old, "--to", old, "-o", str(builds["artefact"])]
    )
    assert inplace.exit_code == 3 and "in place" in inplace.output


_BENCH_TYPES = {"Half": "f16_r", "Float": "f32_r"}


def _tuning_cells(query: dict[str, Any], cus: int) -> dict[str, Any]:
    """A query's GEMM as hipBLASLt's tuning files spell it (bench column names)."""
    m, n, k, batch = query["m"], query["n"], query["k"], query["batch"]
    lda = k if query["trans_a"] == "T" else m
    ldb = n if query["trans_b"] == "T" else k
    kind = _BENCH_TYPES[query["a_type"]]
    return {
        "transA": query["trans_a"], "transB": query["trans_b"], "batch_count": batch, "m": m, "n": n, "k": k,
        "lda": lda, "ldb": ldb, "ldc": m, "ldd": m, "stride_a": lda * (m if query["trans_a"] == "T" else k),
        "stride_b": ldb * (k if query["trans_b"] == "T" else n), "stride_c": m * n, "stride_d": m * n,
        "a_type": kind, "b_type": kind, "c_type": kind, "d_type": kind, "compute_type": "f32_r",
        "gcnArchName": "gfx942:sramecc+:xnack-", "CUs": cus,
    }  # fmt: skip


def _headerless(cells: dict[str, Any], index: int) -> str:
    """argument_model.hpp@159c1980 log_args: the bench value line, then index, arch, CUs (37 fields)."""
    from tensilekit.workload.tuning_file import HEADERLESS_COLUMNS

    defaults = {"grouped_gemm": 0, "alpha": 1, "beta": 0, "activation_type": "none", "bias_vector": 0,
                "bias_type": "f32_r", "rotating_buffer": 512, "hipblaslt-Gflops": 1.0, "hipblaslt-GB/s": 1.0,
                "us": 10.0, "solution_index": index}  # fmt: skip
    values = {**defaults, **cells}
    return "    " + ",".join(str(values.get(name, 0)) for name in HEADERLESS_COLUMNS) + "\n"


def _keyed(cells: dict[str, Any], index: int) -> str:
    """TuningCacheStore.cpp@1d38aaf4 formatTuningRow: a header line and its value line."""
    values = {**cells, "solution_index": index, "kernel_name": "", "us": 10.0}
    return "    " + ",".join(values) + "\n" + ",".join(str(value) for value in values.values()) + "\n"


@pytest.mark.parametrize("layout", ["headerless", "keyed"])
def test_tuning_file_rows_get_the_statuses_their_tunableop_rows_get(builds: dict[str, Any], layout: str) -> None:
    """The same recorded GEMMs as hipBLASLt tuning files, each row naming its device (CUs): every
    row gets the status and index the TunableOp rows get (checked against AMD above), in one run."""
    masters, rows, tmp = builds["masters"], builds["rows"], builds["tmp"]
    lines = builds["artefact"].read_text().splitlines(keepends=True)
    new = masters["new_retuned"]  # same, missing (the retuned kernel), moved and rejected rows
    expected: list[tuple[RemapStatus, int | None]] = []
    text = consistent = "Git Version: 7d9fb683\n"  # consistent: without rows OLD itself refuses
    for dtype, counts in _DEVICES.items():
        chosen = [line for line, query in sorted(rows.items()) if query["a_type"] == dtype]
        artefact = tmp / f"{layout}_{dtype}.csv"
        artefact.write_text("".join(lines[number - 1] for number in chosen))
        for cus in counts:
            report = remap([artefact], masters["old"], new, cu_count=cus)
            for row, number in zip(report.rows, chosen, strict=True):
                expected.append((row.status, row.new_index))
                cells = _tuning_cells(rows[number], cus)
                entry = (_headerless if layout == "headerless" else _keyed)(cells, row.old_index)
                text += entry
                consistent += entry if (dtype, cus) != ("Float", 304) else ""
    tuning = tmp / f"tuning_{layout}.txt"
    tuning.write_text(text)
    report = remap([tuning], masters["old"], new)
    assert not report.artefacts[0].bad_lines
    assert [(row.status, row.new_index) for row in report.rows] == expected
    assert {status for status, _ in expected} >= {RemapStatus.SAME, RemapStatus.MISSING, RemapStatus.REJECTED}
    tuning.write_text(consistent)  # remapped to its own build: byte for byte
    same = remap([tuning], masters["old"], masters["old"]).artefacts[0]
    assert same.text == consistent and {row.status for row in same.rows} == {RemapStatus.SAME}

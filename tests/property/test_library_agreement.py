"""The same GEMM gets the same answer from every command and from the Python API (issue 25 item 5).

For random GEMMs of the problem types a library serves, on rocBLAS (Tensile) and hipBLASLt
(tensilelite) corpus masters: ``select M N K``, ``select --queries`` (a plain query line),
``select --from-log`` (the GEMM as a hipBLASLt log records it), ``coverage`` of those query lines,
``diff`` against a library that serves none of them (with ``--arch`` and with each library's
default device), ``Library.select`` on ``Library.problem`` and
on ``Library.problem_from_workload`` must all name the same kernel (or all none). Before issue 25
``select M N K`` on a hipBLASLt library assumed no workspace while the log and coverage paths
assumed an unlimited one, and the log's answers could not be fed back as queries.

All commands run in-process (CliRunner); a handful of examples per library keep it under ~30 s.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")
from click.testing import CliRunner  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tensilekit.cli.main import cli  # noqa: E402
from tensilekit.data import sample_library_path  # noqa: E402
from tensilekit.library import open_library  # noqa: E402
from tensilekit.workload.problem import GemmProblem as WorkloadGemm  # noqa: E402

# library -> (the problem types drawn: --type, trans A, trans B; a library serving none of them on gfx90a)
LIBRARIES: dict[str, tuple[str, list[tuple[str, str, str]], str]] = {
    "tensile-sample": ("<sample>", [("S", "N", "N"), ("HHS", "T", "N")], "masters/aldebaran_DB_GB_NN.dat"),
    "tensile-aldebaran": ("masters/aldebaran_SB_NN.dat", [("S", "N", "N")], "masters/aldebaran_DB_GB_NN.dat"),
    "hipblaslt-aldebaran": (
        "masters-hipblaslt/hipblaslt_aldebaran_all.dat",
        [("S", "T", "N"), ("S", "T", "T"), ("HHS", "T", "N"), ("HHS", "N", "N")],
        "masters-hipblaslt/hipblaslt_navi31_all.dat",
    ),
}
# --type -> (the types of a query line, the hipBLASLt log's a/b and c/d type)
TYPES = {
    "S": ({"a_type": "Float", "c_type": "Float", "compute_type": "Float"}, "f32_r", "f32_r"),
    "HHS": ({"a_type": "Half", "c_type": "Half", "compute_type": "Float"}, "f16_r", "f16_r"),
}
SIZE = st.one_of(st.integers(1, 6000), st.sampled_from([1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]))


def _table_sizes(library: Any) -> list[tuple[int, int, int]]:
    """(M, N, K) of the library's table entries: GEMMs that hit an entry (exact, or its neighbours)."""
    from tensilekit.model.library import MatchingNode

    sizes = set()
    for _, node in library.master.iter_nodes():
        if isinstance(node, MatchingNode):
            for entry in node.table:
                key = entry.key
                if len(key) >= 3 and all(size > 0 for size in key):
                    sizes.add((key[0], key[1], key[-1]))
    return sorted(sizes)


def _path(corpus: Path, name: str) -> Path:
    return sample_library_path() if name == "<sample>" else corpus / name


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout


def _json_lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _query(number: int, gemm: tuple[int, int, int, str, str, str]) -> dict[str, Any]:
    m, n, k, spec, trans_a, trans_b = gemm
    types = TYPES[spec][0]
    return {
        "id": f"q{number}", "m": m, "n": n, "k": k, "trans_a": trans_a, "trans_b": trans_b,
        "a_type": types["a_type"], "b_type": types["a_type"], "c_type": types["c_type"], "d_type": types["c_type"],
        "compute_type": types["compute_type"],
    }  # fmt: skip


def _workload(gemm: tuple[int, int, int, str, str, str]) -> WorkloadGemm:
    m, n, k, spec, trans_a, trans_b = gemm
    _, ab, cd = TYPES[spec]
    return WorkloadGemm(
        m=m, n=n, k=k, trans_a=trans_a, trans_b=trans_b, a_type=ab, b_type=ab, c_type=cd, d_type=cd,
        compute_type="c_f32_r", alpha=1.0, beta=0.0,
    )  # fmt: skip


def _log_line(gemm: tuple[int, int, int, str, str, str]) -> str:
    m, n, k, spec, trans_a, trans_b = gemm
    _, ab, cd = TYPES[spec]
    lda, ldb = (m if trans_a == "N" else k), (k if trans_b == "N" else n)
    return (
        f"- {{ function: matmul, M: {m}, N: {n}, K: {k}, lda: {lda}, ldb: {ldb}, ldc: {m}, ldd: {m}, "
        f"stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: {trans_a}, "
        f"transB: {trans_b}, batch_count: 1, scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, "
        f"use_e: false, bias_vector: false, bias_source: d, a_type: {ab}, b_type: {ab}, c_type: {cd}, "
        f"d_type: {cd}, scale_type: f32_r, bias_type: f32_r, compute_type: c_f32_r, activation_type: none, "
        f"flush: false, rotating: 0, cold_iters: 0, iters: 0, call_count: 1 }}\n"
    )


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_every_command_gives_the_same_answer(name: str, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    library_name, kinds, other_name = LIBRARIES[name]
    path, other = _path(corpus, library_name), _path(corpus, other_name)
    library = open_library(path)
    sizes = st.one_of(st.tuples(SIZE, SIZE, SIZE), st.sampled_from(_table_sizes(library)))
    gemm = st.tuples(sizes, st.sampled_from(kinds)).map(lambda g: (*g[0], *g[1]))

    @settings(max_examples=int(os.environ.get("AGREEMENT_EXAMPLES", "3")), deadline=None, database=None)
    @given(st.lists(gemm, min_size=1, max_size=4, unique_by=lambda g: g))
    def check(gemms: list[tuple[int, int, int, str, str, str]]) -> None:
        folder = tmp_path_factory.mktemp("agreement")
        answers: dict[str, list[int | None]] = {}
        # the Python API: options and workload records
        answers["api"] = [
            library.select(library.problem(m, n, k, type=spec, trans_a=ta, trans_b=tb)).index
            for m, n, k, spec, ta, tb in gemms
        ]
        answers["api workload"] = [library.select(library.problem_from_workload(_workload(g))).index for g in gemms]
        # select M N K
        singles = []
        for m, n, k, spec, ta, tb in gemms:
            _, output = _run("select", str(m), str(n), str(k), "-l", str(path), "--type", spec,
                             "--trans-a", ta, "--trans-b", tb, "--json")  # fmt: skip
            singles.append(json.loads(output)["index"])
        answers["select M N K"] = singles
        # select --queries
        queries = folder / "queries.jsonl"
        queries.write_text("".join(json.dumps(_query(i, g)) + "\n" for i, g in enumerate(gemms)))
        code, output = _run("select", "--queries", str(queries), "-l", str(path), "--json")
        assert code == 0, output
        answers["select --queries"] = [record["index"] for record in _json_lines(output)]
        # select --from-log
        log = folder / "hipblaslt.log"
        log.write_text("".join(_log_line(g) for g in gemms))
        code, output = _run("select", "--from-log", str(log), "-l", str(path), "--json")
        assert code == 0, output
        answers["select --from-log"] = [record["index"] for record in _json_lines(output)]
        # coverage of the query lines (one GEMM each, found by its line)
        code, output = _run("coverage", str(queries), "-l", str(path), "--json")
        assert code == 0, output
        by_line = {int(item["origin"].rsplit(":", 1)[1]): item["index"] for item in json.loads(output)["gemms"]}
        answers["coverage"] = [by_line[number] for number in range(1, len(gemms) + 1)]
        # diff against a library serving none of them: every GEMM with a kernel is listed
        code, output = _run("diff", str(path), str(other), "--queries", str(queries), "--arch", "gfx90a", "--json")
        assert code == 0, output
        listed = {change["query"]["id"]: change["a"] for change in json.loads(output)["selection"]}
        answers["diff"] = [(listed.get(f"q{i}") or {}).get("index") for i in range(len(gemms))]
        # ... and with the device left to each library's default (its only processor, no CU count,
        # as select's): diff once took the first Hardware row's CU count too
        code, output = _run("diff", str(path), str(other), "--queries", str(queries), "--json")
        assert code == 0, output
        listed = {change["query"]["id"]: change["a"] for change in json.loads(output)["selection"]}
        answers["diff, default device"] = [(listed.get(f"q{i}") or {}).get("index") for i in range(len(gemms))]
        expected = answers["api"]
        if os.environ.get("AGREEMENT_SHOW"):
            print(name, gemms, expected)
        assert all(found == expected for found in answers.values()), answers

    check()


def test_diff_defaults_the_device_as_select_does(corpus: Path, tmp_path: Path) -> None:
    # hipBLASLt's aldebaran master has a CU-count-104 row before its plain gfx90a row: diff once took
    # the first row's CU count as the default device, select (and the Library) take none; one rule now
    path = corpus / "masters-hipblaslt" / "hipblaslt_aldebaran_all.dat"
    other = corpus / "masters-hipblaslt" / "hipblaslt_navi31_all.dat"
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({**_query(0, (1024, 1024, 1024, "S", "T", "T"))}) + "\n")
    code, output = _run("select", "1024", "1024", "1024", "-l", str(path), "--type", "S", "--trans-a", "T",
                        "--trans-b", "T", "--json")  # fmt: skip
    assert code == 0, output
    selected = json.loads(output)["index"]
    library = open_library(path)
    assert selected == library.select(library.problem(1024, 1024, 1024, trans_a="T", trans_b="T")).index
    assert selected is not None
    code, output = _run("diff", str(path), str(other), "--queries", str(queries), "--json")
    assert code == 0, output
    assert [change["a"]["index"] for change in json.loads(output)["selection"]] == [selected]

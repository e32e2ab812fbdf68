"""Golden selection for hipBLASLt: tensilelite's own C++ host library answers (corpus/select-hipblaslt).

Every query of every file, against both forms of its master (``.yaml`` and ``.dat``), checked
through the CLI exactly as a user runs it (``tensilekit select --queries FILE --library MASTER``,
the lines as they are: hipBLASLt compute types, ``compute_input_type``, ``workspace_size``):

* ``expected`` — the heuristic's first kernel, ``findTopSolutions(problem, hw, 1)`` with the XF32 →
  Float retry: index and name, ``null`` where hipBLASLt finds none;
* ``top`` — ``findTopSolutions(.., 8)`` in hipBLASLt's order (``--top 8``), and the
  ``getAllSolutions`` fallback the CLI appends when that list is short: exactly the supported
  kernels not already listed;
* the supported set — ``all_supported`` (``getAllSolutions`` GEMM_TYPE_ONLY filtered by
  ``isSolutionSupported``) and ``all_indices`` through :func:`find_all_solutions`, where the file
  lists them.

The runtime is detected from the master (tensilelite); ``--runtime hipblaslt`` gives the same.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tensilekit
from tensilekit.cli.main import cli
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import compile_library, find_all_solutions, hardware_from_query
from tensilekit.selection.runtime import HIPBLASLT, detect_runtime
from tensilekit.selection.walk import as_contraction

pytestmark = pytest.mark.corpus

MASTERS = ["aldebaran_all", "gfx942_equality", "gfx942_freesize", "gfx942_grid", "navi31_all"]
FORMS = ["yaml", "dat"]


def _queries(corpus: Path, name: str) -> tuple[Path, list[dict[str, Any]]]:
    path = corpus / "select-hipblaslt" / f"hipblaslt_{name}.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} is not in this corpus")
    return path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _master(corpus: Path, name: str, form: str) -> Path:
    return corpus / "masters-hipblaslt" / f"hipblaslt_{name}.{form}"


@functools.lru_cache(maxsize=2)
def _load(path: Path) -> MasterLibrary:
    return tensilekit.load_master(path)


def _cli_lines(*arguments: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["select", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def _report(mismatches: list[str], total: int) -> None:
    assert not mismatches, f"{len(mismatches)}/{total} disagree, e.g.:\n" + "\n".join(mismatches[:8])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", MASTERS)
def test_cli_expected_agrees_with_hipblaslt(corpus: Path, name: str, form: str) -> None:
    queries_path, queries = _queries(corpus, name)
    lines = _cli_lines("--library", str(_master(corpus, name, form)), "--queries", str(queries_path))
    assert [line["id"] for line in lines] == [query["id"] for query in queries]
    mismatches = []
    for query, line in zip(queries, lines, strict=True):
        expected = query["expected"]
        want = None if expected is None else (expected["index"], expected["name"])
        got = None if line["index"] is None else (line["index"], line["name"])
        if got != want or "error" in line:
            mismatches.append(
                f"{query['id']} ({query['category']}): expected {want}, got {got} {line.get('error', '')}"
            )
        elif query.get("xf32_fallback") and not line.get("retried"):
            mismatches.append(f"{query['id']}: the XF32 -> Float retry answered, not reported")
    _report(mismatches, len(queries))


@pytest.mark.parametrize("name", MASTERS)
def test_cli_top_and_fallback_agree_with_hipblaslt(corpus: Path, name: str) -> None:
    queries_path, queries = _queries(corpus, name)
    lines = _cli_lines(
        "--library", str(_master(corpus, name, "dat")), "--queries", str(queries_path), "--top", "8",
        "--runtime", "hipblaslt",
    )  # fmt: skip
    mismatches = []
    for query, line in zip(queries, lines, strict=True):
        if line.get("top") != query["top"]:
            mismatches.append(f"{query['id']} ({query['category']}): top {query['top']}, got {line.get('top')}")
        if "all_supported" in query and len(query["top"]) < 8:
            missing = [index for index in query["all_supported"] if index not in query["top"]]
            if line.get("fallback") != missing:
                mismatches.append(f"{query['id']}: fallback {missing}, got {line.get('fallback')}")
    _report(mismatches, len(queries))


@pytest.mark.parametrize("name", MASTERS)
def test_supported_sets_agree_with_hipblaslt(corpus: Path, name: str) -> None:
    _, queries = _queries(corpus, name)
    library = _load(_master(corpus, name, "yaml"))
    assert detect_runtime(library) is HIPBLASLT
    compiled = compile_library(library)
    mismatches = []
    checked = 0
    for query in queries:
        if "all_supported" not in query:
            continue
        checked += 1
        problem, device = HIPBLASLT.problem_from_query(query), hardware_from_query(query)
        supported = [s.index for s in find_all_solutions(compiled, problem, device)]
        if supported != query["all_supported"] or len(supported) != query["all_supported_count"]:
            mismatches.append(f"{query['id']} ({query['category']}): {len(query['all_supported'])} vs {len(supported)}")
        _, candidates = HIPBLASLT.gemm_type_solutions(compiled.reference, as_contraction(problem), device)
        listed = [s.index for s in candidates]
        if listed != query["all_indices"]:
            mismatches.append(f"{query['id']}: getAllSolutions lists {len(listed)}, hipBLASLt {query['all_count']}")
    assert checked
    _report(mismatches, checked)

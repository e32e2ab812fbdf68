"""A solution index is a C++ ``int`` (issue 23 item 11).

An index of 2^63 in a master crashed ``select`` with 17 queries or more (the compiled path's
int64 arrays: OverflowError, exit 70). tensilelite's loader refuses any index out of ``int``
(msgpack throws ``std::bad_cast``, YAML fails to load); tensilekit now refuses it where it is read,
with the file and place, and answers as the C++ does up to ``INT32_MAX``.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.ranges import INT32_MAX

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "masters" / "coverage_equality_gfx90a.yaml"
FIXTURE_INDEX = "606601216"


def _queries(path: Path, count: int) -> Path:
    lines = [
        json.dumps({"id": f"q{i}", "m": 4096 if i % 2 == 0 else 1000 + i, "n": 4096, "k": 4096, "arch": "gfx90a"})
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("index", [INT32_MAX + 1, 1 << 63, (1 << 64) + 5, -(1 << 31) - 1])
@pytest.mark.parametrize("count", [5, 20])  # the walk (up to 16 queries) and the compiled path
def test_an_index_out_of_int_is_refused_with_its_place(index: int, count: int, tmp_path: Path) -> None:
    master = tmp_path / "master.yaml"
    master.write_text(FIXTURE.read_text(encoding="utf-8").replace(FIXTURE_INDEX, str(index)), encoding="utf-8")
    lines = master.read_text(encoding="utf-8").splitlines()
    solution_line = next(n for n, text in enumerate(lines, 1) if text.startswith("  index: ") and str(index) in text)
    queries = _queries(tmp_path / "q.jsonl", count)
    result = CliRunner().invoke(cli, ["select", "--queries", str(queries), "--library", str(master), "--json"])
    assert result.exit_code == 3, result.output
    assert "C++ int" in result.stderr
    assert f"{master}:" in result.stderr and "index" in result.stderr
    validate = CliRunner().invoke(cli, ["validate", str(master)])
    assert validate.exit_code == 1, validate.output
    assert f"{master}:{solution_line}:" in validate.output  # the solution's own index, among the uses


def _edited_dat(source: Path, old: int, new: int, target: Path) -> int:
    data: Any = msgpack.unpackb(source.read_bytes(), strict_map_key=False)
    edited = 0

    def walk(node: Any) -> None:
        nonlocal edited
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "index" and value == old:
                    node[key] = new
                    edited += 1
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    copied = copy.deepcopy(data)
    walk(copied)
    target.write_bytes(msgpack.packb(copied))
    return edited


def test_index_range_against_the_cpp_loader(amd: Path, corpus: Path, tmp_path: Path) -> None:
    """INT32_MAX: the C++ loads it and tensilekit answers the same kernels (20+ queries, the
    compiled path, some on that solution); INT32_MAX + 1: the C++ refuses the file, tensilekit too."""
    source = corpus / "masters-hipblaslt" / "hipblaslt_gfx942_grid.dat"
    queries = [json.loads(line) for line in (corpus / "select-hipblaslt" / "hipblaslt_gfx942_grid.jsonl").open()]
    target_index = 328  # a solution some corpus queries select
    hits = [q for q in queries if (q.get("expected") or {}).get("index") == target_index][:10]
    others = [q for q in queries if (q.get("expected") or {}).get("index") != target_index][:15]
    assert hits, "the corpus no longer has queries on the chosen solution"
    query_file = tmp_path / "q.jsonl"
    query_file.write_text("".join(json.dumps(q) + "\n" for q in hits + others), encoding="utf-8")

    fits = tmp_path / "fits.dat"
    assert _edited_dat(source, target_index, INT32_MAX, fits) > 1
    oracle = subprocess.run(
        [str(amd / "select-oracle"), str(fits), str(query_file)], capture_output=True, text=True, timeout=300
    )
    assert oracle.returncode == 0, oracle.stderr[-2000:]
    expected = {a["id"]: (a.get("expected") or {}).get("index") for a in map(json.loads, oracle.stdout.splitlines())}
    assert INT32_MAX in expected.values()
    result = CliRunner().invoke(cli, ["select", "--queries", str(query_file), "--library", str(fits), "--json"])
    assert result.exit_code == 0, result.output
    got = {a["id"]: a["index"] for a in map(json.loads, result.stdout.splitlines())}
    assert got == expected

    over = tmp_path / "over.dat"
    _edited_dat(source, target_index, INT32_MAX + 1, over)
    refused = subprocess.run(
        [str(amd / "select-oracle"), str(over), str(query_file)], capture_output=True, text=True, timeout=300
    )
    assert refused.returncode != 0  # the C++ loader throws
    result = CliRunner().invoke(cli, ["select", "--queries", str(query_file), "--library", str(over), "--json"])
    assert result.exit_code == 3, result.output
    assert f"error: {over}: " in result.stderr and "(at solutions[" in result.stderr
    assert "C++ int maximum" in result.stderr

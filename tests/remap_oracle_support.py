"""Helpers for the remap differential tests against AMD's code (issue 24).

Build hipBLASLt masters with AMD's tensilelite (``../shared/amd/build-master``), ask AMD's C++
heuristic (``../shared/amd/select-oracle``), read the records as AMD wrote them (the msgpack, not
tensilekit's model), write artefact rows in the formats the tuning tools write, and check every
remapped row's status against AMD's answers. Shared by ``integration/test_remap_oracle.py`` and
``property/test_remap_oracle_props.py``; imported by plain module name (``tests/`` is on sys.path).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgpack

from tensilekit.api import load_for_selection
from tensilekit.model.identity import RENUMBERED_FIELDS, UID_FIELDS
from tensilekit.model.library import MatchingNode
from tensilekit.remapping import RemapRow, RemapStatus

TORCH_NAMES = {"Half": "Half", "Float": "float", "BFloat16": "BFloat16"}
"""Library data type -> TunableOp's op-name spelling (``c10::toString`` of the scalar type)."""

# A TunableOp file names no CU count: one run per device. Float rows are tuned on 80 CUs (the
# gfx942_80cu kernels); on 304 CUs NEW's CUCount hardware predicate refuses them (rejected).
DEVICES = {"Half": [304], "BFloat16": [304], "Float": [80, 304]}


def build_master(amd: Path, out: Path, files: Sequence[str | Path]) -> Path:
    """AMD's master built from ``files`` in the order given (build-master numbers solutions in file
    order, so the order is what a test chooses, never a path sort)."""
    done = subprocess.run(
        [str(amd / "build-master"), "--arch", "gfx942", "--out", str(out), "--name", "master", *map(str, files)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "master.dat"


def standin_create_library(amd: Path, logic: Path, out: Path, *, lazy: bool = False) -> Path:
    """The library AMD's TensileCreateLibrary (7d9fb683, run unmodified by the stand-in in
    ``../shared/amd/standins``; code objects are empty placeholders) builds from the logic folder
    ``logic`` as a hipBLASLt install does; returns its ``.dat`` (lazy: the lazy master)."""
    standins = amd / "standins"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HIPBLASLT_", "TENSILE_", "ROCM_"))}
    env["PATH"] = f"{standins}{os.pathsep}{env.get('PATH', '')}"
    out.mkdir(parents=True)
    done = subprocess.run(
        [str(standins / "TensileCreateLibrary"), str(logic), str(out), "HIP", "--architecture", "gfx942",
         "--merge-files", "--separate-architectures", "--no-enumerate", "--version", "4.33.0", "--jobs", "1",
         *(["--lazy-library-loading"] if lazy else [])],
        cwd=out, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    library = out / "library" / ("TensileLibrary_lazy_gfx942.dat" if lazy else "TensileLibrary_gfx942.dat")
    assert library.is_file()
    return library


def oracle(amd: Path, master: Path, queries: list[dict[str, Any]], tmp: Path) -> dict[str, dict[str, Any]]:
    """select-oracle's answer to each query on ``master``, by query id."""
    query_file = tmp / f"queries_{master.parent.name}.jsonl"
    query_file.write_text("".join(json.dumps(query) + "\n" for query in queries))
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master), str(query_file)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {answer["id"]: answer for answer in answers}


def records(master: Path) -> dict[int, dict[str, Any]]:
    """The solution records of a non-lazy master as AMD wrote them, by index."""
    data = msgpack.unpackb(master.read_bytes(), raw=False, strict_map_key=False)
    return {int(record["index"]): record for record in data["solutions"]}


def stripped(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what a build renumbers or renames."""
    return {key: value for key, value in record.items() if key not in RENUMBERED_FIELDS and key not in UID_FIELDS}


def table_queries(master: Path) -> list[dict[str, Any]]:
    """One select-oracle query per table key of ``master`` (exact sizes), with its gemm type from
    the solutions; 80-CU float files serve 80-CU devices only (hipBLASLt's first matching
    hardware row wins)."""
    library, _ = load_for_selection(master)
    queries: list[dict[str, Any]] = []

    def visit(node: Any) -> None:
        if isinstance(node, MatchingNode):
            for entry in node.table:
                solution = next(s for s in library.solutions if s.index == entry.index)
                pt = solution.problem_type or {}
                m, n, k = entry.key[0], entry.key[1], entry.key[-1]
                queries.append(
                    {
                        "id": f"q{len(queries)}", "arch": "gfx942", "cu_count": 80 if pt["aType"] == "Float" else 304, "m": m, "n": n, "k": k,
                        "batch": entry.key[2] if len(entry.key) > 3 else 1, "workspace_size": None, "trans_a": "T" if pt.get("transA") else "N",
                        "trans_b": "T" if pt.get("transB") else "N", "a_type": pt["aType"], "b_type": pt["bType"],
                        "c_type": pt["cType"], "d_type": pt["dType"], "compute_type": "f32",
                    }
                )  # fmt: skip
        for row in getattr(node, "rows", None) or []:
            visit(row.library)
        for child in (getattr(node, "map", None) or {}).values():
            visit(child)

    visit(library.library)
    return queries


def tunableop_queries(master: Path) -> list[dict[str, Any]]:
    """The table queries of GEMM types a TunableOp file can name (one plain type in and out)."""
    return [q for q in table_queries(master) if q["a_type"] in TORCH_NAMES and len({q["a_type"], q["d_type"]}) == 1]


def tunableop_line(query: dict[str, Any], index: int) -> str:
    """A TunableOp results row (Tunable.cpp ``ResultEntry``) for a column-major hipBLASLt query."""
    layout = (query["trans_a"] + query["trans_b"]).lower()
    m, n, k = query["m"], query["n"], query["k"]
    lda = k if query["trans_a"] == "T" else m
    ldb = n if query["trans_b"] == "T" else k
    op, batch = "GemmTunableOp", ""
    if query["batch"] != 1:  # GemmStridedBatchedParams::Signature
        op, batch = "GemmStridedBatchedTunableOp", f"_B_{query['batch']}"
    op_name = f"{op}_{TORCH_NAMES[query['a_type']]}_{layout.upper()}"
    return f"{op_name},{layout}_{m}_{n}_{k}{batch}_ld_{lda}_{ldb}_{m},Gemm_Hipblaslt_{index},0.0100\n"


def check_rows_against_amd(
    amd: Path,
    old_master: Path,
    new_master: Path,
    runs: Sequence[tuple[RemapRow, dict[str, Any]]],
    tmp: Path,
) -> list[RemapStatus]:
    """Assert each remapped row's status against AMD's build and runtime; returns the statuses.

    ``runs`` pairs each row with its select-oracle query (its GEMM and device). For every row:
    ``same``/``moved`` -- NEW's record at ``new_index`` as AMD wrote it equals OLD's apart from the
    renumbered fields (``same``: at OLD's index; ``moved``: the only such record), and select-oracle lists ``new_index`` among the supported solutions
    (``all_supported``) on NEW; ``rejected`` -- the same equality, and select-oracle does *not* list
    it; ``ambiguous`` -- several records of NEW equal OLD's, and the row lists them; ``missing`` --
    none does. For missing and rejected rows the heuristic pick given is select-oracle's
    ``expected`` on NEW.
    """
    old_records, new_records = records(old_master), records(new_master)
    queries = [dict(query, id=f"r{number}") for number, (_, query) in enumerate(runs)]
    answers = oracle(amd, new_master, queries, tmp) if queries else {}
    statuses = []
    for number, (row, _) in enumerate(runs):
        answer = answers[f"r{number}"]
        statuses.append(row.status)
        wanted = stripped(old_records[row.old_index])
        equal = [index for index, record in new_records.items() if stripped(record) == wanted]
        if row.status in (RemapStatus.SAME, RemapStatus.MOVED, RemapStatus.REJECTED):
            assert row.new_index is not None
            assert stripped(new_records[row.new_index]) == wanted, row
            if row.status is RemapStatus.SAME:  # the index still names it (other copies aside)
                assert row.new_index == row.old_index, row
            elif row.status is RemapStatus.MOVED:  # the one record that equals OLD's
                assert equal == [row.new_index], (row, equal)
            supported = row.new_index in answer["all_supported"]
            assert supported == (row.status is not RemapStatus.REJECTED), (row, answer["all_supported"])
        elif row.status is RemapStatus.AMBIGUOUS:
            assert len(equal) > 1 and list(row.candidates) == sorted(equal), row
        else:
            assert row.status is RemapStatus.MISSING and equal == [], row
        if row.status in (RemapStatus.MISSING, RemapStatus.REJECTED):  # NEW's heuristic, as hipBLASLt answers
            assert row.heuristic_index == (answer["expected"]["index"] if answer["expected"] else None), row
    return statuses

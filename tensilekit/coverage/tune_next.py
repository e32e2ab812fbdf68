"""The "tune next" list in the forms the next tools read: GEKO list YAML and query JSON lines.

:func:`geko_lists` gives one GEKO list per GEMM type (``tensilekit tune`` reads it as a
workload; GEKO's config generator reads it as is) and :func:`query_lines` one query record per
GEMM (``tensilekit select --queries`` and ``coverage`` read it). Pure: texts out, the caller
writes them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import yaml

from tensilekit._arguments import require, require_items
from tensilekit.coverage.inputs import type_letters
from tensilekit.coverage.model import GemmCoverage
from tensilekit.selection.problem import GemmProblem
from tensilekit.workload.geko_list import types_from_tensile


@dataclasses.dataclass(frozen=True)
class GekoList:
    """One GEKO list: its file stem (``tune_next_BBS_TN``), text, and the GEMMs it holds."""

    stem: str
    text: str
    sizes: int


def geko_triple(problem: GemmProblem) -> tuple[str, str, str]:
    """GEKO's ``DataType``, ``DestDataType`` and ``ComputeDataType`` letters for a problem.

    Raises:
        ValueError: the types have no GEKO spelling (Int8x4, a compute type GEKO cannot name).
    """
    data, dest, compute = type_letters(problem)
    types_from_tensile(data, dest, compute)  # raises ValueError when GEKO cannot spell them
    return data, dest, compute


def geko_lists(ranked: Sequence[GemmCoverage]) -> tuple[list[GekoList], list[str]]:
    """One GEKO list per (transposes, types) of the ranked GEMMs, sizes in rank order.

    Returns the lists and a note for every GEMM no GEKO list can express (it stays in the query
    lines). Raises TypeError unless ``ranked`` are GemmCoverages.
    """
    ranked = require_items(ranked, GemmCoverage, "ranked", "geko_lists")
    groups: dict[tuple[str, str, str, str, str, str], list[list[int]]] = {}
    names: dict[tuple[str, str, str, str, str, str], str] = {}
    notes: list[str] = []
    for item in ranked:
        problem = item.gemm.problem
        if problem.trans_a not in ("N", "T") or problem.trans_b not in ("N", "T"):
            notes.append(f"{item.gemm.gemm_type} {problem.m}x{problem.n}x{problem.k}: GEKO lists have no conjugate")
            continue
        try:
            data, dest, compute = geko_triple(problem)
        except ValueError as error:
            notes.append(f"{item.gemm.gemm_type} {problem.m}x{problem.n}x{problem.k}: {error}")
            continue
        key: tuple[str, str, str, str, str, str] = (
            str(problem.trans_a),
            str(problem.trans_b),
            data,
            dest,
            compute,
            item.gemm.hardware.arch,
        )
        size = [problem.m, problem.n, problem.batch, problem.k]
        sizes = groups.setdefault(key, [])
        names.setdefault(key, f"{data}{dest}{compute}_{problem.trans_a}{problem.trans_b}")
        if size not in sizes:
            sizes.append(size)
    stems: dict[str, int] = {}
    lists = []
    for key, sizes in groups.items():
        trans_a, trans_b, data, dest, compute, arch = key
        stem = f"tune_next_{names[key]}"
        stems[stem] = stems.get(stem, 0) + 1
        if stems[stem] > 1:
            stem = f"{stem}_{arch}"
        document: dict[str, Any] = {
            "TRANSA": trans_a,
            "TRANSB": trans_b,
            "DataType": data,
            "DestDataType": dest,
            "ComputeDataType": compute,
            "ARCH": arch,
            "Sizes": sizes,
        }
        body = yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=120)
        header = "# GEMMs to tune next, most GEMM time first (tensilekit coverage); [M, N, batch, K]\n"
        lists.append(GekoList(stem, header + body, len(sizes)))
    return lists, notes


def query_record(item: GemmCoverage, rank: int | None = None) -> dict[str, Any]:
    """A ``select --queries`` record of one GEMM, with its calls, time, class and kernel, and the
    ``problem`` object (:func:`tensilekit.selection.problem.problem_record`) that rebuilds its problem exactly.

    Raises TypeError for arguments of the wrong type."""
    require(item, GemmCoverage, "item", "query_record")
    require(rank, int, "rank", "query_record", optional=True)
    gemm = item.gemm
    record: dict[str, Any] = {"id": f"tune-next/{rank}" if rank is not None else gemm.origin}
    record.update(gemm.problem.model_dump(mode="json", exclude={"hipblaslt"}, exclude_none=True))
    record["arch"] = gemm.hardware.arch
    if gemm.hardware.cu_count is not None:
        record["cu_count"] = gemm.hardware.cu_count
    record["calls"] = gemm.calls
    if gemm.measured_us is not None:
        record["time_us"] = gemm.measured_us / gemm.calls
    record.update(
        gemm_type=gemm.gemm_type, coverage_class=item.coverage_class.value, share=item.share, current_index=item.index
    )
    # the whole problem (a hipBLASLt epilogue, the workspace): select --queries takes it as it is
    from tensilekit.selection.problem import problem_record

    record["problem"] = problem_record(gemm.problem)
    return record


def query_lines(ranked: Sequence[GemmCoverage]) -> str:
    """JSON lines, one query record per ranked GEMM (rank order). Raises TypeError unless
    ``ranked`` are GemmCoverages."""
    ranked = require_items(ranked, GemmCoverage, "ranked", "query_lines")
    return "".join(
        json.dumps(query_record(item, rank), separators=(",", ":")) + "\n" for rank, item in enumerate(ranked, 1)
    )


__all__ = ["GekoList", "geko_lists", "geko_triple", "query_lines", "query_record"]

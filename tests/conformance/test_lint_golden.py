"""lint agrees with AMD's own runtime (the golden answers of ``corpus/select``, produced by
Tensile's C++ ``findBestSolution``/``findAllSolutions``): no answer is a kernel lint calls
unreachable, no answer comes through an entry lint calls shadowed, and no kernel lint calls dead
at a key is among the kernels the runtime lists for a query at exactly that key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensilekit.io.master_io import load_master
from tensilekit.lint.rules import Linter
from tensilekit.selection import hardware_from_query, problem_from_query
from tensilekit.selection.walk import Route, as_contraction

GOLDEN = [
    "aldebaran_DB_GB_NN",
    "aldebaran_DB_TN_dtree",
    "aldebaran_HHS_BH_TT_fp16alt",
    "aldebaran_NN_mixed",
    "aldebaran_SB_NN",
    "aldebaran_SB_NN_equality",
    "aquavanjaram942_B8B8S_BH_SR_NT",
    "arcturus_HHS_BH_NT_cueff",
    "vega20_4xi8II_BH_NN",
    pytest.param("rocBLAS_Full", marks=pytest.mark.slow),
]

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("name", GOLDEN)
def test_lint_agrees_with_the_runtime(corpus: Path, name: str) -> None:
    records = [json.loads(line) for line in (corpus / "select" / f"{name}.jsonl").read_text().splitlines() if line]
    library = load_master((corpus / "masters" / records[0]["library_msgpack"]).resolve())
    linter = Linter(library)
    shadowed_paths = {finding.path for finding in linter.shadowed_entries()}
    unreachable = {library.solutions[int(f.path[len("solutions[") : -1])].index for f in linter.unreachable_kernels()}
    tables = {id(table.context.node): table for table in linter.tables}
    dead: dict[tuple[int, ...], set[int]] = {}
    for table in linter.tables:
        names = [prop.type for prop in table.context.node.properties]
        for number, verdict in table.verdicts.items():
            if verdict.alive is False:
                entry = table.context.node.table[number]
                sizes = dict(zip(names, entry.key, strict=True))
                key = (sizes["FreeSizeA"], sizes["FreeSizeB"], sizes["BoundSize"], sizes.get("BatchSize", -1))
                dead.setdefault(key, set()).add(entry.solution_index)
    assert len(shadowed_paths) == sum(len(table.shadowed) for table in linter.tables)

    checked = 0
    for record in records:
        expected = record.get("expected")
        if expected is None or record.get("tie_alternatives"):
            continue
        assert expected["index"] not in unreachable, record["id"]
        for batch in (-1, record.get("batch", 1)):
            listed = dead.get((record["m"], record["n"], record["k"], batch), set())
            assert not listed & set(record.get("all_indices", [])), record["id"]
        route = Route()
        found, _ = linter.compiled.find(as_contraction(problem_from_query(record)), hardware_from_query(record), route)
        assert found is not None and found.index == expected["index"], record["id"]
        table = tables.get(id(route.leaf))
        if table is not None and route.via == "table" and table.sorted is not None and route.position is not None:
            assert table.sorted.order[route.position] not in table.shadowed, record["id"]
            checked += 1
    assert checked or name == "aldebaran_DB_TN_dtree"

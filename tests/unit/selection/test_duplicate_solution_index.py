"""Two solutions with one index in a master (issue 23 item 2): the runtime keeps the **last**.

``Serialization/SolutionLibrary.hpp`` ``MappingTraits<MasterSolutionLibrary>::mapping`` (Tensile
09ec347/a164ed70, hipBLASLt 7d9fb683) runs ``lib.solutions[s->index] = s`` over the file's list,
so a later solution replaces an earlier one of the same index; the file loads. Every table entry
naming that index answers with the last one. ``validate`` warns and names the one kept.
``tests/property/test_select_duplicates_oracle.py`` compares with AMD's C++.
"""

from __future__ import annotations

import pytest
from selection_factory import GFX90A, gemm, master, matching, solution

import tensilekit
from tensilekit.inspect import validate_file
from tensilekit.io.master_io import dumps_master, opens_master
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import compile_library, find_all_solutions, select_batch, select_solution


def _library() -> MasterLibrary:
    # index 7 twice: a 64x64 kernel written first, a 128x128 one written last
    solutions = [solution(7, name="kernel_first"), solution(3), solution(7, name="kernel_last")]
    return master(solutions, matching([([64, 64, 64], 7, 2.0), ([4096, 4096, 4096], 3, 1.0)]))


def _names(library: MasterLibrary) -> set[str | None]:
    problem = gemm(64, 64, 64)
    found = {select_solution(library, problem, GFX90A).name}
    for use_tree in (True, False):
        compiled = compile_library(library, use_tree=use_tree)
        found.add(select_solution(compiled, problem, GFX90A).name)
        found.add(select_batch(compiled, [problem] * 2, GFX90A)[0].name)
        found.update(s.name for s in find_all_solutions(compiled, problem, GFX90A) if s.index == 7)
    return found


def test_duplicate_solution_index_the_last_solution_answers() -> None:
    assert _names(_library()) == {"kernel_last"}


@pytest.mark.parametrize("fmt", ["yaml", "msgpack"])
def test_duplicate_solution_index_survives_the_file_round_trip(fmt: str) -> None:
    data = dumps_master(_library(), fmt)
    loaded = tensilekit.loads(data, source=f"m.{fmt}")
    assert isinstance(loaded, MasterLibrary)
    assert _names(loaded) == {"kernel_last"}
    opened = opens_master(data, f"m.{fmt}")
    assert opened.solution(7).name == "kernel_last"
    assert _names(opened.materialize()) == {"kernel_last"}


def test_validate_warns_and_names_the_solution_kept(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "m.yaml"
    path.write_bytes(dumps_master(_library(), "yaml"))
    result = validate_file(path)
    assert result.ok
    (finding,) = [f for f in result.findings if f.code == "duplicate-index"]
    assert finding.severity == "warning"
    assert finding.path == "solutions[0].index"
    assert finding.message == (
        "solutions[0] and solutions[2] share index 7; the runtime keeps the last, solutions[2] (kernel_last), "
        "and never uses solutions[0]"
    )


def test_duplicate_solution_index_inside_a_placeholder_shard() -> None:
    # the shard's own loader keeps its last solution of an index (then PlaceholderLibrary merges it
    # into the master's map with insert, which keeps what the master already has)
    shard = MasterLibrary.model_validate(
        {
            "solutions": [solution(7, name="kernel_first"), solution(7, name="kernel_last")],
            "library": matching([([64, 64, 64], 7, 1.0)]),
        }
    )
    library = master([], {"type": "Placeholder", "value": "TensileLibrary_Type_SS"})
    problem = gemm(64, 64, 64)
    assert select_solution(library, problem, GFX90A, loader=lambda prefix: shard).name == "kernel_last"
    compiled = compile_library(library, loader=lambda prefix: shard)
    assert select_solution(compiled, problem, GFX90A).name == "kernel_last"

"""An indexed root (``format_version: 2``) that also carries a plain ``solutions`` list (issue 23
item 6): the runtime takes every solution from ``solutions_index``/``solutions_blob``
(``MasterSolutionLibrary.hpp`` ``SolutionBlobCache`` @ rocm-libraries 1c2f384358bd) and ignores
the list; tensilekit follows it on every load path, and ``validate`` warns at ``solutions``."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
from selection_factory import GFX90A, gemm, master, matching, solution

import tensilekit
from tensilekit.inspect import validate_file
from tensilekit.io.indexed_msgpack import dumps_indexed, load_indexed
from tensilekit.io.master_io import opens_master
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import select_solution


def _indexed_with_a_plain_list() -> bytes:
    table = matching([([64, 64, 64], 1, 1.0)])
    blob_master = master([solution(1, name="from_blob")], table)
    list_master = master([solution(1, name="from_list"), solution(2, name="only_in_list")], table)
    root = msgpack.unpackb(dumps_indexed(blob_master), raw=False, strict_map_key=False)
    root["solutions"] = list_master.to_raw()["solutions"]  # beside the blob, after the tree
    return msgpack.packb(root, use_bin_type=True)


@pytest.mark.parametrize("how", ["loads", "opens_master", "load_indexed"])
def test_indexed_root_with_a_plain_list_answers_from_the_blob(how: str, tmp_path: Path) -> None:
    data = _indexed_with_a_plain_list()
    if how == "loads":
        library = tensilekit.loads(data, source="m.dat")
        assert isinstance(library, MasterLibrary)
    elif how == "opens_master":
        library = opens_master(data, "m.dat").materialize()
    else:
        path = tmp_path / "m.dat"
        path.write_bytes(data)
        library = load_indexed(str(path)).materialize()
    assert [s.name for s in library.solutions] == ["from_blob"]
    assert select_solution(library, gemm(64, 64, 64), GFX90A).name == "from_blob"


def test_validate_warns_about_the_ignored_list(tmp_path: Path) -> None:
    path = tmp_path / "TensileLibrary_lazy_gfx90a.dat"
    path.write_bytes(_indexed_with_a_plain_list())
    result = validate_file(path)
    assert result.ok
    (finding,) = [f for f in result.findings if f.code == "indexed-solutions-list"]
    assert (finding.severity, finding.path) == ("warning", "solutions")
    assert finding.message == (
        "an indexed library (format_version 2) also carries a plain 'solutions' list of 2; the runtime reads its "
        "1 solution(s) from solutions_index/solutions_blob and ignores the list, and so does tensilekit"
    )
    plain = tmp_path / "plain.dat"
    plain.write_bytes(dumps_indexed(master([solution(1)], matching([([64, 64, 64], 1, 1.0)]))))
    assert not [f for f in validate_file(plain).findings if f.code == "indexed-solutions-list"]

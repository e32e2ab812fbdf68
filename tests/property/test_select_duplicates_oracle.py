"""Differential property test of duplicates (issue 23 items 1 and 2) against AMD's own code.

Each example takes a hipBLASLt logic file of the corpus, optionally retargets its table kind
(``Euclidean``, ``Equality``, ``GridBased``), appends duplicate size rows (another kernel of the
file, with the same, a higher or a lower speed), has AMD's TensileCreateLibrary build the master
(``../shared/amd/build-master``), then edits the built ``.dat`` so that some solution indices
appear twice (a copy of another kernel under an index the table uses, before or after the
original). tensilekit must answer every query as tensilelite's C++ does (``select-oracle``:
``findTopSolutions(.., 1)`` and ``(.., 8)``), with queries on the duplicated keys, near them and
elsewhere. One build and one oracle call per example (~3 s each), so few examples.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tensilekit  # noqa: E402
from tensilekit.model.library import MasterLibrary, MatchingNode  # noqa: E402
from tensilekit.selection import compile_library, hardware_from_query, select_batch, select_solution  # noqa: E402
from tensilekit.selection.api import top_solutions  # noqa: E402
from tensilekit.selection.runtime import HIPBLASLT  # noqa: E402

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

# Small hipBLASLt logic files with several kernels and rows, no custom kernel (its assembly is not
# in ../shared/amd): (file under logic/hipblaslt, arch, CU count).
_FILES = [
    ("gfx1200/GridBased/gfx1200_Cijk_Alik_Bljk_B8BH_BiasSHB_HAS_SAB_SAV_UserArgs.yaml", "gfx1200", 32),
    ("gfx1200/GridBased/gfx1200_Cijk_Ailk_Bjlk_HSS_BH_Bias_HAS_SAV_UserArgs.yaml", "gfx1200", 32),
    ("aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Ailk_Bjlk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml", "gfx942", 304),
    ("aldebaran/110CU/Equality/aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", "gfx90a", 110),
    ("navi31/Equality/navi31_Cijk_Alik_Bljk_DB_UserArgs.yaml", "gfx1100", 96),
]
_KINDS = ["keep", "Euclidean", "Equality", "GridBased"]
_DTYPE = {"Half": "f16", "Float": "f32", "Double": "f64", "BFloat16": "bf16"}


def _duplicated_logic(source: Path, target: Path, kind: str, count: int, speeds: str, seed: int) -> None:
    """``source`` with ``count`` duplicate size rows appended (another kernel each), as ``kind``."""
    data = yaml.load(source.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    rows, kernels, rng = data[7], len(data[5]), random.Random(seed)
    if kind != "keep":
        data[11] = kind
    for position in rng.sample(range(len(rows)), min(count, len(rows))):
        size, (kernel, speed) = rows[position]
        other = rng.choice([k for k in range(kernels) if k != kernel] or [kernel])
        mode = rng.choice(["same", "faster", "slower"]) if speeds == "mixed" else speeds
        factor = {"same": 1.0, "faster": 1.5, "slower": 0.5}[mode]
        rows.append([list(size), [other, speed * factor]])
    target.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper, default_flow_style=None), encoding="utf-8")


def _duplicate_indices(master: Path, count: int, seed: int) -> None:
    """Give ``count`` of the master's indices a second solution (another kernel, renamed to the
    index), before or after the original, rewriting the ``.dat`` in place."""
    root = msgpack.unpackb(master.read_bytes(), raw=False, strict_map_key=False)
    solutions, rng = root["solutions"], random.Random(seed)
    if len(solutions) < 2:
        return
    for victim in rng.sample(range(len(solutions)), min(count, len(solutions) - 1)):
        index = solutions[victim]["index"]
        donor = dict(rng.choice([s for s in solutions if s["index"] != index]))
        donor["index"] = index
        place = rng.choice([victim, victim + 1, len(solutions)])  # before, right after, at the end
        solutions.insert(place, donor)
    master.write_bytes(msgpack.packb(root, use_bin_type=True))


def _keys(library: MasterLibrary) -> list[tuple[int, ...]]:
    found: list[tuple[int, ...]] = []
    for _, node in library.iter_nodes():
        if isinstance(node, MatchingNode):
            found.extend(tuple(entry.key) for entry in node.table)
    return found


def _query_fields(library: MasterLibrary) -> dict[str, Any]:
    pt = library.solutions[0].problem_type or {}
    compute = _DTYPE.get(str(pt.get("computeType")), "f32")
    if compute == "f32" and pt.get("computeInputType") != pt.get("aType"):
        compute = {"Half": "f32_fast_f16", "BFloat16": "f32_fast_bf16"}.get(str(pt.get("computeInputType")), "f32")
    return {
        "trans_a": "T" if pt.get("transA") else "N", "trans_b": "T" if pt.get("transB") else "N",
        "a_type": pt.get("aType"), "b_type": pt.get("bType"), "c_type": pt.get("cType"), "d_type": pt.get("dType"),
        "compute_type": compute,
    }  # fmt: skip


def _queries(library: MasterLibrary, arch: str, cus: int, seed: int, count: int) -> list[dict[str, Any]]:
    keys = _keys(library)
    seen: dict[tuple[int, ...], int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    repeated = [key for key, times in seen.items() if times > 1] or keys
    rng, fields, out = random.Random(seed), _query_fields(library), []
    for number in range(count):
        key = rng.choice(repeated if number % 3 else keys)
        m, n, k = key[0], key[1], key[-1]
        batch = key[2] if len(key) > 3 else 1
        if number % 4 == 1:  # near a key: the scans meet the duplicates from either side
            m, n, k = (max(1, v + rng.randint(-64, 64)) for v in (m, n, k))
        elif number % 4 == 2:
            m = m + rng.randint(1, 64)  # above in the first component only
        out.append({
            "id": f"q{number}", "arch": arch, "cu_count": cus, "m": m, "n": n, "k": k, "batch": batch,
            "workspace_size": 134217728, **fields,
        })  # fmt: skip
    return out


@settings(max_examples=8, deadline=None, derandomize=bool(os.environ.get("CI")), database=None)
@given(
    case=st.sampled_from(_FILES),
    kind=st.sampled_from(_KINDS),
    rows=st.integers(3, 40),
    speeds=st.sampled_from(["same", "same", "mixed"]),
    indices=st.integers(0, 6),
    seed=st.integers(0, 2**31 - 1),
)
def test_duplicates_select_as_the_cpp_runtime(
    corpus: Path,
    amd: Path,
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[str, str, int],
    kind: str,
    rows: int,
    speeds: str,
    indices: int,
    seed: int,
) -> None:
    name, arch, cus = case
    tmp = tmp_path_factory.mktemp("dups")
    logic = tmp / "in" / Path(name).name
    logic.parent.mkdir()
    _duplicated_logic(corpus / "logic" / "hipblaslt" / name, logic, kind, rows, speeds, seed)
    built = subprocess.run(
        [str(amd / "build-master"), "--arch", arch, "--out", str(tmp), "--name", "master", str(logic)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    master_path = tmp / "master.dat"
    _duplicate_indices(master_path, indices, seed)
    library = tensilekit.load_master(master_path)
    assert isinstance(library, MasterLibrary)
    queries = _queries(library, arch, cus, seed, 150)
    query_file = tmp / "queries.jsonl"
    query_file.write_text("".join(json.dumps(q) + "\n" for q in queries))
    done = subprocess.run(
        [str(amd / "select-oracle"), str(master_path), str(query_file), "--top", "8"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    answers = {a["id"]: a for a in map(json.loads, filter(str.strip, done.stdout.splitlines()))}
    compiled = compile_library(library)
    problems = [HIPBLASLT.problem_from_query(q) for q in queries]
    devices = [hardware_from_query(q) for q in queries]
    batch = select_batch(compiled, problems, devices)
    wrong = []
    for position, query in enumerate(queries):
        answer = answers[query["id"]]
        assert "error" not in answer, answer
        want = answer["expected"]
        mine = select_solution(compiled, problems[position], devices[position])
        if (mine.index, mine.name) != ((want["index"], want["name"]) if want else (None, None)):
            wrong.append(f"{query}: expected {want}, got {mine.index} {mine.name}")
        elif batch[position].index != mine.index:
            wrong.append(f"{query}: the batch path gives {batch[position].index}, one query {mine.index}")
        else:
            ranked = [s.index for s in top_solutions(compiled, problems[position], devices[position], 8).ranked]
            if ranked != answer["top"]:
                wrong.append(f"{query}: top {answer['top']}, got {ranked}")
    assert not wrong, f"{name} as {kind}, {rows} rows ({speeds}), {indices} indices: {len(wrong)} disagree:\n" + (
        "\n".join(wrong[:6])
    )

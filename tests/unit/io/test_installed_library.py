"""Issue 18: an installed hipBLASLt library folder as one ``--library`` argument.

The fixture is an AMD-written master (corpus/masters-hipblaslt) split by tensilekit's writer into
the lazy layout TensileCreateLibrary installs (lazy master + per-problem-type shards + the lazy
mapping), in ``.dat.zlib``, indexed and plain ``.dat`` form. Every corpus/select-hipblaslt query
must get exactly the original master's answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.io.installed_library import (
    InstalledLibrary,
    find_masters,
    read_mapping,
    revisioned_arch_name,
    shard_for_index,
    split_lazy,
)
from tensilekit.io.master_io import dump_master, dump_master_set, load_master
from tensilekit.model.library import MasterLibrary
from tensilekit.selection import GemmProblem, Hardware, select_solution

NAME = "hipblaslt_aldebaran_all"


@pytest.fixture(scope="module")
def original(corpus: Path) -> Path:
    return corpus / "masters-hipblaslt" / f"{NAME}.dat"


@pytest.fixture(scope="module")
def installed(original: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = split_lazy(load_master(original), "gfx90a")
    folders = {}
    for fmt in ("zlib", "msgpack-indexed", "msgpack"):
        folder = tmp_path_factory.mktemp(fmt) / "library"
        dump_master_set(files, folder, fmt, mapping=True)  # an installed 2026 layout in each format
        folders[fmt] = folder
    return folders


def _answers(library: Path, queries: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(
        cli, ["select", "--library", str(library), "--queries", str(queries), "--json", "--top", "8"]
    )
    assert result.exit_code == 0, result.output
    return [_answer(line) for line in result.output.splitlines() if line.startswith("{")]


def _answer(line: str) -> dict[str, object]:
    """A query's answer without the prose ``reason`` of a no-kernel line: a lazy library explains
    it without reading every shard, so its wording differs while the answer is the same."""
    row = json.loads(line)
    row.pop("reason", None)
    return dict(row)


@pytest.mark.parametrize("fmt", ["zlib", "msgpack-indexed", "msgpack"])
def test_every_select_hipblaslt_query_answers_as_the_original(
    fmt: str, installed: dict[str, Path], original: Path, corpus: Path
) -> None:
    queries = corpus / "select-hipblaslt" / f"{NAME}.jsonl"
    expected = [json.loads(line) for line in queries.read_text().splitlines() if line.strip()]
    ours = _answers(installed[fmt], queries)
    assert ours == _answers(original, queries)
    hits = sum(
        (row["index"], row["name"]) == ((want["expected"] or {}).get("index"), (want["expected"] or {}).get("name"))
        for row, want in zip(ours, expected, strict=True)
    )
    assert hits == len(expected)


def test_layout_found_and_mapping_names_each_shard(installed: dict[str, Path]) -> None:
    for fmt, folder in installed.items():
        (master,) = find_masters(folder)
        assert master.arch == "gfx90a" and master.lazy
        suffix = ".dat" if fmt == "msgpack" else ".dat.zlib"
        assert master.path.name == f"TensileLibrary_lazy_gfx90a{suffix}"
        assert master.mapping_path is not None and master.mapping_path.name.endswith(f"_Mapping{suffix}")
        mapping = read_mapping(master.mapping_path)
        library = InstalledLibrary(folder)
        for prefix in library.shard_prefixes(master):
            shard = load_master(folder / f"{prefix}{suffix}")
            for solution in shard.solutions:  # upper_bound - 1 finds the shard that holds it
                assert shard_for_index(mapping, solution.index) == prefix


def test_one_query_reads_one_shard(installed: dict[str, Path]) -> None:
    library = InstalledLibrary(installed["zlib"])
    tree, loader = library.for_selection()
    shards = len(library.shard_prefixes(library.masters[0]))
    assert shards > 5 and library.shards_read == []
    problem = GemmProblem(m=128, n=128, k=128, trans_a="T", trans_b="N", a_type="Half", b_type="Half",
                          c_type="Half", d_type="Half", compute_type="Float")  # fmt: skip
    select_solution(tree, problem, Hardware(arch="gfx90a", cu_count=104), loader=loader)
    assert 1 <= len(library.shards_read) <= 2  # the type rows tried before the one that answers


def test_damaged_shard_is_named_and_the_others_answer(installed: dict[str, Path], corpus: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "library"
    shutil.copytree(installed["zlib"], folder)
    victim = sorted(folder.glob("TensileLibrary_Type_0000_*"))[0]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    queries = corpus / "select-hipblaslt" / f"{NAME}.jsonl"
    result = CliRunner().invoke(cli, ["select", "--library", str(folder), "--queries", str(queries), "--json"])
    assert result.exit_code == 3, result.output  # lines the damaged shard cannot answer are errors
    rows = [_answer(line) for line in result.output.splitlines() if line.startswith("{")]
    failed = [row for row in rows if row.get("error")]
    answered = [row for row in rows if not row.get("error")]
    assert failed and answered
    assert all(victim.name in row["error"] and "damaged zlib" in row["error"] for row in failed)
    assert all("the zlib stream ends early" in row["error"] and "solutions[" in row["error"] for row in failed)
    prefix = victim.name.removesuffix(".dat.zlib")
    clean = {row["id"]: row for row in _plain(installed["zlib"], queries)}
    assert all(clean[row["id"]] == row for row in answered)
    assert all(prefix in row["error"] for row in failed)


def test_coverage_names_a_damaged_shard_and_reports_the_rest(
    installed: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    # a plain .dat shard cut in half: the GEMMs that reach it are not evaluated, each warned with
    # the shard's file and byte, the others are reported as from the intact folder, and the exit
    # code says the report is not the whole workload's
    import shutil

    folder = tmp_path / "library"
    shutil.copytree(installed["msgpack"], folder)
    queries = corpus / "select-hipblaslt" / f"{NAME}.jsonl"
    args = ["coverage", "-l", str(folder), "--arch", "gfx90a", str(queries), "--json"]
    intact = CliRunner().invoke(cli, args)
    assert intact.exit_code == 0, intact.output
    whole = json.loads(intact.stdout)
    victim = sorted(folder.glob("TensileLibrary_Type_*.dat"), key=lambda path: path.stat().st_size)[-1]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    damaged = CliRunner().invoke(cli, args)
    assert damaged.exit_code == 3, damaged.output
    warnings = [line for line in damaged.stderr.splitlines() if line.startswith("warning:")]
    assert warnings and all(victim.name in line and ": byte " in line for line in warnings)
    assert "could not be evaluated" in damaged.stderr
    report = json.loads(damaged.stdout)
    assert 0 < len(report["gemms"]) < len(whole["gemms"])
    assert len(report["gemms"]) + len(warnings) == len(whole["gemms"])
    kept = {json.dumps(row, sort_keys=True) for row in whole["gemms"]}
    assert all(json.dumps(row, sort_keys=True) in kept for row in report["gemms"])


def _plain(library: Path, queries: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, ["select", "--library", str(library), "--queries", str(queries), "--json"])
    assert result.exit_code == 0, result.output
    return [_answer(line) for line in result.output.splitlines() if line.startswith("{")]


def test_lint_validate_info_diff_take_the_folder(installed: dict[str, Path], original: Path, tmp_path: Path) -> None:
    folder = installed["zlib"]
    runner = CliRunner()
    for command in (["lint"], ["validate"], ["info", "--json"]):
        result = runner.invoke(cli, [*command, str(folder)])
        assert result.exit_code == 0, result.output
        assert "Mapping.dat.zlib" in result.output
    same = runner.invoke(cli, ["diff", str(folder), str(original)])
    assert same.exit_code == 0 and "no differences" in same.output, same.output
    # a mapping naming a missing shard is an error finding of the mapping file
    broken = tmp_path / "library"
    import shutil

    shutil.copytree(folder, broken)
    next(broken.glob("TensileLibrary_Type_0003_*")).unlink()
    result = runner.invoke(cli, ["validate", str(broken)])
    assert result.exit_code == 1 and "not in this folder" in result.output, result.output


def test_coverage_over_the_folder_equals_the_original(
    installed: dict[str, Path], original: Path, tmp_path: Path
) -> None:
    workload = tmp_path / "gemms.jsonl"
    lines = [
        {
            "m": m,
            "n": n,
            "k": k,
            "trans_a": "T",
            "trans_b": "N",
            "a_type": "Half",
            "b_type": "Half",
            "c_type": "Half",
            "d_type": "Half",
            "compute_type": "Float",
        }  # fmt: skip
        for m in (1, 128, 1024)
        for n in (64, 2048)
        for k in (64, 4096)
    ]
    workload.write_text("".join(json.dumps(line) + "\n" for line in lines))
    reports = []
    for library in (original, installed["msgpack-indexed"]):
        args = ["coverage", "-l", str(library), "--arch", "gfx90a", "--cu-count", "104", str(workload), "--json"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.output[result.output.index("{") :]))
    assert reports[0]["gemms"] == reports[1]["gemms"] and reports[0]["summary"] == reports[1]["summary"]


def test_per_silicon_layouts_are_found(tmp_path: Path) -> None:
    """Names only (find_masters reads no file): per-arch folders, revision subtrees named for the
    compiler target, strict arch names, per-device stems; bare twins of .zlib files skipped."""
    library = tmp_path / "library"
    files = [
        "gfx942/TensileLibrary_lazy_gfx942.dat.zlib",
        "gfx942/TensileLibrary_lazy_gfx942.dat",  # shadowed by the .zlib
        "gfx942/TensileLiteLibrary_lazy_gfx942_Mapping.dat.zlib",
        "gfx942/TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx942.dat.zlib",
        "gfx1250/TensileLibrary_lazy_gfx1250.dat.zlib",
        "gfx1250v0/TensileLibrary_lazy_gfx1250.dat.zlib",
        "gfx1250v0/TensileLiteLibrary_lazy_gfx1250_Mapping.dat",
        "TensileLibrary_lazy_gfx1250-strict.dat",
        "TensileLibrary_lazy_ID75a0_gfx950.dat.zlib",
        "TensileLiteLibrary_lazy_Mapping.dat",
    ]
    for name in files:
        (library / name).parent.mkdir(parents=True, exist_ok=True)
        (library / name).write_bytes(b"")
    found = {(m.label, m.arch, m.path.name, m.device_id) for m in find_masters(library)}
    assert found == {
        ("gfx942", "gfx942", "TensileLibrary_lazy_gfx942.dat.zlib", None),
        ("gfx1250", "gfx1250", "TensileLibrary_lazy_gfx1250.dat.zlib", None),
        ("gfx1250v0", "gfx1250", "TensileLibrary_lazy_gfx1250.dat.zlib", None),
        (".", "gfx1250-strict", "TensileLibrary_lazy_gfx1250-strict.dat", None),
        (".", "gfx950", "TensileLibrary_lazy_ID75a0_gfx950.dat.zlib", "ID75a0"),
    }
    masters = {m.label: m for m in find_masters(library)}
    assert masters["gfx1250v0"].mapping_path is not None
    assert (
        masters["."].mapping_path is not None
        and masters["."].mapping_path.name == "TensileLiteLibrary_lazy_Mapping.dat"
    )
    installed = InstalledLibrary(library)
    assert [m.label for m in installed.choose("gfx1250")] == ["gfx1250"]
    assert [m.label for m in installed.choose("gfx1250", label="gfx1250v0")] == ["gfx1250v0"]


@pytest.mark.parametrize("fmt", ["msgpack-indexed", "msgpack", "zlib"])
def test_shards_decode_only_what_the_query_reaches(fmt: str, installed: dict[str, Path], corpus: Path) -> None:
    # an indexed shard by its table, a plain .dat(.zlib) shard by one header scan (open_master)
    from tensilekit.selection import compile_library, contraction_problem, hardware_from_query
    from tensilekit.selection.walk import ReferenceSelector

    library = InstalledLibrary(installed[fmt])
    tree, loader = library.for_selection()
    compiled = compile_library(tree, loader=loader, runtime="hipblaslt")
    queries = (corpus / "select-hipblaslt" / f"{NAME}.jsonl").read_text().splitlines()
    record = next(r for r in map(json.loads, queries) if r["expected"])
    problem = contraction_problem(compiled.runtime.problem_from_query(record))
    solution, _ = compiled.find(problem, hardware_from_query(record, None))
    assert solution is not None and solution.index == record["expected"]["index"]
    shards = installed[fmt].glob("TensileLibrary_Type_*")
    total = sum(len(load_master(path).solutions) for path in shards)
    assert 0 < len(compiled.solutions) < total  # only what the reached tables name was decoded
    # the walk (what `select` uses for a handful of queries) decodes only the entries it visits
    walker = ReferenceSelector(*library.for_selection(), runtime=compiled.runtime)
    assert select_solution(walker, problem, hardware_from_query(record, None)).index == solution.index
    assert 0 < len(walker._solutions) <= len(compiled.solutions)


def test_revisioned_arch_name_is_amds_rule() -> None:
    # rocblaslt_arch_revision.hpp and its smoke test: only an A0 gfx1250 (revision 0) differs
    assert revisioned_arch_name("gfx1250", 0) == "gfx1250v0"
    assert revisioned_arch_name("gfx1250", 1) == "gfx1250"
    assert revisioned_arch_name("gfx1250", -1) == "gfx1250"  # HIP too old to report it
    assert revisioned_arch_name("gfx1250-strict", 0) == "gfx1250-strict"
    assert revisioned_arch_name("gfx942", 0) == "gfx942"


def _first_type_only(master: MasterLibrary) -> MasterLibrary:
    """The master with one problem type left, so its answers differ from the full one's."""
    raw = master.to_raw()
    problems = raw["library"]["rows"][0]["library"]
    first = next(iter(problems["map"]))
    problems["map"] = {first: problems["map"][first]}
    return MasterLibrary.model_validate(raw)


@pytest.fixture(scope="module")
def revisions(original: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An installed folder with a gfx1250 tree (B0) and a smaller gfx1250v0 tree (A0), both named
    for gfx1250 as TensileCreateLibrary names them, and each tree as one master file. Only the
    file names say gfx1250 (the tree is chosen by name); the rows inside stay the corpus's gfx90a
    ones, so the corpus queries still reach kernels."""
    base = tmp_path_factory.mktemp("revisions")
    full = load_master(original)
    part = _first_type_only(full)
    folder = base / "library"
    folder.mkdir()
    dump_master_set(split_lazy(full, "gfx1250"), folder / "gfx1250", "zlib")
    dump_master_set(split_lazy(part, "gfx1250"), folder / "gfx1250v0", "zlib")
    dump_master(full, base / "b0.dat")
    dump_master(part, base / "a0.dat")
    queries = (original.parent.parent / "select-hipblaslt" / f"{NAME}.jsonl").read_text().splitlines()
    (base / "queries.jsonl").write_text("\n".join(queries[::12]) + "\n")
    return {"folder": folder, "a0": base / "a0.dat", "b0": base / "b0.dat", "queries": base / "queries.jsonl"}


def _select(library: Path, queries: Path, *options: str) -> list[dict[str, object]]:
    args = ["select", "--library", str(library), *options, "--queries", str(queries), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return [_answer(line) for line in result.output.splitlines() if line.startswith("{")]


def test_subtree_and_asic_revision_choose_the_tree_the_runtime_loads(revisions: dict[str, Path]) -> None:
    folder, queries = revisions["folder"], revisions["queries"]
    a0, b0 = _select(revisions["a0"], queries), _select(revisions["b0"], queries)
    assert a0 != b0 and sum(row["index"] is not None for row in a0) > 0
    assert _select(folder, queries) == b0  # no device revision named: gfx1250/
    assert _select(folder, queries, "--asic-revision", "1") == b0
    assert _select(folder, queries, "--asic-revision", "0") == a0  # an A0 part loads gfx1250v0/
    assert _select(folder, queries, "--subtree", "gfx1250v0") == a0
    assert _select(folder, queries, "--subtree", "gfx1250", "--asic-revision", "0") == b0  # the option overrides


def test_unknown_subtree_exits_2_listing_the_folders_labels(revisions: dict[str, Path], tmp_path: Path) -> None:
    folder = str(revisions["folder"])
    workload = tmp_path / "gemm.jsonl"
    workload.write_text(json.dumps({"m": 64, "n": 64, "k": 64, "a_type": "Half", "compute_type": "Float"}) + "\n")
    commands = [
        ["select", "--library", folder, "64", "64", "64"],
        ["coverage", "--library", folder, str(workload)],
        ["lint", folder],
        ["validate", folder],
        ["info", folder],
        ["diff", folder, str(revisions["a0"])],
    ]
    for command in commands:
        result = CliRunner().invoke(cli, [*command, "--subtree", "gfx1250v9"])
        assert result.exit_code == 2, (command, result.output)
        assert "no subtree 'gfx1250v9'" in result.output and "this folder has: gfx1250, gfx1250v0" in result.output
    for command in (["info", str(revisions["a0"])], ["select", "-l", str(revisions["a0"]), "1", "1", "1"]):
        result = CliRunner().invoke(cli, [*command, "--asic-revision", "0"])
        assert result.exit_code == 2 and "not one" in result.output, result.output


def test_a_revision_tree_has_no_fallback(revisions: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "library"
    shutil.copytree(revisions["folder"] / "gfx1250", folder / "gfx1250")
    result = CliRunner().invoke(cli, ["select", "-l", str(folder), "--asic-revision", "0", "64", "64", "64"])
    assert result.exit_code == 3 and "loads the gfx1250v0 tree" in result.output, result.output
    assert "does not fall back" in result.output


def test_lint_validate_info_diff_read_the_chosen_tree(revisions: dict[str, Path]) -> None:
    folder = revisions["folder"]
    runner = CliRunner()
    result = runner.invoke(cli, ["info", "--json", str(folder), "--subtree", "gfx1250v0"])
    assert result.exit_code == 0, result.output
    paths = [Path(info["path"]) for info in json.loads(result.output)]
    assert paths and all(path.parent.name == "gfx1250v0" for path in paths)
    for command in (["lint"], ["validate"]):
        result = runner.invoke(cli, [*command, str(folder), "--asic-revision", "0"])
        assert result.exit_code == 0, result.output
        assert "gfx1250v0" in result.output and f"gfx1250{'/'}Tensile" not in result.output
    same = runner.invoke(cli, ["diff", str(folder), str(revisions["a0"]), "--subtree", "gfx1250v0"])
    assert same.exit_code == 0 and "no differences" in same.output, same.output
    other = runner.invoke(cli, ["diff", str(folder), str(revisions["a0"])])
    assert other.exit_code == 0 and "no differences" not in other.output, other.output


def test_no_kernel_reasons_are_as_precise_as_on_the_plain_master(installed: dict[str, Path], original: Path) -> None:
    # issue 25: reasons on lazy/installed libraries were vaguer than on plain masters, and blamed
    # "size or alignment predicates" when the workspace check refused
    from tensilekit.library import open_library

    plain = open_library(original)
    query = {"m": 2, "n": 1, "k": 1024, "trans_a": "T", "a_type": "Float", "cu_count": 104, "workspace_size": 0}
    variants = [{}, {"a_type": "Double", "compute_type": "f64"}, {"trans_a": "N", "trans_b": "T"}]
    for folder in installed.values():
        library = open_library(folder)
        assert not library.master.solutions  # the shards are not read to say why
        assert sorted(map(str, library.served())) == sorted(map(str, plain.served()))
        for variant in variants:
            record = {**query, **variant}
            reasons = []
            for opened in (library, plain):
                problem, device = opened.problem_from_query(record), opened.device_of(record)
                assert opened.select(problem, device).index is None
                reasons.append(opened.why_not(problem, device).split("; it has:")[0])
            assert reasons[0] == reasons[1]
            assert "size or alignment" not in reasons[0]

"""Merge conformance over ``shared/corpus/merge``: AMD's outputs byte for byte, documented behaviours.

Cases with ``expected/`` are run with the flags their ``COMMAND`` names (tool and options parsed
from it, so new cases need no code) and every output must equal AMD's bytes; the output
directory must hold exactly the expected files. Cases without ``expected/`` assert the behaviour
``shared/spec/merge.md`` documents for them (case names a1 … k1 as in the spec).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from tensilekit.errors import MergeError
from tensilekit.io.logic_io import dumps_logic, load_logic, loads_logic, logic_to_data
from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml
from tensilekit.merge import Compat, MergePolicy, diff_libraries, merge_directories, merge_logic
from tensilekit.merge.merge import validate_policy_value
from tensilekit.model.logic import LogicFile

pytestmark = pytest.mark.corpus


def _merge_root(corpus: Path) -> Path:
    root = corpus / "merge"
    if not root.is_dir():
        pytest.skip("corpus has no merge/ cases")
    return root


def _corpus_for_collection() -> Path | None:
    # The same search as conftest.find_corpus (parametrisation happens before fixtures exist).
    env = os.environ.get("TENSILEKIT_CORPUS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
    return next((candidate for candidate in candidates if (candidate / "merge").is_dir()), None)


def _case_names(with_expected: bool) -> list[str]:
    corpus = _corpus_for_collection()
    if corpus is None:
        return []
    return sorted(
        entry.name
        for entry in (corpus / "merge").iterdir()
        if entry.is_dir() and (entry / "expected").is_dir() == with_expected
    )


def policy_from_command(command: str) -> MergePolicy:
    """The MergePolicy reproducing a corpus ``COMMAND`` line (tool name, then AMD's argv)."""
    tool, _, rest = command.partition("(")
    argv = shlex.split(rest.partition(")")[2])
    flags = argv[3:]  # original, incremental, output
    options: dict[str, Any] = {}
    if "tensilelite" in tool.lower():
        options["compat"] = Compat.TENSILELITE
    elif "utilities/merge.py" in tool.lower():  # ROCm/Tensile's older merge.py (TU)
        options.update(compat=Compat.TENSILELITE, problem_type_check=False)
    else:
        options["compat"] = Compat.TENSILE
    position = 0
    while position < len(flags):
        flag = flags[position]
        name, _, inline = flag.partition("=")
        if name == "--force_merge":
            value = inline if inline else flags[position + 1]
            position += 0 if inline else 1
            options["force_merge"] = validate_policy_value(value)
        elif name == "--notrim":
            options["trim"] = False
        elif name == "--no_eff":
            options["no_eff"] = True
        elif name == "--add_solution_tags":
            options["add_solution_tags"] = True
        elif name in ("-v", "--verbosity"):
            position += 0 if inline else 1
        else:
            raise AssertionError(f"COMMAND flag not understood by the test: {flag}")
        position += 1
    return MergePolicy(**options)


# ---------------------------------------------------------------------------------------------
# cases with AMD's outputs


@pytest.mark.parametrize("case", _case_names(with_expected=True))
def test_outputs_byte_identical(corpus: Path, case: str, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / case
    policy = policy_from_command((folder / "COMMAND").read_text())
    before = {path: path.read_bytes() for path in folder.rglob("*.yaml")}
    output = tmp_path / "OUT"

    report = merge_directories(folder / "original", folder / "incremental", output, policy)

    expected = sorted(path.name for path in (folder / "expected").iterdir())
    assert sorted(path.name for path in output.iterdir()) == expected
    for name in expected:
        assert (output / name).read_bytes() == (folder / "expected" / name).read_bytes(), name
    assert all(path.read_bytes() == data for path, data in before.items()), "inputs must stay untouched"

    for file_report in report.files:
        written = (output / file_report.name).read_text()
        merged = loads_logic(written)
        # the dump is idempotent and the report's counts describe the written file
        assert dumps_logic(merged, AMD_LOGIC_STYLE) == written
        assert len(merged.solutions) == file_report.output_kernels
        assert len(merged.table) == file_report.output_sizes
        assert all(0 <= entry.solution < len(merged.solutions) for entry in merged.table)
        assert [s.solution_index for s in merged.solutions] == list(range(len(merged.solutions)))
        _assert_untouched_sizes_unchanged(folder, file_report.name, merged, policy)


def _assert_untouched_sizes_unchanged(folder: Path, name: str, merged: LogicFile, policy: MergePolicy) -> None:
    """Sizes the incremental file does not mention select the same kernel as before the merge."""
    original = load_logic(folder / "original" / name)
    incremental = load_logic(folder / "incremental" / name)
    if any(len(entry.size) >= 8 for entry in original.table + incremental.table):
        return  # trimming rewrites keys; covered by the trim tests
    diff = diff_libraries(original, merged, compat=policy.compat)
    touched = {tuple(entry.size) for entry in incremental.table}
    group = diff.groups[0] if diff.groups else None
    if group is None:
        return
    assert not group.sizes_removed
    for entry in group.sizes_reassigned + group.efficiency_changes:
        assert tuple(entry.key) in touched, entry.key


# ---------------------------------------------------------------------------------------------
# cases without expected outputs: the behaviours the spec documents


def policy_from_name(case: str) -> MergePolicy:
    """The policy a case without COMMAND names (``…_tensilelite``, ``…_no_eff``, ``…_winner`` …)."""
    options: dict[str, Any] = {}
    if "tensilelite" in case:
        options["compat"] = Compat.TENSILELITE
    if "no_eff" in case:
        options["no_eff"] = True
    if "notrim" in case:
        options["trim"] = False
    if "add_solution_tags" in case:
        options["add_solution_tags"] = True
    if "_winner" in case and "by_filename" not in case:
        options["force_merge"] = False
    if "force_true" in case:
        options["force_merge"] = True
    return MergePolicy(**options)


@pytest.mark.parametrize("case", _case_names(with_expected=False))
def test_every_case_merges_to_well_formed_files(corpus: Path, case: str, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / case
    policy = policy_from_name(case)
    report = merge_directories(folder / "original", folder / "incremental", tmp_path, policy)
    assert report.files, "every corpus case pairs at least one file"
    for file_report in report.files:
        text = (tmp_path / file_report.name).read_text()
        merged = loads_logic(text)
        assert dumps_logic(merged) == text  # a written file reads back and re-dumps identically
        assert {entry.solution for entry in merged.table} == set(range(len(merged.solutions)))
        assert (len(merged.table), len(merged.solutions)) == (file_report.output_sizes, file_report.output_kernels)
        _assert_untouched_sizes_unchanged(folder, file_report.name, merged, policy)


def _pair(corpus: Path, case: str, name: str | None = None) -> tuple[LogicFile, LogicFile, str]:
    folder = _merge_root(corpus) / case
    if not folder.is_dir():
        pytest.skip(f"corpus case {case} absent")
    name = name or sorted(os.listdir(folder / "incremental"))[0]
    incremental_path = str(folder / "incremental" / name)
    return load_logic(folder / "original" / name), load_logic(incremental_path), incremental_path


def _text(logic: LogicFile) -> str:
    return dump_yaml(logic_to_data(logic), AMD_LOGIC_STYLE)


def _expected_text(corpus: Path, case: str) -> str:
    folder = _merge_root(corpus) / case / "expected"
    if not folder.is_dir():
        pytest.skip(f"corpus case {case} absent")
    return next(folder.iterdir()).read_text()


def test_a2_multifile_sizes_only_all_tools_agree(corpus: Path, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / "a2_vega20_hb_sizes_only_multifile"
    tensile = merge_directories(folder / "original", folder / "incremental", tmp_path / "t")
    lite = merge_directories(
        folder / "original", folder / "incremental", tmp_path / "tl", MergePolicy(compat=Compat.TENSILELITE)
    )
    assert [report.name for report in tensile.files] == sorted(os.listdir(folder / "incremental"))
    for report in tensile.files:
        assert report.policy.force_merge  # no "arcturus" in the path: Forced
        assert (tmp_path / "t" / report.name).read_bytes() == (tmp_path / "tl" / report.name).read_bytes()
        original = load_logic(folder / "original" / report.name)
        # every original size survives; the incremental only adds or overwrites
        assert report.output_sizes == len(original.table) + len(report.sizes_added)
    assert not lite.unpaired_incremental and not lite.unpaired_original


def test_b1_collision_tensile_reuses_every_kernel(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "b1_collision_104cu_into_110cu_force")
    merged, report = merge_logic(original, incremental, MergePolicy(), incremental_path=path)
    file_report = report.files[0]
    assert file_report.policy.force_merge
    assert not file_report.kernels_added  # T folds all 6 kernels into existing 110CU ones
    assert file_report.output_kernels == 17
    assert merged.list_length == 9 and merged.version == "4.6.0"  # header from the original


def test_b1_collision_tensilelite_adds_kernels_and_waives(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "b1_collision_104cu_into_110cu_force")
    merged, report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE), incremental_path=path)
    file_report = report.files[0]
    assert len(file_report.kernels_added) == 6 and file_report.output_kernels == 23
    assert file_report.problem_type_waived == ["UseInitialStrides"]
    assert _text(merged).count(" UseInitialStrides:") == 0
    assert _text(original).count(" UseInitialStrides:") == 16, "input untouched (header + 15 solutions)"


def test_b2_forced_tensile_equals_tensilelite_d0(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "b2_retune_collision_force")
    merged, _ = merge_logic(original, incremental, MergePolicy(), incremental_path=path)
    assert _text(merged) == _expected_text(corpus, "d0_retune_collision_tensilelite")


def test_c2_winner_keeps_ties(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "c2_collision_104cu_into_110cu_winner")
    _, report = merge_logic(original, incremental, MergePolicy(force_merge=False), incremental_path=path)
    kept = report.files[0].sizes_kept
    assert sum(entry.tie for entry in kept) == 17
    assert all(entry.incremental_efficiency <= entry.original_efficiency for entry in kept)


def test_c3_force_true_overrides_arcturus_default(corpus: Path, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / "c3_force_true_overrides_filename_default"
    report = merge_directories(folder / "original", folder / "incremental", tmp_path, MergePolicy(force_merge=True))
    (file_report,) = report.files
    assert file_report.policy.force_merge and "requested" in file_report.policy.force_merge_reason
    assert len(file_report.sizes_replaced) == 3 and not file_report.sizes_kept
    assert report.unpaired_incremental == ["vega20_Cijk_Aikl_Blkj_SBIIc.yaml"]
    assert sorted(os.listdir(tmp_path)) == ["arcturus_Cijk_Aikl_Blkj_SBIIc.yaml"]
    default = merge_directories(folder / "original", folder / "incremental", tmp_path / "default")
    assert not default.files[0].policy.force_merge  # "arcturus" in the path: Winner
    assert default.files[0].efficiency.mixed  # GFlops original, percent incremental (e1)


def test_d1_no_eff_writes_zero_for_merged_entries(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "d1_retune_collision_tensilelite_no_eff")
    policy = MergePolicy(compat=Compat.TENSILELITE, no_eff=True)
    merged, report = merge_logic(original, incremental, policy, incremental_path=path)
    expected = loads_logic(_expected_text(corpus, "d0_retune_collision_tensilelite"))
    assert [entry.efficiency for entry in merged.table] == [0.0] * len(merged.table)
    assert [(e.size, e.solution) for e in merged.table] == [(e.size, e.solution) for e in expected.table]
    # the comparison still uses the real efficiencies: Winner keeps what it kept without --no_eff
    winner = MergePolicy(compat=Compat.TENSILELITE, no_eff=True, force_merge=False)
    merged_winner, winner_report = merge_logic(original, incremental, winner, incremental_path=path)
    plain, plain_report = merge_logic(
        original, incremental, MergePolicy(compat=Compat.TENSILELITE, force_merge=False), incremental_path=path
    )
    assert len(winner_report.files[0].sizes_kept) == len(plain_report.files[0].sizes_kept) > 0
    kept_keys = {tuple(entry.key) for entry in winner_report.files[0].sizes_kept}
    for entry in merged_winner.table:
        assert (entry.efficiency == 0.0) != (tuple(entry.size) in kept_keys)


def test_e1_unpaired_incremental_dropped_and_add_new(corpus: Path, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / "e1_new_file_dropped_winner_by_filename"
    report = merge_directories(folder / "original", folder / "incremental", tmp_path / "amd")
    assert report.unpaired_incremental == ["vega20_Cijk_Aikl_Blkj_SBIIc.yaml"]
    assert sorted(os.listdir(tmp_path / "amd")) == ["arcturus_Cijk_Aikl_Blkj_SBIIc.yaml"]
    copied = merge_directories(folder / "original", folder / "incremental", tmp_path / "new", MergePolicy(add_new=True))
    assert copied.copied_new == ["vega20_Cijk_Aikl_Blkj_SBIIc.yaml"]
    new_file = "vega20_Cijk_Aikl_Blkj_SBIIc.yaml"
    assert (tmp_path / "new" / new_file).read_bytes() == (folder / "incremental" / new_file).read_bytes()
    # the Winner decisions were made across units: reported
    assert report.files[0].efficiency.mixed
    assert len(report.files[0].sizes_kept) == 3


def test_f1_f2_tensile_identity_folds_tensilelite_kernels(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "f1_hipblaslt_equality_tensilelite")
    lite, lite_report = merge_logic(original, incremental, MergePolicy(), incremental_path=path)
    assert lite_report.files[0].policy.compat is Compat.TENSILELITE  # default for the dialect
    wrong, wrong_report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILE), incremental_path=path)
    assert len(wrong.solutions) == len(lite.solutions) - 1
    assert any("tensilelite" in warning for warning in wrong_report.files[0].warnings)


def test_f2_eight_tuple_original_meets_four_tuple_incremental(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "f2_hipblaslt_8tuple_original_tensilelite")
    assert {len(entry.size) for entry in original.table} == {8}
    merged, report = merge_logic(original, incremental, MergePolicy(), incremental_path=path)
    assert {len(entry.size) for entry in merged.table} == {4}
    assert len(merged.table) == 21 and len(merged.solutions) == 11
    assert len(report.files[0].sizes_trimmed) == len(original.table)
    tensile, _ = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILE), incremental_path=path)
    assert len(tensile.solutions) == 10  # GlobalReadVectorWidthB 8 folded into 4: T is wrong here


@pytest.mark.parametrize(
    ("case", "trim", "length"), [("g1_gb_8tuple_trim_default", True, 4), ("g2_gb_8tuple_notrim", False, 8)]
)
def test_g_trim_and_notrim(corpus: Path, case: str, trim: bool, length: int) -> None:
    original, incremental, path = _pair(corpus, case)
    for compat, kernels in ((Compat.TENSILE, 103), (Compat.TENSILELITE, 104)):
        merged, report = merge_logic(
            original, incremental, MergePolicy(trim=trim, compat=compat), incremental_path=path
        )
        assert {len(entry.size) for entry in merged.table} == {length}
        assert len(merged.solutions) == kernels
        assert len(merged.table) == 498
        assert not report.files[0].policy.force_merge  # arcturus
    if not trim:
        assert not report.files[0].sizes_trimmed


def test_g1_tensilelite_sanitizes_untouched_original_kernels(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "g1_gb_8tuple_trim_default")
    tensile, _ = merge_logic(original, incremental, MergePolicy(), incremental_path=path)
    lite, report = merge_logic(original, incremental, MergePolicy(compat=Compat.TENSILELITE), incremental_path=path)

    def stale(logic: LogicFile) -> list[dict[str, Any]]:
        return [
            raw
            for raw in (s.raw() for s in logic.solutions)
            if raw.get("StaggerU") == 0 and (raw.get("StaggerUStride") != 0 or raw.get("_staggerStrideShift") != 0)
        ]

    assert stale(tensile), "T leaves StaggerU == 0 kernels alone (StaggerUStride 256 stays)"
    assert not stale(lite)
    assert report.files[0].sanitized_incremental_kernels > 0


def test_i1_latched_policy_and_i2_alone(corpus: Path, tmp_path: Path) -> None:
    root = _merge_root(corpus)
    mixed = merge_directories(
        root / "i1_mixed_dir_sticky_default_policy" / "original",
        root / "i1_mixed_dir_sticky_default_policy" / "incremental",
        tmp_path / "i1",
    )
    assert [(r.name, r.policy.force_merge) for r in mixed.files] == [
        ("arcturus_Cijk_Alik_Bjlk_HB.yaml", False),
        ("hip_Cijk_Alik_Bjlk_SB.yaml", False),
    ]
    assert "latched" in mixed.files[1].policy.force_merge_reason
    alone = merge_directories(
        root / "i2_hip_file_alone_default_policy" / "original",
        root / "i2_hip_file_alone_default_policy" / "incremental",
        tmp_path / "i2",
    )
    assert alone.files[0].policy.force_merge
    name = "hip_Cijk_Alik_Bjlk_SB.yaml"
    assert (tmp_path / "i1" / name).read_bytes() != (tmp_path / "i2" / name).read_bytes()
    assert alone.files[0].output_kernels == 1  # WorkGroupMapping -4 == 4 for source kernels (T)
    assert alone.files[0].stale_duplicate_rows == [0]
    # Winner kept every size: AMD rewrites the original unchanged, YAML anchors (&id001) included
    arcturus = "arcturus_Cijk_Alik_Bjlk_HB.yaml"
    original_bytes = (root / "i1_mixed_dir_sticky_default_policy" / "original" / arcturus).read_bytes()
    assert b"&id001" in original_bytes
    assert (tmp_path / "i1" / arcturus).read_bytes() == original_bytes
    merge_directories(
        root / "i1_mixed_dir_sticky_default_policy" / "original",
        root / "i1_mixed_dir_sticky_default_policy" / "incremental",
        tmp_path / "i1u",
        MergePolicy(latch_default=False),
    )
    assert (tmp_path / "i1u" / name).read_bytes() == (tmp_path / "i2" / name).read_bytes()
    lite = merge_directories(
        root / "i2_hip_file_alone_default_policy" / "original",
        root / "i2_hip_file_alone_default_policy" / "incremental",
        tmp_path / "i2tl",
        MergePolicy(compat=Compat.TENSILELITE),
    )
    assert lite.files[0].output_kernels == 2


def test_j1_solution_tags_write_duplicate_keys(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "j1_add_solution_tags_dup_sizes")
    merged, report = merge_logic(original, incremental, MergePolicy(add_solution_tags=True), incremental_path=path)
    keys = [tuple(entry.size) for entry in merged.table]
    assert len(keys) == 147 and len(keys) - len(set(keys)) == 12
    lite_tags, _ = merge_logic(
        original, incremental, MergePolicy(add_solution_tags=True, compat=Compat.TENSILELITE), incremental_path=path
    )
    b1_original, b1_incremental, b1_path = _pair(corpus, "b1_collision_104cu_into_110cu_force")
    lite, _ = merge_logic(b1_original, b1_incremental, MergePolicy(compat=Compat.TENSILELITE), incremental_path=b1_path)
    assert _text(lite_tags) == _text(lite)


def test_tensilelite_tags_on_new_size_is_an_error(corpus: Path) -> None:
    original, incremental, path = _pair(corpus, "f1_hipblaslt_equality_tensilelite")
    with pytest.raises(MergeError, match="IndexError"):
        merge_logic(original, incremental, MergePolicy(add_solution_tags=True), incremental_path=path)


def test_k1_large_original(corpus: Path, tmp_path: Path) -> None:
    folder = _merge_root(corpus) / "k1_large_original_sizes_only"
    report = merge_directories(folder / "original", folder / "incremental", tmp_path)
    (file_report,) = report.files
    original = load_logic(folder / "original" / file_report.name)
    assert file_report.output_sizes == len(original.table) + len(file_report.sizes_added)
    assert len(file_report.sizes_added) + len(file_report.sizes_replaced) == 4


def test_output_may_be_the_original_directory(corpus: Path, tmp_path: Path) -> None:
    import shutil

    folder = _merge_root(corpus) / "c1_retune_collision_winner"
    shutil.copytree(folder / "original", tmp_path / "work")
    policy = policy_from_command((folder / "COMMAND").read_text())
    merge_directories(tmp_path / "work", folder / "incremental", tmp_path / "work", policy)
    for path in (folder / "expected").iterdir():
        assert (tmp_path / "work" / path.name).read_bytes() == path.read_bytes()
    assert not [name for name in os.listdir(tmp_path / "work") if name.endswith(".tmp")]


def test_command_parser() -> None:
    policy = policy_from_command("TensileMergeLibrary (Tensile 09ec347) a b OUT --force_merge false --notrim")
    assert policy == MergePolicy(compat=Compat.TENSILE, force_merge=False, trim=False)
    lite = policy_from_command("tensilelite Utilities/merge.py (hipBLASLt 7d9fb683) a b OUT --no_eff")
    assert lite.compat is Compat.TENSILELITE and lite.no_eff
    older = policy_from_command("Tensile Utilities/merge.py (Tensile 09ec347) a b OUT --add_solution_tags")
    assert older.problem_type_check is False and older.add_solution_tags

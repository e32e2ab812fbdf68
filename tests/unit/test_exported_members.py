"""The public API is exactly what ``tensilekit.__all__`` says, and every name resolves."""

from __future__ import annotations

import tensilekit


def test_all_names_resolve() -> None:
    for name in tensilekit.__all__:
        assert getattr(tensilekit, name) is not None, name


def test_public_api_is_pinned() -> None:
    assert sorted(tensilekit.__all__) == sorted(
        [
            "Dialect",
            "Location",
            "LogicFile",
            "MasterLibrary",
            "TensilekitError",
            "TuneConfig",
            "TuneReport",
            "YamlStyle",
            "__version__",
            "build_master",
            "build_master_files",
            "dump_logic",
            "dump_master",
            "dumps_logic",
            "dumps_master",
            "load",
            "load_logic",
            "load_master",
            "loads",
            "loads_logic",
            "loads_master",
            "open_master",
            "Library",
            "open_library",
            "run_tuning",
            "LibraryDiff",
            "MergePolicy",
            "MergeReport",
            "diff_libraries",
            "merge_directories",
            "merge_logic",
            "merge_paths",
            "prune_logic",
            "GemmProblem",
            "Hardware",
            "Selection",
            "find_all_solutions",
            "select_batch",
            "select_solution",
            "CoverageReport",
            "coverage_of",
            "lint_library",
            "lint_paths",
            "RemapReport",
            "remap",
            "write_remapped",
        ]
    )


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        tensilekit.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("expected AttributeError")

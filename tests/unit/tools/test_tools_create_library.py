"""TensileCreateLibrary: config checks, argv for both CLI generations, output parsing, fake runs."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tensilekit.errors import InputNotFound, ToolFailed, ToolOutputError
from tensilekit.tools.create_library import (
    CreateLibraryConfig,
    CreateLibraryFlavor,
    build_create_library_argv,
    expected_master_names,
    parse_create_library_output,
    read_manifest,
    run_create_library,
)
from tensilekit.tools.runner import SubprocessRunner

Calls = Callable[[], list[dict[str, Any]]]
ROCM = CreateLibraryFlavor.ROCM_LIBRARIES


def make_config(tmp_path: Path, **fields: Any) -> CreateLibraryConfig:
    return CreateLibraryConfig.model_validate(
        {"logic_dir": tmp_path / "logic", "output_dir": tmp_path / "build", **fields}
    )


@pytest.fixture
def logic_dir(tmp_path: Path) -> Path:
    """Two small logic files (only their architecture lines matter to the fake)."""
    root = tmp_path / "logic"
    for arch, name in (("gfx942", "aquavanjaram/gfx942/Equality/a.yaml"), ("gfx90a", "aldebaran/Equality/b.yaml")):
        path = root / name
        path.parent.mkdir(parents=True)
        header = f"- {{Architecture: {arch}, CUCount: 304}}" if arch == "gfx942" else f"- {arch}"
        path.write_text(f"- {{MinimumRequiredVersion: 4.33.0}}\n- schedule\n{header}\n- [Device 0049]\n")
    experimental = root / "aquavanjaram/gfx942/Experimental/c.yaml"
    experimental.parent.mkdir(parents=True)
    experimental.write_text("- {MinimumRequiredVersion: 4.33.0}\n- aquavanjaram\n- gfx942\n")
    return root


# --- config and argv ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"lazy_library_loading": True}, "requires merge_files=True and separate_architectures=True"),
        ({"lazy_library_loading": True, "merge_files": True}, "requires merge_files"),
        ({"library_format": "msgpack-indexed"}, "needs flavor 'rocm-libraries'"),
        ({"flavor": "rocm-libraries", "separate_architectures": True}, "no merge-files"),
        ({"flavor": "rocm-libraries", "global_parameters": [["A", "1"]]}, "no --global-parameters"),
        ({"runtime_language": "CUDA"}, "runtime_language"),
    ],
)
def test_config_is_checked(tmp_path: Path, fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        make_config(tmp_path, **fields)


def test_argv_2024_lazy_separate(tmp_path: Path) -> None:
    config = make_config(tmp_path, architecture=["gfx942", "gfx90a"], merge_files=True, separate_architectures=True,
                         lazy_library_loading=True, generate_solution_table=False, jobs=8, code_object_version="V5",
                         no_enumerate=True, global_parameters=[("PrintLevel", "0")])  # fmt: skip
    assert config.architecture == "gfx942;gfx90a" and config.lazy
    assert build_create_library_argv(config) == [
        "TensileCreateLibrary", str(tmp_path / "logic"), str(tmp_path / "build"), "HIP",
        "--architecture", "gfx942;gfx90a", "--library-format", "msgpack",
        "--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-generate-solution-table",
        "--code-object-version", "V5", "--jobs", "8", "--no-enumerate", "--global-parameters", "PrintLevel=0",
    ]  # fmt: skip


def test_argv_defaults_and_rocm_libraries_flavor(tmp_path: Path) -> None:
    plain = make_config(tmp_path, library_format="yaml", merge_files=False, verbose=2, logic_filter="gfx942/Equality/*")
    assert not plain.lazy and plain.library_extension == ".yaml"
    assert build_create_library_argv(plain, executable="bin/TCL")[4:] == [
        "--architecture", "all", "--library-format", "yaml", "--no-merge-files",
        "--logic-filter", "gfx942/Equality/*", "--verbose", "2",
    ]  # fmt: skip
    lazy = make_config(tmp_path, flavor=ROCM, library_format="msgpack-indexed")
    assert lazy.lazy and "--no-lazy-library-loading" not in build_create_library_argv(lazy)
    eager = make_config(tmp_path, flavor=ROCM, lazy_library_loading=False, experimental=True, keep_build_tmp=True)
    assert build_create_library_argv(eager)[8:] == ["--no-lazy-library-loading", "--experimental", "--keep-build-tmp"]


def test_expected_master_names(tmp_path: Path) -> None:
    assert expected_master_names(make_config(tmp_path), ["gfx942"]) == ["TensileLibrary.dat"]
    separate = make_config(tmp_path, separate_architectures=True, library_format="yaml")
    assert expected_master_names(separate, ["gfx942", "gfx90a"]) == [
        "TensileLibrary_gfx942.yaml",
        "TensileLibrary_gfx90a.yaml",
    ]
    assert expected_master_names(make_config(tmp_path, flavor=ROCM), ["gfx950"]) == ["TensileLibrary_lazy_gfx950.dat"]


# --- output parsing -----------------------------------------------------------------------

# As TensileCreateLibrary.py:1362-1406 @7d9fb68 prints it.
SAMPLE = """\
# CodeObjectVersion from TensileCreateLibrary: V5
# CxxCompiler       from TensileCreateLibrary: amdclang++
# Architecture      from TensileCreateLibrary: gfx942
# LibraryFormat     from TensileCreateLibrary: msgpack
# LogicFilter: /src/Logic/**/*.yaml

# LibraryLogicFiles(2):
#   /src/Logic/aquavanjaram/gfx942/Equality/a.yaml
#   /src/Logic/aquavanjaram/gfx942/GridBased/b.yaml
Loading Logics...: 100%|##########| 2/2
# Check if generated files exists.
# Tensile Library Writer DONE
"""


def test_parse_progress_output() -> None:
    log = parse_create_library_output(SAMPLE)
    assert (log.architecture, log.library_format, log.done) == ("gfx942", "msgpack", True)
    older = parse_create_library_output(
        SAMPLE.replace("LibraryLogicFiles(2):", "LibraryLogicFiles: 2").replace("      from TensileCreateLibrary:", ":")
    )
    assert older == log
    assert log.logic_files == (
        "/src/Logic/aquavanjaram/gfx942/Equality/a.yaml",
        "/src/Logic/aquavanjaram/gfx942/GridBased/b.yaml",
    )


def test_parse_progress_output_count_mismatch() -> None:
    with pytest.raises(ToolOutputError, match="announced 3 logic files but listed 2") as caught:
        parse_create_library_output(SAMPLE.replace("LibraryLogicFiles(2):", "LibraryLogicFiles(3):"), source="tcl.log")
    assert caught.value.location is not None and caught.value.location.line == 7
    with pytest.raises(ToolOutputError, match="not a number"):
        parse_create_library_output("# LibraryLogicFiles: many\n")


def test_parse_progress_output_of_an_unfinished_run() -> None:
    log = parse_create_library_output("# Architecture:      all\n")
    assert not log.done and log.logic_files == ()


# --- fake runs ----------------------------------------------------------------------------


def test_fake_default_build(fake_bin: Path, fake_calls: Calls, tmp_path: Path, logic_dir: Path) -> None:
    config = make_config(tmp_path)
    result = run_create_library(SubprocessRunner(), config)
    library = config.output_dir / "library"
    assert result.master_libraries == (library / "TensileLibrary.dat",)
    assert {path.name for path in result.code_objects} == {"TensileLibrary_gfx942.co", "TensileLibrary_gfx90a.co"}
    assert set(result.manifest) == {*result.master_libraries, *result.code_objects}
    assert read_manifest(library / "TensileManifest.txt") == list(result.manifest)
    assert result.match_table == config.output_dir / "MatchTable.yaml"  # written in the working directory
    assert result.log.done and result.log.architecture == "all" and result.log.library_format == "msgpack"
    assert len(result.log.logic_files) == 3  # 7d9fb68 has no --experimental: Experimental/ is read too
    [call] = fake_calls()
    assert call["cwd"] == str(config.output_dir) and call["argv"] == build_create_library_argv(config)[1:]


def test_fake_lazy_per_architecture_yaml_build(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    config = make_config(tmp_path, architecture="gfx942", library_format="yaml", merge_files=True,
                         separate_architectures=True, lazy_library_loading=True, generate_solution_table=False)  # fmt: skip
    result = run_create_library(SubprocessRunner(), config)
    names = [path.name for path in result.master_libraries]
    assert expected_master_names(config, ["gfx942"])[0] in names
    assert all("gfx942" in name for name in names) and len(names) == 2  # lazy master + placeholder
    assert result.match_table is None
    assert len(result.log.logic_files) == 2 and all("gfx942" in path for path in result.log.logic_files)
    with pytest.raises(ValueError, match="no --experimental"):  # TensileCreateLibrary.py:1251-1309 @7d9fb68
        make_config(tmp_path, experimental=True)
    assert result.master_libraries[0].read_text().startswith("library:")


def test_fake_rocm_libraries_flavor(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    config = make_config(tmp_path, flavor=ROCM, architecture="gfx90a")
    result = run_create_library(SubprocessRunner(), config, env={"TENSILEKIT_FAKE_FLAVOR": "rocm-libraries"})
    assert "TensileLibrary_lazy_gfx90a.dat" in [path.name for path in result.master_libraries]
    # A 2024 command line is refused by the newer argparse.
    old = make_config(tmp_path, separate_architectures=True)
    with pytest.raises(ToolFailed) as caught:
        run_create_library(SubprocessRunner(), old, env={"TENSILEKIT_FAKE_FLAVOR": "rocm-libraries"})
    assert (
        caught.value.returncode == 2 and "unrecognized arguments: --separate-architectures" in caught.value.stderr_tail
    )


def test_fake_corpus_logic_file(fake_bin: Path, tmp_path: Path, corpus: Path) -> None:
    source = corpus / "logic/hipblaslt/aquavanjaram/gfx942_80cu/Equality/aquavanjaram_Cijk_Ailk_Bljk_SB_UserArgs.yaml"
    target = tmp_path / "logic" / "gfx942" / source.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    result = run_create_library(SubprocessRunner(), make_config(tmp_path, architecture="gfx942"))
    assert result.log.logic_files == (str(target),)


@pytest.mark.parametrize(
    ("garbage", "error", "message"),
    [
        ("count", ToolOutputError, "announced 5 logic files but listed 3"),
        ("manifest", ToolOutputError, "manifest lists"),
        ("nolib", ToolOutputError, "wrote no TensileLibrary"),
    ],
)
def test_fake_bad_outputs(
    fake_bin: Path, tmp_path: Path, logic_dir: Path, garbage: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        run_create_library(SubprocessRunner(), make_config(tmp_path), env={"TENSILEKIT_FAKE_GARBAGE": garbage})


def test_fake_manifest_error_names_the_manifest_line(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    with pytest.raises(ToolOutputError) as caught:
        run_create_library(SubprocessRunner(), make_config(tmp_path), env={"TENSILEKIT_FAKE_GARBAGE": "manifest"})
    location = caught.value.location
    assert location is not None and location.file is not None
    assert location.file.endswith("library/TensileManifest.txt") and location.line == 4


def test_fake_failures(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    with pytest.raises(ToolFailed) as no_files:
        run_create_library(SubprocessRunner(), make_config(tmp_path, architecture="gfx1100"))
    assert no_files.value.returncode == 1 and "AttributeError" in no_files.value.stderr_tail
    with pytest.raises(ToolFailed) as slow:
        run_create_library(
            SubprocessRunner(kill_grace=1), make_config(tmp_path), env={"TENSILEKIT_FAKE_HANG": "30"}, timeout=0.5
        )
    assert slow.value.timed_out
    with pytest.raises(InputNotFound):
        run_create_library(SubprocessRunner(), make_config(tmp_path, logic_dir=tmp_path / "absent"))

"""TensileCreateLibrary: config checks, argv for both CLI generations, output parsing, fake runs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tensilekit.errors import InputNotFound, ToolFailed, ToolNotFound, ToolOutputError
from tensilekit.tools.create_library import (
    CreateLibraryConfig,
    CreateLibraryFlavor,
    build_create_library_argv,
    custom_kernel_folder,
    expected_master_names,
    master_library_dir,
    match_table_path,
    parse_create_library_output,
    read_manifest,
    read_match_table,
    run_create_library,
)
from tensilekit.tools.runner import FakeResult, FakeRunner, SubprocessRunner

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
    # hipblaslt-2026-interfaces.md §2 "output layout (G1)": no plain TensileLibrary.dat mode any more
    eager = make_config(tmp_path, flavor=ROCM, lazy_library_loading=False)
    assert expected_master_names(eager, ["gfx950"]) == ["TensileLibrary_gfx950.dat"]


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


# As rocm-libraries TensileCreateLibrary/Run.py @00ee1f9d prints it: the count with print1, the
# files with print2 (--verbose 2 only), a per-revision line between them; no Architecture lines.
NEWER = """\
# LogicFilter:       /src/Logic/**/*.yaml
# Experimental:      False
# Archs: gfx942 ,gfx1250v0
# LibraryLogicFiles: 2
# gfx1250 ASIC revision: v0 (1 selected, 0 dropped as another revision's)
#   /src/Logic/aquavanjaram/gfx942/Equality/a.yaml
#   /src/Logic/gfx1250/Equality/b.yaml
Number of solutions parsed: 7
# Tensile Library Writer DONE
"""


def test_parse_progress_output_does_not_fail_on_counts() -> None:
    """The newer tool lists files only at --verbose 2, so the count and the list need not agree."""
    mismatch = parse_create_library_output(SAMPLE.replace("LibraryLogicFiles(2):", "LibraryLogicFiles(3):"))
    assert mismatch.logic_file_count == 3 and len(mismatch.logic_files) == 2
    verbose = parse_create_library_output(NEWER)
    assert verbose.logic_file_count == 2 and verbose.done and verbose.architecture is None
    assert verbose.logic_files == (
        "/src/Logic/aquavanjaram/gfx942/Equality/a.yaml",
        "/src/Logic/gfx1250/Equality/b.yaml",
    )
    quiet = parse_create_library_output("\n".join(line for line in NEWER.splitlines() if not line.startswith("#   ")))
    assert quiet.logic_file_count == 2 and quiet.logic_files == () and quiet.done
    with pytest.raises(ToolOutputError, match="not a number") as caught:
        parse_create_library_output("# LibraryLogicFiles: many\n", source="tcl.log")
    assert caught.value.location is not None and caught.value.location.line == 1


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
    # Run.py @00ee1f9d: everything of one architecture in library/<arch>/ (libraryDir), no manifest
    per_arch = config.output_dir / "library" / "gfx90a"
    assert per_arch / "TensileLibrary_lazy_gfx90a.dat" in result.master_libraries
    assert master_library_dir(config.output_dir, "gfx90a") == per_arch and result.manifest == ()
    assert result.log.logic_file_count == 1 and result.log.logic_files == ()  # the list needs --verbose 2
    verbose = run_create_library(
        SubprocessRunner(), config.model_copy(update={"verbose": 2}), env={"TENSILEKIT_FAKE_FLAVOR": "rocm-libraries"}
    )
    assert len(verbose.log.logic_files) == 1 and "aldebaran" in verbose.log.logic_files[0]
    # A 2024 command line is refused by the newer argparse.
    old = make_config(tmp_path, separate_architectures=True)
    with pytest.raises(ToolFailed) as caught:
        run_create_library(SubprocessRunner(), old, env={"TENSILEKIT_FAKE_FLAVOR": "rocm-libraries"})
    assert (
        caught.value.returncode == 2 and "unrecognized arguments: --separate-architectures" in caught.value.stderr_tail
    )


def test_fake_rocm_libraries_zlib_masters(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    """hipblaslt-2026-interfaces.md §2 "compressed msgpack": the newest rocm-libraries writes msgpack
    as ``<name>.dat.zlib``; a build of those is a build, and its folder is the master's."""
    config = make_config(tmp_path, flavor=ROCM, architecture="gfx90a")
    env = {"TENSILEKIT_FAKE_FLAVOR": "rocm-libraries", "TENSILEKIT_FAKE_ZLIB": "1"}
    result = run_create_library(SubprocessRunner(), config, env=env)
    per_arch = config.output_dir / "library" / "gfx90a"
    assert per_arch / "TensileLibrary_lazy_gfx90a.dat.zlib" in result.master_libraries
    assert not list(per_arch.glob("TensileLibrary*.dat"))
    assert (per_arch / "TensileLiteLibrary_lazy_gfx90a_Mapping.dat").is_file()  # §2 "output layout (G2)"
    assert master_library_dir(config.output_dir, "gfx90a") == per_arch


def test_the_7d9fb683_stand_in_builds_a_library_the_bench_loads(standins: Path, corpus: Path, tmp_path: Path) -> None:
    """AMD's own TensileCreateLibrary (7d9fb683) writes the master into library/; that folder is what
    HIPBLASLT_TENSILE_LIBPATH must name, since hipBLASLt uses it as is (tensile_host.cpp:1260-1440)."""
    source = corpus / "logic/hipblaslt/aquavanjaram/gfx942/Equality/aquavanjaram_Cijk_Alik_Bljk_F8HS_BH_UserArgs.yaml"
    (tmp_path / "logic").mkdir()
    shutil.copyfile(source, tmp_path / "logic" / source.name)
    config = make_config(
        tmp_path, architecture="gfx942", merge_files=True, separate_architectures=True, lazy_library_loading=True
    )
    result = run_create_library(
        SubprocessRunner(), config, executable=str(standins / "TensileCreateLibrary"), timeout=300
    )
    assert result.log.logic_files == (str(tmp_path / "logic" / source.name),) and result.log.logic_file_count == 1
    library = master_library_dir(config.output_dir, "gfx942")
    assert library == config.output_dir / "library" and (library / "TensileLibrary_lazy_gfx942.dat").is_file()
    bench = [str(standins / "hipblaslt-bench"), "-m", "1024", "-n", "8", "-k", "6400", "--transA", "T",
             "--transB", "N", "--a_type", "f8_r", "--b_type", "f8_r", "--c_type", "f16_r", "--d_type", "f16_r"]  # fmt: skip
    loaded = SubprocessRunner().run(bench, env={"HIPBLASLT_TENSILE_LIBPATH": str(library)}, timeout=120)
    assert loaded.returncode == 0 and "Total solutions" in loaded.stdout, loaded.stderr
    wrong = SubprocessRunner().run(bench, env={"HIPBLASLT_TENSILE_LIBPATH": str(library.parent)}, timeout=120)
    assert wrong.returncode == 1 and "Cannot read" in wrong.stderr


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
        ("manifest", ToolOutputError, "manifest lists"),
        ("nolib", ToolOutputError, "wrote no TensileLibrary"),
    ],
)
def test_fake_bad_outputs(
    fake_bin: Path, tmp_path: Path, logic_dir: Path, garbage: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        run_create_library(SubprocessRunner(), make_config(tmp_path), env={"TENSILEKIT_FAKE_GARBAGE": garbage})


def test_fake_count_garbage_is_not_an_error(fake_bin: Path, tmp_path: Path, logic_dir: Path) -> None:
    result = run_create_library(SubprocessRunner(), make_config(tmp_path), env={"TENSILEKIT_FAKE_GARBAGE": "count"})
    assert result.log.logic_file_count == 5 and len(result.log.logic_files) == 3


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


# --------------------------------------------------------------------------------------------
# MatchTable.yaml and where TensileCreateLibrary reads custom kernels


def test_match_table_maps_each_index_to_a_logic_file_and_position(tmp_path: Path) -> None:
    table = match_table_path(tmp_path)
    table.write_text("---\n0: [/l/a.yaml, 0]\n1: [/l/a.yaml, 1]\n7: [/l/b.yaml, 0]\n")
    assert read_match_table(table) == {0: ("/l/a.yaml", 0), 1: ("/l/a.yaml", 1), 7: ("/l/b.yaml", 0)}


@pytest.mark.parametrize("text", ["0: [/l/a.yaml]\n", "x: [/l/a.yaml, 0]\n", "- [/l/a.yaml, 0]\n", "0: [1, 2\n"])
def test_a_match_table_that_is_not_one_is_a_tool_output_error_naming_the_file(tmp_path: Path, text: str) -> None:
    table = match_table_path(tmp_path)
    table.write_text(text)
    with pytest.raises(ToolOutputError) as caught:
        read_match_table(table)
    assert caught.value.location is not None and caught.value.location.file == str(table)
    with pytest.raises(InputNotFound):
        read_match_table(tmp_path / "absent.yaml")


def _tensile_tree(root: Path) -> Path:
    package = root / "tensilelite" / "Tensile"
    (package / "CustomKernels" / "gfx950").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    return package


@pytest.mark.parametrize(
    "trace",
    [
        "# code object from {package}/__init__.py\n",  # no byte-code cache (a read-only tree)
        "# {package}/__pycache__/__init__.cpython-311.pyc matches {package}/__init__.py\n",
        "# code object from '{package}/__init__.py'\n",
    ],
)
def test_custom_kernels_are_beside_the_tensile_package_the_tool_imports(tmp_path: Path, trace: str) -> None:
    package = _tensile_tree(tmp_path)
    noise = "import 'os' # <class '_frozen_importlib.FrozenImporter'>\n# code object from /x/TensileInstructions/__init__.py\n"
    runner = FakeRunner(
        lambda call: FakeResult(stdout="usage: TensileCreateLibrary", stderr=noise + trace.format(package=package))
    )
    folder, found = custom_kernel_folder(runner, "TensileCreateLibrary")
    assert folder == package / "CustomKernels" and "imports" in found
    (call,) = runner.calls
    assert call.argv == ("TensileCreateLibrary", "--help") and call.env["PYTHONVERBOSE"] == "1"


def test_a_tool_that_names_no_package_is_placed_by_its_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _tensile_tree(tmp_path)
    (package / "bin").mkdir()
    script = package / "bin" / "TensileCreateLibrary"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{package / 'bin'}:{os.environ['PATH']}")
    silent = FakeRunner(lambda call: FakeResult(stdout="usage: TensileCreateLibrary"))  # python -E: no trace
    assert custom_kernel_folder(silent)[0] == package / "CustomKernels"
    (package / "CustomKernels" / "gfx950").rmdir()
    (package / "CustomKernels").rmdir()
    folder, why = custom_kernel_folder(silent)
    assert folder is None and "not in a Tensile tree's bin/" in why
    traced = FakeRunner(lambda call: FakeResult(stderr=f"# code object from {package}/__init__.py\n"))
    folder, why = custom_kernel_folder(traced)
    assert folder is None and "has no CustomKernels folder" in why


def test_a_missing_tool_says_why(tmp_path: Path) -> None:
    def missing(call: Any) -> FakeResult:
        raise ToolNotFound("NoTCL is not on PATH")

    folder, why = custom_kernel_folder(FakeRunner(missing), "NoTCL")
    assert folder is None and "NoTCL is not on PATH" in why


@pytest.mark.parametrize(
    "tool", ["standins/TensileCreateLibrary", "tensilelite-7d9fb68/Tensile/bin/TensileCreateLibrary"]
)
def test_amds_tools_read_the_custom_kernels_of_their_own_tree(amd: Path, tool: str) -> None:
    """The stand-in (a bash wrapper running AMD's TensileCreateLibrary() in a venv) and AMD's own script
    (``tensilelite/Tensile/bin``) both read tensilelite 7d9fb683's CustomKernels, which holds the kernel
    the corpus's bf16 logic names."""
    folder, _ = custom_kernel_folder(SubprocessRunner(), str(amd / tool))
    # the tool's Python names the package by its real path: the same folder however ``amd`` is reached
    assert (
        folder is not None and folder.resolve() == (amd / "tensilelite-7d9fb68" / "Tensile" / "CustomKernels").resolve()
    )
    assert (
        folder / "Custom_Cijk_Alik_Bljk_BBS_BH_Bias_AS_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_K1_MIWT4_16_DTVA.s"
    ).is_file()

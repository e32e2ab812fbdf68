"""Tuning configs: structure, YAML text, fork expansion as the driver does it, sizes."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from tensilekit.search.configs import (
    Flow,
    config_sizes,
    dumps_config,
    enqueues_per_sync,
    exact_size,
    expand_forks,
    library_epilogue,
    problem_type_config,
    range_size,
    run_script,
    tuning_config,
    write_config,
)
from tensilekit.search.params import KernelParams, ProblemShape
from tensilekit.search.profiles import profile_for

from .search_factory import BASE, DECODE, SQUARE

PROBLEM_TYPE = problem_type_config("B", "B", "S", "T", "N")
KERNELS = [BASE, BASE.replace(depth_u=32, gsu=2), BASE.replace(mt1=16, wave_group=(2, 1), stream_k=3)]


def test_config_sections_and_groups() -> None:
    config = tuning_config(PROBLEM_TYPE, [SQUARE, DECODE], KERNELS, profile_for("gfx942"))
    assert list(config) == ["GlobalParameters", "BenchmarkProblems", "LibraryLogic"]
    [[problem_type, benchmark]] = config["BenchmarkProblems"]
    assert problem_type["HighPrecisionAccumulate"] is True and problem_type["TransposeA"] is True
    assert list(benchmark) == ["BenchmarkCommonParameters", "ForkParameters", "BenchmarkFinalParameters"]
    [[group]] = [item["Groups"] for item in benchmark["ForkParameters"]]
    assert [KernelParams.from_fork_values(entry) for entry in group] == KERNELS
    assert config["LibraryLogic"] == {
        "ScheduleName": "aquavanjaram", "DeviceNames": ["Device 0049", "Device 0050"], "ArchitectureName": "gfx942",
    }  # fmt: skip
    assert config["GlobalParameters"]["EnqueuesPerSync"] == 30  # the decode size (M*N*K < 256*256*8192)
    assert "LibraryLogic" not in tuning_config(
        PROBLEM_TYPE, [SQUARE], KERNELS, profile_for("gfx942"), library_logic=False
    )


def test_yaml_text_reads_back_as_the_same_config() -> None:
    config = tuning_config(PROBLEM_TYPE, [SQUARE, DECODE], KERNELS, profile_for("gfx942"), "tensile",
                           ranges=[range_size([1024, 1024, 2048], [16], [1], [4096])])  # fmt: skip
    text = dumps_config(config, ["first line", "", "third"])
    assert text.startswith('# first line\n#\n# third\nGlobalParameters:\n  MinimumRequiredVersion: "4.33.0"\n')
    assert '"1LDSBuffer": 1' in text and "KernelLanguage: [Assembly]" in text
    # ROCm/Tensile needs SIA 3 for 1LDSBuffer kernels (SolutionStructs.py:4139-4143 @09ec347)
    assert "- ScheduleIterAlg: [3]" in text
    assert yaml.safe_load(text) == config
    assert dumps_config({"a": Flow(b=1, c=[1, 2]), "d": [Flow(e="x y")], "f": None}) == (
        'a: {b: 1, c: [1, 2]}\nd:\n  - {e: "x y"}\nf: null\n'
    )


def test_expand_forks_follows_the_driver() -> None:
    benchmark = {
        "BenchmarkCommonParameters": [{"KernelLanguage": ["Assembly"]}, {"PrefetchGlobalRead": [2]}],
        "ForkParameters": [{"DepthU": [32, 64]}, {"StaggerU": [0]},
                           {"Groups": [[{"MatrixInstruction": [1]}, {"MatrixInstruction": [2]}]]}],
    }  # fmt: skip
    solutions = expand_forks(benchmark)
    # first fork fastest, then the group (constructForkPermutations)
    assert [(s["DepthU"], s["MatrixInstruction"]) for s in solutions] == [(32, [1]), (64, [1]), (32, [2]), (64, [2])]
    assert all(s["KernelLanguage"] == "Assembly" and s["StaggerU"] == 0 and s["PrefetchGlobalRead"] == 2
               for s in solutions)  # fmt: skip
    config = tuning_config(PROBLEM_TYPE, [SQUARE], KERNELS, profile_for("gfx942"))
    expanded = expand_forks(config["BenchmarkProblems"][0][1])
    assert [KernelParams.from_fork_values(values) for values in expanded] == KERNELS


def test_problem_sizes() -> None:
    assert exact_size(SQUARE) == [4096, 4096, 1, 4096]
    padded = ProblemShape(4096, 8, 1, 4096, "T", "N", 4160, 4096)
    assert exact_size(padded) == [4096, 8, 1, 4096, 4096, 4096, 4160, 4096]  # + LDD, LDC, LDA, LDB
    benchmark = {"BenchmarkFinalParameters": [{"ProblemSizes": [
        {"Exact": [1, 2, 3, 4]}, {"Range": [[16, 16, 32], [8], [1], [64, 64, 128]]}]}]}  # fmt: skip
    assert config_sizes(benchmark) == [(1, 2, 3, 4), (16, 8, 1, 64), (32, 8, 1, 64), (16, 8, 1, 128), (32, 8, 1, 128)]
    assert enqueues_per_sync([ProblemShape(64, 64, 1, 64)]) == 200 and enqueues_per_sync([]) == 10


def test_write_config_writes_yaml_and_an_executable_script(tmp_path: Path) -> None:
    config = tuning_config(PROBLEM_TYPE, [SQUARE], KERNELS, profile_for("gfx942"))
    (tmp_path / "cfg").mkdir()
    path = write_config(tmp_path / "cfg", "BBS_TN_0", config, ["header"])
    assert path == tmp_path / "cfg" / "BBS_TN_0.yaml" and yaml.safe_load(path.read_text()) == config
    script = tmp_path / "cfg" / "BBS_TN_0.sh"
    assert script.read_text() == run_script("BBS_TN_0") and os.access(script, os.X_OK)
    assert '"${TENSILE:-Tensile}" "$NAME.yaml" "build_$NAME"' in script.read_text()


def test_common_parameters_and_library_epilogue() -> None:
    lite = tuning_config(PROBLEM_TYPE, [SQUARE], KERNELS, profile_for("gfx942"))
    assert lite["BenchmarkProblems"][0][1]["BenchmarkCommonParameters"] == [{"KernelLanguage": ["Assembly"]}]
    double = tuning_config(problem_type_config("D", "D", "D", "N", "N"), [SQUARE], [], profile_for("gfx942"))
    assert {"SourceSwap": [True]} in double["BenchmarkProblems"][0][1]["BenchmarkCommonParameters"]
    # a library row's epilogue (codes as a logic file stores them) becomes config letters
    row = {"UseBias": 1, "BiasDataTypeList": [0, 4, 7], "Activation": True, "ActivationType": "hipblaslt_all",
           "UseScaleAB": "Scalar", "UseScaleAlphaVec": 1, "F32XdlMathOp": 0, "DataType": 10, "TLUA": False}  # fmt: skip
    epilogue = library_epilogue(row)
    assert epilogue == {"UseBias": 1, "BiasDataTypeList": ["S", "H", "B"], "Activation": True,
                        "ActivationType": "hipblaslt_all", "UseScaleAB": "Scalar", "UseScaleAlphaVec": 1}  # fmt: skip
    assert library_epilogue({**row, "F32XdlMathOp": 9}, "tensile") == {"F32XdlMathOp": "X"}
    config = tuning_config({**PROBLEM_TYPE, **epilogue}, [SQUARE], KERNELS, profile_for("gfx942"),
                           minimum_required_version="5.0.0")  # fmt: skip
    assert config["GlobalParameters"]["MinimumRequiredVersion"] == "5.0.0"
    assert config["BenchmarkProblems"][0][0]["BiasDataTypeList"] == ["S", "H", "B"]


def test_library_epilogue_reads_type_codes_with_the_rows_own_enum() -> None:
    # hipBLASLt rows number types as tensilelite does (TensileInstructions/DataType.py @7d9fb68: I64 is 9,
    # X 10, F8 11, B8 12); rocBLAS rows as ROCm/Tensile (DataType.py @09ec347: X 9, F8 10, B8 11). An fp8
    # row's default bias list [S, H, F8] written as [S, H, B8] put the tuned kernel in another problem type
    # and the merge refused it ("BiasDataTypeList: [0, 4, 11] != [0, 4, 12]", issue 36 item 4).
    fp8_row = {"UseBias": 0, "BiasDataTypeList": [0, 4, 11], "F32XdlMathOp": 0, "DataTypeE": 4}
    assert library_epilogue(fp8_row)["BiasDataTypeList"] == ["S", "H", "F8"]
    assert library_epilogue({"BiasDataTypeList": [12, 13, 14]})["BiasDataTypeList"] == ["B8", "F8B8", "B8F8"]
    assert library_epilogue({"F32XdlMathOp": 10}) == {"F32XdlMathOp": "X"}  # xf32 in a hipBLASLt row
    assert library_epilogue({"F32XdlMathOp": 10}, "tensile") == {"F32XdlMathOp": "F8"}  # code 10 in rocBLAS's enum

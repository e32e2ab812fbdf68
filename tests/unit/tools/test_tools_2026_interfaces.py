"""The 2026 tools (rocm-libraries develop: hipBLASLt 1.2, tensilelite 5.0.0, gfx950) as
``../shared/spec/hipblaslt-2026-interfaces.md`` describes them, for the rows the stand-ins
(7d9fb683) cannot play; each test names its row. Inputs follow the spec's real 2026 artefacts
(A1-A7: a hipblaslt-bench 1.2.0 report, a tensilelite 5.0.0 run's CSV and logic), not tensilekit's
own output."""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from tensilekit.io.logic_io import load_logic
from tensilekit.libbuild.tensilelite import solution_states
from tensilekit.model.naming_tensilelite import name_full
from tensilekit.search.configs import global_parameters, tuning_config
from tensilekit.search.params import ProblemShape
from tensilekit.search.profiles import profile_for
from tensilekit.tools.hipblaslt_bench import parse_bench_output
from tensilekit.tools.profiles import bench_version, profile_for_tools, tool_profile
from tensilekit.tools.tensile_client import parse_client_csv

EQUALITY_HHS_TN = "aquavanjaram_Cijk_Alik_Bljk_HHS_BH_Bias_HAS_SAV_UserArgs.yaml"
# §1 "result header columns" (A7): swizzle, aux_type, rotating_buffer, flush, use_gpu_timer moved
# Gflops and us right; "device banner": no dash lines; "rotating banner"; "bias_type" is D's type.
BENCH_2026 = """\
hipBLASLt version: 100200
hipBLASLt git version: de5c1aebb6-dirty
Query device success: there are 1 devices. (Target device ID is 0)
Device ID 0 : AMD Instinct MI350X gfx950:sramecc+:xnack-
with 288.0 GB memory, max. SCLK 2400 MHz, max. MCLK 1900 MHz, compute capability 9.5
maxGridDimX 2147483647, sharedMemPerBlock 163.8 KB, maxThreadsPerBlock 1024, warpSize 64
Rotating buffer 3175 MiB. Needed Size: 452 MiB. Needed block count: 1 (Capped to max iters: 50)
Is supported 1 / Total solutions: 1
[0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,\
a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,swizzle_a,swizzle_b,activation_type,\
bias_vector,bias_type,aux_type,rotating_buffer,flush,use_gpu_timer,hipblaslt-Gflops,hipblaslt-GB/s,us
    T,N,0,1,32768,128256,8192,1,8192,268435456,0,8192,1050673152,32768,4202692608,32768,4202692608,bf16_r,bf16_r,\
bf16_r,bf16_r,f32_r,0,0,0,0,0,0,0,none,0,bf16_r,bf16_r,3175,1,1,1.53e+06,412.5,45012.3
    --Solution index: 302128
    --Solution name:  Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1
    --kernel name:    Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1
"""


def test_a_2026_bench_report_is_read_by_column_name() -> None:
    """§1 "result header columns", "device banner", "rotating banner", "bias_type value", "--version"."""
    output = parse_bench_output(BENCH_2026)
    [result] = output.results
    assert result.us == 45012.3 and result.gflops == 1.53e06
    assert result.solution_index == 302128 and result.solution_name is not None
    assert result.values["bias_vector"] == "0" and result.values["bias_type"] == "bf16_r"
    assert bench_version(BENCH_2026) == "hipBLASLt 1.2.0 (git de5c1aebb6-dirty)"


def test_a_2026_client_csv_with_nan_granularity() -> None:
    """§3 "results CSV": same columns and order as 7d9fb683; ``TotalGranularity`` can be ``-nan``."""
    text = (
        "GFlops, SizeI, SizeJ, SizeK, SizeL, LDD, LDC, LDA, LDB, TotalFlops, TilesPerCu, TotalGranularity, "
        "WinnerGFlops, WinnerTimeUS, WinnerIdx, WinnerName, Cijk_A, Cijk_B\n"
        "0, 32768, 128256, 1, 8192, 32768, 32768, 8192, 8192, 6.88e+13, 1.2, -nan, 608.28, 1.13e+05, 0, Cijk_A, "
        "608.28, -nan\n"
    )
    csv = parse_client_csv(text, source="00_Final.csv")
    [row] = csv.rows
    assert csv.solution_names == ("Cijk_A", "Cijk_B")
    assert row.gflops["Cijk_A"] == 608.28
    value = row.gflops["Cijk_B"]
    assert value is not None and math.isnan(value)  # a measurement error of that kernel, never a time
    assert row.best() is not None and row.best()[0] == "Cijk_A"  # type: ignore[index]


def test_a_5_0_0_logic_file_without_per_solution_problem_type(corpus: Path, tmp_path: Path) -> None:
    """§3 "LibraryLogic header" and "per-solution ProblemType" (A5): ``MinimumRequiredVersion:
    5.0.0`` and solutions without their own ProblemType; the top-level one is theirs."""
    source = corpus / "logic/hipblaslt/aquavanjaram/gfx942/Equality" / EQUALITY_HHS_TN
    original = load_logic(source)
    data = yaml.load(source.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    data[0] = {"MinimumRequiredVersion": "5.0.0"}
    for solution in data[5]:
        del solution["ProblemType"]
    stripped = tmp_path / source.name
    stripped.write_text(yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    logic = load_logic(stripped)
    assert logic.version == "5.0.0"
    assert len(logic.solutions) == len(original.solutions)
    assert logic.problem_type == original.problem_type
    # tensilekit's own build of the file (names, predicates) takes the file's ProblemType for each
    before = solution_states(yaml.load(source.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    after = solution_states(data)
    assert [name_full(state) for state in after] == [name_full(state) for state in before]


def test_the_develop_profile_writes_what_tensilelite_5_reads() -> None:
    """§3 "MinimumRequiredVersion" (5.0.0, the same-major rule), "unrecognised global params"
    (MergeFiles, PrintSolutionRejectionReason, MinKForGSU, MaxLDS, DeviceLDS, MaxFileName are warned
    about or refused by 5.0.0), "`__version__` / banner" (a 5.x driver is the develop profile)."""
    develop = tool_profile("hipblaslt-develop")
    assert develop.minimum_required_version == "5.0.0" and "gfx950" in develop.archs
    parameters = global_parameters([ProblemShape(4096, 64, 1, 4096, "T", "N", 0, 0)],
                                   minimum_required_version=develop.minimum_required_version)  # fmt: skip
    assert parameters["MinimumRequiredVersion"] == "5.0.0"
    gone = {"MergeFiles", "PrintSolutionRejectionReason", "MinKForGSU", "MaxLDS", "DeviceLDS", "MaxFileName"}
    assert not gone & set(parameters)
    profile, _ = profile_for_tools("", (5, 0, 0))
    assert profile is develop


def test_the_develop_driver_gets_its_client_and_lock_from_its_release() -> None:
    """§3 "`--prebuilt-client`", "client binary name", "removed driver flags" (``--client-build-path``
    exit 2) and "`--client-lock`" (filelock in requirements.txt): the develop driver never builds a
    client and its --client-lock works; 7d9fb683's builds one and its --client-lock needs filelock,
    which its requirements.txt lacks."""
    develop, old = tool_profile("hipblaslt-develop"), tool_profile("hipblaslt-7d9fb68")
    assert (develop.driver_builds_client, develop.driver_client_lock) == (False, True)
    assert (old.driver_builds_client, old.driver_client_lock) == (True, False)


def test_usebias_is_an_integer_for_every_release() -> None:
    """§3 "UseBias": AMD's configs write ``UseBias: 1`` -> ``use-bias=1``; never True/False."""
    problem_type = {"OperationType": "GEMM", "DataType": "B", "DestDataType": "B", "ComputeDataType": "S",
                    "HighPrecisionAccumulate": True, "TransposeA": True, "TransposeB": False, "UseBeta": True,
                    "Batched": True, "UseBias": True, "BiasDataTypeList": ["S", "B"], "UseScaleAlphaVec": True}  # fmt: skip
    config = tuning_config(problem_type, [ProblemShape(4096, 64, 1, 4096, "T", "N", 0, 0)], [], profile_for("gfx942"))
    written = config["BenchmarkProblems"][0][0]
    assert written["UseBias"] == 1 and type(written["UseBias"]) is int
    assert written["UseScaleAlphaVec"] == 1 and type(written["UseScaleAlphaVec"]) is int

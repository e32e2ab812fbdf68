"""tensilekit's own example libraries: what ``tensilekit examples DIR`` writes and the guides use.

Every file is made here, by tensilekit's own code, from hand-designed kernels and size tables
(no AMD library is copied), deterministically, so the guides' outputs are reproducible:

* ``logic/``: two Tensile (rocBLAS) logic files for gfx90a ("aldebaran"): SGEMM NN and HGEMM
  TN with high-precision accumulation;
* ``TensileLibrary_gfx90a.yaml`` / ``.dat``: the master library TensileCreateLibrary would
  build from them (the same library ``tensilekit select`` answers from by default);
* ``tuned/``: a tuning run's result for the SGEMM file, to merge into ``logic/``: one size
  retuned to a new kernel, two sizes added, one candidate kernel no size uses;
* ``logic-gfx942/``: two tensilelite (hipBLASLt) logic files for gfx942 ("aquavanjaram"), bf16
  and fp16 TN, with kernels of tensilekit's GPU model (``tune --simulate``'s library);
* ``tuned-gfx942/``: a tuning run's result for the bf16 file (two new kernels; one size retuned,
  one added), to merge into ``logic-gfx942/``;
* ``TensileLibrary_gfx942.dat``: the hipBLASLt master library built from ``logic-gfx942/``.

``fixtures/logic/make_sample.py`` writes the same gfx90a logic files into ``fixtures/logic/`` and
the embedded sample library from this module.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensilekit.errors import OutputNotWritable


def problem_type(data_type: int, dest: int, compute: int, hpa: bool, trans_a: bool) -> dict[str, Any]:
    """A Tensile (rocBLAS) logic file's ProblemType for a GEMM (Tensile's keys, with ``TLUA``/``TLUB``;
    the tensilelite one is :func:`tensilekit.tools.problem_types.problem_type_dict`)."""
    return {
        "Batched": True,
        "ComplexConjugateA": False,
        "ComplexConjugateB": False,
        "ComputeDataType": compute,
        "DataType": data_type,
        "DestDataType": dest,
        "HighPrecisionAccumulate": hpa,
        "IndexAssignmentsA": [3, 0, 2] if trans_a else [0, 3, 2],
        "IndexAssignmentsB": [3, 1, 2],
        "IndicesBatch": [2],
        "IndicesFree": [0, 1],
        "IndicesSummation": [3],
        "NumIndicesC": 3,
        "OperationType": "GEMM",
        "StridedBatched": True,
        "TLUA": not trans_a,
        "TLUB": False,
        "TotalIndices": 4,  # Tensile's build reads it from the file (libbuild.master: no default)
        "TransposeA": trans_a,
        "TransposeB": False,
        "UseBeta": True,
    }


def thread_tile(mt0: int, mt1: int, mi: list[int], wg: list[int]) -> list[int]:
    """The ThreadTile from which Tensile derives this macro tile (MIWaveTile0, MIWaveTile1 x MI N)."""
    m, n, _, blocks = mi
    miwg0 = max(wg[0], m)
    block_m = min(miwg0 // m, blocks)
    block_n = blocks // block_m
    waves = wg[0] * wg[1] // 64
    group0 = min((miwg0 // m) // block_m, waves)
    group1 = waves // group0
    wave_tile0 = mt0 // (group0 * (64 // n) * block_m * (m * n // 64))
    wave_tile1 = mt1 // (group1 * n * block_n)
    return [wave_tile0, wave_tile1 * n]


def kernel(
    index: int,
    pt: dict[str, Any],
    mt0: int,
    mt1: int,
    depth_u: int,
    mi: list[int],
    wg: list[int],
    gsu: int = 1,
    multiple: int = 1,
    vector: int = 4,
) -> dict[str, Any]:
    """A gfx90a MFMA kernel's solution record in a Tensile logic file (``multiple``: the M and K
    multiple it asserts, ``AF0EM``/``ASEM``)."""
    return {
        "AssertFree0ElementMultiple": multiple,
        "AssertFree1ElementMultiple": 1,
        "AssertSummationElementMultiple": multiple,
        "AssertStrideAEqual": {0: 1},
        "AssertStrideBEqual": {0: 1},
        "AssertStrideCEqual": {0: 1},
        "AssertStrideDEqual": {0: 1},
        "BufferLoad": True,
        "BufferStore": True,
        "DepthU": depth_u,
        "EnableMatrixInstruction": True,
        "GlobalReadVectorWidth": vector,
        "GlobalSplitU": gsu,
        "GlobalSplitUAlgorithm": "MultipleBuffer",
        "ISA": [9, 0, 10],
        "KernelLanguage": "Assembly",
        "MacroTile0": mt0,
        "MacroTile1": mt1,
        "MatrixInstruction": mi,
        "PrefetchGlobalRead": 2,
        "ProblemType": copy.deepcopy(pt),
        "SolutionIndex": index,
        "StaggerU": 32,
        "ThreadTile": thread_tile(mt0, mt1, mi, wg),
        "VectorWidth": vector,
        "WorkGroup": wg,
        "WorkGroupMapping": 8,
    }


def logic(name: str, pt: dict[str, Any], kernels: list[dict[str, Any]], table: list[Any]) -> list[Any]:
    """A gfx90a ("aldebaran") Tensile logic file in list form."""
    return [
        {"MinimumRequiredVersion": "4.33.0"},
        "aldebaran",
        "gfx90a",
        ["Device 0050", "Device 0051", "Device 0052", "Device 0054", "Device 0062", "Device 7400", "Device 740c"],
        pt,
        kernels,
        [2, 3, 0, 1],
        table,
        None,
        None,
        "DeviceEfficiency",
    ]


def sgemm() -> list[Any]:
    """The SGEMM NN logic file: five MFMA kernels, twelve tuned sizes."""
    pt = problem_type(0, 0, 0, False, False)
    kernels = [
        kernel(0, pt, 256, 128, 16, [32, 32, 2, 1], [64, 4, 1]),
        kernel(1, pt, 128, 128, 16, [32, 32, 2, 1], [64, 4, 1]),
        kernel(2, pt, 64, 64, 32, [16, 16, 4, 1], [64, 4, 1]),
        kernel(3, pt, 32, 32, 64, [16, 16, 4, 1], [64, 1, 1], gsu=4),
        kernel(4, pt, 128, 64, 16, [32, 32, 2, 1], [64, 2, 1], multiple=4),
    ]
    sizes = [
        ([8192, 8192, 1, 8192], 0, 38150.2),
        ([4096, 4096, 1, 4096], 0, 36210.7),
        ([4096, 1024, 1, 4096], 1, 31032.4),
        ([2048, 2048, 1, 2048], 1, 29877.1),
        ([1024, 1024, 1, 1024], 4, 21450.0),
        ([1024, 4096, 1, 1024], 1, 27001.3),
        ([512, 512, 1, 512], 2, 10233.9),
        ([256, 256, 1, 4096], 3, 6412.5),
        ([128, 128, 1, 8192], 3, 3810.6),
        ([64, 64, 1, 64], 2, 120.4),
        ([3072, 768, 1, 768], 4, 24004.8),
        ([768, 3072, 1, 768], 1, 23870.2),
    ]
    return logic("sgemm", pt, kernels, [[size, [sol, speed]] for size, sol, speed in sizes])


def hgemm_hpa() -> list[Any]:
    """The HGEMM TN logic file (high-precision accumulation): three kernels, six tuned sizes."""
    pt = problem_type(4, 4, 0, True, True)
    kernels = [
        kernel(0, pt, 256, 256, 32, [32, 32, 8, 1], [64, 4, 1], vector=8),
        kernel(1, pt, 128, 128, 32, [32, 32, 8, 1], [64, 4, 1], vector=8),
        kernel(2, pt, 64, 32, 64, [16, 16, 16, 1], [64, 2, 1], gsu=2),
    ]
    sizes = [
        ([8192, 8192, 1, 8192], 0, 151210.5),
        ([4096, 4096, 1, 4096], 0, 139880.0),
        ([2048, 2048, 1, 2048], 1, 101224.3),
        ([1024, 1024, 1, 1024], 1, 61230.2),
        ([512, 512, 1, 4096], 2, 30110.9),
        ([128, 4096, 1, 4096], 2, 40012.7),
    ]
    return logic("hgemm", pt, kernels, [[size, [sol, speed]] for size, sol, speed in sizes])


def tuned_sgemm() -> list[Any]:
    """A tuning run's logic file for the SGEMM problem type: a new kernel (128x128x32) that wins
    4096³ (retuned, faster) and 6144³ (new), and 512³ (retuned, measured slower: the Forced merge
    policy takes it, Winner keeps the original), 96³ (new) on an existing kernel, and one
    candidate kernel no size uses (``prune`` drops it). Merged into ``logic/`` it replaces and
    adds rows."""
    data = sgemm()
    pt = data[4]
    data[5] = [
        dict(copy.deepcopy(data[5][2]), SolutionIndex=0),
        kernel(1, pt, 128, 128, 32, [32, 32, 2, 1], [64, 4, 1]),
        kernel(2, pt, 256, 64, 16, [32, 32, 2, 1], [64, 4, 1]),
    ]
    data[7] = [
        [[4096, 4096, 1, 4096], [1, 37911.4]],
        [[6144, 6144, 1, 6144], [1, 37420.8]],
        [[512, 512, 1, 512], [1, 9876.5]],  # measured slower than the original's 10233.9
        [[96, 96, 1, 96], [0, 310.2]],
    ]
    return data


GFX90A_LOGIC = {
    "aldebaran_Cijk_Ailk_Bljk_SB.yaml": sgemm,
    "aldebaran_Cijk_Alik_Bljk_HHS_BH.yaml": hgemm_hpa,
}
"""The gfx90a logic files (file name -> data builder)."""


GFX942_SIZES = {
    "bf16_r": ((1024, 1024, 1, 1024), (4096, 4096, 1, 4096), (6144, 8, 1, 4096), (4096, 2048, 1, 4096),
               (28672, 2048, 1, 4096), (4096, 8, 1, 14336)),
    "f16_r": ((1024, 1024, 1, 1024), (2048, 2048, 1, 2048), (4096, 4096, 1, 4096), (8192, 8192, 1, 8192),
              (128, 128, 1, 16384)),
}  # fmt: skip
"""The tuned sizes (M, N, batch, K) of the gfx942 files: bf16 has a few of the Llama-3-8B decode
and prefill GEMMs of ``fixtures/logs/llama3_8b_bf16_mask64.log``, so coverage finds some tuned;
fp16's 128x128x16384 is won by a split-K kernel (GSU 4), which needs workspace."""

GFX942_TUNED_SIZES = ((4096, 2048, 1, 4096), (28672, 8, 1, 4096))
"""The bf16 sizes of the gfx942 tuning result: one retuned, one new."""


def _gfx942_file(dtype: str, sizes: Sequence[tuple[int, int, int, int]], tuned: bool) -> tuple[str, Any]:
    """One gfx942 tensilelite logic file of TN GEMMs of ``dtype`` (library_logic of the simulated
    GPU): six kernels spread over the model's catalogue (``tuned``: two others), each size's winner
    the fastest of them by the model, as a tuning run records it."""
    from tensilekit.tools.costs import arch_spec
    from tensilekit.tools.simulated.gpu import kernel_catalog, kernel_time_us, supports
    from tensilekit.tools.simulated.library import library_logic
    from tensilekit.workload.problem import GemmProblem

    spec = arch_spec("gfx942")
    problem = GemmProblem(
        m=1, n=1, k=1, trans_a="T", a_type=dtype, b_type=dtype, c_type=dtype, d_type=dtype, compute_type="c_f32_r"
    )
    catalog = kernel_catalog("gfx942", problem)
    kernels = list(catalog[3::7][:2] if tuned else catalog[::7][:6])  # a spread of tiles, kept small
    table = []
    for m, n, batch, k in sizes:
        sized = problem.model_copy(update={"m": m, "n": n, "k": k, "batch": batch})
        usable = [kernel for kernel in kernels if supports(kernel, sized)] or kernels
        choice = min(usable, key=lambda kernel: kernel_time_us(sized, kernel, spec))
        speed = round(sized.flops / (kernel_time_us(sized, choice, spec) * 1e3), 1)
        table.append(((m, n, batch, k), kernels.index(choice), speed))
    return library_logic("gfx942", problem, kernels, table, label="tensilekit example")


def gfx942_logic() -> dict[str, Any]:
    """The gfx942 tensilelite logic files (file name -> LogicFile): bf16 and fp16 TN GEMMs."""
    return dict(_gfx942_file(dtype, sizes, tuned=False) for dtype, sizes in GFX942_SIZES.items())


def gfx942_tuned_logic() -> dict[str, Any]:
    """A tuning run's gfx942 bf16 logic file (file name -> LogicFile), to merge into ``logic-gfx942/``."""
    return dict([_gfx942_file("bf16_r", GFX942_TUNED_SIZES, tuned=True)])


def _logic_text(data: list[Any]) -> str:
    from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE, dump_yaml

    return dump_yaml(data, AMD_LOGIC_STYLE)


def _master(logic: dict[str, str], dialect: str) -> Any:
    """The master library TensileCreateLibrary builds from ``logic`` (file name -> YAML text)."""
    from tensilekit.io.master_io import master_from_data
    from tensilekit.io.yaml_codec import parse_yaml
    from tensilekit.libbuild import build_master_tree

    items = [(name, parse_yaml(text, name)) for name, text in sorted(logic.items())]
    return master_from_data(build_master_tree(items, dialect=dialect), source="TensileLibrary")


SHIPPED = "example_files"
"""The package folder holding the generated files (``fixtures/logic/make_sample.py`` writes it):
``tensilekit examples`` copies them, instead of deriving six tensilelite kernels per run."""


def generate_example_files() -> dict[str, bytes]:
    """Every example file, made by this module's code, by its path relative to the folder they
    are written to (what :func:`example_files` ships; a test keeps the two equal)."""
    from tensilekit.io.logic_io import dumps_logic
    from tensilekit.io.master_io import dumps_master
    from tensilekit.io.yaml_codec import AMD_LOGIC_STYLE

    gfx90a = {name: _logic_text(build()) for name, build in GFX90A_LOGIC.items()}
    gfx942 = {name: dumps_logic(logic, AMD_LOGIC_STYLE) for name, logic in gfx942_logic().items()}
    files = {f"logic/{name}": text.encode() for name, text in gfx90a.items()}
    master = _master(gfx90a, "tensile")
    files["TensileLibrary_gfx90a.yaml"] = dumps_master(master)
    files["TensileLibrary_gfx90a.dat"] = dumps_master(master, "msgpack")
    files["tuned/aldebaran_Cijk_Ailk_Bljk_SB.yaml"] = _logic_text(tuned_sgemm()).encode()
    files.update({f"logic-gfx942/{name}": text.encode() for name, text in gfx942.items()})
    for name, logic in gfx942_tuned_logic().items():
        files[f"tuned-gfx942/{name}"] = dumps_logic(logic, AMD_LOGIC_STYLE).encode()
    files["TensileLibrary_gfx942.dat"] = dumps_master(_master(gfx942, "tensilelite"), "msgpack")
    return files


def example_files() -> dict[str, bytes]:
    """Every example file as shipped with tensilekit, by its path relative to the folder they are
    written to (``TensileLibrary_gfx90a.yaml`` is the embedded sample library)."""
    from importlib import resources

    from tensilekit.data import SAMPLE_LIBRARY

    package = resources.files(__package__)
    files: dict[str, bytes] = {}
    pending = [(package.joinpath(SHIPPED), "")]
    while pending:
        folder, prefix = pending.pop()
        for entry in sorted(folder.iterdir(), key=lambda item: item.name):
            if entry.is_dir():
                pending.append((entry, f"{prefix}{entry.name}/"))
            else:
                files[prefix + entry.name] = entry.read_bytes()
    files["TensileLibrary_gfx90a.yaml"] = package.joinpath(SAMPLE_LIBRARY).read_bytes()
    return dict(sorted(files.items()))


def write_examples(folder: str | Path, *, force: bool = False) -> list[Path]:
    """Write the example files into ``folder`` (made if missing); returns the paths written.

    A file that exists with other content is not overwritten unless ``force`` (as ``git
    checkout`` keeps local changes): nothing is written then, and OutputNotWritable names it.
    """
    from tensilekit.io.atomic import write_bytes_atomic

    root = Path(folder)
    files = example_files()
    if not force:
        changed = [
            name for name, data in files.items() if (root / name).exists() and (root / name).read_bytes() != data
        ]
        if changed:
            raise OutputNotWritable(
                f"{root / changed[0]}: exists with other content ({len(changed)} file(s) would be overwritten); "
                "pass --force to overwrite"
            )
    written = []
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)
        written.append(path)
    return written


__all__ = [
    "GFX90A_LOGIC",
    "SHIPPED",
    "example_files",
    "generate_example_files",
    "gfx942_logic",
    "gfx942_tuned_logic",
    "tuned_sgemm",
    "write_examples",
]

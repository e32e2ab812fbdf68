"""Tensile / tensilelite benchmark configs: build them, write them (YAML + a runnable ``.sh``), read them back.

One config per search group, named as GEKO names them (``BBS_TN_0.yaml``: GEMM type, then the
group's number within the type). A config has the sections the benchmark driver reads
(``Tensile/Tensile.py``): ``GlobalParameters``, ``BenchmarkProblems`` (the ``ProblemType``
and one problem-size group with ``BenchmarkCommonParameters``, ``ForkParameters`` and
``BenchmarkFinalParameters``/``ProblemSizes``) and optionally ``LibraryLogic``. The kernels go
into one ``ForkParameters`` ``Groups`` list, each entry a fully specified kernel
(:meth:`~tensilekit.search.params.KernelParams.fork_values`), so the driver benchmarks exactly
the kernels the search chose and pruned -- never a Cartesian product of lists.

Every key and value written here is listed, with the AMD source it comes from, in
``docs/search.md``. :func:`expand_forks` is the reverse: the solutions a config describes, in
the driver's order (``BenchmarkStructs.constructForkPermutations``).

Building and emitting are pure; :func:`write_config` is the only function that writes files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tensilekit._arguments import require, require_items, require_output_path, require_path
from tensilekit.errors import TensilekitError
from tensilekit.io.atomic import write_text_atomic
from tensilekit.search.params import Dialect, KernelParams, ProblemShape
from tensilekit.search.profiles import ArchProfile

MINIMUM_REQUIRED_VERSION = "4.33.0"
MAX_WORKSPACE_BYTES = 128 * 1024 * 1024
"""``MaxWorkspaceSize`` written to configs; tensilelite's default, GEKO's ``MAX_GSU_WORKSPACE_SIZE``."""

ENQUEUE_STEPS: tuple[tuple[int, int], ...] = (
    (64 * 64 * 8192, 200), (256 * 256 * 8192, 30), (1024 * 1024 * 8192, 20), (2**62, 10),
)  # fmt: skip
"""GEKO's ``stepValue_EnqueuesPerSync``: ``M*N*K*batch`` below the step -> enqueues per sync."""


class Flow(dict[str, Any]):
    """A mapping the emitter writes on one line (``{a: 1, b: 2}``); one kernel per line reads well."""


def enqueues_per_sync(sizes: Sequence[ProblemShape]) -> int:
    """``EnqueuesPerSync`` (and ``NumWarmups``) for a group: GEKO's step table, largest over sizes."""
    values = []
    for shape in sizes:
        volume = shape.m * shape.n * shape.k * shape.batch
        values.append(next(value for step, value in ENQUEUE_STEPS if volume < step))
    return max(values, default=ENQUEUE_STEPS[-1][1])


def global_parameters(
    sizes: Sequence[ProblemShape],
    *,
    beta: bool = False,
    validate: int = 128,
    minimum_required_version: str = MINIMUM_REQUIRED_VERSION,
) -> dict[str, Any]:
    """``GlobalParameters``: keys both dialects define (``Common.py``/``GlobalParameters.py``).

    ``minimum_required_version`` comes from the tool profile: tensilelite refuses a config whose
    major version differs from its own (``versionIsCompatible``, Common.py:1821-1835 @7d9fb68).
    """
    enqueues = enqueues_per_sync(sizes)
    return {
        "MinimumRequiredVersion": minimum_required_version,
        "ForceRedoBenchmarkProblems": True,
        "ForceRedoLibraryLogic": True,
        # The client is built once per node and shared (--prebuilt-client, see
        # tensilekit.search.driver.SharedClient); tensilelite's default True wipes the build dir
        # (ClientWriter.py:172-174 @7d9fb68).
        "ForceRedoLibraryClient": False,
        "CMakeBuildType": "Release",
        "NumBenchmarks": 1,
        "SyncsPerBenchmark": 1,
        "EnqueuesPerSync": enqueues,
        "NumWarmups": enqueues,
        "SleepPercent": 50,
        "KernelTime": True,
        "NumElementsToValidate": validate,
        "DataInitTypeAlpha": 1,
        "DataInitTypeBeta": 1 if beta else 0,
        "CSVExportWinner": True,
        "CSVMergeSameProblemID": True,
        "MaxWorkspaceSize": MAX_WORKSPACE_BYTES,
    }


def problem_type_config(
    letters: str, dest_letters: str, compute_letters: str, trans_a: str, trans_b: str
) -> dict[str, Any]:
    """The ``ProblemType`` of a batched GEMM (GEKO's ``_build_problem_type`` keys)."""
    return {
        "OperationType": "GEMM",
        "DataType": letters,
        "DestDataType": dest_letters,
        "ComputeDataType": compute_letters,
        "HighPrecisionAccumulate": letters != compute_letters,
        "TransposeA": trans_a == "T",
        "TransposeB": trans_b == "T",
        "UseBeta": True,
        "Batched": True,
    }


# ProblemType keys a tensilelite library row carries beyond the plain GEMM (its "epilogue"): a
# tuned kernel must have the same ones, or it lands in another ProblemType than the rows it
# should serve (``..._BH_UserArgs`` instead of ``..._BH_Bias_..._SAV_UserArgs``). All are
# ProblemType config keys of tensilelite (defaultProblemType, Common.py:1290-1364 @7d9fb68, and
# ProblemType.__init__'s BiasDataTypeList / ActivationType / ActivationComputeDataType,
# SolutionStructs.py:190-220 @7d9fb68); ROCm/Tensile has none of them but F32XdlMathOp.
EPILOGUE_KEYS: tuple[str, ...] = (
    "UseBias", "BiasDataTypeList", "BiasSrc", "Activation", "ActivationType", "ActivationComputeDataType",
    "ActivationNoGuard", "UseE", "DataTypeE", "Gradient", "UseScaleAB", "UseScaleCD", "UseScaleAlphaVec",
    "OutputAmaxD", "DataTypeAmaxD", "StochasticRounding", "SupportUserArgs", "F32XdlMathOp",
)  # fmt: skip
_TYPE_KEYS = frozenset({"BiasDataTypeList", "ActivationComputeDataType", "DataTypeE", "DataTypeAmaxD", "F32XdlMathOp"})


def _type_letter(value: Any, dialect: Dialect) -> Any:
    """A library row's type code as a config letter, read with the row's own enum: from code 9 on
    tensilelite and ROCm/Tensile number types differently (tensilelite 11 is ``F8``, ROCm/Tensile 11
    ``B8``: TensileInstructions/DataType.py @7d9fb68 has ``I64`` at 9; Tensile/DataType.py @09ec347
    has not), and hipBLASLt's rows are tensilelite's, rocBLAS's ROCm/Tensile's."""
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    from tensilekit.model.naming import data_type

    try:
        return data_type(value, dialect=dialect).char
    except TensilekitError:
        return value


def library_epilogue(problem_type: Mapping[str, Any], dialect: Dialect = "tensilelite") -> dict[str, Any]:
    """The epilogue keys of a library row's ``ProblemType``, as a config writes them.

    Type codes become letters (``BiasDataTypeList: [0, 4, 7]`` -> ``[S, H, B]``); keys that only
    restate a default a config gets anyway are kept, so the kernel's ProblemType name is the
    row's. ROCm/Tensile (``tensile``) reads only ``F32XdlMathOp`` of these.
    """
    keys = EPILOGUE_KEYS if dialect == "tensilelite" else ("F32XdlMathOp",)
    found: dict[str, Any] = {}
    for key in keys:
        if key not in problem_type:
            continue
        value = problem_type[key]
        if key in _TYPE_KEYS:
            value = (
                [_type_letter(item, dialect) for item in value]
                if isinstance(value, list)
                else _type_letter(value, dialect)
            )
        if key == "F32XdlMathOp" and value in ("S", 0):
            continue  # plain fp32 math: the default, and not a letter ROCm/Tensile's configs need
        found[key] = value
    return found


def exact_size(shape: ProblemShape) -> list[int]:
    """An ``Exact`` entry: ``[M, N, batch, K]``, or with ``[LDD, LDC, LDA, LDB]`` appended when
    A's or B's leading dimension is not the packed one (``ExactList``: 4 or 4 + 4 numbers)."""
    packed_a = shape.k if shape.trans_a == "T" else shape.m
    packed_b = shape.n if shape.trans_b == "T" else shape.k
    if (shape.lda in (0, packed_a)) and (shape.ldb in (0, packed_b)):
        return list(shape.size)
    return [*shape.size, shape.m, shape.m, shape.lda or packed_a, shape.ldb or packed_b]


def range_size(m: Sequence[int], n: Sequence[int], batch: Sequence[int], k: Sequence[int]) -> list[list[int]]:
    """A ``Range`` entry: one ``[start, step, end]`` (or ``[value]``) list per index, in
    ``M, N, batch, K`` order (``ProblemSizeRange``)."""
    return [list(m), list(n), list(batch), list(k)]


def library_logic_section(profile: ArchProfile) -> dict[str, Any]:
    """``LibraryLogic``: where the driver's logic analysis writes (GEKO ``HARDWARE_MAP`` fields)."""
    return {
        "ScheduleName": profile.schedule,
        "DeviceNames": list(profile.device_names),
        "ArchitectureName": profile.arch,
    }


def common_parameters(problem_type: Mapping[str, Any], dialect: Dialect) -> list[dict[str, Any]]:
    """``BenchmarkCommonParameters``: assembly kernels, plus what AMD's ``Solution`` needs to accept them.

    * ROCm/Tensile defaults to ``ScheduleIterAlg: 1`` (Common.py:1572 @09ec347), with which every
      ``1LDSBuffer: 1`` kernel is rejected ("1LDSBuffer only support SIA2 or SIA3",
      SolutionStructs.py:4139-4143 @09ec347); AMD's own tuning template writes
      ``ScheduleIterAlg: [3]`` (rocm-libraries tensilelite/Tensile/Utilities/tensile_generator/
      tuning_template.yaml), tensilelite's default (Common.py:1179 @7d9fb68).
    * DGEMM MFMA kernels need ``SourceSwap`` ("MFMA non-SourceSwap mode doesn't support miovw(1)
      with svw(2)", both dialects); GEKO forks ``SourceSwap: True`` for every type.
    """
    common: list[dict[str, Any]] = [{"KernelLanguage": ["Assembly"]}]
    if dialect == "tensile":
        common.append({"ScheduleIterAlg": [3]})
    if problem_type.get("DataType") == "D":
        common.append({"SourceSwap": [True]})
    return common


def epilogue_arguments(
    problem_type: Mapping[str, Any], bias_type: str | None = None, activation: str | None = None
) -> list[dict[str, Any]]:
    """``BenchmarkFinalParameters`` entries an epilogue ProblemType needs besides ``ProblemSizes``.

    tensilelite refuses a ``UseBias`` config without ``BiasTypeArgs`` ("Must provide a bias type in
    benchmark parameters if UseBias is set to True.", SolutionStructs.py:972-988 @7d9fb68) and an
    ``ActivationType: all`` one without ``ActivationArgs`` (:1001-1024); GEKO writes both. The
    GEMM's own bias type and activation are benchmarked (the row's first bias type when the GEMM
    has none; activation ``none``).
    """
    entries: list[dict[str, Any]] = []
    if problem_type.get("UseBias"):
        listed = [str(item) for item in problem_type.get("BiasDataTypeList") or []]
        chosen = bias_type if bias_type is not None and (not listed or bias_type in listed) else None
        entries.append({"BiasTypeArgs": [chosen or (listed[0] if listed else "S")]})
    if problem_type.get("Activation") and problem_type.get("ActivationType") in ("all", "hipblaslt_all"):
        entries.append({"ActivationArgs": [[{"Enum": activation or "none"}]]})
    return entries


INTEGER_KEYS: tuple[str, ...] = ("UseBias", "UseScaleAlphaVec")
"""ProblemType keys AMD's C++ reads as integers (0 none, 1 M, 2 N, 3 both). tensilelite copies the
config's value unchanged (Contractions.py:199-238 @7d9fb68) into ``ClientParameters.ini``
(``use-bias``, ``use-scaleAlphaVec``: ClientWriter.py:557,563) and into the benchmark library's
``UseBias``/``UseScaleAlphaVec`` predicates (Contractions.py:367,373). The 7d9fb68 client declares
both options ``int`` and the predicates hold an ``int``: ``use-bias=False`` aborts the client
(boost ``invalid_option_value``) and ``value: false`` does not load. AMD's configs write 0/1/3
(the 2026 ones too: ``UseBias: 1`` -> ``use-bias=1``, hipblaslt-2026-interfaces.md §3 "UseBias").
Every other ProblemType flag is a C++ ``bool`` (boost reads ``True``/``False``) or, as ``Sparse``,
converted by AMD itself (``int(d['Sparse'])``, Contractions.py:253)."""


def client_problem_type(problem_type: Mapping[str, Any]) -> dict[str, Any]:
    """``problem_type`` with every value written as AMD's C++ reads it (:data:`INTEGER_KEYS`:
    ``True``/``False`` -> ``1``/``0``; a logic file or an older tool may hold booleans)."""
    written = dict(problem_type)
    for key in INTEGER_KEYS:
        if isinstance(written.get(key), bool):
            written[key] = int(written[key])
    return written


def check_tuning_arguments(
    function: str, problem_type: object, sizes: object, kernels: object, profile: object, dialect: object
) -> None:
    """TypeError for arguments of :func:`tuning_config` (and the driver, which passes them on)
    of the wrong type."""
    require(problem_type, Mapping, "problem_type", function)
    require_items(sizes, ProblemShape, "sizes", function)
    require_items(kernels, KernelParams, "kernels", function)
    require(profile, ArchProfile, "profile", function)
    require(dialect, str, "dialect", function)


def tuning_config(
    problem_type: Mapping[str, Any],
    sizes: Sequence[ProblemShape],
    kernels: Sequence[KernelParams],
    profile: ArchProfile,
    dialect: Dialect = "tensilelite",
    *,
    ranges: Sequence[list[list[int]]] = (),
    library_logic: bool = True,
    beta: bool = False,
    minimum_required_version: str = MINIMUM_REQUIRED_VERSION,
    bias_type: str | None = None,
    activation: str | None = None,
) -> dict[str, Any]:
    """A complete config benchmarking ``kernels`` on ``sizes`` (and ``ranges``).

    Args:
        problem_type: from :func:`problem_type_config`.
        sizes: ``Exact`` problem sizes, in order.
        kernels: the kernels, one ``Groups`` entry each, in order.
        profile: the target (``LibraryLogic``).
        dialect: ``tensilelite`` (hipBLASLt) or ``tensile`` (ROCm/Tensile) parameter names.
        ranges: extra ``Range`` entries (:func:`range_size`).
        library_logic: include the ``LibraryLogic`` section (the driver then also writes
            ``3_LibraryLogic``; the search itself only needs ``2_BenchmarkData``).
        beta: initialise beta to 1 (C is read) instead of 0.
        minimum_required_version: the tool profile's (:mod:`tensilekit.tools.profiles`).
        bias_type, activation: the GEMMs' bias type letter and activation, benchmarked when the
            ProblemType has a bias / activation epilogue (:func:`epilogue_arguments`).

    Raises:
        TypeError: an argument of the wrong type.
    """
    check_tuning_arguments("tuning_config", problem_type, sizes, kernels, profile, dialect)
    ranges = require_items(ranges, (list, tuple), "ranges", "tuning_config")
    problem_sizes: list[dict[str, Any]] = [{"Exact": exact_size(shape)} for shape in sizes]
    problem_sizes += [{"Range": entry} for entry in ranges]
    group = [Flow(kernel.fork_values(dialect)) for kernel in kernels]
    benchmark = {
        "BenchmarkCommonParameters": common_parameters(problem_type, dialect),
        "ForkParameters": [{"Groups": [group]}],
        "BenchmarkFinalParameters": [
            {"ProblemSizes": problem_sizes},
            *epilogue_arguments(problem_type, bias_type, activation),
        ],
    }
    config: dict[str, Any] = {
        "GlobalParameters": global_parameters(sizes, beta=beta, minimum_required_version=minimum_required_version),
        "BenchmarkProblems": [[client_problem_type(problem_type), benchmark]],
    }
    if library_logic:
        config["LibraryLogic"] = library_logic_section(profile)
    return config


# --------------------------------------------------------------------------------------------
# YAML emitter: one fixed layout (block mappings, flow leaves), so output is stable and diffable.

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_RESERVED = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text)


def _inline(value: Any) -> bool:
    if isinstance(value, Flow):
        return all(_inline(item) for item in value.values())
    if isinstance(value, dict):
        return False
    if isinstance(value, (list, tuple)):
        return all(_inline(item) and not isinstance(item, Flow) for item in value)
    return True


def _flow(value: Any) -> str:
    if isinstance(value, Flow):
        return "{" + ", ".join(f"{_scalar(key)}: {_flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    return _scalar(value)


def _block(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict) and not isinstance(value, Flow):
        for key, item in value.items():
            if _inline(item):
                lines.append(f"{pad}{_scalar(key)}: {_flow(item)}")
            else:
                lines.append(f"{pad}{_scalar(key)}:")
                lines += _block(item, indent + 2)
        return lines
    for item in value:
        if _inline(item) or isinstance(item, Flow):
            lines.append(f"{pad}- {_flow(item)}")
            continue
        inner = _block(item, indent + 2)
        lines.append(f"{pad}- {inner[0][indent + 2 :]}")
        lines += inner[1:]
    return lines


def dumps_config(config: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """The config as YAML text: ``# header`` lines, then block mappings with flow leaves."""
    lines = [f"# {line}" if line else "#" for line in header]
    lines += _block(dict(config), 0)
    return "\n".join(lines) + "\n"


def run_script(name: str) -> str:
    """A bash script that benchmarks ``<name>.yaml`` with the driver into ``build_<name>/``.

    ``$TENSILE`` names the driver (hipBLASLt: ``tensilelite/Tensile/bin/Tensile``; ROCm/Tensile:
    ``Tensile/bin/Tensile``), default ``Tensile`` on ``PATH``.
    """
    return (
        "#!/bin/bash\n"
        f"# Benchmark {name}.yaml with the Tensile benchmark driver (written by tensilekit).\n"
        "# TENSILE: the driver; hipBLASLt: tensilelite/Tensile/bin/Tensile, ROCm/Tensile: Tensile/bin/Tensile.\n"
        "set -euo pipefail\n"
        'cd "$(dirname "$0")"\n'
        f'NAME="{name}"\n'
        '"${TENSILE:-Tensile}" "$NAME.yaml" "build_$NAME" 2>&1 | tee "$NAME.log"\n'
    )


def write_config(directory: str | Path, name: str, config: Mapping[str, Any], header: Sequence[str] = ()) -> Path:
    """Write ``<name>.yaml`` and an executable ``<name>.sh`` (atomically) into ``directory``, which
    must exist (as every writer of the API and the CLI, it is not created); returns the YAML path.

    Raises:
        InputNotFound: ``directory`` does not exist (or its name is too long).
        TypeError, ValueError: an argument of the wrong type, or a ``name`` that is no file name.
    """
    from tensilekit.errors import InputNotFound, Location

    folder = require_path(directory, "directory", "write_config")
    require(name, str, "name", "write_config")
    require(config, Mapping, "config", "write_config")
    if not name or "/" in name or "\0" in name or name in (".", ".."):
        raise ValueError(f"write_config(): name must be a file name, not {name!r:.80}")
    if not folder.is_dir():
        raise InputNotFound(f"folder {folder} does not exist", Location(file=str(folder)))
    path = require_output_path(folder / f"{name}.yaml", "name", "write_config")
    write_text_atomic(path, dumps_config(config, header))
    script = folder / f"{name}.sh"
    write_text_atomic(script, run_script(name))
    os.chmod(script, 0o755)
    return path


# --------------------------------------------------------------------------------------------
# Reading configs back


def _flatten(items: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for item in items or []:
        merged.update(item)
    return merged


def expand_forks(benchmark: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The solutions a problem-size group describes, as parameter dicts, in the driver's order.

    Single-valued parameters (``BenchmarkCommonParameters`` and one-value forks) are in every
    solution; multi-valued ``ForkParameters`` and each ``Groups`` list are permuted as
    ``constructForkPermutations`` does: the first fork varies fastest, then each group. (The
    driver orders multi-valued forks by its own default-parameter list; tensilekit's configs
    have none, only one group.)
    """
    require(benchmark, Mapping, "benchmark", "expand_forks")
    common = _flatten(benchmark.get("BenchmarkCommonParameters"))
    forks = _flatten(benchmark.get("ForkParameters"))
    groups = forks.pop("Groups", []) or []
    constants: dict[str, Any] = {}
    varying: dict[str, list[Any]] = {}
    for name, values in {**common, **forks}.items():
        listed = list(values) if isinstance(values, list) else [values]
        if len(listed) == 1:
            constants[name] = listed[0]
        elif listed:
            varying[name] = listed
    dimensions: list[tuple[str, list[Any]]] = list(varying.items())
    dimensions += [(f"_group{number}", list(group)) for number, group in enumerate(groups)]
    total = 1
    for _, values in dimensions:
        total *= len(values)
    solutions: list[dict[str, Any]] = []
    for index in range(total):
        solution = dict(constants)
        remainder = index
        for name, values in dimensions:
            value = values[remainder % len(values)]
            remainder //= len(values)
            if name.startswith("_group"):
                solution.update(value)
            else:
                solution[name] = value
        solutions.append(solution)
    return solutions


def config_sizes(benchmark: Mapping[str, Any]) -> list[tuple[int, ...]]:
    """The ``Exact`` sizes of a problem-size group (``Range`` entries expanded, start/step/end)."""
    require(benchmark, Mapping, "benchmark", "config_sizes")
    final = benchmark.get("BenchmarkFinalParameters") or []
    sizes: list[tuple[int, ...]] = []
    for item in final:
        for entry in item.get("ProblemSizes", []) or []:
            if "Exact" in entry:
                sizes.append(tuple(int(value) for value in entry["Exact"]))
            elif "Range" in entry:
                sizes += _expand_range(entry["Range"])
    return sizes


def _expand_range(spec: Sequence[Any]) -> list[tuple[int, ...]]:
    axes: list[list[int]] = []
    for dim in spec:
        values = list(dim) if isinstance(dim, list) else [dim]
        if len(values) == 1:
            axes.append([int(values[0])])
        else:
            start, step, end = int(values[0]), int(values[1]), int(values[-1])
            axes.append(list(range(start, end + 1, max(1, step))))
    sizes: list[tuple[int, ...]] = [()]
    for axis in axes:
        sizes = [size + (value,) for size in sizes for value in axis]
    # the driver iterates the first index fastest
    return sorted(sizes, key=lambda size: tuple(reversed(size)))


__all__ = [
    "ENQUEUE_STEPS",
    "MAX_WORKSPACE_BYTES",
    "INTEGER_KEYS",
    "MINIMUM_REQUIRED_VERSION",
    "Flow",
    "client_problem_type",
    "common_parameters",
    "config_sizes",
    "dumps_config",
    "EPILOGUE_KEYS",
    "enqueues_per_sync",
    "epilogue_arguments",
    "exact_size",
    "expand_forks",
    "global_parameters",
    "library_epilogue",
    "library_logic_section",
    "problem_type_config",
    "range_size",
    "run_script",
    "tuning_config",
    "write_config",
]

"""The public Python API refuses misuse with documented exceptions only (issue 23 item 15).

Every function of ``tensilekit.__all__`` and of the documented submodules' ``__all__`` is called
with one argument replaced by a wrong type or an extreme value (None, ints for paths, huge and
negative ints, empty strings, missing paths, folders, NaN, other tensilekit objects …) while the
others stay valid. Allowed: a :class:`TensilekitError` subclass, or ``TypeError``/``ValueError``
(a wrong argument type, documented in the docstrings); an ``AttributeError``, ``KeyError`` or bare
``AssertionError`` from deep inside is a bug. Writers must refuse a missing output folder
(``InputNotFound``) instead of creating it, as the CLI does.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tensilekit  # noqa: E402
from tensilekit.errors import InputNotFound, TensilekitError  # noqa: E402

PROJECT = Path(__file__).resolve().parents[2]
LOGIC_PATH = PROJECT / "fixtures" / "logic" / "sample_aldebaran_Cijk_Ailk_Bljk_SB.yaml"
MASTER_PATH = PROJECT / "tensilekit" / "data" / "sample_library.yaml"

# The modules whose __all__ the docs (README, docs/*.md) import from.
DOCUMENTED_MODULES = (
    "tensilekit",
    "tensilekit.merge",
    "tensilekit.lint",
    "tensilekit.selection",
    "tensilekit.coverage",
    "tensilekit.search",
    "tensilekit.pipeline",
    "tensilekit.workload",
)

# Functions of other modules the docs import by name (docs/search.md, docs/build-master.md).
DOCUMENTED_FUNCTIONS = {
    "tensilekit.search": (
        "gene_space", "make_context", "profile_for", "run_ga", "tuning_config", "dumps_config", "evaluate_with_driver",
    ),
    "tensilekit.libbuild": ("build_master_tree", "build_master_libraries", "kernel_states"),
    "tensilekit.model.naming": (
        "infer_min_naming", "kernel_state", "min_naming", "solution_name_min", "solution_name_full",
    ),
}  # fmt: skip

# Functions that would start real work with valid arguments (tuning runs, builds of AMD tools):
# they are only called with every argument wrong.
ALWAYS_BAD = {"run_tuning", "run_pipeline", "run_script", "run_ga"}

ALLOWED = (TensilekitError, TypeError, ValueError)


class _Opaque:
    """An object of no type the API knows."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Valid arguments, and a scratch folder to run in (relative output paths land there)."""
    from tensilekit.selection import compile_library

    scratch = tmp_path_factory.mktemp("api_misuse")
    logic = tensilekit.load_logic(LOGIC_PATH)
    master = tensilekit.load_master(MASTER_PATH)
    problem = tensilekit.GemmProblem(m=128, n=128, k=128)
    hardware = tensilekit.Hardware(arch="gfx90a", cu_count=104)
    folder = scratch / "folder"
    folder.mkdir()
    return {
        "scratch": scratch,
        "folder": folder,
        "logic": logic,
        "master": master,
        "compiled": compile_library(master),
        "problem": problem,
        "hardware": hardware,
    }


def good_arguments(name: str, w: dict[str, Any]) -> dict[str, Any]:
    """Valid arguments for ``name`` (required ones; a wrong value then replaces one at a time)."""
    logic, master, problem, hardware = w["logic"], w["master"], w["problem"], w["hardware"]
    out = w["scratch"] / "out"
    table: dict[str, dict[str, Any]] = {
        "build_master": {"paths": [LOGIC_PATH]},
        "build_master_files": {"paths": [LOGIC_PATH]},
        "coverage_of": {"library": master, "gemms": []},
        "diff_libraries": {"a": master, "b": master},
        "dump_logic": {"logic": logic, "path": out / "logic.yaml"},
        "dump_master": {"master": master, "path": out / "master.yaml"},
        "dumps_logic": {"logic": logic},
        "dumps_master": {"master": master},
        "find_all_solutions": {"library": master, "problem": problem, "hardware": hardware},
        "select_solution": {"library": master, "problem": problem, "hardware": hardware},
        "top_solutions": {"library": master, "problem": problem, "hardware": hardware, "count": 2},
        "select_batch": {"library": w["compiled"], "problems": [problem], "hardware": hardware},
        "lint_library": {"library": master},
        "lint_paths": {"paths": [LOGIC_PATH]},
        "lint_file": {"path": LOGIC_PATH},
        "load": {"path": LOGIC_PATH},
        "load_logic": {"path": LOGIC_PATH},
        "load_master": {"path": MASTER_PATH},
        "open_master": {"path": MASTER_PATH},
        "loads": {"data": LOGIC_PATH.read_text()},
        "loads_logic": {"text": LOGIC_PATH.read_text()},
        "loads_master": {"data": MASTER_PATH.read_bytes()},
        "merge_logic": {"original": logic, "incremental": logic},
        "merge_paths": {"original": LOGIC_PATH, "incremental": LOGIC_PATH, "output": out / "merged.yaml"},
        "merge_files": {"original_path": LOGIC_PATH, "incremental_path": LOGIC_PATH, "output_path": out / "m.yaml"},
        "prune_logic": {"logic": logic},
        "compile_library": {"library": master},
        "contraction_problem": {"problem": problem},
        "detect_runtime": {"library": master},
    }
    return dict(table.get(name, {}))


def public_functions() -> list[tuple[str, str]]:
    """(module, name) of every public function, each once (the first module exporting it)."""
    seen: set[int] = set()
    found = []
    for module_name in DOCUMENTED_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value) and id(value) not in seen:
                seen.add(id(value))
                found.append((module_name, name))
    for module_name, names in DOCUMENTED_FUNCTIONS.items():
        found += [(module_name, name) for name in names]
    return found


FUNCTIONS = public_functions()


def bad_values(w: dict[str, Any]) -> list[Any]:
    """Fixed wrong and extreme values: wrong types, paths that are not files, other objects."""
    return [
        None,
        0,
        -1,
        2**70,
        -(2**70),
        True,
        "",
        "x" * 5000,
        str(w["scratch"] / "nonexistent" / "x.yaml"),  # in the scratch folder, should a writer create it
        "no/such/folder/x.yaml",
        str(w["folder"]),
        w["folder"],
        b"\xff\x00",
        1.5,
        math.nan,
        math.inf,
        [],
        {},
        [None],
        [str(w["scratch"] / "nonexistent")],
        [w["folder"]],
        _Opaque(),
        w["logic"],
        w["master"],
        w["problem"],
        w["hardware"],
    ]


def call_with(function: Callable[..., Any], arguments: dict[str, Any]) -> BaseException | None:
    try:
        function(**arguments)
    except BaseException as error:  # noqa: BLE001 - the type is the test
        return error
    return None


def cases(module_name: str, name: str, w: dict[str, Any], bad: Any) -> Iterator[dict[str, Any]]:
    """The argument sets of one function with ``bad`` in each parameter in turn."""
    function = getattr(importlib.import_module(module_name), name)
    parameters = [
        p for p in inspect.signature(function).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    good = {} if name in ALWAYS_BAD else good_arguments(name, w)
    for parameter in parameters:
        arguments = dict(good)
        arguments[parameter.name] = bad
        for other in parameters:
            if other.default is other.empty and other.name not in arguments:
                arguments[other.name] = bad  # no valid value known: wrong too
        yield arguments


def misuse(module_name: str, name: str, arguments: dict[str, Any]) -> str | None:
    """What went wrong, if the call raised an exception it must not."""
    function = getattr(importlib.import_module(module_name), name)
    error = call_with(function, arguments)
    if error is None or isinstance(error, ALLOWED):
        return None
    shown = {key: (repr(value)[:40]) for key, value in arguments.items()}
    return f"{module_name}.{name}({shown}) raised {type(error).__name__}: {str(error)[:200]}"


def check(module_name: str, name: str, arguments: dict[str, Any]) -> None:
    problem = misuse(module_name, name, arguments)
    assert problem is None, problem


def test_every_public_function_refuses_wrong_values_cleanly(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each parameter of each public function, each fixed wrong value."""
    monkeypatch.chdir(world["scratch"])
    problems = [
        problem
        for module_name, name in FUNCTIONS
        for bad in bad_values(world)
        for arguments in cases(module_name, name, world, bad)
        if (problem := misuse(module_name, name, arguments)) is not None
    ]
    assert not problems, f"{len(problems)} calls raised undocumented exceptions:\n" + "\n".join(problems[:40])


# No "/": a drawn text used as an output path must stay a relative name inside the scratch folder
# (an absolute "/x" would be written at the root of the file system).
NAME_CHARACTERS = st.characters(blacklist_characters="/\\", blacklist_categories=("Cs",))


@settings(max_examples=150, deadline=None)
@given(
    function=st.sampled_from(FUNCTIONS),
    position=st.integers(min_value=0, max_value=12),
    bad=st.one_of(
        st.integers(min_value=-(2**80), max_value=2**80),
        st.text(NAME_CHARACTERS, max_size=30),
        st.binary(max_size=16),
        st.floats(),
        st.lists(st.one_of(st.none(), st.integers(), st.text(NAME_CHARACTERS, max_size=5)), max_size=3),
        st.dictionaries(st.text(NAME_CHARACTERS, max_size=4), st.integers(), max_size=2),
    ),
)
def test_random_wrong_values_raise_only_documented_errors(
    world: dict[str, Any], function: tuple[str, str], position: int, bad: Any
) -> None:
    """Random extremes in one parameter (chosen by ``position``) of a random public function."""
    module_name, name = function
    previous = os.getcwd()
    os.chdir(world["scratch"])  # relative paths the draw names are written here, if anywhere
    try:
        every = list(cases(module_name, name, world, bad))
        if every:
            check(module_name, name, every[position % len(every)])
    finally:
        os.chdir(previous)


@pytest.mark.parametrize("writer", ["dump_logic", "dump_master", "merge_paths", "write_remapped", "write_config"])
def test_api_writers_refuse_a_missing_folder(world: dict[str, Any], writer: str) -> None:
    """As the CLI does: the folder of an output must exist; the API does not create it."""
    missing = world["scratch"] / "missing-folder" / "out.yaml"
    if writer == "write_config":  # tensilekit.search's: <name>.yaml and <name>.sh into a folder
        from tensilekit.search import write_config

        with pytest.raises(InputNotFound) as raised:
            write_config(missing.parent, "out", {"GlobalParameters": {}})
        assert str(missing.parent) in str(raised.value) and not missing.parent.exists()
        return
    if writer == "write_remapped":
        from tensilekit.remapping import RemapReport

        arguments: dict[str, Any] = {"report": RemapReport(()), "out": missing}
    else:
        arguments = good_arguments(writer, world)
        arguments["output" if writer == "merge_paths" else "path"] = missing
    with pytest.raises(InputNotFound) as raised:
        getattr(tensilekit, writer)(**arguments)
    assert str(missing.parent) in str(raised.value)
    assert not missing.parent.exists()


def test_dump_logic_to_a_folder_is_refused(world: dict[str, Any]) -> None:
    with pytest.raises(TensilekitError):
        tensilekit.dump_logic(world["logic"], world["folder"])


def test_wrong_type_names_function_and_argument(world: dict[str, Any]) -> None:
    """The TypeError says which call and which argument (the probe saw `'str' object has no
    attribute 'arch'` from inside predicate evaluation)."""
    with pytest.raises(TypeError, match=r"select_solution\(\): hardware must be Hardware, not str"):
        tensilekit.select_solution(world["master"], world["problem"], "gfx90a")
    with pytest.raises(TypeError, match=r"dumps_logic\(\): logic must be LogicFile, not MasterLibrary"):
        tensilekit.dumps_logic(world["master"])


_IMPORT_EVERYTHING = """
import importlib, inspect, pkgutil, tensilekit
before = {name: getattr(tensilekit, name) for name in tensilekit.__all__}
for info in pkgutil.walk_packages(tensilekit.__path__, "tensilekit."):
    if not info.name.startswith(("tensilekit.cli", "tensilekit.plot", "tensilekit.__main__")):
        importlib.import_module(info.name)
after = {name: getattr(tensilekit, name) for name in tensilekit.__all__}
print(sorted(name for name in before if before[name] is not after[name]), inspect.isfunction(tensilekit.remap))
"""


def test_lazy_exports_resolve_whatever_was_imported_first() -> None:
    """Every exported name resolves, and to the same object after every submodule is imported
    (``import tensilekit.remap`` used to replace the ``remap`` function by the module). A fresh
    interpreter: the import order is the test."""
    import subprocess

    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PROJECT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERYTHING], capture_output=True, text=True, env=environment, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[] True"

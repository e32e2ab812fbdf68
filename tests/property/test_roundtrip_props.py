"""Round-trip properties of logic files, master libraries and the fast YAML emitter (hypothesis).

* ``loads(dumps(m))`` equals ``m`` (compared as plain data, types included) for random logic files
  (both dialects, list and dict layouts, 4- and 8-number table keys, solutions with random extra
  keys) and random master libraries (every node type, predicates of every shape), in YAML and in
  msgpack; writing what was read back gives the same text.
* What tensilekit writes is what PyYAML's ``safe_load`` reads back: the fast emitter agrees with PyYAML.
* ``yaml_emitter.emit`` is byte-identical to ``yaml.dump(..., Dumper=CSafeDumper,
  default_flow_style=None, sort_keys=False)`` for random plain data: unicode, long strings with
  spaces (line wrapping), quotes, empty strings, YAML's special words, leading/trailing blanks.

Example counts come from the profiles in ``conftest.py`` (``ci`` under CI).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

pytest.importorskip("hypothesis")

import msgpack  # noqa: E402
import yaml  # noqa: E402
from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tensilekit  # noqa: E402
from tensilekit.io.logic_io import dumps_logic, loads_logic, logic_from_data, logic_to_data  # noqa: E402
from tensilekit.io.master_io import dumps_master, master_from_data, master_to_data  # noqa: E402
from tensilekit.io.msgpack_codec import dump_msgpack  # noqa: E402
from tensilekit.io.yaml_codec import AMD_MASTER_STYLE, YamlStyle, detect_style, dump_yaml, parse_yaml  # noqa: E402
from tensilekit.io.yaml_emitter import emit  # noqa: E402
from tensilekit.model.library import MasterLibrary  # noqa: E402
from tensilekit.model.logic import DICT_KEYS, LogicFile, LogicSolution, ProblemType  # noqa: E402
from tensilekit.model.predicates import PREDICATE_SHAPES  # noqa: E402

# -- plain values ----------------------------------------------------------------------------------

# fmt: off
SPECIAL_STRINGS = [
    "", " ", "  ", "yes", "no", "Yes", "NO", "on", "off", "y", "n", "null", "Null", "~", "true", "False",
    "1e3", "1.5", "-0", "0x1F", "0o17", "012", "1_000", "+1", ".inf", "-.inf", ".nan", "2001-12-14", "12:30:00",
    ":", "#", "-", "- x", "?", "? x", "a: b", "a:b", "a #b", "a# b", " lead", "trail ", " both ", "it's", "'", '"',
    '"quoted"', "{a}", "[1]", "a,b", "&anchor", "*alias", "!tag", "%directive", "@at", "`tick", "|", ">", "=", "<<",
    "\t", "x\ty", "x\ny", "\x00", "\x85", "\u2028", "\ufeff", "a\u00a0b", "é", "日本語", "Ω≈ç√", "🙂",
]
# fmt: on
WORDS = ["word", "a", "it's", "x" * 30, "yes", "#", ":", "-", "é", "", "1", "longer-word", "'q'"]

# Strings YAML 1.2 (yaml_rs) and PyYAML's YAML 1.1 resolve differently when written plain; the
# reader must side with PyYAML (see the tests at the end). Kept apart so those tests can name them.
READER_DIVERGENCE = re.compile(
    r"""(?x) ^ (?:
        [-+]?_+[0-9][0-9_]*
      | [-+]?[0-9_.]*[eE][-+]?[0-9_]+
      | [-+]?0[0-9_]+ | [-+]?0o[0-7_]+
      | [0-9]{4}-[0-9]{2}-[0-9]{2}.*
      | [0-9]+(?::[0-9]+)+(?:[.][0-9]*)?
    ) $"""
)
divergent = st.from_regex(READER_DIVERGENCE, fullmatch=True)

special = st.sampled_from(SPECIAL_STRINGS)
long_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
text = st.one_of(special, st.text(max_size=16), long_text, divergent)
small_text = st.one_of(special, st.text(max_size=8), divergent)
integers = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can hold
floats = st.floats()  # NaN included: `same` treats two NaNs as equal
scalars = st.one_of(st.none(), st.booleans(), integers, floats, text)
keys = st.one_of(small_text, st.integers(min_value=0, max_value=16))  # logic files have {0: 1} maps


def nested(leaves: st.SearchStrategy[Any], max_leaves: int = 12) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
        max_leaves=max_leaves,
    )


values = nested(scalars)


def same(left: Any, right: Any) -> bool:
    """Equality that also compares types (``True == 1`` and ``1 == 1.0`` must not pass)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        if math.isnan(left) or math.isnan(right):
            return math.isnan(left) and math.isnan(right)
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    return bool(left == right)


def same_unordered(left: Any, right: Any) -> bool:
    """:func:`same`, but mapping key order does not count (master writers sort keys)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_unordered(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(same_unordered(a, b) for a, b in zip(left, right, strict=True))
    return same(left, right)


# -- logic files -----------------------------------------------------------------------------------


def _aliases(model: type[Any]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


def _with_extras(typed: dict[str, Any], reserved: set[str], draw: Any) -> dict[str, Any]:
    """Typed keys plus random extra keys, shuffled: the file's key order is arbitrary."""
    extras = draw(
        st.dictionaries(
            st.one_of(small_text, st.from_regex(r"_?[A-Z][A-Za-z0-9]{0,12}", fullmatch=True)), values, max_size=6
        )
    )
    items = list(typed.items()) + [(key, value) for key, value in extras.items() if key not in reserved]
    return dict(draw(st.permutations(items)))


maybe_int = st.one_of(st.none(), st.integers(min_value=-1, max_value=4096))
int_list = st.lists(st.integers(min_value=0, max_value=512), max_size=4)
# values the model accepts (tensilekit.model.logic bounds): files that pass the boundary checks
dimension = st.integers(min_value=1, max_value=4096)
tile_list = st.lists(st.integers(min_value=1, max_value=512), max_size=4)
index_list = st.lists(st.integers(min_value=0, max_value=17), max_size=4)


@st.composite
def problem_types(draw: Any) -> dict[str, Any]:
    typed = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "OperationType": st.sampled_from(["GEMM", "TensorContraction"]),
                "DataType": st.one_of(st.integers(0, 14), st.sampled_from(["s", "h", "b"])),
                "DestDataType": st.integers(0, 14),
                "ComputeDataType": st.integers(0, 14),
                "TransposeA": st.one_of(st.booleans(), st.integers(0, 1)),
                "TransposeB": st.one_of(st.booleans(), st.integers(0, 1)),
                "HighPrecisionAccumulate": st.booleans(),
                "UseBeta": st.booleans(),
                "Batched": st.booleans(),
                "IndexAssignmentsA": index_list,
                "NumIndicesC": st.integers(2, 4),
            },
        )
    )
    return _with_extras(typed, _aliases(ProblemType), draw)


@st.composite
def logic_solutions(draw: Any, dict_layout: bool) -> dict[str, Any]:
    typed = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "SolutionIndex": maybe_int,
                "SolutionNameMin": text,
                "CustomKernelName": st.one_of(st.just(""), text),
                "MacroTile0": dimension,
                "MacroTile1": dimension,
                "DepthU": dimension,
                "WorkGroup": st.one_of(st.none(), tile_list),
                "MatrixInstruction": tile_list,
                "ISA": st.lists(st.integers(0, 12), min_size=3, max_size=3),
                "KernelLanguage": st.sampled_from(["Assembly", "Source"]),
                "Valid": st.booleans(),
                "ProblemType": st.just("derive") if dict_layout else problem_types(),
            },
        )
    )
    return _with_extras(typed, _aliases(LogicSolution), draw)


@st.composite
def exact_logic(draw: Any, solution_count: int) -> list[Any]:
    width = draw(st.sampled_from([4, 8]))
    size = st.lists(st.integers(min_value=0, max_value=2**31), min_size=width, max_size=width)
    position = st.integers(min_value=0, max_value=max(solution_count - 1, 0))
    efficiency = st.one_of(st.floats(min_value=0, allow_nan=False), st.integers(min_value=0, max_value=10**6))
    return draw(
        st.lists(st.tuples(size, st.tuples(position, efficiency)).map(lambda r: [r[0], list(r[1])]), max_size=6)
    )


architectures = st.one_of(
    st.sampled_from(["gfx90a", "gfx942", "fallback", "gfx000"]),
    st.fixed_dictionaries(
        {"Architecture": st.sampled_from(["gfx90a", "gfx942"])},
        optional={"CUCount": st.integers(1, 304), "IsAPU": st.integers(0, 1)},
    ),
)
versions = st.sampled_from(["4.2.0", "4.26.0", "4.33.0", "4.40.0"]).map(lambda v: {"MinimumRequiredVersion": v})
device_names = st.lists(st.one_of(st.sampled_from(["Device 0049", "Vega 20", "fallback"]), small_text), max_size=3)


@st.composite
def list_logic_data(draw: Any) -> list[Any]:
    solutions = draw(st.lists(logic_solutions(dict_layout=False), max_size=4))
    free_size = draw(st.booleans())
    data: list[Any] = [
        draw(versions),
        draw(st.sampled_from(["aquavanjaram", "aldebaran", "hip", "vega20"])),
        draw(architectures),
        draw(device_names),
        draw(problem_types()),
        solutions,
        None if free_size else draw(st.sampled_from([[2, 3, 0, 1], [2, 0, 1]])),
        None if free_size else draw(exact_logic(len(solutions))),
        draw(st.sampled_from([None, [[-1, [[-1, 0]]]]])),
    ]
    tile_selection = st.one_of(st.none(), st.fixed_dictionaries({"TileSelectionIndices": int_list}))
    metric = st.sampled_from(["DeviceEfficiency", "CUEfficiency"])
    if draw(st.booleans()):  # tensilelite: 12 items, a library type at 11 (newest: DefaultSolution at 12)
        data += [None, draw(metric), draw(st.sampled_from(["Equality", "GridBased", "FreeSize", "Prediction"]))]
        if draw(st.booleans()):
            data.append(draw(st.dictionaries(small_text, values, max_size=3)))
    else:  # Tensile: 9 to 14 items, maybe more from a newer tool
        trailing = [
            draw(tile_selection),
            draw(metric),
            draw(st.sampled_from([None, "Fp16AltImpl"])),
            draw(st.sampled_from([None, "Equality"])),
            draw(st.sampled_from([None, "Fp16AltImplRound"])),
        ] + draw(st.lists(values, max_size=2))
        data += trailing[: draw(st.integers(0, len(trailing)))]
    return data


@st.composite
def dict_logic_data(draw: Any) -> dict[str, Any]:
    decision_tree = draw(st.booleans())
    solutions = draw(st.lists(logic_solutions(dict_layout=decision_tree), max_size=3))
    fields: dict[str, Any] = {
        "MinimumRequiredVersion": draw(st.sampled_from(["4.33.0", "4.40.0"])),
        "ScheduleName": draw(st.sampled_from(["aldebaran", "aquavanjaram"])),
        "ArchitectureName": draw(st.sampled_from(["gfx90a", "gfx942"])),
        "CUCount": draw(st.integers(1, 304)),
        "DeviceNames": draw(device_names),
        "ProblemType": draw(problem_types()),
        "Solutions": solutions,
        "PerfMetric": "ExperimentalDTree" if decision_tree else "DeviceEfficiency",
    }
    if decision_tree:
        fields.update(
            LibraryType="DecisionTree", Fp16AltImpl=draw(st.booleans()), Library=draw(st.lists(values, max_size=2))
        )
    else:
        fields.update(
            LibraryType=draw(st.sampled_from(["Equality", "GridBased"])),
            IndexOrder=[2, 3, 0, 1],
            ExactLogic=draw(exact_logic(len(solutions))),
            RangeLogic=None,
            DefaultSolution=draw(st.dictionaries(small_text, values, max_size=3)),
        )
    extras = draw(st.dictionaries(st.from_regex(r"[A-Z][A-Za-z]{2,10}", fullmatch=True), values, max_size=2))
    items = list(fields.items()) + [(key, value) for key, value in extras.items() if key not in DICT_KEYS]
    return dict(draw(st.permutations(items)))


logic_files = st.one_of(list_logic_data(), dict_logic_data()).map(logic_from_data)


@given(logic_files)
def test_logic_yaml_round_trip(logic: LogicFile) -> None:
    data = logic_to_data(logic)
    text = dumps_logic(logic)  # a model built from data is written in AMD's style: keys sorted
    for reloaded in (loads_logic(text, source="dump.yaml"), tensilekit.loads(text.encode(), source="dump.yaml")):
        assert isinstance(reloaded, LogicFile)
        assert reloaded.dialect is logic.dialect and reloaded.layout is logic.layout
        assert same_unordered(logic_to_data(reloaded), data)
        assert dumps_logic(reloaded) == text  # a loaded file is written in its own style, byte for byte


@given(logic_files)
def test_logic_msgpack_round_trip(logic: LogicFile) -> None:
    data = logic_to_data(logic)
    reloaded = tensilekit.loads(dump_msgpack(data), source="dump.dat")
    assert isinstance(reloaded, LogicFile)
    assert same(logic_to_data(reloaded), data)


@given(logic_files)
def test_logic_yaml_is_what_pyyaml_reads(logic: LogicFile) -> None:
    assert same_unordered(yaml.safe_load(dumps_logic(logic)), logic_to_data(logic))


# -- master libraries ------------------------------------------------------------------------------

small_int = st.integers(min_value=-1, max_value=2**20)
_SHAPE_VALUES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "flag": st.just({}),
    "bool": st.fixed_dictionaries({"value": st.booleans()}),
    "int": st.fixed_dictionaries({"value": small_int}),
    "intbool": st.fixed_dictionaries({"value": st.one_of(st.integers(0, 1), st.booleans())}),
    "number": st.fixed_dictionaries({"value": st.one_of(floats, small_int)}),
    "string": st.fixed_dictionaries({"value": text}),
    "stringlist": st.fixed_dictionaries(
        {"value": st.lists(st.sampled_from(["Float", "Half", "BFloat16", "Int8"]), max_size=4)}
    ),
    "indexed": st.fixed_dictionaries({"index": st.integers(-1, 3), "value": small_int}),
    "range": st.fixed_dictionaries(
        {
            "index": st.integers(0, 3),
            "value": st.fixed_dictionaries({"min": small_int, "max": st.integers(0, 2**63 - 1)}),
        }
    ),
    "workspace": st.one_of(
        st.just({}),
        st.fixed_dictionaries({"index": st.just(0), "value": st.lists(small_int, min_size=3, max_size=3)}),
    ),
    "mink": st.fixed_dictionaries({"value": st.one_of(small_int, st.lists(small_int, min_size=2, max_size=2))}),
    "intlist": st.fixed_dictionaries({"value": st.lists(small_int, max_size=6)}, optional={"index": st.just(0)}),
    "intpair": st.fixed_dictionaries({"value": st.lists(small_int, min_size=2, max_size=2)}),
    "bufferload": st.fixed_dictionaries(
        {
            "value": st.fixed_dictionaries(
                {name: small_int for name in ("DUorMT0", "DUorMT1", "ShiftPtrElemA", "ShiftPtrElemB")}
            )
        }
    ),
}
_LEAF_TYPES = sorted(name for name, shape in PREDICATE_SHAPES.items() if shape in _SHAPE_VALUES)
_LIST_TYPES = sorted(name for name, shape in PREDICATE_SHAPES.items() if shape == "list")
_SINGLE_TYPES = sorted(name for name, shape in PREDICATE_SHAPES.items() if shape == "single")


@st.composite
def _leaf_predicate(draw: Any) -> dict[str, Any]:
    name = draw(st.sampled_from(_LEAF_TYPES))
    if name == "TypesEqual":  # A, B, C, D (tensilelite adds the compute input type): the model needs 4+
        types = st.sampled_from(["Float", "Half", "BFloat16", "Int8"])
        return {"type": name, "value": draw(st.lists(types, min_size=4, max_size=5))}
    return {"type": name, **draw(_SHAPE_VALUES[PREDICATE_SHAPES[name]])}


predicates = st.recursive(
    _leaf_predicate(),
    lambda children: st.one_of(
        st.builds(lambda t, v: {"type": t, "value": v}, st.sampled_from(_LIST_TYPES), st.lists(children, max_size=3)),
        st.builds(lambda t, v: {"type": t, "value": v}, st.sampled_from(_SINGLE_TYPES), children),
    ),
    max_leaves=6,
)

solution_index = st.integers(min_value=0, max_value=2**31 - 1)  # a C++ int (the loader refuses more)
properties = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                ["FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize", "Tile0Granularity", "WavesPerSIMD"]
            )
        },
        optional={
            "index": st.integers(0, 3),
            "value": st.one_of(floats, st.dictionaries(st.sampled_from(["cus", "mt0", "ws"]), floats)),
        },
    ),
    min_size=1,
    max_size=4,
)
single = st.builds(lambda i: {"type": "Single", "index": i}, st.one_of(st.just(-1), solution_index))


@st.composite
def matching(draw: Any) -> dict[str, Any]:
    props = draw(properties)
    key = st.lists(st.integers(0, 2**40), min_size=len(props), max_size=len(props))
    entry = st.one_of(
        st.fixed_dictionaries(
            {"key": key, "index": solution_index},
            optional={"speed": st.one_of(st.floats(min_value=0, allow_nan=False), st.integers(0, 2**20))},
        ),
        st.fixed_dictionaries({"key": key, "value": single}),  # older Tensile masters
    )
    node = {
        "type": "Matching",
        "properties": props,
        "distance": draw(st.sampled_from(["Euclidean", "Equality", "GridBased"])),
        "table": draw(st.lists(entry, max_size=4)),
    }
    return dict(draw(st.permutations(list(node.items()))))


leaf_nodes = st.one_of(
    single,
    matching(),
    st.builds(lambda t: {"type": "FreeSize", "table": [{"index": i} for i in t]}, st.lists(solution_index, max_size=3)),
    st.builds(
        lambda v: {"type": "Placeholder", "value": v},
        st.one_of(
            st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_+\-.]{0,30}", fullmatch=True).filter(lambda v: ".." not in v),
            st.just("TensileLibrary_Type_HH_Contraction"),
        ),
    ),
    st.builds(
        lambda indices, exact: {"type": "GranularitySelection", "indices": indices, "exact": exact},
        st.lists(solution_index, max_size=3),
        st.lists(
            st.fixed_dictionaries({"key": st.lists(small_int, min_size=4, max_size=4), "value": solution_index}),
            max_size=2,
        ),
    ),
)


def _composite_nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    rows = st.lists(st.fixed_dictionaries({"predicate": predicates, "library": children}), max_size=3)
    return st.one_of(
        st.builds(lambda t, r: {"type": t, "rows": r}, st.sampled_from(["Hardware", "Problem"]), rows),
        st.builds(
            lambda m: {"type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": m},
            st.dictionaries(
                st.one_of(st.sampled_from(["Contraction_l_Alik_Bljk_Cijk_Dijk"]), small_text), children, max_size=3
            ),
        ),
        decision_trees(children),
    )


@st.composite
def decision_trees(draw: Any, children: st.SearchStrategy[Any]) -> dict[str, Any]:
    """A DecisionTree node whose nodes point inside their tree and feature list (as the model requires)."""
    features = draw(properties)
    trees = []
    for _ in range(draw(st.integers(0, 2))):
        size = draw(st.integers(0, 3))
        nodes = [
            {
                "featureIdx": draw(st.integers(0, len(features) - 1)),
                "threshold": draw(st.one_of(floats, small_int)),
                "nextIdxLTE": draw(st.integers(-2, size - 1)),
                "nextIdxGT": draw(st.integers(-2, size - 1)),
            }
            for _ in range(size)
        ]
        trees.append({"tree": nodes, "value": draw(children)})
    return {"type": "DecisionTree", "features": features, "trees": trees, "nullValue": draw(children)}


library_nodes = st.recursive(leaf_nodes, _composite_nodes, max_leaves=8)


@st.composite
def master_solutions(draw: Any, index: int) -> dict[str, Any]:
    typed = draw(
        st.fixed_dictionaries(
            {"index": st.just(index)},
            optional={
                "name": text,
                "kernelName": text,
                "libraryLogicIndex": small_int,
                "hardwarePredicate": predicates,
                "problemPredicate": predicates,
                "taskPredicate": predicates,
                "debugKernel": st.booleans(),
                "sizeMapping": st.fixed_dictionaries(
                    {},
                    optional={
                        "workGroup": tile_list,
                        "macroTile": tile_list,
                        "depthU": dimension,
                        "globalSplitU": st.integers(min_value=-1, max_value=4096),
                        "staggerU": st.one_of(small_int, st.booleans()),
                        "customKernelName": text,
                        "waveNum": small_int,
                    },
                ),
                "problemType": st.dictionaries(
                    st.sampled_from(["aType", "bType", "useBeta", "transA", "operationIdentifier"]), values, max_size=4
                ),
                "info": st.dictionaries(small_text, small_text, max_size=2),
                "ideals": st.just({}),
                "linearModel": st.dictionaries(keys, values, max_size=2),
            },
        )
    )
    return dict(draw(st.permutations(list(typed.items()))))


@st.composite
def master_data(draw: Any) -> dict[str, Any]:
    indices = draw(st.lists(solution_index, unique=True, max_size=4))
    data = {"solutions": [draw(master_solutions(index)) for index in indices], "library": draw(library_nodes)}
    if draw(st.booleans()):
        data["version"] = draw(st.sampled_from(["4.44.0", "4.33.0"]))
    return data


masters = master_data().map(master_from_data)


@given(masters)
def test_master_yaml_round_trip(master: MasterLibrary) -> None:
    data = master_to_data(master)
    reloaded = tensilekit.loads(dumps_master(master, "yaml"), source="dump.yaml")
    assert isinstance(reloaded, MasterLibrary)
    assert same_unordered(master_to_data(reloaded), data)
    assert len(reloaded.solutions) == len(master.solutions)


@given(masters)
def test_master_msgpack_round_trip(master: MasterLibrary) -> None:
    data = master_to_data(master)
    packed = dumps_master(master, "msgpack")
    reloaded = tensilekit.loads(packed, source="dump.dat")
    assert isinstance(reloaded, MasterLibrary)
    # keys are written in TensileCreateLibrary's object order, so only the content must match ...
    assert same_unordered(master_to_data(reloaded), data)
    # ... and writing what was read gives the same bytes
    assert dumps_master(reloaded, "msgpack") == packed


@given(masters)
def test_master_yaml_is_what_pyyaml_reads(master: MasterLibrary) -> None:
    text = dumps_master(master, "yaml").decode("utf-8")
    assert text.startswith("---") and text.endswith("...\n")
    assert same_unordered(yaml.safe_load(text), master_to_data(master))


def test_master_msgpack_is_plain_msgpack() -> None:
    master = master_from_data({"solutions": [{"index": 0}], "library": {"type": "Single", "index": 0}})
    assert msgpack.unpackb(dumps_master(master, "msgpack")) == {
        "solutions": [{"index": 0}],
        "library": {"type": "Single", "index": 0},
    }


# -- the fast emitter against PyYAML ---------------------------------------------------------------

plain_data = st.one_of(
    st.lists(nested(scalars, max_leaves=30), max_size=6),
    st.dictionaries(st.one_of(text, integers), nested(scalars, max_leaves=30), max_size=6),
)


@given(plain_data)
def test_emitter_matches_pyyaml(data: Any) -> None:
    expected = yaml.dump(data, Dumper=yaml.CSafeDumper, default_flow_style=None, sort_keys=False)
    assert emit(data, YamlStyle()) == expected


emitter_styles = st.builds(
    YamlStyle,
    explicit_start=st.booleans(),
    explicit_end=st.booleans(),
    flow_leaves=st.booleans(),
    width=st.sampled_from([20, 40, 80, 120, 1 << 30]),
    indent=st.sampled_from([2, 3, 4]),
)


@given(plain_data, emitter_styles)
def test_emitter_matches_pyyaml_in_every_style(data: Any, style: YamlStyle) -> None:
    expected = yaml.dump(
        data,
        Dumper=yaml.CSafeDumper,
        default_flow_style=None if style.flow_leaves else False,
        sort_keys=False,
        explicit_start=style.explicit_start,
        explicit_end=style.explicit_end,
        width=style.width,
        indent=style.indent,
    )
    assert emit(data, style) == expected


def test_master_style_is_tensile_create_library_style() -> None:
    data = {"solutions": [], "library": {"type": "Single", "index": 0}}
    assert emit(data, AMD_MASTER_STYLE) == yaml.dump(
        data, Dumper=yaml.CSafeDumper, default_flow_style=None, sort_keys=False, explicit_start=True, explicit_end=True
    )


# -- scalars YAML 1.2 and PyYAML's YAML 1.1 read differently: the reader must side with PyYAML ----


@pytest.mark.parametrize("value", ["_5", "1e3", "1.0e5", "09", "0o17", "2001-12-14", "12:30:00"])
def test_reader_reads_back_strings_it_wrote(value: str) -> None:
    assert READER_DIVERGENCE.match(value)
    text = dump_yaml([value])  # PyYAML's own spelling: plain, or quoted where PyYAML resolves it
    assert text == yaml.dump([value], Dumper=yaml.CSafeDumper, default_flow_style=None)
    assert same(parse_yaml(text), [value])


@pytest.mark.parametrize(
    "text", ["- yes\n", "- Off\n", "- 012\n", "- 2:3\n", "- 1e3\n", "- _5\n", "- '2001-12-14'\n", "- !!binary aGk=\n"]
)
def test_reader_agrees_with_pyyaml(text: str) -> None:
    assert same(parse_yaml(text), yaml.load(text, Loader=yaml.CSafeLoader))


def test_comment_detection_ignores_quoted_scalar_lines() -> None:
    """A wrapped quoted string whose continuation line starts with '#' is not a comment."""
    data = [{"MinimumRequiredVersion": "4.2.0"}, "x" * 80 + " #b", "c"]
    text = dump_yaml(data, YamlStyle(sort_keys=False))
    assert text == "- {MinimumRequiredVersion: 4.2.0}\n- '" + "x" * 80 + "\n  #b'\n- c\n"  # wrapped at width 80
    assert dump_yaml(parse_yaml(text), detect_style(text, data)) == text  # "  #b'" is no comment to re-insert


def test_empty_string_style_ignores_quoted_text() -> None:
    """``k: ""`` inside a wrapped quoted string does not make the file's empty strings ``""``."""
    data = {"a": 'k: ""\nv', "b": [""]}
    text = dump_yaml(data, YamlStyle(sort_keys=False))
    assert text == "a: 'k: \"\"\n\n  v'\nb: ['']\n"
    assert detect_style(text, data).empty_string == "''"
    assert dump_yaml(parse_yaml(text), detect_style(text, data)) == text


YAML11_ALPHABET = "0123456789_.eE+-:xobTZ yYesnNoOfFtrul~<=!"
CONTEXTS = ["- {}\n", "{}: 1\n", "- [a, {}]\n", "- {{a: {}}}\n", "a:\n  {}\n"]


@given(st.text(alphabet=YAML11_ALPHABET, min_size=1, max_size=24), st.sampled_from(CONTEXTS))
def test_reader_agrees_with_pyyaml_on_plain_scalars(scalar: str, context: str) -> None:
    text = context.format(scalar)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return  # not YAML PyYAML accepts: nothing to agree on
    assert same(parse_yaml(text), expected)


@given(st.text(alphabet=YAML11_ALPHABET + "[]{},#\n\t'\"", max_size=80))
def test_per_value_guard_equals_the_whole_text_search(text: str) -> None:
    """The guard checks each distinct value once; it must decide exactly like one search of the text."""
    from tensilekit.io.yaml_codec import _YAML11_AMBIGUOUS, _fast_parse_is_exact

    whole = _YAML11_AMBIGUOUS.search(text) is None and _YAML11_AMBIGUOUS.search("\n" + text[:256]) is None
    assert _fast_parse_is_exact(text) == whole


_STYLE_LINES = st.sampled_from(
    ["- a: 1", "  K: ''", '  K: ""', "  K: 'x'", "  K: True", "  J: yes", "- xy  ", "- 12 ", "  &id001 a", "# c", ""]
)


@given(st.lists(_STYLE_LINES, max_size=12), st.booleans())
@example(["- 1", "- xy  ", "- xy  "], False)  # the blank-ended line ends the distinct lines, not the text's
def test_style_read_off_the_distinct_lines_is_the_texts(lines: list[str], final_newline: bool) -> None:
    """loads_logic hands detect_style the file's distinct lines: the style (the first spelling of
    each value, a blank that ends a line, quotes, anchors) must be the one the text gives."""
    from tensilekit.io.yaml_codec import distinct_lines

    text = "\n".join(lines) + ("\n" if final_newline else "")
    style = detect_style(text, lines=distinct_lines(text))
    assert style == detect_style(text)
    assert style.scalar_spellings == detect_style(text).scalar_spellings

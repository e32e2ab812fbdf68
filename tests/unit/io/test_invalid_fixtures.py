"""Every file in fixtures/invalid/ fails the way its name says, at the place it says.

Two tables: files that must not load (exception class and location: file, line, column, YAML
path) and files that load but that semantic validation rejects or warns about (finding code,
severity, YAML path, line, column). A test keeps the tables and the folder in step, and another
checks that the committed binary fixtures are what ``make_binary.py`` builds.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

import tensilekit
from tensilekit.errors import (
    DecodeError,
    InvalidValue,
    MissingField,
    MsgpackDecodeError,
    TensilekitError,
    UnknownNodeType,
    UnsupportedFormat,
    YamlSyntaxError,
)
from tensilekit.inspect import validate_file
from tensilekit.lint import lint_file

INVALID = Path(__file__).resolve().parents[3] / "fixtures" / "invalid"
NOT_FIXTURES = {"make_binary.py", "README.md"}

# A master's matching node, as load errors spell its path (format_path) ...
MATCHING = "library.rows[0].library.map.Contraction_l_Alik_Bljk_Cijk_Dijk.rows[0]"
# ... and as semantic findings spell it (model.library.iter_nodes).
MATCHING_FINDING = "library.rows[0].library.map.Contraction_l_Alik_Bljk_Cijk_Dijk.rows[0]"


@dataclasses.dataclass(frozen=True)
class LoadError:
    file: str
    error: type[TensilekitError]
    line: int | None = None
    col: int | None = None
    path: str | None = None
    offset: int | None = None  # binary input: byte offset in the decoded data

    def __str__(self) -> str:
        return self.file


@dataclasses.dataclass(frozen=True)
class Expected:
    file: str
    code: str
    path: str
    line: int
    col: int
    severity: str = "error"

    def __str__(self) -> str:
        return self.file


LOAD_ERRORS = [
    # Cannot be decoded at all.
    LoadError("truncated_yaml.yaml", YamlSyntaxError, 16, 1),
    LoadError("tab_indentation.yaml", YamlSyntaxError, 9, 1),
    LoadError("unterminated_quote.yaml", YamlSyntaxError, 8, 23),  # where the quote opens
    LoadError("not_utf8.yaml", DecodeError, 2, 15),
    LoadError("msgpack_garbage.dat", MsgpackDecodeError, path="solutions[0]", offset=12),
    LoadError("msgpack_truncated.dat", MsgpackDecodeError, path="library.rows[0].predicate", offset=473),
    LoadError("bad_gzip.yaml.gz", MsgpackDecodeError),
    LoadError("truncated_gzip.dat.gz", MsgpackDecodeError),
    LoadError("bad_zlib.dat.zlib", MsgpackDecodeError),
    # Decodes, but is no Tensile library.
    LoadError("empty_file.yaml", UnsupportedFormat),
    LoadError("not_a_library.yaml", UnsupportedFormat),
    LoadError("scalar_root.yaml", UnsupportedFormat),
    LoadError("msgpack_not_a_library.dat", UnsupportedFormat),
    # Logic files that do not fit the model.
    LoadError("wrong_type_macrotile.yaml", InvalidValue, 8, 17, "[5][0].MacroTile0"),
    LoadError("wrong_type_macrotile.yaml.gz", InvalidValue, 8, 17, "[5][0].MacroTile0"),
    LoadError("table_row_missing_solution.yaml", InvalidValue, 13, 5, "[7][1]"),
    LoadError("table_size_not_integer.yaml", InvalidValue, 13, 14, "[7][1][0][1]"),
    LoadError("missing_solutions_position.yaml", MissingField, 1, 1, "[5]"),
    LoadError("version_header_not_mapping.yaml", InvalidValue, 1, 3, "[0]"),
    LoadError("solution_not_mapping.yaml", InvalidValue, 10, 5, "[5][1]"),
    LoadError("dict_layout_missing_problem_type.yaml", MissingField, 1, 1, "ProblemType"),
    # NaN sorts arbitrarily: an error when the file is read (issue 17), no longer a warning.
    LoadError("nan_efficiency.yaml", InvalidValue, 20, 11, "[7][1][1][1]"),
    # Master libraries that do not fit the model.
    LoadError("unknown_node_type.yaml", UnknownNodeType, 9, 15, f"{MATCHING}.library"),
    LoadError("msgpack_unknown_node_type.dat", UnknownNodeType, None, None, f"{MATCHING}.library", offset=82),
    LoadError("bad_predicate.yaml", InvalidValue, 33, 39, "library.rows[0].predicate.value.value"),
    LoadError("master_predicate_missing_value.yaml", MissingField, 27, 17, f"{MATCHING}.predicate.value[1].value"),
    LoadError("master_solution_missing_index.yaml", MissingField, 36, 3, "solutions[0].index"),
    LoadError("master_table_key_not_list.yaml", InvalidValue, 19, 22, f"{MATCHING}.library.table[1].key"),
    # the runtime would read past a short key: an error when the file is read (issue 17)
    LoadError("master_key_length.yaml", InvalidValue, 19, 22, f"{MATCHING}.library.table[1].key"),
    LoadError("master_tree_index.yaml", InvalidValue, 20, 19, f"{MATCHING}.library.trees[1].tree[0]"),
]

FINDINGS = [
    # Logic files.
    Expected("index_out_of_range.yaml", "missing-solution", "[7][1][1][0]", 20, 8),
    Expected("problem_type_mismatch.yaml", "problem-type-mismatch", "[5][1].ProblemType.DataType", 15, 64),
    Expected("key_length_mismatch.yaml", "key-length", "[7][1][0]", 19, 7),
    Expected("index_order_not_permutation.yaml", "index-order", "[6]", 16, 3),
    Expected("missing_table.yaml", "missing-table", "[7]", 17, 3),
    Expected("duplicate_solution_index.yaml", "duplicate-solution-index", "[5]", 6, 3, "warning"),
    Expected("duplicate_size.yaml", "duplicate-size", "[7][1][0]", 19, 7, "warning"),
    # Master libraries.
    # a predicate type tensilekit does not model loads (issue 35 item 4); what carries it is passed over
    Expected("master_unknown_predicate.yaml", "unmodelled-predicate", "library.rows[0].predicate", 32, 7, "warning"),
    Expected("master_missing_solution.yaml", "missing-solution", f"{MATCHING_FINDING}.library.table[1].index", 18, 24),
    # the loader keeps the last solution of an index (issue 23 item 2): legal, a warning
    Expected("master_duplicate_index.yaml", "duplicate-index", "solutions[0].index", 38, 10, "warning"),
    Expected(
        "master_infinite_speed.yaml", "infinite-speed", f"{MATCHING_FINDING}.library.table[1].speed", 20, 24, "warning"
    ),
]


def test_every_fixture_has_an_expectation() -> None:
    on_disk = {path.name for path in INVALID.iterdir() if path.is_file()} - NOT_FIXTURES
    listed = [case.file for case in LOAD_ERRORS] + [case.file for case in FINDINGS]
    assert len(listed) == len(set(listed)), "a fixture is listed twice"
    assert on_disk == set(listed)
    assert len(listed) >= 20


@pytest.mark.parametrize("case", LOAD_ERRORS, ids=str)
def test_load_raises_with_location(case: LoadError) -> None:
    path = INVALID / case.file
    with pytest.raises(TensilekitError) as caught:
        tensilekit.load(path)
    error = caught.value
    assert type(error) is case.error
    assert error.location is not None
    assert (error.location.file, error.location.line, error.location.col, error.location.path) == (
        str(path),
        case.line,
        case.col,
        case.path,
    )
    # Compiler style: file[:line:col]: message [(at path)]
    head = str(path) if case.line is None else f"{path}:{case.line}:{case.col}"
    if case.offset is not None:
        head += f": byte {case.offset}"
    assert str(error).startswith(f"{head}: {error.message}")
    if case.path:
        assert str(error).endswith(f"(at {case.path})")


@pytest.mark.parametrize("case", LOAD_ERRORS, ids=str)
def test_loads_from_bytes_gives_the_same_error(case: LoadError) -> None:
    path = INVALID / case.file
    with pytest.raises(case.error) as caught:
        tensilekit.loads(path.read_bytes(), source=case.file)
    location = caught.value.location
    assert location is not None
    assert (location.file, location.line, location.col, location.path) == (case.file, case.line, case.col, case.path)
    assert location.offset == case.offset


@pytest.mark.parametrize("case", LOAD_ERRORS, ids=str)
def test_validate_reports_load_error_as_finding(case: LoadError) -> None:
    result = validate_file(INVALID / case.file)
    assert not result.ok
    assert [(f.severity, f.code, f.path, f.line, f.col) for f in result.findings] == [
        ("error", case.error.__name__, case.path or "", case.line, case.col)
    ]


@pytest.mark.parametrize("case", FINDINGS, ids=str)
def test_semantic_finding_with_location(case: Expected) -> None:
    path = INVALID / case.file
    tensilekit.load(path)  # loads: the problem is semantic
    result = validate_file(path)
    matching = [f for f in result.findings if f.code == case.code]
    assert len(matching) == 1, result.findings
    finding = matching[0]
    assert (finding.severity, finding.path, finding.line, finding.col) == (
        case.severity,
        case.path,
        case.line,
        case.col,
    )
    # one verdict per file (issue 35 item 7): a warning-only file is valid when lint and build-master
    # can read it; these hand-written ones lack ProblemType keys a build needs (TotalIndices …)
    readable = lint_file(path).kind != "unreadable"
    assert result.ok is (case.severity == "warning" and readable)


def test_binary_fixtures_match_their_generator() -> None:
    spec = importlib.util.spec_from_file_location("make_binary", INVALID / "make_binary.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built: dict[str, bytes] = module.build()
    stale = [name for name, data in built.items() if (INVALID / name).read_bytes() != data]
    assert not stale, f"re-run fixtures/invalid/make_binary.py and commit: {stale}"

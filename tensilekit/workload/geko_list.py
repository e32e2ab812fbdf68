"""GEKO's hand-written workload forms: the generator list YAML and the ``--inline`` GEMM.

List YAML (GEKO ``config_generator/config.yaml``)::

    TRANSA: 'N'
    TRANSB: 'T'
    DataType: B            # Tensile letters; two types for mixed inputs, e.g. F8B8
    DestDataType: B
    ComputeDataType: S
    ARCH: gfx942
    Sizes:
      - [4096, 4096, 1, 4096]   # [M, N, batch, K]

Only the explicit size list (``SIZE_OPTION: 0``, the default) describes a workload; the grid
mode (``SIZE_OPTION: 1``) needs GEKO's per-architecture CU tables and is refused. Repeated sizes
are dropped, as GEKO's ``_deduplicate`` does (a list has no call counts to add up).

Inline (GEKO ``--inline M N batch K DataType DestDataType ComputeDataType transA transB``)::

    1024 1024 1 1024 B B S N T
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tensilekit._arguments import require as require_type
from tensilekit._arguments import require_path
from tensilekit.errors import InputNotFound, InvalidValue, Location, MissingField, YamlSyntaxError, one_line_reason
from tensilekit.io.limits import check_yaml_text
from tensilekit.workload.problem import FAST_COMPUTE_FOR_INPUT, GemmProblem
from tensilekit.workload.records import ParsedWorkload, WorkloadFormat

# Tensile letters -> hipBLASLt data type names (inverse of problem.DATA_TYPES, canonical picks).
_LETTER_TYPES: dict[str, str] = {
    "H": "f16_r",
    "B": "bf16_r",
    "S": "f32_r",
    "D": "f64_r",
    "I8": "i8_r",
    "I": "i32_r",
    "F8": "f8_r",
    "B8": "bf8_r",
    "F8N": "f8_fnuz_r",
    "B8N": "bf8_fnuz_r",
    "F4": "f4_r",
    "C": "f32_c",
    "Z": "f64_c",
}
_LETTER_COMPUTE: dict[str, str] = {"S": "c_f32_r", "D": "c_f64_r", "I": "c_i32_r", "H": "c_f16_r", "X": "c_xf32_r"}
_LETTER_TOKEN = re.compile("|".join(sorted((re.escape(key) for key in [*_LETTER_TYPES, "X"]), key=len, reverse=True)))


def _split_letters(code: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(code):
        match = _LETTER_TOKEN.match(code, position)
        if match is None:
            raise ValueError(f"unknown Tensile type letters {code!r}")
        tokens.append(match.group(0))
        position = match.end()
    return tokens


def types_from_tensile(data_type: str, dest_data_type: str, compute_data_type: str) -> dict[str, str]:
    """hipBLASLt ``a_type``/``b_type``/``c_type``/``d_type``/``compute_type`` for a Tensile triple.

    ``B B S`` is bf16 with fp32 compute; ``F8B8 S S`` is fp8 x bf8 into fp32; ``X S S`` is TF32
    (f32 data, ``c_xf32_r`` compute), the inverse of :attr:`GemmProblem.gemm_type`.
    """
    data = str(data_type).strip()
    dest = str(dest_data_type).strip()
    compute = str(compute_data_type).strip()
    letters = _split_letters(data)
    if len(letters) not in (1, 2):
        raise ValueError(f"DataType must name one or two types, got {data!r}")
    if letters == ["X"]:
        a_type = b_type = "f32_r"
        compute_type = "c_xf32_r"
    else:
        if "X" in letters:
            raise ValueError(f"X (TF32) cannot be mixed with other types in {data!r}")
        a_type = _LETTER_TYPES[letters[0]]
        b_type = _LETTER_TYPES[letters[-1]]
        if compute not in _LETTER_COMPUTE:
            raise ValueError(f"unknown ComputeDataType {compute!r}")
        compute_type = _LETTER_COMPUTE[compute]
        wide = [letter for letter in letters if letter in FAST_COMPUTE_FOR_INPUT]
        if len(letters) == 2 and len(wide) == 1 and compute == "S":
            # fp8 x f16 (F8H): tensilelite's only such GEMM converts the fp8 input and runs f16
            # MFMAs (AMD's ..._F8H_HHS_BH_... logic, DataType H), which hipBLASLt reaches with
            # c_f32_fast_f16_r (AMD's own bench sample: DataTypeA f8_r, DataTypeB f16_r,
            # ComputeType f32_f16_r, clients/benchmarks/sequence.yaml @7d9fb683).
            compute_type = FAST_COMPUTE_FOR_INPUT[wide[0]]
    if dest not in _LETTER_TYPES:
        raise ValueError(f"unknown DestDataType {dest!r}")
    c_type = _LETTER_TYPES[dest]
    return {"a_type": a_type, "b_type": b_type, "c_type": c_type, "d_type": c_type, "compute_type": compute_type}


def parse_inline_gemm(spec: str | Sequence[str]) -> GemmProblem:
    """Parse GEKO's ``--inline M N batch K DataType DestDataType ComputeDataType transA transB``.

    ``spec`` is the nine values as one string or a sequence (e.g. ``sys.argv`` slice). Raises
    :class:`~tensilekit.errors.InvalidValue` for anything that is not such a GEMM.
    """
    values = spec.split() if isinstance(spec, str) else [str(item) for item in spec]
    if len(values) != 9:
        raise InvalidValue(
            f"inline GEMM needs 9 values (M N batch K DataType DestDataType ComputeDataType transA transB), "
            f"got {len(values)}: {' '.join(values)!r}"
        )
    try:
        m, n, batch, k = (int(value) for value in values[:4])
        types = types_from_tensile(values[4], values[5], values[6])
        return GemmProblem.model_validate(
            {"m": m, "n": n, "k": k, "batch": batch, "trans_a": values[7], "trans_b": values[8], **types}
        )
    except (ValueError, ValidationError) as error:
        raise InvalidValue(f"bad inline GEMM {' '.join(values)!r}: {one_line_reason(error)}") from None


def _node_location(file: str | None, node: yaml.Node | None, path: str | None = None) -> Location:
    if node is None:
        return Location(file=file, path=path)
    return Location(file=file, path=path, line=node.start_mark.line + 1, col=node.start_mark.column + 1)


def _mapping_nodes(node: yaml.Node) -> dict[str, yaml.Node]:
    result: dict[str, yaml.Node] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                result[str(key_node.value)] = value_node
    return result


def parse_geko_list(text: str, *, file: str | None = None) -> ParsedWorkload:
    """Read a GEKO list YAML into one problem per distinct size (call count 1 each).

    Errors carry the file, line and YAML path: :class:`~tensilekit.errors.YamlSyntaxError` for
    broken YAML, :class:`~tensilekit.errors.MissingField` for an absent key,
    :class:`~tensilekit.errors.InvalidValue` for a bad type triple, transpose or size entry,
    :class:`~tensilekit.errors.InputTooLarge` for a number over the digits limit or too deep nesting.
    """
    require_type(text, str, "text", "parse_geko_list")
    check_yaml_text(text, file)  # PyYAML would raise ValueError past 4 300 digits, or recurse
    try:
        loader = yaml.SafeLoader(text)  # the reader checks for control characters here
    except yaml.YAMLError as error:
        raise YamlSyntaxError(f"invalid YAML: {error}", Location(file=file)) from None
    try:
        root = loader.get_single_node()
        data: Any = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise YamlSyntaxError(f"invalid YAML: {error.problem}", Location(file=file, line=line)) from None
    except yaml.YAMLError as error:  # e.g. a control character (ReaderError has no mark)
        raise YamlSyntaxError(f"invalid YAML: {error}", Location(file=file)) from None
    finally:
        loader.dispose()
    if root is None or not isinstance(data, dict):
        raise InvalidValue("a GEKO list must be a YAML mapping", _node_location(file, root))
    nodes = _mapping_nodes(root)

    def require(key: str) -> Any:
        if key not in data:
            raise MissingField(f"GEKO list has no {key!r}", _node_location(file, root, key))
        return data[key]

    size_option = data.get("SIZE_OPTION", 0)
    if size_option not in (0, None):
        raise InvalidValue(
            f"SIZE_OPTION {size_option!r} is not supported: only an explicit Sizes list (SIZE_OPTION 0) "
            "describes a workload",
            _node_location(file, nodes.get("SIZE_OPTION"), "SIZE_OPTION"),
        )
    try:
        types = types_from_tensile(require("DataType"), require("DestDataType"), require("ComputeDataType"))
    except ValueError as error:
        raise InvalidValue(str(error), _node_location(file, nodes.get("DataType"), "DataType")) from None
    trans: dict[str, str] = {}
    for key, field in (("TRANSA", "trans_a"), ("TRANSB", "trans_b")):
        value = require(key)
        if isinstance(value, bool):  # an unquoted Y/N-like scalar some YAML writers produce
            value = "T" if value else "N"
        if str(value).strip().upper() not in ("N", "T"):
            raise InvalidValue(f"{key} must be N or T, got {value!r}", _node_location(file, nodes.get(key), key))
        trans[field] = str(value).strip().upper()
    sizes = require("Sizes")
    sizes_node = nodes.get("Sizes")
    if not isinstance(sizes, list) or not sizes:
        raise InvalidValue(
            "Sizes must be a non-empty list of [M, N, batch, K]", _node_location(file, sizes_node, "Sizes")
        )
    size_nodes = sizes_node.value if isinstance(sizes_node, yaml.SequenceNode) else []
    problems: list[GemmProblem] = []
    seen: set[tuple[int, ...]] = set()
    duplicates = 0
    for index, entry in enumerate(sizes):
        entry_node = size_nodes[index] if index < len(size_nodes) else sizes_node
        where = _node_location(file, entry_node, f"Sizes[{index}]")
        if (
            not isinstance(entry, list)
            or len(entry) != 4
            or not all(isinstance(value, int) and not isinstance(value, bool) and value > 0 for value in entry)
        ):
            raise InvalidValue(f"size must be four positive integers [M, N, batch, K], got {entry!r}", where)
        size = tuple(entry)
        if size in seen:
            duplicates += 1
            continue
        seen.add(size)
        m, n, batch, k = entry
        try:
            problems.append(GemmProblem.model_validate({"m": m, "n": n, "batch": batch, "k": k, **trans, **types}))
        except ValidationError as error:  # a size out of its C++ range (int64_t; batch int32_t)
            raise InvalidValue(f"size [M, N, batch, K] {one_line_reason(error)}", where) from None
    metadata = {"ARCH": str(data["ARCH"])} if data.get("ARCH") is not None else {}
    warnings = (f"{duplicates} repeated size(s) dropped",) if duplicates else ()
    return ParsedWorkload(
        format=WorkloadFormat.GEKO_LIST, source=file, problems=tuple(problems), warnings=warnings, metadata=metadata
    )


def load_geko_list(path: str | Path) -> ParsedWorkload:
    """Read a GEKO list YAML file; see :func:`parse_geko_list`."""
    path = require_path(path, "path", "load_geko_list")
    file = Path(path)
    if not file.is_file():
        raise InputNotFound(f"no such GEKO list: {file}", Location(file=str(file)))
    return parse_geko_list(file.read_text(encoding="utf-8-sig"), file=str(file))


__all__ = ["load_geko_list", "parse_geko_list", "parse_inline_gemm", "types_from_tensile"]

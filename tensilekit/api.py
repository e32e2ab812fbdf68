"""Format- and kind-detecting entry points over the logic and master readers/writers."""

from __future__ import annotations

from pathlib import Path

from tensilekit.io.detect import Kind, detect_kind
from tensilekit.io.files import read_bytes
from tensilekit.io.logic_io import logic_from_data
from tensilekit.io.master_io import decode, master_from_data
from tensilekit.io.yaml_codec import detect_style
from tensilekit.model.library import MasterLibrary
from tensilekit.model.logic import LogicFile


def loads(data: bytes | str, source: str | None = None) -> LogicFile | MasterLibrary:
    """Decode a logic file or a master library from text or bytes, detecting kind and format."""
    decoded, _, text = decode(data, source)
    if detect_kind(decoded) is Kind.MASTER:
        return master_from_data(decoded, source=source, text=text)
    logic = logic_from_data(decoded, source=source, text=text)
    if text is not None:
        logic._source_style = detect_style(text, decoded)
    return logic


def load(path: str | Path) -> LogicFile | MasterLibrary:
    """Read any Tensile library file: logic YAML, master YAML/msgpack, gzip or zlib wrapped."""
    return loads(read_bytes(path), str(path))


__all__ = ["load", "loads"]

"""JSON Schemas of the file formats, generated from the models (``python -m tensilekit.schema``).

The master-library schema is the model's own. The logic-file schema describes the *file*: the
list form as positional ``prefixItems`` (one list per dialect, from ``LIST_LAYOUTS``) and the
dict form keyed by the file's own names (``DICT_KEYS``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tensilekit.model.library import MasterLibrary
from tensilekit.model.logic import DICT_KEYS, LIST_LAYOUTS, LogicFile

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def master_library_schema() -> dict[str, Any]:
    schema = MasterLibrary.model_json_schema(by_alias=True)
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "Tensile master solution library (TensileLibrary*.yaml / .dat)"
    return schema


# Fields whose file form differs from the model's (the model names what the file leaves positional).
_FILE_FORMS: dict[str, Any] = {
    "exact_logic": {
        "anyOf": [
            {
                "type": "array",
                "items": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "array", "items": {"type": "integer"}, "description": "[M, N, B, K(, ld...)]"},
                        {
                            "type": "array",
                            "prefixItems": [{"type": "integer"}, {"type": "number"}],
                            "minItems": 2,
                            "maxItems": 2,
                            "description": "[solution position, efficiency]",
                        },
                    ],
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            {"type": "null"},
        ]
    },
}


def logic_file_schema() -> dict[str, Any]:
    model = LogicFile.model_json_schema(by_alias=True)
    properties: dict[str, Any] = dict(model["properties"])
    properties.update(_FILE_FORMS)
    list_forms = []
    for dialect, layout in LIST_LAYOUTS.items():
        list_forms.append(
            {
                "title": f"list form ({dialect.value})",
                "type": "array",
                "minItems": 8,
                "prefixItems": [dict(properties[name], title=f"[{pos}] {name}") for pos, name in enumerate(layout)],
            }
        )
    dict_form = {
        "title": "dict form (DecisionTree / newest tensilelite)",
        "type": "object",
        "required": ["ProblemType", "Solutions"],
        "properties": {key: properties[name] for key, name in DICT_KEYS.items() if name in properties},
    }
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Tensile / tensilelite library-logic file",
        "anyOf": list_forms + [dict_form],
        "$defs": model.get("$defs", {}),
    }


SCHEMAS = {
    "logic-file.schema.json": logic_file_schema,
    "master-library.schema.json": master_library_schema,
}


def render_schemas() -> dict[str, str]:
    """File name -> JSON text of every schema."""
    return {name: json.dumps(build(), indent=2, sort_keys=True) + "\n" for name, build in SCHEMAS.items()}


def write_schemas(directory: str | Path) -> list[Path]:
    from tensilekit.io.atomic import write_text_atomic

    written = []
    for name, text in render_schemas().items():
        target = Path(directory) / name
        write_text_atomic(target, text)
        written.append(target)
    return written


if __name__ == "__main__":  # pragma: no cover - developer entry point
    for path in write_schemas(sys.argv[1] if len(sys.argv) > 1 else "schemas"):
        print(path)

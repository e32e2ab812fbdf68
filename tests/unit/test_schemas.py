"""The committed JSON Schemas are what the models generate, and they accept real files."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

from tensilekit.schema import render_schemas

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_are_up_to_date() -> None:
    for name, text in render_schemas().items():
        committed = (SCHEMA_DIR / name).read_text(encoding="utf-8")
        assert committed == text, f"schemas/{name} is stale: run `python -m tensilekit.schema schemas`"


def test_logic_schema_accepts_a_real_logic_file(corpus: Path) -> None:
    import json

    schema = json.loads((SCHEMA_DIR / "logic-file.schema.json").read_text())
    path = corpus / "logic/hipblaslt/aldebaran/104CU/GridBased/aldebaran_Cijk_Ailk_Bljk_I8II_BH_UserArgs.yaml"
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_logic_schema_rejects_a_wrong_type() -> None:
    import json

    schema = json.loads((SCHEMA_DIR / "logic-file.schema.json").read_text())
    bad = [{"MinimumRequiredVersion": "4.33.0"}, "sched", "gfx90a", [], "not a problem type", [], [2, 3, 0, 1], []]
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError:
        return
    raise AssertionError("a string where the problem type belongs must be rejected")

"""A ``UseScaleAB`` predicate with a bool value: loadable as YAML, not as msgpack by hipBLASLt's
runtimes (``tests/conformance/test_older_logic_forms.py`` shows it with AMD's build and runtime).
Here without AMD: tensilekit's build of the same logic (the same bytes), in both forms."""

from __future__ import annotations

from pathlib import Path

from tensilekit.inspect import describe, validate_file
from tensilekit.io.logic_io import load_logic
from tensilekit.io.master_io import dump_master
from tensilekit.libbuild import build_logic_master
from tensilekit.lint.files import lint_file
from tensilekit.model.checks import msgpack_load_findings

FORMS = Path(__file__).resolve().parents[3] / "fixtures" / "older_forms"
I8II = "aldebaran_Cijk_Ailk_Bljk_I8II_BH_UserArgs.yaml"


def test_only_the_msgpack_form_of_a_bool_scale_ab_is_flagged_by_info_validate_and_lint(tmp_path: Path) -> None:
    logic = FORMS / "hipblaslt" / I8II
    master = build_logic_master(load_logic(logic), str(logic))
    (finding,) = msgpack_load_findings(master)
    assert finding.severity == "warning" and finding.code == "msgpack-bool-scale-ab"
    assert finding.path == "solutions[0].problemPredicate" and "(2 predicates, the first here)" in finding.message
    for suffix, flagged in ((".dat", True), (".dat.zlib", True), (".yaml", False)):
        path = tmp_path / f"TensileLibrary_gfx90a{suffix}"
        dump_master(master, path)
        assert bool(describe(path).warnings) is flagged, suffix
        for findings in (validate_file(path).findings, lint_file(path).findings):
            assert ("msgpack-bool-scale-ab" in {f.code for f in findings}) is flagged, suffix

    # the 2025 form, a string, is what the runtimes read: nothing to say
    text = logic.read_text()
    assert text.count("UseScaleAB: false") == 2
    current = tmp_path / I8II
    current.write_text(text.replace("UseScaleAB: false", "UseScaleAB: ''"))
    assert msgpack_load_findings(build_logic_master(load_logic(current), str(current))) == []

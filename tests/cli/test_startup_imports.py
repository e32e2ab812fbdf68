"""Start-up: each command imports only what it uses (`select` on a master builds nothing, plots nothing).

Speed itself is measured by bench/startup.py; these tests pin the import structure behind it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tensilekit.cli.commands.select import METRICS
from tensilekit.data import sample_library_path
from tensilekit.selection import PerformanceMetric

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("tensilekit.libbuild", "tensilekit.pipeline", "tensilekit.plot", "matplotlib", "networkx", "ray")

_PROBE = """
import json, sys
from tensilekit.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_after(*args: str) -> tuple[int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )
    report = json.loads(completed.stderr.strip().splitlines()[-1])
    return report["code"], report["modules"]


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if name.startswith(HEAVY)]


def test_select_on_a_master_imports_no_build_pipeline_or_plot_module() -> None:
    code, modules = _modules_after("select", "1024", "1024", "1024", "--library", str(sample_library_path()))
    assert code in (0, None)
    assert _heavy(modules) == []
    assert "tensilekit.selection" in modules  # the probe did run a selection
    # one query walks the reference selector: no numpy, no compiled path (~70 ms of start-up)
    assert not [name for name in modules if name.startswith(("numpy", "tensilekit.selection.fast"))]


def test_many_queries_take_the_compiled_path_a_few_walk(tmp_path: Path) -> None:
    from tensilekit.cli.commands.select import _WALK_AT_MOST

    line = json.dumps({"m": 1024, "n": 1024, "k": 1024, "arch": "gfx90a"}) + "\n"
    for count, compiled in ((_WALK_AT_MOST + 1, True), (_WALK_AT_MOST, False)):
        queries = tmp_path / f"q{count}.jsonl"
        queries.write_text(line * count)
        code, modules = _modules_after("select", "--queries", str(queries), "--library", str(sample_library_path()))
        assert code in (0, None)
        # a handful of queries walks the tree (a lazily read shard decodes only what it reaches)
        assert ("tensilekit.selection.fast" in modules) is compiled, count


def test_help_and_select_help_import_no_command_module() -> None:
    for args in (["--help"], ["select", "--help"]):
        _, modules = _modules_after(*args)
        assert not [name for name in modules if name.startswith(("tensilekit.selection", "tensilekit.model", "numpy"))]
        assert _heavy(modules) == []


def test_metric_choices_spelled_out_in_the_cli_match_the_enum() -> None:
    assert METRICS == [metric.value for metric in PerformanceMetric]


def test_hipblaslt_versions_spelled_out_in_the_cli_match_the_table() -> None:
    from tensilekit.cli.options import HIPBLASLT_VERSION_NAMES
    from tensilekit.selection.hipblaslt_versions import HIPBLASLT_VERSIONS

    assert list(HIPBLASLT_VERSION_NAMES) == list(HIPBLASLT_VERSIONS)


def test_every_listed_command_resolves_and_completion_lists_them() -> None:
    from click.testing import CliRunner

    from tensilekit.cli.main import _COMMANDS, cli

    context = cli.make_context("tensilekit", [], resilient_parsing=True)
    for name in _COMMANDS:
        assert cli.get_command(context, name) is not None, name
    names = [item.value for item in cli.shell_complete(context, "s")]
    assert names == ["select"]
    result = CliRunner().invoke(cli, [], env={"_TENSILEKIT_COMPLETE": "bash_complete", "COMP_WORDS": "tensilekit b",
                                              "COMP_CWORD": "1"}, prog_name="tensilekit")  # fmt: skip
    assert "build-master" in result.output

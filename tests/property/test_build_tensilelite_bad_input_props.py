"""Property: a hipBLASLt logic file with any one field deleted or replaced by a value of the wrong
shape either builds or fails with a TensilekitError that names the file; never a raw exception."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensilekit.errors import TensilekitError
from tensilekit.libbuild import build_tensilelite_libraries

pytestmark = pytest.mark.corpus

BAD_VALUES = st.sampled_from([None, "x", -1, 0, 3, 1.5, [], {}, [1], True, [[1]], {"a": 1}])


def test_mutated_logic_fails_cleanly(corpus: Path) -> None:
    path = sorted((corpus / "logic" / "hipblaslt" / "navi31").rglob("*.yaml"))[0]
    base = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def check(data: st.DataObject) -> None:
        logic: Any = copy.deepcopy(base)
        where = data.draw(st.sampled_from(["solution", "problem_type", "position"]))
        if where == "solution":
            solution = data.draw(st.sampled_from(logic[5]))
            key = data.draw(st.sampled_from(sorted(solution)))
            if data.draw(st.booleans()):
                del solution[key]
            else:
                solution[key] = data.draw(BAD_VALUES)
        elif where == "problem_type":
            key = data.draw(st.sampled_from(sorted(logic[4])))
            logic[4][key] = data.draw(BAD_VALUES)
            for solution in logic[5]:
                solution["ProblemType"][key] = logic[4][key]
        else:
            logic[data.draw(st.integers(0, len(logic) - 1))] = data.draw(BAD_VALUES)
        try:
            build_tensilelite_libraries([("bad.yaml", logic)])
        except TensilekitError as exc:
            assert exc.location is not None and exc.location.file == "bad.yaml"

    check()

"""``copied_with`` (the hot paths' ``model_copy(update=...)``) builds the same model as pydantic's
``model_copy``: equal, same fields, same fields set, same dumps and hash. A pydantic upgrade that
changes the model layout fails here first."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensilekit.model.common import copied_with
from tensilekit.selection.problem import GemmProblem, problem_from_query, problem_record

_SIZES = st.integers(min_value=0, max_value=(1 << 31) - 1)
_UPDATES = st.fixed_dictionaries(
    {},
    optional={
        "m": _SIZES, "n": _SIZES, "k": _SIZES, "batch": _SIZES, "lda": _SIZES, "workspace_size": _SIZES,
        "alpha": st.floats(allow_nan=False, width=64), "beta": st.floats(allow_nan=False, width=64),
    },
)  # fmt: skip
_BASES = st.builds(
    GemmProblem,
    m=_SIZES, n=_SIZES, k=_SIZES,
    a_type=st.sampled_from(["Float", "Half", "BFloat16", "Double"]),
    trans_a=st.sampled_from(["N", "T"]),
    hpa=st.sampled_from([None, True, False]),
    beta=st.floats(min_value=-4, max_value=4),
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(base=_BASES, update=_UPDATES)
def test_copied_with_equals_model_copy(base: GemmProblem, update: dict[str, object]) -> None:
    fast, reference = copied_with(base, update), base.model_copy(update=update)
    assert type(fast) is GemmProblem
    assert fast == reference and hash(fast) == hash(reference)
    assert fast.__dict__ == reference.__dict__
    assert fast.model_fields_set == reference.model_fields_set
    assert fast.model_dump(mode="json", exclude_defaults=True) == reference.model_dump(
        mode="json", exclude_defaults=True
    )
    assert fast.__pydantic_extra__ is None and fast.__pydantic_private__ is None
    assert base.__dict__ is not fast.__dict__  # the original is untouched by later copies


@settings(max_examples=200, deadline=None)
@given(
    m=_SIZES, n=_SIZES, k=_SIZES,
    alpha=st.one_of(st.integers(-(2**53), 2**53), st.floats(allow_nan=False)),
    beta=st.one_of(st.none(), st.sampled_from([0.0, 1.0, -1.0, 0, 1]), st.floats()),
    batch=st.one_of(st.none(), _SIZES),
    types=st.sampled_from([{}, {"a_type": "Half", "compute_type": "Float"}, {"a_type": "BFloat16", "hpa": True}]),
    workspace=st.one_of(st.none(), _SIZES),
)  # fmt: skip
def test_a_query_built_from_a_template_equals_the_validated_problem(
    m: int, n: int, k: int, alpha: float, beta: float | None, batch: int | None, types: dict[str, object],
    workspace: int | None,
) -> None:  # fmt: skip
    """``problem_from_query`` copies a validated template for the numbers: the same problem, fields
    set and dump as validating the whole record; its record (built from the template's dump) is
    the validated problem's, key for key in order."""
    record: dict[str, object] = {"m": m, "n": n, "k": k, "alpha": alpha, "beta": beta, "batch": batch, **types}
    record["workspace_size"] = workspace
    fields = {name: value for name, value in record.items() if value is not None}
    for _ in range(2):  # the second time from the template the first one left
        built, validated = problem_from_query(record), GemmProblem(**fields)
        assert built == validated or math.isnan(float(beta or 0))
        assert built.model_fields_set == validated.model_fields_set
        assert built.model_dump(mode="json", exclude_defaults=True) == validated.model_dump(
            mode="json", exclude_defaults=True
        )
        assert json.dumps(problem_record(built)) == json.dumps(problem_record(validated))


def test_a_template_copys_record_reads_only_its_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``select --queries`` builds one record per answer: a template copy's comes from the
    template's dump made once, without dumping the copy (a problem built otherwise is dumped)."""
    record = {"m": 7, "n": 8, "k": 9, "a_type": "Half", "compute_type": "Float", "beta": 0.5}
    problem_from_query(record)  # the template (and its dump) made first
    copy = problem_from_query({**record, "m": 70, "n": 80})
    expected = json.dumps(problem_record(GemmProblem(**{**record, "m": 70, "n": 80})))

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the copy was dumped")

    monkeypatch.setattr(GemmProblem, "model_dump", refused)
    assert json.dumps(problem_record(copy)) == expected
    with pytest.raises(AssertionError, match="dumped"):
        problem_record(GemmProblem(**record).model_copy(update={"m": 70}))

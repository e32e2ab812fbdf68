"""Run directory state: the resume decision table, markers, the run lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit.errors import PipelineError
from tensilekit.pipeline.state import RunDirectory, StageMarker, StageStatus, decide, explain_staleness


def marker(fingerprint: str = "f1", outputs: dict[str, str] | None = None) -> StageMarker:
    return StageMarker(stage="search", number=4, version="1", fingerprint=fingerprint,
                       outputs=outputs if outputs is not None else {"04_search/a.csv": "h1"},
                       config_slice={"top_k": 5}, inputs={"input[0]": "x"}, tools={"hipblaslt-bench": "v1"})  # fmt: skip


@pytest.mark.parametrize(
    ("existing", "fingerprint", "current", "forced", "status"),
    [
        (None, "f1", {}, False, StageStatus.NEW),
        (marker(), "f1", {"04_search/a.csv": "h1"}, False, StageStatus.UP_TO_DATE),
        (marker(), "f2", {"04_search/a.csv": "h1"}, False, StageStatus.STALE),
        (marker(), "f1", {"04_search/a.csv": "missing"}, False, StageStatus.DAMAGED),
        (marker(), "f1", {"04_search/a.csv": "other"}, False, StageStatus.DAMAGED),
        (marker(), "f1", {"04_search/a.csv": "h1"}, True, StageStatus.FORCED),
        (None, "f1", {}, True, StageStatus.FORCED),
    ],
)
def test_decide(
    existing: StageMarker | None, fingerprint: str, current: dict[str, str], forced: bool, status: StageStatus
) -> None:
    assert decide(existing, fingerprint, current, forced=forced)[0] is status


def test_only_up_to_date_and_not_selected_stages_are_skipped() -> None:
    assert {status for status in StageStatus if not status.runs} == {StageStatus.UP_TO_DATE, StageStatus.NOT_SELECTED}


def test_damaged_reason_names_the_output() -> None:
    assert decide(marker(), "f1", {})[1] == "output 04_search/a.csv is missing"


def test_explain_staleness_names_the_changes() -> None:
    text = explain_staleness(marker(), {"top_k": 3}, {"input[0]": "y"}, {"hipblaslt-bench": "v1"})
    assert text == "option top_k: 5 -> 3; input input[0] changed"


def test_marker_round_trip_and_corrupt_markers(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path)
    assert run.read_marker(4, "search") is None
    run.write_marker(marker())
    assert run.stage_dir(4, "search") == tmp_path / "04_search"
    assert run.read_marker(4, "search") == marker()
    assert run.read_marker(4, "build") is None  # the name must match the folder
    run.marker_path(4, "search").write_text("{not json")
    assert run.read_marker(4, "search") is None
    run.remove_marker(4, "search")
    run.remove_marker(4, "search")
    assert not run.marker_path(4, "search").exists()


def test_current_hashes(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path)
    (tmp_path / "x.txt").write_text("data")
    hashes = run.current_hashes({"x.txt": "old", "gone.txt": "old"})
    assert hashes["gone.txt"] == "missing" and len(hashes["x.txt"]) == 64


def test_a_run_directory_is_locked_while_in_use(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "w")
    with run.lock():
        with pytest.raises(PipelineError, match="another tensilekit run"):
            with RunDirectory(tmp_path / "w").lock():
                pass
    with run.lock():  # released
        pass

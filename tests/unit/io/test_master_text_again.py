"""A master read from bytes is modelled without its YAML text beside it (78 MB for rocBLAS_Full):
only an error decodes the text again, and it is located as before (file, line, column, path)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

import tensilekit
from tensilekit.errors import LibraryFormatError, TensilekitError
from tensilekit.io import master_io
from tensilekit.model.solution import MasterSolution


def _damaged(corpus: Path) -> tuple[bytes, int]:
    """aldebaran_SB_NN.yaml with one solution's depthU made 0, and the line it is on."""
    text = (corpus / "masters" / "aldebaran_SB_NN.yaml").read_text()
    at = text.index("depthU: ", text.index("solutions:") + 40_000)
    damaged = text[:at] + "depthU: 0" + text[text.index("\n", at) :]
    return gzip.compress(damaged.encode()), text.count("\n", 0, at) + 1


def test_an_error_in_a_master_read_from_bytes_still_names_its_line(corpus: Path) -> None:
    data, line = _damaged(corpus)
    with pytest.raises(LibraryFormatError) as info:
        tensilekit.loads(data, source="damaged.yaml.gz")
    location = info.value.location
    assert location is not None and location.line == line and location.col is not None
    assert location.path is not None and location.path.endswith("sizeMapping.depthU")
    with pytest.raises(LibraryFormatError) as again:
        master_io.loads_master(data, "damaged.yaml.gz")
    assert again.value.location == location


def test_a_valid_master_is_modelled_without_decoding_its_text_again(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = master_io.text_again

    def counted(data: bytes, source: str | None = None) -> object:
        again = real(data, source)

        def text() -> str:
            calls.append(1)
            return again()

        return text

    monkeypatch.setattr(master_io, "text_again", counted)
    monkeypatch.setattr(tensilekit.api, "text_again", counted)
    data = gzip.compress((corpus / "masters" / "aldebaran_SB_NN.yaml").read_bytes())
    assert len(tensilekit.loads(data, source="ok.yaml.gz").solutions) == 284
    assert calls == []


def test_a_master_cut_short_is_located_through_the_text_function(corpus: Path) -> None:
    text = (corpus / "masters" / "aldebaran_SB_NN.yaml").read_text()
    cut = text[: text.index("solutions:")]
    data = cut.encode()
    decoded, _, _ = master_io.decode(data, "cut.yaml")
    with pytest.raises(TensilekitError) as info:
        master_io.master_from_data(decoded, source="cut.yaml", text=master_io.text_again(data, "cut.yaml"))
    assert info.value.location is not None and info.value.location.line == cut.count("\n")
    with pytest.raises(TensilekitError) as whole:
        master_io.master_from_data(decoded, source="cut.yaml", text=cut)
    assert str(whole.value) == str(info.value)


def _read_both(data: bytes, source: str) -> tuple[Any, Any]:
    """The master ``data`` holds, read part by part (``decode(models=True)``) and read whole."""
    results = []
    for models in (True, False):
        try:
            decoded, _, text = master_io.decode(data, source, models=models)
            results.append(master_io.master_from_data(decoded, source=source, text=text))
        except LibraryFormatError as error:
            results.append((str(error), error.location, [(str(e), e.location) for e in error.related]))
    return results[0], results[1]


def test_a_master_read_part_by_part_is_the_master_read_whole(corpus: Path) -> None:
    """A YAML master cut into its top-level parts is modelled one solution at a time (its plain
    tree is never whole: rocBLAS_Full's peak ~690 -> ~545 MB, its key walk gone); the model is the
    one of the whole tree, and the keys it keeps are one string per spelling."""
    for name in ("aldebaran_NN_mixed", "aldebaran_DB_TN_dtree"):
        data = (corpus / "masters" / f"{name}.yaml").read_bytes()
        decoded, _, _ = master_io.decode(data, name, models=True)
        assert all(isinstance(s, MasterSolution) for s in decoded["solutions"]), name
        assert not isinstance(decoded["library"], dict), name
        by_parts, whole = _read_both(data, name)
        assert by_parts == whole and by_parts.to_raw() == whole.to_raw(), name
        assert [list(s.raw()) for s in by_parts.solutions] == [list(s.raw()) for s in whole.solutions]
        first, last = by_parts.solutions[0], by_parts.solutions[-1]
        for a, b in ((first.problem_type, last.problem_type), (first.model_extra, last.model_extra)):
            assert a and b
            kept = {key: key for key in a}
            assert all(kept[key] is key for key in b if key in kept), name  # one string per spelling


def test_a_part_that_does_not_validate_is_reported_as_the_whole_read_reports_it(corpus: Path) -> None:
    """A solution or library part that fails stays plain and is validated again in place: the
    error, its location and the related ones are those of the whole read."""
    text = (corpus / "masters" / "aldebaran_SB_NN.yaml").read_text()
    solution = text.index("depthU: ", text.index("solutions:") + 40_000)
    entry = text.index("speed: ", text.index("table:"))
    damaged = {
        "solution": text[:solution] + "depthU: 0" + text[text.index("\n", solution) :],
        "library": text[:entry] + "speed: -1" + text[text.index("\n", entry) :],
        "both": text[:entry] + "speed: -1" + text[text.index("\n", entry) : solution] + "depthU: x"
        + text[text.index("\n", solution) :],
    }  # fmt: skip
    for name, spelled in damaged.items():
        by_parts, whole = _read_both(gzip.compress(spelled.encode()), f"{name}.yaml.gz")
        assert isinstance(by_parts, tuple) and by_parts == whole, name
        assert by_parts[1].line is not None and bool(by_parts[2]) == (name == "both"), name

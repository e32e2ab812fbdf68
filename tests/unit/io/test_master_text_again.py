"""A master read from bytes is modelled without its YAML text beside it (78 MB for rocBLAS_Full):
only an error decodes the text again, and it is located as before (file, line, column, path)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import tensilekit
from tensilekit.errors import LibraryFormatError, TensilekitError
from tensilekit.io import master_io


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

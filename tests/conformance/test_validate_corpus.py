"""`tensilekit validate` accepts every file AMD ships (logic, generated masters, host-lib masters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensilekit.inspect import validate_paths


@pytest.mark.parametrize("folder", ["logic", "masters", "masterlib", "merge"])
def test_corpus_validates(corpus: Path, folder: str) -> None:
    results = validate_paths([corpus / folder])
    assert results, f"no library files found under {folder}/"
    failed = {
        result.path: [f.message for f in result.findings if f.severity == "error"]
        for result in results
        if not result.ok
    }
    assert not failed, failed

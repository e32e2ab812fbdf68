"""A full disk, a read-only file system or a refused permission on an output (issue 23 item 13).

Before: "internal error ... a bug in tensilekit" (exit 70). Now :class:`OutputNotWritable` names
the path (exit 4, the system failed), the old output is unchanged and no temporary is left, in
``io.atomic`` and in ``tune``'s own run-directory writers. Tests may run as root, which ignores
``chmod``: the refusals are injected as the ``OSError`` the kernel gives.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tensilekit.cli.main import cli
from tensilekit.errors import OutputNotWritable
from tensilekit.io.atomic import atomic_open, file_set, write_text_atomic
from tensilekit.pipeline.resilience import FailureRecord, write_failure_record
from tensilekit.pipeline.stage import _write_cache_entry

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SAMPLE = FIXTURES / "masters" / "coverage_equality_gfx90a.yaml"
REFUSALS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT]


def _refuse(code: int, filename: str | None = None) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, os.strerror(code), *([filename] if filename else []))

    return refuse


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, name: str, code: int, nth: int = 1) -> None:
    """``os.<name>`` raises ``code`` from its ``nth`` call on."""
    real = getattr(os, name)
    calls = {"n": 0}

    def maybe(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] >= nth:
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, maybe)


@pytest.mark.parametrize("code", REFUSALS)
def test_a_refused_write_names_the_path_and_changes_nothing(
    code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _refuse(code))  # the data reaches the disk only here
    with pytest.raises(OutputNotWritable) as caught:
        write_text_atomic(target, "new\n" * 1000)
    assert caught.value.location is not None and caught.value.location.file == str(target)
    assert caught.value.errno == code and caught.value.exit_code == 4
    assert os.strerror(code).lower() in caught.value.message
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.yaml"]  # no temporary left


def test_a_read_only_folder_refuses_the_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sub" / "out.dat"
    real_open = os.open

    def open_refused(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_refused)
    with pytest.raises(OutputNotWritable, match="read-only file system"):
        with atomic_open(target, "wb") as handle:
            handle.write(b"x")
    assert not target.exists()


def test_an_input_error_inside_the_block_is_not_called_an_output_error(tmp_path: Path) -> None:
    def read_an_input() -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/somewhere/else/input.yaml")

    with pytest.raises(PermissionError):
        with atomic_open(tmp_path / "out.yaml") as handle:
            handle.write("partial")
            read_an_input()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_refused_folder_write_leaves_the_old_set(code: int, tmp_path: Path) -> None:
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "old.dat").write_bytes(b"old")
    with pytest.raises(OutputNotWritable) as caught:
        with file_set(folder) as staged:
            (staged / "new.dat").write_bytes(b"new")
            # the second file does not fit: the kernel names the staged file
            raise OSError(code, os.strerror(code), str(staged / "second.dat"))
    assert caught.value.location is not None and caught.value.location.file == str(folder)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["library"]
    assert sorted(path.name for path in folder.iterdir()) == ["old.dat"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_convert_exits_4_with_the_path(code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.dat"
    monkeypatch.setattr(os, "fsync", _refuse(code))
    result = CliRunner().invoke(cli, ["convert", str(SAMPLE), str(target), "--json"])
    assert result.exit_code == 4, result.output
    assert f"error: {target}: cannot write the output" in result.stderr
    record = json.loads(result.stdout.splitlines()[-1])
    assert record["exit_code"] == 4 and record["location"] == str(target)
    assert list(tmp_path.iterdir()) == []


def test_coverage_into_a_read_only_folder_is_exit_4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "mkdir", _refuse(errno.EROFS, str(tmp_path / "cov")))
    log = FIXTURES / "logs" / "coverage_sgemm_mask64.log"
    result = CliRunner().invoke(cli, ["coverage", str(log), "--library", str(SAMPLE), "-o", str(tmp_path / "cov")])
    assert result.exit_code == 4, result.output
    assert "read-only file system" in result.stderr and "bug" not in result.stderr


def _partial_then_enospc(monkeypatch: pytest.MonkeyPatch, code: int = errno.ENOSPC) -> None:
    real = Path.write_text

    def write_half(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        real(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(Path, "write_text", write_half)


def test_tune_cache_and_failure_writers_leave_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _partial_then_enospc(monkeypatch)
    with pytest.raises(OSError):
        _write_cache_entry(tmp_path / "cache" / "job.json", '{"result": 1}')
    with pytest.raises(OSError):
        write_failure_record(tmp_path / "failures" / "job.json", FailureRecord(key="k", failures=1))
    leftovers = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert leftovers == []


@pytest.mark.parametrize(("code", "said"), [(errno.ENOSPC, "no space left on device"), (errno.EACCES, "permission")])
def test_a_refusal_outside_io_atomic_is_exit_4_not_a_bug(
    code: int, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error boundary's safety net: tune's job-cache entries are plain writes (no io.atomic).
    A refused permission is said as such (it may be a read or a run as well as a write)."""
    _partial_then_enospc(monkeypatch, code)
    workdir = tmp_path / "W"
    log = FIXTURES / "logs" / "llama3_8b_bf16_mask64.log"
    result = CliRunner().invoke(cli, ["tune", str(log), "--arch", "gfx942", "--workdir", str(workdir), "--simulate"])
    assert result.exit_code == 4, result.output
    assert said in result.stderr.lower() and "bug" not in result.stderr
    assert [path for path in tmp_path.rglob("*.tmp*")] == []


@pytest.mark.parametrize("nth", [3, 12, 40])
def test_tune_on_a_full_disk_exits_4_and_leaves_no_temporary(
    nth: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / "W"
    _fail_on_call(monkeypatch, "fsync", errno.ENOSPC, nth)  # the disk fills up at the nth durable write
    log = FIXTURES / "logs" / "llama3_8b_bf16_mask64.log"
    result = CliRunner().invoke(cli, ["tune", str(log), "--arch", "gfx942", "--workdir", str(workdir), "--simulate"])
    assert result.exit_code == 4, result.output
    assert "no space left on device" in result.stderr and f"{workdir}" in result.stderr
    assert [path for path in tmp_path.rglob("*.tmp*")] == []

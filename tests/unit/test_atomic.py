"""Atomic writes: a complete new file or the old one, never a partial file or a stray temp."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memsql_assets.lib.atomic import _temp_beside, atomic_path, write_text_atomic


def _temps(folder: Path) -> list[Path]:
    return list(folder.glob(".*.tmp"))


def test_write_text_atomic_creates_folders_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "record.json"
    write_text_atomic(target, "first", durable=False)
    write_text_atomic(target, "second ✓")
    assert target.read_text(encoding="utf-8") == "second ✓"
    assert _temps(target.parent) == []


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    write_text_atomic(target, "old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(target, "bad \udc80 surrogate")
    assert target.read_text(encoding="utf-8") == "old"
    assert _temps(tmp_path) == []


def test_leftover_temp_of_a_killed_writer_is_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    # A writer killed mid-write leaves its temp; a later writer with the same pid and thread id
    # must neither append to it nor leave it behind.
    _temp_beside(target).write_text("partial garbage that is longer than the new text")
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert _temps(tmp_path) == []


def test_atomic_path_yields_a_missing_path_and_cleans_up_on_error(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "db.sqlite"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        assert not tmp.exists()
        tmp.write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert not target.exists()
    assert _temps(target.parent) == []


def test_concurrent_writers_of_one_target_never_leave_a_mixed_file(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    texts = [str(i) * 50_000 for i in range(8)]
    errors: list[BaseException] = []

    def writer(text: str) -> None:
        try:
            for _ in range(20):
                write_text_atomic(target, text, durable=False)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_text() in texts
    assert _temps(tmp_path) == []

"""Atomic file writes: readers (dbt, Dagster, people) never see a half-written file."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: Path, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside `target`; on success it replaces `target` in one rename.

    `durable=False` skips the fsync: the rename still means a reader (or a process killed with -9)
    sees the old file or the new one, never half of one; only an OS crash could lose the new file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    tmp_path.unlink()  # writers (sqlite, pyarrow) create the file themselves
    try:
        yield tmp_path
        if durable:
            with open(tmp_path, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text_atomic(target: Path, text: str, durable: bool = True) -> None:
    with atomic_path(target, durable) as tmp:
        tmp.write_text(text, encoding="utf-8")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()

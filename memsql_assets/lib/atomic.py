"""Atomic file writes: readers (dbt, Dagster, people) never see a half-written file."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

from memsql_assets.lib.errors import MemsqlError

# Workers of the scale-out profile share one folder from several machines, where pids and thread
# idents repeat (containers all start at pid 1): the host name keeps their temporary names apart.
_HOST = socket.gethostname()


class DiskFullError(MemsqlError):
    """A write failed for want of space. The file it was for is left as it was (old or absent)."""

    def __init__(self, path: Path):
        self.path = path
        super().__init__(f"{path}: no space left on device; free some space and re-run to resume")


_FULL_TEXTS = ("No space left on device", "database or disk is full")  # pyarrow's and SQLite's words


def disk_full(exc: BaseException) -> bool:
    """`exc`, or an exception it was raised from, says the disk (or the user's quota) is full."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if getattr(current, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or any(t in str(current) for t in _FULL_TEXTS):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


@contextlib.contextmanager
def _naming_a_full_disk(target: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        if disk_full(exc):
            raise DiskFullError(target) from exc
        raise


def _temp_beside(target: Path) -> Path:
    """A temporary name beside `target` that no concurrent writer shares: one process and thread
    of one host write one file at a time. A leftover of a killed process is overwritten, never
    renamed: only a complete write is. (tempfile.mkstemp would cost four more syscalls per write,
    and each one is a GIL hand-off for a writer thread of a busy event loop.)"""
    return target.with_name(f".{target.name}.{_HOST}-{os.getpid()}-{threading.get_ident()}.tmp")


@contextlib.contextmanager
def atomic_path(target: Path, durable: bool = True) -> Iterator[Path]:
    """Yield a path beside `target` that does not exist; on success it replaces `target` in one
    rename. For writers that create the file themselves (sqlite, pyarrow, zip extraction).

    `durable=False` skips the fsync: the rename still means a reader (or a process killed with -9)
    sees the old file or the new one, never half of one; only an OS crash could lose the new file.
    """
    tmp = _temp_beside(target)
    try:
        with _naming_a_full_disk(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            yield tmp
            if durable:
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
            os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(target: Path, text: str, durable: bool = True) -> None:
    """Open, write, rename: the fewest syscalls (the folder is made only when the open says so)."""
    with _naming_a_full_disk(target):
        _write_text(target, text, durable)


def _write_text(target: Path, text: str, durable: bool) -> None:
    tmp = _temp_beside(target)
    try:
        fh = open(tmp, "w", encoding="utf-8")  # noqa: SIM115 - closed below, before the rename
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
        fh = open(tmp, "w", encoding="utf-8")  # noqa: SIM115
    try:
        with fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_tree(root: Path, exclude: tuple[str, ...] = ()) -> str:
    """sha256 over a folder's files (relative names and contents, in name order), but those named in `exclude`."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name not in exclude):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + sha256_file(path).encode())
    return digest.hexdigest()

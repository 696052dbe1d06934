"""Content fingerprints that decide whether earlier work is still current, and stamps that record them.

`memsql run` and the stale-partition schedule recompute only what is out of date: a partition whose
result was computed from the same benchmark, source data, model configuration, harness code,
memory contents and settings is current, and so is a main job or a metrics build whose inputs and
outputs are unchanged. Fingerprints hash contents (or, for large outputs that only memsql writes,
the identity of the file: path, inode, size and modification time), never wall-clock time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memsql_assets.lib.atomic import write_text_atomic

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # memsql_assets/
CODE_SUFFIXES = (".py", ".yaml", ".yml", ".jsonl", ".json", ".sql", ".j2", ".html")


def digest(value: Any) -> str:
    """A short hash of a JSON-serialisable value (sorted keys: dict order never matters)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def files_under(root: Path, suffixes: Iterable[str] | None = None) -> list[Path]:
    if not root.exists():
        return []
    wanted = tuple(suffixes) if suffixes is not None else None
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and (wanted is None or p.name.endswith(wanted))
    )


def content_hash(paths: Iterable[Path], base: Path | None = None) -> str:
    """sha256 over the files' relative names and bytes (missing files count as absent)."""
    h = hashlib.sha256()
    for path in paths:
        if not path.is_file():
            continue
        name = str(path.relative_to(base)) if base is not None else str(path)
        h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def tree_hash(root: Path, suffixes: Iterable[str] | None = None) -> str:
    return content_hash(files_under(root, suffixes), root)


def code_hash(*packages: str) -> str:
    """Hash of memsql's own code and packaged data in the given subpackages (e.g. "lib/agent")."""
    return digest({p: tree_hash(PACKAGE_ROOT / p, CODE_SUFFIXES) for p in packages})


def file_identity(path: Path) -> list[Any] | None:
    """(inode, size, mtime_ns) of a file memsql itself writes (atomically: a rewrite is a new inode)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def read_stamp(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_stamp(path: Path, stamp: Mapping[str, Any]) -> None:
    write_text_atomic(path, json.dumps(stamp, indent=2, sort_keys=True, default=str) + "\n")


def first_difference(recorded: Mapping[str, Any] | None, current: Mapping[str, Any]) -> str | None:
    """The first key (in `current`'s order) whose value differs from the recorded one; None if all agree."""
    if recorded is None:
        return "missing"
    for key, value in current.items():
        if recorded.get(key) != value:
            return key
    return None

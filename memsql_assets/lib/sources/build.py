"""Build one source database (embedded builder or real-data adapter, widened for the `wide`
variant: wide.py) and describe the result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memsql_assets.lib.atomic import atomic_path, sha256_file
from memsql_assets.lib.sources import bird, northwind, sec
from memsql_assets.lib.sources.config import SourceSpec
from memsql_assets.lib.sources.sqlite_db import read_meta
from memsql_assets.lib.sources.wide import VARIANTS, widen
from memsql_assets.lib.sql.sandbox import check_sqlite_file, open_readonly
from memsql_assets.lib.sql.schema import row_counts

_MODULES = {"bird_financial": bird, "sec_edgar": sec, "northwind": northwind}


@dataclass(frozen=True)
class BuiltSource:
    name: str
    kind: str
    path: Path
    synthetic: bool
    row_counts: dict[str, int]
    content_hash: str
    meta: dict[str, object]

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "path": str(self.path),
            "synthetic": self.synthetic,
            "row_counts": self.row_counts,
            "content_hash": self.content_hash,
        }


def build_source(spec: SourceSpec, target: Path) -> BuiltSource:
    """Write `target` atomically from the spec; a failure leaves any earlier file untouched."""
    if spec.variant == VARIANTS[0]:
        _build(spec, target)
    else:
        with atomic_path(target) as tmp:
            _build(spec, tmp)
            widen(tmp)
    return describe_source(spec.name, target)


def _build(spec: SourceSpec, target: Path) -> None:
    module = _MODULES[spec.name]
    if spec.kind == "embedded":
        module.build_embedded(target, seed=spec.seed, options=spec.options)
    else:
        assert spec.real_path is not None  # load_sources guarantees it
        module.build_real(target, spec.real_path)


def describe_source(name: str, path: Path) -> BuiltSource:
    """Inspect an already built source database (raises SourceError if missing or corrupt)."""
    check_sqlite_file(path)
    conn = open_readonly(path)
    try:
        meta = read_meta(conn)
        counts = row_counts(conn)
    finally:
        conn.close()
    return BuiltSource(
        name=name,
        kind=str(meta.get("kind", "unknown")),
        path=path,
        synthetic=bool(meta.get("synthetic", False)),
        row_counts=counts,
        content_hash=sha256_file(path),
        meta=meta,
    )

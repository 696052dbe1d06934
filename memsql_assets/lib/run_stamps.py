"""What `memsql run` may skip: the main job and the metrics build, when nothing they read has changed.

After a successful main job (every check passed) or metrics build, `memsql run` writes a stamp: the
fingerprint of what the step read (memsql's code, configuration, the source files, the result files)
and of what it wrote (the files' identities). The next run skips the step when both fingerprints
still match, that is, when neither the inputs changed nor anyone touched the outputs. Partitions
have their own, finer test (harness.evaluate.partition_staleness). `memsql run --force` skips nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memsql_assets.lib.freshness import (
    code_hash,
    content_hash,
    digest,
    file_identity,
    files_under,
    read_stamp,
    tree_hash,
    write_stamp,
)
from memsql_assets.lib.paths import REPO_ROOT, benchmark_dir, sources_dir
from memsql_assets.lib.sources.config import load_sources, sources_file

DBT_PROJECT = REPO_ROOT / "dbt_project"
EXPECTATIONS = REPO_ROOT / "expectations"


def state_dir(home: Path) -> Path:
    return home / "state"


def _identities(paths: list[Path], base: Path) -> dict[str, Any]:
    return {str(p.relative_to(base)): file_identity(p) for p in paths}


def _real_source_files(spec_path: Path | None) -> list[Path]:
    if spec_path is None:
        return []
    return files_under(spec_path) if spec_path.is_dir() else [spec_path]


def main_job_fingerprint(home: Path) -> dict[str, str]:
    """Inputs: memsql's code, the sources file and MEMSQL_* settings, the real source files, the GX suites.
    Outputs: the source databases, the benchmark files and the trajectory store's files."""
    specs = load_sources()
    real_files = [f for spec in specs.values() for f in _real_source_files(spec.real_path)]
    return {
        "code": code_hash("."),
        "config": digest(
            {
                "sources_file": content_hash([sources_file()]),
                "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith("MEMSQL_")},
                "real_sources": {str(f): file_identity(f) for f in real_files},
                "expectations": tree_hash(EXPECTATIONS),
            }
        ),
        "outputs": digest(
            {
                "sources": _identities(files_under(sources_dir(home)), home),
                "benchmark": _identities(files_under(benchmark_dir(home)), home),
                "trajectories": _identities(files_under(home / "trajectories"), home),
                "chroma": (home / "chroma").is_dir(),
            }
        ),
    }


def metrics_fingerprint(home: Path) -> dict[str, str]:
    """Inputs: every partition's published files, the dbt project, the report code. Outputs: warehouse, report."""
    dbt_files = [
        p
        for p in files_under(DBT_PROJECT)
        if not {"target", "logs", "dbt_packages"} & set(p.relative_to(DBT_PROJECT).parts)
    ]
    return {
        "results": digest(_identities(files_under(home / "results"), home)),
        "dbt_project": content_hash(dbt_files, DBT_PROJECT),
        "code": code_hash("lib/report", "defs/metrics"),
        "outputs": digest(
            {
                "warehouse": file_identity(home / "dbt" / "memsql.duckdb"),
                "report": _identities(files_under(home / "report"), home),
            }
        ),
    }


def stamp_path(home: Path, step: str) -> Path:
    return state_dir(home) / f"{step}.json"


def current_stamp(home: Path, step: str, fingerprint: dict[str, str]) -> dict[str, Any] | None:
    """The step's stamp if it was written for exactly this fingerprint, else None."""
    stamp = read_stamp(stamp_path(home, step))
    if stamp is None or stamp.get("fingerprint") != fingerprint:
        return None
    return stamp


def record(home: Path, step: str, fingerprint: dict[str, str], **details: Any) -> None:
    write_stamp(stamp_path(home, step), {"fingerprint": fingerprint, **details})

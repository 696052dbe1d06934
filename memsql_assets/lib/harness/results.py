"""Per-partition result files: one row per turn, written atomically, laid out for dbt.

`results/model=<key>/condition=<name>/turn_results.parquet` is the only file dbt reads; while a
partition runs, finished sessions are checkpointed under `_progress/` beside it (never read by
dbt), which is what a killed run resumes from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memsql_assets.lib.atomic import atomic_path, write_text_atomic

RESULT_FILE = "turn_results.parquet"
SUMMARY_FILE = "summary.json"
SCHEMA_VERSION = 1

RESULT_SCHEMA = pa.schema(
    [
        ("session_id", pa.string()),
        ("source", pa.string()),
        ("tier", pa.int32()),
        ("turn_index", pa.int32()),
        ("memory_critical", pa.bool_()),
        ("model", pa.string()),
        ("condition", pa.string()),
        ("raw_output", pa.string()),
        ("extracted_sql", pa.string()),
        ("ex_strict", pa.bool_()),
        ("ex_bag", pa.bool_()),
        ("ex_set", pa.bool_()),
        ("error_class", pa.string()),
        ("error_message", pa.string()),
        ("contaminated", pa.bool_()),
        ("gt_error", pa.string()),
        ("model_error_type", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("latency_s", pa.float64()),
        ("cost_usd", pa.float64()),
        ("cache_hit", pa.bool_()),
        ("attempts", pa.int32()),
        ("prompt_hash", pa.string()),
        ("request_key", pa.string()),
        ("resolved_keys", pa.string()),
        ("missing_keys", pa.string()),
        ("retrieval_ms", pa.float64()),
        ("benchmark_version", pa.string()),
        ("schema_version", pa.int32()),
    ]
)
COLUMNS = tuple(RESULT_SCHEMA.names)


def partition_dir(home: Path, model: str, condition: str) -> Path:
    return home / "results" / f"model={model}" / f"condition={condition}"


def progress_dir(home: Path, model: str, condition: str) -> Path:
    return partition_dir(home, model, condition) / "_progress"


def write_session_checkpoint(directory: Path, session_id: str, rows: list[Mapping[str, Any]]) -> None:
    write_text_atomic(directory / f"{session_id}.json", json.dumps(rows, sort_keys=True, ensure_ascii=False))


def read_checkpoints(directory: Path) -> dict[str, list[dict[str, Any]]]:
    if not directory.exists():
        return {}
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(directory.glob("*.json"))
        if not p.name.startswith("_")
    }


def write_results(target_dir: Path, rows: Iterable[Mapping[str, Any]], summary: Mapping[str, Any]) -> Path:
    ordered = sorted(rows, key=lambda r: (r["session_id"], r["turn_index"]))
    table = pa.table({c: [r.get(c) for r in ordered] for c in COLUMNS}, schema=RESULT_SCHEMA)
    target = target_dir / RESULT_FILE
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    write_text_atomic(target_dir / SUMMARY_FILE, json.dumps(summary, indent=2, sort_keys=True))
    return target


def read_results(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()

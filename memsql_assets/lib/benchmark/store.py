"""Benchmark files a person can open: turns.jsonl (canonical), turns/sessions Parquet for dbt.

JSON-valued fields (state_updates, stated_values, guess_values, profile) are JSON text in Parquet so the
columns keep one type; everything is written atomically and byte-identically for equal input.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memsql_assets.lib.atomic import atomic_path, write_text_atomic
from memsql_assets.lib.benchmark.extended.build import ExtendedTurn
from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.other_profiles import (
    OTHER_PROFILES_FILE,
    extended_walk,
    other_profile_table,
    paper_walk,
)
from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.paths import SESSIONS_FILE, TURNS_FILE, TURNS_PARQUET_FILE


def turn_id(turn: Mapping[str, Any]) -> str:
    """`<session_id>#<turn_index>`: how the harness, the request store's cells and retries name a turn."""
    return f"{turn['session_id']}#{turn['turn_index']}"


EXPORT_FIELDS = (
    "session_id",
    "source",
    "tier",
    "turn_index",
    "question",
    "gt_sql",
    "fallback_sql",
    "requires_prior_context",
    "referenced_context_keys",
    "state_updates",
    "memory_critical",
    "output_requirements",
    "guess_rate",
)

TURNS_SCHEMA = pa.schema(
    [
        ("session_id", pa.string()),
        ("source", pa.string()),
        ("tier", pa.int32()),
        ("turn_index", pa.int32()),
        ("question", pa.string()),
        ("gt_sql", pa.string()),
        ("fallback_sql", pa.string()),
        ("requires_prior_context", pa.bool_()),
        ("referenced_context_keys", pa.list_(pa.string())),
        ("state_updates", pa.string()),
        ("memory_critical", pa.bool_()),
        ("sql_template", pa.string()),
        ("stated_values", pa.string()),
        ("variant_id", pa.string()),
        ("output_requirements", pa.string()),
        ("paraphrase_sql", pa.string()),
        ("guess_values", pa.string()),
        ("guess_rate", pa.float64()),
    ]
)
JSON_TURN_FIELDS = ("state_updates", "stated_values", "guess_values")
# The extended benchmark's turns carry what its phenomena need (lib/benchmark/extended/build.py ExtendedTurn).
EXTENDED_TURNS_SCHEMA = pa.schema(
    [
        *TURNS_SCHEMA,
        ("benchmark", pa.string()),
        ("tag", pa.string()),
        ("stale_gt_sql", pa.string()),
        ("recall_distance", pa.int32()),
        ("phrasing_index", pa.int32()),
        ("explicit_marker", pa.bool_()),
        ("twin_session_id", pa.string()),
        ("analyst", pa.string()),
        ("continues_session_id", pa.string()),
    ]
)
SESSIONS_SCHEMA = pa.schema(
    [
        ("session_id", pa.string()),
        ("source", pa.string()),
        ("source_name", pa.string()),
        ("tier", pa.int32()),
        ("n_turns", pa.int32()),
        ("variant_id", pa.string()),
        ("profile", pa.string()),
    ]
)
# An extended session names its analyst (lib/benchmark/extended/build.py ExtendedSession).
EXTENDED_SESSIONS_SCHEMA = pa.schema([*SESSIONS_SCHEMA, ("analyst", pa.string())])


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def write_profiles(path: Path, profiles: Mapping[str, Mapping[str, list[Profile]]]) -> None:
    write_text_atomic(path, _dumps(profiles) + "\n")


def read_profiles(path: Path) -> dict[str, dict[str, list[Profile]]]:
    if not path.exists():
        raise SourceError(path, "profiles file does not exist", "the output of the profiles asset")
    return json.loads(path.read_text(encoding="utf-8"))


def write_benchmark(
    out_dir: Path, sessions: list[Session], turns_schema: pa.Schema = TURNS_SCHEMA
) -> dict[str, Path]:
    turns = [dataclasses.asdict(t) for s in sessions for t in s.turns]
    paths = {
        "turns_jsonl": out_dir / TURNS_FILE,
        "turns_parquet": out_dir / TURNS_PARQUET_FILE,
        "sessions_parquet": out_dir / SESSIONS_FILE,
        "other_profile_sql": out_dir / OTHER_PROFILES_FILE,
    }
    write_text_atomic(paths["turns_jsonl"], "".join(_dumps(t) + "\n" for t in turns))
    turn_cols = {f.name: [] for f in turns_schema}
    for t in turns:
        for name in turn_cols:
            value = t[name]
            turn_cols[name].append(_dumps(value) if name in JSON_TURN_FIELDS else value)
    _write_parquet(paths["turns_parquet"], pa.table(turn_cols, schema=turns_schema))
    extended = any(isinstance(t, ExtendedTurn) for s in sessions for t in s.turns)
    sessions_schema = EXTENDED_SESSIONS_SCHEMA if extended else SESSIONS_SCHEMA
    sess_cols: dict[str, list[Any]] = {f.name: [] for f in sessions_schema}
    for s in sessions:
        for name in sess_cols:
            value = getattr(s, name)
            sess_cols[name].append(_dumps(value) if name == "profile" else value)
    _write_parquet(paths["sessions_parquet"], pa.table(sess_cols, schema=sessions_schema))
    walk = extended_walk() if extended else paper_walk()
    _write_parquet(paths["other_profile_sql"], other_profile_table(sessions, walk))
    return paths


def _write_parquet(target: Path, table: pa.Table) -> None:
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def read_turns(bench_dir: Path) -> list[dict[str, Any]]:
    path = bench_dir / TURNS_FILE
    if not path.exists():
        raise SourceError(path, "benchmark turns file does not exist", "the output of the sessions asset")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def export_jsonl(turns: Iterable[Mapping[str, Any]], target: Path) -> int:
    """`memsql export-benchmark`: one JSON object per turn: the SPEC §1 fields and its output requirements."""
    lines = [_dumps({k: t[k] for k in EXPORT_FIELDS}) + "\n" for t in turns]
    write_text_atomic(target, "".join(lines))
    return len(lines)

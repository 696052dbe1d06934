"""Per-partition result files: one row per turn, written atomically, laid out for dbt.

`results/model=<key>/condition=<name>/turn_results.parquet` is the partition's full evaluation, the
file the marts read: one row per turn and epoch (an epoch is one independent sample of every turn). While a partition runs, finished
sessions are checkpointed per epoch under `_progress/epoch=<n>/` beside it (never read by dbt),
which is what a killed run resumes from. A sample run (`sessions`) publishes under
`samples/model=<key>/condition=<name>/sessions=<n>/` instead, with its own checkpoints: it never
touches the partition's file, and dbt reads it only into the sample models. A gold-history run
(lib/history.py) publishes the same layout under results_gold/ (results_<benchmark>_gold/):
the marts read it only for the cascade, and it never replaces the model-history file.

Schema drift is checked on read, differently for the two kinds of file. A published result file
from another schema (other columns or types, another `schema_version`) is an error naming the
file, the field and the expected version: it is the record a person or dbt relies on, and guessing
would corrupt the metrics. A checkpoint from another schema is private scratch state: it is
discarded with a warning and its session redone (its model calls come back from the request store,
so that costs nothing), because refusing to resume would gain nothing. Older published schemas
from 2 on are read: they lack only the columns added since (ADDED_COLUMNS), whose rows take the
fill value TurnResult declares for each (epoch 1; reasoning_tokens null, not recorded; retries 0).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memsql_assets.lib.atomic import atomic_path, write_text_atomic
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.summary import PartitionSummary, read_summary, write_summary
from memsql_assets.lib.harness.turn_result import ADDED_COLUMNS, COLUMNS, RESULT_SCHEMA, SCHEMA_VERSION
from memsql_assets.lib.paths import results_root, samples_root
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, History

log = logging.getLogger(__name__)

RESULT_FILE = "turn_results.parquet"
# The row's one definition is TurnResult (turn_result.py): RESULT_SCHEMA, COLUMNS and ADDED_COLUMNS
# derive from its fields.
OLDEST_READABLE = 2
# Columns that record timing, caching or retry counts rather than what was computed: two runs of
# one partition (clean vs resumed, cold vs warm) must agree on every other column.
MEASUREMENT_COLUMNS = frozenset({"latency_s", "retrieval_ms", "cache_hit", "attempts"})


def comparable_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their measurement columns: what must be identical across equivalent runs."""
    return [{k: v for k, v in r.items() if k not in MEASUREMENT_COLUMNS} for r in rows]


class ResultSchemaError(MemsqlError):
    """A result file does not have this version's schema: names the file, the field and what was expected."""

    def __init__(self, path: object, field: str, problem: str):
        self.path = str(path)
        self.field = field
        super().__init__(
            f"{path}: field '{field}': {problem} (expected schema_version {SCHEMA_VERSION}); "
            "re-run the partition to rewrite it"
        )


def schema_problem(
    names: Iterable[str], types: Mapping[str, str] | None = None, columns: Sequence[str] = COLUMNS
) -> tuple[str, str] | None:
    """(field, problem) for the first way `names` (and their `types`, when known) differ from
    RESULT_SCHEMA (restricted to `columns`), else None. `schema_version` is checked first: it is
    what an older file lacks."""
    present = list(names)
    if "schema_version" not in present:
        return "schema_version", "missing (the file predates schema versioning)"
    for name in columns:
        if name not in present:
            return name, "missing"
    for name in present:
        if name not in columns:
            return name, "not a column of this schema"
    for name, actual in (types or {}).items():
        expected = str(RESULT_SCHEMA.field(name).type)
        if actual != expected:
            return name, f"has type {actual}, expected {expected}"
    return None


def _version_problem(versions: Iterable[Any]) -> tuple[str, str] | None:
    other = sorted({v for v in versions if v != SCHEMA_VERSION}, key=str)
    if other:
        return "schema_version", f"is {', '.join(map(str, other))}"
    return None


def partition_dir(
    home: Path, model: str, condition: str, benchmark: str = PAPER_BENCHMARK, history: History = History.MODEL
) -> Path:
    return results_root(home, benchmark, history) / f"model={model}" / f"condition={condition}"


def sample_dir(
    home: Path,
    model: str,
    condition: str,
    sessions: int,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> Path:
    """A sample run's own file, summary and checkpoints: never the partition's (dbt reads it apart)."""
    return samples_root(home, benchmark, history) / f"model={model}" / f"condition={condition}" / f"sessions={sessions}"


def output_dir(
    home: Path,
    model: str,
    condition: str,
    sessions: int | None = None,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> Path:
    """Where a run publishes: the partition's directory, or its sample's when `sessions` is set;
    a gold history's in its own tree (paths.results_root)."""
    if sessions is None:
        return partition_dir(home, model, condition, benchmark, history)
    return sample_dir(home, model, condition, sessions, benchmark, history)


def full_epochs(
    home: Path, model: str, condition: str, benchmark: str = PAPER_BENCHMARK, history: History = History.MODEL
) -> int:
    """The epochs of the partition's last full evaluation: what a re-evaluation asks for unless a
    full run asks for others (1 when it has none; a file from before samples lived apart may be a
    sample, whose epochs count for nothing)."""
    summary = read_summary(partition_dir(home, model, condition, benchmark, history))
    if summary is None or not summary.complete:
        return 1
    return summary.epochs


def progress_root(
    home: Path,
    model: str,
    condition: str,
    sessions: int | None = None,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> Path:
    """Every epoch's checkpoints of a running partition or sample (removed once its file is published)."""
    return output_dir(home, model, condition, sessions, benchmark, history) / "_progress"


def progress_dir(
    home: Path,
    model: str,
    condition: str,
    epoch: int = 1,
    sessions: int | None = None,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> Path:
    return progress_root(home, model, condition, sessions, benchmark, history) / f"epoch={epoch}"


def write_session_checkpoint(directory: Path, session_id: str, rows: Sequence[Mapping[str, Any]]) -> None:
    # Not fsynced: a checkpoint lost to an OS crash only means its session is redone.
    write_text_atomic(
        directory / f"{session_id}.json", json.dumps(rows, sort_keys=True, ensure_ascii=False), durable=False
    )


def _checkpoint_problem(rows: Any) -> tuple[str, str] | None:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return "(file)", "not a non-empty list of row objects"
    for row in rows:
        problem = schema_problem(row) or _version_problem([row.get("schema_version")])
        if problem:
            return problem
    return None


def read_checkpoints(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Finished sessions' rows by session id. A checkpoint that is unreadable or of another schema
    is skipped with a warning (its session is redone), never trusted and never fatal."""
    if not directory.exists():
        return {}
    done: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("_"):
            continue
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("%s: discarding unreadable checkpoint (%s); its session is redone", path, exc)
            continue
        problem = _checkpoint_problem(rows)
        if problem:
            log.warning(
                "%s: discarding checkpoint: field '%s' %s (expected schema_version %s); its session is redone",
                path,
                *problem,
                SCHEMA_VERSION,
            )
            continue
        done[path.stem] = rows
    return done


def write_result_table(target_dir: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """The partition's result file, atomically: its rows in (epoch, session, turn) order."""
    ordered = sorted(rows, key=lambda r: (r["epoch"], r["session_id"], r["turn_index"]))
    table = pa.table({c: [r.get(c) for r in ordered] for c in COLUMNS}, schema=RESULT_SCHEMA)
    target = target_dir / RESULT_FILE
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return target


def write_results(target_dir: Path, rows: Iterable[Mapping[str, Any]], summary: PartitionSummary) -> Path:
    """The published partition: its result file, then its summary."""
    target = write_result_table(target_dir, rows)
    write_summary(target_dir, summary)
    return target


def _lacking(table: pa.Table) -> list[str] | None:
    """For a published file of one older readable version, the ADDED_COLUMNS it lacks; else None."""
    if "schema_version" not in table.schema.names:
        return None
    versions = table.column("schema_version").unique().to_pylist()
    if len(versions) != 1 or not isinstance(versions[0], int):
        return None
    if not OLDEST_READABLE <= versions[0] < SCHEMA_VERSION:
        return None
    return [c for c, (since, _) in ADDED_COLUMNS.items() if since > versions[0]]


def check_result_table(path: Path, table: pa.Table) -> None:
    """Raise ResultSchemaError unless `table` (read from `path`) has exactly this version's schema
    (or an older readable version's, which lacks only the ADDED_COLUMNS after it)."""
    types = {f.name: str(f.type) for f in table.schema}
    lacking = _lacking(table)
    if lacking is not None:
        problem = schema_problem(table.schema.names, types, [c for c in COLUMNS if c not in lacking])
    else:
        problem = schema_problem(table.schema.names, types) or (
            _version_problem(table.column("schema_version").unique().to_pylist())
        )
    if problem:
        raise ResultSchemaError(path, *problem)


def read_results(path: Path) -> list[dict[str, Any]]:
    """The rows of a published result file, after checking its schema (other schemas are refused;
    an older readable file's rows come back with ADDED_COLUMNS' fill values)."""
    try:
        table = pq.read_table(path)
    except pa.ArrowInvalid as exc:
        raise ResultSchemaError(path, "(file)", f"not a readable Parquet file: {exc}") from None
    check_result_table(path, table)
    for name in _lacking(table) or []:
        field = RESULT_SCHEMA.field(name)
        table = table.append_column(field, pa.array([ADDED_COLUMNS[name][1]] * table.num_rows, field.type))
    return table.to_pylist()


def cascade_pair(
    home: Path, model: str, condition: str, benchmark: str = PAPER_BENCHMARK
) -> tuple[PartitionSummary, PartitionSummary] | None:
    """The (gold, model) history summaries of one model x condition when both are full evaluations of
    the same benchmark version: their EX difference is the cascade (lib/history.py)."""
    gold = read_summary(partition_dir(home, model, condition, benchmark, History.GOLD))
    own = read_summary(partition_dir(home, model, condition, benchmark, History.MODEL))
    if gold is None or own is None or not (gold.complete and own.complete):
        return None
    return (gold, own) if gold.benchmark_version == own.benchmark_version else None

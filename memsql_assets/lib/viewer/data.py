"""The viewer's data: every committed result file joined once with the benchmark's turns, in DuckDB.

Only published `turn_results.parquet` files are read: they are renamed into place whole, so a
partition being written shows its previous file (or nothing), never its checkpoints. A gold-history
evaluation (lib/history.py) is a partition of its own here, its key ending in `~gold`, its rows
with history `gold`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.results import (
    ADDED_COLUMNS,
    RESULT_FILE,
    RESULT_SCHEMA,
    check_result_table,
)
from memsql_assets.lib.harness.summary import read_summary
from memsql_assets.lib.paths import TURNS_PARQUET_FILE, benchmark_dir, results_root
from memsql_assets.lib.vocabulary import BENCHMARKS, PAPER_BENCHMARK, ErrorClass, History

TURN_COLUMNS = (
    "session_id",
    "turn_index",
    "question",
    "gt_sql",
    "output_requirements",
    "referenced_context_keys",
)
PAGE_SIZE = 50
# The list page's filters: query-string name -> the SQL it adds (values are bound, never spliced).
EQUALITY_FILTERS = (
    "benchmark",
    "context_mode",
    "history",
    "model",
    "condition",
    "source",
    "tier",
    "turn_index",
    "error_class",
    "epoch",
)


class NoResultsError(MemsqlError):
    """The home has no published result file yet."""


@dataclass(frozen=True)
class Partition:
    model: str
    condition: str
    path: Path
    benchmark: str = PAPER_BENCHMARK
    history: str = History.MODEL.value

    @property
    def key(self) -> str:
        """model/condition, with the benchmark after an @ when it is not the paper's, and ~gold for a
        gold-history evaluation."""
        at = "" if self.benchmark == PAPER_BENCHMARK else f"@{self.benchmark}"
        told = "" if self.history == History.MODEL else f"~{self.history}"
        return f"{self.model}/{self.condition}{at}{told}"

    @property
    def context_mode(self) -> str:
        """What the partition's memory was given, from its summary (none published: annotated)."""
        summary = read_summary(self.path.parent)
        return summary.context_mode if summary is not None else ContextMode.ANNOTATED.value


def partitions(home: Path) -> list[Partition]:
    """Every partition with a published result file, the paper benchmark's first, the model's own
    history before the gold one, in path order."""
    found = []
    for benchmark in BENCHMARKS:
        for history in History:
            for path in sorted(results_root(home, benchmark, history).glob(f"model=*/condition=*/{RESULT_FILE}")):
                model, condition = path.parent.parent.name.removeprefix("model="), path.parent.name
                found.append(Partition(model, condition.removeprefix("condition="), path, benchmark, history.value))
    return found


def _turn_files(home: Path, parts: list[Partition]) -> dict[str, Path]:
    """The turns file of each benchmark that `parts` evaluated."""
    return {b: benchmark_dir(home, b) / TURNS_PARQUET_FILE for b in dict.fromkeys(p.benchmark for p in parts)}


def _signature(parts: list[Partition], turns: dict[str, Path]) -> tuple:
    files = [p.path for p in parts] + list(turns.values())
    return tuple((str(f), f.stat().st_mtime_ns) for f in files)


def _with_benchmark(table: pa.Table, benchmark: str) -> pa.Table:
    return table.append_column("benchmark", pa.array([benchmark] * table.num_rows, pa.string()))


def _read_partition(p: Partition) -> pa.Table:
    table = pq.read_table(p.path)
    check_result_table(p.path, table)
    for name, (_, fill) in ADDED_COLUMNS.items():  # an older schema's file: what it lacks, as read_results does
        if name not in table.schema.names:
            field = RESULT_SCHEMA.field(name)
            table = table.append_column(field, pa.array([fill] * table.num_rows, field.type))
    table = table.append_column("context_mode", pa.array([p.context_mode] * table.num_rows, pa.string()))
    table = table.append_column("history", pa.array([p.history] * table.num_rows, pa.string()))
    return _with_benchmark(table.drop_columns(["schema_version"]), p.benchmark)


class TurnIndex:
    """The joined table `turns` (results x benchmark turns), rebuilt when a result file changes."""

    def __init__(self, home: Path):
        self.home = home
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self.partitions: list[Partition] = []

    def connection(self) -> duckdb.DuckDBPyConnection:
        parts = partitions(self.home)
        if not parts:
            raise NoResultsError(
                f"{self.home / 'results'}: no result file yet; produce some with `memsql run` "
                "(the reference models) or `memsql eval --model M --condition C`"
            )
        turns = _turn_files(self.home, parts)
        for path in turns.values():
            if not path.exists():
                raise MemsqlError(f"{path}: missing; `memsql run` builds the benchmark")
        with self._lock:
            sig = _signature(parts, turns)
            if sig != self._signature:
                self._con = self._build(parts, turns)
                self._signature, self.partitions = sig, parts
            return self._con.cursor()

    def partition(self, key: str) -> Partition | None:
        """The evaluated partition whose `key` this is."""
        self.connection()
        return next((p for p in self.partitions if p.key == key), None)

    def _build(self, parts: list[Partition], turns: dict[str, Path]) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect()
        results = pa.concat_tables([_read_partition(p) for p in parts], promote_options="default")
        bench = pa.concat_tables(
            [_with_benchmark(pq.read_table(path, columns=list(TURN_COLUMNS)), b) for b, path in turns.items()]
        )
        con.register("results_arrow", results)
        con.register("bench_arrow", bench)
        con.execute(
            "create table turns as select r.*, b.question, b.gt_sql, b.output_requirements, "
            "b.referenced_context_keys, r.error_class <> ? as failed, "
            "coalesce(r.missing_keys, '[]') <> '[]' as missing_context "
            "from results_arrow r left join bench_arrow b using (benchmark, session_id, turn_index)",
            [ErrorClass.CORRECT.value],
        )
        con.unregister("results_arrow")
        con.unregister("bench_arrow")
        return con

    def choices(self) -> dict[str, list[Any]]:
        """The values each list filter can take, for the filter form."""
        con = self.connection()
        return {
            col: [r[0] for r in con.execute(f"select distinct {col} from turns order by 1").fetchall()]
            for col in EQUALITY_FILTERS
        }


def where_clause(params: dict[str, str]) -> tuple[str, list[Any]]:
    """SQL conditions and their bound values for the list page's query string."""
    terms, values = [], []
    for col in EQUALITY_FILTERS:
        if params.get(col):
            terms.append(f"cast({col} as varchar) = ?")
            values.append(params[col])
    for flag, expression in (
        ("memory_critical", "memory_critical"),
        ("contaminated", "contaminated"),
        ("failed", "failed"),
        ("missing_context", "missing_context"),
        ("retried", "retries > 0"),
        ("stale_state", "coalesce(stale_state, false)"),
    ):
        if params.get(flag) in ("yes", "no"):
            terms.append(f"({expression}) = ?")
            values.append(params[flag] == "yes")
    if params.get("q"):
        terms.append("(question ilike ? or extracted_sql ilike ? or gt_sql ilike ?)")
        values += [f"%{params['q']}%"] * 3
    return (" where " + " and ".join(terms)) if terms else "", values


LIST_COLUMNS = (
    "benchmark",
    "context_mode",
    "history",
    "model",
    "condition",
    "session_id",
    "turn_index",
    "epoch",
    "source",
    "tier",
    "memory_critical",
    "error_class",
    "contaminated",
    "retries",
    "question",
    "extracted_sql",
    "gt_sql",
    "missing_keys",
)


def list_turns(index: TurnIndex, params: dict[str, str], page: int = 1) -> tuple[int, list[dict[str, Any]]]:
    """(matching rows, one page of them) in model, condition, epoch, session, turn order."""
    con = index.connection()
    where, values = where_clause(params)
    total = con.execute(f"select count(*) from turns{where}", values).fetchone()[0]
    rows = con.execute(
        f"select {', '.join(LIST_COLUMNS)} from turns{where} "
        "order by benchmark <> ?, benchmark, model, condition, epoch, session_id, turn_index limit ? offset ?",
        [*values, PAPER_BENCHMARK, PAGE_SIZE, (max(page, 1) - 1) * PAGE_SIZE],
    ).fetchall()
    return total, [dict(zip(LIST_COLUMNS, r, strict=True)) for r in rows]


def one_turn(
    index: TurnIndex, model: str, condition: str, session: str, turn: int, epoch: int, history: str = "model"
) -> dict | None:
    con = index.connection()
    cur = con.execute(
        "select * from turns where model = ? and condition = ? and session_id = ? and turn_index = ? and epoch = ? "
        "and history = ?",
        [model, condition, session, turn, epoch, history],
    )
    row = cur.fetchone()
    return dict(zip([d[0] for d in cur.description], row, strict=True)) if row else None


def flips(index: TurnIndex, left: Partition, right: Partition) -> list[dict[str, Any]]:
    """Turns (matched by session, turn and epoch) whose error class differs between two partitions
    (of one benchmark: another's sessions match none)."""
    con = index.connection()
    cols = ["session_id", "turn_index", "epoch", "source", "tier", "question", "l_class", "r_class"]
    rows = con.execute(
        "select l.session_id, l.turn_index, l.epoch, l.source, l.tier, l.question, l.error_class, r.error_class "
        "from turns l join turns r using (session_id, turn_index, epoch) "
        "where l.model = ? and l.condition = ? and l.benchmark = ? and l.history = ? and r.model = ? "
        "and r.condition = ? and r.benchmark = ? and r.history = ? "
        "and l.error_class <> r.error_class order by l.source, l.turn_index, l.session_id, l.epoch",
        [left.model, left.condition, left.benchmark, left.history]
        + [right.model, right.condition, right.benchmark, right.history],
    ).fetchall()
    return [dict(zip(cols, r, strict=True)) for r in rows]

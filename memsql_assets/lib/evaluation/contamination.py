"""Cross-session contamination (SPEC §3): a failed turn that took a value from another analyst's
session. `contamination_source` names that session; a turn is contaminated when it has one, for
either of two reasons (the first that holds):

- **By provenance** (annotated mode): the agent records which sessions' episodes supplied the
  turn's resolved keys (`Resolution.supplying_sessions`, lib/memory/resolution.py). The turn's
  result equals its ground truth as it reads in one of those sessions: the turn's variant walked with that session's profile (`OtherProfileSQL`).
- **By value** (either mode, `SessionValues`): the model's SQL compares with a literal
  (lib/sql/filters.py) that a session the memory retrieved for the turn bound or stated (the
  benchmark's annotations: `state_updates`, `stated_values`), where that session is another
  analyst's, and that no session of the turn's own analyst bound or stated, nor the turn's ground
  truth uses. An observed-mode answer mixes values from several retrieved sessions, so its result
  rarely equals one session's ground truth; the value it took still names its session. A value of
  the turn's own analyst (a stale one included: `stale_state` counts that) is never contamination.
  For a turn that re-uses an earlier result, a session also holds the literals of the results it
  returned or re-used: a later session that re-used another analyst's ranking binds none of its
  values, yet shows them in its SQL.

The paper's fallback (`fallback_match`): every memory-critical turn carries a `fallback_sql`, its
ground truth for the *next* session's profile. Sessions run in order, so under C and D that session
is never in memory yet; the check is kept because it is the paper's, and because a model may still
guess a popular value.

A correct turn is never contaminated; results compare strictly, like the headline EX.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from memsql_assets.lib.benchmark.other_profiles import OTHER_PROFILES_FILE
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.memory.episodic import analyst_peers
from memsql_assets.lib.paths import SESSIONS_FILE, TURNS_FILE
from memsql_assets.lib.sql.compare import Rows, strict_equal
from memsql_assets.lib.sql.filters import filters


def equals_other_answer(correct: bool, generated_rows: Rows | None, other_rows: Rows | None) -> bool:
    """True when a failed turn's rows equal another instantiation's rows (a fallback or another
    session's ground truth). False for a correct turn, when the generated SQL did not run (rows
    None), and when the other query is absent or did not run (other_rows None)."""
    if correct or generated_rows is None or other_rows is None:
        return False
    return strict_equal(generated_rows, other_rows)


class OtherProfileSQL:
    """A turn's ground truth as it reads with another session's profile, from the benchmark's own
    output: `sessions.parquet` gives each session's source and variant, `other_profile_sql.parquet`
    (lib/benchmark/other_profiles.py) each variant's turns filled from every session's profile.
    Both are read on first use, so that conditions without episodic memory never read them. A session
    whose profile cannot fill the turn (another tier's profile query) has no such SQL: `sql` returns
    None for it. Thread-safe (scoring threads).
    """

    def __init__(self, bench_dir: Path):
        self._sessions_path = bench_dir / SESSIONS_FILE
        self._sql_path = bench_dir / OTHER_PROFILES_FILE
        self._sessions: dict[str, dict[str, Any]] | None = None
        self._sql: dict[tuple[str, int, str], str] = {}
        self._lock = threading.Lock()

    def _read(self) -> None:
        for path, what in ((self._sessions_path, "sessions"), (self._sql_path, "other-profile ground truths")):
            if not path.exists():
                raise SourceError(path, f"benchmark {what} file does not exist", "the output of the sessions asset")
        columns = ["session_id", "source_name", "variant_id"]
        self._sessions = {r["session_id"]: r for r in pq.read_table(self._sessions_path, columns=columns).to_pylist()}
        table = pq.read_table(self._sql_path).to_pydict()
        keys = zip(table["variant_id"], table["turn_index"], table["session_id"], strict=True)
        self._sql = dict(zip(keys, table["sql"], strict=True))

    @property
    def loaded(self) -> bool:
        """Whether the files have been read (the first `sql` or `for_turn` reads them)."""
        return self._sessions is not None

    def _session(self, session_id: str) -> Mapping[str, Any]:
        with self._lock:
            if self._sessions is None:
                self._read()
        assert self._sessions is not None
        if session_id not in self._sessions:
            raise SourceError(
                self._sessions_path, f"session {session_id!r} is not in the benchmark", "every evaluated session"
            )
        return self._sessions[session_id]

    def sql(self, turn: Mapping[str, Any], session_id: str) -> str | None:
        own, other = self._session(turn["session_id"]), self._session(session_id)
        if other["source_name"] != own["source_name"]:
            return None
        return self._sql.get((own["variant_id"], int(turn["turn_index"]), session_id))

    def for_turn(self, turn: Mapping[str, Any], sessions: Iterable[str]) -> dict[str, str]:
        """{other session: the turn's ground truth with its profile} for each of `sessions` that has one."""
        # The turn's own session is skipped: its profile gives the ground truth itself.
        found = {s: self.sql(turn, s) for s in sessions if s != turn["session_id"]}
        return {s: sql for s, sql in found.items() if sql is not None}


def value_text(value: Any) -> list[str]:
    """How a value compares with a SQL literal: its text, an integral number without its fraction
    (2019, 2019.0 and '2019' are one value); a list gives each of its items, a mapping none."""
    if isinstance(value, list | tuple):
        return [t for item in value for t in value_text(item)]
    if isinstance(value, dict) or value is None:
        return []
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return [str(value)]


def literals(sql: str | None) -> set[str]:
    """The literals the filters of `sql` compare with (value_text)."""
    return {t for f in filters(sql) for v in f.values for t in value_text(v)}


def returned_results(turns: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The queries of the results turns returned: a turn returns its result by binding a key to its
    own SQL (extended/walk.py), which a later session's ground truth re-uses as written."""
    return frozenset(v for t in turns for v in (t.get("state_updates") or {}).values() if v == t["gt_sql"])


class SessionValues:
    """Contamination by value (module docstring), from the benchmark's own output: `turns.jsonl`
    gives the values each session's turns bound or stated and the results they returned or re-used,
    `sessions.parquet` each session's analyst (the paper's benchmark names none: each session is its
    own analyst's). Read on first use; thread-safe (scoring threads)."""

    def __init__(self, bench_dir: Path):
        self._bench_dir = bench_dir
        self._values: dict[str, frozenset[str]] | None = None
        self._with_results: dict[str, frozenset[str]] = {}  # with the literals of its results
        self._results: frozenset[str] = frozenset()
        self._peers: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._values is not None

    def _read(self) -> dict[str, frozenset[str]]:
        with self._lock:
            if self._values is None:
                self._peers = analyst_peers(self._bench_dir / SESSIONS_FILE, required=False)
                turns = read_turns(self._bench_dir)
                self._results = returned_results(turns)
                found: dict[str, set[str]] = {}
                results: dict[str, set[str]] = {}
                for t in turns:
                    held = found.setdefault(t["session_id"], set())
                    for field in ("state_updates", "stated_values"):
                        held.update(s for v in (t.get(field) or {}).values() for s in value_text(v))
                    mine = results.setdefault(t["session_id"], set())
                    mine.update(v for q in self._results if q in t["gt_sql"] for v in literals(q))
                self._with_results = {sid: frozenset(v | results[sid]) for sid, v in found.items()}
                self._values = {sid: frozenset(v) for sid, v in found.items()}
            return self._values

    def _reuses_result(self, turn: Mapping[str, Any]) -> bool:
        """Whether the turn's ground truth re-uses a result an earlier turn returned."""
        return any(q in turn["gt_sql"] and q != turn["gt_sql"] for q in self._results)

    def source(self, turn: Mapping[str, Any], sql: str | None, sessions: Iterable[str]) -> str | None:
        """The first of `sessions` (those the memory retrieved) of another analyst whose value the
        failed turn's `sql` compares with, when the turn's own analyst never held that value."""
        sessions = tuple(sessions)
        if not sessions:  # no memory retrieved another session: nothing to read
            return None
        values = self._read()
        if self._reuses_result(turn):
            values = self._with_results
        sid = turn["session_id"]
        if sid not in self._peers:
            raise SourceError(
                self._bench_dir / TURNS_FILE, f"session {sid!r} is not in the benchmark", "every evaluated session"
            )
        own_analyst = self._peers[sid]
        used = literals(sql) - literals(turn["gt_sql"])
        used -= {v for s in own_analyst for v in values.get(s, ())}
        if not used:
            return None
        return next((s for s in sessions if s not in own_analyst and used & values.get(s, frozenset())), None)

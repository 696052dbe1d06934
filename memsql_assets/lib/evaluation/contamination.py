"""Cross-session contamination (SPEC §3), measured two ways.

- **By provenance** (`contaminated`): the agent records which sessions' episodes supplied the
  turn's resolved keys (agent/context.py). A failed turn is contaminated when its result equals
  the turn's ground truth as it reads in one of those sessions: the turn's variant walked with that
  session's profile (`OtherProfileSQL`). That is a value that leaked from another session, caught
  whichever session it came from.
- **The paper's fallback** (`fallback_match`): every memory-critical turn carries a `fallback_sql`,
  its ground truth for the *next* session's profile. Sessions run in order, so under C and D that
  session is never in memory yet; the check is kept because it is the paper's, and because a
  model may still guess a popular value.

Both compare strictly, like the headline EX; a correct turn is never contaminated.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from memsql_assets.lib.benchmark.other_profiles import OTHER_PROFILES_FILE
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sql.compare import Rows, strict_equal


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
        self._sessions_path = bench_dir / "sessions.parquet"
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

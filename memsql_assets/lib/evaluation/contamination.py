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

import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from memsql_assets.lib.benchmark.extended import (
    EXTENDED_DIR,
    ExtendedTemplate,
    instantiate_extended,
    load_extended_template,
)
from memsql_assets.lib.benchmark.generate import instantiate
from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, TierTemplate, load_tier_template
from memsql_assets.lib.errors import SourceError, TemplateError
from memsql_assets.lib.sql.compare import Rows, strict_equal
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK


def equals_other_answer(correct: bool, generated_rows: Rows | None, other_rows: Rows | None) -> bool:
    """True when a failed turn's rows equal another instantiation's rows (a fallback or another
    session's ground truth). False for a correct turn, when the generated SQL did not run (rows
    None), and when the other query is absent or did not run (other_rows None)."""
    if correct or generated_rows is None or other_rows is None:
        return False
    return strict_equal(generated_rows, other_rows)


class OtherProfileSQL:
    """A turn's ground truth instantiated with another session's profile.

    Reads the benchmark's `sessions.parquet` (each session's source, variant and profile) on first
    use, so that conditions without episodic memory never read it, and instantiates the templates
    that generated it. A session whose profile lacks a key the turn's variant needs (another tier's
    profile query) has no such SQL: `sql` returns None for it. Thread-safe (scoring threads).
    """

    def __init__(self, bench_dir: Path, benchmark: str = PAPER_BENCHMARK, templates_dir: Path | None = None):
        self._path = bench_dir / "sessions.parquet"
        self._benchmark = benchmark
        self._templates_dir = templates_dir
        self._sessions: dict[str, dict[str, Any]] | None = None
        self._templates: dict[tuple[str, int], TierTemplate] = {}
        self._extended: dict[str, ExtendedTemplate] = {}
        self._lock = threading.Lock()

    def _read_sessions(self) -> dict[str, dict[str, Any]]:
        if not self._path.exists():
            raise SourceError(
                self._path, "benchmark sessions file does not exist", "the output of the sessions asset"
            )
        columns = ["session_id", "source_name", "tier", "variant_id", "profile"]
        sessions = {}
        for r in pq.read_table(self._path, columns=columns).to_pylist():
            try:
                r["profile"] = json.loads(r["profile"])
            except (TypeError, ValueError) as exc:
                raise SourceError(
                    self._path,
                    f"session {r['session_id']}: field 'profile' is not JSON ({exc})",
                    "a JSON object",
                ) from None
            sessions[r["session_id"]] = r
        return sessions

    @property
    def loaded(self) -> bool:
        """Whether the sessions file has been read (the first `sql` or `for_turn` reads it)."""
        return self._sessions is not None

    def _session(self, session_id: str) -> Mapping[str, Any]:
        with self._lock:
            if self._sessions is None:
                self._sessions = self._read_sessions()
        if session_id not in self._sessions:
            raise SourceError(
                self._path, f"session {session_id!r} is not in the benchmark", "every evaluated session"
            )
        return self._sessions[session_id]

    def _template(self, source_name: str, tier: int) -> TierTemplate:
        with self._lock:
            if (source_name, tier) not in self._templates:
                self._templates[source_name, tier] = load_tier_template(
                    source_name, tier, self._templates_dir or TEMPLATES_DIR
                )
            return self._templates[source_name, tier]

    def _extended_sql(self, turn: Mapping[str, Any], own: Mapping[str, Any], other: Mapping[str, Any]) -> str | None:
        """The extended turn's ground truth walked with the other session's profile (a correction
        included: the value it leaked is the other session's state at this turn)."""
        with self._lock:
            name = own["source_name"]
            if name not in self._extended:
                self._extended[name] = load_extended_template(name, self._templates_dir or EXTENDED_DIR)
            template = self._extended[name]
        variant = next((v for v in template.variants if v.id == own["variant_id"]), None)
        if variant is None:
            raise TemplateError(
                template.path, f"variant {own['variant_id']}", f"needed by session {turn['session_id']}: not found"
            )
        try:
            rendered = instantiate_extended(variant, other["profile"], 0)  # the wording never changes the SQL
        except KeyError:
            return None
        return rendered[int(turn["turn_index"]) - 1].sql

    def sql(self, turn: Mapping[str, Any], session_id: str) -> str | None:
        own, other = self._session(turn["session_id"]), self._session(session_id)
        if other["source_name"] != own["source_name"]:
            return None
        if self._benchmark == EXTENDED_BENCHMARK:
            return self._extended_sql(turn, own, other)
        template = self._template(own["source_name"], int(own["tier"]))
        variant = next((v for v in template.variants if v.id == own["variant_id"]), None)
        if variant is None:
            raise TemplateError(
                template.path,
                f"variant {own['variant_id']}",
                f"needed by session {turn['session_id']}: not found",
            )
        try:
            rendered = instantiate(variant, other["profile"], int(turn["turn_index"]))
        except KeyError:  # the other profile lacks a key this variant needs
            return None
        return rendered[-1].sql

    def for_turn(self, turn: Mapping[str, Any], sessions: Iterable[str]) -> dict[str, str]:
        """{other session: the turn's ground truth with its profile} for each of `sessions` that has one."""
        # The turn's own session is skipped: its profile gives the ground truth itself.
        found = {s: self.sql(turn, s) for s in sessions if s != turn["session_id"]}
        return {s: sql for s, sql in found.items() if sql is not None}

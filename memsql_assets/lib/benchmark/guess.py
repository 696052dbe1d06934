"""How guessable each memory-critical turn is without memory, measured while the benchmark is built.

A turn's `guess_rate`: its SQL template is filled with the referenced values that every OTHER
eligible profile of its template's pool binds by that turn (the values its own question states are
kept), each fill is executed, and the rate is the share of fills whose result equals the ground
truth's under the paper's strict EX. A turn whose answer every profile shares has rate 1 (a model
without memory answers it by writing the query for any entity); a turn only its own values answer
has rate 0.

Speed: the fills of a template turn depend only on the pool and on the values its question states,
so they are rendered, run and hashed (compare.strict_key) once per template turn and stated values,
however many sessions share them. They run on an in-memory copy of the source with an index on
every foreign-key column: indexes change no result, only how fast thousands of one-entity queries return.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memsql_assets.lib.benchmark.extended.load import load_extended_template
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR, ExtendedTemplate
from memsql_assets.lib.benchmark.extended.walk import pool_states
from memsql_assets.lib.benchmark.generate import Session, bound_states, render, turn_namespace
from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, Variant, load_tier_template
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.sql.compare import strict_key
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly


@dataclasses.dataclass(frozen=True)
class _Tier:
    variants: dict[str, Variant]
    pool: list[Profile]
    # variant id -> per pool profile (in pool order), the session state before each turn
    states: dict[str, list[list[dict[str, Any]]]]


def _tiers(source: str, profiles: Mapping[str, list[Profile]], directory: Path) -> dict[int, _Tier]:
    tiers = {}
    for tier in (1, 2, 3):
        template = load_tier_template(source, tier, directory)
        pool = profiles[template.profile]
        states = {v.id: [bound_states(v, p, len(v.turns)) for p in pool] for v in template.variants}
        tiers[tier] = _Tier({v.id: v for v in template.variants}, pool, states)
    return tiers


def fills(turn_index: int, variant: Variant, own: Profile, tier: _Tier) -> list[str]:
    """The turn's SQL filled with each pool profile's referenced values and `own`'s stated values,
    in pool order (own's entry is its ground truth)."""
    template = variant.turns[turn_index - 1]
    states = tier.states[variant.id]
    mine = states[tier.pool.index(own)]
    ns = turn_namespace(template, own, mine[turn_index - 1])
    return [
        render(template.sql, {**ns, **{k: theirs[turn_index - 1][k] for k in template.refs}}, literal=True)
        for theirs in states
    ]


def guess_rate(gold: frozenset | None, guesses: list[frozenset | None]) -> float:
    """The share of `guesses` (strict_key of each other profile's result) equal to the ground truth's."""
    if gold is None or not guesses:
        return 0.0
    return sum(g == gold for g in guesses) / len(guesses)


class _Runner:
    """Result keys by SQL text on one in-memory indexed copy of a source."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.keys: dict[str, frozenset | None] = {}

    def key(self, sql: str) -> frozenset | None:
        if sql not in self.keys:
            self.keys[sql] = strict_key(run_query(self.conn, sql).rows)
        return self.keys[sql]


def indexed_copy(db_path: Path) -> sqlite3.Connection:
    """The database in memory, with an index on each column that a declared foreign key uses."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    with contextlib.closing(open_readonly(db_path)) as src:
        src.backup(conn)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for column in sorted({row[3] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")')}):
            conn.execute(f'CREATE INDEX IF NOT EXISTS "memsql_fk_{table}_{column}" ON "{table}" ("{column}")')
    conn.execute("ANALYZE")  # statistics let the planner start the joins from the filtered side
    return conn


# What a source's rating needs of one memory-critical turn: the cache key of its fills (a template
# turn and the values its question states), a function rendering the fills in pool order, and the
# session's own place in that pool.
Fills = tuple[tuple[Any, ...], Callable[[], list[str]], int]


def _rated(sessions: list[Session], db_path: Path, fills_of: Callable[[Session, Any], Fills]) -> list[Session]:
    """`sessions` with each memory-critical turn's guess_rate: the share of the OTHER pool profiles'
    fills whose result equals the ground truth's, each fill run once per cache key."""
    by_fill: dict[tuple[Any, ...], list[frozenset | None]] = {}
    out = []
    with contextlib.closing(indexed_copy(db_path)) as conn:
        runner = _Runner(conn)
        for session in sessions:
            turns = []
            for turn in session.turns:
                if turn.memory_critical:
                    cached, render_fills, own = fills_of(session, turn)
                    if cached not in by_fill:
                        by_fill[cached] = [runner.key(sql) for sql in render_fills()]
                    keys = by_fill[cached]
                    rate = guess_rate(runner.key(turn.gt_sql), keys[:own] + keys[own + 1 :])
                    turn = dataclasses.replace(turn, guess_rate=round(rate, 6))
                turns.append(turn)
            out.append(dataclasses.replace(session, turns=turns))
    return out


def _source_rates(sessions: list[Session], tiers: dict[int, _Tier], db_path: Path) -> list[Session]:
    def fills_of(session: Session, turn: Any) -> Fills:
        tier = tiers[session.tier]
        variant = tier.variants[session.variant_id]
        cached = (session.tier, session.variant_id, turn.turn_index, tuple(sorted(turn.stated_values.items())))
        return cached, lambda: fills(turn.turn_index, variant, session.profile, tier), tier.pool.index(session.profile)

    return _rated(sessions, db_path, fills_of)


def _by_source(one: Callable[[str], list[Session]]) -> list[Session]:
    """`one` for every source, a thread each (SQLite runs a query without holding the GIL)."""
    with ThreadPoolExecutor(len(SOURCE_NAMES)) as pool:
        measured = [s for batch in pool.map(one, SOURCE_NAMES) for s in batch]
    return sorted(measured, key=lambda s: s.session_id)


def attach_guess_rates(
    sessions: list[Session],
    profiles: Mapping[str, Mapping[str, list[Profile]]],
    db_paths: Mapping[str, Path],
    directory: Path = TEMPLATES_DIR,
) -> list[Session]:
    """`sessions` with every memory-critical turn's guess_rate measured on its source database."""

    def one(name: str) -> list[Session]:
        mine = [s for s in sessions if s.source_name == name]
        return _source_rates(mine, _tiers(name, profiles[name], directory), db_paths[name])

    return _by_source(one)


def _extended_source_rates(
    sessions: list[Session], template: ExtendedTemplate, pool: list[Profile], db_path: Path
) -> list[Session]:
    """The paper's rule on the extended turns: each memory-critical turn's SQL filled with every other
    pool profile's state at that turn (its own stated values kept), the share that gives its answer."""
    variants = {v.id: v for v in template.variants}
    states = {v.id: pool_states(template, v, pool) for v in template.variants}

    def fills_of(session: Session, turn: Any) -> Fills:
        own, i = pool.index(session.profile), turn.turn_index - 1
        base = variants[session.variant_id].turns[i].base
        theirs = states[session.variant_id]

        def render_fills() -> list[str]:
            ns = turn_namespace(base, session.profile, theirs[own][i])
            return [render(base.sql, {**ns, **{k: s[i][k] for k in base.refs}}, True) for s in theirs]

        return (session.variant_id, turn.turn_index, tuple(sorted(turn.stated_values.items()))), render_fills, own

    return _rated(sessions, db_path, fills_of)


def attach_extended_guess_rates(
    sessions: list[Session],
    profiles: Mapping[str, Mapping[str, list[Profile]]],
    db_paths: Mapping[str, Path],
    directory: Path = EXTENDED_DIR,
) -> list[Session]:
    """The extended `sessions` with every memory-critical turn's guess_rate measured on its source."""

    def one(name: str) -> list[Session]:
        template = load_extended_template(name, directory)
        mine = [s for s in sessions if s.source_name == name]
        return _extended_source_rates(mine, template, profiles[name][template.profile], db_paths[name])

    return _by_source(one)

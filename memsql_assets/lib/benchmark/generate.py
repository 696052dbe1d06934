"""Phase 2 of generation: instantiate the tier templates with profiles into sessions and turns.

Deterministic by construction: profiles arrive in SQL ORDER BY order, sessions pick profiles and
variants by index arithmetic, and nothing depends on time, hashing order or randomness.
"""

from __future__ import annotations

import itertools
import math
import string
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.benchmark.templates import TierTemplate, TurnTemplate, Variant
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.sources.config import PREFIX
from memsql_assets.lib.sql.syntax import query_keys, sql_literal

# SPEC §1: sessions per source and tier (30/40/30 % per source), and ten-turn tier-3 sessions.
SESSIONS_PER_TIER: dict[str, dict[int, int]] = {
    "northwind": {1: 30, 2: 40, 3: 30},
    "sec_edgar": {1: 36, 2: 48, 3: 36},
    "bird_financial": {1: 24, 2: 32, 3: 24},
}
TEN_TURN_SESSIONS = {"northwind": 7, "sec_edgar": 9, "bird_financial": 4}
TIER_TURNS = {1: 1, 2: 4, 3: 9}


@dataclass(frozen=True)
class Turn:
    session_id: str
    source: str
    tier: int
    turn_index: int
    question: str
    output_requirements: str
    gt_sql: str
    paraphrase_sql: str
    fallback_sql: str | None
    requires_prior_context: bool
    referenced_context_keys: list[str]
    state_updates: dict[str, Any]
    memory_critical: bool
    sql_template: str
    stated_values: dict[str, Any]
    variant_id: str
    # Per referenced key, the value most profiles of the pool bind by this turn: the guess-probe's fill.
    guess_values: dict[str, Any] = field(default_factory=dict)
    # Share of the pool's other profiles whose referenced values give the ground truth's result
    # (guess.py; None until measured on the databases, and for turns that are not memory-critical).
    guess_rate: float | None = None


@dataclass(frozen=True)
class Session:
    session_id: str
    source: str
    source_name: str
    tier: int
    n_turns: int
    variant_id: str
    profile: dict[str, Any]
    turns: list[Turn] = field(default_factory=list)


def render(template: str, values: dict[str, Any], literal: bool) -> str:
    """`template` filled with `values`: as SQL literals (`literal`), but a query placeholder's value as
    the SQL it is (syntax.QUERY_SLOT), or as text."""
    queries = query_keys(template) if literal else frozenset()
    out = []
    for text, name, _spec, _conv in string.Formatter().parse(template):
        out.append(text)
        if name:
            value = values[name]
            out.append(sql_literal(value) if literal and name not in queries else str(value))
    return "".join(out)


@dataclass(frozen=True)
class RenderedTurn:
    question: str
    sql: str
    paraphrase: str
    state_updates: dict[str, Any]
    stated_values: dict[str, Any]


def instantiate(variant: Variant, profile: Profile, n_turns: int) -> list[RenderedTurn]:
    """Walk the variant's turns, carrying the session state that `binds` build up."""
    return list(itertools.islice(walk(variant, profile), n_turns))


def walk(variant: Variant, profile: Profile) -> Iterator[RenderedTurn]:
    """The variant's turns rendered one after another; KeyError at the first one `profile` cannot fill."""
    state: dict[str, Any] = {}
    for turn in variant.turns:
        ns = turn_namespace(turn, profile, state)
        updates = {key: ns[src] for key, src in turn.binds}
        stated = {k: ns[k] for k in sorted(turn.stated_keys() & turn.sql_keys)}
        yield RenderedTurn(
            question=render(turn.question, ns, literal=False),
            sql=render(turn.sql, ns, literal=True),
            paraphrase=render(turn.paraphrase, ns, literal=True),
            state_updates=updates,
            stated_values=stated,
        )
        state.update(updates)


def bound_states(variant: Variant, profile: Profile, n_turns: int) -> list[dict[str, Any]]:
    """The session state before each of the first `n_turns` turns (what earlier turns bound)."""
    state: dict[str, Any] = {}
    states = []
    for turn in variant.turns[:n_turns]:
        states.append(dict(state))
        ns = turn_namespace(turn, profile, state)
        state.update({key: ns[src] for key, src in turn.binds})
    return states


def modal_values(variant: Variant, pool: list[Profile]) -> list[dict[str, Any]]:
    """Per turn of the variant, each referenced key's most common value over the pool's profiles
    (ties: the value met first in profile order, which Counter.most_common keeps)."""
    states = [bound_states(variant, p, len(variant.turns)) for p in pool]
    return [
        {key: Counter(s[t][key] for s in states).most_common(1)[0][0] for key in turn.refs}
        for t, turn in enumerate(variant.turns)
    ]


def turn_namespace(turn: TurnTemplate, profile: Profile, state: dict[str, Any]) -> dict[str, Any]:
    """A turn's placeholders: the profile row, overlaid by its `let`, overlaid by the session state for its refs."""
    ns = dict(profile)
    ns.update(dict(turn.let))
    for key in turn.refs:
        ns[key] = state[key]  # references resolve to what earlier turns bound, never to the profile
    return ns


def ten_turn_indices(n_sessions: int, n_ten: int) -> set[int]:
    """Spread the ten-turn sessions evenly over a tier (deterministic)."""
    return {math.floor(j * n_sessions / n_ten) for j in range(n_ten)}


def generate_source(
    source: str,
    templates: dict[int, TierTemplate],
    profiles: dict[str, list[Profile]],
) -> list[Session]:
    prefix = PREFIX[source]
    sessions: list[Session] = []
    offset = 0
    for tier in (1, 2, 3):
        template = templates[tier]
        pool = profiles.get(template.profile)
        if not pool:
            raise TemplateError(
                template.path, "profile", f"profile '{template.profile}' has no rows for {source}"
            )
        n = SESSIONS_PER_TIER[source][tier]
        tens = ten_turn_indices(n, TEN_TURN_SESSIONS[source]) if tier == 3 else set()
        modes = {v.id: modal_values(v, pool) for v in template.variants}
        for i in range(n):
            profile = pool[(offset + i) % len(pool)]
            neighbour = pool[(offset + (i + 1) % n) % len(pool)]  # the next session's profile
            variant = template.variants[i % len(template.variants)]
            n_turns = TIER_TURNS[tier] + (1 if i in tens else 0)
            sessions.append(
                _build_session(
                    prefix, source, tier, i + 1, variant, (profile, neighbour), n_turns, modes[variant.id]
                )
            )
        offset += n
    return sessions


def _build_session(
    prefix: str,
    source: str,
    tier: int,
    index: int,
    variant: Variant,
    profiles: tuple[Profile, Profile],
    n_turns: int,
    modes: list[dict[str, Any]],
) -> Session:
    """`profiles`: the session's own and the next session's (its fallback); `modes`: modal_values."""
    session_id = f"{prefix}-{tier}-{index:03d}"
    profile, neighbour = profiles
    own = instantiate(variant, profile, n_turns)
    other = instantiate(variant, neighbour, n_turns)
    bound: set[str] = set()
    turns = []
    for t, (template, mine, theirs) in enumerate(zip(variant.turns, own, other, strict=False), start=1):
        refs = list(template.refs)
        critical = bool(refs) and all(k in bound for k in refs)
        turns.append(
            Turn(
                session_id=session_id,
                source=prefix,
                tier=tier,
                turn_index=t,
                question=mine.question,
                output_requirements=template.output_requirements,
                gt_sql=mine.sql,
                paraphrase_sql=mine.paraphrase,
                fallback_sql=theirs.sql if critical else None,
                requires_prior_context=bool(refs),
                referenced_context_keys=refs,
                state_updates=mine.state_updates,
                memory_critical=critical,
                sql_template=template.sql,
                stated_values=mine.stated_values,
                variant_id=variant.id,
                guess_values=modes[t - 1],
            )
        )
        bound |= set(mine.state_updates)
    return Session(session_id, prefix, source, tier, n_turns, variant.id, dict(profile), turns)

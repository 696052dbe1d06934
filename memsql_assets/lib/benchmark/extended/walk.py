"""Rendering a session of an extended variant: the walk from the state its history left (with the
state no correction reached, for stale ground truths), the wording check, and what a turn states."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.benchmark.extended.template import (
    ExtendedTemplate,
    ExtendedTurnTemplate,
    ExtendedVariant,
    lineage,
    without_distractor,
)
from memsql_assets.lib.benchmark.generate import render, turn_namespace
from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.benchmark.wording import contradiction
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.sql.syntax import sql_literal


@dataclass(frozen=True)
class ExtendedRendered:
    question: str
    sql: str
    paraphrase: str
    stale_sql: str | None
    state_updates: dict[str, Any]
    stated_values: dict[str, Any]


def phrasing_index(wording: int, turn: ExtendedTurnTemplate, index: int) -> int:
    """The phrasing of `turn` (the index-th of its variant) in a session of wording offset `wording`
    (the how-manieth use of its variant: successive uses take the phrasings in turn)."""
    return (wording + index) % len(turn.phrasings)


@dataclass(frozen=True)
class _Walk:
    """Where a session starts: the state its history left, the state no correction or knowledge update
    of it reached, and whether one did (a session's own walk, in instantiate_extended, goes on from here)."""

    state: dict[str, Any]
    stale: dict[str, Any]
    corrected: bool


def _history_walk(variant: ExtendedVariant, profile: Profile) -> _Walk:
    """The walk of the sessions `variant` continues, oldest first, with the same profile (none: empty;
    a continued session, never a returning one, ran without its variant's distractor turn)."""
    walk = _Walk({}, {}, False)
    for earlier in lineage(variant.continues):
        walk = _walk(without_distractor(earlier), profile, 0, walk)[1]
    return walk


def carried_state(variant: ExtendedVariant, profile: Profile) -> dict[str, Any]:
    """The state the sessions of `variant`'s history before it left, with the same profile."""
    return _history_walk(variant, profile).state


def instantiate_extended(variant: ExtendedVariant, profile: Profile, wording: int) -> list[ExtendedRendered]:
    """A session of `variant`, starting from what its history left."""
    return _walk(variant, profile, wording, _history_walk(variant, profile))[0]


def _walk(
    variant: ExtendedVariant, profile: Profile, wording: int, start: _Walk
) -> tuple[list[ExtendedRendered], _Walk]:
    """Walk the turns with two states: the session's, and the one a correction (or a knowledge
    update, in this session or an earlier one of its history) never reached."""
    state, stale, corrected = dict(start.state), dict(start.stale), start.corrected
    out = []
    for index, turn in enumerate(variant.turns, start=1):
        ns = turn_namespace(turn.base, profile, state)
        old = turn_namespace(turn.base, profile, stale)
        sql = render(turn.base.sql, ns, literal=True)
        stale_sql = render(turn.base.sql, old, literal=True) if corrected else None
        phrasing = turn.phrasings[phrasing_index(wording, turn, index)]
        updates = {key: ns[src] for key, src in turn.base.binds}
        if turn.returns:  # a later session re-uses the query as the rows it returned
            updates[turn.returns] = sql
        out.append(
            ExtendedRendered(
                question=render(phrasing, ns, literal=False),
                sql=sql,
                paraphrase=render(turn.base.paraphrase, ns, literal=True),
                stale_sql=stale_sql if stale_sql != sql else None,
                state_updates=updates,
                stated_values={k: ns[k] for k in sorted(turn.base.stated_keys() & turn.base.sql_keys)},
            )
        )
        # an overwritten key's stale value is the one it replaces (a later session's update included)
        stale.update({k: old[src] for k, src in turn.base.binds if k not in turn.overwrites})
        stale.update({k: state[k] for k in turn.overwrites})
        if turn.returns:
            stale[turn.returns] = stale_sql or sql
        state.update(updates)
        corrected = corrected or bool(turn.overwrites)
    return out, _Walk(state, stale, corrected)


def check_wording(
    template: ExtendedTemplate,
    variant: ExtendedVariant,
    session_id: str,
    rendered: list[ExtendedRendered],
    wording: int,
    profile: Profile,
) -> None:
    """Fail the build on the first question whose relative wording its state at that turn contradicts."""
    carried = carried_state(variant, profile)
    state = dict(carried)
    opened = rendered[0].state_updates
    for index, (turn, mine) in enumerate(zip(variant.turns, rendered, strict=True), start=1):
        for claim in turn.claims[phrasing_index(wording, turn, index)]:
            problem = contradiction(claim, state, opened, template.ordered_pair, carried)
            if problem:
                raise TemplateError(
                    template.path,
                    f"variant {variant.id}, turn {index}",
                    f"in {session_id}, {mine.question!r} {problem}",
                )
        state.update(mine.state_updates)


def pool_states(template: ExtendedTemplate, variant: ExtendedVariant, pool: list[Profile]) -> list[list[dict[str, Any]]]:
    """Per pool profile, the session state before each turn of `variant` (the values a guess fills in)."""
    out = []
    for profile in pool:
        state = carried_state(variant, profile)
        states = []
        for rendered in instantiate_extended(variant, profile, 0):
            states.append(dict(state))
            state.update(rendered.state_updates)
        out.append(states)
    return out


def pool_modal_values(variant: ExtendedVariant, states: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per turn, each referenced key's most common value over the pool (generate.modal_values' rule)."""
    return [
        {key: Counter(s[t][key] for s in states).most_common(1)[0][0] for key in turn.base.refs}
        for t, turn in enumerate(variant.turns)
    ]


def _states(turn: ExtendedRendered, key: str, value: Any, query: bool) -> bool:
    return stated(turn.question, turn.sql, turn.state_updates, key, value, query)


def stated(question: str, sql: str, updates: Mapping[str, Any], key: str, value: Any, query: bool = False) -> bool:
    """Whether a turn states `key`'s value: binds the key, or names the value in its question or SQL; a
    `query` (an earlier turn's result, syntax.QUERY_SLOT), its SQL re-uses it as written."""
    if key in updates:
        return True
    if query:
        return str(value) in sql
    return any(
        re.search(rf"(?<![\w.]){re.escape(text)}(?![\w.])", where)
        for text, where in ((str(value), question), (sql_literal(value), sql))
    )


def recall_distance(
    rendered: list[ExtendedRendered], index: int, refs: tuple[str, ...], state: dict[str, Any], queries: frozenset[str]
) -> int:
    """How many turns back the farthest of `refs` (of them `queries`, earlier results) was last stated
    (bound, asked or written in SQL)."""
    farthest = 0
    for key in refs:
        back = next(
            (
                index - j
                for j in range(index - 1, 0, -1)
                if _states(rendered[j - 1], key, state[key], key in queries)
            ),
            index,
        )
        farthest = max(farthest, back)
    return farthest

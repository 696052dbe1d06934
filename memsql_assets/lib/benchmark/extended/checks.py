"""The invariants of the built extended turns (blocking): session ids and count, tags, memory flags,
and the analysts' histories checked value by value, whatever the templates say."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memsql_assets.lib.benchmark.extended.walk import stated
from memsql_assets.lib.benchmark.invariants import session_memory_problems
from memsql_assets.lib.sql.syntax import query_keys
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, PHENOMENA

MAX_SESSIONS = 300  # no larger than the paper's benchmark
EXTENDED_SESSION_ID = re.compile(r"^(NW|SEC|BIRD)-X-(\d{3})$")


def earlier_sessions(by_session: Mapping[str, Sequence[Mapping[str, Any]]], sid: str) -> list[str]:
    """The sessions of `sid`'s history before it, latest first (following continues_session_id)."""
    out: list[str] = []
    turns = by_session.get(sid, [])
    while turns and turns[0].get("continues_session_id") and turns[0]["continues_session_id"] not in out:
        out.append(turns[0]["continues_session_id"])
        turns = by_session.get(out[-1], [])
    return out


def continued_keys(by_session: Mapping[str, Sequence[Mapping[str, Any]]], sid: str) -> frozenset[str]:
    """The keys the earlier sessions of `sid`'s history bound (empty for a session that continues none)."""
    return frozenset(k for e in earlier_sessions(by_session, sid) for t in by_session.get(e, []) for k in t["state_updates"])


def _row_states(turn: Mapping[str, Any], key: str, value: Any, query: bool) -> bool:
    """Whether a built turn states `key`'s `value`; a `query` (an earlier result, syntax.QUERY_SLOT), the
    turn that returned it ran exactly that query, and a later turn re-used it as written."""
    updates = turn["state_updates"]
    if query and key in updates:
        return updates[key] == value == turn["gt_sql"]
    return updates.get(key, value) == value and stated(turn["question"], turn["gt_sql"], updates, key, value, query)


def _history_problem(
    turn: Mapping[str, Any], state: Mapping[str, Any], before: list[Mapping[str, Any]], own: Sequence[Mapping[str, Any]]
) -> str | None:
    """What is wrong with one cross-session turn, given the state before it, its analyst's earlier
    sessions' turns (`before`) and the earlier turns of its own session (`own`)."""
    refs = list(turn["referenced_context_keys"])
    queries = query_keys(turn["sql_template"])

    def says(e: Mapping[str, Any], k: str) -> bool:
        return _row_states(e, k, state[k], k in queries)

    unseen = [k for k in refs if k not in state or not any(says(e, k) for e in [*before, *own])]
    if unseen or not refs:
        return f"no earlier turn of its analyst states {unseen or 'a key it needs'}"
    if all(any(says(e, k) for e in own) for k in refs):
        return f"a {turn['tag']} turn answerable inside its own session"
    unused = sorted(k for k in queries & set(refs) if str(state[k]) not in turn["gt_sql"])
    return f"its ground truth does not re-use the earlier query {unused}" if unused else None


def history_violations(by_session: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[tuple[str, int], str]:
    """(session, turn index) -> what is wrong, for each cross-session turn that its analyst's earlier
    sessions' questions and SQL (with the earlier turns of its own session) do not answer, or that its
    own session alone answers; an earlier result is answered by the turn that ran its query, and re-used
    by a ground truth that holds that query. Read from the built turns, values and all, whatever the
    templates say."""
    problems: dict[tuple[str, int], str] = {}
    for sid, ts in sorted(by_session.items()):
        before = [t for h in earlier_sessions(by_session, sid)[::-1] for t in by_session[h]]
        state = {k: v for t in before for k, v in t["state_updates"].items()}
        for i, t in enumerate(ts):
            problem = _history_problem(t, state, before, ts[:i]) if t["tag"] in CROSS_SESSION_TAGS else None
            if problem:
                problems[(sid, t["turn_index"])] = problem
            state.update(t["state_updates"])
    return problems


def extended_violations(turns: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    by_session: dict[str, list[dict[str, Any]]] = {}
    for t in turns:
        by_session.setdefault(t["session_id"], []).append(t)
    if not 0 < len(by_session) <= MAX_SESSIONS:
        problems.append(f"session count is {len(by_session)}, expected 1 to {MAX_SESSIONS}")
    for sid, ts in sorted(by_session.items()):
        if not EXTENDED_SESSION_ID.match(sid):
            problems.append(f"session id {sid!r} does not match PREFIX-X-NNN")
        ts.sort(key=lambda t: t["turn_index"])
        problems.extend(session_memory_problems(sid, ts, continued_keys(by_session, sid)))
        problems.extend(
            f"{sid} turn {t['turn_index']}: tag {t['tag']!r} is not a phenomenon"
            for t in ts
            if t["tag"] not in PHENOMENA
        )
    problems.extend(f"{sid} turn {i}: {what}" for (sid, i), what in history_violations(by_session).items())
    for prefix in sorted({t["source"] for t in turns}):
        tags = {t["tag"] for t in turns if t["source"] == prefix}
        if set(PHENOMENA) - tags:
            problems.append(f"{prefix}: no turn tagged {sorted(set(PHENOMENA) - tags)}")
    return problems

"""The extended sessions of a source (its template in `layout` order, each turn with what its
phenomenon needs), and the build of every source's, checked before anything is written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.benchmark.extended.checks import extended_violations
from memsql_assets.lib.benchmark.extended.layout import (
    Slot,
    analyst_id,
    check_continuation,
    extended_session_id,
    layout,
)
from memsql_assets.lib.benchmark.extended.load import load_extended_template
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR, ExtendedTemplate, ExtendedVariant
from memsql_assets.lib.benchmark.extended.walk import (
    carried_state,
    check_wording,
    instantiate_extended,
    phrasing_index,
    pool_modal_values,
    pool_states,
    recall_distance,
)
from memsql_assets.lib.benchmark.generate import Session, Turn
from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.errors import BenchmarkInvariantError, TemplateError
from memsql_assets.lib.sources.config import PREFIX
from memsql_assets.lib.sql.syntax import query_keys
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, SOURCE_NAMES

LONG_RANGE = range(3, 9)  # a long-range turn's value was last stated 3 to 8 turns earlier
# A detour that announces itself ("Separately: ..."); most change topic without one (`explicit_marker`).
DETOUR_MARKER = re.compile(r"^(?:Separately|On another note|Unrelated)\b", re.I)


@dataclass(frozen=True)
class ExtendedTurn(Turn):
    benchmark: str = EXTENDED_BENCHMARK
    tag: str = ""
    stale_gt_sql: str | None = None  # the ground truth with a correction's overwritten values
    recall_distance: int = 0  # turns back to where the farthest referenced value was last stated
    phrasing_index: int = 0
    explicit_marker: bool = False  # a detour whose question announces the change of topic
    twin_session_id: str | None = None  # a distractor turn: the earlier session worded the same
    analyst: str = ""  # who asks: a continuing session shares its continued session's analyst
    continues_session_id: str | None = None  # the earlier session this turn's session continues


@dataclass(frozen=True)
class ExtendedSession(Session):
    analyst: str = ""  # its turns' analyst


def _recall_distance(
    template: ExtendedTemplate, variant: ExtendedVariant, session_id: str, own: Any, t: int, state: dict[str, Any]
) -> int:
    """How many turns back turn `t`'s farthest value was last stated; a long_range turn outside LONG_RANGE fails."""
    tmpl = variant.turns[t - 1]
    distance = recall_distance(own, t, tmpl.base.refs, state, query_keys(tmpl.base.sql))
    if tmpl.tag == "long_range" and distance not in LONG_RANGE:
        raise TemplateError(
            template.path,
            f"variant {variant.id}, turn {t}",
            f"long_range, but its farthest value was last stated {distance} turn(s) earlier in {session_id}; "
            f"expected {LONG_RANGE.start} to {LONG_RANGE.stop - 1}",
        )
    return distance


def _session(
    template: ExtendedTemplate,
    position: int,
    slots: list[Slot],
    pool: list[Profile],
    modes: dict[str, list[dict[str, Any]]],
) -> Session:
    slot = slots[position]
    prefix = PREFIX[template.source]
    variant, profile = slot.variant, pool[slot.profile % len(pool)]
    own = instantiate_extended(variant, profile, slot.wording)
    theirs = instantiate_extended(variant, pool[slot.neighbour % len(pool)], slot.wording)
    session_id = extended_session_id(template, position)
    twin = None if slot.twin is None else extended_session_id(template, slot.twin)
    check_wording(template, variant, session_id, own, slot.wording, profile)
    continued = check_continuation(template, position, slot, slots)
    state = carried_state(variant, profile)
    turns = []
    for t, (tmpl, mine, other) in enumerate(zip(variant.turns, own, theirs, strict=True), start=1):
        refs = list(tmpl.base.refs)
        critical = bool(refs) and all(k in state for k in refs)
        distance = _recall_distance(template, variant, session_id, own, t, state)
        turns.append(
            ExtendedTurn(
                session_id=session_id,
                source=prefix,
                tier=3,
                turn_index=t,
                question=mine.question,
                output_requirements=tmpl.base.output_requirements,
                gt_sql=mine.sql,
                paraphrase_sql=mine.paraphrase,
                fallback_sql=other.sql if critical else None,
                requires_prior_context=bool(refs),
                referenced_context_keys=refs,
                state_updates=mine.state_updates,
                memory_critical=critical,
                sql_template=tmpl.base.sql,
                stated_values=mine.stated_values,
                guess_values=modes[variant.id][t - 1],
                variant_id=variant.id,
                tag=tmpl.tag,
                stale_gt_sql=mine.stale_sql,
                recall_distance=distance,
                phrasing_index=phrasing_index(slot.wording, tmpl, t),
                explicit_marker=tmpl.tag == "detour" and bool(DETOUR_MARKER.match(mine.question)),
                twin_session_id=twin if tmpl.tag == "distractor" else None,
                analyst=analyst_id(template, slot),
                continues_session_id=continued,
            )
        )
        state.update(mine.state_updates)
    return ExtendedSession(
        session_id, prefix, template.source, 3, len(turns), variant.id, dict(profile), turns, analyst_id(template, slot)
    )


def generate_extended_source(
    template: ExtendedTemplate, profiles: dict[str, list[Profile]], slots: list[Slot] | None = None
) -> list[Session]:
    """The source's sessions, in the order of `slots` (by default its `layout`)."""
    pool = profiles.get(template.profile)
    if not pool or len(pool) < 2:
        raise TemplateError(
            template.path,
            "profile",
            f"profile '{template.profile}' needs >= 2 rows (a session and its distractor)",
        )
    modes = {v.id: pool_modal_values(v, pool_states(template, v, pool)) for v in template.variants}
    slots = layout(template) if slots is None else slots
    return [_session(template, i, slots, pool, modes) for i in range(len(slots))]


def build_extended_sessions(
    profiles: dict[str, dict[str, list[Profile]]],
    directory: Path = EXTENDED_DIR,
    sources: tuple[str, ...] = SOURCE_NAMES,
) -> list[Session]:
    """Instantiate each source's extended template and verify the extended invariants (fail fast)."""
    sessions: list[Session] = []
    for source in sources:
        sessions.extend(generate_extended_source(load_extended_template(source, directory), profiles[source]))
    sessions.sort(key=lambda s: s.session_id)
    problems = extended_violations([dict(t.__dict__) for s in sessions for t in s.turns])
    if problems:
        raise BenchmarkInvariantError(
            f"extended benchmark violates {len(problems)} invariant(s): {'; '.join(problems[:20])}"
        )
    return sessions

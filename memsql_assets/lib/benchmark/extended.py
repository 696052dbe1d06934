"""The extended benchmark: its templates (templates/extended/<source>.yaml), generation and invariants.

A template turn is a paper turn (templates.py: question, requirement, SQL, paraphrase, refs, binds,
let) with three more fields: `tag`, the phenomenon it tests; `phrasings`, the question worded at
least three ways (chosen by index arithmetic, so generation stays byte-identical); and
`overwrites`, the keys a correction rebinds. A turn after a correction also carries the ground
truth built with the overwritten values (`stale_gt_sql`), which the scorer compares with. Every
question's relative wording is checked against the state at its turn (wording.py). A source's last
`returning` sessions each return to a twin `sessions - returning` positions earlier (`layout`): same variant and
wording, the neighbouring profile, so that episodic retrieval can reach the twin, the cross-session
distractor of the returning session's last turn. Memory across sessions: a variant that `continues`
another starts from the state its history left (the chain of variants it continues), with its profile
and analyst; the `histories` analysts of a source each have one session per variant of a chain,
`stride` positions apart (layout), and their turns tagged with a CROSS_SESSION_TAGS tag need values
only earlier sessions of the history stated. Every other session has an analyst of its own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from memsql_assets.lib.benchmark.generate import Session, Turn, render, turn_namespace
from memsql_assets.lib.benchmark.invariants import session_memory_problems
from memsql_assets.lib.benchmark.profiles import Profile
from memsql_assets.lib.benchmark.templates import (
    TEMPLATES_DIR,
    TurnTemplate,
    Variant,
    parse_turn,
    validate_turns,
)
from memsql_assets.lib.benchmark.wording import Claim, claims, contradiction
from memsql_assets.lib.errors import BenchmarkInvariantError, TemplateError
from memsql_assets.lib.sources.config import PREFIX
from memsql_assets.lib.sql.syntax import sql_literal
from memsql_assets.lib.vocabulary import (
    CROSS_SESSION_TAGS,
    EXTENDED_BENCHMARK,
    PHENOMENA,
    SELF_CONTAINED_TAGS,
    SOURCE_NAMES,
)

EXTENDED_DIR = TEMPLATES_DIR / EXTENDED_BENCHMARK
MIN_PHRASINGS = 3
MIN_VARIANTS = 6
MAX_SESSIONS = 300  # no larger than the paper's benchmark
LONG_RANGE = range(3, 9)  # a long-range turn's value was last stated 3 to 8 turns earlier
EXTENDED_SESSION_ID = re.compile(r"^(NW|SEC|BIRD)-X-(\d{3})$")
# A detour that announces itself ("Separately: ..."); most change topic without one (`explicit_marker`).
DETOUR_MARKER = re.compile(r"^(?:Separately|On another note|Unrelated)\b", re.I)
EXTENDED_FIELDS = ("tag", "phrasings", "overwrites")
# Tags whose turn may rebind keys an earlier turn (or the continued session) bound.
OVERWRITING_TAGS = ("correction", "knowledge_update")


@dataclass(frozen=True)
class ExtendedTurnTemplate:
    base: TurnTemplate  # its question is the first phrasing
    tag: str
    phrasings: tuple[str, ...]
    overwrites: tuple[str, ...]
    claims: tuple[tuple[Claim, ...], ...]  # per phrasing, its relative wordings (wording.py)


@dataclass(frozen=True)
class ExtendedVariant:
    id: str
    turns: tuple[ExtendedTurnTemplate, ...]
    continues: ExtendedVariant | None = None  # its sessions continue a session of this variant


@dataclass(frozen=True)
class ExtendedTemplate:
    path: Path
    source: str
    profile: str
    sessions: int
    returning: int  # sessions returning to an earlier twin (layout)
    histories: int  # analysts whose sessions form a history (layout)
    variants: tuple[ExtendedVariant, ...]
    ordered_pair: tuple[str, ...]  # the two keys "older"/"newer" compare (wording.py); () if none
    anchor: str | None  # the key "the <entity> we began with" names (wording.py)


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


def extended_template_path(source: str, directory: Path = EXTENDED_DIR) -> Path:
    return directory / f"{source}.yaml"


@dataclass(frozen=True)
class _Wording:
    """What a template declares for its relative wordings (wording.py)."""

    pair: tuple[str, ...]
    anchor: str | None


def _parse_extended_turn(
    path: Path, where: str, raw: Any, wording: _Wording, carried: frozenset[str]
) -> ExtendedTurnTemplate:
    if not isinstance(raw, dict):
        raise TemplateError(path, where, "expected a mapping with tag, phrasings and the turn fields")
    tag = raw.get("tag")
    if tag is None:
        raise TemplateError(path, f"{where}.tag", f"missing; expected one of {', '.join(PHENOMENA)}")
    if tag not in PHENOMENA:
        raise TemplateError(
            path, f"{where}.tag", f"unknown tag {tag!r}; expected one of {', '.join(PHENOMENA)}"
        )
    phrasings = raw.get("phrasings")
    if (
        not isinstance(phrasings, list)
        or len(phrasings) < MIN_PHRASINGS
        or not all(isinstance(p, str) and p.strip() for p in phrasings)
    ):
        raise TemplateError(
            path, f"{where}.phrasings", f"expected a list of >= {MIN_PHRASINGS} non-empty questions"
        )
    overwrites = raw.get("overwrites") or []
    if not isinstance(overwrites, list) or not all(isinstance(k, str) for k in overwrites):
        raise TemplateError(path, f"{where}.overwrites", "expected a list of key names")
    rest = {k: v for k, v in raw.items() if k not in EXTENDED_FIELDS}
    base = parse_turn(path, where, {**rest, "question": phrasings[0]})
    texts = tuple(" ".join(p.split()) for p in phrasings)
    for i, text in enumerate(texts):
        if TurnTemplate.placeholders(text) != base.question_keys:
            raise TemplateError(
                path,
                f"{where}.phrasings[{i}]",
                f"states {sorted(TurnTemplate.placeholders(text))}; phrasing 0 states {sorted(base.question_keys)}",
            )
    found = tuple(
        claims(path, f"{where}.phrasings[{i}]", text, set(base.refs), wording.pair, wording.anchor, carried)
        for i, text in enumerate(texts)
    )
    return ExtendedTurnTemplate(base=base, tag=tag, phrasings=texts, overwrites=tuple(overwrites), claims=found)


def _parse_wording(path: Path, raw: dict[str, Any]) -> _Wording:
    pair = raw.get("ordered_pair") or []
    if not isinstance(pair, list) or len(pair) not in (0, 2) or not all(isinstance(k, str) for k in pair):
        raise TemplateError(path, "ordered_pair", "expected two key names (the pair older/newer compares)")
    anchor = raw.get("anchor")
    if anchor is not None and not isinstance(anchor, str):
        raise TemplateError(path, "anchor", "expected the key that holds the entity the session began with")
    return _Wording(tuple(pair), anchor)


def lineage(variant: ExtendedVariant | None) -> list[ExtendedVariant]:
    """`variant` and the variants it continues, first session first: an analyst's history."""
    chain: list[ExtendedVariant] = []
    while variant is not None:
        chain.insert(0, variant)
        variant = variant.continues
    return chain


def bound_keys(variant: ExtendedVariant | None) -> frozenset[str]:
    """Every key a history ending in a session of `variant` binds: what a session continuing it may reference."""
    return frozenset(k for v in lineage(variant) for t in v.turns for k, _ in t.base.binds)


def _own_session_answers(path: Path, variant: ExtendedVariant) -> None:
    """A cross-session turn must need a key that no earlier turn of its own session states (in its
    question or SQL) or binds: otherwise its own session answers it, and it measures nothing across sessions."""
    said: set[str] = set()
    for index, turn in enumerate(variant.turns, start=1):
        fresh = set(turn.base.refs) - said
        if turn.tag in CROSS_SESSION_TAGS and not fresh:
            raise TemplateError(
                path, f"variant {variant.id}, turn {index}.refs", f"a {turn.tag} turn answerable inside its own "
                f"session: earlier turns of it state every key it references ({sorted(turn.base.refs)})",
            )
        said |= turn.base.stated_keys() | turn.base.sql_keys | {k for k, _ in turn.base.binds}


def _validate_extended_variant(path: Path, variant: ExtendedVariant) -> None:
    free = frozenset(i for i, t in enumerate(variant.turns, start=1) if t.tag in SELF_CONTAINED_TAGS)
    carried = bound_keys(variant.continues)
    validate_turns(path, Variant(variant.id, tuple(t.base for t in variant.turns)), free, carried)
    bound: set[str] = set(carried)
    openings = CROSS_SESSION_TAGS if variant.continues else ("baseline",)
    for index, turn in enumerate(variant.turns, start=1):
        where = f"variant {variant.id}, turn {index}"
        if turn.tag == "baseline" and index != 1 or index == 1 and turn.tag not in openings:
            raise TemplateError(
                path, f"{where}.tag", f"turn 1 is tagged {' or '.join(openings)} (a session continuing another "
                "opens with a cross-session turn), and no other turn baseline",
            )
        if turn.tag in CROSS_SESSION_TAGS and not set(turn.base.refs) & carried:
            raise TemplateError(
                path, f"{where}.refs", f"a {turn.tag} turn references a key of the session its variant continues "
                f"({sorted(carried) or 'it continues none'})",
            )
        binds = {k for k, _ in turn.base.binds}
        for key in turn.overwrites:
            if key not in bound:
                raise TemplateError(
                    path,
                    f"{where}.overwrites",
                    f"overwrites key '{key}' that no earlier turn binds (bound: {sorted(bound)})",
                )
            if key not in binds:
                raise TemplateError(
                    path, f"{where}.overwrites", f"overwrites key '{key}' but does not bind it"
                )
        if turn.tag == "distractor" and index != len(variant.turns):
            raise TemplateError(
                path, f"{where}.tag", "a distractor turn is its variant's last (sessions before their twin drop it)"
            )
        if turn.tag == "detour" and turn.base.refs:
            raise TemplateError(path, f"{where}.refs", "a detour states everything it needs (no refs)")
        if turn.tag == "correction" and not turn.overwrites or turn.overwrites and turn.tag not in OVERWRITING_TAGS:
            raise TemplateError(
                path, f"{where}.overwrites", "a correction turn overwrites keys, and only it or a knowledge_update"
            )
        bound |= binds
    _own_session_answers(path, variant)


def load_extended_template(source: str, directory: Path = EXTENDED_DIR) -> ExtendedTemplate:
    path = extended_template_path(source, directory)
    if not path.exists():
        raise TemplateError(path, "<file>", f"extended template file for {source} does not exist")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TemplateError(path, "<file>", f"not valid YAML: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("source") != source:
        raise TemplateError(path, "source", f"expected a mapping with source: {source}")
    if not isinstance(raw.get("profile"), str):
        raise TemplateError(path, "profile", "expected the name of a profile query in extended/profiles.yaml")
    if not isinstance(raw.get("sessions"), int) or raw["sessions"] < 2:
        raise TemplateError(path, "sessions", "expected the number of sessions, an integer >= 2")
    variants_raw = raw.get("variants")
    if not isinstance(variants_raw, list) or sum(
        not (isinstance(v, dict) and "continues" in v) for v in variants_raw
    ) < MIN_VARIANTS:
        raise TemplateError(path, "variants", f"expected a list of >= {MIN_VARIANTS} variants that continue none")
    wording = _parse_wording(path, raw)
    variants = _parse_variants(path, variants_raw, wording)
    missing = set(PHENOMENA) - {t.tag for v in variants for t in v.turns}
    if missing:
        raise TemplateError(
            path,
            "variants",
            f"no turn tests {', '.join(sorted(missing))}; every source covers every phenomenon",
        )
    returning, histories = _session_counts(path, raw, variants)
    return ExtendedTemplate(
        path,
        source,
        raw["profile"],
        raw["sessions"],
        returning,
        histories,
        tuple(variants),
        wording.pair,
        wording.anchor,
    )



def _parse_variants(path: Path, variants_raw: list[Any], wording: Any) -> list[ExtendedVariant]:
    """The file's variants, each validated; a continuing variant after the one it continues."""
    variants: list[ExtendedVariant] = []
    for i, v in enumerate(variants_raw):
        continued = _continued_variant(path, i, v, variants)
        if not isinstance(v, dict) or not isinstance(v.get("id"), str) or not isinstance(v.get("turns"), list):
            raise TemplateError(path, f"variants[{i}]", "expected a mapping with id and turns")
        if any(v["id"] == seen.id for seen in variants):
            raise TemplateError(path, f"variants[{i}].id", f"duplicate variant id {v['id']!r}")
        turns = tuple(
            _parse_extended_turn(path, f"variant {v['id']}, turn {j}", t, wording, bound_keys(continued))
            for j, t in enumerate(v["turns"], start=1)
        )
        variant = ExtendedVariant(id=v["id"], turns=turns, continues=continued)
        _validate_extended_variant(path, variant)
        variants.append(variant)
    return variants


def _session_counts(path: Path, raw: dict[str, Any], variants: list[ExtendedVariant]) -> tuple[int, int]:
    """(returning, histories): the sessions that return to a twin, and the analysts with a history."""
    returning = raw.get("returning")
    if not isinstance(returning, int) or not 0 < 2 * returning <= raw["sessions"]:
        raise TemplateError(
            path, "returning", f"expected the number of returning sessions, 1 to half of sessions ({raw['sessions']})"
        )
    longest = max((len(lineage(v)) for v in variants), default=1)
    room = (raw["sessions"] - 2 * returning) // longest  # a history's stride (layout)
    count = raw.get("histories", 0)
    if not isinstance(count, int) or not 0 <= count <= room or bool(count) != (longest > 1):
        raise TemplateError(
            path, "histories", f"expected the number of analysts with a history, 1 to {room} (sessions less "
            f"twice returning, over the longest history's {longest} sessions) when a variant continues another, else 0",
        )
    return returning, count


def _continued_variant(path: Path, i: int, raw: Any, earlier: list[ExtendedVariant]) -> ExtendedVariant | None:
    """The variant `raw` continues (`continues: <id>`, a variant listed before it that no other continues:
    an analyst's history is one chain of sessions)."""
    name = raw.get("continues") if isinstance(raw, dict) else None
    if name is None:
        return None
    found = next((v for v in earlier if v.id == name), None)
    taken = {v.continues.id for v in earlier if v.continues is not None}
    if found is None or found.id in taken:
        raise TemplateError(
            path,
            f"variants[{i}].continues",
            f"{name!r} is not a variant listed before it that no other continues "
            f"(listed: {[v.id for v in earlier if v.id not in taken]})",
        )
    return found


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
        walk = _walk(_without_distractor(earlier), profile, 0, walk)[1]
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


def _modal_values(variant: ExtendedVariant, states: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per turn, each referenced key's most common value over the pool (generate.modal_values' rule)."""
    return [
        {key: Counter(s[t][key] for s in states).most_common(1)[0][0] for key in turn.base.refs}
        for t, turn in enumerate(variant.turns)
    ]


def _states(turn: ExtendedRendered, key: str, value: Any) -> bool:
    return stated(turn.question, turn.sql, turn.state_updates, key, value)


def stated(question: str, sql: str, updates: Mapping[str, Any], key: str, value: Any) -> bool:
    """Whether a turn states `key`'s value: binds the key, or names the value in its question or SQL."""
    if key in updates:
        return True
    return any(
        re.search(rf"(?<![\w.]){re.escape(text)}(?![\w.])", where)
        for text, where in ((str(value), question), (sql_literal(value), sql))
    )


def recall_distance(
    rendered: list[ExtendedRendered], index: int, refs: tuple[str, ...], state: dict[str, Any]
) -> int:
    """How many turns back the farthest of `refs` was last stated (bound, asked or written in SQL)."""
    farthest = 0
    for key in refs:
        back = next(
            (index - j for j in range(index - 1, 0, -1) if _states(rendered[j - 1], key, state[key])), index
        )
        farthest = max(farthest, back)
    return farthest


@dataclass(frozen=True)
class Slot:
    """One session of a source's layout (`layout`): what it is instantiated from."""

    variant: ExtendedVariant  # without its distractor turn unless the session returns to a twin
    profile: int  # pool index of its profile
    neighbour: int  # pool index of the profile its fallback SQL (and its twin) uses
    wording: int  # phrasing offset, shared by a returning session and its twin
    twin: int | None  # a returning session: the position of its twin, an earlier session
    continues: int | None = None  # a continuing session: the position of the session it continues
    analyst: int = 0  # who asks (a continuing session: its continued session's analyst)


def _without_distractor(variant: ExtendedVariant) -> ExtendedVariant:
    return replace(variant, turns=tuple(t for t in variant.turns if t.tag != "distractor"))


def histories(template: ExtendedTemplate) -> list[list[ExtendedVariant]]:
    """Each history's variants, first session first: one per variant that continues another and that
    no other continues."""
    continued = {v.continues.id for v in template.variants if v.continues is not None}
    return [lineage(v) for v in template.variants if v.continues is not None and v.id not in continued]


def stride(template: ExtendedTemplate) -> int:
    """Positions between consecutive sessions of a history: at every wave size W up to it, each ran in
    an earlier wave than the next."""
    longest = max((len(h) for h in histories(template)), default=1)
    return (template.sessions - 2 * template.returning) // longest


def layout(template: ExtendedTemplate) -> list[Slot]:
    """The sessions of a source in session order. The first `returning` sessions are twins, and the
    last `returning` return to them, `sessions - returning` positions later (same variant and
    wording, the neighbouring profile); only returning sessions keep their variant's distractor turn.
    Between them, the `histories` analysts' sessions (a history's variants in order, one profile)
    lie `stride` positions apart, interleaved with one another's, so that alike-worded sessions of
    other analysts run between an analyst's; the other positions take the self-contained variants in
    turn. At every wave size W up to the stride, each session of a history and each returning
    session ran in a later wave than the one it comes back to, so episodic retrieval can reach it."""
    with_distractor = [v for v in template.variants if v.turns[-1].tag == "distractor"]
    chains = histories(template)
    in_history = {v.id for h in chains for v in h}
    regular = [v for v in template.variants if v.id not in in_history]
    step, middle = stride(template), template.sessions - 2 * template.returning
    uses: dict[str, Counter[int]] = {}

    def wording(variant: ExtendedVariant, times: int = 1) -> int:
        """The least used phrasing offset of `variant` (a returning session reuses its twin's), so that
        each turn's phrasings spread evenly over its sessions."""
        period = math.lcm(*(len(t.phrasings) for t in variant.turns))
        counts = uses.setdefault(variant.id, Counter())
        offset = min(range(period), key=lambda o: (counts[o], o))
        counts[offset] += times
        return offset

    twins = [with_distractor[k % len(with_distractor)] for k in range(template.returning)]
    offsets = [wording(v, times=2) for v in twins]
    slots: list[Slot | None] = [
        Slot(_without_distractor(v), 2 * k + 1, 2 * k, offsets[k], None) for k, v in enumerate(twins)
    ]
    slots += [None] * middle
    for h in range(template.histories):
        chain, profile = chains[h % len(chains)], 2 * template.returning + 2 * h
        for i, variant in enumerate(chain):
            position = template.returning + h + i * step
            before = None if i == 0 else position - step
            slots[position] = Slot(_without_distractor(variant), profile, profile + 1, wording(variant), None, before)
    free = [p for p in range(template.returning, template.returning + middle) if slots[p] is None]
    for k, position in enumerate(free):
        variant, profile = regular[k % len(regular)], 2 * (template.returning + template.histories + k)
        slots[position] = Slot(_without_distractor(variant), profile, profile + 1, wording(variant), None)
    slots += [Slot(v, 2 * k, 2 * k + 1, offsets[k], k) for k, v in enumerate(twins)]
    placed = [s for s in slots if s is not None]
    analysts: list[int] = []
    for i, s in enumerate(placed):
        analysts.append(1 + i if s.continues is None else analysts[s.continues])
    return [replace(s, analyst=a) for s, a in zip(placed, analysts, strict=True)]


def _session_id(template: ExtendedTemplate, position: int) -> str:
    return f"{PREFIX[template.source]}-X-{position + 1:03d}"


def analyst_id(template: ExtendedTemplate, slot: Slot) -> str:
    return f"{PREFIX[template.source]}-A{slot.analyst:03d}"


def _check_continuation(template: ExtendedTemplate, position: int, slot: Slot, slots: list[Slot]) -> str | None:
    """The id of the session `slot` continues, or a TemplateError naming the turn that would read a
    session that comes later, of another variant or of another analyst."""
    if slot.continues is None:
        return None
    first = next((i for i, t in enumerate(slot.variant.turns, start=1) if t.tag in CROSS_SESSION_TAGS), 1)
    where = f"variant {slot.variant.id}, turn {first}"
    them = _session_id(template, slot.continues)
    if not 0 <= slot.continues < position:
        raise TemplateError(
            template.path, where, f"{_session_id(template, position)} refers to {them}, which comes later"
        )
    other = slots[slot.continues]
    if other.analyst != slot.analyst or other.profile != slot.profile:
        raise TemplateError(
            template.path,
            where,
            f"{_session_id(template, position)} ({analyst_id(template, slot)}) refers to {them} of another analyst "
            f"({analyst_id(template, other)})",
        )
    if slot.variant.continues is None or other.variant.id != slot.variant.continues.id:
        raise TemplateError(template.path, where, f"{them} is not a session of the variant this one continues")
    return them


def _recall_distance(
    template: ExtendedTemplate, variant: ExtendedVariant, session_id: str, own: Any, t: int, state: dict[str, Any]
) -> int:
    """How many turns back turn `t`'s farthest value was last stated; a long_range turn outside LONG_RANGE fails."""
    tmpl = variant.turns[t - 1]
    distance = recall_distance(own, t, tmpl.base.refs, state)
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
    session_id = _session_id(template, position)
    twin = None if slot.twin is None else _session_id(template, slot.twin)
    check_wording(template, variant, session_id, own, slot.wording, profile)
    continued = _check_continuation(template, position, slot, slots)
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
    modes = {v.id: _modal_values(v, pool_states(template, v, pool)) for v in template.variants}
    slots = layout(template) if slots is None else slots
    return [_session(template, i, slots, pool, modes) for i in range(len(slots))]


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


def _row_states(turn: Mapping[str, Any], key: str, value: Any) -> bool:
    updates = turn["state_updates"]
    return updates.get(key, value) == value and stated(turn["question"], turn["gt_sql"], updates, key, value)


def history_violations(by_session: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[tuple[str, int], str]:
    """(session, turn index) -> what is wrong, for each cross-session turn that its analyst's earlier
    sessions' questions and SQL (with the earlier turns of its own session) do not answer, or that its
    own session alone answers. Read from the built turns, values and all, whatever the templates say."""
    problems: dict[tuple[str, int], str] = {}
    for sid, ts in sorted(by_session.items()):
        before = [t for h in earlier_sessions(by_session, sid)[::-1] for t in by_session[h]]
        state = {k: v for t in before for k, v in t["state_updates"].items()}
        for i, t in enumerate(ts):
            refs = list(t["referenced_context_keys"])
            if t["tag"] in CROSS_SESSION_TAGS:
                unseen = [k for k in refs if k not in state or not any(_row_states(e, k, state[k]) for e in [*before, *ts[:i]])]
                if unseen or not refs:
                    problems[(sid, t["turn_index"])] = f"no earlier turn of its analyst states {unseen or 'a key it needs'}"
                elif all(any(_row_states(e, k, state[k]) for e in ts[:i]) for k in refs):
                    problems[(sid, t["turn_index"])] = f"a {t['tag']} turn answerable inside its own session"
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

"""The order of a source's extended sessions: twins and the sessions returning to them, the analysts'
histories `stride` positions apart, and the check that a session continues only an earlier session
of its own analyst."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

from memsql_assets.lib.benchmark.extended.template import (
    ExtendedTemplate,
    ExtendedVariant,
    lineage,
    without_distractor,
)
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.sources.config import PREFIX
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS


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
        Slot(without_distractor(v), 2 * k + 1, 2 * k, offsets[k], None) for k, v in enumerate(twins)
    ]
    slots += [None] * middle
    for h in range(template.histories):
        chain, profile = chains[h % len(chains)], 2 * template.returning + 2 * h
        for i, variant in enumerate(chain):
            position = template.returning + h + i * step
            before = None if i == 0 else position - step
            slots[position] = Slot(without_distractor(variant), profile, profile + 1, wording(variant), None, before)
    free = [p for p in range(template.returning, template.returning + middle) if slots[p] is None]
    for k, position in enumerate(free):
        variant, profile = regular[k % len(regular)], 2 * (template.returning + template.histories + k)
        slots[position] = Slot(without_distractor(variant), profile, profile + 1, wording(variant), None)
    slots += [Slot(v, 2 * k, 2 * k + 1, offsets[k], k) for k, v in enumerate(twins)]
    placed = [s for s in slots if s is not None]
    analysts: list[int] = []
    for i, s in enumerate(placed):
        analysts.append(1 + i if s.continues is None else analysts[s.continues])
    return [replace(s, analyst=a) for s, a in zip(placed, analysts, strict=True)]


def extended_session_id(template: ExtendedTemplate, position: int) -> str:
    return f"{PREFIX[template.source]}-X-{position + 1:03d}"


def analyst_id(template: ExtendedTemplate, slot: Slot) -> str:
    return f"{PREFIX[template.source]}-A{slot.analyst:03d}"


def check_continuation(template: ExtendedTemplate, position: int, slot: Slot, slots: list[Slot]) -> str | None:
    """The id of the session `slot` continues, or a TemplateError naming the turn that would read a
    session that comes later, of another variant or of another analyst."""
    if slot.continues is None:
        return None
    first = next((i for i, t in enumerate(slot.variant.turns, start=1) if t.tag in CROSS_SESSION_TAGS), 1)
    where = f"variant {slot.variant.id}, turn {first}"
    them = extended_session_id(template, slot.continues)
    if not 0 <= slot.continues < position:
        raise TemplateError(
            template.path, where, f"{extended_session_id(template, position)} refers to {them}, which comes later"
        )
    other = slots[slot.continues]
    if other.analyst != slot.analyst or other.profile != slot.profile:
        raise TemplateError(
            template.path,
            where,
            f"{extended_session_id(template, position)} ({analyst_id(template, slot)}) refers to {them} of another analyst "
            f"({analyst_id(template, other)})",
        )
    if slot.variant.continues is None or other.variant.id != slot.variant.continues.id:
        raise TemplateError(template.path, where, f"{them} is not a session of the variant this one continues")
    return them

"""Loading an extended template file (templates/extended/<source>.yaml): parsing, and the static rules
each variant and turn must meet; a bad file fails with one line naming the file, variant and turn."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memsql_assets.lib.benchmark.extended.template import (
    EXTENDED_DIR,
    EXTENDED_FIELDS,
    MIN_PHRASINGS,
    MIN_VARIANTS,
    OVERWRITING_TAGS,
    ExtendedTemplate,
    ExtendedTurnTemplate,
    ExtendedVariant,
    bound_keys,
    extended_template_path,
    lineage,
    returned_keys,
)
from memsql_assets.lib.benchmark.templates import TurnTemplate, Variant, parse_turn, validate_turns
from memsql_assets.lib.benchmark.wording import claims
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.sql.syntax import query_keys
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, EARLIER_RESULT, PHENOMENA, SELF_CONTAINED_TAGS


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
    returns = raw.get("returns")
    if returns is not None and not isinstance(returns, str):
        raise TemplateError(path, f"{where}.returns", "expected the key later sessions name this turn's result by")
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
    return ExtendedTurnTemplate(base, tag, texts, tuple(overwrites), found, returns)


def _parse_wording(path: Path, raw: dict[str, Any]) -> _Wording:
    pair = raw.get("ordered_pair") or []
    if not isinstance(pair, list) or len(pair) not in (0, 2) or not all(isinstance(k, str) for k in pair):
        raise TemplateError(path, "ordered_pair", "expected two key names (the pair older/newer compares)")
    anchor = raw.get("anchor")
    if anchor is not None and not isinstance(anchor, str):
        raise TemplateError(path, "anchor", "expected the key that holds the entity the session began with")
    return _Wording(tuple(pair), anchor)


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
        said |= turn.base.stated_keys() | turn.base.sql_keys | turn.bound()


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
    _results(path, variant)
    _own_session_answers(path, variant)


def _results(path: Path, variant: ExtendedVariant) -> None:
    """A returned result is a new key; a turn re-uses one only as a query (syntax.QUERY_SLOT), in its
    ground truth and paraphrase alike, and only one an earlier session returned; and exactly such a
    turn is tagged earlier_result."""
    returned = returned_keys(variant.continues)
    known = set(bound_keys(variant.continues))
    for index, turn in enumerate(variant.turns, start=1):
        where = f"variant {variant.id}, turn {index}"
        if turn.returns in known | {k for k, _ in turn.base.binds}:
            raise TemplateError(path, f"{where}.returns", f"returns its result as '{turn.returns}', a key already bound")
        queries = query_keys(turn.base.sql)
        if query_keys(turn.base.paraphrase) != queries:
            raise TemplateError(
                path, f"{where}.paraphrase", f"uses {sorted(query_keys(turn.base.paraphrase))} as a query; "
                f"the ground truth uses {sorted(queries)}",
            )
        misused = sorted(queries - returned | (set(turn.base.refs) & returned) - queries)
        if misused:
            raise TemplateError(
                path, f"{where}.sql", f"'{misused[0]}' must be a result an earlier session returns, used as a "
                f"query: FROM ({{{misused[0]}}}) (returned: {sorted(returned) or 'none'})",
            )
        if bool(queries) != (turn.tag == EARLIER_RESULT):
            raise TemplateError(
                path, f"{where}.tag", f"a turn re-uses an earlier session's result (a query placeholder) if and "
                f"only if it is tagged {EARLIER_RESULT}",
            )
        known |= turn.bound()


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

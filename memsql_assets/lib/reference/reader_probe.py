"""The `reader-probe` reference model's reading: each value the turn needs, taken from the TEXT of the
prompt as build_messages (lib/agent/prompts.py) assembles it, the way a careful LLM reads it.

reader-probe is a perfect SQL writer for the current turn (it knows the turn's SQL template and the
names of the keys it references) whose only weakness is memory: every referenced value must be found
in the prompt. It is a model-free yardstick of what a condition's prompt shows, not an upper bound:
a real LLM reads more (below).

Where it looks, in this order:

1. the Resolved block (annotated mode; the system prompt calls its values authoritative);
2. the SQL of the earlier turns the prompt shows: the Recent conversation, most recent first (under
   H every earlier turn), then an extractive Summary of earlier turns (S), most recent first, then the
   Similar past turns (C, D, M0), in retrieval order. A key whose name starts with `first_` ("the
   company we began with") reads first the turns whose question pointed to the start as well ("Back
   to the first customer: ...", the phrases the wording check evaluates: their SQL states it), most
   recent first, then those turns oldest first. With no such turn in view, it takes the value a shown
   turn's SQL states without its question naming it and that no older shown turn states: what the
   conversation carried from before the turns in view (`carried_from_before`), not the oldest turn
   shown, which is often a detour ("What is Zed Ltd's total order count?").

It reads SQL as text (lib/sql/filters.py), never against the benchmark's templates: the template's
placeholder `{k}` is compared with some expression (`o.CustomerID = {customer_id}`, `strftime('%Y',
o.OrderDate) IN ({older_year}, {newer_year})`); an earlier turn's SQL that compares the same
expression with as many literals states the value(s), by position ("Actually, I meant 2019" is taken
because the correction's SQL is the most recent to state the pair). When an earlier SQL named the
entity by another column of the table it joined (`c.CompanyName = 'Around the Horn'` joined on
`c.CustomerID`), the probe writes the lookup a careful writer would: `(SELECT CustomerID FROM
Customers WHERE CompanyName = 'Around the Horn')`. A turn whose question opens as a side question
("Separately: ...") is not read for the conversation's current values.

Cues in the current question (its `Question:` line), as a careful LLM reads them:

- **A value the question names.** Where the template compares one placeholder with an expression and
  the prompt's SQL compared that expression with several values, the one the question names in words
  is taken ("Switch to Acme. What was its cash in those years?": `af.metric = 'cash'`, although the
  most recent SQL said `'revenue'`). Named means as a word or phrase, a plural allowed, an underscore
  read as a space; a one-letter code only as written (status 'A', never the article "a").
- **A return cue** ("back to", "returning to", "going back") points past the most recent digression:
  the run of most recent turns each of whose question names every literal its SQL compares. Such a turn
  carries nothing from the conversation (an unmarked detour: "What is Zed Ltd's total order count?"),
  so the values the question resumes are read from the turns before it, in the Recent conversation and
  in a Summary alike. The oldest turn shown is never skipped: it may be the one that opened the thread.

Inferences about a year pair (`YEAR_PAIR`), as a careful LLM makes them: "the older of the two
years" is the smaller of the pair the SQL stated; a turn whose question named "the newer year" (or
"the later of my years") and whose SQL compared one year stated that one; a turn about "both years"
whose prompt shows only one of them takes the other to be the adjacent year, unless a turn shown later
in its reading order states that one itself.

A convention as it holds now ("my years as they stand now", "my segment as I define it now", the
extended benchmark's knowledge updates across sessions) is read first from the shown turns whose
question changed it ("From now on, by my segment I mean ...", "By my years I now mean ..."), then as
any other value: a careful LLM takes the latest definition, where the order of the Similar past turns
(by similarity) says nothing about which came last.

An earlier result ("the three products that came out on top last time": the template re-uses a query
as a subquery, `SELECT product_id FROM ({top_products})`, lib/sql/syntax.py QUERY_SLOT) is read as a
careful LLM re-uses a query it was shown: the first shown query, in the order above and asides
skipped, that kept the top rows of a ranking (ORDER BY ... LIMIT n, n >= 2: a turn's whole SQL, or a
query in a FROM of it, as a later turn that re-used it shows it; filters.top_queries) and returns the
columns the template reads from it, written as it is. It takes the first such query, whatever the
question's description says of it (the products, the years, the accounts), and never the rows of a
`Result:` line.

What it cannot do, where a careful LLM can: read values stated only in a question's words and never
in any SQL shown (a company name in a question whose SQL failed), read `Result:` lines, a summary a
model wrote in prose (S with `model:`), hints, trajectories, a memory's facts block or a plug-in's own
blocks; resolve a reference by meaning beyond the cues above ("the customer from two questions ago",
"its" after an unmarked detour with no return cue, which the extended benchmark's wording avoids);
tell which of several redefinitions is the latest when Similar past turns show more than one (it takes
the first retrieved); know that a value carried into the window is the conversation's start when a
later turn also carried another one in from before it; recover a value from SQL it cannot parse. So a
real LLM can score above it (docs/reference_models.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.agent.prompts import QUESTION_PREFIX, RECENT_HEADER, SIMILAR_HEADER
from memsql_assets.lib.benchmark.wording import ORIGIN
from memsql_assets.lib.memory.summary import SUMMARY_HEADER
from memsql_assets.lib.sql.filters import (
    Filter,
    entity_subquery,
    filters,
    slot_key,
    template_filters,
    top_queries,
)
from memsql_assets.lib.sql.syntax import query_keys

# The template keys of a session's compared years, older first: one implies the other (module docstring).
YEAR_PAIR = ("older_year", "newer_year")
# What reader-probe writes for a value it did not find: the SQL fails, and names no key.
UNFOUND = "{?}"
# How a question names one year of the pair, older first ("the older year", "the earlier of my years").
YEAR_CUES = (
    re.compile(r"\b(older|earlier|first) (?:year\b|of (?:my|the|those|these|our) (?:two )?years\b)", re.IGNORECASE),
    re.compile(r"\b(newer|later|second|recent) (?:year\b|of (?:my|the|those|these|our) (?:two )?years\b)", re.IGNORECASE),
)
# A key the wording points back to the start of the conversation with ("the company we began with").
FIRST_PREFIX = "first_"
# A question that opens like this asks aside: its values are not the conversation's current ones.
SIDE_QUESTION_RE = re.compile(r"^\s*(separately|as an aside|aside|by the way|unrelated)\b", re.IGNORECASE)
# A question that says it returns to something: it resumes the conversation's thread, past a digression.
RETURN_CUE_RE = re.compile(r"\b(back to|return(?:ing)? to|go(?:ing)? back)\b", re.IGNORECASE)
# A question that asks for a convention as it holds now ("my years as they stand now"), and one that
# changed a convention ("from now on, my segment is ..."): the first reads the second's SQL first.
NOW_CUE_RE = re.compile(r"\bas (?:they|it) stands? now\b|\bas I define (?:it|them) now\b", re.IGNORECASE)
UPDATE_RE = re.compile(r"\bfrom now on\b|\bI now mean\b", re.IGNORECASE)


class SqlFragment(str):
    """A value the probe writes as SQL text (a lookup subquery), not as a literal."""


@dataclass(frozen=True)
class PastTurn:
    question: str
    sql: str


@dataclass(frozen=True)
class _Slot:
    """The placeholders the template compares with one expression, in the template's order."""

    label: str
    keys: tuple[str | None, ...]  # a placeholder's key, None for a fixed literal of the template
    column: str | None
    table: str | None


def past_turns(texts: list[str], header: str) -> list[PastTurn]:
    """The turns of every `header` block of the messages' `texts`, in the order the prompt shows them.
    A turn is its `Q:` line, its `SQL:` line (and the SQL's continuation lines) and an optional
    `Result:` line; after a blank line, anything but the next `Q:` line ends the block (a summary's
    turns have no result line, and the next block's header follows them)."""
    turns: list[dict[str, str]] = []
    for text in texts:
        in_block, current, blank = False, None, False
        for line in text.splitlines():
            if line.strip() == header:
                in_block, blank = True, False
                continue
            if not in_block:
                continue
            if not line.strip():
                blank = True
                continue
            if line.startswith("Q: "):
                current = {"question": line[3:], "sql": ""}
                turns.append(current)
            elif blank:
                in_block, current = False, None
            elif current is not None and line.startswith("SQL: "):
                current["sql"] = line[5:]
            elif current is not None and line.startswith("Result: "):
                current = None
            elif current is not None and current["sql"]:  # a multi-line SQL
                current["sql"] += " " + line
            else:
                in_block = False
            blank = False
    return [PastTurn(t["question"], t["sql"]) for t in turns]


def _slots(sql_template: str, keys: list[str]) -> list[_Slot]:
    """The template's compared expressions that hold at least one of `keys`."""
    grouped: dict[str, list[Filter]] = {}
    for f in template_filters(sql_template):
        grouped.setdefault(f.label, []).append(f)
    slots = []
    for label, group in grouped.items():
        placed = tuple(slot_key(v) for f in group for v in f.values)
        if any(k in keys for k in placed if k):
            slots.append(_Slot(label, placed, group[0].column, group[0].table))
    return slots


def _year_pair(slot: _Slot, values: list[Any], question: str) -> dict[str, Any] | None:
    """A year pair's values where the SQL stated one year, or the pair for one of them; None: not a pair case."""
    if len(values) == 2 and len(slot.keys) == 1 and slot.keys[0] in YEAR_PAIR:  # "the older of the two years"
        return {slot.keys[0]: sorted(values, key=str)[YEAR_PAIR.index(slot.keys[0])]}
    if len(values) != 1 or not set(slot.keys) <= set(YEAR_PAIR):
        return None
    # "Now focus on the newer year": that one (when the other is needed, adjacent_year infers it).
    which = next((k for k, cue in zip(YEAR_PAIR, YEAR_CUES, strict=True) if cue.search(question)), None)
    if which is not None:
        return {which: values[0]}
    return {} if len(slot.keys) == 2 else None


def _stated(slot: _Slot, turn: PastTurn) -> dict[str, Any]:
    """The slot's keys as `turn`'s SQL states them: the same expression with as many literals, else
    (one key on a column) the entity another column of a joined table names."""
    said = filters(turn.sql)
    values = [v for f in said if f.label == slot.label for v in f.values]
    pair = _year_pair(slot, values, turn.question)
    if pair is not None:
        return pair
    if len(values) == len(slot.keys):
        return {k: v for k, v in zip(slot.keys, values, strict=True) if k}
    if len(slot.keys) != 1 or slot.column is None:
        return {}
    for f in reversed(said):
        if f.table and slot.table and f.table.lower() != slot.table.lower():
            lookup = entity_subquery(slot.column, f)
            if lookup:
                return {slot.keys[0]: SqlFragment(lookup)} if slot.keys[0] else {}
    return {}


def current_question(texts: list[str]) -> str:
    """The question the prompt asks: its last `Question: ` line."""
    for text in reversed(texts):
        for line in reversed(text.splitlines()):
            if line.startswith(QUESTION_PREFIX):
                return line[len(QUESTION_PREFIX) :]
    return ""


def names(question: str, value: Any) -> bool:
    """Whether `question` names `value` in words: as a whole word or phrase (a plural allowed), an
    underscore read as a space (`net_income`: "net income"), a one-letter code only as written (status
    'A', never the article "a")."""
    text = str(value).replace("_", " ")
    flags = 0 if len(text) == 1 else re.IGNORECASE
    return re.search(rf"(?<!\w){re.escape(text)}(?:e?s)?(?!\w)", question, flags) is not None


def self_contained(turn: PastTurn) -> bool:
    """A turn whose question names every literal its SQL compares: it carries nothing from the
    conversation (a digression states everything it is about)."""
    said = filters(turn.sql)
    return bool(said) and all(names(turn.question, v) for f in said for v in f.values)


def past_digression(recent: list[PastTurn], question: str) -> list[PastTurn]:
    """`recent` (most recent first) as a question with a return cue reads it: without the run of most
    recent self-contained turns, but never without the oldest turn shown (it may open the thread)."""
    if not RETURN_CUE_RE.search(question):
        return recent
    skip = 0
    while skip < len(recent) - 1 and self_contained(recent[skip]):
        skip += 1
    return recent[skip:]


def _named(slot: _Slot, turns: Iterable[PastTurn], question: str) -> dict[str, Any]:
    """A one-placeholder slot's value that the current question names, among the values the prompt's
    SQL compared the slot's expression with; none unless exactly one is named."""
    if len(slot.keys) != 1 or slot.keys[0] is None:
        return {}
    seen = {
        v
        for t in turns
        for f in filters(t.sql)
        if f.label == slot.label and len(f.values) == 1
        for v in f.values
    }
    hits = [v for v in seen if names(question, v)]
    return {slot.keys[0]: hits[0]} if len(hits) == 1 else {}


def _literals(value: Any) -> list[Any]:
    """The literals a stated value is made of: a lookup's quoted names, else the value."""
    return re.findall(r"'((?:[^']|'')*)'", value) if isinstance(value, SqlFragment) else [value]


def carried_from_before(slot: _Slot, turns: Iterable[PastTurn]) -> dict[str, Any]:
    """Of `turns` (oldest first), the first value a turn's SQL states without its question naming it,
    and that no older turn states: what the conversation carried from before the turns in view, its
    start, where no question in view points to the start (a detour names what it is about)."""
    seen: set[str] = set()
    for turn in turns:
        stated = _stated(slot, turn)
        values = {str(v) for v in stated.values()}
        named = any(names(turn.question, lit) for v in stated.values() for lit in _literals(v))
        if stated and not named and not values & seen:
            return stated
        seen |= values
    return {}


def _read(slot: _Slot, turns: Iterable[PastTurn], wanted: list[str]) -> dict[str, Any]:
    """The first turn's statement of a `wanted` key; else the first turn's of the slot's other key (the
    other year of a pair, from which adjacent_year infers the wanted one)."""
    other: dict[str, Any] = {}
    for turn in turns:
        if SIDE_QUESTION_RE.match(turn.question):
            continue
        found = _stated(slot, turn)
        if any(k in found for k in wanted):
            return found
        other = other or found
    return other


def read_prompt(
    texts: list[str], keys: list[str], resolved: Mapping[str, Any], sql_template: str
) -> dict[str, Any]:
    """Each of `keys` from the prompt (the messages' `texts`) as the module docstring reads it;
    `resolved` is the prompt's Resolved block, `sql_template` the turn's own template."""
    found = {k: resolved[k] for k in keys if k in resolved}
    question = current_question(texts)
    recent = list(reversed(past_turns(texts, RECENT_HEADER)))  # most recent first
    summary = list(reversed(past_turns(texts, SUMMARY_HEADER)))
    similar = past_turns(texts, SIMILAR_HEADER)
    thread, summary_thread = past_digression(recent, question), past_digression(summary, question)
    pair: dict[str, Any] = {}
    for slot in _slots(sql_template, keys):
        wanted = [k for k in slot.keys if k in keys and k not in found]
        if not wanted:
            continue
        first = any(k.startswith(FIRST_PREFIX) for k in wanted)
        origin = [t for t in recent if ORIGIN.search(t.question)]  # most recent first
        start = carried_from_before(slot, [*reversed(summary), *reversed(recent)]) if first and not origin else {}
        order = (
            [*origin, *reversed(recent), *reversed(summary), *similar]
            if first
            else [*thread, *summary_thread, *similar]
        )
        if NOW_CUE_RE.search(question):  # the convention as it stands now: the turn that changed it first
            order = [t for t in order if UPDATE_RE.search(t.question)] + order
        stated = _named(slot, [*recent, *summary, *similar], question) or start or _read(slot, order, wanted)
        found.update({k: v for k, v in stated.items() if k in wanted})
        pair.update({k: v for k, v in stated.items() if k not in wanted})  # the other year of a pair
    for key in sorted(query_keys(sql_template) & set(keys) - set(found)):
        result = earlier_result(result_columns(sql_template, key), [*thread, *summary_thread, *similar])
        found.update({key: result} if result else {})
    return {**found, **adjacent_year(keys, {**pair, **found})}


def result_columns(sql_template: str, key: str) -> frozenset[str]:
    """The columns the template reads from the earlier result `key` stands for, the select list of its
    `SELECT <columns> FROM ({key})` (none where it reads the result otherwise)."""
    slot = re.search(rf"\bFROM\s*\(\s*\{{{key}\}}\s*\)", sql_template, re.IGNORECASE)
    head = sql_template[: slot.start()] if slot else ""
    select = head.upper().rfind("SELECT")
    if not slot or select < 0:
        return frozenset()
    return frozenset(c.strip().split(".")[-1].split()[-1].lower() for c in head[select + len("SELECT") :].split(","))


def earlier_result(columns: frozenset[str], turns: Iterable[PastTurn]) -> SqlFragment | None:
    """The first shown query that kept the top rows of a ranking (filters.top_queries) and returns
    `columns`, as written: the result a question names by description ("the products that came out on
    top last time"). A turn asking aside is not read."""
    for turn in turns:
        if columns and not SIDE_QUESTION_RE.match(turn.question):
            for text, returned in top_queries(turn.sql):
                if columns <= returned:
                    return SqlFragment(text)
    return None


def adjacent_year(keys: list[str], found: Mapping[str, Any]) -> dict[str, Any]:
    """The missing year of a needed year pair, one year from the year that was found (text stays text)."""
    older, newer = YEAR_PAIR
    for missing, known, step in ((older, newer, -1), (newer, older, 1)):
        if missing in keys and missing not in found and known in found:
            year = found[known]
            try:
                inferred = int(year) + step
            except (TypeError, ValueError):
                return {}
            return {missing: str(inferred) if isinstance(year, str) else inferred}
    return {}

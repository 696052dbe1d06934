"""The `reader-probe` reference model: a perfect SQL writer that, like a careful LLM, takes each
referenced value from anywhere in the prompt as build_messages (lib/agent/prompts.py) assembles it.

Sources, in priority order: the Resolved block; the turns of the Recent conversation, most recent
first (under H, every earlier turn); the turns of an extractive Summary of earlier turns (S), most
recent first; the Similar past turns, in retrieval order (C, D, M0). A past turn gives values when its SQL (and, to
tell templates with the same SQL apart, its question) matches one of its source's turn templates,
which the probe knows: for the matched template, a key k gets a value when k is in its `binds`
(the value of its source placeholder, or of its `let` constant) or k is one of its refs used as a
placeholder. A placeholder that is only the turn's `let` override binds nothing.

One inference, as a careful LLM makes it: a session compares a year pair (`YEAR_PAIR`), and a turn
about "both years" whose prompt shows only one of them takes the other to be the adjacent year (the
LLM runs answered so: with the window past the turn that stated the older year, they used the year
before the newer one). It is right whenever the pair is consecutive, as the paper benchmark's
profiles choose it, and wrong where a correction or a gap made it otherwise. The probe never sees a
value by any other path: the gateway hands it only the fields in BUILTIN_CONTEXT_FIELDS.

What it does not read, where a careful LLM would: free-form SQL (a real model's own earlier SQL that
no template matches), `Result:` lines, a summary a model wrote in prose (S with `model:`), hints,
trajectories, and blocks a plug-in adds under headers of its own.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, TurnTemplate, load_tier_template
from memsql_assets.lib.memory.summary import SUMMARY_HEADER
from memsql_assets.lib.vocabulary import SOURCE_PREFIXES

# Headers of the past-turn blocks (prompts.build_messages, summary.py) and the lines of one turn (_turn_lines).
RECENT_HEADER = "Recent conversation:"
SIMILAR_HEADER = "Similar past turns:"
# A SQL literal as generate.sql_literal writes one, or a key a probe left unfilled (`{key}`).
_LITERAL = r"'(?:[^']|'')*'|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_UNFILLED_RE = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")
# The template keys of a session's compared years, older first: one implies the other (module docstring).
YEAR_PAIR = ("older_year", "newer_year")


@dataclass(frozen=True)
class PastTurn:
    question: str
    sql: str


@dataclass(frozen=True)
class _Pattern:
    template: TurnTemplate
    sql: re.Pattern[str]
    question: re.Pattern[str]


def _fold(text: str) -> str:
    return " ".join(text.split())


def template_regex(template: str, literal: bool) -> re.Pattern[str]:
    """Literal text escaped, whitespace folded, each {name} a capture group: a SQL literal or the
    unfilled `{name}` text (literal=True), any text (literal=False); a repeated name must repeat."""
    out: list[str] = []
    seen: set[str] = set()
    for text, name, _spec, _conv in string.Formatter().parse(_fold(template)):
        out.append(r"\s+".join(re.escape(part) for part in text.split(" ")))
        if not name:
            continue
        if name in seen:
            out.append(f"(?P={name})")
            continue
        seen.add(name)
        value = f"{_LITERAL}|\\{{{re.escape(name)}\\}}" if literal else ".+?"
        out.append(f"(?P<{name}>{value})")
    return re.compile("".join(out), re.IGNORECASE if not literal else 0)


@functools.lru_cache(maxsize=8)
def _patterns(prefix: str) -> tuple[_Pattern, ...]:
    """Every turn template of the source whose session-id prefix is `prefix`, as regexes."""
    source = next((name for name, p in SOURCE_PREFIXES.items() if p == prefix), None)
    if source is None:
        raise ValueError(f"unknown source prefix {prefix!r} (known: {', '.join(SOURCE_PREFIXES.values())})")
    patterns = []
    for tier in (1, 2, 3):
        for variant in load_tier_template(source, tier, TEMPLATES_DIR).variants:
            for turn in variant.turns:
                patterns.append(
                    _Pattern(turn, template_regex(turn.sql, literal=True), template_regex(turn.question, False))
                )
    return tuple(patterns)


def parse_sql_literal(text: str) -> Any:
    """The value a SQL literal stands for; None for an unfilled `{key}`."""
    if _UNFILLED_RE.match(text):
        return None
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text)


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


def turn_values(prefix: str, turn: PastTurn) -> dict[str, Any]:
    """What one past turn tells about the session's keys (rule in the module docstring)."""
    sql, question = _fold(turn.sql), _fold(turn.question)
    matches = [(p, m) for p in _patterns(prefix) if (m := p.sql.fullmatch(sql))]
    if not matches:
        return {}
    by_question = [(p, m) for p, m in matches if p.question.fullmatch(question)]
    pattern, match = (by_question or matches)[0]
    captured = {k: parse_sql_literal(v) for k, v in match.groupdict().items()}
    captured = {k: v for k, v in captured.items() if v is not None}
    template = pattern.template
    let = dict(template.let)
    values: dict[str, Any] = {}
    for key, src in template.binds:
        if src in captured:
            values[key] = captured[src]
        elif src in let:
            values[key] = let[src]
    for key in template.refs:
        if key in captured and key not in values:
            values[key] = captured[key]
    return values


def read_prompt(
    prefix: str, texts: list[str], keys: list[str], resolved: Mapping[str, Any]
) -> dict[str, Any]:
    """Each of `keys` from the first place in the prompt (the messages' `texts`) that gives it,
    in the priority of the module docstring; `resolved` is the prompt's Resolved block."""
    found = {k: resolved[k] for k in keys if k in resolved}
    recent = list(reversed(past_turns(texts, RECENT_HEADER)))
    summary = list(reversed(past_turns(texts, SUMMARY_HEADER)))
    for turn in recent + summary + past_turns(texts, SIMILAR_HEADER):
        if len(found) == len(keys):
            break
        for key, value in turn_values(prefix, turn).items():
            if key in keys and key not in found:
                found[key] = value
    return {**found, **adjacent_year(keys, found)}


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

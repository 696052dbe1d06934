"""The extended benchmark's wording check: no question's relative wording contradicts its ground truth.

A question may refer to a value relatively ("the older year", "the company we began with") only in
the forms this module evaluates, each against the session state at that turn:
- an ORDER word (older/earlier, newer/later) names one key of the template's `ordered_pair`, the only
  one of the pair the turn uses; its value must be the pair's smallest (older) or largest (newer);
- an ORIGIN phrase (the first/original <entity>, the <entity> we began/started with, from the start)
  names the template's `anchor`; the turn must use it, holding the value turn 1 bound.
Any other word that places a value in the conversation's past (before, previous, first, original, ...)
cannot be evaluated, so the template fails to load: nothing is built on a turn nobody checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import TemplateError

ORDER = re.compile(r"\b(?P<word>older|earlier|newer|later)\b(?: of the two)?(?: years?| ones?)?", re.I)
SMALLEST = frozenset({"older", "earlier"})
ORIGIN = re.compile(
    r"\b(?:the (?:first|original) \w+"
    r"|\w+ we (?:began|started) with"
    r"|\w+ from the start)\b",
    re.I,
)
# Words that place a value in the conversation's past: allowed only inside an evaluated phrase.
RELATIVE = re.compile(
    r"\b(?:older|newer|earlier|later|before|previous|prior|first|original|originally|"
    r"began|started|start|initial|last)\b",
    re.I,
)


@dataclass(frozen=True)
class Claim:
    """One relative wording of a phrasing: the key it names, and what its value must be."""

    key: str
    kind: str  # "min" or "max" (an ORDER word over the pair), "origin" (the anchor's turn-1 value)


def claims(
    path: Path, where: str, text: str, uses: set[str], pair: tuple[str, ...], anchor: str | None
) -> tuple[Claim, ...]:
    """The claims of one phrasing, or a TemplateError for relative wording the check cannot evaluate.
    `uses`: the keys the turn's ground truth takes from the session state (its refs)."""
    found: list[Claim] = []
    rest = text
    for match in ORDER.finditer(text):
        named = [k for k in pair if k in uses]
        if len(named) != 1:
            raise TemplateError(
                path,
                where,
                f"says {match.group(0)!r} but uses {len(named)} key(s) of the ordered_pair "
                f"{list(pair) or '(none declared)'}; the check needs exactly one to evaluate it",
            )
        found.append(Claim(named[0], "min" if match.group("word").lower() in SMALLEST else "max"))
        rest = rest.replace(match.group(0), " ")
    for match in ORIGIN.finditer(text):
        if anchor is None or anchor not in uses:
            raise TemplateError(
                path,
                where,
                f"says {match.group(0)!r} but does not use the template's anchor "
                f"{anchor or '(none declared)'}; the check cannot evaluate it",
            )
        found.append(Claim(anchor, "origin"))
        rest = rest.replace(match.group(0), " ")
    unchecked = RELATIVE.search(rest)
    if unchecked:
        raise TemplateError(
            path,
            where,
            f"relative wording {unchecked.group(0)!r} that the wording check cannot evaluate; "
            "state the value, or use an ORDER word or ORIGIN phrase (lib/benchmark/wording.py)",
        )
    return tuple(found)


def contradiction(
    claim: Claim, state: Mapping[str, Any], opened: Mapping[str, Any], pair: tuple[str, ...]
) -> str | None:
    """Why `claim` is false in `state` (what earlier turns bound; `opened`: what turn 1 bound), or None."""
    value = state[claim.key]
    if claim.kind == "origin":
        return (
            None
            if value == opened.get(claim.key)
            else (
                f"calls {claim.key}={value!r} where the session began, but turn 1 bound {opened.get(claim.key)!r}"
            )
        )
    values = [state[k] for k in pair]
    want = min(values) if claim.kind == "min" else max(values)
    if value == want and values.count(want) == 1:
        return None
    word = "older" if claim.kind == "min" else "newer"
    return f"calls {claim.key}={value!r} the {word} one, but the pair holds {dict(zip(pair, values, strict=True))}"

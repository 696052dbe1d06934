"""An extended template's types (a turn, a variant, a source's template) and a variant's history."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, TurnTemplate
from memsql_assets.lib.benchmark.wording import Claim
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK

EXTENDED_DIR = TEMPLATES_DIR / EXTENDED_BENCHMARK
MIN_PHRASINGS = 3
MIN_VARIANTS = 6
EXTENDED_FIELDS = ("tag", "phrasings", "overwrites", "returns")
# Tags whose turn may rebind keys an earlier turn (or the continued session) bound.
OVERWRITING_TAGS = ("correction", "knowledge_update")


@dataclass(frozen=True)
class ExtendedTurnTemplate:
    base: TurnTemplate  # its question is the first phrasing
    tag: str
    phrasings: tuple[str, ...]
    overwrites: tuple[str, ...]
    claims: tuple[tuple[Claim, ...], ...]  # per phrasing, its relative wordings (wording.py)
    # The key later sessions name its result by ("the products that came out on top"): its value is the
    # turn's SQL, which a turn of a later session re-uses in a query placeholder (syntax.QUERY_SLOT).
    returns: str | None = None

    def bound(self) -> set[str]:
        """The keys the turn binds: its binds, and the key its result is returned under."""
        return {k for k, _ in self.base.binds} | ({self.returns} if self.returns else set())


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


def extended_template_path(source: str, directory: Path = EXTENDED_DIR) -> Path:
    return directory / f"{source}.yaml"


def lineage(variant: ExtendedVariant | None) -> list[ExtendedVariant]:
    """`variant` and the variants it continues, first session first: an analyst's history."""
    chain: list[ExtendedVariant] = []
    while variant is not None:
        chain.insert(0, variant)
        variant = variant.continues
    return chain


def bound_keys(variant: ExtendedVariant | None) -> frozenset[str]:
    """Every key a history ending in a session of `variant` binds: what a session continuing it may reference."""
    return frozenset(k for v in lineage(variant) for t in v.turns for k in t.bound())


def returned_keys(variant: ExtendedVariant | None) -> frozenset[str]:
    """The results a history ending in a session of `variant` returned (ExtendedTurnTemplate.returns)."""
    return frozenset(t.returns for v in lineage(variant) for t in v.turns if t.returns)


def without_distractor(variant: ExtendedVariant) -> ExtendedVariant:
    return replace(variant, turns=tuple(t for t in variant.turns if t.tag != "distractor"))

"""Load and validate the benchmark templates (data files in `templates/`).

Validation is static: it proves, before any database is touched, that every turn is answerable
from the question plus what earlier turns bound. That is what makes the memory-critical flag
trustworthy rather than asserted.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memsql_assets.lib.errors import TemplateError

TEMPLATES_DIR = Path(__file__).with_name("templates")
TURNS_PER_TIER = {1: 1, 2: 4, 3: 10}  # tier 3: 9 turns, the 10th only for ten-turn sessions
REQUIRED_TEXT_FIELDS = ("question", "output_requirements", "sql", "paraphrase")
TURN_FIELDS = (*REQUIRED_TEXT_FIELDS, "refs", "binds", "let")


@dataclass(frozen=True)
class TurnTemplate:
    question: str
    sql: str
    paraphrase: str  # the `paraphrase` reference model's SQL: same answer, formulated differently
    output_requirements: str  # columns, order, units, rounding; identical in every session
    refs: tuple[str, ...]
    binds: tuple[tuple[str, str], ...]  # (state key, namespace name it takes its value from)
    let: tuple[tuple[str, Any], ...]

    @staticmethod
    def placeholders(text: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    @property
    def question_keys(self) -> set[str]:
        return self.placeholders(self.question)

    @property
    def sql_keys(self) -> set[str]:
        return self.placeholders(self.sql)

    def stated_keys(self) -> set[str]:
        """Keys whose values the question itself gives (so any reader knows them)."""
        q = self.question_keys
        stated = set(q) | {k for k, _ in self.let}
        stated |= {k for k in self.sql_keys if f"{k}_label" in q}
        return stated


@dataclass(frozen=True)
class Variant:
    id: str
    turns: tuple[TurnTemplate, ...]


@dataclass(frozen=True)
class TierTemplate:
    path: Path
    source: str
    tier: int
    profile: str
    variants: tuple[Variant, ...]


def template_path(source: str, tier: int, directory: Path = TEMPLATES_DIR) -> Path:
    return directory / f"{source}.t{tier}.yaml"


def _normalise_sql(sql: str) -> str:
    # Folded YAML keeps line breaks as spaces; collapse runs so stored SQL is one canonical line.
    return " ".join(sql.split())


def parse_turn(path: Path, where: str, raw: Any) -> TurnTemplate:
    if not isinstance(raw, dict):
        raise TemplateError(path, where, f"expected a mapping with {'/'.join(TURN_FIELDS)}")
    unknown = set(raw) - set(TURN_FIELDS)
    if unknown:
        raise TemplateError(path, where, f"unknown field '{sorted(unknown)[0]}'")
    for field in REQUIRED_TEXT_FIELDS:
        if not isinstance(raw.get(field), str) or not raw[field].strip():
            raise TemplateError(path, f"{where}.{field}", "expected a non-empty string")
    requirement = " ".join(raw["output_requirements"].split())
    if "{" in requirement or "}" in requirement:
        # One text for every session of the variant: a filled-in value could leak a referenced key.
        raise TemplateError(path, f"{where}.output_requirements", "must not contain {placeholders} or braces")
    refs = raw.get("refs") or []
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise TemplateError(path, f"{where}.refs", "expected a list of key names")
    binds_raw = raw.get("binds") or []
    if isinstance(binds_raw, list):
        binds = tuple((b, b) for b in binds_raw)
    elif isinstance(binds_raw, dict):
        binds = tuple((str(k), str(v)) for k, v in binds_raw.items())
    else:
        raise TemplateError(path, f"{where}.binds", "expected a list of names or a mapping key: source")
    let_raw = raw.get("let") or {}
    if not isinstance(let_raw, dict):
        raise TemplateError(path, f"{where}.let", "expected a mapping of constants")
    return TurnTemplate(
        question=" ".join(raw["question"].split()),
        sql=_normalise_sql(raw["sql"]),
        paraphrase=_normalise_sql(raw["paraphrase"]),
        output_requirements=requirement,
        refs=tuple(refs),
        binds=binds,
        let=tuple(sorted(let_raw.items())),
    )


def _validate_variant(path: Path, variant: Variant, tier: int) -> None:
    expected = TURNS_PER_TIER[tier]
    if len(variant.turns) != expected:
        raise TemplateError(
            path, f"variant {variant.id}", f"has {len(variant.turns)} turns; tier {tier} needs {expected}"
        )
    validate_turns(path, variant)


def validate_turns(
    path: Path, variant: Variant, self_contained: frozenset[int] = frozenset(), carried: frozenset[str] = frozenset()
) -> None:
    """The static rules of every variant, of either benchmark: refs bound earlier, never stated.
    `self_contained`: indices of later turns allowed to state everything they need; `carried`: the
    keys an earlier session bound, which a session continuing it may reference from turn 1 on."""
    bound: set[str] = set(carried)
    for index, turn in enumerate(variant.turns, start=1):
        where = f"variant {variant.id}, turn {index}"
        if index == 1 and turn.refs and not carried:
            raise TemplateError(path, f"{where}.refs", "turn 1 must not reference earlier context")
        if index > 1 and not turn.refs and index not in self_contained:
            raise TemplateError(
                path, f"{where}.refs", "every turn after the first must reference a bound key"
            )
        for key in turn.refs:
            if key not in bound:
                raise TemplateError(
                    path,
                    f"{where}.refs",
                    f"references key '{key}' that no earlier turn binds (bound: {sorted(bound)})",
                )
        overlap = turn.question_keys & set(turn.refs)
        if overlap:
            raise TemplateError(
                path,
                f"{where}.question",
                f"states referenced key '{sorted(overlap)[0]}' (a ref must come from memory)",
            )
        let_keys = {k for k, _ in turn.let}
        if let_keys & set(turn.refs):
            raise TemplateError(path, f"{where}.let", "a key cannot be both a constant and a reference")
        stated = turn.stated_keys()
        for key in sorted(turn.sql_keys):
            if key not in turn.refs and key not in stated:
                raise TemplateError(
                    path,
                    f"{where}.sql",
                    f"placeholder '{key}' is neither referenced (refs) nor stated by the question",
                )
        paraphrase_keys = turn.placeholders(turn.paraphrase)
        if paraphrase_keys != turn.sql_keys:
            raise TemplateError(
                path,
                f"{where}.paraphrase",
                f"uses placeholders {sorted(paraphrase_keys)}; the ground truth uses {sorted(turn.sql_keys)} "
                "(a paraphrase is filled with the same values)",
            )
        bound |= {k for k, _ in turn.binds}


def check_profile_columns(template: TierTemplate, columns: set[str]) -> None:
    """Every name a turn reads must be a profile column, a constant or a key bound earlier."""
    for variant in template.variants:
        bound: set[str] = set()
        for index, turn in enumerate(variant.turns, start=1):
            known = columns | {k for k, _ in turn.let} | bound
            for key in sorted(turn.question_keys | turn.sql_keys | {src for _, src in turn.binds}):
                if key not in known:
                    raise TemplateError(
                        template.path,
                        f"variant {variant.id}, turn {index}",
                        f"unknown name '{key}' (not a column of profile '{template.profile}', a constant or a bound key)",
                    )
            bound |= {k for k, _ in turn.binds}


def load_tier_template(source: str, tier: int, directory: Path = TEMPLATES_DIR) -> TierTemplate:
    path = template_path(source, tier, directory)
    if not path.exists():
        raise TemplateError(path, "<file>", f"template file for {source} tier {tier} does not exist")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TemplateError(path, "<file>", f"not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise TemplateError(path, "<top level>", "expected a mapping with source/tier/profile/variants")
    if raw.get("source") != source:
        raise TemplateError(path, "source", f"got {raw.get('source')!r}; expected {source!r}")
    if raw.get("tier") != tier:
        raise TemplateError(path, "tier", f"got {raw.get('tier')!r}; expected {tier}")
    if not isinstance(raw.get("profile"), str):
        raise TemplateError(path, "profile", "expected the name of a profile query in profiles.yaml")
    variants_raw = raw.get("variants")
    if not isinstance(variants_raw, list) or not variants_raw:
        raise TemplateError(path, "variants", "expected a non-empty list")
    variants = []
    seen: set[str] = set()
    for i, v in enumerate(variants_raw):
        if (
            not isinstance(v, dict)
            or not isinstance(v.get("id"), str)
            or not isinstance(v.get("turns"), list)
        ):
            raise TemplateError(path, f"variants[{i}]", "expected a mapping with id and turns")
        if v["id"] in seen:
            raise TemplateError(path, f"variants[{i}].id", f"duplicate variant id {v['id']!r}")
        seen.add(v["id"])
        turns = tuple(
            parse_turn(path, f"variant {v['id']}, turn {j}", t) for j, t in enumerate(v["turns"], start=1)
        )
        variant = Variant(id=v["id"], turns=turns)
        _validate_variant(path, variant, tier)
        variants.append(variant)
    return TierTemplate(path=path, source=source, tier=tier, profile=raw["profile"], variants=tuple(variants))


def load_profile_queries(directory: Path = TEMPLATES_DIR) -> dict[str, dict[str, str]]:
    path = directory / "profiles.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TemplateError(path, "<file>", f"cannot read profile queries: {exc}") from exc
    if not isinstance(raw, dict):
        raise TemplateError(path, "<top level>", "expected source -> {profile name: SQL}")
    for source, queries in raw.items():
        if not isinstance(queries, dict) or not all(isinstance(q, str) for q in queries.values()):
            raise TemplateError(path, str(source), "expected a mapping of profile name -> SQL string")
    return raw

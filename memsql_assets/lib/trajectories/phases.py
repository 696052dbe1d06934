"""Phase classification of trajectory steps by regex / tool pattern (rules are data).

Phases follow the paper's Figure 1: explore (schema and data probing), execute (drafting and
running the answer query) and validate (checking an answer). The rules live in
`phase_rules.yaml` beside this module; `load_rules(path)` reads another file with the same
shape. `classifier_accuracy()` scores the rules on the hand-labelled steps in
memsql_assets/lib/trajectories/labelled_steps.jsonl.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.trajectories.trace import Call, Step

PHASES = ("explore", "execute", "validate")
RULES_FILE = Path(__file__).with_name("phase_rules.yaml")
LABELLED_STEPS = Path(__file__).with_name("labelled_steps.jsonl")


@dataclass(frozen=True)
class Rule:
    name: str
    phase: str
    tools: frozenset[str] | None = None
    tool_regex: re.Pattern[str] | None = None
    sql: re.Pattern[str] | None = None

    def matches(self, tool: str, args: dict[str, Any]) -> bool:
        if self.tools is not None and tool not in self.tools:
            return False
        if self.tool_regex is not None and not self.tool_regex.search(tool):
            return False
        if self.sql is not None:
            sql = args.get("sql")
            if not isinstance(sql, str) or not self.sql.search(sql):
                return False
        return True


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    default: str
    source: str = ""

    def classify_call(self, tool: str, args: dict[str, Any]) -> str:
        return self.explain_call(tool, args)[0]

    def explain_call(self, tool: str, args: dict[str, Any]) -> tuple[str, str]:
        """(phase, name of the rule that decided it — 'default' when none matched)."""
        for rule in self.rules:
            if rule.matches(tool, args):
                return rule.phase, rule.name
        return self.default, "default"

    def classify(self, step: Step | Call) -> str:
        if isinstance(step, Step) and step.calls:
            phases = [self.classify_call(c.tool, c.args) for c in step.calls]
            return Counter(phases).most_common(1)[0][0] if len(set(phases)) > 1 else phases[0]
        return self.classify_call(step.tool, step.args)


def _compile(path: Path, where: str, pattern: object, flags: int) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ConfigError(path, where, "expected a regular expression string")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ConfigError(path, where, f"invalid regular expression: {exc}") from exc


def load_rules(path: Path = RULES_FILE) -> RuleSet:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(path, "<file>", f"cannot read phase rules: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
        raise ConfigError(path, "rules", "expected a mapping with a 'rules' list")
    default = raw.get("default", "explore")
    if default not in PHASES:
        raise ConfigError(path, "default", f"expected one of {list(PHASES)}, got {default!r}")
    rules = []
    for i, r in enumerate(raw["rules"]):
        where = f"rules[{i}]"
        if not isinstance(r, dict):
            raise ConfigError(path, where, "expected a mapping")
        unknown = set(r) - {"name", "phase", "tool", "tool_regex", "sql"}
        if unknown:
            raise ConfigError(path, f"{where}.{sorted(unknown)[0]}", "unknown field")
        if r.get("phase") not in PHASES:
            raise ConfigError(
                path, f"{where}.phase", f"expected one of {list(PHASES)}, got {r.get('phase')!r}"
            )
        tool = r.get("tool")
        tools = frozenset([tool] if isinstance(tool, str) else tool) if tool is not None else None
        rules.append(
            Rule(
                name=str(r.get("name", where)),
                phase=r["phase"],
                tools=tools,
                tool_regex=_compile(path, f"{where}.tool_regex", r["tool_regex"], re.I)
                if "tool_regex" in r
                else None,
                sql=_compile(path, f"{where}.sql", r["sql"], re.I | re.S) if "sql" in r else None,
            )
        )
    return RuleSet(tuple(rules), default, str(path))


@functools.lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    return load_rules(RULES_FILE)


def classify(step: Step | Call, rules: RuleSet | None = None) -> str:
    """The phase of one step (explore / execute / validate) under the rules (default: the data file)."""
    return (rules or default_rules()).classify(step)


@dataclass(frozen=True)
class AccuracyReport:
    n: int
    correct: int
    confusion: dict[str, dict[str, int]]  # gold -> predicted -> count
    mistakes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "correct": self.correct,
            "accuracy": round(self.accuracy, 4),
            "confusion": self.confusion,
            "mistakes": self.mistakes,
        }


def read_labelled(path: Path) -> list[tuple[Step, str]]:
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(path, f"line {lineno}", f"not JSON: {exc}") from exc
        if d.get("phase") not in PHASES:
            raise ConfigError(path, f"line {lineno}.phase", f"expected one of {list(PHASES)}")
        out.append((Step.from_json(d), d["phase"]))
    return out


def classifier_accuracy(path: Path = LABELLED_STEPS, rules: RuleSet | None = None) -> AccuracyReport:
    labelled = read_labelled(path)
    return score(labelled, rules or default_rules())


def score(labelled: Iterable[tuple[Step, str]], rules: RuleSet) -> AccuracyReport:
    confusion: dict[str, dict[str, int]] = {p: dict.fromkeys(PHASES, 0) for p in PHASES}
    mistakes = []
    n = correct = 0
    for step, gold in labelled:
        pred = rules.classify(step)
        n += 1
        confusion[gold][pred] += 1
        if pred == gold:
            correct += 1
        else:
            mistakes.append({"tool": step.tool, "args": step.args, "gold": gold, "predicted": pred})
    return AccuracyReport(n, correct, confusion, mistakes)

"""The benchmark's vocabulary, defined once: memory conditions, sources and their session-id
prefixes, error classes and reference models.

Every other use derives from these names: Python imports them, dbt receives them as `--vars`
(`dbt_vars`, passed by lib/report/dbt_cli.py and the dagster-dbt asset) and the Great Expectations
suites as parameters filled in when a suite is loaded (`gx_params`). tests/unit/test_vocabulary.py
fails when a literal copy appears anywhere else.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from memsql_assets.lib.agent.conditions import CONDITIONS
from memsql_assets.lib.harness.turn_result import column_docs, dbt_columns

# Condition names in SPEC order (A → E); conditions.py holds what each one reads and writes.
CONDITION_NAMES: tuple[str, ...] = tuple(CONDITIONS)

# Source asset name -> session-id prefix (`<PREFIX>-<tier>-<nnn>`), in source-asset order.
SOURCE_PREFIXES: dict[str, str] = {"bird_financial": "BIRD", "sec_edgar": "SEC", "northwind": "NW"}
SOURCE_NAMES: tuple[str, ...] = tuple(SOURCE_PREFIXES)
# Prefixes in report order, and the pseudo-source of rows that pool every source.
REPORT_SOURCES: tuple[str, ...] = tuple(
    SOURCE_PREFIXES[n] for n in ("northwind", "sec_edgar", "bird_financial")
)
ALL_SOURCES = "ALL"


class ErrorClass(StrEnum):
    """The exclusive error classes of a scored turn: SPEC §3's six, plus `model_error` for a turn whose
    model call failed (its row's model_error_type says how); the rule that picks one is in
    lib/evaluation/taxonomy.py. Member order is report order."""

    CORRECT = "correct"
    WRONG_RESULT = "wrong_result"
    PREAMBLE = "preamble"
    SYNTAX_ERROR = "syntax_error"
    RUNTIME_ERROR = "runtime_error"
    EMPTY = "empty"
    MODEL_ERROR = "model_error"


ERROR_CLASSES: tuple[str, ...] = tuple(c.value for c in ErrorClass)

# Offline reference models (docs/reference_models.md): gold and paraphrase prove the harness scores any
# correct formulation 100 %; recall-probe measures what each memory condition's resolution alone
# delivers (the Resolved block), reader-probe what its whole prompt delivers to a careful reader,
# guess-probe what a model without memory scores by filling in the most common values (the floor).
# They are the registry's `builtin` kind.
REFERENCE_MODELS: tuple[str, ...] = ("gold", "paraphrase", "recall-probe", "reader-probe", "guess-probe")
# The reference model whose memory-critical EX under condition A is the benchmark's guess floor.
GUESS_PROBE = REFERENCE_MODELS[-1]
FLOOR_CONDITION = CONDITION_NAMES[0]
# The most a memory-critical turn may be guessed right without memory, in %: the design target of
# the paper benchmark for the guess floor and for the mean guess_rate (docs/reference_models.md).
GUESS_FLOOR_MAX_PCT = 5.0
# Those whose every turn must be correct: a miss is a harness, comparator or benchmark bug (blocking).
MUST_SCORE_100: tuple[str, ...] = ("gold", "paraphrase")


# The benchmarks one home builds side by side: the paper-exact default and the extended one, whose
# turns are tagged with the phenomenon they test (docs/specification.md, section 6).
BENCHMARKS: tuple[str, ...] = ("paper", "extended")
PAPER_BENCHMARK, EXTENDED_BENCHMARK = BENCHMARKS
# `detour`: a turn about another entity, stated in full, between a value and the turn that needs it.
PHENOMENA: tuple[str, ...] = (
    "baseline", "long_range", "correction", "entity_switch", "distractor", "wording", "detour"
)
# Extended turns that may state everything they need (no refs, never memory-critical).
SELF_CONTAINED_TAGS: tuple[str, ...] = ("baseline", "detour")


def dbt_vars() -> dict[str, Any]:
    """What dbt_project/ reads with `var(...)`: accepted values, report order, the ablation's terms,
    and the result row's columns with their types and descriptions (TurnResult, turn_result.py)."""
    return {
        "conditions": list(CONDITION_NAMES),
        "sources": list(REPORT_SOURCES),
        "all_sources": ALL_SOURCES,
        "error_classes": list(ERROR_CLASSES),
        "reference_models": list(REFERENCE_MODELS),
        "must_score_100": list(MUST_SCORE_100),
        "guess_probe": GUESS_PROBE,
        "floor_condition": FLOOR_CONDITION,
        "guess_floor_max_pct": GUESS_FLOOR_MAX_PCT,
        "benchmarks": list(BENCHMARKS),
        "paper_benchmark": PAPER_BENCHMARK,
        "extended_benchmark": EXTENDED_BENCHMARK,
        "phenomena": list(PHENOMENA),
        # The conditions the paper evaluates (E, trajectory reuse, is this project's addition): a paper
        # claim "in each condition" is checked in these, "in each memory condition" in all but A.
        "paper_conditions": [c for c in CONDITION_NAMES if c != "E"],
        "result_columns": dbt_columns(),
        "result_column_docs": column_docs(),
    }


def dbt_vars_arg() -> str:
    """`dbt_vars()` as the value of dbt's `--vars` flag (JSON is valid YAML)."""
    return json.dumps(dbt_vars(), sort_keys=True)


def gx_params() -> dict[str, Any]:
    """The `{"$PARAMETER": name}` values of the suites under expectations/."""
    return {
        "sources": list(REPORT_SOURCES),
        "session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-[123]-[0-9]{{3}}$",
        "extended_session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-X-[0-9]{{3}}$",
        "phenomena": list(PHENOMENA),
    }


if __name__ == "__main__":  # `dbt ... --vars "$(python -m memsql_assets.lib.vocabulary)"` by hand
    print(dbt_vars_arg())

"""The benchmark's vocabulary, defined once: memory conditions (read from the conditions file), sources and their session-id
prefixes, error classes and reference models.

Every other use derives from these names: Python imports them, dbt receives them as `--vars`
(`dbt_vars` in lib/report/dbt_cli.py, for every dbt command and the dagster-dbt asset) and the Great
Expectations suites as parameters filled in when a suite is loaded (`gx_params` in
lib/quality/gx_suites.py). tests/unit/test_vocabulary.py
fails when a literal copy appears anywhere else.
"""

from __future__ import annotations

from enum import StrEnum

from memsql_assets.lib.conditions import CONDITIONS, ContextMode, History, get_condition

# Condition names in the order of the conditions file (conditions.yaml, then the user's; conditions.py
# holds what each one's memory is). The paper's own conditions are those the file marks `paper`.
CONDITION_NAMES: tuple[str, ...] = tuple(CONDITIONS)
PAPER_CONDITIONS: tuple[str, ...] = tuple(n for n, c in CONDITIONS.items() if c.paper)

# Source asset name -> session-id prefix (`<PREFIX>-<tier>-<nnn>`), in source-asset order.
SOURCE_PREFIXES: dict[str, str] = {"bird_financial": "BIRD", "sec_edgar": "SEC", "northwind": "NW"}
SOURCE_NAMES: tuple[str, ...] = tuple(SOURCE_PREFIXES)
SOURCE_BY_PREFIX: dict[str, str] = {prefix: name for name, prefix in SOURCE_PREFIXES.items()}
# Prefixes in report order, and the pseudo-source of rows that pool every source.
REPORT_SOURCES: tuple[str, ...] = tuple(
    SOURCE_PREFIXES[n] for n in ("northwind", "sec_edgar", "bird_financial")
)
ALL_SOURCES = "ALL"


class ErrorClass(StrEnum):
    """The exclusive error classes of a scored turn: SPEC §3's six, plus `model_error` for a turn whose
    model call failed (its row's model_error_type says how) and `memory_error` for a turn during which
    the condition's memory raised (its row's error_message says where and what); the rule that picks
    one is in lib/evaluation/taxonomy.py. Member order is report order."""

    CORRECT = "correct"
    WRONG_RESULT = "wrong_result"
    PREAMBLE = "preamble"
    SYNTAX_ERROR = "syntax_error"
    RUNTIME_ERROR = "runtime_error"
    EMPTY = "empty"
    MODEL_ERROR = "model_error"
    MEMORY_ERROR = "memory_error"


ERROR_CLASSES: tuple[str, ...] = tuple(c.value for c in ErrorClass)

# Offline reference models (docs/reference_models.md): gold and paraphrase prove the harness scores any
# correct formulation 100 %; recall-probe measures what each memory condition's resolution alone
# delivers (the Resolved block), reader-probe what its whole prompt delivers to a careful reader,
# guess-probe what a model without memory scores by filling in the most common values (the floor).
# They are the registry's `builtin` kind.
REFERENCE_MODELS: tuple[str, ...] = ("gold", "paraphrase", "recall-probe", "reader-probe", "guess-probe")
# The offline reference agent (lib/reference/reference_agent.py): the conditions with tools' gold. `memsql
# run` evaluates it under the agent conditions on a fixed sample of sessions (its registry entry's
# `sessions`); `memsql eval` anywhere.
REFERENCE_AGENT = "gold-agent"
# The reference model whose memory-critical EX under condition A is the benchmark's guess floor.
GUESS_PROBE = REFERENCE_MODELS[-1]
FLOOR_CONDITION = CONDITION_NAMES[0]
# The paper's working-memory window of five turns: besides A, what every condition is compared with
# (agg_condition_contrasts), the paper's ablation keeping its own terms (agg_ablation).
WINDOW_CONDITION = "B_wm5"
# AgentSM (seed 004): the agent with the retrieved trajectory, its segments loaded per phase and the
# store's composite tools; its agent baseline, the same agent with the window's memory and no
# trajectory (Traj = AGENTSM − AGENT_BASELINE measures trajectory reuse); and the single-shot variant
# that pastes the whole trajectory into one prompt (Traj_prompt = PROMPT_TRAJECTORY − WINDOW_CONDITION).
AGENTSM_CONDITION = "E"
AGENT_BASELINE_CONDITION = "T"
PROMPT_TRAJECTORY_CONDITION = "E_prompt"
# The agent conditions' pair as the marts and the report compare them: (baseline, AgentSM).
AGENT_CONDITIONS: tuple[str, str] = (AGENT_BASELINE_CONDITION, AGENTSM_CONDITION)
# The same pair with the schema in the agent's first message (conditions.yaml schema_in_prompt: true);
# the pair above leaves it out, AgentSM's setting. agg_agent_steps_saved compares each pair.
AGENT_SCHEMA_CONDITIONS: tuple[str, str] = ("T_schema", "E_schema")
# The most a memory-critical turn may be guessed right without memory, in %: the design target of
# the paper benchmark for the guess floor and for the mean guess_rate (docs/reference_models.md).
GUESS_FLOOR_MAX_PCT = 5.0
# Those whose every turn must be correct: a miss is a harness, comparator or benchmark bug (blocking).
MUST_SCORE_100: tuple[str, ...] = ("gold", "paraphrase")


# The benchmarks one home builds side by side: the paper-exact default and the extended one, whose
# turns are tagged with the phenomenon they test (docs/specification.md, section 6).
BENCHMARKS: tuple[str, ...] = ("paper", "extended")
PAPER_BENCHMARK, EXTENDED_BENCHMARK = BENCHMARKS
# The benchmarks whose sessions name their analyst (store.py EXTENDED_SESSIONS_SCHEMA): the only ones a
# memory scoped to the analyst (`scope: analyst`) applies to.
ANALYST_BENCHMARKS: tuple[str, ...] = (EXTENDED_BENCHMARK,)
# Each benchmark's default context mode (lib/context_mode.py): the paper's benchmark keeps the
# paper's annotated resolution; the extended one measures what a memory earns from the conversation.
BENCHMARK_CONTEXT_MODES: dict[str, ContextMode] = {
    PAPER_BENCHMARK: ContextMode.ANNOTATED,
    EXTENDED_BENCHMARK: ContextMode.OBSERVED,
}


def context_mode(condition: str, benchmark: str) -> ContextMode:
    """The context mode of a partition: the condition's own, else its benchmark's default."""
    return CONDITIONS[condition].context_mode or BENCHMARK_CONTEXT_MODES[benchmark]


def history(condition: str, requested: History | None = None) -> History:
    """The history of a partition run: the run's request, else the condition's own, else the model's."""
    return requested or get_condition(condition).history or History.MODEL


# The cross-session kind whose needed value is an earlier session's result (below): its ground truth
# re-uses the query that returned it.
EARLIER_RESULT = "earlier_result"
# `detour`: a turn about another entity, stated in full, between a value and the turn that needs it.
PHENOMENA: tuple[str, ...] = (
    "baseline",
    "long_range",
    "correction",
    "entity_switch",
    "distractor",
    "wording",
    "detour",
    "cross_session",
    "taught_convention",
    "knowledge_update",
    "chained",
    EARLIER_RESULT,
)
# Memory across sessions: a turn of a session that continues earlier sessions of the same analyst (its
# history), needing a value only those sessions stated (`cross_session`), a convention one of them
# taught (`taught_convention`), a value one of them changed (`knowledge_update`: the old value is
# stale), both a convention the history's first session taught and a value a later one changed
# (`chained`), or the rows an earlier session's query returned, named only by description ("the
# products that came out on top last time": `earlier_result`, whose ground truth re-uses that query).
CROSS_SESSION_TAGS: tuple[str, ...] = (
    "cross_session",
    "taught_convention",
    "knowledge_update",
    "chained",
    EARLIER_RESULT,
)
# What separates the two figures of the extended benchmark's headline, in two lines (the report's
# extended matrix, the console's).
CROSS_SESSION_NOTE: tuple[str, str] = (
    "within: memory-critical turns that need only what their own session said earlier;",
    "across: turns that need what an earlier session of the same analyst established (a value, a taught "
    "convention, an update, a result), which only a memory kept across sessions can give.",
)
# Extended turns that may state everything they need (no refs, never memory-critical).
SELF_CONTAINED_TAGS: tuple[str, ...] = ("baseline", "detour")

"""The settings of one partition run (a module of its own: Dagster's resources import it without the harness)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from memsql_assets.lib.agent.limits import DEFAULT_MAX_STEPS, DEFAULT_TURN_TIME_S
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.sql.execute import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S


class EpochsError(MemsqlError):
    """An epoch count below 1 (names the setting or flag and the allowed range)."""


def check_epochs(epochs: object, name: str = "epochs") -> int:
    """`epochs` when it is an integer >= 1, else EpochsError naming `name` and the allowed range."""
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise EpochsError(f"{name} {epochs}: expected an integer >= 1 (independent samples of every turn)")
    return epochs


class EvalSettings(BaseModel):
    """What one partition run may vary: service URLs, harness limits and the run's own choices. The one
    definition of these fields: the Dagster resource `EvaluationSettings` (defs/evaluation/resources.py)
    derives from it, so they are also the run configuration of that resource (launchpad, `memsql eval`)."""

    model_config = ConfigDict(frozen=True)

    redis_url: str | None = Field(
        default=None, description="Working-memory Redis; unset: $MEMSQL_REDIS_URL, else a private redis-server."
    )
    chroma_url: str | None = Field(
        default=None, description="ChromaDB server; unset: $MEMSQL_CHROMA_URL, else a local persistent client."
    )
    episodic_k: int = Field(default=3, description="Similar past turns retrieved by conditions C and D.")
    sql_timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, description="Time limit of one generated query, in seconds.")
    row_cap: int = Field(default=DEFAULT_ROW_CAP, description="Rows fetched at most from one query.")
    retry_errors: bool = Field(
        default=False,
        description="Ask the model again for every turn whose recorded reply is a failure (deterministic ones "
        "included; `memsql eval --retry-errors`).",
    )
    only_failed: bool = Field(
        default=False,
        description="Ask the model again for every turn of the published partition whose answer is not "
        "strictly correct (deterministic failures and wrong SQL included), once more each run, each retry a "
        "new request-store cell; the other turns replay. Each row counts its retries (`retries`), and so do "
        "the marts (`memsql eval --only-failed`).",
    )
    share_identical_prompts: bool = Field(
        default=False,
        description="Let evaluation cells whose prompts are identical (turn 1 under A and B) share one model "
        "answer. Off: every cell (model, condition, session, turn, epoch) gets its own sample of the model.",
    )
    sessions: int | None = Field(
        default=None,
        description="A sample run: evaluate a deterministic sample of this many sessions, stratified by source x "
        "tier (at least one per stratum), the same for every model and condition (`memsql eval --sessions`). "
        "Its rows go to samples/model=M/condition=C/sessions=N/, never the partition's file: the run is "
        "recorded as an observation of turn_results (tag memsql/sample), and the latest materialization "
        "stays the full evaluation. Unset: every session (a full evaluation).",
    )
    epochs: int | None = Field(
        default=None,
        description="Independent samples of every turn (epochs 1 … N; `memsql eval --epochs`): each epoch asks "
        "the model again for every cell, with its own working and episodic memory. Adding epochs to an "
        "evaluated partition asks only for the new ones. Unset: a full run keeps the epochs of the "
        "partition's last full evaluation (1 for a new one), a sample runs one; only a full run that asks "
        "for N changes the partition's epochs.",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        description="Stop before the run when its estimated cost (the model calls not in the request store, "
        "their prompts counted, `memsql eval --dry-run`) exceeds this many USD; also a live cap: the run stops, resumable, once the calls it made cost this much (the "
        "registry's max_cost_usd when unset). Unset: no cap (`memsql eval --max-cost`).",
    )
    agent_max_steps: int = Field(
        default=DEFAULT_MAX_STEPS,
        description="Conditions with tools (T): the agent's step budget per turn, one model request a step; "
        "at least 1.",
    )
    agent_time_limit_s: float = Field(
        default=DEFAULT_TURN_TIME_S,
        description="Conditions with tools (T): the time limit of one agent turn in seconds; at least 1.",
    )
    history: str | None = Field(
        default=None,
        description="Whose answers to earlier turns the memory stores: `model` (the model's own, the paper's "
        "protocol) or `gold` (each turn's ground truth and its result, as SParC and CoSQL evaluate; "
        "`memsql eval --history`). A gold run publishes under results_gold/ beside the model-history file "
        "and asks the request store for cells of its own. Unset: the condition's `history`, else model.",
    )
    wave_size: int | None = Field(
        default=None,
        description="Conditions C and D run sessions in waves of this many; a session never sees a session of "
        "its own wave (`memsql eval --wave-size`). Unset: the model's max_concurrency, at most the benchmark's history reach "
        "(lib/harness/schedule.history_reach). 1: the paper's "
        "strictly sequential order.",
    )


def resolve_wave_size(requested: int | None, concurrency: int, reach: int | None = None) -> int:
    """W for cross-session conditions: `requested`, else the model's concurrency, at most `reach` (the
    largest W at which every analyst's history stays reachable, schedule.history_reach); below 1 is an error."""
    size = min(concurrency, reach or concurrency) if requested is None else requested
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise MemsqlError(
            f"wave size must be an integer >= 1 (1 runs sessions strictly one after another), got {size!r}"
        )
    return size

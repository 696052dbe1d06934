"""Evaluation settings a user may override per run (launchpad) or by environment."""

import os

import dagster as dg
from pydantic import Field

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.settings import EvalSettings

RETRY_ERRORS_ENV = "MEMSQL_RETRY_ERRORS"  # "1": as retry_errors (set by `memsql eval --retry-errors`)
WAVE_SIZE_ENV = "MEMSQL_WAVE_SIZE"  # an integer: as wave_size, when the resource leaves it unset
SAMPLE_TAG = "memsql/sample"  # on the Dagster run of a sample: its session count


class EvaluationSettings(dg.ConfigurableResource):
    """Service URLs and harness limits of a `turn_results` partition run."""

    redis_url: str = Field(
        default="", description="Working-memory Redis; empty: $MEMSQL_REDIS_URL, else a private redis-server."
    )
    chroma_url: str = Field(
        default="", description="ChromaDB server; empty: $MEMSQL_CHROMA_URL, else a local persistent client."
    )
    episodic_k: int = Field(default=3, description="Similar past turns retrieved by conditions C and D.")
    sql_timeout_s: float = Field(default=10.0, description="Time limit of one generated query, in seconds.")
    row_cap: int = Field(default=100_000, description="Rows fetched at most from one query.")
    retry_errors: bool = Field(
        default=False,
        description="Ask the model again for every turn whose recorded reply is a failure (deterministic ones "
        "included); `memsql eval --retry-errors` sets it through $MEMSQL_RETRY_ERRORS.",
    )
    only_failed: bool = Field(
        default=False,
        description="Ask the model again for every turn of the published partition whose answer is not "
        "strictly correct (deterministic failures and wrong SQL included), once more each run; the other "
        "turns replay. Each row counts its retries (`retries`), and so do the marts (`memsql eval "
        "--only-failed`).",
    )
    share_identical_prompts: bool = Field(
        default=False,
        description="Let evaluation cells whose prompts are identical (turn 1 under A and B) share one model "
        "answer. Off: every cell (model, condition, session, turn, epoch) gets its own sample of the model.",
    )
    sessions: int = Field(
        default=0,
        description="A sample run: evaluate a deterministic sample of this many sessions, stratified by source x "
        "tier (at least one per stratum), the same for every model and condition. Its rows go to "
        "samples/model=M/condition=C/sessions=N/, never the partition's file: the run is recorded as an "
        "observation of turn_results (tag memsql/sample), and the latest materialization stays the full "
        "evaluation. 0: every session (a full evaluation).",
    )
    epochs: int = Field(
        default=0,
        description="Independent samples of every turn (epochs 1 … N): each epoch asks the model again for "
        "every cell, with its own working and episodic memory. Adding epochs to an evaluated partition asks "
        "only for the new ones. 0: a full run keeps the epochs of the partition's last full evaluation (1 "
        "for a new one), a sample runs one; only a full run that asks for N changes the partition's epochs.",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        description="Stop before the run when the upper bound of what it would spend (model calls not in the "
        "request store x the registry's prices at their largest, `memsql eval --dry-run`) exceeds this many "
        "USD; unset: no cap (`memsql eval --max-cost`).",
    )
    wave_size: int | None = Field(
        default=None,
        description="Conditions C and D run sessions in waves of this many; a session never sees a session of "
        "its own wave. Unset: $MEMSQL_WAVE_SIZE, else the model's max_concurrency. 1: the paper's strictly "
        "sequential order.",
    )

    def settings(self) -> EvalSettings:
        return EvalSettings(
            redis_url=self.redis_url or None,
            chroma_url=self.chroma_url or None,
            episodic_k=self.episodic_k,
            timeout_s=self.sql_timeout_s,
            row_cap=self.row_cap,
            retry_errors=self.retry_errors or os.environ.get(RETRY_ERRORS_ENV) == "1",
            only_failed=self.only_failed,
            share_identical_prompts=self.share_identical_prompts,
            sessions=self.sessions or None,
            epochs=self.epochs or None,
            wave_size=self.wave_size if self.wave_size is not None else env_wave_size(),
        )


def env_wave_size() -> int | None:
    text = os.environ.get(WAVE_SIZE_ENV, "").strip()
    if not text:
        return None
    try:
        return int(text)  # the harness rejects a size below 1, naming what it expects
    except ValueError:
        raise MemsqlError(f"${WAVE_SIZE_ENV}: expected an integer >= 1, got {text!r}") from None

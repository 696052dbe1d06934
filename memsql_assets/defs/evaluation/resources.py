"""Evaluation settings a user may override per run (launchpad) or by environment."""

import os

import dagster as dg

from memsql_assets.lib.harness.evaluate import EvalSettings

RETRY_ERRORS_ENV = "MEMSQL_RETRY_ERRORS"  # "1": as retry_errors (set by `memsql eval --retry-errors`)


class EvaluationSettings(dg.ConfigurableResource):
    """Service URLs (empty: a private redis-server / local persistent Chroma) and harness limits."""

    redis_url: str = ""
    chroma_url: str = ""
    episodic_k: int = 3
    sql_timeout_s: float = 10.0
    row_cap: int = 100_000
    # Ask the model again for every turn whose recorded reply is a failure (deterministic ones included).
    retry_errors: bool = False

    def settings(self) -> EvalSettings:
        return EvalSettings(
            redis_url=self.redis_url or None,
            chroma_url=self.chroma_url or None,
            episodic_k=self.episodic_k,
            timeout_s=self.sql_timeout_s,
            row_cap=self.row_cap,
            retry_errors=self.retry_errors or os.environ.get(RETRY_ERRORS_ENV) == "1",
        )

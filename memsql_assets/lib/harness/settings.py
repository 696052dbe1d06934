"""The settings of one partition run (a module of its own: Dagster's resources import it without the harness)."""

from __future__ import annotations

from dataclasses import dataclass

from memsql_assets.lib.errors import MemsqlError


class EpochsError(MemsqlError):
    """An epoch count below 1 (names the setting or flag and the allowed range)."""


def check_epochs(epochs: object, name: str = "epochs") -> int:
    """`epochs` when it is an integer >= 1, else EpochsError naming `name` and the allowed range."""
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise EpochsError(f"{name} {epochs}: expected an integer >= 1 (independent samples of every turn)")
    return epochs


@dataclass(frozen=True)
class EvalSettings:
    redis_url: str | None = None
    chroma_url: str | None = None
    episodic_k: int = 3
    timeout_s: float = 10.0
    row_cap: int = 100_000
    retry_errors: bool = False  # re-ask every turn whose recorded reply is a failure
    # Re-ask every turn of the published partition whose answer is not strictly correct (a new
    # request-store cell per retry; each row counts its retries).
    only_failed: bool = False
    # Off: each evaluation cell gets its own model answer (request_store.evaluation_cell). On: cells
    # whose prompts are identical share one answer (cheaper; fine for a deterministic model).
    share_identical_prompts: bool = False
    sessions: int | None = None  # a sample run of this many sessions (harness/sample.py); None: all
    # Independent samples of every turn (epoch 1..N, each its own request-store cell and memory).
    # None: a full run keeps the epochs of the partition's last full evaluation, a sample runs one.
    epochs: int | None = None
    # C/D: sessions per wave (runner.py); None: the model's max_concurrency. 1: strictly sequential.
    wave_size: int | None = None


def resolve_wave_size(requested: int | None, concurrency: int) -> int:
    """W for cross-session conditions: `requested`, else the model's concurrency; below 1 is an error."""
    size = concurrency if requested is None else requested
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise MemsqlError(
            f"wave size must be an integer >= 1 (1 runs sessions strictly one after another), got {size!r}"
        )
    return size

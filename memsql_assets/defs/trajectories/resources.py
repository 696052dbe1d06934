"""Trajectory-store settings (SPEC §4: θ and N are not published, so they are configuration)."""

from pathlib import Path

import dagster as dg

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.proposer import proposer
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore


class TrajectorySettings(dg.ConfigurableResource):
    """`budget`: N synthetic questions in all; `theta`: composite-tool support (fraction of trajectories
    when < 1, else a count); `max_len`: longest composite; `explorer`: deterministic or llm.
    `question_model` / `explorer_model`: registry keys of the LLMs that write questions (instead of
    the grammar) and drive the llm explorer; empty means the deterministic, offline default."""

    budget: int = 60
    seed: int = 0
    theta: float = 0.25
    max_len: int = 3
    explorer: str = "deterministic"
    question_model: str = ""
    explorer_model: str = ""

    def propose(self, home: Path, model_key: str):
        """The registry model `model_key` as a messages -> text function (through the gateway)."""
        registry = load_registry()
        available, reason = registry.available(model_key)
        if not available:
            raise MemsqlError(f"trajectory LLM {model_key} is unavailable: {reason}")
        return proposer(ModelGateway(registry, RequestStore(home / "requests"), home=home), model_key)

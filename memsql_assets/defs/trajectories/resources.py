"""Trajectory-store settings (SPEC §4: θ and N are not published, so they are configuration)."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from memsql_assets.defs.resources import model_api_keys
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.trajectories.store import StoreSettings

_DEFAULTS = StoreSettings()


class TrajectorySettings(dg.ConfigurableResource):
    """How the trajectory store is built: budget, composite-tool support and the explorer."""

    budget: int = Field(default=_DEFAULTS.budget, description="N: synthetic questions in all.")
    seed: int = Field(default=_DEFAULTS.seed, description="Seed of the deterministic question grammar and explorer.")
    theta: float = Field(
        default=_DEFAULTS.theta,
        description="Composite-tool support: a fraction of trajectories when < 1, else a count.",
    )
    max_len: int = Field(default=_DEFAULTS.max_len, description="Longest composite tool, in steps.")
    explorer: str = Field(default=_DEFAULTS.explorer, description="`deterministic` or `llm`.")
    question_model: str = Field(
        default="", description="Registry key of the LLM that writes questions; empty: the grammar (offline)."
    )
    explorer_model: str = Field(
        default="", description="Registry key of the LLM that drives the llm explorer; empty: deterministic."
    )

    def store_settings(self) -> StoreSettings:
        return StoreSettings(self.budget, self.seed, self.theta, self.max_len, self.explorer)

    def propose(self, home: Path, model_key: str):
        """The registry model `model_key` as a messages -> text function (through the gateway)."""
        # litellm loads only when an LLM writes or explores: the default store is built offline without it.
        import memsql_assets.lib.reference  # noqa: F401  (registers the built-in models with the gateway)
        from memsql_assets.lib.models.gateway import ModelGateway
        from memsql_assets.lib.models.proposer import proposer

        registry = load_registry()
        keys = model_api_keys(registry)
        available, reason = registry.available(model_key, keys, home)
        if not available:
            raise MemsqlError(f"trajectory LLM {model_key} is unavailable: {reason}")
        gateway = ModelGateway(registry, RequestStore.at_home(home), home=home, environ=keys)
        return proposer(gateway, model_key)

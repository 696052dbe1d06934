"""The agent loop's limits per turn and their defaults (conditions with tools); the harness's
settings (harness/settings.py) offer them as run settings."""

from __future__ import annotations

from dataclasses import dataclass

from memsql_assets.lib.errors import MemsqlError

# Steps per turn, and a turn's time limit in seconds.
DEFAULT_MAX_STEPS = 15
DEFAULT_TURN_TIME_S = 600.0


class AgentLimitError(MemsqlError):
    """A step budget or time limit below 1."""


@dataclass(frozen=True)
class AgentLimits:
    max_steps: int = DEFAULT_MAX_STEPS
    turn_time_s: float = DEFAULT_TURN_TIME_S

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise AgentLimitError(f"agent step budget must be at least 1, got {self.max_steps}")
        if not self.turn_time_s >= 1:
            raise AgentLimitError(f"agent turn time limit must be at least 1 s, got {self.turn_time_s}")

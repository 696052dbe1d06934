"""Memory conditions (SPEC §2, DESIGN decision 5): what each one reads and writes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memsql_assets.lib.errors import MemsqlError


@dataclass(frozen=True)
class Condition:
    name: str
    window: int  # working-memory turns (0 = stateless)
    episodic: bool = False
    semantic: bool = False
    trajectory: bool = False
    tools: bool = False  # the turn runs through the agent loop, with the exploration tools
    description: str = ""

    @property
    def cross_session(self) -> bool:
        """Conditions whose memory spans sessions must run sessions in order, one at a time."""
        return self.episodic


CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition("A", 0, description="stateless"),
        Condition("B", 2, description="working memory, last 2 turns"),
        Condition("B_wm5", 5, description="working memory, last 5 turns"),
        Condition("C", 5, episodic=True, description="working memory (5) + episodic top-k"),
        Condition(
            "D", 5, episodic=True, semantic=True, description="working (5) + episodic top-k + semantic top-1"
        ),
        Condition("E", 5, trajectory=True, description="working (5) + retrieved exploration trajectory"),
        Condition(
            "T", 5, tools=True, description="working (5) + the exploration tools: the agent loop, read-only"
        ),
    )
}


class UnknownConditionError(MemsqlError):
    pass


def single_shot(names: Iterable[str]) -> list[str]:
    """The conditions of `names` whose turns are one model call (no tools)."""
    return [n for n in names if not get_condition(n).tools]


def get_condition(name: str) -> Condition:
    try:
        return CONDITIONS[name]
    except KeyError:
        raise UnknownConditionError(
            f"unknown condition {name!r}; expected one of {sorted(CONDITIONS)}"
        ) from None

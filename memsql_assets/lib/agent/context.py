"""Context resolution: find each referenced key's value in working memory, then episodic memory.

Payloads are walked in the order the stores return them (working memory most recent first,
episodic by similarity); the first payload whose state_updates binds a key wins. A value found in
another session's payload is used as found: that is how contamination shows up, and why the
resolution records which sessions' episodes supplied keys (the scorer's provenance check).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resolution:
    requested: tuple[str, ...]
    values: dict[str, Any]
    origins: dict[str, str]  # key -> "working:<session>#<turn>" / "episodic:<session>#<turn>"
    supplying_sessions: tuple[str, ...] = ()  # sessions whose episodes supplied a key, first use first

    @property
    def missing(self) -> list[str]:
        return [k for k in self.requested if k not in self.values]


def retrieved_sessions(episodic: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The distinct sessions of retrieved episodes, in retrieval order (the current one included)."""
    return tuple(dict.fromkeys(str(p.get("session_id")) for p in episodic))


def resolve_context(
    keys: Sequence[str],
    working: Iterable[Mapping[str, Any]],
    episodic: Iterable[Mapping[str, Any]],
) -> Resolution:
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    supplying: dict[str, None] = {}  # an ordered set
    for store, payloads in (("working", working), ("episodic", episodic)):
        for payload in payloads:
            updates = payload.get("state_updates") or {}
            for key in keys:
                if key not in values and key in updates:
                    values[key] = updates[key]
                    origins[key] = f"{store}:{payload.get('session_id')}#{payload.get('turn_index')}"
                    if store == "episodic":
                        supplying[str(payload.get("session_id"))] = None
        if len(values) == len(keys):
            break
    ordered = {k: values[k] for k in keys if k in values}
    return Resolution(
        requested=tuple(keys), values=ordered, origins=origins, supplying_sessions=tuple(supplying)
    )

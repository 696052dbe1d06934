"""Context resolution: each referenced key's value, with the session and turn that supplied it.

The paper's rule (`resolve_context`): walk the payloads of the stores in order (working memory most
recent first, then episodic memory by similarity); the first payload whose state_updates binds a key
wins. A value found in another session's payload is used as found: that is how contamination shows
up, and why the resolution records which sessions supplied keys through a store other than the
session's own working memory (the scorer's provenance check). A memory that resolves values its own
way returns a `Resolution` built with `resolved` from `ResolvedValue`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Payload = dict[str, Any]
# The store of the session's own recent turns; a value from any other store names its session as a supplier.
WORKING_STORE = "working"


@dataclass(frozen=True)
class ResolvedValue:
    """One referenced key's value and where it came from: the store, session and turn that supplied it."""

    value: Any
    store: str
    session_id: str
    turn_index: int | None

    @property
    def origin(self) -> str:
        return f"{self.store}:{self.session_id}#{self.turn_index}"


@dataclass(frozen=True)
class Resolution:
    requested: tuple[str, ...]
    values: dict[str, Any]
    origins: dict[str, str]  # key -> "<store>:<session>#<turn>" (e.g. working:NW-2-001#1)
    supplying_sessions: tuple[str, ...] = ()  # sessions that supplied a key through a shared store, first use first

    @property
    def missing(self) -> list[str]:
        return [k for k in self.requested if k not in self.values]


def resolved(keys: Sequence[str], found: Mapping[str, ResolvedValue]) -> Resolution:
    """The resolution of `keys` from values a memory found itself (keys it did not find are missing)."""
    supplying = dict.fromkeys(v.session_id for k, v in found.items() if k in keys and v.store != WORKING_STORE)
    return Resolution(
        requested=tuple(keys),
        values={k: found[k].value for k in keys if k in found},
        origins={k: found[k].origin for k in keys if k in found},
        supplying_sessions=tuple(supplying),
    )


def retrieved_sessions(episodic: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The distinct sessions of retrieved episodes, in retrieval order (the current one included)."""
    return tuple(dict.fromkeys(str(p.get("session_id")) for p in episodic))


def resolve_context(
    keys: Sequence[str],
    working: Iterable[Mapping[str, Any]],
    episodic: Iterable[Mapping[str, Any]],
) -> Resolution:
    """The paper's rule over working memory, then episodic memory."""
    return resolve_from(keys, ((WORKING_STORE, working), ("episodic", episodic)))


def resolve_from(keys: Sequence[str], stores: Iterable[tuple[str, Iterable[Mapping[str, Any]]]]) -> Resolution:
    """Each key from the first payload, store by store in order, whose state_updates binds it."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    supplying: dict[str, None] = {}  # an ordered set
    for store, payloads in stores:
        for payload in payloads:
            updates = payload.get("state_updates") or {}
            for key in keys:
                if key not in values and key in updates:
                    values[key] = updates[key]
                    origins[key] = f"{store}:{payload.get('session_id')}#{payload.get('turn_index')}"
                    if store != WORKING_STORE:
                        supplying[str(payload.get("session_id"))] = None
        if len(values) == len(keys):
            break
    ordered = {k: values[k] for k in keys if k in values}
    return Resolution(
        requested=tuple(keys), values=ordered, origins=origins, supplying_sessions=tuple(supplying)
    )

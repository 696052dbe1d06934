"""Trajectory reuse (conditions E and E_prompt): the most similar synthetic question's trajectory
(Eqs. 1-3), and the composite tools mined with the store (offered to the agent under E)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.chroma import chroma_client, open_collection
from memsql_assets.lib.paths import composite_tools_path
from memsql_assets.lib.trajectories.composites import CompositeTool
from memsql_assets.lib.trajectories.store import DEFAULT_COLLECTION, retrieve, search_many
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX


class TrajectoryStoreLookup:
    """(source prefix, question, its vector if known) -> the markdown trajectory of the nearest
    same-database synthetic question (None: that database has none)."""

    def __init__(self, collection: Any):
        self.collection = collection  # opened once: the store does not change during a partition
        self._known: dict[tuple[str, str], str | None] = {}  # warm()'s answers

    def warm(self, queries: Iterable[tuple[str, str, list[float]]]) -> None:
        """Answer many (source, question, vector) in one query per database: what the calls would get."""
        by_source: dict[str, dict[str, list[float]]] = {}
        for source, question, embedding in queries:
            by_source.setdefault(source, {})[question] = embedding
        for source, vectors in by_source.items():
            hits = search_many(self.collection, SOURCE_BY_PREFIX[source], list(vectors.values()))
            for question, top in zip(vectors, hits, strict=True):
                self._known[(source, question)] = top[0].markdown if top else None

    def __call__(self, source: str, question: str, embedding: list[float] | None = None) -> str | None:
        if (source, question) in self._known:
            return self._known[(source, question)]
        hit = retrieve(None, SOURCE_BY_PREFIX[source], question, collection=self.collection, embedding=embedding)
        return hit.markdown if hit else None


def load_composites(home: Path) -> tuple[CompositeTool, ...]:
    """The composite tools mined with the store under `home` (none when it was built without any)."""
    path = composite_tools_path(home)
    if not path.exists():
        raise MemsqlError(f"{path}: no composite tools; materialize trajectory_store first")
    try:
        return tuple(CompositeTool.from_json(d) for d in json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise MemsqlError(f"{path}: not a list of composite tools ({exc}); materialize trajectory_store again") from None


def trajectory_lookup(home: Path, server_url: str | None = None) -> TrajectoryStoreLookup:
    """Condition E's lookup over the trajectory store under `home` (or on a Chroma server)."""
    return TrajectoryStoreLookup(open_collection(chroma_client(home, server_url), DEFAULT_COLLECTION, create=False))

"""Condition E's trajectory reuse: the most similar synthetic question's trajectory (Eqs. 1-3)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memsql_assets.lib.benchmark.gt_check import SOURCE_BY_PREFIX
from memsql_assets.lib.memory.chroma import chroma_client, open_collection
from memsql_assets.lib.trajectories.store import DEFAULT_COLLECTION, retrieve, search_many


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


def trajectory_lookup(home: Path, server_url: str | None = None) -> TrajectoryStoreLookup:
    """Condition E's lookup over the trajectory store under `home` (or on a Chroma server)."""
    return TrajectoryStoreLookup(open_collection(chroma_client(home, server_url), DEFAULT_COLLECTION, create=False))

"""Condition E's trajectory reuse: the most similar synthetic question's trajectory (Eqs. 1-3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memsql_assets.lib.benchmark.gt_check import SOURCE_BY_PREFIX
from memsql_assets.lib.memory.chroma import chroma_client, open_collection
from memsql_assets.lib.trajectories.store import DEFAULT_COLLECTION, retrieve


def trajectory_lookup(
    home: Path, server_url: str | None = None
) -> Callable[[str, str, list[float] | None], str | None]:
    """(source prefix, question, its vector if known) -> the markdown trajectory of the nearest
    same-database synthetic question."""
    client = chroma_client(home, server_url)
    collection = open_collection(client, DEFAULT_COLLECTION, create=False)  # once: the store is fixed

    def lookup(source: str, question: str, embedding: list[float] | None = None) -> str | None:
        hit = retrieve(client, SOURCE_BY_PREFIX[source], question, collection=collection, embedding=embedding)
        return hit.markdown if hit else None

    return lookup

"""Semantic memory: the paper's six schema hints (Appendix A.5), seeded once, read-only, top-1.

The hint texts are the paper's, word for word. What differs from the seed text is only its
typesetting, which the HTML extraction of the LaTeX source introduced:
- markdown escapes (`account\\_id`, `\\*`, `\\-`) are removed;
- the curly quotes “…” around each hint delimit the hint and are not part of it;
- quote characters inside a hint are SQL string delimiters and are written as ASCII `'`. LaTeX typesets
  a straight `'` as a right single quote, so the seed reads `metric=’revenue’`. BIRD (1) ends with
  `type=’OWNER”’`: the LaTeX source evidently had `type='OWNER'''` — the SQL literal's closing `'`
  followed by the hint's closing `''` — and TeX paired the last three quote characters as `''` + `'`,
  which rendered as ” (end of hint) followed by ’. Read as the author wrote it, the hint is
  `... where type='OWNER'`, which is also the only reading that is valid SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.memory.chroma import open_collection
from memsql_assets.lib.memory.embeddings import embed_texts
from memsql_assets.lib.memory.errors import MemoryServiceError

SEMANTIC_COLLECTION = "memsql-semantic-v1"
SEMANTIC_TOP_K = 1


@dataclass(frozen=True)
class Hint:
    source: str  # NW, SEC or BIRD: the session-id prefix of the source database
    index: int  # the hint's number within its source, as in the paper: (1), (2)
    text: str

    @property
    def id(self) -> str:
        return f"{self.source}-{self.index}"


SEMANTIC_HINTS: tuple[Hint, ...] = (
    Hint("NW", 1, "Orders joins to [Order Details] by OrderID and to Customers by CustomerID"),
    Hint("NW", 2, "Sales totals come from UnitPrice * Quantity * (1 - Discount) on [Order Details]"),
    Hint("SEC", 1, "annual_financials contains ticker, fiscal_year, metric, and value_billions"),
    Hint("SEC", 2, "revenue is stored as metric='revenue' and year comparisons use fiscal_year"),
    Hint(
        "BIRD", 1, "loan joins to account by account_id; account joins client through disp where type='OWNER'"
    ),
    Hint("BIRD", 2, "district.A3 stores the region name, and loan.status uses the raw BIRD codes A, B, C, D"),
)


def seed_semantic_memory(
    client: Any, name: str = SEMANTIC_COLLECTION, embeddings_store: Path | None = None
) -> int:
    """Upsert the six hints (idempotent) and drop anything else in the namespace; returns the count.
    `embeddings_store`: embed_texts' folder for the hints' vectors."""
    collection = open_collection(client, name)
    wanted = {hint.id for hint in SEMANTIC_HINTS}
    stale = [i for i in collection.get(include=[])["ids"] if i not in wanted]
    if stale:
        collection.delete(ids=stale)
    collection.upsert(
        ids=[hint.id for hint in SEMANTIC_HINTS],
        documents=[hint.text for hint in SEMANTIC_HINTS],
        embeddings=embed_texts([hint.text for hint in SEMANTIC_HINTS], embeddings_store),
        metadatas=[{"source": hint.source, "index": hint.index} for hint in SEMANTIC_HINTS],
    )
    return int(collection.count())


class SemanticMemory:
    """Read-only access to the seeded hints: there is deliberately no way to add to it."""

    def __init__(self, client: Any, name: str = SEMANTIC_COLLECTION):
        self.name = name
        try:
            self._collection = open_collection(client, name, create=False)
        except MemoryServiceError as exc:
            raise MemoryServiceError(
                f"semantic memory {name!r} is not seeded: materialize the semantic_memory asset ({exc})"
            ) from exc
        self._known: dict[tuple[str, str, int], list[dict[str, Any]]] = {}  # warm()'s answers

    def warm(self, queries: Iterable[tuple[str, str, list[float]]], k: int = SEMANTIC_TOP_K) -> None:
        """Answer many (source, text, text's vector) at once, one batched query per source: the hints
        never change, so `query` then returns what it would have asked Chroma for, without asking."""
        by_source: dict[str, dict[str, list[float]]] = {}
        for source, text, embedding in queries:
            by_source.setdefault(source, {})[text] = embedding
        for source, vectors in by_source.items():
            answers = self._search(source, k, query_embeddings=list(vectors.values()))
            for text, hits in zip(vectors, answers, strict=True):
                self._known[(source, text, k)] = hits

    def query(
        self, text: str, source: str, k: int = SEMANTIC_TOP_K, embedding: list[float] | None = None
    ) -> list[dict[str, Any]]:
        """The `k` hints of `source` nearest to `text`: dicts with id, source, index, text, distance."""
        if k < 1:
            return []
        known = self._known.get((source, text, k))
        if known is not None:
            return known
        by_text = {"query_embeddings": [embedding]} if embedding is not None else {"query_texts": [text]}
        return self._search(source, k, **by_text)[0]

    def _search(self, source: str, k: int, **by: Any) -> list[list[dict[str, Any]]]:
        """Per query (`query_embeddings` or `query_texts`), its `k` nearest hints of `source`."""
        try:
            result = self._collection.query(
                **by,
                n_results=k,
                where={"source": source},
                include=["documents", "metadatas", "distances"],
            )
        except Exception as exc:
            raise MemoryServiceError(f"semantic memory {self.name!r}: query failed: {exc}") from exc
        out = []
        for ids, metas, docs, dists in zip(
            result["ids"], result["metadatas"], result["documents"], result["distances"], strict=True
        ):
            hits = [
                {"id": hid, "source": meta["source"], "index": meta["index"], "text": doc, "distance": float(dist)}
                for hid, meta, doc, dist in zip(ids, metas, docs, dists, strict=True)
            ]
            hits.sort(key=lambda h: (round(h["distance"], 6), h["id"]))
            out.append(hits[:k])
        return out

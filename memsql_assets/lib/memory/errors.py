"""Errors of the memory stores: what failed, where (URL, directory, key, collection) and what to do."""

from __future__ import annotations

from memsql_assets.lib.errors import MemsqlError


class MemoryServiceError(MemsqlError):
    """A memory service (Redis, ChromaDB, the embedding model) is missing, unreachable or corrupt."""


class MemoryPayloadError(MemsqlError):
    """A turn payload handed to a memory store lacks a field or has the wrong type."""

"""Real services for the memory-store tests: a private redis-server per test and a tmp Chroma directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.memory.redis_service import RedisServer, socket_path_for


@pytest.fixture(autouse=True)
def _no_configured_services(monkeypatch) -> None:
    """A developer's MEMSQL_REDIS_URL / MEMSQL_CHROMA_URL must not redirect these tests."""
    monkeypatch.delenv("MEMSQL_REDIS_URL", raising=False)
    monkeypatch.delenv("MEMSQL_CHROMA_URL", raising=False)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server on a unix socket (never the machine's shared Redis), stopped afterwards."""
    home = tmp_path / "home"
    server = RedisServer(socket_path_for(home), log_path=home / "redis" / "redis.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    client = redis_server.client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def chroma_home(tmp_path: Path) -> Path:
    return tmp_path / "memsql_home"


@pytest.fixture
def chroma(chroma_home: Path):
    return chroma_client(chroma_home)

"""ChromaDB clients and collections for episodic and semantic memory.

Persistent local client under the data directory by default; an HTTP client when a server URL is
configured (`MEMSQL_CHROMA_URL`). Collections are always opened with our embedding function: a
reopened collection without one silently falls back to Chroma's downloading default.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memsql_assets.lib.memory.embeddings import embedding_function
from memsql_assets.lib.memory.errors import MemoryServiceError

CHROMA_URL_ENV = "MEMSQL_CHROMA_URL"
CONNECT_TIMEOUT_S = 2.0
NAME_MIN, NAME_MAX = 3, 512
_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]$")
_IPV4 = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$")


def chroma_dir(home: Path) -> Path:
    return home / "chroma"


def _is_fatal(exc: BaseException) -> bool:
    return isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit))


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def _parse_server_url(url: str) -> tuple[str, int, bool]:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port
    except ValueError as exc:
        raise MemoryServiceError(f"Chroma server URL {url!r} is malformed: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MemoryServiceError(f"Chroma server URL {url!r} must look like http://host:port")
    if parts.path not in ("", "/"):
        raise MemoryServiceError(
            f"Chroma server URL {url!r}: a path prefix is not supported, give http://host:port"
        )
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


def chroma_client(home: Path, server_url: str | None = None) -> Any:
    """A Chroma `ClientAPI`: HTTP when `server_url` (else `MEMSQL_CHROMA_URL`) is set, else persistent."""
    import chromadb

    url = server_url or os.environ.get(CHROMA_URL_ENV) or None
    if url:
        host, port, ssl = _parse_server_url(url)
        # Chroma's HTTP client has no connect timeout (httpx timeout=None): probe the port ourselves so a
        # black-holed host fails in seconds instead of hanging the run.
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise MemoryServiceError(
                f"Chroma server at {url} is unreachable ({exc}); start it (`chroma run`) or unset {CHROMA_URL_ENV}"
            ) from exc
        try:
            client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=_settings())
            client.heartbeat()
        except BaseException as exc:
            if _is_fatal(exc):
                raise
            raise MemoryServiceError(
                f"Chroma server at {url} does not answer as a Chroma server: {exc}"
            ) from exc
        return client

    path = chroma_dir(home)
    if path.exists() and not path.is_dir():
        raise MemoryServiceError(f"{path}: Chroma directory is a file; delete it")
    path.mkdir(parents=True, exist_ok=True)
    try:
        client = chromadb.PersistentClient(path=str(path), settings=_settings())
        client.heartbeat()
    except BaseException as exc:  # the Rust core can raise a pyo3 PanicException (a BaseException)
        if _is_fatal(exc):
            raise
        raise MemoryServiceError(
            f"{path}: Chroma persistent directory is unreadable or corrupt ({type(exc).__name__}: {exc}); "
            "delete the directory and rematerialize semantic_memory (episodic memory is rebuilt by re-running "
            "the evaluation partitions)"
        ) from exc
    return client


def collection_name(*parts: str) -> str:
    """A valid, deterministic Chroma collection name for `parts` (e.g. model, condition, version).

    Joined with '-'; anything outside [A-Za-z0-9._-] becomes '_', '..' collapses, ends are trimmed to
    alphanumerics. If that changed the text (or it had to be padded or shortened), an 8-hex hash of
    the original is appended so that distinct inputs cannot collide after cleaning.
    """
    if not parts or any(not str(p) for p in parts):
        raise MemoryServiceError(f"collection name parts must be non-empty strings, got {parts!r}")
    raw = "-".join(str(p) for p in parts)
    clean = re.sub(r"[^A-Za-z0-9._-]", "_", raw)
    clean = re.sub(r"\.{2,}", ".", clean)
    clean = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", clean)
    if clean == raw and NAME_MIN <= len(clean) <= NAME_MAX and not _IPV4.match(clean):
        return clean
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    head = clean[: NAME_MAX - len(digest) - 1].rstrip("._-")
    name = f"{head}-{digest}" if head else f"c{digest}"
    assert _NAME_OK.match(name) and NAME_MIN <= len(name) <= NAME_MAX and ".." not in name, name
    return name


def open_collection(client: Any, name: str, *, create: bool = True) -> Any:
    """Get (or create) a collection, always with our embedding function."""
    ef = embedding_function()
    if create:
        return client.get_or_create_collection(name, embedding_function=ef)
    try:
        return client.get_collection(name, embedding_function=ef)
    except BaseException as exc:
        if _is_fatal(exc):
            raise
        raise MemoryServiceError(
            f"Chroma collection {name!r} does not exist or cannot be opened: {exc}"
        ) from exc


def recreate_collection(client: Any, name: str) -> Any:
    """Delete (if present) and create empty: a run that starts fresh must not see a previous run's turns."""
    try:
        client.delete_collection(name)
    except BaseException as exc:
        if _is_fatal(exc):
            raise
        from chromadb.errors import NotFoundError

        if not isinstance(exc, (NotFoundError, ValueError)):
            raise MemoryServiceError(f"cannot delete Chroma collection {name!r}: {exc}") from exc
    return client.get_or_create_collection(name, embedding_function=embedding_function())

"""The scale-out profile's configuration and the checks it makes before anything runs (docs/scale_out.md).

`MEMSQL_PROFILE=scale-out` switches memsql from the embedded default (SQLite instance, private Redis,
local Chroma, runs in the calling process) to existing engines shared by many machines: a Dagster
instance on PostgreSQL, the Celery executor on RabbitMQ, a Redis server, a `chroma run` server and a
data directory (`MEMSQL_HOME`) that every worker mounts at the same path. Everything is chosen by
environment variables; nothing here imports Dagster.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.chroma import CHROMA_URL_ENV
from memsql_assets.lib.memory.redis_service import REDIS_URL_ENV, redact_url
from memsql_assets.lib.paths import turns_file

PROFILE_ENV = "MEMSQL_PROFILE"
EMBEDDED = "embedded"
SCALE_OUT = "scale-out"
PROFILES = (EMBEDDED, SCALE_OUT)
POSTGRES_URL_ENV = "MEMSQL_POSTGRES_URL"  # read by deploy/dagster.yaml ({env: ...}) in every process
BROKER_URL_ENV = "MEMSQL_CELERY_BROKER"
QUEUE_ENV = "MEMSQL_CELERY_QUEUE"
DEFAULT_QUEUE = "memsql"
SERVICE_CHECK_TIMEOUT_S = 3.0


class ServiceUnreachableError(MemsqlError):
    """A service of the scale-out profile is not configured or does not answer (one line: URL and purpose)."""


class SharedPathError(MemsqlError):
    """A worker lacks the shared data directory."""


@dataclass(frozen=True)
class Service:
    name: str
    env: str
    purpose: str


POSTGRES = Service("PostgreSQL", POSTGRES_URL_ENV, "the Dagster instance: runs, event log and schedules")
BROKER = Service("RabbitMQ", BROKER_URL_ENV, "the Celery broker that hands evaluation steps to workers")
REDIS = Service("Redis", REDIS_URL_ENV, "working memory shared by every worker")
CHROMA = Service("Chroma", CHROMA_URL_ENV, "episodic and semantic memory shared by every worker")
SERVICES = (POSTGRES, BROKER, REDIS, CHROMA)


def profile(environ: Mapping[str, str] | None = None) -> str:
    """The active profile: `$MEMSQL_PROFILE`, else the embedded default."""
    value = (os.environ if environ is None else environ).get(PROFILE_ENV, "").strip() or EMBEDDED
    if value not in PROFILES:
        raise MemsqlError(f"${PROFILE_ENV}: expected one of {', '.join(PROFILES)}, got {value!r}")
    return value


def scale_out_enabled(environ: Mapping[str, str] | None = None) -> bool:
    return profile(environ) == SCALE_OUT


@dataclass(frozen=True)
class ScaleOutSettings:
    postgres_url: str
    broker_url: str
    queue: str
    redis_url: str
    chroma_url: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ScaleOutSettings:
        """Every URL the profile needs; a missing one fails naming its variable and what it is for."""
        env = os.environ if environ is None else environ
        urls = {}
        for service in SERVICES:
            url = env.get(service.env, "").strip()
            if not url:
                raise ServiceUnreachableError(
                    f"{PROFILE_ENV}={SCALE_OUT} needs ${service.env}: the {service.name} URL for {service.purpose}"
                )
            urls[service] = url
        check_postgres_scheme(urls[POSTGRES])
        return cls(
            postgres_url=urls[POSTGRES],
            broker_url=urls[BROKER],
            queue=env.get(QUEUE_ENV, "").strip() or DEFAULT_QUEUE,
            redis_url=urls[REDIS],
            chroma_url=urls[CHROMA],
        )


def unreachable(service: Service, url: str, cause: object) -> ServiceUnreachableError:
    return ServiceUnreachableError(
        f"{service.name} at {redact_url(url)} ({service.purpose}) is unreachable: {_one_line(cause)}; "
        f"start it or fix ${service.env}"
    )


def _one_line(cause: object) -> str:
    text = " ".join(str(cause).split())
    return text or type(cause).__name__


def check_postgres_scheme(url: str) -> None:
    """SQLAlchemy 2.1 (which dagster-postgres uses) reads a bare postgresql:// as psycopg 3; the
    installed driver is psycopg2, so the URL must name it unless psycopg 3 is installed."""
    scheme = url.split("://", 1)[0]
    if scheme in ("postgresql", "postgres") and importlib.util.find_spec("psycopg") is None:
        raise ServiceUnreachableError(
            f"${POSTGRES.env}: {redact_url(url)} must start with postgresql+psycopg2:// "
            "(a bare postgresql:// means psycopg 3 to SQLAlchemy 2.1, and it is not installed)"
        )


def check_postgres(url: str) -> None:
    import psycopg2

    try:  # libpq takes the URL without SQLAlchemy's +driver
        psycopg2.connect(
            re.sub(r"^postgres(ql)?\+\w+://", "postgresql://", url), connect_timeout=int(SERVICE_CHECK_TIMEOUT_S)
        ).close()
    except (psycopg2.Error, ValueError) as exc:
        raise unreachable(POSTGRES, url, exc) from exc


def check_broker(url: str) -> None:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=SERVICE_CHECK_TIMEOUT_S) as conn:
            conn.ensure_connection(max_retries=1, timeout=SERVICE_CHECK_TIMEOUT_S)
    except Exception as exc:  # kombu wraps socket, AMQP and URL errors in many types
        raise unreachable(BROKER, url, exc) from exc


def check_redis(url: str) -> None:
    import redis

    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=SERVICE_CHECK_TIMEOUT_S, socket_timeout=SERVICE_CHECK_TIMEOUT_S
        )
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise unreachable(REDIS, url, exc) from exc


def check_chroma(url: str) -> None:
    """TCP connect, then Chroma's heartbeat: the HTTP client itself has no connect timeout."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 8000)
        if not host:
            raise ValueError("no host in the URL")
        socket.create_connection((host, port), timeout=SERVICE_CHECK_TIMEOUT_S).close()
        base = f"{parts.scheme or 'http'}://{parts.netloc}"
        with urllib.request.urlopen(f"{base}/api/v2/heartbeat", timeout=SERVICE_CHECK_TIMEOUT_S) as resp:
            resp.read()
    except (OSError, ValueError) as exc:
        raise unreachable(CHROMA, url, exc) from exc


def check_services(settings: ScaleOutSettings) -> None:
    """Each service answers, in the order a run needs them; the first that does not is named."""
    check_postgres(settings.postgres_url)
    check_broker(settings.broker_url)
    check_redis(settings.redis_url)
    check_chroma(settings.chroma_url)


def check_shared_home(home: Path, worker: str) -> None:
    """A worker's data directory must be the shared one: it holds the benchmark every partition reads."""
    turns = turns_file(home)
    if not turns.is_file():
        missing = home if not home.exists() else turns
        raise SharedPathError(
            f"worker {worker}: the shared path {home} (MEMSQL_HOME) is missing here ({missing} does not exist); "
            "mount the shared storage at that path on every worker"
        )

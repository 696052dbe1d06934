"""Bad input of the scale-out profile: an unreachable PostgreSQL, RabbitMQ, Redis or Chroma
fails `memsql eval` at start, before anything runs, in one line naming the URL and what it is for.

The services are checked in that order, so the ones before the unreachable one are the machine's own
(the case skips in one line where one of those is absent); the unreachable one is a closed local port.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from memsql_assets.defs.scale_out_settings import (
    BROKER,
    CHROMA,
    POSTGRES,
    PROFILE_ENV,
    REDIS,
    SCALE_OUT,
    SERVICES,
    ScaleOutSettings,
    ServiceUnreachableError,
    check_broker,
    check_postgres,
    check_redis,
)
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.orchestration.local_deployment import (
    BROKER_URL,
    POSTGRES_ADMIN_URL,
    REDIS_SERVER_URL,
    SCRUBBED,
    free_port,
)

MACHINE = {
    POSTGRES: (POSTGRES_ADMIN_URL, check_postgres),
    BROKER: (BROKER_URL, check_broker),
    REDIS: (REDIS_SERVER_URL, check_redis),
}
CLOSED = {
    POSTGRES: "postgresql+psycopg2://postgres@127.0.0.1:{port}/memsql",
    BROKER: "pyamqp://guest:guest@127.0.0.1:{port}//",
    REDIS: "redis://127.0.0.1:{port}/0",
    CHROMA: "http://127.0.0.1:{port}",
}


def _memsql_eval(tmp_path, urls: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(
        {s.env: url for s, url in urls.items()}, PYTHONPATH=str(REPO_ROOT), MEMSQL_HOME=str(tmp_path / "home")
    )
    env[PROFILE_ENV] = SCALE_OUT
    return subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", "eval", "--model", "gold", "--condition", "A", "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("service", SERVICES, ids=[s.name for s in SERVICES])
def test_an_unreachable_service_fails_at_start_naming_its_url_and_purpose(service, tmp_path) -> None:
    before = SERVICES[: SERVICES.index(service)]
    for other in before:
        url, check = MACHINE[other]
        try:
            check(url)
        except ServiceUnreachableError as exc:
            pytest.skip(f"this case needs the machine's {other.name}: {exc}")
    closed = CLOSED[service].format(port=free_port())
    urls = {s: MACHINE[s][0] if s in before else CLOSED[s].format(port=free_port()) for s in SERVICES}
    urls[service] = closed
    done = _memsql_eval(tmp_path, urls)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()  # one line, nothing else
    shown = closed.replace("guest:guest@", "guest:***@")  # a password is never printed
    assert line.startswith(
        f"memsql: error: {service.name} at {shown} ({service.purpose}) is unreachable: "
    ), line
    assert not (tmp_path / "home" / "dagster_home").exists(), "something ran before the check"


def test_a_missing_url_names_its_variable_and_purpose() -> None:
    env = {
        PROFILE_ENV: SCALE_OUT,
        POSTGRES.env: POSTGRES_ADMIN_URL,
        BROKER.env: BROKER_URL,
        REDIS.env: REDIS_SERVER_URL,
    }
    with pytest.raises(ServiceUnreachableError) as exc:
        ScaleOutSettings.from_environ(env)
    assert (
        str(exc.value)
        == f"{PROFILE_ENV}={SCALE_OUT} needs ${CHROMA.env}: the Chroma URL for {CHROMA.purpose}"
    )


def test_a_postgres_url_without_the_installed_driver_is_refused() -> None:
    if importlib.util.find_spec("psycopg") is not None:
        pytest.skip("psycopg 3 is installed: SQLAlchemy takes a bare postgresql:// URL")
    env = {s.env: "x://y" for s in SERVICES} | {POSTGRES.env: "postgresql://postgres@127.0.0.1:5432/memsql"}
    with pytest.raises(ServiceUnreachableError, match=r"must start with postgresql\+psycopg2://"):
        ScaleOutSettings.from_environ(env)


def test_an_unknown_profile_is_refused() -> None:
    from memsql_assets.defs.scale_out_settings import profile
    from memsql_assets.lib.errors import MemsqlError

    with pytest.raises(
        MemsqlError, match=rf"\${PROFILE_ENV}: expected one of embedded, {SCALE_OUT}, got 'cluster'"
    ):
        profile({PROFILE_ENV: "cluster"})

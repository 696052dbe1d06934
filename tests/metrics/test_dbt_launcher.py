"""The dbt that dagster-dbt runs: `--version` answered offline, every other command handed to dbt."""

from __future__ import annotations

import importlib.metadata
import socket
import subprocess
import threading

import pytest

from memsql_assets.lib.report.dbt_cli import DBT_LAUNCHER, dbt_env, dbt_executable


@pytest.fixture
def proxy():
    """A local listener set as the HTTP(S) proxy: every request dbt makes lands here and is counted."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    yield {"HTTP_PROXY": url, "HTTPS_PROXY": url, "NO_PROXY": "", "no_proxy": ""}, accepted
    done.set()
    thread.join()
    server.close()


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def test_version_is_answered_without_a_request_and_other_commands_reach_dbt(tmp_path, proxy, monkeypatch):
    for name in ("MEMSQL_HOME", "DBT_SEND_ANONYMOUS_USAGE_STATS", "MEMSQL_DBT", "MEMSQL_DBT_CORE_VERSION"):
        monkeypatch.setenv(name, "")  # dbt_env() sets them in this process: restored afterwards
    env = {**dbt_env(tmp_path), **proxy[0]}
    requests = proxy[1]

    asked = _run([str(DBT_LAUNCHER), "--version"], env)
    assert asked.returncode == 0, asked.stderr
    assert importlib.metadata.version("dbt-core") in asked.stdout
    assert requests == []

    direct = _run([dbt_executable(), "--version"], env)  # what dagster-dbt would run without the launcher
    assert direct.returncode == 0 and len(requests) >= 1  # dbt asks pypi.org (here: the proxy)

    passed_on = _run([str(DBT_LAUNCHER), "--help"], env)
    assert passed_on.returncode == 0 and "Usage: dbt" in passed_on.stdout


def test_without_its_environment_the_launcher_says_what_is_missing(tmp_path):
    done = _run([str(DBT_LAUNCHER), "--version"], {"PATH": "/usr/bin:/bin"})
    assert done.returncode != 0 and "MEMSQL_DBT_CORE_VERSION" in done.stderr

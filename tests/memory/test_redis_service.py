"""The Redis service: fail fast on a bad URL, private server lifecycle, reuse and orphan handling."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from memtest_helpers import pid_alive

from memsql_assets.lib.memory.errors import MemoryServiceError
from memsql_assets.lib.memory.redis_service import (
    OWNER_FILE,
    RedisServer,
    redact_url,
    redis_connection,
    redis_dir,
    socket_path_for,
)


def test_bad_url_fails_fast_and_names_the_url(tmp_path: Path) -> None:
    url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    started = time.monotonic()
    with pytest.raises(MemoryServiceError) as err, redis_connection(tmp_path, url=url):
        pass
    assert time.monotonic() - started < 3.0
    assert url in str(err.value) and "unreachable" in str(err.value)


def test_env_url_is_used_and_password_is_redacted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMSQL_REDIS_URL", "redis://:s3cret@127.0.0.1:1/0")
    with pytest.raises(MemoryServiceError) as err, redis_connection(tmp_path):
        pass
    assert "s3cret" not in str(err.value) and "127.0.0.1:1" in str(err.value)
    assert redact_url("redis://u:p@h:1/0") == "redis://u:***@h:1/0"


def test_configured_url_works(redis_server: RedisServer, tmp_path: Path) -> None:
    url = f"unix://{redis_server.socket_path}"
    with redis_connection(tmp_path / "unused", url=url) as client:
        assert client.ping()
    assert redis_server.running  # a configured server is never stopped by us


def test_private_server_start_stop_leaves_no_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with redis_connection(home) as client:
        client.set("memsql:test", "1")
        owner = json.loads((redis_dir(home) / OWNER_FILE).read_text())
        server_pid = owner["server_pid"]
        assert pid_alive(server_pid)
    assert not pid_alive(server_pid)
    assert not socket_path_for(home).exists()
    assert not (redis_dir(home) / OWNER_FILE).exists()


def test_private_server_stopped_on_exception(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server_pid = None
    with pytest.raises(RuntimeError), redis_connection(home):
        server_pid = json.loads((redis_dir(home) / OWNER_FILE).read_text())["server_pid"]
        raise RuntimeError("boom")
    assert server_pid is not None and not pid_alive(server_pid)


def test_other_process_reuses_running_server_without_stopping_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from memsql_assets.lib.memory.redis_service import redis_connection
        with redis_connection(Path({str(home)!r})) as c:
            c.set("memsql:test:from-child", "yes")
        """
    )
    with redis_connection(home) as client:
        server_pid = json.loads((redis_dir(home) / OWNER_FILE).read_text())["server_pid"]
        subprocess.run([sys.executable, "-c", script], check=True, timeout=30)
        assert pid_alive(server_pid)
        assert client.get("memsql:test:from-child") == "yes"
    assert not pid_alive(server_pid)


def test_orphan_of_a_dead_owner_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    orphan = RedisServer(socket_path_for(home), log_path=redis_dir(home) / "orphan.log")
    orphan.start()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (redis_dir(home) / OWNER_FILE).write_text(json.dumps({"started_by": dead.pid, "server_pid": orphan.pid}))
    try:
        with redis_connection(home) as client:
            assert client.ping()
            owner = json.loads((redis_dir(home) / OWNER_FILE).read_text())
            assert owner["server_pid"] != orphan.pid
            assert orphan._proc is not None and orphan._proc.wait(timeout=5) == 0
    finally:
        orphan.stop()


def test_long_home_falls_back_to_short_private_socket_dir(tmp_path: Path) -> None:
    home = tmp_path / ("x" * 120)
    sock = socket_path_for(home)
    assert len(str(sock)) <= 100 and str(sock).startswith("/tmp/memsql-redis-")
    assert (sock.parent.stat().st_mode & 0o777) == 0o700
    with redis_connection(home) as client:
        assert client.ping()
    assert not sock.parent.exists()  # cleaned up by the owner
    assert socket_path_for(home) == sock  # deterministic: another process finds the same server
    sock.parent.rmdir()


def test_relative_home_works(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with redis_connection(Path("relative-home")) as client:
        assert client.ping()
    assert (tmp_path / "relative-home" / "redis" / "redis.log").exists()


def test_missing_binary_says_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MemoryServiceError, match="install"):
        RedisServer(tmp_path / "r.sock").start()


def test_server_that_dies_at_start_reports_its_log(tmp_path: Path) -> None:
    bad = tmp_path / "fake-redis-server"
    bad.write_text("#!/bin/sh\necho 'FATAL: cannot start' \nexit 3\n")
    bad.chmod(0o755)
    with pytest.raises(MemoryServiceError, match="(?s)exited with code 3.*FATAL: cannot start"):
        RedisServer(tmp_path / "r.sock", binary=str(bad)).start()


def test_restart_gives_a_fresh_empty_server(redis_server: RedisServer) -> None:
    client = redis_server.client()
    client.set("k", "v")
    first = redis_server.pid
    redis_server.restart()
    assert redis_server.pid != first and first is not None and not pid_alive(first)
    assert client.get("k") is None  # --save "": nothing survives, and the old client reconnects


def _user(home: Path, hold_s: float) -> subprocess.Popen:
    """Another process inside `redis_connection(home)` for `hold_s`; it prints a line once inside."""
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from memsql_assets.lib.memory.redis_service import redis_connection
        with redis_connection(Path({str(home)!r})) as c:
            c.set("memsql:test:user", "here")
            print("in", flush=True)
            time.sleep({hold_s})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "in\n"
    return proc


def test_the_server_outlives_the_user_that_started_it_and_stops_with_the_last(tmp_path: Path) -> None:
    home = tmp_path / "home"
    starter = _user(home, 0.5)
    server_pid = json.loads((redis_dir(home) / OWNER_FILE).read_text())["server_pid"]
    with redis_connection(home) as client:
        assert starter.wait(timeout=30) == 0
        assert pid_alive(server_pid) and client.get("memsql:test:user") == "here"
    deadline = time.monotonic() + 5
    while pid_alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(server_pid), "the last user stops a server another process started"
    assert not socket_path_for(home).exists() and not (redis_dir(home) / OWNER_FILE).exists()


def test_a_user_killed_with_9_neither_stops_the_server_nor_keeps_it_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with redis_connection(home) as client:
        server_pid = json.loads((redis_dir(home) / OWNER_FILE).read_text())["server_pid"]
        killed = _user(home, 60)
        killed.kill()
        killed.wait(timeout=10)
        assert client.get("memsql:test:user") == "here" and pid_alive(server_pid)
        assert client.ping(), "the server stays up for the live user"
    assert not pid_alive(server_pid), "the killed user's lease does not keep it up"
    assert not list((redis_dir(home) / "leases").iterdir()), "its stale lease is removed"


def test_a_server_that_cannot_start_leaves_no_lease(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("PATH", str(tmp_path))  # no redis-server
    with pytest.raises(MemoryServiceError, match="install"), redis_connection(home):
        pass
    assert not list((redis_dir(home) / "leases").iterdir())

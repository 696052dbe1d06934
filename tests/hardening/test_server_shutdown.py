"""`memsql ui` and `memsql docs` never outlive their CLI: the real servers
(`dagster dev` with its webserver, daemon and code servers; `dbt docs serve`) are started on a free
port, the CLI gets SIGTERM, SIGINT or SIGHUP as a service manager or a terminal sends it, and within
10 s no process of its tree is left and the port is free. A second start while the port is held
says so in one line."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.process_group import STOP_SIGNALS, port_in_use

STOP_WITHIN_S = 10.0
START_TIMEOUT_S = 240.0  # dagster dev loads the definitions in a code server: slow on a loaded machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session id) from /proc, or None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[3])


def _all_processes() -> dict[int, tuple[str, int, int]]:
    stats = {int(d): _stat(int(d)) for d in os.listdir("/proc") if d.isdigit()}
    return {pid: s for pid, s in stats.items() if s is not None}


def process_tree(root: int) -> set[int]:
    procs = _all_processes()
    tree, frontier = set(), {root}
    while frontier:
        tree |= frontier
        frontier = {pid for pid, (_, ppid, _) in procs.items() if ppid in frontier} - tree
    return tree - {root}


def living(pids: set[int], sessions: set[int]) -> set[int]:
    """The given processes, and any in the given sessions, that still run (zombies do not)."""
    procs = _all_processes()
    return {
        pid for pid, (state, _, sid) in procs.items() if state != "Z" and (pid in pids or sid in sessions)
    }


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start(command: str, port: int, home: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "MEMSQL_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memsql_assets.cli", command, "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not listening(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"memsql {command} did not start on port {port}:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    return proc


# Each signal once and each server at least once: the CLI forwards all three through one handler
# (lib/process_group.py), so the other three pairings would start a server again to prove nothing new.
# `dagster dev` is the slow one to start, so it is started once.
PAIRS = list(zip(itertools.cycle(["docs", "ui"]), STOP_SIGNALS))


@pytest.mark.parametrize(("command", "signum"), PAIRS, ids=[f"{c}-{s.name}" for c, s in PAIRS])
def test_a_stop_signal_stops_the_whole_server_tree_and_frees_the_port(command, signum, tmp_path):
    port = free_port()
    proc = start(command, port, tmp_path / "home", tmp_path / "server.log")
    tree = process_tree(proc.pid)
    sessions = {_stat(pid)[2] for pid in tree} - {os.getsid(0)}  # the server's own session
    assert tree and sessions, "the server runs in a session of its own"

    proc.send_signal(signum)
    sent = time.monotonic()
    proc.wait(timeout=STOP_WITHIN_S + 5)
    while living(tree, sessions) and time.monotonic() - sent < STOP_WITHIN_S:
        time.sleep(0.1)
    took = time.monotonic() - sent
    left = living(tree, sessions)
    assert not left, f"left running {took:.1f} s after {signal.Signals(signum).name}: {sorted(left)}"
    assert not port_in_use("127.0.0.1", port), "the port is free"
    assert proc.returncode == 128 + signum
    print(f"memsql {command}: {len(tree)} processes stopped {took:.2f} s after {signal.Signals(signum).name}")


@pytest.mark.parametrize("command", ["ui", "docs"])
def test_a_second_start_while_the_port_is_held_says_so_in_one_line(command, tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "memsql_assets.cli", command, "--port", str(port)],
            cwd=REPO_ROOT,
            env={**os.environ, "MEMSQL_HOME": str(tmp_path / "home")},
            capture_output=True,
            text=True,
            timeout=120,
        )
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 1
    assert lines == [
        f"memsql {command}: 127.0.0.1:{port} is already in use (another `memsql {command}`?); "
        "stop it or pass --port"
    ]

"""Run a server (`dagster dev`, `dbt docs serve`) so that it never outlives the CLI that started it.

The server starts in its own session, hence its own process group, so a terminal's
Ctrl-C reaches only the CLI; the CLI forwards SIGTERM, SIGINT and SIGHUP to the whole group, waits
STOP_GRACE_S for it to exit, then kills what is left. The group holds every process the server
starts (webserver, daemon, code servers) unless one starts a session of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
STOP_GRACE_S = 8.0  # SIGTERM to SIGKILL; within the 10 s a service manager allows
SERVER_POLL_S = 0.2  # how often the server is checked while no signal has come


def port_in_use(host: str, port: int) -> bool:
    """Whether something listens on host:port (SO_REUSEADDR: a socket in TIME_WAIT does not count)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_group(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM to the group of `proc`; what is left of it after `grace_s` gets SIGKILL."""
    deadline = time.monotonic() + grace_s
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    while _group_alive(proc.pid) and time.monotonic() < deadline:  # the server's children stop too
        time.sleep(SERVER_POLL_S / 4)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def serve(cmd: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> int:
    """Run `cmd` in its own process group until it exits or this process gets a stop signal; then
    the group is stopped. Returns the server's exit status, or 128 + the signal's number."""
    received: list[int] = []  # the handler only records: nothing is raised in the middle of Popen

    def record(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, record) for s in STOP_SIGNALS}
    try:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), start_new_session=True)
        try:
            while not received:
                try:
                    return proc.wait(timeout=SERVER_POLL_S)
                except subprocess.TimeoutExpired:
                    continue
            return 128 + received[0]
        finally:
            stop_group(proc)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

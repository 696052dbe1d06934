"""A small home with real partitions (gold A, recall-probe A, B, B_wm5) and its dbt marts, served by
`memsql view` in a separate process on a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import copy_built_home
from tests.metrics.conftest import metrics_home  # noqa: F401 (a fixture)

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_view(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "MEMSQL_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "memsql_assets.cli", "view", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_up(proc: subprocess.Popen, url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"memsql view exited {proc.returncode}: {proc.stderr.read()}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"memsql view did not answer on {url}")


@pytest.fixture(scope="module")
def view_home(tmp_path_factory, metrics_home) -> Path:  # noqa: F811 (the imported fixture)
    """A private copy of metrics_home, marts included: a test writes a partition into it."""
    return copy_built_home(metrics_home, tmp_path_factory.mktemp("view") / "home")


@pytest.fixture(scope="module")
def viewer(view_home):
    port = free_port()
    proc = start_view(view_home, port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(proc, url + "/compare")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            yield b
        finally:
            b.close()

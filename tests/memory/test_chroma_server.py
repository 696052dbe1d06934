"""Episodic memory through a real `chroma run` server (the HTTP-client configuration)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from memtest_helpers import payload

from memsql_assets.lib.memory.chroma import chroma_client, collection_name
from memsql_assets.lib.memory.episodic import EpisodicMemory
from memsql_assets.lib.memory.semantic import SemanticMemory, seed_semantic_memory


def _chroma_cli() -> str | None:
    beside_python = Path(sys.executable).parent / "chroma"
    return str(beside_python) if beside_python.exists() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    cli = _chroma_cli()
    if cli is None:
        pytest.skip("the `chroma` CLI (installed with chromadb) is not on PATH or beside the interpreter")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "chroma-server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [cli, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"chroma run exited with {proc.returncode}: {(tmp_path / 'chroma-server.log').read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("chroma run did not answer its heartbeat within 30 s")
            time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


def test_episodic_and_semantic_over_http(chroma_server: str, tmp_path: Path) -> None:
    client = chroma_client(tmp_path / "home", server_url=chroma_server)
    memory = EpisodicMemory(client, collection_name("episodic", "gold", "D", "v1"))
    memory.reset()
    apple = payload("SEC-2-001", 1, ticker="AAPL")
    apple.update(question="Show Apple revenue for 2022 and 2023.", sql="SELECT 1")
    loans = payload("BIRD-2-001", 1, region="Prague")
    loans.update(question="How many loans with status A are in Prague?", sql="SELECT 2")
    memory.add(apple)
    memory.add(loans)
    memory.add(apple)
    memory.publish(["SEC-2-001", "BIRD-2-001"])
    assert memory.count() == 2
    assert memory.query("Apple revenue in 2024", k=1)[0]["state_updates"] == {"ticker": "AAPL"}
    assert [h["session_id"] for h in memory.query("Apple revenue", k=3, source="BIRD")] == ["BIRD-2-001"]
    assert seed_semantic_memory(client) == 6
    assert SemanticMemory(client).query("total sales per customer", source="NW")[0]["id"] == "NW-2"
    assert not (tmp_path / "home" / "chroma").exists()  # the HTTP configuration writes nothing locally

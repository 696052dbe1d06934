"""Fixtures for the hardening tests: a writable copy of the small benchmark home, the scripted
fake provider of tests/models, and a fork server that has paid the imports and the embedding-model load
once, so that partition runs which are killed with SIGKILL start in milliseconds instead of seconds."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsql_assets.lib.harness.results import comparable_rows

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "models"))  # model_fakes: the scripted litellm provider

from model_fakes import ScriptedProvider, registered_provider  # noqa: E402


@pytest.fixture(autouse=True)
def _no_configured_services(monkeypatch) -> None:
    """A developer's MEMSQL_REDIS_URL / MEMSQL_CHROMA_URL / MEMSQL_MODELS_FILE must not redirect these tests."""
    for name in ("MEMSQL_REDIS_URL", "MEMSQL_CHROMA_URL", "MEMSQL_MODELS_FILE"):
        monkeypatch.delenv(name, raising=False)


def copy_home(small_home: Path, target: Path) -> Path:
    """A private copy of the small home without results, request store or Redis state."""
    shutil.copytree(small_home, target, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    return target


@pytest.fixture
def home(small_home, tmp_path) -> Path:
    return copy_home(small_home, tmp_path / "home")


@pytest.fixture
def fake_provider() -> Iterator[ScriptedProvider]:
    with registered_provider() as provider:
        yield provider


@pytest.fixture(scope="session")
def forkserver() -> multiprocessing.context.ForkServerContext:
    """A multiprocessing fork server with memsql and the embedding model preloaded (forkserver_preload.py).

    Python 3.11's fork server does not apply the parent's sys.path, so this folder travels in
    PYTHONPATH; the server's environment is fixed when it starts, so the configured-service variables
    are removed first. Children run partition_child.run_partition.
    """
    ctx = multiprocessing.get_context("forkserver")
    saved = {
        k: os.environ.get(k)
        for k in ("PYTHONPATH", "MEMSQL_REDIS_URL", "MEMSQL_CHROMA_URL", "MEMSQL_MODELS_FILE")
    }
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), saved["PYTHONPATH"]) if p)
    for name in ("MEMSQL_REDIS_URL", "MEMSQL_CHROMA_URL", "MEMSQL_MODELS_FILE"):
        os.environ.pop(name, None)
    ctx.set_forkserver_preload(["forkserver_preload"])
    try:
        probe = ctx.Process(target=os.getpid)
        probe.start()
        probe.join()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return ctx


@pytest.fixture(scope="session")
def clean_c(small_home, tmp_path_factory, forkserver) -> dict:
    """recall-probe × C run once, uninterrupted, on its own copy: the reference a resumed run must
    equal (`rows`), and how long a forked run takes on this machine (`first_checkpoint_s`, `total_s`)."""
    import time

    from partition_child import run_partition

    from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir, read_results

    home = copy_home(small_home, tmp_path_factory.mktemp("clean_c") / "home")
    checkpoints = progress_dir(home, "recall-probe", "C")
    proc = forkserver.Process(target=run_partition, args=(str(home), "recall-probe", "C"))
    started, first = time.monotonic(), None
    proc.start()
    while proc.is_alive() and time.monotonic() - started < 180:
        if first is None and checkpoints.exists() and any(checkpoints.glob("*-*.json")):
            first = time.monotonic() - started
        time.sleep(0.01)
    proc.join(1)
    assert proc.exitcode == 0, proc.exitcode
    total = time.monotonic() - started
    return {
        "rows": read_results(partition_dir(home, "recall-probe", "C") / RESULT_FILE),
        "first_checkpoint_s": first if first is not None else total,
        "total_s": total,
    }


@pytest.fixture(scope="session")
def clean_c_rows(clean_c) -> list[dict]:
    return clean_c["rows"]


def row_diffs(a_rows: list[dict], b_rows: list[dict]) -> list[tuple]:
    assert len(a_rows) == len(b_rows), (len(a_rows), len(b_rows))
    return [
        (a["session_id"], a["turn_index"], k, a[k], b[k])
        for a, b in zip(comparable_rows(a_rows), comparable_rows(b_rows), strict=True)
        for k in a
        if a[k] != b[k]
    ]


def leftover_redis_pids(home: Path) -> list[int]:
    """redis-servers still serving this home's private socket (started by runs of this test)."""
    from memsql_assets.lib.memory.redis_service import socket_path_for

    socket = str(socket_path_for(home)).encode()
    pids = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (
                proc.name.isdigit()
                and b"redis-server" in (cmd := (proc / "cmdline").read_bytes())
                and socket in cmd
            ):
                pids.append(int(proc.name))
    return pids

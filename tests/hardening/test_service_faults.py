"""Service faults: Redis unreachable at start, Chroma directories deleted or corrupted.

Every failure must surface before the first model call (the fake provider counts calls) with a
message that names the service, where it is, and what to do. A deleted episodic Chroma directory
between a kill and its resume is the subtle case: the checkpoints say sessions 1..k are done, but
the memory those sessions wrote is gone, so a resume that trusted them would silently retrieve
nothing; the run must instead start the partition afresh and still equal a clean run.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time

import pytest
from conftest import leftover_redis_pids, row_diffs
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET, TEST_REGISTRY
from partition_child import run_partition

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir, read_results
from memsql_assets.lib.memory.chroma import chroma_dir
from memsql_assets.lib.memory.errors import MemoryServiceError
from memsql_assets.lib.models.registry import load_registry


@pytest.fixture
def registry(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(TEST_REGISTRY, encoding="utf-8")
    return load_registry(path)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on exit: nothing listens there


def test_redis_unreachable_fails_before_any_model_call(home, registry, fake_provider, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    url = f"redis://127.0.0.1:{_dead_port()}/0"
    monkeypatch.setenv("MEMSQL_REDIS_URL", url)
    started = time.monotonic()
    with pytest.raises(MemoryServiceError) as err:
        evaluate_partition(home, "flaky", "B", registry=registry)
    message = str(err.value)
    assert url in message and "unreachable" in message and "MEMSQL_REDIS_URL" in message
    assert time.monotonic() - started < 30, "unreachable must fail fast, not hang"
    assert fake_provider.calls == [], "no model call before the services are up"
    assert not (home / "requests").exists() and not partition_dir(home, "flaky", "B").exists()


def test_deleted_semantic_chroma_says_to_rematerialize(home, registry, fake_provider, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    shutil.rmtree(chroma_dir(home))
    with pytest.raises(
        MemoryServiceError, match="semantic memory .* is not seeded: materialize the semantic_memory"
    ):
        evaluate_partition(home, "flaky", "D", registry=registry)
    assert fake_provider.calls == []


@pytest.mark.parametrize("which", ["semantic", "episodic"])
def test_corrupted_chroma_is_a_clear_error_naming_the_directory(
    home, registry, fake_provider, monkeypatch, which
):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    directory = chroma_dir(home if which == "semantic" else partition_dir(home, "flaky", "D"))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "chroma.sqlite3").write_bytes(os.urandom(64 * 1024))
    with pytest.raises(MemoryServiceError) as err:
        evaluate_partition(home, "flaky", "D", registry=registry)
    message = str(err.value)
    assert str(directory) in message and "corrupt" in message
    assert "delete the directory" in message and "semantic_memory" in message
    assert fake_provider.calls == []


def test_episodic_chroma_deleted_between_kill_and_resume_is_rebuilt(home, forkserver, clean_c_rows):
    proc = forkserver.Process(target=run_partition, args=(str(home), "recall-probe", "C"))
    proc.start()
    checkpoints = progress_dir(home, "recall-probe", "C")
    deadline = time.monotonic() + 60
    while proc.is_alive() and len(list(checkpoints.glob("*-*.json"))) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    done = len(list(checkpoints.glob("*-*.json")))
    assert 5 <= done < 30, done
    shutil.rmtree(chroma_dir(partition_dir(home, "recall-probe", "C")))

    resumed = forkserver.Process(target=run_partition, args=(str(home), "recall-probe", "C"))
    resumed.start()
    resumed.join(120)
    for pid in leftover_redis_pids(home):  # see test_crash_kill9: a kill can orphan the private server
        os.kill(pid, signal.SIGKILL)
    assert resumed.exitcode == 0
    rows = read_results(partition_dir(home, "recall-probe", "C") / RESULT_FILE)
    diffs = row_diffs(rows, clean_c_rows)
    assert not diffs, (
        f"{len(diffs)} differences: the resume trusted checkpoints whose memory was gone",
        diffs[:3],
    )

"""An unreachable model endpoint: real litellm calls to an OpenAI-compatible
`api_base` on a closed 127.0.0.1 port fail the partition fast with one line naming the model, the
endpoint and the cause; once a real server answers on that port, a re-run re-asks exactly the turns
that failed (nothing of them was stored or checkpointed) and completes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_endpoint import DROP, OK, REFUSED, Answer, closed_port, openai_endpoint
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET

from memsql_assets.lib.benchmark.store import read_turns, write_benchmark
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    partition_dir,
    progress_dir,
    read_checkpoints,
    read_results,
)
from memsql_assets.lib.harness.runner import STOP_AFTER_FAILURES, PartitionStopped
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.registry import MODELS_FILE_ENV, load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import REPO_ROOT, benchmark_dir

FAIL_FAST_S = 60  # the fail-fast bound (docs/hardening.md, M1), default retry policy (jitter and all)


def write_registry(path: Path, port: int, concurrency: int = 2) -> Path:
    """local-llm on 127.0.0.1:`port`; `concurrency` is also the wave size, the sessions asked at once."""
    path.write_text(
        f"""
models:
  local-llm:
    litellm_model: openai/tiny-sql
    kind: api
    reasoning: {{type: none}}
    api_base: "http://127.0.0.1:{port}/v1"
    api_key_env: {FAKE_KEY_ENV}
    max_concurrency: {concurrency}
    price_per_mtok: {{input: 1.0, output: 2.0}}
    enabled: true
  gold:
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {{type: none}}
    max_concurrency: 16
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
""",
        encoding="utf-8",
    )
    return path


def test_unreachable_endpoint_stops_fast_and_a_rerun_reasks_the_failed_turns(home, tmp_path, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    port = closed_port()
    registry = load_registry(write_registry(tmp_path / "models.yaml", port))

    started = time.monotonic()
    with pytest.raises(PartitionStopped) as stopped:
        evaluate_partition(home, "local-llm", "B", registry=registry)
    elapsed = time.monotonic() - started
    line = str(stopped.value)
    assert elapsed < FAIL_FAST_S, f"took {elapsed:.1f} s"
    assert "\n" not in line
    assert f"{STOP_AFTER_FAILURES} consecutive turns failed with connection_error" in line
    assert f"model local-llm at http://127.0.0.1:{port}/v1" in line, "the model and the endpoint"
    assert f"Cannot connect to host 127.0.0.1:{port}" in line, "the cause"
    assert "re-run to resume" in line
    assert RequestStore(home / "requests").count() == 0, "no failure is stored"
    checkpointed = read_checkpoints(progress_dir(home, "local-llm", "B"))
    assert not any(r["model_error_type"] for rows in checkpointed.values() for r in rows)

    with openai_endpoint(port) as server:
        out = evaluate_partition(home, "local-llm", "B", registry=registry)
    turns = read_turns(benchmark_dir(home))
    assert len(out.rows) == len(turns)
    assert not [r for r in out.rows if r["model_error_type"] or r["error_class"] == "model_error"]
    redone = len(turns) - sum(len(rows) for rows in checkpointed.values())
    assert 0 < server.calls == out.summary["model_calls_this_run"] <= redone
    assert out.summary["resumed_sessions"] == len(checkpointed)
    print(
        f"stopped after {elapsed:.1f} s; {len(checkpointed)} sessions kept; the re-run asked "
        f"{server.calls} turns of {redone} and completed {len(out.rows)} rows"
    )


@pytest.fixture
def ten_sessions_home(home, embedded_sessions) -> Path:
    """The home with every 30th session of the benchmark (10, a third of small_home's): enough for
    tests whose point is not how many turns a partition has."""
    write_benchmark(benchmark_dir(home), embedded_sessions[::30])
    return home


def memsql_eval(home: Path, registry_file: Path, *flags: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "MEMSQL_HOME": str(home),
        MODELS_FILE_ENV: str(registry_file),
        FAKE_KEY_ENV: FAKE_SECRET,
    }
    env.pop("DAGSTER_HOME", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "memsql_assets.cli",
            "eval",
            "--model",
            "local-llm",
            "--condition",
            "B",
            *flags,
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_memsql_eval_prints_the_cause_in_one_line_exits_nonzero_and_resumes(ten_sessions_home, tmp_path):
    """The CLI through Dagster: no traceback on the console (the UI keeps it); once the server is
    up, the same command completes the partition."""
    home = ten_sessions_home
    port = closed_port()
    # STOP_AFTER_FAILURES turns at once fail together: one round of connect retries, not three (how
    # fast a stop comes two turns at a time is the in-process test's to prove).
    registry_file = write_registry(tmp_path / "models.yaml", port, concurrency=STOP_AFTER_FAILURES)
    started = time.monotonic()
    done = memsql_eval(home, registry_file)
    elapsed = time.monotonic() - started
    console = done.stdout + done.stderr
    assert done.returncode != 0, console
    assert "Traceback" not in console and "Stack Trace" not in console, console
    lines = [line for line in console.splitlines() if "Cannot connect to host" in line]
    assert len(lines) == 1, console
    assert f"local-llm at http://127.0.0.1:{port}/v1" in lines[0] and "connection_error" in lines[0]
    print(f"memsql eval failed in {elapsed:.1f} s: {lines[0]}")

    with openai_endpoint(port) as server:
        done = memsql_eval(home, registry_file, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["success"] and summary["model_errors"] == {}
    assert summary["turns"] == len(read_turns(benchmark_dir(home)))
    assert 0 < server.calls == summary["model_calls_this_run"]


def test_deterministic_failures_replay_labelled_until_memsql_eval_retry_errors(
    ten_sessions_home, tmp_path, monkeypatch
):
    """A 400 is the request's fault: replayed (labelled) by a plain re-run; `--retry-errors` asks again."""
    home = ten_sessions_home
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    port = closed_port()
    registry_file = write_registry(tmp_path / "models.yaml", port)
    registry = load_registry(registry_file)
    with openai_endpoint(port) as server:
        server.answer = lambda _n: REFUSED
        first = evaluate_partition(home, "local-llm", "B", registry=registry)
        refused = [r for r in first.rows if r["model_error_type"] == "bad_request"]
        assert len(refused) == len(first.rows) and server.calls == first.summary["calls"] > 0
        assert {r["error_class"] for r in refused} == {"model_error"}, "never `empty`"

        server.answer = lambda _n: OK
        before = server.calls
        replay = evaluate_partition(home, "local-llm", "B", registry=registry)
        assert server.calls - before == replay.summary["calls"] == 0
        assert all(
            r["model_error_type"] == "bad_request" and "replayed from the request store" in r["error_message"]
            for r in replay.rows
        )

        done = memsql_eval(home, registry_file, "--retry-errors", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        summary = json.loads(done.stdout)
    # Every turn asked again (history now holds answers, so later prompts differ from the first run's).
    assert server.calls - before == summary["calls"] > 0
    assert summary["model_errors"] == {} and summary["error_classes"]["model_error"] == 0


def test_an_endpoint_lost_mid_run_keeps_finished_sessions_and_the_rerun_asks_only_the_rest(
    home, tmp_path, monkeypatch
):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    port = closed_port()
    registry = load_registry(write_registry(tmp_path / "models.yaml", port))
    with openai_endpoint(port) as server, pytest.raises(PartitionStopped, match="connection_error"):
        server.answer = lambda n: OK if n <= 40 else DROP
        evaluate_partition(home, "local-llm", "B", registry=registry)
    checkpointed = read_checkpoints(progress_dir(home, "local-llm", "B"))
    kept = [r for rows in checkpointed.values() for r in rows]
    assert kept and not any(r["model_error_type"] for r in kept), "finished sessions kept, failed ones not"
    answered = RequestStore(home / "requests").count()
    assert 0 < answered <= 40

    with openai_endpoint(port) as server:
        out = evaluate_partition(home, "local-llm", "B", registry=registry)
    assert out.summary["resumed_sessions"] == len(checkpointed)
    assert not [r for r in out.rows if r["model_error_type"]]
    assert 0 < server.calls == out.summary["model_calls_this_run"] <= len(out.rows) - len(kept)
    print(f"lost after 40 calls: {len(checkpointed)} sessions kept; the re-run asked {server.calls} turns")


# Answers of a server that is up and says 200, but not in the OpenAI shape.
OTHER_JSON = Answer(body=b'{"foo": 1}')
HTML = Answer(body=b"<html><body>It works!</body></html>", content_type="text/html")


def test_a_server_answering_in_another_shape_types_each_turn_and_loses_nothing(home, tmp_path, monkeypatch):
    """After 30 good answers the server answers `{"foo": 1}` or an HTML page with 200: the partition
    completes, every later turn is a `model_error` of type malformed_response (one call each, never
    retried, never a partition stop), results are written, and the 30 answers stay in the store. Once
    the server is fixed, `retry_errors` asks exactly the typed turns again."""
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    good = 30
    with openai_endpoint() as server:
        registry = load_registry(write_registry(tmp_path / "models.yaml", server.port))
        server.answer = lambda n: OK if n <= good else (OTHER_JSON if n % 2 else HTML)
        out = evaluate_partition(home, "local-llm", "A", registry=registry)
    turns = read_turns(benchmark_dir(home))
    assert len(out.rows) == len(turns) == server.calls, "every turn, one call each"
    typed = [r for r in out.rows if r["model_error_type"]]
    assert len(typed) == len(turns) - good
    assert {(r["model_error_type"], r["error_class"]) for r in typed} == {("malformed_response", "model_error")}
    assert {"Raw keys: ['foo']" in r["error_message"] or "It works!" in r["error_message"] for r in typed} == {True}
    assert out.summary["model_errors"] == {"malformed_response": len(typed)}
    written = read_results(partition_dir(home, "local-llm", "A") / RESULT_FILE)
    assert len(written) == len(turns) and sum(1 for r in written if r["model_error_type"]) == len(typed)
    store = RequestStore(home / "requests")
    answered = {r["request_key"] for r in out.rows if not r["model_error_type"]}
    assert len(answered) == good and all(store.get(k)["response"]["text"] == "SELECT 1" for k in answered)

    with openai_endpoint(server.port) as fixed:
        again = evaluate_partition(home, "local-llm", "A", EvalSettings(retry_errors=True), registry=registry)
    assert fixed.calls == len(typed), "only the typed turns are asked again (condition A: same prompts)"
    assert not [r for r in again.rows if r["model_error_type"]]
    assert all(store.get(k)["response"]["text"] == "SELECT 1" for k in answered), "earlier records kept"
    print(f"{len(typed)} of {len(turns)} turns typed malformed_response; the fix re-asked {fixed.calls}")

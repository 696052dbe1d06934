"""Reasoning tokens are recorded, not assumed: an OpenAI-compatible server on 127.0.0.1 (real HTTP
through litellm) reports `usage.completion_tokens_details.reasoning_tokens`, or only reasoning
text, or nothing; the turn results carry what it reported, and a partition of an entry configured
to reason that reports none warns in its summary, the Dagster metadata and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import litellm
import pytest
from http_endpoint import Answer, openai_endpoint

from memsql_assets.lib.benchmark.store import write_benchmark
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import MODELS_FILE_ENV, load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import REPO_ROOT, benchmark_dir
from memsql_assets.lib.report.dbt_cli import DBT_DIR, dbt_args, dbt_executable

THINKING = "The question wants one row per year, so group by fiscal_year and compare the two values."


def completion(reasoning_tokens: int | None = None, reasoning_text: str | None = None) -> Answer:
    """A chat completion answering SELECT 1, with the reasoning usage or text a provider reports."""
    message = {"role": "assistant", "content": "SELECT 1"}
    if reasoning_text is not None:
        message["reasoning_content"] = reasoning_text
    usage: dict = {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "tiny-sql",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": usage,
    }
    return Answer(body=json.dumps(body).encode())


def write_models(path: Path, url: str) -> Path:
    """`thinker` and `silent` are configured to reason (type default: nothing sent, the provider's
    default trusted); `plain` is not (type none)."""
    entries = "".join(
        f"""
  {key}:
    litellm_model: openai/{key}
    kind: api
    api_base: "{url}"
    reasoning: {{type: {kind}}}
    max_concurrency: 1
    price_per_mtok: {{input: 1, output: 1}}
    enabled: true
"""
        for key, kind in (("thinker", "default"), ("silent", "default"), ("plain", "none"))
    )
    path.write_text("models:" + entries, encoding="utf-8")
    return path


@pytest.fixture
def one_session_home(small_home, embedded_sessions, tmp_path) -> Path:
    """The small home with a benchmark of the shortest session (a partition is a few calls)."""
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    shortest = min(embedded_sessions, key=lambda s: (len(s.turns), s.session_id))
    write_benchmark(benchmark_dir(home), [shortest])
    return home


def by_model(server) -> None:
    """thinker's replies report 23 reasoning tokens each; every other model's report none."""

    def answer(n: int) -> Answer:
        model = server.requests[n - 1]["body"]["model"]
        return completion(23) if model == "thinker" else completion()

    server.answer = answer


def test_a_reply_without_details_counts_its_thinking_text_and_a_replay_keeps_it(tmp_path):
    with openai_endpoint() as server:
        server.script.extend([completion(reasoning_text=THINKING), completion(17)])
        registry = load_registry(write_models(tmp_path / "models.yaml", server.url))
        gw = ModelGateway(registry, RequestStore.at_home(tmp_path), home=tmp_path, environ={})
        messages = [{"role": "user", "content": "question"}]
        counted = asyncio.run(gw.acomplete("thinker", messages, {}))
        reported = asyncio.run(gw.acomplete("silent", messages, {}))
        replayed = asyncio.run(gw.acomplete("thinker", messages, {}))
        store = RequestStore.at_home(tmp_path)
        older = store.get(counted.request_key)  # as stored before the count was: text, no count
        del older["usage"]["reasoning_tokens"]
        store.put(counted.request_key, older)
        recounted = asyncio.run(gw.acomplete("thinker", messages, {}))
    expected = litellm.token_counter(model="openai/thinker", text=THINKING)
    assert counted.ok and counted.reasoning == THINKING and counted.reasoning_tokens == expected > 0
    assert reported.reasoning_tokens == 17, "completion_tokens_details wins where it is given"
    assert replayed.cache_hit and replayed.reasoning_tokens == expected
    assert recounted.cache_hit and recounted.reasoning_tokens == expected and server.calls == 2


@pytest.mark.slow
def test_reasoning_tokens_are_a_turn_column_a_summary_total_and_in_the_marts(one_session_home, tmp_path):
    home = one_session_home
    with openai_endpoint() as server:
        by_model(server)
        registry = load_registry(write_models(tmp_path / "models.yaml", server.url))
        outcome = evaluate_partition(home, "thinker", "A", registry=registry, api_keys={})
    rows = read_results(partition_dir(home, "thinker", "A") / RESULT_FILE)
    assert rows and [r["reasoning_tokens"] for r in rows] == [23] * len(rows)
    assert outcome.summary["reasoning_tokens"] == 23 * len(rows) and outcome.summary["warnings"] == []

    (home / "dbt").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "MEMSQL_HOME": str(home),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
        "DBT_TARGET_PATH": str(home / "dbt_target"),
        "DBT_LOG_PATH": str(home / "dbt_logs"),
    }
    cmd = [dbt_executable(), *dbt_args("run", "--select", "+agg_cost"), "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:]
    with duckdb.connect(str(home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        cost = con.execute(
            "select n_turns, reasoning_tokens, n_turns_with_reasoning from main.agg_cost where model = 'thinker'"
        ).fetchone()
        per_turn = con.execute("select distinct reasoning_tokens from main.fct_turn_evaluations").fetchall()
    assert cost == (len(rows), 23 * len(rows), len(rows)) and per_turn == [(23,)]


@pytest.mark.slow
def test_an_entry_configured_to_reason_that_reports_none_warns_everywhere(one_session_home, tmp_path, capsys):
    """`memsql eval` (a real Dagster run in another process) against the server: the turn column is
    0, and the warning is in the JSON, on stderr, in the CLI's table and in the Dagster metadata;
    an entry not configured to reason (plain) gets no warning for the same replies."""
    home = one_session_home
    with openai_endpoint() as server:
        by_model(server)
        env = {**os.environ, "MEMSQL_HOME": str(home), MODELS_FILE_ENV: str(write_models(tmp_path / "m.yaml", server.url))}
        env.pop("DAGSTER_HOME", None)

        def memsql_eval(model: str, *extra: str) -> subprocess.CompletedProcess:
            done = subprocess.run(
                [sys.executable, "-m", "memsql_assets.cli", "eval", "--model", model, "--condition", "A", *extra],
                cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            return done

        silent = memsql_eval("silent", "--json")
        plain = json.loads(memsql_eval("plain", "--json").stdout)
    out = json.loads(silent.stdout)
    rows = read_results(partition_dir(home, "silent", "A") / RESULT_FILE)
    assert rows and {r["reasoning_tokens"] for r in rows} == {0} and out["reasoning_tokens"] == 0
    [warning] = out["warnings"]
    assert "silent is configured to reason" in warning and f"{len(rows)} answered turns" in warning
    assert "GPT-5.1 and later" in warning
    assert f"warning: {warning}" in silent.stderr
    assert f"warning: {warning}" in memsql_eval("silent").stdout  # the table's line, replayed
    assert plain["warnings"] == [] and plain["reasoning_tokens"] == 0

    import dagster as dg

    with dg.DagsterInstance.from_config(str(home / "dagster_home")) as instance:
        for model, warnings in (("silent", [warning]), ("plain", [])):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("turn_results"), asset_partitions=[f"A|{model}"]), limit=1
            ).records
            metadata = records[0].asset_materialization.metadata
            assert metadata["warnings"].value == warnings and metadata["reasoning_tokens"].value == 0, model

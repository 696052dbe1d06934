"""Partitions through the fault-injecting server (lib/models/fault_server.py, its own process):
real litellm, the request store and scoring. Each fault is recovered or typed as its rules say, and
under a server that takes 4 requests at once a model configured for 16 adapts its in-flight limit
instead of losing turns."""

from __future__ import annotations

import shutil
import statistics
from collections import Counter
from pathlib import Path

import pytest
from conftest import row_diffs

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.plan import plan_partition
from memsql_assets.lib.harness.runner import PartitionStopped
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.fault_server import MODEL, QUICK_RETRY, fault_registry, fault_server
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import Registry
from memsql_assets.lib.models.request_store import RequestStore


def run(
    home: Path, registry: Registry, sessions: int | None = None, timeout_s: float = 300.0, max_cost_usd: float | None = None
):
    """The partition `MODEL` x A through the real gateway, with quick retries."""
    gateway = ModelGateway(
        registry, RequestStore.at_home(home), home=home, retry=QUICK_RETRY, timeout_s=timeout_s, max_cost_usd=max_cost_usd
    )
    settings = EvalSettings(sessions=sessions, max_cost_usd=max_cost_usd)
    return evaluate_partition(home, MODEL, "A", settings, registry=registry, gateway=gateway)


def copy_home_of(home: Path, target: Path) -> Path:
    shutil.copytree(home, target)
    return target


FAULTS = ["429", "429_retry_after", "500", "503", "reset", "stall", "truncated", "bad_tool_calls"]
# One call at a time, and a retry takes the next call: each fault is followed by an answer.
SCHEDULE = [call for fault in FAULTS for call in (fault, "ok")]


def test_each_fault_is_retried_or_typed_and_no_turn_is_lost(home, tmp_path):
    with fault_server(tmp_path, faults=SCHEDULE, retry_after_s=0.3, stall_s=60) as server:
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=1)
        out = run(home, registry, sessions=9, timeout_s=6.0)
        seen = server.log()
    # The server's own count of requests in flight: one at a time, but for the stalled request, which
    # the gateway gave up on (its 6 s timeout) while the server still holds it.
    stall = next(i for i, r in enumerate(seen) if r["fault"] == "stall")
    assert {r["in_flight"] for r in seen[: stall + 1]} == {1}, "one call at a time"
    assert {r["in_flight"] for r in seen[stall + 1 :]} <= {1, 2}, "one call at a time beside the abandoned one"
    typed = Counter(r["model_error_type"] for r in out.rows if r["model_error_type"])
    print(f"{len(out.rows)} rows; typed {dict(typed)}; summary concurrency {out.summary['concurrency']}")
    assert typed == {"malformed_response": 2}, "a cut-off body and tool calls without a function"
    assert len(out.rows) == len(seen) - 6, "six faults retried once each, every other call one turn"
    load = out.summary["concurrency"]
    assert load["retries"] == 6
    assert load["retry_wait_s"] >= 0.3, "Retry-After honoured"


def test_a_model_at_16_under_a_server_taking_4_adapts_and_loses_no_turn(home, tmp_path):
    """429 beyond 4 requests in flight (with Retry-After): the limit comes down from 16 and settles
    at or below 5; every turn is answered, none typed as a failure."""
    with fault_server(tmp_path, max_in_flight=4, retry_after_s=0.05, latency_s=0.05) as server:
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=16)
        out = run(home, registry)
        seen = server.log()
    refused = sum(r["fault"] == "over_limit" for r in seen)
    in_flight = [r["in_flight"] for r in seen]
    load = out.summary["concurrency"]
    print(f"{len(out.rows)} turns, {refused} refused for the rate; {load}")
    assert not [r for r in out.rows if r["model_error_type"]], "no turn typed as a failure"
    assert len(out.rows) == out.summary["turns"] > 100
    assert refused > 0 and load["retries"] == refused, "every refusal retried"
    assert max(in_flight) > 4, "the model started above what the server takes"
    later = in_flight[len(in_flight) // 2 :]
    assert statistics.median(later) <= 5, "the server saw the load settle near what it takes"
    assert load["limit_settled"] <= 5


def test_a_damaged_record_is_asked_again_and_counted_never_replayed(home, tmp_path):
    """Two records of a finished partition damaged on disk: one byte of an answer's text changed (the
    JSON still parses), one file cut short. The re-run asks exactly those two again and counts them."""
    with fault_server(tmp_path) as server:
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=4)
        first = run(home, registry, sessions=9)
        records = sorted(RequestStore.at_home(home).root.glob("??/*.json"))
        flipped, cut = records[0], records[1]
        flipped.write_bytes(flipped.read_bytes().replace(b"SELECT 1", b"SELECT 7", 1))
        cut.write_bytes(cut.read_bytes()[:100])
        before = len(server.log())
        again = run(home, registry, sessions=9)
        asked = len(server.log()) - before
    assert asked == again.summary["model_calls_this_run"] == 2
    assert again.summary["damaged_records"] == 2
    assert not [r for r in again.rows if "SELECT 7" in (r["raw_output"] or "")], "never replayed"
    assert not row_diffs(again.rows, first.rows)
    assert RequestStore.at_home(home).get(flipped.stem)["response"]["text"] == "SELECT 1", "the record is replaced"


PRICED_USAGE = [1000, 500]  # per answer: $0.001 in + $0.001 out at the entry's prices


def test_a_live_cost_cap_stops_the_run_and_a_raised_cap_resumes_it_asking_nothing_twice(home, tmp_path):
    with fault_server(tmp_path, usage=PRICED_USAGE) as server:
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=4)
        reference = run(copy_home_of(home, tmp_path / "reference"), registry, sessions=9)
        cost = sum(r["cost_usd"] for r in reference.rows)
        server_calls = len(server.log())
        with pytest.raises(PartitionStopped) as stopped:
            run(home, registry, sessions=9, max_cost_usd=cost / 2)
        first = len(server.log()) - server_calls
        line = str(stopped.value)
        assert "\n" not in line and "cost cap" in line and "re-run with a higher cap" in line
        resumed = run(home, registry, sessions=9, max_cost_usd=cost * 2)
        second = len(server.log()) - server_calls - first
    print(f"{line}\ncost ${cost:.4f}; calls {first} before the cap, {second} after it")
    assert cost / 2 <= first * 0.002 < cost, "stopped at the cap, not before it, not at the end"
    assert first + second == len(reference.rows), "nothing asked twice"
    assert resumed.summary["model_calls_this_run"] == second
    assert not row_diffs(resumed.rows, reference.rows)


def test_the_estimate_is_within_a_quarter_of_the_recorded_cost(home, tmp_path):
    """The server counts each prompt's tokens and answers 120 output tokens: the plan's estimate (exact
    prompts under A, a typical answer's output) is within 25 % of what the run records; its bound is
    printed beside it, and once run the partition plans no call."""
    with fault_server(tmp_path, usage=[None, 120]) as server:
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=4)
        entry = registry.get(MODEL)
        plan = plan_partition(home, entry, "A", sessions=9)
        out = run(home, registry, sessions=9)
    cost = sum(r["cost_usd"] for r in out.rows)
    print(f"{plan.describe()}; recorded ${cost:.6f}")
    assert plan.estimate is not None and plan.calls == len(out.rows)
    assert abs(plan.estimate.usd - cost) <= 0.25 * cost
    # The prompts the run sent, counted by a tokenizer: litellm's default for a model it does not know,
    # or the OpenAI one once the gateway has registered the model's prices (another test, same process).
    assert abs(plan.estimate.prompt_tokens - sum(r["prompt_tokens"] for r in out.rows)) <= 0.02 * plan.estimate.prompt_tokens
    again = plan_partition(home, entry, "A", sessions=9)
    assert again.calls == 0 and again.estimate.usd == 0
    later = plan_partition(home, entry, "A")
    assert later.estimate.output_tokens_per_call == 120, "the median of the stored answers"

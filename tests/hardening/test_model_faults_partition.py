"""Model faults through a whole partition.

One partition (a fake API model × B) meets, in a fixed order, every fault below: connection
resets (once, and on every attempt), 429 with and without Retry-After, 5xx, a provider error
timeout and a real hang past the gateway's deadline, and malformed responses (no choices, None
content, non-UTF-8 text, 3 MB of text), plus one permanent 400. The run must complete with every
turn present, transient faults retried, the rest typed on their turn, and the counts in the
partition summary (summary.json, the source of the Dagster metadata `model_errors`).
"""

from __future__ import annotations

import json
from collections import Counter

import httpx
import litellm
import pytest
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET, TEST_REGISTRY, ScriptedProvider

from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.harness.summary import SUMMARY_FILE
from memsql_assets.lib.models.gateway import ModelGateway, RetryPolicy
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import benchmark_dir

FAST_RETRY = RetryPolicy(jitter=False, base_delay_s=0.001, max_delay_s=0.005, max_retry_after_s=0.005)
GATEWAY_TIMEOUT_S = 3.0  # generous: a loaded machine must not turn normal calls into timeouts

# One entry per model call, in call order (sessions one at a time: max_concurrency 1). After the
# script the provider answers "ok".
SCRIPT = [
    ("reset", "ok"),  # a connection reset, retried
    ("reset",) * 6,  # reset on every attempt: connection_error after max_attempts
    ("no_choices",),
    ("none_content",),
    ("non_utf8",),
    ("huge",),  # 3,000,000 characters
    ("429", "ok"),
    ("429@0", "ok"),  # with Retry-After
    ("500", "ok"),
    ("timeout", "ok"),  # the provider reports a timeout
    ("sleep:60", "ok"),  # the provider hangs: the gateway's own deadline fires
    ("disconnect", "ok"),  # the server closes the connection without a response
    ("400",),  # permanent: not retried
]
EXPECTED_ERRORS = {"connection_error": 1, "malformed_response": 4, "bad_request": 1}
MALFORMED = ("no choices", "content is None", "not valid UTF-8", "over the 200,000")


class FaultyProvider(ScriptedProvider):
    """model_fakes' scripted provider plus transport faults: a reset socket and a dropped connection."""

    async def acompletion(self, model, messages, *args, **kwargs):
        queue = self.scripts[model]
        if queue and queue[0] in ("reset", "disconnect"):
            spec = queue.popleft()
            self.calls.append({"model": model, "api_key": kwargs.get("api_key"), "messages": messages})
            request = httpx.Request("POST", "http://fake.invalid/v1/chat/completions")
            if spec == "reset":
                raise httpx.ReadError("[Errno 104] Connection reset by peer", request=request)
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        return await super().acompletion(model, messages, *args, **kwargs)


@pytest.fixture
def faulty_provider():
    provider = FaultyProvider()
    before = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [p for p in before if p.get("provider") != "memsqltest"] + [
        {"provider": "memsqltest", "custom_handler": provider}
    ]
    yield provider
    litellm.custom_provider_map = before


def test_every_model_fault_through_a_partition_loses_no_turn(home, tmp_path, faulty_provider, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    registry_file = tmp_path / "models.yaml"
    registry_file.write_text(
        TEST_REGISTRY.replace("max_concurrency: 3", "max_concurrency: 1"), encoding="utf-8"
    )
    registry = load_registry(registry_file)
    for specs in SCRIPT:
        faulty_provider.script("flaky", *specs)
    gateway = ModelGateway(
        registry, RequestStore(home / "requests"), home=home, retry=FAST_RETRY, timeout_s=GATEWAY_TIMEOUT_S
    )
    out = evaluate_partition(home, "flaky", "B", registry=registry, gateway=gateway)

    turns = read_turns(benchmark_dir(home))
    assert not faulty_provider.scripts["flaky"], "the whole script was played"
    keys = [(r["session_id"], r["turn_index"]) for r in out.rows]
    assert len(keys) == len(set(keys)) == len(turns) == out.summary["turns"], "every turn, once"
    on_disk = read_results(partition_dir(home, "flaky", "B") / RESULT_FILE)
    assert len(on_disk) == len(turns)

    fresh = [r for r in out.rows if not r["cache_hit"]]
    assert Counter(r["model_error_type"] for r in fresh if r["model_error_type"]) == EXPECTED_ERRORS
    retried = [r for r in fresh if not r["model_error_type"] and r["attempts"] > 1]
    assert len(retried) == 7 and all(r["attempts"] == 2 for r in retried), "seven faults retried once each"
    gave_up = next(r for r in fresh if r["model_error_type"] == "connection_error")
    assert (
        gave_up["attempts"] == FAST_RETRY.max_attempts
        and "gave up after 6 attempts" in gave_up["error_message"]
    )
    malformed = [r["error_message"] for r in fresh if r["model_error_type"] == "malformed_response"]
    assert all(any(m in text for text in malformed) for m in MALFORMED), malformed
    assert all(len(text) < 1000 for text in malformed), "3 MB of text never reaches a row"

    # A replayed (cached) failure carries its original type: rows and summary agree exactly.
    by_type = Counter(r["model_error_type"] for r in out.rows if r["model_error_type"])
    summary = json.loads((partition_dir(home, "flaky", "B") / SUMMARY_FILE).read_text())
    assert summary["model_errors"] == dict(by_type) == out.summary["model_errors"]
    assert summary["calls"] == len(faulty_provider.calls) == len(fresh) + 7 + (FAST_RETRY.max_attempts - 1)
    errored = [r for r in out.rows if r["model_error_type"]]
    assert all(r["error_class"] == "model_error" and r["raw_output"] is None for r in errored)
    print(
        json.dumps({"turns": len(turns), "calls": summary["calls"], "model_errors": summary["model_errors"]})
    )
